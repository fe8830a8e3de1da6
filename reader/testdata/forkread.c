// forkread fills a buffer of 64 pages, spins past several checkpoints
// without touching it, then forks: the child sums the buffer (the
// pages its parent's replay restored at a checkpoint and never touched
// are the child's too) and the parent writes to it after the child
// ended.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned char buf[64 * 4096];
volatile unsigned long spin;

int main(void) {
	for (unsigned i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 13 + 5);
	for (unsigned long i = 0; i < 300000; i++)
		spin += i;
	pid_t pid = fork();
	if (pid == 0) {
		unsigned long h = 0;
		for (unsigned i = 0; i < sizeof buf; i += 64)
			h = h * 31 + buf[i];
		printf("child %lu\n", h);
		exit((int)(h & 0x7f));
	}
	int st;
	waitpid(pid, &st, 0);
	buf[0] ^= 1;
	printf("parent %d\n", WEXITSTATUS(st));
	return 0;
}
