package calls

import (
	"sync/atomic"

	"golang.org/x/arch/x86/x86asm"

	"ttd/reader"
	"ttd/x86"
)

// Logged hooks (reader.Replay.HookLogged, x86.HookLogger): most hooked
// instructions need only what translated code can record — the
// position, RSP, a call's target in a register — and change nothing
// the gate looks at, so translated code logs them and goes on instead
// of leaving for each Hook call; logged hands the records to step, in
// order, as instruction does the exact calls. A call through memory is
// logged with its target when translated code made the call (its
// record's Target), and its callee's first instructions are looked at
// as a direct call's are; when the interpreter makes it (Target 0), the
// gate opens as after an exact call (look), before Go runs the callee's
// first block. The instructions after which the gate may open keep
// their exits: the entry of a lazy-binding trampoline (tramp). A ret
// never opens it (watch looks for a trampoline's jump after one through
// the hooks, bounded by Retired: segThread.baseLookTo), so every ret is
// logged. The analysis needs of a record only the position, the
// instruction, RSP and the target, so its records are narrow
// (x86.HookStep: 32 bytes, where RAX, RBP and the arguments made 96).

// loggable picks, among the instructions callsAndRets hooks in b, those
// translated code may log.
func (s *segment) loggable(b *x86.Block) (logged uint64) {
	for i := range b.Insts {
		in := &b.Insts[i]
		switch in.Op {
		case x86asm.CALL:
			if a := &in.Args[0]; a.Kind == x86.KRel || a.Kind == x86.KMem || a.Kind == x86.KReg && a.Size == 8 {
				logged |= 1 << i
			}
		case x86asm.RET:
			logged |= 1 << i
		default:
			if e := s.fn.lookup(in.PC); e.ok && e.entry == in.PC && !e.tramp {
				logged |= 1 << i
			}
		}
	}
	return logged
}

// logged is the Replay's HookSteps: the records of the thread that runs
// on c, in order.
func (s *segment) logged(r *reader.Replay, c *x86.CPU, steps []x86.HookStep) {
	st := s.running(r, c)
	loggedRecords.Add(uint64(len(steps)))
	base := r.LoggedPosition(0) // a record's position is base+Retired
	for i := range steps {
		s.step(st, &steps[i], base)
	}
}

// useLog makes r log what loggable picks, in narrow records.
func (s *segment) useLog(r *reader.Replay) {
	r.HookLogged, r.HookSteps = s.loggable, s.logged
}

// loggedRecords counts the records logged has followed (tests check
// that logging happened).
var loggedRecords atomic.Uint64
