/* Writes files through MAP_SHARED mappings: one written back by msync
 * and munmap (with a pwrite to the file in between and a byte stored
 * past its end), one grown with ftruncate and left mapped until exit, and a
 * private mapping whose writes must not reach its file. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	int fd = open("shared.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 10000) < 0)
		return 1;
	char *p = mmap(NULL, 10000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return 2;
	for (int i = 0; i < 10000; i += 7)
		p[i] = (char)('a' + i % 26);
	memcpy(p + 5000, "written through the mapping", 27);
	p[10001] = 'X'; /* past the end of the file, in its last page: never written */
	if (msync(p, 10000, MS_SYNC) < 0)
		return 3;
	/* The file changes under the mapping; the bytes the program does not
	 * change again through the mapping keep what pwrite put there. */
	pwrite(fd, "ZZ", 2, 0);
	memcpy(p + 100, "after msync", 11);
	munmap(p, 10000);
	close(fd);

	fd = open("grow.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	write(fd, "header\n", 7);
	ftruncate(fd, 8192);
	char *q = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (q == MAP_FAILED)
		return 4;
	strcpy(q + 4096, "second page, flushed at exit\n");
	q[7] = '!';
	close(fd);

	fd = open("private.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, "unchanged", 9);
	char *r = mmap(NULL, 9, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (r == MAP_FAILED)
		return 5;
	memcpy(r, "CHANGED!!", 9);
	close(fd);
	printf("done\n");
	return 0;
}
