package dap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"ttd/reader"
	"ttd/symbols"
	"ttd/tracefile"
	"ttd/x86"
)

// The real Target: a recording re-simulated by package reader, read
// through package symbols.
//
// NOTE (to be replaced): the time-travel session of package ttd
// (ttd.Session: Seek, memory knowledge across segments through its index,
// breakpoints and searches) did not compile yet when this was written, so
// the timeline below is built on package reader directly: reader.Trace's
// checkpoints split the recording into segments; within a segment,
// reader.Snapshot every fineEvery instructions (taken lazily, the first
// time a segment is visited) bound what any move re-simulates, and the
// reader.Delta of each window between two snapshots says which bytes of
// memory became known, so that memory at a position combines the current
// window's knowledge with the older windows' of the same segment and of
// the segments already visited. What Search needs and ttd.Session should
// offer is a search with a per-instruction predicate in both directions.

// fineEvery is the distance between the snapshots of a segment.
const fineEvery = 1_000_000

// scanStep bounds one RunTo of a forward search, so that a cancelled
// search stops soon.
const scanStep = 4 * fineEvery

type ttdTarget struct {
	tr   *reader.Trace
	cps  []reader.Checkpoint
	end  uint64
	syms *symbols.Table
	exit Exit

	segs map[int]*segment

	pos uint64
	// cur is a tracking replay at pos (nil until needed); curWin is the
	// window it started in.
	cur            *reader.Replay
	curSeg, curWin int
}

// segment holds the snapshots of checkpoint interval k: snaps[j] is at
// start+j*fineEvery and deltas[j] is what [snaps[j], snaps[j+1]) learned.
type segment struct {
	start, end uint64
	snaps      []*reader.Snapshot
	deltas     []*reader.Delta
	// bld continues building from the last snapshot (tracking on).
	bld *reader.Replay
}

// OpenTrace opens a recording for debugging and loads the symbols of the
// modules it mapped (embedded in the trace, or read from their recorded
// paths, or from opts.Binaries).
func OpenTrace(path string, opts OpenOptions) (Target, error) {
	tr, err := reader.Open(path)
	if err != nil {
		return nil, err
	}
	cps, err := tr.Checkpoints()
	if err != nil {
		tr.Close()
		return nil, err
	}
	t := &ttdTarget{tr: tr, cps: cps, end: tr.End(), segs: make(map[int]*segment)}
	t.exit = Exit{Kind: "cut", Pos: t.end}
	if s := tr.Summary; s.HasExit {
		e := s.Exit
		t.exit = Exit{Code: e.Code, Signal: e.Signo, FaultAddr: e.FaultAddr, Pos: e.Position}
		switch e.Kind {
		case tracefile.ExitExited:
			t.exit.Kind = "exited"
		case tracefile.ExitKilled, tracefile.ExitCrashed:
			t.exit.Kind = "killed"
		}
	}
	t.syms = loadSymbols(tr, opts)
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

func (t *ttdTarget) Close() error { return t.tr.Close() }

func (t *ttdTarget) Bounds() (uint64, uint64) { return 0, t.end }
func (t *ttdTarget) Position() uint64         { return t.pos }
func (t *ttdTarget) Exit() Exit               { return t.exit }

func (t *ttdTarget) Seek(pos uint64) error {
	pos = min(pos, t.end)
	if pos != t.pos {
		t.pos, t.cur = pos, nil
	}
	return nil
}

// seg returns segment k, creating it.
func (t *ttdTarget) seg(k int) *segment {
	if s := t.segs[k]; s != nil {
		return s
	}
	s := &segment{start: t.cps[k].Position, end: t.end}
	if k+1 < len(t.cps) {
		s.end = t.cps[k+1].Position
	}
	t.segs[k] = s
	return s
}

// build extends segment k's snapshots to cover pos.
func (t *ttdTarget) build(k int, pos uint64) (*segment, error) {
	s := t.seg(k)
	for {
		if n := len(s.snaps); n > 0 && (s.snaps[n-1].Position()+fineEvery > pos || s.bld == nil) {
			return s, nil
		}
		if s.bld == nil {
			r, err := t.tr.NewReplayAt(t.cps[k])
			if err != nil {
				return nil, err
			}
			r.Track()
			s.bld = r
			s.snaps = append(s.snaps, r.Snapshot())
			continue
		}
		next := s.start + uint64(len(s.snaps))*fineEvery
		err := s.bld.RunTo(min(next, s.end))
		if err != nil && !errors.Is(err, reader.ErrEnd) {
			s.bld = nil
			return s, err
		}
		s.deltas = append(s.deltas, s.bld.Cut())
		if next >= s.end || err != nil || s.bld.Position() < next {
			s.bld = nil // the segment is complete
			return s, nil
		}
		s.snaps = append(s.snaps, s.bld.Snapshot())
	}
}

// window returns the segment and window index of pos.
func (t *ttdTarget) window(pos uint64) (int, int) {
	k := reader.CheckpointAt(t.cps, pos)
	return k, int((pos - t.cps[k].Position) / fineEvery)
}

// replayFrom resumes window j of segment k (building it as needed).
func (t *ttdTarget) replayFrom(k, j int) (*reader.Replay, error) {
	s, err := t.build(k, t.cps[k].Position+uint64(j)*fineEvery)
	if err != nil && len(s.snaps) == 0 {
		return nil, err
	}
	j = min(j, len(s.snaps)-1)
	return t.tr.Resume(s.snaps[j])
}

// state returns a tracking replay at the current position.
func (t *ttdTarget) state() (*reader.Replay, error) {
	if t.cur != nil {
		return t.cur, nil
	}
	k, j := t.window(t.pos)
	r, err := t.replayFrom(k, j)
	if err != nil {
		return nil, err
	}
	r.Track()
	if err := r.RunTo(t.pos); err != nil && !errors.Is(err, reader.ErrEnd) {
		return nil, err
	}
	t.cur, t.curSeg, t.curWin = r, k, j
	return r, nil
}

func (t *ttdTarget) Threads() ([]Thread, error) {
	r, err := t.state()
	if err != nil {
		return nil, err
	}
	tids, _ := r.Threads()
	var out []Thread
	for _, tid := range tids {
		out = append(out, Thread{ID: tid, Name: fmt.Sprintf("Thread %d", tid)})
	}
	if len(out) == 0 {
		if tid, c := r.Current(); c != nil {
			out = append(out, Thread{ID: tid, Name: fmt.Sprintf("Thread %d", tid)})
		}
	}
	return out, nil
}

func (t *ttdTarget) CurrentThread() int {
	r, err := t.state()
	if err != nil {
		return 1
	}
	tid, c := r.Current()
	if c == nil {
		return 1
	}
	return tid
}

// cpu returns thread tid's CPU at the current position.
func (t *ttdTarget) cpu(tid int) (*x86.CPU, error) {
	r, err := t.state()
	if err != nil {
		return nil, err
	}
	if ctid, c := r.Current(); c != nil && (tid == 0 || tid == ctid) {
		return c, nil
	}
	tids, cpus := r.Threads()
	for i, id := range tids {
		if id == tid {
			return cpus[i], nil
		}
	}
	return nil, fmt.Errorf("thread %d at position %d: %w", tid, t.pos, ErrNoThread)
}

func (t *ttdTarget) Registers(tid int) (Registers, error) {
	c, err := t.cpu(tid)
	if err != nil {
		return Registers{}, err
	}
	return Registers{GPR: c.R, RIP: c.RIP, Rflags: c.Rflags(), FSBase: c.FSBase, GSBase: c.GSBase}, nil
}

// ReadMemory combines what the current window knows with the older
// windows' deltas, newest first; a page unmapped in a newer window hides
// what older ones knew of it.
func (t *ttdTarget) ReadMemory(addr uint64, buf []byte) ([]bool, error) {
	r, err := t.state()
	if err != nil {
		return nil, err
	}
	known := make([]bool, len(buf))
	r.Known(addr, buf, known)
	blocked := make([]bool, len(buf))
	for i := range buf {
		if !known[i] && r.WasReset((addr+uint64(i))>>x86.PageShift) {
			blocked[i] = true
		}
	}
	missing := func() bool {
		for i := range known {
			if !known[i] && !blocked[i] {
				return true
			}
		}
		return false
	}
	k, j := t.curSeg, t.curWin
	for ; k >= 0 && missing(); k-- {
		s := t.segs[k]
		if s == nil {
			break // not visited: unknown (ttd.Session's index knows more)
		}
		if k != t.curSeg {
			j = len(s.deltas)
		}
		for jj := min(j, len(s.deltas)) - 1; jj >= 0 && missing(); jj-- {
			applyDelta(s.deltas[jj], addr, buf, known, blocked)
		}
	}
	return known, nil
}

func applyDelta(d *reader.Delta, addr uint64, buf []byte, known, blocked []bool) {
	var dp *reader.DeltaPage
	last := ^uint64(0)
	for i := range buf {
		if known[i] || blocked[i] {
			continue
		}
		a := addr + uint64(i)
		pn := a >> x86.PageShift
		if pn != last {
			dp, last = d.Page(pn), pn
		}
		off := a & (x86.PageSize - 1)
		if dp != nil && dp.Data != nil && dp.Known[off>>6]&(1<<(off&63)) != 0 {
			buf[i], known[i] = dp.Data[off], true
			continue
		}
		if d.WasReset(pn) {
			blocked[i] = true
		}
	}
}

// memReader is ReadMemory for package symbols.
func (t *ttdTarget) memReader() symbols.MemReader {
	return func(addr uint64, buf []byte) ([]bool, error) { return t.ReadMemory(addr, buf) }
}

// Search: see Target.Search. Forward, it re-simulates from the current
// position; backward, window by window from the current one back to the
// start, keeping the last match of each window.
func (t *ttdTarget) Search(ctx context.Context, dir Direction, q Query) (Stop, error) {
	if dir == Forward {
		return t.searchForward(ctx, q)
	}
	return t.searchBackward(ctx, q)
}

// matcher installs q's hooks on r; matches are reported for positions in
// (lo, hi) to found, which returns whether to keep looking.
func matcher(r *reader.Replay, q Query, lo, hi uint64, found func(Stop)) {
	if len(q.Exec) > 0 || q.Step != nil {
		var st InstState
		r.Hook = func(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
			p := r.InstPosition(c)
			if p < lo || p >= hi {
				return
			}
			// in.PC, not c.RIP: inside a block RIP is updated at its end.
			tid, _ := r.Current()
			if q.Exec[in.PC] {
				found(Stop{Reason: StopExec, Pos: p, Tid: tid, PC: in.PC})
				return
			}
			if q.Step != nil {
				st = InstState{Pos: p, Tid: tid, PC: in.PC, SP: c.R[x86.RSP]}
				if q.Step(&st) {
					found(Stop{Reason: StopStep, Pos: p, Tid: tid, PC: in.PC})
				}
			}
		}
	}
	if len(q.Watch) > 0 {
		var rs []reader.Range
		for _, w := range q.Watch {
			rs = append(rs, reader.Range{Lo: w.Addr, Hi: w.Addr + uint64(w.Size)})
		}
		r.Watch(rs)
		r.Access = func(a *reader.Access) {
			if a.Position < lo || a.Position >= hi {
				return
			}
			for i, w := range q.Watch {
				if a.Addr < w.Addr+uint64(w.Size) && w.Addr < a.Addr+uint64(a.Size) && (a.Write && w.Write || !a.Write && w.Read) {
					found(Stop{Reason: StopWatch, Pos: a.Position, Tid: a.Tid, PC: a.PC, Watch: i,
						Access: Access{Addr: a.Addr, Size: a.Size, Value: a.Value, Write: a.Write}})
					return
				}
			}
		}
	}
	if q.Signals {
		r.OnEvent = func(ev *reader.Event) {
			if ev.Kind == reader.EventSignal && ev.Position >= lo && ev.Position < hi {
				sig := 0
				if ev.Record != nil {
					sig = int(ev.Record.Signal.Signo)
				}
				found(Stop{Reason: StopSignal, Pos: ev.Position, Tid: ev.Tid, Signal: sig})
			}
		}
	}
}

func (t *ttdTarget) searchForward(ctx context.Context, q Query) (Stop, error) {
	if t.pos >= t.end {
		return t.stopAt(StopEnd, t.end)
	}
	k, j := t.window(t.pos)
	r, err := t.replayFrom(k, j)
	if err != nil {
		return Stop{}, err
	}
	if err := r.RunTo(t.pos); err != nil && !errors.Is(err, reader.ErrEnd) {
		return Stop{}, err
	}
	var hit *Stop
	// What the instruction at the current position does is where we
	// stand: matches start after it.
	matcher(r, q, t.pos+1, t.end+1, func(s Stop) {
		if hit == nil {
			hit = &s
		}
	})
	for hit == nil && r.Position() < t.end {
		if err := ctx.Err(); err != nil {
			t.Seek(r.Position())
			return Stop{}, err
		}
		err := r.RunTo(min(r.Position()+scanStep, t.end))
		if err != nil {
			if errors.Is(err, reader.ErrEnd) {
				break
			}
			return Stop{}, err
		}
	}
	if hit == nil {
		return t.stopAt(StopEnd, t.end)
	}
	t.Seek(hit.Pos)
	return *hit, nil
}

func (t *ttdTarget) searchBackward(ctx context.Context, q Query) (Stop, error) {
	hi := t.pos
	for hi > 0 {
		if err := ctx.Err(); err != nil {
			return Stop{}, err
		}
		k, j := t.window(hi - 1)
		r, err := t.replayFrom(k, j)
		if err != nil {
			return Stop{}, err
		}
		lo := r.Position()
		var hit *Stop
		matcher(r, q, lo, hi, func(s Stop) { c := s; hit = &c })
		if err := r.RunTo(hi); err != nil && !errors.Is(err, reader.ErrEnd) {
			return Stop{}, err
		}
		if hit != nil {
			t.Seek(hit.Pos)
			return *hit, nil
		}
		if lo >= hi {
			return Stop{}, fmt.Errorf("internal: no progress searching backward at %d", hi)
		}
		hi = lo
	}
	return t.stopAt(StopStart, 0)
}

func (t *ttdTarget) stopAt(reason StopReason, pos uint64) (Stop, error) {
	t.Seek(pos)
	st := Stop{Reason: reason, Pos: pos}
	if c, err := t.cpu(0); err == nil {
		st.PC = c.RIP
		st.Tid = t.CurrentThread()
	}
	return st, nil
}

// Symbols.

func (t *ttdTarget) Stack(tid, max int) ([]Frame, error) {
	c, err := t.cpu(tid)
	if err != nil {
		return nil, err
	}
	var regs symbols.Regs
	copy(regs[:16], c.R[:])
	regs[symbols.RIP] = c.RIP
	var out []Frame
	// One frame more: symbols sets a frame's CFA once it unwound past it.
	frames := t.syms.Unwind(regs, t.memReader(), max+1)
	if len(frames) > max {
		frames = frames[:max]
	}
	for _, f := range frames {
		fn, _ := t.syms.FuncForPC(f.PC)
		out = append(out, Frame{PC: f.PC, CFA: f.CFA, Func: f.Func, Entry: f.Entry, File: f.File, Line: f.Line,
			Module: f.Module, Inlined: f.Inlined, HasDebug: fn.DWARF, Regs: f.Regs, RegsKnown: f.Known})
	}
	if len(out) == 0 {
		out = append(out, Frame{PC: c.RIP, Regs: regs, RegsKnown: symbols.AllKnown})
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
	c, err := t.cpu(tid)
	if err != nil {
		return nil, err
	}
	var regs symbols.Regs
	copy(regs[:16], c.R[:])
	regs[symbols.RIP] = c.RIP
	// One frame more than needed: symbols sets a frame's CFA (the frame
	// base of -O0 code) only once it has unwound past it.
	frames := t.syms.Unwind(regs, t.memReader(), index+2)
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
	out := Var{Name: name, Type: v.Type, Value: v.Value, Addr: v.Addr, Size: typeSize(v)}
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
// breakpoints (symbols.Variable has no size yet).
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

var _ = sort.Ints
