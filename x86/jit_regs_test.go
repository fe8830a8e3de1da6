package x86

import (
	"testing"
)

func init() {
	// Every test of the package keeps in host registers each guest
	// register a block uses at all (the diff tests' one-instruction
	// blocks use most of them once): the register forms of every
	// translated instruction run against the host CPU.
	jitMinUses = 1
}

// TestJITRegsExits: translated code that keeps guest registers in host
// registers hands Go the exact registers at every way out of a block,
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
	cases := []struct {
		name string
		code []byte
		exit ExitReason
		// r8 is the loop count.
		r8 uint64
	}{
		{"fault after writes", walk, ExitFault, 100}, // faults in round 5
		{"syscall", walk, ExitSyscall, 3},
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
			c.Mem.Lookup(pn).Perm |= PermWrite // the self-modifying case
		}
		p := &Page{Perm: PermRead | PermWrite}
		for i := range p.Data {
			p.Data[i] = byte(i*7 + 3)
		}
		c.Mem.SetPage(data>>PageShift, p)
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
		before := jitCachedBlocks.Load()
		want := run(tc.code, tc.r8, false)
		got := run(tc.code, tc.r8, true)
		if got.translated == 0 {
			t.Errorf("%s: nothing was translated", tc.name)
		}
		if jitCachedBlocks.Load() == before {
			t.Errorf("%s: no translation kept a register in a host register", tc.name)
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
