// vec: the tuning workload of the vectorised (x86-64-v3) comparison:
// loops that gcc -O3 auto-vectorises (saxpy, a dot product, a byte
// histogram, an integer min/max scan) and glibc's string functions, which
// take their AVX2 forms when CPUID offers AVX2.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
static float x[N], y[N];
static double dx[N], dy[N];
static unsigned char bytes[N * 4];
static int ints[N];
static char text[8192];

__attribute__((noinline)) static void saxpy(float a, float *restrict x, float *restrict y, int n) {
	for (int i = 0; i < n; i++)
		y[i] = a * x[i] + y[i];
}

__attribute__((noinline)) static double dot(const double *restrict a, const double *restrict b, int n) {
	double s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

__attribute__((noinline)) static void hist(const unsigned char *b, int n, unsigned *h) {
	for (int i = 0; i < n; i++)
		h[b[i] >> 4]++;
}

__attribute__((noinline)) static void minmax(const int *restrict v, int n, int *lo, int *hi) {
	int a = v[0], b = v[0];
	for (int i = 0; i < n; i++) {
		a = v[i] < a ? v[i] : a;
		b = v[i] > b ? v[i] : b;
	}
	*lo = a, *hi = b;
}

__attribute__((noinline)) static void addsat(unsigned char *restrict d, const unsigned char *restrict s, int n) {
	for (int i = 0; i < n; i++) {
		unsigned v = d[i] + s[i];
		d[i] = v > 255 ? 255 : v;
	}
}

int main(int argc, char **argv) {
	int reps = argc > 1 ? atoi(argv[1]) : 200;
	unsigned seed = 12345;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		x[i] = (float)(seed >> 16) / 65536.0f;
		y[i] = (float)i * 0.5f;
		dx[i] = x[i] * 0.25;
		dy[i] = 1.0 - x[i];
		ints[i] = (int)(seed >> 3) - (1 << 27);
	}
	for (int i = 0; i < N * 4; i++) {
		seed = seed * 1103515245 + 12345;
		bytes[i] = seed >> 24;
	}
	for (int i = 0; i < (int)sizeof text - 1; i++)
		text[i] = 'a' + i % 23;
	unsigned h[16] = {0};
	double acc = 0;
	long slen = 0;
	int lo = 0, hi = 0;
	static char buf[8192];
	for (int r = 0; r < reps; r++) {
		saxpy(1.0001f, x, y, N);
		acc += dot(dx, dy, N);
		hist(bytes, N * 4, h);
		minmax(ints, N, &lo, &hi);
		addsat(bytes, bytes + N, N);
		memcpy(buf, text, sizeof buf);
		buf[r % 8000] = 0;
		slen += strlen(buf);
		slen += (char *)memchr(text, 'w', sizeof text) - text;
		slen += memcmp(buf, text, 100) == 0;
		buf[r % 8000] = 'x';
	}
	double ys = 0;
	for (int i = 0; i < N; i++)
		ys += y[i];
	printf("saxpy %.6e dot %.6e lo %d hi %d len %ld\n", ys, acc, lo, hi, slen);
	for (int i = 0; i < 16; i++)
		printf("%u%c", h[i], i == 15 ? '\n' : ' ');
	return 0;
}
