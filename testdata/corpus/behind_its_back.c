/* Bytes the program has read, changed behind its back: by a second
 * thread, madvise(MADV_DONTNEED), munmap and mmap at the same address, a
 * mapping over them, read(2), a signal frame, a MAP_SHARED mapping
 * written through a second mapping of the same file, and mremap over
 * them. A replay that predicts these reads from what the thread saw
 * before (the prediction cache, or any rule that trusts bytes already
 * read) must see each change: the recorder has to log it, or it has to
 * be one the replay re-simulates. Every region is read twice before the
 * change and once after, and the sums printed. Written for session 23's
 * known-reads experiment (README, "Session 23 (rec13)"). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096

static unsigned long sum(const volatile unsigned char *p, size_t n)
{
	unsigned long s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + p[i];
	for (size_t i = 0; i + 8 <= n; i += 8)
		s ^= *(const volatile uint64_t *)(p + i);
	for (size_t i = 0; i + 4 <= n; i += 4)
		s += *(const volatile uint32_t *)(p + i);
	return s;
}

/* twice reads p twice: the second time, every byte is known. */
static unsigned long twice(const volatile unsigned char *p, size_t n)
{
	unsigned long a = sum(p, n);
	return a + sum(p, n);
}

static unsigned char tbuf[PG];

static void *writer(void *arg)
{
	memset(tbuf, 0x5a, sizeof tbuf);
	return arg;
}

static void *anon(size_t n, int fill)
{
	unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	memset(p, fill, n);
	return p;
}

static int tmpfile_of(int fill, size_t n)
{
	char name[] = "/tmp/behind_its_backXXXXXX";
	int fd = mkstemp(name);
	if (fd < 0) {
		perror("mkstemp");
		exit(1);
	}
	unlink(name);
	unsigned char *b = malloc(n);
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(fill + i * 7);
	if (write(fd, b, n) != (ssize_t)n) {
		perror("write");
		exit(1);
	}
	free(b);
	return fd;
}

static volatile int handled;

static void on_usr1(int sig)
{
	handled = sig;
}

int main(void)
{
	unsigned long t;

	/* 1. A second thread writes bytes the first has read. */
	memset(tbuf, 0x11, sizeof tbuf);
	t = twice(tbuf, sizeof tbuf);
	pthread_t th;
	pthread_create(&th, NULL, writer, NULL);
	pthread_join(th, NULL);
	printf("thread: %lx -> %lx\n", t, sum(tbuf, sizeof tbuf));

	/* 2. madvise(MADV_DONTNEED) zeroes them. */
	unsigned char *p = anon(2 * PG, 0x22);
	t = twice(p, 2 * PG);
	madvise(p, 2 * PG, MADV_DONTNEED);
	printf("madvise: %lx -> %lx\n", t, sum(p, 2 * PG));

	/* 3. munmap, and mmap again at the same address. */
	p = anon(2 * PG, 0x33);
	t = twice(p, 2 * PG);
	munmap(p, 2 * PG);
	unsigned char *q = mmap(p, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	printf("munmap+mmap: same address %d, %lx -> %lx\n", q == p, t, sum(q, 2 * PG));
	memset(q, 0x34, PG);
	printf("  written: %lx\n", sum(q, 2 * PG));

	/* 4. A file mapped over them. */
	int fd = tmpfile_of(0x40, 2 * PG);
	p = anon(2 * PG, 0x44);
	t = twice(p, 2 * PG);
	q = mmap(p, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	printf("mmap over: %lx -> %lx\n", t, sum(q, 2 * PG));
	close(fd);

	/* 5. read(2) into them. */
	p = anon(PG, 0x55);
	t = twice(p, PG);
	int pfd[2];
	if (pipe(pfd) != 0) {
		perror("pipe");
		return 1;
	}
	unsigned char msg[512];
	for (int i = 0; i < (int)sizeof msg; i++)
		msg[i] = (unsigned char)(i * 13 + 1);
	if (write(pfd[1], msg, sizeof msg) != (ssize_t)sizeof msg || read(pfd[0], p + 100, sizeof msg) != (ssize_t)sizeof msg) {
		perror("pipe i/o");
		return 1;
	}
	printf("read: %lx -> %lx\n", t, sum(p, PG));

	/* 6. A signal frame on an alternate stack. */
	size_t ssz = 16 * PG;
	unsigned char *st = anon(ssz, 0x66);
	stack_t ss = {.ss_sp = st, .ss_size = ssz};
	sigaltstack(&ss, NULL);
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};
	sigaction(SIGUSR1, &sa, NULL);
	t = twice(st, ssz);
	raise(SIGUSR1);
	int changed = 0;
	for (size_t i = 0; i < ssz; i++)
		changed += st[i] != 0x66;
	printf("signal frame: handled %d, changed %d\n", handled, changed > 0);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);

	/* 7. MAP_SHARED, written through a second mapping. */
	fd = tmpfile_of(0x70, PG);
	unsigned char *m1 = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned char *m2 = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	t = twice(m1, PG);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < PG; i += 8)
			m2[i + round] = (unsigned char)(round + i);
		printf("shared %d: %lx -> %lx\n", round, t, sum(m1, PG));
		t = twice(m1, PG);
	}
	munmap(m1, PG);
	munmap(m2, PG);
	close(fd);
	/* The same with a file of zeros, read three times, one byte written. */
	char zname[] = "/tmp/behind_its_backXXXXXX";
	fd = mkstemp(zname);
	unlink(zname);
	if (fd < 0 || ftruncate(fd, PG) != 0) {
		perror("ftruncate");
		return 1;
	}
	m1 = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	m2 = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	t = twice(m1, PG) + sum(m1, PG);
	m2[5] = 9;
	printf("shared zeros: %lx -> %d %lx\n", t, m1[5], sum(m1, PG));
	/* The word written through m2 and, with the same value, at an
	 * address 2 MiB apart from m1's (the same slot of the recorder's
	 * prediction cache): the read through m1 is predicted, and the
	 * replay, which keeps the two mappings apart, must not know it. */
	unsigned char *big = mmap(NULL, 4u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t slot = ((uintptr_t)m1 - (uintptr_t)big) & ((2u << 20) - 1);
	volatile uint64_t *same = (volatile uint64_t *)(big + slot + 64);
	volatile uint64_t *w1 = (volatile uint64_t *)(m1 + 64), *w2 = (volatile uint64_t *)(m2 + 64);
	t = *w1 + *w1;
	*w2 = 0x0123456789abcdefull;
	*same = 0x0123456789abcdefull;
	printf("shared predicted: %lx -> %lx\n", t, (unsigned long)*w1);
	munmap(big, 4u << 20);
	munmap(m1, PG);
	munmap(m2, PG);
	close(fd);

	/* 8. mremap of another mapping over them. */
	p = anon(2 * PG, 0x88);
	q = anon(2 * PG, 0x99);
	t = twice(p, 2 * PG);
	unsigned char *r = mremap(q, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, p);
	printf("mremap: moved %d, %lx -> %lx\n", r == p, t, sum(p, 2 * PG));

	/* 9. A word of which one byte was read, its other bytes not, and
	 * whose prediction another word took (2 MiB further: the same slot
	 * of the recorder's prediction cache): it is not known. */
	size_t span = 4u << 20;
	unsigned char *w = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long acc = 0;
	for (int k = 0; k < 4; k++) {
		volatile uint64_t *x = (volatile uint64_t *)(w + 64 * k);
		volatile uint64_t *alias = (volatile uint64_t *)(w + 64 * k + (2u << 20));
		*x = 0x1111111111111111ull * (k + 1);
		*alias = 0x2222222222222222ull * (k + 1);
		acc += *(volatile unsigned char *)x;
		acc += *alias;
		acc = acc * 3 + *x;
	}
	printf("partly known: %lx\n", acc);

	/* 10. A file unmapped and mapped again at the same address: the
	 * recorder's prediction cache still holds its bytes, the replay's
	 * memory does not (the trace holds no file contents). */
	fd = tmpfile_of(0xa0, 2 * PG);
	p = mmap(NULL, 2 * PG, PROT_READ, MAP_PRIVATE, fd, 0);
	t = twice(p, 2 * PG);
	munmap(p, 2 * PG);
	q = mmap(p, 2 * PG, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	printf("file again: same address %d, %lx -> %lx\n", q == p, t, sum(q, 2 * PG));
	close(fd);
	return 0;
}
