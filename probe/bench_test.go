package probe

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
)

// Benchmarks (not timed tests): probing costs against a plain replay.
// TTD_PROBE_BENCH_N sets calls.c's loop count (default 1,000,000: about
// 6e7 instructions).

var benchTrace struct {
	once sync.Once
	path string
}

func benchRecording(b *testing.B) string {
	prog := buildCalls(b)
	benchTrace.once.Do(func() {
		n := os.Getenv("TTD_PROBE_BENCH_N")
		if n == "" {
			n = "1000000"
		}
		path := filepath.Join(build.dir, "bench.ttd")
		null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		defer null.Close()
		if _, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog, n}, Stdout: null, Stderr: null},
			recorder.Options{Path: path, CheckpointEvery: 5_000_000}); err != nil {
			b.Fatal(err)
		}
		benchTrace.path = path
	})
	return benchTrace.path
}

// BenchmarkReplay is the reference: re-simulating the whole trace on
// one core, without probes.
func BenchmarkReplay(b *testing.B) {
	path := benchRecording(b)
	tr, err := reader.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	cps, _ := tr.Checkpoints()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range cps {
			r, err := tr.NewReplayAt(cps[k])
			if err != nil {
				b.Fatal(err)
			}
			end := tr.End()
			if k+1 < len(cps) {
				end = cps[k+1].Position
			}
			r.RunTo(end)
			r.Close()
		}
	}
	b.ReportMetric(float64(tr.End()), "instructions")
}

func benchProbe(b *testing.B, src string, jobs int) {
	path := benchRecording(b)
	p, err := Compile(src, nil)
	if err != nil {
		b.Fatal(err)
	}
	tg, closeT, _, err := OpenTarget(path, false, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer closeT()
	bd, err := p.Bind(tg)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Run([]*Bound{bd}, RunOptions{Jobs: jobs}); err != nil {
			b.Fatal(err)
		}
	}
}

// fn::malloc:entry on a program whose hot loop never calls malloc.
func BenchmarkMallocCount(b *testing.B) {
	benchProbe(b, "fn::malloc:entry { @ = count(); }", 1)
}

// A probe in the hot loop: leaf runs 2n times.
func BenchmarkLeafCount(b *testing.B) {
	benchProbe(b, "fn::leaf:entry { @[probefunc] = count(); }", 1)
}

func BenchmarkSyscallCount(b *testing.B) {
	benchProbe(b, "syscall:::entry { @[probefunc] = count(); }", 1)
}

func BenchmarkJobs(b *testing.B) {
	for _, jobs := range []int{1, 2} {
		b.Run("jobs="+strconv.Itoa(jobs), func(b *testing.B) {
			benchProbe(b, "fn::leaf:entry { @ = count(); }", jobs)
		})
	}
}
