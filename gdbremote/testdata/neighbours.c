// The check program of the benchmarks, which nobody tuned for: watched,
// written once at the start, shares its 64-byte line with busy, written
// on every iteration (as a struct field or a global beside an array
// does), and churn scatters writes over a table.
struct line {
	long busy[7];
	long watched;
} __attribute__((aligned(64)));
struct line g;
unsigned char table[1 << 16];
__attribute__((noinline)) void churn(long i) {
	g.busy[i % 7] += i;
	table[(i * 40503) & 0xffff] ^= (unsigned char)i;
}
int main(int argc, char **argv) {
	g.watched = argc;
	for (long i = 0; i < 200000; i++)
		churn(i);
	return (int)(g.busy[3] & 0);
}
