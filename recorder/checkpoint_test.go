package recorder

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/tracefile"
)

// checkpointsAndExecs records argv with a checkpoint every `every`
// instructions and returns the positions of its checkpoints and of its
// execs, and the trace's end.
func checkpointsAndExecs(t *testing.T, argv []string, every uint64) (cps, execs []uint64, end uint64) {
	t.Helper()
	if _, err := os.Stat(argv[0]); err != nil {
		t.Skipf("SKIP: %v", err)
	}
	trace := filepath.Join(t.TempDir(), "t.ttd")
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	st, stats, err := Record(emu.Config{Path: argv[0], Args: argv, Stdout: devnull, Stderr: devnull},
		Options{Path: trace, CheckpointEvery: every})
	if err != nil || st.Code != 0 {
		t.Fatalf("record %v: %v (status %+v)", argv, err, st)
	}
	r, err := tracefile.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	it := r.RecordsFrom(0)
	for {
		rec, err := it.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Kind == tracefile.KindCheckpoint:
			cps = append(cps, rec.Checkpoint.Position)
		case rec.IsProcess():
			p, _, err := tracefile.DecodeProcess(rec.Opaque.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if p.Event == tracefile.ProcessExeced {
				execs = append(execs, p.Position)
			}
		}
	}
	return cps, execs, stats.Instructions
}

// checkPlacement checks that each checkpoint but the first and the last
// comes as soon as the instructions since the one before, plus
// ExecCheckpointCost for each exec among them, reach every: where they
// do at an exec, right after it; otherwise after exactly that many
// instructions. It returns how many came at an exec.
func checkPlacement(t *testing.T, cps, execs []uint64, every uint64) (atExec int) {
	t.Helper()
	for i := 1; i+1 < len(cps); i++ {
		var n uint64
		at := false
		for _, e := range execs {
			if e > cps[i-1] && e <= cps[i] {
				n++
				at = e == cps[i]
			}
		}
		worth := cps[i] - cps[i-1] + n*ExecCheckpointCost
		switch {
		case at && (worth < every || worth-ExecCheckpointCost >= every):
			t.Errorf("checkpoint at %d, at an exec, after %d instructions and %d execs (worth %d): the exec should bring it at %d", cps[i], cps[i]-cps[i-1], n, worth, every)
		case !at && worth != every:
			t.Errorf("checkpoint at %d after %d instructions and %d execs: worth %d, want exactly %d", cps[i], cps[i]-cps[i-1], n, worth, every)
		}
		if at {
			atExec++
		}
	}
	return atExec
}

// TestCheckpointsAfterExecs: a shell that starts short programs gets
// checkpoints among its start-ups (ExecCheckpointCost), not only one
// per CheckpointEvery instructions.
func TestCheckpointsAfterExecs(t *testing.T) {
	const every = 20_000_000
	const n = 12
	script := strings.Repeat("/bin/true; ", n)
	cps, execs, end := checkpointsAndExecs(t, []string{"/bin/sh", "-c", script}, every)
	t.Logf("checkpoints at %v, execs at %v, end %d", cps, execs, end)
	if len(execs) != n {
		t.Fatalf("%d execs, want %d", len(execs), n)
	}
	if end >= every {
		t.Fatalf("the shell ran %d instructions: the test wants fewer than %d, so that only execs bring checkpoints", end, every)
	}
	// Besides the first (at 0) and the last (at the end), one each
	// time the execs since the one before are worth every.
	perCP := (every + ExecCheckpointCost - 1) / ExecCheckpointCost
	if got, want := len(cps)-2, n/int(perCP); got != want {
		t.Fatalf("%d checkpoints between the first and the last, want %d", got, want)
	}
	if got := checkPlacement(t, cps, execs, every); got != len(cps)-2 {
		t.Errorf("%d checkpoints at an exec, want all %d", got, len(cps)-2)
	}
}

// TestCheckpointsAmongExecsAndLoops: execs and instructions add up; a
// checkpoint an exec brought forward starts a whole interval.
func TestCheckpointsAmongExecsAndLoops(t *testing.T) {
	const every = 20_000_000
	script := strings.Repeat("/bin/true; /bin/true; i=0; while [ $i -lt 500 ]; do i=$((i+1)); done; ", 6)
	cps, execs, end := checkpointsAndExecs(t, []string{"/bin/sh", "-c", script}, every)
	t.Logf("checkpoints at %v, execs at %v, end %d", cps, execs, end)
	atExec := checkPlacement(t, cps, execs, every)
	if atExec == 0 || atExec == len(cps)-2 {
		t.Fatalf("%d of %d checkpoints at an exec: the test wants both kinds", atExec, len(cps)-2)
	}
}

// TestCheckpointsWithoutExecs: a program that never execs keeps its
// checkpoints at the multiples of CheckpointEvery.
func TestCheckpointsWithoutExecs(t *testing.T) {
	const every = 2_000_000
	cps, execs, end := checkpointsAndExecs(t, []string{"/bin/sh", "-c", "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done"}, every)
	if len(execs) != 0 {
		t.Fatalf("execs at %v", execs)
	}
	if end < 3*every {
		t.Fatalf("%d instructions: too few for the test", end)
	}
	for k, c := range cps[:len(cps)-1] {
		if c != uint64(k)*every {
			t.Fatalf("checkpoint %d at %d, want %d (all: %v)", k, c, uint64(k)*every, cps)
		}
	}
	if last := cps[len(cps)-1]; last != end {
		t.Fatalf("last checkpoint at %d, want the end %d", last, end)
	}
}
