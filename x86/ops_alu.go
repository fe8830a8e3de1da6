package x86

import (
	"math/bits"
	"unsafe"

	"golang.org/x/arch/x86/x86asm"
)

// Binary ALU operations: each computes the result of dst OP src at size
// bytes (operands masked), records the flags lazily and reports whether
// the result is written back (cmp and test only set flags).
type aluOp func(c *CPU, size uint8, a, b uint64) uint64

func aluAdd(c *CPU, size uint8, a, b uint64) uint64 {
	r := (a + b) & sizeMask[size]
	c.setFlags(ccAdd, size, r, a, b)
	return r
}

func aluSub(c *CPU, size uint8, a, b uint64) uint64 {
	r := (a - b) & sizeMask[size]
	c.setFlags(ccSub, size, r, a, b)
	return r
}

func aluAdc(c *CPU, size uint8, a, b uint64) uint64 {
	cin := c.cf()
	r := (a + b + cin) & sizeMask[size]
	c.setFlagsCin(ccAdc, size, r, a, b, cin)
	return r
}

func aluSbb(c *CPU, size uint8, a, b uint64) uint64 {
	cin := c.cf()
	r := (a - b - cin) & sizeMask[size]
	c.setFlagsCin(ccSbb, size, r, a, b, cin)
	return r
}

func aluAnd(c *CPU, size uint8, a, b uint64) uint64 {
	r := a & b
	c.setLogic(size, r)
	return r
}

func aluOr(c *CPU, size uint8, a, b uint64) uint64 {
	r := a | b
	c.setLogic(size, r)
	return r
}

func aluXor(c *CPU, size uint8, a, b uint64) uint64 {
	r := a ^ b
	c.setLogic(size, r)
	return r
}

var aluOps = []aluOp{aluAdd, aluSub, aluAdc, aluSbb, aluAnd, aluOr, aluXor, aluSub, aluAnd}

const (
	aluIdxCmp  = 7
	aluIdxTest = 8
)

// aluFormIndex classifies a two-operand instruction's operands for the
// generated tables: 0 RR, 1 RM, 2 MR, 3 RI, 4 MI; -1 for other forms
// (AH-style registers, mismatched sizes).
func aluFormIndex(in *Inst) int {
	d, s := &in.Args[0], &in.Args[1]
	switch {
	case d.Kind == KReg && s.Kind == KReg && s.Size == d.Size:
		return 0
	case d.Kind == KReg && s.Kind == KMem && s.Size == d.Size:
		return 1
	case d.Kind == KMem && s.Kind == KReg && s.Size == d.Size:
		return 2
	case d.Kind == KReg && s.Kind == KImm:
		return 3
	case d.Kind == KMem && s.Kind == KImm:
		return 4
	}
	return -1
}

var sizeIndex = [9]int{1: 0, 2: 1, 4: 2, 8: 3}

// buildALU picks the generated handler for the operation and form.
func buildALU(idx int) Builder {
	write := idx != aluIdxCmp && idx != aluIdxTest
	return func(in *Inst) Handler {
		in.Aux = uint32(idx)
		d, s := &in.Args[0], &in.Args[1]
		if s.Kind == KImm {
			s.Imm &= sizeMask[d.Size]
		}
		if f := aluFormIndex(in); f >= 0 {
			return aluForms[idx][f][sizeIndex[d.Size]]
		}
		if write {
			return aluGeneric
		}
		return aluGenericNoWrite
	}
}

func aluGeneric(c *CPU, in *Inst) {
	d := &in.Args[0]
	if d.Kind == KMem {
		a := c.ea(d)
		v := c.load(a, int(d.Size))
		r := aluOps[in.Aux](c, d.Size, v, c.get(&in.Args[1])&sizeMask[d.Size])
		c.store(a, int(d.Size), r)
		return
	}
	r := aluOps[in.Aux](c, d.Size, c.getReg(d), c.get(&in.Args[1])&sizeMask[d.Size])
	c.setReg(d, r)
}

func aluGenericNoWrite(c *CPU, in *Inst) {
	d := &in.Args[0]
	aluOps[in.Aux](c, d.Size, c.get(d), c.get(&in.Args[1])&sizeMask[d.Size])
}

// Unary operations.

func opInc(c *CPU, in *Inst) {
	d := &in.Args[0]
	rmw(c, d, func(v uint64) uint64 {
		cf := c.cf()
		r := (v + 1) & sizeMask[d.Size]
		c.setFlagsCin(ccInc, d.Size, r, v, 1, cf)
		return r
	})
}

func opDec(c *CPU, in *Inst) {
	d := &in.Args[0]
	rmw(c, d, func(v uint64) uint64 {
		cf := c.cf()
		r := (v - 1) & sizeMask[d.Size]
		c.setFlagsCin(ccDec, d.Size, r, v, 1, cf)
		return r
	})
}

func opNeg(c *CPU, in *Inst) {
	d := &in.Args[0]
	rmw(c, d, func(v uint64) uint64 { return aluSub(c, d.Size, 0, v) })
}

func opNot(c *CPU, in *Inst) {
	d := &in.Args[0]
	rmw(c, d, func(v uint64) uint64 { return ^v & sizeMask[d.Size] })
}

// rmw reads, transforms and writes back an operand.
func rmw(c *CPU, d *Operand, f func(uint64) uint64) {
	if d.Kind == KMem {
		a := c.ea(d)
		c.store(a, int(d.Size), f(c.load(a, int(d.Size))))
		return
	}
	c.setReg(d, f(c.getReg(d)))
}

// Data movement.

func buildMov(in *Inst) Handler {
	d, s := &in.Args[0], &in.Args[1]
	if d.Kind == KSeg || s.Kind == KSeg {
		return movSeg
	}
	if s.Kind == KImm {
		s.Imm &= sizeMask[d.Size]
	}
	if f := aluFormIndex(in); f >= 0 {
		return movForms[f][sizeIndex[d.Size]]
	}
	return movGeneric
}

func movGeneric(c *CPU, in *Inst) {
	c.set(&in.Args[0], c.get(&in.Args[1])&sizeMask[in.Args[0].Size])
}

// buildMovExt picks the generated movzx/movsx handler.
func buildMovExt(sx int, generic Handler) Builder {
	return func(in *Inst) Handler {
		d, s := &in.Args[0], &in.Args[1]
		if d.Kind != KReg || d.Size < 2 || (s.Size != 1 && s.Size != 2) {
			return generic
		}
		form := 0
		switch s.Kind {
		case KReg:
		case KMem:
			form = 1
		default:
			return generic
		}
		if h := movExtForms[sx][form][s.Size/2][sizeIndex[d.Size]-1]; h != nil {
			return h
		}
		return generic
	}
}

// movSeg: reading a segment register gives the Linux user selectors;
// writing one is accepted only for the null selector.
func movSeg(c *CPU, in *Inst) {
	d, s := &in.Args[0], &in.Args[1]
	if s.Kind == KSeg {
		sel := [6]uint64{0, 0x33, 0x2b, 0, 0, 0}[s.Reg]
		if d.Kind == KMem {
			c.store(c.ea(d), 2, sel)
		} else {
			c.setReg(d, sel)
		}
		return
	}
	c.raise(ExitGP, SIKernel)
}

// buildMovsxd picks the generated handler of movsxd r64, r/m32; the other
// sizes (a 32-bit destination just copies) run opMovsx.
func buildMovsxd(in *Inst) Handler {
	d, s := &in.Args[0], &in.Args[1]
	switch {
	case d.Kind != KReg || d.Size != 8 || s.Size != 4:
		return opMovsx
	case s.Kind == KReg:
		return movsxR3264
	case s.Kind == KMem:
		return movsxM3264
	}
	return opMovsx
}

func opMovzx(c *CPU, in *Inst) { c.setReg(&in.Args[0], c.get(&in.Args[1])) }

func opMovsx(c *CPU, in *Inst) {
	s := &in.Args[1]
	c.setReg(&in.Args[0], uint64(sx(c.get(s), s.Size)))
}

func opLea(c *CPU, in *Inst) {
	c.setReg(&in.Args[0], c.ea(&in.Args[1])&sizeMask[in.Args[0].Size])
}

// opLea64 is lea with a 64-bit destination and address, ea without the
// segment and address-size test, small enough to inline into the
// dispatch loop.
func opLea64(c *CPU, in *Inst) {
	o := &in.Args[1]
	r := (*[32]uint64)(unsafe.Pointer(&c.R))
	c.R[in.Args[0].Reg&15] = o.Imm + r[o.Base&31] + r[o.Index&31]<<(o.Scale&3)
}

func buildLea(in *Inst) Handler {
	in.Args[1].Seg = SegNone // lea ignores segment bases
	if in.Args[0].Size == 8 && !in.Args[1].A32 {
		return opLea64
	}
	return opLea
}

func opXchg(c *CPU, in *Inst) {
	a, b := &in.Args[0], &in.Args[1]
	if a.Kind == KMem {
		a, b = b, a
	}
	if b.Kind == KMem {
		ad := c.ea(b)
		old := c.load(ad, int(b.Size))
		c.store(ad, int(b.Size), c.getReg(a))
		c.setReg(a, old)
		return
	}
	va, vb := c.getReg(a), c.getReg(b)
	c.setReg(a, vb)
	c.setReg(b, va)
}

func opXadd(c *CPU, in *Inst) {
	d, s := &in.Args[0], &in.Args[1]
	if d.Kind == KMem {
		a := c.ea(d)
		old := c.load(a, int(d.Size))
		sum := aluAdd(c, d.Size, old, c.getReg(s))
		c.store(a, int(d.Size), sum)
		c.setReg(s, old)
		return
	}
	old := c.getReg(d)
	sum := aluAdd(c, d.Size, old, c.getReg(s))
	c.setReg(s, old)
	c.setReg(d, sum)
}

func opCmpxchg(c *CPU, in *Inst) {
	d, s := &in.Args[0], &in.Args[1]
	acc := Operand{Kind: KReg, Reg: RAX, Size: d.Size}
	av := c.getReg(&acc)
	if d.Kind == KMem {
		a := c.ea(d)
		old := c.load(a, int(d.Size))
		aluSub(c, d.Size, av, old)
		if av == old {
			c.store(a, int(d.Size), c.getReg(s))
		} else {
			// The processor writes the old value back (locked cycle).
			c.store(a, int(d.Size), old)
			c.setReg(&acc, old)
		}
		return
	}
	old := c.getReg(d)
	aluSub(c, d.Size, av, old)
	if av == old {
		c.setReg(d, c.getReg(s))
	} else {
		c.setReg(&acc, old)
	}
}

func opCmpxchg8b16b(c *CPU, in *Inst) {
	d := &in.Args[0]
	a := c.ea(d)
	c.materialize()
	if d.Size == 16 {
		if a&15 != 0 {
			c.raise(ExitGP, SIKernel)
		}
		lo, hi := c.load64(a), c.load64(a+8)
		if lo == c.R[RAX] && hi == c.R[RDX] {
			c.store64(a, c.R[RBX])
			c.store64(a+8, c.R[RCX])
			c.flags |= FlagZF
		} else {
			c.store64(a, lo)
			c.store64(a+8, hi)
			c.R[RAX], c.R[RDX] = lo, hi
			c.flags &^= FlagZF
		}
		return
	}
	v := c.load64(a)
	cmp := uint64(uint32(c.R[RDX]))<<32 | uint64(uint32(c.R[RAX]))
	if v == cmp {
		c.store64(a, uint64(uint32(c.R[RCX]))<<32|uint64(uint32(c.R[RBX])))
		c.flags |= FlagZF
	} else {
		c.store64(a, v)
		c.R[RAX], c.R[RDX] = uint64(uint32(v)), v>>32
		c.flags &^= FlagZF
	}
}

func opBswap(c *CPU, in *Inst) {
	d := &in.Args[0]
	if d.Size == 8 {
		c.R[d.Reg] = bits.ReverseBytes64(c.R[d.Reg])
	} else {
		c.setReg(d, uint64(bits.ReverseBytes32(uint32(c.R[d.Reg]))))
	}
}

func opMovbe(c *CPU, in *Inst) {
	d, s := &in.Args[0], &in.Args[1]
	v := c.get(s)
	switch d.Size {
	case 2:
		v = uint64(bits.ReverseBytes16(uint16(v)))
	case 4:
		v = uint64(bits.ReverseBytes32(uint32(v)))
	default:
		v = bits.ReverseBytes64(v)
	}
	c.set(d, v)
}

// Sign extensions of the accumulator.
func opCbw(c *CPU, in *Inst) {
	c.R[RAX] = c.R[RAX]&^0xffff | uint64(uint16(int8(c.R[RAX])))
}
func opCwde(c *CPU, in *Inst) { c.R[RAX] = uint64(uint32(int16(c.R[RAX]))) }
func opCdqe(c *CPU, in *Inst) { c.R[RAX] = uint64(int32(c.R[RAX])) }
func opCwd(c *CPU, in *Inst) {
	c.R[RDX] = c.R[RDX]&^0xffff | uint64(uint16(int16(c.R[RAX])>>15))
}
func opCdq(c *CPU, in *Inst) { c.R[RDX] = uint64(uint32(int32(c.R[RAX]) >> 31)) }
func opCqo(c *CPU, in *Inst) { c.R[RDX] = uint64(int64(c.R[RAX]) >> 63) }

// Conditional moves and sets: in.Aux holds the condition code.
func opCmov(c *CPU, in *Inst) {
	d := &in.Args[0]
	v := c.get(&in.Args[1]) // the source is read (and may fault) either way
	if c.cond(uint8(in.Aux)) {
		c.setReg(d, v)
	} else if d.Size == 4 {
		c.R[d.Reg] = uint64(uint32(c.R[d.Reg]))
	}
}

func opSetcc(c *CPU, in *Inst) { c.set(&in.Args[0], b2u(c.cond(uint8(in.Aux)))) }

// Flag instructions.
func opClc(c *CPU, in *Inst) { c.setArith(FlagCF, 0) }
func opStc(c *CPU, in *Inst) { c.setArith(FlagCF, FlagCF) }
func opCmc(c *CPU, in *Inst) { c.setArith(FlagCF, c.arithFlags()^FlagCF) }
func opCld(c *CPU, in *Inst) { c.flags &^= FlagDF }
func opStd(c *CPU, in *Inst) { c.flags |= FlagDF }
func opLahf(c *CPU, in *Inst) {
	f := c.Rflags() & (FlagSF | FlagZF | FlagAF | FlagPF | FlagCF | 2)
	c.R[RAX] = c.R[RAX]&^0xff00 | f<<8
}
func opSahf(c *CPU, in *Inst) {
	c.setArith(FlagSF|FlagZF|FlagAF|FlagPF|FlagCF, c.R[RAX]>>8)
}

// condOps lists the ops whose low nibble of condition is Aux.
var condCodes = map[x86asm.Op]uint8{}

func init() {
	for i, op := range []x86asm.Op{x86asm.ADD, x86asm.SUB, x86asm.ADC, x86asm.SBB, x86asm.AND, x86asm.OR, x86asm.XOR, x86asm.CMP, x86asm.TEST} {
		register(op, buildALU(i))
	}
	handle(x86asm.INC, opInc)
	handle(x86asm.DEC, opDec)
	handle(x86asm.NEG, opNeg)
	handle(x86asm.NOT, opNot)
	register(x86asm.MOV, buildMov)
	register(x86asm.MOVZX, buildMovExt(0, opMovzx))
	register(x86asm.MOVSX, buildMovExt(1, opMovsx))
	register(x86asm.MOVSXD, buildMovsxd)
	register(x86asm.LEA, buildLea)
	handle(x86asm.XCHG, opXchg)
	handle(x86asm.XADD, opXadd)
	handle(x86asm.CMPXCHG, opCmpxchg)
	handle(x86asm.CMPXCHG8B, opCmpxchg8b16b)
	handle(x86asm.CMPXCHG16B, opCmpxchg8b16b)
	handle(x86asm.BSWAP, opBswap)
	handle(x86asm.MOVBE, opMovbe)
	handle(x86asm.CBW, opCbw)
	handle(x86asm.CWDE, opCwde)
	handle(x86asm.CDQE, opCdqe)
	handle(x86asm.CWD, opCwd)
	handle(x86asm.CDQ, opCdq)
	handle(x86asm.CQO, opCqo)
	handle(x86asm.CLC, opClc)
	handle(x86asm.STC, opStc)
	handle(x86asm.CMC, opCmc)
	handle(x86asm.CLD, opCld)
	handle(x86asm.STD, opStd)
	handle(x86asm.LAHF, opLahf)
	handle(x86asm.SAHF, opSahf)
	cmovs := []x86asm.Op{x86asm.CMOVO, x86asm.CMOVNO, x86asm.CMOVB, x86asm.CMOVAE, x86asm.CMOVE, x86asm.CMOVNE, x86asm.CMOVBE, x86asm.CMOVA,
		x86asm.CMOVS, x86asm.CMOVNS, x86asm.CMOVP, x86asm.CMOVNP, x86asm.CMOVL, x86asm.CMOVGE, x86asm.CMOVLE, x86asm.CMOVG}
	sets := []x86asm.Op{x86asm.SETO, x86asm.SETNO, x86asm.SETB, x86asm.SETAE, x86asm.SETE, x86asm.SETNE, x86asm.SETBE, x86asm.SETA,
		x86asm.SETS, x86asm.SETNS, x86asm.SETP, x86asm.SETNP, x86asm.SETL, x86asm.SETGE, x86asm.SETLE, x86asm.SETG}
	for i := range cmovs {
		cc := uint32(i)
		register(cmovs[i], func(in *Inst) Handler { in.Aux = cc; return opCmov })
		register(sets[i], func(in *Inst) Handler { in.Aux = cc; return opSetcc })
	}
}

//go:generate go run ./gen
