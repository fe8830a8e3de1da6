package x86

import (
	"math/bits"

	"golang.org/x/arch/x86/x86asm"
)

// Shifts and rotates. in.Aux selects the operation. Flags whose value the
// manuals leave undefined (OF for counts above 1, AF) follow the AMD
// hardware this project is tested on where that was measured.
const (
	shShl = iota
	shShr
	shSar
	shRol
	shRor
	shRcl
	shRcr
)

func shiftCount(c *CPU, in *Inst) uint64 {
	if in.NArgs < 2 {
		return 1
	}
	return c.get(&in.Args[1]) & 0xff
}

func opShift(c *CPU, in *Inst) {
	d := &in.Args[0]
	size := d.Size
	nbits := uint64(size) * 8
	cnt := shiftCount(c, in)
	if size == 8 {
		cnt &= 63
	} else {
		cnt &= 31
	}
	var addr uint64
	var v uint64
	if d.Kind == KMem {
		addr = c.ea(d)
		v = c.load(addr, int(size))
	} else {
		v = c.getReg(d)
	}
	mask := sizeMask[size]
	sb := signBit(size)
	var r uint64
	op := in.Aux
	if op == shRcl || op == shRcr {
		cnt %= nbits + 1
	}
	if cnt == 0 {
		if d.Kind != KMem {
			c.setReg(d, v) // a 32-bit destination is still zero-extended
		}
		return
	}
	// Shifts write all six arithmetic flags (AF cleared): they need not
	// evaluate the lazy flags of the instruction before. Rotates keep
	// SF, ZF, PF and AF, so they do.
	if op == shShl || op == shShr || op == shSar {
		var f uint64
		switch op {
		case shShl:
			r, f = shlOp(v, cnt, size)
		case shShr:
			r, f = shrOp(v, cnt, size)
		default:
			r, f = sarOp(v, cnt, size)
		}
		c.setArith(ArithFlags, f)
		if d.Kind == KMem {
			c.store(addr, int(size), r)
		} else {
			c.setReg(d, r)
		}
		return
	}
	c.materialize()
	f := c.flags
	switch op {
	case shRol:
		k := cnt % nbits
		r = (v<<k | v>>((nbits-k)%nbits)) & mask
		cf := r&1 != 0
		f = setf(f, FlagCF, cf)
		f = setf(f, FlagOF, (r&sb != 0) != cf)
	case shRor:
		k := cnt % nbits
		r = (v>>k | v<<((nbits-k)%nbits)) & mask
		f = setf(f, FlagCF, r&sb != 0)
		f = setf(f, FlagOF, ((r<<1)^r)&sb != 0)
	case shRcl:
		cf := f & FlagCF
		for i := uint64(0); i < cnt; i++ {
			out := v & sb
			v = (v<<1 | cf) & mask
			cf = b2u(out != 0)
		}
		r = v
		f = setf(f, FlagCF, cf != 0)
		f = setf(f, FlagOF, (r&sb != 0) != (cf != 0))
	case shRcr:
		cf := f & FlagCF
		ofv := ((v & sb) != 0) != (cf != 0)
		for i := uint64(0); i < cnt; i++ {
			out := v & 1
			v = v>>1 | cf<<(nbits-1)
			cf = out
		}
		r = v & mask
		f = setf(f, FlagCF, cf != 0)
		if cnt == 1 {
			f = setf(f, FlagOF, ofv)
		} else {
			f = setf(f, FlagOF, ((r<<1)^r)&sb != 0)
		}
	}
	c.flags = f
	if d.Kind == KMem {
		c.store(addr, int(size), r)
	} else {
		c.setReg(d, r)
	}
}

func setf(f uint64, bit uint64, on bool) uint64 {
	if on {
		return f | bit
	}
	return f &^ bit
}

// szp sets SF, ZF and PF from a result.
func szp(f, r uint64, size uint8) uint64 {
	f &^= FlagSF | FlagZF | FlagPF
	f |= uint64(parityTable[uint8(r)])
	if r&sizeMask[size] == 0 {
		f |= FlagZF
	}
	if r&signBit(size) != 0 {
		f |= FlagSF
	}
	return f
}

// opShld and opShrd shift a double-width value.
func opShxd(c *CPU, in *Inst) {
	d, s := &in.Args[0], &in.Args[1]
	size := d.Size
	nbits := uint64(size) * 8
	cnt := c.get(&in.Args[2]) & 0xff
	if size == 8 {
		cnt &= 63
	} else {
		cnt &= 31
	}
	var addr, v uint64
	if d.Kind == KMem {
		addr = c.ea(d)
		v = c.load(addr, int(size))
	} else {
		v = c.getReg(d)
	}
	if cnt == 0 {
		if d.Kind != KMem {
			c.setReg(d, v)
		}
		return
	}
	src := c.getReg(s)
	mask := sizeMask[size]
	var r uint64
	var cf bool
	left := in.Aux == 0
	if size == 2 {
		// 16-bit forms with counts above 16 shift through a 48-bit
		// concatenation on AMD and Intel alike: dest:src:dest.
		var wide uint64
		if left {
			wide = v<<32 | src<<16 | v
			r = (wide << cnt >> 32) & mask
			cf = (wide<<(cnt-1))>>47&1 != 0
		} else {
			wide = v | src<<16 | v<<32
			r = (wide >> cnt) & mask
			cf = (wide>>(cnt-1))&1 != 0
		}
	} else if left {
		r = (v<<cnt | src>>(nbits-cnt)) & mask
		cf = (v>>(nbits-cnt))&1 != 0
	} else {
		r = (v>>cnt | src<<(nbits-cnt)) & mask
		cf = (v>>(cnt-1))&1 != 0
	}
	c.materialize()
	f := szp(c.flags, r, size)
	f = setf(f, FlagCF, cf)
	f = setf(f, FlagOF, ((r^v)&signBit(size)) != 0)
	f &^= FlagAF
	c.flags = f
	if d.Kind == KMem {
		c.store(addr, int(size), r)
	} else {
		c.setReg(d, r)
	}
}

// Bit test instructions: in.Aux 0 bt, 1 bts, 2 btr, 3 btc.
func opBt(c *CPU, in *Inst) {
	d, s := &in.Args[0], &in.Args[1]
	nbits := uint64(d.Size) * 8
	off := c.get(s)
	var addr, v uint64
	if d.Kind == KMem {
		if s.Kind == KImm {
			off &= nbits - 1
			addr = c.ea(d)
		} else {
			so := sx(off, s.Size)
			addr = c.ea(d) + uint64((so>>(3+bits.TrailingZeros64(uint64(d.Size))))*int64(d.Size))
			off = uint64(so) & (nbits - 1)
		}
		v = c.load(addr, int(d.Size))
	} else {
		off &= nbits - 1
		v = c.getReg(d)
	}
	bit := (v >> off) & 1
	c.setArith(FlagCF, bit)
	var r uint64
	switch in.Aux {
	case 0:
		return
	case 1:
		r = v | 1<<off
	case 2:
		r = v &^ (1 << off)
	case 3:
		r = v ^ 1<<off
	}
	if d.Kind == KMem {
		c.store(addr, int(d.Size), r)
	} else {
		c.setReg(d, r)
	}
}

func opBsf(c *CPU, in *Inst) {
	d := &in.Args[0]
	v := c.get(&in.Args[1])
	if v == 0 {
		c.setArith(FlagZF, FlagZF)
		return
	}
	c.setArith(FlagZF, 0)
	c.setReg(d, uint64(bits.TrailingZeros64(v)))
}

func opBsr(c *CPU, in *Inst) {
	d := &in.Args[0]
	v := c.get(&in.Args[1])
	if v == 0 {
		c.setArith(FlagZF, FlagZF)
		return
	}
	c.setArith(FlagZF, 0)
	c.setReg(d, uint64(63-bits.LeadingZeros64(v)))
}

func opPopcnt(c *CPU, in *Inst) {
	v := c.get(&in.Args[1])
	c.setReg(&in.Args[0], uint64(bits.OnesCount64(v)))
	c.setArith(ArithFlags, b2u(v == 0)*FlagZF)
}

func opTzcnt(c *CPU, in *Inst) {
	s := &in.Args[1]
	v := c.get(s)
	n := uint64(bits.TrailingZeros64(v))
	if v == 0 {
		n = uint64(s.Size) * 8
	}
	c.setReg(&in.Args[0], n)
	c.materialize()
	c.flags = setf(setf(c.flags, FlagCF, v == 0), FlagZF, n == 0)
}

func opLzcnt(c *CPU, in *Inst) {
	s := &in.Args[1]
	v := c.get(s)
	n := uint64(bits.LeadingZeros64(v)) - (64 - uint64(s.Size)*8)
	c.setReg(&in.Args[0], n)
	c.materialize()
	c.flags = setf(setf(c.flags, FlagCF, v == 0), FlagZF, n == 0)
}

// shlOp, shrOp and sarOp compute a shift of v, masked to size bytes, by
// cnt, which is not 0 (and at most 31, or 63 for 8 bytes): the result and
// all six arithmetic flags, AF clear. opShift and the register forms
// share them.
func shlOp(v, cnt uint64, size uint8) (r, f uint64) {
	nbits := uint64(size) * 8
	r = v << cnt & sizeMask[size]
	cf := cnt <= nbits && v>>(nbits-cnt)&1 != 0
	return r, shiftFlags(r, size, cf, r&signBit(size) != 0 != cf)
}

func shrOp(v, cnt uint64, size uint8) (r, f uint64) {
	sb := signBit(size)
	r = v >> cnt // 0 once cnt reaches the size
	cf := cnt <= uint64(size)*8 && v>>(cnt-1)&1 != 0
	return r, shiftFlags(r, size, cf, v&sb != 0 && cnt == 1 || cnt > 1 && (r<<1^r)&sb != 0)
}

func sarOp(v, cnt uint64, size uint8) (r, f uint64) {
	nbits := uint64(size) * 8
	s := sx(v, size)
	r = uint64(s>>min(cnt, nbits-1)) & sizeMask[size]
	cf := s>>(cnt-1)&1 != 0
	if cnt > nbits {
		cf = s < 0
	}
	return r, shiftFlags(r, size, cf, false)
}

// shiftFlags returns the arithmetic flags of a shift by a non-zero count:
// SF, ZF and PF from the result, CF and OF as given, AF clear.
func shiftFlags(r uint64, size uint8, cf, of bool) uint64 {
	f := szp(0, r, size)
	if cf {
		f |= FlagCF
	}
	if of {
		f |= FlagOF
	}
	return f
}

// shlReg, shrReg and sarReg are opShift for a 32- or 64-bit register
// shifted by an immediate or CL (-O0 code scales indices with them, and
// its next instruction touches memory, which keeps the flags live),
// without generic operand access.
func shlReg(c *CPU, in *Inst) {
	if d, v, n := regShift(c, in); n != 0 {
		r, f := shlOp(v, n, in.Args[0].Size)
		*d = r
		c.setArith(ArithFlags, f)
	}
}

func shrReg(c *CPU, in *Inst) {
	if d, v, n := regShift(c, in); n != 0 {
		r, f := shrOp(v, n, in.Args[0].Size)
		*d = r
		c.setArith(ArithFlags, f)
	}
}

func sarReg(c *CPU, in *Inst) {
	if d, v, n := regShift(c, in); n != 0 {
		r, f := sarOp(v, n, in.Args[0].Size)
		*d = r
		c.setArith(ArithFlags, f)
	}
}

// regShift returns the destination register, its value and the masked
// count of a register shift; a 32-bit destination is zero-extended even
// by a count of 0.
func regShift(c *CPU, in *Inst) (d *uint64, v, n uint64) {
	size := in.Args[0].Size
	n = c.R[RCX]
	if in.Args[1].Kind == KImm {
		n = in.Args[1].Imm
	}
	d = &c.R[in.Args[0].Reg&15]
	v = *d & sizeMask[size]
	*d = v
	return d, v, n & (uint64(size)*8 - 1)
}

// buildIntShift picks shlReg, shrReg or sarReg for shl, shr and sar of a 32- or 64-bit
// register by an immediate or CL, and opShift for the rest.
func buildIntShift(op uint32) Builder {
	return func(in *Inst) Handler {
		in.Aux = op
		d, n := &in.Args[0], &in.Args[1]
		if op <= shSar && in.NArgs == 2 && d.Kind == KReg && (d.Size == 4 || d.Size == 8) &&
			(n.Kind == KImm || n.Kind == KReg && n.Reg == RCX && n.Size == 1) {
			return [...]Handler{shlReg, shrReg, sarReg}[op]
		}
		return opShift
	}
}

func init() {
	for i, op := range []x86asm.Op{x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.ROL, x86asm.ROR, x86asm.RCL, x86asm.RCR} {
		register(op, buildIntShift(uint32(i)))
	}
	register(x86asm.SHLD, func(in *Inst) Handler { in.Aux = 0; return opShxd })
	register(x86asm.SHRD, func(in *Inst) Handler { in.Aux = 1; return opShxd })
	for i, op := range []x86asm.Op{x86asm.BT, x86asm.BTS, x86asm.BTR, x86asm.BTC} {
		aux := uint32(i)
		register(op, func(in *Inst) Handler { in.Aux = aux; return opBt })
	}
	handle(x86asm.BSF, opBsf)
	handle(x86asm.BSR, opBsr)
	handle(x86asm.POPCNT, opPopcnt)
	handle(x86asm.TZCNT, opTzcnt)
	handle(x86asm.LZCNT, opLzcnt)
}
