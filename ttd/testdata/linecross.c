/* Accesses that cross a 64-byte line or a page by every amount, for
 * TestInlineSummaries: loads and stores of 2, 4, 8 and 16 bytes at every
 * offset near the end of a line and of a page, and of 32 bytes (AVX,
 * where the CPU has it) at every offset of a line. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static volatile uint64_t sink;

/* avx32 stores and loads 32 bytes at every offset of a line of q:
 * within the line, and across its end. */
__attribute__((target("avx"))) static void avx32(char *q, int round) {
	for (int k = 0; k < 64; k++) {
		__m256i v = _mm256_set1_epi8((char)(k + round));
		_mm256_storeu_si256((__m256i *)(q + 64 * (round % 8) + k), v);
		v = _mm256_loadu_si256((const __m256i *)(q + 64 * (7 - round % 8) + k + 1));
		sink += (uint64_t)_mm256_extract_epi64(v, 1);
	}
}

int main(void) {
	char *p = mmap(0, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	int avx = __builtin_cpu_supports("avx");
	for (int round = 0; round < 40; round++) {
		if (avx)
			avx32(p + 2 * 4096, round);
		/* a different line each round, so every interval sees new bytes */
		int line = 64 * (1 + round % 60);
		for (int k = 48; k < 64; k++) {
			uint16_t a = (uint16_t)(k + round);
			uint32_t b = (uint32_t)(k * round);
			uint64_t c = (uint64_t)k << round % 40;
			char v[16];
			memcpy(p + line + k, &a, 2);
			memcpy(p + 4096 + line + k, &b, 4);
			memcpy(p + 8192 + line + k, &c, 8);
			memset(v, k, 16);
			memcpy(p + 12288 + line + k - 8, v, 16);
			memcpy(&a, p + 8192 + line + k + 1, 2);
			memcpy(&b, p + line + k + 2, 4);
			memcpy(&c, p + 4096 + line + k + 3, 8);
			memcpy(v, p + 12288 + line + k - 5, 16);
			sink += a + b + c + v[3];
		}
		/* across pages */
		for (int k = 4096 - 15; k < 4096; k++) {
			uint64_t c = (uint64_t)k * round;
			memcpy(p + 4096 * (round % 3) + k, &c, 8);
			memcpy(&c, p + 4096 * (round % 3) + k - 1, 8);
			sink += c;
		}
		if (round % 10 == 9)
			munmap(p + 3 * 4096, 4096), p[3 * 4096 - 1] = 0,
			    mmap(p + 3 * 4096, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	}
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
