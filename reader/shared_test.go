package reader

import (
	"testing"

	"ttd/recorder"
)

// TestReplayableSharedMemory records sharedmem.c (anonymous shared
// memory a fork shares, a file mapped MAP_SHARED twice, a System V
// segment attached in both processes, an mprotect and an mremap of the
// shared memory; each process reads what the other wrote) with no reads
// logged, and checks that a replay from the start verifies (registers
// at every checkpoint and when each process ends: what each read), that
// a replay started at each checkpoint holds at the next exactly the
// memory the replay from the start held there, that every interval verifies from
// its checkpoint, and that a snapshot taken after the fork resumes
// twice and verifies to the next checkpoint: each time the processes
// must hold one page where the recording did.
func TestReplayableSharedMemory(t *testing.T) {
	path, st := recordCWith(t, "testdata/sharedmem.c", recorder.Options{CheckpointEvery: 40_000, Replayable: true})
	if st.LoggedReads != 0 {
		t.Fatalf("%d reads logged", st.LoggedReads)
	}
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Tree() || len(cps) < 10 {
		t.Fatalf("tree %v, %d checkpoints: want a tree and many", tr.Tree(), len(cps))
	}
	seq, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	defer seq.Close()
	seq.Verify = true
	want := make([]map[uint32]uint64, len(cps))
	for k, cp := range cps[1:] {
		if err := seq.RunTo(cp.Position); err != nil && err != ErrEnd {
			t.Fatalf("replay from the start to checkpoint %d: %v", k+1, err)
		}
		want[k+1] = memHashes(seq)
	}
	// From each checkpoint to the next: the pages of shared memory
	// another process writes there must be the address space's as they
	// were the recording's (memory hashes count the pages it holds).
	for k := 1; k+1 < len(cps); k++ {
		r, err := tr.NewReplayAt(cps[k])
		if err != nil {
			t.Fatalf("replay from checkpoint %d: %v", k, err)
		}
		if err := r.RunTo(cps[k+1].Position); err != nil && err != ErrEnd {
			t.Fatalf("replay from checkpoint %d to the next: %v", k, err)
		}
		got := memHashes(r)
		for sp, h := range want[k+1] {
			if got[sp] != h {
				t.Errorf("checkpoint %d (position %d), from the one before: memory of space %d hashes %#x, the replay from the start's %#x", k+1, cps[k+1].Position, sp, got[sp], h)
			}
		}
		r.Close()
	}
	if err := seq.RunTo(tr.End()); err != nil && err != ErrEnd {
		t.Fatalf("replay from the start: %v", err)
	}
	procs := seq.Processes()
	if len(procs) != 2 || procs[1].Verified == 0 {
		t.Fatalf("processes %+v: want two, the child's final registers verified", procs)
	}
	if n, err := tr.VerifySegments(2); err != nil || n != len(cps) {
		t.Fatalf("verified %d of %d intervals: %v", n, len(cps), err)
	}
	// A snapshot in the middle of an interval with both processes.
	k := len(cps) / 2
	r, err := tr.NewReplayAt(cps[k])
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Processes()) != 2 {
		t.Fatalf("checkpoint %d has %d processes, want both", k, len(r.Processes()))
	}
	if err := r.RunTo((cps[k].Position + cps[k+1].Position) / 2); err != nil {
		t.Fatal(err)
	}
	s := r.Snapshot()
	for i := 0; i < 2; i++ {
		q, err := tr.ResumeInto(s, r)
		if err != nil {
			t.Fatal(err)
		}
		q.Verify = true
		if err := q.RunTo(cps[k+2].Position + 1); err != nil {
			t.Fatalf("resume %d: %v", i, err)
		}
		r = q
	}
	r.Close()
}
