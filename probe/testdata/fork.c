// fork.c: a process tree. The parent prints its pid and parent pid,
// forks a child that prints its own and execs echo, waits for it,
// then execs echo itself: the probe tests compare pid, ppid and
// execname with what the program printed.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	printf("parent %d %d\n", getpid(), getppid());
	fflush(stdout);
	pid_t c = fork();
	if (c == 0) {
		printf("child %d %d\n", getpid(), getppid());
		fflush(stdout);
		execl("/bin/echo", "echo", "exec", (char *)0);
		_exit(1);
	}
	int st;
	waitpid(c, &st, 0);
	printf("waited %d %d\n", c, WEXITSTATUS(st));
	fflush(stdout);
	execl("/bin/echo", "echo", "done", (char *)0);
	return 1;
}
