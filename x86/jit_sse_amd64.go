package x86

import (
	"unsafe"

	"golang.org/x/arch/x86/x86asm"

	as "ttd/internal/amd64asm"
)

// SSE data moves, translated as moves of 64-bit words between guest
// memory, general registers and CPU.X: they need no host XMM state.

var offX = int32(unsafe.Offsetof(CPU{}.X))

// xreg is lane i (0 low, 1 high) of XMM register o.
func xreg(o *Operand, lane int32) as.Mem { return as.M(hCPU, offX+int32(o.Reg)*16+lane*8) }

// sse translates the SSE moves; false for anything else.
func (t *jitT) sse(in *Inst, d, s *Operand) bool {
	if in.NArgs != 2 {
		return false
	}
	a := &t.a
	switch in.Op {
	case x86asm.MOVQ, x86asm.MOVD:
		size := 8
		if in.Op == x86asm.MOVD {
			size = 4
		}
		switch {
		case d.Kind == KXMM && (s.Kind == KReg || s.Kind == KMem) && int(s.Size) == size:
			if s.Kind == KMem {
				t.spill()
			}
			t.srcToR9(s)
			t.commitRead()
			if size == 4 {
				a.MovRR(4, as.R9, as.R9)
			}
			t.xmmLow(d, as.R9)
		case d.Kind == KXMM && s.Kind == KXMM && in.Op == x86asm.MOVQ:
			a.MovRM(8, as.R9, xreg(s, 0))
			t.xmmLow(d, as.R9)
		case d.Kind == KReg && int(d.Size) == size && s.Kind == KXMM:
			a.MovRM(size, as.R8, xreg(s, 0))
			a.MovMR(8, greg(d), as.R8)
		case d.Kind == KMem && int(d.Size) == size && s.Kind == KXMM:
			t.spill()
			t.ea(d)
			t.storeCheck(size, false)
			a.MovRM(size, as.R8, xreg(s, 0))
			t.store(size, as.R8)
		default:
			return false
		}
		return true

	case x86asm.PXOR, x86asm.XORPS, x86asm.XORPD:
		if d.Kind != KXMM || s.Kind != KXMM {
			return false
		}
		if d.Reg == s.Reg {
			a.MovRI(as.R8, 0)
			a.MovMR(8, xreg(d, 0), as.R8)
			a.MovMR(8, xreg(d, 1), as.R8)
			return true
		}
		t.spill() // xor changes the host's flags
		for lane := int32(0); lane < 2; lane++ {
			a.MovRM(8, as.R8, xreg(s, lane))
			a.ALUMR(as.XOR, 8, xreg(d, lane), as.R8)
		}
		return true

	case x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQU, x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVDQA:
		aligned := in.Op == x86asm.MOVAPS || in.Op == x86asm.MOVAPD || in.Op == x86asm.MOVDQA
		switch {
		case d.Kind == KXMM && s.Kind == KXMM:
			for lane := int32(0); lane < 2; lane++ {
				a.MovRM(8, as.R8, xreg(s, lane))
				a.MovMR(8, xreg(d, lane), as.R8)
			}
		case d.Kind == KXMM && s.Kind == KMem:
			t.spill()
			t.ea(s)
			t.load128(aligned)
			a.MovMR(8, xreg(d, 0), as.R9)
			a.MovMR(8, xreg(d, 1), as.R8)
		case d.Kind == KMem && s.Kind == KXMM:
			t.spill()
			t.ea(d)
			t.store128Check(aligned)
			a.MovRM(8, as.R8, xreg(s, 0))
			a.MovRM(8, as.RCX, xreg(s, 1))
			t.store128()
		default:
			return false
		}
		return true

	case x86asm.MOVSD_XMM:
		switch {
		case d.Kind == KXMM && s.Kind == KMem:
			t.spill()
			t.ea(s)
			t.load(8)
			t.commitRead()
			t.xmmLow(d, as.R9)
		case d.Kind == KMem && s.Kind == KXMM:
			t.spill()
			t.ea(d)
			t.storeCheck(8, false)
			a.MovRM(8, as.R8, xreg(s, 0))
			t.store(8, as.R8)
		case d.Kind == KXMM && s.Kind == KXMM:
			a.MovRM(8, as.R8, xreg(s, 0))
			a.MovMR(8, xreg(d, 0), as.R8)
		default:
			return false
		}
		return true
	}
	return false
}

// xmmLow sets XMM d to the 64-bit value in r, upper lane zero.
func (t *jitT) xmmLow(d *Operand, r as.Reg) {
	t.a.MovMR(8, xreg(d, 0), r)
	t.a.MovMI(8, xreg(d, 1), 0)
}

// alignCheck leaves for the interpreter (which raises #GP) when RSI is
// not 16-byte aligned.
func (t *jitT) alignCheck() {
	t.a.TestRI(4, as.RSI, 15)
	t.a.Jcc(5, t.exit()) // jnz
}

// load128 reads 16 bytes at RSI into R9 (low) and R8 (high) as two
// predicted 8-byte reads, as CPU.load128 does: the address must be
// 8-byte aligned for the prediction checks, and neither read the replay's
// Stop read. Counts both reads.
func (t *jitT) load128(aligned bool) {
	a := &t.a
	if aligned {
		t.alignCheck()
	}
	t.tlb(hRTLB, 16)
	a.MovRM(8, as.R9, as.M(as.RDI, 0))
	a.MovRM(8, as.R8, as.M(as.RDI, 8))
	if !t.pred {
		return
	}
	x := t.exit()
	t.wordCheck(8)
	reads := as.M(hPred, offReads)
	a.MovRM(8, as.RAX, reads)
	for i := 0; i < 2; i++ {
		a.ALURI(as.ADD, 8, as.RAX, 1)
		a.ALURM(as.CMP, 8, as.RAX, as.M(hPred, offStop))
		a.Jcc(4, x) // je: a Stop read
	}
	for i, r := range []as.Reg{as.R9, as.R8} {
		a.Lea(8, as.RDX, as.M(as.RSI, int32(8*i)))
		a.ALURM(as.AND, 8, as.RDX, as.M(hCPU, offJitMask))
		a.ALURM(as.CMP, 8, r, as.Mem{Base: hSlots, Index: as.RDX})
		a.Jcc(5, x)
	}
	a.MovMR(8, reads, as.RAX)
}

// store128Check prepares a 16-byte store at RSI: RDI the host address,
// and with the prediction cache RBX and RDX the slots of the two words
// (8-byte aligned, or the interpreter does it).
func (t *jitT) store128Check(aligned bool) {
	a := &t.a
	if aligned {
		t.alignCheck()
	}
	t.tlb(hWTLB, 16)
	if !t.pred {
		return
	}
	t.wordCheck(8)
	t.slot()
	a.Lea(8, as.RDX, as.M(as.RSI, 8))
	a.ALURM(as.AND, 8, as.RDX, as.M(hCPU, offJitMask))
	a.ALURR(as.ADD, 8, as.RDX, hSlots)
}

// store128 writes R8 (low) and RCX (high) where store128Check said.
func (t *jitT) store128() {
	a := &t.a
	a.MovMR(8, as.M(as.RDI, 0), as.R8)
	a.MovMR(8, as.M(as.RDI, 8), as.RCX)
	if t.pred {
		a.MovMR(8, as.M(as.RBX, 0), as.R8)
		a.MovMR(8, as.M(as.RDX, 0), as.RCX)
	}
}
