package x86

import (
	"unsafe"

	"golang.org/x/arch/x86/x86asm"

	as "ttd/internal/amd64asm"
)

// Offsets of the target's place (hooklog.go) in CPU.
var (
	offHookTarget  = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.target))
	offHookScratch = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.scratch))
	offHookUntil   = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.until))
	offHookLast    = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.lastCall))
	offMergeAt     = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.mergeAt))
	offRunEnd      = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.runEnd))
	offRunRSP      = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.runRSP))
	offLeafA       = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.leafA))
	offLeafB       = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.leafB))
	offRetFloor    = int32(unsafe.Offsetof(CPU{}.hlog) + unsafe.Offsetof(hookLog{}.retFloor))
)

// logWord is the log's word w (two an entry) from the byte offset in r.
func logWord(r as.Reg, w int32) as.Mem { return as.Mem{Base: hCPU, Index: r, Disp: offAccLog + 8*w} }

// retiredNow puts instruction t.k's Retired into r (as CPU.Retired
// would be at it: Icount, the blocks chained before this one, and k).
func (t *jitT) retiredNow(r as.Reg) {
	t.retiredBefore(r)
	t.a.ALURM(as.ADD, 8, r, as.M(hCPU, offIcount))
	if t.k != 0 {
		t.a.Lea(8, r, as.M(r, int32(t.k)))
	}
}

// logTarget, at the end of a block whose last instruction is a logged
// call through memory, writes the address called (CPU.RIP) where
// hookLog.target points: the Target word of the call's record, or
// scratch when the call was not logged (hookResumes). If the call
// leaves translated code instead, the interpreter runs it and the
// record keeps Target 0. Clobbers RAX and RDX, not the flags.
func (t *jitT) logTarget() {
	if !t.pendTarget {
		return
	}
	a := &t.a
	a.MovRM(8, as.RAX, as.M(hCPU, offHookTarget))
	a.MovRM(8, as.RDX, as.M(hCPU, offRIP))
	a.MovMR(8, as.M(as.RAX, 0), as.RDX)
}

// noTarget points hookLog.target at scratch (no flags).
func (t *jitT) noTarget() {
	t.a.Lea(8, as.RDX, as.M(hCPU, offHookScratch))
	t.a.MovMR(8, as.M(hCPU, offHookTarget), as.RDX)
}

// logHook appends the record of instruction t.k (hooklog.go) to the
// access log, narrow if t.steps, or jumps to exit (the hook's exit for an
// exact Instruction call) when the log has no room for it, or to skip (on
// to the instruction) when it is soft and past its window (hooklog.go).
// The flags are saved (hookExit); clobbers RAX and RDX.
func (t *jitT) logHook(exit, skip as.Label) {
	a := &t.a
	in := &t.b.Insts[t.k]
	entries, tag := int32(hookRecEntries), uint64(accHook)
	if t.steps {
		entries, tag = hookStepEntries, accHook|accHookStep
	}
	w := t.win
	if w != nil && w.soft>>t.k&1 != 0 {
		// Retired < until, or no record.
		t.retiredNow(as.RDX)
		a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offHookUntil))
		a.Jcc(3, skip) // jae
		if t.steps && w.fold != 0 {
			t.foldEntry(skip)
		}
	}
	op := StepOp(in)
	room := entries
	if t.steps && op == StepRet {
		room = hookStepEntries + 1 // folded into a call's: 3 entries more
	}
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.ALURI(as.CMP, 8, as.RAX, int64(accLogSize-room))
	a.Jcc(7, exit) // ja: full
	merge := t.steps && w != nil && w.merge>>t.k&1 != 0
	var done as.Label
	if t.steps && op == StepRet {
		done = a.NewLabel()
		t.foldRet(done, merge)
	}
	isCall := t.steps && op >= StepCall && op <= StepCallAny
	if isCall {
		t.mergeCall(merge)
	}
	a.Lea(8, as.RDX, as.M(as.RAX, entries))
	a.MovMR(8, as.M(hCPU, offAccN), as.RDX)
	if isCall {
		// A ret may fold into this record (foldRet): the count after
		// it, plus one.
		a.Lea(8, as.RDX, as.M(as.RAX, entries+1))
		a.MovMR(8, as.M(hCPU, offHookLast), as.RDX)
	}
	a.ShiftRI(as.SHL, 8, as.RAX, 4) // 16 bytes an entry
	word := func(w int32) as.Mem { return as.Mem{Base: hCPU, Index: as.RAX, Disp: offAccLog + 8*w} }
	put := func(w int32, src as.Mem) {
		a.MovRM(8, as.RDX, src)
		a.MovMR(8, word(w), as.RDX)
	}
	// Retired less Icount: the blocks chained before this one, and k.
	t.retiredBefore(as.RDX)
	a.Lea(8, as.RDX, as.M(as.RDX, int32(t.k)))
	a.MovMR(8, word(0), as.RDX)
	if t.steps {
		// The instruction's kind and PC (drainSteps).
		tag |= uint64(stepKindOf(in, t.k, w)) | in.PC<<stepPCShift
		if merge && isCall {
			tag |= accHookPicked
		}
	} else {
		tag |= uint64(t.b.jit.id)<<32 | uint64(t.k)<<16
	}
	a.MovRI(as.RDX, tag)
	a.MovMR(8, word(1), as.RDX)
	put(2, t.gregN(RSP))
	// The target's word: 3 in a narrow record, 5 in a wide one.
	tw := int32(5)
	if t.steps {
		tw = 3
	}
	if (in.Op == x86asm.CALL || in.Op == x86asm.JMP) && in.Args[0].Kind == KReg && in.Args[0].Size == 8 {
		put(tw, t.gregN(in.Args[0].Reg))
	} else if t.steps && in.Op == x86asm.CALL && in.Args[0].Kind == KRel {
		// A direct call's target (HookStep.Target).
		a.MovRI(as.RDX, in.Args[0].Imm)
		a.MovMR(8, word(tw), as.RDX)
	} else {
		a.MovMI(8, word(tw), 0)
		if in.Op == x86asm.CALL && in.Args[0].Kind == KMem && t.k == len(t.b.Insts)-1 {
			// The block's end writes the target (logTarget).
			a.Lea(8, as.RDX, word(tw))
			a.MovMR(8, as.M(hCPU, offHookTarget), as.RDX)
			t.pendTarget, t.pendK = true, t.k
		}
	}
	if t.steps {
		if op == StepRet {
			a.Bind(done)
		}
		switch {
		case w == nil:
		case w.open>>t.k&1 != 0:
			var below as.Label
			if op == StepRet {
				// Below the floor, a ret leaves the window
				// (SetRetFloor); at or above, it sets the floor
				// to 0.
				below = a.NewLabel()
				a.MovRM(8, as.RDX, as.M(hCPU, offRetFloor))
				a.ALURM(as.CMP, 8, as.RDX, t.gregN(RSP))
				a.Jcc(7, below) // ja
				a.MovMI(8, as.M(hCPU, offRetFloor), 0)
			}
			// The window: until the instruction's Retired+1+window.
			t.retiredNow(as.RDX)
			a.Lea(8, as.RDX, as.M(as.RDX, int32(1+w.window)))
			a.MovMR(8, as.M(hCPU, offHookUntil), as.RDX)
			if op == StepRet {
				a.Bind(below)
			}
		case w.shut>>t.k&1 != 0:
			a.MovMI(8, as.M(hCPU, offHookUntil), 0)
		}
		return
	}
	put(3, t.gregN(RAX))
	put(4, t.gregN(RBP))
	for i, r := range ArgRegs {
		put(6+int32(i), t.gregN(uint8(r)))
	}
}

// foldEntry, at a soft instruction in its window, folds it into the
// call's narrow record that ends the log if it comes at most
// stepWindows.fold instructions after the call (EntryFolder): its PC
// goes to the record's Target word, marked stepEntryBit, and it jumps
// to skip (no record of its own; the call's record stays the last,
// hookLog.lastCall, so that a ret may fold into it). A record that
// holds an entry already takes no other, and the instruction makes no
// record (skip). Otherwise it goes on. Clobbers RAX, RDX and the
// flags.
func (t *jitT) foldEntry(skip as.Label) {
	a := &t.a
	own := a.NewLabel()
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.Lea(8, as.RDX, as.M(as.RAX, 1))
	a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offHookLast))
	a.Jcc(5, own) // jne: the log does not end with a call's record
	a.ShiftRI(as.SHL, 8, as.RAX, 4)
	// A record that has its entry already takes no other: the consumer
	// names the callee by the first (a function that tail-jumps to
	// another is the one called).
	a.MovRM(8, as.RDX, logWord(as.RAX, -1))
	a.TestRR(8, as.RDX, as.RDX)
	a.Jcc(8, skip) // js: stepEntryBit
	// This instruction's Retired less the call's (the record's first
	// word), both less Icount.
	t.retiredBefore(as.RDX)
	a.Lea(8, as.RDX, as.M(as.RDX, int32(t.k)))
	a.ALURM(as.SUB, 8, as.RDX, logWord(as.RAX, -hookStepEntries*2))
	a.ALURI(as.CMP, 8, as.RDX, int64(t.win.fold))
	a.Jcc(7, own) // ja: past the window
	a.MovRI(as.RDX, t.b.Insts[t.k].PC|stepEntryBit)
	a.MovMR(8, logWord(as.RAX, -1), as.RDX)
	a.Jmp(skip)
	a.Bind(own)
}

// callTag is the tag of instruction t.k's narrow record (logHook).
func (t *jitT) callTag(merge bool) uint64 {
	in := &t.b.Insts[t.k]
	tag := accHook | accHookStep | uint64(stepKindOf(in, t.k, t.win)) | in.PC<<stepPCShift
	if merge {
		tag |= accHookPicked
	}
	return tag
}

// mergeCall, before a call's narrow record with the log's count in RAX,
// sets hookLog.mergeAt: for a call LeafMerger picked, to the record of
// the run of leaf calls at this RSP that the log ends with (one of its
// last two) that holds this call's, if any; else to none (LeafMerger).
// RAX is kept; clobbers RDX and the flags.
func (t *jitT) mergeCall(merge bool) {
	a := &t.a
	a.MovMI(8, as.M(hCPU, offMergeAt), 0)
	if !merge {
		return
	}
	none, found := a.NewLabel(), a.NewLabel()
	a.Lea(8, as.RDX, as.M(as.RAX, 1))
	a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offRunEnd))
	a.Jcc(5, none) // jne: something else since the run's last record
	a.MovRM(8, as.RDX, as.M(hCPU, offRunRSP))
	a.ALURM(as.CMP, 8, as.RDX, t.gregN(RSP))
	a.Jcc(5, none) // jne: another frame
	a.MovRI(as.RDX, t.callTag(true)|uint64(StepLeaf)|accHookRun)
	a.MovRM(8, as.RAX, as.M(hCPU, offLeafA))
	a.ALURM(as.CMP, 8, as.RDX, logWord(as.RAX, 1))
	a.Jcc(4, found) // je
	a.MovRM(8, as.RAX, as.M(hCPU, offLeafB))
	a.ALURM(as.CMP, 8, as.RDX, logWord(as.RAX, 1))
	reload := a.NewLabel()
	a.Jcc(5, reload)
	a.Bind(found)
	a.Lea(8, as.RAX, as.M(as.RAX, 1))
	a.MovMR(8, as.M(hCPU, offMergeAt), as.RAX)
	a.Bind(reload)
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.Bind(none)
}

// foldRet, before a ret's narrow record with the log's count in RAX
// and room for three entries, folds the ret into the call's record
// that ends the log when RSP is that call's slot (hooklog.go, Leaf
// calls), or, for a ret LeafMerger picked (merge), adds the call and
// the ret to the leaf call's record mergeCall found for the call (the
// call's record is dropped), and jumps to done; otherwise it goes on to
// the ret's own record, RAX unchanged. Clobbers RDX and the flags.
func (t *jitT) foldRet(done as.Label, merge bool) {
	a := &t.a
	in := &t.b.Insts[t.k]
	retTag := uint64(stepKindOf(in, t.k, t.win)) | in.PC<<stepPCShift
	own := a.NewLabel()
	a.Lea(8, as.RDX, as.M(as.RAX, 1))
	a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offHookLast))
	a.Jcc(5, own) // jne: the log does not end with a call's record
	// The call's RSP (the record's third word) less 8 is the slot.
	a.MovRR(8, as.RDX, as.RAX)
	a.ShiftRI(as.SHL, 8, as.RDX, 4)
	a.MovRM(8, as.RDX, as.Mem{Base: hCPU, Index: as.RDX, Disp: offAccLog - 16})
	a.ALURI(as.SUB, 8, as.RDX, 8)
	a.ALURM(as.CMP, 8, as.RDX, t.gregN(RSP))
	a.Jcc(5, own) // jne: a ret from another frame
	short := a.NewLabel()
	if merge {
		tryRun := a.NewLabel()
		t.mergeRet(retTag, done, tryRun)
		a.Bind(tryRun)
		// Folded into a record that may be merged into: if the call
		// was picked too (its tag has accHookPicked).
		a.MovRR(8, as.RDX, as.RAX)
		a.ShiftRI(as.SHL, 8, as.RDX, 4)
		a.TestMI(8, as.Mem{Base: hCPU, Index: as.RDX, Disp: offAccLog - 32 + 8}, accHookPicked)
		a.Jcc(4, short) // jz
		t.foldRun(retTag, done)
	}
	a.Bind(short)
	a.Lea(8, as.RDX, as.M(as.RAX, 1))
	a.MovMR(8, as.M(hCPU, offAccN), as.RDX)
	a.ShiftRI(as.SHL, 8, as.RAX, 4)
	// The call's tag (the record's second word) gets StepLeaf.
	a.ALUMI(as.OR, 8, logWord(as.RAX, -3), int64(StepLeaf))
	// The ret's entry: Retired less Icount, and PC and kind as a tag.
	t.retiredBefore(as.RDX)
	a.Lea(8, as.RDX, as.M(as.RDX, int32(t.k)))
	a.MovMR(8, logWord(as.RAX, 0), as.RDX)
	a.MovRI(as.RDX, retTag)
	a.MovMR(8, logWord(as.RAX, 1), as.RDX)
	a.Jmp(done)
	a.Bind(own)
}

// mergeRet, in foldRet, adds the call whose record ends the log and
// this ret to the record mergeCall found (hookLog.mergeAt), if any and
// its ret is this one, drops the call's record and jumps to done; else
// it jumps to fold with the log's count in RAX.
func (t *jitT) mergeRet(retTag uint64, done, fold as.Label) {
	a := &t.a
	a.MovRM(8, as.RDX, as.M(hCPU, offMergeAt))
	a.TestRR(8, as.RDX, as.RDX)
	a.Jcc(4, fold) // jz: none
	a.Lea(8, as.RDX, as.M(as.RDX, -1))
	no := a.NewLabel()
	// The same Target word: the same callee (a call through a PLT
	// stub's is the entry folded into it, EntryFolder).
	a.ShiftRI(as.SHL, 8, as.RAX, 4)
	a.MovRM(8, as.RAX, logWord(as.RAX, -1))
	a.ALURM(as.CMP, 8, as.RAX, logWord(as.RDX, 3))
	a.Jcc(5, no) // jne: another callee
	a.MovRI(as.RAX, retTag)
	a.ALURM(as.CMP, 8, as.RAX, logWord(as.RDX, 4+1))
	a.Jcc(5, no) // jne: it returned through another ret
	// The record's last ret, one call more, and the callee's
	// instructions: this ret's Retired less the call's.
	t.retiredBefore(as.RAX)
	a.Lea(8, as.RAX, as.M(as.RAX, int32(t.k)))
	a.MovMR(8, logWord(as.RDX, 6), as.RAX)
	a.ALUMI(as.ADD, 8, logWord(as.RDX, 7), 1)
	a.ALUMR(as.ADD, 8, logWord(as.RDX, 8), as.RAX)
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.ShiftRI(as.SHL, 8, as.RAX, 4)
	a.MovRM(8, as.RAX, logWord(as.RAX, -4)) // the call's Retired less Icount
	a.ALUMR(as.SUB, 8, logWord(as.RDX, 8), as.RAX)
	a.ALUMI(as.SUB, 8, as.M(hCPU, offAccN), 2)
	// The log no longer ends with a call's record (at the count
	// lastCall remembers, another record may end it).
	a.MovMI(8, as.M(hCPU, offHookLast), 0)
	a.Jmp(done)
	a.Bind(no)
	a.MovRM(8, as.RAX, as.M(hCPU, offAccN))
	a.Jmp(fold)
}

// foldRun, in foldRet, folds the ret into the call's record that ends
// the log, both picked by LeafMerger: the record gets the ret's entry
// and the merged calls' (none yet), and becomes the run's last (its
// first if the run's last record was not right before it, at the same
// RSP). Jumps to done.
func (t *jitT) foldRun(retTag uint64, done as.Label) {
	a := &t.a
	// RAX: the log's count; the call's record starts at RAX-2.
	newRun, setA := a.NewLabel(), a.NewLabel()
	a.Lea(8, as.RDX, as.M(as.RAX, -2+1))
	a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offRunEnd))
	a.Jcc(5, newRun)
	a.MovRR(8, as.RDX, as.RAX)
	a.ShiftRI(as.SHL, 8, as.RDX, 4)
	a.MovRM(8, as.RDX, logWord(as.RDX, -2)) // the call's RSP
	a.ALURM(as.CMP, 8, as.RDX, as.M(hCPU, offRunRSP))
	a.Jcc(5, newRun)
	a.MovRM(8, as.RDX, as.M(hCPU, offLeafA))
	a.MovMR(8, as.M(hCPU, offLeafB), as.RDX)
	a.Jmp(setA)
	a.Bind(newRun)
	a.Lea(8, as.RDX, as.M(as.RAX, -2))
	a.ShiftRI(as.SHL, 8, as.RDX, 4)
	a.MovMR(8, as.M(hCPU, offLeafB), as.RDX)
	a.Bind(setA)
	a.Lea(8, as.RDX, as.M(as.RAX, -2))
	a.ShiftRI(as.SHL, 8, as.RDX, 4)
	a.MovMR(8, as.M(hCPU, offLeafA), as.RDX)
	a.Lea(8, as.RDX, as.M(as.RAX, 3+1))
	a.MovMR(8, as.M(hCPU, offRunEnd), as.RDX)
	a.Lea(8, as.RDX, as.M(as.RAX, 3))
	a.MovMR(8, as.M(hCPU, offAccN), as.RDX)
	a.ShiftRI(as.SHL, 8, as.RAX, 4)
	a.MovRM(8, as.RDX, logWord(as.RAX, -2))
	a.MovMR(8, as.M(hCPU, offRunRSP), as.RDX)
	a.ALUMI(as.OR, 8, logWord(as.RAX, -3), int64(StepLeaf)|accHookRun)
	// The ret's entry, and the merged calls': the last ret (this one),
	// none, no instructions.
	t.retiredBefore(as.RDX)
	a.Lea(8, as.RDX, as.M(as.RDX, int32(t.k)))
	a.MovMR(8, logWord(as.RAX, 0), as.RDX)
	a.MovMR(8, logWord(as.RAX, 2), as.RDX)
	a.MovRI(as.RDX, retTag)
	a.MovMR(8, logWord(as.RAX, 1), as.RDX)
	a.MovMI(8, logWord(as.RAX, 3), 0)
	a.MovMI(8, logWord(as.RAX, 4), 0)
	a.Jmp(done)
}
