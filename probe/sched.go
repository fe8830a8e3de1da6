package probe

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"ttd/reader"
	"ttd/x86"
)

// schedLog (TTD_SCHEDLOG=1) writes the jobs' timeline to stderr: when
// each job starts a run, claims a segment, steals, ends (milliseconds
// since the process started), to see what lies between the critical
// path and the wall, and the CPU time of the job's thread so far (each
// job then keeps its goroutine on one thread: threadCPU), which tells
// what a segment cost where the wall also holds the waits for a core.
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
// segments another job has not started yet, from the run that would
// finish last, as many of the last ones as bring the two jobs' finishes
// nearest (steal: by the time segments took so far, the victim's
// latest at the rate they took, and what a new re-simulation's start
// costs), and none when taking any would not
// finish sooner than leaving them. A job claims each
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
	// now is the time in nanoseconds (nil: since the process started).
	now func() int64
	// stores are the code stores the jobs share, by target (eval).
	stores map[*Bound]*x86.CodeStore
	// What the jobs' segments took, to estimate what is left (ns):
	// durations and costs of the segments that were not the first of a
	// run, and of those that were (a re-simulation's start: state,
	// decoding, translation).
	dur, cst, dur0, cst0 float64
	n0                   int // first segments measured
	// recent is, by job, the ns per cost (unit) of its run's latest
	// chained segments (0: none yet), which steal counts what is left of
	// a victim's run at: a trace's segments of equal estimates may cost
	// more late than early (xz -6's last four 1.5-2x the average; by the
	// average, the second job's last two looked 45 ms from its end, not
	// 130, and the first job finished 100-130 ms before it, stealing
	// nothing).
	recent []float64
}

// schedRun is a job's run: units [next, end) are still to start, in
// order; when busy, it evaluates unit cur, claimed at time at (ns),
// the first of its re-simulation if fresh.
type schedRun struct {
	next, end int
	busy      bool
	fresh     bool
	cur       int
	at        int64
}

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
	if len(s.runs) > 1 {
		s.stores = sharedStores(units) // (one run shares with no one)
	}
	stores := s.stores
	reader.Parallel(len(s.runs), opts.Jobs, func(c int) {
		if schedLog {
			runtime.LockOSThread() // threadCPU: the job's own
			defer runtime.UnlockOSThread()
		}
		defer pprof.SetGoroutineLabels(context.Background())
		pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("job", strconv.Itoa(c))))
		// left is what the job's last re-simulation left to its next
		// (a steal's), of target leftB.
		var left *reader.Leftovers
		var leftB *Bound
		for {
			if i0 := s.first(c); i0 < len(units) {
				var init map[string]Value
				if i0 == 0 {
					init = begin
				}
				u := units[i0]
				if st := stores[u.B]; st != nil && (left == nil || leftB != u.B) {
					left, leftB = u.B.T.Trace.SharingCode(st), u.B
				}
				schedf("job %d: run from %d", c, i0)
				claim := func(k int) (bool, int) {
					ok, end := s.claim(c, i0+k-u.K)
					return ok, u.K + end - i0
				}
				errs[c] = u.B.evalChain(u.K, init, claim, func(k int, pt *Partial) bool {
					i := i0 + k - u.K
					parts[i] = pt
					if opts.Progress != nil {
						opts.Progress(int(done.Add(1)), len(units))
					}
					if pt.Exit != nil {
						s.stopAt(i + 1)
					}
					return true
				}, &left)
				if errs[c] != nil {
					s.stopAt(0) // no more starts anywhere
					return
				}
			}
			if !s.steal(c) {
				schedf("job %d: done cpu %.1f ms", c, threadCPU())
				return
			}
		}
	})
	schedf("eval: done, %d steals", s.steals)
	for _, st := range stores {
		schedf("code store: %d blocks kept, %d taken, %d translations kept, %d adopted", st.Kept, st.Taken, st.XlatKept, st.XlatTaken())
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// sharedStores gives each target of units one code store, which its
// jobs' re-simulations share (reader.Trace.SharingCode): a job that
// starts or steals later in the trace takes the blocks and
// translations another job made of the same code instead of decoding
// and translating them again (nil: TTD_SHARECODE=0).
func sharedStores(units []Unit) map[*Bound]*x86.CodeStore {
	if os.Getenv("TTD_SHARECODE") == "0" {
		return nil
	}
	m := map[*Bound]*x86.CodeStore{}
	for _, u := range units {
		if m[u.B] == nil {
			m[u.B] = x86.NewCodeStore()
		}
	}
	return m
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
// records that it did (and that the unit before, if any, is done). It
// also gives the unit the run stops at, as things stand.
func (s *chainSched) claim(c, i int) (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &s.runs[c]
	chained := r.busy && r.cur == i-1 // in the same re-simulation
	t := s.done(c)
	end := min(r.end, int(s.stop.Load()))
	if i != r.next || i >= end {
		return false, end
	}
	r.busy, r.fresh, r.cur, r.at = true, !chained, i, t
	r.next++
	schedf("job %d: segment %d (cost %d) cpu %.1f ms", c, i, s.cost[i], threadCPU())
	return true, end
}

// time is now (ns).
func (s *chainSched) time() int64 {
	if s.now != nil {
		return s.now()
	}
	return int64(time.Since(schedStart))
}

// done records that job c's busy unit (if any) is over, what it took,
// and returns the time.
func (s *chainSched) done(c int) int64 {
	t := s.time()
	r := &s.runs[c]
	if r.busy {
		d, cost := float64(t-r.at), float64(s.cost[r.cur])
		if r.fresh {
			s.dur0, s.cst0, s.n0 = s.dur0+d, s.cst0+cost, s.n0+1
		} else {
			s.dur, s.cst = s.dur+d, s.cst+cost
			if s.recent == nil {
				s.recent = make([]float64, len(s.runs))
			}
			if x := d / (cost + 1); s.recent[c] == 0 {
				s.recent[c] = x
			} else {
				s.recent[c] = (s.recent[c] + x) / 2
			}
		}
		r.busy = false
	}
	return t
}

// rateOf is the ns per unit of cost steal counts job j's run at: its
// recent one, else the model's.
func (s *chainSched) rateOf(j int, rate float64) float64 {
	if j < len(s.recent) && s.recent[j] > 0 {
		return s.recent[j]
	}
	return rate
}

// model is what steal estimates with: ns per unit of cost, and the
// extra of a re-simulation's start. Before any segment took measurable
// time it counts in costs (each at least 1) and starts as free.
func (s *chainSched) model() (rate, start float64) {
	if s.dur <= 0 || s.cst <= 0 {
		return 1, 0
	}
	rate = s.dur / s.cst
	if s.n0 > 0 {
		start = max(0, s.dur0-rate*s.cst0) / float64(s.n0)
	}
	return rate, start
}

// steal gives job c, whose run is over, units not yet started of the
// run that would finish last (the first of equals): the last ones from
// at on, where at makes the later of the two finishes (the victim: what
// is left of its busy unit, then [next, at); the thief: a start, then
// [at, end)) the earliest, and reports whether there was a steal that
// finishes sooner than the victim alone (none: a start costs more than
// the time it saves, or nothing is left). Job c's run is then [at, end).
func (s *chainSched) steal(c int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.done(c)
	rate, start := s.model()
	stop := int(s.stop.Load())
	// unit is what unit i takes at ns per cost at (rateOf).
	unit := func(i int, at float64) float64 { return at * float64(s.cost[i]+1) }
	// busyLeft is the estimate of what is left of r's busy unit (a run
	// not started yet has its start ahead).
	busyLeft := func(r *schedRun, at float64) float64 {
		if !r.busy {
			return start
		}
		est := unit(r.cur, at)
		if r.fresh {
			est += start
		}
		if s.dur <= 0 {
			return est / 2 // no times yet: midway, on average
		}
		return max(0, est-float64(now-r.at))
	}
	v, most := -1, 0.0
	for j := range s.runs {
		r := &s.runs[j]
		if j == c || r.next >= min(r.end, stop) {
			continue
		}
		at := s.rateOf(j, rate)
		left := busyLeft(r, at)
		for i := r.next; i < min(r.end, stop); i++ {
			left += unit(i, at)
		}
		if v < 0 || left > most {
			v, most = j, left
		}
	}
	if v < 0 {
		return false
	}
	r := &s.runs[v]
	lim := min(r.end, stop)
	// From the end down: the thief's share grows, the victim's shrinks.
	victim, thief, vr := most, start, s.rateOf(v, rate)
	at, best := lim, most
	for i := lim - 1; i >= r.next; i-- {
		victim -= unit(i, vr)
		thief += unit(i, vr)
		if f := max(victim, thief); f < best {
			at, best = i, f
		}
	}
	if at == lim {
		schedf("job %d: no steal from job %d (left %.0f ms, start %.0f ms)", c, v, most/1e6, start/1e6)
		return false
	}
	schedf("job %d: steals [%d,%d) of job %d (at %d; left %.0f -> %.0f ms) cpu %.1f ms", c, at, r.end, v, r.next, most/1e6, best/1e6, threadCPU())
	s.runs[c] = schedRun{next: at, end: r.end}
	if s.recent != nil {
		s.recent[c] = s.recent[v] // its segments are the victim's last
	}
	r.end = at
	s.steals++
	return true
}

// threadCPU is the CPU time of the calling thread (ms).
func threadCPU() float64 {
	if !schedLog {
		return 0
	}
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}
