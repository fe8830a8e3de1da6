package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Most ttd commands are short: a recording of a small program allocates a
// few MiB (decoded instructions, guest pages, the compressor's tables),
// just past the garbage collector's 4 MiB starting goal, and two or three
// collections then cost a millisecond or more of a run that takes ten.
// tuneGC lets the heap grow eight times past what is live (GOGC=800)
// while it is small, and goes back to the default once a collection
// finds more than gcTunedLive live, so the heap of a long recording
// peaks at about gcTunedLive×9 at most once and at twice its live size
// after that. GOGC set in the environment turns it off.
const gcTunedLive = 16 << 20

func tuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(800)
	armGCTuner()
}

// armGCTuner sets a finalizer that runs after the next collection.
func armGCTuner() {
	sentinel := new([64]byte) // large enough not to share a tiny block
	runtime.SetFinalizer(sentinel, func(*[64]byte) {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > gcTunedLive {
			debug.SetGCPercent(100)
			return
		}
		armGCTuner()
	})
}
