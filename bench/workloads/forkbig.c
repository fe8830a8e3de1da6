// forkbig.c: touches MiB mebibytes (one write per 4 KiB page, so every
// page exists), then forks N children one after another; each child
// writes one page (one copy-on-write fault) and exits, and the parent
// waits for it. Usage: forkbig MiB N.
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
	size_t size = (size_t)atol(argv[1]) << 20;
	int n = atoi(argv[2]);
	char *p = mmap(0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	for (size_t i = 0; i < size; i += 4096)
		p[i] = (char)i;
	for (int k = 0; k < n; k++) {
		pid_t c = fork();
		if (c < 0)
			return 2;
		if (c == 0) {
			p[(size_t)k * 4096 % size] = 1;
			_exit(p[size - 4096] == (char)(size - 4096) ? 0 : 3);
		}
		int st;
		if (waitpid(c, &st, 0) != c || st != 0)
			return 4;
	}
	printf("%d forks of %zu MiB\n", n, size >> 20);
	return 0;
}
