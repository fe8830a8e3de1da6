package x86

// BMI1 and BMI2 (x86-64-v3): the VEX-encoded bit manipulations on
// general registers (tzcnt, BMI1's one legacy-encoded instruction, is in
// ops_shift.go). Operands as vex.go decodes them: Args[0] ModRM.reg,
// Args[1] ModRM.rm, vvvv in Aux; VEX.W selects 64-bit operands. Flags the
// SDM leaves undefined (AF and PF, and SF for bextr) are cleared.

import "math/bits"

// bmiSetup makes Args[0] and Args[1] general registers (or memory) of
// the operand size; it returns the size in bytes.
func bmiSetup(in *Inst) uint8 {
	gpr(in, &in.Args[0])
	gpr(in, &in.Args[1])
	size := uint8(4)
	if vexW(in) {
		size = 8
	}
	in.Args[1].Size = size
	in.MemSize = size
	in.OpSize = size
	return size
}

// bmiFlags sets ZF and SF from r, CF as given, OF, AF and PF clear.
func (c *CPU) bmiFlags(r uint64, size uint8, cf bool) {
	c.setArith(ArithFlags, b2u(r&sizeMask[size] == 0)*FlagZF|b2u(r&signBit(size) != 0)*FlagSF|b2u(cf)*FlagCF)
}

// bmi builds a handler from f(c, a, b, size) of rm (a) and vvvv (b), whose
// result goes to the destination (ModRM.reg, or vvvv with toV).
func bmi(toV bool, f func(c *CPU, rm, v uint64, size uint8) uint64) func(in *Inst) Handler {
	return func(in *Inst) Handler {
		size := bmiSetup(in)
		return func(c *CPU, in *Inst) {
			rm := c.get(&in.Args[1])
			v := c.R[vexV(in)] & sizeMask[size]
			r := f(c, rm, v, size) & sizeMask[size]
			if toV {
				c.R[vexV(in)] = r
			} else {
				c.R[in.Args[0].Reg&15] = r
			}
		}
	}
}

func init() {
	const B1, B2 = FeatBMI1, FeatBMI2
	defVex(2, 0, 0xf2, "ANDN", B1, false, bmi(false, func(c *CPU, rm, v uint64, size uint8) uint64 {
		r := ^v & rm & sizeMask[size]
		c.bmiFlags(r, size, false)
		return r
	}))
	defVex(2, 0, 0xf3, "BLSR/BLSMSK/BLSI", B1, false, func(in *Inst) Handler {
		var f func(c *CPU, rm, v uint64, size uint8) uint64
		switch in.Args[0].Reg & 7 {
		case 1: // blsr
			f = func(c *CPU, rm, v uint64, size uint8) uint64 {
				r := rm & (rm - 1) & sizeMask[size]
				c.bmiFlags(r, size, rm == 0)
				return r
			}
		case 2: // blsmsk
			f = func(c *CPU, rm, v uint64, size uint8) uint64 {
				r := rm ^ (rm-1)&sizeMask[size]
				c.bmiFlags(r, size, rm == 0)
				return r
			}
		case 3: // blsi
			f = func(c *CPU, rm, v uint64, size uint8) uint64 {
				r := -rm & rm & sizeMask[size]
				c.bmiFlags(r, size, rm != 0)
				return r
			}
		default:
			return nil
		}
		return bmi(true, f)(in)
	})
	defVex(2, 0, 0xf7, "BEXTR", B1, false, bmi(false, func(c *CPU, rm, v uint64, size uint8) uint64 {
		start, n := v&0xff, v>>8&0xff
		var r uint64
		if start < uint64(size)*8 {
			r = rm >> start
			if n < 64 {
				r &= 1<<n - 1
			}
		}
		c.setArith(ArithFlags, b2u(r == 0)*FlagZF)
		return r
	}))
	defVex(2, 0, 0xf5, "BZHI", B2, false, bmi(false, func(c *CPU, rm, v uint64, size uint8) uint64 {
		n := v & 0xff
		r := rm
		if n < uint64(size)*8 {
			r &= 1<<n - 1
		}
		c.bmiFlags(r, size, n > uint64(size)*8-1)
		return r
	}))
	defVex(2, 2, 0xf5, "PEXT", B2, false, bmi(false, func(c *CPU, rm, v uint64, size uint8) uint64 {
		var r uint64
		k := 0
		for m := rm; m != 0; m &= m - 1 {
			if v>>bits.TrailingZeros64(m)&1 != 0 {
				r |= 1 << k
			}
			k++
		}
		return r
	}))
	defVex(2, 3, 0xf5, "PDEP", B2, false, bmi(false, func(c *CPU, rm, v uint64, size uint8) uint64 {
		var r uint64
		k := 0
		for m := rm; m != 0; m &= m - 1 {
			if v>>k&1 != 0 {
				r |= 1 << bits.TrailingZeros64(m)
			}
			k++
		}
		return r
	}))
	defVex(2, 3, 0xf6, "MULX", B2, false, func(in *Inst) Handler {
		size := bmiSetup(in)
		return func(c *CPU, in *Inst) {
			a := c.get(&in.Args[1])
			var hi, lo uint64
			if size == 8 {
				hi, lo = bits.Mul64(c.R[RDX], a)
			} else {
				p := uint64(uint32(c.R[RDX])) * (a & 0xffffffff)
				hi, lo = p>>32, p&0xffffffff
			}
			c.R[vexV(in)] = lo
			c.R[in.Args[0].Reg&15] = hi // written last: it wins when both are the same
		}
	})
	shiftx := func(kind byte) func(in *Inst) Handler {
		return bmi(false, func(c *CPU, rm, v uint64, size uint8) uint64 {
			n := v & (uint64(size)*8 - 1)
			switch kind {
			case 'l':
				return rm << n
			case 'r':
				return rm >> n
			}
			if size == 4 {
				return uint64(int32(rm) >> n)
			}
			return uint64(int64(rm) >> n)
		})
	}
	defVex(2, 1, 0xf7, "SHLX", B2, false, shiftx('l'))
	defVex(2, 3, 0xf7, "SHRX", B2, false, shiftx('r'))
	defVex(2, 2, 0xf7, "SARX", B2, false, shiftx('a'))
	defVex(3, 3, 0xf0, "RORX", B2, true, func(in *Inst) Handler {
		size := bmiSetup(in)
		if in.Args[2].Kind != KImm {
			return nil
		}
		return func(c *CPU, in *Inst) {
			a := c.get(&in.Args[1])
			n := int(in.Args[2].Imm & uint64(size*8-1))
			if size == 8 {
				c.R[in.Args[0].Reg&15] = bits.RotateLeft64(a, -n)
			} else {
				c.R[in.Args[0].Reg&15] = uint64(bits.RotateLeft32(uint32(a), -n))
			}
		}
	})
}
