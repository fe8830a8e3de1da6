/* qsort and bsearch on ints, strings and structs (ties broken explicitly so
 * the result does not depend on the sort algorithm). */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t lcg = 12345;
static uint32_t next(void)
{
	lcg = lcg * 1103515245u + 12345u;
	return lcg >> 8;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

struct rec {
	char name[12];
	int score;
	int id;
};
static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->score != y->score)
		return y->score - x->score; /* descending */
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->id - y->id;
}

int main(void)
{
	enum { N = 20000 };
	static int a[N];
	for (int i = 0; i < N; i++)
		a[i] = (int)(next() % 100000) - 50000;
	qsort(a, N, sizeof a[0], cmp_int);
	int sorted = 1;
	uint64_t h = 0;
	for (int i = 0; i < N; i++) {
		if (i && a[i - 1] > a[i])
			sorted = 0;
		h = h * 1000003 + (uint64_t)(uint32_t)a[i];
	}
	printf("ints sorted=%d min=%d max=%d median=%d hash=%016" PRIx64 "\n", sorted, a[0], a[N - 1], a[N / 2], h);
	int hits = 0, misses = 0;
	for (int k = -50000; k < 50000; k += 7) {
		int *p = bsearch(&k, a, N, sizeof a[0], cmp_int);
		if (p) {
			hits++;
			if (*p != k)
				printf("bsearch returned wrong element\n");
		} else {
			misses++;
		}
	}
	printf("bsearch hits=%d misses=%d\n", hits, misses);

	static const char *words[] = {"pear", "apple", "fig", "banana", "cherry", "date", "elderberry", "grape",
		"kiwi", "lemon", "mango", "nectarine", "orange", "papaya", "quince", "raspberry", "apple", "Zebra", "",
		"apricot"};
	enum { NW = sizeof words / sizeof words[0] };
	const char *w[NW];
	memcpy(w, words, sizeof w);
	qsort(w, NW, sizeof w[0], cmp_str);
	printf("words:");
	for (int i = 0; i < NW; i++)
		printf(" [%s]", w[i]);
	printf("\n");
	const char *key = "mango";
	const char **found = bsearch(&key, w, NW, sizeof w[0], cmp_str);
	printf("bsearch mango at %d\n", found ? (int)(found - w) : -1);

	enum { NR = 3000 };
	static struct rec r[NR];
	for (int i = 0; i < NR; i++) {
		r[i].id = i;
		r[i].score = (int)(next() % 50);
		snprintf(r[i].name, sizeof r[i].name, "n%c%c", 'a' + (int)(next() % 5), 'a' + (int)(next() % 26));
	}
	qsort(r, NR, sizeof r[0], cmp_rec);
	for (int i = 0; i < 5; i++)
		printf("rec %d: %s score=%d id=%d\n", i, r[i].name, r[i].score, r[i].id);
	h = 0;
	for (int i = 0; i < NR; i++)
		h = h * 31 + (uint64_t)r[i].id;
	printf("records hash=%016" PRIx64 "\n", h);
	/* Degenerate inputs: already sorted, reversed, all equal, tiny. */
	for (int i = 0; i < N; i++)
		a[i] = N - i;
	qsort(a, N, sizeof a[0], cmp_int);
	printf("reversed -> first=%d last=%d\n", a[0], a[N - 1]);
	for (int i = 0; i < N; i++)
		a[i] = 7;
	qsort(a, N, sizeof a[0], cmp_int);
	qsort(a, 1, sizeof a[0], cmp_int);
	qsort(a, 0, sizeof a[0], cmp_int);
	printf("equal ok=%d\n", a[0] == 7 && a[N - 1] == 7);
	return 0;
}
