package x86

// The MMX forms of SSSE3 (pshufb, palignr, pabs*, phadd*, phsub*,
// pmaddubsw, pmulhrsw, psign* on 64-bit mm registers or m64): the XMM
// bodies of sse3.go on the low 64 bits, the horizontal ones repacked,
// and pshufb and palignr, whose 64-bit forms index and shift within 8
// and 16 bytes, written out. Like every MMX instruction they put the x87
// in MMX state (mmxRead, mmxWrite). An m64 operand needs no alignment.

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// mmxFn computes an MMX form's result from the destination d and the
// source s.
type mmxFn func(c *CPU, in *Inst, d, s uint64) uint64

// withMMX makes op's builder build fn's handler for the MMX forms and
// leave the XMM forms to the builder it had.
func withMMX(op x86asm.Op, mk func(in *Inst) mmxFn) {
	xb := builders[op]
	if xb == nil {
		panic(fmt.Sprintf("x86: MMX form of %v before its XMM form", op))
	}
	builders[op] = func(in *Inst) Handler {
		if in.Args[0].Kind != KMMX {
			return xb(in)
		}
		if k := in.Args[1].Kind; k != KMMX && k != KMem {
			return nil
		}
		f := mk(in)
		if f == nil {
			return nil
		}
		in.MemSize = 8
		return func(c *CPU, in *Inst) {
			var s uint64
			if o := &in.Args[1]; o.Kind == KMMX {
				s = c.mmxRead(o.Reg)
			} else {
				s = c.load64(c.ea(o))
			}
			r := &in.Args[0]
			c.mmxWrite(r.Reg, f(c, in, c.mmxRead(r.Reg), s))
		}
	}
}

// mmxLow runs op's XMM body on the low quadwords.
func mmxLow(op x86asm.Op) func(in *Inst) mmxFn {
	return func(in *Inst) mmxFn {
		f := xfnOf[op]
		return func(c *CPU, in *Inst, d, s uint64) uint64 {
			x := XMM{d}
			f(c, in, &x, XMM{s})
			return x[0]
		}
	}
}

// mmxHorizontal runs a horizontal op's XMM body, whose results from d
// and s land in the low halves of the two quadwords.
func mmxHorizontal(op x86asm.Op) func(in *Inst) mmxFn {
	return func(in *Inst) mmxFn {
		f := xfnOf[op]
		return func(c *CPU, in *Inst, d, s uint64) uint64 {
			x := XMM{d}
			f(c, in, &x, XMM{s})
			return x[0]&0xffffffff | x[1]<<32
		}
	}
}

func init() {
	for _, op := range []x86asm.Op{x86asm.PABSB, x86asm.PABSW, x86asm.PABSD, x86asm.PMADDUBSW, x86asm.PMULHRSW,
		x86asm.PSIGNB, x86asm.PSIGNW, x86asm.PSIGND} {
		withMMX(op, mmxLow(op))
	}
	for _, op := range []x86asm.Op{x86asm.PHADDW, x86asm.PHADDD, x86asm.PHADDSW, x86asm.PHSUBW, x86asm.PHSUBD, x86asm.PHSUBSW} {
		withMMX(op, mmxHorizontal(op))
	}
	withMMX(x86asm.PSHUFB, func(in *Inst) mmxFn {
		return func(c *CPU, in *Inst, d, s uint64) uint64 {
			var r uint64
			for i := 0; i < 8; i++ {
				if k := s >> (8 * i) & 0xff; k&0x80 == 0 {
					r |= (d >> (8 * (k & 7)) & 0xff) << (8 * i)
				}
			}
			return r
		}
	})
	withMMX(x86asm.PALIGNR, func(in *Inst) mmxFn {
		if in.NArgs != 3 || in.Args[2].Kind != KImm {
			return nil
		}
		n := uint(in.Args[2].Imm & 0xff)
		return func(c *CPU, in *Inst, d, s uint64) uint64 {
			switch { // d:s shifted right by n bytes
			case n == 0:
				return s
			case n < 8:
				return s>>(8*n) | d<<(64-8*n)
			case n < 16:
				return d >> (8 * (n - 8))
			}
			return 0
		}
	})
}
