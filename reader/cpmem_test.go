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
