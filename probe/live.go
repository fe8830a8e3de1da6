package probe

import (
	"errors"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"ttd/reader"
	"ttd/symbols"
	"ttd/x86"
)

// Live evaluation: "ttd probe ... -- PROG" evaluates the script while
// the program runs under ttd, as dtrace -c does. A driver (package
// probe/live, which knows the emulator) calls Live's methods from the
// emulator's callbacks, on the goroutine running the program, with the
// positions the recorder gives the same events: the clauses see the
// same events, in the same order, at the same positions as over the
// recording of the run, through the same evaluator (one segment from
// position 0), so live and recorded runs give the same output.
//
// What differs: memory is the program's own (every mapped byte is
// known); the program's modules arrive as it maps them, so probes bind
// again after each new module (an fn probe on a libc function waits for
// libc) and a probe description is known to match nothing only at the
// end (Unmatched); exit() stops the evaluation and the driver kills the
// program; usdt semaphores are raised (live/doc.go).

// LiveClock is where the live run is: the recorder's positions and
// thread ids (recorder.Clock).
type LiveClock interface {
	InstPosition(c *x86.CPU) uint64
	CPUTid(c *x86.CPU) int
}

// LiveInfo describes the program a Live evaluation watches.
type LiveInfo struct {
	// Name identifies the run in records (the trace's path with -o).
	Name string
	// Pid is the first process's id; Exec its program's path.
	Pid  int
	Exec string
	// Clock gives instruction positions and thread ids.
	Clock LiveClock
	// Memory reads the memory of the process running the current event
	// (known[i] false for an unmapped byte).
	Memory func(addr uint64, buf []byte, known []bool)
	// AddressSpace, when set, is the address space of the process
	// running the current event (or decoding code): it picks the
	// program whose probes apply (AddModuleIn).
	AddressSpace func() *x86.Memory
	// Stdout and Stderr, when set, receive the records as the events
	// happen (Flush), as dtrace -c prints them; Outcome.Print then
	// prints only what is left (END's records, the aggregations).
	Stdout, Stderr io.Writer
}

// Live is a program being evaluated over a running program.
type Live struct {
	p    *Program
	info LiveInfo
	// syms is the first program's symbol table; tables every
	// program's, tables[0] = syms, and progOf the program each address
	// space runs (AddModuleIn, ShareProgram).
	syms    *symbols.Table
	tables  []*symbols.Table
	progOf  map[*x86.Memory]int
	symErr  error
	b       *Bound
	s       *segEval
	begin   *Partial
	matched map[*ProbeSpec]int
	version uint64
	procs   map[int]*procInfo
	// out folds the records and the finished aggregation parts as they
	// come (Flush): nrec records and nparts[agg] parts so far.
	out    *Outcome
	nrec   int
	nparts map[string]int
	// tally counts narrow records by PC (livesteps.go).
	tally *stepTally
	// pending are the extents of the modules added since the probes
	// were last bound, when binding may wait (bindLater).
	pending []extent
}

// extent is the addresses [lo, hi) a module's segments cover.
type extent struct{ lo, hi uint64 }

// NewLive starts a live evaluation: it checks that every probe can be
// observed live, binds what it can (modules come later: AddModule) and
// runs BEGIN.
func (p *Program) NewLive(info LiveInfo) (*Live, error) {
	l := &Live{p: p, info: info, syms: &symbols.Table{}, procs: map[int]*procInfo{}, progOf: map[*x86.Memory]int{}}
	l.tables = []*symbols.Table{l.syms}
	exec := filepath.Base(info.Exec)
	l.procs[info.Pid] = &procInfo{names: []procName{{0, exec}}}
	if err := l.rebind(); err != nil {
		return nil, err
	}
	l.begin = specialEval(l.b, l.b.begin, nil, 0)
	init := composeState(nil, l.begin.Writes, nil)
	l.s = &segEval{b: l.b, part: newPartial(info.Name, 0, 0, math.MaxUint64), state: map[string]Value{}, init: init, specs: map[int]*spec{},
		cur: l.b.sp, memOf: info.AddressSpace}
	l.s.where = func(c *x86.CPU) (uint64, int) { return info.Clock.InstPosition(c), info.Clock.CPUTid(c) }
	if l.begin.Exit != nil {
		l.s.stopped = true
	}
	l.out = &Outcome{Aggs: map[string]AggTable{}, Printed: map[string]bool{}, p: p, sy: l.syms, Segments: 1}
	l.nparts = map[string]int{}
	l.out.fold(l.begin)
	l.print()
	return l, nil
}

// Flush folds the records the events made since the last Flush (and
// the aggregation parts before them, which printa needs) into the
// outcome and, when streaming, prints them: the driver calls it after
// each event. It costs a comparison when the events printed nothing.
func (l *Live) Flush() {
	if len(l.s.part.Records) == l.nrec {
		return
	}
	l.foldNew(false)
	l.print()
}

// foldNew folds the new records and the aggregation parts an operation
// (printa, clear, trunc) closed — or, at the end, every part left — in
// position order, as one more piece of the live segment.
func (l *Live) foldNew(all bool) {
	part := l.s.part
	chunk := &Partial{Trace: part.Trace, Aggs: map[string]AggSeries{}}
	for name, series := range part.Aggs {
		k := len(series)
		if !all && k > 0 && series[k-1].Op == opNone {
			k-- // still open: later events add to it
		}
		if n := l.nparts[name]; k > n {
			ps := append(AggSeries(nil), series[n:k]...)
			for i := range ps {
				ps[i].Trace, ps[i].Seg = part.Trace, l.s.k
			}
			chunk.Aggs[name] = ps
			l.nparts[name] = k
		}
	}
	chunk.Records = append([]Record(nil), part.Records[l.nrec:]...)
	for i := range chunk.Records {
		chunk.Records[i].Trace, chunk.Records[i].Seg = part.Trace, l.s.k
	}
	l.nrec = len(part.Records)
	chunk.Faults, part.Faults = part.Faults, 0
	if chunk.Exit == nil && part.Exit != nil && l.out.Exit == nil {
		chunk.Exit = part.Exit
	}
	l.out.fold(chunk)
}

func (l *Live) print() {
	if l.info.Stdout != nil {
		l.out.printRecords(l.info.Stdout, l.info.Stderr)
	}
}

// rebind binds the program again over the modules known so far.
func (l *Live) rebind() error {
	l.settle()
	b := newBound(l.p, &Target{Name: l.info.Name, Syms: l.syms})
	b.pid, b.execname, b.created = l.info.Pid, filepath.Base(l.info.Exec), time.Now().UnixNano()
	if l.b != nil {
		b.created = l.b.created
	}
	b.procs, b.mem = l.procs, l.info.Memory
	if len(l.tables) > 1 {
		b.spaces = b.spaces[:1]
		for _, t := range l.tables[1:] {
			b.spaces = append(b.spaces, newSpace(t))
		}
		b.none, b.pick = b.sp, l.pick
	}
	l.matched = map[*ProbeSpec]int{}
	if err := b.bindProbes(l.matched); err != nil {
		return err
	}
	l.b = b
	if l.s != nil {
		l.s.b, l.s.addrs, l.s.cur, l.s.spMem, l.s.spLast = b, nil, b.sp, nil, nil
	}
	l.version++
	return nil
}

// AddModule adds a module the program mapped (an ELF file at offset 0,
// as the recorder's Module records) and binds the probes again.
func (l *Live) AddModule(path string, loadAddr uint64) error {
	return l.AddModuleIn(nil, path, loadAddr)
}

// AddModuleIn adds a module that a process with address space mem (nil:
// the first process's) mapped and binds the probes again. The first
// address space runs the first program; another one, unless
// ShareProgram said it runs a program known already, starts a program
// of its own (an exec): its probes bind to its modules only.
func (l *Live) AddModuleIn(mem *x86.Memory, path string, loadAddr uint64) error {
	t := l.syms
	if mem != nil {
		i, ok := l.progOf[mem]
		if !ok {
			i = 0
			if len(l.progOf) > 0 {
				i = len(l.tables)
				l.tables = append(l.tables, &symbols.Table{})
			}
			l.progOf[mem] = i
		}
		t = l.tables[i]
	}
	if err := t.Add(symbols.Module{Path: path, LoadAddr: loadAddr}); err != nil {
		l.symErr = errors.Join(l.symErr, err)
	}
	if l.bindLater() && len(l.tables) == len(l.b.spaces) {
		if lo, hi, ok := t.ModuleExtent(path); ok {
			l.pending = append(l.pending, extent{lo, hi})
			return nil
		}
	}
	return l.rebind()
}

// bindLater reports whether binding the probes to a module just added
// may wait until code in it runs (WantInsts), or the end (Finish, for
// Unmatched): when binding cannot fail and nothing but the probed
// instructions depends on it — a script that needs no DWARF (no casts,
// members, memory reads, line or watch probes: NeedsDWARF) and no usdt
// semaphores (the program's globals are looked up in the symbol table
// as clauses run). The loader maps
// a program's libraries one after the other with no code of theirs
// running in between: one binding instead of one per library (sqlite3's
// seven bindings of every function were a sixth of its live
// fn:::entry probe's time).
func (l *Live) bindLater() bool {
	return l.b != nil && !l.p.NeedsDWARF() && !l.p.UsesUSDT()
}

// bindPending binds the probes to the modules added since the last
// binding.
func (l *Live) bindPending() {
	if len(l.pending) > 0 {
		l.pending = l.pending[:0]
		// bindLater: binding cannot fail.
		_ = l.rebind()
	}
}

// SymbolError is what went wrong loading the modules' symbols.
func (l *Live) SymbolError() error { return l.symErr }

// Unmatched is the error for the first probe description that matched
// nothing over the modules the program mapped (nil: none).
func (l *Live) Unmatched() error {
	var bad []*ProbeSpec
	for _, cl := range l.p.Script.Clauses {
		for i := range cl.Probes {
			if pr := &cl.Probes[i]; l.matched[pr] == 0 {
				bad = append(bad, pr)
			}
		}
	}
	if len(bad) == 0 {
		if l.b != nil {
			return l.b.typeErr
		}
		return nil
	}
	sort.SliceStable(bad, func(i, j int) bool { return bad[i].P.Line < bad[j].P.Line })
	return errAt(bad[0].P, "probe description %s does not match any probes", bad[0].Text)
}

// ShareProgram records that address space child runs the program
// parent runs (a fork).
func (l *Live) ShareProgram(child, parent *x86.Memory) {
	if i, ok := l.progOf[parent]; ok && child != parent {
		l.progOf[child] = i
	}
}

// pick is the program an address space runs (Bound.pick).
func (l *Live) pick(s *segEval, mem *x86.Memory, tid int, pos uint64) *space {
	if i, ok := l.progOf[mem]; ok && i < len(s.b.spaces) {
		return s.b.spaces[i]
	}
	return s.b.sp
}

// USDTSemaphores are the addresses of the semaphores of the usdt probes
// bound in the program address space mem runs (each once; mem nil: in
// every program): the driver raises them as systemtap does, so that the
// guarded probe sites run.
func (l *Live) USDTSemaphores(mem *x86.Memory) []uint64 {
	seen := map[uint64]bool{}
	var out []uint64
	var sp *space
	if mem != nil && l.b.pick != nil {
		sp = l.pick(l.s, mem, 0, 0)
	}
	for _, bp := range l.b.probes {
		if sp != nil && bp.sp != sp {
			continue
		}
		if bp.usdt != nil && bp.usdt.Semaphore != 0 && !seen[bp.usdt.Semaphore] {
			seen[bp.usdt.Semaphore] = true
			out = append(out, bp.usdt.Semaphore)
		}
	}
	return out
}

// FilterVersion changes when the probes bind again
// (x86.FilterVersion).
func (l *Live) FilterVersion() uint64 { return l.version }

// WantBlock accepts the blocks that hold a probed instruction
// (x86.BlockFilter).
func (l *Live) WantBlock(b *x86.Block) bool { return l.WantInsts(b) != 0 }

// WantInsts picks the probed instructions of b (x86.InstFilter): the
// rest of the block runs translated.
func (l *Live) WantInsts(b *x86.Block) uint64 {
	if l.s.stopped {
		return 0
	}
	for _, e := range l.pending {
		if b.PC < e.hi && b.End > e.lo {
			l.bindPending()
			break
		}
	}
	return l.s.wantInsts(b)
}

// LogInsts picks, among the probed instructions of b, those translated
// code may log instead of leaving for them (x86.HookLogger): the fn
// probes' when no clause reads memory (hooklog.go), as over a
// recording.
func (l *Live) LogInsts(b *x86.Block) uint64 {
	if l.s.stopped || !l.s.logs() {
		return 0
	}
	return l.s.loggable(b)
}

// LoggedHooks fires the probes of the instructions translated code
// logged on c, in order (x86.HookLogger).
func (l *Live) LoggedHooks(c *x86.CPU, recs []x86.HookRecord) {
	l.settle()
	if l.b.pick != nil {
		l.s.cur = l.s.spaceOf(c, 0, 0)
	}
	base := l.info.Clock.InstPosition(c) - c.Retired()
	l.s.fireLogged(recs, base, l.info.Clock.CPUTid(c))
}

// Instruction runs the probes of the instruction c is about to run.
func (l *Live) Instruction(c *x86.CPU, in *x86.Inst) {
	l.settle()
	l.s.hook(nil, c, in)
}

// Stopped reports whether the script called exit().
func (l *Live) Stopped() bool { return l.s.stopped }

// SyscallEntry fires the entry probes of a syscall that begins (before
// a blocking one waits), at the position of its syscall instruction, as
// over the recording (reader.Replay.OnSyscallEntry).
func (l *Live) SyscallEntry(pos uint64, tid int, c *x86.CPU, nr int, args *[6]uint64) {
	l.settle()
	l.s.syscallEntry(pos, tid, c, nr, args)
}

// Syscall fires the return probes of a completed syscall (its entry
// probes fired at SyscallEntry).
func (l *Live) Syscall(pos uint64, tid int, c *x86.CPU, nr int, result int64) {
	l.settle()
	l.s.syscallReturn(pos, tid, c, nr, result)
}

// UsesWatch reports whether the script has watch probes: the driver
// must then report every memory access of the program (Access,
// KernelWrite).
func (p *Program) UsesWatch() bool {
	for _, cl := range p.Script.Clauses {
		for _, pr := range cl.Probes {
			if pr.Prov == "watch" {
				return true
			}
		}
	}
	return false
}

// Watched reports whether an access of size bytes at addr overlaps a
// watched range (the driver's filter before Access).
func (l *Live) Watched(addr uint64, size int) bool {
	for _, w := range l.b.watch {
		if addr < w.whi && addr+uint64(size) > w.wlo {
			return true
		}
	}
	return false
}

// WatchedPages returns the numbers of the pages the watched ranges
// touch, appended to pns (a live run keeps them out of the TLBs:
// x86.Memory.WatchPages).
func (l *Live) WatchedPages(pns []uint64) []uint64 {
	for _, w := range l.b.watch {
		for pn := w.wlo >> x86.PageShift; pn <= (w.whi-1)>>x86.PageShift && w.whi > w.wlo; pn++ {
			if !slices.Contains(pns, pn) {
				pns = append(pns, pn)
			}
		}
	}
	return pns
}

// WatchRanges appends the watched ranges to dst.
func (l *Live) WatchRanges(dst []reader.Range) []reader.Range {
	for _, w := range l.b.watch {
		dst = append(dst, reader.Range{Lo: w.wlo, Hi: w.whi})
	}
	return dst
}

// Access fires the watch probes of one memory access of the program's
// first process, as the re-simulation reports it (reader.Access): an
// instruction's (pos its position, pc its address) or, in pieces of at
// most 8 bytes, what a syscall or a signal delivery wrote (KernelWrite).
func (l *Live) Access(pos uint64, tid int, c *x86.CPU, pc, addr uint64, size int, val uint64, write bool) {
	l.settle()
	for _, w := range l.b.watch {
		if l.s.stopped || addr >= w.whi || addr+uint64(size) <= w.wlo || write && !w.ww || !write && !w.wr || !l.s.watchedIn(w, c, tid, pos) {
			continue
		}
		ev := &event{pos: pos, tid: tid, cpu: c}
		ev.args[0], ev.args[1], ev.args[2], ev.args[3] = int64(addr), int64(val), int64(size), int64(pc)
		l.s.fire([]*boundProbe{w}, ev)
	}
}

// KernelWrite fires the watch probes of the bytes b a syscall (pc its
// instruction) or a signal delivery (pc 0) wrote at addr, in pieces of
// 8 bytes from addr as the re-simulation reports them; pos is the
// position before the syscall's completion or the delivery.
func (l *Live) KernelWrite(pos uint64, tid int, c *x86.CPU, pc, addr uint64, b []byte) {
	if !l.Watched(addr, len(b)) {
		return
	}
	for i := 0; i < len(b); i += 8 {
		n := min(8, len(b)-i)
		if !l.Watched(addr+uint64(i), n) {
			continue
		}
		var v uint64
		for k := 0; k < n; k++ {
			v |= uint64(b[i+k]) << (8 * k)
		}
		l.Access(pos, tid, c, pc, addr+uint64(i), n, v, true)
	}
}

// ThreadStart fires thread:::start.
func (l *Live) ThreadStart(pos uint64, tid, parent int) {
	l.settle()
	if !l.s.stopped {
		l.s.threadStart(pos, tid, parent)
	}
}

// ThreadExit fires thread:::exit.
func (l *Live) ThreadExit(pos uint64, tid, status int) {
	l.settle()
	if !l.s.stopped {
		l.s.threadExit(pos, tid, status)
	}
}

// Signal fires signal:::deliver.
func (l *Live) Signal(pos uint64, tid, signo int, addr uint64) {
	l.settle()
	if !l.s.stopped {
		l.s.signal(pos, tid, signo, addr)
	}
}

// Fork records process child of parent (thread tid forked it) and fires
// proc:::fork in the parent.
func (l *Live) Fork(pos uint64, parent, tid, child int) {
	name := l.b.execnameOf(parent, pos)
	l.procs[child] = &procInfo{ppid: parent, names: []procName{{pos, name}}}
	l.proc(procEvent{pos: pos, kind: "fork", pid: parent, tid: tid, arg0: int64(child), child: child})
}

// Exec records that process pid runs path from pos on and fires
// proc:::exec in it.
func (l *Live) Exec(pos uint64, pid, tid int, path string) {
	if pi := l.procs[pid]; pi != nil {
		pi.names = append(pi.names, procName{pos, filepath.Base(path)})
	}
	l.proc(procEvent{pos: pos, kind: "exec", pid: pid, tid: tid})
}

// ProcessEnd fires proc:::exit for a process of the tree; for the first
// process (the program itself), at its end.
func (l *Live) ProcessEnd(pos uint64, pid, tid int, code int64) {
	l.settle()
	if l.s.stopped {
		return
	}
	if pid == l.info.Pid {
		l.s.procExit(pos, tid, code)
		return
	}
	l.proc(procEvent{pos: pos, kind: "exit", pid: pid, tid: pid, arg0: code})
}

func (l *Live) proc(pe procEvent) {
	l.settle()
	if bps := l.b.proc[pe.kind]; bps != nil && !l.s.stopped {
		ev := &event{pos: pe.pos, tid: pe.tid, pid: pe.pid}
		ev.args[0] = pe.arg0
		l.s.fire(bps, ev)
	}
}

// Finish ends the evaluation at position end (the program's last): it
// runs END and returns the outcome, as Run's over the recording.
func (l *Live) Finish(end uint64) *Outcome {
	l.settle()
	l.bindPending()
	l.s.part.To = end
	l.s.seal()
	l.foldNew(true)
	state := composeState(composeState(nil, l.begin.Writes, nil), l.s.part.Writes, l.s.part.Ended)
	l.out.finishEnd(l.b, state, end)
	l.print()
	return l.out
}
