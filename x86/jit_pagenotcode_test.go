package x86

import (
	"fmt"
	"hash/fnv"
	"testing"

	"ttd/predict"
)

// countObserver is predObserver replaying, counting the reads that reach
// the observer (the interpreter's; translated code's leave to it).
type countObserver struct {
	predObserver
	reads int
}

func (o *countObserver) MemRead(c *CPU, addr uint64, size int, val uint64) uint64 {
	o.reads++
	return o.predObserver.MemRead(c, addr, size, val)
}

// TestJITReplayWritesPredictedReads: while replaying, a read the cache
// predicts differently from memory (memory lacks what the recording
// read) has translated code write the prediction into memory and go on
// (pageNotCode finds the page through the read TLB's entry), unless the
// page holds decoded code: then it leaves and the interpreter writes
// through Memory.Poke, which drops the code mark. Both end as the
// interpreter does.
func TestJITReplayWritesPredictedReads(t *testing.T) {
	if !jitSupported {
		t.Skip("no block translation on this architecture")
	}
	p := newSlotLoads()
	const loads = 16
	for i := 0; i < loads; i++ {
		p.load(8, 0)
	}
	code, start := p.code, p.start
	code = append(code, 0x41, 0xff, 0xc8) // dec %r8d
	code = append(code, 0x0f, 0x85)       // jnz to the start
	code = d32(code, start-(len(code)+4))
	code = append(code, 0x0f, 0x05) // syscall
	const data = 0x600000
	run := func(jit, codeMark bool) (string, int) {
		defer SetJIT(SetJIT(jit, 0))
		pg := NewPage()
		for i := range pg.Data {
			pg.Data[i] = byte(i*29 + 3)
		}
		c := newTestCPU(t, code)
		c.Mem.SetPage(data>>PageShift, pg, PermRead|PermWrite)
		obs := &countObserver{predObserver: predObserver{replay: true}}
		c.Pred, c.Obs = predict.New(6), obs
		// The cache holds what the recording read: the first word of
		// every slot but the first (the load that fills the TLB, which
		// the interpreter runs) differs from memory's.
		b := append([]byte(nil), pg.Data[:512]...) // the cache's 64 words
		for i := 32; i < len(b); i += 32 {
			b[i+3] ^= 0x5a
		}
		c.Pred.Fill(data, b)
		pg.code = codeMark
		c.R[RSI], c.R[R8] = data, 3
		runToSyscallJIT(t, c, 100000, jit)
		h := fnv.New64a()
		h.Write(pg.Data[:])
		return fmt.Sprintf("%s, regs %x, memory %x, code mark %v",
			predState(c, &obs.predObserver), c.R, h.Sum64(), pg.code), obs.reads
	}
	for _, codeMark := range []bool{false, true} {
		want, wantReads := run(false, codeMark)
		got, gotReads := run(true, codeMark)
		if got != want {
			t.Errorf("code mark %v: interpreted %s\ntranslated %s", codeMark, want, got)
		}
		t.Logf("code mark %v: reads that reached the observer: interpreted %d, translated %d", codeMark, wantReads, gotReads)
		if wantReads < loads-1 {
			t.Fatalf("code mark %v: the interpreter read %d times", codeMark, wantReads)
		}
		// Without a code mark translated code writes memory itself;
		// with one, the first stale read leaves, and Poke drops the
		// mark.
		if !codeMark && gotReads != 0 || codeMark && gotReads != 1 {
			t.Errorf("code mark %v: %d reads reached the observer", codeMark, gotReads)
		}
	}
}
