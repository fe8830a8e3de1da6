package reader

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ttd/emu"
	"ttd/recorder"
	"ttd/x86"
)

// recordLoop builds ../ttd/testdata/loop.c and records it with a
// checkpoint every `every` instructions.
func recordLoop(t testing.TB, every uint64, rounds string) string {
	t.Helper()
	return recordLoopChunks(t, every, rounds, 0)
}

// recordLoopChunks is recordLoop with chunks of about chunkSize bytes (0:
// the default).
func recordLoopChunks(t testing.TB, every uint64, rounds string, chunkSize int) string {
	t.Helper()
	path, _ := recordLoopWith(t, rounds, recorder.Options{CheckpointEvery: every, ChunkSize: chunkSize})
	return path
}

// recordLoopWith records loop.c with opts (its Path set here) and
// returns the trace's path and the recording's statistics.
func recordLoopWith(t testing.TB, rounds string, opts recorder.Options) (string, recorder.Stats) {
	return recordCWith(t, "../ttd/testdata/loop.c", opts, rounds)
}

// recordCWith builds the C program src (gcc, -O1, -pthread) and records
// it with args and opts (its Path set here); it returns the trace's
// path and the recording's statistics.
func recordCWith(t testing.TB, src string, opts recorder.Options, args ...string) (string, recorder.Stats) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "prog")
	if b, err := exec.Command("gcc", "-O1", "-pthread", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	opts.Path = filepath.Join(dir, "t.ttd")
	_, st, err := recorder.Record(emu.Config{Path: exe, Args: append([]string{exe}, args...), Stdout: null, Stderr: null}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return opts.Path, st
}

type state struct {
	pc     uint64
	r      [16]uint64
	rflags uint64
}

// states re-simulates r to its end and returns the state before every
// instruction, by position, starting at r's position.
func states(t testing.TB, r *Replay) []state {
	var out []state
	start := r.Position()
	r.Hook = func(r *Replay, c *x86.CPU, in *x86.Inst) {
		if p := r.InstPosition(c); p != start+uint64(len(out)) {
			t.Fatalf("instruction at %d after %d states from %d", p, len(out), start)
		}
		out = append(out, state{in.PC, c.R, c.Rflags()})
	}
	if err := r.RunTo(^uint64(0)); err != ErrEnd {
		t.Fatalf("re-simulation: %v", err)
	}
	return out
}

// fromStart opens the trace at path (closed with the test), and
// returns the states of its re-simulation from the start and its
// checkpoints, of which it has 5 or more.
func fromStart(t *testing.T, path string) (*Trace, []state, []Checkpoint) {
	t.Helper()
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	r0, _ := tr.NewReplay(0)
	all := states(t, r0)
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) < 5 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	return tr, all, cps
}

// TestCheckpointsAndSnapshots starts re-simulation at every checkpoint
// (most of them inside chunks) and at snapshots, and checks that each
// continues exactly as the re-simulation from the start.
func TestCheckpointsAndSnapshots(t *testing.T) {
	tr, all, cps := fromStart(t, recordLoop(t, 50_000, "40"))
	inChunk := 0
	for _, cp := range cps {
		// (A checkpoint from the index is found in its chunk.)
		if resolveCtrls(t, tr, []Checkpoint{cp})[0].Ctrl > 0 {
			inChunk++
		}
		r, err := tr.NewReplayAt(cp)
		if err != nil {
			t.Fatalf("checkpoint %+v: %v", cp, err)
		}
		if r.Position() != cp.Position {
			t.Fatalf("replay at checkpoint %+v is at %d", cp, r.Position())
		}
		// Run a little, snapshot, and compare both continuations.
		mid := cp.Position + 12_345
		if mid < uint64(len(all)) {
			if err := r.RunTo(mid); err != nil {
				t.Fatal(err)
			}
			snap := r.Snapshot()
			got := states(t, r)
			r2, err := tr.Resume(snap)
			if err != nil {
				t.Fatal(err)
			}
			again := states(t, r2)
			// Resumed in place of the replay that ran to the end.
			r3, err := tr.ResumeInto(snap, r)
			if err != nil {
				t.Fatal(err)
			}
			inPlace := states(t, r3)
			if len(got) != len(again) || len(got) != len(inPlace) {
				t.Fatalf("from %d: %d, %d and %d instructions", mid, len(got), len(again), len(inPlace))
			}
			for i := range got {
				if got[i] != all[mid+uint64(i)] || again[i] != got[i] || inPlace[i] != got[i] {
					t.Fatalf("from checkpoint %d, position %d: %+v, resumed %+v, in place %+v, from the start %+v",
						cp.Position, mid+uint64(i), got[i], again[i], inPlace[i], all[mid+uint64(i)])
				}
			}
		}
	}
	if inChunk == 0 {
		t.Fatal("no checkpoint inside a chunk was tested")
	}
}

// TestChunksCutBetweenEvents records with chunks so small that most are
// cut between two events, so that logged reads are consumed in the chunk
// after the one that holds them, and checks that re-simulation, from the
// start and resumed from snapshots, is the same as with whole chunks.
func TestChunksCutBetweenEvents(t *testing.T) {
	// The states the recording went through are the reference (two
	// recordings differ: rdtsc).
	var want []state
	recorder.DebugInst = func(pos uint64, c *x86.CPU, in *x86.Inst) {
		if pos != uint64(len(want)) {
			t.Fatalf("recorded instruction at %d after %d", pos, len(want))
		}
		want = append(want, state{in.PC, c.R, c.Rflags()})
	}
	cut := recordLoopChunks(t, 0, "20", 512)
	recorder.DebugInst = nil
	tc, err := Open(cut)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if len(tc.chunks) < 10 {
		t.Fatalf("%d chunks: the test tests nothing", len(tc.chunks))
	}
	rc, _ := tc.NewReplay(0)
	got := states(t, rc)
	if len(got) != len(want) {
		t.Fatalf("%d instructions re-simulated, %d recorded", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("position %d: %+v re-simulated, %+v recorded", i, got[i], want[i])
		}
	}
	for _, mid := range []uint64{1000, 33_333, uint64(len(want)) / 2, uint64(len(want)) - 100} {
		r, _ := tc.NewReplay(0)
		if err := r.RunTo(mid); err != nil {
			t.Fatal(err)
		}
		r2, err := tc.Resume(r.Snapshot())
		if err != nil {
			t.Fatal(err)
		}
		again := states(t, r2)
		for i := range again {
			if again[i] != want[mid+uint64(i)] {
				t.Fatalf("resumed at %d, position %d: %+v, want %+v", mid, mid+uint64(i), again[i], want[mid+uint64(i)])
			}
		}
	}
}

// TestTrackingKnowsAccessedBytes checks that tracking marks exactly the
// bytes the Access callback reports, with their values.
func TestTrackingKnowsAccessedBytes(t *testing.T) {
	path := recordLoop(t, 1_000_000, "5")
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, _ := tr.NewReplay(0)
	r.RunTo(0)
	r.Track()
	seen := map[uint64]byte{}
	r.Access = func(a *Access) {
		for i := 0; i < a.Size; i++ {
			seen[a.Addr+uint64(i)] = byte(a.Value >> (8 * i))
		}
	}
	if err := r.RunTo(r.t.End() / 4); err != nil {
		t.Fatal(err)
	}
	// A snapshot carries the tracking window: resumed, it learns the
	// same as the original.
	snap := r.Snapshot()
	if err := r.RunTo(r.t.End() / 2); err != nil {
		t.Fatal(err)
	}
	r2, err := tr.Resume(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.RunTo(r.t.End() / 2); err != nil {
		t.Fatal(err)
	}
	d1, d2 := r.track.cut(r.as.mem, r.pos), r2.Cut()
	if len(d1.Pages) != len(d2.Pages) || d1.Start != d2.Start {
		t.Fatalf("resumed window: %d pages from %d, original %d from %d", len(d2.Pages), d2.Start, len(d1.Pages), d1.Start)
	}
	for i := range d1.Pages {
		a, b := &d1.Pages[i], &d2.Pages[i]
		if a.PN != b.PN || a.Known != b.Known || a.Read != b.Read || a.Written != b.Written {
			t.Fatalf("page %#x differs after resuming", a.PN)
		}
		for j := range a.Known {
			for k := 0; k < 64; k++ {
				if a.Known[j]&(1<<k) != 0 && a.Data[j*64+k] != b.Data[j*64+k] {
					t.Fatalf("byte %#x differs after resuming", a.PN<<x86.PageShift+uint64(j*64+k))
				}
			}
		}
	}
	// The original goes on from its own state: its window restarted at
	// the cut, so compare from a fresh one.
	r, _ = tr.NewReplay(0)
	r.RunTo(0)
	r.Track()
	r.Access = func(a *Access) {
		for i := 0; i < a.Size; i++ {
			seen[a.Addr+uint64(i)] = byte(a.Value >> (8 * i))
		}
	}
	if err := r.RunTo(r.t.End() / 2); err != nil {
		t.Fatal(err)
	}
	n := 0
	gone := map[uint64]bool{}
	for addr, v := range seen {
		if r.track.wasReset(addr >> x86.PageShift) {
			// Unmapped after the access (ld.so at x86-64-v2 frees
			// the pages of its glibc-hwcaps search): not known, rightly.
			gone[addr] = true
			continue
		}
		var b [1]byte
		have := []bool{false}
		r.Known(addr, b[:], have)
		if !have[0] || b[0] != v {
			t.Fatalf("byte %#x: known %v value %#x, accessed with %#x", addr, have[0], b[0], v)
		}
		n++
	}
	d := r.Cut()
	if d.Start != 0 || d.End != r.Position() || len(d.Pages) == 0 {
		t.Fatalf("delta %d..%d with %d pages", d.Start, d.End, len(d.Pages))
	}
	for addr, v := range seen {
		if gone[addr] {
			continue
		}
		p := d.Page(addr >> x86.PageShift)
		off := addr & (x86.PageSize - 1)
		if p == nil || p.Known[off>>6]&(1<<(off&63)) == 0 || p.Data[off] != v {
			t.Fatalf("delta lacks byte %#x", addr)
		}
	}
	t.Logf("%d bytes accessed, %d pages", n, len(d.Pages))
}

// BenchmarkReplay re-simulates a recorded loop from its start. Its
// allocations are the set-up of each replay (prediction cache, pages,
// decoded blocks), not per instruction: see BenchmarkMemRead.
func BenchmarkReplay(b *testing.B) {
	path := recordLoop(b, 0, "400")
	tr, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	b.ResetTimer()
	var n uint64
	for i := 0; i < b.N; i++ {
		r, _ := tr.NewReplay(0)
		if err := r.RunTo(^uint64(0)); err != ErrEnd {
			b.Fatal(err)
		}
		n = r.Position()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minstr/s")
}

// BenchmarkMemRead is the replay's read hook alone: no allocation.
func BenchmarkMemRead(b *testing.B) {
	path := recordLoop(b, 0, "1")
	tr, _ := Open(path)
	defer tr.Close()
	r, _ := tr.NewReplay(0)
	r.RunTo(1000)
	_, c := r.Current()
	r.nextAt = 0
	b.ReportAllocs()
	b.ResetTimer()
	var s uint64
	for i := 0; i < b.N; i++ {
		s += r.MemRead(c, 0x1000+uint64(i&0xff)*8, 8, 0)
	}
	_ = s
}
