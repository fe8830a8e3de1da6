package fleet

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"ttd/probe"
)

// Fay's partial aggregation as a Beam CombineFn: the segments' partial
// results (probe.Partial) merge by probe's merge law (probe.Merge,
// associative and commutative for aggregations and ordered records)
// wherever the runner chooses, before and after the shuffle (combiner
// lifting), so that only one merged partial per worker crosses the
// network instead of one per segment.
//
// Two things of a partial do not merge in any grouping: the carried
// state (a segment's last writes, which must be applied in segment
// order) and exit() (everything after it must go). The accumulator keeps
// the first apart, one small state-only partial per segment, composed in
// order at ExtractOutput; the second makes RunProbe fall back to the
// per-segment plan.

// ProbePart is one segment's partial result, the CombineFn's input.
type ProbePart struct {
	Part *probe.Partial
}

// ProbeResult is the CombineFn's output: the merged partial of every
// segment, its Writes and Ended the whole run's carried state.
type ProbeResult struct {
	Part     *probe.Partial `json:"part"`
	Segments int            `json:"segments"`
}

// ProbeAcc is the CombineFn's accumulator: the merged
// partial of the segments seen (aggregations, records, faults, exit)
// and, until ExtractOutput composes them, each segment's carried state.
type ProbeAcc struct {
	Part *probe.Partial `json:"part,omitempty"`
	// States holds one partial per segment with only its writes and
	// ended threads (and its place: Trace, From, First).
	States []*probe.Partial `json:"states,omitempty"`
	// Segments counts the segments merged.
	Segments int `json:"segments"`
}

// ProbeCombineFn merges segments' partial results.
type ProbeCombineFn struct{}

// CreateAccumulator is an empty result.
func (ProbeCombineFn) CreateAccumulator() ProbeAcc { return ProbeAcc{} }

// AddInput folds one segment's partial into acc.
func (ProbeCombineFn) AddInput(acc ProbeAcc, in ProbePart) ProbeAcc {
	pt := *in.Part
	st := &probe.Partial{Trace: pt.Trace, From: pt.From, To: pt.To, First: pt.First, Last: pt.Last,
		Writes: pt.Writes, Ended: pt.Ended}
	pt.Writes, pt.Assumed, pt.Ended = nil, nil, nil
	acc.Part = probe.Merge(acc.Part, &pt)
	acc.States = append(acc.States, st)
	acc.Segments++
	return acc
}

// MergeAccumulators is the merge law, for accumulators of any segments.
func (ProbeCombineFn) MergeAccumulators(a, b ProbeAcc) ProbeAcc {
	return ProbeAcc{Part: probe.Merge(a.Part, b.Part), States: append(append([]*probe.Partial(nil), a.States...), b.States...),
		Segments: a.Segments + b.Segments}
}

// ExtractOutput composes the carried state in segment order: the
// result's Writes and Ended are the whole run's.
func (ProbeCombineFn) ExtractOutput(acc ProbeAcc) ProbeResult {
	if acc.Part == nil {
		return ProbeResult{}
	}
	sts := slices.Clone(acc.States)
	slices.SortFunc(sts, func(a, b *probe.Partial) int {
		if c := strings.Compare(a.Trace, b.Trace); c != 0 {
			return c
		}
		return a.First - b.First
	})
	var state *probe.Partial
	for _, st := range sts {
		state = probe.Merge(state, st) // a before b: writes compose in order
	}
	out := *acc.Part
	out.Writes, out.Ended = state.Writes, state.Ended
	return ProbeResult{Part: &out, Segments: acc.Segments}
}

// The coders: JSON, as the partials travel elsewhere (probe.Partial is
// JSON by design). Beam finds a coder's functions by name, so each type
// has its own (not instances of one generic function, which share a
// name).
func encodeProbePart(x ProbePart) ([]byte, error)     { return json.Marshal(x) }
func encodeProbeAcc(x ProbeAcc) ([]byte, error)       { return json.Marshal(x) }
func encodeProbeResult(x ProbeResult) ([]byte, error) { return json.Marshal(x) }

func decodeProbePart(b []byte) (x ProbePart, err error) {
	err = json.Unmarshal(b, &x)
	return x, err
}

func decodeProbeAcc(b []byte) (x ProbeAcc, err error) {
	err = json.Unmarshal(b, &x)
	return x, err
}

func decodeProbeResult(b []byte) (x ProbeResult, err error) {
	err = json.Unmarshal(b, &x)
	return x, err
}

func init() {
	register.Combiner3[ProbeAcc, ProbePart, ProbeResult](&ProbeCombineFn{})
	beam.RegisterCoder(reflect.TypeOf(ProbePart{}), encodeProbePart, decodeProbePart)
	beam.RegisterCoder(reflect.TypeOf(ProbeAcc{}), encodeProbeAcc, decodeProbeAcc)
	beam.RegisterCoder(reflect.TypeOf(ProbeResult{}), encodeProbeResult, decodeProbeResult)
}

// CombineProbe merges a PCollection of ProbePart into one ProbeResult with
// ProbeCombineFn.
func CombineProbe(s beam.Scope, parts beam.PCollection) beam.PCollection {
	return beam.Combine(s.Scope("fleet.CombineProbe"), &ProbeCombineFn{}, parts)
}

// traceKey is the name a recording's partials carry inside the
// pipeline: its place in the run, so that probe.Merge, which orders by
// trace name, orders recordings as the local runner takes them (in the
// order given, not by name), and a recording given twice counts twice.
func traceKey(ord int) string { return fmt.Sprintf("%08d", ord) }

// renameTrace sets the trace name a partial's records and aggregation
// parts carry.
func renameTrace(pt *probe.Partial, name string) {
	pt.Trace = name
	for i := range pt.Records {
		pt.Records[i].Trace = name
	}
	for _, s := range pt.Aggs {
		for i := range s {
			s[i].Trace = name
		}
	}
}
