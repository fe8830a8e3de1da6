// Signal delivery: handlers, masks, sigaltstack, ucontext changes, faults.
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int got;
static volatile int gotcode;
static volatile void *gotaddr;
static sigjmp_buf jb;

static void h_simple(int sig) { got = sig; }

static void h_info(int sig, siginfo_t *si, void *uc) {
	got = sig;
	gotcode = si->si_code;
	gotaddr = si->si_addr;
	siglongjmp(jb, 1);
}

static char altstack[65536];
static volatile int on_alt;
static void h_alt(int sig) {
	char local;
	on_alt = (&local >= altstack && &local < altstack + sizeof altstack);
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	(void)sp;
}

static volatile int align_ok;
static void h_align(int sig, siginfo_t *si, void *ucv) {
	// At entry rsp+8 is 16-byte aligned: a local aligned(16) works.
	double __attribute__((aligned(16))) x[2] = {1.5, 2.5};
	align_ok = ((uintptr_t)x % 16) == 0 && x[0] + x[1] == 4.0;
}

// Skips the faulting 2-byte instruction by changing RIP in the ucontext.
static void h_skip(int sig, siginfo_t *si, void *ucv) {
	ucontext_t *uc = ucv;
	got = sig;
	uc->uc_mcontext.gregs[REG_RIP] += 3;
	uc->uc_mcontext.gregs[REG_RAX] = 1234;
}

static volatile int nested;
static void h_usr2(int sig) { nested++; }
static void h_usr1(int sig) {
	raise(SIGUSR2); // blocked by sa_mask until we return
	nested = nested * 10 + 1;
}

int main(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);

	// 1. raise with a plain handler.
	sa.sa_handler = h_simple;
	sigaction(SIGUSR1, &sa, 0);
	raise(SIGUSR1);
	printf("raise: got %d\n", got);

	// 2. blocked signal stays pending until unblocked.
	sigset_t set, old, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	got = 0;
	sigprocmask(SIG_BLOCK, &set, &old);
	raise(SIGUSR1);
	sigpending(&pend);
	printf("blocked: got %d pending %d\n", got, sigismember(&pend, SIGUSR1));
	sigprocmask(SIG_SETMASK, &old, 0);
	printf("unblocked: got %d\n", got);

	// 3. sa_mask defers a signal raised inside a handler.
	sa.sa_handler = h_usr2;
	sigaction(SIGUSR2, &sa, 0);
	sa.sa_handler = h_usr1;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(SIGUSR1, &sa, 0);
	raise(SIGUSR1);
	printf("nested: %d\n", nested);
	sigemptyset(&sa.sa_mask);

	// 4. SA_RESETHAND.
	sa.sa_handler = h_simple;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGUSR2, &sa, 0);
	struct sigaction cur;
	sigaction(SIGUSR2, 0, &cur);
	printf("before: %s\n", cur.sa_handler == h_simple ? "handler" : "default");
	raise(SIGUSR2);
	sigaction(SIGUSR2, 0, &cur);
	printf("after: %s\n", cur.sa_handler == SIG_DFL ? "default" : "handler");

	// 5. sigaltstack.
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&ss, 0);
	sa.sa_handler = h_alt;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, 0);
	raise(SIGUSR1);
	printf("altstack: %d\n", on_alt);
	stack_t cur_ss;
	sigaltstack(0, &cur_ss);
	printf("altstack flags: %d size ok %d\n", cur_ss.ss_flags, cur_ss.ss_size == sizeof altstack);

	// 6. alignment at handler entry.
	sa.sa_sigaction = h_align;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, 0);
	raise(SIGUSR1);
	printf("aligned: %d\n", align_ok);

	// 7. SIGSEGV on an unmapped address, with si_addr and si_code.
	sa.sa_sigaction = h_info;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, 0);
	sigaction(SIGBUS, &sa, 0);
	sigaction(SIGFPE, &sa, 0);
	sigaction(SIGTRAP, &sa, 0);
	sigaction(SIGILL, &sa, 0);
	if (!sigsetjmp(jb, 1)) {
		*(volatile int *)0x1234 = 1;
	}
	printf("segv unmapped: sig %d code %d addr %p\n", got, gotcode, gotaddr);

	// 8. SIGSEGV on a read-only page.
	char *p = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[4096] = 1;
	mprotect(p + 4096, 4096, PROT_READ);
	if (!sigsetjmp(jb, 1)) {
		p[4096 + 8] = 2;
	}
	printf("segv readonly: sig %d code %d offset %ld value %d\n", got, gotcode, (char *)gotaddr - p, p[4096]);
	mprotect(p + 4096, 4096, PROT_NONE);
	got = 0;
	if (!sigsetjmp(jb, 1)) {
		(void)*(volatile char *)(p + 4100);
	}
	printf("segv prot_none: sig %d code %d offset %ld\n", got, gotcode, (char *)gotaddr - p);
	munmap(p, 8192);
	got = 0;
	if (!sigsetjmp(jb, 1)) {
		(void)*(volatile char *)(p);
	}
	printf("segv munmapped: sig %d code %d offset %ld\n", got, gotcode, (char *)gotaddr - p);

	// 9. Integer divide by zero: SIGFPE, FPE_INTDIV, si_addr = the div.
	got = 0;
	extern char divpc[];
	if (!sigsetjmp(jb, 1)) {
		int r;
		__asm__ volatile("xor %%ecx, %%ecx\n divpc: idivl %%ecx" : "=a"(r) : "a"(1), "d"(0) : "ecx");
	}
	printf("sigfpe: sig %d code %d at div %d\n", got, gotcode, gotaddr == (void *)divpc);

	// 10. int3: SIGTRAP.
	got = 0;
	if (!sigsetjmp(jb, 1)) {
		__asm__ volatile("int3");
	}
	printf("sigtrap: sig %d\n", got);

	// 11. ud2: SIGILL.
	got = 0;
	if (!sigsetjmp(jb, 1)) {
		__asm__ volatile("ud2");
	}
	printf("sigill: sig %d code %d\n", got, gotcode);

	// 12. A handler that changes the saved registers.
	sa.sa_sigaction = h_skip;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, 0);
	long rax;
	__asm__ volatile("xor %%eax, %%eax\n xor %%ecx, %%ecx\n movl (%%rcx), %%edx\n nop" : "=a"(rax) : : "rcx", "rdx");
	printf("skipped: sig %d rax %ld\n", got, rax);

	// 13. Ignored signal.
	signal(SIGUSR1, SIG_IGN);
	raise(SIGUSR1);
	printf("ignored ok\n");

	// 14. kill to self and getpid.
	got = 0;
	signal(SIGUSR2, h_simple);
	kill(getpid(), SIGUSR2);
	printf("kill self: %d\n", got);
	fflush(stdout);
	return 0;
}
