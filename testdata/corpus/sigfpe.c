/* SIGFPE from integer division by zero, caught by an SA_SIGINFO handler
 * that recovers with siglongjmp. INT_MIN / -1 is deliberately not executed. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static sigjmp_buf recover;
static volatile int code, signo, addr_set;

static void handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	signo = sig;
	code = si->si_code;
	addr_set = si->si_addr != NULL;
	siglongjmp(recover, 1);
}

static volatile int32_t zero32 = 0, num32 = 100;
static volatile int64_t zero64 = 0, num64 = 1000000000000ll;
static volatile uint8_t zero8 = 0;
static volatile uint16_t zero16 = 0;
static volatile unsigned __int128 zero128 = 0;

#define TRY(label, expr)                                                                                    \
	do {                                                                                                \
		code = signo = addr_set = 0;                                                                \
		if (sigsetjmp(recover, 1) == 0) {                                                           \
			volatile long long r = (long long)(expr);                                           \
			printf("%s: no trap, result %lld\n", label, (long long)r);                         \
		} else {                                                                                    \
			printf("%s: signo=%d si_code=%d (%s) si_addr set=%d\n", label, signo, code,         \
			       code == FPE_INTDIV ? "FPE_INTDIV" : "other", addr_set);                      \
		}                                                                                           \
	} while (0)

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGFPE, &sa, NULL);

	TRY("int32 div", num32 / zero32);
	TRY("int32 rem", num32 % zero32);
	TRY("uint32 div", (uint32_t)num32 / (uint32_t)zero32);
	TRY("int64 div", num64 / zero64);
	TRY("uint64 rem", (uint64_t)num64 % (uint64_t)zero64);
	TRY("uint8 div", (uint8_t)num32 / zero8);
	TRY("uint16 div", (uint16_t)num32 / zero16);
	TRY("valid div", num64 / (num32 + zero32));
	/* __int128 division by zero goes through libgcc, which divides by zero too. */
	TRY("uint128 div", (long long)((unsigned __int128)num64 / zero128));
	/* Floating point division by zero does not trap (exceptions masked). */
	volatile double dz = 0.0;
	TRY("double div", (long long)(1.0 / dz > 1e308));
	volatile int count = 0;
	for (volatile int i = 0; i < 500; i++) {
		if (sigsetjmp(recover, 1) == 0) {
			volatile int r = num32 / (zero32 * i);
			(void)r;
		} else {
			count++;
		}
	}
	printf("repeated traps: %d\n", count);
	return 0;
}
