/* I/O priorities: ioprio_get and ioprio_set on the calling thread (each
 * class, a class that does not exist, IOPRIO_CLASS_NONE), by pid, for a
 * pid that does not exist, a bad `which`, and what a forked child
 * inherits; ionice makes these. */
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long r) { printf("%s %ld %d\n", what, r, r < 0 ? errno : 0); }

int main(void)
{
	show("get", syscall(SYS_ioprio_get, 1, 0));
	show("set idle", syscall(SYS_ioprio_set, 1, 0, (3 << 13) | 0));
	show("get", syscall(SYS_ioprio_get, 1, 0));
	show("set bad class", syscall(SYS_ioprio_set, 1, 0, (7 << 13) | 0));
	show("set be7", syscall(SYS_ioprio_set, 1, 0, (2 << 13) | 7));
	show("get", syscall(SYS_ioprio_get, 1, 0));
	show("get bad which", syscall(SYS_ioprio_get, 9, 0));
	show("get no such", syscall(SYS_ioprio_get, 1, 999999));
	show("set none0", syscall(SYS_ioprio_set, 1, 0, 0));
	show("get", syscall(SYS_ioprio_get, 1, 0));
	show("set rt4", syscall(SYS_ioprio_set, 1, 0, (1 << 13) | 4));
	show("get by pid", syscall(SYS_ioprio_get, 1, getpid()));
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		show("child get", syscall(SYS_ioprio_get, 1, 0));
		fflush(stdout);
		_exit(0);
	}
	waitpid(c, NULL, 0);
	return 0;
}
