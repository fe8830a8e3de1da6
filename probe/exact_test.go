package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ttd/emu"
	"ttd/reader"
	"ttd/recorder"
	"ttd/tracefile"
)

// TestCopyinstrNoReads: over a trace of the default mode (no reads
// logged) the replay holds the whole memory, so copyinstr reads any
// mapped byte — the stack buffer snprintf filled, stdio's heap buffer —
// wherever the segment starts. Printing every write(1)'s buffer gives
// the program's own output, for one job and for a split at checkpoints
// (their memory restored from TRACE.pages). Before, only bytes the
// segment had seen accessed were known, and the heap buffer's were not.
func TestCopyinstrNoReads(t *testing.T) {
	prog := buildCalls(t)
	want, err := exec.Command(prog, "300").Output()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "calls-noreads.ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: prog, Args: []string{prog, "300"}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null},
		recorder.Options{Path: path, CheckpointEvery: 3000, Replayable: true})
	if err != nil || st.Code != 0 {
		t.Fatalf("recording: %v %v", st, err)
	}
	tr, err := reader.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.BuildPagesFile(tracefile.PagesPath(path), nil); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	src := `#pragma D option quiet
syscall::write:entry /arg0 == 1/ { printf("%s", copyinstr(arg1)); }`
	for _, jobs := range []int{1, 2} {
		out, errs, o := runScript(t, path, src, jobs)
		if out != string(want) || errs != "" || o.Faults != 0 {
			t.Errorf("jobs %d: %d faults\nstdout %q\nwant   %q\nstderr %s", jobs, o.Faults, out, want, errs)
		}
	}
}
