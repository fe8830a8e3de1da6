package f80

import (
	"math/big"
)

// The transcendental instructions are computed with math/big to tprec
// bits and rounded once. The x87 honours the rounding control but not the
// precision control for them, and it reports every finite non-trivial
// result as inexact.

const tprec = 192

var (
	bigPi   = mustParse("0xc90fdaa22168c234c4c6628b80dc1cd129024e088a67cc74020bbea63b139b22p-254")
	bigLn2  = mustParse("0xb17217f7d1cf79abc9e3b39803f2f6af40f343267298b62d8a0d175b8baafa2bp-256")
	bigHalf = big.NewFloat(0.5)
	// halfPi66 is the x87's pi/2 for the argument reduction of FSIN,
	// FCOS, FPTAN and FSINCOS: pi rounded down to 66 bits.
	halfPi66 = mustParse("0xc90fdaa22168c234cp-67")
)

func mustParse(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 0, 256, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return f
}

func newF() *big.Float { return new(big.Float).SetPrec(tprec) }

// toBig returns the exact value of a finite a.
func toBig(a F80) *big.Float {
	sign, exp, sig := unpack(a)
	f := new(big.Float).SetPrec(tprec).SetUint64(sig)
	f.SetMantExp(f, int(exp)-bias-63)
	if sign {
		f.Neg(f)
	}
	return f
}

// fromBig rounds the finite non-zero x to an F80 under rc, with PE set.
func fromBig(x *big.Float, rc Rounding) (F80, Exc) {
	var mant big.Float
	exp := x.MantExp(&mant) // |mant| in [0.5, 1)
	mant.SetMantExp(&mant, 128)
	sign := mant.Signbit()
	mant.Abs(&mant)
	i, acc := mant.Int(nil)
	w := i.Bits()
	var hi, lo uint64
	switch len(w) {
	case 2:
		hi, lo = uint64(w[1]), uint64(w[0])
	case 1:
		hi = uint64(w[0])
	}
	if acc != big.Exact {
		lo |= 1
	}
	r, e := roundPack(sign, int32(exp)+bias-1, hi, lo, rc, 64)
	return r, e | PE
}

// constRes returns c (a multiple of pi), negated if neg, rounded under rc.
func constRes(c *big.Float, neg bool, rc Rounding) (F80, Exc) {
	x := newF().Set(c)
	if neg {
		x.Neg(x)
	}
	return fromBig(x, rc)
}

// nudge returns v moved by a relative 2^-160 in direction dir (+1 away
// from zero, -1 toward zero): far below the precision of the result but
// enough to round correctly a result that is v plus or minus a tail too
// small for tprec bits.
func nudge(v *big.Float, dir int) *big.Float {
	f := new(big.Float).SetPrec(256).SetInt64(int64(dir))
	f.SetMantExp(f, -160)
	f.Add(f, big.NewFloat(1))
	return f.Mul(f, v)
}

// small reports whether term is negligible next to sum.
func small(term, sum *big.Float) bool {
	return term.Sign() == 0 || term.MantExp(nil) < sum.MantExp(nil)-tprec-4
}

// sinCosBig returns sin r and cos r for |r| <= 1.
func sinCosBig(r *big.Float) (s, c *big.Float) {
	r2 := newF().Mul(r, r)
	s = newF().Set(r)
	t := newF().Set(r)
	d := newF()
	for n := int64(1); ; n++ {
		t.Mul(t, r2)
		t.Quo(t, d.SetInt64(-(2*n)*(2*n+1)))
		s.Add(s, t)
		if small(t, s) {
			break
		}
	}
	c = newF().SetInt64(1)
	t.SetInt64(1)
	for n := int64(1); ; n++ {
		t.Mul(t, r2)
		t.Quo(t, d.SetInt64(-(2*n-1)*(2*n)))
		c.Add(c, t)
		if small(t, c) {
			break
		}
	}
	return s, c
}

// expm1Big returns e^z - 1 for |z| <= 1.
func expm1Big(z *big.Float) *big.Float {
	s := newF().Set(z)
	t := newF().Set(z)
	d := newF()
	for n := int64(2); ; n++ {
		t.Mul(t, z)
		t.Quo(t, d.SetInt64(n))
		s.Add(s, t)
		if small(t, s) {
			return s
		}
	}
}

// atanhSeries returns 2*atanh(s) = ln((1+s)/(1-s)) for |s| small.
func atanhSeries(s *big.Float) *big.Float {
	s2 := newF().Mul(s, s)
	sum := newF().Set(s)
	p := newF().Set(s)
	t := newF()
	d := newF()
	for n := int64(3); ; n += 2 {
		p.Mul(p, s2)
		t.Quo(p, d.SetInt64(n))
		sum.Add(sum, t)
		if small(t, sum) {
			break
		}
	}
	return sum.Mul(sum, big.NewFloat(2))
}

// lnBig returns ln x for x > 0.
func lnBig(x *big.Float) *big.Float {
	f := newF()
	e := x.MantExp(f) // f in [0.5, 1)
	if f.Cmp(big.NewFloat(0.70710678118654752)) < 0 {
		f.SetMantExp(f, 1)
		e--
	}
	one := big.NewFloat(1)
	num := newF().Sub(f, one)
	den := newF().Add(f, one)
	r := atanhSeries(num.Quo(num, den))
	if e != 0 {
		r.Add(r, newF().Mul(newF().SetInt64(int64(e)), bigLn2))
	}
	return r
}

// log1pBig returns ln(1+x) for x > -1.
func log1pBig(x *big.Float) *big.Float {
	if x.MantExp(nil) > -1 { // |x| >= 0.5
		return lnBig(newF().Add(x, big.NewFloat(1)))
	}
	den := newF().Add(x, big.NewFloat(2))
	return atanhSeries(den.Quo(x, den))
}

// atanBig returns atan t for 0 <= t <= 1.
func atanBig(t *big.Float) *big.Float {
	t = newF().Set(t)
	one := big.NewFloat(1)
	u := newF()
	for i := 0; i < 2; i++ { // atan t = 2 atan(t / (1 + sqrt(1 + t^2)))
		u.Mul(t, t)
		u.Add(u, one)
		u.Sqrt(u)
		u.Add(u, one)
		t.Quo(t, u)
	}
	t2 := newF().Mul(t, t)
	sum := newF().Set(t)
	p := newF().Set(t)
	q := newF()
	d := newF()
	for n := int64(3); ; n += 2 {
		p.Mul(p, t2)
		p.Neg(p)
		q.Quo(p, d.SetInt64(n))
		sum.Add(sum, q)
		if small(q, sum) {
			break
		}
	}
	return sum.SetMantExp(sum, 2)
}

// F2xm1 returns 2^a - 1 (F2XM1), defined by the x87 for -1 <= a <= 1.
func F2xm1(a F80, rc Rounding) (F80, Exc) {
	if r, e, done := check1(a); done {
		return r, e
	}
	switch {
	case a.IsZero():
		return a, 0
	case a.IsInf():
		if a.Sign() {
			return pack(true, bias, intBit), 0
		}
		return a, 0
	}
	if c, _ := Compare(a.Abs(), One); c > 0 {
		// Outside the x87's domain; this is what AMD processors do.
		return a, PE
	}
	if a == One.Neg() {
		return pack(true, bias-1, intBit), PE
	}
	e := denormals(a, a)
	if a == One { // the x87 computes it as just below 1
		return fromBig(nudge(big.NewFloat(1), -1), rc)
	}
	z := newF().Mul(toBig(a), bigLn2)
	r, e2 := fromBig(expm1Big(z), rc)
	return r, e | e2
}

// Yl2x returns y * log2(x) (FYL2X: x = ST0, y = ST1, result replaces ST1).
func Yl2x(y, x F80, rc Rounding) (F80, Exc) {
	if r, e, done := check2(x, y); done {
		return r, e
	}
	xs, ys := x.Sign(), y.Sign()
	xz, yz := x.IsZero(), y.IsZero()
	xi, yi := x.IsInf(), y.IsInf()
	if xs && !xz {
		return Indefinite, IE
	}
	e := denormals(x, y)
	switch {
	case xz:
		if yz {
			return Indefinite, IE
		}
		if yi {
			return pack(!ys, maxExp, intBit), 0
		}
		return pack(!ys, maxExp, intBit), ZE
	case xi:
		if yz {
			return Indefinite, IE
		}
		return pack(ys, maxExp, intBit), e
	}
	c, _ := Compare(x, One)
	switch {
	case c == 0:
		if yi {
			return Indefinite, IE
		}
		return pack(ys, 0, 0), e
	case yi:
		return pack(ys != (c < 0), maxExp, intBit), e
	case yz:
		return pack(ys != (c < 0), 0, 0), e
	}
	if _, ex, m := unpack(x); m == intBit {
		// log2(x) is an exact integer; the x87 still reports PE.
		r, e2 := Mul(y, FromInt64(int64(ex-bias)), rc, Prec64)
		if r.Exp() == 0 {
			e2 |= UE
		}
		return r, e | e2 | PE
	}
	l := lnBig(toBig(x))
	l.Quo(l, bigLn2)
	l.Mul(l, toBig(y))
	r, e2 := fromBig(l, rc)
	return r, e | e2
}

// Yl2xp1 returns y * log2(x + 1) (FYL2XP1: x = ST0, y = ST1), defined by
// the x87 for |x| < 1 - sqrt(2)/2.
func Yl2xp1(y, x F80, rc Rounding) (F80, Exc) {
	if r, e, done := check2(x, y); done {
		return r, e
	}
	xs, ys := x.Sign(), y.Sign()
	xz, yz := x.IsZero(), y.IsZero()
	xi, yi := x.IsInf(), y.IsInf()
	switch {
	case xz:
		if yi {
			return Indefinite, IE
		}
		return pack(xs != ys, 0, 0), denormals(y, y)
	case xi:
		if xs || yz {
			return Indefinite, IE
		}
		return pack(ys, maxExp, intBit), denormals(y, y)
	}
	e := denormals(x, y)
	switch {
	case yi:
		return pack(ys != xs, maxExp, intBit), e
	case yz:
		return pack(ys != xs, 0, 0), e
	}
	if c, _ := Compare(x, One.Neg()); c <= 0 {
		// Outside the x87's domain; this is what AMD processors do.
		return x, denormals(y, y) | PE
	}
	l := log1pBig(toBig(x))
	l.Quo(l, bigLn2)
	l.Mul(l, toBig(y))
	r, e2 := fromBig(l, rc)
	return r, e | e2
}

// Patan returns the arc tangent of y/x in the quadrant of (x, y)
// (FPATAN: x = ST0, y = ST1, result replaces ST1).
func Patan(y, x F80, rc Rounding) (F80, Exc) {
	if r, e, done := check2(x, y); done {
		return r, e
	}
	xs, ys := x.Sign(), y.Sign()
	xz, yz := x.IsZero(), y.IsZero()
	xi, yi := x.IsInf(), y.IsInf()
	e := denormals(x, y)
	var k *big.Float // result as a multiple of pi, for the special cases
	switch {
	case yz:
		if !xs {
			return y, e
		}
		k = big.NewFloat(1)
	case yi:
		switch {
		case !xi:
			k = big.NewFloat(0.5)
		case xs:
			k = big.NewFloat(0.75)
		default:
			k = big.NewFloat(0.25)
		}
	case xz:
		k = big.NewFloat(0.5)
	case xi:
		if !xs {
			return pack(ys, 0, 0), e
		}
		k = big.NewFloat(1)
	}
	if k != nil {
		k = newF().Mul(k, bigPi)
		r, e2 := constRes(k, ys, rc)
		return r, e | e2
	}
	by, bx := toBig(y).Abs(toBig(y)), toBig(x).Abs(toBig(x))
	var t *big.Float
	if by.Cmp(bx) <= 0 {
		t = newF().Quo(by, bx)
		if t.MantExp(nil) < -80 {
			t = nudge(t, -1) // atan t = t - t^3/3 + ...
		} else {
			t = atanBig(t)
		}
	} else {
		t = atanBig(newF().Quo(bx, by))
		t.Sub(newF().Mul(bigPi, bigHalf), t)
	}
	if xs {
		t.Sub(bigPi, t)
	}
	if ys {
		t.Neg(t)
	}
	r, e2 := fromBig(t, rc)
	return r, e | e2
}

// reduce returns the quadrant k (mod 4) and the reduced argument
// a - k*pi66/2 of a finite, non-zero a with |a| < 2^63.
func reduce(a F80) (int, *big.Float) {
	x := toBig(a)
	x.SetPrec(320)
	q := new(big.Float).SetPrec(320).Quo(x, halfPi66)
	// round q to the nearest integer
	if q.Sign() >= 0 {
		q.Add(q, bigHalf)
	} else {
		q.Sub(q, bigHalf)
	}
	ki, _ := q.Int(nil)
	k := new(big.Float).SetPrec(320).SetInt(ki)
	k.Mul(k, halfPi66)
	x.Sub(x, k)
	return int(ki.Int64() & 3), x
}

// trig computes the results of FSIN, FCOS, FPTAN and FSINCOS. ok is
// false when |a| >= 2^63: the x87 then sets C2 and leaves ST0 alone.
const (
	sinF = iota
	cosF
	tanF
	sinCosF
)

func trig(a F80, rc Rounding, which int) (s, c F80, e Exc, ok bool) {
	if r, e, done := check1(a); done {
		return r, r, e, true
	}
	if a.IsInf() {
		return Indefinite, Indefinite, IE, true
	}
	if a.Exp() >= bias+63 {
		return a, a, 0, false
	}
	if a.IsZero() {
		return a, One, 0, true
	}
	e = denormals(a, a)
	var bs, bc *big.Float
	k := 0
	if a.Exp() < bias-80 {
		// sin a = a - a^3/6 ..., cos a = 1 - a^2/2 ...
		x := toBig(a)
		bs, bc = nudge(x, -1), nudge(big.NewFloat(1), -1)
		if which == tanF {
			bs, bc = nudge(x, 1), big.NewFloat(1)
		}
	} else {
		var r *big.Float
		k, r = reduce(a)
		bs, bc = sinCosBig(r)
	}
	switch k {
	case 1:
		bs, bc = bc, bs.Neg(bs)
	case 2:
		bs.Neg(bs)
		bc.Neg(bc)
	case 3:
		bs, bc = bc.Neg(bc), bs
	}
	var e1, e2 Exc
	switch which {
	case sinF:
		s, e1 = fromBig(bs, rc)
	case cosF:
		c, e2 = fromBig(bc, rc)
	case tanF:
		s, e1 = fromBig(bs.Quo(bs, bc), rc)
	case sinCosF:
		s, e1 = fromBig(bs, rc)
		c, e2 = fromBig(bc, rc)
		e1 |= e2 &^ C1
		e2 = 0
	}
	return s, c, e | e1 | e2, true
}

// Sin returns sin a (FSIN). If ok is false, |a| >= 2^63: the x87 sets C2
// and leaves ST0 unchanged.
func Sin(a F80, rc Rounding) (r F80, e Exc, ok bool) {
	r, _, e, ok = trig(a, rc, sinF)
	return
}

// Cos returns cos a (FCOS), with ok as for Sin.
func Cos(a F80, rc Rounding) (r F80, e Exc, ok bool) {
	_, r, e, ok = trig(a, rc, cosF)
	return
}

// Tan returns tan a (FPTAN), with ok as for Sin, and the value FPTAN then
// pushes: 1.0, or the NaN result again when a is a NaN or invalid.
func Tan(a F80, rc Rounding) (r, push F80, e Exc, ok bool) {
	r, _, e, ok = trig(a, rc, tanF)
	push = One
	if r.IsNaN() {
		push = r
	}
	return
}

// SinCos returns sin a and cos a (FSINCOS: ST0 becomes sin, then cos is
// pushed), with ok as for Sin.
func SinCos(a F80, rc Rounding) (sin, cos F80, e Exc, ok bool) {
	return trig(a, rc, sinCosF)
}
