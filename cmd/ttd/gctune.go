package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
)

// Most ttd commands are short, and a collection costs in proportion to
// what is live, which under `ttd run` is mostly decoded instructions and
// guest pages that stay live to the end: `ttd run python3 -c 'import
// json'` collected once at 30 MB of heap (28 MB live), for 55-110 ms of
// CPU (a tenth of the run), and `ttd run node -e 0` twice (30 and 54
// MB), for about 180 ms. tuneGC gives the heap a floor instead: it may
// grow to gcHeapFloor before the first collection, and after each
// collection to gcHeapFloor or twice what is live, whichever is more
// (GOGC=100, the default, once the live heap passes half the floor).
// The first of those no longer collects, node once. A recording makes
// garbage (trace buffers) that a collection lets it reuse, and fresh
// memory costs page faults: with a floor of 128 MiB `ttd record python3
// -c pass` peaked at 245 MB of RSS rather than 170, and took more system
// time; at 64 MiB it peaks as before. GOGC set in the environment turns
// it off.
const gcHeapFloor = 64 << 20

// gcMinHeap is the Go runtime's heap goal at GOGC=100 when nothing is
// live (heapMinimum): the first goal is gcMinHeap × GOGC/100.
const gcMinHeap = 4 << 20

func tuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	p := gcHeapFloor / gcMinHeap * 100
	debug.SetGCPercent(p)
	armGCTuner(p)
}

// tunerGen is the generation of the armed tuner: retuneGC starts a new
// one, and a finalizer of an older one does nothing. 0: tuneGC did not
// run (GOGC set in the environment).
var tunerGen atomic.Int64

// retuneGC sets GOGC for the live heap now and arms the tuner again,
// after hugeheap.Reserve: Reserve turns collection off, collects, and
// puts back the GOGC it found. The tuner's finalizer ran inside that
// collection in two runs of three (`ttd probe` over a sort -n trace),
// saw collection off, set 100, and Reserve then put back 1600 for the
// rest of the run: heap goals of 17x the live heap (bzip2 -9's trace:
// 1.3 GB of RSS and 250k page faults, against 650-690 MB and 92-100k
// at GOGC=100), in two runs of three. goal is MemStats.NextGC at
// percent, the GOGC Reserve put back.
func retuneGC(goal uint64, percent int) {
	if tunerGen.Load() == 0 {
		return
	}
	p := gcPercentFor(liveFromGoal(goal, percent))
	debug.SetGCPercent(p)
	tunerGen.Add(1)
	if p > 100 {
		armGCTuner(p)
	}
}

// gcPercentFor returns the GOGC that puts the next heap goal at
// gcHeapFloor when live bytes are live, and 100 once that would be
// below the default goal (twice live).
func gcPercentFor(live uint64) int {
	if live >= gcHeapFloor/2 {
		return 100
	}
	live = max(live, 1<<20)
	return int((gcHeapFloor - live) * 100 / live)
}

// liveFromGoal returns the live heap of the collection that set the
// heap goal goal (MemStats.NextGC) at GOGC percent: the runtime sets
// the goal to live × (1 + percent/100), stacks and globals counted with
// live, or to its minimum goal scaled by percent, which for the
// percents tuneGC sets gives back about what gcPercentFor was given.
// (runtime/metrics reads the live heap exactly, but its package
// initialisation took 0.7-1.6 ms of every ttd command.)
func liveFromGoal(goal uint64, percent int) uint64 {
	return goal * 100 / uint64(100+max(percent, 0))
}

// armGCTuner sets a finalizer that runs after the next collection and
// sets GOGC for the live heap that collection found, percent being the
// GOGC it ran at.
func armGCTuner(percent int) {
	gen := tunerGen.Load()
	if gen == 0 {
		gen = 1
		tunerGen.Store(gen)
	}
	sentinel := new([64]byte) // large enough not to share a tiny block
	runtime.SetFinalizer(sentinel, func(*[64]byte) {
		if tunerGen.Load() != gen {
			return // retuneGC armed a newer one
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p := gcPercentFor(liveFromGoal(ms.NextGC, percent))
		debug.SetGCPercent(p)
		if p > 100 {
			armGCTuner(p)
		}
	})
}

// holdGC turns collection off until release is called
// (calls.Options.HoldGC: while stitching a call tree that allocates
// only what stays live). It disarms the tuner first: the finalizer of
// one armed before the collection Analyze makes just before would turn
// collection back on (it did in sort -n's `ttd calls`, collecting 279
// -> 261 MB for 0.24 s of CPU). release sets the GOGC that puts the
// next goal where a collection then would put it (heldPercent), and
// arms the tuner for the collection after; with GOGC from the
// environment, it puts that back. Putting back the GOGC it found set
// off a collection at once when the heap had passed the goal of the
// collection before stitching: sort -n's --jobs 2, 271 -> 225 MB, the
// garbage the segments' merged nodes, for 0.1 s of CPU marking.
func holdGC() (release func()) {
	armed := tunerGen.Load() != 0
	if armed {
		tunerGen.Add(1)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p := debug.SetGCPercent(-1)
	live := liveFromGoal(ms.NextGC, p)
	return func() {
		if !armed {
			debug.SetGCPercent(p)
			return
		}
		runtime.ReadMemStats(&ms)
		q := heldPercent(live, ms.HeapAlloc, p)
		debug.SetGCPercent(q)
		armGCTuner(q)
	}
}

// heldPercent is the GOGC after a hold (holdGC) that began with live
// bytes live at GOGC p and ends with a heap of heap bytes: the goal is
// twice the heap, what a collection now would set if it found it all
// live (what a hold allocates stays live), and never below the goal
// the hold began with.
func heldPercent(live, heap uint64, p int) int {
	live = max(live, 1)
	goal := max(2*heap, live*uint64(100+max(p, 0))/100)
	return int(goal*100/live) - 100
}
