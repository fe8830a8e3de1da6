package gdbremote

import (
	"os"
	"path/filepath"
	"testing"

	"ttd/emu"
	"ttd/recorder"
)

// recordedShell records /bin/sh -c 'PROG; true' with PROG
// testdata/name.c built by recorded with cflags: the shell forks, the
// child execs PROG.
func recordedShell(t *testing.T, name string, cflags ...string) (prog, trace string) {
	t.Helper()
	prog, _ = recorded(t, name, cflags...)
	trace = filepath.Join(t.TempDir(), name+"-sh.ttd")
	null, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer null.Close()
	st, _, err := recorder.Record(emu.Config{Path: "/bin/sh", Args: []string{"/bin/sh", "-c", prog + "; true"},
		Env: []string{"PATH=/usr/bin:/bin"}, Stdout: null, Stderr: null}, recorder.Options{Path: trace})
	if err != nil || st.Signal != 0 || st.Code != 0 {
		t.Fatalf("recording sh -c %s: %v %v", name, st, err)
	}
	return prog, trace
}

// TestGDBFollowExecPIE: gdb follows the shell's child through its fork
// (a vfork event: dash vforks) and its exec of a PIE program (exec event), relocates
// that program from the child's own auxiliary vector, and stops at a
// breakpoint in it with the right backtrace, forward and with
// reverse-continue. Without the events gdb never relocated a PIE child
// and the breakpoint did not stop.
func TestGDBFollowExecPIE(t *testing.T) {
	prog, trace := recordedShell(t, "forktree", "-pthread", "-pie", "-fPIE")
	out := gdb(t, "/bin/sh", trace, "set breakpoint pending on", "set follow-fork-mode child",
		"break mark", "continue", "bt", "continue", "p v", "continue", "p v", "reverse-continue", "bt", "p who")
	inOrder(t, out, "vfork to child Thread", "is executing new program: "+prog,
		"Breakpoint 1, mark (v=10) at", "forktree.c:13",
		"#0  mark (v=10) at", "#1  0x", " in main () at", "forktree.c:22",
		"Attaching after Thread", " fork to child Thread", "Detaching after fork from parent process",
		"Breakpoint 1, mark (v=20)", "$1 = 20",
		"Breakpoint 1, mark (v=30)", "$2 = 30",
		"Breakpoint 1, mark (v=20)", "#0  mark (v=20)", "in main () at", "$3 = 10")
}
