package x86

// F16C (x86-64-v3): conversions between half precision and float32.

var fmt16 = &ffmt{width: 16, frac: 10, bias: 15, expMask: 0x1f, sign: 1 << 15}

// cvtPH2PS widens a half to a float32, exactly; a signaling NaN is
// quieted with IE. MXCSR's DAZ does not apply to halves.
func cvtPH2PS(h uint64) (uint64, uint32) {
	s := (h & 0x8000) << 16
	switch {
	case fmt16.isNaN(h):
		var fl uint32
		if fmt16.isSNaN(h) {
			fl = MxIE
		}
		return s | 0x7fc00000 | (h&0x3ff)<<13, fl
	case fmt16.isInf(h):
		return s | 0x7f800000, 0
	case fmt16.isZero(h):
		return s, 0
	}
	_, e, m := fmt16.unpack(h)
	r, _ := fmt32.round(s, e, m, mxDefault, 0)
	return r, 0
}

// cvtPS2PH narrows a float32 to a half with rounding control rc (FTZ
// does not apply; DAZ does).
func cvtPS2PH(a uint64, mx uint32, rc uint32) (uint64, uint32) {
	a = fmt32.daz(a, mx)
	s := (a >> 16) & 0x8000
	switch {
	case fmt32.isNaN(a):
		var fl uint32
		if fmt32.isSNaN(a) {
			fl = MxIE
		}
		return s | 0x7e00 | (a>>13)&0x1ff, fl
	case fmt32.isInf(a):
		return s | 0x7c00, 0
	case fmt32.isZero(a):
		return s, 0
	}
	_, e, m := fmt32.unpack(a)
	return fmt16.round(s, e, m, mx&^(MxRC|MxFZ)|rc<<13, fmt32.denormalFlag(a))
}

func init() {
	defVex(2, 1, 0x13, "VCVTPH2PS", FeatF16C, false, func(in *Inst) Handler {
		l := vexL(in)
		in.MemSize = 8
		if l {
			in.MemSize = 16
		}
		return func(c *CPU, in *Inst) {
			s, _ := c.vsrc(in, false)
			var r [8]uint64
			var fl uint32
			n := 4
			if l {
				n = 8
			}
			for i := 0; i < n; i++ {
				v, f := cvtPH2PS(s[i/4] >> (16 * (i % 4)) & 0xffff)
				r[i] = v
				fl |= f
			}
			c.mxFinish(fl)
			c.setY(in.Args[0].Reg, XMM{r[0] | r[1]<<32, r[2] | r[3]<<32}, XMM{r[4] | r[5]<<32, r[6] | r[7]<<32})
		}
	})
	defVex(3, 1, 0x1d, "VCVTPS2PH", FeatF16C, true, func(in *Inst) Handler {
		if in.Args[2].Kind != KImm {
			return nil
		}
		imm := uint32(in.Args[2].Imm)
		l := vexL(in)
		in.MemSize = 8
		if l {
			in.MemSize = 16
		}
		return func(c *CPU, in *Inst) {
			r := in.Args[0].Reg & 15
			src := ymmOf(c.X[r], c.YH[r])
			rc := imm & 3
			if imm&4 != 0 {
				rc = c.MXCSR >> 13 & 3
			}
			var out XMM
			var fl uint32
			n := 4
			if l {
				n = 8
			}
			for i := 0; i < n; i++ {
				v, f := cvtPS2PH(src[i/2]>>(32*(i%2))&0xffffffff, c.MXCSR, rc)
				out[i/4] |= v << (16 * (i % 4))
				fl |= f
			}
			c.mxFinish(fl)
			if o := &in.Args[1]; o.Kind == KXMM {
				c.setY(o.Reg, out, XMM{})
			} else if l {
				c.store128(c.ea(o), out)
			} else {
				c.store64(c.ea(o), out[0])
			}
		}
	})
}
