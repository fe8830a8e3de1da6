package reader

import (
	"fmt"
	"io"
	"runtime"
	"sync"
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
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, len(cps))
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
				if k >= len(cps) {
					return
				}
				errs[k] = t.verifySegment(cps, k)
			}
		}()
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			return k, fmt.Errorf("interval %d (from the checkpoint at position %d): %w", k, cps[k].Position, err)
		}
	}
	return len(cps), nil
}

func (t *Trace) verifySegment(cps []Checkpoint, k int) error {
	r, err := t.NewReplayAt(cps[k])
	if err != nil {
		return err
	}
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
