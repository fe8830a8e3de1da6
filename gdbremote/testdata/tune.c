// The tuning program of the benchmarks: first, written once at the
// start, has a cache line of its own; mix runs on every iteration.
long acc;
long first __attribute__((aligned(64)));
__attribute__((noinline)) long mix(long v) { return v * 2654435761u ^ (v >> 7); }
int main(int argc, char **argv) {
	first = argc;
	for (long i = 0; i < 400000; i++)
		acc += mix(i);
	return (int)(acc & 0);
}
