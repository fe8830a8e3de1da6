package emu

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestPtrace compares a tracer's view of its tracees with the host's:
// syscall-stops with their registers and PTRACE_GET_SYSCALL_INFO, peek,
// poke, process_vm_readv and /proc/PID/mem, signal-delivery-stops (injected and
// suppressed), PTRACE_EVENT_EXIT, single steps, PTRACE_SEIZE with
// PTRACE_INTERRUPT, a group-stop, PTRACE_LISTEN and SIGCONT, the fork
// event with its auto-attached child, and the exec event. The program is
// a corpus program: cmd/ttd's corpus tests record and replay it.
func TestPtrace(t *testing.T) {
	got := compare(t, build(t, glibcDyn, "../../testdata/corpus/ptrace.c"))
	for _, want := range []string{"getppid entry: rax -38 args 11 22 33 info 80 op 1 nr 110 arg1 22",
		"chdir exit: rax -2 info 33 op 2 rval -2 error 1", "proc mem: 8 0x5678, 8, 8 0x9abc, offset moved 1", "child: secret 0x9abc usr1 10", "end: exited 3", "step: 20 traps, 20 moves, by ",
		"after SIGCONT: stopped sig 5 event 128", "exec: event, then sig 0x85 orig_rax 59 rax 0", "plain exec: stopped sig 5 event 0",
		"detached child writes\ndetach: exited 5"} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
}

// TestStraceUnderTTD runs the host's strace under ttd, following a
// shell's children, and compares what it prints with strace run
// natively (pids aside): date's clock_gettime is the vDSO's, which
// Linux answers without a syscall-stop.
func TestStraceUnderTTD(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("strace (apt package strace) is needed in CI: %v", err)
		}
		t.Skipf("strace (apt package strace) not installed: %v", err)
	}
	args := []string{"-f", "-qq", "-e", "trace=openat,chdir,exit_group,clock_gettime,gettimeofday", "-e", "signal=none", "-o", "/dev/stdout",
		"/bin/sh", "-c", "/bin/true; date +%s >/dev/null; cd /nonexistent-dir; exit 3"}
	env := []string{"PATH=/usr/bin:/bin"}
	want := runNative(t, strace, env, args...)
	got := runEmu(t, strace, env, args...)
	pid := regexp.MustCompile(`(?m)^\d+ +`)
	w, g := pid.ReplaceAllString(want.stdout, ""), pid.ReplaceAllString(got.stdout, "")
	if w != g || !strings.Contains(g, `chdir("/nonexistent-dir")`) {
		t.Errorf("strace's output differs\n--- native\n%s--- ttd\n%s", w, g)
	}
	if got.status.Code != want.status.Code || want.status.Code != 3 {
		t.Errorf("status: native %v, ttd %v", want.status, got.status)
	}
}
