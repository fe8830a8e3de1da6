package emu

import (
	"bytes"
	"strings"
	"testing"
)

// namespaceProg asks for namespaces and process-only features ttd
// refuses, and prints the errno of each.
const namespaceProg = `#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
	errno = 0;
	int u = unshare(CLONE_NEWNS);
	printf("unshare NEWNS %d %d\n", u, errno);
	errno = 0;
	u = unshare(CLONE_NEWUSER | CLONE_NEWPID);
	printf("unshare NEWUSER|NEWPID %d %d\n", u, errno);
	errno = 0;
	u = unshare(CLONE_FILES);
	printf("unshare FILES %d %d\n", u, errno);
	errno = 0;
	long r = syscall(SYS_clone, CLONE_NEWNET | 17, 0, 0, 0, 0);
	printf("clone NEWNET %ld %d\n", r, errno);
	errno = 0;
	r = syscall(SYS_clone, CLONE_PIDFD | 17, 0, 0, 0, 0);
	printf("clone PIDFD %ld %d\n", r, errno);
	// Ids in creation order: each child gets the next one.
	int a = fork();
	if (a == 0) _exit(0);
	int b = fork();
	if (b == 0) _exit(0);
	waitpid(a, 0, 0);
	waitpid(b, 0, 0);
	printf("pids %d %d\n", a - getpid(), b - getpid());
	return 0;
}
`

// TestUnsupportedCloneNamed checks that namespaces fail with EPERM and
// CLONE_PIDFD with EINVAL, that --verbose names what was refused, and that
// child pids follow each other in creation order.
func TestUnsupportedCloneNamed(t *testing.T) {
	exe := build(t, glibcDyn, namespaceProg)
	var log bytes.Buffer
	r, err := runEmuErr(t, Config{Path: exe, Verbose: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	want := "unshare NEWNS -1 1\nunshare NEWUSER|NEWPID -1 1\nunshare FILES 0 0\nclone NEWNET -1 1\nclone PIDFD -1 22\npids 1 2\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	for _, name := range []string{"unshare of CLONE_NEWNS", "CLONE_NEWUSER|CLONE_NEWPID", "clone with CLONE_NEWNET",
		"clone of a process with CLONE_PIDFD"} {
		if !strings.Contains(log.String(), name) {
			t.Errorf("--verbose does not name %q:\n%s", name, log.String())
		}
	}
}

// TestNoChildren checks that Config.NoChildren refuses fork with ENOSYS
// and says why under --verbose.
func TestNoChildren(t *testing.T) {
	exe := build(t, glibcDyn, `#include <errno.h>
#include <stdio.h>
#include <unistd.h>
int main(void) { int r = fork(); printf("%d %d\n", r, errno); return 0; }
`)
	var log bytes.Buffer
	r, err := runEmuErr(t, Config{Path: exe, Verbose: true, Log: &log, NoChildren: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.stdout != "-1 38\n" || !strings.Contains(log.String(), "new processes") {
		t.Errorf("stdout %q, log %q", r.stdout, log.String())
	}
}
