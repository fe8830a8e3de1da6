package calls

import (
	"os"
	"runtime"
	"testing"

	"ttd/reader"
)

// BenchmarkCalls compares the call-tree analysis with a plain replay of
// the same trace on one core (the target: at most 1.5x, in parallel over
// intervals). TTD_CALLS_TRACE names a trace to use (e.g. gzip -9 of 8
// MiB, about 1e9 instructions, from go run ./bench/cmd/travel);
// otherwise it records the corpus's tiny_vm (1.3e8 instructions) with a
// checkpoint every 10M instructions.
//
//	go test ./calls -run XXX -bench Calls -benchtime 1x
func BenchmarkCalls(b *testing.B) {
	path := os.Getenv("TTD_CALLS_TRACE")
	if path == "" {
		exe := buildC(b, "../testdata/corpus/tiny_vm.c", "-O2")
		path = record(b, exe, 10_000_000)
	}
	tr, sym := open(b, path)
	cps, err := tr.Checkpoints()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d instructions, %d intervals, %d CPUs", path, tr.End(), len(cps), runtime.GOMAXPROCS(0))
	b.Run("replay-1core", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r, err := tr.NewReplayAt(cps[0])
			if err != nil {
				b.Fatal(err)
			}
			if err := r.RunTo(tr.End()); err != nil && err != reader.ErrEnd {
				b.Fatal(err)
			}
			r.Close()
		}
		b.ReportMetric(float64(tr.End())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minstr/s")
	})
	for _, w := range []int{1, 0} {
		name := "calls-1worker"
		if w == 0 {
			name = "calls-allcpus"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Analyze(tr, sym, Options{Workers: w}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(tr.End())*float64(b.N)/b.Elapsed().Seconds()/1e6, "Minstr/s")
		})
	}
}
