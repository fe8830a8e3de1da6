package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"ttd/probe"
	"ttd/reader"
)

// Probe scripts over many recordings: the pipeline does the parallel
// evaluation pass only (every segment from the unset state, as the
// local runner's workers do), and probe.Program.RunWith does the rest in
// the program that built it (the fix-up pass for scripts that carry
// state across segments, the fold in (trace, segment, sequence) order,
// BEGIN and END), so that the output is the local runner's, byte for
// byte.

// Script is a probe script as the workers compile it.
type Script struct {
	Src   string
	Args  []string
	Quiet bool
}

// Compile compiles the script as the workers do.
func (sc Script) Compile() (*probe.Program, error) {
	p, err := probe.Compile(sc.Src, sc.Args)
	if err != nil {
		return nil, err
	}
	if sc.Quiet {
		p.SetQuiet()
	}
	return p, nil
}

// probeTrace is one recording of the run: its place (Ord) and name.
type probeTrace struct {
	Ord  int
	Name string
}

// probeUnit is one segment of one recording to evaluate.
type probeUnit struct {
	Ord   int
	Trace string
	K     int
}

func init() {
	register.DoFn3x1[context.Context, probeTrace, func(probeUnit), error](&probeSplitFn{})
	register.Emitter1[probeUnit]()
	register.DoFn2x2[context.Context, probeUnit, ProbePart, error](&probeEvalFn{})
	register.Function1x2(probePartJSONFn)
}

// probeSplitFn lists a recording's checkpoint segments.
type probeSplitFn struct{}

func (f *probeSplitFn) ProcessElement(ctx context.Context, tr probeTrace, emit func(probeUnit)) error {
	segs, err := Split(ctx, tr.Name, false)
	if err != nil {
		return err
	}
	for _, sg := range segs {
		emit(probeUnit{Ord: tr.Ord, Trace: tr.Name, K: sg.Index})
	}
	return nil
}

// probeEvalFn evaluates one segment to its partial result, the trace it
// carries renamed to its place in the run (traceKey).
type probeEvalFn struct {
	Src   string
	Args  []string
	Quiet bool
}

func (f *probeEvalFn) ProcessElement(ctx context.Context, u probeUnit) (ProbePart, error) {
	b, err := bound(ctx, Script{f.Src, f.Args, f.Quiet}, u.Trace)
	if err != nil {
		return ProbePart{}, traceErr(u.Trace, err)
	}
	pt, err := b.EvalSegment(u.K, nil)
	if err != nil {
		return ProbePart{}, traceErr(u.Trace, fmt.Errorf("segment %d: %w", u.K, err))
	}
	renameTrace(pt, traceKey(u.Ord))
	return ProbePart{Part: pt}, nil
}

func probePartJSONFn(p ProbePart) (string, error) {
	b, err := json.Marshal(p.Part)
	return string(b), err
}

// A worker binds the script to each recording once; the bound programs
// stay for the worker's life (a worker serves one job on prism; the
// recordings stay open, closed at exit).
var bounds = struct {
	sync.Mutex
	m map[string]*boundEntry
}{m: map[string]*boundEntry{}}

type boundEntry struct {
	once sync.Once
	b    *probe.Bound
	err  error
}

func bound(ctx context.Context, sc Script, trace string) (*probe.Bound, error) {
	key := fmt.Sprintf("%q %q %v %s", sc.Src, sc.Args, sc.Quiet, trace)
	bounds.Lock()
	e := bounds.m[key]
	if e == nil {
		e = &boundEntry{}
		bounds.m[key] = e
	}
	bounds.Unlock()
	e.once.Do(func() {
		p, err := sc.Compile()
		if err != nil {
			e.err = err
			return
		}
		var t *probe.Target
		if p.NeedsMemory() {
			t, _, _, err = OpenTarget(ctx, trace, true, nil)
		} else {
			t, err = workerTarget(ctx, trace)
		}
		if err != nil {
			e.err = err
			return
		}
		e.b, e.err = p.Bind(t)
	})
	return e.b, e.err
}

// ProbePlan says how RunProbe evaluated a script.
type ProbePlan int

const (
	// PlanCombine: every segment evaluated on the workers and the
	// partial results merged there by ProbeCombineFn; this program
	// receives one merged partial.
	PlanCombine ProbePlan = iota
	// PlanSegments: every segment's partial comes back to this program,
	// which fixes up the segments whose assumptions about the state
	// carried across segments do not hold, and folds them in order
	// (scripts that CarriesState, or that call exit()).
	PlanSegments
)

func (p ProbePlan) String() string {
	if p == PlanCombine {
		return "combine"
	}
	return "segments"
}

// ProbeRun is a probe script to run over many recordings with Beam.
type ProbeRun struct {
	Script  Script
	Program *probe.Program // Script compiled
	// Bound holds the program bound to each recording, in the order
	// the run takes them; their targets' names are what the workers
	// open (paths they see, or URLs of a Beam filesystem).
	Bound []*probe.Bound
	// Tmp is a directory or URL both this program and the workers see,
	// where the workers leave their results.
	Tmp string
	// Run runs a pipeline (prism.Execute, beam.Run with a runner).
	Run func(*beam.Pipeline) error
}

// RunProbe evaluates the script over the recordings as a Beam pipeline
// and returns what the local runner (probe.Program.Run) returns, to be
// printed with Outcome.Print. A script whose clauses carry state across
// segments, or that calls exit(), takes PlanSegments; every other one
// PlanCombine.
func RunProbe(ctx context.Context, r ProbeRun) (*probe.Outcome, ProbePlan, error) {
	p, bs := r.Program, r.Bound
	if len(bs) == 0 {
		return nil, 0, fmt.Errorf("probe: no trace")
	}
	if p.CarriesState() || p.Finish(bs[0]).Exit != nil {
		o, err := p.RunWith(bs, ProbeEval(ctx, r.Script, r.Tmp, r.Run))
		return o, PlanSegments, err
	}
	var trs []probeTrace
	for i, b := range bs {
		trs = append(trs, probeTrace{Ord: i, Name: b.T.Name})
	}
	path := tmpFile(r.Tmp, "combined.jsonl")
	pl, s := beam.NewPipelineWithRoot()
	s = s.Scope("fleet.Probe")
	segs := beam.ParDo(s, &probeSplitFn{}, beam.CreateList(s, trs))
	parts := beam.ParDo(s, &probeEvalFn{Src: r.Script.Src, Args: r.Script.Args, Quiet: r.Script.Quiet}, beam.Reshuffle(s, segs))
	WriteJSON(s, path, CombineProbe(s, parts))
	if err := r.Run(pl); err != nil {
		return nil, 0, fmt.Errorf("%s", Cause(err))
	}
	accs, err := ReadJSON[ProbeResult](ctx, path)
	if err != nil {
		return nil, 0, err
	}
	removeTmp(ctx, path)
	want := 0
	for _, b := range bs {
		want += b.Segments()
	}
	if len(accs) != 1 || accs[0].Segments != want || accs[0].Part == nil {
		n := 0
		for _, a := range accs {
			n += a.Segments
		}
		return nil, 0, fmt.Errorf("probe: the pipeline merged %d segments in %d results; the recordings have %d", n, len(accs), want)
	}
	if accs[0].Part.Exit != nil {
		// exit() in a segment: what follows it must not count, which
		// only the ordered fold knows.
		o, err := p.RunWith(bs, ProbeEval(ctx, r.Script, r.Tmp, r.Run))
		return o, PlanSegments, err
	}
	o := p.FinishAcross(bs[0], bs[len(bs)-1], accs[0].Part)
	o.Segments = want
	return o, PlanCombine, nil
}

// tmpFile names a file in dir (a directory or a URL).
func tmpFile(dir, name string) string {
	if hasScheme(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return filepath.Join(dir, name)
}

// ProbeEval returns a probe.EvalFunc that evaluates the units' segments
// in a Beam pipeline run by run (e.g. prism.Execute), the workers
// leaving their partials in a file of tmp (a directory or URL both this
// program and the workers see): the plan for scripts that carry state
// across segments (PlanSegments).
func ProbeEval(ctx context.Context, sc Script, tmp string, run func(*beam.Pipeline) error) probe.EvalFunc {
	return func(units []probe.Unit, _ map[string]probe.Value) ([]*probe.Partial, error) {
		var trs []probeTrace
		ord := map[*probe.Bound]int{}
		for _, u := range units {
			if _, ok := ord[u.B]; !ok {
				ord[u.B] = len(trs)
				trs = append(trs, probeTrace{Ord: len(trs), Name: u.B.T.Name})
			}
		}
		path := tmpFile(tmp, "partials.jsonl")
		p, s := beam.NewPipelineWithRoot()
		s = s.Scope("fleet.Probe")
		segs := beam.ParDo(s, &probeSplitFn{}, beam.CreateList(s, trs))
		parts := beam.ParDo(s, &probeEvalFn{Src: sc.Src, Args: sc.Args, Quiet: sc.Quiet}, beam.Reshuffle(s, segs))
		textio.Write(s, path, beam.ParDo(s, probePartJSONFn, parts))
		if err := run(p); err != nil {
			return nil, fmt.Errorf("%s", Cause(err))
		}
		lines, err := ReadJSON[*probe.Partial](ctx, path)
		if err != nil {
			return nil, err
		}
		removeTmp(ctx, path)
		type key struct {
			trace string
			k     int
		}
		byUnit := map[key]*probe.Partial{}
		for _, pt := range lines {
			byUnit[key{pt.Trace, pt.First}] = pt
		}
		out := make([]*probe.Partial, len(units))
		for i, u := range units {
			pt := byUnit[key{traceKey(ord[u.B]), u.K}]
			if pt == nil {
				return nil, fmt.Errorf("%s: the pipeline returned no result for segment %d", u.B.T.Name, u.K)
			}
			renameTrace(pt, u.B.T.Name)
			out[i] = pt
		}
		return out, nil
	}
}

// workerTarget opens a recording for a worker's probe evaluation, its
// symbol table shared with the worker's other recordings of the same
// program (symCache): loading libc's DWARF once per recording made prism
// 4 to 6 times slower than the local runner over 20 recordings
// (BenchmarkProbe20).
func workerTarget(ctx context.Context, name string) (*probe.Target, error) {
	path, err := Localize(ctx, name)
	if err != nil {
		return nil, traceErr(name, err)
	}
	tr, err := reader.Open(path)
	if err != nil {
		return nil, traceErr(name, err)
	}
	syms, _ := sharedSymbols(name, tr) // a module without symbols: its probes do not bind, as locally
	return &probe.Target{Name: name, Trace: tr, Syms: syms}, nil
}
