// twoprogs.c is built twice, as program A (-DPROG_A) and program B
// (-DPROG_B): two PIEs with the same code layout, so that A's cnt_a1
// and B's cnt_b1 are at the same address, as are cnt_a2 and cnt_b2.
// Each counts its own calls, the known facts of the per-program probe
// tests: A calls cnt_a1 7 times and cnt_a2 3 times, B calls cnt_b1 5
// times and cnt_b2 11 times. counter starts at 100 and counts the calls;
// B's data starts with a pad, so that its counter is elsewhere. struct
// pt is laid out differently in each, and use_pt (after main, so that
// the code before it lines up) gets the program's gpt (x: A 7, B 5) and
// the address of F1, the same in both.
#include <stdio.h>

#ifdef PROG_B
struct pt {
	int y, pad, x;
} gpt = {9, 0, 5};
#define NAME "B"
#define F1 cnt_b1
#define F2 cnt_b2
#define N1 5
#define N2 11
int pad[64] = {1};
#else
struct pt {
	int x, y;
} gpt = {7, 8};
#define NAME "A"
#define F1 cnt_a1
#define F2 cnt_a2
#define N1 7
#define N2 3
#endif

int counter = 100;

int use_pt(struct pt *p, int (*f)(int));

__attribute__((noinline)) int F1(int x) {
	counter++;
	return x + 1;
}

__attribute__((noinline)) int F2(int x) {
	counter++;
	return x * 2;
}

int main(void) {
	int n = 0;
	for (int i = 0; i < N1; i++)
		n += F1(i);
	for (int i = 0; i < N2; i++)
		n += F2(i);
	printf("%s %d %d\n", NAME, n, counter);
	return use_pt(&gpt, F1);
}

__attribute__((noinline)) int use_pt(struct pt *p, int (*f)(int)) {
	return f == 0 || p->x < 0;
}
