/* A SIGSEGV handler that recovers with sigsetjmp/siglongjmp: NULL pointer
 * read, PROT_NONE page, write to a read-only page, unmapped page. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf recover;
static volatile sig_atomic_t hits;
static volatile int last_signo, last_code;
static void *volatile last_addr;

static void handler(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	hits++;
	last_signo = sig == si->si_signo ? sig : -1;
	last_code = si->si_code;
	last_addr = si->si_addr;
	siglongjmp(recover, 1);
}

static int *volatile null_ptr; /* the compiler cannot prove it is NULL */

static const char *code_name(int c)
{
	return c == SEGV_MAPERR ? "SEGV_MAPERR" : c == SEGV_ACCERR ? "SEGV_ACCERR" : "other";
}

static void probe(const char *what, volatile char *addr, int write)
{
	last_addr = NULL;
	last_code = 0;
	if (sigsetjmp(recover, 1) == 0) {
		if (write)
			*addr = 1;
		else
			(void)*addr;
		printf("%s: no fault?\n", what);
		return;
	}
	printf("%s: signo=%d si_code=%d (%s) si_addr matches=%d\n", what, last_signo, last_code,
	       code_name(last_code), last_addr == (void *)addr);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) != 0)
		return 1;
	long pg = sysconf(_SC_PAGESIZE);

	probe("NULL read", (volatile char *)null_ptr, 0);
	probe("NULL+0x10 write", (volatile char *)null_ptr + 0x10, 1);

	char *m = mmap(NULL, (size_t)pg * 3, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	mprotect(m + pg, (size_t)pg, PROT_NONE);
	m[0] = 'a';
	probe("PROT_NONE read", m + pg + 123, 0);
	probe("PROT_NONE write", m + pg + 4000, 1);
	mprotect(m + 2 * pg, (size_t)pg, PROT_READ);
	printf("read-only page readable: %d\n", m[2 * pg + 5] == 0);
	probe("read-only write", m + 2 * pg + 7, 1);
	mprotect(m + 2 * pg, (size_t)pg, PROT_READ | PROT_WRITE);
	m[2 * pg + 7] = 'w';
	printf("after mprotect RW, write ok: %c\n", m[2 * pg + 7]);
	munmap(m + pg, (size_t)pg);
	probe("unmapped read", m + pg + 8, 0);
	/* mapping again makes it usable */
	char *again = mmap(m + pg, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	again[8] = 'r';
	printf("remapped page usable: %d\n", again == m + pg && m[pg + 8] == 'r');
	/* Canonical address far from any mapping, and a non-canonical one
	 * (general protection fault: SI_KERNEL, no address). */
	probe("wild address", (volatile char *)(uintptr_t)0x100000000010ull, 0);
	probe("non-canonical address", (volatile char *)(uintptr_t)0x7ff0deadbeef0ull, 0);

	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	printf("handler hits=%d SIGSEGV blocked after recovery=%d\n", hits, sigismember(&cur, SIGSEGV));
	/* Repeated faults must keep working. */
	int ok = 0;
	for (int i = 0; i < 1000; i++) {
		if (sigsetjmp(recover, 1) == 0)
			(void)*(volatile int *)(null_ptr + i);
		else
			ok++;
	}
	printf("repeated faults recovered: %d\n", ok);
	return 0;
}
