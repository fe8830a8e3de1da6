/* A signal handler that uses the YMM registers must not change the
   interrupted code's: the frame carries them (XSAVE format) and
   sigreturn restores them. The signal comes from a raw tgkill in the same
   asm block that holds the value in ymm8, so no call clobbers it. */
#include <immintrin.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int hits;
static void handler(int sig) {
	__m256i z = _mm256_set1_epi32(0x5a5a5a5a + sig);
	asm volatile("vmovdqu %0, %%ymm0\n\tvmovdqu %0, %%ymm8\n\tvmovdqu %0, %%ymm15" ::"m"(z) : "xmm0", "xmm8", "xmm15");
	hits++;
}

int main(void) {
	signal(SIGUSR1, handler);
	unsigned char before[32], after[32];
	for (int i = 0; i < 32; i++) before[i] = (unsigned char)(i * 37 + 1);
	long pid = getpid(), tid = syscall(SYS_gettid);
	int ok = 1;
	for (int round = 0; round < 3; round++) {
		memset(after, 0, 32);
		asm volatile("vmovdqu %2, %%ymm8\n\t"
			     "mov %3, %%rdi\n\tmov %4, %%rsi\n\tmov %5, %%rdx\n\tmov %6, %%eax\n\tsyscall\n\t"
			     "vmovdqu %%ymm8, %0"
			     : "=m"(*(unsigned char(*)[32])after), "=m"(hits)
			     : "m"(*(unsigned char(*)[32])before), "r"(pid), "r"(tid), "i"(SIGUSR1), "i"(SYS_tgkill)
			     : "rax", "rdi", "rsi", "rdx", "rcx", "r11", "xmm8", "memory");
		if (memcmp(before, after, 32) != 0) ok = 0;
	}
	printf("handler ran %d times, ymm8 %s\n", hits, ok ? "intact" : "CLOBBERED");
	return ok ? 0 : 1;
}
