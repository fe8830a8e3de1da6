package dap

import (
	"context"
	"errors"
	"fmt"

	"ttd/ttd"
)

// The real Target: package ttd's Target (a recording opened as a
// time-travel session, its symbols, goroutines and searches), with its
// values in this package's types. Nothing but the conversion lives
// here: the backend is shared with the gdb server.

type ttdTarget struct {
	t *ttd.Target
}

// OpenTrace opens a recording for debugging and loads the symbols of the
// modules it mapped (embedded in the trace, or read from their recorded
// paths, or from opts.Binaries). A recording without access summaries
// (ttd record --no-summaries) gets them built in memory (re-simulating it
// in parallel).
func OpenTrace(path string, opts OpenOptions) (Target, error) {
	t, err := ttd.OpenTarget(path, opts.Binaries)
	if err != nil {
		return nil, err
	}
	return &ttdTarget{t: t}, nil
}

func (a *ttdTarget) Close() error             { return a.t.Close() }
func (a *ttdTarget) Bounds() (uint64, uint64) { return a.t.Session().Start(), a.t.Session().End() }
func (a *ttdTarget) Position() uint64         { return a.t.Session().Position() }
func (a *ttdTarget) CurrentThread() int       { return a.t.CurrentThread() }
func (a *ttdTarget) OSThread(id int) int      { return a.t.OSThread(id) }

func (a *ttdTarget) Exit() Exit {
	e := a.t.Exit()
	return Exit{Kind: e.Kind, Code: e.Code, Signal: e.Signal, FaultAddr: e.FaultAddr, Pos: e.Pos}
}

func (a *ttdTarget) Seek(pos uint64) error {
	_, err := a.t.Session().Seek(pos)
	return err
}

func (a *ttdTarget) Threads() ([]Thread, error) {
	ths, err := a.t.Threads()
	if err != nil {
		return nil, err
	}
	out := make([]Thread, len(ths))
	for i, th := range ths {
		out[i] = Thread{ID: th.ID, Name: th.Name}
	}
	return out, nil
}

func (a *ttdTarget) Registers(tid int) (Registers, error) {
	r, err := a.t.Registers(tid)
	if errors.Is(err, ttd.ErrNoThread) {
		return Registers{}, fmt.Errorf("thread %d at position %d: %w", tid, a.Position(), ErrNoThread)
	}
	if err != nil {
		return Registers{}, err
	}
	return Registers{GPR: r.GPR, RIP: r.RIP, Rflags: r.RFLAGS, FSBase: r.FSBase, GSBase: r.GSBase}, nil
}

func (a *ttdTarget) ReadMemory(addr uint64, buf []byte) ([]bool, error) {
	return a.t.ReadMemory(addr, buf)
}

func (a *ttdTarget) Search(ctx context.Context, dir Direction, q Query) (Stop, error) {
	tq := ttd.Query{Exec: q.Exec, Signals: q.Signals, Thread: q.Thread}
	for _, w := range q.Watch {
		tq.Watch = append(tq.Watch, ttd.Watch{Addr: w.Addr, Size: w.Size, Read: w.Read, Write: w.Write})
	}
	if step := q.Step; step != nil {
		var st InstState
		tq.Step = func(s *ttd.InstState) bool {
			st = InstState{Pos: s.Pos, Tid: s.Tid, PC: s.PC, SP: s.SP}
			return step(&st)
		}
	}
	d := ttd.Forward
	if dir == Backward {
		d = ttd.Backward
	}
	st, err := a.t.Search(ctx, d, tq)
	if err != nil {
		return Stop{}, err
	}
	return Stop{Reason: stopReasons[st.Reason], Pos: st.Pos, Tid: st.Tid, PC: st.PC, Watch: st.Watch, Signal: st.Signal,
		Access: Access{Addr: st.Access.Addr, Size: st.Access.Size, Value: st.Access.Value, Write: st.Access.Write,
			Old: st.Access.Old, New: st.Access.New}}, nil
}

var stopReasons = map[ttd.SearchReason]StopReason{ttd.SearchExec: StopExec, ttd.SearchWatch: StopWatch,
	ttd.SearchStep: StopStep, ttd.SearchSignal: StopSignal, ttd.SearchStart: StopStart, ttd.SearchEnd: StopEnd}

func (a *ttdTarget) Stack(tid, max int) ([]Frame, error) {
	fs, err := a.t.Stack(tid, max)
	if err != nil {
		return nil, err
	}
	out := make([]Frame, len(fs))
	for i, f := range fs {
		out[i] = Frame{PC: f.PC, CFA: f.CFA, Func: f.Func, Entry: f.Entry, File: f.File, Line: f.Line, Module: f.Module,
			Inlined: f.Inlined, HasDebug: f.HasDebug, Regs: f.Regs, RegsKnown: f.RegsKnown}
	}
	return out, nil
}

func (a *ttdTarget) Locate(pc uint64) Location {
	l := a.t.Locate(pc)
	return Location{Func: l.Func, Entry: l.Entry, File: l.File, Line: l.Line, Stmt: l.Stmt, OK: l.OK}
}

func (a *ttdTarget) LineAddrs(file string, line int) ([]uint64, int, error) {
	return a.t.LineAddrs(file, line)
}

func (a *ttdTarget) FunctionAddr(name string) (uint64, error) {
	addr, err := a.t.FunctionAddr(name)
	if errors.Is(err, ttd.ErrNoCode) {
		return 0, fmt.Errorf("no function %q: %w", name, ErrNotFound)
	}
	return addr, err
}

func (a *ttdTarget) Variables(tid, frame int) ([]Var, error) {
	vs, err := a.t.Variables(tid, frame)
	if err != nil {
		return nil, err
	}
	return convertVars(vs), nil
}

func (a *ttdTarget) Eval(tid, frame int, expr string) (Var, error) {
	v, err := a.t.Eval(tid, frame, expr)
	if err != nil {
		return Var{}, err
	}
	return convertVar(v), nil
}

func (a *ttdTarget) Disassemble(addr uint64) (string, int) { return a.t.Disassemble(addr) }

func convertVars(vs []ttd.Var) []Var {
	out := make([]Var, len(vs))
	for i, v := range vs {
		out[i] = convertVar(v)
	}
	return out
}

func convertVar(v ttd.Var) Var {
	out := Var{Name: v.Name, Type: v.Type, Value: v.Value, Addr: v.Addr, Size: v.Size, Arg: v.Arg}
	if kids := v.Children; kids != nil {
		out.Children = func() ([]Var, error) {
			vs, err := kids()
			if err != nil {
				return nil, err
			}
			return convertVars(vs), nil
		}
	}
	return out
}

// origin is the value origin of [addr, addr+size) at the current
// position (ttd.Session.Origin), as console lines.
func (a *ttdTarget) origin(addr, size uint64) ([]string, error) {
	s := a.t.Session()
	chain, err := s.Origin(addr, size, s.Position())
	if err != nil {
		return nil, err
	}
	var out []string
	for i, l := range chain {
		line := fmt.Sprintf("#%d ", i)
		switch l.Kind {
		case ttd.OriginUnseen:
			line += l.Into + ": no instruction of the recording wrote it"
		case ttd.OriginLimit:
			line += fmt.Sprintf("… (cut after %d links)", ttd.MaxOriginLinks)
		default:
			line += fmt.Sprintf("position %d: %s %s ← %s  %s  %s", l.Position, l.Kind, l.Into, l.From, l.Disasm, ttd.Describe(a.t.Symbols(), l.PC))
		}
		out = append(out, line)
	}
	return out, nil
}
