/* setjmp/longjmp across frames, volatile locals, longjmp(.., 0), nested
 * jump buffers, and sigsetjmp/siglongjmp restoring the signal mask. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static jmp_buf env;
static int depth_reached;

static void dive(int depth, int target)
{
	char pad[128];
	memset(pad, depth, sizeof pad);
	depth_reached = depth + (pad[depth % 128] != (char)depth);
	if (depth == target)
		longjmp(env, depth);
	dive(depth + 1, target);
	printf("not reached %d\n", pad[0]);
}

static jmp_buf outer, inner;
static void nested(void)
{
	int r = setjmp(inner);
	if (r == 0) {
		printf("nested: inner set\n");
		longjmp(inner, 7);
	}
	printf("nested: inner returned %d\n", r);
	longjmp(outer, r * 6);
}

static double fp_state(jmp_buf b, double x)
{
	/* Callee-saved registers and FP values across the jump. */
	if (setjmp(b) == 0) {
		volatile double y = x * 3;
		(void)y;
		longjmp(b, 1);
	}
	return x + 0.5;
}

int main(void)
{
	volatile int counter = 0;
	volatile long acc = 1;
	int r = setjmp(env);
	counter++;
	acc *= 3;
	printf("setjmp returned %d counter=%d acc=%ld\n", r, counter, acc);
	if (r == 0)
		longjmp(env, 0); /* becomes 1 */
	if (r == 1)
		dive(0, 10);
	if (r == 10)
		dive(0, 500);
	printf("depth reached %d\n", depth_reached);

	r = setjmp(outer);
	if (r == 0)
		nested();
	printf("outer got %d\n", r);

	jmp_buf b;
	printf("fp across setjmp: %g\n", fp_state(b, 1.25));

	/* sigsetjmp with savemask=1 restores the mask; savemask=0 does not. */
	sigjmp_buf sj;
	sigset_t set, cur;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (volatile int save = 0; save <= 1; save++) {
		sigprocmask(SIG_SETMASK, &(sigset_t){0}, NULL);
		sigemptyset(&cur);
		sigprocmask(SIG_SETMASK, &cur, NULL);
		if (sigsetjmp(sj, save) == 0) {
			sigprocmask(SIG_BLOCK, &set, NULL);
			siglongjmp(sj, 1);
		}
		sigprocmask(SIG_BLOCK, NULL, &cur);
		printf("savemask=%d: SIGUSR1 blocked after siglongjmp: %d\n", save, sigismember(&cur, SIGUSR1));
	}
	/* Many round trips */
	volatile int trips = 0;
	jmp_buf loop;
	if (setjmp(loop) < 100000) {
		trips++;
		longjmp(loop, trips + 1);
	}
	printf("trips=%d\n", trips);
	return 0;
}
