package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestGCPercentFor checks the heap floor's arithmetic: the next goal,
// live × (1 + GOGC/100), is gcHeapFloor while that is more than twice
// live, and twice live (GOGC=100) from half the floor on.
func TestGCPercentFor(t *testing.T) {
	for _, live := range []uint64{0, 1 << 10, 1 << 20, 3 << 20, 28 << 20, gcHeapFloor/2 - 1, gcHeapFloor / 2, gcHeapFloor * 3 / 4, gcHeapFloor, 1 << 30} {
		p := gcPercentFor(live)
		goal := max(live, 1<<20) * uint64(100+p) / 100
		want := uint64(gcHeapFloor)
		if live >= gcHeapFloor/2 {
			want = 2 * live
		}
		if p < 100 || goal > want || goal < want-want/64 {
			t.Errorf("live %d: GOGC %d gives a goal of %d, want %d", live, p, goal, want)
		}
	}
}

// TestLiveFromGoal: the live heap read back from the goal a GOGC sets
// (the tuner's finalizer) is the live heap that GOGC was chosen for,
// within 2%, and a negative GOGC (collection off) reads no more than
// the goal.
func TestLiveFromGoal(t *testing.T) {
	for _, live := range []uint64{1 << 20, 3 << 20, 28 << 20, gcHeapFloor/2 - 1, gcHeapFloor / 2, gcHeapFloor, 1 << 30} {
		p := gcPercentFor(live)
		goal := live * uint64(100+p) / 100
		if got := liveFromGoal(goal, p); got > live+live/50 || got < live-live/50 {
			t.Errorf("live %d, GOGC %d, goal %d: read back %d", live, p, goal, got)
		}
	}
	if got := liveFromGoal(5<<20, -1); got != 5<<20 {
		t.Errorf("GOGC -1: read back %d from a goal of %d", got, 5<<20)
	}
}

// TestRetuneGC: after hugeheap.Reserve, retuneGC sets GOGC for the live
// heap the goal implies and starts a new tuner generation, so that a
// finalizer armed before does nothing (it would judge the heap by a
// GOGC no longer in force); without tuneGC (GOGC set in the
// environment) it does nothing.
func TestRetuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer tunerGen.Store(tunerGen.Load())

	tunerGen.Store(0)
	debug.SetGCPercent(300)
	retuneGC(17*31<<20, 1600)
	if p := debug.SetGCPercent(300); p != 300 || tunerGen.Load() != 0 {
		t.Fatalf("without tuneGC: GOGC %d, generation %d; want 300 and 0", p, tunerGen.Load())
	}

	tunerGen.Store(1)
	armGCTuner(1600) // armed before Reserve: its finalizer must not act
	retuneGC(17*31<<20, 1600)
	want := gcPercentFor(31 << 20)
	if p := debug.SetGCPercent(want); p != want {
		t.Fatalf("after retuneGC(31 MB live): GOGC %d, want %d", p, want)
	}
	if g := tunerGen.Load(); g != 2 {
		t.Fatalf("generation %d, want 2", g)
	}
	tunerGen.Add(1) // and retuneGC's own tuner is stale too
	for range 3 {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	if p := debug.SetGCPercent(want); p != want {
		t.Errorf("a stale tuner's finalizer set GOGC %d (want %d left alone)", p, want)
	}
}

// TestHoldGC: holdGC keeps collection off through collections whose
// armed tuner would turn it back on; release puts back the GOGC it
// found when GOGC came from the environment, else one no lower
// (heldPercent), with the tuner armed again: the next collection then
// sets GOGC for the live heap.
func TestHoldGC(t *testing.T) {
	// Last: collect the 32 MB the holds allocated, at the GOGC put
	// back, or the collection they set off comes in a later test
	// (TestReserveHugeHeapOnce counted it).
	defer runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer tunerGen.Store(tunerGen.Load())

	for _, armed := range []bool{true, false} {
		tunerGen.Store(0)
		debug.SetGCPercent(300)
		if armed {
			armGCTuner(300) // as tuneGC leaves it
		}
		release := holdGC()
		for range 3 {
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
		// What a hold allocates stays live: twice the heap at release
		// is a goal above GOGC 300's (which GOGC from the environment
		// keeps all the same).
		held := make([]byte, 32<<20)
		if p := debug.SetGCPercent(-1); p != -1 {
			t.Errorf("armed %v: GOGC %d while held, want -1 (off)", armed, p)
		}
		release()
		if p := debug.SetGCPercent(300); !armed && p != 300 || armed && p <= 300 {
			t.Errorf("armed %v: GOGC %d after release, want 300 (armed: more)", armed, p)
		}
		runtime.KeepAlive(held)
		if !armed {
			continue
		}
		for range 3 {
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
		// The tuner armed again set GOGC for this test's live heap.
		if p := debug.SetGCPercent(100); p == 300 {
			t.Errorf("after release: GOGC still 300, the tuner was not armed again")
		}
	}
}

// TestHeldPercent: after a hold, the next goal is twice the heap, or
// the goal the hold began with if that is more.
func TestHeldPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, heap uint64
		p, want    int
	}{
		{150 * mb, 270 * mb, 100, 260}, // sort -n --jobs 2: goal 540 MB, not 300
		{150 * mb, 150 * mb, 100, 100}, // nothing allocated: as before
		{150 * mb, 160 * mb, 100, 113}, // twice the heap
		{10 * mb, 12 * mb, 540, 540},   // the tuner's goal (64 MB) is more
		{0, 0, 100, 100},
	} {
		if got := heldPercent(c.live, c.heap, c.p); got != c.want {
			t.Errorf("heldPercent(%d MB, %d MB, %d) = %d, want %d", c.live/mb, c.heap/mb, c.p, got, c.want)
		}
	}
}
