package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"ttd/probe"
)

// runProbe runs sc over paths with the local runner (jobs 2) or, with
// beam set, with the pipeline on prism, and returns what it printed.
func runProbe(t *testing.T, sc Script, paths []string, beamRun bool) (stdout, stderr string, o *probe.Outcome, err error) {
	stdout, stderr, o, _, err = runProbePlan(t, sc, paths, beamRun)
	return
}

func runProbePlan(t *testing.T, sc Script, paths []string, beamRun bool) (stdout, stderr string, o *probe.Outcome, plan ProbePlan, err error) {
	t.Helper()
	p, err := sc.Compile()
	if err != nil {
		t.Fatal(err)
	}
	bs, err := bindEach(t, p, paths)
	if err != nil {
		return "", "", nil, 0, err
	}
	if beamRun {
		o, plan, err = RunProbe(context.Background(), ProbeRun{Script: sc, Program: p, Bound: bs, Tmp: t.TempDir(),
			Run: func(pl *beam.Pipeline) error { return run(t, pl) }})
	} else {
		// (One job per segment: with fewer, a job carries the state from
		// segment to segment and nothing is evaluated again, while the
		// pipeline evaluates each segment on its own.)
		o, err = p.Run(bs, probe.RunOptions{Jobs: 1000})
	}
	if err != nil {
		return "", "", nil, 0, err
	}
	stdout, stderr = printed(o)
	return stdout, stderr, o, plan, nil
}

// bindEach opens every recording (closed when the test ends) and binds
// p to it.
func bindEach(t testing.TB, p *probe.Program, paths []string) ([]*probe.Bound, error) {
	var bs []*probe.Bound
	for _, path := range paths {
		tg, closeT, _, err := probe.OpenTarget(path, p.NeedsMemory(), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		t.Cleanup(closeT)
		b, err := p.Bind(tg)
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return bs, nil
}

// bindAll is bindEach failing the test on an error.
func bindAll(t *testing.T, p *probe.Program, paths []string) []*probe.Bound {
	t.Helper()
	bs, err := bindEach(t, p, paths)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// printed is what the outcome prints on stdout and stderr.
func printed(o *probe.Outcome) (stdout, stderr string) {
	var w, e bytes.Buffer
	o.Print(&w, &e)
	return w.String(), e.String()
}

// TestProbeBeamMatchesLocal: the same scripts over several recordings
// of work.c print byte for byte the same on prism as locally. The
// self-> script's entry and return fall in different segments (the local
// run re-evaluates segments), and its answer is the program's own.
func TestProbeBeamMatchesLocal(t *testing.T) {
	paths, recs := workTraces(t)
	calls, sumN := 0, 0
	for _, n := range workRuns {
		calls += n
		sumN += n * (n + 1) / 2
	}
	// The recordings in an order that is not their names' (the local
	// runner takes them as given), one of them twice.
	mixed := []string{paths[2], paths[0], paths[1], paths[0]}
	scripts := []struct {
		name  string
		sc    Script
		plan  ProbePlan
		paths []string
	}{
		{"selfAcrossSegments", Script{Src: `BEGIN { printf("start\n"); }
fn::work:entry { self->n = arg0; self->t = pos; }
fn::work:return /self->n/ { @sum = sum(self->n); @calls = count(); @len = max(pos - self->t); printf("work(%d) = %d\n", self->n, retval); self->n = 0; }
END { printf("end\n"); }`, Quiet: true}, PlanSegments, paths},
		{"records", Script{Src: `fn::work:entry { trace(arg0); @q[execname] = quantize(arg0); }`}, PlanCombine, paths},
		{"syscalls", Script{Src: `syscall::write:entry { @w[probefunc] = sum(arg2); }`}, PlanCombine, paths},
		// printa, trunc and clear cut the aggregations in the middle of
		// the run: the CombineFn must keep them in order.
		{"cutsInOrder", Script{Src: `fn::work:entry { @c[arg0 % 3] = count(); @s = sum(arg0); @m = max(arg0); }
fn::work:entry /arg0 == 3/ { printa(@c); trunc(@c, 1); }
fn::work:entry /arg0 == 5/ { printa("sum %@d\n", @s); clear(@s); }
syscall::write:return { @w = lquantize(arg0, 0, 20, 2); }`}, PlanCombine, mixed},
		// END reads a global the probes wrote last (the last recording's
		// last write) and prints its own position and thread.
		{"endReadsState", Script{Src: `BEGIN { printf("begin %d %d\n", pos, tid); }
fn::work:entry { last = arg0; @n = count(); }
END { printf("end %d %d last=%d\n", pos, tid, last); }`, Quiet: true}, PlanCombine, mixed},
		// exit() in the middle of the first recording: nothing after it.
		{"exit", Script{Src: `fn::work:entry { @n = count(); printf("%d\n", arg0); }
fn::work:entry /arg0 == 4/ { exit(3); }`, Quiet: true}, PlanSegments, mixed},
	}
	for _, tc := range scripts {
		t.Run(tc.name, func(t *testing.T) {
			local, localErr, lo, err := runProbe(t, tc.sc, tc.paths, false)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr, bo, plan, err := runProbePlan(t, tc.sc, tc.paths, true)
			if err != nil {
				t.Fatal(err)
			}
			if got != local || gotErr != localErr {
				t.Fatalf("beam output differs from local:\n--- beam\n%s%s\n--- local\n%s%s", got, gotErr, local, localErr)
			}
			if plan != tc.plan {
				t.Fatalf("plan %v, want %v", plan, tc.plan)
			}
			if bo.ExitCode() != lo.ExitCode() {
				t.Fatalf("exit code %d, local %d", bo.ExitCode(), lo.ExitCode())
			}
			t.Logf("%s: %d segments, plan %v, %d bytes of output", tc.name, lo.Segments, plan, len(got))
			if tc.name != "selfAcrossSegments" {
				return
			}
			if lo.Reruns == 0 {
				t.Fatalf("no segment re-evaluated: the fixtures no longer split calls across segments")
			}
			// The host is the oracle: every call's line is the program's.
			var want strings.Builder
			want.WriteString("start\n")
			for _, path := range paths {
				want.Write(recs[path].stdout)
			}
			want.WriteString("end\n")
			if !strings.HasPrefix(got, want.String()) {
				t.Fatalf("records:\n%s\nwant:\n%s", got, want.String())
			}
			if !strings.Contains(got, fmt.Sprintf("  %d\n", sumN)) || !strings.Contains(got, fmt.Sprintf("  %d\n", calls)) {
				t.Fatalf("want @sum %d and @calls %d in:\n%s", sumN, calls, got)
			}
		})
	}
}

// TestProbeBeamCorruptTrace: a recording that fails in the pipeline is
// named in the error.
func TestProbeBeamCorruptTrace(t *testing.T) {
	paths, _ := workTraces(t)
	sc := Script{Src: `fn::work:entry { @c = count(); }`}
	// Bind on intact copies, then corrupt one before the pipeline runs.
	dir := t.TempDir()
	var copies []string
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := filepath.Join(dir, fmt.Sprintf("copy-%d.ttd", i))
		if err := os.WriteFile(c, b, 0o644); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, c)
	}
	prog, err := sc.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var bs []*probe.Bound
	for _, path := range copies {
		tg, closeT, _, err := probe.OpenTarget(path, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer closeT()
		b, err := prog.Bind(tg)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	bad := copies[1]
	st, _ := os.Stat(bad)
	if err := os.Truncate(bad, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	_, _, err = RunProbe(context.Background(), ProbeRun{Script: sc, Program: prog, Bound: bs, Tmp: t.TempDir(),
		Run: func(pl *beam.Pipeline) error { return run(t, pl) }})
	if err == nil {
		t.Fatal("no error for a truncated recording")
	}
	if !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), copies[0]+":") {
		t.Fatalf("error does not name %s (only): %v", bad, err)
	}
}
