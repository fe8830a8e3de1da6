/* Calls abort() after registering an atexit handler that must not run, with
 * a SIGABRT handler that returns (abort still terminates the process). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void at_exit(void) { printf("atexit handler ran (unexpected)\n"); }

static void on_abrt(int sig)
{
	static const char msg[] = "SIGABRT handler ran\n";
	(void)sig;
	write(1, msg, sizeof msg - 1);
}

int main(void)
{
	atexit(at_exit);
	signal(SIGABRT, on_abrt);
	printf("calling abort\n");
	fflush(stdout);
	abort();
}
