package x86

import (
	"math/bits"
	"os"
	"sync/atomic"

	"golang.org/x/arch/x86/x86asm"

	as "ttd/internal/amd64asm"
)

// Guest registers in host registers (issue 24), allocated as qemu's TCG
// allocates its globals: in a translation without the prediction cache
// (jitModeRun), a guest register that an instruction names and that the
// block uses again is loaded into one of the host registers the cache
// would take (jitCacheRegs) just before that instruction, and stays there
// until the block ends or the register is evicted for another one (the
// resident register used farthest ahead, stored first if written). A
// register is stored back into the CPU only if the code wrote it
// (jitT.dirty), and only at the ways out that run: leave (faults, misses
// of the TLB, instructions left to the interpreter, the end of the
// block), the chaining exits before they jump to the next block, and an
// eviction. Each way out stores the registers dirty at its own point of
// the code (jitRegState, taken when the exit is made); each entry in
// the middle of a block (resume entries) loads those resident there.
// Every check that can leave comes before the instruction's first
// register write, as it did when the registers lived in the CPU, so Go
// always finds the exact registers of the instruction it takes over.
//
// Loading lazily, per instruction, is what makes it pay on short blocks:
// the first version loaded the block's five most used registers at every
// entry and stored all it wrote at every exit, which cost more than it
// saved on xz's short blocks, and stayed off.

// jitRegsOn: TTD_JITREGS=0 keeps every guest register in the CPU (for
// comparisons: the translations do the same either way).
var jitRegsOn = os.Getenv("TTD_JITREGS") != "0"

// jitCacheRegs are the host registers free in a translation without the
// prediction cache: RBX, hReads, hSlots and hMark serve only the cache.
// (hRTLB stays the TLB's base: giving it to a fifth guest register made
// no measurable difference on sha256sum, xz, jq or python3, and every
// memory access loaded the base instead. RSI and RDI would need REX for
// their byte views: as.R refuses them.)
var jitCacheRegs = [...]as.Reg{as.RBX, hReads, hSlots, hMark}

// jitMinUses is the number of uses in the rest of a block for a guest
// register to be loaded into a host register: used once, it costs the
// same in memory, and keeping it would evict another.
var jitMinUses = 2

// jitCachedBlocks counts the translations that kept a guest register in
// a host register, jitEvictions the guest registers evicted for another
// (tests check that they ran some).
var jitCachedBlocks, jitEvictions atomic.Uint64

// jitRegState is where the guest registers are at a point of translated
// code: those in cached (bit r) in host register host[r], of which
// those in dirty were written since they were loaded.
type jitRegState struct {
	cached, dirty uint16
	host          [16]as.Reg
}

// instRegs returns the guest registers in's operands name (uses), and
// those it names as AH, CH, DH or BH (banned: a host register has no such
// view we can name).
func instRegs(in *Inst) (uses, banned uint16) {
	for j := 0; j < int(in.NArgs); j++ {
		o := &in.Args[j]
		switch o.Kind {
		case KReg:
			uses |= 1 << (o.Reg & 15)
		case KReg8H:
			banned |= 1 << (o.Reg & 15)
		case KMem:
			if o.Base < NoReg {
				uses |= 1 << o.Base
			}
			if o.Index < NoReg {
				uses |= 1 << o.Index
			}
		}
	}
	switch in.Op {
	case x86asm.PUSH, x86asm.POP, x86asm.CALL, x86asm.RET:
		uses |= 1 << RSP
	case x86asm.LEAVE:
		uses |= 1<<RSP | 1<<RBP
	}
	return uses &^ banned, banned
}

// allocRegs prepares the register allocation of b's translation: none
// resident at its start.
func (t *jitT) allocRegs(b *Block) {
	t.regs, t.regsLive, t.counted = jitRegState{}, false, false
	t.regsOn = !t.pred && jitRegsOn
	if !t.regsOn {
		return
	}
	for i := range b.Insts {
		t.uses[i], t.banned[i] = instRegs(&b.Insts[i])
	}
}

// nextUse is the first instruction from k on that uses guest register r,
// or len(b.Insts).
func (t *jitT) nextUse(r int, k int) int {
	n := len(t.b.Insts)
	for ; k < n; k++ {
		if (t.uses[k]|t.banned[k])>>r&1 != 0 {
			return k
		}
	}
	return n
}

// writeOnly says that in writes all 64 bits of guest register r without
// reading it (so that it need not be loaded), whenever it does not leave
// before itself.
func writeOnly(in *Inst, r int) bool {
	d := &in.Args[0]
	if d.Kind != KReg || int(d.Reg) != r || d.Size < 4 {
		return false
	}
	switch in.Op {
	case x86asm.MOV, x86asm.LEA, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD:
	case x86asm.POP:
		if r == RSP {
			return false
		}
	default:
		return false
	}
	if in.NArgs != 2 && in.Op != x86asm.POP {
		return false
	}
	if in.NArgs == 2 {
		s := &in.Args[1]
		if (s.Kind == KReg || s.Kind == KReg8H) && int(s.Reg&15) == r || s.Kind == KMem && (int(s.Base) == r || int(s.Index) == r) {
			return false
		}
	}
	return true
}

// regsFor makes resident the guest registers instruction k uses that the
// block uses again, before its code (no flags).
func (t *jitT) regsFor(k int) {
	if !t.regsOn {
		return
	}
	for c := t.banned[k] & t.regs.cached; c != 0; c &= c - 1 {
		t.evict(bits.TrailingZeros16(c))
	}
	in := &t.b.Insts[k]
	for c := t.uses[k] &^ t.regs.cached; c != 0; c &= c - 1 {
		r := bits.TrailingZeros16(c)
		next := t.nextUse(r, k+1)
		if jitMinUses > 1 && next == len(t.b.Insts) {
			continue // not used again: memory does as well
		}
		h, ok := t.freeHost(t.uses[k], next)
		if !ok {
			continue
		}
		t.regs.host[r] = h
		t.regs.cached |= 1 << r
		if !writeOnly(in, r) {
			t.a.MovRM(8, h, as.M(hCPU, offR+int32(r)*8))
		}
		if !t.counted {
			t.counted = true
			jitCachedBlocks.Add(1)
		}
	}
}

// freeHost returns a host register for a guest register whose next use
// after this instruction is at next: a free one, or the one of the
// resident register that is not in keep and is used farthest ahead, if
// that is after next.
func (t *jitT) freeHost(keep uint16, next int) (as.Reg, bool) {
	var busy uint16
	for c := t.regs.cached; c != 0; c &= c - 1 {
		busy |= 1 << t.regs.host[bits.TrailingZeros16(c)]
	}
	for _, h := range jitCacheRegs {
		if busy>>h&1 == 0 {
			return h, true
		}
	}
	victim, far := -1, next
	for c := t.regs.cached &^ keep; c != 0; c &= c - 1 {
		r := bits.TrailingZeros16(c)
		if u := t.nextUse(r, t.k+1); u > far || u == far && victim >= 0 && t.regs.dirty>>victim&1 != 0 {
			victim, far = r, u
		}
	}
	if victim < 0 {
		return 0, false
	}
	h := t.regs.host[victim]
	t.evict(victim)
	jitEvictions.Add(1)
	return h, true
}

// evict stores guest register r into the CPU if it is dirty, and takes it
// out of its host register (no flags).
func (t *jitT) evict(r int) {
	if t.regs.dirty>>r&1 != 0 {
		t.a.MovMR(8, as.M(hCPU, offR+int32(r)*8), t.regs.host[r])
	}
	t.regs.cached &^= 1 << r
	t.regs.dirty &^= 1 << r
}

// flushRegs stores the dirty guest registers and leaves none resident.
func (t *jitT) flushRegs() {
	for c := t.regs.cached; c != 0; c &= c - 1 {
		t.evict(bits.TrailingZeros16(c))
	}
}

// wrote marks dirty the resident registers whose host registers the code
// of an instruction wrote (as.Asm.Written since the instruction began).
func (t *jitT) wrote() {
	for c := t.regs.cached; c != 0; c &= c - 1 {
		r := bits.TrailingZeros16(c)
		if t.a.Written>>t.regs.host[r]&1 != 0 {
			t.regs.dirty |= 1 << r
		}
	}
	t.a.Written = 0
}

// greg is the operand of a guest register: its host register or its
// place in the CPU.
func (t *jitT) greg(o *Operand) as.Mem {
	if o.Kind == KReg8H {
		if t.regs.cached>>o.Reg&1 != 0 {
			panic("jit: AH, CH, DH or BH of a register kept in a host register")
		}
		return as.M(hCPU, offR+int32(o.Reg)*8+1)
	}
	return t.gregN(o.Reg)
}

// gregN is the 64-bit operand of guest register r.
func (t *jitT) gregN(r uint8) as.Mem {
	if t.regs.cached>>r&1 != 0 {
		return as.R(t.regs.host[r])
	}
	return as.M(hCPU, offR+int32(r)*8)
}

// loadRegs loads the resident guest registers from the CPU, at an entry
// into the middle of a block; they are clean there (no flags).
func (t *jitT) loadRegs() {
	for c := t.regs.cached; c != 0; c &= c - 1 {
		r := bits.TrailingZeros16(c)
		t.a.MovRM(8, t.regs.host[r], as.M(hCPU, offR+int32(r)*8))
	}
}

// storeRegs stores the dirty guest registers into the CPU (no flags);
// nothing where the block's code has not begun (regsLive).
func (t *jitT) storeRegs() {
	if !t.regsLive {
		return
	}
	for c := t.regs.cached & t.regs.dirty; c != 0; c &= c - 1 {
		r := bits.TrailingZeros16(c)
		t.a.MovMR(8, as.M(hCPU, offR+int32(r)*8), t.regs.host[r])
	}
}

// leaveStored is leave after storeRegs has run on this path.
func (t *jitT) leaveStored(k int, st uint8) {
	live := t.regsLive
	t.regsLive = false
	t.leave(k, st)
	t.regsLive = live
}

// hostOf returns the host register that holds the guest register o
// names, when o is a whole register (KReg) kept in one.
func (t *jitT) hostOf(o *Operand) (as.Reg, bool) {
	if o.Kind != KReg || t.regs.cached>>o.Reg&1 == 0 {
		return 0, false
	}
	return t.regs.host[o.Reg], true
}

// wroteHost notes that the code just emitted wrote host register h
// directly (not through a Direct operand, which as.Asm.Written notes).
func (t *jitT) wroteHost(h as.Reg) { t.a.Written |= 1 << h }

// hostEA returns memory operand o as one host operand, when it has a
// base and needs no segment base or 32-bit wrap: on the host registers of
// its base and index, or RSI and RDX, into which it loads those kept in
// the CPU (no flags). One lea computes the address.
func (t *jitT) hostEA(o *Operand) (as.Mem, bool) {
	if o.Base == NoReg || o.Seg != SegNone || o.A32 || int64(int32(o.Imm)) != int64(o.Imm) {
		return as.Mem{}, false
	}
	m := as.Mem{Base: as.RSI, Index: as.NoIndex, Disp: int32(o.Imm)}
	if h, ok := t.hostReg(o.Base); ok {
		m.Base = h
	} else {
		t.a.MovRM(8, as.RSI, t.gregN(o.Base))
	}
	if o.Index != NoReg {
		m.Index, m.Scale = as.RDX, o.Scale
		if h, ok := t.hostReg(o.Index); ok {
			m.Index = h
		} else {
			t.a.MovRM(8, as.RDX, t.gregN(o.Index))
		}
	}
	return m, true
}

// hostReg returns the host register that holds guest register r, if one
// does.
func (t *jitT) hostReg(r uint8) (as.Reg, bool) {
	if t.regs.cached>>r&1 == 0 {
		return 0, false
	}
	return t.regs.host[r], true
}

// isHost says that o is a whole guest register kept in a host register.
func (t *jitT) isHost(o *Operand) bool {
	_, ok := t.hostOf(o)
	return ok
}
