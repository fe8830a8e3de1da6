package tracefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// TestAppendMemReads: taking the runs of MemRead records in bulk
// (RecordIter.AppendMemReads) gives the reads and the other records that
// Next gives one by one, in the same order, across chunk ends and with
// reads in the last 8 bytes of a chunk (left to Next).
func TestAppendMemReads(t *testing.T) {
	bulkRuns := 0
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var recs []Record
		for range 200 + rng.IntN(3000) {
			if rng.IntN(8) == 0 {
				recs = append(recs, randRecord(rng, allKinds[rng.IntN(len(allKinds))]))
				continue
			}
			size := uint8(1 + rng.IntN(8))
			var delta uint64
			switch rng.IntN(4) {
			case 0:
				delta = uint64(rng.IntN(15))
			case 1:
				delta = 15 + uint64(rng.IntN(3))
			case 2:
				delta = rng.Uint64()
			default:
				delta = uint64(rng.IntN(1 << 20))
			}
			v := rng.Uint64() & (^uint64(0) >> (64 - 8*uint64(size)))
			recs = append(recs, Record{Kind: KindMemRead, MemRead: MemRead{ReadDelta: delta, Value: v, Size: size}})
		}
		opts := Options{ChunkSize: 16 + rng.IntN(4096), NoCompression: rng.IntN(2) == 0}
		data := writeTraceBytes(t, opts, recs)
		r, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := readAll(r)
		if err != nil {
			t.Fatal(err)
		}
		// What a replay keeps of a read: its delta and value.
		type item struct {
			kind         Kind
			delta, value uint64
		}
		var wantItems []item
		for _, rec := range want {
			if rec.Kind == KindMemRead {
				wantItems = append(wantItems, item{kind: KindMemRead, delta: rec.MemRead.ReadDelta, value: rec.MemRead.Value})
			} else {
				wantItems = append(wantItems, item{kind: rec.Kind})
			}
		}
		// readLeft: a read is next that a bulk take could have taken
		// (not within the last bytes of the chunk, left to Next).
		readLeft := func(d *decoder) bool {
			return d.off < len(d.data) && d.data[d.off] >= tagMemRead && len(d.data)-d.off > 9+binary.MaxVarintLen64
		}
		// walk gives every record, taking each run of reads after its
		// first (which Next gives) with take.
		walk := func(take func(it *RecordIter) []ReadLog) []item {
			var got []item
			it := r.RecordsFrom(0)
			for {
				rec, err := it.Next()
				if errors.Is(err, io.EOF) {
					return got
				}
				if err != nil {
					t.Fatal(err)
				}
				if rec.Kind != KindMemRead {
					got = append(got, item{kind: rec.Kind})
					continue
				}
				got = append(got, item{kind: KindMemRead, delta: rec.MemRead.ReadDelta, value: rec.MemRead.Value})
				for _, lr := range take(it) {
					got = append(got, item{kind: KindMemRead, delta: lr.Delta, value: lr.Value})
				}
			}
		}
		check := func(how string, got []item) {
			t.Helper()
			if len(got) != len(wantItems) {
				t.Fatalf("seed %d, %s: %d records, want %d", seed, how, len(got), len(wantItems))
			}
			for i := range got {
				if got[i] != wantItems[i] {
					t.Fatalf("seed %d, %s: record %d is %+v, want %+v", seed, how, i, got[i], wantItems[i])
				}
			}
		}
		check("AppendMemReads", walk(func(it *RecordIter) []ReadLog {
			reads := it.AppendMemReads(make([]ReadLog, 0, 1))
			if readLeft(&it.dec) {
				t.Fatalf("seed %d: AppendMemReads left a read it could take", seed)
			}
			if len(reads) > 0 {
				bulkRuns++
			}
			return reads
		}))
		// FillMemReads into blocks of a few reads: full exactly when a
		// block is full and a read comes next (in this chunk).
		block := 1 + rng.IntN(5)
		check("FillMemReads", walk(func(it *RecordIter) []ReadLog {
			var all []ReadLog
			for full := true; full; {
				var reads []ReadLog
				reads, full = it.FillMemReads(make([]ReadLog, 0, block))
				if len(reads) > block || full && len(reads) < block {
					t.Fatalf("seed %d: FillMemReads took %d reads into a block of %d, full %v", seed, len(reads), block, full)
				}
				if full && (it.dec.off >= len(it.dec.data) || it.dec.data[it.dec.off] < tagMemRead) {
					t.Fatalf("seed %d: FillMemReads full with no read next", seed)
				}
				if len(reads) == block && !full && readLeft(&it.dec) {
					t.Fatalf("seed %d: FillMemReads not full with a read next", seed)
				}
				all = append(all, reads...)
			}
			return all
		}))
	}
	if bulkRuns == 0 {
		t.Fatal("AppendMemReads never took a read: the test tested nothing")
	}
}

// TestCheckpointInChunk: a checkpoint written with CheckpointInChunk
// stays in the chunk it comes in, where Checkpoint would begin a new one.
func TestCheckpointInChunk(t *testing.T) {
	for _, inChunk := range []bool{false, true} {
		var f memFile
		w, err := NewWriter(&f, testHeader(), Options{ChunkSize: 64, MaxChunkSize: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		w.Checkpoint(&Checkpoint{Position: 0, Seq: 1})
		for i := range 100 {
			w.MemRead(uint64(i), uint64(i), 8)
		}
		cp := &Checkpoint{Position: 10, Seq: 2}
		if inChunk {
			w.CheckpointInChunk(cp)
		} else {
			w.Checkpoint(cp)
		}
		w.MemRead(1, 1, 8)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bytes.NewReader(f.Bytes()), int64(len(f.Bytes())))
		if err != nil {
			t.Fatal(err)
		}
		want := 2
		if inChunk {
			want = 1
		}
		if n := len(r.Chunks()); n != want {
			t.Errorf("CheckpointInChunk %v: %d chunks, want %d", inChunk, n, want)
		}
	}
}
