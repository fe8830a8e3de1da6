package x86

// Filtered observation: an Observer that wants instructions (a Hook) and
// implements BlockFilter sees the Instruction calls of the blocks it
// accepts only; the blocks it declines run as without observation,
// through their translations (jit.go), which chain to each other without
// returning to Go. What keeps the callbacks exact is that a translation
// never chains into a block the filter accepts:
//
//   - a block's verdict is asked once and kept in the block (blockVerdict) for the filter its code cache holds verdicts of
//     (CodeCache.filter); another filter, or a Run without one (whose
//     translations link to any block), starts a new generation of
//     verdicts and unlinks every translation (unlinkAllJIT), so that they
//     link again as they miss, under the new verdicts;
//   - a translation is linked to a block (a chaining slot, or the table
//     of translations by address through which returns and indirect jumps
//     chain) only when the block's verdict is "declined": runBlock runs
//     only declined blocks while filtering, relinkJIT skips the others,
//     and an accepted block is unlinked when its verdict is taken.
//
// An InstFilter narrows a block's verdict to the instructions observed
// in it (a function's first instruction, a call, a ret). Such a block
// runs translated too: its translation leaves for Go before each of
// those instructions (jitHookExit), with the guest state exact (the
// registers, the flags as the interpreter's handlers leave them,
// Retired, RIP), Go makes the Instruction call, and the translation
// takes up again right after that exit (jitBlock.hresume), chaining on
// to the blocks that follow. A translation is linked to such a block only
// when it leaves before every instruction the verdict observes
// (jitBlock.hooks); a block observed in full runs in the interpreter
// (unless it is short: inFull).
//
// A HookGate adds a verdict that changes with the observer's state (the
// instructions after a call, say): it is asked, before each declined
// block that execution reaches through Go, whether to observe it anyway.
// Its answer may change only during Instruction calls, all of which Go
// makes, and after which it asks again (for the rest of the block too);
// translated code never runs an Instruction call, so it cannot miss a
// change.

// filterState is what a code cache knows of the filter whose verdicts its
// blocks hold.
type filterState struct {
	// owner is the BlockFilter of the current verdicts; nil: none, and
	// translations may be linked to any block.
	owner BlockFilter
	// version is owner's FilterVersion when the verdicts were asked.
	version uint64
	// gen numbers the generations of verdicts: a block holds owner's
	// verdict when its blockVerdict.fgen is gen.
	gen uint32
	// hookLogs: some translation logs hooks (hooklog.go), whose records
	// drainLog must find among the accesses.
	hookLogs bool
}

// FilterVersion, when a BlockFilter implements it, numbers the versions
// of its verdicts: a new version makes the blocks ask WantBlock again.
// Without it, a filter's verdict on a block is asked once for as long as
// it is the filter of the block's code cache.
type FilterVersion interface {
	FilterVersion() uint64
}

// InstFilter, when a BlockFilter implements it, gives the verdict on a
// block instruction by instruction: bit i of WantInsts(b) set makes an
// Instruction call before b.Insts[i] (a block holds at most 64), and
// WantBlock is not asked.
type InstFilter interface {
	WantInsts(b *Block) uint64
}

// HookGate, when an Observer that is a BlockFilter implements it, lets the
// observer see the instructions its filter does not ask for while HookAll
// reports true (asked before each block that execution reaches through
// Go, and after each Instruction call). Its answer may change only during
// Instruction calls, or between Runs.
type HookGate interface {
	HookAll(c *CPU) bool
}

// jitHookExit marks jitCall's result when the translation left before a
// hooked instruction (its index in the low bits), for its Instruction
// call.
const jitHookExit = 1 << 31

// blockMask has a bit for each of b's instructions.
func blockMask(b *Block) uint64 {
	if len(b.Insts) >= 64 {
		return ^uint64(0)
	}
	return 1<<len(b.Insts) - 1
}

// inFull reports whether mask observes all of b, which then runs in the
// interpreter. A block of at most smallFull instructions runs translated
// even so, leaving before each: a lone call or ret that a filter
// observes (816,000 of them in sqlite3's ttd calls) chains, translated,
// to the blocks around it instead of coming back to Go twice.
func inFull(b *Block, mask uint64) bool {
	return mask == blockMask(b) && len(b.Insts) > smallFull
}

const smallFull = 2

// useFilter makes bf the filter whose verdicts cc's blocks hold: for
// another filter than the current one, a new generation of verdicts, and
// no translation linked to any block until its verdict is known.
func (cc *CodeCache) useFilter(bf BlockFilter) {
	var v uint64
	if fv, ok := bf.(FilterVersion); ok {
		v = fv.FilterVersion()
	}
	if cc.filter.owner == bf && cc.filter.version == v {
		return
	}
	cc.filter.owner, cc.filter.version = bf, v
	cc.filter.gen++
	if cc.filter.gen == 0 {
		cc.filter.gen = 1 // 0 is a new block's
	}
	cc.unlinkAllJIT()
}

// linkAny records that translations may now be linked to any block (Run
// without a filter): the next filtered Run starts a new generation.
func (cc *CodeCache) linkAny() { cc.filter.owner = nil }

// wants is bf's verdict on b (the instructions it observes), asked once
// per generation. A block whose translation would miss one of them is
// unlinked from every translation; the others are found by address
// again.
func (cc *CodeCache) wants(bf BlockFilter, b *Block) uint64 {
	j := cc.vx(b)
	if j.fgen != cc.filter.gen || filterAskAlways {
		j.fgen = cc.filter.gen
		if f, ok := bf.(InstFilter); ok {
			j.fmask = f.WantInsts(b) & blockMask(b)
		} else if bf.WantBlock(b) {
			j.fmask = blockMask(b)
		} else {
			j.fmask = 0
		}
		cc.askLog(bf, b)
		if cc.linkable(b) {
			cc.relinkJIT(b)
		} else {
			cc.unlinkJIT(b)
		}
	}
	return j.fmask
}

// blockVerdict is a BlockFilter's verdict on a block, kept apart from
// its translation state (jitBlock): a filter asks of each block that
// runs, most of which are never translated.
type blockVerdict struct {
	// fmask is the instructions the code cache's filter observes when
	// fgen is its generation (0: never asked).
	fgen  uint32
	fmask uint64
	// flog is the instructions the verdict lets translated code log,
	// fsteps whether in narrow records, fwin their windows (nil: none)
	// (hooklog.go).
	flog   uint64
	fsteps bool
	fwin   *stepWindows
}

// noVerdict is the verdict of a block never asked: read, never written.
var noVerdict blockVerdict

// vv is b's verdict for reading: noVerdict's zeros when it has none.
func (b *Block) vv() *blockVerdict {
	if b.verdict == nil {
		return &noVerdict
	}
	return b.verdict
}

// vx is b's verdict, made when first asked, from a slab of cc's: one
// allocation for verdictSlab blocks.
func (cc *CodeCache) vx(b *Block) *blockVerdict {
	if b.verdict == nil {
		if len(cc.verdictSlab) == 0 {
			cc.verdictSlab = make([]blockVerdict, verdictSlab)
		}
		b.verdict = &cc.verdictSlab[0]
		cc.verdictSlab = cc.verdictSlab[1:]
	}
	return b.verdict
}

// verdictSlab is how many verdicts vx allocates at a time (8 KB).
const verdictSlab = 256

// filterAskAlways makes wants ask the filter every time, as the tests'
// reference (with translation off).
var filterAskAlways bool

// linkable reports whether translations may be linked to b: always
// without a filter, else when b's translation leaves before each
// instruction the current verdict observes (none, when declined), and
// that is not all of them (inFull).
func (cc *CodeCache) linkable(b *Block) bool {
	j := b.vv()
	return cc.filter.owner == nil || j.fgen == cc.filter.gen && (j.fmask == 0 ||
		b.hooksCover() && !inFull(b, j.fmask))
}

// hooksFor is the instructions before which a translation of b made now
// leaves for an Instruction call: those the current verdict observes,
// unless that is all of them (inFull: the interpreter runs such a block).
func (cc *CodeCache) hooksFor(b *Block) uint64 {
	j := b.vv()
	if cc.filter.owner == nil || j.fgen != cc.filter.gen || inFull(b, j.fmask) {
		return 0
	}
	return j.fmask
}

// logsFor is which of hooks a translation of b made now logs instead,
// whether in narrow records, and their windows (hooklog.go).
func (cc *CodeCache) logsFor(b *Block, hooks uint64) (logged uint64, steps bool, win *stepWindows) {
	j := b.vv()
	if hooks == 0 || j.flog&hooks == 0 {
		return 0, false, nil
	}
	return j.flog & hooks, j.fsteps, j.fwin
}

// hookReady reports whether b, which the filter observes in part (or a
// HookGate opened), may run translated: its translation leaves before
// each observed instruction. It translates b when b has earned it.
func (c *CPU) hookReady(b *Block) bool {
	j := b.jv()
	if !c.jitOK || b.declined || !b.valid {
		return false
	}
	if j.entry != 0 && j.mode == c.jitMode && b.hooksCover() {
		return true
	}
	if b.heat < jitThreshold {
		b.heat++
		return false
	}
	c.cache.unlinkJIT(b)
	c.translate(b)
	j = b.jv()
	return j.entry != 0 && b.hooksCover()
}

// runObserved is Run with an Instruction callback before each
// instruction, or, with a BlockFilter, before the instructions it
// observes (and those a HookGate opens): the other instructions run
// through their translations where they have one (filter.go).
func (c *CPU) runObserved(budget uint64) {
	bf, _ := c.Obs.(BlockFilter)
	c.gate, _ = c.Obs.(HookGate)
	jit := bf != nil && c.jitOK
	c.hooking = bf != nil
	c.syncHookLog(bf)
	if bf != nil {
		c.cache.useFilter(bf)
	}
	var prev, from *Block
	for budget > 0 {
		b := c.nextBlock(prev)
		n := len(b.Insts)
		if uint64(n) > budget {
			n = int(budget)
		}
		c.blk = b
		c.blkLen = n
		mask := blockMask(b)
		if bf != nil {
			mask = c.cache.wants(bf, b)
		}
		gated := mask != blockMask(b) && c.gate != nil && c.gate.HookAll(c)
		var entry uintptr
		translated := false
		switch {
		case bf == nil || inFull(b, mask) || n < len(b.Insts) && (mask != 0 || gated):
			c.runHooked(b, 0, 0, gated, false)
		case n < len(b.Insts):
			c.runExact(b.Insts[:n])
		case !jit || (mask != 0 || gated) && !c.hookReady(b):
			c.runHooked(b, 0, 0, gated, false)
		case gated:
			entry = c.runHooked(b, 0, 0, true, true)
		default:
			translated = true
		}
		if translated || entry != 0 {
			var before uint64
			if translated {
				before = c.runBlock(b, budget, from)
			} else {
				c.jitMiss = 0
				before = c.runJIT(b, entry, budget, 0)
			}
			from = nil
			if c.jitMiss != 0 {
				from = c.blk // its chaining slot for the next block missed
			}
			budget -= before
			b = c.blk
		} else {
			from = nil
		}
		done := c.blkLen
		c.Icount += uint64(done)
		budget -= uint64(done)
		c.finishBlock(b, done)
		c.blk = nil
		if c.exit.Reason != ExitNone {
			return
		}
		prev = b
	}
	c.exit.Reason = ExitBudget
}

// runHooked runs b's instructions from index from in the interpreter,
// with an Instruction call before each that the filter observes (from
// hookFrom on) or that comes while the gate is open. With jit, it
// returns the entry into b's translation where that can take up (after
// an Instruction call, or before an instruction), or 0 when it ran to
// the block's end.
func (c *CPU) runHooked(b *Block, from, hookFrom int, gated, jit bool) uintptr {
	j := b.jv()
	mask := b.vv().fmask
	if !c.hooking {
		mask = blockMask(b)
	}
	mask &^= 1<<hookFrom - 1
	for i := from; i < c.blkLen; i++ {
		c.blkIdx = i
		in := &b.Insts[i]
		if jit && i > from && !gated && j.resume != nil && j.resume[i] != 0 {
			return j.resume[i] // it makes i's Instruction call
		}
		if gated || mask>>i&1 != 0 {
			c.Obs.Instruction(c, in)
			gated = c.gate != nil && c.gate.HookAll(c)
			// hooks has the exits with an entry after them only
			// (not the instructions the translation does not reach:
			// TestHookBeyondTranslation).
			if jit && !gated && j.hooks>>i&1 != 0 {
				return j.hresume[i]
			}
		}
		in.Fn(c, in)
		if jit && !c.resumable(b) {
			jit = false
		}
	}
	return 0
}

// hookExit makes the Instruction call before b.Insts[k], where b's
// translation left for it, and returns the entry right after that exit,
// or 0 when the gate opened and the interpreter ran the rest of b.
func (c *CPU) hookExit(b *Block, k int) uintptr {
	c.blkIdx = k
	if !c.hooking || b.vv().fmask>>k&1 == 0 {
		// A translation made for a filter that observed more (the
		// gate is closed: this runs translated).
		return b.jit.hresume[k]
	}
	in := &b.Insts[k]
	c.Obs.Instruction(c, in)
	if c.gate == nil || !c.gate.HookAll(c) {
		return b.jit.hresume[k]
	}
	c.consumeFed() // the interpreter reads next
	in.Fn(c, in)
	if c.blkLen > k+1 && c.exit.Reason == ExitNone {
		return c.runHooked(b, k+1, k+1, true, c.resumable(b))
	}
	return 0
}

// consumeFed tells the ReadFeeder which of the reads it fed translated
// code were made: before Go runs guest instructions, or feeds again.
// Between a hook exit and the translation taking up again (an
// Instruction call, which reads no guest memory through the prediction
// cache), the feed stands (runJIT).
func (c *CPU) consumeFed() {
	if c.jitFeedI > 0 {
		c.jitFeeder.ConsumedReads(c, int(c.jitFeedI))
		c.jitFeedI = 0
	}
	c.jitFeedN = 0
}

// runRest runs b's instructions from index from in the interpreter (for
// runJIT), with the Instruction calls of a filtered Run from hookFrom
// on, and returns an entry into b's translation where it can take up
// again (0: it ran to the block's end).
func (c *CPU) runRest(b *Block, from, hookFrom int) uintptr {
	if !c.hooking {
		c.runInsts(b.Insts, from)
		return 0
	}
	return c.runHooked(b, from, hookFrom, false, c.resumable(b))
}

// resumable reports whether runHooked may enter b's translation: it is
// current and leaves before each instruction the filter observes.
func (c *CPU) resumable(b *Block) bool {
	j := b.jv()
	return b.valid && j.entry != 0 && j.mode == c.jitMode && b.hooksCover()
}
