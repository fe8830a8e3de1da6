package x86

// Filtered observation: an Observer that wants instructions (a Hook) and
// implements BlockFilter sees the Instruction calls of the blocks it
// accepts only; the blocks it declines run as without observation,
// through their translations (jit.go), which chain to each other without
// returning to Go. What keeps the callbacks exact is that a translation
// never chains into a block the filter accepts:
//
//   - a block's verdict is asked once and kept in the block (jitBlock.fgen,
//     fwant) for the filter its code cache holds verdicts of
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
// A HookGate adds a verdict that changes with the observer's state (the
// instructions after a call, say): it is asked, before each declined
// block that execution reaches through Go, whether to observe it anyway.
// Its answer may change only during Instruction calls, that is, in
// accepted or gated blocks, after which execution comes back to Go and
// asks again; translations chained from a declined block never run an
// Instruction call, so they cannot miss a change.

// filterState is what a code cache knows of the filter whose verdicts its
// blocks hold.
type filterState struct {
	// owner is the BlockFilter of the current verdicts; nil: none, and
	// translations may be linked to any block.
	owner BlockFilter
	// version is owner's FilterVersion when the verdicts were asked.
	version uint64
	// gen numbers the generations of verdicts: a block holds owner's
	// verdict when its jitBlock.fgen is gen.
	gen uint32
}

// FilterVersion, when a BlockFilter implements it, numbers the versions
// of its verdicts: a new version makes the blocks ask WantBlock again.
// Without it, a filter's verdict on a block is asked once for as long as
// it is the filter of the block's code cache.
type FilterVersion interface {
	FilterVersion() uint64
}

// HookGate, when an Observer that is a BlockFilter implements it, lets the
// observer see the blocks its filter declines while HookAll reports true
// (asked before each such block that execution reaches through Go). Its
// answer may change only during Instruction calls, or between Runs.
type HookGate interface {
	HookAll(c *CPU) bool
}

// useFilter makes bf the filter whose verdicts cc's blocks hold: for
// another filter than the current one, a new generation of verdicts, and
// no translation linked to any block until it is known to be declined.
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

// wants is bf's verdict on b, asked once per generation. A block bf
// accepts is unlinked from every translation; a declined one's
// translation is found by address again.
func (cc *CodeCache) wants(bf BlockFilter, b *Block) bool {
	j := &b.jit
	if j.fgen != cc.filter.gen || filterAskAlways {
		j.fgen = cc.filter.gen
		j.fwant = bf.WantBlock(b)
		if j.fwant {
			cc.unlinkJIT(b)
		} else {
			cc.relinkJIT(b)
		}
	}
	return j.fwant
}

// filterAskAlways makes wants ask the filter every time, as the tests'
// reference (with translation off).
var filterAskAlways bool

// linkable reports whether translations may be linked to b: always
// without a filter, else when b's current verdict is "declined".
func (cc *CodeCache) linkable(b *Block) bool {
	return cc.filter.owner == nil || b.jit.fgen == cc.filter.gen && !b.jit.fwant
}
