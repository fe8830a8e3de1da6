package x86

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestJitIsJcc: the conditional jumps, and nothing else.
func TestJitIsJcc(t *testing.T) {
	for op := x86asm.Op(1); op < 2000; op++ {
		want := false
		for _, j := range []x86asm.Op{x86asm.JO, x86asm.JNO, x86asm.JB, x86asm.JAE, x86asm.JE, x86asm.JNE, x86asm.JBE, x86asm.JA,
			x86asm.JS, x86asm.JNS, x86asm.JP, x86asm.JNP, x86asm.JL, x86asm.JGE, x86asm.JLE, x86asm.JG} {
			want = want || op == j
		}
		if got := jitIsJcc(op); got != want {
			t.Errorf("jitIsJcc(%v) = %v, want %v", op, got, want)
		}
	}
}
