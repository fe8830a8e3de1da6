package x86

import (
	"math/rand"
	"testing"

	"ttd/predict"
)

// TestRepStosPages runs rep stos of each element size over ranges that
// start anywhere (aligned to the element or not) and cross pages, with
// and without a prediction cache: memory must hold the element repeated
// and nothing outside the range, RDI must end past it, and the cache
// must predict every byte an aligned rep stos wrote (it takes them as a
// whole; the unaligned one's stores go to the observer, none here).
func TestRepStosPages(t *testing.T) {
	const data = 0x600000
	codes := map[int][]byte{
		1: {0xf3, 0xaa, 0x0f, 0x05},
		2: {0x66, 0xf3, 0xab, 0x0f, 0x05},
		4: {0xf3, 0xab, 0x0f, 0x05},
		8: {0xf3, 0x48, 0xab, 0x0f, 0x05},
	}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 400; i++ {
		size := 1 << rng.Intn(4)
		c := newTestCPU(t, codes[size])
		for pn := uint64(data >> PageShift); pn < data>>PageShift+4; pn++ {
			c.Mem.SetPage(pn, NewPage(), PermRead|PermWrite)
		}
		var pred *predict.Cache
		if i%2 == 1 {
			pred = predict.New(10)
			c.Pred = pred
		}
		start := data + uint64(rng.Intn(2*PageSize))
		if i%3 != 0 {
			start &^= uint64(size - 1)
		}
		count := uint64(rng.Intn(2*PageSize/size + 20))
		v := rng.Uint64()
		c.R[RAX], c.R[RDI], c.R[RCX] = v, start, count
		if exit := c.Run(1000); exit.Reason != ExitSyscall {
			t.Fatalf("exit %v", exit)
		}
		end := start + count*uint64(size)
		if c.R[RDI] != end { // (syscall took RCX)
			t.Fatalf("size %d count %d at %#x: RDI %#x, want %#x", size, count, start, c.R[RDI], end)
		}
		got := make([]byte, 4*PageSize)
		if err := c.Mem.Peek(data, got); err != nil {
			t.Fatal(err)
		}
		for a := uint64(data); a < data+4*PageSize; a++ {
			want := byte(0)
			if a >= start && a < end {
				want = byte(v >> (8 * ((a - start) % uint64(size))))
			}
			if got[a-data] != want {
				t.Fatalf("size %d count %d at %#x: byte at %#x is %#x, want %#x", size, count, start, a, got[a-data], want)
			}
			if pred != nil && start%uint64(size) == 0 && a >= start && a < end && pred.Predict(a, 1) != uint64(want) {
				t.Fatalf("size %d count %d at %#x: the cache predicts %#x at %#x, want %#x", size, count, start, pred.Predict(a, 1), a, want)
			}
		}
	}
}
