package amd64asm

import "fmt"

// Size arguments are operand sizes in bytes: 1, 2, 4 or 8. Size 2 emits the
// 0x66 prefix, size 8 emits REX.W, and size 1 uses the byte opcode and emits
// a REX prefix (0x40 if nothing else) when a byte register is one of regs 4-7,
// so that they mean SPL/BPL/SIL/DIL and AH/CH/DH/BH are never produced. Byte
// registers 8-15 are R8B-R15B. 32-bit register writes zero-extend as usual.

// ALU is the two-operand arithmetic group, numbered as the /digit of opcodes
// 0x80-0x83; the r/m forms use opcode 8*ALU + {0,1,2,3}.
type ALU uint8

// The ALU operations.
const (
	ADD ALU = iota
	OR
	ADC
	SBB
	AND
	SUB
	XOR
	CMP
)

func checkALU(op ALU) {
	if op > CMP {
		panic(fmt.Sprintf("amd64asm: invalid ALU op %d", op))
	}
}

// ALURR emits "op dst, src".
func (a *Asm) ALURR(op ALU, size int, dst, src Reg) {
	checkALU(op)
	f, o := byteOp(size)
	a.rr(f, uint16(op)*8+uint16(o), src, dst)
}

// ALURM emits "op dst, [src]".
func (a *Asm) ALURM(op ALU, size int, dst Reg, src Mem) {
	checkALU(op)
	f, o := byteOp(size)
	a.rm(f, uint16(op)*8+2+uint16(o), dst, src)
}

// ALUMR emits "op [dst], src".
func (a *Asm) ALUMR(op ALU, size int, dst Mem, src Reg) {
	checkALU(op)
	f, o := byteOp(size)
	a.rm(f, uint16(op)*8+uint16(o), src, dst)
	a.wrote(dst)
}

// ALURI emits "op dst, imm". For sizes 2-8 an immediate that fits int8 (after
// truncation to the operand size) uses the short 0x83 form. For sizes 1, 2
// and 4, imm may be any value that fits the width as a signed or unsigned
// number; for size 8 it must fit int32 (it is sign-extended).
func (a *Asm) ALURI(op ALU, size int, dst Reg, imm int64) {
	checkALU(op)
	v := immValue(size, imm)
	f := sizeFlags(size)
	switch {
	case size == 1:
		a.rd(f, 0x80, byte(op), dst)
		a.imm8(int8(v))
	case fitsInt8(v):
		a.rd(f, 0x83, byte(op), dst)
		a.imm8(int8(v))
	default:
		a.rd(f, 0x81, byte(op), dst)
		a.immN(size, v)
	}
}

// ALUMI emits "op [dst], imm" with the same immediate rules as ALURI.
func (a *Asm) ALUMI(op ALU, size int, dst Mem, imm int64) {
	checkALU(op)
	v := immValue(size, imm)
	f := sizeFlags(size)
	switch {
	case size == 1:
		a.md(f, 0x80, byte(op), dst)
		a.imm8(int8(v))
	case fitsInt8(v):
		a.md(f, 0x83, byte(op), dst)
		a.imm8(int8(v))
	default:
		a.md(f, 0x81, byte(op), dst)
		a.immN(size, v)
	}
	a.wrote(dst)
}

// TestRR emits "test x, y".
func (a *Asm) TestRR(size int, x, y Reg) {
	f, o := byteOp(size)
	a.rr(f, 0x84+uint16(o), y, x)
}

// TestRI emits "test x, imm" (F6/F7 /0 with a full-width immediate; for size
// 8 a sign-extended imm32).
func (a *Asm) TestRI(size int, x Reg, imm int64) {
	v := immValue(size, imm)
	f, o := byteOp(size)
	a.rd(f, 0xF6+uint16(o), 0, x)
	a.immN(size, v)
}

// TestMR emits "test [x], y".
func (a *Asm) TestMR(size int, x Mem, y Reg) {
	f, o := byteOp(size)
	a.rm(f, 0x84+uint16(o), y, x)
}

// TestMI emits "test [x], imm" with the same immediate rules as TestRI.
func (a *Asm) TestMI(size int, x Mem, imm int64) {
	v := immValue(size, imm)
	f, o := byteOp(size)
	a.md(f, 0xF6+uint16(o), 0, x)
	a.immN(size, v)
}

// MovRR emits "mov dst, src".
func (a *Asm) MovRR(size int, dst, src Reg) {
	f, o := byteOp(size)
	a.rr(f, 0x88+uint16(o), src, dst)
}

// MovRM emits the load "mov dst, [src]".
func (a *Asm) MovRM(size int, dst Reg, src Mem) {
	if size == 8 && a.ElideReloads && a.stored.ok && a.stored.end == len(a.Buf) && a.stored.reg == dst && a.stored.mem == src {
		return // dst holds [src] (Asm.ElideReloads)
	}
	f, o := byteOp(size)
	a.rm(f, 0x8A+uint16(o), dst, src)
}

// MovMR emits the store "mov [dst], src".
func (a *Asm) MovMR(size int, dst Mem, src Reg) {
	f, o := byteOp(size)
	a.rm(f, 0x88+uint16(o), src, dst)
	if size == 8 && a.ElideReloads && !memUses(dst, src) {
		a.stored = lastStore{ok: true, end: len(a.Buf), reg: src, mem: dst}
	}
	a.wrote(dst)
}

// memUses reports whether m's address depends on r.
func memUses(m Mem, r Reg) bool { return m.Base == r || m.Index == r }

// MovRI sets the 64-bit register dst to imm using the shortest encoding:
// "mov r32, imm32" (zero-extending) when imm < 2^32, "mov r64, simm32"
// (REX.W C7 /0) when imm is a negative int32, and movabs otherwise.
func (a *Asm) MovRI(dst Reg, imm uint64) {
	checkReg(dst)
	var rex byte
	if dst >= 8 {
		rex = 0x41
	}
	switch {
	case imm <= 0xFFFFFFFF:
		a.prefixes(0, rex)
		a.Buf = append(a.Buf, 0xB8+byte(dst&7))
		a.imm32(int32(uint32(imm)))
	case int64(imm) == int64(int32(imm)):
		a.rd(fW, 0xC7, 0, dst)
		a.imm32(int32(imm))
	default:
		a.prefixes(fW, rex)
		a.Buf = append(a.Buf, 0xB8+byte(dst&7))
		a.imm32(int32(uint32(imm)))
		a.imm32(int32(uint32(imm >> 32)))
	}
}

// MovMI emits "mov [dst], imm" (C6/C7 /0). Size 8 takes a sign-extended
// imm32 and panics if imm does not fit.
func (a *Asm) MovMI(size int, dst Mem, imm int64) {
	v := immValue(size, imm)
	f, o := byteOp(size)
	a.md(f, 0xC6+uint16(o), 0, dst)
	a.immN(size, v)
	a.wrote(dst)
}

// extFlags returns the flags for movzx/movsx with the given sizes and the
// opcode for a byte or word source.
func extFlags(dstSize, srcSize int, op8, op16 uint16) (flags, uint16) {
	if dstSize <= srcSize || srcSize > 2 {
		panic(fmt.Sprintf("amd64asm: invalid extension from size %d to %d", srcSize, dstSize))
	}
	f := wideFlags(dstSize)
	if srcSize == 1 {
		return f | fByteRM, op8
	}
	if srcSize != 2 {
		panic(fmt.Sprintf("amd64asm: invalid extension source size %d", srcSize))
	}
	return f, op16
}

// Movzx emits "movzx dst, src" zero-extending a byte or word (srcSize 1 or 2)
// to dstSize 2, 4 or 8. dstSize 8 is emitted as the 32-bit form, which
// zero-extends to 64 bits anyway.
func (a *Asm) Movzx(dstSize, srcSize int, dst Reg, src Reg) {
	if dstSize == 8 {
		dstSize = 4
	}
	f, op := extFlags(dstSize, srcSize, 0x0FB6, 0x0FB7)
	a.rr(f, op, dst, src)
}

// MovzxM emits "movzx dst, [src]"; see Movzx.
func (a *Asm) MovzxM(dstSize, srcSize int, dst Reg, src Mem) {
	if dstSize == 8 {
		dstSize = 4
	}
	f, op := extFlags(dstSize, srcSize, 0x0FB6, 0x0FB7)
	a.rm(f, op, dst, src)
}

// Movsx emits "movsx dst, src" sign-extending srcSize 1 or 2 to dstSize 2, 4
// or 8, or "movsxd dst, src" for srcSize 4 (dstSize must be 8).
func (a *Asm) Movsx(dstSize, srcSize int, dst Reg, src Reg) {
	if srcSize == 4 && dstSize == 8 {
		a.rr(fW, 0x63, dst, src)
		return
	}
	f, op := extFlags(dstSize, srcSize, 0x0FBE, 0x0FBF)
	a.rr(f, op, dst, src)
}

// MovsxM emits "movsx dst, [src]" or "movsxd dst, [src]"; see Movsx.
func (a *Asm) MovsxM(dstSize, srcSize int, dst Reg, src Mem) {
	if srcSize == 4 && dstSize == 8 {
		a.rm(fW, 0x63, dst, src)
		return
	}
	f, op := extFlags(dstSize, srcSize, 0x0FBE, 0x0FBF)
	a.rm(f, op, dst, src)
}

// Lea emits "lea dst, [src]" with size 4 or 8.
func (a *Asm) Lea(size int, dst Reg, src Mem) {
	if size != 4 && size != 8 {
		panic(fmt.Sprintf("amd64asm: invalid lea size %d", size))
	}
	if src.Direct {
		panic("amd64asm: lea of a Direct operand")
	}
	a.rm(sizeFlags(size), 0x8D, dst, src)
}

// Shift is the shift/rotate group, numbered as the /digit of C0/C1/D0-D3.
type Shift uint8

// The shift and rotate operations.
const (
	ROL Shift = 0
	ROR Shift = 1
	RCL Shift = 2
	RCR Shift = 3
	SHL Shift = 4
	SHR Shift = 5
	SAR Shift = 7
)

func checkShift(op Shift) {
	if op > SAR || op == 6 {
		panic(fmt.Sprintf("amd64asm: invalid shift op %d", op))
	}
}

// ShiftRI emits "op r, imm": the D0/D1 form when imm == 1, else C0/C1 ib.
func (a *Asm) ShiftRI(op Shift, size int, r Reg, imm uint8) {
	checkShift(op)
	f, o := byteOp(size)
	if imm == 1 {
		a.rd(f, 0xD0+uint16(o), byte(op), r)
		return
	}
	a.rd(f, 0xC0+uint16(o), byte(op), r)
	a.Buf = append(a.Buf, imm)
}

// ShiftRCL emits "op r, cl".
func (a *Asm) ShiftRCL(op Shift, size int, r Reg) {
	checkShift(op)
	f, o := byteOp(size)
	a.rd(f, 0xD2+uint16(o), byte(op), r)
}

// ShiftMI emits "op [m], imm"; see ShiftRI.
func (a *Asm) ShiftMI(op Shift, size int, m Mem, imm uint8) {
	checkShift(op)
	a.wrote(m)
	f, o := byteOp(size)
	if imm == 1 {
		a.md(f, 0xD0+uint16(o), byte(op), m)
		return
	}
	a.md(f, 0xC0+uint16(o), byte(op), m)
	a.Buf = append(a.Buf, imm)
}

// ShiftMCL emits "op [m], cl".
func (a *Asm) ShiftMCL(op Shift, size int, m Mem) {
	checkShift(op)
	f, o := byteOp(size)
	a.md(f, 0xD2+uint16(o), byte(op), m)
	a.wrote(m)
}

// ShldRRI emits "shld dst, src, imm" (size 2, 4 or 8).
func (a *Asm) ShldRRI(size int, dst, src Reg, imm uint8) {
	a.rr(wideFlags(size), 0x0FA4, src, dst)
	a.Buf = append(a.Buf, imm)
}

// ShrdRRI emits "shrd dst, src, imm" (size 2, 4 or 8).
func (a *Asm) ShrdRRI(size int, dst, src Reg, imm uint8) {
	a.rr(wideFlags(size), 0x0FAC, src, dst)
	a.Buf = append(a.Buf, imm)
}

// ShldRRCL emits "shld dst, src, cl" (size 2, 4 or 8).
func (a *Asm) ShldRRCL(size int, dst, src Reg) { a.rr(wideFlags(size), 0x0FA5, src, dst) }

// ShrdRRCL emits "shrd dst, src, cl" (size 2, 4 or 8).
func (a *Asm) ShrdRRCL(size int, dst, src Reg) { a.rr(wideFlags(size), 0x0FAD, src, dst) }

// unaryR emits F6/F7 (op 0xF6) or FE/FF (op 0xFE) /digit on a register.
func (a *Asm) unaryR(op uint16, digit byte, size int, r Reg) {
	f, o := byteOp(size)
	a.rd(f, op+uint16(o), digit, r)
}

// unaryM emits F6/F7 (op 0xF6) or FE/FF (op 0xFE) /digit on memory.
func (a *Asm) unaryM(op uint16, digit byte, size int, m Mem) {
	f, o := byteOp(size)
	a.md(f, op+uint16(o), digit, m)
	a.wrote(m)
}

// NotR emits "not r".
func (a *Asm) NotR(size int, r Reg) { a.unaryR(0xF6, 2, size, r) }

// NegR emits "neg r".
func (a *Asm) NegR(size int, r Reg) { a.unaryR(0xF6, 3, size, r) }

// IncR emits "inc r".
func (a *Asm) IncR(size int, r Reg) { a.unaryR(0xFE, 0, size, r) }

// DecR emits "dec r".
func (a *Asm) DecR(size int, r Reg) { a.unaryR(0xFE, 1, size, r) }

// NotM emits "not [m]".
func (a *Asm) NotM(size int, m Mem) { a.unaryM(0xF6, 2, size, m) }

// NegM emits "neg [m]".
func (a *Asm) NegM(size int, m Mem) { a.unaryM(0xF6, 3, size, m) }

// IncM emits "inc [m]".
func (a *Asm) IncM(size int, m Mem) { a.unaryM(0xFE, 0, size, m) }

// DecM emits "dec [m]".
func (a *Asm) DecM(size int, m Mem) { a.unaryM(0xFE, 1, size, m) }

// MulR emits the unsigned widening multiply "mul r" (implicit RAX/RDX).
func (a *Asm) MulR(size int, r Reg) { a.unaryR(0xF6, 4, size, r) }

// ImulR1 emits the one-operand signed widening multiply "imul r".
func (a *Asm) ImulR1(size int, r Reg) { a.unaryR(0xF6, 5, size, r) }

// DivR emits the unsigned divide "div r" (implicit RAX/RDX).
func (a *Asm) DivR(size int, r Reg) { a.unaryR(0xF6, 6, size, r) }

// IdivR emits the signed divide "idiv r" (implicit RAX/RDX).
func (a *Asm) IdivR(size int, r Reg) { a.unaryR(0xF6, 7, size, r) }

// ImulRR emits "imul dst, src" (size 2, 4 or 8).
func (a *Asm) ImulRR(size int, dst, src Reg) { a.rr(wideFlags(size), 0x0FAF, dst, src) }

// ImulRM emits "imul dst, [src]" (size 2, 4 or 8).
func (a *Asm) ImulRM(size int, dst Reg, src Mem) { a.rm(wideFlags(size), 0x0FAF, dst, src) }

// ImulRRI emits "imul dst, src, imm" (size 2, 4 or 8): 6B ib when imm fits
// int8 after truncation to the operand size, else 69 iw/id.
func (a *Asm) ImulRRI(size int, dst, src Reg, imm int32) {
	f := wideFlags(size)
	v := immValue(size, int64(imm))
	if fitsInt8(v) {
		a.rr(f, 0x6B, dst, src)
		a.imm8(int8(v))
		return
	}
	a.rr(f, 0x69, dst, src)
	a.immN(size, v)
}

func checkCC(cc uint8) {
	if cc > 15 {
		panic(fmt.Sprintf("amd64asm: invalid condition code %d", cc))
	}
}

// Cmov emits "cmovcc dst, src" (size 2, 4 or 8). Condition codes are the
// low nibble of Jcc/SETcc/CMOVcc: 0 O, 1 NO, 2 B, 3 AE, 4 E, 5 NE, 6 BE, 7 A,
// 8 S, 9 NS, A P, B NP, C L, D GE, E LE, F G.
func (a *Asm) Cmov(cc uint8, size int, dst, src Reg) {
	checkCC(cc)
	a.rr(wideFlags(size), 0x0F40+uint16(cc), dst, src)
}

// CmovM emits "cmovcc dst, [src]" (size 2, 4 or 8).
func (a *Asm) CmovM(cc uint8, size int, dst Reg, src Mem) {
	checkCC(cc)
	a.rm(wideFlags(size), 0x0F40+uint16(cc), dst, src)
}

// Setcc emits "setcc r" on the byte register r.
func (a *Asm) Setcc(cc uint8, r Reg) {
	checkCC(cc)
	a.rd(fByteRM, 0x0F90+uint16(cc), 0, r)
}

// SetccM emits "setcc byte [m]".
func (a *Asm) SetccM(cc uint8, m Mem) {
	checkCC(cc)
	a.md(0, 0x0F90+uint16(cc), 0, m)
	a.wrote(m)
}

// Jcc emits "jcc l" in the rel32 form 0F 80+cc.
func (a *Asm) Jcc(cc uint8, l Label) {
	checkCC(cc)
	a.checkLabel(l)
	a.Buf = append(a.Buf, 0x0F, 0x80+cc)
	a.rel32(l)
}

// Jmp emits "jmp l" in the rel32 form E9.
func (a *Asm) Jmp(l Label) {
	a.checkLabel(l)
	a.Buf = append(a.Buf, 0xE9)
	a.rel32(l)
}

// CmpxchgRR emits "cmpxchg dst, src" (0F B0/B1): compare the accumulator
// with dst; if equal dst = src, else the accumulator = dst.
func (a *Asm) CmpxchgRR(size int, dst, src Reg) {
	f, w := byteOp(size)
	a.rr(f, 0x0FB0+uint16(w), src, dst)
}

// LeaLabel emits "lea dst, [rip+l]": the 64-bit address of label l
// (8D /r with a RIP-relative disp32, which rel32 resolves).
func (a *Asm) LeaLabel(dst Reg, l Label) {
	checkReg(dst)
	rex := byte(0x48)
	if dst >= 8 {
		rex |= 0x04 // REX.R
	}
	a.stored.ok = false
	a.Buf = append(a.Buf, rex, 0x8D, byte(dst&7)<<3|5)
	a.rel32(l)
}

// JmpReg emits "jmp r": an indirect jump to the address in r (FF /4).
func (a *Asm) JmpReg(r Reg) { a.rd(0, 0xFF, 4, r) }

// Bswap emits "bswap r" (size 4 or 8).
func (a *Asm) Bswap(size int, r Reg) {
	if size != 4 && size != 8 {
		panic(fmt.Sprintf("amd64asm: invalid bswap size %d", size))
	}
	checkReg(r)
	var rex byte
	if r >= 8 {
		rex = 0x41
	}
	a.prefixes(sizeFlags(size), rex)
	a.Buf = append(a.Buf, 0x0F, 0xC8+byte(r&7))
}

// BtRR emits "bt x, bit" (size 2, 4 or 8).
func (a *Asm) BtRR(size int, x, bit Reg) { a.rr(wideFlags(size), 0x0FA3, bit, x) }

// BtsRR emits "bts x, bit" (size 2, 4 or 8).
func (a *Asm) BtsRR(size int, x, bit Reg) { a.rr(wideFlags(size), 0x0FAB, bit, x) }

// BtrRR emits "btr x, bit" (size 2, 4 or 8).
func (a *Asm) BtrRR(size int, x, bit Reg) { a.rr(wideFlags(size), 0x0FB3, bit, x) }

// BtcRR emits "btc x, bit" (size 2, 4 or 8).
func (a *Asm) BtcRR(size int, x, bit Reg) { a.rr(wideFlags(size), 0x0FBB, bit, x) }

// btRI emits 0F BA /digit ib.
func (a *Asm) btRI(digit byte, size int, x Reg, imm uint8) {
	a.rd(wideFlags(size), 0x0FBA, digit, x)
	a.Buf = append(a.Buf, imm)
}

// BtRI emits "bt x, imm" (size 2, 4 or 8).
func (a *Asm) BtRI(size int, x Reg, imm uint8) { a.btRI(4, size, x, imm) }

// BtsRI emits "bts x, imm" (size 2, 4 or 8).
func (a *Asm) BtsRI(size int, x Reg, imm uint8) { a.btRI(5, size, x, imm) }

// BtrRI emits "btr x, imm" (size 2, 4 or 8).
func (a *Asm) BtrRI(size int, x Reg, imm uint8) { a.btRI(6, size, x, imm) }

// BtcRI emits "btc x, imm" (size 2, 4 or 8).
func (a *Asm) BtcRI(size int, x Reg, imm uint8) { a.btRI(7, size, x, imm) }

// Bsf emits "bsf dst, src" (size 2, 4 or 8).
func (a *Asm) Bsf(size int, dst, src Reg) { a.rr(wideFlags(size), 0x0FBC, dst, src) }

// Bsr emits "bsr dst, src" (size 2, 4 or 8).
func (a *Asm) Bsr(size int, dst, src Reg) { a.rr(wideFlags(size), 0x0FBD, dst, src) }

// Tzcnt emits "tzcnt dst, src" (size 2, 4 or 8; requires BMI1).
func (a *Asm) Tzcnt(size int, dst, src Reg) { a.rr(wideFlags(size)|fF3, 0x0FBC, dst, src) }

// Lzcnt emits "lzcnt dst, src" (size 2, 4 or 8; requires LZCNT).
func (a *Asm) Lzcnt(size int, dst, src Reg) { a.rr(wideFlags(size)|fF3, 0x0FBD, dst, src) }

// Popcnt emits "popcnt dst, src" (size 2, 4 or 8; requires POPCNT).
func (a *Asm) Popcnt(size int, dst, src Reg) { a.rr(wideFlags(size)|fF3, 0x0FB8, dst, src) }

// XchgRR emits "xchg x, y" with the ModRM form 86/87, never the short 90+r
// form, so that xchg eax, eax still zero-extends instead of being a nop.
func (a *Asm) XchgRR(size int, x, y Reg) {
	f, o := byteOp(size)
	a.rr(f, 0x86+uint16(o), y, x)
}

// Cdqe emits "cdqe" (RAX := sign-extend EAX).
func (a *Asm) Cdqe() { a.Buf = append(a.Buf, 0x48, 0x98) }

// Cwde emits "cwde" (EAX := sign-extend AX).
func (a *Asm) Cwde() { a.Buf = append(a.Buf, 0x98) }

// Cbw emits "cbw" (AX := sign-extend AL).
func (a *Asm) Cbw() { a.Buf = append(a.Buf, 0x66, 0x98) }

// Cqo emits "cqo" (RDX:RAX := sign-extend RAX).
func (a *Asm) Cqo() { a.Buf = append(a.Buf, 0x48, 0x99) }

// Cdq emits "cdq" (EDX:EAX := sign-extend EAX).
func (a *Asm) Cdq() { a.Buf = append(a.Buf, 0x99) }

// Cwd emits "cwd" (DX:AX := sign-extend AX).
func (a *Asm) Cwd() { a.Buf = append(a.Buf, 0x66, 0x99) }

// Lahf emits "lahf".
func (a *Asm) Lahf() { a.Buf = append(a.Buf, 0x9F) }

// Sahf emits "sahf".
func (a *Asm) Sahf() { a.Buf = append(a.Buf, 0x9E) }

// Pushfq emits "pushfq".
func (a *Asm) Pushfq() { a.Buf = append(a.Buf, 0x9C) }

// Popfq emits "popfq".
func (a *Asm) Popfq() { a.Buf = append(a.Buf, 0x9D) }

// Push emits "push r" (64-bit).
func (a *Asm) Push(r Reg) { a.pushPop(0x50, r) }

// Pop emits "pop r" (64-bit).
func (a *Asm) Pop(r Reg) { a.pushPop(0x58, r) }

func (a *Asm) pushPop(op byte, r Reg) {
	checkReg(r)
	if r >= 8 {
		a.Buf = append(a.Buf, 0x41)
	}
	a.Buf = append(a.Buf, op+byte(r&7))
}

// Ret emits "ret".
func (a *Asm) Ret() { a.Buf = append(a.Buf, 0xC3) }

// Ud2 emits "ud2", which raises #UD.
func (a *Asm) Ud2() { a.Buf = append(a.Buf, 0x0F, 0x0B) }

// SSE describes an SSE instruction's encoding: its mandatory prefix (0,
// 0x66, 0xF2 or 0xF3), opcode map (0 for 0F, or 0x38 or 0x3A) and opcode
// byte, and whether it takes REX.W (a 64-bit general register operand).
type SSE struct {
	Prefix, Map, Op byte
	W               bool
}

func (s SSE) flags() flags {
	var f flags
	switch s.Prefix {
	case 0:
	case 0x66:
		f |= f66
	case 0xF2:
		f |= fF2
	case 0xF3:
		f |= fF3
	default:
		panic(fmt.Sprintf("amd64asm: invalid SSE prefix %#x", s.Prefix))
	}
	switch s.Map {
	case 0:
	case 0x38:
		f |= f0F38
	case 0x3A:
		f |= f0F3A
	default:
		panic(fmt.Sprintf("amd64asm: invalid SSE opcode map %#x", s.Map))
	}
	if s.W {
		f |= fW
	}
	return f
}

// SSERR emits the SSE instruction s with register operands: reg in
// ModRM.reg and rm in ModRM.rm (XMM or general registers 0-15, as the
// instruction has them).
func (a *Asm) SSERR(s SSE, reg, rm Reg) { a.rr(s.flags(), 0x0F00|uint16(s.Op), reg, rm) }

// SSERM emits the SSE instruction s with reg in ModRM.reg and the memory
// operand m.
func (a *Asm) SSERM(s SSE, reg Reg, m Mem) {
	a.rm(s.flags(), 0x0F00|uint16(s.Op), reg, m)
	a.wrote(m) // some forms store
}

// Imm8 appends an immediate byte to the instruction just emitted (pshufd,
// shufps, the shifts by an immediate…).
func (a *Asm) Imm8(v uint8) { a.Buf = append(a.Buf, v) }
