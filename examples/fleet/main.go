// Command fleet is an example of a query over many recordings written in
// Go with package fleet, as FayLINQ's are written in .NET: the
// distribution of a function's call durations (in instructions, between
// entry and return) across every recording the patterns name, printed
// as a DTrace quantize, and the number of calls per recording.
//
//	go run ./examples/fleet -func work 'traces/*.ttd'
//	go run ./examples/fleet -func work -runner flink -endpoint localhost:8099 \
//	    -environment_type DOCKER -out gs://bucket/tmp 'gs://bucket/traces/*.ttd'
//
// Only the function's code is hooked while the recordings re-simulate
// (the filter is pushed down); the rest of the pipeline is ordinary Beam
// transforms.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"ttd/fleet"
	_ "ttd/third_party/prism" // Beam's prism runner, listening on loopback only
)

// Bucket is a power-of-two range of durations and how many calls fell
// in it.
type Bucket struct {
	Lo    uint64
	Count int
}

// PerTrace is the number of calls in one recording.
type PerTrace struct {
	Trace string
	Calls int
}

func durationFn(c fleet.Call) (uint64, bool) {
	if !c.Returned {
		return 0, false
	}
	d := c.Return - c.Entry // > 0: the return follows the entry
	return 1 << (bits.Len64(d) - 1), true
}

func bucketFn(c fleet.Call, emit func(uint64)) {
	if b, ok := durationFn(c); ok {
		emit(b)
	}
}

func traceFn(c fleet.Call) string { return c.Trace }

func toBucketFn(lo uint64, n int) Bucket { return Bucket{Lo: lo, Count: n} }
func toTraceFn(t string, n int) PerTrace { return PerTrace{Trace: t, Calls: n} }

func init() {
	register.Function2x0(bucketFn)
	register.Emitter1[uint64]()
	register.Function1x1(traceFn)
	register.Function2x1(toBucketFn)
	register.Function2x1(toTraceFn)
}

func main() {
	fn := flag.String("func", "", "the function whose calls to measure (required)")
	out := flag.String("out", "", "where the workers write the results (a directory or URL both they and this program see; default: a temporary directory)")
	flag.Parse()
	beam.Init()
	if *fn == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: fleet -func NAME [BEAM FLAGS] TRACE_PATTERN...")
		os.Exit(2)
	}
	fleet.Quiet()
	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "fleet-example-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	buckets, traces := filepath.Join(dir, "buckets.jsonl"), filepath.Join(dir, "traces.jsonl")
	if strings.Contains(dir, "://") {
		buckets, traces = dir+"/buckets.jsonl", dir+"/traces.jsonl"
	}

	p, s := beam.NewPipelineWithRoot()
	calls, err := fleet.Open(s, fleet.Options{}, flag.Args()...).Calls(s, *fn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	hist := beam.ParDo(s, toBucketFn, stats.Count(s, beam.ParDo(s, bucketFn, calls)))
	perTrace := beam.ParDo(s, toTraceFn, stats.Count(s, beam.ParDo(s, traceFn, calls)))
	fleet.WriteJSON(s, buckets, hist)
	fleet.WriteJSON(s, traces, perTrace)
	ctx := context.Background()
	runner := *runners.Runner
	if runner == "" {
		runner = "prism"
	}
	if _, err := beam.Run(ctx, runner, p); err != nil {
		fmt.Fprintf(os.Stderr, "fleet: %s\n", fleet.Cause(err))
		os.Exit(1)
	}

	bs, err := fleet.ReadJSON[Bucket](ctx, buckets)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ts, err := fleet.ReadJSON[PerTrace](ctx, traces)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Trace < ts[j].Trace })
	for _, t := range ts {
		fmt.Printf("%-50s %8d calls\n", t.Trace, t.Calls)
	}
	fmt.Printf("\n  %s: duration in instructions\n", *fn)
	printQuantize(os.Stdout, bs)
}

// printQuantize prints buckets as DTrace's quantize does.
func printQuantize(w *os.File, bs []Bucket) {
	sort.Slice(bs, func(i, j int) bool { return bs[i].Lo < bs[j].Lo })
	total := 0
	for _, b := range bs {
		total += b.Count
	}
	fmt.Fprintf(w, "%16s  %s %s\n", "value", "------------- Distribution -------------", "count")
	if len(bs) == 0 {
		return
	}
	at := map[uint64]int{}
	for _, b := range bs {
		at[b.Lo] = b.Count
	}
	lo, hi := bs[0].Lo, bs[len(bs)-1].Lo
	row := func(v uint64, n int) {
		bar := 0
		if total > 0 {
			bar = (n*40 + total/2) / total
		}
		fmt.Fprintf(w, "%16d |%-40s %d\n", v, strings.Repeat("@", bar), n)
	}
	if lo > 1 {
		row(lo/2, 0)
	}
	for v := lo; v <= hi; v *= 2 {
		row(v, at[v])
	}
	row(hi*2, 0)
}
