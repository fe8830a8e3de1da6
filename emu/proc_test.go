package emu

import (
	"strings"
	"testing"
)

// TestProcTaskFiles checks /proc/PID/task/TID/{comm,stat,status} of
// every thread (one renamed with prctl), of a child process's thread,
// and /proc/thread-self and its link, against the host.
func TestProcTaskFiles(t *testing.T) {
	got := compare(t, build(t, glibcDyn, "proctask.c"))
	// The shape the comparison relies on: every line printed.
	for _, want := range []string{"thread1 comm worker-one", "Pid=tid 1 Tgid=pid 1 NSpid=tid 1 Threads 3",
		"thread-self link ok 1", "worker thread-self comm worker-one", "worker thread-self Pid=tid 1", "child status Name kid Pid=tid 1", "missing task (missing)"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
}
