// inthash: a CPU-bound integer workload (hash table inserts and lookups,
// FNV and xorshift mixing, a small sort) for the speed comparison.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 16)
static uint64_t keys[N * 2];
static uint32_t vals[N * 2];

static uint64_t xs(uint64_t *s) {
	uint64_t x = *s;
	x ^= x << 13; x ^= x >> 7; x ^= x << 17;
	return *s = x;
}

static uint32_t fnv(const void *p, size_t n) {
	const unsigned char *b = p;
	uint32_t h = 2166136261u;
	while (n--) h = (h ^ *b++) * 16777619u;
	return h;
}

static int cmp(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 30;
	uint64_t seed = 88172645463325252ull, sum = 0;
	for (int r = 0; r < rounds; r++) {
		memset(keys, 0, sizeof keys);
		for (int i = 0; i < N; i++) {
			uint64_t k = xs(&seed) | 1;
			uint32_t h = fnv(&k, sizeof k) & (N * 2 - 1);
			while (keys[h]) h = (h + 1) & (N * 2 - 1);
			keys[h] = k;
			vals[h] = i;
		}
		for (int i = 0; i < N * 2; i++)
			if (keys[i]) sum += vals[i] * (keys[i] >> 40);
		static uint64_t tmp[4096];
		for (int i = 0; i < 4096; i++) tmp[i] = xs(&seed);
		qsort(tmp, 4096, sizeof tmp[0], cmp);
		sum ^= tmp[2048];
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
