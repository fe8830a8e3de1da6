package x86

// The translation of VEX instructions (AVX, AVX2, FMA3, BMI2): each runs
// as the same host instruction on the host's YMM0-YMM3 (or general
// registers), its operands loaded from and its result stored to the
// guest's registers in CPU.X (bits 0-127) and CPU.YH (bits 128-255).
// The host instruction is the guest's own opcode, map, prefix, W and L,
// re-encoded with host registers: a memory operand is first read through
// the read checks (TLB, and while recording or replaying the prediction
// cache) into a host register, and a result bound for memory goes
// through the write checks, so that the host never touches guest memory
// through an operand of the instruction itself. Integer and bitwise
// operations are exact anywhere; floating-point ones run only while the
// guest's MXCSR is the default with PE set (as sseNative's), where the
// host computes exactly what the interpreter does. Only hosts with AVX2
// (and FMA, BMI2 for those) translate; TTD_HOSTISA=0 turns it off, and
// then the interpreter runs them, as on a host without AVX.

import (
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
	"golang.org/x/sys/cpu"

	as "ttd/internal/amd64asm"
)

var (
	jitAVX2 = jitHostISA && cpu.X86.HasAVX && cpu.X86.HasAVX2
	jitFMA  = jitAVX2 && cpu.X86.HasFMA
	jitBMI2 = jitAVX2 && cpu.X86.HasBMI2
	// AES-NI and pclmulqdq: the legacy forms with SSE's translation
	// (sseNative), the VEX ones here.
	jitAES     = jitHostISA && cpu.X86.HasAES
	jitPCLMUL  = jitHostISA && cpu.X86.HasPCLMULQDQ
	jitVAES    = jitAVX2 && jitAES
	jitVPCLMUL = jitAVX2 && jitPCLMUL
)

func init() {
	if jitAES {
		for op, code := range map[x86asm.Op]byte{x86asm.AESENC: 0xdc, x86asm.AESENCLAST: 0xdd, x86asm.AESDEC: 0xde,
			x86asm.AESDECLAST: 0xdf, x86asm.AESIMC: 0xdb} {
			jitSSEOps[op] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x38, Op: code}, digit: -1}
		}
		jitSSEOps[x86asm.AESKEYGENASSIST] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x3a, Op: 0xdf}, digit: -1, imm: true}
	}
	if jitPCLMUL {
		jitSSEOps[x86asm.PCLMULQDQ] = jitSSE{enc: as.SSE{Prefix: 0x66, Map: 0x3a, Op: 0x44}, digit: -1, imm: true}
	}
}

var offYH = int32(unsafe.Offsetof(CPU{}.YH))

// yhSlot is the CPU.YH slot of YMM register r (bits 128-255).
func yhSlot(r uint8) as.Mem { return as.M(hCPU, offYH+int32(r&15)*16) }

// vexForm is the operand roles of a translated VEX instruction.
type vexForm uint8

const (
	vfRVM         vexForm = iota + 1 // reg = f(vvvv, rm)
	vfRM                             // reg = f(rm); vvvv unused
	vfVM                             // vvvv = f(rm); ModRM.reg is an opcode digit (shifts by an immediate)
	vfFMA                            // reg = f(reg, vvvv, rm)
	vfBlendv                         // reg = f(vvvv, rm, the register in imm8[7:4])
	vfLoad                           // reg = rm: the full-register moves
	vfStore                          // rm = reg: the full-register moves
	vfScalarLoad                     // vmovss/vmovsd: reg = vvvv merged with rm (register), or rm zero-extended (memory)
	vfScalarStore                    // vmovss/vmovsd to memory
	vfMask                           // general register reg = f(rm): the sign-bit masks
	vfTest                           // flags = f(reg, rm): vptest, vtestps/pd, (u)comiss/sd
	vfExtract                        // rm (XMM or m128) = half imm8 of reg
	vfMovdTo                         // vmovd/vmovq into XMM reg from a general register or memory
	vfMovdFrom                       // vmovd/vmovq from XMM reg to a general register or memory
	vfMovqStore                      // vmovq (66 0F D6): rm = the low quadword of reg
	vfZero                           // vzeroupper, vzeroall
	vfGPR                            // BMI2 shifts, pdep, pext: reg = f(rm, vvvv), no flags
	vfRorx                           // reg = rorx(rm, imm8)
	vfBcast128                       // reg = m128 in both halves (memory only)
)

// jitVexOp describes a VEX opcode the translator runs.
type jitVexOp struct {
	form    vexForm
	fp      bool  // floating point: only in the default MXCSR state
	aligned bool  // a memory operand must be aligned to its size (#GP: the interpreter)
	scalar  bool  // VEX.L ignored by the hardware: declined with L set
	need    *bool // a host feature beyond AVX2, if any
	noL     bool  // 128-bit only (the 256-bit form is not translated)
	onlyL   bool  // 256-bit only
}

var vexMovdqu = as.VEX{Map: 1, PP: 2, Op: 0x6f} // vmovdqu xmm/ymm, m (load)

var jitVexOps = func() map[uint16]jitVexOp {
	m := map[uint16]jitVexOp{}
	def := func(mp, pp int, op byte, o jitVexOp) {
		k := vexKey(mp, pp, op)
		if _, dup := m[k]; dup {
			panic("jit: VEX opcode listed twice")
		}
		m[k] = o
	}
	rvm := jitVexOp{form: vfRVM}
	fpRVM := jitVexOp{form: vfRVM, fp: true}
	fpScalar := jitVexOp{form: vfRVM, fp: true, scalar: true}
	// 0F map: floating point.
	for _, op := range []byte{0x58, 0x59, 0x5c, 0x5d, 0x5e, 0x5f} { // add mul sub min div max
		def(1, 0, op, fpRVM)
		def(1, 1, op, fpRVM)
		def(1, 2, op, fpScalar)
		def(1, 3, op, fpScalar)
	}
	def(1, 0, 0x51, jitVexOp{form: vfRM, fp: true}) // sqrtps
	def(1, 1, 0x51, jitVexOp{form: vfRM, fp: true})
	def(1, 2, 0x51, fpScalar) // sqrtss
	def(1, 3, 0x51, fpScalar)
	def(1, 0, 0x5a, jitVexOp{form: vfRM, fp: true}) // cvtps2pd
	def(1, 1, 0x5a, jitVexOp{form: vfRM, fp: true}) // cvtpd2ps
	def(1, 2, 0x5a, fpScalar)                       // cvtss2sd
	def(1, 3, 0x5a, fpScalar)                       // cvtsd2ss
	for pp := 0; pp < 3; pp++ {
		def(1, pp, 0x5b, jitVexOp{form: vfRM, fp: true}) // cvtdq2ps cvtps2dq cvttps2dq
	}
	def(1, 2, 0xe6, jitVexOp{form: vfRM, fp: true}) // cvtdq2pd
	def(1, 1, 0xe6, jitVexOp{form: vfRM, fp: true}) // cvttpd2dq
	def(1, 3, 0xe6, jitVexOp{form: vfRM, fp: true}) // cvtpd2dq
	for _, pp := range []int{1, 3} {
		def(1, pp, 0x7c, fpRVM) // haddpd haddps
		def(1, pp, 0x7d, fpRVM)
		def(1, pp, 0xd0, fpRVM) // addsubpd addsubps
	}
	def(1, 0, 0xc2, fpRVM) // cmpps
	def(1, 1, 0xc2, fpRVM)
	def(1, 2, 0xc2, fpScalar)
	def(1, 3, 0xc2, fpScalar)
	for pp := 0; pp < 2; pp++ {
		for _, op := range []byte{0x54, 0x55, 0x56, 0x57, 0x14, 0x15, 0xc6} { // and andn or xor unpckl unpckh shuf
			def(1, pp, op, rvm)
		}
		def(1, pp, 0x10, jitVexOp{form: vfLoad}) // movups movupd
		def(1, pp, 0x11, jitVexOp{form: vfStore})
		def(1, pp, 0x28, jitVexOp{form: vfLoad, aligned: true}) // movaps movapd
		def(1, pp, 0x29, jitVexOp{form: vfStore, aligned: true})
		def(1, pp, 0x2b, jitVexOp{form: vfStore, aligned: true}) // movntps movntpd
		def(1, pp, 0x50, jitVexOp{form: vfMask})                 // movmskps movmskpd
		def(1, pp, 0x2e, jitVexOp{form: vfTest, fp: true, scalar: true})
		def(1, pp, 0x2f, jitVexOp{form: vfTest, fp: true, scalar: true})
	}
	def(1, 2, 0x10, jitVexOp{form: vfScalarLoad, scalar: true}) // movss
	def(1, 3, 0x10, jitVexOp{form: vfScalarLoad, scalar: true}) // movsd
	def(1, 2, 0x11, jitVexOp{form: vfScalarStore, scalar: true})
	def(1, 3, 0x11, jitVexOp{form: vfScalarStore, scalar: true})
	def(1, 2, 0x12, jitVexOp{form: vfRM}) // movsldup
	def(1, 2, 0x16, jitVexOp{form: vfRM}) // movshdup
	def(1, 3, 0x12, jitVexOp{form: vfRM}) // movddup
	// 0F map: integers.
	for op := byte(0x60); op <= 0x6d; op++ {
		def(1, 1, op, rvm) // punpck, packs, pcmpgt
	}
	for _, op := range []byte{0x74, 0x75, 0x76, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd8, 0xd9, 0xda, 0xdb, 0xdc, 0xdd, 0xde, 0xdf,
		0xe0, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe8, 0xe9, 0xea, 0xeb, 0xec, 0xed, 0xee, 0xef,
		0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe} {
		def(1, 1, op, rvm)
	}
	for pp := 1; pp < 4; pp++ {
		def(1, pp, 0x70, jitVexOp{form: vfRM}) // pshufd pshufhw pshuflw
	}
	for _, op := range []byte{0x71, 0x72, 0x73} {
		def(1, 1, op, jitVexOp{form: vfVM}) // shifts by an immediate
	}
	def(1, 1, 0x6f, jitVexOp{form: vfLoad, aligned: true}) // movdqa
	def(1, 2, 0x6f, jitVexOp{form: vfLoad})                // movdqu
	def(1, 3, 0xf0, jitVexOp{form: vfLoad})                // lddqu
	def(1, 1, 0x7f, jitVexOp{form: vfStore, aligned: true})
	def(1, 2, 0x7f, jitVexOp{form: vfStore})
	def(1, 1, 0xe7, jitVexOp{form: vfStore, aligned: true}) // movntdq
	def(1, 1, 0xd7, jitVexOp{form: vfMask})                 // pmovmskb
	def(1, 1, 0x6e, jitVexOp{form: vfMovdTo})
	def(1, 1, 0x7e, jitVexOp{form: vfMovdFrom})
	def(1, 2, 0x7e, jitVexOp{form: vfRM, noL: true}) // movq xmm, xmm/m64
	def(1, 1, 0xd6, jitVexOp{form: vfMovqStore, noL: true})
	def(1, 0, 0x77, jitVexOp{form: vfZero})
	// 0F38 map.
	for _, op := range []byte{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
		0x28, 0x29, 0x2b, 0x37, 0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40, 0x45, 0x46, 0x47} {
		def(2, 1, op, rvm)
	}
	def(2, 1, 0x16, jitVexOp{form: vfRVM, onlyL: true}) // vpermps
	def(2, 1, 0x36, jitVexOp{form: vfRVM, onlyL: true}) // vpermd
	for _, op := range []byte{0x1c, 0x1d, 0x1e, 0x18, 0x19, 0x58, 0x59, 0x78, 0x79,
		0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35} {
		def(2, 1, op, jitVexOp{form: vfRM}) // pabs, broadcasts, pmovsx, pmovzx
	}
	def(2, 1, 0x1a, jitVexOp{form: vfBcast128, onlyL: true}) // vbroadcastf128
	def(2, 1, 0x5a, jitVexOp{form: vfBcast128, onlyL: true}) // vbroadcasti128
	def(2, 1, 0x41, jitVexOp{form: vfRM, noL: true})         // phminposuw
	def(2, 1, 0x2a, jitVexOp{form: vfLoad, aligned: true})   // movntdqa
	def(2, 1, 0x17, jitVexOp{form: vfTest})                  // ptest
	def(2, 1, 0x0e, jitVexOp{form: vfTest})                  // vtestps
	def(2, 1, 0x0f, jitVexOp{form: vfTest})                  // vtestpd
	for op := byte(0x96); op <= 0xbf; op++ {
		if op >= 0xa0 && op < 0xa6 || op >= 0xb0 && op < 0xb6 {
			continue
		}
		o := jitVexOp{form: vfFMA, fp: true, need: &jitFMA}
		if op&1 == 1 && op&0xf >= 9 {
			o.scalar = true // vfmadd132ss/sd ... (odd opcodes from x9)
		}
		def(2, 1, op, o)
	}
	def(2, 1, 0xf7, jitVexOp{form: vfGPR, need: &jitBMI2}) // shlx
	def(2, 2, 0xf7, jitVexOp{form: vfGPR, need: &jitBMI2}) // sarx
	def(2, 3, 0xf7, jitVexOp{form: vfGPR, need: &jitBMI2}) // shrx
	def(2, 2, 0xf5, jitVexOp{form: vfGPR, need: &jitBMI2}) // pext
	def(2, 3, 0xf5, jitVexOp{form: vfGPR, need: &jitBMI2}) // pdep
	def(3, 3, 0xf0, jitVexOp{form: vfRorx, need: &jitBMI2})
	// 0F3A map.
	def(3, 1, 0x00, jitVexOp{form: vfRM, onlyL: true})              // vpermq
	def(3, 1, 0x01, jitVexOp{form: vfRM, onlyL: true})              // vpermpd
	def(3, 1, 0x04, jitVexOp{form: vfRM})                           // vpermilps imm
	def(3, 1, 0x05, jitVexOp{form: vfRM})                           // vpermilpd imm
	def(3, 1, 0x06, jitVexOp{form: vfRVM, onlyL: true})             // vperm2f128
	def(3, 1, 0x46, jitVexOp{form: vfRVM, onlyL: true})             // vperm2i128
	def(3, 1, 0x18, jitVexOp{form: vfRVM, onlyL: true})             // vinsertf128
	def(3, 1, 0x38, jitVexOp{form: vfRVM, onlyL: true})             // vinserti128
	def(3, 1, 0x19, jitVexOp{form: vfExtract, onlyL: true})         // vextractf128
	def(3, 1, 0x39, jitVexOp{form: vfExtract, onlyL: true})         // vextracti128
	for _, op := range []byte{0x02, 0x0c, 0x0d, 0x0e, 0x0f, 0x42} { // blends, palignr, mpsadbw
		def(3, 1, op, rvm)
	}
	def(3, 1, 0x08, jitVexOp{form: vfRM, fp: true})             // roundps
	def(3, 1, 0x09, jitVexOp{form: vfRM, fp: true})             // roundpd
	def(3, 1, 0x0a, fpScalar)                                   // roundss
	def(3, 1, 0x0b, fpScalar)                                   // roundsd
	def(3, 1, 0x40, fpRVM)                                      // dpps
	def(3, 1, 0x41, jitVexOp{form: vfRVM, fp: true, noL: true}) // dppd
	def(3, 1, 0x4a, jitVexOp{form: vfBlendv})                   // blendvps
	def(3, 1, 0x4b, jitVexOp{form: vfBlendv})                   // blendvpd
	def(3, 1, 0x4c, jitVexOp{form: vfBlendv})                   // pblendvb
	for _, op := range []byte{0xdc, 0xdd, 0xde, 0xdf} {         // vaesenc vaesenclast vaesdec vaesdeclast
		def(2, 1, op, jitVexOp{form: vfRVM, noL: true, need: &jitVAES})
	}
	def(2, 1, 0xdb, jitVexOp{form: vfRM, noL: true, need: &jitVAES}) // vaesimc
	def(3, 1, 0xdf, jitVexOp{form: vfRM, noL: true, need: &jitVAES}) // vaeskeygenassist
	def(3, 1, 0x44, jitVexOp{form: vfRVM, noL: true, need: &jitVPCLMUL})
	return m
}()

// vex translates the VEX instructions of jitVexOps; false for anything
// else, before emitting any code.
func (t *jitT) vex(in *Inst) bool {
	if !jitAVX2 || in.Flags&InstEndsBlock != 0 {
		return false // (#UD: a level without the extension, or not implemented)
	}
	key := uint16(in.Op - vexOpBase)
	op, ok := jitVexOps[key]
	if !ok || op.need != nil && !*op.need {
		return false
	}
	l := vexL(in)
	if l && (op.scalar || op.noL) || !l && op.onlyL {
		return false
	}
	enc := as.VEX{Map: byte(key >> 10), PP: byte(key >> 8 & 3), Op: byte(key), W: vexW(in), L: l}
	d, s := &in.Args[0], &in.Args[1]
	n := int(in.NArgs)
	hasImm := n == 3 && in.Args[2].Kind == KImm
	if op.form != vfZero && (n < 2 || n == 3 && !hasImm) {
		return false
	}
	if s.Kind == KMem {
		if t.legacy || !jitVexMemSize(in.MemSize) {
			return false
		}
	}
	if !t.vexOperandsOK(in, op, d, s) {
		return false
	}
	if op.fp && !t.mxChecked || s.Kind == KMem {
		t.spill()
	}
	if op.fp && !t.mxChecked {
		a := &t.a
		a.MovRM(4, as.RAX, as.M(hCPU, offMXCSR))
		a.ALURI(as.AND, 4, as.RAX, 0xffe0)
		a.ALURI(as.CMP, 4, as.RAX, 0x1fa0)
		a.Jcc(5, t.exit())
		t.mxChecked = true
	}
	t.vexEmit(in, op, enc, d, s)
	if l {
		t.a.Buf = append(t.a.Buf, 0xc5, 0xf8, 0x77) // vzeroupper: Go's SSE code runs without the transition penalty
	}
	return true
}

// jitVexMemSize reports whether the translator reads or writes memory
// operands of size bytes.
func jitVexMemSize(size uint8) bool {
	switch size {
	case 1, 2, 4, 8, 16, 32:
		return true
	}
	return false
}

// vexOperandsOK checks the operand kinds the form expects (the
// interpreter's builders have already made general-register operands
// KReg).
func (t *jitT) vexOperandsOK(in *Inst, op jitVexOp, d, s *Operand) bool {
	xmmOrMem := s.Kind == KXMM || s.Kind == KMem
	switch op.form {
	case vfRVM, vfRM, vfFMA, vfBlendv, vfLoad, vfScalarLoad:
		return d.Kind == KXMM && xmmOrMem
	case vfBcast128:
		return d.Kind == KXMM && s.Kind == KMem
	case vfVM:
		return d.Kind == KXMM && s.Kind == KXMM
	case vfStore, vfExtract, vfMovqStore:
		return d.Kind == KXMM && xmmOrMem && (s.Kind == KXMM || in.MemSize >= 8)
	case vfScalarStore:
		return d.Kind == KXMM && s.Kind == KMem
	case vfMask:
		return d.Kind == KReg && s.Kind == KXMM
	case vfTest:
		return d.Kind == KXMM && xmmOrMem
	case vfMovdTo, vfMovdFrom:
		return d.Kind == KXMM && (s.Kind == KReg || s.Kind == KMem) && (in.MemSize == 4 || in.MemSize == 8)
	case vfGPR, vfRorx:
		return d.Kind == KReg && (s.Kind == KReg || s.Kind == KMem) && (in.MemSize == 4 || in.MemSize == 8)
	case vfZero:
		return true
	}
	return false
}

// ymmLoad loads guest YMM register r into host register x: the low 128
// bits (the rest zero), and with l the upper 128.
func (t *jitT) ymmLoad(x as.Reg, r uint8, l bool) {
	a := &t.a
	a.VEXRM(vexMovdqu, x, 0, xmmSlot(r&15))
	if l {
		a.VEXRM(as.VEX{Map: 3, PP: 1, Op: 0x18, L: true}, x, x, yhSlot(r)) // vinsertf128 x, x, m128, 1
		a.Imm8(1)
	}
}

// ymmStore stores host register x into guest YMM register r: all 256
// bits with l, else the low 128 with the upper half zeroed.
func (t *jitT) ymmStore(x as.Reg, r uint8, l bool) {
	a := &t.a
	a.VEXRM(as.VEX{Map: 1, PP: 2, Op: 0x7f}, x, 0, xmmSlot(r&15)) // vmovdqu m128, xmm
	if l {
		a.VEXRM(as.VEX{Map: 3, PP: 1, Op: 0x19, L: true}, x, 0, yhSlot(r)) // vextractf128 m128, x, 1
		a.Imm8(1)
		return
	}
	a.MovMI(8, yhSlot(r), 0)
	a.MovMI(8, as.M(hCPU, offYH+int32(r&15)*16+8), 0)
}

// vexSrc puts the rm operand into host register x: a guest register (its
// upper half with l), or in.MemSize bytes of memory through the read
// checks (aligned: to their size, else the interpreter raises #GP).
func (t *jitT) vexSrc(in *Inst, s *Operand, x as.Reg, l, aligned bool) {
	if s.Kind == KXMM {
		t.ymmLoad(x, s.Reg, l)
		return
	}
	a := &t.a
	size := int(in.MemSize)
	t.ea(s)
	switch size {
	case 16, 32:
		if aligned {
			a.TestRI(4, as.RSI, int64(size-1))
			a.Jcc(5, t.exit())
		}
		t.loadWide(size)
		a.VEXRM(as.VEX{Map: 1, PP: 2, Op: 0x6f, L: size == 32}, x, 0, as.M(as.RDI, 0))
	default:
		t.load(size)
		t.commitRead()
		a.VEXRR(as.VEX{Map: 1, PP: 1, Op: 0x6e, W: true}, x, 0, as.R9) // vmovq x, r9
	}
}

// loadWide reads 16 or 32 bytes at RSI with the read checks, leaving the
// host address in RDI: as CPU.load128 and loadY read them, 8-byte reads
// of the prediction cache, which the code compares word by word (at an
// address that is not 8-byte aligned, each of them two: the cross code).
// Counts the reads.
func (t *jitT) loadWide(size int) {
	a := &t.a
	t.tlb(false, size)
	if !t.pred {
		return
	}
	x := t.exit()
	words := size / 8
	vals := [4]as.Reg{as.R9, as.R8, as.RCX, as.RBX}
	for i := 0; i < words; i++ {
		a.MovRM(8, vals[i], as.M(as.RDI, int32(8*i)))
	}
	// An address that is not 8-byte aligned makes each 8-byte read two
	// of the cache's (predict.Split): the cross code checks them.
	t.cacheByte(as.RDX)
	done := a.NewLabel()
	t.cross(jitCross{size: size, extra: words, vals: vals}, x, done)
	t.slotWrap(as.RDX, size, x)
	stop := t.repWords(words, done, x)
	for i := int32(0); i < int32(words) && !t.log; i++ { // a recording has no Stop read
		t.stopCheck(t.sreads+i, stop)
	}
	for i := 0; i < words; i++ {
		a.ALURM(as.CMP, 8, vals[i], as.Mem{Base: hSlots, Index: as.RDX, Disp: int32(8 * i)})
		m := jitMiss{miss: a.NewLabel(), back: a.NewLabel(), exit: x, size: 8, val: vals[i], word: int32(i), off: int32(8 * i), pos: t.sreads}
		a.Jcc(5, m.miss)
		a.Bind(m.back)
		t.misses = append(t.misses, m)
	}
	a.Bind(done)
	t.sreads += int32(words)
}

// vexStore writes size bytes of host register x (an XMM/YMM register)
// to the memory operand o through the write checks.
func (t *jitT) vexStore(o *Operand, size int, x as.Reg, aligned bool) {
	a := &t.a
	t.ea(o)
	if aligned {
		a.TestRI(4, as.RSI, int64(size-1))
		a.Jcc(5, t.exit())
	}
	t.storeCheck(size, false)
	switch size {
	case 16, 32:
		st := as.VEX{Map: 1, PP: 2, Op: 0x7f, L: size == 32} // vmovdqu m, x
		a.VEXRM(st, x, 0, as.M(as.RDI, 0))
		if t.pred {
			a.VEXRM(st, x, 0, as.M(as.RBX, 0))
		}
	default:
		a.VEXRR(as.VEX{Map: 1, PP: 1, Op: 0x7e, W: true}, x, 0, as.R8) // vmovq r8, x
		t.store(size, as.R8)
	}
}

// vexEmit emits the instruction whose operands vexOperandsOK accepted.
func (t *jitT) vexEmit(in *Inst, op jitVexOp, enc as.VEX, d, s *Operand) {
	a := &t.a
	l := enc.L
	imm := func() {
		if in.NArgs == 3 {
			a.Imm8(uint8(in.Args[2].Imm))
		}
	}
	switch op.form {
	case vfRVM, vfBlendv:
		t.vexSrc(in, s, 2, l, op.aligned)
		t.ymmLoad(1, vexV(in), l)
		if op.form == vfBlendv {
			t.ymmLoad(3, uint8(in.Args[2].Imm>>4), l)
			a.VEXRR(enc, 0, 1, 2)
			a.Imm8(3 << 4)
		} else {
			a.VEXRR(enc, 0, 1, 2)
			imm()
		}
		t.ymmStore(0, d.Reg, l)
	case vfFMA:
		t.vexSrc(in, s, 2, l, false)
		t.ymmLoad(1, vexV(in), l)
		t.ymmLoad(0, d.Reg, l)
		a.VEXRR(enc, 0, 1, 2)
		t.ymmStore(0, d.Reg, l)
	case vfRM:
		// (A source narrower than the result, as vpmovzx's and the
		// broadcasts', is read whole from a register: the host
		// instruction takes the part it uses.)
		t.vexSrc(in, s, 2, l, op.aligned)
		a.VEXRR(enc, 0, 0, 2)
		imm()
		t.ymmStore(0, d.Reg, l)
	case vfBcast128:
		t.vexSrc(in, s, 2, false, false)
		a.VEXRR(as.VEX{Map: 3, PP: 1, Op: 0x18, L: true}, 0, 2, 2) // vinsertf128 ymm0, ymm2, xmm2, 1
		a.Imm8(1)
		t.ymmStore(0, d.Reg, true)
	case vfVM:
		t.ymmLoad(2, s.Reg, l)
		a.VEXRR(enc, as.Reg(d.Reg&7), 0, 2)
		imm()
		t.ymmStore(0, vexV(in), l)
	case vfLoad:
		t.vexSrc(in, s, 0, l, op.aligned)
		t.ymmStore(0, d.Reg, l)
	case vfStore:
		t.ymmLoad(0, d.Reg, l)
		if s.Kind == KXMM {
			t.ymmStore(0, s.Reg, l)
		} else {
			t.vexStore(s, int(in.MemSize), 0, op.aligned)
		}
	case vfScalarLoad:
		if s.Kind == KXMM {
			t.ymmLoad(1, vexV(in), false)
			t.ymmLoad(2, s.Reg, false)
			a.VEXRR(enc, 0, 1, 2)
		} else {
			t.vexSrc(in, s, 0, false, false) // vmovq zero-extends
		}
		t.ymmStore(0, d.Reg, false)
	case vfScalarStore:
		t.ymmLoad(0, d.Reg, false)
		t.vexStore(s, int(in.MemSize), 0, false)
	case vfMovqStore:
		t.ymmLoad(0, d.Reg, false)
		if s.Kind == KXMM {
			a.VEXRR(as.VEX{Map: 1, PP: 2, Op: 0x7e}, 0, 0, 0) // vmovq xmm0, xmm0: the upper quadword zeroed
			t.ymmStore(0, s.Reg, false)
		} else {
			t.vexStore(s, 8, 0, false)
		}
	case vfExtract:
		t.ymmLoad(0, d.Reg, true)
		a.VEXRR(enc, 0, 0, 2)
		imm()
		if s.Kind == KXMM {
			t.ymmStore(2, s.Reg, false)
		} else {
			t.vexStore(s, 16, 2, false)
		}
	case vfMask:
		t.ymmLoad(2, s.Reg, l)
		enc.W = false
		a.VEXRR(enc, as.R8, 0, 2)
		a.MovMR(8, t.greg(d), as.R8)
	case vfTest:
		t.vexSrc(in, s, 2, l, false)
		t.ymmLoad(0, d.Reg, l)
		a.VEXRR(enc, 0, 0, 2)
		t.st = fsHost
	case vfMovdTo:
		size := int(in.MemSize)
		if s.Kind == KMem {
			t.ea(s)
			t.load(size)
			t.commitRead()
		} else {
			a.MovRM(size, as.R9, t.greg(s)) // a 32-bit load zero-extends
		}
		a.MovMR(8, xreg(d, 0), as.R9)
		a.MovMI(8, xreg(d, 1), 0)
		a.MovMI(8, yhSlot(d.Reg), 0)
		a.MovMI(8, as.M(hCPU, offYH+int32(d.Reg&15)*16+8), 0)
	case vfMovdFrom:
		size := int(in.MemSize)
		if s.Kind == KMem {
			t.ea(s)
			t.storeCheck(size, false)
			a.MovRM(size, as.R8, xreg(d, 0))
			t.store(size, as.R8)
		} else {
			a.MovRM(size, as.R8, xreg(d, 0))
			a.MovMR(8, t.greg(s), as.R8)
		}
	case vfZero:
		for r := uint8(0); r < 16; r++ {
			if l {
				a.MovMI(8, xreg(&Operand{Reg: r}, 0), 0)
				a.MovMI(8, xreg(&Operand{Reg: r}, 1), 0)
			}
			a.MovMI(8, yhSlot(r), 0)
			a.MovMI(8, as.M(hCPU, offYH+int32(r)*16+8), 0)
		}
	case vfGPR, vfRorx:
		size := int(in.MemSize)
		if s.Kind == KMem {
			t.ea(s)
			t.load(size)
			t.commitRead()
		} else {
			a.MovRM(size, as.R9, t.greg(s))
		}
		enc.L = false
		if op.form == vfRorx {
			a.VEXRR(enc, as.R8, 0, as.R9)
			imm()
		} else {
			a.MovRM(8, as.RCX, t.gregN(vexV(in)))
			a.VEXRR(enc, as.R8, as.RCX, as.R9)
		}
		a.MovMR(8, t.greg(d), as.R8)
	}
}
