/* fleet's test program: main calls work(i) for i = 1..N (N = argv[1]),
 * prints each result with one write(2) and adds i to the global counter.
 * work(i) runs about 9000*i instructions, so with small checkpoint
 * intervals a call's entry and return fall in different segments. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long counter;

__attribute__((noinline)) long work(long n)
{
	volatile long acc = 0;
	for (long i = 0; i < n * 1000; i++)
		acc += i ^ n;
	counter += n;
	return acc % 1000 + n;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 3;
	char buf[64];
	for (int i = 1; i <= calls; i++) {
		long r = work(i);
		int len = snprintf(buf, sizeof buf, "work(%d) = %ld\n", i, r);
		if (write(1, buf, len) != len)
			return 1;
	}
	return 0;
}
