package reader

import (
	"fmt"
	"path/filepath"
	"testing"

	"ttd/recorder"
	"ttd/x86"
)

// recordC builds the C program src (gcc, -O1, -pthread) and records it
// with a checkpoint every every instructions.
func recordC(t testing.TB, src string, every uint64) string {
	path, _ := recordCWith(t, src, recorder.Options{CheckpointEvery: every})
	return path
}

// trackedDeltas re-simulates every checkpoint interval of the trace at
// path with tracking on, in the memory of process pid (0: the focus),
// as the summaries pass does, and returns their deltas and how many
// accesses translated code logged.
func trackedDeltas(t testing.TB, path string, pid int) ([]*Delta, uint64) {
	t.Helper()
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	var out []*Delta
	var logged uint64
	for k := range cps {
		r, err := tr.NewReplayAt(cps[k])
		if err != nil {
			t.Fatal(err)
		}
		if pid != 0 {
			if err := r.Refocus(pid); err != nil {
				t.Fatal(err)
			}
		}
		r.Track()
		end := tr.End()
		if k+1 < len(cps) {
			end = cps[k+1].Position
		}
		if err := r.RunTo(end); err != nil && err != ErrEnd {
			t.Fatalf("segment %d: %v", k, err)
		}
		logged += r.focusTrack().logged
		out = append(out, r.Cut())
		r.Close()
	}
	return out, logged
}

// sameDelta describes the first difference between two deltas, or "".
func sameDelta(a, b *Delta) string {
	if a.Start != b.Start || a.End != b.End {
		return fmt.Sprintf("window %d..%d, want %d..%d", a.Start, a.End, b.Start, b.End)
	}
	if fmt.Sprint(a.Resets) != fmt.Sprint(b.Resets) {
		return fmt.Sprintf("resets %v, want %v", a.Resets, b.Resets)
	}
	if len(a.Pages) != len(b.Pages) {
		return fmt.Sprintf("%d pages, want %d", len(a.Pages), len(b.Pages))
	}
	for i := range a.Pages {
		p, q := &a.Pages[i], &b.Pages[i]
		switch {
		case p.PN != q.PN:
			return fmt.Sprintf("page %#x, want %#x", p.PN, q.PN)
		case p.ReadBytes != q.ReadBytes || p.Read != q.Read:
			return fmt.Sprintf("page %#x: bytes read differ", p.PN)
		case p.WrittenBytes != q.WrittenBytes || p.Written != q.Written:
			return fmt.Sprintf("page %#x: bytes written differ", p.PN)
		case p.ExecBytes != q.ExecBytes || p.Exec != q.Exec:
			return fmt.Sprintf("page %#x: bytes fetched differ", p.PN)
		case p.Known != q.Known:
			return fmt.Sprintf("page %#x: known bytes differ", p.PN)
		}
		for j := range p.Known {
			for k := 0; k < 64; k++ {
				if p.Known[j]&(1<<k) != 0 && p.Data[j*64+k] != q.Data[j*64+k] {
					return fmt.Sprintf("byte %#x: %#x, want %#x", p.PN<<x86.PageShift+uint64(j*64+k), p.Data[j*64+k], q.Data[j*64+k])
				}
			}
		}
	}
	return ""
}

// TestAccessLogMatchesInterpreter checks that tracking with translated
// code logging the accesses (x86.AccessLogger) learns exactly what
// tracking in the interpreter learns — the bytes read, written and
// fetched and the known bytes' values of every checkpoint interval, in
// every process — on programs that cross pages, use string
// instructions, SSE and AVX, modify their own code, handle signals and
// run threads and child processes, in traces that log reads (translated
// code checks the prediction cache: x86's jitModeTrack) and in traces
// that log none (it runs as `ttd run`'s: jitModeRunTrack). Every block
// is translated at once (threshold 0) so that translated code makes as
// many of the accesses as it can.
func TestAccessLogMatchesInterpreter(t *testing.T) {
	progs := []string{"testdata/acclog.c", "tree", "../testdata/corpus/proc_fork.c",
		"../testdata/corpus/segv_handler.c", "../testdata/corpus/sse2.c", "../testdata/corpus/signals.c"}
	if testing.Short() {
		progs = progs[:1]
	}
	on, th := x86.SetJIT(true, 0)
	defer x86.SetJIT(on, th)
	for _, src := range progs {
		for _, replayable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/replayable=%v", filepath.Base(src), replayable), func(t *testing.T) {
				checkAccessLog(t, src, recorder.Options{CheckpointEvery: 200_000, Replayable: replayable})
			})
		}
	}
}

// checkAccessLog records src (a C program, or "tree") with opts and
// compares the deltas of its first processes' intervals tracked with
// and without translated code logging the accesses.
func checkAccessLog(t *testing.T, src string, opts recorder.Options) {
	var path string
	if src == "tree" {
		path, _ = recordTreeOpts(t, opts) // fork, exec, threads (process_test.go)
	} else {
		path, _ = recordCWith(t, src, opts)
	}
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range tr.Processes() {
		pids = append(pids, p.Pid)
	}
	tr.Close()
	if len(pids) == 0 {
		pids = []int{0}
	}
	if len(pids) > 3 {
		pids = pids[:3] // proc_fork's dozen children are alike
	}
	for i, pid := range pids {
		if i == 0 {
			pid = 0
		}
		noAccessLog = true
		want, n0 := trackedDeltas(t, path, pid)
		noAccessLog = false
		got, n := trackedDeltas(t, path, pid)
		if n0 != 0 || n == 0 {
			t.Fatalf("process %d: translated code logged %d accesses (%d with the log off)", pid, n, n0)
		}
		if len(got) != len(want) {
			t.Fatalf("process %d: %d intervals, want %d", pid, len(got), len(want))
		}
		for k := range got {
			if d := sameDelta(got[k], want[k]); d != "" {
				t.Fatalf("process %d, interval %d: %s", pid, k, d)
			}
		}
		t.Logf("process %d: %d intervals, %d accesses logged by translated code", pid, len(got), n)
	}
}
