package probe

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"ttd/reader"
)

// schedLog (TTD_SCHEDLOG=1) writes the jobs' timeline to stderr: when
// each job starts a run, claims a segment, steals, ends (milliseconds
// since the process started), to see what lies between the critical
// path and the wall.
var (
	schedLog   = os.Getenv("TTD_SCHEDLOG") != ""
	schedStart = time.Now()
)

func schedf(format string, args ...any) {
	if schedLog {
		fmt.Fprintf(os.Stderr, "%7.1f ms  "+format+"\n", append([]any{float64(time.Since(schedStart).Microseconds()) / 1000}, args...)...)
	}
}

// chainSched hands the local runner's jobs runs of consecutive segments
// to evaluate, one re-simulation each (Bound.evalChain), and balances
// them as they go (work stealing, as Cilk's workers and Dryad's
// schedulers do): the units are first split into about one run per job
// of equal estimated cost (reader.Trace.SegmentCosts: instructions,
// record bytes, thread starts), and a job that finishes its run takes
// the later half, by cost, of the segments another job has not started
// yet, from the run with the most of them left. A job claims each
// segment before it evaluates it, so a segment is evaluated once, by
// the run that claimed it; a stolen run starts a re-simulation of its
// own at its first segment's checkpoint. Which job evaluates which
// segment changes nothing in the result: each partial is the
// segment's, sealed where the next begins, and the fix-up pass checks
// the state each assumed (doc.go).
type chainSched struct {
	mu   sync.Mutex
	cost []uint64   // of each unit
	runs []schedRun // by job
	// stop is the first unit not to start (one before it exited).
	stop atomic.Int64
	// steals counts the runs taken from another job.
	steals int
}

// schedRun is a job's run: units [next, end) are still to start, in
// order, and next-1 is the one it evaluates (if any).
type schedRun struct{ next, end int }

// newChainSched starts from chainRuns' split, nil when the units'
// programs do not chain.
func newChainSched(units []Unit, jobs int) *chainSched {
	cost, ok := unitCosts(units)
	if !ok {
		return nil
	}
	runs := costRuns(units, cost, jobs)
	s := &chainSched{cost: cost, runs: make([]schedRun, len(runs))}
	for r, run := range runs {
		s.runs[r] = schedRun{next: run.i, end: run.i + run.n}
	}
	s.stop.Store(int64(len(units)))
	return s
}

// eval is the local runner's parallel pass over units (EvalFunc) when
// their programs chain: one job per run, each pprof-labelled "job" with
// its number (TTD_CPUPROFILE; go tool pprof -tags gives every job's
// CPU, its chunk decoding included), taking more runs as it finishes.
func (s *chainSched) eval(units []Unit, begin map[string]Value, opts RunOptions) ([]*Partial, error) {
	parts := make([]*Partial, len(units))
	errs := make([]error, len(s.runs))
	var done atomic.Int64
	schedf("eval: %d units, runs %v", len(units), s.runs)
	reader.Parallel(len(s.runs), opts.Jobs, func(c int) {
		defer pprof.SetGoroutineLabels(context.Background())
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("job", strconv.Itoa(c))))
		for {
			if i0 := s.first(c); i0 < len(units) {
				var init map[string]Value
				if i0 == 0 {
					init = begin
				}
				u := units[i0]
				schedf("job %d: run from %d", c, i0)
				errs[c] = u.B.evalChain(u.K, init, func(k int) bool { return s.claim(c, i0+k-u.K) }, func(k int, pt *Partial) bool {
					i := i0 + k - u.K
					parts[i] = pt
					if opts.Progress != nil {
						opts.Progress(int(done.Add(1)), len(units))
					}
					if pt.Exit != nil {
						s.stopAt(i + 1)
					}
					return true
				})
				if errs[c] != nil {
					s.stopAt(0) // no more starts anywhere
					return
				}
			}
			if !s.steal(c) {
				schedf("job %d: done", c)
				return
			}
		}
	})
	schedf("eval: done, %d steals", s.steals)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// stopAt lowers stop to i: no unit from i on starts.
func (s *chainSched) stopAt(i int) {
	for {
		old := s.stop.Load()
		if int64(i) >= old || s.stop.CompareAndSwap(old, int64(i)) {
			return
		}
	}
}

// follows reports whether units[i] is the segment after units[i-1] in
// the same target (so one re-simulation goes on from one to the other).
func follows(units []Unit, i int) bool {
	return i > 0 && units[i-1].B == units[i].B && units[i].K == units[i-1].K+1
}

// unitCosts estimates each unit's cost from its target's chunk headers
// (false: a unit's program does not chain).
func unitCosts(units []Unit) ([]uint64, bool) {
	cost := make([]uint64, len(units))
	var b *Bound
	var bc []uint64
	for i, u := range units {
		if !u.B.chains() {
			return nil, false
		}
		if u.B != b {
			b, bc = u.B, u.B.T.Trace.SegmentCosts(u.B.cps)
		}
		cost[i] = bc[u.K]
	}
	return cost, true
}

// first is where job c's run starts (its next unit to start).
func (s *chainSched) first(c int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[c].next
}

// claim tells whether job c may start unit i, the next of its run, and
// records that it did.
func (s *chainSched) claim(c, i int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.runs[c]
	if i != r.next || i >= r.end || int64(i) >= s.stop.Load() {
		return false
	}
	r.next++
	schedf("job %d: segment %d (cost %d)", c, i, s.cost[i])
	return true
}

// steal gives job c, whose run is over, the later half by cost (the
// fewest last units that come to at least half) of the units not yet
// started of the run that has the most cost left (from
// the one that starts first among equals), and reports whether there
// was any; job c's run is then [next, end) of them.
func (s *chainSched) steal(c int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	stop := int(s.stop.Load())
	v, most := -1, uint64(0)
	for j, r := range s.runs {
		var left uint64
		for i := r.next; i < min(r.end, stop); i++ {
			left += s.cost[i] + 1
		}
		if left > most {
			v, most = j, left
		}
	}
	if v < 0 {
		return false
	}
	r := &s.runs[v]
	// Take units from the end until they come to half of what is left
	// (the victim is midway through a unit of its own, on average): an
	// empty last segment (the one at the end) alone is not worth a
	// start.
	at, taken := min(r.end, stop), uint64(0)
	for at > r.next && 2*taken < most {
		at--
		taken += s.cost[at] + 1
	}
	schedf("job %d: steals [%d,%d) of job %d (at %d)", c, at, r.end, v, r.next)
	s.runs[c] = schedRun{next: at, end: r.end}
	r.end = at
	s.steals++
	return true
}
