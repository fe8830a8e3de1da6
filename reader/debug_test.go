package reader

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"ttd/emu"
	"ttd/recorder"
)

type acc struct {
	pos, addr, val uint64
	size           int
	write          bool
}

// TestAccessesMatchRecording records a program with the recorder's
// DebugAccess hook, which sees every memory access as the program made
// it, and checks that re-simulation reports exactly the same accesses,
// with the same positions and values (the hook stays on the observer
// path, so the recording's own fast path is not what is compared; the
// replay is). TTD_DEBUG_PROG names another program to check.
func TestAccessesMatchRecording(t *testing.T) {
	prog := os.Getenv("TTD_DEBUG_PROG")
	args := []string{prog}
	if prog == "" {
		if _, err := exec.LookPath("gcc"); err != nil {
			t.Skip("gcc not installed")
		}
		prog = filepath.Join(t.TempDir(), "loop")
		if b, err := exec.Command("gcc", "-O1", "-o", prog, "../ttd/testdata/loop.c").CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		args = []string{prog, "3"}
	}
	path := t.TempDir() + "/t.ttd"
	var recLog []acc
	recorder.DebugAccess = func(pos uint64, addr uint64, size int, val uint64, write bool) {
		recLog = append(recLog, acc{pos, addr, val, size, write})
	}
	defer func() { recorder.DebugAccess = nil }()
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	if _, _, err := recorder.Record(emu.Config{Path: prog, Args: args, Stdout: null}, recorder.Options{Path: path}); err != nil {
		t.Fatal(err)
	}
	recorder.DebugAccess = nil
	tr, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rp, err := tr.NewReplay(0)
	if err != nil {
		t.Fatal(err)
	}
	var repLog []acc
	rp.Access = func(a *Access) {
		pos := a.Position
		if a.Source != AccessCPU {
			pos++ // the recorder logs kernel writes at the syscall's key frame
		}
		repLog = append(repLog, acc{pos, a.Addr, a.Value, a.Size, a.Write})
	}
	if err := rp.RunTo(^uint64(0)); err != ErrEnd {
		t.Fatalf("replay: %v", err)
	}
	// A syscall's writes come in the record's order in the replay (the
	// bytes it logs, then the spans the prediction cache held), not the
	// kernel's: compare each position's accesses as a set.
	for _, l := range [][]acc{recLog, repLog} {
		sort.SliceStable(l, func(i, j int) bool {
			a, b := l[i], l[j]
			if a.pos != b.pos {
				return a.pos < b.pos
			}
			if a.write != b.write {
				return !a.write
			}
			if a.addr != b.addr {
				return a.addr < b.addr
			}
			return a.size < b.size
		})
	}
	if len(recLog) < 1000 {
		t.Fatalf("only %d accesses recorded: the test checks little", len(recLog))
	}
	for i := range max(len(recLog), len(repLog)) {
		if i >= len(recLog) || i >= len(repLog) || recLog[i] != repLog[i] {
			for j := max(0, i-5); j <= i; j++ {
				if j < len(recLog) {
					t.Logf("recorded %d: %+v", j, recLog[j])
				}
				if j < len(repLog) {
					t.Logf("replayed %d: %+v", j, repLog[j])
				}
			}
			t.Fatalf("first difference at access %d of %d recorded, %d replayed", i, len(recLog), len(repLog))
		}
	}
}
