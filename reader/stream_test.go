package reader

import "testing"

// TestStreamDropsPassedChunks: a streaming replay re-simulates exactly
// what another does, and the chunks it left, but not the one it started
// in, are out of the chunk cache afterwards.
func TestStreamDropsPassedChunks(t *testing.T) {
	tr := openSmallChunks(t)
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	cp := cps[len(cps)/3]
	if cp.Chunk == 0 || len(tr.chunks)-cp.Chunk < 5 {
		t.Fatalf("checkpoint in chunk %d of %d: the test tests nothing", cp.Chunk, len(tr.chunks))
	}
	ref, err := tr.NewReplayAt(cp)
	if err != nil {
		t.Fatal(err)
	}
	want := states(t, ref)
	ref.Close()
	cached := func(i int) bool {
		tr.cache.mu.Lock()
		defer tr.cache.mu.Unlock()
		return tr.cache.entries[i] != nil
	}
	for i := cp.Chunk; i < len(tr.chunks); i++ {
		if !cached(i) {
			t.Fatalf("chunk %d not cached after a replay that is not streaming", i)
		}
	}
	r, err := tr.NewReplayAt(cp)
	if err != nil {
		t.Fatal(err)
	}
	r.Stream()
	got := states(t, r)
	last := r.ch.index
	r.Close()
	if len(got) != len(want) {
		t.Fatalf("%d instructions streaming, %d not", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("instruction %d: %+v streaming, %+v not", i, got[i], want[i])
		}
	}
	if !cached(cp.Chunk) {
		t.Errorf("the chunk the replay started in (%d) was dropped", cp.Chunk)
	}
	if !cached(last) {
		t.Errorf("the chunk the replay ended in (%d) was dropped", last)
	}
	for i := cp.Chunk + 1; i < last; i++ {
		if cached(i) {
			t.Errorf("chunk %d, passed, still cached", i)
		}
	}
	var bytes int64
	for _, e := range tr.cache.entries {
		bytes += e.ch.bytes
	}
	if bytes != tr.cache.bytes {
		t.Errorf("cache counts %d bytes, its chunks hold %d", tr.cache.bytes, bytes)
	}
}

// TestResumeIntoForgetsReadWindow: a replay resumed into from a
// snapshot taken with reads carried over several read-only chunks
// reads the snapshot's reads, not those of the chunk (or carried reads)
// it had got to since. (This trace is a process tree: ResumeInto makes
// a new Replay; a trace of one program without Process records would
// reuse r, whose read window restorePosition resets.)
func TestResumeIntoForgetsReadWindow(t *testing.T) {
	tr := openSmallChunks(t)
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := tr.NewReplayAt(cps[0])
	if err != nil {
		t.Fatal(err)
	}
	want := states(t, ref)
	ref.Close()
	start := cps[0].Position
	for _, frac := range []uint64{3, 5, 7} {
		mid := start + uint64(len(want))/frac
		r, err := tr.NewReplayAt(cps[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := r.RunTo(mid); err != nil {
			t.Fatal(err)
		}
		s := r.Snapshot()
		if err := r.RunTo(mid + 3000); err != nil {
			t.Fatal(err)
		}
		r2, err := tr.ResumeInto(s, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(r2.carry) < 2 && frac == 5 {
			t.Errorf("resumed with %d carried arrays: the test tests no run of read-only chunks", len(r2.carry))
		}
		got := states(t, r2)
		for i := range got {
			if got[i] != want[mid-start+uint64(i)] {
				t.Fatalf("resumed into at %d, position %d: %+v, want %+v", mid, mid+uint64(i), got[i], want[mid-start+uint64(i)])
			}
		}
		r2.Close()
	}
}
