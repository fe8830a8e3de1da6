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

// TestProcMapsLayout checks /proc/self/maps against the host's, apart
// from the addresses: the device and inode of every mapped file, its
// name with symbolic links resolved (the loader's /lib64 path), the
// column names start in, and the width of the addresses.
func TestProcMapsLayout(t *testing.T) {
	got := compare(t, build(t, glibcDyn, "procmaps.c"))
	for _, want := range []string{"| column 74 wide 1", "ld-linux-x86-64.so.2 | column 74", "anonymous lines end \"0 \": 1"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
}

// TestPrctl checks prctl's settings read back as on the host, and what the
// death signal and a child subreaper do when a parent exits.
func TestPrctl(t *testing.T) {
	got := compare(t, build(t, glibcDyn, "prctl.c"))
	for _, want := range []string{"no_new_privs now 1", "pdeathsig now 10", "subreaper 1; orphan reaped by it 1, killed by signal 15"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
}
