package reader

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"ttd/recorder"
	"ttd/tracefile"
	"ttd/x86"
)

// memHashes returns the hash of every address space's memory of r by
// pid (the only one under 0), its restored pages materialised first.
func memHashes(r *Replay) map[uint32]uint64 {
	out := map[uint32]uint64{}
	for _, p := range r.procs {
		if p.exited || p.shares != nil || p.as == nil {
			continue
		}
		p.as.materialize()
		out[r.spaceKey(p.pid)] = x86.HashMemory(p.as.mem)
	}
	return out
}

// recordReplayable records loop.c with no reads logged and checkpoints
// every 100,000 instructions, and opens it.
func recordReplayable(t *testing.T) (*Trace, string) {
	t.Helper()
	path, st := recordLoopWith(t, "3000", recorder.Options{CheckpointEvery: 100_000, Replayable: true})
	if st.ImageBytes == 0 || st.LoggedReads != 0 {
		t.Fatalf("images %d bytes, %d reads logged: want images and no reads", st.ImageBytes, st.LoggedReads)
	}
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	if !tr.Sequential() {
		t.Fatal("the trace does not say it logs no reads")
	}
	return tr, path
}

// TestReplayableCheckpointMemory records loop.c with no reads logged
// (recorder.Options.Replayable), builds its checkpoint memory on demand,
// and checks that a replay started at each checkpoint has, before it
// runs an instruction, exactly the memory the replay from the start had
// there (a dirty page the index pass dropped, or a page version taken
// from the checkpoint before or after, changes a hash), then verifies to
// the next checkpoint; and that a snapshot resumes with its memory.
func TestReplayableCheckpointMemory(t *testing.T) {
	tr, path := recordReplayable(t)
	if tr.Indexed() {
		t.Fatal("a trace without its checkpoint memory file says it is indexed")
	}
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) < 4 {
		t.Fatalf("%d checkpoints, want several", len(cps))
	}
	// The replay from the start's memory at each checkpoint, with every
	// record at its position applied, as NewReplayAt leaves a replay
	// (the records of no position after a checkpoint, such as the
	// images of file pages touched later in the interval, are applied
	// when reached).
	seq, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	for k, cp := range cps[1:] {
		if err := seq.RunTo(cp.Position); err != nil && err != ErrEnd {
			t.Fatalf("replay from the start to checkpoint %d: %v", k+1, err)
		}
		want := memHashes(seq)
		r, err := tr.NewReplayAt(cp)
		if err != nil {
			t.Fatalf("replay from checkpoint %d (position %d): %v", k+1, cp.Position, err)
		}
		got := memHashes(r)
		if len(got) != len(want) || len(want) == 0 && k+2 < len(cps) {
			t.Fatalf("checkpoint %d: %d address spaces, the replay from the start had %d", k+1, len(got), len(want))
		}
		for sp, h := range want {
			if got[sp] != h {
				t.Errorf("checkpoint %d (position %d): memory of space %d hashes %#x, the replay from the start's %#x", k+1, cp.Position, sp, got[sp], h)
			}
		}
		r.Close()
	}
	if _, err := os.Stat(tracefile.PagesPath(path)); err != nil {
		t.Fatalf("the checkpoint memory file was not built: %v", err)
	}
	if n, err := tr.VerifySegments(2); err != nil || n != len(cps) {
		t.Fatalf("verified %d of %d intervals: %v", n, len(cps), err)
	}
	// A snapshot in the middle of an interval resumes with its memory:
	// twice, each to the interval's end, verifying on the way.
	k := len(cps) / 2
	r, err := tr.NewReplayAt(cps[k])
	if err != nil {
		t.Fatal(err)
	}
	mid := (cps[k].Position + cps[k+1].Position) / 2
	if err := r.RunTo(mid); err != nil {
		t.Fatal(err)
	}
	s := r.Snapshot()
	at := memHashes(r)
	for i := 0; i < 2; i++ {
		q, err := tr.ResumeInto(s, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := memHashes(q); got[0] != at[0] {
			t.Errorf("resume %d: memory hashes %#x, %#x at the snapshot", i, got[0], at[0])
		}
		q.Verify = true
		if err := q.RunTo(cps[k+1].Position + 1); err != nil {
			t.Fatalf("resume %d: %v", i, err)
		}
		if q.Checkpoints != 2 {
			t.Errorf("resume %d: %d checkpoints counted at the next one, want 2 (the one it started from, verified against this one)", i, q.Checkpoints)
		}
		r = q
	}
}

// TestReplayableCheckpointMemoryRefused checks that a checkpoint memory
// file that does not fit its trace is an error, never a panic or a
// replay with the wrong memory: one cut short anywhere, one with a byte
// changed in its pages, one made for another trace.
func TestReplayableCheckpointMemoryRefused(t *testing.T) {
	tr, path := recordReplayable(t)
	pages := tracefile.PagesPath(path)
	if _, _, err := tr.BuildPagesFile(pages, nil); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(pages)
	if err != nil {
		t.Fatal(err)
	}
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	// (The last checkpoint is at the exit.)
	last := cps[len(cps)-2]
	startAt := func(b []byte) error {
		if err := os.WriteFile(pages, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t2, err := Open(path)
		if err != nil {
			return err
		}
		defer t2.Close()
		r, err := t2.NewReplayAt(last)
		if err != nil {
			return err
		}
		defer r.Close()
		memHashes(r)
		return r.RunTo(^uint64(0))
	}
	if err := startAt(good); err != ErrEnd {
		t.Fatalf("the good file: %v", err)
	}
	for _, n := range []int{0, 10, 60, len(good) / 2, len(good) - 33, len(good) - 1} {
		err := startAt(good[:n])
		var fe *tracefile.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("cut to %d of %d bytes: %v, want a FormatError", n, len(good), err)
		}
	}
	// A byte of the first frame (the pages of the first checkpoint,
	// which every start needs).
	bad := append([]byte(nil), good...)
	bad[100] ^= 0x40
	if err := startAt(bad); err == nil || err == ErrEnd {
		t.Errorf("a changed byte in the pages: %v, want an error", err)
	}
	// Another trace's.
	other, _ := recordReplayable(t)
	o := filepath.Join(t.TempDir(), "o.pages")
	if _, _, err := other.BuildPagesFile(o, nil); err != nil {
		t.Fatal(err)
	}
	ob, _ := os.ReadFile(o)
	if err := startAt(ob); !errors.Is(err, tracefile.ErrStale) {
		t.Errorf("another trace's file: %v, want ErrStale", err)
	}
}

// TestReplayableCheckpointMemoryFork records forkread.c, whose child
// reads pages its parent filled before the checkpoints it then spun
// past: in a replay from one of those checkpoints the parent never
// touched them, so the child must get them from the parent's restored
// pages (addrSpace.fork). Every interval verifies, and the child's
// final registers, with what it summed, are compared when it ends.
func TestReplayableCheckpointMemoryFork(t *testing.T) {
	path, _ := recordCWith(t, "testdata/forkread.c", recorder.Options{CheckpointEvery: 100_000, Replayable: true})
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if !tr.Tree() {
		t.Fatal("the recording is not a process tree")
	}
	if n, err := tr.VerifySegments(2); err != nil || n < 4 {
		t.Fatalf("verified %d intervals: %v", n, err)
	}
}

// TestPrefetchRestore: the frames PrefetchRestore decodes ahead for a
// checkpoint are exactly those its replay restores (the replay, its
// pages all materialised, decompresses none itself and takes every
// one), the memory is the one a replay without it restores, and once a
// replay started there a prefetch does nothing.
func TestPrefetchRestore(t *testing.T) {
	_, path := recordReplayable(t)
	reopen := func() (*Trace, []Checkpoint) {
		tr, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		if _, err := tr.checkpointMemory(); err != nil { // built once, by the first
			t.Fatal(err)
		}
		cps, err := tr.Checkpoints()
		if err != nil {
			t.Fatal(err)
		}
		return tr, cps
	}
	tr, cps := reopen()
	if tr.cpm.opened != nil {
		t.Fatal("a checkpoint memory built after Open counts as opened")
	}
	tr.PrefetchRestore(cps[len(cps)/2])
	if len(tr.cpm.ahead.frames) != 0 {
		t.Fatal("prefetched with no checkpoint memory file at Open")
	}
	for _, k := range []int{1, len(cps) / 2, len(cps) - 2} { // (at the last, the process is gone)
		plain, _ := reopen()
		r, err := plain.NewReplayAt(cps[k])
		if err != nil {
			t.Fatal(err)
		}
		want := memHashes(r)
		r.Close()

		tr, _ := reopen()
		tr.PrefetchRestore(cps[0]) // the start: nothing to restore
		if n := len(tr.cpm.ahead.frames); n != 0 {
			t.Fatalf("checkpoint 0: %d frames decoded ahead", n)
		}
		tr.PrefetchRestore(cps[k])
		ahead := len(tr.cpm.ahead.frames)
		if ahead == 0 {
			t.Fatalf("checkpoint %d: no frame decoded ahead", k)
		}
		decodes := tr.cpm.pages.Decodes()
		r, err = tr.NewReplayAt(cps[k])
		if err != nil {
			t.Fatal(err)
		}
		got := memHashes(r)
		if len(got) != len(want) || got[0] != want[0] {
			t.Errorf("checkpoint %d: memory %v after a prefetch, %v without", k, got, want)
		}
		if d := tr.cpm.pages.Decodes() - decodes; d != 0 {
			t.Errorf("checkpoint %d: the replay decompressed %d frames of its own (%d decoded ahead)", k, d, ahead)
		}
		if n := len(tr.cpm.ahead.frames); n != 0 {
			t.Errorf("checkpoint %d: %d of %d frames decoded ahead not taken", k, n, ahead)
		}
		r.Close()
		tr.PrefetchRestore(cps[k])
		if n := len(tr.cpm.ahead.frames); n != 0 {
			t.Errorf("checkpoint %d: a prefetch after its replay started decoded %d frames", k, n)
		}
	}
}
