/* String and memory routines on many lengths and alignments, including
 * strings that end right before an inaccessible page. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t h = 0xcbf29ce484222325ull;
static void mix(uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ull;
}
static void mixbuf(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mix(p[i]);
}
static int sgn(int v) { return (v > 0) - (v < 0); }
static int64_t off(const void *p, const void *base) { return p ? (const char *)p - (const char *)base : -1; }

static unsigned char src[1024], dst[1024], ref[1024];

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed * 7 + (i >> 3)) % 251 + 1);
}

static void mem_tests(void)
{
	static const size_t lens[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 300, 511, 600};
	for (unsigned li = 0; li < sizeof lens / sizeof lens[0]; li++) {
		size_t n = lens[li];
		for (unsigned sa = 0; sa < 16; sa += 3) {
			for (unsigned da = 0; da < 16; da += 5) {
				fill(src, sizeof src, (unsigned)(n + sa));
				memset(dst, 0xee, sizeof dst);
				memcpy(dst + da, src + sa, n);
				mix((uint64_t)memcmp(dst + da, src + sa, n));
				mixbuf(dst, n + 40);
				/* memset */
				memset(dst + da, (int)(n & 0xff), n);
				mixbuf(dst, n + 40);
				/* memmove overlapping forward and backward */
				fill(dst, sizeof dst, (unsigned)n);
				memcpy(ref, dst, sizeof ref);
				memmove(dst + da + 3, dst + da, n);
				memmove(ref + sa, ref + sa + 5, n);
				mixbuf(dst, n + 40);
				mixbuf(ref, n + 40);
				/* memcmp sign and memchr */
				fill(src, sizeof src, 1);
				memcpy(dst + da, src + sa, n);
				if (n) {
					dst[da + n - 1] ^= 0x40;
					mix((uint64_t)sgn(memcmp(dst + da, src + sa, n)) + 7);
					mix((uint64_t)off(memchr(dst + da, dst[da + n / 2], n), dst + da));
				}
				mix((uint64_t)off(memchr(src + sa, 0, n), src + sa));
				mix((uint64_t)off(memrchr(src + sa, src[sa], n), src + sa));
			}
		}
	}
	printf("mem hash %016" PRIx64 "\n", h);
}

static void str_tests(void)
{
	char a[700], b[700];
	for (int n = 0; n < 300; n += (n < 70 ? 1 : 13)) {
		for (int al = 0; al < 16; al += 7) {
			char *s = a + al, *t = b + (al * 3) % 16;
			for (int i = 0; i < n; i++)
				s[i] = (char)('a' + (i * 7 + n) % 26);
			s[n] = 0;
			strcpy(t, s);
			mix(strlen(s));
			mix((uint64_t)strcmp(s, t));
			mix((uint64_t)off(strchr(s, 'q'), s));
			mix((uint64_t)off(strrchr(s, 'q'), s));
			mix((uint64_t)off(strchr(s, 0), s));
			mix((uint64_t)off(strchrnul(s, 'z'), s));
			mix((uint64_t)off(strstr(s, "hov"), s));
			mix((uint64_t)off(strstr(s, s + n / 2), s));
			mix(strspn(s, "abcdefghijklm"));
			mix(strcspn(s, "xyz"));
			mix((uint64_t)off(strpbrk(s, "uvw"), s));
			if (n) {
				t[n - 1] = 'A';
				mix((uint64_t)sgn(strcmp(s, t)) + 5);
				mix((uint64_t)sgn(strncmp(s, t, (size_t)n - 1)) + 9);
				mix((uint64_t)sgn(strcasecmp(s, t)) + 11);
			}
			memset(b, 'X', sizeof b);
			strncpy(b, s, (size_t)n + 10);
			mixbuf((unsigned char *)b, (size_t)n + 20);
			strncpy(b, s, (size_t)(n / 2));
			mixbuf((unsigned char *)b, (size_t)n + 20);
			mix(strnlen(s, (size_t)n / 3));
			strcpy(b, "prefix:");
			strcat(b, s);
			strncat(b, s, 5);
			mix(strlen(b));
		}
	}
	printf("str hash %016" PRIx64 "\n", h);
}

static void guard_page_tests(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	if (mprotect(m + pg, (size_t)pg, PROT_NONE) != 0) {
		perror("mprotect");
		exit(1);
	}
	unsigned char *end = m + pg;
	uint64_t gh = 0;
	for (int n = 1; n <= 100; n++) {
		char *s = (char *)end - n;
		for (int i = 0; i < n - 1; i++)
			s[i] = (char)('A' + i % 23);
		s[n - 1] = 0;
		char *t = (char *)m + (n % 32);
		memcpy(t, s, (size_t)n);
		gh = gh * 31 + strlen(s);
		gh = gh * 31 + (uint64_t)off(strchr(s, 'C'), s);
		gh = gh * 31 + (uint64_t)off(strrchr(s, 'A'), s);
		gh = gh * 31 + (uint64_t)(strcmp(s, t) == 0);
		gh = gh * 31 + (uint64_t)off(memchr(s, 'Q', (size_t)n), s);
		gh = gh * 31 + (uint64_t)(memcmp(end - n, t, (size_t)n) == 0);
		gh = gh * 31 + (uint64_t)off(memchr(s, 0, (size_t)n), s);
		gh = gh * 31 + (uint64_t)strnlen(s, 1000);
	}
	printf("guard page hash %016" PRIx64 "\n", gh);
	munmap(m, (size_t)pg * 2);
}

static void tok_and_format(void)
{
	char line[] = "  alpha,beta;;gamma , delta,,epsilon;zeta  ";
	int k = 0;
	for (char *tok = strtok(line, ",; "); tok; tok = strtok(NULL, ",; "))
		printf("tok[%d]=%s\n", k++, tok);
	char line2[] = "a=1&b=2&c=3";
	char *save;
	for (char *tok = strtok_r(line2, "&", &save); tok; tok = strtok_r(NULL, "&", &save))
		printf("pair %s\n", tok);
	char buf[64];
	for (size_t cap = 0; cap < 24; cap += 5) {
		memset(buf, '#', sizeof buf);
		int r = snprintf(buf, cap, "%s-%05d-%x-%c-%8.3f|", "snprintf", 42, 0xbeef, 'Z', 3.14159);
		printf("snprintf cap=%zu ret=%d buf=[%.*s]\n", cap, r, (int)(cap ? cap - 1 : 0), cap ? buf : "");
	}
	int n = sprintf(buf, "%-6s|%6s|%+d|% d|%#o|%#x|%lld|%hhd|%zu|%%", "ab", "cd", 5, 7, 8, 255, -9000000000LL,
			(signed char)200, sizeof(int));
	printf("sprintf n=%d [%s]\n", n, buf);
	char big[5000];
	n = snprintf(big, sizeof big, "%4000d|%s", 1, "end");
	printf("wide n=%d tail=%s\n", n, big + 4000);
	printf("strerror(ENOENT)=%s\n", strerror(2));
	char *d = strdup("duplicate me");
	char *nd = strndup(d, 4);
	printf("strdup=%s strndup=%s\n", d, nd);
	free(d);
	free(nd);
	long v = strtol("  -0x1fZ", &d, 16);
	unsigned long long uv = strtoull("18446744073709551615", NULL, 10);
	printf("strtol=%ld rest=%s strtoull=%llu atoi=%d\n", v, d, uv, atoi("  123abc"));
}

int main(void)
{
	mem_tests();
	str_tests();
	guard_page_tests();
	tok_and_format();
	return 0;
}
