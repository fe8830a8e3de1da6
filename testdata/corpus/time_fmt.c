/* Time formatting with fixed time_t values: gmtime_r, strftime, timegm,
 * mktime/localtime_r under TZ=UTC (set by the harness), asctime_r.
 * The clock is only checked for sanity, never printed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(void)
{
	static const long long stamps[] = {0, 1, 86399, 951782400, 1000000000, 1234567890, 1700000000, 2147483647,
		2147483648LL, 4102444800LL, -1, -86400 * 365LL, 1709251199};
	for (unsigned i = 0; i < sizeof stamps / sizeof stamps[0]; i++) {
		time_t t = (time_t)stamps[i];
		struct tm tm;
		if (!gmtime_r(&t, &tm)) {
			printf("gmtime_r failed for %lld\n", stamps[i]);
			continue;
		}
		char buf[256];
		strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S | %a %A %b %B | yday=%j wday=%w u=%u | U=%U W=%W V=%V G=%G | %C %y %e %D %T %R %p %I", &tm);
		time_t back = timegm(&tm);
		printf("%11lld %s | timegm ok=%d\n", stamps[i], buf, back == t);
	}
	struct tm tm = {.tm_year = 124, .tm_mon = 1, .tm_mday = 29, .tm_hour = 12, .tm_min = 30, .tm_sec = 15, .tm_isdst = -1};
	time_t t = mktime(&tm);
	printf("mktime(2024-02-29 12:30:15 UTC)=%lld wday=%d yday=%d\n", (long long)t, tm.tm_wday, tm.tm_yday);
	struct tm norm = {.tm_year = 123, .tm_mon = 11, .tm_mday = 31 + 1, .tm_hour = 25, .tm_min = 61, .tm_sec = 61};
	time_t n = timegm(&norm);
	char buf[128];
	strftime(buf, sizeof buf, "%F %T", &norm);
	printf("normalized: %s (%lld)\n", buf, (long long)n);
	struct tm lt;
	localtime_r(&t, &lt);
	strftime(buf, sizeof buf, "%F %T %Z %z", &lt);
	printf("localtime_r: %s\n", buf);
	char ab[64];
	printf("asctime_r: %s", asctime_r(&lt, ab));
	printf("difftime=%.1f\n", difftime((time_t)1000000000, (time_t)999999000));
	struct tm parsed;
	memset(&parsed, 0, sizeof parsed);
	char *rest = strptime("2021-07-04 09:08:07 trailing", "%Y-%m-%d %H:%M:%S", &parsed);
	printf("strptime: %04d-%02d-%02d %02d:%02d:%02d rest=[%s] epoch=%lld\n", parsed.tm_year + 1900,
	       parsed.tm_mon + 1, parsed.tm_mday, parsed.tm_hour, parsed.tm_min, parsed.tm_sec, rest ? rest : "(null)",
	       (long long)timegm(&parsed));
	/* Clocks: sane and monotonic, values not printed. */
	struct timespec a, b, r;
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_MONOTONIC, &b);
	int mono = b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec);
	clock_gettime(CLOCK_REALTIME, &r);
	time_t now = time(NULL);
	printf("monotonic ok=%d realtime after 2020=%d time() close to realtime=%d\n", mono, r.tv_sec > 1577836800,
	       now - r.tv_sec <= 2 && now - r.tv_sec >= -2);
	struct timespec res;
	printf("clock_getres ok=%d\n", clock_getres(CLOCK_MONOTONIC, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0);
	return 0;
}
