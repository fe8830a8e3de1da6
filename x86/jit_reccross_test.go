package x86

import (
	"encoding/binary"
	"fmt"
	"testing"

	"ttd/predict"
)

// crossObserver is logObserver (a recording) that counts the reads that
// reach MemRead: those the interpreter makes.
type crossObserver struct {
	logObserver
	memReads int
}

func (o *crossObserver) MemRead(c *CPU, addr uint64, size int, val uint64) uint64 {
	if addr&7+uint64(size) > 8 {
		o.memReads++
	}
	return o.logObserver.MemRead(c, addr, size, val)
}

// TestJITRecordCrossMisses: while recording, translated code logs the
// pieces of a read across words that the prediction cache misses itself
// (jit_reccross_amd64.go), exactly as the interpreter's MemRead does:
// the same read numbers, values (a piece of one byte logs its whole
// word) and cache, for reads of 2, 4, 8 and 16 bytes at every offset
// that crosses a word, with a cache that predicts some pieces and not
// others, and with an empty one, and one whose instruction leaves after
// it (at its write). None of the others leaves translated code; with recCrossCode off, they do (the test checks that it tests
// something).
func TestJITRecordCrossMisses(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	p := newSlotLoads()
	p.loads(1, false)
	code, start := p.code, p.start
	// A read across words whose instruction then leaves, at the first
	// write to the page (the interpreter's): it reads again.
	code = d32(append(code, 0x48, 0x01, 0x86), 1005) // add %rax, 1005(%rsi)
	code = append(code, 0x41, 0xff, 0xc8)            // dec %r8d
	code = append(code, 0x0f, 0x85)                  // jnz to the start
	code = d32(code, start-(len(code)+4))
	code = append(code, 0x0f, 0x05) // syscall
	const data = 0x600000
	type result struct {
		pred     string
		regs     [16]uint64
		x1       XMM
		memReads int
	}
	run := func(jit, fill bool) result {
		defer SetJIT(SetJIT(jit, 0))
		c := newTestCPU(t, code)
		p := NewPage()
		for i := range p.Data {
			p.Data[i] = byte(i*29 + 3)
		}
		c.Mem.SetPage(data>>PageShift, p, PermRead|PermWrite)
		obs := &crossObserver{}
		c.Pred, c.Obs = predict.New(10), obs
		if fill {
			// The cache holds memory but for every fifth byte: some
			// pieces are predicted, some not, one-byte ones included.
			b := append([]byte(nil), p.Data[:1024]...)
			for i := range b {
				if i%5 == 0 {
					b[i] ^= 0x40
				}
			}
			c.Pred.Fill(data, b)
		}
		c.R[RSI], c.R[R8] = data, 2
		runToSyscallJIT(t, c, 10000, jit)
		return result{pred: predState(c, &obs.predObserver), regs: c.R, x1: c.X[1], memReads: obs.memReads}
	}
	for _, fill := range []bool{true, false} {
		want, got := run(false, fill), run(true, fill)
		if got.pred != want.pred {
			t.Errorf("fill %v: interpreted %s, translated %s", fill, want.pred, got.pred)
		}
		if got.regs != want.regs || got.x1 != want.x1 {
			t.Errorf("fill %v: registers: interpreted %x %x, translated %x %x", fill, want.regs, want.x1, got.regs, got.x1)
		}
		if got.memReads != 1 { // the add's, once
			t.Errorf("fill %v: %d reads left translated code for the interpreter", fill, got.memReads)
		}
		if want.memReads == 0 || want.pred == "" {
			t.Fatalf("fill %v: the interpreter read nothing", fill)
		}
		func() {
			defer func(on bool) { jitLogCrossMisses = on }(jitLogCrossMisses)
			jitLogCrossMisses = false
			if off := run(true, fill); off.memReads == 0 || off.pred != want.pred {
				t.Errorf("fill %v: without recCrossCode, %d reads left translated code (want some), %s", fill, off.memReads, off.pred)
			}
		}()
	}
}

// runToSyscallJIT runs c to its syscall, failing otherwise, and with jit
// checks that something was translated.
func runToSyscallJIT(t *testing.T, c *CPU, budget uint64, jit bool) {
	t.Helper()
	if exit := c.Run(budget); exit.Reason != ExitSyscall {
		t.Fatalf("jit %v: exit %v", jit, exit.Reason)
	}
	if jit && c.cache.Translated == 0 {
		t.Fatal("nothing was translated")
	}
}

// predState describes what a run did with its prediction cache: the
// count of reads, the reads o logged and the cache's contents, which
// must not depend on how the code ran.
func predState(c *CPU, o *predObserver) string {
	var h uint64
	for i := uint64(0); i < uint64(c.Pred.Slots()); i++ {
		h = h*31 + c.Pred.Predict(i*8, 8)
	}
	return fmt.Sprintf("reads %d, logged %d (%#x), cache %#x", c.Pred.Reads, o.logged, o.sum, h)
}

// slotLoads is the code TestJITRecordCrossMisses and
// TestJITReplayFeedsWideAndCrossReads run: a read that fills the TLB,
// then (from start, where their loops begin) loads of 2, 4, 8 or 16
// bytes, each from its own 32-byte slot off %rsi at offset off, summed
// into %r9 or %xmm1.
type slotLoads struct {
	code  []byte
	start int
	slot  int
}

func newSlotLoads() *slotLoads {
	code := []byte{0x48, 0x8b, 0x06} // mov (%rsi), %rax: fills the TLB
	return &slotLoads{code: code, start: len(code)}
}

// d32 appends the 32-bit displacement or immediate d to b.
func d32(b []byte, d int) []byte { return binary.LittleEndian.AppendUint32(b, uint32(d)) }

// load adds a load of size bytes at offset off of the next slot.
func (p *slotLoads) load(size, off int) {
	d := 32*p.slot + off
	p.slot++
	switch size {
	case 2:
		p.code = d32(append(p.code, 0x0f, 0xb7, 0x96), d) // movzwl d(%rsi), %edx
		p.code = append(p.code, 0x49, 0x01, 0xd1)         // add %rdx, %r9
	case 4:
		p.code = d32(append(p.code, 0x8b, 0x9e), d) // mov d(%rsi), %ebx
		p.code = append(p.code, 0x49, 0x01, 0xd9)   // add %rbx, %r9
	case 8:
		p.code = d32(append(p.code, 0x48, 0x8b, 0x8e), d) // mov d(%rsi), %rcx
		p.code = append(p.code, 0x49, 0x01, 0xc9)         // add %rcx, %r9
	case 16:
		p.code = d32(append(p.code, 0x0f, 0x10, 0x86), d) // movups d(%rsi), %xmm0
		p.code = append(p.code, 0x66, 0x0f, 0xd4, 0xc8)   // paddq %xmm0, %xmm1
	}
}

// loads adds, for each offset from first to 7, a load of 8 bytes and of
// 16 bytes (and one at off+8 with also8), 4 bytes from offset 5 on and 2
// bytes at 7.
func (p *slotLoads) loads(first int, also8 bool) {
	for off := first; off < 8; off++ {
		p.load(8, off)
		p.load(16, off)
		if also8 {
			p.load(16, off+8)
		}
		if off >= 5 {
			p.load(4, off)
		}
		if off == 7 {
			p.load(2, off)
		}
	}
}
