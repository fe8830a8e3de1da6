package x86

import (
	"math/bits"
	"os"
	"sync/atomic"

	"golang.org/x/arch/x86/x86asm"

	as "ttd/internal/amd64asm"
)

// Guest registers in host registers (issue 24), as qemu's TCG keeps its
// globals: a translation without the prediction cache (jitModeRun) keeps
// the block's most used guest registers in the host registers the cache
// would take (jitCacheRegs). It loads them at each entry (prologue, the
// chain entry, resume and hook-resume entries, which go through prologue)
// and stores the ones the code may have written (as.Asm.Written) at
// every way out: leave (faults, misses of the TLB, instructions left to
// the interpreter, hook exits, the end of the block) and the chaining
// exits, before they jump to the next block's chain entry. Every check
// that can leave comes before the instruction's first register write, as
// it did when the registers lived in the CPU, so Go always finds the
// exact registers of the instruction it takes over.
//
// Measured on bench/cmd/broad (README, Speed): the gain is in the hot
// loops of hashes and compressors, whose blocks use a few registers many
// times.

// jitRegsOn is true with TTD_JITREGS=1; otherwise every guest register
// stays in the CPU, as before. Off by default: on the broad benchmark
// (one loaded run) it gained on python3 (5-7% CPU) and lost on xz -6 of
// random data (10-30%, three runs each), where short blocks pay the
// loads and stores at every entry and exit.
var jitRegsOn = os.Getenv("TTD_JITREGS") == "1"

// jitCacheRegs are the host registers free in a translation without the
// prediction cache: RBX, hReads, hSlots and hMark serve only the cache,
// and hRTLB, which the TLB check loads from the CPU without it (an L1
// hit off the guest's dependency chains). (RSI and RDI would need REX for
// their byte views: as.R refuses them.)
var jitCacheRegs = [...]as.Reg{as.RBX, hReads, hSlots, hMark, hRTLB}

// jitMinUses is the number of uses in a block for a guest register to be
// worth a host register: a load at the entry and a store at the exits
// cost about what one use through memory does.
var jitMinUses = 2

// jitCachedBlocks counts the translations that kept a guest register in
// a host register (tests check that they ran some).
var jitCachedBlocks atomic.Uint64

// allocRegs picks the guest registers that the translation of b keeps in
// host registers (jitT.cached, jitT.host).
func (t *jitT) allocRegs(b *Block) {
	t.cached, t.regsLive = 0, false
	if t.pred || !jitRegsOn {
		return
	}
	var uses [16]int
	var banned uint16 // used as AH, CH, DH or BH: a host register has no such view we can name
	for i := range b.Insts {
		in := &b.Insts[i]
		for j := 0; j < int(in.NArgs); j++ {
			o := &in.Args[j]
			switch o.Kind {
			case KReg:
				uses[o.Reg&15]++
			case KReg8H:
				banned |= 1 << (o.Reg & 15)
			case KMem:
				if o.Base < NoReg {
					uses[o.Base]++
				}
				if o.Index < NoReg {
					uses[o.Index]++
				}
			}
		}
		switch in.Op {
		case x86asm.PUSH, x86asm.POP, x86asm.CALL, x86asm.RET:
			uses[RSP] += 2
		case x86asm.LEAVE:
			uses[RSP] += 2
			uses[RBP]++
		}
	}
	for _, h := range jitCacheRegs {
		best, n := -1, jitMinUses-1
		for r, u := range uses {
			if u > n && banned>>r&1 == 0 && t.cached>>r&1 == 0 {
				best, n = r, u
			}
		}
		if best < 0 {
			break
		}
		t.cached |= 1 << best
		t.host[best] = h
	}
	if t.cached != 0 {
		jitCachedBlocks.Add(1)
	}
}

// greg is the operand of a guest register: its host register or its
// place in the CPU.
func (t *jitT) greg(o *Operand) as.Mem {
	if o.Kind == KReg8H {
		if t.cached>>o.Reg&1 != 0 {
			panic("jit: AH, CH, DH or BH of a register kept in a host register")
		}
		return as.M(hCPU, offR+int32(o.Reg)*8+1)
	}
	return t.gregN(o.Reg)
}

// gregN is the 64-bit operand of guest register r.
func (t *jitT) gregN(r uint8) as.Mem {
	if t.cached>>r&1 != 0 {
		return as.R(t.host[r])
	}
	return as.M(hCPU, offR+int32(r)*8)
}

// loadRegs loads the cached guest registers from the CPU (no flags).
func (t *jitT) loadRegs() {
	for c := t.cached; c != 0; c &= c - 1 {
		r := bits.TrailingZeros16(c)
		t.a.MovRM(8, t.host[r], as.M(hCPU, offR+int32(r)*8))
	}
}

// storeRegs stores the cached guest registers that the code emitted so far
// may have written into the CPU (no flags); nothing where they are not
// loaded yet (regsLive).
func (t *jitT) storeRegs() {
	if !t.regsLive {
		return
	}
	for c := t.cached; c != 0; c &= c - 1 {
		r := bits.TrailingZeros16(c)
		if t.a.Written>>t.host[r]&1 != 0 {
			t.a.MovMR(8, as.M(hCPU, offR+int32(r)*8), t.host[r])
		}
	}
}

// leaveStored is leave after storeRegs has run on this path.
func (t *jitT) leaveStored(k int, st uint8) {
	live := t.regsLive
	t.regsLive = false
	t.leave(k, st)
	t.regsLive = live
}
