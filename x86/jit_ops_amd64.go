package x86

import (
	"os"
	"strings"

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

// jitExtend is, for the accumulator's sign extensions, the host
// instruction, the register it writes and how many bytes to store of it.
var jitExtend = map[x86asm.Op]struct {
	emit func(*as.Asm)
	out  as.Reg
	size int
}{
	x86asm.CBW: {(*as.Asm).Cbw, as.RAX, 2}, x86asm.CWDE: {(*as.Asm).Cwde, as.RAX, 8},
	x86asm.CDQE: {(*as.Asm).Cdqe, as.RAX, 8}, x86asm.CWD: {(*as.Asm).Cwd, as.RDX, 2},
	x86asm.CDQ: {(*as.Asm).Cdq, as.RDX, 8}, x86asm.CQO: {(*as.Asm).Cqo, as.RDX, 8},
}

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
	if jitSkip[in.Op.String()] {
		return false
	}
	if in.Fn == nil {
		return false
	}
	if in.Op >= vexOpBase {
		return t.vex(in) // jit_avx_amd64.go
	}
	if in.Lock || isSync(in) {
		// A point of synchronisation: a key frame while recording
		// (syncPoint), nothing more while running (threads run one at
		// a time, so a read-modify-write is atomic as it is). A
		// replay's reader sees each (Observer.Sync): those stay with
		// the interpreter.
		if t.pred && !t.log {
			return false
		}
		t.syncPending = true
		ok := t.syncInst(in)
		if ok && t.syncPending {
			panic("jit: " + in.Op.String() + " translated without its key frame")
		}
		t.syncPending = false
		return ok
	}
	// (A rep prefix only matters to the string instructions, which are
	// not translated; F2 and F3 also select SSE instructions.)
	a := &t.a
	d, s := &in.Args[0], &in.Args[1]
	n := int(in.NArgs)
	for i := 0; i < n; i++ {
		switch in.Args[i].Kind {
		case KReg, KReg8H, KImm, KMem, KRel, KXMM:
		default:
			return false
		}
	}
	live := t.live[t.k]
	switch in.Op {
	case x86asm.NOP:
		return true

	case x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW:
		// Hints that never fault or read: nothing (opNop), as in the
		// interpreter.
		return true

	case x86asm.MOV:
		if n != 2 {
			return false
		}
		size := int(d.Size)
		switch {
		case isReg(d) && isReg(s) && t.isHost(d):
			h, _ := t.hostOf(d)
			a.MovRM(size, h, t.greg(s)) // a 32-bit move zero-extends
			t.wroteHost(h)
		case isReg(d) && s.Kind == KImm && size >= 4 && t.isHost(d):
			h, _ := t.hostOf(d)
			a.MovRI(h, s.Imm&sizeMask[size])
			t.wroteHost(h)
		case isReg(d) && isReg(s):
			a.MovRM(size, as.R8, t.greg(s)) // a 32-bit load zero-extends
			a.MovMR(wide(size), t.greg(d), as.R8)
		case isReg(d) && s.Kind == KImm:
			if size >= 4 {
				a.MovRI(as.R8, s.Imm&sizeMask[size])
				a.MovMR(8, t.greg(d), as.R8)
			} else {
				a.MovMI(size, t.greg(d), int64(s.Imm))
			}
		case isReg(d) && s.Kind == KMem:
			t.spill()
			t.eaAccess(s)
			if h, ok := t.hostOf(d); ok {
				// Straight into the host register (only `ttd run`
				// keeps guest registers there: no cache checks on R9).
				a.MovRM(size, h, t.tlbIndexed(false, size)) // a 32-bit load zero-extends, 8- and 16-bit ones merge
				t.wroteHost(h)
				return true
			}
			t.load(size)
			t.commitRead()
			a.MovMR(wide(size), t.greg(d), as.R9)
		case d.Kind == KMem && (isReg(s) || s.Kind == KImm):
			t.spill()
			t.eaAccess(d)
			if !t.pred {
				// `ttd run`: the store straight from the register or
				// of the immediate, through [RDI + address].
				h, host := t.hostOf(s)
				m := t.tlbIndexed(true, size)
				switch {
				case s.Kind == KImm && (size < 8 || int64(int32(s.Imm)) == int64(s.Imm)):
					a.MovMI(size, m, int64(s.Imm&sizeMask[size]))
				case s.Kind == KImm:
					a.MovRI(as.R8, s.Imm&sizeMask[size])
					a.MovMR(size, m, as.R8)
				case host:
					a.MovMR(size, m, h)
				default:
					a.MovRM(size, as.R8, t.greg(s))
					a.MovMR(size, m, as.R8)
				}
				return true
			}
			t.storeCheck(size, false)
			if s.Kind == KImm {
				a.MovRI(as.R8, s.Imm&sizeMask[size])
			} else {
				a.MovRM(size, as.R8, t.greg(s))
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
			t.loadRMW(size)
			t.syncPoint()
			t.commitRead()
			r = as.R9
		} else if h, ok := t.hostOf(d); ok {
			r = h
		} else {
			a.MovRM(wide(size), as.R8, t.greg(d))
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
		if d.Kind == KReg && r != as.R8 {
			t.wroteHost(r) // in its host register
		} else {
			t.writeBack(d, r)
		}
		return true

	case x86asm.LEA:
		if n != 2 || !isReg(d) || s.Kind != KMem || s.Seg != SegNone || d.Size < 2 {
			return false
		}
		if h, ok := t.hostOf(d); ok && d.Size >= 4 {
			if m, ok := t.hostEA(s); ok {
				a.Lea(int(d.Size), h, m) // a 32-bit lea zero-extends
				t.wroteHost(h)
				return true
			}
		}
		t.ea(s)
		if d.Size == 4 {
			a.MovRR(4, as.RSI, as.RSI)
		}
		a.MovMR(wide(int(d.Size)), t.greg(d), as.RSI)
		return true

	case x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD:
		if n != 2 || !isReg(d) || d.Size < 2 || !isReg(s) && s.Kind != KMem {
			return false
		}
		dsz, ssz := int(d.Size), int(s.Size)
		if in.Op == x86asm.MOVSXD && (dsz != 8 || ssz != 4) || in.Op != x86asm.MOVSXD && ssz > 2 || ssz >= dsz {
			return false
		}
		if h, ok := t.hostOf(d); ok {
			// Straight into the host register, from memory or the
			// source's place (only `ttd run` keeps guest registers in
			// host registers: no cache checks on R9).
			m := t.greg(s)
			if s.Kind == KMem {
				t.spill()
				t.eaAccess(s)
				m = t.tlbIndexed(false, ssz)
			}
			if in.Op == x86asm.MOVZX {
				a.MovzxM(dsz, ssz, h, m)
			} else {
				a.MovsxM(dsz, ssz, h, m)
			}
			t.wroteHost(h)
			return true
		}
		src := as.R9
		if s.Kind == KMem {
			t.spill()
			t.ea(s)
			t.load(ssz)
			t.commitRead()
		} else {
			a.MovRM(wide(ssz), as.R9, t.greg(s))
		}
		if in.Op == x86asm.MOVZX {
			a.Movzx(max(dsz, 4), ssz, as.R8, src)
		} else {
			a.Movsx(max(dsz, 4), ssz, as.R8, src)
		}
		a.MovMR(wide(dsz), t.greg(d), as.R8)
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
			a.MovRM(wide(size), as.RCX, t.greg(s))
		}
		if n == 3 {
			a.ImulRRI(size, as.R8, src, int32(in.Args[2].Imm))
		} else {
			a.MovRM(wide(size), as.R8, t.greg(d))
			a.ImulRR(size, as.R8, src)
		}
		t.st = fsHost
		t.mulFlags(as.R8, size, live)
		a.MovMR(wide(size), t.greg(d), as.R8)
		return true

	case x86asm.MUL:
		return t.mul1(in, d, live)

	case x86asm.DIV:
		return t.div(in, d)

	case x86asm.IDIV:
		return t.idiv(in, d)

	case x86asm.BSF, x86asm.BSR, x86asm.TZCNT, x86asm.POPCNT:
		return t.bitScan(in, d, s)

	case x86asm.BT, x86asm.BTS, x86asm.BTR, x86asm.BTC:
		return t.bitTest(in, d, s)

	case x86asm.BSWAP:
		if !isReg(d) || d.Size < 4 {
			return false
		}
		a.MovRM(8, as.R8, t.greg(d))
		a.Bswap(int(d.Size), as.R8)
		a.MovMR(8, t.greg(d), as.R8)
		return true

	case x86asm.CBW, x86asm.CWDE, x86asm.CDQE, x86asm.CWD, x86asm.CDQ, x86asm.CQO:
		// The host instruction itself on the guest's RAX, storing what
		// it writes: AX, EAX (zero-extended) or RAX; DX, EDX or RDX.
		e := jitExtend[in.Op]
		a.MovRM(8, as.RAX, t.gregN(RAX))
		e.emit(a)
		a.MovMR(e.size, t.gregN(uint8(e.out)), e.out)
		return true

	case x86asm.XCHG:
		if n != 2 || !isReg(d) || !isReg(s) {
			return false
		}
		size := int(d.Size)
		a.MovRM(8, as.R8, t.greg(d))
		a.MovRM(8, as.RCX, t.greg(s))
		a.XchgRR(size, as.R8, as.RCX)
		a.MovMR(wide(size), t.greg(d), as.R8)
		a.MovMR(wide(size), t.greg(s), as.RCX)
		return true

	case x86asm.PUSH:
		// (x86asm reports the 64-bit forms' operand size as 32 bits.)
		if in.OpSize == 2 || n != 1 || !isReg(d) && d.Kind != KImm || isReg(d) && d.Size != 8 {
			return false
		}
		if d.Kind == KImm {
			a.MovRI(as.R8, d.Imm)
		} else {
			a.MovRM(8, as.R8, t.greg(d))
		}
		t.spill()
		a.MovRM(8, as.RSI, t.gregN(RSP))
		a.Lea(8, as.RSI, as.M(as.RSI, -8))
		t.storeCheck(8, false)
		t.store(8, as.R8)
		a.MovMR(8, t.gregN(RSP), as.RSI)
		return true

	case x86asm.POP, x86asm.LEAVE:
		from := uint8(RSP)
		if in.Op == x86asm.LEAVE {
			from = RBP
		} else if n != 1 || !isReg(d) || d.Size != 8 {
			return false
		}
		if in.OpSize == 2 {
			return false
		}
		t.spill()
		a.MovRM(8, as.RSI, t.gregN(from))
		t.load(8)
		t.commitRead()
		a.Lea(8, as.RSI, as.M(as.RSI, 8))
		a.MovMR(8, t.gregN(RSP), as.RSI)
		if in.Op == x86asm.LEAVE {
			a.MovMR(8, t.gregN(RBP), as.R9)
		} else {
			a.MovMR(8, t.greg(d), as.R9)
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
			a.MovRM(wide(size), as.R9, t.greg(s))
		}
		t.hostFlags()
		a.MovRM(8, as.R8, t.greg(d))
		a.Cmov(jitCC[in.Op], size, as.R8, as.R9)
		a.MovMR(wide(size), t.greg(d), as.R8)
		return true

	case x86asm.SETO, x86asm.SETNO, x86asm.SETB, x86asm.SETAE, x86asm.SETE, x86asm.SETNE, x86asm.SETBE, x86asm.SETA,
		x86asm.SETS, x86asm.SETNS, x86asm.SETP, x86asm.SETNP, x86asm.SETL, x86asm.SETGE, x86asm.SETLE, x86asm.SETG:
		if n != 1 || d.Size != 1 {
			return false
		}
		cc := jitCC[in.Op]
		if isReg(d) {
			t.hostFlags()
			a.SetccM(cc, t.greg(d))
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
		case d.Kind == KRel && t.ripOutOfLine():
			// The block ends here and chains (chain sets RIP).
		case d.Kind == KRel:
			a.MovRI(as.RAX, d.Imm)
			a.MovMR(8, as.M(hCPU, offRIP), as.RAX)
		case isReg(d) && d.Size == 8:
			a.MovRM(8, as.RAX, t.greg(d))
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
		t.exits = append(t.exits, jitExit{l: taken, k: t.k + 1, st: fsHost, taken: true, target: d.Imm, reads: t.sreads, regs: t.regs})
		a.Jcc(jitCC[in.Op], taken)
		if t.k == len(t.b.Insts)-1 && !t.ripOutOfLine() {
			a.MovRI(as.RAX, in.PC+uint64(in.Len))
			a.MovMR(8, as.M(hCPU, offRIP), as.RAX)
		}
		return true

	case x86asm.CALL:
		if n != 1 || in.OpSize == 2 {
			return false
		}
		switch {
		case d.Kind == KRel && t.ripOutOfLine():
			// The block ends here and chains (chain sets RIP).
		case d.Kind == KRel:
			a.MovRI(as.RCX, d.Imm)
		case isReg(d) && d.Size == 8:
			a.MovRM(8, as.RCX, t.greg(d))
		case d.Kind == KMem && d.Size == 8:
			// call [mem]: through a table of functions or the GOT.
			t.spill()
			t.ea(d)
			t.load(8)
			a.MovRR(8, as.RCX, as.R9)
		default:
			return false
		}
		t.spill()
		a.MovRM(8, as.RSI, t.gregN(RSP))
		a.Lea(8, as.RSI, as.M(as.RSI, -8))
		t.storeCheck(8, false)
		t.commitRead()
		a.MovRI(as.R8, in.PC+uint64(in.Len))
		t.store(8, as.R8)
		a.MovMR(8, t.gregN(RSP), as.RSI)
		if d.Kind != KRel || !t.ripOutOfLine() {
			a.MovMR(8, as.M(hCPU, offRIP), as.RCX)
		}
		return true

	case x86asm.RET:
		if n > 1 || n == 1 && d.Kind != KImm || in.OpSize == 2 {
			return false
		}
		t.spill()
		a.MovRM(8, as.RSI, t.gregN(RSP))
		t.load(8)
		t.commitRead()
		pop := int32(8)
		if n == 1 {
			pop += int32(uint16(d.Imm))
		}
		a.Lea(8, as.RSI, as.M(as.RSI, pop))
		a.MovMR(8, t.gregN(RSP), as.RSI)
		a.MovMR(8, as.M(hCPU, offRIP), as.R9)
		return true
	}
	return t.sse(in, d, s)
}

// writeBack stores r into operand d: a register, or memory whose checks
// storeCheck made (RDI, RBX).
func (t *jitT) writeBack(d *Operand, r as.Reg) {
	if d.Kind == KMem {
		t.store(int(d.Size), r)
	} else {
		t.a.MovMR(wide(int(d.Size)), t.greg(d), r)
	}
}

// alu translates the two-operand arithmetic instructions and test.
func (t *jitT) alu(in *Inst, d, s *Operand) {
	a := &t.a
	size := int(d.Size)
	test := in.Op == x86asm.TEST
	writes := !test && in.Op != x86asm.CMP
	if !t.pred && (s.Kind == KMem || d.Kind == KMem && !writes) {
		t.aluLoadOp(in, d, s)
		return
	}
	// The destination's value goes to R8 (register) or R9 (memory), the
	// source's to R8's partner: RCX, R9 (memory) or an immediate.
	if d.Kind == KMem || s.Kind == KMem {
		m := d
		if s.Kind == KMem {
			m = s
		}
		t.spill()
		t.eaAccess(m)
		if d.Kind == KMem && writes {
			t.loadRMW(size)
		} else {
			t.load(size)
		}
		t.syncPoint()
		t.commitRead()
	}
	if in.Op == x86asm.ADC || in.Op == x86asm.SBB {
		t.hostFlags()
	}
	if h, ok := t.hostOf(d); ok {
		// The destination in its host register: the operation itself
		// (a 32-bit result zero-extends).
		op := jitALU[in.Op]
		switch {
		case s.Kind == KImm && test:
			a.TestRI(size, h, int64(s.Imm))
		case s.Kind == KImm:
			a.ALURI(op, size, h, int64(s.Imm))
		case s.Kind == KReg && !test && !t.isHost(s):
			a.ALURM(op, size, h, t.greg(s)) // the source in the CPU
		default:
			src := as.R9 // KMem, loaded
			if hs, ok := t.hostOf(s); ok {
				src = hs
			} else if s.Kind != KMem {
				a.MovRM(wide(size), as.RCX, t.greg(s))
				src = as.RCX
			}
			if test {
				a.TestRR(size, h, src)
			} else {
				a.ALURR(op, size, h, src)
			}
		}
		t.st = fsHost
		if writes {
			t.wroteHost(h)
		}
		return
	}
	dst, src := as.R8, as.RCX
	if d.Kind == KMem {
		dst = as.R9
	} else {
		a.MovRM(wide(size), as.R8, t.greg(d))
	}
	switch s.Kind {
	case KMem:
		src = as.R9
	case KReg, KReg8H:
		a.MovRM(wide(size), as.RCX, t.greg(s))
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

// aluLoadOp translates, in `ttd run`'s translations (no cache checks on
// R9), an ALU instruction that reads memory and does not write it as
// one host instruction with the memory operand: "op reg, [RDI]", or cmp
// and test of memory with a register or an immediate, instead of a load
// into R9 and the register form.
func (t *jitT) aluLoadOp(in *Inst, d, s *Operand) {
	a := &t.a
	size := int(d.Size)
	test := in.Op == x86asm.TEST
	m := s
	if d.Kind == KMem {
		m = d
	}
	t.spill()
	t.eaAccess(m)
	mem := t.tlbIndexed(false, size)
	if in.Op == x86asm.ADC || in.Op == x86asm.SBB {
		t.hostFlags() // clobbers RAX and RDX, not RDI
	}
	t.st = fsHost
	if d.Kind == KMem { // cmp or test
		switch {
		case s.Kind == KImm && test:
			a.TestMI(size, mem, int64(s.Imm))
		case s.Kind == KImm:
			a.ALUMI(jitALU[in.Op], size, mem, int64(s.Imm))
		default:
			src, ok := t.hostOf(s)
			if !ok {
				a.MovRM(wide(size), as.RCX, t.greg(s))
				src = as.RCX
			}
			if test {
				a.TestMR(size, mem, src)
			} else {
				a.ALUMR(jitALU[in.Op], size, mem, src)
			}
		}
		return
	}
	dst, host := t.hostOf(d)
	if !host {
		dst = as.R8
		a.MovRM(wide(size), as.R8, t.greg(d))
	}
	if test {
		a.TestMR(size, mem, dst)
	} else {
		a.ALURM(jitALU[in.Op], size, dst, mem)
	}
	switch {
	case in.Op == x86asm.CMP || test:
	case host:
		t.wroteHost(dst)
	default:
		t.a.MovMR(wide(size), t.greg(d), as.R8)
	}
}

// shift translates shifts and rotates of a register by an immediate or CL.
// Where the flags the hardware leaves undefined can be seen, they are set
// as the interpreter's opShift sets them, for any count from 1 up:
//   - shl: AF clear, OF = SF ^ CF;
//   - shr: AF clear, OF = bit n-2 of the result (the top bit of the
//     value for a count of 1);
//   - sar: AF and OF clear;
//   - rol: OF = top bit ^ bottom bit of the result;
//   - ror: OF = top bit ^ next bit of the result.
//
// A memory destination (python's dict probe: shr [rsp+8], 5) is loaded
// into R8 and stored back, except by CL in 8- and 16-bit operands; a
// count of 0 in CL stores nothing, as in the interpreter.
func (t *jitT) shift(in *Inst, d, s *Operand, live uint64) bool {
	a := &t.a
	mem := d.Kind == KMem
	if in.NArgs != 2 || !isReg(d) && !mem {
		return false
	}
	size := int(d.Size)
	// The hardware masks the count to 5 bits (6 for 64-bit operands);
	// for 8- and 16-bit operands what is left may still reach past the
	// operand, where flags differ: those stay with the interpreter.
	cmask := uint64(31)
	if size == 8 {
		cmask = 63
	}
	op := jitShift[in.Op]
	rot := in.Op == x86asm.ROL || in.Op == x86asm.ROR
	fix := live&(FlagAF|FlagOF) != 0
	if rot {
		fix = live&FlagOF != 0
	}
	cl := false
	var cnt uint64
	switch {
	case s.Kind == KImm:
		cnt = s.Imm & cmask
		if cnt == 0 || cnt >= uint64(size*8) {
			return false
		}
	case s.Kind == KReg && s.Reg == RCX && s.Size == 1:
		cl = true
	default:
		return false
	}
	if mem {
		if cl && size < 4 {
			return false
		}
		t.spill()
		t.ea(d)
		t.loadRMW(size)
		t.commitRead()
	}
	if cl && size < 4 {
		t.spill()
		a.MovRM(4, as.RCX, t.gregN(RCX))
		a.ALURI(as.AND, 4, as.RCX, 31)
		a.ALURI(as.CMP, 4, as.RCX, int64(size*8))
		a.Jcc(3, t.exit()) // jae: a count past the operand
	}
	if h, ok := t.hostOf(d); ok && !mem && !cl && !fix {
		// In its host register (a 32-bit result zero-extends).
		if rot {
			t.hostFlags() // rotates keep SF ZF AF PF
		}
		a.ShiftRI(op, size, h, uint8(cnt))
		t.st = fsHost
		t.wroteHost(h)
		return true
	}
	skip := a.NewLabel()
	// A count of 0 in CL changes nothing (and stores nothing), so both
	// ways must leave the flags in the same place: hFlags.
	zero := cl && (fix || mem)
	if zero {
		t.spill()
	}
	// A 32-bit destination is zero-extended even by a count of 0.
	if mem {
		a.MovRR(8, as.R8, as.R9)
	} else {
		a.MovRM(size, as.R8, t.greg(d))
	}
	if cl {
		a.MovRM(8, as.RCX, t.gregN(RCX))
	}
	if zero {
		a.TestRI(4, as.RCX, int64(size*8-1))
		a.Jcc(4, skip) // jz
	}
	if rot || cl && !fix {
		t.hostFlags() // rotates keep SF ZF AF PF; a count of 0 keeps all
	}
	if cl {
		a.ShiftRCL(op, size, as.R8)
	} else {
		a.ShiftRI(op, size, as.R8, uint8(cnt))
	}
	t.st = fsHost
	if fix {
		t.shiftFlags(in.Op, size)
	}
	if mem {
		t.store(size, as.R8)
		if zero {
			t.spill()
		}
		a.Bind(skip)
		return true
	}
	a.Bind(skip)
	a.MovMR(wide(size), t.greg(d), as.R8)
	return true
}

// shiftFlags sets OF and AF after a shift or rotate of R8 by a non-zero
// count as shift's comment says, leaving the flags in hFlags.
func (t *jitT) shiftFlags(op x86asm.Op, size int) {
	a := &t.a
	n := uint8(size * 8)
	a.MovRI(as.RAX, 0)
	a.Lahf()
	if op == x86asm.ROL || op == x86asm.ROR {
		a.ALURI(as.AND, 4, as.RAX, 0xff00) // rotates keep AF
	} else {
		a.ALURI(as.AND, 4, as.RAX, 0xef00)
	}
	a.MovRR(8, as.RDX, as.R8)
	switch op {
	case x86asm.SHL: // OF = SF ^ CF
		a.MovRR(4, as.RDX, as.RAX)
		a.ShiftRI(as.SHR, 4, as.RDX, 7)
		a.ALURR(as.XOR, 4, as.RDX, as.RAX)
		a.ShiftRI(as.SHR, 4, as.RDX, 8)
	case x86asm.SHR:
		a.ShiftRI(as.SHR, 8, as.RDX, n-2)
	case x86asm.SAR:
		a.MovRI(as.RDX, 0)
	case x86asm.ROL:
		a.ShiftRI(as.SHR, 8, as.RDX, n-1)
		a.ALURR(as.XOR, 4, as.RDX, as.R8)
	case x86asm.ROR:
		a.ShiftRI(as.SHR, 8, as.RDX, n-2)
		a.MovRR(4, as.RCX, as.RDX)
		a.ShiftRI(as.SHR, 4, as.RCX, 1)
		a.ALURR(as.XOR, 4, as.RDX, as.RCX)
	}
	a.ALURI(as.AND, 4, as.RDX, 1)
	a.ALURR(as.OR, 4, as.RAX, as.RDX)
	a.MovRR(4, hFlags, as.RAX)
	t.st = fsSaved
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
		a.MovRM(wide(size), as.R9, t.greg(d))
	}
	a.MovRM(8, as.RAX, t.gregN(RAX))
	if in.Op == x86asm.MUL {
		a.MulR(size, as.R9)
	} else {
		a.ImulR1(size, as.R9)
	}
	t.st = fsHost
	switch size {
	case 1:
		a.MovMR(2, t.gregN(RAX), as.RAX)
	default:
		a.MovMR(wide(size), t.gregN(RAX), as.RAX)
		a.MovMR(wide(size), t.gregN(RDX), as.RDX)
	}
	a.MovRR(8, as.R8, as.RAX)
	t.mulFlags(as.R8, size, live)
	return true
}

// keepFlags makes hFlags hold the guest flags before an instruction that
// changes only some of them (mergeFlags then puts those in).
func (t *jitT) keepFlags() { t.spill() }

// mergeFlags puts the host's flags in mask (not OF) into hFlags.
func (t *jitT) mergeFlags(mask uint64) {
	a := &t.a
	a.MovRI(as.RAX, 0)
	a.Lahf()
	a.ALURI(as.AND, 4, as.RAX, int64(mask<<8))
	a.ALURI(as.AND, 4, hFlags, int64(^(mask << 8)))
	a.ALURR(as.OR, 4, hFlags, as.RAX)
	t.st = fsSaved
}

// srcToR9 loads a register or memory source operand into R9.
func (t *jitT) srcToR9(s *Operand) {
	if s.Kind == KMem {
		t.ea(s)
		t.load(int(s.Size))
		return
	}
	t.a.MovRM(wide(int(s.Size)), as.R9, t.greg(s))
}

// div translates unsigned division of RDX:RAX (32 or 64 bits). A divisor
// of 0 or a quotient too big for RAX leaves for the interpreter, which
// raises #DE. The interpreter leaves the flags alone; so does this.
func (t *jitT) div(in *Inst, d *Operand) bool {
	if in.NArgs != 1 || d.Size < 4 || !isReg(d) && d.Kind != KMem {
		return false
	}
	a := &t.a
	size := int(d.Size)
	t.spill()
	t.srcToR9(d)
	a.MovRM(size, as.RAX, t.gregN(RAX))
	a.MovRM(size, as.RDX, t.gregN(RDX))
	a.ALURR(as.CMP, size, as.RDX, as.R9)
	a.Jcc(3, t.exit()) // jae: #DE
	t.commitRead()
	a.DivR(size, as.R9)
	a.MovMR(8, t.gregN(RAX), as.RAX)
	a.MovMR(8, t.gregN(RDX), as.RDX)
	return true
}

// idiv translates signed division of EDX:EAX or RDX:RAX. Only what the
// host divides without a fault runs here: a divisor of 0, of -1, a
// 64-bit dividend that RDX does not merely sign-extend, or a quotient too
// big for EAX leave for the interpreter (which raises #DE when it must).
// The 32-bit form divides in 64 bits, so the host never faults. The flags
// stay as they were, as the interpreter leaves them.
func (t *jitT) idiv(in *Inst, d *Operand) bool {
	if in.NArgs != 1 || d.Size < 4 || !isReg(d) && d.Kind != KMem {
		return false
	}
	a := &t.a
	size := int(d.Size)
	t.spill()
	t.srcToR9(d)
	x := t.exit()
	if size == 4 {
		a.Movsx(8, 4, as.R9, as.R9)
	}
	a.ALURI(as.CMP, 8, as.R9, -1)
	a.Jcc(4, x) // je: -1 (and the 64-bit overflow)
	a.TestRR(8, as.R9, as.R9)
	a.Jcc(4, x) // jz: #DE
	if size == 4 {
		a.MovRM(4, as.RAX, t.gregN(RAX))
		a.MovRM(4, as.RDX, t.gregN(RDX))
		a.ShiftRI(as.SHL, 8, as.RDX, 32)
		a.ALURR(as.OR, 8, as.RAX, as.RDX)
		a.Cqo()
		a.IdivR(8, as.R9)
		a.Movsx(8, 4, as.RCX, as.RAX)
		a.ALURR(as.CMP, 8, as.RCX, as.RAX)
		a.Jcc(5, x) // jne: the quotient does not fit: #DE
		a.MovRR(4, as.RAX, as.RAX)
		a.MovRR(4, as.RDX, as.RDX)
	} else {
		a.MovRM(8, as.RAX, t.gregN(RAX))
		a.MovRM(8, as.RDX, t.gregN(RDX))
		a.MovRR(8, as.RCX, as.RAX)
		a.ShiftRI(as.SAR, 8, as.RCX, 63)
		a.ALURR(as.CMP, 8, as.RCX, as.RDX)
		a.Jcc(5, x) // jne: a 128-bit dividend
		a.IdivR(8, as.R9)
	}
	t.commitRead()
	a.MovMR(8, t.gregN(RAX), as.RAX)
	a.MovMR(8, t.gregN(RDX), as.RDX)
	return true
}

// bitScan translates bsf, bsr, tzcnt and popcnt into a register, with the
// interpreter's flags: bsf and bsr set ZF only (and leave the destination
// alone for a source of 0), tzcnt CF and ZF, popcnt all six (ZF for a
// source of 0, the rest clear, as the hardware does).
func (t *jitT) bitScan(in *Inst, d, s *Operand) bool {
	if in.NArgs != 2 || !isReg(d) || d.Size < 2 || !isReg(s) && s.Kind != KMem ||
		in.Op == x86asm.TZCNT && !jitBMI1 || in.Op == x86asm.POPCNT && !jitPOPCNT {
		return false
	}
	a := &t.a
	size := int(d.Size)
	if in.Op != x86asm.POPCNT {
		t.keepFlags()
	} else {
		t.spill()
	}
	t.srcToR9(s)
	t.commitRead()
	switch in.Op {
	case x86asm.BSF, x86asm.BSR:
		zero, done := a.NewLabel(), a.NewLabel()
		a.TestRR(size, as.R9, as.R9)
		a.Jcc(4, zero)
		if in.Op == x86asm.BSF {
			a.Bsf(size, as.R8, as.R9)
		} else {
			a.Bsr(size, as.R8, as.R9)
		}
		a.MovMR(wide(size), t.greg(d), as.R8)
		a.ALURI(as.AND, 4, hFlags, ^int64(FlagZF<<8))
		a.Jmp(done)
		a.Bind(zero)
		a.ALURI(as.OR, 4, hFlags, FlagZF<<8)
		a.Bind(done)
	case x86asm.TZCNT:
		a.Tzcnt(size, as.R8, as.R9)
		t.mergeFlags(FlagCF | FlagZF)
		a.MovMR(wide(size), t.greg(d), as.R8)
	case x86asm.POPCNT:
		a.Popcnt(size, as.R8, as.R9)
		t.st = fsHost
		a.MovMR(wide(size), t.greg(d), as.R8)
	}
	return true
}

// jitBitOps are the host forms of bt, bts, btr and btc: by an immediate
// and by a register.
var jitBitOps = map[x86asm.Op]struct {
	ri func(*as.Asm, int, as.Reg, uint8)
	rr func(*as.Asm, int, as.Reg, as.Reg)
}{
	x86asm.BT:  {(*as.Asm).BtRI, (*as.Asm).BtRR},
	x86asm.BTS: {(*as.Asm).BtsRI, (*as.Asm).BtsRR},
	x86asm.BTR: {(*as.Asm).BtrRI, (*as.Asm).BtrRR},
	x86asm.BTC: {(*as.Asm).BtcRI, (*as.Asm).BtcRR},
}

// bitTest translates bt, bts, btr and btc of a register by an immediate or
// a register: CF is the bit, the other flags stay (the interpreter's way).
func (t *jitT) bitTest(in *Inst, d, s *Operand) bool {
	if in.NArgs != 2 || d.Kind != KReg || d.Size < 2 || s.Kind != KImm && s.Kind != KReg {
		return false
	}
	a := &t.a
	size := int(d.Size)
	t.keepFlags()
	a.MovRM(size, as.R8, t.greg(d))
	if s.Kind == KReg {
		a.MovRM(8, as.RCX, t.greg(s))
	}
	e := jitBitOps[in.Op]
	if s.Kind == KImm {
		e.ri(a, size, as.R8, uint8(s.Imm))
	} else {
		e.rr(a, size, as.R8, as.RCX)
	}
	t.mergeFlags(FlagCF)
	if in.Op != x86asm.BT {
		a.MovMR(wide(size), t.greg(d), as.R8)
	}
	return true
}

// jitSkip lists the instructions (x86asm names) that TTD_JITSKIP=OP,OP…
// keeps out of translations: for finding which translation is at fault
// when a program behaves differently with TTD_JIT=off.
var jitSkip = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Split(os.Getenv("TTD_JITSKIP"), ",") {
		m[f] = true
	}
	return m
}()

// syncInst translates the synchronising instructions: locked
// read-modify-writes of memory, xchg, xadd, cmpxchg and the fences.
func (t *jitT) syncInst(in *Inst) bool {
	a := &t.a
	d, s := &in.Args[0], &in.Args[1]
	switch in.Op {
	case x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE:
		t.spill()
		t.syncPoint()
		return true
	case x86asm.ADD, x86asm.OR, x86asm.ADC, x86asm.SBB, x86asm.AND, x86asm.SUB, x86asm.XOR,
		x86asm.INC, x86asm.DEC, x86asm.NEG, x86asm.NOT:
		if d.Kind != KMem {
			return false
		}
		in2 := *in
		in2.Lock = false
		return t.inst(&in2)
	case x86asm.XCHG, x86asm.XADD, x86asm.CMPXCHG:
	default:
		return false
	}
	if in.NArgs != 2 {
		return false
	}
	m, r := d, s // the destination (memory or register), the source register
	if in.Op == x86asm.XCHG && s.Kind == KMem {
		m, r = s, d
	}
	if r.Kind != KReg || m.Kind != KMem && m.Kind != KReg || m.Size < 2 && in.Op != x86asm.XCHG {
		return false
	}
	size := int(m.Size)
	t.spill()
	v := as.R9 // the destination's value
	if m.Kind == KMem {
		t.ea(m)
		t.loadRMW(size)
	}
	t.syncPoint()
	t.commitRead()
	if m.Kind == KReg {
		a.MovRM(8, as.R9, t.greg(m))
	}
	a.MovRM(8, as.R8, t.greg(r))
	switch in.Op {
	case x86asm.XCHG: // m = r, r = old m
		a.MovRR(8, as.RCX, v)
		a.MovRR(8, v, as.R8)
		a.MovRR(8, as.R8, as.RCX)
	case x86asm.XADD: // m = m + r, r = old m (flags of the add)
		a.MovRR(8, as.RCX, v)
		a.ALURR(as.ADD, size, v, as.R8)
		a.MovRR(size, as.R8, as.RCX) // a 32-bit write zero-extends
		t.st = fsHost
	case x86asm.CMPXCHG:
		a.MovRM(8, as.RAX, t.gregN(RAX))
		a.CmpxchgRR(size, v, as.R8)
		a.MovMR(8, t.gregN(RAX), as.RAX)
		t.st = fsHost
	}
	if m.Kind == KMem {
		t.store(size, v)
	} else {
		a.MovMR(wide(size), t.greg(m), v)
	}
	if in.Op != x86asm.CMPXCHG && (m.Kind == KMem || m.Reg != r.Reg) {
		a.MovMR(wide(size), t.greg(r), as.R8)
	}
	return true
}

// syncPoint logs the key frame of a synchronising instruction, while
// recording, after its last check and before any of its effects: an
// entry of CPU.jitLog with Size 0, Reads the CPU's count of retired
// instructions there and Val the key frame's kind (ReadLogger).
func (t *jitT) syncPoint() {
	if !t.syncPending {
		return
	}
	t.syncPending = false
	if !t.log {
		return
	}
	a := &t.a
	kind := int64(LogLocked)
	switch t.b.Insts[t.k].Op {
	case x86asm.MFENCE, x86asm.LFENCE, x86asm.SFENCE:
		kind = LogFence
	}
	t.logEntry(t.exit())
	t.retiredBefore(as.RCX)
	a.ALURM(as.ADD, 8, as.RCX, as.M(hCPU, offIcount))
	a.ALURI(as.ADD, 8, as.RCX, int64(t.k))
	a.MovMR(8, as.M(as.RAX, 0), as.RCX)
	a.MovMI(8, as.M(as.RAX, 8), kind)
	a.MovMI(8, as.M(as.RAX, 16), 0)
}
