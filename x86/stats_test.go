package x86

import "testing"

// TestJITResumesAfterUntranslated: an instruction the translator does not
// handle (rcl) in the middle of a hot loop is left to the interpreter
// alone; the translation takes up again after it (a resume entry) rather
// than leaving the rest of the block to the interpreter, and the result is
// the interpreter's. The statistics (ttd run --stats) count it so.
func TestJITResumesAfterUntranslated(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	code := []byte{
		0x48, 0x83, 0xc0, 0x01, // add rax, 1
		0x48, 0xd1, 0xd3, // rcl rbx, 1 (not translated)
		0x48, 0x83, 0xc1, 0x02, // add rcx, 2
		0x48, 0x83, 0x44, 0x24, 0xf0, 0x01, // add qword [rsp-16], 1 (after the resume entry: the TLB's register must be loaded)
		0x48, 0x83, 0xc2, 0x03, // add rdx, 3
		0x48, 0x83, 0xc6, 0x04, // add rsi, 4
		0x48, 0x83, 0xc7, 0x05, // add rdi, 5
		0x49, 0x83, 0xc0, 0x06, // add r8, 6
		0x49, 0xff, 0xc9, // dec r9
		0x75, 0xda, // jnz to the start
		0x0f, 0x05, // syscall
	}
	const iters = 100
	var regs [3][16]uint64
	var flags [3]uint64
	wasOn := StatsOn
	defer func() { StatsOn = wasOn }()
	// The third run adopts the translation another cache made (its
	// resume entries copied with it: codestore.go).
	for i, jit := range []bool{false, true, true} {
		func() {
			defer SetJIT(SetJIT(jit, 0))
			run := func(c *CPU) {
				c.R[RBX], c.R[R9] = 0x8000000000000001, iters
				if exit := c.Run(10000); exit.Reason != ExitSyscall {
					t.Fatalf("run %d: exit %v", i, exit.Reason)
				}
			}
			var s *CodeStore
			if i == 2 {
				s = NewCodeStore()
				first := newTestCPU(t, code)
				first.cache.ShareWith(s)
				run(first)
			}
			stats.Lock()
			stats.byOp, stats.total, stats.jitCalls, stats.resumed, stats.leftExits = nil, [statReasons]uint64{}, 0, 0, 0
			stats.Unlock()
			StatsOn = true
			c := newTestCPU(t, code)
			c.cache.ShareWith(s)
			run(c)
			StatsOn = false
			regs[i], flags[i] = c.R, c.Rflags()&ArithFlags
			if !jit {
				return
			}
			if c.cache.Translated+c.cache.Adopted == 0 || i == 2 && c.cache.Adopted == 0 {
				t.Fatalf("run %d: nothing was translated (%d) or adopted (%d)", i, c.cache.Translated, c.cache.Adopted)
			}
			stats.Lock()
			defer stats.Unlock()
			if left := stats.total[statLeft]; left < iters-1 || left > iters+2 {
				t.Errorf("the interpreter ran %d instructions left by translations, want %d-%d (one rcl per iteration, and the first read and write of the stack's page)", left, iters-1, iters+2)
			}
			if after := stats.total[statAfter]; after != 0 {
				t.Errorf("the interpreter ran %d instructions after an untranslated one; want 0 (the translation resumes)", after)
			}
			if stats.resumed < iters-1 {
				t.Errorf("%d resumptions after the rcl, want at least %d", stats.resumed, iters-1)
			}
		}()
	}
	for i := 1; i < 3; i++ {
		if regs[0] != regs[i] {
			t.Errorf("registers: interpreted %x, run %d %x", regs[0], i, regs[i])
		}
		if flags[0] != flags[i] {
			t.Errorf("flags: interpreted %#x, run %d %#x", flags[0], i, flags[i])
		}
	}
}
