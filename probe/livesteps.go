package probe

import (
	"strings"

	"ttd/x86"
)

// Narrow live records (x86.HookStepLogger): a live script whose
// instruction probes only count, keyed by the probe (@[probefunc] =
// count(), countStmt's form, no predicate) and that has no fn return
// probe needs of a logged instruction only its PC: translated code then
// makes 32-byte records that name no instruction instead of 96-byte
// ones, and draining them reads no decoded block (the x86.Inst lookup
// was a third of the drain of live fn:::entry on sqlite3). The same
// instructions still come to Instruction where Go runs them: both fire
// the same probes (hooked, stepAt). A live driver (probe/live) asks
// CountsOnly and passes the records to LoggedSteps.

// CountsOnly reports whether every clause of p's instruction probes
// (fn, pid, line; usdt probes are never logged: loggable) is
// countStmt's form and no fn probe description names a return probe
// (bindFn binds one for "", "*" and "return"): then a firing needs only
// the probe's PC, position and thread. It depends on the script only, so
// that a live driver's StepsOnly (x86.HookStepLogger) never changes
// during a run.
func (p *Program) CountsOnly() bool {
	n := 0
	for _, cl := range p.Script.Clauses {
		for _, pr := range cl.Probes {
			fn := pr.Prov == "fn" || strings.HasPrefix(pr.Prov, "pid")
			if !fn && pr.Prov != "line" {
				continue
			}
			if fn && (pr.Name == "" || pr.Name == "*" || pr.Name == "return") || countStmt(cl) == nil {
				return false
			}
			n++
		}
	}
	return n > 0
}

// LoggedSteps tallies the narrow records translated code logged on c,
// in order (x86.HookStepLogger): their probes count them when the next
// event comes (settle), as LoggedHooks would have at once.
func (l *Live) LoggedSteps(c *x86.CPU, steps []x86.HookStep) {
	if l.b.pick != nil {
		l.s.cur = l.s.spaceOf(c, 0, 0)
	}
	if l.tally == nil {
		l.tally = newStepTally()
	}
	if l.tally.sp != l.s.cur {
		// Another program's records (a tree: Bound.pick).
		l.settle()
		l.tally.sp = l.s.cur
	}
	base := l.info.Clock.InstPosition(c) - c.Retired()
	l.s.tallySteps(l.tally, steps, base, int32(l.info.Clock.CPUTid(c)))
}

// settle counts the tallied records (LoggedSteps): every other event,
// a binding and the end call it first, so that a clause that reads or
// clears an aggregation, and the end, see every record before them.
func (l *Live) settle() {
	if l.tally != nil && len(l.tally.used) > 0 {
		l.s.countTally(l.tally)
	}
}

// Tallied narrow records. Every clause at a logged instruction is a
// count keyed by the probe (CountsOnly), which reads nothing of an event
// but its probe, and once a probe's entry in an aggregation exists
// (clauseRun.cachedAgg), counting a record later or sooner changes
// nothing anyone sees before the next event. So a record whose PC's
// counts are cached is only counted in its PC's slot, and its probes
// add the slot's count when the next event comes; the first record of a
// PC whose counts are not cached yet fires at its own position, in the
// order of those first records, which makes the aggregations' entries
// come into being in the order one record at a time gives. On sqlite3
// (5.6 million records) a Go call per record through the probes'
// caches was 60% of what the live fn:::entry probe added to ttd run.
type stepTally struct {
	// sp is the program whose code the PCs are in.
	sp   *space
	slot []tallySlot
	// used are the slots in the order of their first records since the
	// last count (a slot taken over by another PC is in it twice: seq
	// tells which is its own).
	used []int32
}

// tallySlot is one PC's records: n of them, the first at pos, of thread
// tid; seq is its index in used.
type tallySlot struct {
	pc, n, pos uint64
	tid, seq   int32
}

// tallyBits sets the size of a tally's table, 1<<tallyBits slots
// (sqlite3's live fn:::entry probe runs about 300 functions between two
// syscalls), and the bound on its used, four times that: a tally that
// grows past it is counted.
var tallyBits = 11

// SetTallyBits sets the size of the tables of the live evaluations
// made after it to 1<<bits slots (tests make it small, so that PCs share
// slots); it reports the previous setting.
func SetTallyBits(bits int) (was int) {
	was, tallyBits = tallyBits, bits
	return was
}

func newStepTally() *stepTally {
	return &stepTally{slot: make([]tallySlot, 1<<tallyBits)}
}

// tallySteps tallies narrow records of thread tid; a record's position
// is base plus its Retired. A leaf call's record stands for the call's
// and then the ret's (x86.StepLeaf): both are logged instructions,
// probed (a function whose first instruction is a call, one whose
// first is a ret).
func (s *segEval) tallySteps(t *stepTally, steps []x86.HookStep, base uint64, tid int32) {
	loggedRecords.Add(uint64(len(steps)))
	if s.stopped {
		return // exit(): nothing after it counts (fireLogged)
	}
	for i := range steps {
		st := &steps[i]
		s.tallyOne(t, st.PC, base+st.Retired, tid)
		if st.Kind&x86.StepLeaf != 0 {
			s.tallyOne(t, st.RetPC, base+st.Ret, tid)
		}
	}
}

// tallyOne counts a record at pc in its slot. A slot that another PC
// holds passes to pc when that PC's counts are cached (they are added
// now); otherwise the whole tally is counted first.
func (s *segEval) tallyOne(t *stepTally, pc, pos uint64, tid int32) {
	h := (pc ^ pc>>11) & uint64(len(t.slot)-1)
	sl := &t.slot[h]
	if sl.n != 0 {
		if sl.pc == pc {
			sl.n++
			return
		}
		if s.countPCn(sl.pc, sl.n) || s.probesAt(sl.pc) == nil {
			sl.n = 0
		} else {
			s.countTally(t)
		}
	}
	if len(t.used) >= 4*len(t.slot) {
		s.countTally(t)
	}
	*sl = tallySlot{pc: pc, n: 1, pos: pos, tid: tid, seq: int32(len(t.used))}
	t.used = append(t.used, int32(h))
}

// countTally fires the probes of the tallied records, slot by slot in
// the order of their first records, and empties the tally: the first
// record of a PC whose counts are not cached fires at its position
// (which caches them).
func (s *segEval) countTally(t *stepTally) {
	cur := s.cur
	s.cur = t.sp
	defer func() { s.cur = cur }()
	for i, h := range t.used {
		sl := &t.slot[h]
		if sl.n == 0 || int(sl.seq) != i {
			continue
		}
		pc, n := sl.pc, sl.n
		sl.n = 0
		for n > 0 && !s.stopped && !s.countPCn(pc, n) && s.probesAt(pc) != nil {
			ev := s.newEvent(sl.pos, int(sl.tid), nil)
			ev.pc = pc
			s.fire(s.probesAt(pc), ev)
			n--
		}
	}
	t.used = t.used[:0]
}
