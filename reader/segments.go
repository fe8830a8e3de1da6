package reader

import (
	"fmt"
	"io"
	"runtime"
	"sync"

	"ttd/x86"
)

// VerifySegments re-simulates every checkpoint interval of the trace on
// its own, from its checkpoint, as a debugger does when it travels there,
// and checks that it reaches the next checkpoint with exactly the
// registers recorded there (Replay.Verify). workers run at a time (0: one
// per CPU). It returns the number of intervals verified, or the first
// one's error.
func (t *Trace) VerifySegments(workers int) (int, error) {
	cps, err := t.Checkpoints()
	if err != nil {
		return 0, err
	}
	errs := make([]error, len(cps))
	Parallel(len(cps), workers, func(k int) { errs[k] = t.verifySegment(cps, k) })
	for k, err := range errs {
		if err != nil {
			return k, fmt.Errorf("interval %d (from the checkpoint at position %d): %w", k, cps[k].Position, err)
		}
	}
	return len(cps), nil
}

// Parallel calls fn(k) for every k in [0, n), workers at a time (0: one
// per CPU), the ks in order as workers become free, and returns when all
// have returned: checkpoint intervals re-simulate independently.
func Parallel(n, workers int, fn func(k int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex
	next := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= n {
					return
				}
				fn(k)
			}
		}()
	}
	wg.Wait()
}

func (t *Trace) verifySegment(cps []Checkpoint, k int) error {
	r, err := t.NewReplayAt(cps[k])
	if err != nil {
		return err
	}
	defer r.Close()
	r.Verify = true
	end := t.End()
	if k+1 < len(cps) {
		end = cps[k+1].Position
	}
	err = r.RunTo(end)
	switch {
	case err == ErrEnd || err == io.ErrUnexpectedEOF && k+1 == len(cps):
	case err != nil:
		return err
	case r.Position() != end:
		return fmt.Errorf("re-simulation stopped at position %d, before %d", r.Position(), end)
	}
	if k+1 < len(cps) && r.Checkpoints < 2 {
		return fmt.Errorf("re-simulation did not reach the checkpoint at position %d", end)
	}
	return nil
}

// SharingCode returns Leftovers that hold no pages and the code store
// s, so that the replays made from them (NewReplayAtFrom), one per job
// of ttd probe, run at the same time, share their decoded blocks and
// translations: a block is taken only where the taking replay's memory
// holds the same bytes (x86.CodeStore), and a translation made for a
// block filter only by a cache whose verdict on the block is the same.
func (t *Trace) SharingCode(s *x86.CodeStore) *Leftovers {
	return &Leftovers{t: t, at: map[uint64]*x86.Page{}, store: s}
}
