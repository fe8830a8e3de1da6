package probe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
	"ttd/x86"
)

// TestProfilePerThread: profile:::N fires every N instructions of each
// thread, checked against every instruction of the replay (the oracle
// hooks them all and notes where a thread's own count is a multiple of
// N), over a multi-threaded program whose threads' runs interleave, for
// checkpoints that split the runs and for 1 and 3 workers.
func TestProfilePerThread(t *testing.T) {
	buildCalls(t) // gcc, or skip
	dir := t.TempDir()
	prog := filepath.Join(dir, "threads")
	src, _ := filepath.Abs("testdata/threads.c")
	if b, err := exec.Command("gcc", "-O1", "-pthread", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %s", b)
	}
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	const every = 997
	for _, cp := range []uint64{30_000, 50_000_000} {
		path := filepath.Join(dir, fmt.Sprintf("t%d.ttd", cp))
		st, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog}, Stdout: null, Stderr: null}, recorder.Options{Path: path, CheckpointEvery: cp})
		if err != nil || st.Code != 0 {
			t.Fatalf("recording: %v %v", st, err)
		}
		// The oracle.
		tr, err := reader.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := tr.NewReplay(0)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		perThread := map[int]int{}
		r.HookInsts = func(*x86.Block) uint64 { return ^uint64(0) }
		r.Hook = func(r *reader.Replay, c *x86.CPU, in *x86.Inst) {
			if n := c.Retired(); n > 0 && n%every == 0 {
				tid, _ := r.Current()
				perThread[tid]++
				fmt.Fprintf(&want, "%d %d\n", r.InstPosition(c), tid)
			}
		}
		if err := r.RunTo(tr.End()); err != nil && err != reader.ErrEnd {
			t.Fatal(err)
		}
		r.Close()
		tr.Close()
		if len(perThread) < 4 {
			t.Fatalf("the oracle saw profile ticks in %d threads, want 4", len(perThread))
		}
		for _, jobs := range []int{1, 3} {
			out, errs, o := runScript(t, path, `#pragma D option quiet
profile:::997 { printf("%d %d\n", pos, tid); }`, jobs)
			if errs != "" || out != want.String() {
				t.Errorf("checkpoints every %d, --jobs %d (%d segments): got\n%s\nwant (from every instruction)\n%s%s", cp, jobs, o.Segments, out, want.String(), errs)
			}
		}
	}
}
