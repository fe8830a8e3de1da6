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
		return t.sseNative(in, d, s) // the forms with an imm8 (pshufd, palignr, ...)
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
			a.MovMR(8, t.greg(d), as.R8)
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

	case x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQU, x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVDQA:
		aligned := in.Op == x86asm.MOVAPS || in.Op == x86asm.MOVAPD || in.Op == x86asm.MOVDQA
		switch {
		case d.Kind == KXMM && s.Kind == KXMM:
			a.SSERM(sseLoad16, 0, xmmSlot(s.Reg))
			a.SSERM(sseStore16, 0, xmmSlot(d.Reg))
		case d.Kind == KXMM && s.Kind == KMem:
			t.spill()
			t.ea(s)
			t.load128(aligned)
			a.SSERM(sseLoad16, 0, as.M(as.RDI, 0))
			a.SSERM(sseStore16, 0, xmmSlot(d.Reg))
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
			a.SSERM(sseLoad16, 0, xmmSlot(d.Reg))
			a.SSERM(sseLoad16, 1, xmmSlot(s.Reg))
			a.SSERR(sseMovsd, 0, 1)
			a.SSERM(sseStore16, 0, xmmSlot(d.Reg))
		default:
			return false
		}
		return true
	}
	return t.sseNative(in, d, s)
}

// xmmLow sets XMM d to the 64-bit value in r, upper lane zero. CPU.X is
// written 16 bytes at a time, so that the next instruction's 16-byte load
// of the register can take the value from the store.
func (t *jitT) xmmLow(d *Operand, r as.Reg) {
	t.a.SSERR(sseMovqFromGPR, 0, r)
	t.a.SSERM(sseStore16, 0, xmmSlot(d.Reg))
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
	t.tlb(false, 16)
	a.MovRM(8, as.R9, as.M(as.RDI, 0))
	a.MovRM(8, as.R8, as.M(as.RDI, 8))
	if !t.pred {
		return
	}
	x := t.exit()
	// Two 8-byte reads, each of them two if the address is not 8-byte
	// aligned (CPU.load128, predict.Split): the cross code's 2 more.
	t.cacheByte(as.RDX)
	done := a.NewLabel()
	t.cross(jitCross{size: 16, extra: 2, vals: [4]as.Reg{as.R9, as.R8}}, x, done)
	// The second word's slot follows the first's unless the first's is
	// the cache's last (CPU.load128 takes the first slot then).
	t.slotWrap(as.RDX, 16, x)
	stop := t.repWords(2, done, x)
	for i := int32(0); i < 2 && !t.log; i++ { // a recording has no Stop read
		t.stopCheck(t.sreads+i, stop)
	}
	for i, r := range []as.Reg{as.R9, as.R8} {
		a.ALURM(as.CMP, 8, r, as.Mem{Base: hSlots, Index: as.RDX, Disp: int32(8 * i)})
		m := jitMiss{miss: a.NewLabel(), back: a.NewLabel(), exit: x, size: 8, val: r, word: int32(i), off: int32(8 * i), pos: t.sreads}
		a.Jcc(5, m.miss)
		a.Bind(m.back)
		t.misses = append(t.misses, m)
	}
	a.Bind(done)
	t.sreads += 2
}

// store128Check prepares a 16-byte store at RSI: RDI the host address,
// and with the prediction cache RBX and RDX the slots of the two words
// (8-byte aligned, or the interpreter does it).
func (t *jitT) store128Check(aligned bool) {
	a := &t.a
	if aligned {
		t.alignCheck()
	}
	t.tlb(true, 16)
	if !t.pred {
		return
	}
	t.slot(16, true)
	a.Lea(8, as.RDX, as.M(as.RBX, 8))
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

// jitSSE describes an SSE instruction the translator runs on the host's
// XMM0 and XMM1, with the guest's registers loaded from and stored to
// CPU.X: integer and bitwise operations are exact anywhere; floating-point
// ones (fp) only while the guest's MXCSR is the default with PE set, the
// state in which the host's MXCSR computes exactly what the guest's would
// (see hostfp.go: the host's exception flags are merged at the end of Run).
type jitSSE struct {
	enc   as.SSE
	fp    bool
	digit int8 // shifts by an immediate: the ModRM.reg digit (-1: none)
	imm   bool // takes an immediate byte
}

var jitSSEOps = func() map[x86asm.Op]jitSSE {
	m := map[x86asm.Op]jitSSE{}
	add := func(op x86asm.Op, pfx, code byte, fp bool) {
		m[op] = jitSSE{enc: as.SSE{Prefix: pfx, Op: code}, fp: fp, digit: -1}
	}
	for op, code := range map[x86asm.Op]byte{
		x86asm.PAND: 0xdb, x86asm.PANDN: 0xdf, x86asm.POR: 0xeb, x86asm.PXOR: 0xef,
		x86asm.PADDB: 0xfc, x86asm.PADDW: 0xfd, x86asm.PADDD: 0xfe, x86asm.PADDQ: 0xd4,
		x86asm.PSUBB: 0xf8, x86asm.PSUBW: 0xf9, x86asm.PSUBD: 0xfa, x86asm.PSUBQ: 0xfb,
		x86asm.PCMPEQB: 0x74, x86asm.PCMPEQW: 0x75, x86asm.PCMPEQD: 0x76,
		x86asm.PCMPGTB: 0x64, x86asm.PCMPGTW: 0x65, x86asm.PCMPGTD: 0x66,
		x86asm.PUNPCKLBW: 0x60, x86asm.PUNPCKLWD: 0x61, x86asm.PUNPCKLDQ: 0x62, x86asm.PUNPCKLQDQ: 0x6c,
		x86asm.PUNPCKHBW: 0x68, x86asm.PUNPCKHWD: 0x69, x86asm.PUNPCKHDQ: 0x6a, x86asm.PUNPCKHQDQ: 0x6d,
		x86asm.PMINUB: 0xda, x86asm.PMAXUB: 0xde, x86asm.PMINSW: 0xea, x86asm.PMAXSW: 0xee,
		x86asm.PMULLW: 0xd5, x86asm.PMULUDQ: 0xf4,
		x86asm.ANDPD: 0x54, x86asm.ANDNPD: 0x55, x86asm.ORPD: 0x56, x86asm.XORPD: 0x57,
		x86asm.UNPCKLPD: 0x14, x86asm.UNPCKHPD: 0x15,
		x86asm.PMOVMSKB: 0xd7, x86asm.MOVMSKPD: 0x50,
	} {
		add(op, 0x66, code, false)
	}
	for op, code := range map[x86asm.Op]byte{
		x86asm.ANDPS: 0x54, x86asm.ANDNPS: 0x55, x86asm.ORPS: 0x56, x86asm.XORPS: 0x57,
		x86asm.UNPCKLPS: 0x14, x86asm.UNPCKHPS: 0x15, x86asm.MOVMSKPS: 0x50,
	} {
		add(op, 0, code, false)
	}
	for _, f := range []struct {
		sd, ss, pd, ps x86asm.Op
		code           byte
	}{
		{x86asm.ADDSD, x86asm.ADDSS, x86asm.ADDPD, x86asm.ADDPS, 0x58},
		{x86asm.MULSD, x86asm.MULSS, x86asm.MULPD, x86asm.MULPS, 0x59},
		{x86asm.SUBSD, x86asm.SUBSS, x86asm.SUBPD, x86asm.SUBPS, 0x5c},
		{x86asm.MINSD, x86asm.MINSS, x86asm.MINPD, x86asm.MINPS, 0x5d},
		{x86asm.DIVSD, x86asm.DIVSS, x86asm.DIVPD, x86asm.DIVPS, 0x5e},
		{x86asm.MAXSD, x86asm.MAXSS, x86asm.MAXPD, x86asm.MAXPS, 0x5f},
		{x86asm.SQRTSD, x86asm.SQRTSS, x86asm.SQRTPD, x86asm.SQRTPS, 0x51},
	} {
		add(f.sd, 0xf2, f.code, true)
		add(f.ss, 0xf3, f.code, true)
		add(f.pd, 0x66, f.code, true)
		add(f.ps, 0, f.code, true)
	}
	add(x86asm.CVTSD2SS, 0xf2, 0x5a, true)
	add(x86asm.CVTSS2SD, 0xf3, 0x5a, true)
	add(x86asm.CVTPS2PD, 0, 0x5a, true)
	add(x86asm.CVTPD2PS, 0x66, 0x5a, true)
	add(x86asm.CVTDQ2PD, 0xf3, 0xe6, true)
	add(x86asm.CVTDQ2PS, 0, 0x5b, true)
	add(x86asm.CVTTPS2DQ, 0xf3, 0x5b, true)
	add(x86asm.CVTSI2SD, 0xf2, 0x2a, true)
	add(x86asm.CVTSI2SS, 0xf3, 0x2a, true)
	add(x86asm.CVTTSD2SI, 0xf2, 0x2c, true)
	add(x86asm.CVTSD2SI, 0xf2, 0x2d, true)
	add(x86asm.CVTTSS2SI, 0xf3, 0x2c, true)
	add(x86asm.CVTSS2SI, 0xf3, 0x2d, true)
	add(x86asm.UCOMISD, 0x66, 0x2e, true)
	add(x86asm.COMISD, 0x66, 0x2f, true)
	add(x86asm.UCOMISS, 0, 0x2e, true)
	add(x86asm.COMISS, 0, 0x2f, true)
	m[x86asm.PSHUFD] = jitSSE{enc: as.SSE{Prefix: 0x66, Op: 0x70}, digit: -1, imm: true}
	m[x86asm.SHUFPD] = jitSSE{enc: as.SSE{Prefix: 0x66, Op: 0xc6}, digit: -1, imm: true}
	m[x86asm.SHUFPS] = jitSSE{enc: as.SSE{Op: 0xc6}, digit: -1, imm: true}
	for op, e := range map[x86asm.Op][2]byte{
		x86asm.PSRLW: {0x71, 2}, x86asm.PSRAW: {0x71, 4}, x86asm.PSLLW: {0x71, 6},
		x86asm.PSRLD: {0x72, 2}, x86asm.PSRAD: {0x72, 4}, x86asm.PSLLD: {0x72, 6},
		x86asm.PSRLQ: {0x73, 2}, x86asm.PSRLDQ: {0x73, 3}, x86asm.PSLLQ: {0x73, 6}, x86asm.PSLLDQ: {0x73, 7},
	} {
		m[op] = jitSSE{enc: as.SSE{Prefix: 0x66, Op: e[0]}, digit: int8(e[1]), imm: true}
	}
	if jitSSSE3 {
		m[x86asm.PSHUFB] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x38, Op: 0x00}, digit: -1}
		for op, code := range map[x86asm.Op]byte{
			x86asm.PHADDW: 0x01, x86asm.PHADDD: 0x02, x86asm.PMADDUBSW: 0x04, x86asm.PSIGNB: 0x08,
			x86asm.PSIGNW: 0x09, x86asm.PSIGND: 0x0a, x86asm.PMULHRSW: 0x0b, x86asm.PABSB: 0x1c,
			x86asm.PABSW: 0x1d, x86asm.PABSD: 0x1e,
		} {
			m[op] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x38, Op: code}, digit: -1}
		}
		m[x86asm.PALIGNR] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x3a, Op: 0x0f}, digit: -1, imm: true}
	}
	if jitSSE41 {
		// The integer operations of SSE4.1 (x86-64-v2 code and glibc's
		// sse4 string functions), rounding (fp: exact only in the
		// default MXCSR state) and ptest (its flags as ucomisd's).
		for op, code := range map[x86asm.Op]byte{
			x86asm.PTEST: 0x17, x86asm.PMULDQ: 0x28, x86asm.PCMPEQQ: 0x29, x86asm.PACKUSDW: 0x2b,
			x86asm.PMINSB: 0x38, x86asm.PMINSD: 0x39, x86asm.PMINUW: 0x3a, x86asm.PMINUD: 0x3b,
			x86asm.PMAXSB: 0x3c, x86asm.PMAXSD: 0x3d, x86asm.PMAXUW: 0x3e, x86asm.PMAXUD: 0x3f,
			x86asm.PMULLD: 0x40,
		} {
			m[op] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x38, Op: code}, digit: -1}
		}
		for op, code := range map[x86asm.Op]byte{
			x86asm.ROUNDPS: 0x08, x86asm.ROUNDPD: 0x09, x86asm.ROUNDSS: 0x0a, x86asm.ROUNDSD: 0x0b,
		} {
			m[op] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x3a, Op: code}, digit: -1, imm: true, fp: true}
		}
		for op, code := range map[x86asm.Op]byte{x86asm.BLENDPS: 0x0c, x86asm.BLENDPD: 0x0d, x86asm.PBLENDW: 0x0e} {
			m[op] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x3a, Op: code}, digit: -1, imm: true}
		}
	}
	if jitSSE42 {
		m[x86asm.PCMPGTQ] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x38, Op: 0x37}, digit: -1}
	}
	return m
}()

// Host encodings of the moves between XMM registers and memory.
var (
	sseLoad16  = as.SSE{Prefix: 0xf3, Op: 0x6f} // movdqu xmm, m128
	sseStore16 = as.SSE{Prefix: 0xf3, Op: 0x7f} // movdqu m128, xmm
	sseLoad8   = as.SSE{Prefix: 0xf3, Op: 0x7e} // movq xmm, m64
	sseLoad4   = as.SSE{Prefix: 0x66, Op: 0x6e} // movd xmm, m32
	// movq xmm, r64 (zeroing the upper lane)
	sseMovqFromGPR = as.SSE{Prefix: 0x66, Op: 0x6e, W: true}
	sseMovsd       = as.SSE{Prefix: 0xf2, Op: 0x10} // movsd xmm, xmm (low lane)
)

var offMXCSR = int32(unsafe.Offsetof(CPU{}.MXCSR))

// xmmSlot is the CPU.X slot of XMM register r.
func xmmSlot(r uint8) as.Mem { return as.M(hCPU, offX+int32(r)*16) }

// sseNative translates the instructions of jitSSEOps.
func (t *jitT) sseNative(in *Inst, d, s *Operand) bool {
	op, ok := jitSSEOps[in.Op]
	if !ok {
		return false
	}
	a := &t.a
	n := int(in.NArgs)
	enc := op.enc
	var imm uint8
	switch {
	case op.digit >= 0:
		if n != 2 || d.Kind != KXMM || s.Kind != KImm {
			return false
		}
	case op.imm:
		if n != 3 || in.Args[2].Kind != KImm || d.Kind != KXMM || s.Kind != KXMM && s.Kind != KMem {
			return false
		}
		imm = uint8(in.Args[2].Imm)
	default:
		if n != 2 || d.Kind != KXMM && d.Kind != KReg || s.Kind != KXMM && s.Kind != KMem && s.Kind != KReg ||
			d.Kind == KReg && s.Kind == KReg {
			return false
		}
	}
	// REX.W: a 64-bit general register (cvtsi2sd from one, cvttsd2si
	// into one) or a 64-bit integer in memory (cvtsi2sd m64).
	switch in.Op {
	case x86asm.CVTSI2SD, x86asm.CVTSI2SS:
		enc.W = s.Size == 8
	case x86asm.CVTTSD2SI, x86asm.CVTSD2SI, x86asm.CVTTSS2SI, x86asm.CVTSS2SI:
		enc.W = d.Size == 8
	}
	if s.Kind == KMem && (s.Size != 16 && s.Size != 8 && s.Size != 4 || t.legacy && sseFast[in.Op].xm != nil) {
		return false // (sseFast: replaying, the interpreter may read the operand twice)
	}
	checks := op.fp && !t.mxChecked || s.Kind == KMem
	if checks {
		t.spill()
	}
	if op.fp && !t.mxChecked {
		// Translated code does not change MXCSR: one check holds up to
		// the next instruction the interpreter runs.
		a.MovRM(4, as.RAX, as.M(hCPU, offMXCSR))
		a.ALURI(as.AND, 4, as.RAX, 0xffe0)
		a.ALURI(as.CMP, 4, as.RAX, 0x1fa0)
		a.Jcc(5, t.exit())
		t.mxChecked = true
	}
	src := as.Reg(1) // XMM1, or a general register
	switch s.Kind {
	case KMem:
		t.ea(s)
		switch s.Size {
		case 16:
			t.load128(true) // legacy SSE memory operands are aligned
			a.SSERM(sseLoad16, 1, as.M(as.RDI, 0))
		case 8, 4:
			t.load(int(s.Size))
			t.commitRead()
			if d.Kind == KXMM && (in.Op == x86asm.CVTSI2SD || in.Op == x86asm.CVTSI2SS) {
				src = as.R9 // an integer operand
			} else if s.Size == 8 {
				a.SSERM(sseLoad8, 1, as.M(as.RDI, 0))
			} else {
				a.SSERM(sseLoad4, 1, as.M(as.RDI, 0))
			}
		}
	case KXMM:
		a.SSERM(sseLoad16, 1, xmmSlot(s.Reg))
	case KReg:
		a.MovRM(wide(int(s.Size)), as.R9, t.greg(s))
		src = as.R9
	}
	switch {
	case op.digit >= 0:
		a.SSERM(sseLoad16, 0, xmmSlot(d.Reg))
		a.SSERR(enc, as.Reg(op.digit), 0)
		a.Imm8(uint8(s.Imm))
		a.SSERM(sseStore16, 0, xmmSlot(d.Reg))
	case d.Kind == KReg:
		a.SSERR(enc, as.R8, src)
		a.MovMR(8, t.greg(d), as.R8) // 32-bit results zero-extend
	default:
		a.SSERM(sseLoad16, 0, xmmSlot(d.Reg))
		a.SSERR(enc, 0, src)
		if op.imm {
			a.Imm8(imm)
		}
		switch in.Op {
		case x86asm.UCOMISD, x86asm.COMISD, x86asm.UCOMISS, x86asm.COMISS, x86asm.PTEST:
			t.st = fsHost
		default:
			a.SSERM(sseStore16, 0, xmmSlot(d.Reg))
		}
	}
	return true
}
