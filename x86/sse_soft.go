package x86

// The exact model of SSE floating point: IEEE 754 single and double
// arithmetic on bit patterns with every MXCSR control honoured (rounding
// control, DAZ, FTZ, the masks) and the exception flags the hardware
// reports, using 64/128-bit integer arithmetic. It is the slow path: the
// handlers in sse_fp.go first try the host's float32/float64 arithmetic
// (which rounds like the default MXCSR) when the operands and result are
// ordinary, and fall back here for everything else.
//
// x86 specifics modelled here: tininess is detected after rounding; a
// masked underflow is reported only when the result is also inexact (an
// unmasked one whenever the result is tiny); FTZ (with underflow masked)
// turns a tiny result into a zero of the same sign and reports UE and PE;
// DAZ turns denormal operands into zeros of the same sign and suppresses
// DE; a NaN result is the first source's NaN (quieted) if it has one, else
// the second's, and invalid operations produce the default NaN (sign set,
// quiet bit only).

import (
	"math"
	"math/bits"
)

// ffmt describes a binary floating-point format. Values of either format
// travel as uint64 bit patterns (float32 in the low 32 bits).
type ffmt struct {
	width   uint   // total bits: 32 or 64
	frac    uint   // fraction bits
	bias    int    // exponent bias; also the largest unbiased exponent
	expMask uint64 // all-ones exponent field, unshifted
	sign    uint64 // the sign bit
}

var (
	fmt32 = &ffmt{width: 32, frac: 23, bias: 127, expMask: 0xff, sign: 1 << 31}
	fmt64 = &ffmt{width: 64, frac: 52, bias: 1023, expMask: 0x7ff, sign: 1 << 63}
)

// Rounding control values (MXCSR bits 13-14).
const (
	rcNearest = 0
	rcDown    = 1
	rcUp      = 2
	rcZero    = 3
)

// ones is the all-ones pattern of the format's width.
func (f *ffmt) ones() uint64 { return ^uint64(0) >> (64 - f.width) }

func (f *ffmt) expOf(x uint64) uint64  { return x >> f.frac & f.expMask }
func (f *ffmt) fracOf(x uint64) uint64 { return x & (1<<f.frac - 1) }
func (f *ffmt) isNaN(x uint64) bool    { return f.expOf(x) == f.expMask && f.fracOf(x) != 0 }
func (f *ffmt) isSNaN(x uint64) bool   { return f.isNaN(x) && x>>(f.frac-1)&1 == 0 }
func (f *ffmt) isInf(x uint64) bool    { return x&^f.sign == f.expMask<<f.frac }
func (f *ffmt) isZero(x uint64) bool   { return x&^f.sign == 0 }
func (f *ffmt) isDenormal(x uint64) bool {
	return f.expOf(x) == 0 && f.fracOf(x) != 0
}
func (f *ffmt) quiet(x uint64) uint64     { return x | 1<<(f.frac-1) }
func (f *ffmt) defaultNaN() uint64        { return f.sign | f.expMask<<f.frac | 1<<(f.frac-1) }
func (f *ffmt) inf(sign uint64) uint64    { return sign | f.expMask<<f.frac }
func (f *ffmt) maxFinite(s uint64) uint64 { return s | (f.expMask-1)<<f.frac | (1<<f.frac - 1) }

// daz applies MXCSR.DAZ to an operand.
func (f *ffmt) daz(x uint64, mx uint32) uint64 {
	if mx&MxDAZ != 0 && f.isDenormal(x) {
		return x & f.sign
	}
	return x
}

// denormalFlag is DE if x is a denormal operand (after daz).
func (f *ffmt) denormalFlag(x uint64) uint32 {
	if f.isDenormal(x) {
		return MxDE
	}
	return 0
}

// unpack splits a finite x into sign bit, exponent and integer
// significand: |x| = m * 2^e (m is 0 for zeros).
func (f *ffmt) unpack(x uint64) (s uint64, e int, m uint64) {
	s = x & f.sign
	ex := int(f.expOf(x))
	m = f.fracOf(x)
	if ex == 0 {
		return s, 1 - f.bias - int(f.frac), m
	}
	return s, ex - f.bias - int(f.frac), m | 1<<f.frac
}

// nan2 handles NaN operands of a binary arithmetic operation: ok reports
// that a or b is a NaN and r is the result.
func (f *ffmt) nan2(a, b uint64) (r uint64, fl uint32, ok bool) {
	an, bn := f.isNaN(a), f.isNaN(b)
	if !an && !bn {
		return 0, 0, false
	}
	if f.isSNaN(a) || f.isSNaN(b) {
		fl = MxIE
	}
	if an {
		return f.quiet(a), fl, true
	}
	return f.quiet(b), fl, true
}

// rnd shifts m right by sh bits, rounding by rc for a value of sign neg;
// inexact reports discarded nonzero bits. The result may carry into bit
// 64-sh.
func rnd(m uint64, sh uint, neg bool, rc uint32) (q uint64, inexact bool) {
	var rem, half uint64
	switch {
	case sh == 0:
		return m, false
	case sh < 64:
		q, rem, half = m>>sh, m&(1<<sh-1), 1<<(sh-1)
	case sh == 64:
		rem, half = m, 1<<63
	default:
		rem = m
		if rem != 0 && (rc == rcUp && !neg || rc == rcDown && neg) {
			return 1, true
		}
		return 0, rem != 0
	}
	if rem == 0 {
		return q, false
	}
	switch rc {
	case rcNearest:
		if rem > half || rem == half && q&1 != 0 {
			q++
		}
	case rcDown:
		if neg {
			q++
		}
	case rcUp:
		if !neg {
			q++
		}
	}
	return q, true
}

// round returns the value sign * m * 2^e (m != 0) rounded to the format
// by MXCSR mx, adding the flags it raises to fl. A caller whose m is not
// exact must keep at least two bits below the format's precision and OR a
// sticky bit into bit 0.
func (f *ffmt) round(s uint64, e int, m uint64, mx uint32, fl uint32) (uint64, uint32) {
	lz := bits.LeadingZeros64(m)
	m <<= uint(lz)
	e += 63 - lz // exponent of the leading bit
	p := f.frac + 1
	sh := 64 - p
	neg := s != 0
	rc := mx >> 13 & 3
	emin := 1 - f.bias
	if e >= emin {
		q, inexact := rnd(m, sh, neg, rc)
		if q>>p != 0 {
			q >>= 1
			e++
		}
		if e > f.bias {
			if mx&MxOM == 0 {
				// Unmasked: the trap gets no result; PE tells whether
				// rounding with an unbounded exponent was exact.
				return 0, fl | MxOE | pe(inexact)
			}
			return f.overflow(s, mx, fl)
		}
		if inexact {
			fl |= MxPE
		}
		return s | uint64(e+f.bias)<<f.frac | q&(1<<f.frac-1), fl
	}
	// Tiny before rounding; x86 decides tininess after rounding (to the
	// format's precision with an unbounded exponent).
	q, inexact := rnd(m, sh, neg, rc)
	tiny := e < emin-1 || q>>p == 0
	if tiny && mx&MxUM == 0 {
		// Unmasked: the trap gets no result; PE tells whether rounding
		// with an unbounded exponent was exact.
		return 0, fl | MxUE | pe(inexact)
	}
	if tiny && mx&MxFZ != 0 {
		return s, fl | MxUE | MxPE
	}
	q, inexact = rnd(m, sh+uint(emin-e), neg, rc)
	if inexact {
		fl |= MxPE
		if tiny {
			fl |= MxUE
		}
	}
	// A q that rounded up to 2^(p-1) encodes the smallest normal.
	return s | q, fl
}

// overflow is the result of a finite value too large for the format.
func (f *ffmt) overflow(s uint64, mx uint32, fl uint32) (uint64, uint32) {
	fl |= MxOE | MxPE
	switch mx >> 13 & 3 {
	case rcZero:
		return f.maxFinite(s), fl
	case rcDown:
		if s == 0 {
			return f.maxFinite(s), fl
		}
	case rcUp:
		if s != 0 {
			return f.maxFinite(s), fl
		}
	}
	return f.inf(s), fl
}

// zeroSum is the sign of an exact zero sum of operands of opposite signs.
func (f *ffmt) zeroSum(mx uint32) uint64 {
	if mx>>13&3 == rcDown {
		return f.sign
	}
	return 0
}

// add returns a+b.
func (f *ffmt) add(a, b uint64, mx uint32) (uint64, uint32) {
	a, b = f.daz(a, mx), f.daz(b, mx)
	if r, fl, ok := f.nan2(a, b); ok {
		return r, fl
	}
	return f.addNum(a, b, mx)
}

// sub returns a-b.
func (f *ffmt) sub(a, b uint64, mx uint32) (uint64, uint32) {
	a, b = f.daz(a, mx), f.daz(b, mx)
	if r, fl, ok := f.nan2(a, b); ok {
		return r, fl
	}
	return f.addNum(a, b^f.sign, mx)
}

// addNum adds two non-NaN operands.
func (f *ffmt) addNum(a, b uint64, mx uint32) (uint64, uint32) {
	fl := f.denormalFlag(a) | f.denormalFlag(b)
	ai, bi := f.isInf(a), f.isInf(b)
	if ai || bi {
		if ai && bi && (a^b)&f.sign != 0 {
			return f.defaultNaN(), fl | MxIE
		}
		if ai {
			return a, fl
		}
		return b, fl
	}
	sa, ea, ma := f.unpack(a)
	sb, eb, mb := f.unpack(b)
	switch {
	case ma == 0 && mb == 0:
		if sa == sb {
			return sa, fl
		}
		return f.zeroSum(mx), fl
	case mb == 0:
		return f.round(sa, ea, ma, mx, fl)
	case ma == 0:
		return f.round(sb, eb, mb, mx, fl)
	}
	// Put both leading bits at bit 62 and align the smaller operand,
	// keeping a sticky bit.
	la, lb := bits.LeadingZeros64(ma)-1, bits.LeadingZeros64(mb)-1
	ma, ea = ma<<uint(la), ea-la
	mb, eb = mb<<uint(lb), eb-lb
	if ea < eb || ea == eb && ma < mb {
		sa, ea, ma, sb, eb, mb = sb, eb, mb, sa, ea, ma
	}
	mb = shiftRightJam(mb, uint(ea-eb))
	if sa == sb {
		return f.round(sa, ea, ma+mb, mx, fl)
	}
	if ma == mb {
		return f.zeroSum(mx), fl
	}
	return f.round(sa, ea, ma-mb, mx, fl)
}

// shiftRightJam shifts m right by n bits, ORing the lost bits into bit 0.
func shiftRightJam(m uint64, n uint) uint64 {
	if n == 0 {
		return m
	}
	if n >= 64 {
		if m != 0 {
			return 1
		}
		return 0
	}
	r := m >> n
	if m<<(64-n) != 0 {
		r |= 1
	}
	return r
}

// mul returns a*b.
func (f *ffmt) mul(a, b uint64, mx uint32) (uint64, uint32) {
	a, b = f.daz(a, mx), f.daz(b, mx)
	if r, fl, ok := f.nan2(a, b); ok {
		return r, fl
	}
	fl := f.denormalFlag(a) | f.denormalFlag(b)
	s := (a ^ b) & f.sign
	ai, bi := f.isInf(a), f.isInf(b)
	az, bz := f.isZero(a), f.isZero(b)
	switch {
	case ai && bz || bi && az:
		return f.defaultNaN(), fl | MxIE
	case ai || bi:
		return f.inf(s), fl
	case az || bz:
		return s, fl
	}
	_, ea, ma := f.unpack(a)
	_, eb, mb := f.unpack(b)
	la, lb := bits.LeadingZeros64(ma), bits.LeadingZeros64(mb)
	hi, lo := bits.Mul64(ma<<uint(la), mb<<uint(lb))
	if lo != 0 {
		hi |= 1
	}
	return f.round(s, ea-la+eb-lb+64, hi, mx, fl)
}

// div returns a/b.
func (f *ffmt) div(a, b uint64, mx uint32) (uint64, uint32) {
	a, b = f.daz(a, mx), f.daz(b, mx)
	if r, fl, ok := f.nan2(a, b); ok {
		return r, fl
	}
	s := (a ^ b) & f.sign
	ai, bi := f.isInf(a), f.isInf(b)
	az, bz := f.isZero(a), f.isZero(b)
	if bz && !az && !ai {
		// Divide by zero outranks a denormal dividend.
		return f.inf(s), MxZE
	}
	fl := f.denormalFlag(a) | f.denormalFlag(b)
	switch {
	case ai && bi || az && bz:
		return f.defaultNaN(), fl | MxIE
	case ai:
		return f.inf(s), fl
	case bi || az:
		return s, fl
	}
	_, ea, ma := f.unpack(a)
	_, eb, mb := f.unpack(b)
	la, lb := bits.LeadingZeros64(ma), bits.LeadingZeros64(mb)
	ma, mb = ma<<uint(la), mb<<uint(lb)
	e := ea - la - eb + lb - 64
	hi, lo := ma, uint64(0)
	if ma >= mb {
		hi, lo = ma>>1, ma<<63
		e++
	}
	q, rem := bits.Div64(hi, lo, mb)
	if rem != 0 {
		q |= 1
	}
	return f.round(s, e, q, mx, fl)
}

// sqrt returns the square root of a.
func (f *ffmt) sqrt(a uint64, mx uint32) (uint64, uint32) {
	a = f.daz(a, mx)
	if f.isNaN(a) {
		if f.isSNaN(a) {
			return f.quiet(a), MxIE
		}
		return a, 0
	}
	if f.isZero(a) {
		return a, 0
	}
	if a&f.sign != 0 {
		return f.defaultNaN(), MxIE
	}
	if f.isInf(a) {
		return a, 0
	}
	fl := f.denormalFlag(a)
	_, e, m := f.unpack(a)
	lz := bits.LeadingZeros64(m)
	m <<= uint(lz)
	e -= lz
	// |a| = N * 2^(e-64+t) with N = m * 2^(64-t) < 2^126 and an even
	// exponent.
	t := uint(2)
	if (e-64+2)&1 != 0 {
		t = 3
	}
	nhi, nlo := m>>t, m<<(64-t)
	r, exact := isqrt128(nhi, nlo)
	if !exact {
		r |= 1
	}
	return f.round(0, (e-64+int(t))/2, r, mx, fl)
}

// isqrt128 returns floor(sqrt(N)) for N = hi*2^64+lo, 2^124 <= N < 2^126,
// and whether the root is exact.
func isqrt128(hi, lo uint64) (uint64, bool) {
	// A float estimate good to about 2^-52, one Newton step, then a
	// final correction by at most a few units.
	est := math.Sqrt(float64(hi)*0x1p64 + float64(lo))
	r := uint64(est)
	q, _ := bits.Div64(hi, lo, r)
	r = r/2 + q/2 + (r & q & 1)
	for {
		sh, sl := bits.Mul64(r, r)
		if sh > hi || sh == hi && sl > lo {
			r--
			continue
		}
		// r*r <= N; check (r+1)^2 > N.
		nh, nl := bits.Mul64(r+1, r+1)
		if nh < hi || nh == hi && nl <= lo {
			r++
			continue
		}
		return r, sh == hi && sl == lo
	}
}
