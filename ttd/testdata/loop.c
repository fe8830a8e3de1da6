// loop runs long enough to span many checkpoints: it writes `first` once
// near its start and `last` once near its end, and hashes a buffer in
// between, writing `acc` on every round.
#include <stdio.h>
#include <stdlib.h>

long first;
long last;
volatile unsigned long acc;
unsigned char buf[4096];

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	first = 42;
	for (int i = 0; i < (int)sizeof buf; i++)
		buf[i] = (unsigned char)(i * 7 + 1);
	unsigned long h = 1469598103934665603ul;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < (int)sizeof buf; i += 8)
			h = (h ^ buf[i]) * 1099511628211ul;
		acc = h;
		buf[r % sizeof buf] ^= (unsigned char)h;
	}
	last = (long)(h & 0xffff);
	printf("%lu %ld\n", h, last);
	return 0;
}
