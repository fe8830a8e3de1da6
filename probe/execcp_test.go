package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ttd/emu"
	"ttd/recorder"
)

// TestExecCheckpointsKeepResults: a shell tree whose checkpoints the
// recorder brings forward at execs (recorder.ExecCheckpointCost) gives
// the same output for 1, 2 and 3 jobs, with segments that begin right
// after an exec; the test fails if the recorder stops placing them.
func TestExecCheckpointsKeepResults(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("SKIP: no /bin/sh")
	}
	const every = 20_000_000
	path := filepath.Join(t.TempDir(), "tree.ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	script := strings.Repeat("/bin/echo a b c; ", 12)
	st, stats, err := recorder.Record(emu.Config{Path: "/bin/sh", Args: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null},
		recorder.Options{Path: path, CheckpointEvery: every})
	if err != nil || st.Code != 0 {
		t.Fatalf("recording: %v %v", st, err)
	}
	// Without the execs' cost there would be two: at the start and at
	// the end (the tree runs fewer than every instructions).
	if stats.Instructions >= every || stats.Checkpoints < 4 {
		t.Fatalf("%d instructions, %d checkpoints: want fewer than %d and at least 4", stats.Instructions, stats.Checkpoints, every)
	}
	src := `proc:::exec { printf("%s %d\n", execname, pid); }
syscall::write:entry { @w[execname] = count(); @b = sum(arg2); }
fn::malloc:entry { @m[probemod] = count(); }
thread:::exit { @x = count(); }
`
	var ref string
	for jobs := 1; jobs <= 3; jobs++ {
		out, errs, _ := runScript(t, path, src, jobs)
		if errs != "" {
			t.Fatalf("%d jobs: stderr %s", jobs, errs)
		}
		if jobs == 1 {
			ref = out
			if strings.Count(out, "proc:::exec echo ") != 12 || !strings.Contains(out, " 72\n") {
				t.Fatalf("output lacks its 12 execs or the bytes written (12 x 6):\n%s", out)
			}
			continue
		}
		if out != ref {
			t.Fatalf("%d jobs:\n%s\nwant (1 job):\n%s", jobs, out, ref)
		}
	}
}
