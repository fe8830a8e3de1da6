/* prctl's settings read back, and what they do when a parent exits: the
 * death signal of a child whose parent exits, and an orphan going to the
 * nearest child subreaper rather than to the first process. */
#define _GNU_SOURCE
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	char name[16] = {0};
	int sig = -1, reaper = -1;
	printf("set name %d\n", prctl(PR_SET_NAME, "kid"));
	prctl(PR_GET_NAME, name);
	printf("name %s\n", name);
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE));
	printf("set dumpable 0: %d, now %d\n", prctl(PR_SET_DUMPABLE, 0), prctl(PR_GET_DUMPABLE));
	printf("set dumpable 2: %d\n", prctl(PR_SET_DUMPABLE, 2));
	prctl(PR_SET_DUMPABLE, 1);
	printf("pdeathsig %d", prctl(PR_GET_PDEATHSIG, &sig));
	printf(" %d\n", sig);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	prctl(PR_GET_PDEATHSIG, &sig);
	printf("pdeathsig now %d; bad %d\n", sig, prctl(PR_SET_PDEATHSIG, 99));
	prctl(PR_SET_PDEATHSIG, 0);
	printf("no_new_privs %d, bad set %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), prctl(PR_SET_NO_NEW_PRIVS, 2, 0, 0, 0));
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	printf("no_new_privs now %d\n", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	printf("timerslack %d", prctl(PR_GET_TIMERSLACK));
	prctl(PR_SET_TIMERSLACK, 123456);
	printf(" now %d", prctl(PR_GET_TIMERSLACK));
	prctl(PR_SET_TIMERSLACK, 0);
	printf(" reset %d\n", prctl(PR_GET_TIMERSLACK));
	printf("keepcaps %d", prctl(PR_GET_KEEPCAPS));
	prctl(PR_SET_KEEPCAPS, 1);
	printf(" now %d\n", prctl(PR_GET_KEEPCAPS));
	printf("thp %d", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	printf(" now %d\n", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	printf("capbset sys_admin %d, chown %d\n", prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN), prctl(PR_CAPBSET_READ, CAP_CHOWN));
	printf("unknown option %d\n", prctl(9999, 0, 0, 0, 0));
	fflush(stdout);

	/* A subreaper S below us: S forks I, I forks C and exits; C is
	 * then S's child (natively and under ttd), and C's death signal
	 * (set while I lived) kills it. */
	pid_t s = fork();
	if (s == 0) {
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		prctl(PR_GET_CHILD_SUBREAPER, &reaper);
		int p[2];
		pipe(p);
		pid_t i = fork();
		if (i == 0) {
			pid_t c = fork();
			if (c == 0) {
				prctl(PR_SET_PDEATHSIG, SIGTERM);
				write(p[1], "x", 1);
				for (;;)
					pause();
			}
			char b;
			read(p[0], &b, 1); /* the death signal is set */
			_exit(0);
		}
		int st;
		waitpid(i, &st, 0);
		pid_t w = wait(&st); /* C, reparented to S */
		printf("subreaper %d; orphan reaped by it %d, killed by signal %d\n", reaper, w > 0,
		       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		fflush(stdout);
		_exit(0);
	}
	int st;
	waitpid(s, &st, 0);
	printf("subreaper's child reaped by us: %d\n", wait(&st) < 0);
	return 0;
}
