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

// LoggedSteps fires the probes of the narrow records translated code
// logged on c, in order (x86.HookStepLogger), as LoggedHooks does the
// wide ones.
func (l *Live) LoggedSteps(c *x86.CPU, steps []x86.HookStep) {
	if l.b.pick != nil {
		l.s.cur = l.s.spaceOf(c, 0, 0)
	}
	base := l.info.Clock.InstPosition(c) - c.Retired()
	l.s.fireSteps(steps, base, l.info.Clock.CPUTid(c))
}

// fireSteps fires the probes of narrow records of thread tid, in
// order; a record's position is base plus its Retired. A leaf call's
// record stands for the call's and then the ret's (x86.StepLeaf): both
// are logged instructions, probed (a function whose first instruction
// is a call, one whose first is a ret).
func (s *segEval) fireSteps(steps []x86.HookStep, base uint64, tid int) {
	loggedRecords.Add(uint64(len(steps)))
	for i := range steps {
		st := &steps[i]
		s.stepAt(st.PC, base+st.Retired, tid)
		if st.Kind&x86.StepLeaf != 0 {
			s.stepAt(st.RetPC, base+st.Ret, tid)
		}
	}
}

// stepAt fires the probes at pc, as hooked does for an instruction
// without a return probe's ret range (countsOnly: no fn return probe),
// with no registers: a count reads none.
func (s *segEval) stepAt(pc, pos uint64, tid int) {
	if s.stopped || s.countPC(pc) {
		return
	}
	if bps := s.probesAt(pc); bps != nil {
		ev := s.newEvent(pos, tid, nil)
		ev.pc = pc
		s.fire(bps, ev)
	}
}
