/* Dies from an uncaught SIGSEGV (status 139 in shell terms). Output written
 * before the crash is flushed first so that it is part of the comparison. */
#include <stdio.h>
#include <string.h>

static int *volatile null_ptr;

static int walk(int depth)
{
	if (depth == 0)
		return *null_ptr;
	return walk(depth - 1) + depth;
}

int main(void)
{
	printf("about to crash\n");
	fflush(stdout);
	printf("this line is still buffered and lost\n");
	return walk(5);
}
