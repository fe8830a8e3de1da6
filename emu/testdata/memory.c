// Address-space syscalls: mmap, munmap, mprotect, mremap, brk, madvise.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
	setvbuf(stdout, 0, _IONBF, 0);
	long pg = sysconf(_SC_PAGESIZE);
	printf("page %ld\n", pg);

	// Anonymous memory is zero and writable.
	char *a = mmap(0, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("anon aligned %d zero %d\n", ((uintptr_t)a % pg) == 0, a[0] == 0 && a[3 * pg - 1] == 0);
	memset(a, 'x', 3 * pg);

	// MAP_FIXED replaces the middle page; MAP_FIXED_NOREPLACE refuses.
	char *b = mmap(a + pg, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	printf("fixed same %d zero %d neighbours %c %c\n", b == a + pg, b[0] == 0, a[0], a[2 * pg]);
	char *c = mmap(a + pg, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	printf("noreplace %s\n", c == MAP_FAILED ? strerror(errno) : "mapped");

	// A hint at a free address is honoured (below 1 TiB: under `ttd
	// run`'s host window, hints above it are not, by design).
	char *hint = (char *)0x2000000000;
	char *h = mmap(hint, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("hint honoured %d\n", h == hint);

	// A large PROT_NONE reservation costs nothing; part becomes usable.
	size_t big = (size_t)64 << 30;
	char *r = mmap(0, big, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	printf("reserve %s\n", r == MAP_FAILED ? strerror(errno) : "ok");
	printf("mprotect %d\n", mprotect(r + big / 2, 16 * pg, PROT_READ | PROT_WRITE));
	r[big / 2 + 5 * pg] = 7;
	printf("reserved write %d\n", r[big / 2 + 5 * pg]);
	printf("munmap reserve %d\n", munmap(r, big));

	// mprotect of an unmapped range fails with ENOMEM.
	int rc = mprotect(r, pg, PROT_READ);
	printf("mprotect unmapped %d %s\n", rc, strerror(errno));

	// File-backed private mapping: contents copied, writes stay private.
	char path[] = "/tmp/ttd-mem-XXXXXX";
	int fd = mkstemp(path);
	char buf[10000];
	for (int i = 0; i < (int)sizeof buf; i++)
		buf[i] = 'a' + i % 26;
	write(fd, buf, sizeof buf);
	char *f = mmap(0, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	printf("file %c %c %c tail zero %d\n", f[0], f[pg + 1], f[9999], f[10000] == 0 && f[3 * pg - 1] == 0);
	f[0] = 'Z';
	char one;
	pread(fd, &one, 1, 0);
	printf("private write file %c map %c\n", one, f[0]);
	char *f2 = mmap(0, pg, PROT_READ, MAP_PRIVATE, fd, pg);
	printf("offset map %c\n", f2[0]);
	// madvise(DONTNEED) on a private file mapping brings back the file.
	madvise(f, pg, MADV_DONTNEED);
	printf("dontneed file %c\n", f[0]);
	close(fd);
	unlink(path);

	// madvise(DONTNEED) zeroes anonymous memory.
	a[0] = 5;
	madvise(a, pg, MADV_DONTNEED);
	printf("dontneed anon %d\n", a[0]);

	// mremap: grow in place or move, contents kept.
	char *m = mmap(0, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	strcpy(m, "remapped");
	mmap(m + pg, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0); // block growth
	char *m2 = mremap(m, pg, 4 * pg, 0);
	printf("mremap nomove %s\n", m2 == MAP_FAILED ? strerror(errno) : "ok");
	m2 = mremap(m, pg, 4 * pg, MREMAP_MAYMOVE);
	printf("mremap move %d %s last zero %d\n", m2 != m, m2, m2[4 * pg - 1]);
	m2 = mremap(m2, 4 * pg, pg, 0);
	printf("mremap shrink %s\n", m2);

	// brk grows and shrinks.
	char *b0 = (char *)syscall(SYS_brk, 0);
	char *b1 = (char *)syscall(SYS_brk, b0 + 100000);
	memset(b0, 1, 100000);
	printf("brk grew %ld\n", (long)(b1 - b0));
	char *b2 = (char *)syscall(SYS_brk, b0);
	printf("brk back %d\n", b2 == b0);

	// mincore reports resident pages.
	unsigned char vec[3];
	char *q = mmap(0, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q[pg] = 1;
	rc = mincore(q, 3 * pg, vec);
	printf("mincore %d %d\n", rc, vec[1] & 1);

	// munmap with bad arguments.
	rc = munmap(q + 1, pg);
	printf("munmap unaligned %d %s\n", rc, strerror(errno));
	rc = munmap(q, 0);
	printf("munmap zero %d %s\n", rc, strerror(errno));

	// mlock and friends: locking changes nothing visible but their
	// checks (lshort: a range inside one page, unaligned start).
	rc = mlock(q + 10, 2 * pg);
	printf("mlock %d\n", rc);
	rc = mlock(q + pg + 5, 1);
	printf("mlock short %d\n", rc);
	rc = munlock(q, 3 * pg);
	printf("munlock %d\n", rc);
	rc = mlock(q, 4 * pg); /* the page after q may be mapped: unmap it */
	munmap(q + 3 * pg, pg);
	rc = mlock(q, 4 * pg);
	printf("mlock past the end %d %s\n", rc, strerror(errno));
	rc = mlock(q, 0);
	printf("mlock zero %d\n", rc);
	rc = syscall(SYS_mlock2, q, pg, 2);
	printf("mlock2 bad flags %d %s\n", rc, strerror(errno));
	rc = syscall(SYS_mlock2, q, pg, 1);
	printf("mlock2 onfault %d\n", rc);
	rc = mlockall(0);
	printf("mlockall 0 %d %s\n", rc, strerror(errno));
	rc = mlockall(MCL_ONFAULT);
	printf("mlockall onfault alone %d %s\n", rc, strerror(errno));
	rc = mlockall(MCL_CURRENT);
	printf("mlockall current %d\n", rc);
	rc = munlockall();
	printf("munlockall %d\n", rc);

	// malloc of big blocks uses mmap.
	char *big1 = malloc(10 << 20);
	memset(big1, 3, 10 << 20);
	printf("malloc big %d\n", big1[(10 << 20) - 1]);
	free(big1);
	return 0;
}
