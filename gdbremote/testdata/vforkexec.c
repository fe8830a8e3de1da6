// vforkexec.c: a vfork whose child execs /bin/true; the parent, resumed
// when the child has exec'd, calls after and waits for the child.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int after(int v) {
	return v + 1;
}

int main(void) {
	int v = 5;
	pid_t c = vfork();
	if (c == 0) {
		execl("/bin/true", "true", (char *)0);
		_exit(127);
	}
	v = after(v);
	int st;
	waitpid(c, &st, 0);
	printf("%d %d\n", v, WEXITSTATUS(st));
	return 0;
}
