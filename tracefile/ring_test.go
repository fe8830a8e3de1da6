package tracefile

import (
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// TestRing writes a long trace into a ring of a few KiB: the file holds
// the last chunks only, from one that begins with a checkpoint, numbered
// from 0, and the summaries written after the Exit record survive.
func TestRing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.ttd")
	const ringBytes = 4 << 10
	w, err := Create(path, testHeader(), Options{ChunkSize: 256, Ring: ringBytes, NoCompression: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := uint64(0); i < n; i++ {
		w.Checkpoint(&Checkpoint{Position: 100 * i, Seq: i, CurrentTid: 1, Threads: []ThreadState{{Tid: 1, ICount: 100 * i, Regs: make([]byte, 32)}}})
		for k := uint64(0); k < 20; k++ {
			w.MemRead(k, i<<8|k, 8)
		}
		if i == n/2 {
			// A flushed ring is a complete trace already.
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err != nil || r.Truncated() {
				t.Fatalf("the flushed ring: %v (truncated %v)", err, r != nil && r.Truncated())
			}
			r.Close()
		}
	}
	w.Exit(&Exit{Kind: ExitExited, Position: 100 * n})
	w.AccessSummary(&AccessSummary{Start: 100 * (n - 1), End: 100 * n})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.RingDropped() == 0 {
		t.Fatal("nothing was dropped: the test checks nothing")
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Truncated() {
		t.Fatalf("truncated: %v", r.TailError())
	}
	cs := r.Chunks()
	var size int64
	for _, c := range cs {
		if !c.HoldsSummaries() {
			size += c.Size
		}
	}
	if size > ringBytes || !cs[0].BeginsWithCheckpoint || cs[0].FirstPosition == 0 {
		t.Fatalf("window of %d bytes (ring %d), chunk 0 begins with a checkpoint: %v at %d", size, ringBytes, cs[0].BeginsWithCheckpoint, cs[0].FirstPosition)
	}
	// The records are the last ones written, in order.
	it := r.RecordsFrom(0)
	next := cs[0].FirstPosition
	for {
		rec, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == KindCheckpoint {
			if rec.Checkpoint.Position != next {
				t.Fatalf("checkpoint at %d, want %d", rec.Checkpoint.Position, next)
			}
			next += 100
		}
	}
	if next != 100*n {
		t.Fatalf("the window ends before the last checkpoint (%d)", next)
	}
	if sums, err := r.AccessSummaries(); err != nil || len(sums) != 1 {
		t.Fatalf("summaries: %v %v", sums, err)
	}
	if !r.Summary().HasExit || r.Summary().Exit.Position != 100*n {
		t.Fatalf("exit: %+v", r.Summary())
	}
}
