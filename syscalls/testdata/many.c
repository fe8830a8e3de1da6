/* Makes 2*N syscalls (N from argv[1]) for the export benchmark. */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	char buf[16] = "syscall number ";
	for (long i = 0; i < n; i++) {
		buf[14] = (char)('0' + i % 10);
		write(-1, buf, sizeof buf);
		getppid();
	}
	return 0;
}
