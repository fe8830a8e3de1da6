package x86

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestJITMemDirect: `ttd run`'s translation of accesses through guest
// registers kept in host registers takes the shortcuts of session 26
// (TestDiffJITMem checks that they compute the right thing; this, that
// they are taken): no lea copies a bare register's address into RSI
// (eaAccess), no load goes through R9 (direct loads), a read-only
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
	host := tr.a.Buf[:tr.codeLen] // (without the fault table: winfault_linux.go)
	var viaR9, leaRSI, folded, addRDI, insts int
	for len(host) > 0 {
		in, err := x86asm.Decode(host, 64)
		if err != nil {
			t.Fatalf("host code at %d: %v", tr.codeLen-len(host), err)
		}
		host = host[in.Len:]
		insts++
		m, isMem := in.Args[1].(x86asm.Mem)
		switch {
		case in.Op == x86asm.LEA && in.Args[0] == x86asm.RSI && isMem && m.Index == 0 && m.Disp == 0:
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
		t.Errorf("%d host instructions: %d lea of a bare register into RSI, %d loads through R9, %d adds with [RDI], %d adds to RDI (want 0, 0, 1, 0)", insts, leaRSI, viaR9, folded, addRDI)
	}
}
