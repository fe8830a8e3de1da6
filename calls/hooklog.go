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
func (s *segment) loggable(b *x86.Block) uint64 { return s.verdictOf(b).logged }

// logged is the Replay's HookSteps: the records of the thread that runs
// on c, in order.
func (s *segment) logged(r *reader.Replay, c *x86.CPU, steps []x86.HookStep) {
	st := s.running(r, c)
	loggedRecords.Add(uint64(len(steps)))
	s.follow(st, steps, r.LoggedPosition(0))
	c.SetRetFloor(st.retFloor())
}

// follow follows the records of thread st in order; a record's position
// is base+Retired.
//
// Most records need none of step's cases but two, which follow does in
// line (quiet: no flows, watch looks at nothing): a ret that pops one
// frame back to a named one, and a direct call from a named frame whose
// record says whether it names its callee (its window class or a folded
// entry). What they do is what step does then.
func (s *segment) follow(st *segThread, steps []x86.HookStep, base uint64) {
	quiet := s.flowOf == nil
	for i := range steps {
		h := &steps[i]
		if h.Kind&x86.StepLeaf != 0 {
			s.leaf(st, h, base)
			if h.More != 0 {
				s.more(st, h)
			}
			continue
		}
		if quiet && st.look == 0 && !st.tramp && st.baseLook == 0 && st.baseLookTo == 0 && len(st.stack) > 0 {
			k := len(st.stack) - 1
			f := &st.stack[k]
			if st.lookTo != 0 {
				// What watch does in the window after a call that did
				// not name its callee, unless it names it here.
				switch {
				case h.Retired >= st.lookTo || !st.pending:
					st.lookTo = 0
				case s.isEntry(h.PC):
					s.step(st, h, base)
					continue
				}
				// (Its f.target = pc, for a frame with none, is
				// resolve's.)
			}
			switch h.Kind & (x86.StepOpMask | x86.StepEntry | x86.StepOpen | x86.StepShut) {
			case x86.StepRet, x86.StepRet | x86.StepOpen:
				if k >= 1 && f.slot <= h.RSP && st.stack[k-1].slot > h.RSP && st.stack[k-1].node != nil {
					st.quietCredit(s.named(st, f, h.PC), h.Retired+1)
					// st.pending stays false: the frame is named
					// now, and the one below it was.
					st.stack = st.stack[:k]
					continue
				}
			case x86.StepCall | x86.StepShut, x86.StepCall | x86.StepOpen, x86.StepCall | x86.StepEntry,
				x86.StepCall | x86.StepEntry | x86.StepShut, x86.StepCall | x86.StepEntry | x86.StepOpen:
				if slot := h.RSP - 8; f.slot > slot {
					top := s.named(st, f, h.PC)
					st.quietCredit(top, h.Retired+1)
					g := st.push()
					g.parent, g.site, g.slot, g.pos, g.target = top, h.PC, slot, base+h.Retired, h.Target
					st.pending, st.look, st.lookTo = true, 0, 0
					if h.Kind&(x86.StepEntry|x86.StepShut) != 0 {
						s.enter(st, g, h.Target)
					} else {
						st.lookTo = h.Retired + 1 + lookLimit
					}
					continue
				}
			}
		}
		s.step(st, h, base)
	}
}

// named is the node of frame f, named by pc (an instruction run in it)
// if it is pending, as account names it (top).
func (s *segment) named(st *segThread, f *frame, pc uint64) *segNode {
	if f.node == nil {
		s.resolve(st, f, pc)
	}
	return f.node
}

// quietCredit is account's credit without flows (follow's quiet): the
// instructions the thread retired since the last call or ret, up to n,
// go to top.
func (st *segThread) quietCredit(top *segNode, n uint64) {
	if n >= st.last {
		top.Self += n - st.last
	}
	st.last = n
}

// more follows the calls merged into a leaf call's record after its
// first (x86.LeafMerger), which leaf followed: h.More more calls of the
// same function from the same frame, with the same call and ret, their
// callees running h.MoreCallee instructions in all. merges picks only
// calls and rets that are no function's entry, so watch acts on none of
// them (it acts at entries only), and after the first the frames are
// what they were before it: each of the others changes the same counts
// the same way, and the position of none is needed. The callees'
// instructions go to the callee's path; the caller's path, whose
// instructions between the calls come with the next record (st.last
// stays at the first ret), has them taken away in advance (the
// counters wrap until then).
func (s *segment) more(st *segThread, h *x86.HookStep) {
	k := len(st.stack) - 1
	var top *segNode
	if k >= 0 {
		top = st.stack[k].node
		if top == nil {
			top = s.top(st, h.PC) // as account at the next call would
		}
		// step would end baseLookTo at a record past it (watch).
		if st.baseLookTo != 0 && h.Last >= st.baseLookTo {
			st.baseLookTo = 0
		}
	} else {
		top = st.base(st.b)
		st.baseLookTo = h.Last + 1 + 2*lookLimit // as each ret sets it
	}
	st.lookTo = 0 // the frame on top is named: watch would end it
	c := s.leafChild(top, h)
	c.Count += h.More
	mergedCalls.Add(h.More)
	s.credit(st, c, h.MoreCallee)
	s.credit(st, top, -h.MoreCallee)
	if s.flowOf != nil {
		s.flowStat(st, c).Count += h.More
	}
}

// leafEntry is the function a leaf call's record called: its target
// when step names the callee at the call, else the function of its ret
// (resolve), or the target when no symbol covers the ret.
func (s *segment) leafEntry(h *x86.HookStep) uint64 {
	target := h.Target
	if h.Kind&x86.StepEntry != 0 {
		return target // the callee's entry (step)
	} else if h.Kind&x86.StepOpMask == x86.StepCall && h.Kind&(x86.StepShut|x86.StepOpen) != 0 {
		if h.Kind&x86.StepShut != 0 {
			return target
		}
	} else if e := s.fn.lookup(target); e.ok && e.entry == target && !e.tramp {
		return target
	}
	if e, ok := s.fn.entry(h.RetPC); ok {
		return e
	}
	return target
}

// leafChild is the path below top that leaf call h enters: its key's
// entry is leafEntry's, remembered where that takes function lookups
// (pathMemo), else the target.
func (s *segment) leafChild(top *segNode, h *x86.HookStep) *segNode {
	if h.Kind&x86.StepEntry == 0 && h.Kind&(x86.StepOpMask|x86.StepShut) != x86.StepCall|x86.StepShut {
		kind := uint64(h.Kind) // StepLeaf in it: never resolve's 0
		m := s.children.memo(top, h.PC, h.Target, h.RetPC)
		if m.hit(top, h.PC, h.Target, h.RetPC, kind) {
			return m.child
		}
		c := s.children.child(top, segKey{h.PC, s.leafEntry(h)})
		*m = pathMemo{c, h.Target, h.RetPC, kind}
		return c
	}
	kk := segKey{h.PC, h.Target}
	if c := top.last; c != nil && c.skey() == kk {
		return c
	}
	return s.children.child(top, kk)
}

// isEntry reports whether pc is a function's entry.
func (s *segment) isEntry(pc uint64) bool {
	e := s.fn.lookup(pc)
	return e.ok && e.entry == pc
}

// merges picks the direct calls and the rets of b whose leaf calls'
// records translated code may merge (x86.LeafMerger, more): those at no
// function's entry.
func (s *segment) merges(b *x86.Block) uint64 { return s.verdictOf(b).merge }

// leaf follows a leaf call's record (x86.StepLeaf): the call and the
// ret that returned from it, with no record between. When nothing but
// the call and the ret is to be done (watch looks at nothing, and the
// frame the call is made from is above the call's slot), it
// adds the call to its path and the callee's instructions to it
// directly, without pushing and popping a frame: gzip -9 calls leaves
// for all but 0.3% of its calls. Otherwise it steps through the two
// records.
func (s *segment) leaf(st *segThread, h *x86.HookStep, base uint64) {
	s.leaves++
	k := len(st.stack) - 1
	slot := h.RSP - 8
	op := h.Kind & x86.StepOpMask
	if st.look > 0 || st.tramp || st.baseLook > 0 || st.baseLookTo != 0 || k < 0 ||
		st.stack[k].slot <= slot || h.Target == 0 || op == x86.StepCallAny ||
		st.stack[k].node == nil && st.lookTo != 0 && h.Retired < st.lookTo && s.isEntry(h.PC) {
		s.leafSteps(st, h, base)
		return
	}
	// step would end lookTo here: the window after an unnamed call
	// matters only while its frame is pending, and the top one is not,
	// or is past the window.
	st.lookTo = 0
	top := st.stack[k].node
	if top == nil {
		// The frame the call is made from is not named yet (its
		// callee had no symbol at its entry: lua's static functions
		// made a fifth of its leaf calls' records take the slow
		// path), and watch would not name it at the call (the call
		// is no function's entry, or watch no longer looks): named
		// by the call's PC, as step's account would (resolve).
		s.resolve(st, &st.stack[k], h.PC)
		top = st.stack[k].node
		s.leafNamings++
	}
	n := h.Retired + 1
	if n >= st.last {
		s.credit(st, top, n-st.last)
	}
	// The callee: named at the call as step names it, else by the
	// ret's function (resolve; watch at the ret would name it the
	// same, it being the function's entry): leafChild.
	c := s.leafChild(top, h)
	c.Count++
	if pos := base + h.Retired; pos < c.First {
		c.First, c.FirstTid = pos, st.tid
	}
	if s.flowOf != nil {
		fs := s.flowStat(st, c)
		fs.Count++
		fs.First = min(fs.First, base+h.Retired)
	}
	if m := h.Ret + 1; m >= n {
		s.credit(st, c, m-n)
		st.last = m
	} else {
		st.last = n
	}
}

// leafSteps follows a leaf call's record as its call's and its ret's
// (leaf's slow path). Out of line: the two records on leaf's stack made
// a 400-byte frame that every leaf call's record set up for nothing
// (perf annotate: leaf's prologue and spills, 5-8% of it on jq).
//
//go:noinline
func (s *segment) leafSteps(st *segThread, h *x86.HookStep, base uint64) {
	call := *h
	call.Kind &^= x86.StepLeaf
	ret := x86.HookStep{Retired: h.Ret, RSP: h.RSP - 8, PC: h.RetPC, Kind: h.RetKind}
	s.step(st, &call, base)
	s.step(st, &ret, base)
}

// useLog makes r log what loggable picks, in narrow records, those of
// function entries only in windows (windows).
func (s *segment) useLog(r *reader.Replay) {
	r.HookLogged, r.HookSteps, r.HookWindows, r.HookMerge = s.loggable, s.logged, s.windows, s.merges
	r.HookFold = lookLimit
}

// Windows of entries (x86.HookStepLogger.StepWindows). step acts on a
// function's entry only while watch looks for a frame's function: after
// a call whose callee it does not name at the call (lookTo: a PLT stub,
// a call through a register or memory to no entry), after a ret that
// may return to a frame open at the checkpoint (baseLookTo), or while
// the gate is open (then Go runs every instruction, exactly). So a
// logged entry is soft: recorded only within stepWindow instructions
// after a ret or a call that is not a direct call to a function's entry
// (open), and not after a direct call to one (shut: the callee is named
// at the call, and the frames below are not on top again before a ret).
// That covers both windows (lookLimit and 2*lookLimit after the call or
// ret); on sqlite3 it leaves out most of the entries, a third of the
// records. Where Go runs a call or a ret (instruction), it sets the
// window's end as translated code would (setWindow).
func (s *segment) windows(b *x86.Block) (soft, open, shut, window uint64) {
	v := s.verdictOf(b)
	return v.soft, v.open, v.shut, stepWindow
}

// callWindow is the window class of a call or a ret (windows): StepShut
// for a direct call to a function's entry that is no trampoline (step
// names its callee at the call, from the class alone: a record's Kind
// carries it), StepOpen for the other calls and the rets, 0 for the
// other instructions.
func (s *segment) callWindow(in *x86.Inst) x86.StepKind {
	switch {
	case s.callsEntry(in):
		return x86.StepShut
	case in.Op == x86asm.CALL || in.Op == x86asm.RET:
		return x86.StepOpen
	}
	return 0
}

// entryAt is s.fn.lookup(h.PC), known without one for a record of a soft
// instruction (windows: a function's entry, no trampoline).
func (s *segment) entryAt(h *x86.HookStep) entryOf {
	if h.Kind&x86.StepSoft != 0 {
		return entryOf{entry: h.PC, ok: true}
	}
	return s.fn.lookup(h.PC)
}

// stepWindow is the window of logged entries after an open instruction:
// the longer of watch's (baseLookTo).
const stepWindow = 2 * lookLimit

// callsEntry reports whether in is a direct call to a function's entry
// that is no lazy-binding trampoline: step names its callee at the call.
func (s *segment) callsEntry(in *x86.Inst) bool {
	a := &in.Args[0]
	if in.Op != x86asm.CALL || a.Kind != x86.KRel {
		return false
	}
	e := s.fn.lookup(a.Imm)
	return e.ok && e.entry == a.Imm && !e.tramp
}

// setWindow sets c's window of logged entries after the instruction of
// kind k, at Retired retired, that Go ran (windows).
func setWindow(c *x86.CPU, k x86.StepKind, retired uint64) {
	switch {
	case k&x86.StepShut != 0:
		c.SetHookUntil(0)
	case k&x86.StepOpen != 0:
		c.SetHookUntil(retired + 1 + stepWindow)
	}
}

// loggedRecords counts the records logged has followed, mergedCalls
// the calls merged into leaf calls' records, leafCalls the leaf calls'
// records (segment.leaves, added up when a segment ends), leafNamings
// those that named their caller's frame (segment.leafNamings): tests
// check that logging, folding and merging happened.
var loggedRecords, mergedCalls, leafCalls, leafNamings atomic.Uint64
