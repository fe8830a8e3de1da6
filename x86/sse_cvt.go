package x86

// SSE/SSE2 conversions between float32, float64 and signed integers,
// including the MMX forms (cvtpi2ps, cvtps2pi, cvttps2pi, cvtpi2pd,
// cvtpd2pi, cvttpd2pi). Conversions to integers that are out of range or
// NaN give the integer indefinite (the most negative integer) and IE.

import (
	"math"
	"math/bits"

	"golang.org/x/arch/x86/x86asm"
)

// fromInt converts the signed integer v to format f, rounding by MXCSR.
func (f *ffmt) fromInt(v int64, mx uint32) (uint64, uint32) {
	m := uint64(v)
	if m+1<<f.frac < 1<<(f.frac+1) {
		// -2^frac <= v < 2^frac: exact in the format.
		if f == fmt32 {
			return b32(float32(v)), 0
		}
		return math.Float64bits(float64(v)), 0
	}
	var s uint64
	if v < 0 {
		s, m = f.sign, -m
	}
	return f.round(s, 0, m, mx, 0)
}

// toInt converts x to a signed n-bit integer (n is 32 or 64), rounding by
// MXCSR or truncating.
func (f *ffmt) toInt(x uint64, mx uint32, n uint, trunc bool) (uint64, uint32) {
	indef := uint64(1) << (n - 1)
	x = f.daz(x, mx)
	if f.expOf(x) == f.expMask {
		return indef, MxIE
	}
	s, e, m := f.unpack(x)
	if m == 0 {
		return 0, 0
	}
	rc := mx >> 13 & 3
	if trunc {
		rc = rcZero
	}
	var v uint64
	inexact := false
	if e >= 0 {
		if bits.Len64(m)+e > 64 {
			return indef, MxIE
		}
		v = m << uint(e)
	} else {
		v, inexact = rnd(m, uint(-e), s != 0, rc)
	}
	if v > indef || v == indef && s == 0 {
		return indef, MxIE
	}
	if s != 0 {
		v = -v
	}
	return v & (indef<<1 - 1), pe(inexact)
}

// cvt32to64 is cvtss2sd on one lane: exact but for NaNs.
func cvt32to64(a uint64, mx uint32) (uint64, uint32) {
	if isNorm32(a) {
		return math.Float64bits(float64(f32(a))), 0
	}
	a = fmt32.daz(a, mx)
	s := a >> 31 << 63
	switch {
	case fmt32.isNaN(a):
		var fl uint32
		if fmt32.isSNaN(a) {
			fl = MxIE
		}
		return s | 0x7ff8<<48 | fmt32.fracOf(a)<<29, fl
	case fmt32.isDenormal(a):
		return math.Float64bits(float64(f32(a))), MxDE
	}
	return math.Float64bits(float64(f32(a))), 0 // zero, infinity
}

// cvt64to32 is cvtsd2ss on one lane.
func cvt64to32(a uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && isNorm64(a) {
		r := float32(f64(a))
		if rb := b32(r); isNormR32(rb) {
			return rb, pe(float64(r) != f64(a))
		}
	}
	return cvt64to32Exact(a, mx)
}

// cvt64to32Exact is cvt64to32 without the host fast path.
func cvt64to32Exact(a uint64, mx uint32) (uint64, uint32) {
	a = fmt64.daz(a, mx)
	s := a >> 63 << 31
	switch {
	case fmt64.isNaN(a):
		var fl uint32
		if fmt64.isSNaN(a) {
			fl = MxIE
		}
		return s | 0x7fc00000 | fmt64.fracOf(a)>>29, fl
	case fmt64.isInf(a):
		return s | 0x7f800000, 0
	case fmt64.isZero(a):
		return s, 0
	}
	_, e, m := fmt64.unpack(a)
	return fmt32.round(s, e, m, mx, fmt64.denormalFlag(a))
}

// Lane conversions to integers with host fast paths for in-range values.

func cvt32toInt(n uint, trunc bool) func(a uint64, mx uint32) (uint64, uint32) {
	return func(a uint64, mx uint32) (uint64, uint32) {
		if isNorm32(a) && a>>23&0xff < 127+uint64(n)-1 && (trunc || mx&MxRC == 0) {
			x := float64(f32(a))
			r := x
			if !trunc {
				r = math.RoundToEven(x)
			}
			v := int64(r) // |r| <= 2^(n-1), exactly 2^31 only if rounded up
			if v != 1<<31 {
				return uint64(v) & (1<<n - 1), pe(float64(v) != x)
			}
		}
		return fmt32.toInt(a, mx, n, trunc)
	}
}

func cvt64toInt(n uint, trunc bool) func(a uint64, mx uint32) (uint64, uint32) {
	return func(a uint64, mx uint32) (uint64, uint32) {
		if isNorm64(a) && a>>52&0x7ff < 1023+uint64(n)-1 && (trunc || mx&MxRC == 0) {
			x := f64(a)
			r := x
			if !trunc {
				r = math.RoundToEven(x)
			}
			v := int64(r) // |r| <= 2^(n-1), exactly 2^31 only if rounded up
			if v != 1<<31 {
				return uint64(v) & (1<<n - 1), pe(float64(v) != x)
			}
		}
		return fmt64.toInt(a, mx, n, trunc)
	}
}

// buildCvtToInt: cvt(t)ss2si and cvt(t)sd2si, r32/r64 <- xmm/m32/m64.
// Its handlers are static functions, one per op (cvtToIntOp), that
// take the conversion of their destination's size from cvtToIntLane: a
// code file keeps only blocks whose handlers are static.
func buildCvtToInt(f *ffmt, trunc bool) Builder {
	h := cvtToIntOp[b2i(f == fmt64)*2+b2i(trunc)]
	return func(in *Inst) Handler {
		d, s := &in.Args[0], &in.Args[1]
		if d.Kind != KReg || !isX(s) && !isMem(s) {
			return nil
		}
		return h
	}
}

// cvtToIntLane is the conversion by [f == fmt64][trunc][destination of
// 64 bits].
var cvtToIntLane = func() (t [2][2][2]func(uint64, uint32) (uint64, uint32)) {
	for tr := range 2 {
		for w := range 2 {
			t[0][tr][w] = cvt32toInt(uint(32<<w), tr == 1)
			t[1][tr][w] = cvt64toInt(uint(32<<w), tr == 1)
		}
	}
	return t
}()

// cvtToIntOp are the handlers of cvtss2si, cvttss2si, cvtsd2si and
// cvttsd2si, by (f == fmt64)*2+trunc.
var cvtToIntOp = [4]Handler{
	func(c *CPU, in *Inst) { cvtToInt(c, in, 0, 0) },
	func(c *CPU, in *Inst) { cvtToInt(c, in, 0, 1) },
	func(c *CPU, in *Inst) { cvtToInt(c, in, 1, 0) },
	func(c *CPU, in *Inst) { cvtToInt(c, in, 1, 1) },
}

func cvtToInt(c *CPU, in *Inst, f64, trunc int) {
	var a uint64
	if o := &in.Args[1]; o.Kind == KXMM {
		a = c.X[o.Reg][0] & (^uint64(0) >> (32 - 32*f64))
	} else {
		a = c.load(c.ea(o), int(in.MemSize))
	}
	v, fl := cvtToIntLane[f64&1][trunc&1][b2i(in.Args[0].Size == 8)](a, c.MXCSR)
	c.mxFinish(fl)
	c.R[in.Args[0].Reg] = v
}

// buildCvtFromInt: cvtsi2ss and cvtsi2sd, xmm <- r/m32 or r/m64; static
// handlers (cvtsi2ss, cvtsi2sd).
func buildCvtFromInt(f *ffmt) Builder {
	h := Handler(cvtsi2ss)
	if f == fmt64 {
		h = cvtsi2sd
	}
	return func(in *Inst) Handler {
		s := &in.Args[1]
		if !isX(&in.Args[0]) || s.Kind != KReg && !isMem(s) {
			return nil
		}
		return h
	}
}

func cvtsi2ss(c *CPU, in *Inst) { cvtFromInt(c, in, fmt32, ^uint64(0xffffffff)) }
func cvtsi2sd(c *CPU, in *Inst) { cvtFromInt(c, in, fmt64, 0) }

// cvtFromInt converts the integer source to f into the low lane of the
// destination, keeping its bits keep.
func cvtFromInt(c *CPU, in *Inst, f *ffmt, keep uint64) {
	x := &c.X[in.Args[0].Reg&15]
	x[0] = x[0]&keep | intToF(c, in, f)
}

// intToF converts the integer source operand (32 or 64 bits, signed) to
// f, the exception flags merged into MXCSR (cvtsi2ss/sd and their VEX
// forms).
func intToF(c *CPU, in *Inst, f *ffmt) uint64 {
	o := &in.Args[1]
	v := int64(c.get(o))
	if o.Size == 4 {
		v = int64(int32(v))
	}
	r, fl := f.fromInt(v, c.MXCSR)
	c.mxFinish(fl)
	return r
}

// lane32 and the like pick 32-bit lanes of an XMM value.
func lane32(x XMM, i int) uint64 { return x[i>>1] >> (32 * uint(i&1)) & 0xffffffff }

func int32Lane(x XMM, i int) int64 { return int64(int32(lane32(x, i))) }

func init() {
	register(x86asm.CVTSI2SS, buildCvtFromInt(fmt32))
	register(x86asm.CVTSI2SD, buildCvtFromInt(fmt64))
	register(x86asm.CVTSS2SI, buildCvtToInt(fmt32, false))
	register(x86asm.CVTTSS2SI, buildCvtToInt(fmt32, true))
	register(x86asm.CVTSD2SI, buildCvtToInt(fmt64, false))
	register(x86asm.CVTTSD2SI, buildCvtToInt(fmt64, true))

	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		r, fl := cvt32to64(s[0]&0xffffffff, c.MXCSR)
		c.mxFinish(fl)
		d[0] = r
	}, x86asm.CVTSS2SD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		r, fl := cvt64to32(s[0], c.MXCSR)
		c.mxFinish(fl)
		d[0] = d[0]&^0xffffffff | r
	}, x86asm.CVTSD2SS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := cvt32to64(s[0]&0xffffffff, mx)
		r1, f1 := cvt32to64(s[0]>>32, mx)
		c.mxFinish(f0 | f1)
		d[0], d[1] = r0, r1
	}, x86asm.CVTPS2PD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := cvt64to32(s[0], mx)
		r1, f1 := cvt64to32(s[1], mx)
		c.mxFinish(f0 | f1)
		d[0], d[1] = r0|r1<<32, 0
	}, x86asm.CVTPD2PS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		var r [4]uint64
		var fl uint32
		for i := range r {
			v, f := fmt32.fromInt(int32Lane(s, i), mx)
			r[i] = v
			fl |= f
		}
		c.mxFinish(fl)
		d[0], d[1] = r[0]|r[1]<<32, r[2]|r[3]<<32
	}, x86asm.CVTDQ2PS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0] = math.Float64bits(float64(int32(s[0])))
		d[1] = math.Float64bits(float64(int32(s[0] >> 32)))
	}, x86asm.CVTDQ2PD)
	for _, trunc := range []bool{false, true} {
		lane := cvt32toInt(32, trunc)
		op := x86asm.CVTPS2DQ
		if trunc {
			op = x86asm.CVTTPS2DQ
		}
		sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
			mx := c.MXCSR
			var r [4]uint64
			var fl uint32
			for i := range r {
				v, f := lane(lane32(s, i), mx)
				r[i] = v
				fl |= f
			}
			c.mxFinish(fl)
			d[0], d[1] = r[0]|r[1]<<32, r[2]|r[3]<<32
		}, op)
		lane64 := cvt64toInt(32, trunc)
		op = x86asm.CVTPD2DQ
		if trunc {
			op = x86asm.CVTTPD2DQ
		}
		sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
			mx := c.MXCSR
			r0, f0 := lane64(s[0], mx)
			r1, f1 := lane64(s[1], mx)
			c.mxFinish(f0 | f1)
			d[0], d[1] = r0|r1<<32, 0
		}, op)
	}
	registerCvtMMX()
}

// registerCvtMMX installs the conversions between XMM and MMX registers.
// An MMX register operand puts the x87 in MMX state; a memory operand
// does not.
func registerCvtMMX() {
	// mmxSrc reads a 64-bit MMX or memory source.
	mmxSrc := func(c *CPU, o *Operand) uint64 {
		if o.Kind == KMMX {
			return c.mmxRead(o.Reg)
		}
		return c.load64(c.ea(o))
	}
	fromMMX := func(f func(c *CPU, d *XMM, v uint64)) Builder {
		return func(in *Inst) Handler {
			if !isX(&in.Args[0]) || in.Args[1].Kind != KMMX && !isMem(&in.Args[1]) {
				return nil
			}
			return func(c *CPU, in *Inst) { f(c, &c.X[in.Args[0].Reg&15], mmxSrc(c, &in.Args[1])) }
		}
	}
	register(x86asm.CVTPI2PS, fromMMX(func(c *CPU, d *XMM, v uint64) {
		mx := c.MXCSR
		r0, f0 := fmt32.fromInt(int64(int32(v)), mx)
		r1, f1 := fmt32.fromInt(int64(int32(v>>32)), mx)
		c.mxFinish(f0 | f1)
		d[0] = r0 | r1<<32
	}))
	register(x86asm.CVTPI2PD, fromMMX(func(c *CPU, d *XMM, v uint64) {
		d[0] = math.Float64bits(float64(int32(v)))
		d[1] = math.Float64bits(float64(int32(v >> 32)))
	}))
	toMMX := func(op x86asm.Op, f *ffmt, trunc bool) {
		register(op, func(in *Inst) Handler {
			if in.Args[0].Kind != KMMX {
				return nil
			}
			var src func(c *CPU, o *Operand) XMM
			switch s := &in.Args[1]; {
			case isX(s):
				src = func(c *CPU, o *Operand) XMM { return c.X[o.Reg] }
			case isMem(s) && in.MemSize == 16:
				src = (*CPU).load128a
			case isMem(s) && in.MemSize == 8:
				src = func(c *CPU, o *Operand) XMM { return XMM{c.load64(c.ea(o))} }
			default:
				return nil
			}
			lane := cvt64toInt(32, trunc)
			if f == fmt32 {
				lane = cvt32toInt(32, trunc)
			}
			return func(c *CPU, in *Inst) {
				s := src(c, &in.Args[1])
				a0, a1 := s[0], s[1]
				if f == fmt32 {
					a0, a1 = s[0]&0xffffffff, s[0]>>32
				}
				// The switch to MMX state happens even if the
				// conversion then raises #XM.
				c.FPU.Top, c.FPU.Tag = 0, 0xff
				r0, f0 := lane(a0, c.MXCSR)
				r1, f1 := lane(a1, c.MXCSR)
				c.mxFinish(f0 | f1)
				c.mmxWrite(in.Args[0].Reg, r0|r1<<32)
			}
		})
	}
	toMMX(x86asm.CVTPS2PI, fmt32, false)
	toMMX(x86asm.CVTTPS2PI, fmt32, true)
	toMMX(x86asm.CVTPD2PI, fmt64, false)
	toMMX(x86asm.CVTTPD2PI, fmt64, true)
}
