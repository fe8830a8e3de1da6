package x86

import "testing"

// The forms `ttd run`'s translations give a shortcut (issue 24, session
// 26), against the host in the four modes: a load straight into the host
// register of its destination (mov, movzx, movsx, movslq: no copy
// through R9), a store straight from its source's host register or of
// its immediate, and an address that is a bare guest register kept in a
// host register, which the TLB check reads where it is (eaAccess: no lea
// into RSI), also in read-modify-writes and when the access writes that
// register, crosses into the unmapped page after the data (a TLB miss
// through the bare register) or stores it. (Not in the table: an add to
// memory followed by a jmp or call in the same block, "add %ebx, (%rdi);
// jmp 1f; 1: nop", which the recording translation gets wrong on main
// d988f2b as well, on the cases whose read misses the cache.)
func jitMemDiffTests() []diffTest {
	var t []diffTest
	add := func(asm string, gen func(*diffGen, *diffState)) {
		t = append(t, diffTest{asm: asm, gen: gen, jit: true})
	}
	// rsi near the end of the data page: an access of more than one
	// byte may run into the next page, which is not mapped.
	nearEnd := func(g *diffGen, s *diffState) {
		edgeRegs(g, s)
		s.R[RSI] = diffMemAddr + diffMemSize - 1 - uint64(g.Intn(8))
	}
	for _, f := range []string{
		"movzbl (%rsi), %eax", "movzbq 7(%rsi), %rbx", "movzwl (%rdi), %ecx", "movzwq -3(%rdi), %rdx",
		"movsbl (%rsi), %eax", "movsbq (%rsi), %rax", "movswl 9(%rsi), %ebx", "movswq (%rdi), %rcx",
		"movslq (%rsi), %rax", "movslq 12(%rdi), %r8", "movsbw (%rsi), %ax", "movzbw (%rsi), %bx",
		"movzbl (%rsi), %esi", "movslq (%rsi), %rsi", "mov (%rsi), %esi", "mov (%rdi), %rdi",
		"movzbl %bl, %ebx", "movzwq %bx, %rax", "movsbq %al, %rax", "movswl %cx, %edx", "movzbl %ch, %eax",
		"movsbl %dh, %ecx", "movslq %eax, %rax", "movsbw %cl, %dx",
		"movb $-7, (%rsi)", "movw $0x1234, (%rdi)", "movl $0xfffffff0, 5(%rsi)", "movq $-2, (%rsi)",
		"movq $0x7fffffff, 8(%rdi)", "movl $-1, (%rdi)",
		"mov %al, (%rsi)", "mov %bx, (%rdi)", "mov %ecx, 3(%rsi)", "mov %rdx, (%rsi)", "mov %rsi, (%rsi)",
		"mov %ah, (%rsi)", "mov %r9b, (%rdi)", "mov %r8, (%rdi)",
		"add %eax, (%rsi)", "subq (%rsi), %rbx", "orb $3, (%rdi)", "xor (%rsi), %ecx", "cmpw %dx, (%rsi)",
		"testb $0x80, (%rsi)", "add (%rsi), %rsi", "and %esi, (%rsi)",
		"mov (%rsi), %eax; add %eax, %ebx; mov %ebx, (%rsi)",
		"movzbl (%rsi), %eax; movzbl 1(%rsi), %ecx; cmp %cl, %al; setb %dl",
		"mov (%rsi), %rax; mov %rax, (%rdi); movzbl (%rdi), %ebx",
		"sub $1, %edx; movzbl (%rsi), %ecx; cmp %edx, %ecx",
		"mov (%rdi), %eax; push %rax; pop %rcx",
		// RSI holds another valid address when the bare register's
		// access is checked: the check must read the register itself
		// (a wrong address would mostly miss the TLB and leave, which
		// hides it).
		"mov 8(%rdi), %rcx; mov (%rsi), %eax", "movzbl 5(%rsi), %ecx; movzbl (%rdi), %edx; add %edx, (%rsi)",
		"mov 16(%rsi), %ecx; mov %ecx, (%rdi)",
		// push and pop after an access with a displacement (which
		// caught a stale displacement in run19-wip's folding).
		"mov 8(%rdi), %ecx; push %rcx; pop %rdx", "addl $2, 12(%rsi); push %rax; mov 4(%rsi), %ebx; pop %rcx",
		// Loads with a displacement into registers in the CPU (AH-DH,
		// or more registers than host registers for them).
		"mov 5(%rsi), %ah", "mov 3(%rdi), %bh", "movzbl 9(%rsi), %ecx; mov 2(%rdi), %dh",
		"mov %r8, %r9; mov %rcx, %r11; mov 4(%rsi), %ebx; add %r9, %r11; add %rcx, %r8",
		// One host instruction with the memory operand (aluLoadOp):
		// destinations in host registers, in the CPU (more registers
		// than host registers for them, or AH-DH) and in memory.
		"and (%rsi), %eax", "orw 6(%rdi), %bx", "xor (%rsi), %r8b", "adc 3(%rsi), %rdx", "sbb (%rdi), %ecx",
		"testl $0x8000, (%rsi)", "testw $3, 2(%rdi)", "cmpq $-1, (%rsi)", "cmpb $0x80, (%rdi)", "test %rax, (%rsi)",
		"and (%rsi), %ah", "sbb (%rdi), %bh", "cmp %ch, (%rsi)", "test %dh, 3(%rsi)", "add 1(%rsi), %ch",
		"mov %r8, %r9; add (%rsi), %eax; sub 4(%rdi), %rbx; cmp (%rsi), %r11",
		"mov %rcx, %r10; adc (%rdi), %cx; xor 2(%rsi), %r9d; add %r8, %rax",
		"mov %r8, %r9; mov %rcx, %r11; cmp %r9, (%rsi); test %r11d, (%rdi); cmp %ax, (%rsi)", "add %ebx, (%rdi); push %rax; pop %rdx",
	} {
		add(f, edgeRegs)
	}
	for _, f := range []string{"mov (%rsi), %eax", "movzwl (%rsi), %ebx", "movslq (%rsi), %rcx", "mov (%rsi), %rdx",
		"mov %eax, (%rsi)", "movq $-5, (%rsi)", "movw $9, (%rsi)", "add %rbx, (%rsi)", "movzbl (%rsi), %esi"} {
		add(f, nearEnd)
	}
	// A register and a displacement: accesses whose displacement
	// carries them into the unmapped page after the data, across the
	// page's end, or, negative, into the page before the data page,
	// which is not mapped either (the edges of a TLB check that takes
	// the register's page rather than the first byte's, as run19-wip's
	// does).
	for _, f := range []string{"mov 5(%rsi), %eax", "movzbl 7(%rsi), %ebx", "mov %ecx, 2(%rsi)", "addl $1, 4(%rsi)",
		"cmp 6(%rsi), %rdx", "movq $3, 1(%rsi)", "movzwq 1(%rsi), %rcx", "mov 3(%rsi), %eax; add 6(%rsi), %eax; mov %eax, 1(%rsi)"} {
		add(f, nearEnd)
	}
	farEnd := func(g *diffGen, s *diffState) {
		edgeRegs(g, s)
		s.R[RSI] = diffMemAddr + diffMemSize - 8 - uint64(g.Intn(40))
	}
	for _, f := range []string{"mov 40(%rsi), %eax", "movq $1, 2040(%rsi)", "mov 33(%rsi), %rax; mov 16(%rsi), %ecx; add %ecx, %eax"} {
		add(f, farEnd)
	}
	nearStart := func(g *diffGen, s *diffState) {
		edgeRegs(g, s)
		s.R[RSI] = diffDataPage + uint64(g.Intn(8))
	}
	for _, f := range []string{"mov -4(%rsi), %eax", "movzbl -1(%rsi), %ecx", "mov %eax, -8(%rsi)", "mov -2(%rsi), %rax; add -6(%rsi), %rax"} {
		add(f, nearStart)
	}
	return t
}

func TestDiffJITMem(t *testing.T) {
	runDiff(t, 26, jitMemDiffTests())
}
