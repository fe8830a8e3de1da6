package probe

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"ttd/reader"
)

// Merge combines two partial results of consecutive or non-consecutive
// ranges of the same trace, or of different traces: the aggregations
// fold by the merge law (agg.go), records concatenate in (trace,
// position) order. It is associative and commutative (the order comes
// from the partials' traces and positions, not from the arguments). The
// carried state (Assumed, Writes) is composed only for adjacent
// segments; the local runner fixes segments up before merging (see
// doc.go), and a runner that skips the fix-up must only merge partials
// of programs that do not CarriesState.
func Merge(a, b *Partial) *Partial {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	if partialLess(b, a) {
		a, b = b, a
	}
	out := &Partial{Trace: a.Trace, From: a.From, To: b.To, First: a.First, Last: b.Last, Aggs: map[string]AggSeries{},
		Faults: a.Faults + b.Faults, Assumed: map[string]Value{}, Writes: map[string]Value{}}
	if a.Trace != b.Trace {
		out.Trace = a.Trace + "+" + b.Trace
	}
	for name, s := range a.Aggs {
		out.Aggs[name] = s
	}
	for name, s := range b.Aggs {
		out.Aggs[name] = mergeSeries(out.Aggs[name], s)
	}
	out.Records = append(append(make([]Record, 0, len(a.Records)+len(b.Records)), a.Records...), b.Records...)
	slices.SortStableFunc(out.Records, func(x, y Record) int {
		if x.Trace != y.Trace {
			return strings.Compare(x.Trace, y.Trace)
		}
		if x.Seg != y.Seg {
			return x.Seg - y.Seg
		}
		return int(x.Seq) - int(y.Seq)
	})
	out.Exit = a.Exit
	if out.Exit == nil {
		out.Exit = b.Exit
	}
	// State: b reads what a wrote; what b assumed and a did not write
	// is assumed by the whole.
	for k, v := range a.Assumed {
		out.Assumed[k] = v
	}
	for k, v := range b.Assumed {
		if _, w := a.Writes[k]; !w {
			if _, seen := out.Assumed[k]; !seen {
				out.Assumed[k] = v
			}
		}
	}
	out.Writes = composeState(a.Writes, b.Writes, b.Ended)
	out.Ended = append(append([]int(nil), a.Ended...), b.Ended...)
	return out
}

func partialLess(a, b *Partial) bool {
	if a.Trace != b.Trace {
		return a.Trace < b.Trace
	}
	return a.From < b.From
}

// composeState applies writes after state, dropping the threads that
// ended first. The result is a new map.
func composeState(state, writes map[string]Value, ended []int) map[string]Value {
	out := make(map[string]Value, len(state)+len(writes))
	gone := map[string]bool{}
	for _, t := range ended {
		gone[fmt.Sprintf("t:%d:", t)] = true
	}
	for k, v := range state {
		if strings.HasPrefix(k, "t:") {
			if i := strings.IndexByte(k[2:], ':'); i >= 0 && gone[k[:i+3]] {
				continue
			}
		}
		out[k] = v
	}
	for k, v := range writes {
		out[k] = v
	}
	for k, v := range out {
		if v.isZero() {
			delete(out, k) // assigning 0 frees a D variable
		}
	}
	return out
}

// consistent reports whether a partial's assumptions hold in state.
func consistent(p *Partial, state map[string]Value) bool {
	for k, v := range p.Assumed {
		if !state[k].same(v) {
			return false
		}
	}
	return true
}

// RunOptions configure a local run.
type RunOptions struct {
	// Jobs is the number of segments evaluated at a time (0: one per
	// CPU).
	Jobs int
	// Progress, when set, is told as segments finish.
	Progress func(done, total int)
}

// Outcome is the result of a run: the output in order and the final
// aggregations.
type Outcome struct {
	Records []Record
	Aggs    map[string]AggTable
	// Printed names the aggregations printa showed (they are not
	// printed again at the end).
	Printed map[string]bool
	Faults  int64
	Exit    *ExitInfo
	// Reruns counts the segments the fix-up pass evaluated again.
	Reruns int
	// Segments counts the segments evaluated in the parallel pass.
	Segments int
	p        *Program
	sy       symbolizer
	pr       printer
}

// Unit is one segment of one bound target, the unit of the parallel
// evaluation pass.
type Unit struct {
	B *Bound
	K int
}

// EvalFunc evaluates units (the parallel pass) and returns one partial
// per unit, in the order given. begin is the state BEGIN left, the true
// initial state of units[0]; an evaluator may use it for units[0] or
// evaluate every unit from the unset state (nil). A nil partial (a unit
// skipped, e.g. after an exit) is evaluated again by the fix-up pass, as
// is any partial whose assumptions about the carried state do not hold.
type EvalFunc func(units []Unit, begin map[string]Value) ([]*Partial, error)

// Run evaluates the program over the targets (in order, as one
// execution after another): BEGIN, every segment in parallel, the fix-up
// pass, the merge, END.
func (p *Program) Run(bs []*Bound, opts RunOptions) (*Outcome, error) {
	// A trace that logs no reads and has no checkpoint memory file yet
	// would have it built by an index pass before its segments could be
	// evaluated apart: one replay from the start writes it on the way
	// instead (reader.IndexAlong), and the next run is the parallel one.
	for _, b := range bs {
		if b.T != nil && b.T.Trace != nil && !b.T.Trace.Indexed() && b.T.Trace.IndexAlong() {
			opts.Jobs = 1
		}
	}
	return p.RunWith(bs, func(units []Unit, state map[string]Value) ([]*Partial, error) {
		if sc := newChainSched(units, opts.Jobs); sc != nil {
			return sc.eval(units, state, opts)
		}
		parts := make([]*Partial, len(units))
		errs := make([]error, len(units))
		var exitAt atomic.Int64 // first unit known to exit (len: none)
		exitAt.Store(int64(len(units)))
		var done atomic.Int64
		var mu sync.Mutex
		reader.Parallel(len(units), opts.Jobs, func(i int) {
			if int64(i) > exitAt.Load() {
				return
			}
			var init map[string]Value
			if i == 0 {
				init = state
			}
			parts[i], errs[i] = units[i].B.EvalSegment(units[i].K, init)
			if errs[i] == nil && parts[i].Exit != nil {
				mu.Lock()
				if int64(i) < exitAt.Load() {
					exitAt.Store(int64(i))
				}
				mu.Unlock()
			}
			if opts.Progress != nil {
				opts.Progress(int(done.Add(1)), len(units))
			}
		})
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return parts, nil
	})
}

// chainRun is units[i:i+n], consecutive segments of one target that
// one re-simulation evaluates (Bound.evalChain).
type chainRun struct{ i, n int }

// chainRuns splits the units into about jobs runs of consecutive
// segments of equal estimated costs (unitCosts), one re-simulation each,
// when their programs chain (nil: every unit on its own). A run never
// spans two targets.
func chainRuns(units []Unit, jobs int) []chainRun {
	cost, ok := unitCosts(units)
	if !ok {
		return nil
	}
	return costRuns(units, cost, jobs)
}

// costRuns is chainRuns over the units' estimated costs, a run that
// starts at a checkpoint past its target's first paying what a start
// there costs (reader.Trace.RunStartCosts).
func costRuns(units []Unit, cost []uint64, jobs int) []chainRun {
	var startCosts []uint64 // (one job starts nowhere else)
	if jobs != 1 {
		startCosts = unitStartCosts(units)
	}
	starts := chainStarts(cost, jobs, startCosts, func(i int) bool { return !follows(units, i) })
	runs := make([]chainRun, len(starts))
	for r, i := range starts {
		end := len(units)
		if r+1 < len(starts) {
			end = starts[r+1]
		}
		runs[r] = chainRun{i: i, n: end - i}
	}
	return runs
}

// unitStartCosts is, by unit, what a run that starts there costs more
// than its segments (reader.Trace.RunStartCosts of its target).
func unitStartCosts(units []Unit) []uint64 {
	out := make([]uint64, len(units))
	var b *Bound
	var bc []uint64
	for i, u := range units {
		if u.B != b {
			b, bc = u.B, u.B.T.Trace.RunStartCosts(u.B.cps)
		}
		out[i] = bc[u.K]
	}
	return out
}

// chainStarts splits segments of lens costs (instructions, or estimated
// costs) into about jobs runs of consecutive segments with equal sums,
// and returns where each run starts: a new run begins at segment 0,
// where apart(i) says segment i does not follow segment i-1, and where
// the runs so far come nearest to their share of the total. A run that
// begins elsewhere (mid-chain: a re-simulation from segment i's
// checkpoint) costs start[i] more (nil: nothing), which the shares
// count: of two jobs over one chain, the first takes half of the total
// and the second's start, the second the rest and its start. The total
// counts the starts of the split before (the first time, jobs-1 of the
// mean), until the split no longer changes (a start deeper in the
// trace may restore more).
func chainStarts(lens []uint64, jobs int, start []uint64, apart func(i int) bool) []int {
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var sum, mean uint64
	for i, n := range lens {
		sum += n
		if i > 0 && start != nil {
			mean += start[i]
		}
	}
	if len(lens) > 1 {
		mean /= uint64(len(lens) - 1)
	}
	startAt := func(i int) uint64 {
		if start == nil {
			return 0
		}
		return start[i]
	}
	extra := uint64(jobs-1) * mean // at most jobs-1 runs start mid-chain
	var starts []int
	for range 4 {
		total := sum + extra
		starts = starts[:0]
		var done, paid uint64 // the costs so far, with the mid-chain starts
		for i, n := range lens {
			k := len(starts)
			if k == 0 || apart(i) {
				starts = append(starts, i)
			} else if k < jobs && (done+n/2)*uint64(jobs) >= total*uint64(k) {
				starts = append(starts, i)
				done += startAt(i)
				paid += startAt(i)
			}
			done += n
		}
		if paid == extra {
			break
		}
		extra = paid
	}
	return starts
}

// RunWith is Run with the parallel pass done by eval (another runner's
// workers, e.g. a Beam pipeline): BEGIN, eval, then here the fix-up pass
// in order, the fold of records and aggregations in (trace, segment,
// sequence) order, and END, so that every runner's output is the local
// runner's.
func (p *Program) RunWith(bs []*Bound, eval EvalFunc) (*Outcome, error) {
	if len(bs) == 0 {
		return nil, fmt.Errorf("probe: no trace")
	}
	var units []Unit
	for _, b := range bs {
		if b.P != p {
			return nil, fmt.Errorf("probe: bound to another program")
		}
		for k := 0; k < b.Segments(); k++ {
			units = append(units, Unit{b, k})
		}
	}
	out := &Outcome{Aggs: map[string]AggTable{}, Printed: map[string]bool{}, p: p}
	if bs[0].T.Syms != nil {
		out.sy = bs[0].T.Syms
	}
	// BEGIN.
	schedf("run: %d units", len(units))
	begin := specialEval(bs[0], bs[0].begin, nil, 0)
	state := composeState(nil, begin.Writes, nil)

	parts := make([]*Partial, len(units))
	if begin.Exit == nil {
		got, err := eval(units, state)
		if err != nil {
			return nil, err
		}
		if len(got) != len(units) {
			return nil, fmt.Errorf("probe: %d partials for %d segments", len(got), len(units))
		}
		parts = got
	}
	for i, pt := range parts {
		if pt == nil {
			continue
		}
		if pt.Trace != units[i].B.T.Name || pt.First != units[i].K || pt.Last != units[i].K {
			return nil, fmt.Errorf("probe: partial of %s segment %d given for %s segment %d", pt.Trace, pt.First, units[i].B.T.Name, units[i].K)
		}
		out.Segments++
	}
	// The fix-up pass: in order, a segment whose assumptions about the
	// carried state do not hold is evaluated again from the true state.
	all := []*Partial{begin}
	if begin.Exit == nil {
		for i, u := range units {
			pt := parts[i]
			if pt == nil || !consistent(pt, state) {
				if pt != nil {
					out.Reruns++
				}
				var err error
				pt, err = u.B.EvalSegment(u.K, state)
				if err != nil {
					return nil, err
				}
			}
			all = append(all, pt)
			state = composeState(state, pt.Writes, pt.Ended)
			if pt.Exit != nil {
				break
			}
		}
	}
	for _, pt := range all {
		out.fold(pt)
	}
	out.finishEnd(bs[len(bs)-1], state, bs[len(bs)-1].T.Trace.End())
	schedf("merged, %d reruns", out.Reruns)
	return out, nil
}

// finishEnd runs END with the final state and aggregations, at the
// position of exit() or else at end; exit()'s status stays the first.
func (o *Outcome) finishEnd(b *Bound, state map[string]Value, end uint64) {
	if o.Exit != nil {
		end = o.Exit.Pos
	}
	exit := o.Exit
	o.fold(specialEval(b, b.end, state, end))
	if exit != nil {
		o.Exit = exit
	}
}

// specialEval runs BEGIN or END clauses.
func specialEval(b *Bound, cls []*Clause, state map[string]Value, pos uint64) *Partial {
	s := &segEval{b: b, k: -1, part: newPartial(b.T.Name, -1, pos, pos), state: map[string]Value{}, init: state, specs: map[int]*spec{}}
	bp := &boundProbe{Prov: "", Name: "BEGIN"}
	if pos != 0 || state != nil {
		bp.Name = "END"
		// END reads the memory the program left: what the trace's
		// index learned over every segment (memory.go).
		s.k, s.lookback = len(b.cps), b.T.Index != nil
	}
	for _, cl := range cls {
		ev := &event{pos: pos, tid: b.pid, bp: bp}
		s.runClause(cl, ev)
		if s.stopped {
			break
		}
	}
	s.k = -1
	s.seal()
	return s.part
}

// fold adds a partial's output and aggregations to the outcome, in
// order: records and aggregation operations by sequence number.
func (o *Outcome) fold(pt *Partial) {
	if pt.Exit != nil && o.Exit == nil {
		o.Exit = pt.Exit
	}
	o.Faults += pt.Faults
	type op struct {
		seq  uint64
		agg  string
		part *AggPart
		rec  *Record
	}
	var ops []op
	for name, s := range pt.Aggs {
		for i := range s {
			ops = append(ops, op{agg: name, part: &s[i]})
		}
	}
	for i := range pt.Records {
		ops = append(ops, op{seq: pt.Records[i].Seq, rec: &pt.Records[i]})
	}
	key := func(x op) (string, int, uint64) {
		if x.part != nil {
			return x.part.order()
		}
		return x.rec.Trace, x.rec.Seg, x.rec.Seq
	}
	sort.SliceStable(ops, func(i, j int) bool {
		ti, si, qi := key(ops[i])
		tj, sj, qj := key(ops[j])
		if ti != tj {
			return ti < tj
		}
		if si != sj {
			return si < sj
		}
		if qi != qj {
			return qi < qj
		}
		return ops[i].part != nil // the snapshot before its printa record
	})
	for _, x := range ops {
		if x.rec != nil {
			r := *x.rec
			if r.Kind == RecPrinta {
				var b strings.Builder
				d := o.p.aggs[r.Agg]
				t := o.Aggs[r.Agg]
				if r.Fmt == "" {
					printAgg(&b, d, t)
				} else {
					printaFmt(&b, d, t, r.Fmt, o.sy)
				}
				r.Text = b.String()
				o.Printed[r.Agg] = true
			}
			o.Records = append(o.Records, r)
			continue
		}
		d := o.p.aggs[x.agg]
		t := o.table(x.agg)
		t.merge(x.part.Table)
		o.Aggs[x.agg] = d.apply(t, x.part.Op, x.part.N)
	}
}

func (o *Outcome) table(name string) AggTable {
	t := o.Aggs[name]
	if t == nil {
		t = AggTable{}
		o.Aggs[name] = t
	}
	return t
}

// Print writes the outcome as dtrace does: the records in position
// order (run-time faults to errw), then every aggregation printa did not
// show. Unless quiet, records carry the position and thread, so that
// `ttd query TRACE --at POS` revisits them; the column header comes
// before the first such line. A live run that streamed its records
// (Live.Stream) prints here only what is left: END's records and the
// aggregations.
func (o *Outcome) Print(w, errw io.Writer) {
	p := o.p
	o.printRecords(w, errw)
	for _, name := range p.aggOrder {
		if o.Printed[name] {
			continue
		}
		printAgg(w, p.aggs[name], o.Aggs[name])
	}
	if o.Faults > 0 {
		fmt.Fprintf(errw, "ttd probe: %d error(s) on enabled probes\n", o.Faults)
	}
}

// printer is where printing the records got to: a live run prints them
// as they come, then the rest at the end.
type printer struct {
	n      int  // records printed
	header bool // the column header was printed
	depth  map[int]int
}

// printRecords prints the records not printed yet.
func (o *Outcome) printRecords(w, errw io.Writer) {
	p, pr := o.p, &o.pr
	if pr.depth == nil {
		pr.depth = map[int]int{}
	}
	for _, r := range o.Records[pr.n:] {
		pr.n++
		if !p.quiet && !pr.header && (r.Kind == RecText || r.Kind == RecFlow) {
			pr.header = true
			label := "PROBE"
			if p.flowindent {
				label = "FUNCTION"
			}
			fmt.Fprintf(w, "%-10s %6s  %s\n", "POS", "TID", label)
		}
		switch r.Kind {
		case RecFault:
			fmt.Fprintf(errw, "ttd probe: %s\n", r.Text)
		case RecPrinta:
			fmt.Fprint(w, r.Text)
		case RecFlow:
			ind := 0
			if r.Entry {
				ind = pr.depth[r.Tid]
				pr.depth[r.Tid]++
			} else {
				pr.depth[r.Tid] = max(pr.depth[r.Tid]-1, 0)
				ind = pr.depth[r.Tid]
			}
			arrow := "<- "
			if r.Entry {
				arrow = "-> "
			}
			fmt.Fprintf(w, "%-10d %6d  %s%s%s%s\n", r.Pos, r.Tid, strings.Repeat("  ", ind), arrow, r.Label, r.Text)
		default:
			if p.quiet {
				fmt.Fprint(w, r.Text)
			} else {
				sep := ""
				if r.Text != "" && r.Text[0] != ' ' {
					sep = " " // printf's text, apart from the probe
				}
				fmt.Fprintf(w, "%-10d %6d  %s%s%s\n", r.Pos, r.Tid, r.Label, sep, r.Text)
			}
		}
	}
}

// ExitCode is the status exit() asked for (0 without).
func (o *Outcome) ExitCode() int {
	if o.Exit != nil {
		return o.Exit.Code
	}
	return 0
}

// Finish turns partial results into an outcome, for runners that
// evaluate segments themselves (Beam): BEGIN's output first, then the
// partials merged (in any order or grouping), then END with the final
// aggregations. It does no fix-up: for programs that CarriesState, the
// partials must come from segments evaluated with their true initial
// state (see doc.go). b is any of the bound targets (for BEGIN and
// END's built-ins).
func (p *Program) Finish(b *Bound, parts ...*Partial) *Outcome {
	return p.FinishAcross(b, b, parts...)
}

// FinishAcross is Finish over several targets taken as one execution
// after another, as Run takes them: BEGIN runs with first, END with last
// (its pos is last's end), so that its output is Run's.
func (p *Program) FinishAcross(first, last *Bound, parts ...*Partial) *Outcome {
	out := &Outcome{Aggs: map[string]AggTable{}, Printed: map[string]bool{}, p: p}
	if first.T.Syms != nil {
		out.sy = first.T.Syms
	}
	b := first
	begin := specialEval(b, b.begin, nil, 0)
	out.fold(begin)
	var all *Partial
	for _, pt := range parts {
		all = Merge(all, pt)
	}
	state := composeState(nil, begin.Writes, nil)
	if all != nil {
		out.fold(all)
		state = composeState(state, all.Writes, all.Ended)
	}
	out.finishEnd(last, state, last.T.Trace.End())
	return out
}
