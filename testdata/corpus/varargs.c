/* Variadic functions: ints, longs, doubles and long doubles beyond the
 * register save area, va_copy, vsnprintf wrappers, structs by value. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct pair {
	int a;
	double b;
};
struct big {
	long v[5];
};

/* Format: i=int l=long d=double L=long double s=string p=struct pair B=struct big */
static void describe(const char *fmt, ...)
{
	va_list ap, copy;
	va_start(ap, fmt);
	va_copy(copy, ap);
	double total = 0;
	for (const char *f = fmt; *f; f++) {
		switch (*f) {
		case 'i': total += va_arg(ap, int); break;
		case 'l': total += (double)va_arg(ap, long); break;
		case 'd': total += va_arg(ap, double); break;
		case 'L': total += (double)va_arg(ap, long double); break;
		case 's': total += (double)strlen(va_arg(ap, const char *)); break;
		case 'p': {
			struct pair p = va_arg(ap, struct pair);
			total += p.a + p.b;
			break;
		}
		case 'B': {
			struct big b = va_arg(ap, struct big);
			for (int i = 0; i < 5; i++)
				total += (double)b.v[i];
			break;
		}
		}
	}
	va_end(ap);
	printf("%s: total=%.6f items:", fmt, total);
	for (const char *f = fmt; *f; f++) {
		switch (*f) {
		case 'i': printf(" %d", va_arg(copy, int)); break;
		case 'l': printf(" %ld", va_arg(copy, long)); break;
		case 'd': printf(" %g", va_arg(copy, double)); break;
		case 'L': printf(" %Lg", va_arg(copy, long double)); break;
		case 's': printf(" \"%s\"", va_arg(copy, const char *)); break;
		case 'p': {
			struct pair p = va_arg(copy, struct pair);
			printf(" {%d,%g}", p.a, p.b);
			break;
		}
		case 'B': {
			struct big b = va_arg(copy, struct big);
			printf(" {%ld..%ld}", b.v[0], b.v[4]);
			break;
		}
		}
	}
	va_end(copy);
	printf("\n");
}

static long sum_ints(int n, ...)
{
	va_list ap;
	va_start(ap, n);
	long s = 0;
	for (int i = 0; i < n; i++)
		s = s * 3 + va_arg(ap, int);
	va_end(ap);
	return s;
}

static double sum_doubles(int n, ...)
{
	va_list ap;
	va_start(ap, n);
	double s = 0;
	for (int i = 0; i < n; i++)
		s = s * 0.5 + va_arg(ap, double);
	va_end(ap);
	return s;
}

static int vformat(char *buf, size_t n, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int len = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	int wrote = vsnprintf(buf, n, fmt, ap);
	return len == wrote ? len : -1;
}

static void logf_(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vformat(buf, sizeof buf, fmt, ap);
	va_end(ap);
	printf("log(%d): %s\n", n, buf);
}

static void pass_through(const char *fmt, va_list ap) { vprintf(fmt, ap); }
static void printer(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pass_through(fmt, ap);
	va_end(ap);
}

int main(void)
{
	printf("sum_ints(12)=%ld\n", sum_ints(12, 1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12));
	printf("sum_doubles(12)=%.17g\n",
	       sum_doubles(12, 0.5, 1.5, 2.25, -3.0, 1e10, -1e-10, 7.0, 8.0, 9.5, 10.25, 11.125, 12.0625));
	describe("idlsi", 1, 2.5, 3L, "four", 5);
	describe("ddddddddddi", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11);
	describe("iiiiiiiid", 1, 2, 3, 4, 5, 6, 7, 8, 9.5);
	describe("LdLiL", 1.5L, 2.0, 3.25L, 4, (long double)1 / 3);
	describe("pBpi", (struct pair){1, 0.5}, (struct big){{10, 20, 30, 40, 50}}, (struct pair){-3, 2.25}, 99);
	describe("sisdsl", "a", 1, "bb", 2.0, "ccc", (long)INT64_MAX);
	logf_("%d-%s-%.3f-%c-%lu-%Lf", 42, "str", 2.0 / 3, 'q', 123456789UL, 1.0L / 8);
	logf_("%10.4s|%-5d|%05.1f|%x|%o|%e", "truncated", 7, 3.14159, 0xabcU, 8U, 12345.678);
	printer("printer %s %d %g %s\n", "passes", 3, 4.5, "args");
	return 0;
}
