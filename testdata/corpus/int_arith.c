/* Integer arithmetic of every width, __int128, division edge cases, shifts. */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint64_t h;
static void mix(uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ull;
}

/* Values that the compiler cannot see through. */
static volatile int64_t vs64[] = {0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100,
	INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, INT32_MAX, INT32_MIN,
	(int64_t)UINT32_MAX, 0x123456789abcdefll, -0x123456789abcdefll};
#define NV (sizeof vs64 / sizeof vs64[0])
static volatile int shiftcounts[] = {0, 1, 7, 8, 15, 16, 31, 32, 33, 62, 63};
#define NS (sizeof shiftcounts / sizeof shiftcounts[0])

#define WIDTH_TEST(T, UT, BITS, MIN)                                           \
	static void test_##T(void)                                             \
	{                                                                      \
		h = 0xcbf29ce484222325ull;                                     \
		for (unsigned i = 0; i < NV; i++)                              \
			for (unsigned j = 0; j < NV; j++) {                    \
				T a = (T)vs64[i], b = (T)vs64[j];              \
				UT ua = (UT)a, ub = (UT)b;                     \
				mix((UT)(ua + ub));                              \
				mix((UT)(ua - ub));                              \
				mix((UT)(ua * ub));                            \
				mix(a < b);                                    \
				mix(ua < ub);                                  \
				mix(a == b);                                   \
				if (b != 0 && !(a == MIN && b == -1)) {        \
					mix((UT)(a / b));                      \
					mix((UT)(a % b));                      \
				}                                              \
				if (ub != 0) {                                 \
					mix((UT)(ua / ub));                    \
					mix((UT)(ua % ub));                    \
				}                                              \
			}                                                      \
		for (unsigned i = 0; i < NV; i++)                              \
			for (unsigned s = 0; s < NS; s++) {                    \
				int c = shiftcounts[s];                        \
				if (c >= BITS)                                 \
					continue;                              \
				T a = (T)vs64[i];                              \
				UT ua = (UT)a;                                 \
				mix((UT)(ua << c));                            \
				mix((UT)(ua >> c));                            \
				mix((UT)(a >> c));                             \
			}                                                      \
		for (int k = 0; k < 20000; k++) {                              \
			T a = (T)rnd(), b = (T)rnd();                          \
			UT ua = (UT)a, ub = (UT)b;                             \
			if (k & 1)                                             \
				b = (T)(b >> (k % BITS));                      \
			mix((UT)(ua * ub));                                    \
			mix((UT)(ua + ub) ^ (UT)(ua - ub));                    \
			if (b != 0 && !(a == MIN && b == -1)) {                \
				mix((UT)(a / b));                              \
				mix((UT)(a % b));                              \
			}                                                      \
			if (ub != 0) {                                         \
				mix((UT)(ua / ub));                            \
				mix((UT)(ua % ub));                            \
			}                                                      \
			mix((UT)(0 - ua) ^ (UT)(a < 0));                                         \
			mix((UT)(~ua));                                        \
		}                                                              \
		printf("%-8s hash %016" PRIx64 "\n", #T, h);                   \
	}

WIDTH_TEST(int8_t, uint8_t, 8, INT8_MIN)
WIDTH_TEST(int16_t, uint16_t, 16, INT16_MIN)
WIDTH_TEST(int32_t, uint32_t, 32, INT32_MIN)
WIDTH_TEST(int64_t, uint64_t, 64, INT64_MIN)

static void print_u128(unsigned __int128 v)
{
	char buf[64];
	int n = 0;
	do {
		buf[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	while (n)
		putchar(buf[--n]);
}

static void print_i128(__int128 v)
{
	if (v < 0) {
		putchar('-');
		print_u128(-(unsigned __int128)v);
	} else {
		print_u128((unsigned __int128)v);
	}
}

static void test_int128(void)
{
	volatile __int128 a = (__int128)0x0123456789abcdefll * 0x1000000000ll + 12345;
	volatile __int128 b = -(__int128)9876543219ll;
	volatile unsigned __int128 ua = ~(unsigned __int128)0;
	volatile unsigned __int128 ub = (unsigned __int128)UINT64_MAX + 2;
	printf("i128 a=");
	print_i128(a);
	printf(" b=");
	print_i128(b);
	printf("\ni128 a*b=");
	print_i128(a * b);
	printf("\ni128 a/b=");
	print_i128(a / b);
	printf(" a%%b=");
	print_i128(a % b);
	printf("\nu128 max=");
	print_u128(ua);
	printf(" max/ub=");
	print_u128(ua / ub);
	printf(" max%%ub=");
	print_u128(ua % ub);
	printf("\nu128 max*max=");
	print_u128(ua * ua);
	printf("\n");
	/* 64x64->128 widening multiplies (mul/imul with rdx:rax). */
	volatile uint64_t x = 0xfedcba9876543210ull, y = 0x0f0f0f0f0f0f0f0full;
	unsigned __int128 p = (unsigned __int128)x * y;
	printf("mulq hi=%016" PRIx64 " lo=%016" PRIx64 "\n", (uint64_t)(p >> 64), (uint64_t)p);
	volatile int64_t sx = -0x7edcba9876543210ll, sy = 0x1f0f0f0f0f0f0f0fll;
	__int128 sp = (__int128)sx * sy;
	printf("imulq hi=%016" PRIx64 " lo=%016" PRIx64 "\n", (uint64_t)((unsigned __int128)sp >> 64), (uint64_t)sp);
	h = 1;
	for (int k = 0; k < 5000; k++) {
		unsigned __int128 n = ((unsigned __int128)rnd() << 64) | rnd();
		unsigned __int128 d = ((unsigned __int128)(rnd() >> (k % 64)) << (k % 3 == 0 ? 64 : 0)) | (rnd() >> (k % 61));
		if (d == 0)
			d = 3;
		unsigned __int128 q = n / d, r = n % d;
		if (q * d + r != n || r >= d)
			printf("u128 div mismatch at %d\n", k);
		mix((uint64_t)q ^ (uint64_t)(q >> 64));
		mix((uint64_t)r ^ (uint64_t)(r >> 64));
		__int128 sn = (__int128)n, sd = (__int128)d;
		if (k & 1)
			sd = -sd;
		if (sd == -1)
			sd = 5;
		__int128 sq = sn / sd, sr = sn % sd;
		mix((uint64_t)sq ^ (uint64_t)((unsigned __int128)sq >> 64));
		mix((uint64_t)sr);
	}
	printf("i128 hash %016" PRIx64 "\n", h);
}

static void test_edges(void)
{
	volatile int32_t m = INT32_MIN, one = 1, mone = -1, seven = 7, three = 3;
	printf("-7/3=%d -7%%3=%d 7/-3=%d 7%%-3=%d -7%%-3=%d\n", -seven / three,
	       -seven % three, seven / -three, seven % -three, -seven % -three);
	printf("INT32_MIN/1=%d INT32_MIN%%-1 skipped, INT32_MIN/2=%d INT32_MIN%%3=%d\n",
	       m / one, m / 2, m % three);
	printf("-1>>31=%d (unsigned)-1>>31=%u\n", mone >> 31, (uint32_t)mone >> 31);
	volatile uint64_t um = UINT64_MAX, u1 = 1, big = 1ull << 63;
	printf("UMAX/1=%" PRIu64 " UMAX/UMAX=%" PRIu64 " UMAX/2^63=%" PRIu64
	       " UMAX%%2^63=%" PRIu64 " 0/UMAX=%" PRIu64 "\n",
	       um / u1, um / um, um / big, um % big, (um - um) / um);
	volatile int64_t smin = INT64_MIN, s3 = 3;
	printf("INT64_MIN/3=%" PRId64 " INT64_MIN%%3=%" PRId64 " INT64_MIN/-3=%" PRId64 "\n",
	       smin / s3, smin % s3, smin / -s3);
	volatile int sh0 = 0, sh63 = 63;
	volatile uint64_t pat = 0x8000000000000001ull;
	volatile int64_t spat = (int64_t)0x8000000000000001ull;
	printf("shl0=%016" PRIx64 " shr63=%016" PRIx64 " sar63=%016" PRIx64 " shl63=%016" PRIx64 "\n",
	       pat << sh0, pat >> sh63, (uint64_t)(spat >> sh63), pat << sh63);
	/* Conversions: sign and zero extension, truncation. */
	volatile int64_t w = -0x123456789ll;
	printf("trunc8=%d trunc16=%d trunc32=%d zext8=%u zext16=%u\n", (int8_t)w,
	       (int16_t)w, (int32_t)w, (uint8_t)w, (uint16_t)w);
	volatile int8_t n8 = -5;
	volatile uint8_t u8 = 250;
	printf("sext8to64=%" PRId64 " zext8to64=%" PRIu64 " u8+u8=%d\n", (int64_t)n8,
	       (uint64_t)u8, u8 + u8);
	/* Overflow detection builtins. */
	int32_t r32;
	int64_t r64;
	uint64_t ru64;
	int o1 = __builtin_add_overflow((int32_t)m, (int32_t)mone, &r32);
	int o2 = __builtin_mul_overflow((int64_t)smin, (int64_t)s3, &r64);
	int o3 = __builtin_sub_overflow((uint64_t)u1, (uint64_t)big, &ru64);
	printf("overflow add=%d(%d) mul=%d(%" PRId64 ") sub=%d(%" PRIu64 ")\n", o1, r32, o2,
	       r64, o3, ru64);
}

int main(void)
{
	test_int8_t();
	test_int16_t();
	test_int32_t();
	test_int64_t();
	test_int128();
	test_edges();
	return 0;
}
