/* Environment: getenv of a variable the harness sets, setenv/unsetenv/
 * putenv, and the complete (sorted) environment the program started with. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void dump(const char *title)
{
	int n = 0;
	while (environ[n])
		n++;
	char **copy = malloc(sizeof(char *) * (size_t)(n + 1));
	memcpy(copy, environ, sizeof(char *) * (size_t)n);
	qsort(copy, (size_t)n, sizeof(char *), cmp);
	printf("%s (%d):\n", title, n);
	for (int i = 0; i < n; i++)
		printf("  %s\n", copy[i]);
	free(copy);
}

int main(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	printf("envp == environ: %d\n", envp == environ);
	dump("initial environment");
	const char *v = getenv("TTD_CORPUS_VAR");
	printf("TTD_CORPUS_VAR=%s\n", v ? v : "(unset)");
	printf("MISSING=%s\n", getenv("TTD_CORPUS_MISSING") ? "set?" : "(unset)");
	setenv("TTD_NEW", "first", 0);
	setenv("TTD_NEW", "second", 0);
	printf("setenv no-overwrite: %s\n", getenv("TTD_NEW"));
	setenv("TTD_NEW", "third", 1);
	printf("setenv overwrite: %s\n", getenv("TTD_NEW"));
	setenv("TTD_CORPUS_VAR", "changed", 1);
	static char put[] = "TTD_PUT=via putenv";
	putenv(put);
	printf("putenv: %s\n", getenv("TTD_PUT"));
	put[8] = 'V';
	printf("putenv shares storage: %s\n", getenv("TTD_PUT"));
	unsetenv("TTD_NEW");
	printf("after unsetenv: %s\n", getenv("TTD_NEW") ? "still set" : "(unset)");
	for (int i = 0; i < 200; i++) {
		char name[32], val[32];
		snprintf(name, sizeof name, "TTD_BULK_%03d", i);
		snprintf(val, sizeof val, "%d", i * i);
		setenv(name, val, 1);
	}
	for (int i = 0; i < 200; i += 2) {
		char name[32];
		snprintf(name, sizeof name, "TTD_BULK_%03d", i);
		unsetenv(name);
	}
	printf("TTD_BULK_101=%s TTD_BULK_100=%s\n", getenv("TTD_BULK_101"), getenv("TTD_BULK_100") ? "set?" : "(unset)");
	for (int i = 1; i < 200; i += 2) {
		char name[32];
		snprintf(name, sizeof name, "TTD_BULK_%03d", i);
		unsetenv(name);
	}
	dump("final environment");
	clearenv();
	printf("after clearenv: %s\n", environ == NULL || environ[0] == NULL ? "empty" : "not empty");
	return 0;
}
