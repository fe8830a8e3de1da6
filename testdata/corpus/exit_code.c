/* Echoes its arguments, runs atexit handlers in reverse order and exits
 * with status 42 through exit() (which flushes stdio). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void first(void) { printf("atexit: first registered, runs last\n"); }
static void second(void) { printf("atexit: second registered\n"); }
static void third(void) { printf("atexit: third registered, runs first\n"); }

int main(int argc, char **argv)
{
	printf("argc=%d\n", argc);
	for (int i = 1; i < argc; i++)
		printf("argv[%d]=[%s] len=%zu\n", i, argv[i], strlen(argv[i]));
	atexit(first);
	atexit(second);
	atexit(third);
	printf("buffered output before exit\n");
	exit(argc > 1 ? 42 : 3);
}
