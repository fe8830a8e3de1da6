/* Writes heap bytes the program stored before the heap grew (brk) and
 * before an mremap moved them: the export must still know them. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	char *p = sbrk(4096);
	strcpy(p, "stored before the heap grew");
	for (int i = 0; i < 8; i++)
		sbrk(1 << 16); /* the heap grows: brk, 8 times */
	write(-1, p, strlen("stored before the heap grew"));
	char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	strcpy(m + 100, "stored before mremap moved it");
	mprotect(m, 4096, PROT_READ);
	mprotect(m, 4096, PROT_READ | PROT_WRITE);
	/* Keep the old range from growing in place: move it. */
	char *n = mremap(m, 8192, 1 << 20, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)((unsigned long)m - (64 << 20)));
	write(-1, n + 100, strlen("stored before mremap moved it"));
	return 0;
}
