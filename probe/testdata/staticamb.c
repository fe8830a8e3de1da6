// staticamb: a fork/exec tree whose two programs overlap in memory. The
// child (argv[1], bigro.c) is a PIE like this one, so both load at the
// same address, and its 64 KiB of read-only data covers the address of
// this program's counter. counter is writable and never read before
// mark(): over the recording its value there is unknown, and a probe
// reading it must fault rather than read the other program's bytes.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int counter = 7;

__attribute__((noinline)) void mark(void) { __asm__ volatile(""); }

int main(int argc, char **argv) {
	if (argc < 2)
		return 2;
	pid_t p = fork();
	if (p == 0) {
		execl(argv[1], argv[1], (char *)0);
		_exit(127);
	}
	int st;
	waitpid(p, &st, 0);
	mark();
	printf("%d %d\n", WEXITSTATUS(st), counter);
	return 0;
}
