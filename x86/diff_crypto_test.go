package x86

import (
	"fmt"
	"testing"

	"golang.org/x/sys/cpu"
)

// AES-NI and pclmulqdq, legacy and VEX, for the differential test
// against the host (diff_test.go). Skipped, loudly, per extension the
// host lacks.

func TestDiffAES(t *testing.T) {
	if !cpu.X86.HasAES {
		t.Skip("SKIPPING the AES-NI differential test: the host CPU has no AES-NI")
	}
	var tb diffTable
	for _, op := range []string{"aesenc", "aesenclast", "aesdec", "aesdeclast"} {
		tb.add(op+" %xmm2, %xmm1", 100, genInt)
		tb.add(op+" (%rsi), %xmm1", 30, genInt)
		tb.add(op+" 8(%rsi), %xmm1", 5, genInt) // #GP: misaligned
		if diffYMM {
			tb.add("v"+op+" %xmm2, %xmm3, %xmm1", 50, genIntY)
			tb.add("v"+op+" 8(%rsi), %xmm3, %xmm1", 20, genIntY)
		}
	}
	tb.add("aesimc %xmm2, %xmm1", 100, genInt)
	tb.add("aesimc (%rsi), %xmm1", 20, genInt)
	for _, imm := range []int{0, 1, 0x1b, 0x36, 0x80, 0xff} {
		tb.add(fmt.Sprintf("aeskeygenassist $%#x, %%xmm2, %%xmm1", imm), 30, genInt)
		if diffYMM {
			tb.add(fmt.Sprintf("vaeskeygenassist $%#x, 4(%%rsi), %%xmm1", imm), 20, genIntY)
		}
	}
	if diffYMM {
		tb.add("vaesimc %xmm2, %xmm1", 50, genIntY)
	}
	markJITIf(tb, jitAES, jitVAES)
	runDiff(t, 6, tb)
}

func TestDiffPCLMUL(t *testing.T) {
	if !cpu.X86.HasPCLMULQDQ {
		t.Skip("SKIPPING the pclmulqdq differential test: the host CPU has no PCLMULQDQ")
	}
	var tb diffTable
	for _, imm := range []int{0, 1, 0x10, 0x11, 0xee} {
		tb.add(fmt.Sprintf("pclmulqdq $%#x, %%xmm2, %%xmm1", imm), 100, genInt)
		tb.add(fmt.Sprintf("pclmulqdq $%#x, (%%rsi), %%xmm1", imm), 20, genInt)
		if diffYMM {
			tb.add(fmt.Sprintf("vpclmulqdq $%#x, %%xmm2, %%xmm3, %%xmm1", imm), 50, genIntY)
			tb.add(fmt.Sprintf("vpclmulqdq $%#x, 4(%%rsi), %%xmm3, %%xmm1", imm), 20, genIntY)
		}
	}
	tb.add("pclmulqdq $0, 8(%rsi), %xmm1", 5, genInt) // #GP: misaligned
	markJITIf(tb, jitPCLMUL, jitVPCLMUL)
	runDiff(t, 7, tb)
}

// markJITIf requires the translation of the legacy rows when legacy
// holds and of the VEX ones when vex does.
func markJITIf(t []diffTest, legacy, vex bool) {
	for i := range t {
		t[i].jit = legacy
		if t[i].asm[0] == 'v' {
			t[i].jit = vex
		}
	}
}
