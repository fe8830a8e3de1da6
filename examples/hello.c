// hello.c: the README's first example. It prints its arguments, a little
// floating point and a checksum, so a run under ttd can be compared with a
// native one at a glance.
#include <math.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
	unsigned h = 2166136261u;
	for (int i = 1; i < argc; i++) {
		printf("hello, %s\n", argv[i]);
		for (const char *p = argv[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 16777619u;
	}
	double s = 0;
	for (int i = 1; i <= 1000; i++)
		s += sin(i) / i;
	printf("sum sin(i)/i = %.12f, fnv1a = %08x\n", s, h);
	return 0;
}
