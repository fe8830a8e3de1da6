package x86

import (
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func init() {
	// Every test of the package keeps in host registers each guest
	// register a block uses at all (the diff tests' one-instruction
	// blocks use most of them once): the register forms of every
	// translated instruction run against the host CPU.
	jitMinUses = 1
	jitRegsOn = true
}

// TestJITRegsExits: translated code that keeps guest registers in host
// registers hands Go the exact registers at every way out of a block
// (whichever registers are resident and dirty there),
// compared with the interpreter after each of runs of odd budgets: a
// fault in the middle of a block after it wrote cached registers, the
// syscall at its end, an instruction left to the interpreter in the
// middle of a block (its resume entry loads them again), a call and a
// return (chaining through the table of translations, RSP cached), and
// code that rewrites its own block (the store leaves; the block is
// decoded again). Budgets end runs in the middle of chained loops.
func TestJITRegsExits(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	const data = 0x600000
	walk := []byte{
		0x48, 0x01, 0xd8, // loop: add rax, rbx
		0x48, 0x8d, 0x5c, 0x43, 0x01, // lea rbx, [rbx+rax*2+1]
		0x48, 0x31, 0xc1, // xor rcx, rax
		0x48, 0x8b, 0x16, // mov rdx, [rsi]: faults past the data page
		0x48, 0x81, 0xc6, 0x00, 0x04, 0x00, 0x00, // add rsi, 0x400
		0x48, 0x01, 0xca, // add rdx, rcx
		0x41, 0xff, 0xc8, // dec r8d
		0x75, 0xe3, // jne loop
		0x0f, 0x05, // syscall
	}
	// evict uses ten registers in a loop, more than there are host
	// registers for them: they are evicted and loaded again within the
	// block, and the fault and the budgets find some dirty in host
	// registers, some evicted and some in the CPU.
	evict := []byte{
		0x48, 0x01, 0xd8, // loop: add rax, rbx
		0x48, 0x31, 0xc1, // xor rcx, rax
		0x48, 0x01, 0xca, // add rdx, rcx
		0x48, 0x8d, 0x3c, 0x17, // lea rdi, [rdi+rdx]
		0x4d, 0x01, 0xc1, // add r9, r8
		0x4c, 0x31, 0xcf, // xor rdi, r9
		0x48, 0x8b, 0x2e, // mov rbp, [rsi]: faults past the data page
		0x48, 0x81, 0xc6, 0x00, 0x04, 0x00, 0x00, // add rsi, 0x400
		0x48, 0x01, 0xe8, // add rax, rbp
		0x49, 0x01, 0xfb, // add r11, rdi
		0x4c, 0x31, 0xda, // xor rdx, r11
		0x48, 0x31, 0xd3, // xor rbx, rdx
		0x4c, 0x01, 0xc9, // add rcx, r9
		0x41, 0xff, 0xc8, // dec r8d
		0x75, 0xcf, // jne loop
		0x0f, 0x05, // syscall
	}
	cases := []struct {
		name string
		code []byte
		exit ExitReason
		// r8 is the loop count.
		r8 uint64
	}{
		{"fault after writes", walk, ExitFault, 100}, // faults in round 5
		{"syscall", walk, ExitSyscall, 3},
		{"evictions, fault", evict, ExitFault, 100},
		{"evictions, syscall", evict, ExitSyscall, 4},
		{"interpreted in the middle", []byte{
			0x48, 0x01, 0xd8, // loop: add rax, rbx
			0x48, 0x8d, 0x5c, 0x43, 0x01, // lea rbx, [rbx+rax*2+1]
			0x9c,             // pushfq: the interpreter's
			0x48, 0x31, 0xc1, // xor rcx, rax
			0x48, 0x01, 0xcb, // add rbx, rcx
			0x5a,             // pop rdx
			0x48, 0x01, 0xd0, // add rax, rdx
			0x41, 0xff, 0xc8, // dec r8d
			0x75, 0xe8, // jne loop
			0x0f, 0x05, // syscall
		}, ExitSyscall, 300},
		{"call and ret", []byte{
			0x48, 0x01, 0xd8, // loop: add rax, rbx
			0xe8, 0x0a, 0x00, 0x00, 0x00, // call f
			0x48, 0x31, 0xc1, // xor rcx, rax
			0x41, 0xff, 0xc8, // dec r8d
			0x75, 0xf0, // jne loop
			0x0f, 0x05, // syscall
			0x48, 0x8d, 0x5c, 0x43, 0x01, // f: lea rbx, [rbx+rax*2+1]
			0x53,             // push rbx
			0x48, 0x01, 0xcb, // add rbx, rcx
			0x59, // pop rcx
			0xc3, // ret
		}, ExitSyscall, 300},
		{"self-modifying", []byte{
			0x48, 0x83, 0xc0, 0x01, // loop: add rax, 1 (its immediate is rewritten)
			0x48, 0x01, 0xc3, // add rbx, rax
			0x88, 0x1d, 0xf6, 0xff, 0xff, 0xff, // mov [rip-10], bl: the add's immediate
			0x48, 0x31, 0xd9, // xor rcx, rbx
			0x41, 0xff, 0xc8, // dec r8d
			0x75, 0xeb, // jne loop
			0x0f, 0x05, // syscall
		}, ExitSyscall, 50},
	}
	type result struct {
		exits []ExitReason
		rips  []uint64
		regs  [][16]uint64
		count uint64
		mem   []byte
		// translated: blocks
		translated uint64
	}
	budgets := []uint64{1, 7, 13, 100, 3, 250, 1 << 40}
	run := func(code []byte, r8 uint64, jit bool) result {
		defer SetJIT(SetJIT(jit, 0))
		c := newTestCPU(t, code)
		for pn := uint64(testCode >> PageShift); pn <= (testCode+uint64(len(code)))>>PageShift; pn++ {
			addWrite(c.Mem, pn) // the self-modifying case
		}
		p := NewPage()
		for i := range p.Data {
			p.Data[i] = byte(i*7 + 3)
		}
		c.Mem.SetPage(data>>PageShift, p, PermRead|PermWrite)
		c.Mem.FlushTLB()
		c.R[RAX], c.R[RBX], c.R[RCX] = 0x0123456789abcdef, 0x1111, 0xfedcba9876543210
		c.R[RSI], c.R[R8] = data, r8
		var res result
		for _, b := range budgets {
			ex := c.Run(b)
			res.exits = append(res.exits, ex.Reason)
			res.rips = append(res.rips, c.RIP)
			res.regs = append(res.regs, c.R)
			if ex.Reason != ExitBudget {
				break
			}
		}
		res.count = c.Icount
		res.mem = make([]byte, PageSize)
		c.Mem.Peek(data, res.mem)
		code2 := make([]byte, len(code))
		c.Mem.Peek(testCode, code2)
		res.mem = append(res.mem, code2...)
		res.translated = c.cache.Translated
		return res
	}
	for _, tc := range cases {
		before, evicted := jitCachedBlocks.Load(), jitEvictions.Load()
		want := run(tc.code, tc.r8, false)
		got := run(tc.code, tc.r8, true)
		if got.translated == 0 {
			t.Errorf("%s: nothing was translated", tc.name)
		}
		if jitCachedBlocks.Load() == before {
			t.Errorf("%s: no translation kept a register in a host register", tc.name)
		}
		if strings.HasPrefix(tc.name, "evictions") && jitEvictions.Load() == evicted {
			t.Errorf("%s: no guest register was evicted from its host register", tc.name)
		}
		if last := want.exits[len(want.exits)-1]; last != tc.exit {
			t.Fatalf("%s: the interpreter's run ends with %v, want %v", tc.name, last, tc.exit)
		}
		if len(got.exits) != len(want.exits) {
			t.Fatalf("%s: exits %v translated, %v interpreted", tc.name, got.exits, want.exits)
		}
		for i := range want.exits {
			if got.exits[i] != want.exits[i] || got.rips[i] != want.rips[i] || got.regs[i] != want.regs[i] {
				t.Errorf("%s, run %d: translated %v at %#x %x, interpreted %v at %#x %x", tc.name, i,
					got.exits[i], got.rips[i], got.regs[i], want.exits[i], want.rips[i], want.regs[i])
			}
		}
		if got.count != want.count {
			t.Errorf("%s: icount %d translated, %d interpreted", tc.name, got.count, want.count)
		}
		if string(got.mem) != string(want.mem) {
			t.Errorf("%s: memory differs", tc.name)
		}
	}
}

// shaRounds is a piece of sha256sum's unrolled message schedule (GNU
// coreutils, built with gcc -O2): rotations and sums in five registers and
// two stack words, in a loop of 20 instructions that ends in a syscall.
var shaRounds = []byte{
	0x44, 0x8b, 0x7c, 0x24, 0x04, // loop: mov r15d, [rsp+4]
	0x44, 0x01, 0xf2, 0x44, 0x01, 0xea, // add edx, r14d; add edx, r13d
	0x45, 0x89, 0xfe, 0x45, 0x89, 0xfd, // mov r14d, r15d; mov r13d, r15d
	0x41, 0xc1, 0xc5, 0x0f, 0x41, 0xc1, 0xc6, 0x0d, // rol r13d, 15; rol r14d, 13
	0x45, 0x31, 0xee, 0x45, 0x89, 0xfd, // xor r14d, r13d; mov r13d, r15d
	0x41, 0xc1, 0xed, 0x0a, 0x45, 0x31, 0xee, // shr r13d, 10; xor r14d, r13d
	0x44, 0x8b, 0x6c, 0x24, 0x10, 0x45, 0x89, 0xef, // mov r13d, [rsp+16]; mov r15d, r13d
	0x41, 0xc1, 0xc5, 0x0e, 0x41, 0xc1, 0xcf, 0x07, // rol r13d, 14; ror r15d, 7
	0x45, 0x31, 0xfd, 0x45, 0x01, 0xf5, // xor r13d, r15d; add r13d, r14d
	0x44, 0x89, 0x6c, 0x24, 0x04, // mov [rsp+4], r13d
	0xff, 0xc9, 0x75, 0xbb, // dec ecx; jnz loop
	0x0f, 0x05, // syscall
}

// BenchmarkJITRegs runs shaRounds translated with its registers in the
// CPU (memory) and in host registers (host), in one run, for the ratio;
// cpu-ns/inst is the thread's CPU time (the machine is shared):
// go test ./x86/ -run X -bench JITRegs -count 5.
func BenchmarkJITRegs(b *testing.B) {
	for _, mode := range []struct {
		name string
		on   bool
	}{{"memory", false}, {"host", true}} {
		b.Run(mode.name, func(b *testing.B) {
			defer SetJIT(SetJIT(true, 0))
			was := jitRegsOn
			jitRegsOn = mode.on
			defer func() { jitRegsOn = was }()
			c := newTestCPU(b, shaRounds)
			c.R[RCX] = 1000
			c.Run(1 << 40) // translate, outside the measurement
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU()
			b.ReportAllocs()
			b.ResetTimer()
			var insts uint64
			for i := 0; i < b.N; i++ {
				c.RIP, c.R[RCX] = testCode, 100000
				start := c.Icount
				if ex := c.Run(1 << 40); ex.Reason != ExitSyscall {
					b.Fatalf("exit %v", ex.Reason)
				}
				insts += c.Icount - start
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(insts), "ns/inst")
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(insts), "cpu-ns/inst")
		})
	}
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
