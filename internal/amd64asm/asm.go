// Package amd64asm is a small x86-64 machine-code emitter used by ttd's block
// translator (the JIT that turns recorded guest basic blocks into host code).
//
// It covers exactly the general-purpose integer instructions the translator
// needs, always in 64-bit mode, and is built to be cheap: every method appends
// one instruction to Asm.Buf, the only allocations are the growth of Buf and of
// the label bookkeeping slices, and there are no maps or interfaces on the hot
// path. Arguments that cannot be encoded (bad operand size, RSP as an index,
// unknown label, ...) are programming errors in the caller and cause a panic.
//
// Operand order follows Intel syntax: destination first.
package amd64asm

import (
	"encoding/binary"
	"fmt"
)

// Reg is a host general-purpose register in hardware encoding order.
// The same value names the 8-, 16-, 32- or 64-bit view of the register; the
// view is selected by the operand size passed to each method.
type Reg uint8

// The sixteen general-purpose registers, numbered as in the ModRM/REX encoding.
const (
	RAX Reg = iota
	RCX
	RDX
	RBX
	RSP
	RBP
	RSI
	RDI
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
)

// NoIndex marks a Mem without an index register.
const NoIndex Reg = 0xff

// Mem is the memory operand [Base + Index<<Scale + Disp].
//
// Base is always a register (RIP-relative and absolute forms are not
// supported). Index is NoIndex or any register except RSP, and Scale (0-3)
// is the log2 of the index multiplier. The shortest displacement encoding is
// chosen automatically.
//
// Direct makes the operand the register Base itself (ModRM mod 3, made by
// R): a method that takes a Mem then emits its register form, which is
// how the translator keeps a guest register in a host register without a
// second set of methods. Lea refuses it; Base must not be RSP, RBP, RSI or
// RDI, whose byte views need a REX prefix the Mem form does not know of.
type Mem struct {
	Base, Index Reg
	Scale       uint8
	Disp        int32
	Direct      bool
}

// R is the Direct operand of register r.
func R(r Reg) Mem {
	if r >= RSP && r <= RDI {
		panic(fmt.Sprintf("amd64asm: register %d as a Direct operand", r))
	}
	return Mem{Base: r, Index: NoIndex, Direct: true}
}

// M is shorthand for Mem{Base: base, Index: NoIndex, Disp: disp}.
func M(base Reg, disp int32) Mem {
	return Mem{Base: base, Index: NoIndex, Disp: disp}
}

// Label is a position in the code, bound once with Bind, that jumps can
// reference before or after it is bound. Labels are created by NewLabel and
// are only meaningful for the Asm that created them.
type Label int32

// fixup records a rel32 field at Buf[pos:pos+4] that must be patched with the
// distance from pos+4 (the end of the jump) to label.
type fixup struct {
	pos   int32
	label Label
}

// Asm accumulates machine code in Buf. The zero value is ready to use.
type Asm struct {
	// Buf holds the emitted code. Callers may read it at any time, but the
	// displacements of jumps to labels that were not yet bound when the jump
	// was emitted are only valid after Finish.
	Buf []byte

	labels []int32 // label -> bound offset, or -1 while unbound
	fixups []fixup // jumps emitted before their label was bound

	// ElideReloads drops a 64-bit load "mov r, [m]" that directly
	// follows the store "mov [m], r" of the same register to the same
	// operand, with no label bound between them: r still holds the
	// value (translated code stores a guest register and the next
	// instruction often loads it again, a store-forwarding delay on
	// the dependency chain).
	ElideReloads bool
	stored       lastStore

	// Written holds the registers (bit r) that an instruction may have
	// written through a Direct operand since Reset: a store, a
	// read-modify-write, setcc, or any SSE/VEX form. The translator
	// stores back only those of the guest registers it keeps in host
	// registers.
	Written uint16
}

// lastStore is the last 64-bit register store emitted, valid (ok) while
// end is the length of the code (nothing emitted or bound after it).
type lastStore struct {
	ok  bool
	end int
	reg Reg
	mem Mem
}

// Reset empties Buf and forgets all labels, keeping the allocated capacity so
// that the Asm can be reused for the next block without allocating.
func (a *Asm) Reset() {
	a.Buf = a.Buf[:0]
	a.labels = a.labels[:0]
	a.fixups = a.fixups[:0]
	a.stored.ok = false
	a.Written = 0
}

// Len returns the number of bytes emitted so far.
func (a *Asm) Len() int { return len(a.Buf) }

// NewLabel returns a new, unbound label.
func (a *Asm) NewLabel() Label {
	a.labels = append(a.labels, -1)
	return Label(len(a.labels) - 1)
}

// Bind binds l to the current position. A label may be bound only once.
func (a *Asm) Bind(l Label) {
	a.checkLabel(l)
	if a.labels[l] >= 0 {
		panic(fmt.Sprintf("amd64asm: label %d bound twice", l))
	}
	a.labels[l] = int32(len(a.Buf))
	a.stored.ok = false // code may jump here with other values
}

// Finish patches the rel32 displacement of every jump whose label was bound
// after the jump was emitted. It returns an error if a referenced label was
// never bound. Finish may be called again after emitting more code.
func (a *Asm) Finish() error {
	for _, f := range a.fixups {
		target := a.labels[f.label]
		if target < 0 {
			return fmt.Errorf("amd64asm: label %d referenced at offset %d was never bound", f.label, f.pos)
		}
		binary.LittleEndian.PutUint32(a.Buf[f.pos:], uint32(target-(f.pos+4)))
	}
	return nil
}

func (a *Asm) checkLabel(l Label) {
	if l < 0 || int(l) >= len(a.labels) {
		panic(fmt.Sprintf("amd64asm: unknown label %d", l))
	}
}

// rel32 appends the 4-byte displacement of a jump to l, which must be the last
// field of the instruction. Jumps to bound labels are resolved immediately,
// the others are recorded for Finish.
func (a *Asm) rel32(l Label) {
	a.checkLabel(l)
	pos := int32(len(a.Buf))
	var rel int32
	if target := a.labels[l]; target >= 0 {
		rel = target - (pos + 4)
	} else {
		a.fixups = append(a.fixups, fixup{pos: pos, label: l})
	}
	a.imm32(rel)
}

// flags describe the prefix-level properties of one instruction.
type flags uint8

const (
	fW       flags = 1 << iota // REX.W: 64-bit operand size
	f66                        // 0x66 operand-size prefix: 16-bit operand size
	fF3                        // mandatory 0xF3 prefix (tzcnt, lzcnt, popcnt)
	fByteReg                   // ModRM.reg names a byte register
	fByteRM                    // ModRM.rm names a byte register (register form)
	fF2                        // mandatory 0xF2 prefix (SSE)
	f0F38                      // opcode map 0F 38 (op is the last byte)
	f0F3A                      // opcode map 0F 3A
)

// sizeFlags returns the flags for an instruction whose operands (both of them
// for two-operand forms) are size bytes wide.
func sizeFlags(size int) flags {
	switch size {
	case 1:
		return fByteReg | fByteRM
	case 2:
		return f66
	case 4:
		return 0
	case 8:
		return fW
	}
	panic(fmt.Sprintf("amd64asm: invalid operand size %d", size))
}

// wideFlags is sizeFlags for instructions that have no byte form.
func wideFlags(size int) flags {
	if size == 1 {
		panic("amd64asm: operand size 1 not supported by this instruction")
	}
	return sizeFlags(size)
}

// byteOp returns sizeFlags(size) and the opcode offset that selects the
// operand size: 0 for the byte opcode (size 1), 1 for the full-size opcode.
func byteOp(size int) (flags, byte) {
	f := sizeFlags(size)
	if size == 1 {
		return f, 0
	}
	return f, 1
}

func checkReg(r Reg) {
	if r > R15 {
		panic(fmt.Sprintf("amd64asm: invalid register %d", r))
	}
}

// prefixes appends the legacy prefixes and, if needed, the REX prefix with the
// given R/X/B bits (already in position).
func (a *Asm) prefixes(f flags, rex byte) {
	if f&f66 != 0 {
		a.Buf = append(a.Buf, 0x66)
	}
	if f&fF3 != 0 {
		a.Buf = append(a.Buf, 0xF3)
	}
	if f&fF2 != 0 {
		a.Buf = append(a.Buf, 0xF2)
	}
	if f&fW != 0 {
		rex |= 0x48
	}
	if rex != 0 {
		a.Buf = append(a.Buf, rex|0x40)
	}
}

// opcode appends a one-byte opcode, or 0x0F followed by the low byte when op
// has a nonzero high byte (two-byte opcodes are written as 0x0Fxx).
func (a *Asm) opcode(f flags, op uint16) {
	switch {
	case f&f0F38 != 0:
		a.Buf = append(a.Buf, 0x0F, 0x38, byte(op))
	case f&f0F3A != 0:
		a.Buf = append(a.Buf, 0x0F, 0x3A, byte(op))
	case op > 0xff:
		a.Buf = append(a.Buf, byte(op>>8), byte(op))
	default:
		a.Buf = append(a.Buf, byte(op))
	}
}

// rr appends an instruction with a register-direct ModRM operand:
// prefixes, op, ModRM(mod=3, reg, rm).
func (a *Asm) rr(f flags, op uint16, reg, rm Reg) {
	checkReg(reg)
	checkReg(rm)
	var rex byte
	if reg >= 8 {
		rex |= 0x44
	} else if reg >= 4 && f&fByteReg != 0 {
		rex |= 0x40 // SPL/BPL/SIL/DIL instead of AH/CH/DH/BH
	}
	if rm >= 8 {
		rex |= 0x41
	} else if rm >= 4 && f&fByteRM != 0 {
		rex |= 0x40
	}
	a.prefixes(f, rex)
	a.opcode(f, op)
	a.Buf = append(a.Buf, 0xC0|byte(reg&7)<<3|byte(rm&7))
}

// rd is rr with an opcode extension (/digit) in ModRM.reg.
func (a *Asm) rd(f flags, op uint16, digit byte, rm Reg) {
	a.rr(f&^fByteReg, op, Reg(digit), rm)
}

// rm appends an instruction with a memory ModRM operand:
// prefixes, op, ModRM, optional SIB, optional displacement.
func (a *Asm) rm(f flags, op uint16, reg Reg, m Mem) {
	if m.Direct {
		a.rr(f, op, reg, m.Base)
		return
	}
	checkReg(reg)
	checkReg(m.Base)
	if m.Scale > 3 {
		panic(fmt.Sprintf("amd64asm: invalid scale %d", m.Scale))
	}
	var rex byte
	if reg >= 8 {
		rex |= 0x44
	} else if reg >= 4 && f&fByteReg != 0 {
		rex |= 0x40
	}
	if m.Base >= 8 {
		rex |= 0x41
	}
	hasIndex := m.Index != NoIndex
	if hasIndex {
		if m.Index == RSP {
			panic("amd64asm: RSP cannot be an index register")
		}
		checkReg(m.Index)
		if m.Index >= 8 {
			rex |= 0x42
		}
	}
	a.prefixes(f, rex)
	a.opcode(f, op)
	a.modrmMem(reg, m)
}

// modrmMem appends the ModRM byte, SIB byte and displacement of the
// memory operand m with reg in ModRM.reg (whose REX or VEX bits the
// caller has emitted).
func (a *Asm) modrmMem(reg Reg, m Mem) {
	hasIndex := m.Index != NoIndex
	base := byte(m.Base & 7)
	var mod byte
	switch {
	case m.Disp == 0 && base != 5: // RBP/R13 as base with mod 0 mean RIP/disp32
		mod = 0
	case m.Disp == int32(int8(m.Disp)):
		mod = 1
	default:
		mod = 2
	}
	regBits := byte(reg&7) << 3
	if hasIndex || base == 4 { // RSP/R12 as rm select a SIB byte
		index := byte(4) // "no index"
		scale := byte(0)
		if hasIndex {
			index = byte(m.Index & 7)
			scale = m.Scale
		}
		a.Buf = append(a.Buf, mod<<6|regBits|4, scale<<6|index<<3|base)
	} else {
		a.Buf = append(a.Buf, mod<<6|regBits|base)
	}
	switch mod {
	case 1:
		a.Buf = append(a.Buf, byte(m.Disp))
	case 2:
		a.imm32(m.Disp)
	}
}

// md is rm with an opcode extension (/digit) in ModRM.reg.
func (a *Asm) md(f flags, op uint16, digit byte, m Mem) {
	a.rm(f&^fByteReg, op, Reg(digit), m)
}

// wrote notes that the instruction just emitted may have written m when
// it is Direct (Asm.Written).
func (a *Asm) wrote(m Mem) {
	if m.Direct {
		a.Written |= 1 << m.Base
	}
}

func (a *Asm) imm8(v int8) { a.Buf = append(a.Buf, byte(v)) }

func (a *Asm) imm16(v int16) { a.Buf = binary.LittleEndian.AppendUint16(a.Buf, uint16(v)) }

func (a *Asm) imm32(v int32) { a.Buf = binary.LittleEndian.AppendUint32(a.Buf, uint32(v)) }

// immValue checks that imm is encodable for an operand of size bytes and
// returns it truncated to the operand width and sign-extended back to int64,
// which is the value the CPU sees. Sizes 1, 2 and 4 accept anything that fits
// the width as a signed or an unsigned number; size 8 accepts only values
// that fit a sign-extended imm32.
func immValue(size int, imm int64) int64 {
	var lo, hi, v int64
	switch size {
	case 1:
		lo, hi, v = -1<<7, 1<<8-1, int64(int8(imm))
	case 2:
		lo, hi, v = -1<<15, 1<<16-1, int64(int16(imm))
	case 4:
		lo, hi, v = -1<<31, 1<<32-1, int64(int32(imm))
	case 8:
		lo, hi, v = -1<<31, 1<<31-1, imm
	default:
		panic(fmt.Sprintf("amd64asm: invalid operand size %d", size))
	}
	if imm < lo || imm > hi {
		panic(fmt.Sprintf("amd64asm: immediate %#x does not fit operand size %d", imm, size))
	}
	return v
}

// immN appends the full-width immediate for an operand of size bytes:
// imm8, imm16, or imm32 (also for size 8, where it is sign-extended).
func (a *Asm) immN(size int, v int64) {
	switch size {
	case 1:
		a.imm8(int8(v))
	case 2:
		a.imm16(int16(v))
	default:
		a.imm32(int32(v))
	}
}

func fitsInt8(v int64) bool { return v == int64(int8(v)) }

// LabelPos returns the offset l is bound to, or -1 while it is unbound.
func (a *Asm) LabelPos(l Label) int {
	a.checkLabel(l)
	return int(a.labels[l])
}
