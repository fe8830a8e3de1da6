package reader

import (
	"errors"
	"testing"

	"ttd/recorder"
)

// TestReplayableSequential records loop.c with no reads logged
// (recorder.Options.Replayable) and checks that a replay from the start
// verifies to the end, and that every other start — a later checkpoint,
// the checkpoint at position 0 that follows the first memory images, a
// snapshot — is refused with ErrSequential rather than run with the
// wrong memory.
func TestReplayableSequential(t *testing.T) {
	path, st := recordLoopWith(t, "3000", recorder.Options{CheckpointEvery: 100_000, Replayable: true})
	if st.ImageBytes == 0 || st.LoggedReads != 0 {
		t.Fatalf("images %d bytes, %d reads logged: want images and no reads", st.ImageBytes, st.LoggedReads)
	}
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if !tr.Sequential() {
		t.Fatal("the trace does not say it logs no reads")
	}
	r, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	r.Verify = true
	if err := r.RunTo(tr.End() / 2); err != nil {
		t.Fatal(err)
	}
	if s := r.Snapshot(); s != nil {
		if _, err := tr.Resume(s); !errors.Is(err, ErrSequential) {
			t.Errorf("resuming a snapshot: %v, want ErrSequential", err)
		}
	}
	if err := r.RunTo(^uint64(0)); err != ErrEnd {
		t.Fatalf("replay from the start: %v", err)
	}
	if r.Checkpoints < 3 {
		t.Fatalf("verified %d checkpoints, want several", r.Checkpoints)
	}
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) < 3 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	// The checkpoint record at position 0, after the memory images.
	zero := Checkpoint{Position: 0, Chunk: 0, Ctrl: CtrlUnknown}
	for k, cp := range append([]Checkpoint{zero}, cps[1:]...) {
		if _, err := tr.NewReplayAt(cp); !errors.Is(err, ErrSequential) {
			t.Errorf("replay from checkpoint %d (position %d): %v, want ErrSequential", k, cp.Position, err)
		}
	}
	if _, err := tr.NewReplayAt(cps[0]); err != nil {
		t.Errorf("replay from the start: %v", err)
	}
}
