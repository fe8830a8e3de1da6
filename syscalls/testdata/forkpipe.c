/* forkpipe: a child that reads what its parent wrote before the fork,
 * writes to a pipe and execs echo into it; the parent reads the pipe
 * once the child ended (one read, whatever the timing). Every buffer
 * of the child must be exported from its own memory. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int p[2], q[2];
	char buf[256];
	pipe(p);
	pipe(q);
	write(q[1], "to the child", 12);
	pid_t pid = fork();
	if (pid == 0) {
		char mine[32];
		ssize_t n = read(q[0], mine, sizeof mine);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		write(1, mine, n);
		write(1, " and back\n", 10);
		execl("/bin/echo", "echo", "exec'd echo", (char *)0);
		_exit(127);
	}
	close(p[1]);
	int st;
	waitpid(pid, &st, 0);
	ssize_t n = read(p[0], buf, sizeof buf);
	write(-1, "READ", 4);
	write(2, buf, n);
	return 0;
}
