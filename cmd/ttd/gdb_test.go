package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReplayGDB: ttd replay --gdb runs gdb on the recording, with the
// executable embedded in the trace after the file was deleted.
func TestReplayGDB(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gdb"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("gdb not installed")
		}
		t.Skip("SKIPPED LOUDLY: gdb not installed (make deps installs it)")
	}
	gdbGlobals(t, recordGlobals(t, true))
}

// gdbGlobals runs gdb on a recording of globals.c: forwards, backwards
// over a line, to the end and back to the breakpoint.
func gdbGlobals(t *testing.T, trace string) {
	t.Helper()
	out, errs, st := ttdCmd(t, "replay", "--gdb", trace, "--", "-batch", "-nx", "-ex", "break main", "-ex", "continue",
		"-ex", "next", "-ex", "reverse-next", "-ex", "monitor when", "-ex", "continue", "-ex", "continue", "-ex", "p counter", "-ex", "reverse-continue")
	if st != 0 {
		t.Fatalf("status %d: %s\n%s", st, errs, out)
	}
	all := out + errs
	for _, want := range []string{"Breakpoint 1, main () at", "p.c:", "position ",
		// The program signals itself: gdb's numbering, not Linux's.
		"Program received signal SIGUSR1", "on_usr1",
		"No more reverse-execution history.", "$1 = 7", "Breakpoint 1, main ()"} {
		if !strings.Contains(all, want) {
			t.Errorf("gdb lacks %q:\n%s", want, all)
		}
	}
}

// TestGDBServerErrors: a bad trace is one clear line; the server binds
// to loopback.
func TestGDBServerErrors(t *testing.T) {
	t.Parallel()
	_, errs, st := ttdCmd(t, "gdbserver", "/nonexistent.ttd")
	if st != 1 || !strings.Contains(errs, "nonexistent.ttd") || strings.Contains(errs, "goroutine") {
		t.Errorf("bad trace: status %d, %q", st, errs)
	}
	_, errs, st = ttdCmd(t, "gdbserver")
	if st != 2 || !strings.Contains(errs, "usage: ttd gdbserver") {
		t.Errorf("no trace: status %d, %q", st, errs)
	}
}
