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
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
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
	errno = 0;
	r = syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWPID | 17, 0, 0, 0, 0);
	printf("clone NEWUSER|NEWPID %ld %d\n", r, errno);
	const char *ns[] = {"net", "mnt", "user", "pid"};
	for (int i = 0; i < 4; i++) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/ns/%s", ns[i]);
		int fd = open(path, O_RDONLY);
		errno = 0;
		int s = setns(fd, 0);
		printf("setns %s %d %d\n", ns[i], s, errno);
		errno = 0;
		s = setns(fd, CLONE_NEWUTS);
		printf("setns %s as uts %d %d\n", ns[i], s, errno);
		close(fd);
	}
	errno = 0;
	u = setns(open("/dev/null", O_RDONLY), 0);
	printf("setns /dev/null %d %d\n", u, errno);
	errno = 0;
	u = setns(-1, 0);
	printf("setns -1 %d %d\n", u, errno);
	struct clone_args ca;
	pid_t tids[2] = {4000, 4001};
	memset(&ca, 0, sizeof ca);
	ca.exit_signal = 17;
	ca.set_tid = (uintptr_t)tids;
	ca.set_tid_size = 1;
	errno = 0;
	r = syscall(SYS_clone3, &ca, sizeof ca);
	printf("clone3 set_tid %ld %d\n", r, errno);
	ca.set_tid_size = 2;
	errno = 0;
	r = syscall(SYS_clone3, &ca, sizeof ca);
	printf("clone3 set_tid 2 levels %ld %d\n", r, errno);
	ca.set_tid_size = 0;
	errno = 0;
	r = syscall(SYS_clone3, &ca, sizeof ca);
	printf("clone3 set_tid without size %ld %d\n", r, errno);
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
	// What Linux answers an unprivileged process (the tests may run
	// as root, so the host cannot be the oracle here). The setns and
	// clone3 lines are what Debian 12's kernel printed for this program
	// run natively as nobody (setpriv --reuid=65534); the namespace
	// lines are a kernel that refuses unprivileged user namespaces.
	want := "unshare NEWNS -1 1\nunshare NEWUSER|NEWPID -1 1\nunshare FILES 0 0\nclone NEWNET -1 1\nclone PIDFD -1 22\n" +
		"clone NEWUSER|NEWPID -1 1\n" +
		"setns net -1 1\nsetns net as uts -1 22\nsetns mnt -1 1\nsetns mnt as uts -1 22\n" +
		"setns user -1 22\nsetns user as uts -1 22\nsetns pid -1 1\nsetns pid as uts -1 22\n" +
		"setns /dev/null -1 22\nsetns -1 -1 9\n" +
		"clone3 set_tid -1 1\nclone3 set_tid 2 levels -1 22\nclone3 set_tid without size -1 22\npids 1 2\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	for _, name := range []string{"unshare of CLONE_NEWNS", "CLONE_NEWUSER|CLONE_NEWPID", "clone with CLONE_NEWNET",
		"clone of a process with CLONE_PIDFD", "clone with CLONE_NEWUSER|CLONE_NEWPID", "setns to a CLONE_NEWNET namespace",
		"setns to a CLONE_NEWNS namespace", "setns to a CLONE_NEWUSER namespace", "clone3 with set_tid"} {
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
