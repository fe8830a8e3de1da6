package ttd

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"ttd/reader"
	"ttd/recorder"
	"ttd/tracefile"
)

// perProcessSummaries is the reference for SummarizeTrace on a process
// tree: every process's summary of every interval of its span built by
// a replay of its own, Refocus(pid) then Track, as the summaries were
// built before one replay per interval followed them all.
func perProcessSummaries(t *testing.T, path string) []tracefile.AccessSummary {
	t.Helper()
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	spans, err := processSpans(tr, cps)
	if err != nil {
		t.Fatal(err)
	}
	type job struct{ pid, k int }
	var jobs []job
	for k := range cps {
		jobs = append(jobs, job{0, k})
	}
	for _, sp := range spans {
		for k := sp.first; k <= sp.last; k++ {
			jobs = append(jobs, job{sp.pid, k})
		}
	}
	var sums []tracefile.AccessSummary
	for _, j := range jobs {
		d, err := processDelta(tr, cps, j.k, j.pid)
		if err != nil {
			t.Fatalf("process %d, interval %d: %v", j.pid, j.k, err)
		}
		s := summaryOf(d)
		s.Pid = j.pid
		sums = append(sums, s)
	}
	return sums
}

// TestSummarizeTreeOneReplayPerInterval: the summaries of a process
// tree built with one replay per interval (reader.TrackPids) are those
// of one replay per process and interval, on trees with forks, a thread,
// vfork and posix_spawn, execs, pipes and many short processes, at
// intervals short enough that processes start, exec and end inside
// them and spans cover several.
func TestSummarizeTreeOneReplayPerInterval(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	procExec := filepath.Join(t.TempDir(), "proc_exec")
	if b, err := exec.Command("gcc", "-O0", "-o", procExec, "../testdata/corpus/proc_exec.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	cases := []struct {
		name  string
		prog  string
		args  []string
		every uint64
	}{
		{"forktree", buildC(t, "forktree"), nil, 20_000},
		{"forkwrites", buildC(t, "forkwrites"), nil, 30_000},
		{"proc_exec", procExec, nil, 100_000},
		{"xargs", "/bin/sh", []string{"-c", "seq 12 | xargs -n2 echo | cat"}, 150_000},
		{"pipeline", "/bin/sh", []string{"-c", "ls / | sort -r | head -3 >/dev/null; echo x | cat"}, 400_000},
		// An exec, then forks in the same interval: the children's
		// windows continue one that holds the exec's replaced pages.
		{"execfork", "/bin/sh", []string{"-c", "exec /bin/sh -c 'echo a | cat; ls / >/dev/null'"}, 5_000_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := recordWith(t, tc.prog, recorder.Options{CheckpointEvery: tc.every}, tc.args...)
			want := perProcessSummaries(t, path)
			for _, workers := range []int{1, 2} {
				got, err := SummarizeTrace(path, workers, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("workers %d: %d summaries, want %d", workers, len(got), len(want))
				}
				procs := map[int]bool{}
				for i := range want {
					procs[want[i].Pid] = true
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("workers %d: summary %d (process %d, [%d, %d)) differs:\n%s", workers, i, want[i].Pid, want[i].Start, want[i].End, summaryDiff(&got[i], &want[i]))
					}
				}
				if len(procs) < 2 {
					t.Fatalf("only %d processes summarized: not a tree", len(procs))
				}
			}
		})
	}
}
