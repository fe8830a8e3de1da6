/* Floating point: float/double arithmetic, libm, printf %a/%.17g, strtod
 * round trips, rounding modes and exception flags. Transcendental results are
 * printed with 15 significant digits (libm may pick different code paths
 * depending on CPU features); exactly rounded operations are printed exactly. */
#include <fenv.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x2545F4914F6CDD1Dull;
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
static uint64_t bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}
static uint32_t fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}
static double rnd_double(void)
{
	/* Random finite double with a moderate exponent. */
	uint64_t u = rnd();
	u = (u & 0x800fffffffffffffull) | ((uint64_t)(1023 - 40 + (int)(rnd() % 80)) << 52);
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static volatile double dv[] = {0.0, -0.0, 1.0, -1.5, 0.1, 1.0 / 3.0, 2.5, 3.5, -2.5,
	1e300, 1e-300, 4.9406564584124654e-324, 2.2250738585072014e-308, DBL_MAX,
	123456789.123456789, -987654.321, 0.5, 1e16, 9007199254740993.0};
#define NDV (sizeof dv / sizeof dv[0])

static void basic(void)
{
	for (unsigned i = 0; i < NDV; i++) {
		double a = dv[i], b = dv[(i * 7 + 3) % NDV];
		printf("a=%a b=%a sum=%a diff=%a prod=%a", a, b, a + b, a - b, a * b);
		if (b != 0)
			printf(" quot=%a", a / b);
		printf(" sqrt|a|=%a\n", sqrt(fabs(a)));
	}
	for (int k = 0; k < 20000; k++) {
		double a = rnd_double(), b = rnd_double();
		mix(bits(a + b));
		mix(bits(a - b));
		mix(bits(a * b));
		mix(bits(a / b));
		mix(bits(sqrt(fabs(a))));
		mix(bits(fmod(a, b)));
		mix(bits(floor(a)) ^ bits(ceil(b)) ^ bits(trunc(a * 3)) ^ bits(round(b * 7)));
		mix(bits(fma(a, b, a)));
		float fa = (float)a, fb = (float)b;
		mix(fbits(fa + fb) ^ ((uint64_t)fbits(fa * fb) << 32));
		mix(fbits(fa / fb) ^ ((uint64_t)fbits(sqrtf(fabsf(fa))) << 32));
		mix(bits((double)fa));
		mix((uint64_t)(int64_t)(a * 1e6));
		mix((uint64_t)(int32_t)(fb * 1000.0f));
		mix(bits((double)(int64_t)rnd()) ^ bits((double)rnd()));
		mix(fbits((float)(int32_t)rnd()) ^ fbits((float)rnd()));
		mix((uint64_t)(a < b) | (uint64_t)(a == b) << 1 | (uint64_t)(fa <= fb) << 2);
	}
	printf("arith hash %016" PRIx64 "\n", h);
}

static void specials(void)
{
	volatile double z = 0.0, one = 1.0;
	double inf = one / z, nan_ = z / z;
	printf("inf=%f -inf=%f nan=%f isnan=%d isinf=%d signbit(-0)=%d\n", inf, -inf,
	       fabs(nan_), isnan(nan_), isinf(-inf), signbit(-z));
	printf("nan==nan %d nan<1 %d inf>max %d fmax(nan,1)=%g copysign=%g\n", nan_ == nan_,
	       nan_ < one, inf > DBL_MAX, fmax(nan_, one), copysign(3.0, -z));
	printf("denorm %a %a %.17g\n", DBL_MIN / 4, nextafter(0.0, 1.0), DBL_TRUE_MIN * 3);
	printf("float eps=%a min=%a max=%a; double eps=%a\n", FLT_EPSILON, FLT_MIN, FLT_MAX,
	       DBL_EPSILON);
	printf("(int)2.9=%d (int)-2.9=%d (long)1e18=%ld lrint(2.5)=%ld lrint(3.5)=%ld llround(-2.5)=%lld\n",
	       (int)(2.9 * one), (int)(-2.9 * one), (long)(1e18 * one), lrint(2.5 * one),
	       lrint(3.5 * one), llround(-2.5 * one));
	printf("rint(-0.5)=%g nearbyint(1.5)=%g frexp/ldexp: ", rint(-0.5 * one),
	       nearbyint(1.5 * one));
	int e;
	double m = frexp(1234.5 * one, &e);
	printf("%a*2^%d -> %g; modf: ", m, e, ldexp(m, e));
	double ip, fp = modf(-3.75 * one, &ip);
	printf("%g %g\n", ip, fp);
	/* uint64 <-> double conversions (no direct x86 instruction). */
	volatile uint64_t big = 0xfedcba9876543210ull;
	volatile double bigd = 1.7e19;
	printf("u64->d %a d->u64 %" PRIu64 " u64->f %a\n", (double)big, (uint64_t)bigd,
	       (double)(float)big);
}

static void libm(void)
{
	static const double xs[] = {0.5, 1.0, 2.0, 3.14159, -0.75, 10.0, 100.5, 1e-5};
	for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		volatile double x = xs[i];
		printf("x=%-8g sin=%.15g cos=%.15g tan=%.15g exp=%.15g log|x|=%.15g\n", x, sin(x), cos(x),
		       tan(x), exp(x), log(fabs(x)));
		printf("          pow(x,1.7)=%.15g atan2=%.15g cbrt=%.15g hypot=%.15g log10=%.15g sinf=%.6g\n",
		       pow(fabs(x), 1.7), atan2(x, 1.3), cbrt(x), hypot(x, 2.0), log10(fabs(x)),
		       (double)sinf((float)x));
		printf("          sqrt=%a fmod(x,0.3)=%a floor=%a ceil=%a\n", sqrt(fabs(x)),
		       fmod(x, 0.3), floor(x), ceil(x));
	}
	printf("pow(2,0.5)=%.15g pow(-8,1/3.)=%g pow(0,0)=%g exp(710)=%g log(0)=%g\n",
	       pow(2, 0.5), pow(-8, 1 / 3.), pow(0, 0), exp(710 + dv[0]), log(dv[0]));
}

static void formatting(void)
{
	static const double ds[] = {0.1, 1.0 / 3, 2.0 / 3, 1e23, 5e-324, 1.7976931348623157e308,
		123.456, -0.0, 1e-7, 100, 0.000123456789, 6.02214076e23};
	for (unsigned i = 0; i < sizeof ds / sizeof ds[0]; i++) {
		double d = ds[i];
		printf("%%a=%a %%.17g=%.17g %%e=%e %%g=%g %%.3f=%.3f %%10.4e=[%10.4e] %%-12g=[%-12g]\n", d, d, d, d,
		       d, d, d);
	}
	printf("%.0f %.0f %.0f %.0f %.1f %.2f %.20f\n", 0.5, 1.5, 2.5, -0.5, 0.05, 0.125, 0.1);
	printf("%f %.30e\n", 1e22, 1.0 / 7);
	printf("float %a %.9g %g\n", (double)0.1f, (double)(1.0f / 3.0f), (double)FLT_MAX);
	/* strtod round trips on random bit patterns. */
	int bad = 0;
	char buf[64];
	for (int k = 0; k < 5000; k++) {
		uint64_t u = rnd();
		double d;
		memcpy(&d, &u, sizeof d);
		if (isnan(d))
			continue;
		snprintf(buf, sizeof buf, "%.17g", d);
		double back = strtod(buf, NULL);
		if (bits(back) != u)
			bad++;
		mix(bits(back));
		snprintf(buf, sizeof buf, "%a", d);
		if (bits(strtod(buf, NULL)) != u)
			bad++;
		float f = (float)(d / 1e10);
		snprintf(buf, sizeof buf, "%.9g", (double)f);
		if (fbits(strtof(buf, NULL)) != fbits(f) && !isnan(f))
			bad++;
	}
	printf("strtod round trip failures: %d hash %016" PRIx64 "\n", bad, h);
	static const char *strs[] = {"0x1p-1074", "1e-320", "2.2250738585072011e-308", "inf", "-Infinity",
		"nan", "  +12.5e3xyz", "0x1.fffffffffffffp1023", "1e400", "-1e-400", "4.9e-324",
		"9007199254740993", "0.1e1", ".5", "1_0"};
	for (unsigned i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		char *end;
		double d = strtod(strs[i], &end);
		printf("strtod(\"%s\") = %a (%.17g) consumed %d\n", strs[i], isnan(d) ? fabs(d) : d,
		       isnan(d) ? fabs(d) : d, (int)(end - strs[i]));
	}
}

static void env(void)
{
	volatile double a = 1.0, b = 3.0;
	static const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
	static const char *names[] = {"nearest", "upward", "downward", "towardzero"};
	for (int i = 0; i < 4; i++) {
		fesetround(modes[i]);
		double q = a / b, nq = -a / b;
		float fq = (float)a / (float)b;
		volatile double r = 2.5;
		printf("%-10s 1/3=%a -1/3=%a f=%a rint(2.5)=%g lrint(-2.5)=%ld getround_ok=%d\n",
		       names[i], q, nq, (double)fq, rint(r), lrint(-r), fegetround() == modes[i]);
	}
	fesetround(FE_TONEAREST);
	volatile double z = 0.0, big = 1e308, tiny = 1e-308;
	volatile double sink;
	feclearexcept(FE_ALL_EXCEPT);
	sink = a / z;
	printf("divbyzero=%d ", !!fetestexcept(FE_DIVBYZERO));
	feclearexcept(FE_ALL_EXCEPT);
	sink = z / z;
	printf("invalid=%d ", !!fetestexcept(FE_INVALID));
	feclearexcept(FE_ALL_EXCEPT);
	sink = big * 10;
	printf("overflow=%d ", !!fetestexcept(FE_OVERFLOW));
	feclearexcept(FE_ALL_EXCEPT);
	sink = tiny / 1e10;
	printf("underflow=%d ", !!fetestexcept(FE_UNDERFLOW));
	feclearexcept(FE_ALL_EXCEPT);
	sink = a / b;
	printf("inexact=%d ", !!fetestexcept(FE_INEXACT));
	feclearexcept(FE_ALL_EXCEPT);
	sink = a + a;
	printf("exact-none=%d\n", fetestexcept(FE_ALL_EXCEPT) == 0);
	(void)sink;
}

int main(void)
{
	basic();
	specials();
	libm();
	formatting();
	env();
	return 0;
}
