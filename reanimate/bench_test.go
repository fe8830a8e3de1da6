package reanimate

import (
	"fmt"
	"path/filepath"
	"testing"

	"ttd/reader"
	"ttd/syscalls"
)

// BenchmarkReanimate re-executes a recording of 4 threads writing 2000
// lines each to files of their own (testdata/threads_bench.c) with 1, 2
// and 4 workers at once, and reports calls per second. The calls are
// collected once; each iteration replays them into a fresh root and
// checks the tree against the recorded run's.
func BenchmarkReanimate(b *testing.B) {
	prog := buildCArgs(b, "testdata/threads_bench.c", "-pthread")
	dir := b.TempDir()
	trace := record(b, dir, prog, "4", "2000")
	tr, err := reader.Open(trace)
	if err != nil {
		b.Fatal(err)
	}
	var c collector
	if _, err := syscalls.Export(tr, syscalls.Options{StrSize: -1}, &c); err != nil {
		b.Fatal(err)
	}
	cwd := tr.Header.Cwd
	tr.Close()
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			calls := 0
			for i := 0; i < b.N; i++ {
				root := b.TempDir()
				rep, err := replayOps(c.ops, cwd, Options{Root: root, Verify: true, Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				if len(rep.Divergences) > 0 {
					b.Fatalf("diverged: %v", rep.Divergences[0])
				}
				calls += rep.Calls
				if i == 0 {
					sameTree(b, dir, filepath.Join(root, rep.Cwd))
				}
			}
			b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// TestReanimateWorkers replays threads writing files of their own with
// one worker at a time and with one per thread: both trees must be the
// recorded run's.
func TestReanimateWorkers(t *testing.T) {
	prog := buildCArgs(t, "testdata/threads_bench.c", "-pthread")
	dir := t.TempDir()
	trace := record(t, dir, prog, "4", "300")
	tr, err := reader.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	if _, err := syscalls.Export(tr, syscalls.Options{StrSize: -1}, &c); err != nil {
		t.Fatal(err)
	}
	cwd := tr.Header.Cwd
	tr.Close()
	for _, workers := range []int{1, 0} {
		root := t.TempDir()
		rep, err := replayOps(c.ops, cwd, Options{Root: root, Verify: true, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Divergences) > 0 {
			t.Errorf("workers=%d: diverged: %v", workers, rep.Divergences[0])
		}
		if rep.Calls < 4*300 {
			t.Errorf("workers=%d: only %d calls re-executed", workers, rep.Calls)
		}
		sameTree(t, dir, filepath.Join(root, rep.Cwd))
	}
}
