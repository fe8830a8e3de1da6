package x86

import (
	"golang.org/x/arch/x86/x86asm"

	"ttd/x86/f80"
)

// The x87 FPU with true 80-bit arithmetic (package f80). Exceptions are
// recorded in the status word; unmasked ones are not delivered as SIGFPE
// (Linux programs essentially never unmask them).

const (
	swC0 = 1 << 8
	swC1 = 1 << 9
	swC2 = 1 << 10
	swC3 = 1 << 14
	swSF = 1 << 6
	swES = 1 << 7
	swB  = 1 << 15
)

func (c *CPU) fpuRC() f80.Rounding  { return f80.Rounding(c.FPU.CW >> 10 & 3) }
func (c *CPU) fpuPC() f80.Precision { return f80.Precision(c.FPU.CW >> 8 & 3) }

// FSW returns the x87 status word including TOP.
func (c *CPU) FSW() uint16 { return c.FPU.SW&^0x3800 | uint16(c.FPU.Top&7)<<11 }

func (c *CPU) setFSW(v uint16) {
	c.FPU.Top = uint8(v>>11) & 7
	c.FPU.SW = v &^ 0x3800
}

// fexc records exception flags (and C1 when given) in the status word.
func (c *CPU) fexc(e f80.Exc) {
	f := uint16(e) & 0x3f
	c.FPU.SW |= f
	if f&^(c.FPU.CW&0x3f) != 0 {
		c.FPU.SW |= swES | swB
	}
}

func (c *CPU) stIdx(i uint8) uint8 { return (c.FPU.Top + i) & 7 }

// st reads ST(i); an empty register is a stack underflow that yields the
// default NaN.
func (c *CPU) st(i uint8) f80.F80 {
	p := c.stIdx(i)
	if c.FPU.Tag&(1<<p) == 0 {
		c.FPU.SW &^= swC1
		c.fexc(f80.IE)
		c.FPU.SW |= swSF
		return f80.Indefinite
	}
	return c.FPU.Regs[p]
}

func (c *CPU) setSt(i uint8, v f80.F80) {
	p := c.stIdx(i)
	c.FPU.Regs[p] = v
	c.FPU.Tag |= 1 << p
}

func (c *CPU) fpush(v f80.F80) {
	p := (c.FPU.Top - 1) & 7
	if c.FPU.Tag&(1<<p) != 0 {
		// Stack overflow: invalid operation, C1 set, the NaN is pushed.
		c.fexc(f80.IE)
		c.FPU.SW |= swSF | swC1
		v = f80.Indefinite
	}
	c.FPU.Top = p
	c.FPU.Regs[p] = v
	c.FPU.Tag |= 1 << p
}

func (c *CPU) fpop() {
	c.FPU.Tag &^= 1 << c.FPU.Top
	c.FPU.Top = (c.FPU.Top + 1) & 7
}

// fmem loads a memory operand as an 80-bit value by its size and kind.
func (c *CPU) fmemLoad(o *Operand, integer bool) f80.F80 {
	a := c.ea(o)
	if integer {
		switch o.Size {
		case 2:
			return f80.FromInt64(int64(int16(c.load16(a))))
		case 4:
			return f80.FromInt64(int64(int32(c.load32(a))))
		default:
			return f80.FromInt64(int64(c.load64(a)))
		}
	}
	switch o.Size {
	case 4:
		v, e := f80.LoadFloat32(f32frombits(uint32(c.load32(a))))
		c.fexc(e)
		return v
	case 8:
		v, e := f80.LoadFloat64(f64frombits(c.load64(a)))
		c.fexc(e)
		return v
	}
	var b [10]byte
	c.LoadBytes(a, b[:])
	return f80.FromBytes(b[:])
}

// Arithmetic: in.Aux selects the operation.
const (
	fAdd = iota
	fSub
	fSubR
	fMul
	fDiv
	fDivR
)

// fmemOperand converts an arithmetic instruction's memory operand; the
// conversion's exceptions are merged with the operation's by farith.
func (c *CPU) fmemOperand(o *Operand, integer bool) (f80.F80, f80.Exc) {
	a := c.ea(o)
	switch {
	case integer && o.Size == 2:
		return f80.FromInt64(int64(int16(c.load16(a)))), 0
	case integer:
		return f80.FromInt64(int64(int32(c.load32(a)))), 0
	case o.Size == 4:
		return f80.OperandFloat32(f32frombits(uint32(c.load32(a))))
	}
	return f80.OperandFloat64(f64frombits(c.load64(a)))
}

func (c *CPU) farith(op uint32, a, b f80.F80, eop f80.Exc) f80.F80 {
	rc, pc := c.fpuRC(), c.fpuPC()
	var r f80.F80
	var e f80.Exc
	switch op {
	case fAdd:
		r, e = f80.Add(a, b, rc, pc)
	case fSub:
		r, e = f80.Sub(a, b, rc, pc)
	case fSubR:
		r, e = f80.Sub(b, a, rc, pc)
	case fMul:
		r, e = f80.Mul(a, b, rc, pc)
	case fDiv:
		r, e = f80.Div(a, b, rc, pc)
	case fDivR:
		r, e = f80.Div(b, a, rc, pc)
	}
	e = f80.MergeOperandExc(a, e, eop)
	c.FPU.SW &^= swC1
	c.fexcC1(e)
	return r
}

// opFArith handles fadd/fsub/fsubr/fmul/fdiv/fdivr and their p and i forms.
func opFArith(c *CPU, in *Inst) {
	op := in.Aux & 0xff
	pop := in.Aux&0x100 != 0
	integer := in.Aux&0x200 != 0
	switch {
	case in.NArgs == 0:
		// fxxxp with no operands: ST(1) = ST(1) op ST(0), pop.
		c.setSt(1, c.farith(op, c.st(1), c.st(0), 0))
	case in.Args[0].Kind == KMem:
		m, eop := c.fmemOperand(&in.Args[0], integer)
		a := c.st(0)
		c.setSt(0, c.farith(op, a, m, eop))
	default:
		d, s := in.Args[0].Reg, in.Args[1].Reg
		c.setSt(d, c.farith(op, c.st(d), c.st(s), 0))
	}
	if pop {
		c.fpop()
	}
}

func opFld(c *CPU, in *Inst) {
	o := &in.Args[0]
	var v f80.F80
	if o.Kind == KST {
		v = c.st(o.Reg)
	} else {
		v = c.fmemLoad(o, in.Op == x86asm.FILD)
	}
	c.FPU.SW &^= swC1
	c.fpush(v)
}

func opFldConst(c *CPU, in *Inst) {
	var v f80.F80
	switch in.Op {
	case x86asm.FLD1:
		v = f80.One
	case x86asm.FLDZ:
		v = f80.Zero
	case x86asm.FLDPI:
		v = f80.Const(f80.ConstPi, c.fpuRC())
	case x86asm.FLDL2T:
		v = f80.Const(f80.ConstL2T, c.fpuRC())
	case x86asm.FLDL2E:
		v = f80.Const(f80.ConstL2E, c.fpuRC())
	case x86asm.FLDLG2:
		v = f80.Const(f80.ConstLG2, c.fpuRC())
	case x86asm.FLDLN2:
		v = f80.Const(f80.ConstLN2, c.fpuRC())
	}
	c.FPU.SW &^= swC1
	c.fpush(v)
}

// opFst handles fst/fstp to memory or a register.
func opFst(c *CPU, in *Inst) {
	o := &in.Args[0]
	v := c.st(0)
	c.FPU.SW &^= swC1
	if o.Kind == KST {
		c.setSt(o.Reg, v)
	} else {
		a := c.ea(o)
		switch o.Size {
		case 4:
			f, e := v.Float32(c.fpuRC())
			c.fexcC1(e)
			c.store(a, 4, uint64(f32bits(f)))
		case 8:
			f, e := v.Float64(c.fpuRC())
			c.fexcC1(e)
			c.store64(a, f64bits(f))
		default:
			var b [10]byte
			v.Bytes(b[:])
			c.StoreBytes(a, b[:])
		}
	}
	if in.Op == x86asm.FSTP {
		c.fpop()
	}
}

func (c *CPU) fexcC1(e f80.Exc) {
	c.fexc(e)
	if e&f80.C1 != 0 {
		c.FPU.SW |= swC1
	}
}

// opFist handles fist/fistp/fisttp.
func opFist(c *CPU, in *Inst) {
	o := &in.Args[0]
	v := c.st(0)
	rc := c.fpuRC()
	if in.Op == x86asm.FISTTP {
		rc = f80.RoundZero
	}
	c.FPU.SW &^= swC1
	a := c.ea(o)
	switch o.Size {
	case 2:
		i, e := v.Int16(rc)
		c.fexcC1(e)
		c.store(a, 2, uint64(uint16(i)))
	case 4:
		i, e := v.Int32(rc)
		c.fexcC1(e)
		c.store(a, 4, uint64(uint32(i)))
	default:
		i, e := v.Int64(rc)
		c.fexcC1(e)
		c.store64(a, uint64(i))
	}
	if in.Op != x86asm.FIST {
		c.fpop()
	}
}

func opFxch(c *CPU, in *Inst) {
	i := uint8(1)
	if in.NArgs > 0 {
		i = in.Args[0].Reg
	}
	a, b := c.st(0), c.st(i)
	c.setSt(0, b)
	c.setSt(i, a)
	c.FPU.SW &^= swC1
}

// Comparisons.
func (c *CPU) fcc(cmp int, unordered bool) {
	c.FPU.SW &^= swC0 | swC1 | swC2 | swC3
	switch {
	case unordered:
		c.FPU.SW |= swC0 | swC2 | swC3
	case cmp < 0:
		c.FPU.SW |= swC0
	case cmp == 0:
		c.FPU.SW |= swC3
	}
}

func opFcom(c *CPU, in *Inst) {
	var b f80.F80
	switch {
	case in.Op == x86asm.FCOMPP || in.Op == x86asm.FUCOMPP || in.NArgs == 0:
		b = c.st(1)
	case in.Args[0].Kind == KST:
		b = c.st(in.Args[0].Reg)
	default:
		b = c.fmemLoad(&in.Args[0], in.Op == x86asm.FICOM || in.Op == x86asm.FICOMP)
	}
	signal := in.Op != x86asm.FUCOM && in.Op != x86asm.FUCOMP && in.Op != x86asm.FUCOMPP
	cmp, un, e := f80.Fcom(c.st(0), b, signal)
	c.fexc(e)
	c.fcc(cmp, un)
	switch in.Op {
	case x86asm.FCOMP, x86asm.FUCOMP, x86asm.FICOMP:
		c.fpop()
	case x86asm.FCOMPP, x86asm.FUCOMPP:
		c.fpop()
		c.fpop()
	}
}

func opFcomi(c *CPU, in *Inst) {
	cmp, un, e := f80.Fcom(c.st(0), c.st(in.Args[1].Reg), in.Op == x86asm.FCOMI || in.Op == x86asm.FCOMIP)
	c.fexc(e)
	c.FPU.SW &^= swC1
	var f uint64
	switch {
	case un:
		f = FlagZF | FlagPF | FlagCF
	case cmp < 0:
		f = FlagCF
	case cmp == 0:
		f = FlagZF
	}
	c.setArith(ArithFlags, f)
	if in.Op == x86asm.FCOMIP || in.Op == x86asm.FUCOMIP {
		c.fpop()
	}
}

func opFtst(c *CPU, in *Inst) {
	cmp, un, e := f80.Fcom(c.st(0), f80.Zero, true)
	c.fexc(e)
	c.fcc(cmp, un)
}

func opFxam(c *CPU, in *Inst) {
	p := c.stIdx(0)
	c.FPU.SW &^= swC0 | swC1 | swC2 | swC3
	v := c.FPU.Regs[p]
	if c.FPU.Tag&(1<<p) == 0 {
		c.FPU.SW |= swC3 | swC0
		if v.Sign() {
			c.FPU.SW |= swC1
		}
		return
	}
	c.FPU.SW |= v.Xam()
}

func opFcmov(c *CPU, in *Inst) {
	var take bool
	switch in.Op {
	case x86asm.FCMOVB:
		take = c.cond(2)
	case x86asm.FCMOVNB:
		take = c.cond(3)
	case x86asm.FCMOVE:
		take = c.cond(4)
	case x86asm.FCMOVNE:
		take = c.cond(5)
	case x86asm.FCMOVBE:
		take = c.cond(6)
	case x86asm.FCMOVNBE:
		take = c.cond(7)
	case x86asm.FCMOVU:
		take = c.cond(10)
	case x86asm.FCMOVNU:
		take = c.cond(11)
	}
	if take {
		c.setSt(0, c.st(in.Args[1].Reg))
	}
}

// Unary operations on ST(0).
func opFunary(c *CPU, in *Inst) {
	v := c.st(0)
	rc, pc := c.fpuRC(), c.fpuPC()
	var r f80.F80
	var e f80.Exc
	switch in.Op {
	case x86asm.FCHS:
		r = v.Neg()
	case x86asm.FABS:
		r = v.Abs()
	case x86asm.FSQRT:
		r, e = f80.Sqrt(v, rc, pc)
	case x86asm.FRNDINT:
		r, e = f80.RoundInt(v, rc)
	case x86asm.FSCALE:
		r, e = f80.Scale(v, c.st(1), rc)
	case x86asm.F2XM1:
		r, e = f80.F2xm1(v, rc)
	case x86asm.FSIN, x86asm.FCOS:
		var ok bool
		if in.Op == x86asm.FSIN {
			r, e, ok = f80.Sin(v, rc)
		} else {
			r, e, ok = f80.Cos(v, rc)
		}
		c.FPU.SW &^= swC1 | swC2
		if !ok {
			// |x| >= 2^63: C2 set, ST0 unchanged.
			c.FPU.SW |= swC2
			return
		}
		c.fexcC1(e)
		c.setSt(0, r)
		return
	}
	c.FPU.SW &^= swC1 | swC2
	c.fexcC1(e)
	c.setSt(0, r)
}

func opFbinPop(c *CPU, in *Inst) {
	x, y := c.st(0), c.st(1)
	rc := c.fpuRC()
	var r f80.F80
	var e f80.Exc
	switch in.Op {
	case x86asm.FYL2X:
		r, e = f80.Yl2x(y, x, rc)
	case x86asm.FYL2XP1:
		r, e = f80.Yl2xp1(y, x, rc)
	case x86asm.FPATAN:
		r, e = f80.Patan(y, x, rc)
	}
	c.FPU.SW &^= swC1
	c.fexcC1(e)
	c.setSt(1, r)
	c.fpop()
}

// opFptanSincos handles fptan (tan, then 1.0 pushed) and fsincos (sin,
// then cos pushed): ST(0) is replaced and a second result pushed; an
// argument out of range (|x| >= 2^63) sets C2 and changes nothing.
func opFptanSincos(c *CPU, in *Inst) {
	var r, push f80.F80
	var e f80.Exc
	var ok bool
	if in.Op == x86asm.FPTAN {
		r, push, e, ok = f80.Tan(c.st(0), c.fpuRC())
	} else {
		r, push, e, ok = f80.SinCos(c.st(0), c.fpuRC())
	}
	c.FPU.SW &^= swC1 | swC2
	if !ok {
		c.FPU.SW |= swC2
		return
	}
	c.fexcC1(e)
	c.setSt(0, r)
	c.fpush(push)
}

func opFxtract(c *CPU, in *Inst) {
	exp, sig, e := f80.Xtract(c.st(0))
	c.fexc(e)
	c.setSt(0, exp)
	c.fpush(sig)
}

func opFprem(c *CPU, in *Inst) {
	r, q, complete, e := f80.Prem(c.st(0), c.st(1), in.Op == x86asm.FPREM1)
	c.fexc(e)
	c.FPU.SW &^= swC0 | swC1 | swC2 | swC3
	if !complete {
		c.FPU.SW |= swC2
	} else {
		if q&4 != 0 {
			c.FPU.SW |= swC0
		}
		if q&2 != 0 {
			c.FPU.SW |= swC3
		}
		if q&1 != 0 {
			c.FPU.SW |= swC1
		}
	}
	c.setSt(0, r)
}

// Control instructions.
func opFnstsw(c *CPU, in *Inst) {
	o := &in.Args[0]
	if o.Kind == KMem {
		c.store(c.ea(o), 2, uint64(c.FSW()))
		return
	}
	c.R[RAX] = c.R[RAX]&^0xffff | uint64(c.FSW())
}

func opFnstcw(c *CPU, in *Inst) { c.store(c.ea(&in.Args[0]), 2, uint64(c.FPU.CW)) }

func opFldcw(c *CPU, in *Inst) {
	c.FPU.CW = uint16(c.load16(c.ea(&in.Args[0]))) | 0x40
}

func opFninit(c *CPU, in *Inst) { c.fpuInit() }

func (c *CPU) fpuInit() {
	c.FPU.CW = 0x37f
	c.FPU.SW = 0
	c.FPU.Top = 0
	c.FPU.Tag = 0
	c.FPU.FOP, c.FPU.FIP, c.FPU.FDP = 0, 0, 0
}

func opFnclex(c *CPU, in *Inst) { c.FPU.SW &^= 0x80ff }

func opFfree(c *CPU, in *Inst) { c.FPU.Tag &^= 1 << c.stIdx(in.Args[0].Reg) }

func opFincstp(c *CPU, in *Inst) {
	c.FPU.Top = (c.FPU.Top + 1) & 7
	c.FPU.SW &^= swC1
}

func opFdecstp(c *CPU, in *Inst) {
	c.FPU.Top = (c.FPU.Top - 1) & 7
	c.FPU.SW &^= swC1
}

// fullTag returns the 16-bit tag word (2 bits per physical register).
func (c *CPU) fullTag() uint16 {
	var t uint16
	for p := 0; p < 8; p++ {
		var tag uint16 = 3
		if c.FPU.Tag&(1<<p) != 0 {
			v := c.FPU.Regs[p]
			switch v.Class() {
			case f80.ClassZero:
				tag = 1
			case f80.ClassNormal:
				tag = 0
			default:
				tag = 2
			}
		}
		t |= tag << (2 * p)
	}
	return t
}

func (c *CPU) setFullTag(t uint16) {
	c.FPU.Tag = 0
	for p := 0; p < 8; p++ {
		if (t>>(2*p))&3 != 3 {
			c.FPU.Tag |= 1 << p
		}
	}
}

// fnstenv/fldenv use the 28-byte protected-mode layout.
func (c *CPU) fenvBytes(b []byte) {
	storeLE(b[0:], 4, uint64(c.FPU.CW)|0xffff0000)
	storeLE(b[4:], 4, uint64(c.FSW())|0xffff0000)
	storeLE(b[8:], 4, uint64(c.fullTag())|0xffff0000)
	storeLE(b[12:], 4, c.FPU.FIP&0xffffffff)
	storeLE(b[16:], 4, uint64(c.FPU.FOP)&0x7ff)
	storeLE(b[20:], 4, c.FPU.FDP&0xffffffff)
	storeLE(b[24:], 4, 0xffff0000)
}

func (c *CPU) setFenv(b []byte) {
	c.FPU.CW = uint16(loadLE(b[0:], 2))
	c.setFSW(uint16(loadLE(b[4:], 2)))
	c.setFullTag(uint16(loadLE(b[8:], 2)))
}

func opFnstenv(c *CPU, in *Inst) {
	var b [28]byte
	c.fenvBytes(b[:])
	c.StoreBytes(c.ea(&in.Args[0]), b[:])
	c.FPU.CW |= 0x3f // fnstenv masks all exceptions afterwards
}

func opFldenv(c *CPU, in *Inst) {
	var b [28]byte
	c.LoadBytes(c.ea(&in.Args[0]), b[:])
	c.setFenv(b[:])
}

func opFnsave(c *CPU, in *Inst) {
	var b [108]byte
	c.fenvBytes(b[:28])
	for i := uint8(0); i < 8; i++ {
		c.FPU.Regs[c.stIdx(i)].Bytes(b[28+10*int(i):])
	}
	c.StoreBytes(c.ea(&in.Args[0]), b[:])
	c.fpuInit()
}

func opFrstor(c *CPU, in *Inst) {
	var b [108]byte
	c.LoadBytes(c.ea(&in.Args[0]), b[:])
	c.setFenv(b[:28])
	for i := uint8(0); i < 8; i++ {
		c.FPU.Regs[c.stIdx(i)] = f80.FromBytes(b[28+10*int(i):])
	}
}

// FXSave writes the 512-byte fxsave image of the x87 and SSE state.
func (c *CPU) FXSave(b []byte) {
	clear(b[:512])
	storeLE(b[0:], 2, uint64(c.FPU.CW))
	storeLE(b[2:], 2, uint64(c.FSW()))
	b[4] = c.FPU.Tag
	storeLE(b[6:], 2, uint64(c.FPU.FOP))
	storeLE(b[8:], 8, c.FPU.FIP)
	storeLE(b[16:], 8, c.FPU.FDP)
	storeLE(b[24:], 4, uint64(c.MXCSR))
	storeLE(b[28:], 4, 0xffff)
	for i := uint8(0); i < 8; i++ {
		c.FPU.Regs[c.stIdx(i)].Bytes(b[32+16*int(i):])
	}
	for i := 0; i < 16; i++ {
		storeLE(b[160+16*i:], 8, c.X[i][0])
		storeLE(b[168+16*i:], 8, c.X[i][1])
	}
}

// FXRstor loads a 512-byte fxsave image; it reports false when the MXCSR
// field has reserved bits set (the hardware raises #GP).
func (c *CPU) FXRstor(b []byte) bool {
	mx := uint32(loadLE(b[24:], 4))
	if mx&^0xffff != 0 {
		return false
	}
	c.FPU.CW = uint16(loadLE(b[0:], 2))
	c.setFSW(uint16(loadLE(b[2:], 2)))
	c.FPU.Tag = b[4]
	c.FPU.FOP = uint16(loadLE(b[6:], 2))
	c.FPU.FIP = loadLE(b[8:], 8)
	c.FPU.FDP = loadLE(b[16:], 8)
	c.MXCSR = mx
	for i := uint8(0); i < 8; i++ {
		c.FPU.Regs[c.stIdx(i)] = f80.FromBytes(b[32+16*int(i):])
	}
	for i := 0; i < 16; i++ {
		c.X[i][0] = loadLE(b[160+16*i:], 8)
		c.X[i][1] = loadLE(b[168+16*i:], 8)
	}
	return true
}

func opFxsave(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&15 != 0 {
		c.raise(ExitGP, SIKernel)
	}
	var b [512]byte
	c.foldHostFP()
	c.FXSave(b[:])
	c.StoreBytes(a, b[:])
}

func opFxrstor(c *CPU, in *Inst) {
	a := c.ea(&in.Args[0])
	if a&15 != 0 {
		c.raise(ExitGP, SIKernel)
	}
	var b [512]byte
	c.LoadBytes(a, b[:])
	c.foldHostFP() // the flags raised so far belong to the old MXCSR
	if !c.FXRstor(b[:]) {
		c.raise(ExitGP, SIKernel)
	}
}

func init() {
	arith := func(op x86asm.Op, kind uint32) {
		register(op, func(in *Inst) Handler {
			in.Aux = kind
			return opFArith
		})
	}
	const pop, integer = 0x100, 0x200
	arith(x86asm.FADD, fAdd)
	arith(x86asm.FADDP, fAdd|pop)
	arith(x86asm.FIADD, fAdd|integer)
	arith(x86asm.FSUB, fSub)
	arith(x86asm.FSUBP, fSub|pop)
	arith(x86asm.FISUB, fSub|integer)
	arith(x86asm.FSUBR, fSubR)
	arith(x86asm.FSUBRP, fSubR|pop)
	arith(x86asm.FISUBR, fSubR|integer)
	arith(x86asm.FMUL, fMul)
	arith(x86asm.FMULP, fMul|pop)
	arith(x86asm.FIMUL, fMul|integer)
	arith(x86asm.FDIV, fDiv)
	arith(x86asm.FDIVP, fDiv|pop)
	arith(x86asm.FIDIV, fDiv|integer)
	arith(x86asm.FDIVR, fDivR)
	arith(x86asm.FDIVRP, fDivR|pop)
	arith(x86asm.FIDIVR, fDivR|integer)
	m80 := func(h Handler) Builder {
		return func(in *Inst) Handler {
			if in.Args[0].Kind == KMem && in.Args[0].Size == 0 {
				in.Args[0].Size = 10
			}
			return h
		}
	}
	register(x86asm.FLD, m80(opFld))
	handle(x86asm.FILD, opFld)
	for _, op := range []x86asm.Op{x86asm.FLD1, x86asm.FLDZ, x86asm.FLDPI, x86asm.FLDL2T, x86asm.FLDL2E, x86asm.FLDLG2, x86asm.FLDLN2} {
		handle(op, opFldConst)
	}
	register(x86asm.FST, m80(opFst))
	register(x86asm.FSTP, m80(opFst))
	handle(x86asm.FIST, opFist)
	handle(x86asm.FISTP, opFist)
	handle(x86asm.FISTTP, opFist)
	handle(x86asm.FXCH, opFxch)
	for _, op := range []x86asm.Op{x86asm.FCOM, x86asm.FCOMP, x86asm.FCOMPP, x86asm.FUCOM, x86asm.FUCOMP, x86asm.FUCOMPP, x86asm.FICOM, x86asm.FICOMP} {
		handle(op, opFcom)
	}
	for _, op := range []x86asm.Op{x86asm.FCOMI, x86asm.FCOMIP, x86asm.FUCOMI, x86asm.FUCOMIP} {
		handle(op, opFcomi)
	}
	handle(x86asm.FTST, opFtst)
	handle(x86asm.FXAM, opFxam)
	for _, op := range []x86asm.Op{x86asm.FCMOVB, x86asm.FCMOVNB, x86asm.FCMOVE, x86asm.FCMOVNE, x86asm.FCMOVBE, x86asm.FCMOVNBE, x86asm.FCMOVU, x86asm.FCMOVNU} {
		handle(op, opFcmov)
	}
	for _, op := range []x86asm.Op{x86asm.FCHS, x86asm.FABS, x86asm.FSQRT, x86asm.FRNDINT, x86asm.FSCALE, x86asm.F2XM1, x86asm.FSIN, x86asm.FCOS} {
		handle(op, opFunary)
	}
	handle(x86asm.FYL2X, opFbinPop)
	handle(x86asm.FYL2XP1, opFbinPop)
	handle(x86asm.FPATAN, opFbinPop)
	handle(x86asm.FPTAN, opFptanSincos)
	handle(x86asm.FSINCOS, opFptanSincos)
	handle(x86asm.FXTRACT, opFxtract)
	handle(x86asm.FPREM, opFprem)
	handle(x86asm.FPREM1, opFprem)
	handle(x86asm.FNSTSW, opFnstsw)
	handle(x86asm.FNSTCW, opFnstcw)
	handle(x86asm.FLDCW, opFldcw)
	handle(x86asm.FNINIT, opFninit)
	handle(x86asm.FNCLEX, opFnclex)
	handle(x86asm.FWAIT, opNop)
	handle(x86asm.FNOP, opNop)
	handle(x86asm.FFREE, opFfree)
	handle(x86asm.FFREEP, func(c *CPU, in *Inst) { opFfree(c, in); c.fpop() })
	handle(x86asm.FINCSTP, opFincstp)
	handle(x86asm.FDECSTP, opFdecstp)
	handle(x86asm.FNSTENV, opFnstenv)
	handle(x86asm.FLDENV, opFldenv)
	handle(x86asm.FNSAVE, opFnsave)
	handle(x86asm.FRSTOR, opFrstor)
	handle(x86asm.FXSAVE, opFxsave)
	handle(x86asm.FXSAVE64, opFxsave)
	handle(x86asm.FXRSTOR, opFxrstor)
	handle(x86asm.FXRSTOR64, opFxrstor)
}
