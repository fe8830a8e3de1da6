/* x87 long double: arithmetic, conversions, comparisons, printf %Lf/%La/%Lg,
 * strtold, and libm expl/logl/sinl (transcendentals printed with 15 digits). */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t h = 0xcbf29ce484222325ull;
static void mix(uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ull;
}
static void mixld(long double x)
{
	unsigned char b[16] = {0};
	memcpy(b, &x, 10);
	uint64_t lo, hi = 0;
	memcpy(&lo, b, 8);
	memcpy(&hi, b + 8, 2);
	mix(lo);
	mix(hi);
}

static volatile long double vals[] = {0.0L, 1.0L, -1.0L, 0.1L, 1.0L / 3.0L, 3.14159265358979323846264338327950288L,
	1e4000L, -1e-4000L, LDBL_MAX, LDBL_MIN, LDBL_EPSILON, 123456789012345678.0L, 2.5L, -2.5L};
#define NVALS (sizeof vals / sizeof vals[0])

int main(void)
{
	printf("sizeof=%zu mant_dig=%d max_exp=%d\n", sizeof(long double), LDBL_MANT_DIG, LDBL_MAX_EXP);
	for (unsigned i = 0; i < NVALS; i++) {
		long double a = vals[i], b = vals[(i * 5 + 2) % NVALS];
		printf("a=%La %%Lf=%Lf %%.21Lg=%.21Lg %%Le=%Le\n", a, a, a, a);
		printf("  a+b=%La a-b=%La a*b=%La", a + b, a - b, a * b);
		if (b != 0)
			printf(" a/b=%La", a / b);
		printf(" sqrtl|a|=%La a<b=%d a==b=%d\n", sqrtl(fabsl(a)), a < b, a == b);
	}
	/* Accumulations that keep 64-bit mantissas. */
	long double acc = 0, prod = 1;
	for (int k = 1; k <= 2000; k++) {
		acc += 1.0L / k;
		prod *= 1.0L + 1.0L / (k * (long double)k);
		mixld(acc);
		mixld(prod);
	}
	printf("harmonic(2000)=%.20Lf prod=%.20Lf\n", acc, prod);
	/* Conversions. */
	volatile long double big = 9223372036854775807.0L, neg = -12345.75L, frac = 7.999L;
	volatile int64_t i64 = INT64_MIN + 12345;
	volatile uint64_t u64 = 0xffffffffffffffffull;
	printf("(int64)big=%" PRId64 " (int)neg=%d (int)frac=%d (ld)i64=%.1Lf (ld)u64=%.1Lf (u64)ld=%" PRIu64 "\n",
	       (int64_t)(big / 2), (int)neg, (int)frac, (long double)i64, (long double)u64,
	       (uint64_t)(long double)u64);
	volatile double d = 0.1;
	volatile float f = 0.1f;
	printf("(ld)0.1=%La (ld)0.1f=%La (double)(1/3L)=%a (float)(1/3L)=%a\n", (long double)d,
	       (long double)f, (double)(1.0L / 3), (double)(float)(1.0L / 3));
	printf("rintl(2.5)=%Lg roundl(2.5)=%Lg floorl(-2.5)=%Lg ceill(-2.5)=%Lg truncl=%Lg fmodl=%La\n",
	       rintl(vals[12]), roundl(vals[12]), floorl(vals[13]), ceill(vals[13]), truncl(vals[5]),
	       fmodl(vals[5], vals[3]));
	int e;
	long double m = frexpl(vals[5] * 1000, &e);
	printf("frexpl=%La,%d ldexpl=%La scalbnl=%La\n", m, e, ldexpl(m, e), scalbnl(vals[1], 16000));
	volatile long double z = 0;
	long double inf = 1 / z, nan_ = z / z;
	printf("inf=%Lf -inf=%Lf isnan=%d isinf=%d nan<1=%d\n", inf, -inf, isnan(nan_), isinf(inf) != 0,
	       nan_ < 1);
	static const long double xs[] = {0.5L, 1.0L, 2.0L, 10.0L, -0.25L, 100.0L};
	for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		volatile long double x = xs[i];
		printf("x=%Lg expl=%.15Lg logl|x|=%.15Lg sinl=%.15Lg cosl=%.15Lg powl(|x|,1.5)=%.15Lg atanl=%.15Lg\n", x,
		       expl(x), logl(fabsl(x)), sinl(x), cosl(x), powl(fabsl(x), 1.5L), atanl(x));
	}
	static const char *strs[] = {"0.1", "1e4000", "0x1.8p-16400", "3.14159265358979323846264338327950288", "-0",
		"1.18973149535723176502e+4932"};
	for (unsigned i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		long double x = strtold(strs[i], NULL);
		printf("strtold(%s)=%La %.25Lg\n", strs[i], x, x);
	}
	char buf[80];
	int bad = 0;
	long double p10[40];
	p10[20] = 1;
	for (int k = 21; k < 40; k++)
		p10[k] = p10[k - 1] * 10;
	for (int k = 19; k >= 0; k--)
		p10[k] = p10[k + 1] / 10;
	for (int k = 1; k < 3000; k++) {
		long double x = (long double)k / 7.0L * p10[k % 40];
		snprintf(buf, sizeof buf, "%.21Lg", x);
		if (strtold(buf, NULL) != x)
			bad++;
		mixld(x);
	}
	printf("strtold round trip failures: %d\nhash %016" PRIx64 "\n", bad, h);
	return 0;
}
