package x86

import as "ttd/internal/amd64asm"

// Hook exits (filter.go): a translation made for a filter that observes
// some of a block's instructions leaves before each of them with the
// guest state stored, returning jitHookExit|k, and has an entry right
// after that exit (jitBlock.hresume[k]) through which Go resumes it once
// it made the Instruction call. Before the exit, the flags are saved and
// the reads counted as at any exit; the entry loads them back as a resume
// entry does.

// hookExit emits the exit before instruction t.k and the label its entry
// jumps to.
func (t *jitT) hookExit() {
	a := &t.a
	t.spill()
	logged := t.logged>>t.k&1 != 0
	var cont as.Label
	if logged {
		// A logged hook: the record, and on to the instruction; the
		// exit is for a full log.
		exit := a.NewLabel()
		cont = a.NewLabel()
		t.logHook(exit, cont)
		a.Jmp(cont)
		a.Bind(exit)
	}
	t.settle(t.sreads)
	t.leave(jitHookExit|t.k, fsSaved)
	l := a.NewLabel()
	a.Bind(l)
	if logged {
		a.Bind(cont)
	}
	t.hresumes = append(t.hresumes, jitResume{l, t.k, fsSaved, 0, t.sreads})
	t.hooked |= 1 << t.k
	t.mxChecked = false
}

// hookResumes emits the entries after the hook exits.
func (t *jitT) hookResumes() {
	for i := range t.hresumes {
		r := &t.hresumes[i]
		if t.pendTarget && r.k == t.pendK {
			// After an exact Instruction call for a call through
			// memory that is logged elsewhere: no record to complete.
			off := t.a.Len()
			t.noTarget()
			t.resumeEntry(r)
			r.off = off
			continue
		}
		t.resumeEntry(r)
	}
}

// resumeEntry emits r's entry from Go: it loads the registers and the
// flags, takes away the reads of the block before it, and jumps to r.l
// with the flags where the code there expects them.
func (t *jitT) resumeEntry(r *jitResume) {
	a := &t.a
	r.off = a.Len()
	if !t.pred {
		// Without the prediction cache the entry's start is the same
		// for all of a block's entries: shared (resumeHead), it returns
		// through RCX. (Each entry took 49 bytes, 25,000 of them 1.2 MB
		// of python3 -c pass's host code.)
		if !t.hasHead {
			t.headL, t.hasHead = a.NewLabel(), true
		}
		back := a.NewLabel()
		a.LeaLabel(as.RCX, back)
		a.Jmp(t.headL)
		a.Bind(back)
		t.loadRegs()
	} else {
		t.prologue()
	}
	t.settle(-r.reads)
	t.clearMark()
	if r.st == fsHost {
		t.st = fsSaved
		t.hostFlags()
	}
	a.Jmp(r.l)
}

// resumeHead emits the start that the resume entries of a translation
// without the prediction cache share: the prologue's loads but the guest
// registers', then back to the entry through RCX.
func (t *jitT) resumeHead() {
	a := &t.a
	a.Bind(t.headL)
	a.MovRM(8, hRTLB, as.M(hCPU, t.tlbOffset()))
	t.cpuFlags()
	a.JmpReg(as.RCX)
}

// keepHooks records in j the hook exits of the translation just placed
// at e.
func (t *jitT) keepHooks(j *jitBlock, e uintptr, cc *CodeCache) {
	// hooks: the exits, each with its entry; beyond: the instructions
	// the translation does not reach. Kept in one mask, an instruction
	// beyond looked like an exit without an entry to runHooked
	// (TestHookBeyondTranslation).
	j.hooks = 0
	for _, r := range t.hresumes {
		j.hooks |= 1 << r.k
	}
	j.beyond = t.hooked &^ j.hooks
	j.logged, j.steps, j.win = t.logged&j.hooks, t.steps, t.win
	if j.logged != 0 {
		cc.filter.hookLogs = true
	}
	if len(t.hresumes) == 0 {
		j.hresume = nil
		return
	}
	if len(j.hresume) != len(t.b.Insts) {
		j.hresume = make([]uintptr, len(t.b.Insts))
	}
	clear(j.hresume)
	for _, r := range t.hresumes {
		j.hresume[r.k] = e + uintptr(r.off)
	}
}
