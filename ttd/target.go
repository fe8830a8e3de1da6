package ttd

import (
	"context"
	"errors"
	"fmt"

	"ttd/symbols"
	"ttd/tracefile"
	"ttd/x86"
)

// Target is the debugger backend behind every front end (the DAP and
// gdb servers are protocol layers over it): a Session, its symbols, and
// what a debugger shows of them — threads (a Go program's goroutines
// among them, goroutines.go), frames, variables and expressions, and
// searches that stop at code, data and per-instruction predicates.
//
// Searches become the session's breakpoints (BreakExec for code,
// BreakMemory for data), so that the index skips the checkpoint
// intervals that cannot hit, and the tracking deltas of the session's
// snapshots skip the windows a data breakpoint cannot hit; a predicate
// is a ContinueMatch, which re-simulates every instruction in between.
// A Target is used by one goroutine at a time.
type Target struct {
	s    *Session
	syms *symbols.Table
	// isGo: threads are goroutines (goroutines.go); gv caches them.
	isGo bool
	gv   *gview
	// procs are sessions focused on the other processes of a tree
	// (process.go).
	procs map[int]*Session
}

// NewTarget makes a Target of a session, with the session's symbols.
func NewTarget(s *Session) *Target {
	t := &Target{s: s}
	sy, _ := s.Symbols()
	t.syms, _ = sy.(*symbols.Table)
	if t.syms == nil {
		t.syms, _ = symbols.Load(nil)
	}
	t.isGo = t.syms.IsGo()
	return t
}

// OpenTarget opens a recording for debugging (see Open) with its
// modules' symbols: embedded in the trace, or read from their recorded
// paths, or from binaries (recorded path → file to read instead).
func OpenTarget(path string, binaries map[string]string) (*Target, error) {
	s, err := Open(path)
	if err != nil {
		return nil, err
	}
	s.SetBinaries(binaries)
	return NewTarget(s), nil
}

// Session is the session under the target.
func (t *Target) Session() *Session { return t.s }

// Bounds are the first and the last position of the recording: the
// state before the first instruction and after the last one.
func (t *Target) Bounds() (start, end uint64) { return t.s.Start(), t.s.End() }

// Position is the current position.
func (t *Target) Position() uint64 { return t.s.Position() }

// Seek moves to pos (clamped to Bounds).
func (t *Target) Seek(pos uint64) error {
	_, err := t.s.Seek(pos)
	return err
}

// Symbols is the symbol table of every module of the recording (never
// nil): the one to resolve breakpoints and names in. In a recording of
// a process tree, where programs overlap, a thread's code addresses are
// named by ThreadSymbols.
func (t *Target) Symbols() *symbols.Table { return t.syms }

// ThreadSymbols is the symbol table of the program thread (goroutine)
// id's process runs at the current position: Symbols, except in a
// recording of a process tree (Session.ProcessSymbols).
func (t *Target) ThreadSymbols(id int) *symbols.Table {
	if !t.s.tr.Tree() {
		return t.syms
	}
	if g, _ := t.goroutine(id); g != nil {
		return g.syms
	}
	pid, _ := t.threadPid(id)
	sy, _ := t.s.ProcessSymbols(pid)
	if tab, ok := sy.(*symbols.Table); ok {
		return tab
	}
	return t.syms
}

// Close closes the session.
func (t *Target) Close() error {
	t.closeProcesses()
	return t.s.Close()
}

// ExitInfo says how the recorded program ended.
type ExitInfo struct {
	// Kind is "exited", "killed" (by a signal) or "cut" (the recording
	// was interrupted).
	Kind      string
	Code      int
	Signal    int
	FaultAddr uint64
	Pos       uint64
}

// Exit describes Session.Exit.
func (t *Target) Exit() ExitInfo {
	e := t.s.Exit()
	if e == nil {
		return ExitInfo{Kind: "cut", Pos: t.s.End()}
	}
	out := ExitInfo{Code: e.Code, Signal: e.Signo, FaultAddr: e.FaultAddr, Pos: e.Position}
	switch e.Kind {
	case tracefile.ExitExited:
		out.Kind = "exited"
	case tracefile.ExitKilled, tracefile.ExitCrashed:
		out.Kind = "killed"
	}
	return out
}

// TargetThread is a thread as a debugger lists it: an OS thread or, in
// a Go program, a goroutine.
type TargetThread struct {
	ID   int
	Name string
}

// Threads lists the threads at the current position: the goroutines of
// a Go program, else the OS threads (at the end, the last one even if
// it exited: the recording ends with its state).
func (t *Target) Threads() ([]TargetThread, error) {
	if gs := t.goThreads(); gs != nil {
		return gs, nil
	}
	ths, err := t.s.Threads()
	if err != nil {
		return nil, err
	}
	var out []TargetThread
	for _, th := range ths {
		out = append(out, TargetThread{ID: th.Tid, Name: t.threadName(th.Tid)})
	}
	if len(out) == 0 {
		if tid, err := t.s.CurrentThread(); err == nil && tid != 0 {
			out = append(out, TargetThread{ID: tid, Name: t.threadName(tid)})
		}
	}
	return out, nil
}

// CurrentThread is the thread (goroutine) that runs the instruction at
// the current position (1 if none does).
func (t *Target) CurrentThread() int {
	tid, err := t.s.CurrentThread()
	if err != nil || tid == 0 {
		return 1
	}
	return t.threadID(tid)
}

// Registers returns thread id's registers; a parked goroutine has only
// rip, rsp and rbp (from g.sched).
func (t *Target) Registers(id int) (Registers, error) {
	g, tid := t.goroutine(id)
	if g != nil {
		var r Registers
		r.GPR[x86.RSP], r.GPR[x86.RBP], r.RIP = g.SP, g.BP, g.PC
		return r, nil
	}
	return t.s.Registers(tid)
}

// ReadMemory fills buf from addr as memory is at the current position,
// in the session's focus process (ReadThreadMemory: a thread's);
// known[i] is false for a byte the recording does not know.
func (t *Target) ReadMemory(addr uint64, buf []byte) (known []bool, err error) {
	return readInto(t.s, addr, buf)
}

// memReader reads the memory of thread id's process.
func (t *Target) memReader(id int) symbols.MemReader {
	return func(addr uint64, buf []byte) ([]bool, error) { return t.ReadThreadMemory(id, addr, buf) }
}

// Query is what a Search stops at; an empty Query runs to the end (or
// start) of the recording.
type Query struct {
	// Exec stops before an instruction at one of these addresses.
	Exec map[uint64]bool
	// Watch stops at an instruction that accesses one of the ranges.
	Watch []Watch
	// Step, when set, is called before every instruction; true stops
	// there. It runs in the re-simulation's inner loop: keep it cheap.
	Step func(s *InstState) bool
	// Signals stops where a signal is delivered.
	Signals bool
	// Thread, when set, makes the search one instruction step of that
	// OS thread (Session.StepThread): other threads run or un-run as
	// they did in between, and breakpoints do not count.
	Thread int
}

// Watch is a data breakpoint: a range and the accesses that trigger it.
type Watch struct {
	Addr        uint64
	Size        int
	Read, Write bool
}

// InstState is the state before one instruction, as Query.Step sees it
// (Tid is the OS thread).
type InstState struct {
	Pos    uint64
	Tid    int
	PC, SP uint64
}

// SearchReason says why a Search stopped.
type SearchReason int

// Search stop reasons.
const (
	SearchExec   SearchReason = iota + 1 // an instruction in Query.Exec
	SearchWatch                          // an access to a Query.Watch range
	SearchStep                           // Query.Step returned true
	SearchSignal                         // a signal delivery
	SearchStart                          // the start of the recording
	SearchEnd                            // the end of the recording
)

// SearchStop is where a Search stopped.
type SearchStop struct {
	Reason SearchReason
	Pos    uint64
	Tid    int // the thread (goroutine) that stopped
	PC     uint64
	// Watch is the index in Query.Watch and Access the access, for
	// SearchWatch.
	Watch  int
	Access WatchAccess
	// Signal is the signal of SearchSignal.
	Signal int
}

// WatchAccess is one memory access.
type WatchAccess struct {
	Addr  uint64
	Size  int
	Value uint64
	Write bool
	// Old and New are the watched range just before and just after the
	// access (gdb's "Old value / New value"), when known.
	Old, New []byte
}

// Search moves in dir to the nearest position that matches q, strictly
// after (Forward) or before (Backward) the current one; without a
// match, to the end or the start. A data breakpoint stops before the
// accessing instruction in both directions, and an access by the
// instruction at the current position does not count. It returns ctx's
// error if ctx is cancelled, the position unchanged.
func (t *Target) Search(ctx context.Context, dir Direction, q Query) (SearchStop, error) {
	st, err := t.search(ctx, dir, q)
	if err == nil && st.Tid != 0 {
		st.Tid = t.threadID(st.Tid)
	}
	return st, err
}

func (t *Target) search(ctx context.Context, dir Direction, q Query) (SearchStop, error) {
	s := t.s
	if q.Thread != 0 {
		st, err := s.StepThread(q.Thread, dir)
		if err != nil {
			return SearchStop{}, err
		}
		switch st.Reason {
		case StopStartOfTrace:
			return t.stopAt(SearchStart, st), nil
		case StopEndOfTrace:
			return t.stopAt(SearchEnd, st), nil
		}
		return SearchStop{Reason: SearchStep, Pos: st.Position, Tid: st.Tid, PC: st.PC}, nil
	}
	saved := s.Breakpoints()
	s.ClearBreakpoints()
	defer func() {
		s.ClearBreakpoints()
		s.bps = saved
	}()
	s.SetInterrupt(ctx.Err)
	defer s.SetInterrupt(nil)
	onSignal := s.StopOnSignal
	s.StopOnSignal = q.Signals
	defer func() { s.StopOnSignal = onSignal }()

	watchOf := map[int]int{} // session breakpoint id → index in q.Watch
	for a := range q.Exec {
		if _, err := s.SetBreakpoint(Breakpoint{Kind: BreakExec, Addr: a}); err != nil {
			return SearchStop{}, err
		}
	}
	for i, w := range q.Watch {
		var acc AccessKind
		if w.Read {
			acc |= AccessRead
		}
		if w.Write {
			acc |= AccessWrite
		}
		if acc == 0 || w.Size <= 0 {
			continue
		}
		id, err := s.SetBreakpoint(Breakpoint{Kind: BreakMemory, Addr: w.Addr, Size: uint64(w.Size), Access: acc})
		if err != nil {
			return SearchStop{}, err
		}
		watchOf[id] = i
	}
	var match InstMatcher
	if q.Step != nil {
		var st InstState
		match = func(tid int, c *x86.CPU, in *x86.Inst) bool {
			// in.PC, not c.RIP: inside a block RIP is updated at its end.
			st = InstState{Tid: tid, PC: in.PC, SP: c.R[x86.RSP]}
			return q.Step(&st)
		}
	}
	if err := ctx.Err(); err != nil {
		return SearchStop{}, err
	}
	st, err := s.ContinueMatch(dir, match)
	if err != nil {
		return SearchStop{}, err
	}
	switch st.Reason {
	case StopBreakpoint:
		return SearchStop{Reason: SearchExec, Pos: st.Position, Tid: st.Tid, PC: st.PC}, nil
	case StopMatch:
		return SearchStop{Reason: SearchStep, Pos: st.Position, Tid: st.Tid, PC: st.PC}, nil
	case StopWatchpoint:
		// gdb on rr: forward, just after the access (the new value in
		// memory); backward, just before it (watch.go).
		a, w := st.Access, watchOf[st.Breakpoint]
		acc := WatchAccess{Addr: a.Addr, Size: a.Size, Value: a.Value, Write: a.Write}
		if st.Old != nil && st.New != nil {
			acc.Old, acc.New = st.Old.Data, st.New.Data
		}
		return SearchStop{Reason: SearchWatch, Pos: st.Position, Tid: st.Tid, PC: st.PC, Watch: w, Access: acc}, nil
	case StopSignal:
		sig, tid := 0, st.Tid
		if ev := st.Event; ev != nil {
			tid = ev.Tid
			if ev.Record != nil {
				sig = ev.Record.Signal.Signo
			}
		}
		return SearchStop{Reason: SearchSignal, Pos: st.Position, Tid: tid, PC: st.PC, Signal: sig}, nil
	case StopStartOfTrace:
		return t.stopAt(SearchStart, st), nil
	}
	return t.stopAt(SearchEnd, st), nil
}

func (t *Target) stopAt(reason SearchReason, st Stop) SearchStop {
	out := SearchStop{Reason: reason, Pos: st.Position, Tid: st.Tid, PC: st.PC}
	if out.Tid == 0 {
		if r, err := t.s.Registers(0); err == nil {
			out.Tid, out.PC = r.Tid, r.RIP
		}
	}
	return out
}

// symRegs returns thread id's registers for package symbols.
func (t *Target) symRegs(id int) (symbols.Regs, error) {
	var regs symbols.Regs
	g, tid := t.goroutine(id)
	if g != nil {
		return schedRegs(g), nil
	}
	r, err := t.s.Registers(tid)
	if err != nil {
		return regs, err
	}
	copy(regs[:16], r.GPR[:])
	regs[symbols.RIP] = r.RIP
	return regs, nil
}

// StackFrame is one frame of a thread's stack.
type StackFrame struct {
	PC, CFA  uint64
	Func     string
	Entry    uint64
	File     string
	Line     int
	Module   string
	Inlined  bool
	HasDebug bool
	// Regs are the registers in this frame (symbols' order: the 16
	// general registers, then rip); bit i of RegsKnown says Regs[i] was
	// recovered.
	Regs      [17]uint64
	RegsKnown uint32
}

// Stack unwinds thread id at the current position, innermost frame
// first, at most max frames.
func (t *Target) Stack(id, max int) ([]StackFrame, error) {
	regs, err := t.symRegs(id)
	if err != nil {
		return nil, err
	}
	var out []StackFrame
	syms := t.ThreadSymbols(id)
	for _, f := range syms.Unwind(regs, t.memReader(id), max) {
		fn, _ := syms.FuncForPC(f.PC)
		out = append(out, StackFrame{PC: f.PC, CFA: f.CFA, Func: f.Func, Entry: f.Entry, File: f.File, Line: f.Line,
			Module: f.Module, Inlined: f.Inlined, HasDebug: fn.DWARF, Regs: f.Regs, RegsKnown: f.Known})
	}
	if len(out) == 0 {
		out = append(out, StackFrame{PC: regs[symbols.RIP], Regs: regs, RegsKnown: symbols.AllKnown})
	}
	return out, nil
}

// CodeLocation describes an address of code.
type CodeLocation struct {
	Func  string
	Entry uint64
	File  string
	Line  int
	// Stmt: the address begins a statement (every address with a line,
	// for now: stepping detects line changes).
	Stmt bool
	OK   bool
}

// Locate describes the code at pc in the program of the thread at the
// current position (LocateIn: of a given thread).
func (t *Target) Locate(pc uint64) CodeLocation {
	return locate(t.ThreadSymbols(t.CurrentThread()), pc)
}

// LocateIn describes the code at pc in the program thread (goroutine)
// id's process runs.
func (t *Target) LocateIn(id int, pc uint64) CodeLocation {
	return locate(t.ThreadSymbols(id), pc)
}

// Locator is LocateIn for many addresses of thread id's program as it is
// at the current position: for a search's predicate, which must not
// look at the session (finding the thread's program does).
func (t *Target) Locator(id int) func(pc uint64) CodeLocation {
	syms := t.ThreadSymbols(id)
	return func(pc uint64) CodeLocation { return locate(syms, pc) }
}

func locate(syms *symbols.Table, pc uint64) CodeLocation {
	fn, ok := syms.FuncForPC(pc)
	if !ok {
		return CodeLocation{}
	}
	l := CodeLocation{Func: fn.Name, Entry: fn.Entry, OK: true}
	if file, line, ok := syms.PCToLine(pc); ok {
		l.File, l.Line, l.Stmt = file, line, true
	}
	return l
}

// OriginLines is the value origin of [addr, addr+size) in the focus
// process at the current position (Session.Origin), one line per link.
func (t *Target) OriginLines(addr, size uint64) ([]string, error) {
	chain, err := t.s.Origin(addr, size, t.s.Position())
	if err != nil {
		return nil, err
	}
	var out []string
	syms, _ := t.s.ProcessSymbols(t.s.Focus())
	for i, l := range chain {
		line := fmt.Sprintf("#%d ", i)
		switch l.Kind {
		case OriginUnseen:
			line += l.Into + ": no instruction of the recording wrote it"
		case OriginLimit:
			line += fmt.Sprintf("… (cut after %d links)", MaxOriginLinks)
		default:
			line += fmt.Sprintf("position %d: %s %s ← %s  %s  %s", l.Position, l.Kind, l.Into, l.From, l.Disasm, Describe(syms, l.PC))
		}
		out = append(out, line)
	}
	return out, nil
}

// ErrNoCode is returned for a source line or function without code.
var ErrNoCode = errors.New("no code there")

// LineAddrs returns the addresses a breakpoint on file:line stops at,
// and the line they belong to (the next line with code).
func (t *Target) LineAddrs(file string, line int) ([]uint64, int, error) {
	addrs, actual := t.syms.BreakpointLine(file, line)
	if len(addrs) == 0 {
		return nil, 0, fmt.Errorf("no code at %s:%d", baseName(file), line)
	}
	return addrs, actual, nil
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// FunctionAddr returns the address of function name after its prologue.
func (t *Target) FunctionAddr(name string) (uint64, error) {
	if a, ok := t.syms.FunctionBreakpoint(name); ok {
		return a, nil
	}
	return 0, fmt.Errorf("no function %q: %w", name, ErrNoCode)
}

func (t *Target) frame(id, index int) (*symbols.Frame, error) {
	regs, err := t.symRegs(id)
	if err != nil {
		return nil, err
	}
	frames := t.ThreadSymbols(id).Unwind(regs, t.memReader(id), index+1)
	if index >= len(frames) {
		return nil, fmt.Errorf("no frame %d", index)
	}
	f := &frames[index]
	// The thread pointer, for thread-local variables (a parked
	// goroutine has none).
	if g, tid := t.goroutine(id); g == nil {
		if r, err := t.s.Registers(tid); err == nil {
			f.TP = r.FSBase
		}
		f.ModuleTLS = func(base, off uint64) (uint64, error) {
			s, err := t.ThreadSession(id)
			if err != nil {
				return 0, err
			}
			return s.ModuleTLSAddress(tid, base, off)
		}
	}
	return f, nil
}

// Var is a variable or an evaluated expression, formatted.
type Var struct {
	Name  string
	Type  string
	Value string
	// Addr is its address (0 if it lives in registers) and Size the size
	// of its DWARF type (0 if unknown).
	Addr uint64
	Size int
	Arg  bool
	// Children, when set, lists the members, elements or pointee.
	Children func() ([]Var, error)
}

// Variables returns a frame's arguments and locals.
func (t *Target) Variables(id, frame int) ([]Var, error) {
	f, err := t.frame(id, frame)
	if err != nil {
		return nil, err
	}
	args, locals, err := t.ThreadSymbols(id).Scopes(f, t.memReader(id))
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

// Eval evaluates a source expression (or a register, $rax) in a frame.
func (t *Target) Eval(id, frame int, expr string) (Var, error) {
	f, err := t.frame(id, frame)
	if err != nil {
		f = nil
	}
	v, err := t.ThreadSymbols(id).EvalExpr(expr, f, t.memReader(id))
	if err != nil {
		return Var{}, err
	}
	return convertVar(v), nil
}

// Disassemble decodes the instruction at addr in the address space of
// thread id's process; n is its length (0 if its bytes are unknown).
func (t *Target) Disassemble(id int, addr uint64) (text string, n int) {
	var buf [15]byte
	known, err := t.ReadThreadMemory(id, addr, buf[:])
	if err != nil {
		return "", 0
	}
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
