package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
	debug.SetGCPercent(gcHeapFloor / gcMinHeap * 100)
	armGCTuner()
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

// armGCTuner sets a finalizer that runs after the next collection and
// sets GOGC for the live heap that collection found.
func armGCTuner() {
	sentinel := new([64]byte) // large enough not to share a tiny block
	runtime.SetFinalizer(sentinel, func(*[64]byte) {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			debug.SetGCPercent(100)
			return
		}
		p := gcPercentFor(s[0].Value.Uint64())
		debug.SetGCPercent(p)
		if p > 100 {
			armGCTuner()
		}
	})
}
