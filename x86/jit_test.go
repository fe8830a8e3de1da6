package x86

import (
	"fmt"
	"os"
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
	cpus := jitBothWays(t, code, 100, func(c *CPU) {
		c.Mem.SetPage(data>>PageShift, NewPage(), PermRead|PermWrite)
		c.Pred, c.Obs = predict.New(4), &logObserver{} // 16 words: 128 bytes
		// Each access runs from the last word (120..127 mod 128)
		// into the first.
		c.R[RSI] = data + 128 + 124
		c.R[RAX], c.R[RCX] = 0x11223344, 0x5566778899aabbcc
		c.X[0] = XMM{0x0102030405060708, 0x090a0b0c0d0e0f10}
	})
	jitSameState(t, "", cpus, data, 1024)
	for a := uint64(0); a < 128; a += 8 {
		if i, j := cpus[0].Pred.Predict(a, 8), cpus[1].Pred.Predict(a, 8); i != j {
			t.Errorf("cache word %d: interpreted %#x, translated %#x", a/8, i, j)
		}
	}
}

// jitBothWays runs code to its syscall interpreted and then translated
// (every block at once), each on a CPU that setup prepared, and returns
// the two CPUs.
func jitBothWays(t *testing.T, code []byte, budget uint64, setup func(*CPU)) (cpus [2]*CPU) {
	t.Helper()
	for i, jit := range []bool{false, true} {
		func() {
			defer SetJIT(SetJIT(jit, 0))
			c := newTestCPU(t, code)
			setup(c)
			if exit := c.Run(budget); exit.Reason != ExitSyscall {
				t.Fatalf("jit %v: exit %v", jit, exit.Reason)
			}
			if jit && c.cache.Translated == 0 {
				t.Fatal("nothing was translated")
			}
			cpus[i] = c
		}()
	}
	return cpus
}

// jitSameState fails unless the interpreted and translated runs of
// jitBothWays left the same registers and the same n bytes at addr.
func jitSameState(t *testing.T, what string, cpus [2]*CPU, addr uint64, n int) {
	t.Helper()
	var mem [2][]byte
	for i, c := range cpus {
		mem[i] = make([]byte, n)
		c.Mem.Peek(addr, mem[i])
	}
	if string(mem[0]) != string(mem[1]) {
		t.Errorf("%smemory: interpreted % x, translated % x", what, mem[0], mem[1])
	}
	if cpus[0].R != cpus[1].R {
		t.Errorf("%sregisters: interpreted %x, translated %x", what, cpus[0].R, cpus[1].R)
	}
}

// TestJITReadCounts: translated code counts the reads of a block in one
// sum where it leaves the block, and adds a read across words as it
// makes it; the numbers of logged reads, the count of reads and the
// cache must come out as the interpreter's, through a loop whose taken
// jump chains the block to itself, reads across words of 2, 8 and 16
// bytes, and an instruction that leaves after its read across words (the
// first write to a page is the interpreter's).
func TestJITReadCounts(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	code := []byte{
		0x48, 0x8b, 0x0f, // loop: mov (%rdi), %rcx
		0x48, 0x01, 0x47, 0x03, // add %rax, 3(%rdi)
		0x48, 0x03, 0x5e, 0x05, // add 5(%rsi), %rbx
		0x0f, 0x10, 0x46, 0x09, // movups 9(%rsi), %xmm0
		0x0f, 0xb7, 0x56, 0x07, // movzwl 7(%rsi), %edx
		0x48, 0x8b, 0x56, 0x08, // mov 8(%rsi), %rdx
		0x41, 0xff, 0xc8, // dec %r8d
		0x75, 0xe4, // jne loop
		0x4c, 0x8b, 0x4e, 0x10, // mov 16(%rsi), %r9
		0x0f, 0x05, // syscall
	}
	const src, dst = 0x600000, 0x700000
	type result struct {
		pred string
		regs [16]uint64
		x0   XMM
		mem  []byte
	}
	run := func(jit, replay bool) result {
		defer SetJIT(SetJIT(jit, 0))
		c := newTestCPU(t, code)
		for _, a := range []uint64{src, dst} {
			p := NewPage()
			for i := range p.Data {
				p.Data[i] = byte(i*13 + int(a>>20))
			}
			c.Mem.SetPage(a>>PageShift, p, PermRead|PermWrite)
		}
		obs := &predObserver{replay: replay}
		c.Pred, c.Obs = predict.New(8), obs
		if jit && !replay {
			lo := &logObserver{}
			obs, c.Obs = &lo.predObserver, lo
		}
		// The cache predicts dst's first words (so that the read of
		// the add, across words, is predicted: the add leaves at its
		// write), and none of src's.
		var b [32]byte
		c.Mem.Peek(dst, b[:])
		c.Pred.Fill(dst, b[:])
		c.R[RSI], c.R[RDI], c.R[R8] = src, dst, 3
		c.R[RAX] = 0x0102030405060708
		runToSyscallJIT(t, c, 1000, jit)
		r := result{pred: predState(c, obs), regs: c.R, x0: c.X[0]}
		r.mem = make([]byte, 2*PageSize)
		c.Mem.Peek(src, r.mem[:PageSize])
		c.Mem.Peek(dst, r.mem[PageSize:])
		return r
	}
	for _, replay := range []bool{false, true} {
		want, got := run(false, replay), run(true, replay)
		if got.pred != want.pred {
			t.Errorf("replay %v: interpreted %s, translated %s", replay, want.pred, got.pred)
		}
		if got.regs != want.regs || got.x0 != want.x0 {
			t.Errorf("replay %v: registers: interpreted %x %x, translated %x %x", replay, want.regs, want.x0, got.regs, got.x0)
		}
		if string(got.mem) != string(want.mem) {
			t.Errorf("replay %v: memory differs", replay)
		}
	}
}

// TestJITPageCross: translated loads and stores that run from one page
// into the next take the interpreter's way, and those next to the
// boundary stay in translated code, with or without the prediction
// cache: the TLB check compares the page of the access's last byte
// (jitT.tlb). Both pages are in the TLBs from the loop's first run on.
func TestJITPageCross(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	code := []byte{
		0x8b, 0x4e, 0xfb, // mov ecx, [rsi-5]
		0x8b, 0x5e, 0x03, // mov ebx, [rsi+3]: the next page
		0x89, 0x4e, 0xf7, // mov [rsi-9], ecx
		0x89, 0x5e, 0x07, // mov [rsi+7], ebx
		0x48, 0x8b, 0x06, // mov rax, [rsi]: 3 bytes here, 5 there
		0x49, 0x01, 0xc1, // add r9, rax
		0x0f, 0xb7, 0x46, 0x02, // movzx eax, word [rsi+2]: 1 and 1
		0x49, 0x01, 0xc1, // add r9, rax
		0x48, 0x89, 0x56, 0x01, // mov [rsi+1], rdx: 2 and 6
		0x66, 0x89, 0x56, 0x02, // mov [rsi+2], dx: 1 and 1
		0x4c, 0x01, 0xca, // add rdx, r9
		0x49, 0xff, 0xc8, // dec r8
		0x75, 0xd7, // jnz to the start
		0x0f, 0x05, // syscall
	}
	const data = 0x600000
	for _, pred := range []bool{false, true} {
		cpus := jitBothWays(t, code, 1000, func(c *CPU) {
			for pn := uint64(data >> PageShift); pn < data>>PageShift+2; pn++ {
				p := NewPage()
				for k := range p.Data {
					p.Data[k] = byte(k*7 + int(pn))
				}
				c.Mem.SetPage(pn, p, PermRead|PermWrite)
			}
			if pred {
				c.Pred, c.Obs = predict.New(10), &logObserver{}
			}
			c.R[RSI] = data + PageSize - 3
			c.R[RDX], c.R[R8] = 0x1122334455667788, 5
		})
		jitSameState(t, fmt.Sprintf("prediction %v: ", pred), cpus, data+PageSize-32, 64)
	}
}

// TestPerfMap: with TTD_PERFMAP=1, each translation is named in
// /tmp/perf-PID.map after its guest address, as perf reads it.
func TestPerfMap(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	defer func(on bool) { perfMapOn = on }(perfMapOn)
	perfMapOn = true
	defer SetJIT(SetJIT(true, 0))
	c := newTestCPU(t, loopCode)
	if exit := c.Run(1 << 40); exit.Reason != ExitSyscall {
		t.Fatalf("exit %v", exit.Reason)
	}
	name := fmt.Sprintf("/tmp/perf-%d.map", os.Getpid())
	defer os.Remove(name)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var start, size, pc uint64
	if _, err := fmt.Sscanf(string(b), "%x %x ttd:%v\n", &start, &size, &pc); err != nil || pc != testCode || size == 0 {
		t.Errorf("perf map %q: want a line naming the block at %#x (%v)", b, testCode, err)
	}
}
