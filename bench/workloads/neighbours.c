// neighbours: a watched variable beside memory the program writes all the
// time (the same 64-byte line), for bench/cmd/neighbours. The watched
// variable is written a few times: at the start, at a third of the run
// (the write find-prev-write from the end must find), and never again,
// while its neighbours are written on every iteration.
//
//	neighbours LAYOUT ITERATIONS
//
// LAYOUT: global (a global beside a global array: the layout tuned on),
// struct (a field beside an array in the same struct), heap (a heap cell
// beside a busy heap array), stack (a local beside a busy local array),
// busy (the watched global itself written on every iteration, the last
// write being the one before the end). It prints the watched address.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// -fno-toplevel-reorder keeps these in declaration order: arr then
// watched, in one 64-byte line.
__attribute__((aligned(64))) volatile long arr[7];
volatile long watched;

struct rec {
	volatile long items[7];
	volatile long field;
} __attribute__((aligned(64)));
struct rec rec;

static long work(volatile long *busy, volatile long *w, long n, int busyw) {
	long sum = 0;
	*w = 1;
	for (long i = 0; i < n; i++) {
		busy[i % 7] = i;
		sum += busy[(i + 3) % 7];
		if (i == n / 3)
			*w = 0x7c;
		if (busyw)
			*w = i;
	}
	return sum + *w;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: neighbours global|struct|heap|stack|busy ITERATIONS\n");
		return 2;
	}
	long n = atol(argv[2]);
	const char *l = argv[1];
	long sum;
	if (!strcmp(l, "global") || !strcmp(l, "busy")) {
		printf("%p\n", (void *)&watched);
		fflush(stdout);
		sum = work(arr, &watched, n, !strcmp(l, "busy"));
	} else if (!strcmp(l, "struct")) {
		printf("%p\n", (void *)&rec.field);
		fflush(stdout);
		sum = work(rec.items, &rec.field, n, 0);
	} else if (!strcmp(l, "heap")) {
		volatile long *h = aligned_alloc(64, 64);
		printf("%p\n", (void *)&h[7]);
		fflush(stdout);
		sum = work(h, &h[7], n, 0);
	} else if (!strcmp(l, "stack")) {
		struct rec local;
		printf("%p\n", (void *)&local.field);
		fflush(stdout);
		sum = work(local.items, &local.field, n, 0);
	} else {
		fprintf(stderr, "neighbours: unknown layout %s\n", l);
		return 2;
	}
	printf("%ld\n", sum & 0xff);
	return 0;
}
