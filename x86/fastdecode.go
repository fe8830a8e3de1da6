package x86

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"
)

// The fast decoder: the instruction forms compilers emit most (mov, lea,
// the ALU ops, test, push and pop, jcc, call, jmp, ret, movzx and movsx,
// the shifts, setcc, cmovcc, imul, the group-3 and group-5 ops) decoded
// straight into an Inst, without x86asm's table walk and the allocations
// of its operand interfaces (about 340 ns an instruction; start-up of a
// program like python3 decodes 240,000 of them). Anything else — other
// prefixes (lock, rep, segment, address size), SSE, x87, VEX, an
// instruction cut short by the end of code — it defers to x86asm.
//
// It must produce exactly the Inst the x86asm path does (decodeInto):
// TestFastDecodeMatches compares both on every byte offset of the corpus
// binaries and FuzzFastDecode on random bytes.

// Fast-decoder operand forms.
const (
	fNone   uint8 = iota
	fEG           // r/m, reg (ModRM)
	fGE           // reg, r/m
	fAccI         // AL/eAX, imm
	fEI           // r/m, imm (size of the operation, imm8 for byte ops)
	fEIb          // r/m, imm8 sign-extended (83, 6B's immediate)
	fE            // r/m alone
	fE1           // r/m, 1 (D0, D1)
	fECL          // r/m, CL (D2, D3)
	fGEIb         // reg, r/m, imm8 (6B)
	fGEIz         // reg, r/m, imm32/16 (69)
	fOReg         // register in the opcode's low bits (push, pop)
	fOImm         // register in the opcode's low bits, imm (B0-BF)
	fRel8         // rel8
	fRel32        // rel32
	fNoArgs       // ret, nop, leave, cdq…
	fGM           // reg, memory only (lea)
	fImm          // push imm
)

// fastEntry describes one opcode: its mnemonic (or, for groups, the
// table of mnemonics by ModRM.reg), operand form, the size of its byte
// operand (1 for the byte forms), and whether a 66 prefix may come with
// it.
type fastEntry struct {
	op     x86asm.Op
	group  *[8]x86asm.Op
	form   uint8
	byteOp bool // operates on bytes (the r/m8 forms)
	o16    bool // a 66 prefix is an operand-size override here
	imm8u  bool // its imm8 is unsigned (x86asm's Imm8u)
	memOK  bool // r/m may be memory
	regOK  bool // r/m may be a register
	fixed  uint8
	movx   uint8 // movzx/movsx: size of the source (1 or 2), movsxd 4
}

var (
	grp1 = [8]x86asm.Op{x86asm.ADD, x86asm.OR, x86asm.ADC, x86asm.SBB, x86asm.AND, x86asm.SUB, x86asm.XOR, x86asm.CMP}
	grp2 = [8]x86asm.Op{x86asm.ROL, x86asm.ROR, x86asm.RCL, x86asm.RCR, x86asm.SHL, x86asm.SHR, 0, x86asm.SAR}
	grp3 = [8]x86asm.Op{x86asm.TEST, 0, x86asm.NOT, x86asm.NEG, x86asm.MUL, x86asm.IMUL, x86asm.DIV, x86asm.IDIV}
	grp4 = [8]x86asm.Op{x86asm.INC, x86asm.DEC}
	grp5 = [8]x86asm.Op{x86asm.INC, x86asm.DEC, x86asm.CALL, 0, x86asm.JMP, 0, x86asm.PUSH}
	grpC = [8]x86asm.Op{x86asm.MOV} // C6, C7
	// jcc by condition code (70-7F, 0F 80-8F).
	jccOps = [16]x86asm.Op{x86asm.JO, x86asm.JNO, x86asm.JB, x86asm.JAE, x86asm.JE, x86asm.JNE, x86asm.JBE, x86asm.JA,
		x86asm.JS, x86asm.JNS, x86asm.JP, x86asm.JNP, x86asm.JL, x86asm.JGE, x86asm.JLE, x86asm.JG}
	setOps = [16]x86asm.Op{x86asm.SETO, x86asm.SETNO, x86asm.SETB, x86asm.SETAE, x86asm.SETE, x86asm.SETNE, x86asm.SETBE, x86asm.SETA,
		x86asm.SETS, x86asm.SETNS, x86asm.SETP, x86asm.SETNP, x86asm.SETL, x86asm.SETGE, x86asm.SETLE, x86asm.SETG}
	cmovOps = [16]x86asm.Op{x86asm.CMOVO, x86asm.CMOVNO, x86asm.CMOVB, x86asm.CMOVAE, x86asm.CMOVE, x86asm.CMOVNE, x86asm.CMOVBE, x86asm.CMOVA,
		x86asm.CMOVS, x86asm.CMOVNS, x86asm.CMOVP, x86asm.CMOVNP, x86asm.CMOVL, x86asm.CMOVGE, x86asm.CMOVLE, x86asm.CMOVG}
)

// fastOne and fastTwo are the one-byte and 0F-prefixed opcode tables;
// a zero entry defers to x86asm.
var fastOne, fastTwo [256]fastEntry

func init() {
	rm := func(e fastEntry) fastEntry { e.memOK, e.regOK = true, true; return e }
	alu := [8]x86asm.Op{x86asm.ADD, x86asm.OR, x86asm.ADC, x86asm.SBB, x86asm.AND, x86asm.SUB, x86asm.XOR, x86asm.CMP}
	for i, op := range alu {
		b := i << 3
		fastOne[b+0] = rm(fastEntry{op: op, form: fEG, byteOp: true})
		fastOne[b+1] = rm(fastEntry{op: op, form: fEG, o16: true})
		fastOne[b+2] = rm(fastEntry{op: op, form: fGE, byteOp: true})
		fastOne[b+3] = rm(fastEntry{op: op, form: fGE, o16: true})
		fastOne[b+4] = fastEntry{op: op, form: fAccI, byteOp: true}
		fastOne[b+5] = fastEntry{op: op, form: fAccI, o16: true}
	}
	for r := 0; r < 8; r++ {
		fastOne[0x50+r] = fastEntry{op: x86asm.PUSH, form: fOReg}
		fastOne[0x58+r] = fastEntry{op: x86asm.POP, form: fOReg}
		fastOne[0xb0+r] = fastEntry{op: x86asm.MOV, form: fOImm, byteOp: true, imm8u: true}
		fastOne[0xb8+r] = fastEntry{op: x86asm.MOV, form: fOImm, o16: true}
	}
	for cc := 0; cc < 16; cc++ {
		fastOne[0x70+cc] = fastEntry{op: jccOps[cc], form: fRel8}
		fastTwo[0x80+cc] = fastEntry{op: jccOps[cc], form: fRel32}
		fastTwo[0x90+cc] = rm(fastEntry{op: setOps[cc], form: fE, byteOp: true})
		fastTwo[0x40+cc] = rm(fastEntry{op: cmovOps[cc], form: fGE, o16: true})
	}
	fastOne[0x63] = rm(fastEntry{op: x86asm.MOVSXD, form: fGE, movx: 4})
	fastOne[0x68] = fastEntry{op: x86asm.PUSH, form: fImm}
	fastOne[0x6a] = fastEntry{op: x86asm.PUSH, form: fImm, byteOp: true}
	fastOne[0x69] = rm(fastEntry{op: x86asm.IMUL, form: fGEIz, o16: true})
	fastOne[0x6b] = rm(fastEntry{op: x86asm.IMUL, form: fGEIb, o16: true})
	fastOne[0x80] = rm(fastEntry{group: &grp1, form: fEI, byteOp: true})
	fastOne[0x81] = rm(fastEntry{group: &grp1, form: fEI, o16: true})
	fastOne[0x83] = rm(fastEntry{group: &grp1, form: fEIb, o16: true})
	fastOne[0x84] = rm(fastEntry{op: x86asm.TEST, form: fEG, byteOp: true})
	fastOne[0x85] = rm(fastEntry{op: x86asm.TEST, form: fEG, o16: true})
	fastOne[0x88] = rm(fastEntry{op: x86asm.MOV, form: fEG, byteOp: true})
	fastOne[0x89] = rm(fastEntry{op: x86asm.MOV, form: fEG, o16: true})
	fastOne[0x8a] = rm(fastEntry{op: x86asm.MOV, form: fGE, byteOp: true})
	fastOne[0x8b] = rm(fastEntry{op: x86asm.MOV, form: fGE, o16: true})
	fastOne[0x8d] = fastEntry{op: x86asm.LEA, form: fGM, o16: true, memOK: true}
	fastOne[0x90] = fastEntry{op: x86asm.NOP, form: fNoArgs}
	fastOne[0xa8] = fastEntry{op: x86asm.TEST, form: fAccI, byteOp: true}
	fastOne[0xa9] = fastEntry{op: x86asm.TEST, form: fAccI, o16: true}
	fastOne[0xc0] = rm(fastEntry{group: &grp2, form: fEI, byteOp: true, imm8u: true})
	fastOne[0xc1] = rm(fastEntry{group: &grp2, form: fEIb, o16: true, imm8u: true})
	fastOne[0xc3] = fastEntry{op: x86asm.RET, form: fNoArgs}
	fastOne[0xc6] = rm(fastEntry{group: &grpC, form: fEI, byteOp: true})
	fastOne[0xc7] = rm(fastEntry{group: &grpC, form: fEI, o16: true})
	fastOne[0xc9] = fastEntry{op: x86asm.LEAVE, form: fNoArgs}
	fastOne[0xd0] = rm(fastEntry{group: &grp2, form: fE1, byteOp: true})
	fastOne[0xd1] = rm(fastEntry{group: &grp2, form: fE1, o16: true})
	fastOne[0xd2] = rm(fastEntry{group: &grp2, form: fECL, byteOp: true})
	fastOne[0xd3] = rm(fastEntry{group: &grp2, form: fECL, o16: true})
	fastOne[0xe8] = fastEntry{op: x86asm.CALL, form: fRel32}
	fastOne[0xe9] = fastEntry{op: x86asm.JMP, form: fRel32}
	fastOne[0xeb] = fastEntry{op: x86asm.JMP, form: fRel8}
	fastOne[0xf6] = rm(fastEntry{group: &grp3, form: fE, byteOp: true})
	fastOne[0xf7] = rm(fastEntry{group: &grp3, form: fE, o16: true})
	fastOne[0xfe] = rm(fastEntry{group: &grp4, form: fE, byteOp: true})
	fastOne[0xff] = rm(fastEntry{group: &grp5, form: fE, o16: true})

	fastTwo[0x05] = fastEntry{op: x86asm.SYSCALL, form: fNoArgs}
	fastTwo[0xaf] = rm(fastEntry{op: x86asm.IMUL, form: fGE, o16: true})
	fastTwo[0xb6] = rm(fastEntry{op: x86asm.MOVZX, form: fGE, o16: true, movx: 1})
	fastTwo[0xb7] = rm(fastEntry{op: x86asm.MOVZX, form: fGE, o16: true, movx: 2})
	fastTwo[0xbe] = rm(fastEntry{op: x86asm.MOVSX, form: fGE, o16: true, movx: 1})
	fastTwo[0xbf] = rm(fastEntry{op: x86asm.MOVSX, form: fGE, o16: true, movx: 2})
}

// fastDecode decodes the instruction at pc from code into in (which
// decodeInto has zeroed but for PC) if it is one of the forms of the
// tables above, up to the choice of handler (decodeFinish); it reports
// false, leaving in as it was, to defer to x86asm.
func fastDecode(in *Inst, pc uint64, code []byte) bool {
	i := 0
	o16 := false
	if len(code) > 0 && code[0] == 0x66 {
		o16 = true
		i++
	}
	var rex byte
	if i < len(code) && code[i]&0xf0 == 0x40 {
		rex = code[i]
		i++
	}
	if i >= len(code) {
		return false
	}
	var e *fastEntry
	opc := uint32(code[i]) << 24
	shift := 16
	if code[i] == 0x0f {
		if i+1 >= len(code) {
			return false
		}
		i++
		e = &fastTwo[code[i]]
		opc |= uint32(code[i]) << 16
		shift = 8
	} else {
		e = &fastOne[code[i]]
	}
	if e.form == fNone || o16 && !e.o16 {
		return false
	}
	opByte := code[i]
	i++
	opSize := uint8(4)
	switch {
	case rex&8 != 0:
		opSize = 8
	case o16:
		opSize = 2
	}
	size := opSize
	if e.byteOp {
		size = 1
	}
	in.OpSize = opSize
	op := e.op
	var nargs uint8
	arg := func() *Operand { nargs++; return &in.Args[nargs-1] }
	// reg sets o to general register r of size sz: without a REX prefix
	// the byte registers 4-7 are AH, CH, DH, BH.
	reg := func(o *Operand, r, sz uint8) {
		o.Kind, o.Reg, o.Size = KReg, r, sz
		if sz == 1 && rex == 0 && r >= 4 && r < 8 {
			o.Kind, o.Reg = KReg8H, r-4
		}
	}
	// immArg reads an immediate of sz bytes into the next operand.
	immArg := func(sz uint8, imm8u, imm64 bool) bool {
		imm, n, ok := fastImm(code[i:], sz, imm8u, imm64)
		if ok {
			i += n
			o := arg()
			o.Kind, o.Size, o.Imm = KImm, opSize, imm
		}
		return ok
	}
	switch e.form {
	case fNoArgs:
		if o16 || rex != 0 {
			return false
		}
	case fOReg, fOImm:
		r := opByte&7 | (rex&1)<<3
		if e.form == fOReg {
			if o16 {
				return false
			}
			reg(arg(), r, 8)
			break
		}
		reg(arg(), r, size)
		if !immArg(size, e.imm8u, size == 8) {
			return false
		}
	case fRel8, fRel32:
		if o16 || rex != 0 {
			return false
		}
		n := 1
		if e.form == fRel32 {
			n = 4
		}
		if i+n > len(code) {
			return false
		}
		var rel int64
		if n == 1 {
			rel = int64(int8(code[i]))
		} else {
			rel = int64(int32(binary.LittleEndian.Uint32(code[i:])))
		}
		i += n
		o := arg()
		o.Kind, o.Imm = KRel, pc+uint64(i)+uint64(rel)
	case fImm:
		if o16 {
			return false
		}
		sz := uint8(4)
		if e.byteOp {
			sz = 1
		}
		if !immArg(sz, false, false) {
			return false
		}
	case fAccI:
		reg(arg(), 0, size)
		if !immArg(size, e.imm8u, false) {
			return false
		}
	default:
		// The ModRM forms.
		if i >= len(code) {
			return false
		}
		modrm := code[i]
		opc |= uint32(modrm) << shift
		shift -= 8
		i++
		regop := modrm >> 3 & 7
		if e.group != nil {
			op = e.group[regop]
			if op == 0 {
				return false
			}
			switch {
			case e.group == &grp5 && (regop == 2 || regop == 4 || regop == 6):
				if o16 {
					return false // 16-bit call, jmp, push
				}
				size = 8
			case e.group == &grp3 && regop == 0 && e.form == fE:
				// test r/m, imm: the immediate follows below.
			}
		}
		rm := Operand{}
		if modrm>>6 == 3 {
			if !e.regOK {
				return false
			}
			sz := size
			if e.movx != 0 {
				sz = e.movx
			}
			reg(&rm, modrm&7|(rex&1)<<3, sz)
		} else {
			if !e.memOK {
				return false
			}
			n, sib, ok := fastMem(&rm, code[i:], modrm, rex)
			if !ok {
				return false
			}
			if sib {
				opc |= uint32(code[i]) << shift
			}
			i += n
			rm.Size = size
			if e.movx != 0 {
				rm.Size = e.movx
			}
			if e.form == fGM {
				rm.Size = 0
			}
			in.MemSize = rm.Size
		}
		g := regop | (rex&4)<<1
		switch e.form {
		case fEG:
			*arg() = rm
			reg(arg(), g, size)
		case fGE, fGM:
			reg(arg(), g, size)
			*arg() = rm
		case fE, fE1, fECL:
			*arg() = rm
			switch {
			case e.form == fE1:
				o := arg()
				o.Kind, o.Size, o.Imm = KImm, opSize, 1
			case e.form == fECL:
				reg(arg(), 1, 1)
			case e.group == &grp3 && regop == 0:
				if !immArg(size, false, false) {
					return false
				}
			}
		case fEI, fEIb:
			*arg() = rm
			sz := size
			if e.form == fEIb {
				sz = 1
			}
			if !immArg(sz, e.imm8u, false) {
				return false
			}
		case fGEIb, fGEIz:
			reg(arg(), g, size)
			*arg() = rm
			sz := size
			if e.form == fGEIb {
				sz = 1
			}
			if !immArg(sz, false, false) {
				return false
			}
		}
	}
	in.Len = uint8(i)
	in.Op = op
	in.NArgs = nargs
	in.Aux = opc
	for k := range in.Args[:nargs] {
		if a := &in.Args[k]; a.Kind == KMem && a.Base == NoReg+1 {
			a.Base = NoReg
			a.Imm += pc + uint64(i) // rip-relative
		}
	}
	return true
}

// fastImm reads an immediate of sz bytes (at most 4 unless imm64) as
// x86asm gives it: sign-extended, but for the unsigned imm8 forms.
func fastImm(code []byte, sz uint8, imm8u, imm64 bool) (uint64, int, bool) {
	switch {
	case sz == 1:
		if len(code) < 1 {
			return 0, 0, false
		}
		if imm8u {
			return uint64(code[0]), 1, true
		}
		return uint64(int64(int8(code[0]))), 1, true
	case sz == 2:
		if len(code) < 2 {
			return 0, 0, false
		}
		return uint64(int64(int16(binary.LittleEndian.Uint16(code)))), 2, true
	case imm64:
		if len(code) < 8 {
			return 0, 0, false
		}
		return binary.LittleEndian.Uint64(code), 8, true
	}
	if len(code) < 4 {
		return 0, 0, false
	}
	return uint64(int64(int32(binary.LittleEndian.Uint32(code)))), 4, true
}

// fastMem decodes the memory operand of ModRM byte modrm (mod != 3) from
// the bytes after it into o: its length, whether it has a SIB byte.
// A rip-relative operand gets Base NoReg+1 and its displacement; the
// caller adds the address of the next instruction.
func fastMem(o *Operand, code []byte, modrm, rex byte) (int, bool, bool) {
	mod, rm := modrm>>6, modrm&7
	o.Kind = KMem
	o.Base, o.Index = NoReg, NoReg
	n := 0
	sib := false
	if rm == 4 {
		if len(code) < 1 {
			return 0, false, false
		}
		s := code[0]
		n, sib = 1, true
		base := s&7 | (rex&1)<<3
		index := s>>3&7 | (rex&2)<<2
		if index != 4 {
			o.Index = index
			o.Scale = s >> 6
		}
		if s&7 == 5 && mod == 0 {
			if len(code) < n+4 {
				return 0, false, false
			}
			o.Imm = uint64(int64(int32(binary.LittleEndian.Uint32(code[n:]))))
			return n + 4, sib, true
		}
		o.Base = base
	} else if rm == 5 && mod == 0 {
		if len(code) < 4 {
			return 0, false, false
		}
		o.Base = NoReg + 1
		o.Imm = uint64(int64(int32(binary.LittleEndian.Uint32(code))))
		return 4, false, true
	} else {
		o.Base = rm | (rex&1)<<3
	}
	switch mod {
	case 1:
		if len(code) < n+1 {
			return 0, false, false
		}
		o.Imm = uint64(int64(int8(code[n])))
		n++
	case 2:
		if len(code) < n+4 {
			return 0, false, false
		}
		o.Imm = uint64(int64(int32(binary.LittleEndian.Uint32(code[n:]))))
		n += 4
	}
	return n, sib, true
}
