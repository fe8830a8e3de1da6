package x86

import (
	"testing"

	"ttd/predict"
)

// epochObserver is the recorder's kind of observer (translated code logs
// its misses) that counts the Decoded calls by block address.
type epochObserver struct {
	logObserver
	decoded map[uint64]int
	at      map[uint64]uint64 // the instruction count at the last report
}

func (o *epochObserver) Decoded(c *CPU, b *Block) {
	o.decoded[b.PC]++
	o.at[b.PC] = c.Retired()
}

// twoBlockLoop is a loop of two blocks (the jmp ends the first), so that
// translated code chains from one to the other without returning:
//
//	mov ecx, 100000; xor eax, eax
//	A: add rax, rcx; jmp B
//	B: xor rax, 0x55; dec ecx; jnz A
//	syscall
var twoBlockLoop = []byte{
	0xb9, 0xa0, 0x86, 0x01, 0x00, 0x31, 0xc0,
	0x48, 0x01, 0xc8, 0xeb, 0x00,
	0x48, 0x83, 0xf0, 0x55, 0xff, 0xc9, 0x75, 0xf3,
	0x0f, 0x05,
}

// TestNewEpoch checks that after CodeCache.NewEpoch the observer hears
// again of every block that runs, once, although the blocks keep their
// decoding and their translations: translated code that chains from
// block to block returns to Go to say so, and the translations are
// found by address again; and that the result is the one of a run
// without epochs.
func TestNewEpoch(t *testing.T) {
	for _, jit := range []bool{false, true} {
		if jit && !jitSupported {
			continue
		}
		func() {
			defer SetJIT(SetJIT(jit, 0))
			want := newTestCPU(t, twoBlockLoop)
			want.Run(1 << 40)

			c := newTestCPU(t, twoBlockLoop)
			obs := &epochObserver{decoded: map[uint64]int{}, at: map[uint64]uint64{}}
			c.Pred, c.Obs = predict.New(10), obs
			// Budgets of whole loop turns (2 instructions, then 5 a
			// turn) stop at the loop's start: no block starts
			// elsewhere.
			c.Run(2 + 5*600)
			if len(obs.decoded) != 3 {
				t.Fatalf("jit %v: %d blocks reported, want 3", jit, len(obs.decoded))
			}
			decodes, translated := c.cache.Decodes, c.cache.Translated
			for epoch := 2; epoch <= 4; epoch++ {
				clear(obs.decoded)
				c.cache.NewEpoch()
				start := c.Icount
				c.Run(5 * 600)
				if len(obs.decoded) != 2 {
					t.Fatalf("jit %v: %d blocks reported in epoch %d, want the loop's 2", jit, len(obs.decoded), epoch)
				}
				for pc, n := range obs.decoded {
					if n != 1 {
						t.Fatalf("jit %v: block %#x reported %d times in epoch %d", jit, pc, n, epoch)
					}
					// Before it runs: in the first turn.
					if d := obs.at[pc] - start; d >= 5 {
						t.Fatalf("jit %v: block %#x reported %d instructions into epoch %d", jit, pc, d, epoch)
					}
					if b := c.cache.lookup(pc); jit && b.jv().entry != 0 && c.cache.jitTab[b.jv().mode][jitTabIndex(pc)].pc != pc {
						t.Fatalf("block %#x's translation is not found by address in epoch %d", pc, epoch)
					}
				}
			}
			if c.cache.Decodes != decodes || c.cache.Translated != translated {
				t.Errorf("jit %v: new epochs decoded %d and translated %d blocks again", jit,
					c.cache.Decodes-decodes, c.cache.Translated-translated)
			}
			if jit && translated == 0 {
				t.Error("nothing was translated: the test tests the interpreter")
			}
			c.Run(1 << 40)
			if c.R != want.R || c.Icount != want.Icount {
				t.Errorf("jit %v: after the epochs rax=%#x icount=%d, want rax=%#x icount=%d", jit,
					c.R[RAX], c.Icount, want.R[RAX], want.Icount)
			}
		}()
	}
}

// TestNewEpochDropsTruncated: a block cut short by an unmapped page is
// decoded again in a new epoch, and then runs on into the page mapped
// since.
func TestNewEpochDropsTruncated(t *testing.T) {
	code := make([]byte, PageSize)
	for i := range code {
		code[i] = 0x90 // nop
	}
	code[PageSize-2], code[PageSize-1] = 0xb8, 0x07 // mov eax, 7: on into the next page
	c := newTestCPU(t, code)
	next := uint64(testCode+PageSize) >> PageShift
	c.Mem.SetPage(next, nil, 0)
	start := uint64(testCode + PageSize - 4)
	c.RIP = start
	c.Run(2)
	b := c.cache.lookup(start)
	if b == nil || !b.truncated || len(b.Insts) != 2 {
		t.Fatalf("block %#x: %d instructions (truncated %v), want 2 cut by the unmapped page", start, len(b.Insts), b.truncated)
	}
	c.Mem.SetPage(next, NewPage(), PermRead|PermExec)
	if err := c.Mem.Poke(testCode+PageSize, []byte{0, 0, 0, 0x0f, 0x05}); err != nil { // ...; syscall
		t.Fatal(err)
	}
	c.cache.NewEpoch()
	c.RIP = start
	if exit := c.Run(100); exit.Reason != ExitSyscall || c.R[RAX] != 7 {
		t.Fatalf("exit %v rax=%d", exit.Reason, c.R[RAX])
	}
	if b := c.cache.lookup(start); b == nil || b.truncated || len(b.Insts) != 3 {
		t.Fatalf("block %#x after the new epoch: %d instructions (truncated %v), want 3", start, len(b.Insts), b.truncated)
	}
}
