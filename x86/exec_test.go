package x86

import (
	"math/rand"
	"reflect"
	"testing"
)

// loopCode is a hot loop of common integer instructions ending in syscall:
//
//	mov ecx, 1000000; xor eax, eax
//	1: add rax, rcx; xor rax, 0x55; mov [rsp-8], rax; mov rdx, [rsp-8]
//	   lea rsi, [rdx+rax*2+8]; cmp rsi, rdx; dec ecx; jnz 1b
//	syscall
var loopCode = []byte{
	0xb9, 0x40, 0x42, 0x0f, 0x00, 0x31, 0xc0, 0x48, 0x01, 0xc8, 0x48, 0x83,
	0xf0, 0x55, 0x48, 0x89, 0x44, 0x24, 0xf8, 0x48, 0x8b, 0x54, 0x24, 0xf8,
	0x48, 0x8d, 0x74, 0x42, 0x08, 0x48, 0x39, 0xd6, 0xff, 0xc9, 0x75, 0xe3,
	0x0f, 0x05,
}

const (
	testCode  = 0x400000
	testStack = 0x7ff000
)

// newTestCPU maps code at testCode and a stack page below testStack.
func newTestCPU(t testing.TB, code []byte) *CPU {
	mem := NewMemory()
	for pn := uint64(testCode >> PageShift); pn <= (testCode+uint64(len(code)))>>PageShift; pn++ {
		mem.SetPage(pn, NewPage(), PermRead|PermExec)
	}
	mem.SetPage(testStack>>PageShift-1, NewPage(), PermRead|PermWrite)
	if err := mem.Poke(testCode, code); err != nil {
		t.Fatal(err)
	}
	c := NewCPU(mem, NewCodeCache(mem))
	c.RIP = testCode
	c.R[RSP] = testStack - 64
	return c
}

func TestLoopRunsToSyscall(t *testing.T) {
	c := newTestCPU(t, loopCode)
	exit := c.Run(1 << 40)
	if exit.Reason != ExitSyscall {
		t.Fatalf("exit %v (%v), want syscall", exit.Reason, exit.Err)
	}
	if want := uint64(2 + 1000000*8 + 1); c.Icount != want {
		t.Errorf("icount %d, want %d", c.Icount, want)
	}
	if c.RIP != testCode+uint64(len(loopCode)) {
		t.Errorf("rip %#x", c.RIP)
	}
	// Recompute the loop's result in Go.
	var rax uint64
	for rcx := uint64(1000000); rcx > 0; rcx-- {
		rax = (rax + rcx) ^ 0x55
	}
	// syscall leaves the return address in rcx.
	if c.R[RAX] != rax || c.R[RCX] != c.RIP || c.R[RDX] != rax {
		t.Errorf("rax=%#x rcx=%#x rdx=%#x, want rax=rdx=%#x rcx=rip", c.R[RAX], c.R[RCX], c.R[RDX], rax)
	}
}

func TestBudgetIsExact(t *testing.T) {
	c := newTestCPU(t, loopCode)
	var steps uint64
	for {
		exit := c.Run(7)
		steps++
		if exit.Reason == ExitSyscall {
			break
		}
		if exit.Reason != ExitBudget {
			t.Fatalf("exit %v", exit.Reason)
		}
		if c.Icount != steps*7 {
			t.Fatalf("after %d budgets icount=%d", steps, c.Icount)
		}
	}
	ref := newTestCPU(t, loopCode)
	ref.Run(1 << 40)
	if c.R != ref.R || c.RIP != ref.RIP || c.Icount != ref.Icount || c.Rflags() != ref.Rflags() {
		t.Errorf("budgeted run differs from a straight run:\n%v\n%v", c, ref)
	}
}

// TestBudgetStopResumesBlock checks that a run whose budget ends inside
// a block resumes that block (Run): budgets of 7 through 100 instructions
// of add decode the blocks a straight run decodes, no more; and that an
// instruction faulting in a resumed block does not retire.
func TestBudgetStopResumesBlock(t *testing.T) {
	var code []byte
	for range 100 {
		code = append(code, 0x48, 0x83, 0xc0, 0x01) // add rax, 1
	}
	code = append(code, 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0) // mov rax, [0x10]
	ref := newTestCPU(t, code)
	if ex := ref.Run(1 << 20); ex.Reason != ExitFault {
		t.Fatalf("exit %v, want a fault", ex.Reason)
	}
	c := newTestCPU(t, code)
	for c.Run(7).Reason == ExitBudget {
	}
	if c.Cache().Decodes != ref.Cache().Decodes {
		t.Errorf("budgets of 7 decoded %d blocks, a straight run %d", c.Cache().Decodes, ref.Cache().Decodes)
	}
	if c.Icount != 100 || c.RIP != ref.RIP || c.R[RAX] != 100 {
		t.Errorf("icount %d rip %#x rax %d, want 100 %#x 100", c.Icount, c.RIP, c.R[RAX], ref.RIP)
	}
}

func TestFaultIsPrecise(t *testing.T) {
	// mov rax, [0x10]; (never reached) nop
	c := newTestCPU(t, []byte{0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0, 0x90})
	exit := c.Run(100)
	if exit.Reason != ExitFault || exit.Addr != 0x10 || c.RIP != testCode || c.Icount != 0 {
		t.Fatalf("exit %+v rip=%#x icount=%d", exit, c.RIP, c.Icount)
	}
}

func TestSelfModifyingCode(t *testing.T) {
	// mov byte [rip+1], 0x2a  (patches the immediate of the next instruction)
	// mov al, 0x00 ; syscall
	code := []byte{0xc6, 0x05, 0x01, 0x00, 0x00, 0x00, 0x2a, 0xb0, 0x00, 0x0f, 0x05}
	c := newTestCPU(t, code)
	addWrite(c.Mem, testCode>>PageShift)
	exit := c.Run(100)
	if exit.Reason != ExitSyscall || c.R[RAX]&0xff != 0x2a {
		t.Fatalf("exit %v al=%#x, want syscall with al=0x2a", exit.Reason, c.R[RAX]&0xff)
	}
}

// TestSelfModifyingLoopTranslated: a loop that patches its own add's
// immediate each time round, translated from its first run: each patch
// must take effect the very next time the add runs.
func TestSelfModifyingLoopTranslated(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	defer SetJIT(SetJIT(true, 0))
	code := []byte{
		0x88, 0x0d, 0x02, 0x00, 0x00, 0x00, // loop: mov [rip+2], cl (the add's immediate)
		0x83, 0xc0, 0x00, // add eax, 0 (patched)
		0xff, 0xc1, // inc ecx
		0x83, 0xf9, 0x05, // cmp ecx, 5
		0x75, 0xf0, // jne loop
		0x0f, 0x05, // syscall
	}
	c := newTestCPU(t, code)
	addWrite(c.Mem, testCode>>PageShift)
	exit := c.Run(1000)
	if exit.Reason != ExitSyscall || c.R[RAX] != 0+1+2+3+4 || c.Icount != 5*5+1 {
		t.Fatalf("exit %v rax=%d icount=%d, want the syscall, rax=10, 26 instructions", exit.Reason, c.R[RAX], c.Icount)
	}
	if c.cache.Translated == 0 {
		t.Fatal("nothing was translated: the test tests the interpreter")
	}
}

func TestUnimplementedNamesItself(t *testing.T) {
	// rdrand eax is not implemented (CPUID does not report it).
	c := newTestCPU(t, []byte{0x0f, 0xc7, 0xf0})
	exit := c.Run(10)
	if exit.Reason != ExitUnimplemented || exit.Err == nil {
		t.Fatalf("exit %+v", exit)
	}
	if got := exit.Err.Error(); got != "unimplemented instruction RDRAND (bytes 0f c7 f0) at 0x400000" {
		t.Errorf("error %q", got)
	}
}

// BenchmarkDispatch measures the interpreter's dispatch loop on loopCode;
// it must report 0 allocs/op.
func BenchmarkDispatch(b *testing.B) {
	c := newTestCPU(b, loopCode)
	c.Run(1 << 40) // decode once, outside the measurement
	b.ReportAllocs()
	b.ResetTimer()
	var insts uint64
	for i := 0; i < b.N; i++ {
		c.RIP = testCode
		start := c.Icount
		c.Run(1 << 40)
		insts += c.Icount - start
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(insts), "ns/inst")
}

func TestStateRoundTrip(t *testing.T) {
	c := newTestCPU(t, loopCode)
	c.Run(1000)
	c.X[3] = XMM{1, 2}
	c.FPU.Regs[2].Mant = 99
	c.FSBase = 0x1234
	b := c.MarshalState(nil)
	if len(b) != StateSize {
		t.Fatalf("state is %d bytes, want %d", len(b), StateSize)
	}
	d := newTestCPU(t, loopCode)
	if err := d.UnmarshalState(b); err != nil {
		t.Fatal(err)
	}
	if got := d.MarshalState(nil); string(got) != string(b) {
		t.Fatal("state differs after a round trip")
	}
	// Both continue identically.
	c.Run(1 << 40)
	d.Run(1 << 40)
	if c.R != d.R || c.Rflags() != d.Rflags() || c.Icount != d.Icount {
		t.Fatalf("diverged:\n%v\n%v", c, d)
	}
}

func TestDecodeQuirks(t *testing.T) {
	for _, tc := range []struct {
		code []byte
		len  uint8
		ill  bool
	}{
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa}, 4, false}, // endbr64
		{[]byte{0x0f, 0x0d, 0x48, 0x10}, 4, false}, // prefetchw 0x10(%rax)
		{[]byte{0x0f, 0x18, 0x20}, 3, false},       // hint nop 0f 18 /4
		{[]byte{0xf0, 0x0f, 0x58, 0xd1}, 4, true},  // lock addps: #UD
		{[]byte{0xf0, 0x48, 0x01, 0xd8}, 4, true},  // lock add to a register: #UD
		{[]byte{0xf0, 0x48, 0x01, 0x18}, 4, false}, // lock add to memory
		{[]byte{0xc5, 0xf8, 0x77}, 3, false},       // vzeroupper (a level without AVX gates it: features_test.go)
		{[]byte{0x66, 0xc5, 0xf8, 0x77}, 4, true},  // a 66 prefix before VEX: #UD
		{[]byte{0x67, 0x8d, 0x51, 0xff}, 4, false}, // lea with a 32-bit address
	} {
		in := Decode(0x1000, append(tc.code, make([]byte, 16)...))
		isIll := in.Fn != nil && in.Flags&InstEndsBlock != 0 && (in.Op == 0 || tc.ill)
		if (in.Len != tc.len && !tc.ill) || isIll != tc.ill {
			t.Errorf("% x: len %d (want %d), illegal %v (want %v), op %v", tc.code, in.Len, tc.len, isIll, tc.ill, in.Op)
		}
	}
}

// TestJumpInsideBlock runs a block whose conditional jumps sit in its
// middle (a taken one leaves the block) whole and one instruction at a
// time: same registers, RIP and instruction count.
func TestJumpInsideBlock(t *testing.T) {
	code := []byte{
		0x31, 0xc0, // xor eax, eax
		0x83, 0xf8, 0x00, // cmp eax, 0
		0x75, 0x02, // jne +2 (not taken)
		0xb9, 0x05, 0x00, 0x00, 0x00, // mov ecx, 5 (flags unchanged)
		0x74, 0x02, // je +2 (taken: leaves the block)
		0xff, 0xc0, // inc eax (skipped)
		0xff, 0xc2, // inc edx
		0x0f, 0x05, // syscall
	}
	run := func(budget uint64) *CPU {
		c := newTestCPU(t, code)
		for {
			if e := c.Run(budget); e.Reason == ExitSyscall {
				return c
			} else if e.Reason != ExitBudget {
				t.Fatalf("exit %v", e.Reason)
			}
		}
	}
	whole, step := run(1<<20), run(1)
	// syscall leaves the return address in rcx.
	if whole.R[RAX] != 0 || whole.R[RCX] != testCode+uint64(len(code)) || whole.R[RDX] != 1 {
		t.Errorf("rax=%d rcx=%d rdx=%d", whole.R[RAX], whole.R[RCX], whole.R[RDX])
	}
	if whole.R != step.R || whole.RIP != step.RIP || whole.Icount != step.Icount || whole.Icount != 7 {
		t.Errorf("whole: icount %d rip %#x %x\nstep:  icount %d rip %#x %x", whole.Icount, whole.RIP, whole.R, step.Icount, step.RIP, step.R)
	}
}

// TestDecodeBlockAllocations: decoding a block of register-only
// instructions allocates the block, its instructions and its bytes, not
// each instruction (decodeBlock decodes in place into a scratch buffer).
func TestDecodeBlockAllocations(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	var code []byte
	for n := 0; n < 40; n++ {
		code = append(code, randRegInst(r)...)
	}
	code = append(code, 0x0f, 0x05)
	c := newTestCPU(t, code)
	var n int
	allocs := testing.AllocsPerRun(20, func() { n = len(c.cache.decodeBlock(testCode).Insts) })
	if n < 20 {
		t.Fatalf("the block has %d instructions; the test wants a long one", n)
	}
	if allocs > 8 {
		t.Errorf("decoding a block of %d instructions made %.0f allocations, want at most 8 (not one per instruction)", n, allocs)
	}
}

// TestReusedBlocksMatchDecoded: a block that starts inside one already
// decoded (loopCode's loop head, reached first through the block from
// its start) takes that block's tail instead of decoding it again, and
// is exactly what a fresh decode gives.
//
// fusedLoop's loop head is the second of four register moves, which fuse
// in pairs (movRR64+movRR64): from the start, the first and the third
// instruction begin a pair; from the head, the second does.
//
//	mov ecx, 3; mov rax, rbx
//	1: mov rbx, rdx; mov rdx, rsi; mov rsi, rax; dec ecx; jnz 1b
//	syscall
var fusedLoop = []byte{0xb9, 3, 0, 0, 0, 0x48, 0x89, 0xd8,
	0x48, 0x89, 0xd3, 0x48, 0x89, 0xf2, 0x48, 0x89, 0xc6, 0xff, 0xc9, 0x75, 0xf3, 0x0f, 0x05}

func TestReusedBlocksMatchDecoded(t *testing.T) {
	for _, code := range [][]byte{loopCode, fusedLoop} {
		checkReusedBlocks(t, code)
	}
}

// TestReusedBlocksShareInstructions: a block that starts inside another
// shares that block's instructions when they are alike from there on
// (loopCode), and copies them when they are not (fusedLoop: its pairs
// fuse differently from the loop head).
func TestReusedBlocksShareInstructions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  []byte
		share bool
	}{{"loopCode", loopCode, true}, {"fusedLoop", fusedLoop, false}} {
		c := newTestCPU(t, tc.code)
		if e := c.Run(1 << 40); e.Reason != ExitSyscall {
			t.Fatalf("%s: exit %v (%v)", tc.name, e.Reason, e.Err)
		}
		if c.cache.Reused == 0 {
			t.Fatalf("%s: no block took instructions from another: the test tests nothing", tc.name)
		}
		shared := false
		for _, a := range c.cache.blocks {
			for _, b := range c.cache.blocks {
				for k := 1; k < len(a.Insts); k++ {
					if &a.Insts[k] == &b.Insts[0] {
						shared = true
						if cap(b.Insts) != len(b.Insts) {
							t.Errorf("%s: a shared tail has room to append (cap %d, len %d)", tc.name, cap(b.Insts), len(b.Insts))
						}
					}
				}
			}
		}
		if shared != tc.share {
			t.Errorf("%s: a block shares another's instructions: %v, want %v", tc.name, shared, tc.share)
		}
	}
}

func checkReusedBlocks(t *testing.T, code []byte) {
	c := newTestCPU(t, code)
	if e := c.Run(1 << 40); e.Reason != ExitSyscall {
		t.Fatalf("exit %v (%v)", e.Reason, e.Err)
	}
	if c.cache.Reused == 0 {
		t.Fatal("no block took instructions from another: the test tests nothing")
	}
	fresh := NewCodeCache(c.Mem)
	for pc, b := range c.cache.blocks {
		f := fresh.decodeBlock(pc)
		if f.End != b.End || string(f.Bytes) != string(b.Bytes) || len(f.Insts) != len(b.Insts) {
			t.Fatalf("block at %#x: end %#x, %d instructions; decoded afresh: end %#x, %d", pc, b.End, len(b.Insts), f.End, len(f.Insts))
		}
		for i := range b.Insts {
			x, y := b.Insts[i], f.Insts[i]
			xi, yi := syncInner(x.Fn), syncInner(y.Fn)
			if funcPC(x.Fn) != funcPC(y.Fn) || (xi == nil) != (yi == nil) || xi != nil && funcPC(xi) != funcPC(yi) {
				t.Fatalf("block at %#x, instruction %d: handlers differ", pc, i)
			}
			x.Fn, y.Fn = nil, nil
			if !reflect.DeepEqual(x, y) {
				t.Fatalf("block at %#x, instruction %d:\n%+v\ndecoded afresh:\n%+v", pc, i, x, y)
			}
		}
	}
}
