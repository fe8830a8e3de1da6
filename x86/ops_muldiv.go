package x86

import (
	"math/bits"

	"golang.org/x/arch/x86/x86asm"
)

// Multiplication sets CF and OF when the high half is significant; SF, ZF,
// AF and PF are undefined. We set them as the low half's flags like AMD
// and recent Intel cores do for SF/ZF/PF, with AF clear.

func mulFlags(c *CPU, lo uint64, size uint8, overflow bool) {
	f := uint64(parityTable[uint8(lo)])
	if lo&sizeMask[size] == 0 {
		f |= FlagZF
	}
	if lo&signBit(size) != 0 {
		f |= FlagSF
	}
	if overflow {
		f |= FlagCF | FlagOF
	}
	c.setArith(ArithFlags, f)
}

// opMul: unsigned multiply of the accumulator by r/m.
func opMul(c *CPU, in *Inst) {
	s := &in.Args[0]
	v := c.get(s)
	switch s.Size {
	case 1:
		r := (c.R[RAX] & 0xff) * v
		c.R[RAX] = c.R[RAX]&^0xffff | r&0xffff
		mulFlags(c, r, 1, r>>8 != 0)
	case 2:
		r := (c.R[RAX] & 0xffff) * v
		c.R[RAX] = c.R[RAX]&^0xffff | r&0xffff
		c.R[RDX] = c.R[RDX]&^0xffff | (r>>16)&0xffff
		mulFlags(c, r, 2, r>>16 != 0)
	case 4:
		r := (c.R[RAX] & 0xffffffff) * v
		c.R[RAX] = r & 0xffffffff
		c.R[RDX] = r >> 32
		mulFlags(c, r, 4, r>>32 != 0)
	default:
		hi, lo := bits.Mul64(c.R[RAX], v)
		c.R[RAX], c.R[RDX] = lo, hi
		mulFlags(c, lo, 8, hi != 0)
	}
}

// mulSigned returns the low size bytes of a*b and whether the full
// product does not fit in size bytes as a signed value.
func mulSigned(a, b int64, size uint8) (uint64, uint64, bool) {
	if size < 8 {
		p := a * b
		return uint64(p), uint64(p >> (8 * size)), sx(uint64(p), size) != p
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if a < 0 {
		hi -= uint64(b)
	}
	if b < 0 {
		hi -= uint64(a)
	}
	return lo, hi, hi != uint64(int64(lo)>>63)
}

func opImul(c *CPU, in *Inst) {
	switch in.NArgs {
	case 1:
		s := &in.Args[0]
		a := sx(c.R[RAX], s.Size)
		lo, hi, ovf := mulSigned(a, sx(c.get(s), s.Size), s.Size)
		switch s.Size {
		case 1:
			c.R[RAX] = c.R[RAX]&^0xffff | lo&0xffff
		case 2:
			c.R[RAX] = c.R[RAX]&^0xffff | lo&0xffff
			c.R[RDX] = c.R[RDX]&^0xffff | hi&0xffff
		case 4:
			c.R[RAX] = lo & 0xffffffff
			c.R[RDX] = hi & 0xffffffff
		default:
			c.R[RAX], c.R[RDX] = lo, hi
		}
		mulFlags(c, lo, s.Size, ovf)
	case 2, 3:
		d := &in.Args[0]
		var a, b int64
		if in.NArgs == 2 {
			a, b = sx(c.getReg(d), d.Size), sx(c.get(&in.Args[1]), d.Size)
		} else {
			a, b = sx(c.get(&in.Args[1]), d.Size), sx(in.Args[2].Imm, d.Size)
		}
		lo, _, ovf := mulSigned(a, b, d.Size)
		c.setReg(d, lo&sizeMask[d.Size])
		mulFlags(c, lo, d.Size, ovf)
	}
}

// imulRR64 … imulRM32 are imul r, r/m with a 64- or 32-bit register
// destination, called directly by the dispatch loop (-O0 code keeps its
// operands in memory, and the flags live).
func imulRR64(c *CPU, in *Inst) { imul64(c, in, c.R[in.Args[1].Reg&15]) }
func imulRM64(c *CPU, in *Inst) { imul64(c, in, c.load64(c.ea(&in.Args[1]))) }
func imulRR32(c *CPU, in *Inst) { imul32(c, in, c.R[in.Args[1].Reg&15]) }
func imulRM32(c *CPU, in *Inst) { imul32(c, in, c.load32(c.ea(&in.Args[1]))) }

func imul64(c *CPU, in *Inst, b uint64) {
	d := &c.R[in.Args[0].Reg&15]
	lo, _, ovf := mulSigned(int64(*d), int64(b), 8)
	*d = lo
	mulFlags(c, lo, 8, ovf)
}

func imul32(c *CPU, in *Inst, b uint64) {
	d := &c.R[in.Args[0].Reg&15]
	p := int64(int32(*d)) * int64(int32(b))
	*d = uint64(uint32(p))
	mulFlags(c, uint64(p), 4, p != int64(int32(p)))
}

func buildImul(in *Inst) Handler {
	d, s := &in.Args[0], &in.Args[1]
	if in.NArgs != 2 || d.Kind != KReg || (d.Size != 4 && d.Size != 8) || s.Size != d.Size {
		return opImul
	}
	switch {
	case s.Kind == KReg && d.Size == 8:
		return imulRR64
	case s.Kind == KMem && d.Size == 8:
		return imulRM64
	case s.Kind == KReg:
		return imulRR32
	case s.Kind == KMem:
		return imulRM32
	}
	return opImul
}

func opDiv(c *CPU, in *Inst) {
	s := &in.Args[0]
	v := c.get(s)
	if v == 0 {
		c.raise(ExitDivide, FPEIntDiv)
	}
	switch s.Size {
	case 1:
		n := c.R[RAX] & 0xffff
		q, r := n/v, n%v
		if q > 0xff {
			c.raise(ExitDivide, FPEIntDiv)
		}
		c.R[RAX] = c.R[RAX]&^0xffff | r<<8 | q
	case 2:
		n := (c.R[RDX]&0xffff)<<16 | c.R[RAX]&0xffff
		q, r := n/v, n%v
		if q > 0xffff {
			c.raise(ExitDivide, FPEIntDiv)
		}
		c.R[RAX] = c.R[RAX]&^0xffff | q
		c.R[RDX] = c.R[RDX]&^0xffff | r
	case 4:
		n := (c.R[RDX]&0xffffffff)<<32 | c.R[RAX]&0xffffffff
		q, r := n/v, n%v
		if q > 0xffffffff {
			c.raise(ExitDivide, FPEIntDiv)
		}
		c.R[RAX], c.R[RDX] = q, r
	default:
		if c.R[RDX] >= v {
			c.raise(ExitDivide, FPEIntDiv)
		}
		q, r := bits.Div64(c.R[RDX], c.R[RAX], v)
		c.R[RAX], c.R[RDX] = q, r
	}
}

func opIdiv(c *CPU, in *Inst) {
	s := &in.Args[0]
	d := sx(c.get(s), s.Size)
	if d == 0 {
		c.raise(ExitDivide, FPEIntDiv)
	}
	switch s.Size {
	case 1, 2, 4:
		var n int64
		switch s.Size {
		case 1:
			n = int64(int16(c.R[RAX]))
		case 2:
			n = int64(int32(uint32(c.R[RDX]&0xffff)<<16 | uint32(c.R[RAX]&0xffff)))
		case 4:
			n = int64((c.R[RDX]&0xffffffff)<<32 | c.R[RAX]&0xffffffff)
		}
		q, r := n/d, n%d
		if q != sx(uint64(q), s.Size) {
			c.raise(ExitDivide, FPEIntDiv)
		}
		switch s.Size {
		case 1:
			c.R[RAX] = c.R[RAX]&^0xffff | (uint64(r)&0xff)<<8 | uint64(q)&0xff
		case 2:
			c.R[RAX] = c.R[RAX]&^0xffff | uint64(q)&0xffff
			c.R[RDX] = c.R[RDX]&^0xffff | uint64(r)&0xffff
		case 4:
			c.R[RAX], c.R[RDX] = uint64(q)&0xffffffff, uint64(r)&0xffffffff
		}
	default:
		// 128-by-64 signed division on magnitudes.
		hi, lo := c.R[RDX], c.R[RAX]
		neg := int64(hi) < 0
		if neg {
			lo = -lo
			hi = ^hi
			if lo == 0 {
				hi++
			}
		}
		dm := uint64(d)
		if d < 0 {
			dm = -dm
		}
		if hi >= dm {
			c.raise(ExitDivide, FPEIntDiv)
		}
		q, r := bits.Div64(hi, lo, dm)
		qneg := neg != (d < 0)
		if qneg {
			if q > 1<<63 {
				c.raise(ExitDivide, FPEIntDiv)
			}
			q = -q
		} else if q >= 1<<63 {
			c.raise(ExitDivide, FPEIntDiv)
		}
		if neg {
			r = -r
		}
		c.R[RAX], c.R[RDX] = q, r
	}
}

// mulR64 is mul r64, the limb product of multi-precision arithmetic
// (printf of a long double, bignums), called directly by the dispatch
// loop; mulR64nf is its variant for dead flags.
func mulR64(c *CPU, in *Inst) {
	hi, lo := bits.Mul64(c.R[RAX], c.R[in.Args[0].Reg&15])
	c.R[RAX], c.R[RDX] = lo, hi
	mulFlags(c, lo, 8, hi != 0)
}

func mulR64nf(c *CPU, in *Inst) {
	c.R[RDX], c.R[RAX] = bits.Mul64(c.R[RAX], c.R[in.Args[0].Reg&15])
}

func buildMul(in *Inst) Handler {
	if a := &in.Args[0]; in.NArgs == 1 && a.Kind == KReg && a.Size == 8 {
		return mulR64
	}
	return opMul
}

func init() {
	register(x86asm.MUL, buildMul)
	register(x86asm.IMUL, buildImul)
	handle(x86asm.DIV, opDiv)
	handle(x86asm.IDIV, opIdiv)
}
