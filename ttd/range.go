package ttd

import "ttd/x86"

// StepRange runs thread tid forward while its pc stays in [start, end)
// (gdb's range stepping, vCont;r): it stops before tid's first
// instruction outside the range, or at a breakpoint, a signal (with
// StopOnSignal) or the end of the trace, whichever comes first (a
// ContinueMatch). Other threads run as they did.
func (s *Session) StepRange(tid int, start, end uint64) (Stop, error) {
	return s.ContinueMatch(Forward, func(t int, _ *x86.CPU, in *x86.Inst) bool {
		return t == tid && (in.PC < start || in.PC >= end)
	})
}
