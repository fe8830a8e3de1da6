package x86

// SSE/SSE2 floating-point arithmetic, comparisons, logic and shuffles.
//
// Each lane operation first tries the host's own float32/float64
// arithmetic, which rounds exactly as the default MXCSR does, when MXCSR
// is the default one (all exceptions masked, round to nearest, no DAZ or
// FTZ) and operands and result are zeros or ordinary normal numbers; it
// then only has to find out whether the result was inexact (PE), with an
// exact error term. Everything else (NaNs, infinities, denormals,
// underflow, overflow, other MXCSR settings) goes to the exact model in
// sse_soft.go. TestSoftFloatMatchesHost checks the two against each other
// and the host; the differential test checks both against the CPU.

import (
	"math"

	"golang.org/x/arch/x86/x86asm"
)

// fop is a binary floating-point lane operation: result and MXCSR flags.
type fop func(a, b uint64, mx uint32) (uint64, uint32)

// fastMX reports whether MXCSR allows the host-arithmetic fast path.
func fastMX(mx uint32) bool { return mx&0xffc0 == mxDefault }

// isNorm32 and isNorm64 report normal (finite, nonzero, not denormal)
// values.
func isNorm32(x uint64) bool { return (x>>23&0xff)-1 < 0xfe }
func isNorm64(x uint64) bool { return (x>>52&0x7ff)-1 < 0x7fe }

// ord32 and ord64 report the operands the fast paths take: zeros and
// normal numbers.
func ord32(x uint64) bool { return isNorm32(x) || x&0x7fffffff == 0 }
func ord64(x uint64) bool { return isNorm64(x) || x<<1 == 0 }

// isNormR32 and isNormR64 accept results of inexact operations for the
// fast path: normal, and not in the lowest binade, where a tiny exact
// result may have rounded up to the smallest normal (an underflow by x86's
// after-rounding rule).
func isNormR32(x uint64) bool { return (x>>23&0xff)-2 < 0xfd }
func isNormR64(x uint64) bool { return (x>>52&0x7ff)-2 < 0x7fd }

func f32(x uint64) float32   { return math.Float32frombits(uint32(x)) }
func f64(x uint64) float64   { return math.Float64frombits(x) }
func b32(x float32) uint64   { return uint64(math.Float32bits(x)) }
func pe(inexact bool) uint32 { return uint32(b2u(inexact)) << 5 }

// Sums of zeros and normal numbers are exact when they are tiny (both
// operands are multiples of the smallest denormal), so any finite sum is
// right, and the TwoSum error term tells whether it is inexact.
//
// The float32 sums are computed in float64 and rounded once more to
// float32, which is harmless (53 >= 2*24+2): there the operands and every
// TwoSum term stay multiples of 2^-149, far from float64's denormals, so
// the host raises no flag the guest would not (the fast paths leave flags
// to the host: hostfp.go).

func add32(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && ord32(a) && ord32(b) {
		if r, fl, ok := sum32(float64(f32(a)), float64(f32(b))); ok {
			return r, fl
		}
	}
	return fmt32.add(a, b, mx)
}

func sub32(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && ord32(a) && ord32(b) {
		if r, fl, ok := sum32(float64(f32(a)), -float64(f32(b))); ok {
			return r, fl
		}
	}
	return fmt32.sub(a, b, mx)
}

// sum32 is add32 and sub32's fast path: x+y rounded to float32 and its
// PE, unless it overflows.
func sum32(x, y float64) (uint64, uint32, bool) {
	s := x + y
	r := float32(s)
	switch rb := b32(r); rb >> 23 & 0xff {
	case 0:
		return rb, 0, true // tiny, so exact (and float64(r) would raise DE)
	case 0xff:
		return 0, 0, false
	default:
		return rb, pe(float64(r) != s || twoSumErr(x, y, s) != 0), true
	}
}

// twoSumErr is the rounding error of s = x+y (Knuth's TwoSum).
func twoSumErr(x, y, s float64) float64 {
	z := s - x
	return (x - (s - z)) + (y - z)
}

// The float64 TwoSum runs only on zeros and numbers in [2^-969, 2^1021).
// Its terms are then all multiples of 2^-1021, so none is a denormal that
// would raise DE on the host, and all below 2^1023, so none of its
// intermediate sums overflows (with an operand near the largest double,
// s - z could round to infinity and raise OE and then IE in the host,
// though x+y itself does not overflow).
func big64(x uint64) bool { return (x>>52&0x7ff)-54 < 0x7fc-54 || x<<1 == 0 }

func add64(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && big64(a) && big64(b) {
		if r, fl, ok := sum64(f64(a), f64(b)); ok {
			return r, fl
		}
	}
	return fmt64.add(a, b, mx)
}

func sub64(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && big64(a) && big64(b) {
		if r, fl, ok := sum64(f64(a), -f64(b)); ok {
			return r, fl
		}
	}
	return fmt64.sub(a, b, mx)
}

// sum64 is add64 and sub64's fast path: x+y and its PE, unless it
// overflows.
func sum64(x, y float64) (uint64, uint32, bool) {
	r := x + y
	if rb := math.Float64bits(r); rb>>52&0x7ff != 0x7ff {
		return rb, pe(twoSumErr(x, y, r) != 0), true
	}
	return 0, 0, false
}

// Products, quotients and roots of zeros are exact zeros. Otherwise the
// float32 operations are computed in float64, where products are exact
// and quotients and roots come with exact remainders; the float64 ones
// take their error terms from an FMA, which is exact only while they do
// not underflow, so the fast paths require results (or dividends) well
// above the denormal range.

func mul32(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && ord32(a) && ord32(b) {
		p := float64(f32(a)) * float64(f32(b)) // exact
		r := float32(p)
		if rb := b32(r); isNormR32(rb) || p == 0 {
			return rb, pe(float64(r) != p)
		}
	}
	return fmt32.mul(a, b, mx)
}

func div32(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && ord32(a) && isNorm32(b) {
		x, y := float64(f32(a)), float64(f32(b))
		q := x / y
		r := float32(q) // double rounding is harmless: 53 >= 2*24+2
		if rb := b32(r); isNormR32(rb) || x == 0 {
			return rb, pe(float64(r) != q || math.FMA(-q, y, x) != 0)
		}
	}
	return fmt32.div(a, b, mx)
}

func sqrt32(a uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && (isNorm32(a) && a>>31 == 0 || a&0x7fffffff == 0) {
		x := float64(f32(a))
		s := math.Sqrt(x)
		r := float32(s)
		return b32(r), pe(float64(r) != s || s*s != x)
	}
	return fmt32.sqrt(a, mx)
}

func mul64(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && ord64(a) && ord64(b) {
		x, y := f64(a), f64(b)
		r := float64(x * y)
		if x == 0 || y == 0 {
			return math.Float64bits(r), 0
		}
		if rb := math.Float64bits(r); (rb>>52&0x7ff)-64 < 0x7ff-64 {
			return rb, pe(math.FMA(x, y, -r) != 0)
		}
	}
	return fmt64.mul(a, b, mx)
}

func div64(a, b uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && ((a>>52&0x7ff)-100 < 0x7ff-100 || a<<1 == 0) && isNorm64(b) {
		x, y := f64(a), f64(b)
		r := x / y
		if rb := math.Float64bits(r); isNormR64(rb) || x == 0 {
			return rb, pe(math.FMA(-r, y, x) != 0)
		}
	}
	return fmt64.div(a, b, mx)
}

func sqrt64(a uint64, mx uint32) (uint64, uint32) {
	if fastMX(mx) && ((a>>52&0x7ff)-100 < 0x7ff-100 && a>>63 == 0 || a<<1 == 0) {
		x := f64(a)
		r := math.Sqrt(x)
		return math.Float64bits(r), pe(math.FMA(-r, r, x) != 0)
	}
	return fmt64.sqrt(a, mx)
}

func sqrt32b(a, _ uint64, mx uint32) (uint64, uint32) { return sqrt32(a, mx) }
func sqrt64b(a, _ uint64, mx uint32) (uint64, uint32) { return sqrt64(a, mx) }

// minmax implements minps/maxps and friends: the first operand if it is
// strictly less (greater) than the second, else the second, which covers
// NaNs (with IE for any NaN) and zeros of either sign.
func (f *ffmt) minmax(a, b uint64, mx uint32, max bool) (uint64, uint32) {
	a, b = f.daz(a, mx), f.daz(b, mx)
	if f.isNaN(a) || f.isNaN(b) {
		return b, MxIE
	}
	fl := f.denormalFlag(a) | f.denormalFlag(b)
	x, y := f.orderKey(a), f.orderKey(b)
	if max && x > y || !max && x < y {
		return a, fl
	}
	return b, fl
}

func min32(a, b uint64, mx uint32) (uint64, uint32) { return fmt32.minmax(a, b, mx, false) }
func max32(a, b uint64, mx uint32) (uint64, uint32) { return fmt32.minmax(a, b, mx, true) }
func min64(a, b uint64, mx uint32) (uint64, uint32) { return fmt64.minmax(a, b, mx, false) }
func max64(a, b uint64, mx uint32) (uint64, uint32) { return fmt64.minmax(a, b, mx, true) }

// compare evaluates cmpps predicate pred (0-7: eq lt le unord neq nlt nle
// ord). lt, le, nlt and nle signal IE on any NaN, the others on SNaNs.
func (f *ffmt) compare(a, b uint64, mx uint32, pred uint32) (bool, uint32) {
	a, b = f.daz(a, mx), f.daz(b, mx)
	var fl uint32
	unord := f.isNaN(a) || f.isNaN(b)
	if unord {
		if pred&3 == 1 || pred&3 == 2 || f.isSNaN(a) || f.isSNaN(b) {
			fl = MxIE
		}
	} else {
		fl = f.denormalFlag(a) | f.denormalFlag(b)
	}
	// Compared as integers, not host floats, which would raise flags of
	// their own (DE for a denormal beside a NaN, say: hostfp.go).
	x, y := f.orderKey(a), f.orderKey(b)
	var r bool
	switch pred & 3 {
	case 0:
		r = !unord && x == y
	case 1:
		r = !unord && x < y
	case 2:
		r = !unord && x <= y
	case 3:
		r = unord
	}
	return r != (pred&4 != 0), fl
}

// orderKey maps a non-NaN value's bits to an integer of the same order,
// both zeros to 0: magnitudes order like their bits.
func (f *ffmt) orderKey(x uint64) int64 {
	sign := uint64(1) << (f.width - 1)
	if m := int64(x &^ sign & f.ones()); x&sign == 0 {
		return m
	} else {
		return -m
	}
}

// cmpOp returns the lane operation of cmpps/cmpss (f is fmt32) or
// cmppd/cmpsd with predicate pred: all ones for true.
func cmpOp(f *ffmt, pred uint32) fop {
	ones := f.ones()
	return func(a, b uint64, mx uint32) (uint64, uint32) {
		r, fl := f.compare(a, b, mx, pred)
		if r {
			return ones, fl
		}
		return 0, fl
	}
}

// packed32 applies op to the four float32 lanes.
func packed32(op fop) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := op(d[0]&0xffffffff, s[0]&0xffffffff, mx)
		r1, f1 := op(d[0]>>32, s[0]>>32, mx)
		r2, f2 := op(d[1]&0xffffffff, s[1]&0xffffffff, mx)
		r3, f3 := op(d[1]>>32, s[1]>>32, mx)
		c.mxFinish(f0 | f1 | f2 | f3)
		d[0], d[1] = r0|r1<<32, r2|r3<<32
	}
}

// packed64 applies op to the two float64 lanes.
func packed64(op fop) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := op(d[0], s[0], mx)
		r1, f1 := op(d[1], s[1], mx)
		c.mxFinish(f0 | f1)
		d[0], d[1] = r0, r1
	}
}

// scalar32 applies op to the low float32 lane, keeping the others.
func scalar32(op fop) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		r, fl := op(d[0]&0xffffffff, s[0]&0xffffffff, c.MXCSR)
		c.mxFinish(fl)
		d[0] = d[0]&^0xffffffff | r
	}
}

// scalar64 applies op to the low float64 lane, keeping the high one.
func scalar64(op fop) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		r, fl := op(d[0], s[0], c.MXCSR)
		c.mxFinish(fl)
		d[0] = r
	}
}

// unarySrc adapts a unary operation (sqrt) to take its operand from the
// source: sqrtps xmm1, xmm2 computes sqrt(xmm2) into xmm1.
func unarySrc(op fop) fop {
	return func(a, b uint64, mx uint32) (uint64, uint32) { return op(b, 0, mx) }
}

// buildCmp picks cmpps/cmpss/cmppd/cmpsd with the predicate in the
// immediate (bits 0-2; legacy SSE ignores the rest).
func buildCmp(f *ffmt, wrap func(fop) xfn) Builder {
	return func(in *Inst) Handler {
		if in.NArgs != 3 || in.Args[2].Kind != KImm {
			return nil
		}
		return buildX(wrap(cmpOp(f, uint32(in.Args[2].Imm)&7)))(in)
	}
}

// comis implements comiss/comisd (signaling) and ucomiss/ucomisd: ZF, PF
// and CF from the comparison, OF, SF and AF cleared.
func comis(f *ffmt, signaling bool) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mask := f.ones()
		mx := c.MXCSR
		a, b := f.daz(d[0]&mask, mx), f.daz(s[0]&mask, mx)
		var fl uint32
		var flags uint64
		if f.isNaN(a) || f.isNaN(b) {
			if signaling || f.isSNaN(a) || f.isSNaN(b) {
				fl = MxIE
			}
			flags = FlagZF | FlagPF | FlagCF
		} else {
			fl = f.denormalFlag(a) | f.denormalFlag(b)
			x, y := f.orderKey(a), f.orderKey(b)
			if x < y {
				flags = FlagCF
			} else if x == y {
				flags = FlagZF
			}
		}
		c.mxFinish(fl)
		c.setArith(ArithFlags, flags)
	}
}

func init() {
	arith := []struct {
		ps, pd, ss, sd x86asm.Op
		f32, f64       fop
	}{
		{x86asm.ADDPS, x86asm.ADDPD, x86asm.ADDSS, x86asm.ADDSD, add32, add64},
		{x86asm.SUBPS, x86asm.SUBPD, x86asm.SUBSS, x86asm.SUBSD, sub32, sub64},
		{x86asm.MULPS, x86asm.MULPD, x86asm.MULSS, x86asm.MULSD, mul32, mul64},
		{x86asm.DIVPS, x86asm.DIVPD, x86asm.DIVSS, x86asm.DIVSD, div32, div64},
		{x86asm.MINPS, x86asm.MINPD, x86asm.MINSS, x86asm.MINSD, min32, min64},
		{x86asm.MAXPS, x86asm.MAXPD, x86asm.MAXSS, x86asm.MAXSD, max32, max64},
		{x86asm.SQRTPS, x86asm.SQRTPD, x86asm.SQRTSS, x86asm.SQRTSD, unarySrc(sqrt32b), unarySrc(sqrt64b)},
	}
	for _, a := range arith {
		sse(packed32(a.f32), a.ps)
		sse(packed64(a.f64), a.pd)
		sse(scalar32(a.f32), a.ss)
		sse(scalar64(a.f64), a.sd)
	}
	register(x86asm.CMPPS, buildCmp(fmt32, packed32))
	register(x86asm.CMPPD, buildCmp(fmt64, packed64))
	register(x86asm.CMPSS, buildCmp(fmt32, scalar32))
	register(x86asm.CMPSD_XMM, buildCmp(fmt64, scalar64))
	sse(comis(fmt32, true), x86asm.COMISS)
	sse(comis(fmt32, false), x86asm.UCOMISS)
	sse(comis(fmt64, true), x86asm.COMISD)
	sse(comis(fmt64, false), x86asm.UCOMISD)

	// Bitwise logic, with direct handlers for register operands (pxor
	// and por are hot in string functions) and for the same register as
	// both operands (the xorps/pxor zeroing idiom).
	logic := func(f func(a, b uint64) uint64, same, regs Handler, ops ...x86asm.Op) {
		build := buildX(func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = f(d[0], s[0]), f(d[1], s[1]) })
		for _, op := range ops {
			register(op, func(in *Inst) Handler {
				if isX(&in.Args[0]) && isX(&in.Args[1]) {
					if in.Args[0].Reg == in.Args[1].Reg {
						return same
					}
					return regs
				}
				return build(in)
			})
		}
	}
	logic(func(a, b uint64) uint64 { return a & b }, opNop, func(c *CPU, in *Inst) {
		d, s := &c.X[in.Args[0].Reg&15], &c.X[in.Args[1].Reg&15]
		d[0], d[1] = d[0]&s[0], d[1]&s[1]
	}, x86asm.ANDPS, x86asm.ANDPD, x86asm.PAND)
	logic(func(a, b uint64) uint64 { return ^a & b }, zeroX, func(c *CPU, in *Inst) {
		d, s := &c.X[in.Args[0].Reg&15], &c.X[in.Args[1].Reg&15]
		d[0], d[1] = ^d[0]&s[0], ^d[1]&s[1]
	}, x86asm.ANDNPS, x86asm.ANDNPD, x86asm.PANDN)
	logic(func(a, b uint64) uint64 { return a | b }, opNop, func(c *CPU, in *Inst) {
		d, s := &c.X[in.Args[0].Reg&15], &c.X[in.Args[1].Reg&15]
		d[0], d[1] = d[0]|s[0], d[1]|s[1]
	}, x86asm.ORPS, x86asm.ORPD, x86asm.POR)
	logic(func(a, b uint64) uint64 { return a ^ b }, zeroX, func(c *CPU, in *Inst) {
		d, s := &c.X[in.Args[0].Reg&15], &c.X[in.Args[1].Reg&15]
		d[0], d[1] = d[0]^s[0], d[1]^s[1]
	}, x86asm.XORPS, x86asm.XORPD, x86asm.PXOR)

	// Shuffles and unpacks of float lanes.
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		imm := in.Args[2].Imm
		dl := [4]uint64{d[0] & 0xffffffff, d[0] >> 32, d[1] & 0xffffffff, d[1] >> 32}
		sl := [4]uint64{s[0] & 0xffffffff, s[0] >> 32, s[1] & 0xffffffff, s[1] >> 32}
		d[0] = dl[imm&3] | dl[imm>>2&3]<<32
		d[1] = sl[imm>>4&3] | sl[imm>>6&3]<<32
	}, x86asm.SHUFPS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		imm := in.Args[2].Imm
		d[0], d[1] = d[imm&1], s[imm>>1&1]
	}, x86asm.SHUFPD)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0], d[1] = d[0]&0xffffffff|s[0]<<32, d[0]>>32|s[0]&^0xffffffff
	}, x86asm.UNPCKLPS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0], d[1] = d[1]&0xffffffff|s[1]<<32, d[1]>>32|s[1]&^0xffffffff
	}, x86asm.UNPCKHPS)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) { d[1] = s[0] }, x86asm.UNPCKLPD, x86asm.PUNPCKLQDQ)
	sse(func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = d[1], s[1] }, x86asm.UNPCKHPD, x86asm.PUNPCKHQDQ)
}

func zeroX(c *CPU, in *Inst) { c.X[in.Args[0].Reg&15] = XMM{} }
