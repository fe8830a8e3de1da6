/* Heavy malloc/calloc/realloc/free with pseudo-random sizes, including large
 * blocks (> 128 KiB, served by mmap) and aligned allocations. Contents are
 * stamped and verified; only checksums and counts are printed. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 512
#define OPS 40000

static uint64_t rs = 0x853c49e6748fea9bull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

struct slot {
	unsigned char *p;
	size_t size;
	unsigned char tag;
};
static struct slot slots[SLOTS];
static uint64_t sum;
static int errors;

static size_t pick_size(void)
{
	uint64_t r = rnd() % 1000;
	if (r < 700)
		return (size_t)(rnd() % 256);
	if (r < 950)
		return 256 + (size_t)(rnd() % 8192);
	if (r < 990)
		return 8192 + (size_t)(rnd() % 120000);
	return 131072 + (size_t)(rnd() % (1u << 20)); /* mmap territory */
}

/* Stamp: every byte for small blocks, sparse positions for big ones. */
static void stamp(struct slot *s)
{
	if (s->size <= 4096) {
		for (size_t i = 0; i < s->size; i++)
			s->p[i] = (unsigned char)(s->tag + i * 7);
		return;
	}
	memset(s->p, s->tag, s->size);
	for (size_t i = 0; i < s->size; i += 4093)
		s->p[i] = (unsigned char)(s->tag ^ (i >> 12));
	s->p[s->size - 1] = (unsigned char)~s->tag;
}

static void check(const struct slot *s, size_t upto)
{
	size_t n = upto < s->size ? upto : s->size;
	if (s->size <= 4096) {
		for (size_t i = 0; i < n; i++)
			if (s->p[i] != (unsigned char)(s->tag + i * 7)) {
				errors++;
				return;
			}
		sum += n;
		return;
	}
	for (size_t i = 0; i < n; i += 4093)
		if (s->p[i] != (unsigned char)(s->tag ^ (i >> 12)))
			errors++;
	if (n == s->size && s->p[n - 1] != (unsigned char)~s->tag)
		errors++;
	for (size_t i = 1; i < n; i += 65536)
		if (i % 4093 && s->p[i] != s->tag)
			errors++;
	sum += n;
}

int main(void)
{
	int mallocs = 0, frees = 0, reallocs = 0, callocs = 0, large = 0;
	for (int op = 0; op < OPS; op++) {
		struct slot *s = &slots[rnd() % SLOTS];
		if (!s->p) {
			size_t n = pick_size();
			large += n >= 131072;
			if (rnd() % 8 == 0) {
				s->p = calloc(1, n + 1);
				callocs++;
				for (size_t i = 0; i < n + 1; i += (n > 4096 ? 511 : 1))
					if (s->p[i])
						errors++;
			} else {
				s->p = malloc(n + 1);
				mallocs++;
			}
			if (!s->p) {
				printf("allocation of %zu failed\n", n + 1);
				return 1;
			}
			s->size = n + 1;
			s->tag = (unsigned char)op;
			stamp(s);
		} else if (rnd() % 3 == 0) {
			check(s, s->size);
			size_t n = pick_size() + 1;
			large += n >= 131072;
			unsigned char *q = realloc(s->p, n);
			reallocs++;
			if (!q) {
				printf("realloc failed\n");
				return 1;
			}
			s->p = q;
			size_t keep = n < s->size ? n : s->size;
			/* The preserved prefix must still verify against the old stamp. */
			if (s->size <= 4096 && n <= 4096) {
				struct slot old = *s;
				old.size = keep;
				check(&old, keep);
			}
			s->size = n;
			s->tag = (unsigned char)(op * 3);
			stamp(s);
		} else {
			check(s, s->size);
			free(s->p);
			frees++;
			s->p = NULL;
		}
	}
	for (int i = 0; i < SLOTS; i++) {
		if (slots[i].p) {
			check(&slots[i], slots[i].size);
			free(slots[i].p);
			frees++;
		}
	}
	int misaligned = 0;
	static const size_t aligns[] = {16, 32, 64, 256, 4096, 65536};
	for (int k = 0; k < 60; k++) {
		size_t al = aligns[k % 6];
		void *p = NULL;
		if (posix_memalign(&p, al, (size_t)(k * 1000 + 1)) != 0) {
			printf("posix_memalign failed\n");
			return 1;
		}
		misaligned += ((uintptr_t)p % al) != 0;
		memset(p, k, (size_t)(k * 1000 + 1));
		void *q = aligned_alloc(al, al * 3);
		misaligned += ((uintptr_t)q % al) != 0;
		free(p);
		free(q);
	}
	/* malloc(0), realloc to 0-size, free(NULL). */
	void *z = malloc(0);
	free(z);
	free(NULL);
	void *r = realloc(NULL, 100);
	memset(r, 1, 100);
	r = realloc(r, 1 << 20);
	r = realloc(r, 10);
	free(r);
	printf("mallocs=%d callocs=%d reallocs=%d frees=%d large=%d\n", mallocs, callocs, reallocs, frees, large);
	printf("verified bytes=%" PRIu64 " errors=%d misaligned=%d\n", sum, errors, misaligned);
	return errors != 0;
}
