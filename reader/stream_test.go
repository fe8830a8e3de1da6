package reader

import (
	"slices"
	"testing"
	"time"

	"ttd/tracefile"
)

// TestStreamDropsPassedChunks: a streaming replay re-simulates exactly
// what another does, the chunks it left, but not the one it started in,
// are out of the chunk cache afterwards, and their blocks of reads (of
// 16 reads here, a chunk's in several) went to the chunks decoded after
// them; a replay that is not streaming pins every chunk it reads.
func TestStreamDropsPassedChunks(t *testing.T) {
	path := recordLoopChunks(t, 20_000, "60", 512)
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.cache.block = 16
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
	for i := cp.Chunk; i < len(tr.chunks); i++ {
		if !tr.cache.entries[i].use.pinned {
			t.Fatalf("chunk %d not pinned after a replay that is not streaming", i)
		}
	}
	// The streaming replay's own trace: the chunks above are pinned.
	tr, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tr.cache.block = 16 // blocks of few reads, each chunk in several
	cached := func(i int) bool {
		tr.cache.mu.Lock()
		defer tr.cache.mu.Unlock()
		return tr.cache.entries[i] != nil
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
	if len(tr.cache.free) == 0 {
		t.Errorf("no block of reads recycled from the %d chunks passed", last-cp.Chunk-1)
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

// TestStreamsShareRecycledReads: streaming replays running at once over
// the same chunks, each recycling the arrays of the chunks it passed
// (after the other may have taken them), re-simulate what a replay that
// is not streaming does.
func TestStreamsShareRecycledReads(t *testing.T) {
	tr := openSmallChunks(t)
	tr.cache.block = 16
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := tr.NewReplayAt(cps[1])
	if err != nil {
		t.Fatal(err)
	}
	want := states(t, ref)
	ref.Close()
	got := make([][]state, 3)
	done := make(chan int)
	for g := range got {
		go func() {
			defer func() { done <- g }()
			r, err := tr.NewReplayAt(cps[1])
			if err != nil {
				t.Error(err)
				return
			}
			r.Stream()
			got[g] = states(t, r)
			r.Close()
		}()
	}
	for range got {
		<-done
	}
	for g := range got {
		if len(got[g]) != len(want) {
			t.Fatalf("replay %d: %d instructions, want %d", g, len(got[g]), len(want))
		}
		for i := range want {
			if got[g][i] != want[i] {
				t.Fatalf("replay %d, instruction %d: %+v, want %+v", g, i, got[g][i], want[i])
			}
		}
	}
	for _, e := range tr.cache.entries {
		if e.ch.use.holds != 0 {
			t.Errorf("chunk %d still held %d times after every replay closed", e.ch.index, e.ch.use.holds)
		}
	}
}

// TestRecycleOnlyUnread: the cache takes a chunk's blocks of reads
// back only when the chunk is out of the cache and nothing reads or is
// about to read it, and only once; a chunk's array of its own size (a
// small chunk's) is not taken; a chunk decoded next gets the blocks.
func TestRecycleOnlyUnread(t *testing.T) {
	block := func() []logRead { return make([]logRead, 10, readBlock) }
	cases := []struct {
		name string
		use  chunkUse
		want bool
	}{
		{"dropped, unread", chunkUse{dropped: true}, true},
		{"held", chunkUse{dropped: true, holds: 1}, false},
		{"a get about to give it out", chunkUse{dropped: true, waiting: 1}, false},
		{"pinned", chunkUse{dropped: true, pinned: true}, false},
		{"still cached", chunkUse{}, false},
		{"recycled already", chunkUse{dropped: true, recycled: true}, false},
	}
	for _, c := range cases {
		var cc chunkCache
		cc.init(1 << 20)
		u := c.use
		ch := &chunk{reads: [][]logRead{block(), block()}, use: &u}
		cc.recycle(ch)
		if got := len(cc.free) == 2; got != c.want {
			t.Errorf("%s: recycled %v, want %v", c.name, got, c.want)
		}
		cc.recycle(ch)
		if len(cc.free) > 2 {
			t.Errorf("%s: recycled twice", c.name)
		}
	}
	var cc chunkCache
	cc.init(1 << 20)
	small := &chunk{reads: [][]logRead{make([]logRead, 10, 100)}, use: &chunkUse{dropped: true}}
	cc.recycle(small)
	if len(cc.free) != 0 {
		t.Errorf("a small chunk's array of 100 reads was recycled")
	}
	ch := &chunk{reads: [][]logRead{block()}, use: &chunkUse{dropped: true}}
	cc.recycle(ch)
	if b, ok := cc.readBlockOf(); !ok || cap(b) != readBlock || len(b) != 0 || &b[:1][0] != &ch.reads[0][0] {
		t.Errorf("got a block of %d, length %d (recycled %v)", cap(b), len(b), ok)
	}
	if b, ok := cc.readBlockOf(); ok || cap(b) != readBlock {
		t.Errorf("got a block of %d (recycled %v) after the only one was taken", cap(b), ok)
	}
}

// TestRecycleKeepsSome: the cache keeps maxFreeBlocks blocks, and lets
// the others go.
func TestRecycleKeepsSome(t *testing.T) {
	var cc chunkCache
	cc.init(1 << 20)
	bs := make([][]logRead, maxFreeBlocks+3)
	for i := range bs {
		bs[i] = make([]logRead, 1, readBlock)
	}
	cc.recycle(&chunk{reads: bs, use: &chunkUse{dropped: true}})
	if len(cc.free) != maxFreeBlocks {
		t.Fatalf("kept %d blocks of %d, want %d", len(cc.free), len(bs), maxFreeBlocks)
	}
}

// TestReadFill: reads decoded into blocks of a few reads (and into one
// array for a chunk of few records) are the reads decoded alone, in
// order, with every block but the last full; the chunks replay as
// before (TestStreamDropsPassedChunks, with blocks as small).
func TestReadFill(t *testing.T) {
	tr := openSmallChunks(t)
	tr.cache.block = 7
	multi := 0
	for i := range tr.chunks {
		var want []logRead
		it := tr.f.Records(i)
		for {
			r, err := it.Next()
			if err != nil {
				break
			}
			if r.Kind == tracefile.KindMemRead {
				want = append(want, logRead{Delta: r.MemRead.ReadDelta, Value: r.MemRead.Value})
			}
		}
		ch, err := tr.loadChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		var got []logRead
		for k, b := range ch.reads {
			if k < len(ch.reads)-1 && len(b) != tr.cache.block {
				t.Errorf("chunk %d: block %d of %d holds %d reads", i, k, len(ch.reads), len(b))
			}
			got = append(got, b...)
		}
		if len(ch.reads) > 2 {
			multi++
		}
		if !slices.Equal(got, want) || ch.nreads != len(want) {
			t.Fatalf("chunk %d: %d reads in %d blocks (nreads %d), want %d", i, len(got), len(ch.reads), ch.nreads, len(want))
		}
	}
	if multi == 0 {
		t.Fatal("no chunk took more than two blocks: the test tests nothing")
	}
}

// TestCtrlsFitTheirRoom: every chunk of a process tree with frequent
// checkpoints (each restating every process's mappings) decodes its
// control records into the room ctrlsOf gives, without growing it.
func TestCtrlsFitTheirRoom(t *testing.T) {
	tr, err := Open(recordTree(t, 20_000))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	over := 0 // chunks that overflow the header's counts alone
	for i := range tr.chunks {
		ch, err := tr.loadChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		c := &tr.chunks[i]
		if len(ch.ctrls) > c.KeyFrames+c.Checkpoints+c.Syscalls+c.ThreadStarts+16 {
			over++
		}
		if n := ctrlsOf(c); len(ch.ctrls) > n {
			t.Errorf("chunk %d: %d control records, room for %d", i, len(ch.ctrls), n)
		}
	}
	if over == 0 {
		t.Fatalf("no chunk of %d holds more control records than its header counts: the test tests nothing", len(tr.chunks))
	}
}

// TestStopsInDecodesNoFurther: a replay told it stops in chunk i
// decodes chunk i ahead (the next job's start) but not i+1, and still
// runs past i when asked, decoding the chunks as it reaches them; with
// no bound it decodes the chunk after the one it reached.
func TestStopsInDecodesNoFurther(t *testing.T) {
	path := recordLoopChunks(t, 20_000, "60", 512)
	for _, bound := range []bool{true, false} {
		tr, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cps, err := tr.Checkpoints()
		if err != nil {
			t.Fatal(err)
		}
		tr.Close()
		// A fresh trace: Checkpoints decoded every chunk.
		tr, err = Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tr.SetCheckpoints(cps)
		var from, to Checkpoint
		for k := 1; k+1 < len(cps); k++ {
			if cps[k+1].Chunk >= cps[k].Chunk+2 && cps[k+1].Chunk+2 < len(tr.chunks) {
				from, to = cps[k], cps[k+1]
				break
			}
		}
		if to.Chunk == 0 {
			t.Fatalf("no two checkpoints two chunks apart before the last two chunks (%d chunks): the test tests nothing", len(tr.chunks))
		}
		r, err := tr.NewReplayAt(from)
		if err != nil {
			t.Fatal(err)
		}
		r.Stream()
		if bound {
			r.StopsIn(to.Chunk)
		}
		if err := r.RunTo(to.Position); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // a prefetch started would be under way
		tr.cache.mu.Lock()
		after := tr.cache.entries[to.Chunk+1] != nil
		tr.cache.mu.Unlock()
		if bound && after {
			t.Errorf("chunk %d decoded ahead by a replay that stops in %d", to.Chunk+1, to.Chunk)
		}
		if !bound && !after && r.ch.index == to.Chunk {
			t.Errorf("chunk %d not decoded ahead without a bound", to.Chunk+1)
		}
		// Past the bound: the replay goes on, as without one.
		if err := r.RunTo(tr.chunks[to.Chunk+1].LastPosition); err != nil {
			t.Fatal(err)
		}
		if r.ch.index <= to.Chunk {
			t.Errorf("replay stayed in chunk %d past its bound", r.ch.index)
		}
		r.Close()
		tr.Close()
	}
}
