// A long loop for the interrupt tests: g.hot, written millions of times,
// shares a cache line with g.first, written once at the start, so that
// a search for writes of g.first must re-simulate the whole loop.
struct {
	long first;
	long hot;
} __attribute__((aligned(64))) g;

int main(int argc, char **argv) {
	g.first = argc;
	for (long i = 0; i < 1000000; i++)
		g.hot = i;
	return (int)(g.hot & 0);
}
