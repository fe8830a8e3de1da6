package amd64asm

import "fmt"

// VEX describes a VEX-encoded instruction (AVX, AVX2, FMA, BMI): its
// opcode map (1: 0F, 2: 0F38, 3: 0F3A), implied prefix (PP 0: none, 1:
// 66, 2: F3, 3: F2), opcode byte, VEX.W and VEX.L (256-bit).
type VEX struct {
	Map, PP, Op byte
	W, L        bool
}

// vexPrefix appends the VEX prefix and opcode of v with the register
// extension bits of ModRM.reg (r), SIB.index (x) and ModRM.rm or
// SIB.base (b), and VEX.vvvv naming register vvvv (0-15).
func (a *Asm) vexPrefix(v VEX, r, x, b bool, vvvv Reg) {
	if v.Map < 1 || v.Map > 3 || v.PP > 3 {
		panic(fmt.Sprintf("amd64asm: invalid VEX map %d / pp %d", v.Map, v.PP))
	}
	checkReg(vvvv)
	p2 := byte(^vvvv&15)<<3 | v.PP
	if v.L {
		p2 |= 4
	}
	if !x && !b && !v.W && v.Map == 1 {
		// The two-byte form: C5, R̄ v̄v̄v̄v̄ L pp.
		p1 := p2
		if !r {
			p1 |= 0x80
		}
		a.Buf = append(a.Buf, 0xC5, p1, v.Op)
		return
	}
	p1 := v.Map
	if !r {
		p1 |= 0x80
	}
	if !x {
		p1 |= 0x40
	}
	if !b {
		p1 |= 0x20
	}
	if v.W {
		p2 |= 0x80
	}
	a.Buf = append(a.Buf, 0xC4, p1, p2, v.Op)
}

// VEXRR emits v with register operands: reg in ModRM.reg, vvvv in
// VEX.vvvv and rm in ModRM.rm (XMM/YMM or general registers, as the
// instruction has them; vvvv 0 where the instruction has none, which
// encodes as 1111b).
func (a *Asm) VEXRR(v VEX, reg, vvvv, rm Reg) {
	checkReg(reg)
	checkReg(rm)
	a.vexPrefix(v, reg >= 8, false, rm >= 8, vvvv)
	a.Buf = append(a.Buf, 0xC0|byte(reg&7)<<3|byte(rm&7))
}

// VEXRM emits v with reg in ModRM.reg, vvvv in VEX.vvvv and the memory
// operand m.
func (a *Asm) VEXRM(v VEX, reg, vvvv Reg, m Mem) {
	if m.Direct {
		a.VEXRR(v, reg, vvvv, m.Base)
		a.wrote(m) // some forms store
		return
	}
	checkReg(reg)
	checkReg(m.Base)
	if m.Scale > 3 {
		panic(fmt.Sprintf("amd64asm: invalid scale %d", m.Scale))
	}
	x := false
	if m.Index != NoIndex {
		if m.Index == RSP {
			panic("amd64asm: RSP cannot be an index register")
		}
		checkReg(m.Index)
		x = m.Index >= 8
	}
	a.vexPrefix(v, reg >= 8, x, m.Base >= 8, vvvv)
	a.modrmMem(reg, m)
}

// Rorx emits "rorx dst, src, imm" (size 4 or 8; requires BMI2): a rotate
// that leaves the flags alone.
func (a *Asm) Rorx(size int, dst, src Reg, imm uint8) {
	if size != 4 && size != 8 {
		panic(fmt.Sprintf("amd64asm: invalid rorx size %d", size))
	}
	a.VEXRR(VEX{Map: 3, PP: 3, Op: 0xF0, W: size == 8}, dst, 0, src)
	a.Buf = append(a.Buf, imm)
}
