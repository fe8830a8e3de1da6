package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeIndexesAlong: `ttd probe` (and `ttd calls`) over a trace that logs no reads and
// has no checkpoint memory file yet replays it once from its start and
// leaves the file behind (reader.IndexAlong) rather than running an
// index pass first; the next runs, with one job or two, evaluate
// segments apart from their checkpoints and print the same.
func TestProbeIndexesAlong(t *testing.T) {
	dir := t.TempDir()
	var in bytes.Buffer
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&in, "%d\n", (i*7919)%100003)
	}
	input := filepath.Join(dir, "nums.txt")
	if err := os.WriteFile(input, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "s.ttd")
	if out, err := exec.Command(ttdBinary, "record", "--mode", "replayable", "--checkpoint-every", "2000000",
		"-o", trace, "--", "/usr/bin/sort", "-n", input).CombinedOutput(); err != nil {
		t.Fatalf("ttd record: %v\n%s", err, out)
	}
	var stderr bytes.Buffer
	probe := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ttdBinary, append(append([]string{"probe", "-q"}, args...),
			"-n", "fn::malloc:entry { @n = count(); } fn::free:entry { @f = count(); }", trace)...)
		cmd.Env = append(os.Environ(), "TTD_SCHEDLOG=1") // each job's runs
		stderr.Reset()
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ttd probe %v: %v\n%s", args, err, stderr.String())
		}
		return string(out)
	}
	first := probe("--jobs", "2")
	if n := strings.Count(stderr.String(), ": run from "); n != 1 {
		t.Errorf("the first probe made %d runs, want the one from the start:\n%s", n, stderr.String())
	}
	if _, err := os.Stat(trace + ".pages"); err != nil {
		t.Fatalf("the first probe left no checkpoint memory: %v", err)
	}
	if m, _ := filepath.Glob(trace + ".pages.tmp*"); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	if !strings.Contains(first, "@n") && !strings.Contains(first, "  ") {
		t.Fatalf("no aggregation printed:\n%s", first)
	}
	// ttd calls, on a trace of its own.
	trace2 := filepath.Join(dir, "c.ttd")
	if out, err := exec.Command(ttdBinary, "record", "--mode", "replayable", "--checkpoint-every", "2000000",
		"-o", trace2, "--", "/usr/bin/sort", "-n", input).CombinedOutput(); err != nil {
		t.Fatalf("ttd record: %v\n%s", err, out)
	}
	calls := func(jobs string) string {
		t.Helper()
		out, err := exec.Command(ttdBinary, "calls", "--jobs", jobs, "--depth", "3", trace2).Output()
		if err != nil {
			t.Fatalf("ttd calls --jobs %s: %v", jobs, err)
		}
		return string(out)
	}
	c1 := calls("2")
	if _, err := os.Stat(trace2 + ".pages"); err != nil {
		t.Errorf("the first ttd calls left no checkpoint memory: %v", err)
	}
	if c2 := calls("2"); c2 != c1 {
		t.Errorf("ttd calls --jobs 2 after indexing along printed\n%s\nthe first run\n%s", c2, c1)
	}
	for _, jobs := range []string{"1", "2", "3"} {
		if got := probe("--jobs", jobs); got != first {
			t.Errorf("--jobs %s after indexing along printed\n%s\nthe first run\n%s", jobs, got, first)
		}
		if n := strings.Count(stderr.String(), ": run from "); jobs != "1" && n < 2 {
			t.Errorf("--jobs %s made %d runs once indexed:\n%s", jobs, n, stderr.String())
		}
	}
}
