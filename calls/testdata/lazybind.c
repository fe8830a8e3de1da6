// lazybind: its first call of each of many libc functions goes through
// lazy binding (built with -Wl,-z,lazy): the PLT stub jumps to
// _dl_runtime_resolve, which calls _dl_fixup to bind the entry and then
// jumps to the function. Recorded with checkpoints a few thousand
// instructions apart, some fall inside _dl_fixup, so that an interval
// starts with the trampoline's frame open (TestLazyBindingAcrossCheckpoints).
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int sink;

static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(void) {
	char buf[64], dst[64];
	int v[8] = {5, 3, 7, 1, 8, 2, 6, 4};
	snprintf(buf, sizeof buf, "%d lazy %s", 42, "binding");
	sink += (int)strlen(buf);
	sink += strchr(buf, 'z') != NULL;
	sink += strrchr(buf, 'n') != NULL;
	sink += strcmp(buf, "42") != 0;
	sink += strncmp(buf, "42", 2) == 0;
	memcpy(dst, buf, sizeof buf);
	memmove(dst + 1, dst, 8);
	memset(dst, 'x', 4);
	sink += memcmp(dst, buf, 8) != 0;
	sink += (int)strspn(buf, "0123456789");
	sink += (int)strcspn(buf, " ");
	sink += strstr(buf, "bind") != NULL;
	sink += atoi("17") + (int)strtol("23", NULL, 10) + (int)strtoul("5", NULL, 10);
	sink += abs(-3) + (int)labs(-4);
	sink += toupper('a') + tolower('B') + isalpha('c') + isdigit('1');
	qsort(v, 8, sizeof v[0], cmp);
	sink += v[0];
	int *key = bsearch(&v[3], v, 8, sizeof v[0], cmp);
	sink += key != NULL;
	char *d = strdup(buf);
	sink += (int)strnlen(d, 8);
	free(d);
	void *p = calloc(4, 16);
	p = realloc(p, 128);
	free(p);
	sink += (int)time(NULL) > 0;
	srand(1);
	sink += rand() > 0;
	sink += strcasecmp("ABC", "abc") == 0;
	strncpy(dst, buf, 8);
	strcat(dst, "!");
	sink += (int)strlen(dst);
	printf("%d\n", sink > 0);
	puts("done");
	return 0;
}
