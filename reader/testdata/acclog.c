/* Accesses for the access-log test (acclog_test.go): reads and writes
 * that cross pages, string instructions, SSE and AVX loads and stores,
 * self-modifying code, a signal handler that writes, a page unmapped and
 * mapped again, and a thread. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile uint64_t sink;
static volatile int got;
static char *pages;

static void handler(int sig) { got += sig; pages[4096 * 2 + 7] = (char)sig; }

__attribute__((target("avx2"))) static void vec(char *p, int n) {
	for (int i = 0; i + 32 <= n; i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
		_mm256_storeu_si256((__m256i *)(p + i + 1), _mm256_add_epi8(v, _mm256_set1_epi8(1)));
	}
}

static void sse(char *p, int n) {
	for (int i = 0; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + i + 3));
		_mm_storeu_si128((__m128i *)(p + i), _mm_xor_si128(v, _mm_set1_epi8(5)));
	}
}

static void *worker(void *arg) {
	char *p = arg;
	for (int r = 0; r < 200; r++)
		for (int i = 0; i < 512; i++)
			p[i] += (char)(i ^ r);
	return 0;
}

int main(void) {
	pages = mmap(0, 4096 * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t s = 0;
	for (int r = 0; r < 300; r++) {
		/* Page-crossing 8-, 4- and 2-byte accesses. */
		for (int o = 1; o < 8; o++) {
			uint64_t *q = (uint64_t *)(pages + 4096 - o);
			*q += r;
			s += *(uint32_t *)(pages + 8192 - (o & 3));
			*(uint16_t *)(pages + 4096 * 3 - 1) = (uint16_t)r;
		}
		/* String instructions. */
		__asm__ volatile("rep stosq" : : "D"(pages + 100), "c"(9), "a"((uint64_t)r) : "memory");
		__asm__ volatile("rep movsb" : : "S"(pages + 100), "D"(pages + 4096 + 50), "c"(61) : "memory");
		__asm__ volatile("cld; rep movsq" : : "S"(pages + 4096 * 3 - 40), "D"(pages + 300), "c"(5) : "memory");
		sse(pages + 4096 - 100 + (r & 7), 200);
		if (__builtin_cpu_supports("avx2"))
			vec(pages + 4096 * 2 - 200 + (r & 15), 400);
	}
	/* Self-modifying code: a function written, run, rewritten and run. */
	unsigned char *code = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int r = 0; r < 100; r++) {
		unsigned char f[] = {0xb8, (unsigned char)r, 0, 0, 0, 0xc3}; /* mov eax, r; ret */
		memcpy(code + 64 * (r & 3), f, sizeof f);
		s += ((int (*)(void))(code + 64 * (r & 3)))();
	}
	signal(SIGUSR1, handler);
	for (int r = 0; r < 5; r++)
		raise(SIGUSR1);
	/* A page unmapped and mapped again in the same interval: what was
	 * known of it before is forgotten (a tracker's reset), the bytes
	 * accessed after are known again. */
	char *u = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int r = 0; r < 200; r++)
		for (int i = 0; i < 64; i++)
			u[i] += (char)r;
	munmap(u, 4096);
	u = mmap(u, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	for (int r = 0; r < 200; r++)
		for (int i = 100; i < 110; i++)
			u[i] += (char)r;
	s += u[105];
	pthread_t th;
	pthread_create(&th, 0, worker, pages + 4096 + 3000);
	worker(pages + 200);
	pthread_join(th, 0);
	for (int i = 0; i < 4096 * 4; i++)
		s = s * 31 + (unsigned char)pages[i];
	sink = s;
	printf("%llu %d\n", (unsigned long long)s, got);
	return 0;
}
