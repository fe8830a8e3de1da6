package reader

import (
	"fmt"
	"runtime"
	"testing"

	"ttd/tracefile"
)

// TestNextPositionAfterHeaders: the headers give the next control
// record's position only across chunks that hold nothing but reads and
// code, up to one that begins with a checkpoint; a chunk with a record
// that carries a position or follows one, a chunk that ends with a
// control record, or no checkpoint ahead leave it to decoding.
func TestNextPositionAfterHeaders(t *testing.T) {
	tr := openSmallChunks(t)
	reads := tracefile.ChunkInfo{FirstPosition: 100, Records: 500}
	cp := tracefile.ChunkInfo{FirstPosition: 300, BeginsWithCheckpoint: true}
	with := func(f func(c *tracefile.ChunkInfo)) tracefile.ChunkInfo {
		c := reads
		f(&c)
		return c
	}
	cases := []struct {
		name   string
		chunks []tracefile.ChunkInfo
		ends   bool // chunk 0 ends with a control record
		pos    uint64
		ok     bool
	}{
		{"checkpoint next", []tracefile.ChunkInfo{reads, cp}, false, 300, true},
		{"reads then checkpoint", []tracefile.ChunkInfo{reads, reads, reads, cp}, false, 300, true},
		{"ends with a control record", []tracefile.ChunkInfo{reads, cp}, true, 0, false},
		{"key frame on the way", []tracefile.ChunkInfo{reads, with(func(c *tracefile.ChunkInfo) { c.KeyFrames = 1 }), cp}, false, 0, false},
		{"syscall on the way", []tracefile.ChunkInfo{reads, with(func(c *tracefile.ChunkInfo) { c.Syscalls = 1 }), cp}, false, 0, false},
		{"thread start on the way", []tracefile.ChunkInfo{reads, with(func(c *tracefile.ChunkInfo) { c.ThreadStarts = 1 }), cp}, false, 0, false},
		{"checkpoint inside a chunk", []tracefile.ChunkInfo{reads, with(func(c *tracefile.ChunkInfo) { c.Checkpoints = 1 }), cp}, false, 0, false},
		{"exit on the way", []tracefile.ChunkInfo{reads, with(func(c *tracefile.ChunkInfo) { c.HasExit = true }), cp}, false, 0, false},
		{"no checkpoint ahead", []tracefile.ChunkInfo{reads, reads, reads}, false, 0, false},
		{"last chunk", []tracefile.ChunkInfo{reads}, false, 0, false},
	}
	saved := tr.chunks
	defer func() { tr.chunks = saved }()
	for _, c := range cases {
		tr.chunks = c.chunks
		pos, ok := tr.nextPositionAfter(&chunk{index: 0, endsAtCtrl: c.ends})
		if pos != c.pos || ok != c.ok {
			t.Errorf("%s: %d, %v; want %d, %v", c.name, pos, ok, c.pos, c.ok)
		}
	}
}

// TestRunToStopsBeforeChunksOfReads records with chunks so small that
// the reads logged after a checkpoint (the prediction caches flushed)
// fill chunks with no other record, and checks that a re-simulation
// started at such a checkpoint, or run to it, stays in its chunk, and
// that every segment sees the same events, at the same positions, as
// when decoding finds where the next control record is.
func TestRunToStopsBeforeChunksOfReads(t *testing.T) {
	tr := openSmallChunks(t)
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	// segmentEvents runs one re-simulation over every segment and
	// lists each one's events, and where a fresh start at each
	// checkpoint stays.
	segmentEvents := func() ([]string, []int) {
		var evs []string
		r, err := tr.NewReplayAt(cps[0])
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		r.OnEvent = func(ev *Event) {
			evs[k] += fmt.Sprintf(" %v@%d", ev.Kind, ev.Position)
		}
		for k = range cps {
			evs = append(evs, "")
			to := tr.End()
			if k+1 < len(cps) {
				to = cps[k+1].Position
			}
			if err := r.RunTo(to); err != nil && err != ErrEnd {
				t.Fatal(err)
			}
		}
		var stays []int
		for _, cp := range cps {
			r, err := tr.NewReplayAt(cp)
			if err != nil {
				t.Fatal(err)
			}
			stays = append(stays, r.ch.index-cp.Chunk)
		}
		return evs, stays
	}
	got, stays := segmentEvents()
	decodeToLookAhead = true
	want, _ := segmentEvents()
	decodeToLookAhead = false
	tested := 0
	for k, cp := range cps {
		if got[k] != want[k] {
			t.Errorf("segment %d: events%s; decoding ahead:%s", k, got[k], want[k])
		}
		ch, err := tr.chunk(cp.Chunk)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tr.nextPositionAfter(ch); ok && cp.Chunk+1 < len(tr.chunks) && !tr.chunks[cp.Chunk+1].BeginsWithCheckpoint {
			tested++
			if stays[k] != 0 {
				t.Errorf("a re-simulation started at checkpoint %d (chunk %d) went %d chunks on", k, cp.Chunk, stays[k])
			}
		}
	}
	if tested == 0 {
		t.Fatalf("no checkpoint is followed by chunks of reads only (%d checkpoints, %d chunks): the test tests nothing", len(cps), len(tr.chunks))
	}
	t.Logf("%d of %d checkpoints followed by chunks of reads only", tested, len(cps))
}

// TestScanKeepsTheFirstChunks: after a scan of every event from the
// start through a cache that holds a third of the decoded chunks, the
// chunks kept are the first ones (a re-simulation from the start comes
// next), and a re-simulation's own use of a chunk counts as more recent
// than the scan's.
func TestScanKeepsTheFirstChunks(t *testing.T) {
	tr := openSmallChunks(t)
	var total int64
	for i := range tr.chunks {
		ch, err := tr.loadChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		total += ch.bytes
	}
	tr.SetChunkCache(total / 3)
	if err := tr.ScanEvents(Checkpoint{}, func(*Event) bool { return true }); err != nil {
		t.Fatal(err)
	}
	cached := func() map[int]bool {
		tr.cache.mu.Lock()
		defer tr.cache.mu.Unlock()
		m := map[int]bool{}
		for i, e := range tr.cache.entries {
			if e.ch != nil {
				m[i] = true
			}
		}
		return m
	}
	in := cached()
	if len(in) >= len(tr.chunks)/2 {
		t.Fatalf("%d of %d chunks cached with room for a third: the test tests nothing", len(in), len(tr.chunks))
	}
	for i := 0; i < len(in)/2; i++ {
		if !in[i] {
			t.Errorf("chunk %d is not cached after the scan (cached: %v)", i, in)
		}
	}
	// A re-simulation from the start uses chunk 0 again: it outlives
	// the scan's chunks when three more are decoded.
	if _, err := tr.chunkUncached(0); err != nil {
		t.Fatal(err)
	}
	for i := len(in); i < len(in)+3; i++ {
		if _, err := tr.chunkUncached(i); err != nil {
			t.Fatal(err)
		}
	}
	if !cached()[0] {
		t.Errorf("chunk 0, used after the scan, was evicted before the scan's chunks")
	}
}

// TestPrefetchAhead: a scan at chunk i has chunk i+1 decoding (t.chunk)
// and prefetchAhead starts the ones after it, up to one per core.
func TestPrefetchAhead(t *testing.T) {
	tr := openSmallChunks(t)
	procs := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(procs)
	tr.prefetchAhead(10)
	tr.cache.mu.Lock()
	defer tr.cache.mu.Unlock()
	for j := 9; j <= 16; j++ {
		if want := j >= 12 && j <= 14; (tr.cache.entries[j] != nil) != want {
			t.Errorf("chunk %d decoding: %v, want %v", j, !want, want)
		}
	}
}

// openSmallChunks records loop.c with a checkpoint every 20k
// instructions and chunks of 512 bytes (2 KB at most): the reads logged
// after each checkpoint fill chunks of their own. It is closed when the
// test ends.
func openSmallChunks(t *testing.T) *Trace {
	t.Helper()
	tr, err := Open(recordLoopChunks(t, 20_000, "60", 512))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}
