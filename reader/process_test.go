package reader

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/recorder"
	"ttd/tracefile"
)

// writeTreeTrace writes a trace of a process tree whose records are
// recs, after the first process's start.
func writeTreeTrace(t *testing.T, recs ...tracefile.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tree.ttd")
	hdr := tracefile.Header{ProgramPath: "/bin/x", Params: map[string]string{"processes": "tree"}}
	w, err := tracefile.Create(path, hdr, tracefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Process(&tracefile.Process{Event: tracefile.ProcessStarted, Pid: 100, Ppid: 1, Path: "/bin/x", Argv: []string{"x"}})
	w.ThreadStart(100, 0)
	w.Checkpoint(&tracefile.Checkpoint{Position: 0, Seq: 1, CurrentTid: 100})
	for i := range recs {
		w.Append(&recs[i])
	}
	w.Exit(&tracefile.Exit{Kind: tracefile.ExitExited})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCorruptProcessState: a ProcessState record cut short stops the
// replay with a format error naming the chunk and the payload offset.
func TestCorruptProcessState(t *testing.T) {
	// pid 100, ppid 1, then nothing: SharesWith and the tids are missing.
	path := writeTreeTrace(t, tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x21, Bytes: []byte{100, 1}}})
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := tr.NewReplay(0)
	if err == nil {
		err = r.RunTo(^uint64(0))
	}
	var fe *tracefile.FormatError
	if !errors.As(err, &fe) || fe.Chunk != 0 || fe.InChunk <= 0 || !errors.Is(err, tracefile.ErrCorrupt) ||
		!strings.Contains(err.Error(), "process record") {
		t.Fatalf("replay of a ProcessState cut short: %v", err)
	}
}

// TestCorruptProcessRecord: a Process record with an unknown event
// makes Open fail with the offset of the event byte.
func TestCorruptProcessRecord(t *testing.T) {
	path := writeTreeTrace(t, tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x20, Bytes: []byte{9, 101, 100}}})
	_, err := Open(path)
	var fe *tracefile.FormatError
	if !errors.As(err, &fe) || fe.InChunk <= 0 || !strings.Contains(err.Error(), "unknown event") {
		t.Fatalf("open with a bad Process record: %v", err)
	}
}

// TestProcessStartedByUnknownThread: a fork by a thread that does not
// exist is a divergence, not a panic.
func TestProcessStartedByUnknownThread(t *testing.T) {
	path := writeTreeTrace(t, tracefile.Record{Kind: tracefile.KindUnknown, Opaque: tracefile.Opaque{Tag: 0x20,
		Bytes: []byte{1, 101, 100, 77, 0, 0, 0, 0}}})
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r, err := tr.NewReplay(0)
	if err == nil {
		err = r.RunTo(^uint64(0))
	}
	var de *DivergenceError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "thread 77") {
		t.Fatalf("fork by an unknown thread: %v", err)
	}
}

// treeSrc forks a child that computes and exits, vforks one that execs
// /bin/true, waits for both, and returns while a thread of its own
// still waits (exit_group ends it).
const treeSrc = `#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
long g;
static long work(int n) { long s = 0; for (int i = 0; i < n; i++) s += i * g; return s; }
static void *idle(void *a) { for (;;) pause(); return a; }
int main(void) {
	g = 3;
	pid_t c = fork();
	if (c == 0) { g = 5; _exit(work(20000) & 0x7f); }
	pid_t v = vfork();
	if (v == 0) { execl("/bin/true", "true", (char *)0); _exit(127); }
	int st1, st2;
	waitpid(c, &st1, 0);
	waitpid(v, &st2, 0);
	pthread_t th;
	pthread_create(&th, 0, idle, 0);
	printf("%d %d %ld\n", WEXITSTATUS(st1), WEXITSTATUS(st2), work(10000));
	return 0;
}
`

// recordTree records treeSrc with a checkpoint every every instructions.
func recordTree(t testing.TB, every uint64) string {
	path, _ := recordTreeExe(t, every)
	return path
}

// recordTreeExe is recordTree returning the executable too (built
// without PIE: its symbols are its addresses).
func recordTreeExe(t testing.TB, every uint64) (string, string) {
	t.Helper()
	return recordTreeChunks(t, every, 0)
}

// recordTreeChunks is recordTreeExe with chunks of chunkSize bytes (0:
// the recorder's default).
func recordTreeChunks(t testing.TB, every uint64, chunkSize int) (string, string) {
	t.Helper()
	return recordTreeOpts(t, recorder.Options{CheckpointEvery: every, ChunkSize: chunkSize})
}

// recordTreeOpts records treeSrc with opts (its Path set here), and
// returns the trace and the executable.
func recordTreeOpts(t testing.TB, opts recorder.Options) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src, exe := filepath.Join(dir, "tree.c"), filepath.Join(dir, "tree")
	if err := os.WriteFile(src, []byte(treeSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("gcc", "-O1", "-no-pie", "-pthread", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	path := filepath.Join(dir, "tree.ttd")
	opts.Path = path
	st, _, err := recorder.Record(emu.Config{Path: exe, Args: []string{exe}, Stdout: null}, opts)
	if err != nil || st.ExitCode() != 0 {
		t.Fatalf("record: %v, %v", st, err)
	}
	return path, exe
}

// TestFocusSeesItsOwnWrites watches global g (3 in the parent before
// the fork, 5 in the child) with each process as the focus: the child
// sees the parent's write before its fork, then its own; the parent
// never sees the child's.
func TestFocusSeesItsOwnWrites(t *testing.T) {
	path, exe := recordTreeExe(t, 0)
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var g uint64
	for _, s := range syms {
		if s.Name == "g" {
			g = s.Value
		}
	}
	if g == 0 {
		t.Fatal("no symbol g")
	}
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	procs := tr.Processes()
	writes := func(pid int) (vals []uint64, tids []int) {
		if err := tr.SetFocus(pid); err != nil {
			t.Fatal(err)
		}
		r, err := tr.NewReplay(0)
		if err != nil {
			t.Fatal(err)
		}
		r.Watch([]Range{{Lo: g, Hi: g + 8}})
		r.Access = func(a *Access) {
			if a.Write && a.Addr == g {
				vals, tids = append(vals, a.Value), append(tids, a.Tid)
			}
		}
		if err := r.RunTo(^uint64(0)); err != ErrEnd {
			t.Fatal(err)
		}
		return
	}
	parent, child := procs[0].Pid, procs[1].Pid
	if v, tids := writes(parent); len(v) != 1 || v[0] != 3 || tids[0] != parent {
		t.Errorf("the parent's writes of g: %v by %v, want [3] by %d", v, tids, parent)
	}
	if v, tids := writes(child); len(v) != 2 || v[0] != 3 || v[1] != 5 || tids[0] != parent || tids[1] != child {
		t.Errorf("the child's writes of g: %v by %v, want [3 5] by %d then %d", v, tids, parent, child)
	}
	// Every process's writes, by the writer (AccessAllProcesses), while
	// tracking still follows the focus: its Cut is the same as without.
	if err := tr.SetFocus(parent); err != nil {
		t.Fatal(err)
	}
	cut := func(all bool) (*Delta, []uint64, []int) {
		r, err := tr.NewReplay(0)
		if err != nil {
			t.Fatal(err)
		}
		r.Track()
		var vals []uint64
		var tids []int
		r.Watch([]Range{{Lo: g, Hi: g + 8}})
		r.Access = func(a *Access) {
			if a.Write && a.Addr == g {
				vals, tids = append(vals, a.Value), append(tids, a.Tid)
			}
		}
		if all {
			r.AccessAllProcesses()
		}
		if err := r.RunTo(tr.End() - 1); err != nil {
			t.Fatal(err)
		}
		return r.Cut(), vals, tids
	}
	one, _, _ := cut(false)
	every, v, tids := cut(true)
	if len(v) != 2 || v[0] != 3 || v[1] != 5 || tids[0] != parent || tids[1] != child {
		t.Errorf("every process's writes of g: %v by %v, want [3 5] by %d then %d", v, tids, parent, child)
	}
	if !reflect.DeepEqual(one, every) {
		t.Errorf("the focus's tracking took in another process's accesses")
	}
	if err := tr.SetFocus(424242); !errors.Is(err, ErrNoProcess) {
		t.Errorf("SetFocus of a pid not in the trace: %v", err)
	}
}

// TestProcessTreeCheckpointsAndSnapshots re-simulates a fork, vfork and
// exec tree from the start (verifying every process), from every
// checkpoint and from snapshots, and checks that each continues exactly
// as the re-simulation from the start, across the processes.
func TestProcessTreeCheckpointsAndSnapshots(t *testing.T) {
	path := recordTree(t, 30_000)
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if !tr.Tree() || len(tr.Processes()) != 3 {
		t.Fatalf("tree %v, %d processes", tr.Tree(), len(tr.Processes()))
	}
	r0, _ := tr.NewReplay(0)
	r0.Verify = true
	all := states(t, r0)
	procs := r0.Processes()
	if len(procs) != 3 {
		t.Fatalf("%d processes re-simulated", len(procs))
	}
	for _, p := range procs {
		if p.Exit == nil || p.Verified == 0 {
			t.Errorf("process %d: exit %v, %d states verified", p.Pid, p.Exit, p.Verified)
		}
	}
	cps, err := tr.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if len(cps) < 5 {
		t.Fatalf("%d checkpoints", len(cps))
	}
	for _, cp := range cps {
		r, err := tr.NewReplayAt(cp)
		if err != nil {
			t.Fatalf("checkpoint %+v: %v", cp, err)
		}
		mid := cp.Position + 7_777
		if mid >= uint64(len(all)) {
			continue
		}
		if err := r.RunTo(mid); err != nil {
			t.Fatal(err)
		}
		snap := r.Snapshot()
		got := states(t, r)
		r2, err := tr.Resume(snap)
		if err != nil {
			t.Fatal(err)
		}
		again := states(t, r2)
		// ResumeInto recycles the address spaces and decoded code of
		// the replay that ran to the end (r2): the same again.
		r3, err := tr.ResumeInto(snap, r2)
		if err != nil {
			t.Fatal(err)
		}
		recycled := states(t, r3)
		if len(got) != len(again) || len(recycled) != len(got) || mid+uint64(len(got)) != uint64(len(all)) {
			t.Fatalf("from %d: %d, %d and %d instructions, want %d", mid, len(got), len(again), len(recycled), uint64(len(all))-mid)
		}
		for i := range got {
			if got[i] != all[mid+uint64(i)] || again[i] != got[i] || recycled[i] != got[i] {
				t.Fatalf("from checkpoint %d, position %d: %+v, resumed %+v, resumed into a used replay %+v, from the start %+v",
					cp.Position, mid+uint64(i), got[i], again[i], recycled[i], all[mid+uint64(i)])
			}
		}
	}
	if _, err := tr.VerifySegments(0); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkResumeIntoTree measures a step back in a process tree's
// trace as a debugger makes it: resume a snapshot into the replay used
// before (ResumeInto) and re-simulate 2,000 instructions of the
// parent's loop. Resuming must not decode the code again.
func BenchmarkResumeIntoTree(b *testing.B) {
	path := recordTree(b, 0)
	tr, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	r, _ := tr.NewReplay(0)
	at := tr.End() - 30_000
	if err := r.RunTo(at); err != nil {
		b.Fatal(err)
	}
	snap := r.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r, err = tr.ResumeInto(snap, r); err != nil {
			b.Fatal(err)
		}
		if err := r.RunTo(at + 2_000); err != nil {
			b.Fatal(err)
		}
	}
}
