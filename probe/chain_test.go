package probe

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ttd/reader"
	"ttd/x86"
)

// TestChainRuns: the local runner evaluates consecutive segments in one
// re-simulation per job (evalChain), split where the estimated costs
// (reader.Trace.SegmentCosts) balance; a script that reads memory keeps
// a re-simulation per segment.
func TestChainRuns(t *testing.T) {
	path := recordCalls(t, 2500)
	bind := func(src string) []Unit {
		_, b := bindCached(t, path, src)
		var units []Unit
		for k := 0; k < b.Segments(); k++ {
			units = append(units, Unit{b, k})
		}
		return units
	}
	units := bind(`fn::mid:entry { n++; }`)
	if len(units) < 10 {
		t.Fatalf("%d segments: too few to split", len(units))
	}
	cost, _ := unitCosts(units)
	insts := func(r chainRun) uint64 {
		var n uint64
		for _, c := range cost[r.i : r.i+r.n] {
			n += c
		}
		return n
	}
	for _, jobs := range []int{1, 2, 3, 7} {
		runs := chainRuns(units, jobs)
		if len(runs) != jobs {
			t.Fatalf("%d jobs: %d runs %+v", jobs, len(runs), runs)
		}
		next := 0
		var total uint64
		for _, c := range cost {
			total += c
		}
		// A cut misses its share of the total by at most half the
		// larger of the two segments around it (the run ends where the
		// segments so far come nearest to it), so a run costs its share
		// give or take half of those at each of its two cuts.
		slack := func(cut int) uint64 {
			if cut == 0 || cut == len(cost) {
				return 0
			}
			return max(cost[cut-1], cost[cut]) / 2
		}
		for _, r := range runs {
			if r.i != next || r.n == 0 {
				t.Fatalf("%d jobs: runs %+v do not cover the segments in order", jobs, runs)
			}
			next = r.i + r.n
			got, share := int64(insts(r))*int64(jobs), int64(total)
			if d, allowed := max(got-share, share-got), int64(slack(r.i)+slack(next)+1)*int64(jobs); d > allowed {
				t.Errorf("%d jobs: run %+v costs %d, its share %d give or take %d", jobs, r, insts(r), total/uint64(jobs), allowed/int64(jobs))
			}
		}
		if next != len(units) {
			t.Fatalf("%d jobs: runs %+v end at %d of %d segments", jobs, runs, next, len(units))
		}
	}
	if runs := chainRuns(units, 10*len(units)); len(runs) != len(units) {
		t.Errorf("more jobs than segments: %d runs for %d segments", len(runs), len(units))
	}
	if runs := chainRuns(bind(`fn::mid:entry { @[copyinstr(arg1)] = count(); }`), 2); runs != nil {
		t.Errorf("a script reading memory chains: %+v", runs)
	}
}

// TestChainSchedClaimsEachOnce: however the jobs interleave, every
// segment before the stop is claimed exactly once, each job's claims go
// in order through consecutive segments of one target between steals,
// and a job that finishes first takes work from another (a random
// scheduler over random costs, targets and exits).
func TestChainSchedClaimsEachOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	stole := 0
	for trial := 0; trial < 2000; trial++ {
		n := 1 + rng.IntN(40)
		jobs := 1 + rng.IntN(5)
		cost := make([]uint64, n)
		target := make([]int, n) // which target a unit belongs to
		for i := range cost {
			cost[i] = uint64(rng.IntN(1000))
			if i > 0 {
				target[i] = target[i-1]
				if rng.IntN(15) == 0 {
					target[i]++
				}
			}
		}
		starts := chainStarts(cost, jobs, nil, func(i int) bool { return target[i] != target[i-1] })
		s := &chainSched{cost: cost, runs: make([]schedRun, len(starts))}
		for r, i := range starts {
			end := n
			if r+1 < len(starts) {
				end = starts[r+1]
			}
			s.runs[r] = schedRun{next: i, end: end}
		}
		s.stop.Store(int64(n))
		stop := n
		if rng.IntN(4) == 0 {
			stop = rng.IntN(n + 1)
		}
		claimed := make([]int, n)
		// ends: where each job's run stops, as its last claim said (a
		// re-simulation decodes no further ahead): it may come
		// closer, never go further.
		ends := make([]int, len(s.runs))
		cur := make([]int, len(s.runs)) // the job's next unit, -1: must steal
		active := make([]bool, len(s.runs))
		for c := range cur {
			cur[c], active[c] = s.first(c), true
		}
		for left := len(cur); left > 0; {
			c := rng.IntN(len(cur))
			if !active[c] {
				continue
			}
			if rng.IntN(10) == 0 {
				s.stopAt(stop) // an exit seen at some moment
			}
			ok := false
			if cur[c] >= 0 && cur[c] < n {
				var end int
				ok, end = s.claim(c, cur[c])
				if ok && (end <= cur[c] || end > n || ends[c] > 0 && end > ends[c]) {
					t.Fatalf("trial %d: job %d claimed %d with its run stopping at %d (before: %d)", trial, c, cur[c], end, ends[c])
				}
				if ok {
					ends[c] = end
				}
			}
			if ok {
				claimed[cur[c]]++
				if cur[c]+1 < n && target[cur[c]+1] == target[cur[c]] {
					cur[c]++
				} else {
					cur[c] = -1
				}
				continue
			}
			if s.steal(c) {
				cur[c], ends[c] = s.first(c), 0
				stole++
				continue
			}
			active[c] = false
			left--
		}
		last := min(stop, n)
		if s.stop.Load() == int64(n) {
			last = n // the exit was never seen
		}
		for i := range claimed {
			if i < last && claimed[i] != 1 || claimed[i] > 1 {
				t.Fatalf("trial %d: %d units, %d jobs, costs %v, targets %v, stop %d: unit %d claimed %d times (%v)", trial, n, jobs, cost, target, last, i, claimed[i], claimed)
			}
		}
	}
	if stole == 0 {
		t.Fatalf("no job ever stole: the test exercises nothing")
	}
}

// TestStealingKeepsResults: with a split as bad as can be (every
// segment in the first job's run, none in the others'), the other jobs
// take segments from it as they go, and the output is that of one job.
func TestStealingKeepsResults(t *testing.T) {
	path := recordCalls(t, 2500)
	src := countScript + `fn::mid:entry /arg0 % 50 == 0/ { printf("mid(%d) at %d\n", arg0, tid); }
fn::mid:entry { self->arg = arg0; n++; }
fn::mid:return /self->arg != 0/ { @self = sum(self->arg); self->arg = 0; }
END { printf("n=%d\n", n); }
`
	ref, _, _ := runScript(t, path, src, 1)
	if !strings.Contains(ref, "n=300\n") || !strings.Contains(ref, "mid(250) at") {
		t.Fatalf("one job:\n%s", ref)
	}
	for _, jobs := range []int{2, 3} {
		p, b := bindCached(t, path, src)
		var steals int
		o, err := p.RunWith([]*Bound{b}, func(units []Unit, begin map[string]Value) ([]*Partial, error) {
			sc := newChainSched(units, jobs)
			if sc == nil || len(units) < 10 {
				t.Fatalf("%d units, scheduler %v", len(units), sc)
			}
			// No segment takes time: steals count costs, starts free
			// (what the machine's speed would otherwise decide).
			sc.now = func() int64 { return 0 }
			sc.runs = make([]schedRun, jobs)
			sc.runs[0] = schedRun{next: 0, end: len(units)}
			for c := 1; c < jobs; c++ {
				sc.runs[c] = schedRun{next: len(units), end: len(units)}
			}
			parts, err := sc.eval(units, begin, RunOptions{Jobs: jobs})
			steals = sc.steals
			return parts, err
		})
		if err != nil {
			t.Fatal(err)
		}
		var out, errs strings.Builder
		o.Print(&out, &errs)
		if out.String() != ref || errs.Len() != 0 {
			t.Fatalf("%d jobs, stealing: got\n%s\nwant\n%s\nstderr: %s", jobs, out.String(), ref, errs.String())
		}
		if steals == 0 {
			t.Errorf("%d jobs: no job stole from the first: the test exercises nothing", jobs)
		}
		t.Logf("%d jobs: %d steals, %d segments evaluated again", jobs, steals, o.Reruns)
	}
}

// TestJobsShareCode: a job that starts a re-simulation after another
// job ran the same code takes that job's decoded blocks and
// translations from the target's shared store (sharedStores), and the
// output stays the one job's.
func TestJobsShareCode(t *testing.T) {
	path := recordCalls(t, 2500)
	src := countScript + `fn::mid:entry { n++; }
END { printf("n=%d\n", n); }
`
	ref, _, _ := runScript(t, path, src, 1)
	p, b := bindCached(t, path, src)
	var sc *chainSched
	o, err := p.RunWith([]*Bound{b}, func(units []Unit, begin map[string]Value) ([]*Partial, error) {
		sc = newChainSched(units, 2)
		// Job 0 runs every unit but the last two, then job 1 those
		// (one worker: job 0's code is stored when job 1 starts).
		n := len(units)
		sc.runs = []schedRun{{next: 0, end: n - 2}, {next: n - 2, end: n}}
		sc.now = func() int64 { return 0 }
		return sc.eval(units, begin, RunOptions{Jobs: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	o.Print(&out, &errs)
	if out.String() != ref || errs.Len() != 0 {
		t.Fatalf("got\n%s\nwant\n%s\nstderr: %s", out.String(), ref, errs.String())
	}
	st := sc.stores[b]
	if st == nil {
		t.Fatal("no shared store")
	}
	if st.Taken == 0 || st.XlatTaken() == 0 {
		t.Fatalf("%d blocks, %d translations taken: the second re-simulation decoded and translated anew", st.Taken, st.XlatTaken())
	}
	t.Logf("%d blocks kept, %d taken; %d translations kept, %d adopted", st.Kept, st.Taken, st.XlatKept, st.XlatTaken())
}

// bindCached compiles src and binds it to the trace at path (opened once).
func bindCached(t *testing.T, path, src string) (*Program, *Bound) {
	t.Helper()
	p, err := Compile(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Bind(openCached(t, path, p.NeedsMemory()))
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// fakeClock is a chainSched's now for tests.
type fakeClock struct{ t int64 }

func (f *fakeClock) now() int64 { return f.t }

// TestStealByTimeLeft: once segments have taken measurable time, a job
// that finishes its run takes what brings the two finishes nearest,
// counting what is left of the victim's busy segment and the start of a
// new re-simulation, and nothing when a steal would not finish sooner
// (the victim is about to finish: a restart would only cost).
func TestStealByTimeLeft(t *testing.T) {
	clk := &fakeClock{}
	newSched := func(cost ...uint64) *chainSched {
		s := &chainSched{cost: cost, now: clk.now, runs: []schedRun{{next: 0, end: len(cost)}, {next: len(cost), end: len(cost)}}}
		s.stop.Store(int64(len(cost)))
		return s
	}
	// Job 0 evaluates 0 (fresh: a start), then 1 and 2 in the same
	// re-simulation: 1 ns per cost, a start of 50 ns.
	s := newSched(100, 200, 300, 100, 10)
	clk.t = 0
	for i, at := range []int64{0, 150, 351, 652} {
		clk.t = at
		if ok, _ := s.claim(0, i); !ok {
			t.Fatalf("claim of %d refused", i)
		}
	}
	if s.n0 != 1 || s.dur0 != 150 || s.cst0 != 100 || s.dur != 502 || s.cst != 500 {
		t.Fatalf("measured n0 %d dur0 %v cst0 %v dur %v cst %v", s.n0, s.dur0, s.cst0, s.dur, s.cst)
	}
	rate, start := s.model()
	if rate != 502.0/500 || start < 49 || start > 50 {
		t.Fatalf("model: rate %v start %v", rate, start)
	}
	// Job 0 is 90 ns into unit 3 (101 ns): 11 left, then unit 4 (11):
	// a start alone (50) is more than it would save.
	clk.t = 742
	if s.steal(1) || s.runs[0] != (schedRun{next: 4, end: 5, busy: true, cur: 3, at: 652}) || s.steals != 0 {
		t.Fatalf("stole from a job about to finish: runs %+v", s.runs)
	}
	// Just after it claimed unit 3, unit 4 alone is worth a start of
	// its own: 50+11 = 61 < 101.
	clk.t = 652
	if !s.steal(1) || s.runs[1].next != 4 || s.runs[1].end != 5 || s.runs[0].end != 4 {
		t.Fatalf("no steal of unit 4: runs %+v", s.runs)
	}

	// Job 0 has just started a long unit: the thief takes every unit
	// after it, not half of them.
	s = newSched(100, 200, 1000, 100, 100, 100, 100)
	for i, at := range []int64{0, 150, 350} {
		clk.t = at
		s.claim(0, i)
	}
	clk.t = 360 // 10 ns into unit 2 (about 1000)
	if !s.steal(1) || s.runs[1] != (schedRun{next: 3, end: 7}) || s.runs[0].end != 3 {
		t.Fatalf("the thief should take units [3,7): runs %+v", s.runs)
	}
	// Job 1 evaluates 3 and 4 and is past its estimate for 5 when job
	// 0 is done with 2: 6 is all it has left, and a start and 6 would
	// finish after job 1 does.
	clk.t = 360
	s.claim(1, 3)
	clk.t = 461
	s.claim(1, 4)
	clk.t = 562
	s.claim(1, 5)
	clk.t = 1370
	if ok, _ := s.claim(0, 3); ok {
		t.Fatalf("job 0 claimed a unit of job 1's run")
	}
	if s.steal(0) {
		t.Fatalf("job 0 stole job 1's last unit: runs %+v", s.runs)
	}
}

// TestStealCases: the victim is the job with the most left (its busy
// segment's rest, a start for a fresh one or a run not started yet, its
// units), and of equal finishes the thief takes the fewest units.
func TestStealCases(t *testing.T) {
	// measured sets 1 ns per cost and a start of 50 ns.
	measured := func(s *chainSched) {
		s.dur, s.cst, s.dur0, s.cst0, s.n0 = 1000, 1000, 150, 100, 1
	}
	clk := &fakeClock{}
	sched := func(runs []schedRun, cost ...uint64) *chainSched {
		s := &chainSched{cost: cost, now: clk.now, runs: runs}
		s.stop.Store(int64(len(cost)))
		return s
	}
	for _, tc := range []struct {
		name    string
		timed   bool
		now     int64
		runs    []schedRun
		cost    []uint64
		thief   int
		want    schedRun // the thief's run after (zero: no steal)
		wantVic int
	}{
		// 60 ns into a fresh unit of 100 and a start of 50: 90 left,
		// then 30; a start and 30 (80) finish sooner than 120.
		{"fresh busy unit", true, 60, []schedRun{{next: 1, end: 2, busy: true, fresh: true}, {next: 2, end: 2}}, []uint64{99, 29}, 1, schedRun{next: 1, end: 2}, 0},
		// The same unit not fresh: 40 left, then 30 (70): a start
		// and 30 would finish later.
		{"chained busy unit", true, 60, []schedRun{{next: 1, end: 2, busy: true}, {next: 2, end: 2}}, []uint64{99, 29}, 1, schedRun{}, 0},
		// Past its estimate, job 0's busy unit has nothing left, not
		// less: 300 left, more than job 1's 50+200; the thief takes
		// one unit (50+100 against 200).
		{"overdue busy unit", true, 500, []schedRun{{next: 1, end: 4, busy: true}, {next: 5, end: 7, busy: true, cur: 4, at: 450}, {next: 7, end: 7}},
			[]uint64{99, 99, 99, 99, 99, 99, 99}, 2, schedRun{next: 3, end: 4}, 0},
		// A run not started has its start ahead: 50+10+50 = 110, the
		// thief's 50+50 = 100 is sooner.
		{"run not started", true, 0, []schedRun{{next: 0, end: 2}, {next: 2, end: 2}}, []uint64{9, 49}, 1, schedRun{next: 1, end: 2}, 0},
		// No times: costs, the busy unit half done (5), and of the
		// equal finishes (6) taking unit 2 or units 1 and 2, unit 2.
		{"tie", false, 0, []schedRun{{next: 1, end: 3, busy: true}, {next: 3, end: 3}}, []uint64{9, 0, 4}, 1, schedRun{next: 2, end: 3}, 0},
		// No times: an empty unit counts 1, worth a free start.
		{"empty units", false, 0, []schedRun{{next: 0, end: 2}, {next: 2, end: 2}}, []uint64{0, 0}, 1, schedRun{next: 1, end: 2}, 0},
		// Three jobs: the one with the most left is the victim.
		{"most left", false, 0, []schedRun{{next: 0, end: 2}, {next: 2, end: 6}, {next: 6, end: 6}}, []uint64{1, 1, 5, 5, 5, 5}, 2, schedRun{next: 4, end: 6}, 1},
	} {
		clk.t = tc.now
		s := sched(tc.runs, tc.cost...)
		if tc.timed {
			measured(s)
		}
		if !tc.timed {
			s.cst = 100 // segments done, and the clock did not move
		}
		vicEnd := s.runs[tc.wantVic].end
		got := s.steal(tc.thief)
		if got != (tc.want != schedRun{}) {
			t.Errorf("%s: steal %v, runs %+v", tc.name, got, s.runs)
			continue
		}
		if got && (s.runs[tc.thief] != tc.want || s.runs[tc.wantVic].end != tc.want.next) || !got && s.runs[tc.wantVic].end != vicEnd {
			t.Errorf("%s: runs %+v, want the thief's %+v", tc.name, s.runs, tc.want)
		}
	}
}

// TestChainStartsCountRestarts: a run that starts mid-chain pays start
// (a restore at its checkpoint: reader.Trace.RunStartCost), so the runs
// before it take that much more of the segments; a run at a chain's
// first segment pays none.
func TestChainStartsCountRestarts(t *testing.T) {
	ten := func(n int) []uint64 {
		lens := make([]uint64, n)
		for i := range lens {
			lens[i] = 10
		}
		return lens
	}
	never := func(int) bool { return false }
	for _, c := range []struct {
		n, jobs int
		start   uint64
		apart   func(int) bool
		want    []int
	}{
		{20, 2, 0, never, []int{0, 10}},
		// 20 segments of 10 and a start of 20: 110 each, the second
		// job's 9 segments and its start.
		{20, 2, 20, never, []int{0, 11}},
		{20, 2, 40, never, []int{0, 12}},
		// Three jobs, 240: 80 each.
		{20, 3, 20, never, []int{0, 8, 14}},
		// Two chains of 10: each run starts at a chain's first
		// segment, where no restore is paid.
		{20, 2, 40, func(i int) bool { return i == 10 }, []int{0, 10}},
	} {
		start := make([]uint64, c.n)
		for i := range start {
			start[i] = c.start
		}
		if got := chainStarts(ten(c.n), c.jobs, start, c.apart); !slices.Equal(got, c.want) {
			t.Errorf("%d segments of 10, %d jobs, start %d: runs start at %v, want %v", c.n, c.jobs, c.start, got, c.want)
		}
	}
	// A start that costs by where it is (RunStartCosts: the frames its
	// restore decompresses): nothing before segment 12, 100 from there
	// (memory the program filled). The first split (by the mean, 42)
	// starts the second job at 12, which would pay 100: counted, the
	// jobs split 150 and 50 + 100 at 15.
	start := make([]uint64, 20)
	for i := 12; i < 20; i++ {
		start[i] = 100
	}
	if got, want := chainStarts(ten(20), 2, start, never), []int{0, 15}; !slices.Equal(got, want) {
		t.Errorf("starts of 0 then 100 from 12: runs start at %v, want %v", got, want)
	}
}

// TestPrefetchJobStartsPrepares: the preparations for guest code
// (x86.OnFirstDecode) run in the serial part of a run with jobs, before
// any job decodes a block; with no jobs (a script that reads memory)
// they wait for the first decoded block as before.
func TestPrefetchJobStartsPrepares(t *testing.T) {
	path := recordCalls(t, 2500)
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	saved := x86.OnFirstDecode
	defer func() { x86.OnFirstDecode = saved }()
	calls := 0
	x86.OnFirstDecode = func() { calls++ }
	prefetchJobStarts(tr, 0)
	if calls != 0 {
		t.Errorf("no jobs: the preparations ran %d times", calls)
	}
	prefetchJobStarts(tr, 2)
	if calls != 1 {
		t.Errorf("two jobs: the preparations ran %d times, want 1", calls)
	}
}

// TestStealAtVictimsRate: what is left of a victim's run counts at the
// rate its latest chained segments took, not the average of all: late
// segments that cost twice their estimate make a steal worth a start
// where the average says the victim is about to finish.
func TestStealAtVictimsRate(t *testing.T) {
	clk := &fakeClock{t: 1050}
	for _, slow := range []bool{false, true} {
		// Job 0 is done; job 1 is 50 ns into unit 4 (claimed at 1000),
		// unit 5 left. The model: 1 ns per cost, a start of 50.
		s := &chainSched{cost: []uint64{99, 99, 99, 99, 99, 99}, now: clk.now,
			runs: []schedRun{{next: 4, end: 4}, {next: 5, end: 6, busy: true, cur: 4, at: 1000}}}
		s.stop.Store(6)
		s.dur, s.cst, s.dur0, s.cst0, s.n0 = 1000, 1000, 150, 100, 1
		if slow {
			// Its units took 2 ns per cost: 150 left of unit 4, 200
			// of unit 5; a start and unit 5 (250) finish sooner.
			s.recent = []float64{1, 2}
		}
		// At the average: 50 and 100 left, no sooner than a start and
		// unit 5 (150).
		got := s.steal(0)
		if got != slow {
			t.Errorf("slow %v: steal %v, runs %+v", slow, got, s.runs)
		}
		if got && (s.runs[0] != schedRun{next: 5, end: 6} || s.runs[1].end != 5 || s.recent[0] != 2) {
			t.Errorf("slow %v: runs %+v, recent %v", slow, s.runs, s.recent)
		}
	}
	// done keeps each job's recent rate: the mean of its last chained
	// unit's and the one before.
	s := &chainSched{cost: []uint64{99, 99, 99, 99}, now: clk.now, runs: []schedRun{{next: 0, end: 4}}}
	s.stop.Store(4)
	for i, at := range []int64{0, 500, 600, 900} {
		clk.t = at
		s.claim(0, i)
	}
	clk.t = 1000
	s.done(0)
	// Unit 0 fresh (not counted), then 100, 300 and 100 ns for 100
	// each: 1, then (1+3)/2 = 2, then (2+1)/2 = 1.5.
	if s.recent[0] != 1.5 {
		t.Errorf("recent rate %v, want 1.5", s.recent[0])
	}
}
