/* Writes a file through a MAP_SHARED mapping that mremap grows and
 * moves: the bytes written before the move, and after it at the new
 * address (in the grown part too), reach the file when it is unmapped
 * at its new address. A second mapping is shrunk by mremap: its cut
 * tail is written back there. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	int fd = open("moved.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return 1;
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	strcpy(p, "before the move\n");
	/* A reserved place to move to, so the mapping surely moves. */
	char *to = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (to == MAP_FAILED || ftruncate(fd, 8192) < 0)
		return 3;
	char *q = mremap(p, 4096, 8192, MREMAP_MAYMOVE | MREMAP_FIXED, to + 4096);
	if (q == MAP_FAILED || q == p)
		return 4;
	strcpy(q + 20, "after the move\n");
	strcpy(q + 4096, "in the grown page\n");
	munmap(q, 8192);
	close(fd);

	fd = open("shrunk.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 8192) < 0)
		return 5;
	char *r = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		return 6;
	strcpy(r, "first page\n");
	strcpy(r + 4096, "cut tail\n");
	if (mremap(r, 8192, 4096, 0) != r)
		return 7;
	strcpy(r + 100, "kept page\n");
	close(fd);
	printf("done\n");
	return 0;
}
