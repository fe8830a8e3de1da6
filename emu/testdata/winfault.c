// Guest faults of reads that translated code makes (x86's winfault: in
// `ttd run` the host's page protection stands for the read TLB check):
// each read runs hot first, so that its block is translated, then at an
// address the guest may not read.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int got, gotcode;
static volatile uintptr_t gotaddr;
static sigjmp_buf jb;

static void h(int sig, siginfo_t *si, void *uc) {
	got = sig;
	gotcode = si->si_code;
	gotaddr = (uintptr_t)si->si_addr;
	siglongjmp(jb, 1);
}

__attribute__((noinline)) static uint64_t rd8(const void *p) { return *(volatile const uint64_t *)p; }
__attribute__((noinline)) static uint32_t rd4(const void *p) { return *(volatile const uint32_t *)p; }
__attribute__((noinline)) static uint8_t rd1(const void *p) { return *(volatile const uint8_t *)p; }
__attribute__((noinline)) static uint64_t sum(const uint8_t *p, long n) {
	uint64_t s = 0;
	for (long i = 0; i < n; i++)
		s += p[i] * (i | 1);
	return s;
}

static uint8_t warm[64];

// hot runs every read many times on good memory.
static void hot(void) {
	uint64_t s = 0;
	for (int i = 0; i < 20000; i++)
		s += rd8(warm + (i & 7)) + rd4(warm + 8) + rd1(warm + 3) + sum(warm, 16);
	if (s == 1)
		printf("?");
}

// try reads at p with f, and prints what happened relative to base.
#define TRY(name, expr, base)                                                                     \
	do {                                                                                      \
		got = 0;                                                                          \
		uint64_t v = 0;                                                                   \
		if (!sigsetjmp(jb, 1))                                                            \
			v = (expr);                                                               \
		if (got)                                                                          \
			printf("%s: sig %d code %d at %+ld\n", name, got, gotcode, (long)(gotaddr - (uintptr_t)(base))); \
		else                                                                              \
			printf("%s: read %llx\n", name, (unsigned long long)v);                   \
	} while (0)

int main(int argc, char **argv) {
	struct sigaction sa = {0};
	sa.sa_sigaction = h;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, 0);
	sigaction(SIGBUS, &sa, 0);
	for (int i = 0; i < 64; i++)
		warm[i] = i * 7;
	hot();
	if (argc > 1) {
		// After the execs below: the page the program wrote before is
		// gone (ttd's address space after the next takes the released
		// window, with its memory).
		TRY("after exec", rd8((void *)0x200000008), 0);
		fflush(stdout);
		if (argc == 2)
			execl(argv[0], argv[0], "again", "and again", (char *)0);
		return 0;
	}

	// Unmapped, PROT_NONE, read-only (readable) and munmapped pages.
	uint8_t *p = mmap(0, 4 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 4 << 12; i++)
		p[i] = i * 13;
	TRY("read", rd8(p + 8), p);
	mprotect(p + 4096, 4096, PROT_NONE);
	TRY("prot_none", rd4(p + 4096 + 12), p);
	TRY("cross into prot_none", rd8(p + 4096 - 4), p);
	TRY("sum into prot_none", sum(p + 4096 - 8, 32), p);
	mprotect(p + 4096, 4096, PROT_READ);
	TRY("read-only again", rd4(p + 4096 + 12), p);
	mprotect(p + 4096, 4096, PROT_READ | PROT_WRITE);
	p[4096 + 12] = 0x55;
	TRY("written again", rd1(p + 4096 + 12), p);
	munmap(p + 2 * 4096, 4096);
	TRY("munmapped", rd1(p + 2 * 4096 + 100), p);
	TRY("cross into munmapped", rd4(p + 2 * 4096 - 2), p);
	// A page never touched, of a mapping never written: zeros.
	uint8_t *q = mmap(0, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TRY("untouched", rd8(q + 12345), q);
	munmap(q, 1 << 20);
	TRY("untouched munmapped", rd8(q + 12345), q);

	// A hole between two anonymous pages of one 16-page block: the
	// first read enters both pages (x86's atCluster), not the hole.
	uint8_t *big = mmap(0, 32 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b = (uint8_t *)(((uintptr_t)big + (16 << 12) - 1) & ~(uintptr_t)((16 << 12) - 1));
	munmap(b + 4096, 4096);
	TRY("before hole", rd8(b + 8), b);
	TRY("hole", rd8(b + 4096 + 8), b);
	TRY("after hole", rd8(b + 2 * 4096 + 8), b);

	// mremap: the old place faults, the new one has the data.
	// (The destination is in a mapping of the test's own.)
	uint8_t *r = mmap(0, 80 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(r, 0x5a, 2 << 12);
	uint8_t *r2 = mremap(r, 2 << 12, 8 << 12, MREMAP_MAYMOVE | MREMAP_FIXED, r + (64 << 12));
	TRY("mremap old", rd8(r), r);
	TRY("mremap new", rd8(r2 + 4096), r);
	TRY("mremap grown", rd8(r2 + 5 * 4096), r);

	// Non-canonical and kernel addresses: SIGSEGV, SI_KERNEL, no
	// address; just below 2^40 and across it.
	TRY("non-canonical", rd8((void *)0x8000000000000000ull), 0);
	TRY("top", rd1((void *)0xffffffffffffff00ull), 0);
	TRY("2^40-4", rd8((void *)((1ull << 40) - 4)), 0);
	TRY("2^47", rd4((void *)(1ull << 47)), 0);
	uint8_t *t = mmap((void *)((1ull << 40) - 4096), 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (t != MAP_FAILED) {
		memset(t, 0x11, 4096);
		TRY("below 2^40", rd4(t + 4092), 0);
		TRY("across 2^40", rd8(t + 4092), t);
		uint8_t *u = mmap((void *)(1ull << 40), 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (u != MAP_FAILED) {
			memset(u, 0x22, 4096);
			TRY("across 2^40 mapped", rd8(t + 4092), t);
			TRY("above 2^40", rd8(u + 8), t);
			// Many reads above 2^40: the window's end check leaves
			// for them, no host fault (TestWinFault counts them).
			uint64_t s = 0;
			for (int i = 0; i < 20000; i++)
				s += rd8(u + 8 + (i & 7));
			printf("above 2^40 x20000: %llx\n", (unsigned long long)s);
			munmap(u, 4096);
		}
		munmap(t, 4096);
	} else {
		printf("no map below 2^40\n");
	}

	// fork: the child reads its copy after the parent unmaps its own.
	uint8_t *f = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f[7] = 0x77;
	int fd[2];
	pipe(fd);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		read(fd[0], &c, 1);
		TRY("child", rd1(f + 7), f);
		fflush(stdout);
		_exit(0);
	}
	munmap(f, 4096);
	TRY("parent unmapped", rd1(f + 7), f);
	fflush(stdout);
	write(fd[1], "x", 1);
	int st;
	waitpid(pid, &st, 0);
	printf("child exit %d\n", WEXITSTATUS(st));

	uint8_t *x = mmap((void *)0x200000000, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (x != MAP_FAILED)
		x[8] = 0x99;
	fflush(stdout);
	execl(argv[0], argv[0], "again", (char *)0);
	printf("exec failed\n");
	return 1;
}
