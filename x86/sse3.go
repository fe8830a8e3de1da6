package x86

// SSE3 and SSSE3 (x86-64-v2): duplicating moves, horizontal and
// alternating floating-point arithmetic, byte shuffles, alignment,
// absolute values, horizontal integer sums, signs and the rounding
// multiplies. Floating point goes through the same lane operations as
// SSE2 (sse_fp.go), so flags and rounding follow MXCSR exactly. The MMX
// forms of the SSSE3 instructions are in ssse3_mmx.go.

import (
	"golang.org/x/arch/x86/x86asm"
)

// srcX reads the source operand o of in: an XMM register, or in.MemSize
// bytes of memory into the low bytes (the rest zero). A 16-byte memory
// operand must be 16-byte aligned when aligned is set (#GP otherwise), as
// for every legacy SSE instruction but the unaligned loads.
func (c *CPU) srcX(in *Inst, o *Operand, aligned bool) XMM {
	if o.Kind == KXMM {
		return c.X[o.Reg&15]
	}
	a := c.ea(o)
	switch in.MemSize {
	case 16:
		if aligned && a&15 != 0 {
			c.gp()
		}
		return c.load128(a)
	case 8:
		return XMM{c.load64(a)}
	case 4:
		return XMM{c.load32(a)}
	case 2:
		return XMM{c.load16(a)}
	}
	return XMM{c.load8(a)}
}

// buildXS is buildX for the SSE3-and-later forms: Args[0] an XMM
// destination, Args[1] an XMM register or memory of any size.
func buildXS(f xfn, aligned bool) Builder {
	return func(in *Inst) Handler {
		if !isX(&in.Args[0]) || !isX(&in.Args[1]) && !isMem(&in.Args[1]) {
			return nil
		}
		return func(c *CPU, in *Inst) {
			s := c.srcX(in, &in.Args[1], aligned)
			f(c, in, &c.X[in.Args[0].Reg&15], s)
		}
	}
}

// sseA registers f for ops with an XMM destination and an XMM or memory
// source (16-byte memory aligned).
// Its handler is static, as sse's (sseBody).
func sseA(f xfn, ops ...x86asm.Op) {
	for _, op := range ops {
		register(op, buildSSEA)
		xfnOf[op] = f
		sseBody[op] = f
	}
}

// buildSSEA is buildXS(f, true) for the ops sseA registered.
func buildSSEA(in *Inst) Handler {
	if !isX(&in.Args[0]) || !isX(&in.Args[1]) && !isMem(&in.Args[1]) {
		return nil
	}
	return sseAligned
}

func sseAligned(c *CPU, in *Inst) {
	s := c.srcX(in, &in.Args[1], true)
	sseBody[in.Op&4095](c, in, &c.X[in.Args[0].Reg&15], s)
}

// palignrX runs palignr with its count from the immediate (a static
// handler: a code file keeps its blocks).
func palignrX(c *CPU, in *Inst) {
	s := c.srcX(in, &in.Args[1], true)
	d := &c.X[in.Args[0].Reg&15]
	*d = palignr(*d, s, uint(in.Args[2].Imm&0xff))
}

// horizontal32 computes {op(a0,a1), op(a2,a3), op(b0,b1), op(b2,b3)} on
// float32 lanes: haddps and hsubps.
func horizontal32(op fop) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := op(d[0]&0xffffffff, d[0]>>32, mx)
		r1, f1 := op(d[1]&0xffffffff, d[1]>>32, mx)
		r2, f2 := op(s[0]&0xffffffff, s[0]>>32, mx)
		r3, f3 := op(s[1]&0xffffffff, s[1]>>32, mx)
		c.mxFinish(f0 | f1 | f2 | f3)
		d[0], d[1] = r0|r1<<32, r2|r3<<32
	}
}

func horizontal64(op fop) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := op(d[0], d[1], mx)
		r1, f1 := op(s[0], s[1], mx)
		c.mxFinish(f0 | f1)
		d[0], d[1] = r0, r1
	}
}

// hInt applies op to adjacent pairs of w-bit lanes of d then s (phaddw
// and friends): the results of d's pairs go to the low half.
func hInt(w uint, op func(a, b uint64) uint64) xfn {
	return func(c *CPU, in *Inst, d *XMM, s XMM) {
		mask := uint64(1)<<w - 1
		n := 64 / w // lanes per half
		var r XMM
		k := uint(0)
		for _, x := range [2]XMM{*d, s} {
			for h := 0; h < 2; h++ {
				for i := uint(0); i < n; i += 2 {
					v := op(x[h]>>(i*w)&mask, x[h]>>((i+1)*w)&mask) & mask
					r[k/n] |= v << (k % n * w)
					k++
				}
			}
		}
		*d = r
	}
}

func sx16(v uint64) int { return int(int16(v)) }
func sx32(v uint64) int { return int(int32(v)) }

func init() {
	// SSE3.
	register(x86asm.MOVDDUP, buildXS(func(c *CPU, in *Inst, d *XMM, s XMM) { d[0], d[1] = s[0], s[0] }, true))
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0] = s[0]>>32 | s[0]&^0xffffffff
		d[1] = s[1]>>32 | s[1]&^0xffffffff
	}, x86asm.MOVSHDUP)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		d[0] = s[0]&0xffffffff | s[0]<<32
		d[1] = s[1]&0xffffffff | s[1]<<32
	}, x86asm.MOVSLDUP)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := sub32(d[0]&0xffffffff, s[0]&0xffffffff, mx)
		r1, f1 := add32(d[0]>>32, s[0]>>32, mx)
		r2, f2 := sub32(d[1]&0xffffffff, s[1]&0xffffffff, mx)
		r3, f3 := add32(d[1]>>32, s[1]>>32, mx)
		c.mxFinish(f0 | f1 | f2 | f3)
		d[0], d[1] = r0|r1<<32, r2|r3<<32
	}, x86asm.ADDSUBPS)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		mx := c.MXCSR
		r0, f0 := sub64(d[0], s[0], mx)
		r1, f1 := add64(d[1], s[1], mx)
		c.mxFinish(f0 | f1)
		d[0], d[1] = r0, r1
	}, x86asm.ADDSUBPD)
	sseA(horizontal32(add32), x86asm.HADDPS)
	sseA(horizontal32(sub32), x86asm.HSUBPS)
	sseA(horizontal64(add64), x86asm.HADDPD)
	sseA(horizontal64(sub64), x86asm.HSUBPD)
	register(x86asm.LDDQU, func(in *Inst) Handler {
		if isX(&in.Args[0]) && isMem(&in.Args[1]) {
			return loadU128
		}
		return nil
	})

	// SSSE3.
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) { *d = pshufb(*d, s) }, x86asm.PSHUFB)
	register(x86asm.PALIGNR, func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		if buildSSEA(in) == nil {
			return nil
		}
		return palignrX
	})
	sseA(byteOp(func(_, b uint8) uint8 { return uint8(max(int8(b), -int8(b))) }), x86asm.PABSB)
	sseA(wordOp(func(_, b uint16) uint16 { return uint16(max(int16(b), -int16(b))) }), x86asm.PABSW)
	sseA(dwordOp(func(_, b uint32) uint32 { return uint32(max(int32(b), -int32(b))) }), x86asm.PABSD)
	sseA(hInt(16, func(a, b uint64) uint64 { return a + b }), x86asm.PHADDW)
	sseA(hInt(32, func(a, b uint64) uint64 { return a + b }), x86asm.PHADDD)
	sseA(hInt(16, func(a, b uint64) uint64 { return uint64(satS16(sx16(a) + sx16(b))) }), x86asm.PHADDSW)
	sseA(hInt(16, func(a, b uint64) uint64 { return a - b }), x86asm.PHSUBW)
	sseA(hInt(32, func(a, b uint64) uint64 { return a - b }), x86asm.PHSUBD)
	sseA(hInt(16, func(a, b uint64) uint64 { return uint64(satS16(sx16(a) - sx16(b))) }), x86asm.PHSUBSW)
	sseA(func(c *CPU, in *Inst, d *XMM, s XMM) {
		x, y := bytesOf(*d), bytesOf(s)
		var r [8]uint16
		for i := range r {
			r[i] = satS16(int(x[2*i])*int(int8(y[2*i])) + int(x[2*i+1])*int(int8(y[2*i+1])))
		}
		*d = fromWords(r)
	}, x86asm.PMADDUBSW)
	sseA(wordOp(func(a, b uint16) uint16 {
		return uint16((int32(int16(a))*int32(int16(b))>>14 + 1) >> 1)
	}), x86asm.PMULHRSW)
	sseA(byteOp(func(a, b uint8) uint8 { return uint8(psign(int64(int8(a)), int64(int8(b)))) }), x86asm.PSIGNB)
	sseA(wordOp(func(a, b uint16) uint16 { return uint16(psign(int64(int16(a)), int64(int16(b)))) }), x86asm.PSIGNW)
	sseA(dwordOp(func(a, b uint32) uint32 { return uint32(psign(int64(int32(a)), int64(int32(b)))) }), x86asm.PSIGND)
}

func psign(a, b int64) int64 {
	switch {
	case b < 0:
		return -a
	case b == 0:
		return 0
	}
	return a
}

// pshufb selects bytes of d by the low four bits of each byte of s, or
// zero where that byte's top bit is set.
func pshufb(d, s XMM) XMM {
	x, y := bytesOf(d), bytesOf(s)
	var r [16]uint8
	for i, k := range y {
		if k&0x80 == 0 {
			r[i] = x[k&15]
		}
	}
	return fromBytes(r)
}

// palignr is bytes n to n+15 of the 32-byte value d:s.
func palignr(d, s XMM, n uint) XMM {
	var b [48]uint8
	lo, hi := bytesOf(s), bytesOf(d)
	copy(b[:16], lo[:])
	copy(b[16:32], hi[:])
	if n > 32 {
		n = 32
	}
	var r [16]uint8
	copy(r[:], b[n:n+16])
	return fromBytes(r)
}
