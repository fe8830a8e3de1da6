// The benchmarks' program: a loop of a few million instructions between
// a line near the start and a tail near the end.
#include <stdio.h>
long acc;
__attribute__((noinline)) long mix(long v) { return v * 2654435761u ^ (v >> 7); }
int main(void) {
	acc = 1; /* MARK start */
	for (long i = 0; i < 400000; i++)
		acc += mix(i);
	for (int k = 0; k < 50; k++)
		acc ^= mix(k); /* MARK tail */
	printf("%ld\n", acc);
	return 0;
}
