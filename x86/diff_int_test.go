package x86

import (
	"fmt"
	"testing"
)

// Integer instruction forms for the differential test against the host.

const (
	undefLogic = FlagAF
	undefMul   = FlagSF | FlagZF | FlagAF | FlagPF
	undefDiv   = ArithFlags
	undefShift = FlagAF | FlagOF
	undefBt    = FlagOF | FlagSF | FlagAF | FlagPF
	undefBsf   = FlagCF | FlagOF | FlagSF | FlagAF | FlagPF
)

// sized expands a template over operand sizes: %s is replaced by the
// register of that size for each of the named registers.
var regNames = map[string][4]string{
	"a": {"%al", "%ax", "%eax", "%rax"}, "b": {"%bl", "%bx", "%ebx", "%rbx"},
	"c": {"%cl", "%cx", "%ecx", "%rcx"}, "d": {"%dl", "%dx", "%edx", "%rdx"},
	"8": {"%r8b", "%r8w", "%r8d", "%r8"}, "9": {"%r9b", "%r9w", "%r9d", "%r9"},
}
var suffix = [4]string{"b", "w", "l", "q"}

// edgeRegs sets a few registers to boundary values on the first cases.
func edgeRegs(g *diffGen, s *diffState) {
	edges := []uint64{0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000, 0xffffffff,
		0x7fffffffffffffff, 0x8000000000000000, ^uint64(0), 63, 64, 31, 32, 15, 16}
	if g.I < 64 {
		s.R[RAX] = edges[g.Intn(len(edges))]
		s.R[RBX] = edges[g.Intn(len(edges))]
		s.R[RCX] = edges[g.Intn(len(edges))]
		s.R[RDX] = edges[g.Intn(len(edges))]
		s.R[R8] = edges[g.Intn(len(edges))]
	}
	if g.I%5 == 0 {
		s.R[RBX] = s.R[RAX] // equal operands
	}
}

// divGen keeps most divisions valid and makes some fault.
func divGen(size int, signed bool) func(g *diffGen, s *diffState) {
	return func(g *diffGen, s *diffState) {
		edgeRegs(g, s)
		if g.I%10 != 0 {
			// Make the quotient fit: a small high half.
			s.R[RDX] = uint64(g.Intn(3))
			if signed && g.I%3 == 0 {
				s.R[RDX] = ^uint64(0)
			}
			if size == 1 {
				s.R[RAX] = s.R[RAX]&^0xff00 | uint64(g.Intn(2))<<8
			}
		}
		if g.I%17 == 0 {
			s.R[RBX] = 0
		}
	}
}

func intDiffTests() []diffTest {
	var t []diffTest
	add := func(asm string, undef uint64, gen func(*diffGen, *diffState)) {
		t = append(t, diffTest{asm: asm, undef: undef, gen: gen})
	}
	for sz := 0; sz < 4; sz++ {
		a, b, c := regNames["a"][sz], regNames["b"][sz], regNames["c"][sz]
		r8 := regNames["8"][sz]
		sf := suffix[sz]
		for _, op := range []string{"add", "adc", "sub", "sbb", "cmp"} {
			add(fmt.Sprintf("%s %s, %s", op, b, a), 0, edgeRegs)
			add(fmt.Sprintf("%s%s (%%rsi), %s", op, sf, a), 0, edgeRegs)
			add(fmt.Sprintf("%s%s %s, 8(%%rsi)", op, sf, b), 0, edgeRegs)
			add(fmt.Sprintf("%s%s $0x7f, %s", op, sf, r8), 0, edgeRegs)
			add(fmt.Sprintf("%s%s $-3, 16(%%rsi)", op, sf), 0, edgeRegs)
		}
		for _, op := range []string{"and", "or", "xor", "test"} {
			add(fmt.Sprintf("%s %s, %s", op, b, a), undefLogic, edgeRegs)
			add(fmt.Sprintf("%s%s %s, (%%rsi)", op, sf, c), undefLogic, edgeRegs)
			add(fmt.Sprintf("%s%s $0x5a, %s", op, sf, a), undefLogic, edgeRegs)
		}
		for _, op := range []string{"inc", "dec", "neg", "not"} {
			add(fmt.Sprintf("%s %s", op, a), 0, edgeRegs)
			add(fmt.Sprintf("%s%s 24(%%rsi)", op, sf), 0, edgeRegs)
		}
		add(fmt.Sprintf("mul %s", b), undefMul, edgeRegs)
		add(fmt.Sprintf("imul %s", b), undefMul, edgeRegs)
		add(fmt.Sprintf("mul%s (%%rsi)", sf), undefMul, edgeRegs)
		add(fmt.Sprintf("div %s", b), undefDiv, divGen(1<<sz, false))
		// A divisor in memory that crosses an 8-byte word (two reads
		// of the prediction cache while recording).
		add(fmt.Sprintf("div%s 7(%%rsi)", sf), undefDiv, divGen(1<<sz, false))
		add(fmt.Sprintf("idiv %s", b), undefDiv, divGen(1<<sz, true))
		for _, op := range []string{"shl", "shr", "sar", "rol", "ror", "rcl", "rcr"} {
			add(fmt.Sprintf("%s %%cl, %s", op, a), undefShift, edgeRegs)
			add(fmt.Sprintf("%s $1, %s", op, b), FlagAF, edgeRegs)
			add(fmt.Sprintf("%s $7, %s", op, a), undefShift, edgeRegs)
			add(fmt.Sprintf("%s $%d, %s", op, 8<<sz-1, b), undefShift, edgeRegs)
			add(fmt.Sprintf("%s $0, %s", op, a), 0, edgeRegs)
			add(fmt.Sprintf("%s%s $5, (%%rsi)", op, sf), undefShift, edgeRegs)
		}
		// Shifts of memory, which the translator loads, shifts and
		// stores back: by an immediate (one across an 8-byte word), and
		// by CL in 32 and 64 bits (counts of 0, which store nothing,
		// and past the operand, which are masked).
		for _, op := range []string{"shl", "shr", "sar", "rol", "ror"} {
			t = append(t, diffTest{asm: fmt.Sprintf("%s%s $3, 5(%%rsi)", op, sf), undef: undefShift, gen: edgeRegs, jit: true},
				diffTest{asm: fmt.Sprintf("%s%s $1, 8(%%rsi)", op, sf), undef: FlagAF, gen: edgeRegs, jit: true})
			if sz >= 2 {
				t = append(t, diffTest{asm: fmt.Sprintf("%s%s %%cl, 16(%%rsi)", op, sf), undef: undefShift, gen: edgeRegs, jit: true})
			}
		}
		add(fmt.Sprintf("xchg %s, %s", a, b), 0, nil)
		add(fmt.Sprintf("xchg %s, (%%rsi)", c), 0, nil)
		add(fmt.Sprintf("xadd %s, %s", b, a), 0, edgeRegs)
		add(fmt.Sprintf("lock xadd %s, (%%rsi)", b), 0, edgeRegs)
		add(fmt.Sprintf("cmpxchg %s, %s", b, c), 0, edgeRegs)
		add(fmt.Sprintf("lock cmpxchg %s, 8(%%rsi)", b), 0, func(g *diffGen, s *diffState) {
			edgeRegs(g, s)
			if g.I%2 == 0 {
				copy(s.Mem[8:16], le64(s.R[RAX]))
			}
		})
		add(fmt.Sprintf("mov %s, %s", b, a), 0, nil)
		add(fmt.Sprintf("mov%s $-2, %s", sf, a), 0, nil)
		add(fmt.Sprintf("mov (%%rsi), %s", a), 0, nil)
		add(fmt.Sprintf("mov %s, 3(%%rsi)", b), 0, nil)
		if sz > 0 {
			add(fmt.Sprintf("imul %s, %s", b, a), undefMul, edgeRegs)
			add(fmt.Sprintf("imul $-7, %s, %s", b, a), undefMul, edgeRegs)
			add(fmt.Sprintf("imul $1000, (%%rsi), %s", a), undefMul, edgeRegs)
			add(fmt.Sprintf("imul 5(%%rsi), %s", a), undefMul, edgeRegs)
			// Counts above the operand size are undefined (16-bit forms).
			shcount := func(g *diffGen, s *diffState) {
				edgeRegs(g, s)
				if sz == 1 {
					s.R[RCX] = uint64(g.Intn(17))
				}
			}
			add(fmt.Sprintf("shld %%cl, %s, %s", b, a), undefShift, shcount)
			add(fmt.Sprintf("shrd %%cl, %s, %s", b, a), undefShift, shcount)
			add(fmt.Sprintf("shld $3, %s, (%%rsi)", b), undefShift, edgeRegs)
			add(fmt.Sprintf("shrd $1, %s, %s", b, a), FlagAF, edgeRegs)
			for _, op := range []string{"bt", "bts", "btr", "btc"} {
				add(fmt.Sprintf("%s %s, %s", op, c, a), undefBt, edgeRegs)
				add(fmt.Sprintf("%s $13, %s", op, a), undefBt, edgeRegs)
				add(fmt.Sprintf("%s $45, %s", op, a), undefBt, edgeRegs) // beyond 16 and 32 bits: masked
				add(fmt.Sprintf("%s%s $13, (%%rsi)", op, sf), undefBt, edgeRegs)
				add(fmt.Sprintf("%s %s, 64(%%rsi)", op, c), undefBt, func(g *diffGen, s *diffState) {
					s.R[RCX] = uint64(int64(g.Intn(1024) - 512)) // bit offsets reach both ways
				})
			}
			add(fmt.Sprintf("bsf %s, %s", b, a), undefBsf, edgeRegs)
			add(fmt.Sprintf("bsr %s, %s", b, a), undefBsf, edgeRegs)
			add(fmt.Sprintf("popcnt %s, %s", b, a), 0, edgeRegs)
			add(fmt.Sprintf("lzcnt %s, %s", b, a), undefBt, edgeRegs)
			add(fmt.Sprintf("tzcnt %s, %s", b, a), undefBt, edgeRegs)
			for _, cc := range []string{"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g"} {
				if sz == 2 || cc == "e" || cc == "l" {
					add(fmt.Sprintf("cmov%s %s, %s", cc, b, a), 0, nil)
				}
			}
			add(fmt.Sprintf("movbe (%%rsi), %s", a), 0, nil)
			add(fmt.Sprintf("movbe %s, (%%rsi)", a), 0, nil)
		}
	}
	// loop to the next instruction, taken or not: the count is RCX, or
	// ECX with a 67 prefix (Inst.AddrSize), whose upper half it clears.
	add(".byte 0xe2, 0x00", 0, edgeRegs)
	add(".byte 0x67, 0xe2, 0x00", 0, edgeRegs)
	for _, cc := range []string{"o", "no", "b", "ae", "e", "ne", "be", "a", "s", "ns", "p", "np", "l", "ge", "le", "g"} {
		add("set"+cc+" %al", 0, nil)
		// Flags from a preceding lazily evaluated cmp.
		add("cmp %rbx, %rax; set"+cc+" %cl", 0, edgeRegs)
		add("cmp %bl, %al; set"+cc+" %cl", 0, edgeRegs)
		add("add %ebx, %eax; set"+cc+" %cl", 0, edgeRegs)
		add("sub %bx, %ax; set"+cc+" %cl", 0, edgeRegs)
		add("dec %rax; set"+cc+" %cl", 0, edgeRegs)
		add("and %rbx, %rax; set"+cc+" %cl", undefLogic, edgeRegs)
		add("sbb %rbx, %rax; set"+cc+" %cl", 0, edgeRegs)
	}
	for _, s := range []string{
		"movzbl %bl, %eax", "movzwl (%rsi), %eax", "movzbl %ah, %eax", "movsbl %bl, %eax", "movswq (%rsi), %rax",
		"movslq %ebx, %rax", "movsbw %bl, %ax", "cbtw", "cwtl", "cltq", "cwtd", "cltd", "cqto",
		"lea 8(%rax,%rbx,4), %rcx", "lea -1(%rax), %ecx", "lea (%rax,%rbx), %cx", "bswap %eax", "bswap %rax",
		"clc", "stc", "cmc", "lahf", "sahf", "mov %ah, %bl", "mov %bh, %ah", "xchg %ah, %al",
		"cmpxchg8b (%rsi)", "lock cmpxchg16b (%rsi)",
		"push %rbx; pop %rcx", "pushfq; pop %rax", "push %rax; popfq", "pushq $-5; pop %rdx", "pushw $7; popw %dx",
		"leave", "enter $16, $0", "xlat",
		"movsb", "movsq", "rep movsb", "rep movsl", "std; movsw; cld", "stosb", "rep stosq", "lodsl", "cmpsb",
		"repe cmpsb", "repne scasb", "scasw", "rep lodsb",
	} {
		undef := uint64(0)
		var gen func(*diffGen, *diffState)
		switch s {
		case "push %rax; popfq":
			// Keep TF and AC clear: they would trap the host helper.
			gen = func(g *diffGen, s *diffState) { s.R[RAX] &= ArithFlags | FlagDF }
		case "rep movsb", "rep movsl", "rep stosq", "repne scasb", "rep lodsb":
			gen = func(g *diffGen, s *diffState) { s.R[RCX] = uint64(g.Intn(40)) }
		case "cmpxchg8b (%rsi)", "lock cmpxchg16b (%rsi)":
			gen = func(g *diffGen, s *diffState) {
				if g.I%2 == 0 {
					copy(s.Mem[0:8], le64(s.R[RAX]))
					copy(s.Mem[8:16], le64(s.R[RDX]))
					if g.I%4 == 0 {
						copy(s.Mem[0:8], le64(s.R[RDX]<<32|s.R[RAX]&0xffffffff))
					}
				}
			}
		case "leave":
			gen = func(g *diffGen, s *diffState) { s.R[RBP] = diffMemAddr + 64 }
		case "xlat":
			gen = func(g *diffGen, s *diffState) { s.R[RBX] = diffMemAddr }
		case "repe cmpsb":
			gen = func(g *diffGen, s *diffState) {
				s.R[RCX] = uint64(g.Intn(40))
				copy(s.Mem[256:256+g.Intn(40)], s.Mem[0:40])
			}
		}
		add(s, undef, gen)
	}
	// A load, a read-modify-write or a store and a jump or call in one
	// block: the block runs whole (not cut short by the budget, as a
	// one-instruction row's is), so the interpreters run it as a block
	// and the translation chains to the next. The harness once counted
	// the bytes a jump skips into the budget, and let the interpreter of
	// the recording modes run a replay's translation.
	for _, s := range []string{
		"mov (%rdi), %eax; jmp 1f; 1: nop",
		"mov 8(%rsi), %rax; jmp 1f; nop; 1: nop",
		"add (%rdi), %ebx; jmp 1f; 1:",
		"add %ebx, (%rdi); jmp 1f; 1: nop",
		"addq $7, 3(%rdi); jmp 1f; int3; 1: nop",
		"mov %ebx, 4(%rdi); jmp 1f; 1: nop",
		"movzbl 3(%rsi), %ecx; mov %ecx, 16(%rsi); jmp 1f; 1: nop",
		"mov (%rdi), %eax; jz 1f; 1: nop",
		"mov (%rdi), %eax; call 1f; 1: nop",
		"add %ebx, (%rdi); call 1f; int3; 1: nop",
		"mov %rbx, 8(%rsi); call 1f; 1: mov 8(%rsi), %rcx",
	} {
		t = append(t, diffTest{asm: s, gen: edgeRegs, jit: true})
	}
	// Privileged instructions fault: SIGSEGV (#GP, SI_KERNEL), and
	// monitor/mwait SIGILL (#UD). Port 0x5658 is avoided: VMware lets
	// user mode read it.
	for _, s := range []string{
		"hlt", "in $0x80, %al", "in (%dx), %eax", "out %al, $0x80", "outw %ax, (%dx)", "insb", "outsl", "cli", "sti",
		"rdmsr", "wrmsr", "rdpmc", "xsetbv", "clts", "invd", "wbinvd", "invlpg (%rsi)", "lgdt (%rsi)", "lidt (%rsi)",
		"lldt %ax", "ltr %ax", "lmsw %ax", "swapgs", "sysretq", "sysexit", "invpcid (%rsi), %rax", "monitor", "mwait",
	} {
		t = append(t, diffTest{asm: s, gen: func(g *diffGen, s *diffState) { s.R[RDX] = 0x70 }})
	}
	return t
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

func TestDiffInteger(t *testing.T) {
	runDiff(t, 1, intDiffTests())
}
