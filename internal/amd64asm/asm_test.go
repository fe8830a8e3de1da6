package amd64asm

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// The oracle for every test is x86asm: each emitted instruction is decoded on
// its own (its length must equal the bytes the method appended) and formatted
// in Intel syntax, which must match the expected text built here. Where the
// exact encoding matters (shortest immediate/displacement form, no superfluous
// prefix) the expected length is checked as well. Finally, the concatenation
// of everything a test emitted is decoded in one pass to check that the
// instruction boundaries line up.

// tcase is one emitted instruction and what it must decode to.
type tcase struct {
	off, n  int    // position and length in Buf
	want    string // Intel syntax, as printed by x86asm.IntelSyntax
	wantLen int    // expected encoding length; 0 means "not checked"
}

type checker struct {
	t     *testing.T
	a     Asm
	cases []tcase
}

func newChecker(t *testing.T) *checker { return &checker{t: t} }

// emit runs f, which must append exactly one instruction decoding to want.
func (c *checker) emit(want string, f func(*Asm)) { c.emitLen(want, 0, f) }

// emitLen is emit that also checks the encoding length.
func (c *checker) emitLen(want string, wantLen int, f func(*Asm)) {
	off := len(c.a.Buf)
	f(&c.a)
	c.cases = append(c.cases, tcase{off: off, n: len(c.a.Buf) - off, want: want, wantLen: wantLen})
}

// verify patches labels and checks every recorded instruction.
func (c *checker) verify() {
	t := c.t
	t.Helper()
	if err := c.a.Finish(); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	buf := c.a.Buf
	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if failures++; failures <= 30 {
			t.Errorf(format, args...)
		}
	}
	for _, tc := range c.cases {
		code := buf[tc.off : tc.off+tc.n]
		inst, err := x86asm.Decode(code, 64)
		if err != nil {
			fail("%q: cannot decode % x: %v", tc.want, code, err)
			continue
		}
		if inst.Len != tc.n {
			fail("%q: % x: decoded length %d, method appended %d bytes", tc.want, code, inst.Len, tc.n)
		}
		if got := x86asm.IntelSyntax(inst, uint64(tc.off), nil); got != tc.want {
			fail("% x: decodes as %q, want %q", code, got, tc.want)
		}
		if tc.wantLen != 0 && tc.n != tc.wantLen {
			fail("%q: % x: encoded in %d bytes, want %d", tc.want, code, tc.n, tc.wantLen)
		}
	}
	if failures > 30 {
		t.Errorf("... and %d more failures", failures-30)
	}

	// Decode the concatenation in one pass.
	pos, i := 0, 0
	for pos < len(buf) {
		inst, err := x86asm.Decode(buf[pos:], 64)
		if err != nil {
			t.Fatalf("stream decode at offset %d: %v", pos, err)
		}
		if i >= len(c.cases) || c.cases[i].off != pos || c.cases[i].n != inst.Len {
			t.Fatalf("stream decode: instruction %d at offset %d (len %d) does not match the emitted boundaries", i, pos, inst.Len)
		}
		pos += inst.Len
		i++
	}
	if i != len(c.cases) {
		t.Fatalf("stream decode found %d instructions, emitted %d", i, len(c.cases))
	}
	t.Logf("verified %d instructions, %d bytes", len(c.cases), len(buf))
}

// ---- expected-text helpers ----

var regNames = map[int][16]string{
	1: {"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b"},
	2: {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w"},
	4: {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"},
	8: {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"},
}

func rn(size int, r Reg) string { return regNames[size][r] }

var aluNames = [8]string{"add", "or", "adc", "sbb", "and", "sub", "xor", "cmp"}
var shiftNames = [8]string{"rol", "ror", "rcl", "rcr", "shl", "shr", "", "sar"}
var shifts = []Shift{ROL, ROR, RCL, RCR, SHL, SHR, SAR}

// ccNames are x86asm's Intel spellings of the condition codes.
var ccNames = [16]string{"o", "no", "b", "nb", "z", "nz", "be", "nbe", "s", "ns", "p", "np", "l", "nl", "le", "nle"}

var sizes = []int{1, 2, 4, 8}
var wideSizes = []int{2, 4, 8}

// ms formats a memory operand; size 0 means no size keyword (lea).
func ms(size int, m Mem) string {
	var sb strings.Builder
	sb.WriteString(map[int]string{0: "", 1: "byte ", 2: "word ", 4: "dword ", 8: "qword "}[size])
	sb.WriteString("ptr [")
	sb.WriteString(rn(8, m.Base))
	if m.Index != NoIndex {
		sb.WriteString("+")
		if m.Scale > 0 {
			fmt.Fprintf(&sb, "%d*", 1<<m.Scale)
		}
		sb.WriteString(rn(8, m.Index))
	}
	switch {
	case m.Disp == 0:
	case m.Disp == int32(int8(m.Disp)):
		fmt.Fprintf(&sb, "%+#x", m.Disp)
	default:
		// x86asm zero-extends disp32 when decoding (the CPU sign-extends
		// it), so a negative disp32 prints as a large positive number.
		fmt.Fprintf(&sb, "+%#x", uint32(m.Disp))
	}
	sb.WriteString("]")
	return sb.String()
}

// is formats an immediate as x86asm does: byte immediates unsigned, wider
// ones sign-extended from the operand width.
func is(size int, v int64) string {
	switch size {
	case 1:
		return fmt.Sprintf("%#x", uint8(v))
	case 2:
		return fmt.Sprintf("%#x", int16(v))
	default:
		return fmt.Sprintf("%#x", int32(v))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// encLen is the expected length of an instruction with the given operand
// size, opcode length, ModRM-reg register (or -1 for a /digit), register r/m
// operand (or -1) or memory operand m, and immediate length.
func encLen(size, opLen int, reg, rmReg int, m *Mem, immLen int) int {
	rex := size == 8 || reg >= 8 || rmReg >= 8
	if size == 1 {
		rex = rex || (reg >= 4 && reg < 8) || (rmReg >= 4 && rmReg < 8)
	}
	n := b2i(size == 2) + opLen + 1 + immLen
	if m != nil {
		rex = rex || m.Base >= 8 || (m.Index != NoIndex && m.Index >= 8)
		if m.Index != NoIndex || m.Base&7 == 4 {
			n++ // SIB
		}
		switch {
		case m.Disp == 0 && m.Base&7 != 5:
		case m.Disp == int32(int8(m.Disp)):
			n++
		default:
			n += 4
		}
	}
	return n + b2i(rex)
}

var testDisps = []int32{0, 1, -1, 0x7f, -0x80, 0x80, -0x81, 0x12345678, 0x7fffffff, -0x80000000}

// allMems is every base × (no index | every index × every scale) × testDisps.
func allMems() []Mem {
	var ms []Mem
	for base := RAX; base <= R15; base++ {
		for _, d := range testDisps {
			ms = append(ms, M(base, d))
			for idx := RAX; idx <= R15; idx++ {
				if idx == RSP {
					continue
				}
				for scale := uint8(0); scale < 4; scale++ {
					ms = append(ms, Mem{Base: base, Index: idx, Scale: scale, Disp: d})
				}
			}
		}
	}
	return ms
}

// someMems is a smaller set that still has every base register, every kind
// of displacement, and index registers on both sides of 8.
func someMems() []Mem {
	var ms []Mem
	for base := RAX; base <= R15; base++ {
		ms = append(ms, M(base, 0), M(base, -0x80), M(base, 0x1000))
		idx := (base + 5) & 15
		if idx == RSP {
			idx = R12
		}
		ms = append(ms, Mem{Base: base, Index: idx, Scale: uint8(base & 3), Disp: -0x12345})
	}
	return ms
}

// ---- tests ----

func TestRegReg(t *testing.T) {
	c := newChecker(t)
	for _, size := range sizes {
		for dst := RAX; dst <= R15; dst++ {
			for src := RAX; src <= R15; src++ {
				d, s := rn(size, dst), rn(size, src)
				l := encLen(size, 1, int(src), int(dst), nil, 0)
				for op := ADD; op <= CMP; op++ {
					c.emitLen(aluNames[op]+" "+d+", "+s, l, func(a *Asm) { a.ALURR(op, size, dst, src) })
				}
				c.emitLen("mov "+d+", "+s, l, func(a *Asm) { a.MovRR(size, dst, src) })
				c.emitLen("test "+d+", "+s, l, func(a *Asm) { a.TestRR(size, dst, src) })
				c.emitLen("xchg "+d+", "+s, l, func(a *Asm) { a.XchgRR(size, dst, src) })
				if size == 1 {
					continue
				}
				l2 := encLen(size, 2, int(dst), int(src), nil, 0)
				c.emitLen("imul "+d+", "+s, l2, func(a *Asm) { a.ImulRR(size, dst, src) })
				cc := uint8(dst+src) & 15
				c.emitLen("cmov"+ccNames[cc]+" "+d+", "+s, l2, func(a *Asm) { a.Cmov(cc, size, dst, src) })
				c.emit("bsf "+d+", "+s, func(a *Asm) { a.Bsf(size, dst, src) })
				c.emit("bsr "+d+", "+s, func(a *Asm) { a.Bsr(size, dst, src) })
				c.emitLen("tzcnt "+d+", "+s, l2+1, func(a *Asm) { a.Tzcnt(size, dst, src) })
				c.emitLen("lzcnt "+d+", "+s, l2+1, func(a *Asm) { a.Lzcnt(size, dst, src) })
				c.emitLen("popcnt "+d+", "+s, l2+1, func(a *Asm) { a.Popcnt(size, dst, src) })
				c.emit("bt "+d+", "+s, func(a *Asm) { a.BtRR(size, dst, src) })
				c.emit("bts "+d+", "+s, func(a *Asm) { a.BtsRR(size, dst, src) })
				c.emit("btr "+d+", "+s, func(a *Asm) { a.BtrRR(size, dst, src) })
				c.emit("btc "+d+", "+s, func(a *Asm) { a.BtcRR(size, dst, src) })
				c.emit("shld "+d+", "+s+", cl", func(a *Asm) { a.ShldRRCL(size, dst, src) })
				c.emit("shrd "+d+", "+s+", cl", func(a *Asm) { a.ShrdRRCL(size, dst, src) })
				imm := uint8(dst*4 + src)
				c.emit(fmt.Sprintf("shld %s, %s, %#x", d, s, imm), func(a *Asm) { a.ShldRRI(size, dst, src, imm) })
				c.emit(fmt.Sprintf("shrd %s, %s, %#x", d, s, imm), func(a *Asm) { a.ShrdRRI(size, dst, src, imm) })
			}
		}
	}
	c.verify()
}

// TestByteRegs pins the exact bytes of the byte-register REX rule.
func TestByteRegs(t *testing.T) {
	tests := []struct {
		f    func(*Asm)
		want string
	}{
		{func(a *Asm) { a.MovRR(1, RAX, RCX) }, "88 c8"},
		{func(a *Asm) { a.MovRR(1, RSP, RAX) }, "40 88 c4"},
		{func(a *Asm) { a.MovRR(1, RAX, RDI) }, "40 88 f8"},
		{func(a *Asm) { a.MovRR(1, R8, RSI) }, "41 88 f0"},
		{func(a *Asm) { a.MovRR(4, RSP, RSI) }, "89 f4"},
		{func(a *Asm) { a.Setcc(4, RBX) }, "0f 94 c3"},
		{func(a *Asm) { a.Setcc(4, RSI) }, "40 0f 94 c6"},
		{func(a *Asm) { a.Movzx(4, 1, RSI, RBX) }, "0f b6 f3"},
		{func(a *Asm) { a.Movzx(4, 1, RAX, RBP) }, "40 0f b6 c5"},
		{func(a *Asm) { a.Movzx(4, 2, RAX, RBP) }, "0f b7 c5"},
		{func(a *Asm) { a.ShiftRI(SHL, 1, RSI, 1) }, "40 d0 e6"},
		{func(a *Asm) { a.ShiftRI(SHL, 1, RBX, 1) }, "d0 e3"}, // /4 digit must not force REX
		{func(a *Asm) { a.NotR(1, RDX) }, "f6 d2"},
		{func(a *Asm) { a.MovRM(1, RSI, M(RAX, 0)) }, "40 8a 30"},
		{func(a *Asm) { a.MovMI(1, M(RAX, 0), 1) }, "c6 00 01"},
		{func(a *Asm) { a.Popcnt(2, RAX, RCX) }, "66 f3 0f b8 c1"},
		{func(a *Asm) { a.Tzcnt(8, R9, RAX) }, "f3 4c 0f bc c8"},
	}
	for _, tt := range tests {
		var a Asm
		tt.f(&a)
		if got := fmt.Sprintf("% x", a.Buf); got != tt.want {
			t.Errorf("got %s, want %s", got, tt.want)
		}
	}
}

func TestOneReg(t *testing.T) {
	c := newChecker(t)
	for _, size := range sizes {
		for r := RAX; r <= R15; r++ {
			n := rn(size, r)
			l := encLen(size, 1, -1, int(r), nil, 0)
			for _, u := range []struct {
				name string
				f    func(*Asm, int, Reg)
			}{
				{"not", (*Asm).NotR}, {"neg", (*Asm).NegR}, {"inc", (*Asm).IncR}, {"dec", (*Asm).DecR},
				{"mul", (*Asm).MulR}, {"imul", (*Asm).ImulR1}, {"div", (*Asm).DivR}, {"idiv", (*Asm).IdivR},
			} {
				c.emitLen(u.name+" "+n, l, func(a *Asm) { u.f(a, size, r) })
			}
			for _, op := range shifts {
				c.emitLen(shiftNames[op]+" "+n+", 0x1", l, func(a *Asm) { a.ShiftRI(op, size, r, 1) })
				for _, imm := range []uint8{0, 2, 7, 31, 63} {
					c.emitLen(fmt.Sprintf("%s %s, %#x", shiftNames[op], n, imm), l+1, func(a *Asm) { a.ShiftRI(op, size, r, imm) })
				}
				c.emitLen(shiftNames[op]+" "+n+", cl", l, func(a *Asm) { a.ShiftRCL(op, size, r) })
			}
			if size == 1 {
				for cc := uint8(0); cc < 16; cc++ {
					c.emitLen("set"+ccNames[cc]+" "+n, l+1, func(a *Asm) { a.Setcc(cc, r) })
				}
				continue
			}
			for i, name := range []string{"bt", "bts", "btr", "btc"} {
				f := [](func(*Asm, int, Reg, uint8)){(*Asm).BtRI, (*Asm).BtsRI, (*Asm).BtrRI, (*Asm).BtcRI}[i]
				imm := uint8(size*8 - 1)
				c.emitLen(fmt.Sprintf("%s %s, %#x", name, n, imm), l+2, func(a *Asm) { f(a, size, r, imm) })
			}
			if size >= 4 {
				c.emitLen("bswap "+n, 2+b2i(size == 8 || r >= 8), func(a *Asm) { a.Bswap(size, r) })
			}
		}
	}
	for r := RAX; r <= R15; r++ {
		l := 1 + b2i(r >= 8)
		c.emitLen("push "+rn(8, r), l, func(a *Asm) { a.Push(r) })
		c.emitLen("pop "+rn(8, r), l, func(a *Asm) { a.Pop(r) })
	}
	c.verify()
}

// TestMemOperands runs every addressing form through a load and checks the
// exact length, which pins the SIB and displacement choices.
func TestMemOperands(t *testing.T) {
	c := newChecker(t)
	for i, m := range allMems() {
		size := sizes[i%4]
		r := Reg(i % 16)
		c.emitLen("mov "+rn(size, r)+", "+ms(size, m), encLen(size, 1, int(r), -1, &m, 0),
			func(a *Asm) { a.MovRM(size, r, m) })
		c.emitLen("lea "+rn(8, r)+", "+ms(0, m), encLen(8, 1, int(r), -1, &m, 0),
			func(a *Asm) { a.Lea(8, r, m) })
	}
	c.verify()
}

func TestMemInstructions(t *testing.T) {
	c := newChecker(t)
	for i, m := range someMems() {
		for _, size := range sizes {
			r := Reg((i + size) % 16)
			rs, mm := rn(size, r), ms(size, m)
			l := encLen(size, 1, int(r), -1, &m, 0)
			ld := encLen(size, 1, -1, -1, &m, 0)
			for op := ADD; op <= CMP; op++ {
				c.emitLen(aluNames[op]+" "+rs+", "+mm, l, func(a *Asm) { a.ALURM(op, size, r, m) })
				c.emitLen(aluNames[op]+" "+mm+", "+rs, l, func(a *Asm) { a.ALUMR(op, size, m, r) })
				c.emit(aluNames[op]+" "+mm+", "+is(size, 5), func(a *Asm) { a.ALUMI(op, size, m, 5) })
			}
			c.emitLen("mov "+mm+", "+rs, l, func(a *Asm) { a.MovMR(size, m, r) })
			c.emitLen("test "+mm+", "+rs, l, func(a *Asm) { a.TestMR(size, m, r) })
			c.emitLen("test "+mm+", "+is(size, -2), ld+min(size, 4), func(a *Asm) { a.TestMI(size, m, -2) })
			c.emitLen("mov "+mm+", "+is(size, 0x7f), ld+min(size, 4), func(a *Asm) { a.MovMI(size, m, 0x7f) })
			for _, u := range []struct {
				name string
				f    func(*Asm, int, Mem)
			}{{"not", (*Asm).NotM}, {"neg", (*Asm).NegM}, {"inc", (*Asm).IncM}, {"dec", (*Asm).DecM}} {
				c.emitLen(u.name+" "+mm, ld, func(a *Asm) { u.f(a, size, m) })
			}
			for _, op := range shifts {
				c.emitLen(shiftNames[op]+" "+mm+", 0x1", ld, func(a *Asm) { a.ShiftMI(op, size, m, 1) })
				c.emitLen(shiftNames[op]+" "+mm+", 0x5", ld+1, func(a *Asm) { a.ShiftMI(op, size, m, 5) })
				c.emitLen(shiftNames[op]+" "+mm+", cl", ld, func(a *Asm) { a.ShiftMCL(op, size, m) })
			}
			if size == 1 {
				cc := uint8(i & 15)
				c.emitLen("set"+ccNames[cc]+" "+mm, ld+1, func(a *Asm) { a.SetccM(cc, m) })
				continue
			}
			l2 := encLen(size, 2, int(r), -1, &m, 0)
			c.emitLen("imul "+rs+", "+mm, l2, func(a *Asm) { a.ImulRM(size, r, m) })
			cc := uint8(i+size) & 15
			c.emitLen("cmov"+ccNames[cc]+" "+rs+", "+mm, l2, func(a *Asm) { a.CmovM(cc, size, r, m) })
		}
	}
	c.verify()
}

func TestExtend(t *testing.T) {
	c := newChecker(t)
	type ext struct{ dst, src int }
	for _, e := range []ext{{2, 1}, {4, 1}, {8, 1}, {4, 2}, {8, 2}, {8, 4}} {
		for dst := RAX; dst <= R15; dst++ {
			for src := RAX; src <= R15; src++ {
				s := rn(e.src, src)
				if e.src < 4 {
					// dstSize 8 zero-extension is emitted as the 32-bit form.
					zd := rn(min(e.dst, 4), dst)
					c.emit("movzx "+zd+", "+s, func(a *Asm) { a.Movzx(e.dst, e.src, dst, src) })
					c.emit("movsx "+rn(e.dst, dst)+", "+s, func(a *Asm) { a.Movsx(e.dst, e.src, dst, src) })
				} else {
					c.emitLen("movsxd "+rn(8, dst)+", "+s, 3, func(a *Asm) { a.Movsx(8, 4, dst, src) })
				}
			}
		}
		for i, m := range someMems() {
			r := Reg(i % 16)
			if e.src < 4 {
				c.emit("movzx "+rn(min(e.dst, 4), r)+", "+ms(e.src, m), func(a *Asm) { a.MovzxM(e.dst, e.src, r, m) })
				c.emit("movsx "+rn(e.dst, r)+", "+ms(e.src, m), func(a *Asm) { a.MovsxM(e.dst, e.src, r, m) })
			} else {
				c.emit("movsxd "+rn(8, r)+", "+ms(4, m), func(a *Asm) { a.MovsxM(8, 4, r, m) })
			}
		}
	}
	for i, m := range someMems() {
		r := Reg(15 - i%16)
		c.emitLen("lea "+rn(4, r)+", "+ms(0, m), encLen(4, 1, int(r), -1, &m, 0), func(a *Asm) { a.Lea(4, r, m) })
	}
	c.verify()
}

var immBoundaries = []int64{0, 1, -1, 127, 128, -128, -129, 255, 0x7fff, 0x8000, -0x8000, 0xffff,
	0x7fffffff, -0x80000000, 0x80000000, 0xffffffff}

// fitsSize reports whether imm is accepted for the operand size.
func fitsSize(size int, imm int64) bool {
	switch size {
	case 1:
		return imm >= -0x80 && imm <= 0xff
	case 2:
		return imm >= -0x8000 && imm <= 0xffff
	case 4:
		return imm >= -0x80000000 && imm <= 0xffffffff
	}
	return imm == int64(int32(imm))
}

// truncSext returns imm truncated to size and sign-extended.
func truncSext(size int, imm int64) int64 {
	switch size {
	case 1:
		return int64(int8(imm))
	case 2:
		return int64(int16(imm))
	}
	return int64(int32(imm))
}

func TestImmediates(t *testing.T) {
	c := newChecker(t)
	m := Mem{Base: R13, Index: R9, Scale: 2, Disp: -8}
	for _, size := range sizes {
		for _, imm := range immBoundaries {
			if !fitsSize(size, imm) {
				continue
			}
			v := truncSext(size, imm)
			immLen := min(size, 4)
			if size > 1 && v == int64(int8(v)) {
				immLen = 1
			}
			for _, r := range []Reg{RAX, RSP, R8, R15} {
				rs := rn(size, r)
				c.emitLen(fmt.Sprintf("and %s, %s", rs, is(size, imm)), encLen(size, 1, -1, int(r), nil, immLen),
					func(a *Asm) { a.ALURI(AND, size, r, imm) })
				c.emitLen(fmt.Sprintf("test %s, %s", rs, is(size, imm)), encLen(size, 1, -1, int(r), nil, min(size, 4)),
					func(a *Asm) { a.TestRI(size, r, imm) })
				if size > 1 {
					c.emitLen(fmt.Sprintf("imul %s, %s, %s", rs, rn(size, r^7), is(size, imm)),
						encLen(size, 1, int(r), int(r^7), nil, immLen),
						func(a *Asm) { a.ImulRRI(size, r, r^7, int32(imm)) })
				}
			}
			for op := ADD; op <= CMP; op++ {
				c.emitLen(fmt.Sprintf("%s %s, %s", aluNames[op], ms(size, m), is(size, imm)),
					encLen(size, 1, -1, -1, &m, immLen), func(a *Asm) { a.ALUMI(op, size, m, imm) })
			}
			c.emitLen(fmt.Sprintf("test %s, %s", ms(size, m), is(size, imm)),
				encLen(size, 1, -1, -1, &m, min(size, 4)), func(a *Asm) { a.TestMI(size, m, imm) })
			c.emitLen(fmt.Sprintf("mov %s, %s", ms(size, m), is(size, imm)),
				encLen(size, 1, -1, -1, &m, min(size, 4)), func(a *Asm) { a.MovMI(size, m, imm) })
		}
	}
	c.verify()
}

func TestMovRI(t *testing.T) {
	c := newChecker(t)
	for r := RAX; r <= R15; r++ {
		rex := b2i(r >= 8)
		for _, tt := range []struct {
			imm  uint64
			want string
			n    int
		}{
			{0, "mov " + rn(4, r) + ", 0x0", 5 + rex},
			{1, "mov " + rn(4, r) + ", 0x1", 5 + rex},
			{0x7fffffff, "mov " + rn(4, r) + ", 0x7fffffff", 5 + rex},
			// x86asm prints imm32 sign-extended, but B8+r zero-extends.
			{0x80000000, "mov " + rn(4, r) + ", -0x80000000", 5 + rex},
			{0xffffffff, "mov " + rn(4, r) + ", -0x1", 5 + rex},
			{^uint64(0), "mov " + rn(8, r) + ", -0x1", 7},
			{^uint64(0x7fffffff), "mov " + rn(8, r) + ", -0x80000000", 7},
			{^uint64(0x80000000), "mov " + rn(8, r) + ", 0xffffffff7fffffff", 10},
			{0x100000000, "mov " + rn(8, r) + ", 0x100000000", 10},
			{0x123456789, "mov " + rn(8, r) + ", 0x123456789", 10},
			{0x8000000000000000, "mov " + rn(8, r) + ", 0x8000000000000000", 10},
		} {
			c.emitLen(tt.want, tt.n, func(a *Asm) { a.MovRI(r, tt.imm) })
		}
	}
	c.verify()
}

func TestCmpxchg(t *testing.T) {
	for _, tt := range []struct {
		size     int
		dst, src Reg
		want     string
	}{
		{8, R9, R8, "cmpxchg r9, r8"},
		{4, RCX, RDX, "cmpxchg ecx, edx"},
		{2, R9, RSI, "cmpxchg r9w, si"},
		{1, R9, RSI, "cmpxchg r9b, sil"},
	} {
		var a Asm
		a.CmpxchgRR(tt.size, tt.dst, tt.src)
		inst, err := x86asm.Decode(a.Buf, 64)
		if err != nil || inst.Len != len(a.Buf) {
			t.Fatalf("%s: % x does not decode: %v", tt.want, a.Buf, err)
		}
		if got := x86asm.IntelSyntax(inst, 0, nil); got != tt.want {
			t.Errorf("% x: got %q, want %q", a.Buf, got, tt.want)
		}
	}
}

func TestJmpReg(t *testing.T) {
	for r := RAX; r <= R15; r++ {
		var a Asm
		a.JmpReg(r)
		inst, err := x86asm.Decode(a.Buf, 64)
		if err != nil || inst.Len != len(a.Buf) {
			t.Fatalf("jmp %v: % x does not decode: %v", r, a.Buf, err)
		}
		want := "jmp " + strings.ToLower(x86asm.Reg(x86asm.RAX+x86asm.Reg(r)).String())
		if got := x86asm.IntelSyntax(inst, 0, nil); got != want {
			t.Errorf("% x: got %q, want %q", a.Buf, got, want)
		}
	}
}

// TestLeaLabel: lea r, [rip+l] decodes to the address of l, before and
// after it is bound, for every register.
func TestLeaLabel(t *testing.T) {
	for r := RAX; r <= R15; r++ {
		var a Asm
		back := a.NewLabel()
		fwd := a.NewLabel()
		a.Buf = append(a.Buf, 0x90, 0x90)
		a.Bind(back)
		a.LeaLabel(r, back)
		a.LeaLabel(r, fwd)
		a.Buf = append(a.Buf, 0x90)
		a.Bind(fwd)
		if err := a.Finish(); err != nil {
			t.Fatal(err)
		}
		name := strings.ToLower(x86asm.Reg(x86asm.RAX + x86asm.Reg(r)).String())
		off := 2
		for _, target := range []int{2, len(a.Buf)} {
			inst, err := x86asm.Decode(a.Buf[off:], 64)
			if err != nil || inst.Len != 7 {
				t.Fatalf("lea %s: % x does not decode as 7 bytes: %v", name, a.Buf[off:], err)
			}
			m, ok := inst.Args[1].(x86asm.Mem)
			if inst.Op != x86asm.LEA || inst.Args[0] != x86asm.RAX+x86asm.Reg(r) || !ok || m.Base != x86asm.RIP ||
				off+inst.Len+int(int32(m.Disp)) != target {
				t.Fatalf("% x at %d: %v, want lea %s, [rip] to %d", a.Buf[off:off+7], off, inst, name, target)
			}
			off += inst.Len
		}
	}
}

func TestSSE(t *testing.T) {
	for _, tt := range []struct {
		s    SSE
		mem  bool
		reg  Reg
		rm   Reg
		m    Mem
		want string
	}{
		{s: SSE{Prefix: 0xF2, Op: 0x58}, reg: 1, rm: 9, want: "addsd xmm1, xmm9"},
		{s: SSE{Prefix: 0x66, Op: 0xEF}, reg: 12, rm: 3, want: "pxor xmm12, xmm3"},
		{s: SSE{Prefix: 0xF3, Op: 0x6F}, mem: true, reg: 8, m: M(R15, 0x120), want: "movdqu xmm8, xmmword ptr [r15+0x120]"},
		{s: SSE{Prefix: 0x66, Op: 0x7F}, mem: true, reg: 0, m: M(RDI, 0), want: "movdqa xmmword ptr [rdi], xmm0"},
		{s: SSE{Prefix: 0xF2, Op: 0x2A, W: true}, reg: 2, rm: R11, want: "cvtsi2sd xmm2, r11"},
		{s: SSE{Prefix: 0x66, Op: 0xD7}, reg: RCX, rm: 5, want: "pmovmskb ecx, xmm5"},
		{s: SSE{Prefix: 0x66, Map: 0x38, Op: 0x00}, reg: 1, rm: 2, want: "pshufb xmm1, xmm2"},
		{s: SSE{Prefix: 0x66, Op: 0x2E}, reg: 0, rm: 1, want: "ucomisd xmm0, xmm1"},
	} {
		var a Asm
		if tt.mem {
			a.SSERM(tt.s, tt.reg, tt.m)
		} else {
			a.SSERR(tt.s, tt.reg, tt.rm)
		}
		inst, err := x86asm.Decode(a.Buf, 64)
		if err != nil || inst.Len != len(a.Buf) {
			t.Fatalf("%s: % x does not decode: %v", tt.want, a.Buf, err)
		}
		if got := x86asm.IntelSyntax(inst, 0, nil); got != tt.want {
			t.Errorf("% x: got %q, want %q", a.Buf, got, tt.want)
		}
	}
}

func TestMisc(t *testing.T) {
	c := newChecker(t)
	for _, tt := range []struct {
		f     func(*Asm)
		want  string
		bytes string
	}{
		{(*Asm).Cdqe, "cdqe", "48 98"},
		{(*Asm).Cwde, "cwde", "98"},
		{(*Asm).Cbw, "data16 cbw", "66 98"}, // x86asm's spelling
		{(*Asm).Cqo, "cqo", "48 99"},
		{(*Asm).Cdq, "cdq", "99"},
		{(*Asm).Cwd, "data16 cwd", "66 99"},
		{(*Asm).Lahf, "lahf", "9f"},
		{(*Asm).Sahf, "sahf", "9e"},
		{(*Asm).Pushfq, "pushfq", "9c"},
		{(*Asm).Popfq, "popfq", "9d"},
		{(*Asm).Ret, "ret", "c3"},
		{(*Asm).Ud2, "ud2", "0f 0b"},
		{func(a *Asm) { a.XchgRR(4, RAX, RAX) }, "xchg eax, eax", "87 c0"},
		{func(a *Asm) { a.XchgRR(8, RAX, RCX) }, "xchg rax, rcx", "48 87 c8"},
		{func(a *Asm) { a.Push(R12) }, "push r12", "41 54"},
		{func(a *Asm) { a.Rorx(8, RDX, RSI, 7) }, "rorx rdx, rsi, 0x7", "c4 e3 fb f0 d6 07"},
		{func(a *Asm) { a.Rorx(4, R9, R14, 12) }, "rorx r9d, r14d, 0xc", "c4 43 7b f0 ce 0c"},
	} {
		off := c.a.Len()
		c.emit(tt.want, tt.f)
		if got := fmt.Sprintf("% x", c.a.Buf[off:]); got != tt.bytes {
			t.Errorf("%s: got bytes %s, want %s", tt.want, got, tt.bytes)
		}
	}
	c.verify()
}

func TestLabels(t *testing.T) {
	c := newChecker(t)
	a := &c.a
	back := a.NewLabel()
	fwd := a.NewLabel()
	far := a.NewLabel()
	// Backward: bind first.
	a.Bind(back)
	backPos := a.Len()
	c.emit("nop", func(a *Asm) { a.Buf = append(a.Buf, 0x90) })
	for cc := uint8(0); cc < 16; cc++ {
		c.emitLen(fmt.Sprintf("j%s %#x", ccNames[cc], backPos), 6, func(a *Asm) { a.Jcc(cc, back) })
	}
	c.emitLen(fmt.Sprintf("jmp %#x", backPos), 5, func(a *Asm) { a.Jmp(back) })
	// Forward: compute the target position from the code emitted before Bind.
	fwdPos := a.Len() + 16*6 + 5
	for cc := uint8(0); cc < 16; cc++ {
		c.emitLen(fmt.Sprintf("j%s %#x", ccNames[cc], fwdPos), 6, func(a *Asm) { a.Jcc(cc, fwd) })
	}
	c.emitLen(fmt.Sprintf("jmp %#x", fwdPos), 5, func(a *Asm) { a.Jmp(fwd) })
	if a.Len() != fwdPos {
		t.Fatalf("forward target miscomputed: %d != %d", a.Len(), fwdPos)
	}
	a.Bind(fwd)
	// A jump to itself and a forward jump over more than 127 bytes.
	self := a.NewLabel()
	a.Bind(self)
	c.emit(fmt.Sprintf("jmp %#x", a.Len()), func(a *Asm) { a.Jmp(self) })
	farPos := a.Len() + 6 + 1000*5
	c.emit(fmt.Sprintf("jz %#x", farPos), func(a *Asm) { a.Jcc(4, far) })
	for range 1000 {
		c.emit("mov eax, 0x1", func(a *Asm) { a.MovRI(RAX, 1) })
	}
	a.Bind(far)
	c.emit(fmt.Sprintf("jmp %#x", backPos), func(a *Asm) { a.Jmp(back) })
	c.verify()
}

func TestFinishUnbound(t *testing.T) {
	var a Asm
	bound, unbound, unused := a.NewLabel(), a.NewLabel(), a.NewLabel()
	_ = unused // never referenced: must not cause an error
	a.Bind(bound)
	a.Jmp(bound)
	a.Jcc(5, unbound)
	if err := a.Finish(); err == nil {
		t.Fatal("Finish succeeded with an unbound referenced label")
	}
	a.Bind(unbound)
	if err := a.Finish(); err != nil {
		t.Fatalf("Finish after binding: %v", err)
	}

	// Reset forgets labels and fixups but keeps capacity.
	capBefore := cap(a.Buf)
	a.Reset()
	if a.Len() != 0 || cap(a.Buf) != capBefore {
		t.Fatalf("Reset: len %d cap %d (was %d)", a.Len(), cap(a.Buf), capBefore)
	}
	if err := a.Finish(); err != nil {
		t.Fatalf("Finish on empty Asm: %v", err)
	}
	if l := a.NewLabel(); l != 0 {
		t.Fatalf("first label after Reset is %d", l)
	}
}

func TestPanics(t *testing.T) {
	var a Asm
	l := a.NewLabel()
	a.Bind(l)
	for name, f := range map[string]func(){
		"size 3":            func() { a.MovRR(3, RAX, RAX) },
		"size 0":            func() { a.ALURI(ADD, 0, RAX, 1) },
		"size 1 imul":       func() { a.ImulRR(1, RAX, RAX) },
		"size 1 cmov":       func() { a.Cmov(0, 1, RAX, RAX) },
		"size 2 lea":        func() { a.Lea(2, RAX, M(RAX, 0)) },
		"size 2 bswap":      func() { a.Bswap(2, RAX) },
		"index rsp":         func() { a.MovRM(8, RAX, Mem{Base: RAX, Index: RSP}) },
		"scale 4":           func() { a.MovRM(8, RAX, Mem{Base: RAX, Index: RCX, Scale: 4}) },
		"bad base":          func() { a.MovRM(8, RAX, Mem{Base: NoIndex, Index: NoIndex}) },
		"bad reg":           func() { a.MovRR(8, 16, RAX) },
		"imm64":             func() { a.ALURI(ADD, 8, RAX, 0x80000000) },
		"imm8 too big":      func() { a.ALURI(ADD, 1, RAX, 256) },
		"imm8 too small":    func() { a.ALURI(ADD, 1, RAX, -129) },
		"imm16":             func() { a.MovMI(2, M(RAX, 0), 0x10000) },
		"imm32":             func() { a.TestRI(4, RAX, 1<<32) },
		"movmi 8":           func() { a.MovMI(8, M(RAX, 0), -0x80000001) },
		"imul imm16":        func() { a.ImulRRI(2, RAX, RAX, 0x10000) },
		"bad cc":            func() { a.Jcc(16, l) },
		"bad label":         func() { a.Jmp(5) },
		"negative label":    func() { a.Jmp(-1) },
		"bind twice":        func() { a.Bind(l) },
		"bad shift":         func() { a.ShiftRI(6, 4, RAX, 1) },
		"bad alu":           func() { a.ALURR(8, 4, RAX, RAX) },
		"movzx 2->2":        func() { a.Movzx(2, 2, RAX, RAX) },
		"movzx 4->8":        func() { a.Movzx(8, 4, RAX, RAX) },
		"movsx 4->4":        func() { a.Movsx(4, 4, RAX, RAX) },
		"movsx from size 8": func() { a.MovsxM(8, 8, RAX, M(RAX, 0)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestNoAllocs checks that emitting into a reused Asm does not allocate.
func TestNoAllocs(t *testing.T) {
	var a Asm
	emit := func() {
		a.Reset()
		top, out := a.NewLabel(), a.NewLabel()
		a.Bind(top)
		a.MovRM(8, RAX, Mem{Base: R12, Index: R13, Scale: 3, Disp: 0x100})
		a.ALURI(ADD, 4, RAX, 1000)
		a.ALUMR(SUB, 1, M(RSP, -8), RSI)
		a.Jcc(4, out)
		a.ShiftRI(SHR, 8, R9, 3)
		a.MovRI(R10, 0x123456789)
		a.Popcnt(8, RAX, RBX)
		a.Jmp(top)
		a.Bind(out)
		a.Ret()
		if err := a.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	emit() // grow the buffers once
	if n := testing.AllocsPerRun(100, emit); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

// TestElideReloads: with ElideReloads, a 64-bit load of the register just
// stored to the same operand emits nothing, and every other load does:
// after another instruction, after a label bound between them, of
// another register, operand or size, or with the option off.
func TestElideReloads(t *testing.T) {
	m, m2 := M(R15, 8), M(R15, 16)
	for _, tc := range []struct {
		name  string
		off   bool
		emit  func(a *Asm)
		elide bool
	}{
		{"same register and operand", false, func(a *Asm) {}, true},
		{"option off", true, func(a *Asm) {}, false},
		{"an instruction between", false, func(a *Asm) { a.MovRR(8, RAX, RDX) }, false},
		{"a label between", false, func(a *Asm) { a.Bind(a.NewLabel()) }, false},
		{"a reset between", false, func(a *Asm) { a.Reset() }, false},
	} {
		var a Asm
		a.ElideReloads = !tc.off
		a.MovMR(8, m, R8)
		tc.emit(&a)
		n := a.Len()
		a.MovRM(8, R8, m)
		if got := a.Len() == n; got != tc.elide {
			t.Errorf("%s: load elided %v, want %v", tc.name, got, tc.elide)
		}
	}
	for _, load := range []func(a *Asm){
		func(a *Asm) { a.MovRM(8, R9, M(R15, 8)) }, // another register
		func(a *Asm) { a.MovRM(8, R8, m2) },        // another operand
		func(a *Asm) { a.MovRM(4, R8, M(R15, 8)) }, // 32 bits: zero-extends
	} {
		var a Asm
		a.ElideReloads = true
		a.MovMR(8, m, R8)
		n := a.Len()
		load(&a)
		if a.Len() == n {
			t.Errorf("load %d elided after the store of R8 to [r15+8]", n)
		}
	}
	var a Asm // a store whose address uses the register records nothing
	a.ElideReloads = true
	a.MovMR(8, M(R8, 0), R8)
	n := a.Len()
	a.MovRM(8, R8, M(R8, 0))
	if a.Len() == n {
		t.Error("load through R8 elided after storing R8 through it")
	}
}

// TestDirect: a Direct operand (R) makes every method that takes a Mem
// emit its register form, and Written names the registers that methods
// which may write through it did write.
func TestDirect(t *testing.T) {
	c := newChecker(t)
	for _, r := range []Reg{RAX, RBX, R11, R12, R13, R14} {
		m := R(r)
		for _, size := range sizes {
			rs, ds := rn(size, R9), rn(size, r)
			for op := ADD; op <= CMP; op++ {
				c.emit(aluNames[op]+" "+rs+", "+ds, func(a *Asm) { a.ALURM(op, size, R9, m) })
				c.emit(aluNames[op]+" "+ds+", "+rs, func(a *Asm) { a.ALUMR(op, size, m, R9) })
				c.emit(aluNames[op]+" "+ds+", "+is(size, 5), func(a *Asm) { a.ALUMI(op, size, m, 5) })
			}
			c.emit("mov "+rs+", "+ds, func(a *Asm) { a.MovRM(size, R9, m) })
			c.emit("mov "+ds+", "+rs, func(a *Asm) { a.MovMR(size, m, R9) })
			c.emit("mov "+ds+", "+is(size, 0x7f), func(a *Asm) { a.MovMI(size, m, 0x7f) })
			c.emit("test "+ds+", "+rs, func(a *Asm) { a.TestMR(size, m, R9) })
			c.emit("shl "+ds+", 0x5", func(a *Asm) { a.ShiftMI(SHL, size, m, 5) })
			c.emit("neg "+ds, func(a *Asm) { a.NegM(size, m) })
			if size < 4 {
				c.emit("movzx "+rn(4, R9)+", "+ds, func(a *Asm) { a.MovzxM(4, size, R9, m) })
			}
		}
		c.emit("setz "+rn(1, r), func(a *Asm) { a.SetccM(4, m) })
	}
	c.verify()

	var a Asm
	a.MovRM(8, RAX, R(RBX))
	a.ALURM(CMP, 8, RAX, R(R11))
	a.TestMR(8, R(R12), RAX)
	if a.Written != 0 {
		t.Errorf("reads wrote %#x", a.Written)
	}
	a.MovMR(4, R(R13), RAX)
	a.SetccM(4, R(RBX))
	a.MovMR(8, M(R14, 0), RAX) // memory: not a register write
	if want := uint16(1<<R13 | 1<<RBX); a.Written != want {
		t.Errorf("Written %#x, want %#x", a.Written, want)
	}
	a.Reset()
	if a.Written != 0 {
		t.Errorf("Written %#x after Reset", a.Written)
	}
	for name, f := range map[string]func(){
		"lea of a register": func() { a.Lea(8, RAX, R(RBX)) },
		"R(RSI)":            func() { R(RSI) },
		"R(RSP)":            func() { R(RSP) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
