/* Explicit SSE2 intrinsics (emmintrin.h): integer lanes, double lanes,
 * shuffles, packs, compares, movemask and conversions. */
#include <emmintrin.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t rs = 0x0123456789abcdefull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}
static uint64_t h = 0xcbf29ce484222325ull;
static void mixv(__m128i v)
{
	uint64_t q[2];
	_mm_storeu_si128((__m128i *)q, v);
	for (int i = 0; i < 2; i++) {
		h ^= q[i];
		h *= 0x100000001b3ull;
	}
}
static void mixd(__m128d v) { mixv(_mm_castpd_si128(v)); }

static void show(const char *name, __m128i v)
{
	uint8_t b[16];
	_mm_storeu_si128((__m128i *)b, v);
	printf("%-14s", name);
	for (int i = 15; i >= 0; i--)
		printf("%02x%s", b[i], i % 4 == 0 && i ? "_" : "");
	printf("\n");
}
static void showd(const char *name, __m128d v)
{
	double d[2];
	_mm_storeu_pd(d, v);
	printf("%-14s %a %a\n", name, d[0], d[1]);
}

static volatile uint8_t seed_bytes[48] = {0x01, 0x80, 0x7f, 0xff, 0x00, 0x10, 0xfe, 0x42, 0x33, 0x99, 0xaa, 0x55, 0x0f,
	0xf0, 0x7e, 0x81, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x80, 0x00, 0x00, 0x80, 0xff, 0x7f, 0x01, 0x00,
	0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xba, 0xbe, 0x00, 0x01, 0x02, 0x03, 0xfc, 0xfd, 0xfe, 0xff};

static void fixed(void)
{
	uint8_t buf[48];
	for (int i = 0; i < 48; i++)
		buf[i] = seed_bytes[i];
	__m128i a = _mm_loadu_si128((const __m128i *)buf);
	__m128i b = _mm_loadu_si128((const __m128i *)(buf + 16));
	__m128i c = _mm_loadu_si128((const __m128i *)(buf + 32));
	__m128i u = _mm_loadu_si128((const __m128i *)(buf + 3)); /* unaligned */
	show("a", a);
	show("b", b);
	show("unaligned", u);
	show("add_epi8", _mm_add_epi8(a, b));
	show("adds_epi8", _mm_adds_epi8(a, b));
	show("adds_epu8", _mm_adds_epu8(a, b));
	show("subs_epi16", _mm_subs_epi16(a, b));
	show("subs_epu16", _mm_subs_epu16(a, b));
	show("add_epi16", _mm_add_epi16(a, c));
	show("add_epi32", _mm_add_epi32(a, c));
	show("sub_epi64", _mm_sub_epi64(a, c));
	show("mullo_epi16", _mm_mullo_epi16(a, b));
	show("mulhi_epi16", _mm_mulhi_epi16(a, b));
	show("mulhi_epu16", _mm_mulhi_epu16(a, b));
	show("mul_epu32", _mm_mul_epu32(a, b));
	show("madd_epi16", _mm_madd_epi16(a, b));
	show("sad_epu8", _mm_sad_epu8(a, b));
	show("avg_epu8", _mm_avg_epu8(a, b));
	show("avg_epu16", _mm_avg_epu16(a, b));
	show("min_epi16", _mm_min_epi16(a, b));
	show("max_epi16", _mm_max_epi16(a, b));
	show("min_epu8", _mm_min_epu8(a, b));
	show("max_epu8", _mm_max_epu8(a, b));
	show("cmpeq_epi8", _mm_cmpeq_epi8(a, u));
	show("cmpgt_epi8", _mm_cmpgt_epi8(a, b));
	show("cmplt_epi16", _mm_cmplt_epi16(a, b));
	show("cmpgt_epi32", _mm_cmpgt_epi32(a, b));
	show("cmpeq_epi32", _mm_cmpeq_epi32(a, a));
	show("packs_epi16", _mm_packs_epi16(a, b));
	show("packs_epi32", _mm_packs_epi32(a, b));
	show("packus_epi16", _mm_packus_epi16(a, b));
	show("unpacklo_epi8", _mm_unpacklo_epi8(a, b));
	show("unpackhi_epi8", _mm_unpackhi_epi8(a, b));
	show("unpacklo_epi16", _mm_unpacklo_epi16(a, b));
	show("unpackhi_epi32", _mm_unpackhi_epi32(a, b));
	show("unpacklo_epi64", _mm_unpacklo_epi64(a, b));
	show("unpackhi_epi64", _mm_unpackhi_epi64(a, b));
	show("shuffle_epi32", _mm_shuffle_epi32(a, _MM_SHUFFLE(0, 3, 1, 2)));
	show("shufflelo", _mm_shufflelo_epi16(a, _MM_SHUFFLE(3, 3, 0, 1)));
	show("shufflehi", _mm_shufflehi_epi16(a, _MM_SHUFFLE(0, 1, 2, 3)));
	show("slli_epi16", _mm_slli_epi16(a, 3));
	show("srli_epi16", _mm_srli_epi16(a, 3));
	show("srai_epi16", _mm_srai_epi16(a, 5));
	show("srai_epi32", _mm_srai_epi32(a, 31));
	show("slli_epi64", _mm_slli_epi64(a, 13));
	show("srli_epi64", _mm_srli_epi64(a, 63));
	show("sll_epi32", _mm_sll_epi32(a, _mm_cvtsi32_si128(seed_bytes[5])));
	show("srl_epi64", _mm_srl_epi64(a, _mm_cvtsi32_si128(seed_bytes[5] + 50)));
	show("sra_epi16_big", _mm_sra_epi16(a, _mm_cvtsi32_si128(seed_bytes[5] * 20)));
	show("slli_si128", _mm_slli_si128(a, 5));
	show("srli_si128", _mm_srli_si128(a, 11));
	show("and", _mm_and_si128(a, b));
	show("or", _mm_or_si128(a, b));
	show("xor", _mm_xor_si128(a, b));
	show("andnot", _mm_andnot_si128(a, b));
	printf("movemask_epi8 a=%04x b=%04x cmp=%04x\n", _mm_movemask_epi8(a), _mm_movemask_epi8(b),
	       _mm_movemask_epi8(_mm_cmpeq_epi8(a, _mm_setzero_si128())));
	printf("extract_epi16 %d %d cvtsi128_si32 %08x cvtsi128_si64 %016" PRIx64 "\n", _mm_extract_epi16(a, 1),
	       _mm_extract_epi16(b, 7), (unsigned)_mm_cvtsi128_si32(a), (uint64_t)_mm_cvtsi128_si64(b));
	show("insert_epi16", _mm_insert_epi16(a, 0xbeef, 5));
	show("set_epi32", _mm_set_epi32(1, -2, 3, -4));
	show("set1_epi8", _mm_set1_epi8((char)seed_bytes[7]));
	show("setr_epi16", _mm_setr_epi16(1, 2, 3, 4, -5, -6, -7, -8));

	double dd[4] = {1.5, -2.25, 3.0, 0.1};
	volatile double zero = 0.0;
	__m128d x = _mm_loadu_pd(dd), y = _mm_loadu_pd(dd + 2);
	__m128d n = _mm_set_pd(zero / zero, 4.0);
	showd("add_pd", _mm_add_pd(x, y));
	showd("sub_pd", _mm_sub_pd(x, y));
	showd("mul_pd", _mm_mul_pd(x, y));
	showd("div_pd", _mm_div_pd(x, y));
	showd("sqrt_pd", _mm_sqrt_pd(_mm_mul_pd(x, x)));
	showd("min_pd", _mm_min_pd(x, y));
	showd("max_pd", _mm_max_pd(x, n));
	showd("add_sd", _mm_add_sd(x, y));
	showd("sqrt_sd", _mm_sqrt_sd(x, y));
	showd("shuffle_pd", _mm_shuffle_pd(x, y, 1));
	showd("unpackhi_pd", _mm_unpackhi_pd(x, y));
	showd("and_pd", _mm_and_pd(x, y));
	showd("xor_pd(neg)", _mm_xor_pd(x, _mm_set1_pd(-0.0)));
	show("cmplt_pd", _mm_castpd_si128(_mm_cmplt_pd(x, y)));
	show("cmpunord_pd", _mm_castpd_si128(_mm_cmpunord_pd(x, n)));
	show("cmpneq_pd", _mm_castpd_si128(_mm_cmpneq_pd(n, n)));
	show("cmpge_pd", _mm_castpd_si128(_mm_cmpge_pd(x, n)));
	printf("movemask_pd %d %d comisd_lt %d ucomisd_eq %d comieq_nan %d\n", _mm_movemask_pd(x),
	       _mm_movemask_pd(_mm_cmplt_pd(x, y)), _mm_comilt_sd(x, y), _mm_ucomieq_sd(x, x),
	       _mm_comieq_sd(_mm_unpackhi_pd(n, n), x));
	__m128i ints = _mm_set_epi32(-7, 2147483647, -2147483647 - 1, 12345);
	showd("cvtepi32_pd", _mm_cvtepi32_pd(ints));
	__m128d halves = _mm_set_pd(-2.5, 3.5);
	show("cvtpd_epi32", _mm_cvtpd_epi32(halves));
	show("cvttpd_epi32", _mm_cvttpd_epi32(halves));
	show("cvtpd_big", _mm_cvtpd_epi32(_mm_set_pd(1e10, -1e10)));
	__m128 fl = _mm_cvtepi32_ps(ints);
	show("cvtepi32_ps", _mm_castps_si128(fl));
	show("cvtps_epi32", _mm_cvtps_epi32(_mm_set_ps(1.5f, 2.5f, -1.5f, 1e20f)));
	show("cvttps_epi32", _mm_cvttps_epi32(_mm_set_ps(1.9f, -2.9f, 0.5f, -0.5f)));
	showd("cvtps_pd", _mm_cvtps_pd(_mm_set_ps(0, 0, 0.1f, -3.25f)));
	show("cvtpd_ps", _mm_castps_si128(_mm_cvtpd_ps(x)));
	printf("cvtsd_si32 %d cvttsd_si32 %d cvtsd_si64 %" PRId64 " cvttsd_si64 %" PRId64 " cvtsd_si64(nan) %" PRId64 "\n",
	       _mm_cvtsd_si32(halves), _mm_cvttsd_si32(_mm_set_sd(-2.7)), (int64_t)_mm_cvtsd_si64(_mm_set_sd(2.5e15 + 0.5)),
	       (int64_t)_mm_cvttsd_si64(_mm_set_sd(-9.99e17)), (int64_t)_mm_cvtsd_si64(_mm_unpackhi_pd(n, n)));
	showd("cvtsi64_sd", _mm_cvtsi64_sd(x, -1234567890123ll));
}

static void randomized(void)
{
	for (int k = 0; k < 3000; k++) {
		__m128i a = _mm_set_epi64x((long long)rnd(), (long long)rnd());
		__m128i b = _mm_set_epi64x((long long)rnd(), (long long)rnd());
		mixv(_mm_adds_epi16(a, b));
		mixv(_mm_subs_epu8(a, b));
		mixv(_mm_madd_epi16(a, b));
		mixv(_mm_mul_epu32(a, b));
		mixv(_mm_sad_epu8(a, b));
		mixv(_mm_packs_epi32(a, b));
		mixv(_mm_packus_epi16(a, b));
		mixv(_mm_cmpgt_epi16(a, b));
		mixv(_mm_shuffle_epi32(a, 0x1b));
		mixv(_mm_sll_epi16(a, _mm_cvtsi32_si128(k % 20)));
		mixv(_mm_sra_epi32(b, _mm_cvtsi32_si128(k % 40)));
		mixv(_mm_srl_epi64(b, _mm_cvtsi32_si128(k % 70)));
		mixv(_mm_set1_epi32(_mm_movemask_epi8(_mm_xor_si128(a, b))));
		__m128d x = _mm_castsi128_pd(_mm_and_si128(a, _mm_set1_epi64x(0xbfffffffffffffffll)));
		__m128d y = _mm_castsi128_pd(_mm_and_si128(b, _mm_set1_epi64x(0x3fffffffffffffffll)));
		mixd(_mm_add_pd(x, y));
		mixd(_mm_mul_pd(x, y));
		mixd(_mm_div_pd(x, y));
		mixd(_mm_sqrt_pd(y));
		mixv(_mm_castpd_si128(_mm_cmple_pd(x, y)));
		mixv(_mm_cvttpd_epi32(x));
		mixv(_mm_cvtpd_epi32(y));
		mixd(_mm_cvtepi32_pd(a));
		mixv(_mm_castps_si128(_mm_cvtepi32_ps(b)));
	}
	printf("random hash %016" PRIx64 "\n", h);
}

int main(void)
{
	fixed();
	randomized();
	return 0;
}
