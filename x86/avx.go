package x86

// AVX and AVX2: the VEX forms (decoded by vex.go). Most are the SSE
// operations of the same name with a separate first source (VEX.vvvv)
// and, with VEX.L, a second 128-bit lane that runs the same operation on
// the upper halves: they reuse the SSE bodies (xfnOf, immOf). A VEX.128
// instruction zeroes bits 128-255 of its destination; VEX memory
// operands need no alignment except in the aligned moves. The
// operations that cross lanes (permutes, broadcasts, inserts, extracts,
// widening conversions) are written out.

import (
	"golang.org/x/arch/x86/x86asm"
)

// loadY reads 32 bytes; a page crossing is checked first, so that a fault
// names the first inaccessible byte and nothing was read.
func (c *CPU) loadY(a uint64) (XMM, XMM) {
	if a&pageMask > PageSize-32 {
		c.Mem.translate(a, false)
		c.Mem.translate((a+31)&^pageMask, false)
	}
	return c.load128(a), c.load128(a + 16)
}

func (c *CPU) storeY(a uint64, lo, hi XMM) {
	if a&pageMask > PageSize-32 {
		c.Mem.translate(a, true)
		c.Mem.translate((a+31)&^pageMask, true)
	}
	c.store128(a, lo)
	c.store128(a+16, hi)
}

// vsrc reads the r/m source of a VEX instruction: a register's two
// halves (the upper one only with hi), or in.MemSize bytes of memory.
func (c *CPU) vsrc(in *Inst, hi bool) (XMM, XMM) {
	o := &in.Args[1]
	if o.Kind == KXMM {
		if hi {
			return c.X[o.Reg&15], c.YH[o.Reg&15]
		}
		return c.X[o.Reg&15], XMM{}
	}
	a := c.ea(o)
	switch in.MemSize {
	case 32:
		return c.loadY(a)
	case 16:
		return c.load128(a), XMM{}
	case 8:
		return XMM{c.load64(a)}, XMM{}
	case 4:
		return XMM{c.load32(a)}, XMM{}
	case 2:
		return XMM{c.load16(a)}, XMM{}
	}
	return XMM{c.load8(a)}, XMM{}
}

// setY writes YMM register r.
func (c *CPU) setY(r uint8, lo, hi XMM) {
	c.X[r&15], c.YH[r&15] = lo, hi
}

// vmem sets the memory operand size of a packed VEX instruction: 16
// bytes, or 32 with VEX.L.
func vmem(in *Inst) {
	in.MemSize = 16
	if vexL(in) {
		in.MemSize = 32
	}
}

// vexLanes runs the SSE body f on each 128-bit lane: dest = f(vvvv, rm).
func vexLanes(f xfn) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if f == nil {
			return nil
		}
		vmem(in)
		if !vexL(in) {
			return func(c *CPU, in *Inst) {
				t := c.X[vexV(in)]
				s, _ := c.vsrc(in, false)
				f(c, in, &t, s)
				c.setY(in.Args[0].Reg, t, XMM{})
			}
		}
		return func(c *CPU, in *Inst) {
			t, u := c.X[vexV(in)], c.YH[vexV(in)]
			s, sh := c.vsrc(in, true)
			// The flags of both lanes decide whether the instruction
			// raises #XM, as for one 256-bit operation.
			c.mxDefer = true
			f(c, in, &t, s)
			f(c, in, &u, sh)
			c.endDefer()
			c.setY(in.Args[0].Reg, t, u)
		}
	}
}

// endDefer ends a 256-bit instruction's collection of MXCSR flags
// (mxDefer): #XM if one of them is unmasked.
func (c *CPU) endDefer() {
	c.mxDefer = false
	fl := c.mxPending
	c.mxPending = 0
	c.mxFinish(fl)
}

// vl is vexLanes of the SSE op's body, looked up when an instruction is
// decoded (the SSE files register theirs in their own init).
func vl(op x86asm.Op) func(in *Inst) Handler {
	return func(in *Inst) Handler { return vexLanes(xfnOf[op])(in) }
}

// vli is vl for the ops with an imm8 that immOf knows.
func vli(op x86asm.Op) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		mk := immOf[op]
		if mk == nil || in.Args[2].Kind != KImm {
			return nil
		}
		return vexLanes(mk(in.Args[2].Imm & 0xff))(in)
	}
}

// vs is the scalar form: size bytes of memory, the low lane of the
// result from f, the rest of the low 128 bits from vvvv, the upper
// half zeroed (VEX.L ignored).
func vs(op x86asm.Op, size uint8) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		f := xfnOf[op]
		if f == nil {
			return nil
		}
		in.MemSize = size
		return func(c *CPU, in *Inst) {
			t := c.X[vexV(in)]
			s, _ := c.vsrc(in, false)
			f(c, in, &t, s)
			c.setY(in.Args[0].Reg, t, XMM{})
		}
	}
}

// vsi is vs with an imm8 (roundss, roundsd).
func vsi(op x86asm.Op, size uint8) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		mk := immOf[op]
		if mk == nil || in.Args[2].Kind != KImm {
			return nil
		}
		f := mk(in.Args[2].Imm & 0xff)
		in.MemSize = size
		return func(c *CPU, in *Inst) {
			t := c.X[vexV(in)]
			s, _ := c.vsrc(in, false)
			f(c, in, &t, s)
			c.setY(in.Args[0].Reg, t, XMM{})
		}
	}
}

// vfn is vexLanes of a body given here.
func vfn(f xfn) func(in *Inst) Handler { return vexLanes(f) }

// vmov builds the full-register moves: load (rm to reg) or store (reg to
// rm), aligned or not.
func vmov(store, aligned bool) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		vmem(in)
		l := vexL(in)
		if !store {
			return func(c *CPU, in *Inst) {
				if aligned && in.Args[1].Kind == KMem && c.ea(&in.Args[1])&uint64(in.MemSize-1) != 0 {
					c.gp()
				}
				lo, hi := c.vsrc(in, l)
				c.setY(in.Args[0].Reg, lo, hi)
			}
		}
		return func(c *CPU, in *Inst) {
			r := in.Args[0].Reg & 15
			o := &in.Args[1]
			if o.Kind == KXMM {
				if l {
					c.setY(o.Reg, c.X[r], c.YH[r])
				} else {
					c.setY(o.Reg, c.X[r], XMM{})
				}
				return
			}
			a := c.ea(o)
			if aligned && a&uint64(in.MemSize-1) != 0 {
				c.gp()
			}
			if l {
				c.storeY(a, c.X[r], c.YH[r])
			} else {
				c.store128(a, c.X[r])
			}
		}
	}
}

// vmovScalar builds vmovss/vmovsd (size 4 or 8): a load zeroes the rest,
// the register form merges with vvvv, a store writes the low lane.
func vmovScalar(size uint8, store bool) func(in *Inst) Handler {
	mask := ^uint64(0) >> (64 - 8*uint(size))
	return func(in *Inst) Handler {
		in.MemSize = size
		switch {
		case in.Args[1].Kind == KXMM:
			return func(c *CPU, in *Inst) {
				d, s := in.Args[0].Reg, in.Args[1].Reg
				if store {
					d, s = s, d
				}
				t := c.X[vexV(in)]
				t[0] = t[0]&^mask | c.X[s&15][0]&mask
				c.setY(d, t, XMM{})
			}
		case store:
			return func(c *CPU, in *Inst) {
				c.store(c.ea(&in.Args[1]), int(size), c.X[in.Args[0].Reg&15][0]&mask)
			}
		}
		return func(c *CPU, in *Inst) {
			v := c.load(c.ea(&in.Args[1]), int(size))
			c.setY(in.Args[0].Reg, XMM{v}, XMM{})
		}
	}
}

// gpr turns operand o (decoded as an XMM register) into a general
// register of 8 bytes with W, else 4.
func gpr(in *Inst, o *Operand) {
	if o.Kind == KXMM {
		o.Kind, o.Size = KReg, 4
		if vexW(in) {
			o.Size = 8
		}
	}
}

// vlegacy runs an SSE builder on the VEX instruction's operands when the
// VEX form is the SSE one with the destination's upper half zeroed
// (vvvv unused): the extracts, conversions to integers and the like.
// swap puts rm first, for the forms whose destination is rm.
func vlegacy(b func() Builder, swap, zeroUpper bool, prep func(in *Inst)) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if prep != nil {
			prep(in)
		}
		if swap {
			in.Args[0], in.Args[1] = in.Args[1], in.Args[0]
		}
		h := b()(in)
		if h == nil || !zeroUpper {
			return h
		}
		return func(c *CPU, in *Inst) {
			h(c, in)
			if o := &in.Args[0]; o.Kind == KXMM {
				c.YH[o.Reg&15] = XMM{}
			}
		}
	}
}

// builderOf returns the SSE builder of op.
func builderOf(op x86asm.Op) func() Builder { return func() Builder { return builders[op] } }

// vcmp is vcmpps and friends with VEX's 32 predicates.
func vcmpPred(f *ffmt, pred uint32) fop {
	ones := f.ones()
	return func(a, b uint64, mx uint32) (uint64, uint32) {
		a, b = f.daz(a, mx), f.daz(b, mx)
		var fl uint32
		un := f.isNaN(a) || f.isNaN(b)
		signaling := pred&3 == 1 || pred&3 == 2
		if pred&16 != 0 {
			signaling = !signaling
		}
		if un {
			if signaling || f.isSNaN(a) || f.isSNaN(b) {
				fl = MxIE
			}
		} else {
			fl = f.denormalFlag(a) | f.denormalFlag(b)
		}
		x, y := f.orderKey(a), f.orderKey(b)
		lt, eq := !un && x < y, !un && x == y
		gt := !un && x > y
		var r bool
		switch pred & 15 {
		case 0:
			r = eq
		case 1:
			r = lt
		case 2:
			r = lt || eq
		case 3:
			r = un
		case 4:
			r = !eq
		case 5:
			r = !lt
		case 6:
			r = !(lt || eq)
		case 7:
			r = !un
		case 8:
			r = eq || un
		case 9:
			r = lt || un
		case 10:
			r = lt || eq || un
		case 11:
			r = false
		case 12:
			r = !eq && !un
		case 13:
			r = gt || eq
		case 14:
			r = gt
		case 15:
			r = true
		}
		if r {
			return ones, fl
		}
		return 0, fl
	}
}

func vcmp(f *ffmt, wrap func(fop) xfn, scalar uint8) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		body := wrap(vcmpPred(f, uint32(in.Args[2].Imm&31)))
		if scalar != 0 {
			in.MemSize = scalar
			return func(c *CPU, in *Inst) {
				t := c.X[vexV(in)]
				s, _ := c.vsrc(in, false)
				body(c, in, &t, s)
				c.setY(in.Args[0].Reg, t, XMM{})
			}
		}
		return vexLanes(body)(in)
	}
}

// vshiftImm builds the shifts by an immediate (groups 71, 72, 73): the
// destination is vvvv, the source rm, ModRM.reg picks the operation.
func vshiftImm(group int) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[1].Kind != KXMM || in.Args[2].Kind != KImm {
			return nil
		}
		n := in.Args[2].Imm & 0xff
		var f func(x XMM) XMM
		w := uint(16 << (group - 0x71))
		switch r := in.Args[0].Reg & 7; {
		case r == 2:
			f = func(x XMM) XMM { return shiftLanes(x, n, w, 'r') }
		case r == 4 && group != 0x73:
			f = func(x XMM) XMM { return shiftLanes(x, n, w, 'a') }
		case r == 6:
			f = func(x XMM) XMM { return shiftLanes(x, n, w, 'l') }
		case r == 3 && group == 0x73:
			f = func(x XMM) XMM { return shiftBytes(x, uint(n), false) }
		case r == 7 && group == 0x73:
			f = func(x XMM) XMM { return shiftBytes(x, uint(n), true) }
		default:
			return nil
		}
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			s := in.Args[1].Reg & 15
			hi := XMM{}
			if l {
				hi = f(c.YH[s])
			}
			c.setY(vexV(in), f(c.X[s]), hi)
		}
	}
}

// shiftLanes shifts each w-bit lane of x by n: 'l' left, 'r' right
// logical, 'a' right arithmetic (counts past the width give 0 or the
// sign).
func shiftLanes(x XMM, n uint64, w uint, kind byte) XMM {
	mask := ^uint64(0) >> (64 - w)
	var r XMM
	for h := 0; h < 2; h++ {
		for i := uint(0); i < 64; i += w {
			v := x[h] >> i & mask
			switch kind {
			case 'l':
				if n >= uint64(w) {
					v = 0
				} else {
					v = v << n & mask
				}
			case 'r':
				if n >= uint64(w) {
					v = 0
				} else {
					v >>= n
				}
			case 'a':
				s := int64(v<<(64-w)) >> (64 - w)
				v = uint64(s>>min(n, uint64(w-1))) & mask
			}
			r[h] |= v << i
		}
	}
	return r
}

// vshiftX builds the shifts by the low 64 bits of an XMM register or
// m128 (the same count for both lanes).
func vshiftX(w uint, kind byte) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		in.MemSize = 16
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			n, _ := c.vsrc(in, false)
			v := vexV(in)
			hi := XMM{}
			if l {
				hi = shiftLanes(c.YH[v], n[0], w, kind)
			}
			c.setY(in.Args[0].Reg, shiftLanes(c.X[v], n[0], w, kind), hi)
		}
	}
}

// vshiftV builds vpsllvd/q, vpsrlvd/q and vpsravd: per-lane counts.
func vshiftV(kind byte) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		w := uint(32)
		if vexW(in) {
			w = 64
		}
		if kind == 'a' && w == 64 {
			return nil // vpsravq is AVX-512
		}
		mask := ^uint64(0) >> (64 - w)
		return vexLanes(func(c *CPU, in *Inst, d *XMM, s XMM) {
			var r XMM
			for h := 0; h < 2; h++ {
				for i := uint(0); i < 64; i += w {
					r[h] |= shiftLanes(XMM{d[h] >> i & mask}, s[h]>>i&mask, w, kind)[0] << i
				}
			}
			*d = r
		})(in)
	}
}

// vbroadcast builds the broadcasts of size bytes from memory or the low
// lane of an XMM register (fromReg: AVX2 allows the register form).
func vbroadcast(size uint, fromReg bool) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[1].Kind == KXMM && !fromReg {
			return nil
		}
		in.MemSize = uint8(size)
		l := vexL(in)
		if size == 16 && !l {
			return nil
		}
		return func(c *CPU, in *Inst) {
			s, _ := c.vsrc(in, false)
			var lo XMM
			if size == 16 {
				lo = s
			} else {
				v := s[0] & (^uint64(0) >> (64 - 8*size))
				for i := uint(0); i < 64; i += 8 * size {
					v |= v << i
				}
				lo = XMM{v, v}
			}
			hi := XMM{}
			if l {
				hi = lo
			}
			c.setY(in.Args[0].Reg, lo, hi)
		}
	}
}

// ymmOf returns the four 64-bit lanes of a YMM value.
func ymmOf(lo, hi XMM) [4]uint64 { return [4]uint64{lo[0], lo[1], hi[0], hi[1]} }

// vperm builds the cross-lane permutes of dwords by a register (vpermd,
// vpermps: indexes in vvvv) and of qwords by an immediate (vpermq,
// vpermpd).
func vpermD(in *Inst) Handler {
	if !vexL(in) {
		return nil
	}
	in.MemSize = 32
	return func(c *CPU, in *Inst) {
		s, sh := c.vsrc(in, true)
		v := vexV(in)
		idx := ymmOf(c.X[v], c.YH[v])
		src := ymmOf(s, sh)
		var r [4]uint64
		for i := 0; i < 8; i++ {
			k := idx[i/2] >> (32 * (i & 1)) & 7
			r[i/2] |= (src[k/2] >> (32 * (k & 1)) & 0xffffffff) << (32 * (i & 1))
		}
		c.setY(in.Args[0].Reg, XMM{r[0], r[1]}, XMM{r[2], r[3]})
	}
}

func vpermQ(in *Inst) Handler {
	if !vexL(in) || !vexW(in) || in.Args[2].Kind != KImm {
		return nil
	}
	in.MemSize = 32
	imm := in.Args[2].Imm
	return func(c *CPU, in *Inst) {
		s, sh := c.vsrc(in, true)
		src := ymmOf(s, sh)
		var r [4]uint64
		for i := range r {
			r[i] = src[imm>>(2*i)&3]
		}
		c.setY(in.Args[0].Reg, XMM{r[0], r[1]}, XMM{r[2], r[3]})
	}
}

// vperm2x128 picks each 128-bit half of the result from the four of
// vvvv and rm, or zero.
func vperm2x128(in *Inst) Handler {
	if !vexL(in) || in.Args[2].Kind != KImm {
		return nil
	}
	in.MemSize = 32
	imm := in.Args[2].Imm
	return func(c *CPU, in *Inst) {
		s, sh := c.vsrc(in, true)
		v := vexV(in)
		src := [4]XMM{c.X[v], c.YH[v], s, sh}
		pick := func(k uint64) XMM {
			if k&8 != 0 {
				return XMM{}
			}
			return src[k&3]
		}
		c.setY(in.Args[0].Reg, pick(imm), pick(imm>>4))
	}
}

// vinsert128 replaces half imm&1 of vvvv with the 128-bit rm.
func vinsert128(in *Inst) Handler {
	if !vexL(in) || in.Args[2].Kind != KImm {
		return nil
	}
	in.MemSize = 16
	imm := in.Args[2].Imm
	return func(c *CPU, in *Inst) {
		s, _ := c.vsrc(in, false)
		v := vexV(in)
		lo, hi := c.X[v], c.YH[v]
		if imm&1 == 0 {
			lo = s
		} else {
			hi = s
		}
		c.setY(in.Args[0].Reg, lo, hi)
	}
}

// vextract128 writes half imm&1 of the register in ModRM.reg to rm.
func vextract128(in *Inst) Handler {
	if !vexL(in) || in.Args[2].Kind != KImm {
		return nil
	}
	in.MemSize = 16
	imm := in.Args[2].Imm
	return func(c *CPU, in *Inst) {
		r := in.Args[0].Reg & 15
		v := c.X[r]
		if imm&1 != 0 {
			v = c.YH[r]
		}
		if o := &in.Args[1]; o.Kind == KXMM {
			c.setY(o.Reg, v, XMM{})
		} else {
			c.store128(c.ea(o), v)
		}
	}
}

// vblendImm builds the blends by an immediate of w-bit lanes (vblendps,
// vblendpd, vpblendd): bit i of imm8 picks lane i from rm, the low
// 128/w bits for the low half, the next for the upper.
func vblendImm(w uint) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		n := 128 / w
		imm := in.Args[2].Imm
		m, mh := laneMask(imm&(1<<n-1), w), laneMask(imm>>n&(1<<n-1), w)
		vmem(in)
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			s, sh := c.vsrc(in, l)
			v := vexV(in)
			hi := XMM{}
			if l {
				hi = blend(c.YH[v], sh, mh)
			}
			c.setY(in.Args[0].Reg, blend(c.X[v], s, m), hi)
		}
	}
}

// vblendv builds the four-operand blends: the mask register is imm8[7:4].
func vblendv(w uint) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		m := uint8(in.Args[2].Imm >> 4)
		vmem(in)
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			s, sh := c.vsrc(in, l)
			v := vexV(in)
			lo := blend(c.X[v], s, signMask(c.X[m&15], w))
			hi := XMM{}
			if l {
				hi = blend(c.YH[v], sh, signMask(c.YH[m&15], w))
			}
			c.setY(in.Args[0].Reg, lo, hi)
		}
	}
}

// vmovmsk builds vmovmskps/pd and vpmovmskb: sign bits of every lane of
// the (128- or 256-bit) source into a general register.
func vmovmsk(w uint) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[1].Kind != KXMM {
			return nil
		}
		gpr(in, &in.Args[0])
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			s := in.Args[1].Reg & 15
			m := signBits(c.X[s], w)
			if l {
				m |= signBits(c.YH[s], w) << (128 / w)
			}
			c.R[in.Args[0].Reg] = m
		}
	}
}

func signBits(x XMM, w uint) uint64 {
	var m uint64
	n := 0
	for h := 0; h < 2; h++ {
		for i := w - 1; i < 64; i += w {
			m |= (x[h] >> i & 1) << n
			n++
		}
	}
	return m
}

// vtest builds vptest, vtestps and vtestpd (w: the sign bits only).
func vtest(w uint) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		vmem(in)
		l := vexL(in)
		var m uint64 = ^uint64(0)
		if w != 0 {
			m = 0
			for i := w - 1; i < 64; i += w {
				m |= 1 << i
			}
		}
		return func(c *CPU, in *Inst) {
			s, sh := c.vsrc(in, l)
			r := in.Args[0].Reg & 15
			d, dh := c.X[r], XMM{}
			if l {
				dh = c.YH[r]
			}
			and := (d[0]&s[0] | d[1]&s[1] | dh[0]&sh[0] | dh[1]&sh[1]) & m
			andn := (^d[0]&s[0] | ^d[1]&s[1] | ^dh[0]&sh[0] | ^dh[1]&sh[1]) & m
			c.setArith(ArithFlags, b2u(and == 0)*FlagZF|b2u(andn == 0)*FlagCF)
		}
	}
}

// vcvtWide builds the conversions whose destination is twice as wide as
// their source (vcvtps2pd, vcvtdq2pd, vpmovzx/sx with VEX.L): the SSE
// body widens 64 bits of the source; the upper half of a 256-bit result
// widens the next 64 (or the upper half of the source for pmovzx).
func vcvtWide(op x86asm.Op, srcBytes uint8) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		f := xfnOf[op]
		if f == nil {
			return nil
		}
		l := vexL(in)
		in.MemSize = srcBytes
		if l {
			in.MemSize *= 2
		}
		return func(c *CPU, in *Inst) {
			s, _ := c.vsrc(in, false)
			var lo, hi XMM
			c.mxDefer = true
			f(c, in, &lo, s)
			if l {
				f(c, in, &hi, shiftBytes(s, uint(srcBytes), false))
			}
			c.endDefer()
			c.setY(in.Args[0].Reg, lo, hi)
		}
	}
}

// vcvtNarrow builds the conversions whose result is half as wide as
// their source (vcvtpd2ps, vcvt(t)pd2dq): with VEX.L, the two halves'
// results are joined into one XMM register.
func vcvtNarrow(op x86asm.Op) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		f := xfnOf[op]
		if f == nil {
			return nil
		}
		vmem(in)
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			s, sh := c.vsrc(in, l)
			var lo, hi XMM
			c.mxDefer = true
			f(c, in, &lo, s)
			if l {
				f(c, in, &hi, sh)
				lo[1] = hi[0]
			}
			c.endDefer()
			c.setY(in.Args[0].Reg, lo, XMM{})
		}
	}
}

// vzero is vzeroupper (VEX.L 0) and vzeroall.
func vzero(in *Inst) Handler {
	if vexL(in) {
		return func(c *CPU, in *Inst) { c.X, c.YH = [16]XMM{}, [16]XMM{} }
	}
	return func(c *CPU, in *Inst) { c.YH = [16]XMM{} }
}

// vmaskmov builds vmaskmovps/pd and vpmaskmovd/q: a load of the lanes
// whose mask (vvvv) has the sign bit set (the others read as zero and
// never fault), or a store of those lanes.
func vmaskmov(w uint, store bool, wFromVex bool) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[1].Kind != KMem {
			return nil
		}
		w := w // (this instruction's: W must not stick to the builder)
		if wFromVex && vexW(in) {
			w = 64
		}
		l := vexL(in)
		n := 128 / w
		if l {
			n *= 2
		}
		size := int(w / 8)
		return func(c *CPU, in *Inst) {
			v := vexV(in)
			mask := ymmOf(c.X[v], c.YH[v])
			a := c.ea(&in.Args[1])
			r := in.Args[0].Reg & 15
			val := ymmOf(c.X[r], c.YH[r])
			var out [4]uint64
			lm := ^uint64(0) >> (64 - w)
			for i := uint(0); i < n; i++ {
				b := i * w
				if mask[b/64]>>(b%64+w-1)&1 == 0 {
					continue
				}
				ea := a + uint64(i)*uint64(size)
				if store {
					c.store(ea, size, val[b/64]>>(b%64)&lm)
				} else {
					out[b/64] |= c.load(ea, size) << (b % 64)
				}
			}
			if !store {
				c.setY(in.Args[0].Reg, XMM{out[0], out[1]}, XMM{out[2], out[3]})
			}
		}
	}
}

// vpermil builds vpermilps/pd: in-lane permutes by a register (vvvv is
// the data, rm the control) or an immediate (rm the data).
func vpermil(w uint, byImm bool) func(in *Inst) Handler {
	perm := func(x, ctl XMM) XMM {
		var r XMM
		if w == 32 {
			d := dwordsOf(x)
			k := dwordsOf(ctl)
			var o [4]uint32
			for i := range o {
				o[i] = d[k[i]&3]
			}
			return fromDwords(o)
		}
		for i := 0; i < 2; i++ {
			r[i] = x[ctl[i]>>1&1]
		}
		return r
	}
	return func(in *Inst) Handler {
		vmem(in)
		l := vexL(in)
		if byImm {
			if in.Args[2].Kind != KImm {
				return nil
			}
			imm := in.Args[2].Imm
			var ctl, ctlh XMM
			if w == 32 {
				ctl = fromDwords([4]uint32{uint32(imm & 3), uint32(imm >> 2 & 3), uint32(imm >> 4 & 3), uint32(imm >> 6 & 3)})
				ctlh = ctl
			} else {
				ctl = XMM{imm & 1 << 1, imm >> 1 & 1 << 1}
				ctlh = XMM{imm >> 2 & 1 << 1, imm >> 3 & 1 << 1}
			}
			return func(c *CPU, in *Inst) {
				s, sh := c.vsrc(in, l)
				hi := XMM{}
				if l {
					hi = perm(sh, ctlh)
				}
				c.setY(in.Args[0].Reg, perm(s, ctl), hi)
			}
		}
		return func(c *CPU, in *Inst) {
			s, sh := c.vsrc(in, l)
			v := vexV(in)
			hi := XMM{}
			if l {
				hi = perm(c.YH[v], sh)
			}
			c.setY(in.Args[0].Reg, perm(c.X[v], s), hi)
		}
	}
}

// vinsertXR builds vpinsrb/w/d/q and vinsertps-like merges: vvvv with
// one lane from a general register or memory.
func vpinsr(size uint) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		size := size
		if size == 4 && vexW(in) {
			size = 8
		}
		gpr(in, &in.Args[1])
		in.MemSize = uint8(size)
		imm := uint(in.Args[2].Imm)
		return func(c *CPU, in *Inst) {
			var v uint64
			if o := &in.Args[1]; o.Kind == KReg {
				v = c.R[o.Reg]
			} else {
				v = c.load(c.ea(o), int(size))
			}
			t := c.X[vexV(in)]
			mask := ^uint64(0) >> (64 - 8*size)
			b := (imm % (16 / size)) * size * 8
			t[b/64] = t[b/64]&^(mask<<(b%64)) | (v&mask)<<(b%64)
			c.setY(in.Args[0].Reg, t, XMM{})
		}
	}
}

func init() {
	const A = FeatAVX
	d := func(m, pp int, op byte, name string, imm bool, b func(in *Inst) Handler) {
		defVex(m, pp, op, name, A, imm, b)
	}
	// 0F map.
	d(1, 0, 0x10, "VMOVUPS", false, vmov(false, false))
	d(1, 1, 0x10, "VMOVUPD", false, vmov(false, false))
	d(1, 2, 0x10, "VMOVSS", false, vmovScalar(4, false))
	d(1, 3, 0x10, "VMOVSD", false, vmovScalar(8, false))
	d(1, 0, 0x11, "VMOVUPS", false, vmov(true, false))
	d(1, 1, 0x11, "VMOVUPD", false, vmov(true, false))
	d(1, 2, 0x11, "VMOVSS", false, vmovScalar(4, true))
	d(1, 3, 0x11, "VMOVSD", false, vmovScalar(8, true))
	movHalf := func(lane int, store bool) func(in *Inst) Handler {
		return func(in *Inst) Handler {
			if in.Args[1].Kind != KMem {
				if store {
					return nil
				}
				// vmovhlps / vmovlhps
				return func(c *CPU, in *Inst) {
					t, s := c.X[vexV(in)], c.X[in.Args[1].Reg&15]
					if lane == 0 {
						t[0] = s[1]
					} else {
						t[1] = s[0]
					}
					c.setY(in.Args[0].Reg, t, XMM{})
				}
			}
			in.MemSize = 8
			if store {
				return func(c *CPU, in *Inst) { c.store64(c.ea(&in.Args[1]), c.X[in.Args[0].Reg&15][lane]) }
			}
			return func(c *CPU, in *Inst) {
				t := c.X[vexV(in)]
				t[lane] = c.load64(c.ea(&in.Args[1]))
				c.setY(in.Args[0].Reg, t, XMM{})
			}
		}
	}
	d(1, 0, 0x12, "VMOVLPS", false, movHalf(0, false))
	d(1, 1, 0x12, "VMOVLPD", false, movHalf(0, false))
	d(1, 2, 0x12, "VMOVSLDUP", false, vl(x86asm.MOVSLDUP))
	d(1, 3, 0x12, "VMOVDDUP", false, func(in *Inst) Handler {
		if vexL(in) {
			return vfn(func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = s[0], s[0] })(in)
		}
		in.MemSize = 8
		return func(c *CPU, in *Inst) {
			s, _ := c.vsrc(in, false)
			c.setY(in.Args[0].Reg, XMM{s[0], s[0]}, XMM{})
		}
	})
	d(1, 0, 0x13, "VMOVLPS", false, movHalf(0, true))
	d(1, 1, 0x13, "VMOVLPD", false, movHalf(0, true))
	d(1, 0, 0x14, "VUNPCKLPS", false, vl(x86asm.UNPCKLPS))
	d(1, 1, 0x14, "VUNPCKLPD", false, vl(x86asm.UNPCKLPD))
	d(1, 0, 0x15, "VUNPCKHPS", false, vl(x86asm.UNPCKHPS))
	d(1, 1, 0x15, "VUNPCKHPD", false, vl(x86asm.UNPCKHPD))
	d(1, 0, 0x16, "VMOVHPS", false, movHalf(1, false))
	d(1, 1, 0x16, "VMOVHPD", false, movHalf(1, false))
	d(1, 2, 0x16, "VMOVSHDUP", false, vl(x86asm.MOVSHDUP))
	d(1, 0, 0x17, "VMOVHPS", false, movHalf(1, true))
	d(1, 1, 0x17, "VMOVHPD", false, movHalf(1, true))
	d(1, 0, 0x28, "VMOVAPS", false, vmov(false, true))
	d(1, 1, 0x28, "VMOVAPD", false, vmov(false, true))
	d(1, 0, 0x29, "VMOVAPS", false, vmov(true, true))
	d(1, 1, 0x29, "VMOVAPD", false, vmov(true, true))
	cvtFromInt := func(f *ffmt) func(in *Inst) Handler {
		return func(in *Inst) Handler {
			gpr(in, &in.Args[1])
			in.MemSize = in.Args[1].Size
			if in.Args[1].Kind == KMem {
				in.MemSize = 4
				if vexW(in) {
					in.MemSize = 8
				}
				in.Args[1].Size = in.MemSize
			}
			keep := ^uint64(0xffffffff)
			if f == fmt64 {
				keep = 0
			}
			return func(c *CPU, in *Inst) {
				r := intToF(c, in, f)
				t := c.X[vexV(in)]
				t[0] = t[0]&keep | r
				c.setY(in.Args[0].Reg, t, XMM{})
			}
		}
	}
	d(1, 2, 0x2a, "VCVTSI2SS", false, cvtFromInt(fmt32))
	d(1, 3, 0x2a, "VCVTSI2SD", false, cvtFromInt(fmt64))
	d(1, 0, 0x2b, "VMOVNTPS", false, vmov(true, true))
	d(1, 1, 0x2b, "VMOVNTPD", false, vmov(true, true))
	cvtToInt := func(op x86asm.Op, size uint8) func(in *Inst) Handler {
		return vlegacy(builderOf(op), false, false, func(in *Inst) {
			gpr(in, &in.Args[0])
			in.MemSize = size
		})
	}
	d(1, 2, 0x2c, "VCVTTSS2SI", false, cvtToInt(x86asm.CVTTSS2SI, 4))
	d(1, 3, 0x2c, "VCVTTSD2SI", false, cvtToInt(x86asm.CVTTSD2SI, 8))
	d(1, 2, 0x2d, "VCVTSS2SI", false, cvtToInt(x86asm.CVTSS2SI, 4))
	d(1, 3, 0x2d, "VCVTSD2SI", false, cvtToInt(x86asm.CVTSD2SI, 8))
	comi := func(op x86asm.Op, size uint8) func(in *Inst) Handler {
		return func(in *Inst) Handler {
			f := xfnOf[op]
			in.MemSize = size
			return func(c *CPU, in *Inst) {
				t := c.X[in.Args[0].Reg&15]
				s, _ := c.vsrc(in, false)
				f(c, in, &t, s)
			}
		}
	}
	d(1, 0, 0x2e, "VUCOMISS", false, comi(x86asm.UCOMISS, 4))
	d(1, 1, 0x2e, "VUCOMISD", false, comi(x86asm.UCOMISD, 8))
	d(1, 0, 0x2f, "VCOMISS", false, comi(x86asm.COMISS, 4))
	d(1, 1, 0x2f, "VCOMISD", false, comi(x86asm.COMISD, 8))
	d(1, 0, 0x50, "VMOVMSKPS", false, vmovmsk(32))
	d(1, 1, 0x50, "VMOVMSKPD", false, vmovmsk(64))
	fp := func(op byte, name string, ps, pd, ss, sd x86asm.Op) {
		d(1, 0, op, "V"+name+"PS", false, vl(ps))
		d(1, 1, op, "V"+name+"PD", false, vl(pd))
		if ss != 0 {
			d(1, 2, op, "V"+name+"SS", false, vs(ss, 4))
			d(1, 3, op, "V"+name+"SD", false, vs(sd, 8))
		}
	}
	fp(0x51, "SQRT", x86asm.SQRTPS, x86asm.SQRTPD, x86asm.SQRTSS, x86asm.SQRTSD)
	logic := func(f func(a, b uint64) uint64) func(in *Inst) Handler {
		return vfn(func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = f(d[0], s[0]), f(d[1], s[1]) })
	}
	and := logic(func(a, b uint64) uint64 { return a & b })
	andn := logic(func(a, b uint64) uint64 { return ^a & b })
	or := logic(func(a, b uint64) uint64 { return a | b })
	xor := logic(func(a, b uint64) uint64 { return a ^ b })
	for pp := 0; pp < 2; pp++ {
		sfx := []string{"PS", "PD"}[pp]
		d(1, pp, 0x54, "VAND"+sfx, false, and)
		d(1, pp, 0x55, "VANDN"+sfx, false, andn)
		d(1, pp, 0x56, "VOR"+sfx, false, or)
		d(1, pp, 0x57, "VXOR"+sfx, false, xor)
	}
	fp(0x58, "ADD", x86asm.ADDPS, x86asm.ADDPD, x86asm.ADDSS, x86asm.ADDSD)
	fp(0x59, "MUL", x86asm.MULPS, x86asm.MULPD, x86asm.MULSS, x86asm.MULSD)
	d(1, 0, 0x5a, "VCVTPS2PD", false, vcvtWide(x86asm.CVTPS2PD, 8))
	d(1, 1, 0x5a, "VCVTPD2PS", false, vcvtNarrow(x86asm.CVTPD2PS))
	d(1, 2, 0x5a, "VCVTSS2SD", false, vs(x86asm.CVTSS2SD, 4))
	d(1, 3, 0x5a, "VCVTSD2SS", false, vs(x86asm.CVTSD2SS, 8))
	d(1, 0, 0x5b, "VCVTDQ2PS", false, vl(x86asm.CVTDQ2PS))
	d(1, 1, 0x5b, "VCVTPS2DQ", false, vl(x86asm.CVTPS2DQ))
	d(1, 2, 0x5b, "VCVTTPS2DQ", false, vl(x86asm.CVTTPS2DQ))
	fp(0x5c, "SUB", x86asm.SUBPS, x86asm.SUBPD, x86asm.SUBSS, x86asm.SUBSD)
	fp(0x5d, "MIN", x86asm.MINPS, x86asm.MINPD, x86asm.MINSS, x86asm.MINSD)
	fp(0x5e, "DIV", x86asm.DIVPS, x86asm.DIVPD, x86asm.DIVSS, x86asm.DIVSD)
	fp(0x5f, "MAX", x86asm.MAXPS, x86asm.MAXPD, x86asm.MAXSS, x86asm.MAXSD)

	// Packed integers, 66 0F xx.
	ints := map[byte]x86asm.Op{
		0x60: x86asm.PUNPCKLBW, 0x61: x86asm.PUNPCKLWD, 0x62: x86asm.PUNPCKLDQ, 0x63: x86asm.PACKSSWB,
		0x64: x86asm.PCMPGTB, 0x65: x86asm.PCMPGTW, 0x66: x86asm.PCMPGTD, 0x67: x86asm.PACKUSWB,
		0x68: x86asm.PUNPCKHBW, 0x69: x86asm.PUNPCKHWD, 0x6a: x86asm.PUNPCKHDQ, 0x6b: x86asm.PACKSSDW,
		0x6c: x86asm.PUNPCKLQDQ, 0x6d: x86asm.PUNPCKHQDQ, 0x74: x86asm.PCMPEQB, 0x75: x86asm.PCMPEQW,
		0x76: x86asm.PCMPEQD, 0xd4: x86asm.PADDQ, 0xd5: x86asm.PMULLW, 0xd8: x86asm.PSUBUSB,
		0xd9: x86asm.PSUBUSW, 0xda: x86asm.PMINUB, 0xdc: x86asm.PADDUSB, 0xdd: x86asm.PADDUSW,
		0xde: x86asm.PMAXUB, 0xe0: x86asm.PAVGB, 0xe3: x86asm.PAVGW, 0xe4: x86asm.PMULHUW,
		0xe5: x86asm.PMULHW, 0xe8: x86asm.PSUBSB, 0xe9: x86asm.PSUBSW, 0xea: x86asm.PMINSW,
		0xec: x86asm.PADDSB, 0xed: x86asm.PADDSW, 0xee: x86asm.PMAXSW, 0xf4: x86asm.PMULUDQ,
		0xf5: x86asm.PMADDWD, 0xf6: x86asm.PSADBW, 0xf8: x86asm.PSUBB, 0xf9: x86asm.PSUBW,
		0xfa: x86asm.PSUBD, 0xfb: x86asm.PSUBQ, 0xfc: x86asm.PADDB, 0xfd: x86asm.PADDW, 0xfe: x86asm.PADDD,
	}
	for op, legacy := range ints {
		d(1, 1, op, "V"+legacy.String(), false, vl(legacy))
	}
	xfnOf[x86asm.PCMPEQB] = lanesEq(hiB, 8) // registered by hand in sse_int.go
	d(1, 1, 0xdb, "VPAND", false, and)
	d(1, 1, 0xdf, "VPANDN", false, andn)
	d(1, 1, 0xeb, "VPOR", false, or)
	d(1, 1, 0xef, "VPXOR", false, xor)
	d(1, 1, 0x6e, "VMOVD", false, func(in *Inst) Handler {
		gpr(in, &in.Args[1])
		size := 4
		if vexW(in) {
			size = 8
		}
		in.MemSize = uint8(size)
		return func(c *CPU, in *Inst) {
			var v uint64
			if o := &in.Args[1]; o.Kind == KReg {
				v = c.R[o.Reg] & sizeMask[size]
			} else {
				v = c.load(c.ea(o), size)
			}
			c.setY(in.Args[0].Reg, XMM{v}, XMM{})
		}
	})
	d(1, 1, 0x7e, "VMOVD", false, func(in *Inst) Handler {
		gpr(in, &in.Args[1])
		size := 4
		if vexW(in) {
			size = 8
		}
		in.MemSize = uint8(size)
		return func(c *CPU, in *Inst) {
			v := c.X[in.Args[0].Reg&15][0] & sizeMask[size]
			if o := &in.Args[1]; o.Kind == KReg {
				c.R[o.Reg] = v
			} else {
				c.store(c.ea(o), size, v)
			}
		}
	})
	d(1, 2, 0x7e, "VMOVQ", false, func(in *Inst) Handler {
		in.MemSize = 8
		return func(c *CPU, in *Inst) {
			s, _ := c.vsrc(in, false)
			c.setY(in.Args[0].Reg, XMM{s[0]}, XMM{})
		}
	})
	d(1, 1, 0xd6, "VMOVQ", false, func(in *Inst) Handler {
		in.MemSize = 8
		return func(c *CPU, in *Inst) {
			v := c.X[in.Args[0].Reg&15][0]
			if o := &in.Args[1]; o.Kind == KXMM {
				c.setY(o.Reg, XMM{v}, XMM{})
			} else {
				c.store64(c.ea(o), v)
			}
		}
	})
	d(1, 1, 0x6f, "VMOVDQA", false, vmov(false, true))
	d(1, 2, 0x6f, "VMOVDQU", false, vmov(false, false))
	d(1, 1, 0x7f, "VMOVDQA", false, vmov(true, true))
	d(1, 2, 0x7f, "VMOVDQU", false, vmov(true, false))
	d(1, 1, 0xe7, "VMOVNTDQ", false, vmov(true, true))
	d(1, 3, 0xf0, "VLDDQU", false, vmov(false, false))
	d(1, 1, 0x70, "VPSHUFD", true, vl(x86asm.PSHUFD))
	d(1, 2, 0x70, "VPSHUFHW", true, vl(x86asm.PSHUFHW))
	d(1, 3, 0x70, "VPSHUFLW", true, vl(x86asm.PSHUFLW))
	d(1, 1, 0x71, "VPSxxW", true, vshiftImm(0x71))
	d(1, 1, 0x72, "VPSxxD", true, vshiftImm(0x72))
	d(1, 1, 0x73, "VPSxxQ", true, vshiftImm(0x73))
	d(1, 1, 0xd1, "VPSRLW", false, vshiftX(16, 'r'))
	d(1, 1, 0xd2, "VPSRLD", false, vshiftX(32, 'r'))
	d(1, 1, 0xd3, "VPSRLQ", false, vshiftX(64, 'r'))
	d(1, 1, 0xe1, "VPSRAW", false, vshiftX(16, 'a'))
	d(1, 1, 0xe2, "VPSRAD", false, vshiftX(32, 'a'))
	d(1, 1, 0xf1, "VPSLLW", false, vshiftX(16, 'l'))
	d(1, 1, 0xf2, "VPSLLD", false, vshiftX(32, 'l'))
	d(1, 1, 0xf3, "VPSLLQ", false, vshiftX(64, 'l'))
	vexOps[vexKey(1, 0, 0x77)] = &vexOp{name: "VZEROUPPER", feat: A, noRM: true, build: vzero}
	d(1, 1, 0x7c, "VHADDPD", false, vl(x86asm.HADDPD))
	d(1, 3, 0x7c, "VHADDPS", false, vl(x86asm.HADDPS))
	d(1, 1, 0x7d, "VHSUBPD", false, vl(x86asm.HSUBPD))
	d(1, 3, 0x7d, "VHSUBPS", false, vl(x86asm.HSUBPS))
	d(1, 0, 0xc2, "VCMPPS", true, vcmp(fmt32, packed32, 0))
	d(1, 1, 0xc2, "VCMPPD", true, vcmp(fmt64, packed64, 0))
	d(1, 2, 0xc2, "VCMPSS", true, vcmp(fmt32, scalar32, 4))
	d(1, 3, 0xc2, "VCMPSD", true, vcmp(fmt64, scalar64, 8))
	d(1, 1, 0xc4, "VPINSRW", true, vpinsr(2))
	d(1, 1, 0xc5, "VPEXTRW", true, func(in *Inst) Handler {
		if in.Args[1].Kind != KXMM {
			return nil
		}
		return func(c *CPU, in *Inst) {
			n := in.Args[2].Imm & 7
			c.R[in.Args[0].Reg&15] = c.X[in.Args[1].Reg&15][n>>2] >> (16 * (n & 3)) & 0xffff
		}
	})
	d(1, 0, 0xc6, "VSHUFPS", true, vl(x86asm.SHUFPS))
	d(1, 1, 0xc6, "VSHUFPD", true, func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		imm := in.Args[2].Imm
		vmem(in)
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			s, sh := c.vsrc(in, l)
			v := vexV(in)
			a, b := c.X[v], c.YH[v]
			lo := XMM{a[imm&1], s[imm>>1&1]}
			hi := XMM{}
			if l {
				hi = XMM{b[imm>>2&1], sh[imm>>3&1]}
			}
			c.setY(in.Args[0].Reg, lo, hi)
		}
	})
	d(1, 1, 0xd0, "VADDSUBPD", false, vl(x86asm.ADDSUBPD))
	d(1, 3, 0xd0, "VADDSUBPS", false, vl(x86asm.ADDSUBPS))
	d(1, 1, 0xd7, "VPMOVMSKB", false, vmovmsk(8))
	d(1, 1, 0xe6, "VCVTTPD2DQ", false, vcvtNarrow(x86asm.CVTTPD2DQ))
	d(1, 2, 0xe6, "VCVTDQ2PD", false, vcvtWide(x86asm.CVTDQ2PD, 8))
	d(1, 3, 0xe6, "VCVTPD2DQ", false, vcvtNarrow(x86asm.CVTPD2DQ))

	d(1, 0, 0xae, "VLDMXCSR/VSTMXCSR", false, func(in *Inst) Handler {
		if in.Args[1].Kind != KMem {
			return nil
		}
		op := x86asm.LDMXCSR
		switch in.Args[0].Reg & 7 {
		case 2:
		case 3:
			op = x86asm.STMXCSR
		default:
			return nil
		}
		in.Args[0], in.Args[1] = in.Args[1], Operand{}
		in.Args[0].Size, in.MemSize = 4, 4
		return builders[op](in)
	})

	// 0F38 map.
	m2 := map[byte]x86asm.Op{
		0x00: x86asm.PSHUFB, 0x01: x86asm.PHADDW, 0x02: x86asm.PHADDD, 0x03: x86asm.PHADDSW,
		0x04: x86asm.PMADDUBSW, 0x05: x86asm.PHSUBW, 0x06: x86asm.PHSUBD, 0x07: x86asm.PHSUBSW,
		0x08: x86asm.PSIGNB, 0x09: x86asm.PSIGNW, 0x0a: x86asm.PSIGND, 0x0b: x86asm.PMULHRSW,
		0x1c: x86asm.PABSB, 0x1d: x86asm.PABSW, 0x1e: x86asm.PABSD, 0x28: x86asm.PMULDQ,
		0x29: x86asm.PCMPEQQ, 0x2b: x86asm.PACKUSDW, 0x37: x86asm.PCMPGTQ, 0x38: x86asm.PMINSB,
		0x39: x86asm.PMINSD, 0x3a: x86asm.PMINUW, 0x3b: x86asm.PMINUD, 0x3c: x86asm.PMAXSB,
		0x3d: x86asm.PMAXSD, 0x3e: x86asm.PMAXUW, 0x3f: x86asm.PMAXUD, 0x40: x86asm.PMULLD,
	}
	for op, legacy := range m2 {
		d(2, 1, op, "V"+legacy.String(), false, vl(legacy))
	}
	d(2, 1, 0x0c, "VPERMILPS", false, vpermil(32, false))
	d(2, 1, 0x0d, "VPERMILPD", false, vpermil(64, false))
	d(2, 1, 0x0e, "VTESTPS", false, vtest(32))
	d(2, 1, 0x0f, "VTESTPD", false, vtest(64))
	d(2, 1, 0x16, "VPERMPS", false, vpermD)
	d(2, 1, 0x17, "VPTEST", false, vtest(0))
	d(2, 1, 0x18, "VBROADCASTSS", false, vbroadcast(4, true))
	d(2, 1, 0x19, "VBROADCASTSD", false, vbroadcast(8, true))
	d(2, 1, 0x1a, "VBROADCASTF128", false, vbroadcast(16, false))
	pmov := map[byte]struct {
		op   x86asm.Op
		size uint8
	}{
		0x20: {x86asm.PMOVSXBW, 8}, 0x21: {x86asm.PMOVSXBD, 4}, 0x22: {x86asm.PMOVSXBQ, 2},
		0x23: {x86asm.PMOVSXWD, 8}, 0x24: {x86asm.PMOVSXWQ, 4}, 0x25: {x86asm.PMOVSXDQ, 8},
		0x30: {x86asm.PMOVZXBW, 8}, 0x31: {x86asm.PMOVZXBD, 4}, 0x32: {x86asm.PMOVZXBQ, 2},
		0x33: {x86asm.PMOVZXWD, 8}, 0x34: {x86asm.PMOVZXWQ, 4}, 0x35: {x86asm.PMOVZXDQ, 8},
	}
	for op, p := range pmov {
		d(2, 1, op, "V"+p.op.String(), false, vcvtWide(p.op, p.size))
	}
	d(2, 1, 0x2a, "VMOVNTDQA", false, vmov(false, true))
	d(2, 1, 0x2c, "VMASKMOVPS", false, vmaskmov(32, false, false))
	d(2, 1, 0x2d, "VMASKMOVPD", false, vmaskmov(64, false, false))
	d(2, 1, 0x2e, "VMASKMOVPS", false, vmaskmov(32, true, false))
	d(2, 1, 0x2f, "VMASKMOVPD", false, vmaskmov(64, true, false))
	d(2, 1, 0x36, "VPERMD", false, vpermD)
	d(2, 1, 0x41, "VPHMINPOSUW", false, func(in *Inst) Handler {
		if vexL(in) {
			return nil
		}
		return vl(x86asm.PHMINPOSUW)(in)
	})
	d(2, 1, 0x45, "VPSRLV", false, vshiftV('r'))
	d(2, 1, 0x46, "VPSRAVD", false, vshiftV('a'))
	d(2, 1, 0x47, "VPSLLV", false, vshiftV('l'))
	d(2, 1, 0x58, "VPBROADCASTD", false, vbroadcast(4, true))
	d(2, 1, 0x59, "VPBROADCASTQ", false, vbroadcast(8, true))
	d(2, 1, 0x5a, "VBROADCASTI128", false, vbroadcast(16, false))
	d(2, 1, 0x78, "VPBROADCASTB", false, vbroadcast(1, true))
	d(2, 1, 0x79, "VPBROADCASTW", false, vbroadcast(2, true))
	d(2, 1, 0x8c, "VPMASKMOV", false, vmaskmov(32, false, true))
	d(2, 1, 0x8e, "VPMASKMOV", false, vmaskmov(32, true, true))

	// 0F3A map.
	d(3, 1, 0x00, "VPERMQ", true, vpermQ)
	d(3, 1, 0x01, "VPERMPD", true, vpermQ)
	d(3, 1, 0x02, "VPBLENDD", true, vblendImm(32))
	d(3, 1, 0x04, "VPERMILPS", true, vpermil(32, true))
	d(3, 1, 0x05, "VPERMILPD", true, vpermil(64, true))
	d(3, 1, 0x06, "VPERM2F128", true, vperm2x128)
	d(3, 1, 0x46, "VPERM2I128", true, vperm2x128)
	d(3, 1, 0x08, "VROUNDPS", true, vli(x86asm.ROUNDPS))
	d(3, 1, 0x09, "VROUNDPD", true, vli(x86asm.ROUNDPD))
	d(3, 1, 0x0a, "VROUNDSS", true, vsi(x86asm.ROUNDSS, 4))
	d(3, 1, 0x0b, "VROUNDSD", true, vsi(x86asm.ROUNDSD, 8))
	d(3, 1, 0x0c, "VBLENDPS", true, vblendImm(32))
	d(3, 1, 0x0d, "VBLENDPD", true, vblendImm(64))
	d(3, 1, 0x0e, "VPBLENDW", true, vli(x86asm.PBLENDW))
	d(3, 1, 0x0f, "VPALIGNR", true, func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		n := uint(in.Args[2].Imm & 0xff)
		return vfn(func(c *CPU, in *Inst, d *XMM, s XMM) { *d = palignr(*d, s, n) })(in)
	})
	extract := func(op x86asm.Op, size uint8) func(in *Inst) Handler {
		return vlegacy(builderOf(op), true, false, func(in *Inst) {
			gpr(in, &in.Args[1])
			in.MemSize = size
			if in.Args[1].Kind == KReg && size < 8 {
				in.Args[1].Size = 4
			}
		})
	}
	d(3, 1, 0x14, "VPEXTRB", true, extract(x86asm.PEXTRB, 1))
	d(3, 1, 0x15, "VPEXTRW", true, func(in *Inst) Handler {
		in.MemSize = 2
		gpr(in, &in.Args[1])
		in.Args[0], in.Args[1] = in.Args[1], in.Args[0]
		if in.Args[0].Kind == KMem {
			return pextrwMem(in)
		}
		return func(c *CPU, in *Inst) {
			n := in.Args[2].Imm & 7
			c.R[in.Args[0].Reg] = c.X[in.Args[1].Reg&15][n>>2] >> (16 * (n & 3)) & 0xffff
		}
	})
	d(3, 1, 0x16, "VPEXTRD", true, func(in *Inst) Handler {
		if vexW(in) {
			return extract(x86asm.PEXTRQ, 8)(in)
		}
		return extract(x86asm.PEXTRD, 4)(in)
	})
	d(3, 1, 0x17, "VEXTRACTPS", true, extract(x86asm.EXTRACTPS, 4))
	d(3, 1, 0x18, "VINSERTF128", true, vinsert128)
	d(3, 1, 0x38, "VINSERTI128", true, vinsert128)
	d(3, 1, 0x19, "VEXTRACTF128", true, vextract128)
	d(3, 1, 0x39, "VEXTRACTI128", true, vextract128)
	d(3, 1, 0x20, "VPINSRB", true, vpinsr(1))
	d(3, 1, 0x22, "VPINSRD", true, vpinsr(4))
	d(3, 1, 0x21, "VINSERTPS", true, func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		imm := in.Args[2].Imm & 0xff
		in.MemSize = 4
		return func(c *CPU, in *Inst) {
			var v uint64
			if o := &in.Args[1]; o.Kind == KXMM {
				v = lane32(c.X[o.Reg&15], int(imm>>6))
			} else {
				v = c.load32(c.ea(o))
			}
			d := dwordsOf(c.X[vexV(in)])
			d[imm>>4&3] = uint32(v)
			for i := range d {
				if imm>>i&1 != 0 {
					d[i] = 0
				}
			}
			c.setY(in.Args[0].Reg, fromDwords(d), XMM{})
		}
	})
	d(3, 1, 0x40, "VDPPS", true, vli(x86asm.DPPS))
	d(3, 1, 0x41, "VDPPD", true, func(in *Inst) Handler {
		if vexL(in) {
			return nil
		}
		return vli(x86asm.DPPD)(in)
	})
	d(3, 1, 0x42, "VMPSADBW", true, func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		imm := in.Args[2].Imm
		vmem(in)
		l := vexL(in)
		return func(c *CPU, in *Inst) {
			s, sh := c.vsrc(in, l)
			v := vexV(in)
			hi := XMM{}
			if l {
				hi = mpsadbw(c.YH[v], sh, imm>>3) // the upper lane's offsets are imm bits 3-5
			}
			c.setY(in.Args[0].Reg, mpsadbw(c.X[v], s, imm), hi)
		}
	})
	d(3, 1, 0x4a, "VBLENDVPS", true, vblendv(32))
	d(3, 1, 0x4b, "VBLENDVPD", true, vblendv(64))
	d(3, 1, 0x4c, "VPBLENDVB", true, vblendv(8))
	str := func(explicit, index bool) func(in *Inst) Handler {
		return func(in *Inst) Handler {
			if vexL(in) {
				return nil
			}
			in.MemSize = 16
			if vexW(in) {
				in.OpSize = 8
			}
			h := pcmpstrOp(explicit, index)(in)
			if h == nil || index {
				return h
			}
			return func(c *CPU, in *Inst) {
				h(c, in)
				c.YH[0] = XMM{}
			}
		}
	}
	d(3, 1, 0x60, "VPCMPESTRM", true, str(true, false))
	d(3, 1, 0x61, "VPCMPESTRI", true, str(true, true))
	d(3, 1, 0x62, "VPCMPISTRM", true, str(false, false))
	d(3, 1, 0x63, "VPCMPISTRI", true, str(false, true))
}
