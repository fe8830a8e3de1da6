package x86

import (
	"bytes"
	"testing"
)

// TestBigProgramOnce checks that BigProgram runs once in the process,
// when a code cache first reaches bigProgramBlocks decoded blocks, and
// not before.
func TestBigProgramOnce(t *testing.T) {
	saved := BigProgram
	defer func() { BigProgram = saved; bigProgramSeen.Store(false) }()
	calls := 0
	BigProgram = func() { calls++ }
	bigProgramSeen.Store(false)
	// n blocks: n-1 "jmp +0" (each ends its block), then syscall.
	run := func(n int) *CPU {
		code := append(bytes.Repeat([]byte{0xeb, 0x00}, n-1), 0x0f, 0x05)
		c := newTestCPU(t, code)
		if exit := c.Run(1 << 20); exit.Reason != ExitSyscall {
			t.Fatalf("exit %v (%v)", exit.Reason, exit.Err)
		}
		return c
	}
	c := run(bigProgramBlocks - 1)
	if c.cache.Decodes != bigProgramBlocks-1 || calls != 0 {
		t.Fatalf("%d blocks decoded: %d calls, want 0", c.cache.Decodes, calls)
	}
	c = run(bigProgramBlocks)
	if c.cache.Decodes != bigProgramBlocks || calls != 1 {
		t.Fatalf("%d blocks decoded: %d calls, want 1", c.cache.Decodes, calls)
	}
	run(bigProgramBlocks + 10)
	if calls != 1 {
		t.Fatalf("a second big program: %d calls, want 1", calls)
	}
}
