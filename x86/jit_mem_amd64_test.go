package x86

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestJITMemDirect: `ttd run`'s translation of accesses through guest
// registers kept in host registers takes the shortcuts of session 26
// (TestDiffJITMem checks that they compute the right thing; this, that
// they are taken): no lea copies a register's address, bare or with a
// displacement, into RSI (eaAccess), no load goes through R9 (direct loads), a read-only
// memory operand is folded into its ALU instruction (aluLoadOp), and no
// access adds the address to the TLB entry's host field first: each
// takes [RDI + address] (tlbIndexed).
func TestJITMemDirect(t *testing.T) {
	code := []byte{
		0x0f, 0xb6, 0x06, // movzx eax, byte [rsi]
		0x0f, 0xb6, 0x0f, // movzx ecx, byte [rdi]
		0x39, 0xc8, // cmp eax, ecx
		0x03, 0x06, // add eax, [rsi]
		0x89, 0x07, // mov [rdi], eax
		0x8b, 0x0e, // mov ecx, [rsi]
		0x8b, 0x4e, 0x08, // mov ecx, [rsi+8]
		0x8b, 0x44, 0x24, 0x10, // mov eax, [rsp+16]
		0x3b, 0x47, 0x04, // cmp eax, [rdi+4]
		0x0f, 0x05, // syscall
	}
	c := newTestCPU(t, code)
	cc := c.cache
	b := cc.decodeBlock(testCode)
	cc.jitPrepare(b, jitModeRun)
	tr := jitPool.Get().(*jitT)
	defer jitPool.Put(tr)
	tr.tab = cc.jitTab[jitModeRun]
	tr.hooks = cc.hooksFor(b)
	tr.logged, tr.steps, tr.win = cc.logsFor(b, tr.hooks)
	if !tr.block(b, jitModeRun) {
		t.Fatal("the block was not translated")
	}
	host := tr.a.Buf
	var viaR9, leaRSI, folded, addRDI, insts int
	for len(host) > 0 {
		in, err := x86asm.Decode(host, 64)
		if err != nil {
			t.Fatalf("host code at %d: %v", len(tr.a.Buf)-len(host), err)
		}
		host = host[in.Len:]
		insts++
		m, isMem := in.Args[1].(x86asm.Mem)
		switch {
		case in.Op == x86asm.LEA && in.Args[0] == x86asm.RSI:
			leaRSI++
		case (in.Op == x86asm.MOV || in.Op == x86asm.MOVZX) && (in.Args[0] == x86asm.R9 || in.Args[0] == x86asm.R9L) && isMem && m.Base == x86asm.RDI:
			viaR9++
		case in.Op == x86asm.ADD && isMem && m.Base == x86asm.RDI:
			folded++
		case in.Op == x86asm.ADD && in.Args[0] == x86asm.RDI:
			addRDI++
		}
	}
	if !jitRegsOn {
		t.Skip("TTD_JITREGS=0: no guest register in a host register")
	}
	if leaRSI != 0 || viaR9 != 0 || folded != 1 || addRDI != 0 {
		t.Errorf("%d host instructions: %d lea into RSI, %d loads through R9, %d adds with [RDI], %d adds to RDI (want 0, 0, 1, 0)", insts, leaRSI, viaR9, folded, addRDI)
	}
}

// TestJITMemSlip: an access through a register and a displacement whose
// register lies in the page before the access (a field of a struct that
// straddles pages) stays in translated code: the first TLB check, with
// the register's page, misses and the second (slipCode), with the first
// byte's, hits. Without it each iteration would leave to the
// interpreter, which computes the same (TestDiffJITMem cannot see it).
func TestJITMemSlip(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	code := []byte{
		0x48, 0x8b, 0x83, 0xf8, 0x07, 0x00, 0x00, // mov rax, [rbx+0x7f8]
		0x48, 0x83, 0xc0, 0x01, // add rax, 1
		0x48, 0x89, 0x83, 0xf8, 0x07, 0x00, 0x00, // mov [rbx+0x7f8], rax
		0x49, 0xff, 0xc9, // dec r9
		0x75, 0xea, // jnz to the start
		0x0f, 0x05, // syscall
	}
	const iters = 200
	wasOn := StatsOn
	defer func() { StatsOn = wasOn }()
	defer SetJIT(SetJIT(true, 0))
	stats.Lock()
	stats.byOp, stats.total, stats.jitCalls, stats.resumed, stats.leftExits = nil, [statReasons]uint64{}, 0, 0, 0
	stats.Unlock()
	StatsOn = true
	c := newTestCPU(t, code)
	base := uint64(testStack - PageSize - 0x400) // in the unmapped page before the stack's
	c.R[RBX], c.R[R9] = base, iters
	if exit := c.Run(100000); exit.Reason != ExitSyscall {
		t.Fatalf("exit %v (%v)", exit.Reason, exit.Err)
	}
	StatsOn = false
	var got [8]byte
	if err := c.Mem.Peek(base+0x7f8, got[:]); err != nil {
		t.Fatal(err)
	}
	if got[0] != iters {
		t.Errorf("the field holds %d, want %d", got[0], iters)
	}
	if c.cache.Translated == 0 {
		t.Fatal("nothing was translated")
	}
	stats.Lock()
	defer stats.Unlock()
	if left := stats.total[statLeft]; left > 4 {
		t.Errorf("the interpreter ran %d instructions left by translations in %d iterations, want at most 4 (the page's first read and write)", left, iters)
	}
}
