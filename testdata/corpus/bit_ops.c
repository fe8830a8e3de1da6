/* Bit operations: clz/ctz/popcount/parity/bswap/ffs, rotates, bit tricks. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <strings.h>

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static uint64_t h = 0xcbf29ce484222325ull;
static void mix(uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ull;
}

static uint32_t rotl32(uint32_t x, unsigned n) { return (x << (n & 31)) | (x >> ((32 - n) & 31)); }
static uint32_t rotr32(uint32_t x, unsigned n) { return (x >> (n & 31)) | (x << ((32 - n) & 31)); }
static uint64_t rotl64(uint64_t x, unsigned n) { return (x << (n & 63)) | (x >> ((64 - n) & 63)); }
static uint64_t rotr64(uint64_t x, unsigned n) { return (x >> (n & 63)) | (x << ((64 - n) & 63)); }
static uint16_t rotl16(uint16_t x, unsigned n) { return (uint16_t)((x << (n & 15)) | (x >> ((16 - n) & 15))); }
static uint8_t rotl8(uint8_t x, unsigned n) { return (uint8_t)((x << (n & 7)) | (x >> ((8 - n) & 7))); }

static volatile uint64_t samples[] = {1, 2, 3, 0x80, 0xff, 0x100, 0x8000, 0xffff,
	0x80000000u, 0xffffffffu, 0x100000000ull, 0x8000000000000000ull,
	0xffffffffffffffffull, 0x0123456789abcdefull, 0xf0f0f0f00f0f0f0full, 0x5555555555555555ull};

int main(void)
{
	for (unsigned i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		uint64_t v = samples[i];
		uint32_t w = (uint32_t)v;
		printf("%016" PRIx64 ": clzll=%2d ctzll=%2d pop=%2d par=%d ffsll=%2d clrsbll=%2d", v,
		       __builtin_clzll(v), __builtin_ctzll(v), __builtin_popcountll(v),
		       __builtin_parityll(v), __builtin_ffsll((long long)v), __builtin_clrsbll((long long)v));
		if (w)
			printf(" clz=%2d ctz=%2d", __builtin_clz(w), __builtin_ctz(w));
		else
			printf(" clz=-- ctz=--");
		printf(" pop32=%2d ffs=%2d bswap64=%016" PRIx64 " bswap32=%08x bswap16=%04x\n",
		       __builtin_popcount(w), ffs((int)w), __builtin_bswap64(v), __builtin_bswap32(w),
		       __builtin_bswap16((uint16_t)v));
	}
	volatile unsigned counts[] = {0, 1, 4, 7, 8, 13, 16, 31, 32, 33, 63};
	uint64_t x = 0x0123456789abcdefull;
	for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; i++) {
		unsigned n = counts[i];
		printf("rot %2u: l64=%016" PRIx64 " r64=%016" PRIx64 " l32=%08x r32=%08x l16=%04x l8=%02x\n", n,
		       rotl64(x, n), rotr64(x, n), rotl32((uint32_t)x, n), rotr32((uint32_t)x, n),
		       rotl16((uint16_t)x, n), rotl8((uint8_t)x, n));
	}
	for (int k = 0; k < 50000; k++) {
		uint64_t v = rnd() >> (k % 64);
		uint32_t w = (uint32_t)(v >> (k % 32));
		if (v) {
			mix((uint64_t)__builtin_clzll(v));
			mix((uint64_t)__builtin_ctzll(v));
		}
		if (w) {
			mix((uint64_t)__builtin_clz(w));
			mix((uint64_t)__builtin_ctz(w));
		}
		mix((uint64_t)__builtin_popcountll(v) << 8 | (uint64_t)__builtin_popcount(w));
		mix((uint64_t)__builtin_parityll(v));
		mix(__builtin_bswap64(v) ^ __builtin_bswap32(w));
		mix(rotl64(v, (unsigned)k) ^ rotr32(w, (unsigned)k * 7));
		/* Classic bit tricks. */
		mix(v & (0 - v));           /* lowest set bit */
		mix(v & (v - 1));           /* clear lowest */
		mix(v ^ (v >> 1));          /* gray code */
		mix((v | (v - 1)) + 1);     /* next power-of-two boundary */
		mix(((v * 0x0101010101010101ull) >> 56) & 0xff);
		/* Bit-field style extraction and insertion. */
		unsigned s = (unsigned)k % 60;
		mix((v >> s) & 0xf);
		mix((v & ~(0xfull << s)) | ((uint64_t)(k & 0xf) << s));
		mix((uint64_t)(int64_t)(int8_t)v);
		mix((uint64_t)((int64_t)v >> s));
		/* bt/bts/btr/btc patterns */
		mix((v >> (k & 63)) & 1);
		mix(v | (1ull << (k & 63)));
		mix(v & ~(1ull << (k & 63)));
		mix(v ^ (1ull << (k & 63)));
	}
	printf("hash %016" PRIx64 "\n", h);
	return 0;
}
