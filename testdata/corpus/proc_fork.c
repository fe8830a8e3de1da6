// proc_fork: fork, pipes between processes, wait4/waitpid/waitid and their
// status encoding, copy-on-write memory, SIGCHLD, orphans and a subreaper.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t sigchld;
static void on_chld(int sig) { (void)sig; sigchld++; }

static char big[1 << 20];

int main(void) {
	// Orphans come back to us, as they do to ttd's first process.
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	setvbuf(stdout, NULL, _IONBF, 0);
	pid_t me = getpid();

	// A pipe from a child to its parent.
	int fds[2];
	if (pipe(fds) != 0) return 1;
	pid_t c = fork();
	if (c == 0) {
		close(fds[0]);
		char msg[64];
		int n = snprintf(msg, sizeof msg, "child: parent is me: %d\n", getppid() == me);
		write(fds[1], msg, n);
		_exit(7);
	}
	close(fds[1]);
	char buf[128];
	ssize_t n, total = 0;
	while ((n = read(fds[0], buf + total, sizeof buf - 1 - total)) > 0) total += n;
	buf[total] = 0;
	printf("parent read %zd bytes: %s", total, buf);
	int st;
	pid_t w = waitpid(c, &st, 0);
	printf("waitpid: same pid %d, exited %d, code %d, raw %#x\n", w == c, WIFEXITED(st), WEXITSTATUS(st), st);
	close(fds[0]);

	// Copy-on-write: each side sees its own writes only.
	memset(big, 'p', sizeof big);
	c = fork();
	if (c == 0) {
		int ok = big[12345] == 'p';
		memset(big, 'c', sizeof big);
		_exit(ok && big[999] == 'c' ? 0 : 1);
	}
	waitpid(c, &st, 0);
	printf("cow: child ok %d, parent still sees %c\n", WEXITSTATUS(st) == 0, big[999]);

	// Several children, reaped in order of their pids; WNOHANG first.
	pid_t kids[4];
	int pw[2];
	pipe(pw);
	for (int i = 0; i < 4; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			char x;
			close(pw[1]);
			read(pw[0], &x, 1); // wait until the parent says go
			_exit(10 + i);
		}
	}
	close(pw[0]);
	w = waitpid(-1, &st, WNOHANG);
	printf("WNOHANG before any exit: %d\n", w);
	close(pw[1]); // all children go
	int sum = 0;
	for (int i = 0; i < 4; i++) {
		w = waitpid(kids[i], &st, 0);
		sum += WEXITSTATUS(st);
		printf("kid %d: %d\n", i, w == kids[i] && WIFEXITED(st));
	}
	w = wait(&st);
	printf("sum of codes %d; wait now: %d errno ECHILD %d\n", sum, w, errno == ECHILD);

	// waitid with WNOWAIT leaves the child waitable.
	c = fork();
	if (c == 0) _exit(3);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	int r = waitid(P_PID, c, &si, WEXITED | WNOWAIT);
	printf("waitid WNOWAIT: r %d signo %d code CLD_EXITED %d status %d pid ok %d\n", r, si.si_signo,
	       si.si_code == CLD_EXITED, si.si_status, si.si_pid == c);
	r = waitid(P_ALL, 0, &si, WEXITED);
	printf("waitid again: r %d status %d\n", r, si.si_status);
	si.si_pid = 77;
	r = waitid(P_ALL, 0, &si, WEXITED);
	printf("then ECHILD: %d, si_pid cleared %d\n", r == -1 && errno == ECHILD, si.si_pid == 0);

	// SIGCHLD with a handler: wait is interrupted or not, the signal comes.
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	c = fork();
	if (c == 0) _exit(0);
	waitpid(c, &st, 0);
	printf("SIGCHLD handler ran: %d\n", sigchld == 1);

	// SIGCHLD ignored: children are reaped by themselves, wait gets ECHILD.
	signal(SIGCHLD, SIG_IGN);
	c = fork();
	if (c == 0) _exit(5);
	w = waitpid(c, &st, 0);
	printf("SIG_IGN: wait %d errno ECHILD %d\n", w, errno == ECHILD);
	signal(SIGCHLD, SIG_DFL);

	// An orphan: its parent exits, it is re-parented to us (subreaper).
	if (pipe(fds) != 0) return 1;
	c = fork();
	if (c == 0) {
		pid_t g = fork();
		if (g == 0) {
			char x;
			close(fds[1]);
			read(fds[0], &x, 1); // until our parent is gone
			printf("orphan: adopted by the subreaper %d\n", getppid() == me);
			_exit(9);
		}
		_exit(0);
	}
	close(fds[0]);
	waitpid(c, &st, 0);
	close(fds[1]);
	w = wait(&st);
	printf("reaped the orphan: code %d\n", WEXITSTATUS(st));

	// fork in a child's child, exit statuses through two levels.
	c = fork();
	if (c == 0) {
		pid_t g = fork();
		if (g == 0) _exit(42);
		waitpid(g, &st, 0);
		_exit(WEXITSTATUS(st) + 1);
	}
	waitpid(c, &st, 0);
	printf("grandchild code + 1: %d\n", WEXITSTATUS(st));

	// A raw clone with CLONE_CHILD_SETTID: the kernel writes the
	// child's tid in the child's memory before it runs (glibc's fork
	// overwrites it, so only a raw clone reads what the kernel wrote).
	static volatile pid_t ctid;
	ctid = 0;
	c = syscall(SYS_clone, CLONE_CHILD_SETTID | SIGCHLD, 0, 0, &ctid, 0);
	if (c == 0) _exit(ctid == syscall(SYS_getpid) ? 7 : 8);
	waitpid(c, &st, 0);
	printf("clone CHILD_SETTID: the child read its tid: %s, the parent's word: %d\n",
	       WEXITSTATUS(st) == 7 ? "yes" : "no", ctid);
	return 0;
}
