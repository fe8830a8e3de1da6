// hello.c: the README's first example. It prints its arguments, a little
// floating point and a checksum kept in a global, so a run under ttd can
// be compared with a native one at a glance, and `ttd query` can ask who
// last wrote the global.
#include <math.h>
#include <stdio.h>
#include <string.h>

unsigned fnv = 2166136261u;

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		printf("hello, %s\n", argv[i]);
		for (const char *p = argv[i]; *p; p++)
			fnv = (fnv ^ (unsigned char)*p) * 16777619u;
	}
	double s = 0;
	for (int i = 1; i <= 1000; i++)
		s += sin(i) / i;
	printf("sum sin(i)/i = %.12f, fnv1a = %08x\n", s, fnv);
	return 0;
}
