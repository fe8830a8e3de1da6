package x86

import "testing"

// TestOnFirstDecodeOnce checks that OnFirstDecode runs once in the
// process, when the first block is decoded, whatever the code caches.
func TestOnFirstDecodeOnce(t *testing.T) {
	saved := OnFirstDecode
	defer func() { OnFirstDecode = saved; firstDecodeSeen.Store(false) }()
	calls := 0
	var at uint64
	var c *CPU
	OnFirstDecode = func() { calls++; at = c.cache.Decodes }
	firstDecodeSeen.Store(false)
	for i := 0; i < 3; i++ {
		// two blocks: "jmp +0", then syscall
		c = newTestCPU(t, []byte{0xeb, 0x00, 0x0f, 0x05})
		if exit := c.Run(100); exit.Reason != ExitSyscall {
			t.Fatalf("exit %v (%v)", exit.Reason, exit.Err)
		}
		if calls != 1 || at != 1 {
			t.Fatalf("code cache %d: %d calls, the first at decode %d; want 1 call, at the first", i, calls, at)
		}
	}
}
