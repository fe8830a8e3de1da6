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
// order, as instruction does the exact calls. The instructions after
// which the gate may open keep their exits:
//   - a call through memory (watch then looks at the callee's first
//     instructions through the gate: look);
//   - the entry of a lazy-binding trampoline (tramp);
//   - a ret that may leave every frame the segment knows (checkTramp,
//     baseLook): rets are guarded, logged only below the return-address
//     slot of the thread's oldest frame (segThread.guard), which only
//     Hook calls, records and events change. Records not yet handed over
//     can only push frames above that one, or pop frames above it
//     (a ret below it), or leave it by longjmp for a frame further up:
//     the guard can only be lower than it should, never higher.

// loggable picks, among the instructions callsAndRets hooks in b, those
// translated code may log, and the guarded ones (the rets).
func (s *segment) loggable(b *x86.Block) (logged, guarded uint64) {
	for i := range b.Insts {
		in := &b.Insts[i]
		switch in.Op {
		case x86asm.CALL:
			if a := &in.Args[0]; a.Kind == x86.KRel || a.Kind == x86.KReg && a.Size == 8 {
				logged |= 1 << i
			}
		case x86asm.RET:
			logged |= 1 << i
			guarded |= 1 << i
		default:
			if e := s.fn.lookup(in.PC); e.ok && e.entry == in.PC && !e.tramp {
				logged |= 1 << i
			}
		}
	}
	return logged, guarded
}

// logged is the Replay's HookLog: the records of the thread that runs
// on c, in order.
func (s *segment) logged(r *reader.Replay, c *x86.CPU, recs []x86.HookRecord) {
	st := s.running(r, c)
	loggedRecords.Add(uint64(len(recs)))
	for i := range recs {
		rec := &recs[i]
		h := hooked{in: rec.Inst, retired: rec.Retired, rsp: rec.RSP, target: rec.Target, pos: r.LoggedPosition(rec.Retired)}
		s.step(st, &h)
	}
	c.SetHookGuard(st.guard())
}

// guard is the stack pointer at and above which a ret must come to Hook
// (x86.CPU.SetHookGuard): the return-address slot of the thread's oldest
// frame, which such a ret pops, emptying the stack; with no frame,
// every ret.
func (st *segThread) guard() uint64 {
	if len(st.stack) == 0 {
		return 0
	}
	return st.stack[0].slot
}

// useLog makes r log what loggable picks, and sets the guard of the
// threads the segment starts with.
func (s *segment) useLog(r *reader.Replay) {
	r.HookLogged, r.HookLog = s.loggable, s.logged
	for _, st := range s.threads {
		s.setGuard(st)
	}
}

// setGuard updates the guard of st's CPU after an event changed its
// frames.
func (s *segment) setGuard(st *segThread) {
	if st != nil && st.cpu != nil {
		st.cpu.SetHookGuard(st.guard())
	}
}

// loggedRecords counts the records logged has followed (tests check
// that logging happened).
var loggedRecords atomic.Uint64
