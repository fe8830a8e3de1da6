package probe

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"

	"ttd/reader"
	"ttd/tracefile"
	"ttd/x86"
)

// Record kinds.
const (
	RecText   = "text"   // traced data and printf output (Label: the probe, unless quiet)
	RecFlow   = "flow"   // flowindent: -> or <- Label, indented at print time
	RecPrinta = "printa" // printa(Fmt, @Agg): printed from the merged aggregation
	RecFault  = "fault"  // a run-time error in a clause (to stderr)
)

// Record is one piece of output, at the position of the event that made
// it. Records of a partial are in position order.
type Record struct {
	Pos   uint64 `json:"pos"`
	Seq   uint64 `json:"seq,omitempty"`
	Tid   int    `json:"tid,omitempty"`
	Kind  string `json:"kind"`
	Text  string `json:"text,omitempty"`
	Label string `json:"label,omitempty"`
	Entry bool   `json:"entry,omitempty"`
	Agg   string `json:"agg,omitempty"`
	Fmt   string `json:"fmt,omitempty"`
	// Trace and Seg place the record among merged partials.
	Trace string `json:"trace,omitempty"`
	Seg   int    `json:"seg"`
}

// seal marks the partial's records and aggregation parts with their
// trace and segment, and gives every aggregation of the program a part
// (so that Merge joins consecutive segments).
func (s *segEval) seal() {
	for i := range s.part.Records {
		s.part.Records[i].Trace, s.part.Records[i].Seg = s.part.Trace, s.k
	}
	for name := range s.b.P.aggs {
		series := s.part.Aggs[name]
		series.seal(s.part.Trace, s.k)
		s.part.Aggs[name] = series
	}
}

// ExitInfo is where a script called exit().
type ExitInfo struct {
	Pos  uint64 `json:"pos"`
	Code int    `json:"code"`
}

// Partial is the result of evaluating a program over one segment of one
// trace (or, after Merge, over several consecutive ones). It serialises
// as JSON.
type Partial struct {
	Trace    string `json:"trace"`
	From, To uint64 // positions [From, To)
	// First and Last are the segments it covers.
	First, Last int
	Aggs        map[string]AggSeries `json:"aggs"`
	Records     []Record             `json:"records,omitempty"`
	Faults      int64                `json:"faults,omitempty"`
	Exit        *ExitInfo            `json:"exit,omitempty"`
	// The carried state (doc.go): values the segment read before
	// writing them, as it assumed them; what it wrote last; threads
	// that ended (their self-> variables go).
	Assumed map[string]Value `json:"assumed,omitempty"`
	Writes  map[string]Value `json:"writes,omitempty"`
	Ended   []int            `json:"ended,omitempty"`
}

func newPartial(trace string, k int, from, to uint64) *Partial {
	return &Partial{Trace: trace, First: k, Last: k, From: from, To: to, Aggs: map[string]AggSeries{},
		Assumed: map[string]Value{}, Writes: map[string]Value{}}
}

type spec struct{ recs []Record }

// segEval evaluates a program over one segment.
type segEval struct {
	b     *Bound
	k     int
	part  *Partial
	r     *reader.Replay
	state map[string]Value // written in this segment
	init  map[string]Value // the state at its start (nil: all unset)
	seq   uint64
	// stopped is set by exit(): later events are ignored. stopNow also
	// ends the clause running (END's exit).
	stopped, stopNow bool
	specs            map[int]*spec
	nextSpec         int
	ev               event
	one              [1]*boundProbe
	cr               clauseRun
	keys             []Value
	keyBuf           []byte
	addrs            *addrCache
	// cur is the program of the instruction hooked or decoded;
	// spMem and spLast the last address space seen and its program;
	// memOf, when set, is the address space of a live event's process
	// (spaces.go).
	cur    *space
	spMem  *x86.Memory
	spLast *space
	memOf  func() *x86.Memory
	// memory
	lookback bool
	procNext int // the next of b.procEvents (proc.go)
	// where is the position and thread of the instruction c is about
	// to run (the replay's, or a live run's: live.go).
	where func(c *x86.CPU) (uint64, int)
}

func (s *segEval) emit(r Record) {
	s.seq++
	r.Seq = s.seq
	s.part.Records = append(s.part.Records, r)
}

func (s *segEval) flushText(cr *clauseRun) {
	if s.b.P.quiet && cr.out.Len() > 0 {
		s.emitSpec(cr, Record{Pos: cr.ev.pos, Tid: cr.ev.tid, Kind: RecText, Text: cr.out.String()})
		cr.out.Reset()
	}
}

func (s *segEval) fire(bps []*boundProbe, ev *event) {
	if s.stopped {
		return
	}
	for _, bp := range bps {
		ev.bp = bp
		for _, cl := range bp.clauses {
			s.runClause(cl, ev)
		}
	}
}

func newSegEval(b *Bound, k int, init map[string]Value) *segEval {
	from, to := b.segmentRange(k)
	return &segEval{b: b, k: k, part: newPartial(b.T.Name, k, from, to), state: map[string]Value{}, init: init, specs: map[int]*spec{}, cur: b.sp}
}

// EvalSegment evaluates the program over segment k of the target. init
// is the carried state at the segment's start (nil: every variable
// unset, which Partial.Assumed records for the fix-up pass). It never
// changes the trace.
func (b *Bound) EvalSegment(k int, init map[string]Value) (*Partial, error) {
	if k < 0 || k >= len(b.cps) {
		return nil, fmt.Errorf("probe: no segment %d (the trace has %d)", k, len(b.cps))
	}
	r, err := b.T.Trace.NewReplayAt(b.cps[k])
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.Stream()
	s := newSegEval(b, k, init)
	if err := s.run(r); err != nil {
		return nil, err
	}
	return s.part, nil
}

// run evaluates the segment on r, a re-simulation at the segment's
// start: it points r's callbacks at s and runs it to the segment's end.
func (s *segEval) run(r *reader.Replay) error {
	b, k := s.b, s.k
	from, to := s.part.From, s.part.To
	s.r = r
	s.where = func(c *x86.CPU) (uint64, int) {
		tid, _ := r.Current()
		return r.InstPosition(c), tid
	}
	if b.P.needMemory || b.needMemory {
		if len(b.procs) > 1 {
			// Every process's memory, for the events of each
			// (memory.go).
			r.TrackProcesses()
		} else {
			r.Track()
		}
		s.lookback = b.T.Index != nil
	}
	if b.hooks() {
		r.HookInsts = s.wantInsts
		r.Hook = s.hook
		s.useLog(r) // logged hooks (hooklog.go)
	}
	if len(b.watch) > 0 {
		var rs []reader.Range
		for _, w := range b.watch {
			rs = append(rs, reader.Range{Lo: w.wlo, Hi: w.whi})
		}
		r.Watch(rs)
		r.Access = s.access
		// Every process's accesses, each in its own address space:
		// a probe given by a symbol fires in the processes running
		// a program that defines it (watchedIn).
		r.AccessAllProcesses()
	}
	r.OnEvent = s.onEvent
	if len(b.sysEntry) > 0 {
		r.OnSyscallEntry = s.replaySyscallEntry
	}
	// profile:::N fires every N instructions of a thread: run to each
	// such position (profile.go), then to the segment's end.
	var stops []profileStop
	if len(b.profile) > 0 {
		var err error
		if stops, err = b.profileStops(k, from, to); err != nil {
			return err
		}
	}
	stops = append(stops, profileStop{pos: to})
	for i, st := range stops {
		if i > 0 && st.pos == stops[i-1].pos && st.tid == stops[i-1].tid {
			continue // two periods dividing the count: profile fires both
		}
		err := r.RunTo(st.pos)
		if err == reader.ErrEnd || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("segment %d: %w", k, err)
		}
		if i < len(stops)-1 && !s.stopped {
			s.profile(st.pos, st.tid)
		}
		if s.stopped {
			break
		}
	}
	s.procUpTo(to, true)
	s.seal()
	return nil
}

// chains reports whether consecutive segments may be evaluated in one
// re-simulation (evalChain): when no clause reads memory, what a
// segment sees does not depend on where its re-simulation started.
func (b *Bound) chains() bool { return !b.P.needMemory && !b.needMemory }

// evalChain evaluates segments from k0 on in one re-simulation from
// k0's checkpoint, as EvalSegment does each, as long as claim(k) lets it
// start segment k (chainSched): a segment's partial is sealed where the
// next begins, and the next starts from the state it left (init's, with
// its writes), which its Assumed records, so that the fix-up pass
// checks it as it checks any. claim also gives the segment the run
// stops at as things stand (a steal may bring it closer), in whose
// checkpoint's chunk the re-simulation stops decoding ahead
// (Replay.StopsIn). A worker thus pays for one start (the
// checkpoint's state, decoding, translation) per chain, not per
// segment. emit takes each partial in order and returns false to stop
// (the script called exit()). left, if not nil, holds what the worker's
// last re-simulation left (reader.Leftovers: its pages and decoded
// code), which this one starts with, and then what this one leaves.
func (b *Bound) evalChain(k0 int, init map[string]Value, claim func(k int) (bool, int), emit func(k int, pt *Partial) bool, left **reader.Leftovers) error {
	if k0 >= len(b.cps) {
		return nil
	}
	ok, end := claim(k0)
	if !ok {
		return nil
	}
	var lo *reader.Leftovers
	if left != nil {
		lo, *left = *left, nil
	}
	r, err := b.T.Trace.NewReplayAtFrom(b.cps[k0], lo)
	if err != nil {
		return err
	}
	defer func() {
		if left != nil {
			*left = r.CloseLeaving()
		} else {
			r.Close()
		}
	}()
	r.Stream() // forward only: the chunks it passed leave the cache
	for k := k0; ; k++ {
		r.StopsIn(b.stopChunk(end))
		s := newSegEval(b, k, init)
		if err := s.run(r); err != nil {
			return err
		}
		if !emit(k, s.part) || s.stopped || k+1 >= len(b.cps) {
			return nil
		}
		if ok, end = claim(k + 1); !ok {
			return nil
		}
		init = composeState(init, s.part.Writes, s.part.Ended)
	}
}

// stopChunk is the chunk of segment end's checkpoint, where a run of
// segments up to end stops (-1: the trace's end).
func (b *Bound) stopChunk(end int) int {
	if end < len(b.cps) {
		return b.cps[end].Chunk
	}
	return -1
}

// wantInsts hooks the instructions at a probed address, and the rets
// and jumps (tail calls) of a function with a return probe: hook acts on
// nothing else. The rest of those blocks runs translated, leaving only
// for these (x86.InstFilter). A jump whose target is known and stays in
// the function (or goes to its .cold part) is no return: not hooked.
func (s *segEval) wantInsts(blk *x86.Block) uint64 {
	if s.b.pick != nil {
		if s.r != nil {
			tid, c := s.r.Current()
			s.cur = s.spaceOf(c, tid, s.r.Position())
		} else {
			s.cur = s.spaceOf(nil, 0, 0) // live: the running process's
		}
	}
	return s.cur.wantInsts(blk)
}

// wantInsts is segEval.wantInsts in program sp.
func (b *space) wantInsts(blk *x86.Block) uint64 {
	var m uint64
	i := sort.Search(len(b.addrs), func(i int) bool { return b.addrs[i] >= blk.PC })
	if i < len(b.addrs) && b.addrs[i] < blk.End {
		for k := range blk.Insts {
			if b.addr[blk.Insts[k].PC] != nil {
				m |= 1 << k
			}
		}
	}
	if len(b.rets) == 0 {
		return m
	}
	for k := range blk.Insts {
		in := &blk.Insts[k]
		if in.Op != x86asm.RET && in.Op != x86asm.JMP {
			continue
		}
		rr := b.retAt(in.PC)
		if rr == nil {
			continue
		}
		if in.Op == x86asm.JMP && in.Args[0].Kind != x86.KReg {
			if in.Args[0].Kind != x86.KRel {
				continue // hook does not follow it
			}
			t := in.Args[0].Imm
			if t >= rr.lo && t < rr.hi {
				continue
			}
			if other := b.retAt(t); other != nil && other.bp == rr.bp {
				continue
			}
		}
		m |= 1 << k
	}
	return m
}

// hookRegs is what a firing at a hooked instruction reads of the
// thread's registers there: the CPU's at a Hook call, a record's when
// translated code logged it (hooklog.go).
type hookRegs struct {
	args        [6]uint64 // RDI, RSI, RDX, RCX, R8, R9
	rax, target uint64    // target: a jump's register
}

// hook runs before the instructions wantInsts marked.
func (s *segEval) hook(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
	if s.stopped {
		return
	}
	var hr hookRegs
	for i, reg := range x86.ArgRegs {
		hr.args[i] = c.R[reg]
	}
	hr.rax = c.R[x86.RAX]
	if a := &in.Args[0]; a.Kind == x86.KReg {
		hr.target = c.R[a.Reg]
	}
	pos, tid := s.where(c)
	s.cur = s.spaceOf(c, tid, pos)
	s.hooked(in, &hr, pos, tid, c)
}

// hooked fires the probes of a hooked instruction at pos in thread tid,
// in program s.cur; cpu is the thread's CPU when its registers are the
// instruction's (nil for a record).
func (s *segEval) hooked(in *x86.Inst, hr *hookRegs, pos uint64, tid int, cpu *x86.CPU) {
	if bps := s.probesAt(in.PC); bps != nil {
		ev := s.newEvent(pos, tid, cpu)
		ev.pc = in.PC
		for i := range hr.args {
			ev.args[i] = int64(hr.args[i])
		}
		s.fire(bps, ev)
	}
	if (in.Op == x86asm.RET || in.Op == x86asm.JMP) && len(s.cur.rets) > 0 {
		rr := s.cur.retAt(in.PC)
		if rr == nil {
			return
		}
		if in.Op == x86asm.JMP {
			// A tail call: a jump out of the function (to another
			// function, a PLT stub, a body shared with another symbol)
			// returns from this one, as DTrace's pid provider has it.
			var target uint64
			switch a := &in.Args[0]; a.Kind {
			case x86.KRel:
				target = a.Imm
			case x86.KReg:
				target = hr.target
			default:
				return
			}
			if target >= rr.lo && target < rr.hi {
				return
			}
			if other := s.cur.retAt(target); other != nil && other.bp == rr.bp {
				return // to the function's .cold part
			}
		}
		bp := rr.bp
		ev := s.newEvent(pos, tid, cpu)
		ev.pc = in.PC
		ev.retval = int64(hr.rax)
		ev.args[0], ev.args[1] = int64(in.PC-bp.Addr), ev.retval
		s.one[0] = bp
		s.fire(s.one[:], ev)
	}
}

// addrCache is a direct-mapped cache of Bound.addr by pc (pc 0: an
// empty slot), so that a firing on a hot path does not hash: the map
// lookup was a fifth of a live fn:::entry probe's Go time on sqlite3.
type addrCache [1024]addrEntry

type addrEntry struct {
	pc  uint64
	sp  *space
	bps []*boundProbe
	// counts: every clause of bps is only @a[probe keys] = count()
	// (countFast's form: countLogged).
	counts bool
}

// probesAt is s.cur.addr[pc], through the cache (dropped when the probes
// bind again: Live.rebind).
func (s *segEval) probesAt(pc uint64) []*boundProbe { return s.addrEntry(pc).bps }

func (s *segEval) addrEntry(pc uint64) *addrEntry {
	if s.addrs == nil {
		s.addrs = new(addrCache)
	}
	e := &s.addrs[(pc^pc>>10)%uint64(len(s.addrs))]
	if e.pc != pc || e.sp != s.cur || pc == 0 {
		e.pc, e.sp, e.bps = pc, s.cur, s.cur.addr[pc]
		e.counts = len(e.bps) > 0
		for _, bp := range e.bps {
			for _, cl := range bp.clauses {
				if countStmt(cl) == nil {
					e.counts = false
				}
			}
		}
	}
	return e
}

// newEvent resets the segment's event for a firing: the hot paths
// (fn probes) allocate nothing for it.
func (s *segEval) newEvent(pos uint64, tid int, c *x86.CPU) *event {
	s.ev = event{pos: pos, tid: tid, cpu: c, sp: s.cur}
	return &s.ev
}

func (s *segEval) access(a *reader.Access) {
	for _, w := range s.b.watch {
		if a.Addr >= w.whi || a.Addr+uint64(a.Size) <= w.wlo || a.Write && !w.ww || !a.Write && !w.wr {
			continue
		}
		ev := &event{pos: a.Position, tid: a.Tid}
		ev.args[0], ev.args[1], ev.args[2], ev.args[3] = int64(a.Addr), int64(a.Value), int64(a.Size), int64(a.PC)
		if _, c := s.r.Current(); c != nil {
			ev.cpu = c
		}
		if !s.watchedIn(w, ev.cpu, a.Tid, a.Position) {
			continue
		}
		s.fire([]*boundProbe{w}, ev)
	}
}

func (s *segEval) cpuOf(tid int) *x86.CPU {
	if t, c := s.r.Current(); t == tid {
		return c
	}
	return nil
}

func (s *segEval) onEvent(e *reader.Event) {
	if s.stopped {
		return
	}
	s.procUpTo(e.Position, false)
	defer s.procUpTo(e.Position, true)
	switch e.Kind {
	case reader.EventSyscall:
		sc := &e.Record.Syscall
		s.syscallReturn(e.Position, sc.Tid, s.cpuOf(sc.Tid), sc.Nr, sc.Result)
	case reader.EventThreadStart:
		s.threadStart(e.Position, e.Record.ThreadStart.Tid, e.Record.ThreadStart.ParentTid)
	case reader.EventThreadExit:
		s.threadExit(e.Position, e.Record.ThreadExit.Tid, e.Record.ThreadExit.Status)
	case reader.EventSignal:
		s.signal(e.Position, e.Record.Signal.Tid, e.Record.Signal.Signo, e.Record.Signal.Addr)
	case reader.EventModule:
		if s.b.procs == nil && e.Module != nil && string(e.Module.Path) != "" && s.b.proc["exec"] != nil && strings.HasSuffix(string(e.Module.Path), s.b.execname) {
			ev := &event{pos: e.Position, tid: e.Tid}
			s.fire(s.b.proc["exec"], ev)
		}
	case reader.EventExit:
		code := int64(128 + e.Record.Exit.Signo)
		if x := e.Record.Exit; x.Kind == tracefile.ExitExited {
			code = int64(x.Code)
		}
		s.procExit(e.Position, e.Tid, code)
	}
}

// The events of syscall, thread, signal and proc probes, from the
// re-simulation (onEvent) or a live program (live.go).

// syscallEntry fires the entry probes of the syscall thread tid
// begins at pos (its syscall instruction retired): the replay's
// OnSyscallEntry, live emu's SyscallEntryObserver. A syscall that
// blocks completes later, maybe after other threads' events.
func (s *segEval) syscallEntry(pos uint64, tid int, c *x86.CPU, nr int, args *[6]uint64) {
	ent := s.b.sysEntry[nr]
	if ent == nil || s.stopped {
		return
	}
	s.procUpTo(pos, false)
	ev := &event{pos: pos, tid: tid, cpu: c}
	for i := range args {
		ev.args[i] = int64(args[i])
	}
	s.fire(ent, ev)
}

// replaySyscallEntry is the replay's OnSyscallEntry: the syscall's
// number and arguments are in c's registers, as the kernel reads them.
func (s *segEval) replaySyscallEntry(pos uint64, tid int, c *x86.CPU) {
	nr := int(c.R[x86.RAX])
	if s.b.sysEntry[nr] == nil {
		return
	}
	args := [6]uint64{c.R[x86.RDI], c.R[x86.RSI], c.R[x86.RDX], c.R[x86.R10], c.R[x86.R8], c.R[x86.R9]}
	s.syscallEntry(pos, tid, c, nr, &args)
}

// syscallReturn fires the return probes of the syscall thread tid
// completed at pos with result (a negated errno for a failure).
func (s *segEval) syscallReturn(pos uint64, tid int, c *x86.CPU, nr int, result int64) {
	ret := s.b.sysReturn[nr]
	if ret == nil || s.stopped {
		return
	}
	ev := &event{pos: pos, tid: tid, cpu: c, retval: result}
	if result < 0 && result >= -4095 {
		ev.errno, ev.retval = -result, -1
	}
	ev.args[0], ev.args[1] = ev.retval, ev.retval
	s.fire(ret, ev)
}

func (s *segEval) threadStart(pos uint64, tid, parent int) {
	ev := &event{pos: pos, tid: tid}
	ev.args[0] = int64(parent)
	s.fire(s.b.thread["start"], ev)
}

func (s *segEval) threadExit(pos uint64, tid, status int) {
	ev := &event{pos: pos, tid: tid}
	ev.args[0] = int64(status)
	s.fire(s.b.thread["exit"], ev)
	s.threadEnded(tid)
}

func (s *segEval) signal(pos uint64, tid, signo int, addr uint64) {
	ev := &event{pos: pos, tid: tid}
	ev.args[0], ev.args[1] = int64(signo), int64(addr)
	s.fire(s.b.signal, ev)
}

// procExit fires proc:::exit for the recorded (first) process's end.
func (s *segEval) procExit(pos uint64, tid int, code int64) {
	ev := &event{pos: pos, tid: tid}
	ev.args[0] = code
	s.fire(s.b.proc["exit"], ev)
}

// threadEnded drops a thread's self-> variables, as D does.
func (s *segEval) threadEnded(tid int) {
	prefix := "t:" + strconv.Itoa(tid) + ":"
	for k := range s.state {
		if strings.HasPrefix(k, prefix) {
			delete(s.state, k)
		}
	}
	for k := range s.part.Writes {
		if strings.HasPrefix(k, prefix) {
			delete(s.part.Writes, k)
		}
	}
	s.part.Ended = append(s.part.Ended, tid)
}
