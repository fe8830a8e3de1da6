package x86

// VEX decoding. golang.org/x/arch/x86/x86asm does not decode the VEX
// prefix (C4 and C5), so the forms of AVX, AVX2, FMA3, BMI1, BMI2 and
// F16C are decoded here, into the same compact Inst:
//
//	Args[0]  ModRM.reg: an XMM/YMM register (Size 16 or 32) or, for the
//	         general-register forms, a register (Size 4 or 8)
//	Args[1]  ModRM.rm: a register or memory (Size = the bytes accessed)
//	Args[2]  the imm8, when the instruction has one (KImm)
//	Aux      VEX.vvvv | L<<4 | W<<5 (vexV, vexL, vexW)
//
// Each handler knows its own operand roles (which of them is the
// destination). An EVEX prefix (AVX-512) is reported as unimplemented.

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// vexOp describes one VEX opcode: its name, the extension it belongs to,
// whether an imm8 follows the ModRM operand, and the builder of its
// handler (nil: ttd does not implement it; the name still names it).
type vexOp struct {
	name  string
	feat  Features
	imm   bool
	noRM  bool // no ModRM byte (vzeroupper, vzeroall)
	vsib  bool // the SIB index is a vector register (gathers): index 4 is XMM4
	build func(in *Inst) Handler
}

// vexOps is indexed by vexKey.
var vexOps = map[uint16]*vexOp{}

// vexKey is the table key of an opcode in map m (1: 0F, 2: 0F38, 3: 0F3A)
// with implied prefix pp (0: none, 1: 66, 2: F3, 3: F2).
func vexKey(m, pp int, op byte) uint16 { return uint16(m)<<10 | uint16(pp)<<8 | uint16(op) }

// defVex installs a VEX opcode.
func defVex(m, pp int, op byte, name string, feat Features, imm bool, build func(in *Inst) Handler) {
	k := vexKey(m, pp, op)
	if vexOps[k] != nil {
		panic(fmt.Sprintf("x86: VEX %s defined twice", name))
	}
	vexOps[k] = &vexOp{name: name, feat: feat, imm: imm, build: build}
}

func vexV(in *Inst) uint8 { return uint8(in.Aux & 15) }
func vexL(in *Inst) bool  { return in.Aux>>4&1 != 0 }
func vexW(in *Inst) bool  { return in.Aux>>5&1 != 0 }

// vexPrefixes returns the offset of a C4/C5/62 byte after the legacy
// prefixes VEX allows (segment overrides, 67), or -1. 66, F2, F3, F0 or
// a REX prefix before VEX is #UD: bad reports that.
func vexStart(code []byte) (i int, bad bool) {
	for i < len(code) {
		switch b := code[i]; {
		case b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65 || b == 0x67:
			i++
			continue
		case b == 0x66 || b == 0xf2 || b == 0xf3 || b == 0xf0 || b&0xf0 == 0x40:
			bad = true
			i++
			continue
		case b == 0xc4 || b == 0xc5 || b == 0x62:
			return i, bad
		}
		return -1, false
	}
	return -1, false
}

// decodeVEX decodes a VEX- or EVEX-prefixed instruction into in; it
// reports false when code does not start with one.
func decodeVEX(in *Inst, pc uint64, code []byte) bool {
	start, bad := vexStart(code)
	if start < 0 {
		return false
	}
	var seg uint8
	a32 := false
	for _, b := range code[:start] {
		switch b {
		case 0x64:
			seg = SegFS
		case 0x65:
			seg = SegGS
		case 0x67:
			a32 = true
		}
	}
	i := start
	need := func(n int) bool { return i+n <= len(code) }
	if code[i] == 0x62 {
		// EVEX: AVX-512, which ttd does not implement. Its length is
		// not needed: the instruction stops the program.
		in.Len = uint8(min(len(code), 15))
		in.Fn = unimplementedEVEX
		in.Flags = InstEndsBlock
		return true
	}
	var m, pp int
	var r, x, b, w, l bool
	var vvvv uint8
	if code[i] == 0xc5 {
		if !need(2) {
			return truncVEX(in)
		}
		p := code[i+1]
		r, m, vvvv, l, pp = p&0x80 == 0, 1, ^p>>3&15, p&4 != 0, int(p&3)
		i += 2
	} else {
		if !need(3) {
			return truncVEX(in)
		}
		p1, p2 := code[i+1], code[i+2]
		r, x, b, m = p1&0x80 == 0, p1&0x40 == 0, p1&0x20 == 0, int(p1&31)
		w, vvvv, l, pp = p2&0x80 != 0, ^p2>>3&15, p2&4 != 0, int(p2&3)
		i += 3
	}
	if !need(1) {
		return truncVEX(in)
	}
	opc := code[i]
	i++
	vo := vexOps[vexKey(m, pp, opc)]
	in.Aux = uint32(vvvv) | uint32(b2u(l))<<4 | uint32(b2u(w))<<5
	if vo != nil && vo.noRM {
		in.Len = uint8(i)
	} else {
		// ModRM, SIB, displacement.
		if !need(1) {
			return truncVEX(in)
		}
		modrm := code[i]
		i++
		mod, reg, rm := modrm>>6, modrm>>3&7, modrm&7
		in.Args[0] = Operand{Kind: KXMM, Reg: reg | uint8(b2u(r))<<3, Size: 16}
		o := &in.Args[1]
		if mod == 3 {
			*o = Operand{Kind: KXMM, Reg: rm | uint8(b2u(b))<<3, Size: 16}
		} else {
			*o = Operand{Kind: KMem, Base: NoReg, Index: NoReg, Seg: seg, A32: a32}
			ripRel := false
			if rm == 4 {
				if !need(1) {
					return truncVEX(in)
				}
				sib := code[i]
				i++
				o.Scale = sib >> 6
				if idx := sib>>3&7 | uint8(b2u(x))<<3; idx != 4 || vo != nil && vo.vsib {
					o.Index = idx
				}
				if sib&7 == 5 && mod == 0 {
					if !need(4) {
						return truncVEX(in)
					}
					o.Imm = uint64(int64(int32(le32(code[i:]))))
					i += 4
				} else {
					o.Base = sib&7 | uint8(b2u(b))<<3
				}
			} else if rm == 5 && mod == 0 {
				ripRel = true
				if !need(4) {
					return truncVEX(in)
				}
				o.Imm = uint64(int64(int32(le32(code[i:]))))
				i += 4
			} else {
				o.Base = rm | uint8(b2u(b))<<3
			}
			switch mod {
			case 1:
				if !need(1) {
					return truncVEX(in)
				}
				o.Imm += uint64(int64(int8(code[i])))
				i++
			case 2:
				if !need(4) {
					return truncVEX(in)
				}
				o.Imm += uint64(int64(int32(le32(code[i:]))))
				i += 4
			}
			if ripRel {
				defer func() { in.Args[1].Imm += pc + uint64(in.Len) }()
			}
		}
		in.NArgs = 2
		if vo != nil && vo.imm {
			if !need(1) {
				return truncVEX(in)
			}
			in.Args[2] = Operand{Kind: KImm, Size: 1, Imm: uint64(code[i])}
			in.NArgs = 3
			i++
		}
		in.Len = uint8(i)
	}
	if i > 15 {
		in.Len = 15
		in.Fn, in.Flags = illegal, InstEndsBlock
		return true
	}
	switch {
	case bad:
		in.Fn, in.Flags = illegal, InstEndsBlock
	case vo == nil || vo.build == nil:
		in.Fn, in.Flags = unimplementedVEX, InstEndsBlock
	default:
		in.Fn = vo.build(in)
		if in.Fn == nil {
			in.Fn, in.Flags = unimplementedVEX, InstEndsBlock
		}
	}
	in.Op = vexOpBase + x86asm.Op(vexKey(m, pp, opc))
	in.ID = handlerID(in.Fn)
	return true
}

// vexOpBase numbers the VEX ops after x86asm's (Inst.Op of a VEX
// instruction is vexOpBase+vexKey; opFeature and the gate know them).
const vexOpBase = x86asm.Op(1 << 15)

// vexOpOf returns the table entry of a decoded VEX instruction (an
// opcode ttd does not know is AVX's).
func vexOpOf(op x86asm.Op) *vexOp {
	if op < vexOpBase {
		return nil
	}
	if vo := vexOps[uint16(op-vexOpBase)]; vo != nil {
		return vo
	}
	return &unknownVex
}

var unknownVex = vexOp{name: "VEX instruction", feat: FeatAVX}

func truncVEX(in *Inst) bool {
	*in = Inst{} // Len 0: truncated
	return true
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func unimplementedEVEX(c *CPU, in *Inst) {
	c.unimpl(in, "AVX-512 (EVEX-encoded) instruction")
}

// unimplementedVEX names the VEX opcode that ttd does not implement.
func unimplementedVEX(c *CPU, in *Inst) {
	var buf [15]byte
	n := c.cache.fetch(in.PC, buf[:in.Len])
	start, _ := vexStart(buf[:n])
	name := "VEX instruction"
	if start >= 0 && start+3 < n {
		m, pp, op := 1, 0, buf[start+2]
		if buf[start] == 0xc5 {
			pp = int(buf[start+1] & 3)
		} else {
			m, pp, op = int(buf[start+1]&31), int(buf[start+2]&3), buf[start+3]
		}
		if vo := vexOps[vexKey(m, pp, op)]; vo != nil {
			name = vo.name
		} else {
			name = fmt.Sprintf("VEX map %d opcode %#02x (pp %d)", m, op, pp)
		}
		if l := vexL(in); l {
			name += " (256-bit)"
		}
	}
	c.unimpl(in, name)
}
