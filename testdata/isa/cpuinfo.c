/* What a program learns about its CPU: CPUID (through GCC's
   __builtin_cpu_supports), /proc/cpuinfo's flags and AT_HWCAP/AT_HWCAP2.
   Under ttd they must describe the same CPU: the level --cpu chose. */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

static int has_flag(const char *flags, const char *f) {
	size_t n = strlen(f);
	for (const char *p = flags; (p = strstr(p, f)); p += n)
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == 0))
			return 1;
	return 0;
}

int main(void) {
	static char line[8192], flags[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "flags", 5)) {
			strcpy(flags, line);
			break;
		}
	__builtin_cpu_init();
	struct { const char *cpuid, *cpuinfo; } feats[] = {
		{"sse3", "pni"}, {"ssse3", "ssse3"}, {"sse4.1", "sse4_1"}, {"sse4.2", "sse4_2"}, {"popcnt", "popcnt"},
		{"avx", "avx"}, {"avx2", "avx2"}, {"fma", "fma"}, {"bmi", "bmi1"}, {"bmi2", "bmi2"}, {"movbe", "movbe"},
	};
	int bad = 0;
	for (unsigned i = 0; i < sizeof feats / sizeof feats[0]; i++) {
		int a = 0;
		/* __builtin_cpu_supports needs a literal. */
#define CHECK(s) if (!strcmp(feats[i].cpuid, s)) a = __builtin_cpu_supports(s) != 0;
		CHECK("sse3") CHECK("ssse3") CHECK("sse4.1") CHECK("sse4.2") CHECK("popcnt") CHECK("avx") CHECK("avx2")
		CHECK("fma") CHECK("bmi") CHECK("bmi2") CHECK("movbe")
		int b = has_flag(flags, feats[i].cpuinfo);
		printf("%s cpuid=%d cpuinfo=%d\n", feats[i].cpuid, a, b);
		bad |= a != b;
	}
	printf("hwcap %#lx\n", getauxval(AT_HWCAP));
	return bad;
}
