/* shared_fork: anonymous MAP_SHARED memory a fork shares, written by the
 * child and read by the parent, and by the parent for the child. A
 * recording that logs no reads (`ttd record`'s default mode) must replay
 * the two processes' pages as one page, or the replay would not see the
 * other's writes (until session 32 it refused it: without the sharing
 * its replay diverged at position 112,882). */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	volatile int *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	w[0] = 1;
	pid_t c = fork();
	if (c == 0) {
		while (w[1] == 0)
			usleep(100);
		w[0] = w[1] * 10;
		_exit(0);
	}
	w[1] = 4;
	waitpid(c, NULL, 0);
	printf("child wrote %d\n", w[0]);
	return 0;
}
