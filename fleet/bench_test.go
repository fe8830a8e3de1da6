package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
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
