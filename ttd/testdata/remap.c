// remap writes a byte of a fresh mapping, unmaps it and maps zeroes at
// the same address again: after the munmap, what was known of the page
// no longer holds.
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

char *volatile where;

int main(void) {
	char *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	where = p;
	p[0] = 42;
	p[1] = p[0] + 1;
	munmap(p, 4096);
	char *q = mmap(p, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	q[8] = 7;
	printf("%d\n", q == p);
	return 0;
}
