package probe

import (
	"sync/atomic"

	"golang.org/x/arch/x86/x86asm"

	"ttd/reader"
	"ttd/x86"
)

// Logged hooks (reader.Replay.HookLogged, x86.HookLogger): an fn probe
// whose clauses read nothing but the registers a record holds (the
// arguments, retval, a tail call's target), the position, the thread and
// the probe's names — no memory, no stack, no usdt operands — fires as
// well from a record that translated code logged as from a Hook call, so
// its instructions do not make translated code leave: logged hands the
// records to hooked, in order. A script that reads memory keeps exact
// exits for all its probes (memory must be seen as it was at the event).

// logs reports whether the fn probes may be logged: no clause reads
// memory.
func (s *segEval) logs() bool { return !s.b.P.needMemory && !s.b.needMemory }

// useLog makes r log the instructions of the fn probes when no clause
// needs more than a record holds.
func (s *segEval) useLog(r *reader.Replay) {
	if s.logs() {
		r.HookLogged, r.HookLog = s.loggable, s.logged
	}
}

// loggable is the instructions of blk that wantInsts hooks, but for
// those of usdt probes (their operands may name any register).
func (s *segEval) loggable(blk *x86.Block) uint64 {
	m := s.wantInsts(blk)
	for k := range blk.Insts {
		if m>>k&1 == 0 {
			continue
		}
		for _, bp := range s.cur.addr[blk.Insts[k].PC] {
			if bp.usdt != nil {
				m &^= 1 << k
			}
		}
	}
	return m
}

// logged is the Replay's HookLog: the records of the thread that runs
// on c, in order.
func (s *segEval) logged(r *reader.Replay, c *x86.CPU, recs []x86.HookRecord) {
	tid, _ := r.Current()
	if s.b.pick != nil {
		s.cur = s.spaceOf(c, tid, r.Position())
	}
	s.fireLogged(recs, r.LoggedPosition(0), tid)
}

// fireLogged fires the probes of records of thread tid, in order; a
// record's position is base plus its Retired (the thread's count).
func (s *segEval) fireLogged(recs []x86.HookRecord, base uint64, tid int) {
	loggedRecords.Add(uint64(len(recs)))
	for i := range recs {
		if s.stopped {
			return
		}
		rec := &recs[i]
		if s.countLogged(rec.Inst) {
			continue
		}
		hr := hookRegs{args: rec.Args, rax: rec.RAX, target: rec.Target}
		s.hooked(rec.Inst, &hr, base+rec.Retired, tid, nil)
	}
}

// loggedRecords counts the records logged has fired from (tests check
// that logging happened).
var loggedRecords atomic.Uint64

// countLogged counts the firing of the probes at in, as hooked would,
// when all their clauses are counts keyed by the probe whose entries are
// cached (countFast), without building the event: the live fn:::entry
// probe's records (5.6 million on sqlite3). It reports false, having
// done nothing, otherwise.
func (s *segEval) countLogged(in *x86.Inst) bool {
	if (in.Op == x86asm.RET || in.Op == x86asm.JMP) && len(s.cur.rets) > 0 {
		return false
	}
	return s.countPC(in.PC)
}

// countPC is countLogged of the instruction at pc, which no return
// probe watches.
func (s *segEval) countPC(pc uint64) bool { return s.countPCn(pc, 1) }

// countPCn is countPC of n firings at once (a narrow records' tally:
// livesteps.go).
func (s *segEval) countPCn(pc, n uint64) bool {
	e := s.addrEntry(pc)
	if !e.counts {
		return false
	}
	for _, bp := range e.bps {
		for _, cl := range bp.clauses {
			if s.cr.cachedAgg(bp, cl.Body[0].(*AggStmt)) == nil {
				return false
			}
		}
	}
	for _, bp := range e.bps {
		for _, cl := range bp.clauses {
			c := s.cr.cachedAgg(bp, cl.Body[0].(*AggStmt))
			c.e.State.N += int64(n) // count's add, n times
		}
	}
	return true
}
