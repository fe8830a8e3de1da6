package x86

// FMA3 (x86-64-v3): fused multiply-add with one rounding, on the exact
// model of sse_soft.go: the product of two significands is exact in 128
// bits, the addend is aligned to it with a sticky bit, and the sum is
// rounded once by MXCSR.

import (
	"math/bits"
)

// shr128 shifts (hi, lo) right by d, ORing the bits shifted out into
// bit 0.
func shr128(hi, lo uint64, d uint) (uint64, uint64) {
	switch {
	case d == 0:
		return hi, lo
	case d >= 128:
		if hi|lo != 0 {
			return 0, 1
		}
		return 0, 0
	case d >= 64:
		sticky := lo
		lo, hi = hi, 0
		d -= 64
		if d > 0 {
			sticky |= lo << (64 - d)
			lo >>= d
		}
		if sticky != 0 {
			lo |= 1
		}
		return hi, lo
	}
	sticky := lo << (64 - d)
	lo = lo>>d | hi<<(64-d)
	hi >>= d
	if sticky != 0 {
		lo |= 1
	}
	return hi, lo
}

func lz128(hi, lo uint64) int {
	if hi != 0 {
		return bits.LeadingZeros64(hi)
	}
	return 64 + bits.LeadingZeros64(lo)
}

func shl128(hi, lo uint64, d uint) (uint64, uint64) {
	switch {
	case d == 0:
		return hi, lo
	case d >= 64:
		return lo << (d - 64), 0
	}
	return hi<<d | lo>>(64-d), lo << d
}

// fma returns a*b+c rounded once (negProd negates the product, negAdd
// the addend), with its MXCSR flags.
func (f *ffmt) fma(a, b, c uint64, mx uint32, negProd, negAdd bool) (uint64, uint32) {
	a, b, c = f.daz(a, mx), f.daz(b, mx), f.daz(c, mx)
	var fl uint32
	an, bn, cn := f.isNaN(a), f.isNaN(b), f.isNaN(c)
	if an || bn || cn {
		if f.isSNaN(a) || f.isSNaN(b) || f.isSNaN(c) {
			fl = MxIE
		}
		if (f.isInf(a) && f.isZero(b) || f.isZero(a) && f.isInf(b)) && cn {
			fl = MxIE
		}
		switch {
		case an:
			return f.quiet(a), fl
		case bn:
			return f.quiet(b), fl
		}
		return f.quiet(c), fl
	}
	ps := (a ^ b) & f.sign
	if negProd {
		ps ^= f.sign
	}
	if negAdd {
		c ^= f.sign
	}
	cs := c & f.sign
	fl = f.denormalFlag(a) | f.denormalFlag(b) | f.denormalFlag(c)
	// Infinities.
	if f.isInf(a) || f.isInf(b) {
		if f.isZero(a) || f.isZero(b) {
			return f.defaultNaN(), MxIE
		}
		if f.isInf(c) && cs != ps {
			return f.defaultNaN(), MxIE
		}
		return f.inf(ps), fl
	}
	if f.isInf(c) {
		return c, fl
	}
	// Zeros.
	pzero := f.isZero(a) || f.isZero(b)
	if pzero {
		if f.isZero(c) {
			if ps == cs {
				return cs, fl
			}
			return f.zeroSum(mx), fl
		}
		// The result is c, exactly; rounding it to the format
		// changes nothing but can flush a denormal (FTZ).
		s, e, m := f.unpack(c)
		return f.round(s, e, m, mx, fl)
	}
	_, ea, ma := f.unpack(a)
	_, eb, mb := f.unpack(b)
	ph, pl := bits.Mul64(ma, mb)
	ep := ea + eb
	// Both terms get their leading bit at bit 125.
	sh := lz128(ph, pl) - 2
	ph, pl = shl128(ph, pl, uint(sh))
	ep -= sh
	if f.isZero(c) {
		return f.round128(ps, ep, ph, pl, mx, fl)
	}
	_, ec, mc := f.unpack(c)
	ch, cl := uint64(0), mc
	shc := lz128(ch, cl) - 2
	ch, cl = shl128(ch, cl, uint(shc))
	ec -= shc
	// Align to the larger exponent.
	e := ep
	if ec > ep {
		ph, pl = shr128(ph, pl, uint(ec-ep))
		e = ec
	} else {
		ch, cl = shr128(ch, cl, uint(ep-ec))
	}
	var rh, rl uint64
	s := ps
	if ps == cs {
		var carry uint64
		rl, carry = bits.Add64(pl, cl, 0)
		rh, _ = bits.Add64(ph, ch, carry)
	} else {
		var borrow uint64
		rl, borrow = bits.Sub64(pl, cl, 0)
		rh, borrow = bits.Sub64(ph, ch, borrow)
		if borrow != 0 {
			rl, borrow = bits.Sub64(cl, pl, 0)
			rh, _ = bits.Sub64(ch, ph, borrow)
			s = cs
		}
		if rh|rl == 0 {
			return f.zeroSum(mx), fl
		}
	}
	return f.round128(s, e, rh, rl, mx, fl)
}

// round128 rounds sign * (hi, lo) * 2^e, (hi, lo) not zero, to the
// format.
func (f *ffmt) round128(s uint64, e int, hi, lo uint64, mx uint32, fl uint32) (uint64, uint32) {
	n := lz128(hi, lo)
	hi, lo = shl128(hi, lo, uint(n))
	e -= n
	m := hi
	if lo != 0 {
		m |= 1
	}
	return f.round(s, e+64, m, mx, fl)
}

// fmaKind says which of the FMA operations an opcode computes.
type fmaKind struct{ negProd, negAdd bool }

// fmaForm picks a, b and c of a*b+c from the destination d, vvvv v and
// rm r for the 132, 213 and 231 forms.
func fmaForm(form int, d, v, r uint64) (a, b, c uint64) {
	switch form {
	case 132:
		return d, r, v
	case 213:
		return v, d, r
	}
	return v, r, d
}

func init() {
	kinds := []struct {
		op   byte
		name string
		k    fmaKind
	}{
		{0x98, "VFMADD", fmaKind{false, false}}, {0x9a, "VFMSUB", fmaKind{false, true}},
		{0x9c, "VFNMADD", fmaKind{true, false}}, {0x9e, "VFNMSUB", fmaKind{true, true}},
	}
	for fi, form := range []int{132, 213, 231} {
		base := byte(0x10 * fi) // 0x98 + 0x10: 213, + 0x20: 231
		for _, kd := range kinds {
			defVex(2, 1, kd.op+base, kd.name+itoa3(form)+"P", FeatFMA, false, buildFMA(form, kd.k, false, false))
			defVex(2, 1, kd.op+1+base, kd.name+itoa3(form)+"S", FeatFMA, false, buildFMA(form, kd.k, true, false))
		}
		defVex(2, 1, 0x96+base, "VFMADDSUB"+itoa3(form)+"P", FeatFMA, false, buildFMA(form, fmaKind{false, false}, false, true))
		defVex(2, 1, 0x97+base, "VFMSUBADD"+itoa3(form)+"P", FeatFMA, false, buildFMA(form, fmaKind{false, true}, false, true))
	}
}

func itoa3(n int) string {
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

// buildFMA builds one FMA opcode: VEX.W picks float64, VEX.L 256 bits
// (packed only); scalar forms keep the destination's other lanes.
func buildFMA(form int, k fmaKind, scalar, alt bool) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		f := fmt32
		if vexW(in) {
			f = fmt64
		}
		l := vexL(in) && !scalar
		if scalar {
			in.MemSize = uint8(f.width / 8)
		} else {
			vmem(in)
		}
		lane := func(c *CPU, v, d *XMM, r XMM) (XMM, uint32) {
			var out XMM = *d
			var fl uint32
			w := f.width
			n := 128 / w
			if scalar {
				n = 1
			}
			mask := f.ones()
			for i := uint(0); i < n; i++ {
				b := i * w
				h, o := b/64, b%64
				x, y, z := fmaForm(form, d[h]>>o&mask, v[h]>>o&mask, r[h]>>o&mask)
				negAdd := k.negAdd
				if alt && i&1 == 0 {
					negAdd = !negAdd
				}
				res, f1 := f.fma(x, y, z, c.MXCSR, k.negProd, negAdd)
				fl |= f1
				out[h] = out[h]&^(mask<<o) | res<<o
			}
			return out, fl
		}
		return func(c *CPU, in *Inst) {
			r, rh := c.vsrc(in, l)
			dr, vr := in.Args[0].Reg&15, vexV(in)
			lo, fl := lane(c, &c.X[vr], &c.X[dr], r)
			hi := XMM{}
			if l {
				var f2 uint32
				hi, f2 = lane(c, &c.YH[vr], &c.YH[dr], rh)
				fl |= f2
			}
			c.mxFinish(fl)
			c.setY(dr, lo, hi)
		}
	}
}
