// usdt.c declares static probes with <sys/sdt.h> and prints, natively,
// the very values it passes to them: the probe tests compare a script's
// output with the program's own lines. Built at -O0 (stack operands such
// as -4@-20(%rbp), sym(%rip)) and -O2 (registers).
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>

long total;
static const char *names[] = {"alpha", "beta", "gamma"};

__attribute__((noinline)) static void tick(int i) {
	long sq = (long)i * i - 3;
	short s = -i;
	unsigned char c = 200 + i;
	const char *name = names[i % 3];
	total += sq;
	DTRACE_PROBE5(demo, tick, i, sq, name, s, c);
	printf("tick %d %ld %s %d %u\n", i, sq, name, s, c);
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 5;
	for (int i = 0; i < n; i++)
		tick(i);
	DTRACE_PROBE2(demo, done, total, 42);
	printf("done %ld 42\n", total);
	return 0;
}
