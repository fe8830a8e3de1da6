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
	t.Helper()
	p, err := sc.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var bs []*probe.Bound
	for _, path := range paths {
		tg, closeT, _, err := probe.OpenTarget(path, p.NeedsMemory(), nil)
		if err != nil {
			return "", "", nil, fmt.Errorf("%s: %w", path, err)
		}
		defer closeT()
		b, err := p.Bind(tg)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	if beamRun {
		o, err = p.RunWith(bs, ProbeEval(context.Background(), sc, t.TempDir(), func(pl *beam.Pipeline) error { return run(t, pl) }))
	} else {
		o, err = p.Run(bs, probe.RunOptions{Jobs: 2})
	}
	if err != nil {
		return "", "", nil, err
	}
	var w, e bytes.Buffer
	o.Print(&w, &e)
	return w.String(), e.String(), o, nil
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
	scripts := []struct {
		name string
		sc   Script
	}{
		{"selfAcrossSegments", Script{Src: `BEGIN { printf("start\n"); }
fn::work:entry { self->n = arg0; self->t = pos; }
fn::work:return /self->n/ { @sum = sum(self->n); @calls = count(); @len = max(pos - self->t); printf("work(%d) = %d\n", self->n, retval); self->n = 0; }
END { printf("end\n"); }`, Quiet: true}},
		{"records", Script{Src: `fn::work:entry { trace(arg0); @q[execname] = quantize(arg0); }`}},
		{"syscalls", Script{Src: `syscall::write:entry { @w[probefunc] = sum(arg2); }`}},
	}
	for _, tc := range scripts {
		t.Run(tc.name, func(t *testing.T) {
			local, localErr, lo, err := runProbe(t, tc.sc, paths, false)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr, _, err := runProbe(t, tc.sc, paths, true)
			if err != nil {
				t.Fatal(err)
			}
			if got != local || gotErr != localErr {
				t.Fatalf("beam output differs from local:\n--- beam\n%s%s\n--- local\n%s%s", got, gotErr, local, localErr)
			}
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
	_, err = prog.RunWith(bs, ProbeEval(context.Background(), sc, t.TempDir(), func(pl *beam.Pipeline) error { return run(t, pl) }))
	if err == nil {
		t.Fatal("no error for a truncated recording")
	}
	if !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), copies[0]+":") {
		t.Fatalf("error does not name %s (only): %v", bad, err)
	}
}
