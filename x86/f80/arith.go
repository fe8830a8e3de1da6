package f80

import "math/bits"

// check2 handles the operands that end a two-operand arithmetic operation
// at once: unsupported formats (IE, default NaN) and NaNs (propagated).
func check2(a, b F80) (F80, Exc, bool) {
	if a.IsUnsupported() || b.IsUnsupported() {
		return Indefinite, IE, true
	}
	if a.IsNaN() || b.IsNaN() {
		r, e := propagate2(a, b)
		return r, e, true
	}
	return F80{}, 0, false
}

func denormals(a, b F80) Exc {
	if a.IsDenormal() || b.IsDenormal() {
		return DE
	}
	return 0
}

// Add returns a + b (FADD).
func Add(a, b F80, rc Rounding, pc Precision) (F80, Exc) {
	return addSub(a, b, false, rc, pc)
}

// Sub returns a - b (FSUB; FSUBR is Sub with the operands swapped).
func Sub(a, b F80, rc Rounding, pc Precision) (F80, Exc) {
	return addSub(a, b, true, rc, pc)
}

func addSub(a, b F80, negB bool, rc Rounding, pc Precision) (F80, Exc) {
	if r, e, done := check2(a, b); done {
		return r, e
	}
	if negB {
		b.SE ^= signBit
	}
	ai, bi := a.IsInf(), b.IsInf()
	if ai || bi {
		if ai && bi && a.SE != b.SE {
			return Indefinite, IE
		}
		e := denormals(a, b)
		if ai {
			return a, e
		}
		return b, e
	}
	e := denormals(a, b)
	sa, ea, ma := unpack(a)
	sb, eb, mb := unpack(b)
	p := precBits(pc)
	var r F80
	var e2 Exc
	switch {
	case ma == 0 && mb == 0:
		if sa == sb {
			return pack(sa, 0, 0), e
		}
		return pack(rc == RoundDown, 0, 0), e
	case mb == 0:
		r, e2 = roundPack(sa, ea, ma, 0, rc, p)
	case ma == 0:
		r, e2 = roundPack(sb, eb, mb, 0, rc, p)
	case sa == sb:
		if ea < eb {
			ea, eb, ma, mb = eb, ea, mb, ma
		}
		bh, bl := shiftRightJam128(mb, 0, uint(ea-eb))
		hi, c := bits.Add64(ma, bh, 0)
		if c != 0 {
			hi, bl = shiftRightJam128(hi, bl, 1)
			hi |= intBit
			ea++
		}
		r, e2 = roundPack(sa, ea, hi, bl, rc, p)
	default:
		if ea < eb || (ea == eb && ma < mb) {
			sa, ea, eb, ma, mb = sb, eb, ea, mb, ma
		}
		if ea == eb && ma == mb {
			return pack(rc == RoundDown, 0, 0), e
		}
		bh, bl := shiftRightJam128(mb, 0, uint(ea-eb))
		lo, br := bits.Sub64(0, bl, 0)
		hi, _ := bits.Sub64(ma, bh, br)
		r, e2 = normRoundPack(sa, ea, hi, lo, rc, p)
	}
	return r, e | e2
}

// Mul returns a * b (FMUL).
func Mul(a, b F80, rc Rounding, pc Precision) (F80, Exc) {
	if r, e, done := check2(a, b); done {
		return r, e
	}
	sign := a.Sign() != b.Sign()
	ai, bi := a.IsInf(), b.IsInf()
	az, bz := a.IsZero(), b.IsZero()
	if (ai && bz) || (bi && az) {
		return Indefinite, IE
	}
	e := denormals(a, b)
	if ai || bi {
		return pack(sign, maxExp, intBit), e
	}
	if az || bz {
		return pack(sign, 0, 0), e
	}
	_, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	hi, lo := bits.Mul64(ma, mb)
	exp := ea + eb - bias + 1
	if hi&intBit == 0 {
		hi = hi<<1 | lo>>63
		lo <<= 1
		exp--
	}
	r, e2 := roundPack(sign, exp, hi, lo, rc, precBits(pc))
	return r, e | e2
}

// Div returns a / b (FDIV; FDIVR is Div with the operands swapped).
func Div(a, b F80, rc Rounding, pc Precision) (F80, Exc) {
	if r, e, done := check2(a, b); done {
		return r, e
	}
	sign := a.Sign() != b.Sign()
	ai, bi := a.IsInf(), b.IsInf()
	az, bz := a.IsZero(), b.IsZero()
	if (ai && bi) || (az && bz) {
		return Indefinite, IE
	}
	e := denormals(a, b)
	switch {
	case ai:
		return pack(sign, maxExp, intBit), e
	case bi:
		return pack(sign, 0, 0), e
	case bz:
		return pack(sign, maxExp, intBit), ZE // ZE takes priority over DE
	case az:
		return pack(sign, 0, 0), e
	}
	_, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	var q, rem uint64
	exp := ea - eb + bias
	if ma < mb {
		q, rem = bits.Div64(ma, 0, mb)
		exp--
	} else {
		q, rem = bits.Div64(ma>>1, ma<<63, mb)
	}
	q2, rem2 := bits.Div64(rem, 0, mb)
	if rem2 != 0 {
		q2 |= 1
	}
	r, e2 := roundPack(sign, exp, q, q2, rc, precBits(pc))
	return r, e | e2
}

// check1 handles unsupported and NaN operands of one-operand operations.
func check1(a F80) (F80, Exc, bool) {
	if a.IsUnsupported() {
		return Indefinite, IE, true
	}
	if a.IsNaN() {
		if a.IsSNaN() {
			return quiet(a), IE, true
		}
		return a, 0, true
	}
	return F80{}, 0, false
}

// Sqrt returns the square root of a (FSQRT).
func Sqrt(a F80, rc Rounding, pc Precision) (F80, Exc) {
	if r, e, done := check1(a); done {
		return r, e
	}
	if a.IsZero() {
		return a, 0
	}
	if a.Sign() {
		return Indefinite, IE
	}
	if a.IsInf() {
		return a, 0
	}
	e := denormals(a, a)
	_, ea, ma := unpack(a)
	x := ea - bias - 63 // a = ma * 2^x
	var hi, lo uint64
	var s int32
	if x&1 == 0 {
		hi, lo, s = ma, 0, 64
	} else {
		hi, lo, s = ma>>1, ma<<63, 63
	}
	root, remHi, remLo := isqrt128(hi, lo)
	var extra uint64
	if remHi != 0 || remLo > root {
		extra = 1<<63 | 1
	} else if remLo != 0 {
		extra = 1
	}
	r, e2 := roundPack(false, (x-s)/2+bias+63, root, extra, rc, precBits(pc))
	return r, e | e2
}

// isqrt128 returns floor(sqrt(hi:lo)) for hi:lo >= 2^126 and the remainder
// hi:lo - root^2.
func isqrt128(hi, lo uint64) (root, remHi, remLo uint64) {
	var resHi, resLo uint64
	bitHi, bitLo := uint64(1)<<62, uint64(0)
	for bitHi|bitLo != 0 {
		tLo, c := bits.Add64(resLo, bitLo, 0)
		tHi := resHi + bitHi + c
		// res >>= 1
		resLo = resLo>>1 | resHi<<63
		resHi >>= 1
		if hi > tHi || (hi == tHi && lo >= tLo) {
			var b uint64
			lo, b = bits.Sub64(lo, tLo, 0)
			hi -= tHi + b
			resLo, c = bits.Add64(resLo, bitLo, 0)
			resHi += bitHi + c
		}
		bitLo = bitLo>>2 | bitHi<<62
		bitHi >>= 2
	}
	return resLo, hi, lo
}

// RoundInt rounds a to an integer under rc (FRNDINT). Precision control
// does not apply.
func RoundInt(a F80, rc Rounding) (F80, Exc) {
	if r, e, done := check1(a); done {
		return r, e
	}
	if a.IsInf() || a.IsZero() {
		return a, 0
	}
	e := denormals(a, a)
	sign, exp, sig := unpack(a)
	if exp >= bias+63 {
		return a, e
	}
	if exp < bias {
		// |a| < 1
		rb := uint64(1)
		if exp == bias-1 {
			rb = sig
		}
		if roundsUp(rb, false, sign, rc) {
			return pack(sign, bias, intBit), e | PE | C1
		}
		return pack(sign, 0, 0), e | PE
	}
	sh := uint(bias + 63 - exp)
	frac := sig << (64 - sh)
	kept := sig >> sh << sh
	if frac == 0 {
		return a, e
	}
	e |= PE
	if roundsUp(frac, kept&(1<<sh) != 0, sign, rc) {
		e |= C1
		kept += 1 << sh
		if kept == 0 {
			kept = intBit
			exp++
		}
	}
	return pack(sign, exp, kept), e
}

// Compare orders a and b: cmp is -1, 0 or +1 for a < b, a == b, a > b, or 0
// with unordered set if either is a NaN or an unsupported format.
func Compare(a, b F80) (cmp int, unordered bool) {
	if a.IsNaN() || b.IsNaN() || a.IsUnsupported() || b.IsUnsupported() {
		return 0, true
	}
	sa, ea, ma := unpack(a)
	sb, eb, mb := unpack(b)
	if ma == 0 && mb == 0 {
		return 0, false
	}
	if sa != sb {
		if sa {
			return -1, false
		}
		return 1, false
	}
	switch {
	case ma == 0:
		cmp = -1
	case mb == 0:
		cmp = 1
	case ea != eb:
		cmp = 1
		if ea < eb {
			cmp = -1
		}
	case ma != mb:
		cmp = 1
		if ma < mb {
			cmp = -1
		}
	}
	if sa {
		cmp = -cmp
	}
	return cmp, false
}

// Fcom compares a (ST0) with b as FCOM (signal=true: any NaN is invalid)
// or FUCOM (signal=false: only SNaNs are) do, also for FCOMI/FUCOMI and
// FTST (b = Zero). The caller maps the result to C3/C2/C0 or ZF/PF/CF.
func Fcom(a, b F80, signal bool) (cmp int, unordered bool, e Exc) {
	cmp, unordered = Compare(a, b)
	if unordered {
		if signal || a.IsSNaN() || b.IsSNaN() || a.IsUnsupported() || b.IsUnsupported() {
			e = IE
		}
		return
	}
	return cmp, false, denormals(a, b)
}

// Scale returns a * 2^trunc(b) (FSCALE, a = ST0, b = ST1).
func Scale(a, b F80, rc Rounding) (F80, Exc) {
	if r, e, done := check2(a, b); done {
		return r, e
	}
	ai, az := a.IsInf(), a.IsZero()
	if b.IsInf() {
		if (az && !b.Sign()) || (ai && b.Sign()) {
			return Indefinite, IE
		}
		e := denormals(a, a)
		if az || ai {
			return a, e
		}
		if b.Sign() {
			return pack(a.Sign(), 0, 0), e
		}
		return pack(a.Sign(), maxExp, intBit), e
	}
	e := denormals(a, b)
	if ai || az {
		return a, e
	}
	// n = trunc(b), clamped well beyond the range where it matters.
	sb, eb, mb := unpack(b)
	var n int32
	switch {
	case eb >= bias+20:
		n = 1 << 20
	case eb >= bias:
		n = int32(mb >> uint(bias+63-eb))
	}
	if sb {
		n = -n
	}
	sa, ea, ma := unpack(a)
	r, e2 := roundPack(sa, ea+n, ma, 0, rc, 64)
	return r, e | e2
}

// Xtract splits a into its unbiased exponent and its significand with
// exponent 0 (FXTRACT: ST0 becomes sig, and exp is pushed below it).
func Xtract(a F80) (exp, sig F80, e Exc) {
	if r, e, done := check1(a); done {
		return r, r, e
	}
	if a.IsZero() {
		return NegInf, a, ZE
	}
	if a.IsInf() {
		return Inf, a, 0
	}
	e = denormals(a, a)
	sign, ea, ma := unpack(a)
	exp = FromInt64(int64(ea - bias))
	return exp, pack(sign, bias, ma), e
}

// Prem computes the partial remainder of a (ST0) divided by b (ST1) as
// FPREM (ieee=false, quotient truncated) or FPREM1 (ieee=true, quotient
// rounded to nearest) do. If the exponents differ by 64 or more only a
// partial reduction is done and complete is false (C2=1); the caller
// repeats the instruction. When complete, q holds the three low bits of
// the quotient (C0=q&4, C3=q&2, C1=q&1).
func Prem(a, b F80, ieee bool) (r F80, q uint8, complete bool, e Exc) {
	if r, e, done := check2(a, b); done {
		return r, 0, true, e
	}
	if a.IsInf() || b.IsZero() {
		return Indefinite, 0, true, IE
	}
	e = denormals(a, b)
	if a.Exp() == 0 && a.Mant&intBit != 0 {
		a.SE++ // pseudo-denormals come back normalised
	}
	if a.IsZero() || b.IsInf() {
		return a, 0, true, e
	}
	sa, ea, ma := unpack(a)
	_, eb, mb := unpack(b)
	d := ea - eb
	if d >= 64 {
		n := d&31 | 32
		_, rem := remKernel(ma, mb, uint(n))
		if rem == 0 {
			return pack(sa, 0, 0), 0, false, e
		}
		r, e2 := normRoundPack(sa, ea-n, rem, 0, RoundNearest, 64)
		return r, 0, false, e | e2
	}
	if d < 0 {
		if !ieee || d < -1 || ma <= mb {
			return a, 0, true, e
		}
		// |b|/2 < |a| < |b|: the quotient rounds to 1.
		r, e2 := normRoundPack(!sa, ea, 2*mb-ma, 0, RoundNearest, 64)
		return r, 1, true, e | e2
	}
	quo, rem := remKernel(ma, mb, uint(d))
	if ieee && (rem > mb-rem || (rem == mb-rem && quo&1 != 0)) {
		quo++
		rem = mb - rem
		sa = !sa
	}
	if rem == 0 {
		return pack(a.Sign(), 0, 0), uint8(quo & 7), true, e
	}
	r, e2 := normRoundPack(sa, eb, rem, 0, RoundNearest, 64)
	return r, uint8(quo & 7), true, e | e2
}

// remKernel returns the quotient and remainder of (ma << n) / mb for
// normalised significands and n < 64.
func remKernel(ma, mb uint64, n uint) (q, rem uint64) {
	var hi uint64
	if n != 0 {
		hi = ma >> (64 - n)
	}
	return bits.Div64(hi, ma<<n, mb)
}
