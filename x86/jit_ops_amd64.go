package x86

import (
	"golang.org/x/arch/x86/x86asm"

	as "ttd/internal/amd64asm"
)

// The instructions the translator handles (jit_amd64.go). inst checks an
// instruction's form before it emits anything: false means "not
// translated", and the translation ends before it.

var jitALU = map[x86asm.Op]as.ALU{
	x86asm.ADD: as.ADD, x86asm.OR: as.OR, x86asm.ADC: as.ADC, x86asm.SBB: as.SBB,
	x86asm.AND: as.AND, x86asm.SUB: as.SUB, x86asm.XOR: as.XOR, x86asm.CMP: as.CMP,
}

var jitCC = func() map[x86asm.Op]uint8 {
	m := map[x86asm.Op]uint8{}
	for i, ops := range [16][3]x86asm.Op{
		{x86asm.JO, x86asm.CMOVO, x86asm.SETO}, {x86asm.JNO, x86asm.CMOVNO, x86asm.SETNO},
		{x86asm.JB, x86asm.CMOVB, x86asm.SETB}, {x86asm.JAE, x86asm.CMOVAE, x86asm.SETAE},
		{x86asm.JE, x86asm.CMOVE, x86asm.SETE}, {x86asm.JNE, x86asm.CMOVNE, x86asm.SETNE},
		{x86asm.JBE, x86asm.CMOVBE, x86asm.SETBE}, {x86asm.JA, x86asm.CMOVA, x86asm.SETA},
		{x86asm.JS, x86asm.CMOVS, x86asm.SETS}, {x86asm.JNS, x86asm.CMOVNS, x86asm.SETNS},
		{x86asm.JP, x86asm.CMOVP, x86asm.SETP}, {x86asm.JNP, x86asm.CMOVNP, x86asm.SETNP},
		{x86asm.JL, x86asm.CMOVL, x86asm.SETL}, {x86asm.JGE, x86asm.CMOVGE, x86asm.SETGE},
		{x86asm.JLE, x86asm.CMOVLE, x86asm.SETLE}, {x86asm.JG, x86asm.CMOVG, x86asm.SETG},
	} {
		for _, op := range ops {
			m[op] = uint8(i)
		}
	}
	return m
}()

var jitShift = map[x86asm.Op]as.Shift{
	x86asm.SHL: as.SHL, x86asm.SHR: as.SHR, x86asm.SAR: as.SAR, x86asm.ROL: as.ROL, x86asm.ROR: as.ROR,
}

func isReg(o *Operand) bool { return o.Kind == KReg || o.Kind == KReg8H }

// wide is the size of a register write: 32-bit results zero-extend, so
// they are stored as 64 bits (the host's 32-bit operation zeroed the top).
func wide(size int) int {
	if size == 4 {
		return 8
	}
	return size
}

// inst translates one instruction; see the file comment.
func (t *jitT) inst(in *Inst) bool {
	if in.Lock || in.Fn == nil || isSync(in) {
		return false
	}
	if in.Rep != RepNone && in.Op != x86asm.RET {
		return false
	}
	a := &t.a
	d, s := &in.Args[0], &in.Args[1]
	n := int(in.NArgs)
	for i := 0; i < n; i++ {
		switch in.Args[i].Kind {
		case KReg, KReg8H, KImm, KMem, KRel:
		default:
			return false
		}
	}
	live := t.live[t.k]
	switch in.Op {
	case x86asm.NOP:
		return true

	case x86asm.MOV:
		if n != 2 {
			return false
		}
		size := int(d.Size)
		switch {
		case isReg(d) && isReg(s):
			a.MovRM(size, as.R8, greg(s)) // a 32-bit load zero-extends
			a.MovMR(wide(size), greg(d), as.R8)
		case isReg(d) && s.Kind == KImm:
			if size >= 4 {
				a.MovRI(as.R8, s.Imm&sizeMask[size])
				a.MovMR(8, greg(d), as.R8)
			} else {
				a.MovMI(size, greg(d), int64(s.Imm))
			}
		case isReg(d) && s.Kind == KMem:
			t.spill()
			t.ea(s)
			t.load(size)
			t.commitRead()
			a.MovMR(wide(size), greg(d), as.R9)
		case d.Kind == KMem && (isReg(s) || s.Kind == KImm):
			t.spill()
			t.ea(d)
			t.storeCheck(size, false)
			if s.Kind == KImm {
				a.MovRI(as.R8, s.Imm&sizeMask[size])
			} else {
				a.MovRM(size, as.R8, greg(s))
			}
			t.store(size, as.R8)
		default:
			return false
		}
		return true

	case x86asm.ADD, x86asm.OR, x86asm.ADC, x86asm.SBB, x86asm.AND, x86asm.SUB, x86asm.XOR, x86asm.CMP, x86asm.TEST:
		if n != 2 || d.Kind == KMem && s.Kind == KMem || !isReg(d) && d.Kind != KMem {
			return false
		}
		t.alu(in, d, s)
		return true

	case x86asm.INC, x86asm.DEC, x86asm.NEG, x86asm.NOT:
		if n != 1 || !isReg(d) && d.Kind != KMem {
			return false
		}
		size := int(d.Size)
		r := as.R8
		if d.Kind == KMem {
			t.spill()
			t.ea(d)
			t.load(size)
			t.storeCheck(size, true)
			t.commitRead()
			r = as.R9
		} else {
			a.MovRM(wide(size), as.R8, greg(d))
		}
		if in.Op == x86asm.INC || in.Op == x86asm.DEC {
			t.hostFlags() // CF is kept
		}
		switch in.Op {
		case x86asm.INC:
			a.IncR(size, r)
		case x86asm.DEC:
			a.DecR(size, r)
		case x86asm.NEG:
			a.NegR(size, r)
		case x86asm.NOT:
			a.NotR(size, r)
		}
		if in.Op != x86asm.NOT {
			t.st = fsHost
		}
		t.writeBack(d, r)
		return true

	case x86asm.LEA:
		if n != 2 || !isReg(d) || s.Kind != KMem || s.Seg != SegNone || d.Size < 2 {
			return false
		}
		t.ea(s)
		if d.Size == 4 {
			a.MovRR(4, as.RSI, as.RSI)
		}
		a.MovMR(wide(int(d.Size)), greg(d), as.RSI)
		return true

	case x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD:
		if n != 2 || !isReg(d) || d.Size < 2 || !isReg(s) && s.Kind != KMem {
			return false
		}
		dsz, ssz := int(d.Size), int(s.Size)
		if in.Op == x86asm.MOVSXD && (dsz != 8 || ssz != 4) || in.Op != x86asm.MOVSXD && ssz > 2 || ssz >= dsz {
			return false
		}
		src := as.R9
		if s.Kind == KMem {
			t.spill()
			t.ea(s)
			t.load(ssz)
			t.commitRead()
		} else {
			a.MovRM(wide(ssz), as.R9, greg(s))
		}
		if in.Op == x86asm.MOVZX {
			a.Movzx(max(dsz, 4), ssz, as.R8, src)
		} else {
			a.Movsx(max(dsz, 4), ssz, as.R8, src)
		}
		a.MovMR(wide(dsz), greg(d), as.R8)
		return true

	case x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.ROL, x86asm.ROR:
		return t.shift(in, d, s, live)

	case x86asm.IMUL:
		if n == 1 {
			return t.mul1(in, d, live)
		}
		if !isReg(d) || d.Size < 2 || !isReg(s) && s.Kind != KMem || n == 3 && in.Args[2].Kind != KImm {
			return false
		}
		size := int(d.Size)
		src := as.RCX
		if s.Kind == KMem {
			t.spill()
			t.ea(s)
			t.load(size)
			t.commitRead()
			src = as.R9
		} else {
			a.MovRM(wide(size), as.RCX, greg(s))
		}
		if n == 3 {
			a.ImulRRI(size, as.R8, src, int32(in.Args[2].Imm))
		} else {
			a.MovRM(wide(size), as.R8, greg(d))
			a.ImulRR(size, as.R8, src)
		}
		t.st = fsHost
		t.mulFlags(as.R8, size, live)
		a.MovMR(wide(size), greg(d), as.R8)
		return true

	case x86asm.MUL:
		return t.mul1(in, d, live)

	case x86asm.BSWAP:
		if !isReg(d) || d.Size < 4 {
			return false
		}
		a.MovRM(8, as.R8, greg(d))
		a.Bswap(int(d.Size), as.R8)
		a.MovMR(8, greg(d), as.R8)
		return true

	case x86asm.CBW, x86asm.CWDE, x86asm.CDQE, x86asm.CWD, x86asm.CDQ, x86asm.CQO:
		a.MovRM(8, as.RAX, gregN(RAX))
		switch in.Op {
		case x86asm.CBW:
			a.Cbw()
			a.MovMR(2, gregN(RAX), as.RAX)
		case x86asm.CWDE:
			a.Cwde()
			a.MovMR(8, gregN(RAX), as.RAX)
		case x86asm.CDQE:
			a.Cdqe()
			a.MovMR(8, gregN(RAX), as.RAX)
		case x86asm.CWD:
			a.Cwd()
			a.MovMR(2, gregN(RDX), as.RDX)
		case x86asm.CDQ:
			a.Cdq()
			a.MovMR(8, gregN(RDX), as.RDX)
		case x86asm.CQO:
			a.Cqo()
			a.MovMR(8, gregN(RDX), as.RDX)
		}
		return true

	case x86asm.XCHG:
		if n != 2 || !isReg(d) || !isReg(s) {
			return false
		}
		size := int(d.Size)
		a.MovRM(8, as.R8, greg(d))
		a.MovRM(8, as.RCX, greg(s))
		a.XchgRR(size, as.R8, as.RCX)
		a.MovMR(wide(size), greg(d), as.R8)
		a.MovMR(wide(size), greg(s), as.RCX)
		return true

	case x86asm.PUSH:
		if in.OpSize != 8 || n != 1 || !isReg(d) && d.Kind != KImm || isReg(d) && d.Size != 8 {
			return false
		}
		if d.Kind == KImm {
			a.MovRI(as.R8, d.Imm)
		} else {
			a.MovRM(8, as.R8, greg(d))
		}
		t.spill()
		a.MovRM(8, as.RSI, gregN(RSP))
		a.Lea(8, as.RSI, as.M(as.RSI, -8))
		t.storeCheck(8, false)
		t.store(8, as.R8)
		a.MovMR(8, gregN(RSP), as.RSI)
		return true

	case x86asm.POP, x86asm.LEAVE:
		from := uint8(RSP)
		if in.Op == x86asm.LEAVE {
			from = RBP
		} else if in.OpSize != 8 || n != 1 || !isReg(d) || d.Size != 8 {
			return false
		}
		if in.Op == x86asm.LEAVE && in.OpSize != 8 {
			return false
		}
		t.spill()
		a.MovRM(8, as.RSI, gregN(from))
		t.load(8)
		t.commitRead()
		a.Lea(8, as.RSI, as.M(as.RSI, 8))
		a.MovMR(8, gregN(RSP), as.RSI)
		if in.Op == x86asm.LEAVE {
			a.MovMR(8, gregN(RBP), as.R9)
		} else {
			a.MovMR(8, greg(d), as.R9)
		}
		return true

	case x86asm.CMOVO, x86asm.CMOVNO, x86asm.CMOVB, x86asm.CMOVAE, x86asm.CMOVE, x86asm.CMOVNE, x86asm.CMOVBE, x86asm.CMOVA,
		x86asm.CMOVS, x86asm.CMOVNS, x86asm.CMOVP, x86asm.CMOVNP, x86asm.CMOVL, x86asm.CMOVGE, x86asm.CMOVLE, x86asm.CMOVG:
		if n != 2 || !isReg(d) || d.Size < 2 || !isReg(s) && s.Kind != KMem {
			return false
		}
		size := int(d.Size)
		if s.Kind == KMem {
			t.spill()
			t.ea(s)
			t.load(size)
			t.commitRead()
		} else {
			a.MovRM(wide(size), as.R9, greg(s))
		}
		t.hostFlags()
		a.MovRM(8, as.R8, greg(d))
		a.Cmov(jitCC[in.Op], size, as.R8, as.R9)
		a.MovMR(wide(size), greg(d), as.R8)
		return true

	case x86asm.SETO, x86asm.SETNO, x86asm.SETB, x86asm.SETAE, x86asm.SETE, x86asm.SETNE, x86asm.SETBE, x86asm.SETA,
		x86asm.SETS, x86asm.SETNS, x86asm.SETP, x86asm.SETNP, x86asm.SETL, x86asm.SETGE, x86asm.SETLE, x86asm.SETG:
		if n != 1 || d.Size != 1 {
			return false
		}
		cc := jitCC[in.Op]
		if isReg(d) {
			t.hostFlags()
			a.SetccM(cc, greg(d))
			return true
		}
		t.spill()
		t.ea(d)
		t.storeCheck(1, false)
		t.hostFlags()
		a.Setcc(cc, as.R8)
		t.store(1, as.R8)
		return true

	case x86asm.JMP:
		if n != 1 {
			return false
		}
		switch {
		case d.Kind == KRel:
			a.MovRI(as.RAX, d.Imm)
			a.MovMR(8, as.M(hCPU, offRIP), as.RAX)
		case isReg(d) && d.Size == 8:
			a.MovRM(8, as.RAX, greg(d))
			a.MovMR(8, as.M(hCPU, offRIP), as.RAX)
		case d.Kind == KMem && d.Size == 8:
			t.spill()
			t.ea(d)
			t.load(8)
			t.commitRead()
			a.MovMR(8, as.M(hCPU, offRIP), as.R9)
		default:
			return false
		}
		return true

	case x86asm.JO, x86asm.JNO, x86asm.JB, x86asm.JAE, x86asm.JE, x86asm.JNE, x86asm.JBE, x86asm.JA,
		x86asm.JS, x86asm.JNS, x86asm.JP, x86asm.JNP, x86asm.JL, x86asm.JGE, x86asm.JLE, x86asm.JG:
		if n != 1 || d.Kind != KRel || in.OpSize == 2 {
			return false
		}
		t.hostFlags()
		taken := a.NewLabel()
		t.exits = append(t.exits, jitExit{l: taken, k: t.k + 1, st: fsHost, taken: true, target: d.Imm})
		a.Jcc(jitCC[in.Op], taken)
		if t.k == len(t.b.Insts)-1 {
			a.MovRI(as.RAX, in.PC+uint64(in.Len))
			a.MovMR(8, as.M(hCPU, offRIP), as.RAX)
		}
		return true

	case x86asm.CALL:
		if n != 1 || in.OpSize == 2 {
			return false
		}
		switch {
		case d.Kind == KRel:
			a.MovRI(as.RCX, d.Imm)
		case isReg(d) && d.Size == 8:
			a.MovRM(8, as.RCX, greg(d))
		default:
			return false
		}
		t.spill()
		a.MovRM(8, as.RSI, gregN(RSP))
		a.Lea(8, as.RSI, as.M(as.RSI, -8))
		t.storeCheck(8, false)
		a.MovRI(as.R8, in.PC+uint64(in.Len))
		t.store(8, as.R8)
		a.MovMR(8, gregN(RSP), as.RSI)
		a.MovMR(8, as.M(hCPU, offRIP), as.RCX)
		return true

	case x86asm.RET:
		if n > 1 || n == 1 && d.Kind != KImm || in.OpSize == 2 {
			return false
		}
		t.spill()
		a.MovRM(8, as.RSI, gregN(RSP))
		t.load(8)
		t.commitRead()
		pop := int32(8)
		if n == 1 {
			pop += int32(uint16(d.Imm))
		}
		a.Lea(8, as.RSI, as.M(as.RSI, pop))
		a.MovMR(8, gregN(RSP), as.RSI)
		a.MovMR(8, as.M(hCPU, offRIP), as.R9)
		return true
	}
	return false
}

// writeBack stores r into operand d: a register, or memory whose checks
// storeCheck made (RDI, RBX).
func (t *jitT) writeBack(d *Operand, r as.Reg) {
	if d.Kind == KMem {
		t.store(int(d.Size), r)
	} else {
		t.a.MovMR(wide(int(d.Size)), greg(d), r)
	}
}

// alu translates the two-operand arithmetic instructions and test.
func (t *jitT) alu(in *Inst, d, s *Operand) {
	a := &t.a
	size := int(d.Size)
	test := in.Op == x86asm.TEST
	writes := !test && in.Op != x86asm.CMP
	// The destination's value goes to R8 (register) or R9 (memory), the
	// source's to R8's partner: RCX, R9 (memory) or an immediate.
	if d.Kind == KMem || s.Kind == KMem {
		m := d
		if s.Kind == KMem {
			m = s
		}
		t.spill()
		t.ea(m)
		t.load(size)
		if d.Kind == KMem && writes {
			t.storeCheck(size, true)
		}
		t.commitRead()
	}
	if in.Op == x86asm.ADC || in.Op == x86asm.SBB {
		t.hostFlags()
	}
	dst, src := as.R8, as.RCX
	if d.Kind == KMem {
		dst = as.R9
	} else {
		a.MovRM(wide(size), as.R8, greg(d))
	}
	switch s.Kind {
	case KMem:
		src = as.R9
	case KReg, KReg8H:
		a.MovRM(wide(size), as.RCX, greg(s))
	}
	switch {
	case test && s.Kind == KImm:
		a.TestRI(size, dst, int64(s.Imm))
	case test:
		a.TestRR(size, dst, src)
	case s.Kind == KImm:
		a.ALURI(jitALU[in.Op], size, dst, int64(s.Imm))
	default:
		a.ALURR(jitALU[in.Op], size, dst, src)
	}
	t.st = fsHost
	if writes {
		t.writeBack(d, dst)
	}
}

// shift translates shifts and rotates of a register by an immediate or CL.
func (t *jitT) shift(in *Inst, d, s *Operand, live uint64) bool {
	a := &t.a
	if in.NArgs != 2 || d.Kind != KReg || d.Size < 4 {
		return false
	}
	size := int(d.Size)
	op := jitShift[in.Op]
	rot := in.Op == x86asm.ROL || in.Op == x86asm.ROR
	undef := uint64(FlagAF | FlagOF)
	if rot {
		undef = FlagOF
	}
	var cnt uint64
	switch {
	case s.Kind == KImm:
		cnt = s.Imm & uint64(size*8-1)
		if cnt == 0 || rot && cnt != 1 && live&FlagOF != 0 {
			return false
		}
	case s.Kind == KReg && s.Reg == RCX && s.Size == 1:
		if live&undef != 0 {
			return false // the count may be 0 or not: no fixed fix-up
		}
	default:
		return false
	}
	a.MovRM(8, as.R8, greg(d))
	if s.Kind == KImm {
		if rot {
			t.hostFlags() // CF and OF only
		}
		a.ShiftRI(op, size, as.R8, uint8(cnt))
	} else {
		a.MovRM(8, as.RCX, gregN(RCX))
		t.hostFlags() // a count of 0 changes nothing
		a.ShiftRCL(op, size, as.R8)
	}
	t.st = fsHost
	if s.Kind == KImm && !rot && live&undef != 0 {
		// AF clear, and OF as the interpreter's shlOp/shrOp/sarOp have it.
		a.MovRI(as.RAX, 0)
		a.Lahf()
		switch {
		case in.Op == x86asm.SHR && cnt == 1:
			a.Setcc(0, as.RAX)
			a.ALURI(as.AND, 4, as.RAX, 0xef01)
		case in.Op == x86asm.SHR:
			a.ALURI(as.AND, 4, as.RAX, 0xef00)
			a.MovRR(8, as.RDX, as.R8)
			a.ShiftRI(as.SHR, 8, as.RDX, uint8(size*8-2))
			a.ALURI(as.AND, 4, as.RDX, 1)
			a.ALURR(as.OR, 4, as.RAX, as.RDX)
		case in.Op == x86asm.SHL: // OF = SF ^ CF
			a.ALURI(as.AND, 4, as.RAX, 0xef00)
			a.MovRR(4, as.RDX, as.RAX)
			a.ShiftRI(as.SHR, 4, as.RDX, 7)
			a.ALURR(as.XOR, 4, as.RDX, as.RAX)
			a.ShiftRI(as.SHR, 4, as.RDX, 8)
			a.ALURI(as.AND, 4, as.RDX, 1)
			a.ALURR(as.OR, 4, as.RAX, as.RDX)
		default: // SAR: OF clear
			a.ALURI(as.AND, 4, as.RAX, 0xef00)
		}
		a.MovRR(4, hFlags, as.RAX)
		t.st = fsSaved
	}
	a.MovMR(8, greg(d), as.R8)
	return true
}

// mulFlags sets the flags a multiply leaves undefined the interpreter's
// way (mulFlags in ops_muldiv.go: SF, ZF and PF of the low half lo, AF
// clear) when they can be seen. Clobbers RAX, RCX.
func (t *jitT) mulFlags(lo as.Reg, size int, live uint64) {
	if live&(FlagSF|FlagZF|FlagAF|FlagPF) == 0 {
		return
	}
	a := &t.a
	a.Setcc(0, as.RCX) // seto cl: CF = OF
	a.TestRR(size, lo, lo)
	a.MovRI(as.RAX, 0)
	a.Lahf()
	a.ALURI(as.AND, 4, as.RAX, (FlagSF|FlagZF|FlagPF)<<8)
	a.Movzx(4, 1, as.RCX, as.RCX)
	a.ALURR(as.OR, 4, as.RAX, as.RCX)
	a.ShiftRI(as.SHL, 4, as.RCX, 8)
	a.ALURR(as.OR, 4, as.RAX, as.RCX)
	a.MovRR(4, hFlags, as.RAX)
	t.st = fsSaved
}

// mul1 translates the one-operand mul and imul (RDX:RAX = RAX * r/m).
func (t *jitT) mul1(in *Inst, d *Operand, live uint64) bool {
	if in.NArgs != 1 || !isReg(d) && d.Kind != KMem {
		return false
	}
	a := &t.a
	size := int(d.Size)
	if d.Kind == KMem {
		t.spill()
		t.ea(d)
		t.load(size)
		t.commitRead()
	} else {
		a.MovRM(wide(size), as.R9, greg(d))
	}
	a.MovRM(8, as.RAX, gregN(RAX))
	if in.Op == x86asm.MUL {
		a.MulR(size, as.R9)
	} else {
		a.ImulR1(size, as.R9)
	}
	t.st = fsHost
	switch size {
	case 1:
		a.MovMR(2, gregN(RAX), as.RAX)
	default:
		a.MovMR(wide(size), gregN(RAX), as.RAX)
		a.MovMR(wide(size), gregN(RDX), as.RDX)
	}
	a.MovRR(8, as.R8, as.RAX)
	t.mulFlags(as.R8, size, live)
	return true
}
