package x86

import (
	"os"
	"strconv"
	"unsafe"
)

// Block translation ("JIT"): a block that has run jitThreshold times in
// full is translated to host code (jit_amd64.go) that does what the
// interpreter's handlers do for its instructions, without the dispatch
// loop, the decoded-operand loads and the lazy-flag bookkeeping: the guest's
// flags live in the host's RFLAGS between a flag-setting instruction and
// its reader.
//
// The translated code is a leaf: it calls nothing, so Go's stack unwinding
// never has to cross it, and it runs only while no observer needs to see
// each instruction (Run's fast loop). Guest registers stay in the CPU
// struct; memory accesses check the TLBs and, while recording or replaying,
// the prediction cache inline. Anything the fast path cannot do — a TLB or
// prediction miss, a read the replay must take from the trace, a write to
// a page holding code, an instruction it does not translate — leaves the
// translated code *before* that instruction, with every earlier
// instruction's effects committed and none of its own, and the interpreter
// runs the rest of the block. The result is the interpreter's, bit for bit:
// the flags that the hardware leaves undefined (shift AF and OF, multiply
// SF, ZF, AF and PF) are set the interpreter's way wherever they can be
// seen, so that a recording and its replay agree whichever of the two ran a
// block.

// jitBlock is a block's translation state.
type jitBlock struct {
	entry uintptr // start of the host code; 0 when none
	heat  uint32  // full runs so far, until translation
	// pred: the code checks the prediction cache (CPU.Pred set).
	pred bool
	// flagsIn: the code reads the flags the block starts with, from
	// CPU.flags, so they must be materialized first.
	flagsIn bool
	// declined: translation found nothing to translate; do not retry.
	declined bool
}

// jitThreshold is the number of full runs of a block before it is
// translated; jitEnabled turns translation on. TTD_JIT=off disables it and
// TTD_JIT=N sets the threshold (N=0 translates every block at once: the
// tests run that way to exercise the translator on everything).
var jitThreshold, jitEnabled = func() (uint32, bool) {
	v := os.Getenv("TTD_JIT")
	if v == "off" || v == "0ff" || !jitSupported {
		return 0, false
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return uint32(n), true
	}
	return 50, true
}()

// SetJIT turns block translation on or off and sets its threshold (for
// tests and benchmarks); it reports the previous settings.
func SetJIT(on bool, threshold uint32) (wasOn bool, was uint32) {
	wasOn, was = jitEnabled, jitThreshold
	jitEnabled, jitThreshold = on && jitSupported, threshold
	return
}

// runBlock runs all of b: through its translation when it has one (or has
// earned one), then the interpreter from wherever the translation left.
func (c *CPU) runBlock(b *Block) {
	j := &b.jit
	if j.entry == 0 || j.pred != (c.Pred != nil) {
		if !c.jitOK || j.declined || j.heat < jitThreshold {
			j.heat++
			c.runInsts(b.Insts, 0)
			return
		}
		c.cache.translate(b, c.Pred != nil)
		if j.entry == 0 {
			c.runInsts(b.Insts, 0)
			return
		}
	}
	if j.flagsIn {
		c.materialize()
	}
	r := jitCall(j.entry, unsafe.Pointer(c))
	k := int(r &^ jitStop)
	c.blkIdx = k
	if r&jitStop != 0 {
		c.blkLen = k // a taken jump ended the block
	} else if k < c.blkLen {
		c.runInsts(b.Insts, k)
	}
}

// syncJIT prepares the translated code's view of the CPU for a Run.
func (c *CPU) syncJIT() {
	c.jitOK = jitEnabled && (c.Obs == nil || c.Pred != nil)
	c.jitPred = c.Pred
	if c.Pred != nil {
		c.jitSlots, c.jitSlotMask = c.Pred.Words()
	}
}
