package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"ttd/probe"
)

// BenchmarkFleet20: Calls("work") over 20 recordings (work.c with 12
// calls, about 1M instructions and 140 checkpoint intervals each), on
// prism, one segment per recording (whole) or one per checkpoint
// interval, against the same work done in this process without Beam
// (local: Split, the calls DoFn and Pair called directly, in order).
// The differences give Beam's overhead per recording and per segment.
func BenchmarkFleet20(b *testing.B) {
	rec := record(b, buildC(b, "work"), "12")
	dir := b.TempDir()
	data, err := os.ReadFile(rec.path)
	if err != nil {
		b.Fatal(err)
	}
	var paths []string
	for i := 0; i < 20; i++ {
		p := filepath.Join(dir, fmt.Sprintf("t%02d.ttd", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	segs, err := Split(context.Background(), paths[0], false)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("20 recordings of %d segments", len(segs))
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, p := range paths {
				segs, err := Split(context.Background(), p, false)
				if err != nil {
					b.Fatal(err)
				}
				var evs []CallEvent
				for _, sg := range segs {
					if err := (&callsFn{Funcs: []string{"work"}}).ProcessElement(context.Background(), sg, func(ev CallEvent) { evs = append(evs, ev) }); err != nil {
						b.Fatal(err)
					}
				}
				n += len(Pair(evs))
			}
			if n != 20*12 {
				b.Fatalf("%d calls", n)
			}
		}
	})
	for _, whole := range []bool{true, false} {
		name := "prism-segments"
		if whole {
			name = "prism-whole"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p, s := beam.NewPipelineWithRoot()
				calls, err := Open(s, Options{Whole: whole}, paths...).Calls(s, "work")
				if err != nil {
					b.Fatal(err)
				}
				WriteJSON(s, filepath.Join(b.TempDir(), "out.jsonl"), calls)
				if err := run(b, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProbe20: a probe script with aggregations over 20 recordings
// (work.c with 12 calls, about 140 checkpoint intervals each), with the
// local runner (N jobs) and on prism (PlanCombine: segments evaluated
// by the workers, partials merged by ProbeCombineFn). The difference
// per recording and per segment is Beam's overhead.
func BenchmarkProbe20(b *testing.B) {
	rec := record(b, buildC(b, "work"), "12")
	dir := b.TempDir()
	data, err := os.ReadFile(rec.path)
	if err != nil {
		b.Fatal(err)
	}
	sc := Script{Src: `fn::work:entry { @n = count(); @q = quantize(arg0); } syscall::write:entry { @w = sum(arg2); }`}
	p, err := sc.Compile()
	if err != nil {
		b.Fatal(err)
	}
	var bs []*probe.Bound
	for i := 0; i < 20; i++ {
		path := filepath.Join(dir, fmt.Sprintf("t%02d.ttd", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		tg, closeT, _, err := probe.OpenTarget(path, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer closeT()
		bd, err := p.Bind(tg)
		if err != nil {
			b.Fatal(err)
		}
		bs = append(bs, bd)
	}
	segs := 0
	for _, bd := range bs {
		segs += bd.Segments()
	}
	b.Logf("20 recordings, %d segments", segs)
	check := func(b *testing.B, o *probe.Outcome) {
		var w bytes.Buffer
		o.Print(&w, &w)
		if !bytes.Contains(w.Bytes(), []byte(" 240\n")) {
			b.Fatalf("want 240 calls counted:\n%s", w.String())
		}
	}
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("local-jobs%d", jobs), func(b *testing.B) {
			for b.Loop() {
				o, err := p.Run(bs, probe.RunOptions{Jobs: jobs})
				if err != nil {
					b.Fatal(err)
				}
				check(b, o)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20/1e6, "ms/trace")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(segs)/1e6, "ms/segment")
		})
	}
	b.Run("prism-combine", func(b *testing.B) {
		for b.Loop() {
			o, plan, err := RunProbe(context.Background(), ProbeRun{Script: sc, Program: p, Bound: bs, Tmp: b.TempDir(),
				Run: func(pl *beam.Pipeline) error { return run(b, pl) }})
			if err != nil {
				b.Fatal(err)
			}
			if plan != PlanCombine {
				b.Fatalf("plan %v", plan)
			}
			check(b, o)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20/1e6, "ms/trace")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(segs)/1e6, "ms/segment")
	})
}
