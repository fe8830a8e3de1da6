package x86

import (
	"testing"

	"ttd/predict"
)

// TestJITCacheWrap: an unaligned access that crosses from the prediction
// cache's last word to its first is done as the interpreter does it, by
// translated code too (the diff tests' data never maps there).
func TestJITCacheWrap(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	// RSI is 124 past a multiple of the cache's 128 bytes.
	code := []byte{
		0x89, 0x06, // mov [rsi], eax: 124..127, 0..
		0x66, 0x89, 0x86, 0x83, 0x00, 0x00, 0x00, // mov [rsi+131], ax: 127, 0
		0x8b, 0x1e, // mov ebx, [rsi]
		0x0f, 0xb7, 0x96, 0x83, 0x00, 0x00, 0x00, // movzx edx, word [rsi+131]
		0x48, 0x89, 0x8e, 0x00, 0x01, 0x00, 0x00, // mov [rsi+256], rcx: 124..131
		0x0f, 0x11, 0x86, 0x7c, 0x01, 0x00, 0x00, // movups [rsi+380], xmm0: 120..135
		0x0f, 0x05, // syscall
	}
	const data = 0x600000
	var caches [2][]uint64
	var regs [2][16]uint64
	var mem [2][]byte
	for i, jit := range []bool{false, true} {
		func() {
			defer SetJIT(SetJIT(jit, 0))
			c := newTestCPU(t, code)
			c.Mem.SetPage(data>>PageShift, &Page{Perm: PermRead | PermWrite})
			c.Pred, c.Obs = predict.New(4), &logObserver{} // 16 words: 128 bytes
			// Each access runs from the last word (120..127 mod 128)
			// into the first.
			c.R[RSI] = data + 128 + 124
			c.R[RAX], c.R[RCX] = 0x11223344, 0x5566778899aabbcc
			c.X[0] = XMM{0x0102030405060708, 0x090a0b0c0d0e0f10}
			if exit := c.Run(100); exit.Reason != ExitSyscall {
				t.Fatalf("jit %v: exit %v", jit, exit.Reason)
			}
			regs[i] = c.R
			mem[i] = make([]byte, 1024)
			c.Mem.Peek(data, mem[i])
			for a := uint64(0); a < 128; a += 8 {
				caches[i] = append(caches[i], c.Pred.Predict(a, 8))
			}
			if jit && c.cache.Translated == 0 {
				t.Fatal("nothing was translated")
			}
		}()
	}
	if string(mem[0]) != string(mem[1]) {
		t.Error("memory differs")
	}
	if regs[0] != regs[1] {
		t.Errorf("registers: interpreted %x, translated %x", regs[0], regs[1])
	}
	for k := range caches[0] {
		if caches[0][k] != caches[1][k] {
			t.Errorf("cache word %d: interpreted %#x, translated %#x", k, caches[0][k], caches[1][k])
		}
	}
}
