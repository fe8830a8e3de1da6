package x86

// SSE and SSE2: shared helpers, MXCSR, data movement and the instructions
// that do nothing here (fences, prefetches, pause). Arithmetic is in
// sse_fp.go (floating point, on top of the exact model in sse_soft.go),
// sse_cvt.go (conversions) and sse_int.go (packed integers).
//
// Handlers are chosen at decode time by operand form: a register source, an
// aligned 16-byte memory source (#GP when misaligned, as for every legacy
// SSE instruction with a 16-byte memory operand except movups, movupd,
// movdqu and maskmovdqu) or a 4- or 8-byte memory source. MMX forms of the
// shared opcodes are left unimplemented except where noted.

import (
	"ttd/x86/f80"

	"golang.org/x/arch/x86/x86asm"
)

// MXCSR bits.
const (
	MxIE  = 1 << 0 // invalid operation
	MxDE  = 1 << 1 // denormal operand
	MxZE  = 1 << 2 // divide by zero
	MxOE  = 1 << 3 // overflow
	MxUE  = 1 << 4 // underflow
	MxPE  = 1 << 5 // precision (inexact)
	MxDAZ = 1 << 6 // denormals are zeros
	MxIM  = 1 << 7 // the masks: one per flag, IM..PM = bits 7..12
	MxOM  = 1 << 10
	MxUM  = 1 << 11
	MxRC  = 3 << 13 // rounding control
	MxFZ  = 1 << 15 // flush to zero

	// MXCSRMask is the MXCSR_MASK the interpreter implements (fxsave
	// reports it): every defined bit of the low 16, DAZ included. Setting
	// any other bit with ldmxcsr or fxrstor is #GP.
	MXCSRMask = 0xffff

	mxFlags   = 0x3f
	mxDefault = 0x1f80
)

// Linux si_codes of SIGFPE for SIMD floating-point exceptions.
const (
	FPEFltDiv = 3
	FPEFltOvf = 4
	FPEFltUnd = 5
	FPEFltRes = 6
	FPEFltInv = 7
)

// xfn is the body of an instruction with an XMM destination and a 128-bit
// source value (register or memory, fetched by the handler the builder
// chose).
type xfn func(c *CPU, in *Inst, d *XMM, s XMM)

// mxFinish merges the exception flags an instruction raised into MXCSR;
// if one of them is unmasked it raises #XM instead, leaving the
// destination unchanged (callers write it after mxFinish returns).
func (c *CPU) mxFinish(fl uint32) {
	if fl != 0 {
		if c.mxDefer {
			c.mxPending |= fl
			return
		}
		if fl&^(c.MXCSR>>7)&mxFlags != 0 {
			c.simdException(fl)
		}
		c.MXCSR |= fl
	}
}

// simdException delivers an unmasked SIMD floating-point exception. As on
// the hardware, an unmasked pre-computation exception (IE, DE, ZE) hides
// the post-computation ones (OE, UE, PE) of the same instruction.
//
//go:noinline
func (c *CPU) simdException(fl uint32) {
	const pre = MxIE | MxDE | MxZE
	if fl&pre&^(c.MXCSR>>7) != 0 {
		fl &= pre
	}
	c.MXCSR |= fl
	// Linux derives si_code from every unmasked flag set in MXCSR.
	err := c.MXCSR & mxFlags &^ (c.MXCSR >> 7)
	var code int32
	switch {
	case err&MxIE != 0:
		code = FPEFltInv
	case err&MxZE != 0:
		code = FPEFltDiv
	case err&MxOE != 0:
		code = FPEFltOvf
	case err&(MxDE|MxUE) != 0:
		code = FPEFltUnd
	case err&MxPE != 0:
		code = FPEFltRes
	}
	c.raise(ExitFPE, code)
}

// gp raises #GP(0): misaligned SSE memory operands, bad MXCSR values.
//
//go:noinline
func (c *CPU) gp() { c.raise(ExitGP, SIKernel) }

// eaAligned is the address of a 16-byte memory operand that must be
// 16-byte aligned.
func (c *CPU) eaAligned(o *Operand) uint64 {
	a := c.ea(o)
	if a&15 != 0 {
		c.gp()
	}
	return a
}

func (c *CPU) load128a(o *Operand) XMM { return c.load128(c.eaAligned(o)) }

// buildX returns a builder running f with Args[0] (an XMM register) as the
// destination and Args[1] as the source. A 16-byte memory source must be
// aligned; 8- and 4-byte memory sources are loaded into the low lane with
// the rest zero.
func buildX(f xfn) Builder {
	return func(in *Inst) Handler {
		if in.Args[0].Kind != KXMM {
			return nil
		}
		switch in.Args[1].Kind {
		case KXMM:
			return func(c *CPU, in *Inst) { f(c, in, &c.X[in.Args[0].Reg&15], c.X[in.Args[1].Reg&15]) }
		case KMem:
			switch in.MemSize {
			case 16:
				return func(c *CPU, in *Inst) {
					s, ok := c.source()
					if !ok {
						s = c.load128a(&in.Args[1])
					}
					f(c, in, &c.X[in.Args[0].Reg&15], s)
				}
			case 8:
				return func(c *CPU, in *Inst) {
					s, ok := c.source()
					if !ok {
						s = XMM{c.load64(c.ea(&in.Args[1]))}
					}
					f(c, in, &c.X[in.Args[0].Reg&15], s)
				}
			case 4:
				return func(c *CPU, in *Inst) {
					s := XMM{c.load32(c.ea(&in.Args[1]))}
					f(c, in, &c.X[in.Args[0].Reg&15], s)
				}
			}
		}
		return nil
	}
}

// sse registers f for the ops with an XMM destination and an XMM or
// memory source. Their handlers are static functions that find f by
// the op (sseBody), not closures made at each decoding as buildX's: a
// code file keeps only blocks whose handlers are static (codefile.go),
// and python3 -c pass had about 400 blocks with one of these ops
// (punpcklqdq, pcmpeqd, paddq...), decoded afresh in every run.
func sse(f xfn, ops ...x86asm.Op) {
	for _, op := range ops {
		register(op, buildSSE)
		xfnOf[op] = f
		sseBody[op] = f
	}
}

// sseBody is the body of each op sse registered.
var sseBody [x86asm.Op(4096)]xfn

// buildSSE is buildX for the ops sse registered, with static handlers.
func buildSSE(in *Inst) Handler {
	if in.Args[0].Kind != KXMM {
		return nil
	}
	switch in.Args[1].Kind {
	case KXMM:
		return sseXX
	case KMem:
		switch in.MemSize {
		case 16:
			return sseXM16
		case 8:
			return sseXM8
		case 4:
			return sseXM4
		}
	}
	return nil
}

func sseXX(c *CPU, in *Inst) {
	sseBody[in.Op&4095](c, in, &c.X[in.Args[0].Reg&15], c.X[in.Args[1].Reg&15])
}

func sseXM16(c *CPU, in *Inst) {
	s, ok := c.source()
	if !ok {
		s = c.load128a(&in.Args[1])
	}
	sseBody[in.Op&4095](c, in, &c.X[in.Args[0].Reg&15], s)
}

func sseXM8(c *CPU, in *Inst) {
	s, ok := c.source()
	if !ok {
		s = XMM{c.load64(c.ea(&in.Args[1]))}
	}
	sseBody[in.Op&4095](c, in, &c.X[in.Args[0].Reg&15], s)
}

func sseXM4(c *CPU, in *Inst) {
	s := XMM{c.load32(c.ea(&in.Args[1]))}
	sseBody[in.Op&4095](c, in, &c.X[in.Args[0].Reg&15], s)
}

// xfnOf keeps the body of every op sse and sseA register, for the VEX
// forms of the same operations (avx.go).
var xfnOf = map[x86asm.Op]xfn{}

func isX(o *Operand) bool   { return o.Kind == KXMM }
func isMem(o *Operand) bool { return o.Kind == KMem }

func init() {
	// Full 128-bit moves: the hottest SSE instructions (glibc's string
	// functions), each form with its own handler.
	for _, op := range []x86asm.Op{x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVDQA} {
		register(op, buildMov128(true))
	}
	for _, op := range []x86asm.Op{x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQU} {
		register(op, buildMov128(false))
	}
	for _, op := range []x86asm.Op{x86asm.MOVNTPS, x86asm.MOVNTPD, x86asm.MOVNTDQ} {
		register(op, func(in *Inst) Handler {
			if isMem(&in.Args[0]) && isX(&in.Args[1]) {
				return storeA128
			}
			return nil
		})
	}
	register(x86asm.MOVNTI, func(in *Inst) Handler {
		if isMem(&in.Args[0]) && in.Args[1].Kind == KReg {
			return func(c *CPU, in *Inst) { c.set(&in.Args[0], c.getReg(&in.Args[1])) }
		}
		return nil
	})
	register(x86asm.MOVD, buildMovd)
	register(x86asm.MOVQ, buildMovq)
	register(x86asm.MOVSS, buildMovScalar(4))
	register(x86asm.MOVSD_XMM, buildMovScalar(8))
	register(x86asm.MOVLPS, buildMovHalf(0))
	register(x86asm.MOVLPD, buildMovHalf(0))
	register(x86asm.MOVHPS, buildMovHalf(1))
	register(x86asm.MOVHPD, buildMovHalf(1))
	register(x86asm.MOVHLPS, func(in *Inst) Handler {
		if isX(&in.Args[0]) && isX(&in.Args[1]) {
			return func(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15][0] = c.X[in.Args[1].Reg&15][1] }
		}
		return nil
	})
	register(x86asm.MOVLHPS, func(in *Inst) Handler {
		if isX(&in.Args[0]) && isX(&in.Args[1]) {
			return func(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15][1] = c.X[in.Args[1].Reg&15][0] }
		}
		return nil
	})
	register(x86asm.MOVQ2DQ, func(in *Inst) Handler {
		if isX(&in.Args[0]) && in.Args[1].Kind == KMMX {
			return func(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = XMM{c.mmxRead(in.Args[1].Reg)} }
		}
		return nil
	})
	register(x86asm.MOVDQ2Q, func(in *Inst) Handler {
		if in.Args[0].Kind == KMMX && isX(&in.Args[1]) {
			return func(c *CPU, in *Inst) { c.mmxWrite(in.Args[0].Reg, c.X[in.Args[1].Reg&15][0]) }
		}
		return nil
	})
	register(x86asm.MOVMSKPS, buildMask(func(x XMM) uint64 {
		return x[0]>>31&1 | x[0]>>62&2 | x[1]>>29&4 | x[1]>>60&8
	}))
	register(x86asm.MOVMSKPD, buildMask(func(x XMM) uint64 { return x[0]>>63 | x[1]>>62&2 }))
	register(x86asm.PMOVMSKB, func(in *Inst) Handler {
		if in.Args[0].Kind == KReg && isX(&in.Args[1]) {
			return pmovmskb
		}
		return nil
	})
	register(x86asm.MASKMOVDQU, func(in *Inst) Handler {
		if isX(&in.Args[0]) && isX(&in.Args[1]) && in.Flags&InstAddr32 == 0 {
			return maskmovdqu
		}
		return nil
	})

	handle(x86asm.LDMXCSR, func(c *CPU, in *Inst) {
		v := uint32(c.load32(c.ea(&in.Args[0])))
		if v&^MXCSRMask != 0 {
			c.gp()
		}
		c.foldHostFP() // the flags raised so far belong to the old value
		c.MXCSR = v
	})
	handle(x86asm.STMXCSR, func(c *CPU, in *Inst) {
		c.foldHostFP()
		c.store(c.ea(&in.Args[0]), 4, uint64(c.MXCSR))
	})

	// Fences order memory between threads; ttd runs one thread at a time
	// so they do nothing to the state. The recorder still sees each one
	// (a key frame in iDNA): the decoder wraps them in syncWrap, which
	// reports Observer.Sync.
	handle(x86asm.LFENCE, opNop)
	handle(x86asm.MFENCE, opNop)
	handle(x86asm.SFENCE, opNop)
	// Prefetches are hints and never fault. clflush would fault on an
	// unmapped address, which no correct program relies on; it is a nop.
	for _, op := range []x86asm.Op{x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1,
		x86asm.PREFETCHT2, x86asm.PREFETCHW, x86asm.CLFLUSH} {
		handle(op, opNop)
	}
	// pause is a spin-loop hint: a nop for the state. (ExitYield exists
	// for a scheduler that wants to switch threads on it.)
	handle(x86asm.PAUSE, opNop)
}

// buildMov128 picks the handler of movaps/movdqa (aligned) or
// movups/movdqu.
func buildMov128(aligned bool) Builder {
	return func(in *Inst) Handler {
		d, s := &in.Args[0], &in.Args[1]
		switch {
		case isX(d) && isX(s):
			return movXX
		case isX(d) && isMem(s):
			if aligned {
				return loadA128
			}
			return loadU128
		case isMem(d) && isX(s):
			if aligned {
				return storeA128
			}
			return storeU128
		}
		return nil
	}
}

func movXX(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = c.X[in.Args[1].Reg&15] }

func loadA128(c *CPU, in *Inst) {
	a := c.ea(&in.Args[1])
	if a&15 != 0 {
		c.gp()
	}
	c.X[in.Args[0].Reg&15] = c.load128(a)
}

func loadU128(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = c.load128(c.ea(&in.Args[1])) }

func storeA128(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&15 != 0 {
		c.gp()
	}
	c.store128(a, c.X[in.Args[1].Reg&15])
}

func storeU128(c *CPU, in *Inst) { c.store128(c.ea(&in.Args[0]), c.X[in.Args[1].Reg&15]) }

// buildMovd: movd xmm, r/m32 (zero-extending) and movd r/m32, xmm, plus
// the MMX forms.
func buildMovd(in *Inst) Handler {
	d, s := &in.Args[0], &in.Args[1]
	switch {
	case isX(d) && s.Kind == KReg:
		return func(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = XMM{uint64(uint32(c.R[in.Args[1].Reg]))} }
	case isX(d) && isMem(s):
		return func(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = XMM{c.load32(c.ea(&in.Args[1]))} }
	case d.Kind == KReg && isX(s):
		return func(c *CPU, in *Inst) { c.R[in.Args[0].Reg] = uint64(uint32(c.X[in.Args[1].Reg&15][0])) }
	case isMem(d) && isX(s):
		return func(c *CPU, in *Inst) { c.store(c.ea(&in.Args[0]), 4, c.X[in.Args[1].Reg&15][0]&0xffffffff) }
	case d.Kind == KMMX && (s.Kind == KReg || isMem(s)):
		return func(c *CPU, in *Inst) { c.mmxWrite(in.Args[0].Reg, c.get(&in.Args[1])&0xffffffff) }
	case (d.Kind == KReg || isMem(d)) && s.Kind == KMMX:
		return func(c *CPU, in *Inst) { c.set(&in.Args[0], c.mmxRead(in.Args[1].Reg)&0xffffffff) }
	}
	return nil
}

// buildMovq: movq between XMM and r/m64, XMM and XMM/m64 (zeroing the
// high lane of an XMM destination), and the MMX forms.
func buildMovq(in *Inst) Handler {
	d, s := &in.Args[0], &in.Args[1]
	switch {
	case isX(d) && s.Kind == KReg:
		return movqXR
	case isX(d) && isMem(s):
		return movqXM
	case isX(d) && isX(s):
		return movqXX
	case d.Kind == KReg && isX(s):
		return movqRX
	case isMem(d) && isX(s):
		return movqMX
	case d.Kind == KMMX && (s.Kind == KReg || isMem(s)):
		return func(c *CPU, in *Inst) { c.mmxWrite(in.Args[0].Reg, c.get(&in.Args[1])) }
	case d.Kind == KMMX && s.Kind == KMMX:
		return func(c *CPU, in *Inst) { c.mmxWrite(in.Args[0].Reg, c.mmxRead(in.Args[1].Reg)) }
	case (d.Kind == KReg || isMem(d)) && s.Kind == KMMX:
		return func(c *CPU, in *Inst) { c.set(&in.Args[0], c.mmxRead(in.Args[1].Reg)) }
	}
	return nil
}

// The movq and movsd/movss forms of scalar floating-point code are named
// functions so that the dispatch loop can call them directly.

func movqXR(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = XMM{c.R[in.Args[1].Reg]} }

// The hot moves spell out the memory fast path (see "Guest memory access"
// in inst.go).

func movqXM(c *CPU, in *Inst) {
	a := c.ea(&in.Args[1])
	v, ok := c.tryLoad64(a)
	if !ok || c.Pred != nil && !c.Pred.Hit(a, 8, v) {
		v = c.loadSlow(a, 8)
	}
	c.X[in.Args[0].Reg&15] = XMM{v}
}

func movqXX(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = XMM{c.X[in.Args[1].Reg&15][0]} }
func movqRX(c *CPU, in *Inst) { c.R[in.Args[0].Reg] = c.X[in.Args[1].Reg&15][0] }
func movqMX(c *CPU, in *Inst) {
	a, v := c.ea(&in.Args[0]), c.X[in.Args[1].Reg&15][0]
	if !c.tryStore64(a, v) || c.Pred != nil && !c.Pred.Put(a, 8, v) {
		c.storeSlow(a, 8, v)
	}
}

func movsdXX(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15][0] = c.X[in.Args[1].Reg&15][0] }
func movsdXM(c *CPU, in *Inst) {
	a := c.ea(&in.Args[1])
	v, ok := c.tryLoad64(a)
	if !ok || c.Pred != nil && !c.Pred.Hit(a, 8, v) {
		v = c.loadSlow(a, 8)
	}
	c.X[in.Args[0].Reg&15] = XMM{v}
}

func movsdMX(c *CPU, in *Inst) {
	a, v := c.ea(&in.Args[0]), c.X[in.Args[1].Reg&15][0]
	if !c.tryStore64(a, v) || c.Pred != nil && !c.Pred.Put(a, 8, v) {
		c.storeSlow(a, 8, v)
	}
}

func movssXX(c *CPU, in *Inst) {
	x := &c.X[in.Args[0].Reg&15]
	x[0] = x[0]&^0xffffffff | c.X[in.Args[1].Reg&15][0]&0xffffffff
}
func movssXM(c *CPU, in *Inst) {
	a := c.ea(&in.Args[1])
	v, ok := c.tryLoad32(a)
	if !ok || c.Pred != nil && !c.Pred.Hit(a, 4, v) {
		v = c.loadSlow(a, 4)
	}
	c.X[in.Args[0].Reg&15] = XMM{v}
}

func movssMX(c *CPU, in *Inst) {
	a, v := c.ea(&in.Args[0]), c.X[in.Args[1].Reg&15][0]&0xffffffff
	if !c.tryStore32(a, v) || c.Pred != nil && !c.Pred.Put(a, 4, v) {
		c.storeSlow(a, 4, v)
	}
}

// mmxRead returns MMX register i. Like every MMX instruction it puts the
// x87 in MMX state: TOP 0 and all registers valid.
func (c *CPU) mmxRead(i uint8) uint64 {
	c.FPU.Top = 0
	c.FPU.Tag = 0xff
	return c.FPU.Regs[i&7].Mant
}

// mmxWrite sets MMX register i; the x87 exponent field becomes all ones.
func (c *CPU) mmxWrite(i uint8, v uint64) {
	c.FPU.Top = 0
	c.FPU.Tag = 0xff
	c.FPU.Regs[i&7] = f80.F80{Mant: v, SE: 0xffff}
}

// buildMovScalar: movss/movsd. Register to register merges the low lane;
// a load zeroes the rest of the register; a store writes the low lane.
func buildMovScalar(size int) Builder {
	return func(in *Inst) Handler {
		d, s := &in.Args[0], &in.Args[1]
		switch {
		case isX(d) && isX(s):
			if size == 8 {
				return movsdXX
			}
			return movssXX
		case isX(d) && isMem(s):
			if size == 8 {
				return movsdXM
			}
			return movssXM
		case isMem(d) && isX(s):
			if size == 8 {
				return movsdMX
			}
			return movssMX
		}
		return nil
	}
}

// buildMovHalf: movlps/movlpd (lane 0) and movhps/movhpd (lane 1) between
// an XMM register and m64.
// Its handlers are static functions: a code file keeps only blocks
// whose handlers are.
func buildMovHalf(lane int) Builder {
	return func(in *Inst) Handler {
		d, s := &in.Args[0], &in.Args[1]
		switch {
		case isX(d) && isMem(s):
			return movHalfLoad[lane&1]
		case isMem(d) && isX(s):
			return movHalfStore[lane&1]
		}
		return nil
	}
}

var (
	movHalfLoad  = [2]Handler{movLowLoad, movHighLoad}
	movHalfStore = [2]Handler{movLowStore, movHighStore}
)

func movLowLoad(c *CPU, in *Inst)   { c.X[in.Args[0].Reg&15][0] = c.load64(c.ea(&in.Args[1])) }
func movHighLoad(c *CPU, in *Inst)  { c.X[in.Args[0].Reg&15][1] = c.load64(c.ea(&in.Args[1])) }
func movLowStore(c *CPU, in *Inst)  { c.store64(c.ea(&in.Args[0]), c.X[in.Args[1].Reg&15][0]) }
func movHighStore(c *CPU, in *Inst) { c.store64(c.ea(&in.Args[0]), c.X[in.Args[1].Reg&15][1]) }

// buildMask: movmskps/movmskpd, whose destination is a 32- or 64-bit
// register (zero-extended either way).
func buildMask(f func(XMM) uint64) Builder {
	return func(in *Inst) Handler {
		if in.Args[0].Kind == KReg && isX(&in.Args[1]) {
			return func(c *CPU, in *Inst) { c.R[in.Args[0].Reg] = f(c.X[in.Args[1].Reg&15]) }
		}
		return nil
	}
}

// msb8 gathers the most significant bit of each byte of v into 8 bits.
func msb8(v uint64) uint64 {
	return (v & 0x8080808080808080) * 0x0002040810204081 >> 56
}

func pmovmskb(c *CPU, in *Inst) {
	x := &c.X[in.Args[1].Reg&15]
	c.R[in.Args[0].Reg] = msb8(x[0]) | msb8(x[1])<<8
}

// maskmovdqu stores the bytes of Args[0] whose mask byte in Args[1] has
// its top bit set to [rdi], one observed byte store each.
func maskmovdqu(c *CPU, in *Inst) {
	v, m := c.X[in.Args[0].Reg&15], c.X[in.Args[1].Reg&15]
	a := c.R[RDI] // (a segment override is not honoured)
	for i := 0; i < 16; i++ {
		if m[i>>3]>>(8*(i&7)+7)&1 != 0 {
			c.store(a+uint64(i), 1, v[i>>3]>>(8*(i&7))&0xff)
		}
	}
}
