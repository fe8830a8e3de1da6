/* SHA-256 (FIPS 180-4) over standard test vectors and generated data fed in
 * chunks of varying sizes; also a CRC-32 and an Adler-32 of the same data. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	uint32_t h[8];
	uint8_t buf[64];
	size_t used;
	uint64_t len;
} sha256_ctx;

static const uint32_t K[64] = {0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138,
	0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70,
	0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa,
	0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void block(sha256_ctx *c, const uint8_t *p)
{
	uint32_t w[64];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = cc;
		cc = b;
		b = a;
		a = t1 + t2;
	}
	c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d;
	c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void init(sha256_ctx *c)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
		0x5be0cd19};
	memcpy(c->h, iv, sizeof iv);
	c->used = 0;
	c->len = 0;
}

static void update(sha256_ctx *c, const uint8_t *p, size_t n)
{
	c->len += n;
	while (n) {
		if (c->used == 0 && n >= 64) {
			block(c, p);
			p += 64;
			n -= 64;
			continue;
		}
		size_t take = 64 - c->used < n ? 64 - c->used : n;
		memcpy(c->buf + c->used, p, take);
		c->used += take;
		p += take;
		n -= take;
		if (c->used == 64) {
			block(c, c->buf);
			c->used = 0;
		}
	}
}

static void final(sha256_ctx *c, char hex[65])
{
	uint64_t bits = c->len * 8;
	uint8_t pad = 0x80;
	update(c, &pad, 1);
	uint8_t zero = 0;
	while (c->used != 56)
		update(c, &zero, 1);
	uint8_t lenb[8];
	for (int i = 0; i < 8; i++)
		lenb[i] = (uint8_t)(bits >> (56 - 8 * i));
	update(c, lenb, 8);
	for (int i = 0; i < 8; i++)
		sprintf(hex + 8 * i, "%08x", c->h[i]);
}

static void digest(const char *label, const void *p, size_t n)
{
	sha256_ctx c;
	char hex[65];
	init(&c);
	update(&c, p, n);
	final(&c, hex);
	printf("sha256(%s) = %s\n", label, hex);
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++)
		c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t adler32(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;
	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

static uint8_t data[200000];

int main(void)
{
	digest("\"\"", "", 0);
	digest("\"abc\"", "abc", 3);
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	digest("448-bit", two, strlen(two));
	static char million[1000000];
	memset(million, 'a', sizeof million);
	digest("a x 1e6", million, sizeof million);
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < sizeof data; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = (uint8_t)(x >> 11);
	}
	digest("generated", data, sizeof data);
	sha256_ctx c;
	char hex[65];
	init(&c);
	size_t off = 0, step = 1;
	while (off < sizeof data) {
		size_t n = step < sizeof data - off ? step : sizeof data - off;
		update(&c, data + off, n);
		off += n;
		step = step * 3 % 1031 + 1;
	}
	final(&c, hex);
	printf("sha256(generated, chunked) = %s\n", hex);
	printf("crc32(generated) = %08x crc32(\"123456789\") = %08x\n", crc32(data, sizeof data),
	       crc32((const uint8_t *)"123456789", 9));
	printf("adler32(generated) = %08x\n", adler32(data, sizeof data));
	return 0;
}
