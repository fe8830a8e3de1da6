/* forkwrites: a parent and two children write the same globals over
 * many checkpoint intervals (summaries per process, issue 23). */
#include <unistd.h>
#include <sys/wait.h>
long shared = 0;     /* written by everyone, in their own copy */
long neighbour[8];   /* the same line, written all the time */
long child_only = 0; /* written by the first child only */
static void spin(long n, long tag) {
	for (long i = 0; i < n; i++) {
		neighbour[i & 7] += i;
		if (i % 1000 == 0)
			shared = tag + i;
	}
}
int main(void) {
	spin(20000, 100000);
	pid_t c = fork();
	if (c == 0) {
		spin(20000, 200000);
		child_only = 7;
		spin(5000, 300000);
		_exit(0);
	}
	spin(10000, 400000);
	waitpid(c, 0, 0);
	pid_t d = fork();
	if (d == 0) {
		spin(3000, 500000);
		_exit(0);
	}
	waitpid(d, 0, 0);
	spin(10000, 600000);
	return 0;
}
