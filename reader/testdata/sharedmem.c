/* sharedmem: memory that two processes, and two places of one, share,
 * written by each and read by the other across many checkpoints: 
 * anonymous shared memory a fork shares, a file mapped MAP_SHARED twice
 * (and so in the child), a System V segment attached by the parent and
 * again by the child, the child's mprotect of a page of the shared
 * memory, and the parent's mremap of it after the child ended. Pipes
 * take turns, so what each reads is what the other wrote; it prints the
 * sum of what the parent read, the child exits with a digest of its. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096
#define N 64
#define ROUNDS 8

static long work(long x)
{
	for (int i = 0; i < 15000; i++)
		x = x * 6364136223846793005L + 1442695040888963407L;
	return x;
}

int main(void)
{
	int p2c[2], c2p[2];
	char b = 0;
	if (pipe(p2c) || pipe(c2p))
		return 100;
	volatile long *anon = mmap(0, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char path[] = "/tmp/sharedmemXXXXXX";
	int fd = mkstemp(path);
	if (anon == MAP_FAILED || fd < 0 || unlink(path) || ftruncate(fd, 2 * PG))
		return 101;
	volatile long *f1 = mmap(0, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	volatile long *f2 = mmap(0, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, PG); /* f1's second page */
	int id = shmget(IPC_PRIVATE, PG, IPC_CREAT | 0600);
	volatile long *seg = shmat(id, 0, 0);
	if (f1 == MAP_FAILED || f2 == MAP_FAILED || id < 0 || seg == (void *)-1)
		return 102;
	for (int i = 0; i < N; i++)
		anon[i] = i;
	f1[PG / 8 + 3] = 7;
	long total = f2[3]; /* 7: the first mapping's write */
	pid_t c = fork();
	if (c == 0) {
		volatile long *seg2 = shmat(id, 0, 0);
		long s = 0;
		for (int r = 0; r < ROUNDS; r++) {
			if (read(p2c[0], &b, 1) != 1)
				_exit(103);
			s = work(s) & 0xffff;
			s += anon[r % N] + f2[3] + seg2[r];
			anon[N + r] = s;
			f1[r] = s * 3;
			seg2[100 + r] = s + 1;
			if (write(c2p[1], &b, 1) != 1)
				_exit(104);
		}
		mprotect((void *)anon, PG, PROT_READ); /* the parent's stays writable */
		_exit((int)(s & 0x7f));
	}
	for (int r = 0; r < ROUNDS; r++) {
		anon[r % N] += r;
		seg[r] = r * 5;
		f2[3] += 1;
		if (write(p2c[1], &b, 1) != 1 || read(c2p[0], &b, 1) != 1)
			return 105;
		total += work(total) & 0xff;
		total += anon[N + r] + f1[r] + seg[100 + r];
	}
	int st;
	waitpid(c, &st, 0);
	anon[0] = 1; /* writable here */
	volatile long *moved = mremap((void *)anon, 4 * PG, 8 * PG, MREMAP_MAYMOVE);
	if (moved == MAP_FAILED)
		return 106;
	total += moved[N + ROUNDS - 1] + WEXITSTATUS(st);
	printf("%ld\n", total);
	shmctl(id, IPC_RMID, 0);
	return 0;
}
