// proc_signals: children killed by signals, process groups and kill(-pgid),
// kill(0), stop and continue seen by waitpid (WUNTRACED, WCONTINUED).
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, int st) {
	if (WIFEXITED(st))
		printf("%s: exited %d\n", what, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("%s: killed by %s\n", what, strsignal(WTERMSIG(st)));
	else if (WIFSTOPPED(st))
		printf("%s: stopped by %s\n", what, strsignal(WSTOPSIG(st)));
	else if (WIFCONTINUED(st))
		printf("%s: continued\n", what);
}

static void pause_forever(void) {
	for (;;) pause();
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	int st;

	// A child that crashes, one that aborts, one killed by its parent.
	pid_t c = fork();
	if (c == 0) {
		volatile int *p = NULL;
		*p = 1;
		_exit(0);
	}
	waitpid(c, &st, 0);
	show("null write", st);
	c = fork();
	if (c == 0) {
		// No core file for the test (native and ttd alike).
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	waitpid(c, &st, 0);
	show("abort", st);
	c = fork();
	if (c == 0) pause_forever();
	kill(c, SIGTERM);
	waitpid(c, &st, 0);
	show("SIGTERM", st);

	// A signal handler in the child only: the parent's disposition is its own.
	c = fork();
	if (c == 0) {
		signal(SIGUSR1, SIG_IGN);
		raise(SIGUSR1);
		_exit(21);
	}
	waitpid(c, &st, 0);
	show("child ignores SIGUSR1", st);

	// A process group of three: kill(-pgid) reaches all of them.
	int go[2];
	pipe(go);
	pid_t kids[3];
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			close(go[1]);
			if (i > 0) setpgid(0, kids[0]);
			char x;
			read(go[0], &x, 1);
			pause_forever();
		}
		// Both sides set the group, as shells do, so there is no race.
		setpgid(kids[i], kids[0]);
	}
	printf("group: %d %d %d, mine differs %d\n", getpgid(kids[0]) == kids[0], getpgid(kids[1]) == kids[0],
	       getpgid(kids[2]) == kids[0], getpgrp() != kids[0]);
	errno = 0;
	int r = setpgid(kids[1], getpid() + 1000000);
	printf("setpgid to a missing group: %d %s\n", r, strerror(errno));
	close(go[0]);
	close(go[1]);
	kill(-kids[0], SIGHUP);
	for (int i = 0; i < 3; i++) {
		waitpid(kids[i], &st, 0);
		show("group member", st);
	}
	errno = 0;
	r = kill(-kids[0], SIGHUP);
	printf("kill of an empty group: %d %s\n", r, strerror(errno));

	// Stop and continue.
	c = fork();
	if (c == 0) {
		raise(SIGSTOP);
		_exit(33);
	}
	waitpid(c, &st, WUNTRACED);
	show("raise(SIGSTOP)", st);
	kill(c, SIGCONT);
	waitpid(c, &st, WCONTINUED);
	show("after SIGCONT", st);
	waitpid(c, &st, 0);
	show("then", st);

	// kill(0, sig) in a child's own group reaches it and its child.
	c = fork();
	if (c == 0) {
		setpgid(0, 0);
		pid_t g = fork();
		if (g == 0) pause_forever();
		signal(SIGUSR2, SIG_IGN);
		kill(0, SIGUSR2);
		int gst;
		waitpid(g, &gst, 0);
		_exit(WIFSIGNALED(gst) && WTERMSIG(gst) == SIGUSR2 ? 50 : 51);
	}
	waitpid(c, &st, 0);
	show("kill(0) in a group", st);

	// The child gets its own ppid; getsid and setsid.
	c = fork();
	if (c == 0) {
		pid_t s = setsid();
		_exit(s == getpid() && getsid(0) == getpid() && getpgrp() == getpid() ? 60 : 61);
	}
	waitpid(c, &st, 0);
	show("setsid", st);
	return 0;
}
