package emu

import (
	"strings"
	"testing"

	"ttd/x86"
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

// TestMapsAsLinux compares /proc/self/maps line for line with the
// host's, randomisation off: the vDSO's mappings below the interpreter,
// a program without an interpreter (static PIE) in the mmap area with
// its heap at ELF_ET_DYN_BASE, a bss past the file as anonymous memory,
// the stack as execve maps it and as grown, and a mapping made between
// open and read.
func TestMapsAsLinux(t *testing.T) {
	if x86.WindowOn() {
		t.Skip("the host window (TTD_WINDOW=1) moves the kernel's choices below 2^40: the layout is not Linux's")
	}
	forEachToolchain(t, []toolchain{glibcDyn, glibcStat, glibcPIE}, func(t *testing.T, tc toolchain) {
		exe := build(t, tc, "mapsexact.c")
		compare(t, exe, "short") // a stack within what execve maps
		got := compare(t, exe)
		for _, want := range []string{"personality 0x40000", "fstat size 0 mode 444", "[stack]"} {
			if !strings.Contains(got.stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, got.stdout)
			}
		}
		if !strings.Contains(got.stdout, "[vdso]") {
			t.Errorf("no [vdso] line:\n%s", got.stdout)
		}
	})
}

// TestInotify checks inotify's events as the host gives them: a
// directory's file created, written, closed, its mode changed, renamed
// (the two halves' cookie) and removed; IN_MASK_ADD; a blocking read
// woken by a child; removing a watch (IN_IGNORED, then EINVAL).
func TestInotify(t *testing.T) {
	got := compare(t, build(t, glibcDyn, "inotify.c"))
	for _, want := range []string{"wd=1 mask=0x80 cookie-set=1 name=g", "blocking read 32: mask=0x100 name=f", "wd=1 mask=0x8000", "rm_watch again=-1"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
}

// TestCapabilities compares capget, capset, the bounding and ambient
// sets, securebits, fork and execve's rules with the host's.
func TestCapabilities(t *testing.T) {
	got := compare(t, build(t, glibcDyn, "caps.c"))
	for _, want := range []string{"bad version: rc=-1 errno=22 version now 0x20080522", "capset eff beyond perm: -1",
		"bad version, NULL data: rc=0 version now 0x20080522", "ambient raise chown: 0", "child:", "exec:", "exec-noroot:",
		"keepcaps locked: -1"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
}
