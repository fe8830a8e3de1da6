package x86

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// syncCounter counts Observer.Sync calls.
type syncCounter struct{ n int }

func (o *syncCounter) Instruction(c *CPU, in *Inst) {}
func (o *syncCounter) WantInstructions() bool       { return false }
func (o *syncCounter) MemRead(c *CPU, addr uint64, size int, val uint64) uint64 {
	return val
}
func (o *syncCounter) MemWrite(c *CPU, addr uint64, size int, val uint64) {}
func (o *syncCounter) NonDet(c *CPU, in *Inst, vals []uint64) []uint64    { return vals }
func (o *syncCounter) Decoded(c *CPU, b *Block)                           {}
func (o *syncCounter) Sync(c *CPU, in *Inst)                              { o.n++ }

// TestWrapSyncStatic: a locked instruction's handler is syncStatic with
// the handler decoding chose kept in the instruction; running it tells
// the observer once and does the operation. A handler that is not
// static gets the closure.
func TestWrapSyncStatic(t *testing.T) {
	// lock add [rsp], eax; syscall
	code := []byte{0xf0, 0x01, 0x04, 0x24, 0x0f, 0x05}
	in := Decode(testCode, code)
	if funcPC(in.Fn) != funcPC(syncStatic) {
		t.Fatalf("lock add's handler is not syncStatic")
	}
	bare := in
	bare.Lock = false
	if h := builders[bare.Op](&bare); h == nil || funcPC(syncInnerOf(&in)) != funcPC(h) {
		t.Fatalf("syncStatic wraps %x, want the builder's %x", funcPC(syncInnerOf(&in)), funcPC(h))
	}
	c := newTestCPU(t, code)
	o := &syncCounter{}
	c.Obs = o
	c.R[RAX] = 5
	c.Mem.Write32(c.R[RSP], 37)
	if e := c.Run(1 << 20); e.Reason != ExitSyscall {
		t.Fatalf("exit %v (%v)", e.Reason, e.Err)
	}
	if v := c.Mem.Read32(c.R[RSP]); v != 42 || o.n != 1 {
		t.Errorf("[rsp] = %d after lock add, %d Sync calls; want 42, 1", v, o.n)
	}

	k := uint64(3)
	heap := Inst{Op: x86asm.ADD, NArgs: 2, Fn: func(c *CPU, in *Inst) { c.R[RAX] += k }}
	wrapSync(&heap)
	if staticHandler(heap.Fn) || heap.Args[2].Imm != 0 {
		t.Error("a closure's wrapper is static or kept in the third operand")
	}
	c.R[RAX] = 0
	heap.Fn(c, &heap)
	if c.R[RAX] != 3 || o.n != 2 {
		t.Errorf("the closure's wrapper: rax %d, %d Sync calls; want 3, 2", c.R[RAX], o.n)
	}
}

// TestSSEHandlersStatic: the SSE forms that glibc's string functions
// and python3 use decode to static handlers, so that a code file keeps
// their blocks (python3 -c pass: about 550 blocks were decoded afresh
// each run for closures these made).
func TestSSEHandlersStatic(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
	}{
		{"punpcklqdq xmm0, xmm1", []byte{0x66, 0x0f, 0x6c, 0xc1}},
		{"punpcklqdq xmm0, [rax]", []byte{0x66, 0x0f, 0x6c, 0x00}},
		{"pcmpeqd xmm0, xmm1", []byte{0x66, 0x0f, 0x76, 0xc1}},
		{"pcmpeqb xmm0, [rax]", []byte{0x66, 0x0f, 0x74, 0x00}},
		{"cvtss2sd xmm0, [rax]", []byte{0xf3, 0x0f, 0x5a, 0x00}},
		{"movd xmm0-form addss xmm0, [rax]", []byte{0xf3, 0x0f, 0x58, 0x00}},
		{"pslldq xmm0, 3", []byte{0x66, 0x0f, 0x73, 0xf8, 0x03}},
		{"psrldq xmm0, 3", []byte{0x66, 0x0f, 0x73, 0xd8, 0x03}},
		{"movhps xmm0, [rax]", []byte{0x0f, 0x16, 0x00}},
		{"movhps [rax], xmm0", []byte{0x0f, 0x17, 0x00}},
		{"movlpd xmm0, [rax]", []byte{0x66, 0x0f, 0x12, 0x00}},
		{"palignr xmm0, xmm1, 5", []byte{0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x05}},
		{"pshufb xmm0, xmm1", []byte{0x66, 0x0f, 0x38, 0x00, 0xc1}},
		{"pcmpistri xmm0, xmm1, 0x1a", []byte{0x66, 0x0f, 0x3a, 0x63, 0xc1, 0x1a}},
		{"pcmpestrm xmm0, [rax], 0x40", []byte{0x66, 0x0f, 0x3a, 0x60, 0x00, 0x40}},
		{"cvtsi2sd xmm0, rax", []byte{0xf2, 0x48, 0x0f, 0x2a, 0xc0}},
		{"cvtsi2ss xmm0, [rax]", []byte{0xf3, 0x0f, 0x2a, 0x00}},
		{"cvttsd2si eax, xmm0", []byte{0xf2, 0x0f, 0x2c, 0xc0}},
		{"cvtss2si rax, [rax]", []byte{0xf3, 0x48, 0x0f, 0x2d, 0x00}},
		{"pslld xmm0, 3", []byte{0x66, 0x0f, 0x72, 0xf0, 0x03}},
		{"psrlq xmm0, xmm1", []byte{0x66, 0x0f, 0xd3, 0xc1}},
	} {
		in := Decode(0x1000, tc.code)
		if in.Fn == nil || funcPC(in.Fn) == funcPC(unimplemented) || funcPC(in.Fn) == funcPC(illegal) {
			t.Errorf("%s: not decoded (%v)", tc.name, in.Op)
			continue
		}
		if !staticHandler(in.Fn) {
			t.Errorf("%s (%v): handler is not static", tc.name, in.Op)
		}
	}
}
