/* shared_mem: shared memory that `ttd record`'s default mode (no reads
 * logged) records, because a write can only be read back at the place
 * it was written: a writable MAP_SHARED file mapping mapped once (a
 * linker's output file), written, synced, read back with pread, unmapped
 * and mapped again; anonymous MAP_SHARED memory no fork shares; a System
 * V segment attached once, detached and attached again; a file mapped
 * shared twice, both read-only. Its sibling shared_fork shares memory
 * with a child, which that mode refuses. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#define PG 4096

static unsigned long sum(const volatile unsigned char *p, size_t n)
{
	unsigned long s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

int main(void)
{
	char name[] = "/tmp/shared_memXXXXXX";
	int fd = mkstemp(name);
	if (fd < 0 || ftruncate(fd, 3 * PG) != 0) {
		perror("mkstemp");
		return 1;
	}
	unlink(name);
	unsigned char pat[PG];
	for (int i = 0; i < PG; i++)
		pat[i] = (unsigned char)(i * 7 + 1);
	pwrite(fd, pat, PG, PG); /* page 1 has contents, 0 and 2 are zeros */

	/* 1. One writable shared mapping of the file. */
	unsigned char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("file before: %lx\n", sum(m, 3 * PG));
	for (int i = 0; i < 3 * PG; i += 3)
		m[i] += (unsigned char)(i >> 4);
	msync(m, 3 * PG, MS_SYNC);
	unsigned char back[3 * PG];
	pread(fd, back, sizeof back, 0);
	printf("file synced: %lx %lx\n", sum(m, 3 * PG), sum(back, sizeof back));
	m[PG + 5] = 0xee;
	munmap(m, 3 * PG);
	m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	printf("file mapped again: %lx %x\n", sum(m, 3 * PG), m[PG + 5]);
	madvise(m, PG * 2, MADV_DONTNEED);
	printf("after dontneed: %lx\n", sum(m, 3 * PG));
	munmap(m, 3 * PG);

	/* 2. Two read-only shared mappings of the file. */
	unsigned char *r1 = mmap(NULL, 3 * PG, PROT_READ, MAP_SHARED, fd, 0);
	unsigned char *r2 = mmap(NULL, 2 * PG, PROT_READ, MAP_SHARED, fd, PG);
	printf("read-only twice: %lx %lx\n", sum(r1, 3 * PG), sum(r2, 2 * PG));
	munmap(r1, 3 * PG);
	munmap(r2, 2 * PG);
	close(fd);

	/* 3. Anonymous shared memory, no fork. */
	unsigned char *a = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 4 * PG; i += 5)
		a[i] = (unsigned char)i;
	printf("anonymous: %lx\n", sum(a, 4 * PG));
	mprotect(a + PG, PG, PROT_READ);
	printf("split: %lx\n", sum(a, 4 * PG));
	munmap(a, 4 * PG);

	/* 4. A System V segment, attached once at a time. */
	int id = shmget(IPC_PRIVATE, 2 * PG, IPC_CREAT | 0600);
	if (id < 0) {
		perror("shmget");
		return 1;
	}
	unsigned char *s = shmat(id, NULL, 0);
	for (int i = 0; i < 2 * PG; i += 2)
		s[i] = (unsigned char)(i ^ 0x5a);
	printf("segment: %lx\n", sum(s, 2 * PG));
	shmdt(s);
	s = shmat(id, NULL, 0);
	printf("segment again: %lx\n", sum(s, 2 * PG));
	shmdt(s);
	shmctl(id, IPC_RMID, NULL);
	return 0;
}
