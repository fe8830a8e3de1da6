package reader

import (
	"os"

	"ttd/x86"
)

// Logged hooks (x86.HookLogger): a Hook that needs, at an instruction,
// only what an x86.HookRecord holds (the position, the instruction, RSP,
// RAX, RBP, the argument registers, a call's register target) can have
// translated code log those instructions instead of leaving for each
// Hook call. HookLogged picks them among those HookInsts hooks; HookLog
// receives the records, in order, before anything else happens in the
// replay (an event, a Hook call). A Hook that needs only the position,
// the instruction's PC and kind (x86.StepKind), RSP and a call's target
// sets HookSteps instead of HookLog: translated code then makes narrow
// records (x86.HookStep, a third of the stores, naming no instruction:
// following them reads no decoded block; a leaf call's ret folds into
// the call's record, and HookMerge may let runs of leaf calls merge:
// x86.StepLeaf, x86.LeafMerger). The same instructions still come to Hook where
// the interpreter runs them, so Hook and HookLog must do the same thing
// with them. Neither may change what HookGate answers, nor read memory
// as it was at the instruction (HookLog sees it later).
//
// TTD_HOOKLOG=off turns logging off: every hooked instruction comes to
// Hook (to compare the two, or to rule logging out).

// hookLogOn is false with TTD_HOOKLOG=off.
var hookLogOn = os.Getenv("TTD_HOOKLOG") != "off"

// SetHookLog turns logged hooks on or off for the replays made after it
// (for tests and benchmarks); it reports the previous setting.
func SetHookLog(on bool) (was bool) {
	was, hookLogOn = hookLogOn, on
	return was
}

// HookLogOn reports whether logged hooks are on (TTD_HOOKLOG, SetHookLog):
// a live probe (probe/live) logs its hooks as a replay does.
func HookLogOn() bool { return hookLogOn }

// LogInsts applies HookLogged (x86.HookLogger).
func (r *Replay) LogInsts(b *x86.Block) uint64 {
	if r.HookLogged == nil || r.HookLog == nil && r.HookSteps == nil || !r.hookLog {
		return 0
	}
	return r.HookLogged(b)
}

// StepsOnly reports whether the records are narrow: HookSteps is set
// (x86.HookStepLogger).
func (r *Replay) StepsOnly() bool { return r.HookSteps != nil }

// StepWindows applies HookWindows (x86.HookStepLogger).
func (r *Replay) StepWindows(b *x86.Block) (soft, open, shut, window uint64) {
	if r.HookWindows == nil {
		return 0, 0, 0, 0
	}
	return r.HookWindows(b)
}

// MergeLeaves applies HookMerge (x86.LeafMerger).
func (r *Replay) MergeLeaves(b *x86.Block) uint64 {
	if r.HookMerge == nil {
		return 0
	}
	return r.HookMerge(b)
}

// FoldWindow is HookFold (x86.EntryFolder).
func (r *Replay) FoldWindow() uint64 { return r.HookFold }

// LoggedSteps calls HookSteps (x86.HookStepLogger).
func (r *Replay) LoggedSteps(c *x86.CPU, steps []x86.HookStep) {
	if r.HookSteps != nil {
		r.HookSteps(r, c, steps)
	}
}

// LoggedHooks calls HookLog (x86.HookLogger).
func (r *Replay) LoggedHooks(c *x86.CPU, recs []x86.HookRecord) {
	if r.HookLog != nil {
		r.HookLog(r, c, recs)
	}
}

// LoggedPosition is the global position of a logged instruction of the
// thread that runs now, from its record's Retired (for HookLog).
func (r *Replay) LoggedPosition(retired uint64) uint64 {
	return r.pos + retired - r.cur.seen
}
