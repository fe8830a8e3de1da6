package x86

// SSE4.1 (x86-64-v2): rounding, blends, ptest, the missing min/max and
// compare widths, sign and zero extension, inserts and extracts, dot
// products, mpsadbw, packusdw, the 32-bit multiplies, phminposuw and
// movntdqa.

import (
	"golang.org/x/arch/x86/x86asm"
)

// roundInt rounds x (format f) to an integer in the same format with
// rounding control rc: roundss and friends. It raises IE for a signaling
// NaN (quieting it) and PE when inexact and precision is not suppressed.
func (f *ffmt) roundInt(x uint64, mx uint32, rc uint32, noPE bool) (uint64, uint32) {
	x = f.daz(x, mx)
	if f.isNaN(x) {
		if f.isSNaN(x) {
			return f.quiet(x), MxIE
		}
		return x, 0
	}
	if f.isInf(x) || f.isZero(x) {
		return x, 0
	}
	s, e, m := f.unpack(x)
	if e >= 0 {
		return x, 0 // already an integer
	}
	q, inexact := rnd(m, uint(-e), s != 0, rc)
	var fl uint32
	if inexact && !noPE {
		fl = MxPE
	}
	if q == 0 {
		return s, fl
	}
	// q < 2^(frac+1): an exact integer of the format.
	top := uint(63 - leadingZeros(q))
	return s | uint64(int(top)+f.bias)<<f.frac | (q<<(f.frac-top))&(1<<f.frac-1), fl
}

func leadingZeros(v uint64) int {
	n := 0
	for v&(1<<63) == 0 {
		v <<= 1
		n++
	}
	return n
}

// roundOp is the lane operation of round* with immediate imm.
func roundOp(f *ffmt, imm uint64) fop {
	return func(_, b uint64, mx uint32) (uint64, uint32) {
		rc := uint32(imm & 3)
		if imm&4 != 0 {
			rc = mx >> 13 & 3
		}
		return f.roundInt(b, mx, rc, imm&8 != 0)
	}
}

// buildImm returns a builder for ops whose last operand is an imm8: mk
// makes the lane function from it.
func buildImm(mk func(imm uint64) xfn, aligned bool) Builder {
	return func(in *Inst) Handler {
		if in.NArgs != 3 || in.Args[2].Kind != KImm {
			return nil
		}
		return buildXS(mk(in.Args[2].Imm&0xff), aligned)(in)
	}
}

// registerImm registers an op with an imm8 whose body mk makes from it,
// and keeps mk for its VEX form (immOf).
func registerImm(op x86asm.Op, mk func(imm uint64) xfn) {
	register(op, buildImm(mk, true))
	immOf[op] = mk
}

var immOf = map[x86asm.Op]func(imm uint64) xfn{}

// blendMask selects lanes of s where m has bits set, else of d.
func blend(d, s, m XMM) XMM {
	return XMM{d[0]&^m[0] | s[0]&m[0], d[1]&^m[1] | s[1]&m[1]}
}

// laneMask expands bit i of imm to lane i of width w bits.
func laneMask(imm uint64, w uint) XMM {
	var m XMM
	n := 128 / w
	for i := uint(0); i < n; i++ {
		if imm>>i&1 != 0 {
			b := i * w
			m[b/64] |= (^uint64(0) >> (64 - w)) << (b % 64)
		}
	}
	return m
}

// signMask gives all ones in each w-bit lane of x whose top bit is set.
func signMask(x XMM, w uint) XMM {
	return XMM{sarLanes(x[0], w-1, w), sarLanes(x[1], w-1, w)}
}

func init() {
	for _, r := range []struct {
		op     x86asm.Op
		f      *ffmt
		scalar bool
	}{{x86asm.ROUNDPS, fmt32, false}, {x86asm.ROUNDPD, fmt64, false}, {x86asm.ROUNDSS, fmt32, true}, {x86asm.ROUNDSD, fmt64, true}} {
		registerImm(r.op, func(imm uint64) xfn {
			op := roundOp(r.f, imm)
			switch {
			case r.scalar && r.f == fmt32:
				return scalar32(op)
			case r.scalar:
				return scalar64(op)
			case r.f == fmt32:
				return packed32(op)
			}
			return packed64(op)
		})
	}

	// Blends.
	registerImm(x86asm.BLENDPS, func(imm uint64) xfn {
		m := laneMask(imm, 32)
		return func(c *CPU, in *Inst, d *XMM, s XMM) { *d = blend(*d, s, m) }
	})
	registerImm(x86asm.BLENDPD, func(imm uint64) xfn {
		m := laneMask(imm, 64)
		return func(c *CPU, in *Inst, d *XMM, s XMM) { *d = blend(*d, s, m) }
	})
	registerImm(x86asm.PBLENDW, func(imm uint64) xfn {
		m := laneMask(imm, 16)
		return func(c *CPU, in *Inst, d *XMM, s XMM) { *d = blend(*d, s, m) }
	})
	for _, b := range []struct {
		op x86asm.Op
		w  uint
	}{{x86asm.BLENDVPS, 32}, {x86asm.BLENDVPD, 64}, {x86asm.PBLENDVB, 8}} {
		w := b.w
		sseA(func(c *CPU, in *Inst, d *XMM, s XMM) { *d = blend(*d, s, signMask(c.X[0], w)) }, b.op)
	}

	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		zf := d[0]&s[0]|d[1]&s[1] == 0
		cf := ^d[0]&s[0]|^d[1]&s[1] == 0
		c.setArith(ArithFlags, b2u(zf)*FlagZF|b2u(cf)*FlagCF)
	}, x86asm.PTEST)

	sseA(byteOp(func(a, b uint8) uint8 { return uint8(min(int8(a), int8(b))) }), x86asm.PMINSB)
	sseA(byteOp(func(a, b uint8) uint8 { return uint8(max(int8(a), int8(b))) }), x86asm.PMAXSB)
	sseA(wordOp(func(a, b uint16) uint16 { return min(a, b) }), x86asm.PMINUW)
	sseA(wordOp(func(a, b uint16) uint16 { return max(a, b) }), x86asm.PMAXUW)
	sseA(dwordOp(func(a, b uint32) uint32 { return uint32(min(int32(a), int32(b))) }), x86asm.PMINSD)
	sseA(dwordOp(func(a, b uint32) uint32 { return uint32(max(int32(a), int32(b))) }), x86asm.PMAXSD)
	sseA(dwordOp(func(a, b uint32) uint32 { return min(a, b) }), x86asm.PMINUD)
	sseA(dwordOp(func(a, b uint32) uint32 { return max(a, b) }), x86asm.PMAXUD)
	sseA(dwordOp(func(a, b uint32) uint32 { return a * b }), x86asm.PMULLD)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0] = uint64(int64(int32(d[0])) * int64(int32(s[0])))
		d[1] = uint64(int64(int32(d[1])) * int64(int32(s[1])))
	}, x86asm.PMULDQ)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0], d[1] = -b2u(d[0] == s[0]), -b2u(d[1] == s[1])
	}, x86asm.PCMPEQQ)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0], d[1] = -b2u(int64(d[0]) > int64(s[0])), -b2u(int64(d[1]) > int64(s[1]))
	}, x86asm.PCMPGTQ)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := dwordsOf(*d), dwordsOf(s)
		var r [8]uint16
		for i := 0; i < 4; i++ {
			r[i], r[4+i] = satU16(sx32(uint64(x[i]))), satU16(sx32(uint64(y[i])))
		}
		*d = fromWords(r)
	}, x86asm.PACKUSDW)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		w := wordsOf(s)
		k := 0
		for i := 1; i < 8; i++ {
			if w[i] < w[k] {
				k = i
			}
		}
		*d = XMM{uint64(w[k]) | uint64(k)<<16}
	}, x86asm.PHMINPOSUW)
	register(x86asm.MOVNTDQA, func(in *Inst) Handler {
		if isX(&in.Args[0]) && isMem(&in.Args[1]) {
			return loadA128
		}
		return nil
	})

	// Sign and zero extension: from (lanes of from bytes) to lanes of
	// to bytes; the memory operand is only as wide as the lanes read.
	ext := func(op x86asm.Op, from, to uint, signed bool) {
		f := func(c *CPU, in *Inst, d *XMM, s XMM) {
			var r XMM
			n := 16 / to
			for i := uint(0); i < n; i++ {
				b := i * from * 8
				v := s[b/64] >> (b % 64) & (^uint64(0) >> (64 - 8*from))
				if signed {
					v = uint64(int64(v<<(64-8*from)) >> (64 - 8*from))
				}
				if to < 8 {
					v &= ^uint64(0) >> (64 - 8*to)
				}
				o := i * to * 8
				r[o/64] |= v << (o % 64)
			}
			*d = r
		}
		register(op, buildXS(f, true))
		xfnOf[op] = f
	}
	ext(x86asm.PMOVSXBW, 1, 2, true)
	ext(x86asm.PMOVSXBD, 1, 4, true)
	ext(x86asm.PMOVSXBQ, 1, 8, true)
	ext(x86asm.PMOVSXWD, 2, 4, true)
	ext(x86asm.PMOVSXWQ, 2, 8, true)
	ext(x86asm.PMOVSXDQ, 4, 8, true)
	ext(x86asm.PMOVZXBW, 1, 2, false)
	ext(x86asm.PMOVZXBD, 1, 4, false)
	ext(x86asm.PMOVZXBQ, 1, 8, false)
	ext(x86asm.PMOVZXWD, 2, 4, false)
	ext(x86asm.PMOVZXWQ, 2, 8, false)
	ext(x86asm.PMOVZXDQ, 4, 8, false)

	// Inserts and extracts of 1, 4 and 8 bytes (pextrw's memory form
	// too): the immediate picks the lane, modulo the lane count.
	ins := func(op x86asm.Op, size uint) {
		register(op, func(in *Inst) Handler {
			if !isX(&in.Args[0]) || in.Args[1].Kind != KReg && !isMem(&in.Args[1]) || in.Args[2].Kind != KImm {
				return nil
			}
			return func(c *CPU, in *Inst) {
				var v uint64
				if o := &in.Args[1]; o.Kind == KReg {
					v = c.R[o.Reg]
				} else {
					v = c.load(c.ea(o), int(size))
				}
				mask := ^uint64(0) >> (64 - 8*size)
				b := (uint(in.Args[2].Imm) % (16 / size)) * size * 8
				x := &c.X[in.Args[0].Reg&15][b/64]
				*x = *x&^(mask<<(b%64)) | (v&mask)<<(b%64)
			}
		})
	}
	ins(x86asm.PINSRB, 1)
	ins(x86asm.PINSRD, 4)
	ins(x86asm.PINSRQ, 8)
	extr := func(op x86asm.Op, size uint) Builder {
		return func(in *Inst) Handler {
			if in.Args[0].Kind != KReg && !isMem(&in.Args[0]) || !isX(&in.Args[1]) || in.Args[2].Kind != KImm {
				return nil
			}
			return func(c *CPU, in *Inst) {
				b := (uint(in.Args[2].Imm) % (16 / size)) * size * 8
				v := c.X[in.Args[1].Reg&15][b/64] >> (b % 64) & (^uint64(0) >> (64 - 8*size))
				if o := &in.Args[0]; o.Kind == KReg {
					c.R[o.Reg] = v // zero-extended to 64 bits
				} else {
					c.store(c.ea(o), int(size), v)
				}
			}
		}
	}
	register(x86asm.PEXTRB, extr(x86asm.PEXTRB, 1))
	register(x86asm.PEXTRD, extr(x86asm.PEXTRD, 4))
	register(x86asm.PEXTRQ, extr(x86asm.PEXTRQ, 8))
	register(x86asm.EXTRACTPS, extr(x86asm.EXTRACTPS, 4))
	pextrwMem = extr(x86asm.PEXTRW, 2)

	register(x86asm.INSERTPS, func(in *Inst) Handler {
		if !isX(&in.Args[0]) || !isX(&in.Args[1]) && !isMem(&in.Args[1]) || in.Args[2].Kind != KImm {
			return nil
		}
		imm := in.Args[2].Imm & 0xff
		return func(c *CPU, in *Inst) {
			var v uint64
			if o := &in.Args[1]; o.Kind == KXMM {
				v = lane32(c.X[o.Reg&15], int(imm>>6))
			} else {
				v = c.load32(c.ea(o))
			}
			d := dwordsOf(c.X[in.Args[0].Reg&15])
			d[imm>>4&3] = uint32(v)
			for i := range d {
				if imm>>i&1 != 0 {
					d[i] = 0
				}
			}
			c.X[in.Args[0].Reg&15] = fromDwords(d)
		}
	})

	registerImm(x86asm.DPPS, func(imm uint64) xfn { return dpps(imm) })
	registerImm(x86asm.DPPD, func(imm uint64) xfn { return dppd(imm) })
	registerImm(x86asm.MPSADBW, func(imm uint64) xfn {
		return func(c *CPU, in *Inst, d *XMM, s XMM) { *d = mpsadbw(*d, s, imm) }
	})
}

// pextrwMem is pextrw's SSE4.1 memory form (sse_int.go has the register
// form).
var pextrwMem Builder

// dpps multiplies the float32 lanes imm selects (bits 4-7), adds the four
// products in pairs ((0+1)+(2+3)) and writes the sum to the lanes of imm's
// bits 0-3, zeroing the others.
func dpps(imm uint64) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		var t [4]uint64
		var fl uint32
		for i := 0; i < 4; i++ {
			if imm>>(4+i)&1 != 0 {
				var f uint32
				t[i], f = mul32(lane32(*d, i), lane32(s, i), mx)
				fl |= f
			}
		}
		c.mxFinish(fl)
		a, f1 := add32(t[0], t[1], mx)
		b, f2 := add32(t[2], t[3], mx)
		c.mxFinish(f1 | f2)
		r, f3 := add32(a, b, mx)
		c.mxFinish(f3)
		var o [4]uint32
		for i := range o {
			if imm>>i&1 != 0 {
				o[i] = uint32(r)
			}
		}
		*d = fromDwords(o)
	}
}

// dppd is dpps for the two float64 lanes.
func dppd(imm uint64) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		var t [2]uint64
		var fl uint32
		for i := 0; i < 2; i++ {
			if imm>>(4+i)&1 != 0 {
				var f uint32
				t[i], f = mul64(d[i], s[i], mx)
				fl |= f
			}
		}
		c.mxFinish(fl)
		r, f := add64(t[0], t[1], mx)
		c.mxFinish(f)
		var o XMM
		for i := range o {
			if imm>>i&1 != 0 {
				o[i] = r
			}
		}
		*d = o
	}
}

// mpsadbw sums absolute differences of four bytes of s (the block imm
// bits 0-1 pick) with eight overlapping four-byte groups of d (from the
// offset imm bit 2 picks).
func mpsadbw(d, s XMM, imm uint64) XMM {
	x, y := bytesOf(d), bytesOf(s)
	so, do := int(imm&3)*4, int(imm>>2&1)*4
	var r [8]uint16
	for i := range r {
		var sum int
		for j := 0; j < 4; j++ {
			v := int(x[do+i+j]) - int(y[so+j])
			sum += max(v, -v)
		}
		r[i] = uint16(sum)
	}
	return fromWords(r)
}
