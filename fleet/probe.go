package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"ttd/probe"
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

// probeUnit is one segment of one recording to evaluate.
type probeUnit struct {
	Trace string
	K     int
}

func init() {
	register.DoFn3x1[context.Context, string, func(probeUnit), error](&probeSplitFn{})
	register.Emitter1[probeUnit]()
	register.DoFn2x2[context.Context, probeUnit, string, error](&probeEvalFn{})
}

// probeSplitFn lists a recording's checkpoint segments.
type probeSplitFn struct{}

func (f *probeSplitFn) ProcessElement(ctx context.Context, trace string, emit func(probeUnit)) error {
	segs, err := Split(ctx, trace, false)
	if err != nil {
		return err
	}
	for _, sg := range segs {
		emit(probeUnit{Trace: trace, K: sg.Index})
	}
	return nil
}

// probeEvalFn evaluates one segment to its partial result, as JSON.
type probeEvalFn struct {
	Src   string
	Args  []string
	Quiet bool
}

func (f *probeEvalFn) ProcessElement(ctx context.Context, u probeUnit) (string, error) {
	b, err := bound(Script{f.Src, f.Args, f.Quiet}, u.Trace)
	if err != nil {
		return "", traceErr(u.Trace, err)
	}
	pt, err := b.EvalSegment(u.K, nil)
	if err != nil {
		return "", traceErr(u.Trace, fmt.Errorf("segment %d: %w", u.K, err))
	}
	js, err := json.Marshal(pt)
	return string(js), err
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

func bound(sc Script, trace string) (*probe.Bound, error) {
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
		t, _, _, err := probe.OpenTarget(trace, p.NeedsMemory(), nil)
		if err != nil {
			e.err = err
			return
		}
		e.b, e.err = p.Bind(t)
	})
	return e.b, e.err
}

// ProbeEval returns a probe.EvalFunc that evaluates the units' segments
// in a Beam pipeline run by run (e.g. prism.Execute), the workers
// leaving their partials in a file of tmp (a directory or URL both this
// program and the workers see). The units' recordings must be named by
// paths the workers can open.
func ProbeEval(ctx context.Context, sc Script, tmp string, run func(*beam.Pipeline) error) probe.EvalFunc {
	return func(units []probe.Unit, _ map[string]probe.Value) ([]*probe.Partial, error) {
		var traces []string
		seen := map[string]bool{}
		for _, u := range units {
			if n := u.B.T.Name; !seen[n] {
				seen[n] = true
				traces = append(traces, n)
			}
		}
		path := strings.TrimSuffix(tmp, "/") + "/partials.jsonl"
		if !hasScheme(tmp) {
			path = filepath.Join(tmp, "partials.jsonl")
		}
		p, s := beam.NewPipelineWithRoot()
		s = s.Scope("fleet.Probe")
		segs := beam.ParDo(s, &probeSplitFn{}, beam.CreateList(s, traces))
		parts := beam.ParDo(s, &probeEvalFn{Src: sc.Src, Args: sc.Args, Quiet: sc.Quiet}, beam.Reshuffle(s, segs))
		WriteJSON(s, path, parts)
		if err := run(p); err != nil {
			return nil, fmt.Errorf("%s", Cause(err))
		}
		lines, err := ReadJSON[string](ctx, path)
		if err != nil {
			return nil, err
		}
		if !hasScheme(path) {
			os.Remove(path)
		}
		byUnit := map[probeUnit]*probe.Partial{}
		for _, l := range lines {
			var pt probe.Partial
			if err := json.Unmarshal([]byte(l), &pt); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			byUnit[probeUnit{pt.Trace, pt.First}] = &pt
		}
		out := make([]*probe.Partial, len(units))
		for i, u := range units {
			out[i] = byUnit[probeUnit{u.B.T.Name, u.K}]
			if out[i] == nil {
				return nil, fmt.Errorf("%s: the pipeline returned no result for segment %d", u.B.T.Name, u.K)
			}
		}
		return out, nil
	}
}
