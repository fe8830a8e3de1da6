package reader

import (
	"runtime"
	"testing"
	"time"
)

// TestRestoreCost measures what a re-simulation that starts at a
// checkpoint of the trace TTD_BENCH_TRACE names (one that logs no
// reads, indexed) pays to restore the checkpoint's memory: the thread
// CPU of NewReplayAt and of materialising every restored page (as a
// segment that touches all of them does), at the checkpoints a quarter,
// half and three quarters in, each the least of 3 with the trace opened
// anew (no frame cached), and the frames decompressed. A benchmark, not
// a timed test (skipped without the variable):
//
//	TTD_BENCH_TRACE=xz.ttd go test ./reader -run RestoreCost -v
func TestRestoreCost(t *testing.T) {
	path := benchTrace(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var total time.Duration
	for _, q := range []int{1, 2, 3} {
		best, frames := time.Duration(0), 0
		for rep := 0; rep < 3; rep++ {
			tr, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Sequential() || tr.cpm.pages == nil {
				t.Fatalf("%s logs reads or has no checkpoint memory file", path)
			}
			cps, err := tr.Checkpoints()
			if err != nil {
				t.Fatal(err)
			}
			cp := cps[len(cps)*q/4]
			t0 := threadCPU()
			r, err := tr.NewReplayAt(cp)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range r.procs {
				if p.as != nil {
					p.as.materialize()
				}
			}
			d := threadCPU() - t0
			frames = tr.cpm.pages.Decodes()
			r.Close()
			tr.Close()
			if best == 0 || d < best {
				best = d
			}
		}
		total += best
		t.Logf("checkpoint %d/4: %v, %d frames decompressed", q, best.Round(time.Millisecond/10), frames)
	}
	t.Logf("total %v", total.Round(time.Millisecond/10))
}
