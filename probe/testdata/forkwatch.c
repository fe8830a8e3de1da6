// forkwatch.c: a parent and its forked child both write the global
// hits, each in its own address space, a known number of times with
// known values: the parent 1, 2, 3 before the fork and 21..24 after
// the child ended (7 writes, sum 96), the child 11..15 and then, by a
// read(2) from a pipe, 16 (6 writes, sum 81). The child's writes leave
// the parent's hits as it was: the parent prints 3 after waiting.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int hits;

int main(void) {
	for (int i = 1; i <= 3; i++)
		hits = i;
	pid_t c = fork();
	if (c == 0) {
		for (int i = 11; i <= 15; i++)
			hits = i;
		int p[2], v = 16;
		if (pipe(p) != 0 || write(p[1], &v, sizeof v) != sizeof v || read(p[0], (void *)&hits, sizeof hits) != sizeof hits)
			_exit(2);
		if (hits != 16)
			_exit(1);
		// The exec replaces the child's memory, hits with it: a watch
		// by address sees one read and one write of it there.
		execl("/bin/true", "true", (char *)0);
		_exit(3);
	}
	int st;
	waitpid(c, &st, 0);
	printf("parent sees %d, child exited %d\n", hits, WEXITSTATUS(st));
	fflush(stdout);
	for (int i = 21; i <= 24; i++)
		hits = i;
	return 0;
}
