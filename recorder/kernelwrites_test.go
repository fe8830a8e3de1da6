package recorder

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"ttd/predict"
	"ttd/tracefile"
)

// TestKernelWrites: the runs kernelWrites logs and the spans it leaves to
// the cache give back every byte written, leave the cache as filling all
// of them would, and leave out long runs the cache held; overlapping
// writes are logged whole.
func TestKernelWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := &Recorder{}
	for i := 0; i < 500; i++ {
		tr := &threadRec{cache: predict.New(8)}
		want := predict.New(8)
		// The cache holds the memory of an earlier write of the same
		// place: the new bytes differ from it here and there.
		base := uint64(0x7000 + rng.IntN(64))
		old := make([]byte, 1+rng.IntN(900))
		for k := range old {
			old[k] = byte(rng.Uint32())
		}
		tr.cache.Fill(base, old)
		want.Fill(base, old)
		r.ranges = r.ranges[:0]
		var all [][]byte
		for off := 0; off < len(old); {
			n := min(len(old)-off, 1+rng.IntN(400))
			b := append([]byte(nil), old[off:off+n]...)
			for range rng.IntN(4) {
				b[rng.IntN(n)] ^= 0x5a
			}
			r.ranges = append(r.ranges, tracefile.MemRange{Addr: base + uint64(off), Bytes: b})
			all = append(all, b)
			off += n + rng.IntN(20)
		}
		for _, w := range r.ranges {
			want.Fill(w.Addr, w.Bytes)
		}
		before := predict.New(8)
		before.Thaw(tr.cache.Freeze(nil))
		lit, pred := r.kernelWrites(tr)
		// Every written byte, from the record or the cache before it.
		got := map[uint64]byte{}
		for _, p := range pred {
			if p.Len < minPredicted {
				t.Fatalf("a predicted span of %d bytes", p.Len)
			}
			for a := p.Addr; a < p.Addr+p.Len; a++ {
				got[a] = byte(before.Predict(a, 1))
			}
		}
		for _, w := range lit {
			for k, b := range w.Bytes {
				if _, dup := got[w.Addr+uint64(k)]; dup {
					t.Fatalf("byte %#x both logged and predicted", w.Addr+uint64(k))
				}
				got[w.Addr+uint64(k)] = b
			}
		}
		for j, w := range r.ranges {
			for k := range w.Bytes {
				if b, ok := got[w.Addr+uint64(k)]; !ok || b != all[j][k] {
					t.Fatalf("case %d: byte %#x: %#x (%v), written %#x", i, w.Addr+uint64(k), b, ok, all[j][k])
				}
			}
		}
		for a := base &^ 7; a < base+uint64(len(old))+64; a += 8 {
			if tr.cache.Predict(a, 8) != want.Predict(a, 8) {
				t.Fatalf("case %d: cache word %#x differs", i, a)
			}
		}
		var logged int
		for _, w := range lit {
			logged += len(w.Bytes)
		}
		if len(old) > 400 && logged*2 > len(old) {
			t.Errorf("case %d: %d of %d bytes logged for a few changes", i, logged, len(old))
		}
	}
	// Overlapping writes: all logged, in order.
	tr := &threadRec{cache: predict.New(8)}
	r.ranges = []tracefile.MemRange{{Addr: 0x100, Bytes: make([]byte, 64)}, {Addr: 0x120, Bytes: bytes.Repeat([]byte{1}, 64)}}
	lit, pred := r.kernelWrites(tr)
	if len(lit) != 2 || len(pred) != 0 || tr.cache.Predict(0x120, 8) != 0x0101010101010101 {
		t.Errorf("overlapping writes: %d ranges, %d spans", len(lit), len(pred))
	}
}
