package dap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"ttd/reader"
	"ttd/symbols"
	"ttd/tracefile"
	"ttd/ttd"
	"ttd/x86"
)

// The real Target: a recording opened as a time-travel session of
// package ttd, read through package symbols.
//
// Continue and reverseContinue become ttd.Session breakpoints (BreakExec
// for code, BreakMemory for data), so that the session's index skips the
// checkpoint intervals that cannot hit (an address never executed, a
// range never accessed there) and the tracking deltas of its snapshots
// skip the windows a data breakpoint cannot hit. Steps have a
// per-instruction predicate: ttd.Session.ContinueMatch re-simulates every
// instruction in between, stopping at the predicate or a breakpoint.
// Memory at a position is what the session knows there (its index
// covers the whole recording).

type ttdTarget struct {
	s    *ttd.Session
	end  uint64
	syms *symbols.Table
	exit Exit
	// isGo: threads are goroutines (goroutines.go); gv caches them.
	isGo bool
	gv   *gview
}

// OpenTrace opens a recording for debugging and loads the symbols of the
// modules it mapped (embedded in the trace, or read from their recorded
// paths, or from opts.Binaries). A recording without access summaries
// (ttd record --no-summaries) gets them built in memory (re-simulating it
// in parallel).
func OpenTrace(path string, opts OpenOptions) (Target, error) {
	s, err := ttd.Open(path)
	if err != nil {
		return nil, err
	}
	// The DAP server stops at signals only when a query asks.
	s.StopOnSignal = false
	tr := s.Trace()
	t := &ttdTarget{s: s, end: s.End()}
	t.exit = Exit{Kind: "cut", Pos: t.end}
	if sm := tr.Summary; sm.HasExit {
		e := sm.Exit
		t.exit = Exit{Code: e.Code, Signal: e.Signo, FaultAddr: e.FaultAddr, Pos: e.Position}
		switch e.Kind {
		case tracefile.ExitExited:
			t.exit.Kind = "exited"
		case tracefile.ExitKilled, tracefile.ExitCrashed:
			t.exit.Kind = "killed"
		}
	}
	t.syms = loadSymbols(tr, opts)
	t.isGo = t.syms.IsGo()
	return t, nil
}

// loadSymbols loads the modules the trace recorded; one that cannot be
// read costs its names, not the session.
func loadSymbols(tr *reader.Trace, opts OpenOptions) *symbols.Table {
	mods, _ := tr.Modules()
	var list []symbols.Module
	seen := map[string]bool{}
	for _, m := range mods {
		p := string(m.Path)
		if p == "" || strings.HasPrefix(p, "[") || seen[p] {
			continue
		}
		seen[p] = true
		sm := symbols.Module{Path: p, LoadAddr: m.LoadAddr}
		if alt, ok := opts.Binaries[p]; ok {
			sm.Path = alt
		} else if data, err := tr.ModuleFile(m); err == nil && data != nil {
			sm.Data = data
		} else if _, err := os.Stat(p); err != nil {
			continue
		}
		list = append(list, sm)
	}
	t, _ := symbols.Load(list)
	return t
}

func (t *ttdTarget) Close() error { return t.s.Close() }

func (t *ttdTarget) Bounds() (uint64, uint64) { return t.s.Start(), t.end }
func (t *ttdTarget) Position() uint64         { return t.s.Position() }
func (t *ttdTarget) Exit() Exit               { return t.exit }

func (t *ttdTarget) Seek(pos uint64) error {
	_, err := t.s.Seek(min(pos, t.end))
	return err
}

func (t *ttdTarget) Threads() ([]Thread, error) {
	if gs := t.goThreads(); gs != nil {
		return gs, nil
	}
	ths, err := t.s.Threads()
	if err != nil {
		return nil, err
	}
	var out []Thread
	for _, th := range ths {
		out = append(out, Thread{ID: th.Tid, Name: fmt.Sprintf("Thread %d", th.Tid)})
	}
	if len(out) == 0 {
		// At the end, the last thread may have exited: it is still the
		// one whose state the recording ends with.
		if tid, err := t.s.CurrentThread(); err == nil && tid != 0 {
			out = append(out, Thread{ID: tid, Name: fmt.Sprintf("Thread %d", tid)})
		}
	}
	return out, nil
}

func (t *ttdTarget) CurrentThread() int {
	tid, err := t.s.CurrentThread()
	if err != nil || tid == 0 {
		return 1
	}
	return t.dapThread(tid)
}

// regs returns thread tid's registers at the current position (tid 0:
// the current thread).
func (t *ttdTarget) regs(tid int) (ttd.Registers, error) {
	r, err := t.s.Registers(tid)
	if errors.Is(err, ttd.ErrNoThread) {
		return r, fmt.Errorf("thread %d at position %d: %w", tid, t.s.Position(), ErrNoThread)
	}
	return r, err
}

func (t *ttdTarget) Registers(tid int) (Registers, error) {
	g, tid := t.goroutine(tid)
	if g != nil {
		var r Registers
		r.GPR[symbols.RSP], r.GPR[symbols.RBP], r.RIP = g.SP, g.BP, g.PC
		return r, nil
	}
	r, err := t.regs(tid)
	if err != nil {
		return Registers{}, err
	}
	return Registers{GPR: r.GPR, RIP: r.RIP, Rflags: r.RFLAGS, FSBase: r.FSBase, GSBase: r.GSBase}, nil
}

// ReadMemory reads what the session knows of the memory at the current
// position.
func (t *ttdTarget) ReadMemory(addr uint64, buf []byte) ([]bool, error) {
	m, err := t.s.ReadMemory(addr, len(buf))
	if err != nil {
		return nil, err
	}
	copy(buf, m.Data)
	return m.Known, nil
}

// memReader is ReadMemory for package symbols.
func (t *ttdTarget) memReader() symbols.MemReader {
	return func(addr uint64, buf []byte) ([]bool, error) { return t.ReadMemory(addr, buf) }
}

// Search: see Target.Search. q's code addresses and watched ranges
// become the session's breakpoints for the time of the search, and its
// Step predicate a ContinueMatch predicate.
//
// A data breakpoint stops before the accessing instruction in both
// directions (the session, going forward, stops after it), and an
// access by the instruction at the current position does not count.
func (t *ttdTarget) Search(ctx context.Context, dir Direction, q Query) (Stop, error) {
	// Steps follow OS threads (see osThread); the stop names the
	// goroutine.
	st, err := t.search(ctx, dir, q)
	if err == nil && st.Tid != 0 {
		st.Tid = t.dapThread(st.Tid)
	}
	return st, err
}

func (t *ttdTarget) search(ctx context.Context, dir Direction, q Query) (Stop, error) {
	s := t.s
	s.ClearBreakpoints()
	defer s.ClearBreakpoints()
	s.SetInterrupt(ctx.Err)
	defer s.SetInterrupt(nil)
	s.StopOnSignal = q.Signals
	defer func() { s.StopOnSignal = false }()

	watchOf := map[int]int{} // session breakpoint id → index in q.Watch
	for a := range q.Exec {
		if _, err := s.SetBreakpoint(ttd.Breakpoint{Kind: ttd.BreakExec, Addr: a}); err != nil {
			return Stop{}, err
		}
	}
	for i, w := range q.Watch {
		var acc ttd.AccessKind
		if w.Read {
			acc |= ttd.AccessRead
		}
		if w.Write {
			acc |= ttd.AccessWrite
		}
		if acc == 0 || w.Size <= 0 {
			continue
		}
		id, err := s.SetBreakpoint(ttd.Breakpoint{Kind: ttd.BreakMemory, Addr: w.Addr, Size: uint64(w.Size), Access: acc})
		if err != nil {
			return Stop{}, err
		}
		watchOf[id] = i
	}
	var match ttd.InstMatcher
	if q.Step != nil {
		var st InstState
		match = func(tid int, c *x86.CPU, in *x86.Inst) bool {
			// in.PC, not c.RIP: inside a block RIP is updated at its end.
			st = InstState{Tid: tid, PC: in.PC, SP: c.R[x86.RSP]}
			return q.Step(&st)
		}
	}
	if err := ctx.Err(); err != nil {
		return Stop{}, err
	}
	var st ttd.Stop
	var err error
	if dir == Forward {
		st, err = s.ContinueMatch(ttd.Forward, match)
	} else {
		st, err = s.ContinueMatch(ttd.Backward, match)
	}
	if err != nil {
		return Stop{}, err
	}
	switch st.Reason {
	case ttd.StopBreakpoint:
		return Stop{Reason: StopExec, Pos: st.Position, Tid: st.Tid, PC: st.PC}, nil
	case ttd.StopMatch:
		return Stop{Reason: StopStep, Pos: st.Position, Tid: st.Tid, PC: st.PC}, nil
	case ttd.StopWatchpoint:
		// gdb on rr: forward, just after the access (the new value in
		// memory); backward, just before it (ttd/watch.go).
		a, w := st.Access, watchOf[st.Breakpoint]
		acc := Access{Addr: a.Addr, Size: a.Size, Value: a.Value, Write: a.Write}
		if st.Old != nil && st.New != nil {
			acc.Old, acc.New = st.Old.Data, st.New.Data
		}
		return Stop{Reason: StopWatch, Pos: st.Position, Tid: st.Tid, PC: st.PC, Watch: w, Access: acc}, nil
	case ttd.StopSignal:
		sig := 0
		if ev := st.Event; ev != nil && ev.Record != nil {
			sig = int(ev.Record.Signal.Signo)
		}
		tid := st.Tid
		if st.Event != nil {
			tid = st.Event.Tid
		}
		return Stop{Reason: StopSignal, Pos: st.Position, Tid: tid, PC: st.PC, Signal: sig}, nil
	case ttd.StopStartOfTrace:
		return t.stopAt(StopStart, st)
	}
	return t.stopAt(StopEnd, st)
}

func (t *ttdTarget) stopAt(reason StopReason, st ttd.Stop) (Stop, error) {
	out := Stop{Reason: reason, Pos: st.Position, Tid: st.Tid, PC: st.PC}
	if out.Tid == 0 {
		if r, err := t.regs(0); err == nil {
			out.Tid, out.PC = r.Tid, r.RIP
		}
	}
	return out, nil
}

// Symbols.

// symRegs returns thread tid's registers for package symbols.
func (t *ttdTarget) symRegs(tid int) (symbols.Regs, error) {
	var regs symbols.Regs
	g, tid := t.goroutine(tid)
	if g != nil {
		return schedRegs(g), nil
	}
	r, err := t.regs(tid)
	if err != nil {
		return regs, err
	}
	copy(regs[:16], r.GPR[:])
	regs[symbols.RIP] = r.RIP
	return regs, nil
}

func (t *ttdTarget) Stack(tid, max int) ([]Frame, error) {
	regs, err := t.symRegs(tid)
	if err != nil {
		return nil, err
	}
	var out []Frame
	frames := t.syms.Unwind(regs, t.memReader(), max)
	for _, f := range frames {
		fn, _ := t.syms.FuncForPC(f.PC)
		out = append(out, Frame{PC: f.PC, CFA: f.CFA, Func: f.Func, Entry: f.Entry, File: f.File, Line: f.Line,
			Module: f.Module, Inlined: f.Inlined, HasDebug: fn.DWARF, Regs: f.Regs, RegsKnown: f.Known})
	}
	if len(out) == 0 {
		out = append(out, Frame{PC: regs[symbols.RIP], Regs: regs, RegsKnown: symbols.AllKnown})
	}
	return out, nil
}

func (t *ttdTarget) Locate(pc uint64) Location {
	fn, ok := t.syms.FuncForPC(pc)
	if !ok {
		return Location{}
	}
	l := Location{Func: fn.Name, Entry: fn.Entry, OK: true}
	if file, line, ok := t.syms.PCToLine(pc); ok {
		// symbols has no is_stmt query yet: every address with a line
		// counts as a statement, and stepping detects line changes.
		l.File, l.Line, l.Stmt = file, line, true
	}
	return l
}

func (t *ttdTarget) LineAddrs(file string, line int) ([]uint64, int, error) {
	addrs, actual := t.syms.BreakpointLine(file, line)
	if len(addrs) == 0 {
		return nil, 0, fmt.Errorf("no code at %s:%d", baseName(file), line)
	}
	return addrs, actual, nil
}

func (t *ttdTarget) FunctionAddr(name string) (uint64, error) {
	if a, ok := t.syms.FunctionBreakpoint(name); ok {
		return a, nil
	}
	return 0, fmt.Errorf("no function %q: %w", name, ErrNotFound)
}

// frame returns symbols' frame index of thread tid.
func (t *ttdTarget) frame(tid, index int) (*symbols.Frame, error) {
	regs, err := t.symRegs(tid)
	if err != nil {
		return nil, err
	}
	frames := t.syms.Unwind(regs, t.memReader(), index+1)
	if index >= len(frames) {
		return nil, fmt.Errorf("no frame %d", index)
	}
	return &frames[index], nil
}

func (t *ttdTarget) Variables(tid, index int) ([]Var, error) {
	f, err := t.frame(tid, index)
	if err != nil {
		return nil, err
	}
	args, locals, err := t.syms.Scopes(f, t.memReader())
	if err != nil {
		if errors.Is(err, symbols.ErrNoDebugInfo) {
			return []Var{{Name: "(no debug information)", Value: f.Func}}, nil
		}
		return nil, err
	}
	var out []Var
	for _, v := range args {
		x := convertVar(v)
		x.Arg = true
		out = append(out, x)
	}
	for _, v := range locals {
		out = append(out, convertVar(v))
	}
	return out, nil
}

func convertVar(v *symbols.Variable) Var {
	name := v.Name
	if v.Shadowed {
		name = "(" + name + ")"
	}
	out := Var{Name: name, Type: v.Type, Value: v.Value, Addr: v.Addr}
	if v.Addr != 0 {
		out.Size = v.Size
		if out.Size <= 0 {
			out.Size = typeSize(v)
		}
	}
	if v.HasChildren {
		out.Children = func() ([]Var, error) {
			var kids []Var
			for _, c := range v.Children() {
				kids = append(kids, convertVar(c))
			}
			return kids, nil
		}
	}
	return out
}

// typeSize guesses a variable's size from its C or Go type name, for data
// breakpoints, where symbols does not know it.
func typeSize(v *symbols.Variable) int {
	if v.Addr == 0 {
		return 0
	}
	ty := strings.TrimSpace(v.Type)
	sizes := map[string]int{"char": 1, "signed char": 1, "unsigned char": 1, "_Bool": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
		"int8": 1, "uint8": 1, "byte": 1, "short": 2, "unsigned short": 2, "short int": 2, "short unsigned int": 2, "int16": 2, "uint16": 2,
		"int": 4, "unsigned int": 4, "float": 4, "int32": 4, "uint32": 4, "float32": 4, "rune": 4, "int32_t": 4, "uint32_t": 4,
		"long": 8, "unsigned long": 8, "long int": 8, "long unsigned int": 8, "long long": 8, "long long int": 8,
		"long long unsigned int": 8, "double": 8, "int64": 8, "uint64": 8, "float64": 8, "uintptr": 8, "string": 16}
	if n, ok := sizes[strings.TrimPrefix(strings.TrimPrefix(ty, "volatile "), "const ")]; ok {
		return n
	}
	if strings.HasSuffix(ty, "*") || strings.HasPrefix(ty, "*") {
		return 8
	}
	if strings.HasPrefix(ty, "[]") {
		return 24
	}
	return 8
}

func (t *ttdTarget) Eval(tid, index int, expr string) (Var, error) {
	f, err := t.frame(tid, index)
	if err != nil {
		f = nil
	}
	v, err := t.syms.EvalExpr(expr, f, t.memReader())
	if err != nil {
		return Var{}, err
	}
	return convertVar(v), nil
}

func (t *ttdTarget) Disassemble(addr uint64) (string, int) {
	var buf [15]byte
	known, err := t.ReadMemory(addr, buf[:])
	if err != nil {
		return "", 0
	}
	n := 0
	for n < len(buf) && (known == nil || known[n]) {
		n++
	}
	if n == 0 {
		return "", 0
	}
	in := x86.Decode(addr, buf[:n])
	if in.Len == 0 {
		return "(bad)", 1
	}
	return x86.Disasm(addr, buf[:in.Len]), int(in.Len)
}

// origin is the value origin of [addr, addr+size) at the current
// position (ttd.Session.Origin), as console lines.
func (t *ttdTarget) origin(addr, size uint64) ([]string, error) {
	chain, err := t.s.Origin(addr, size, t.s.Position())
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
			line += fmt.Sprintf("position %d: %s %s ← %s  %s  %s", l.Position, l.Kind, l.Into, l.From, l.Disasm, ttd.Describe(t.syms, l.PC))
		}
		out = append(out, line)
	}
	return out, nil
}
