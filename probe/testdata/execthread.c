// execthread: a thread other than the leader execs the program again
// (Linux gives it the leader's tid; the other threads end); the new
// image writes one line and exits.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *execer(void *arg) {
	char *self = arg;
	execl(self, self, "again", (char *)0);
	return 0;
}
int main(int argc, char **argv) {
	if (argc > 1) {
		printf("execed %s\n", argv[1]);
		return 0;
	}
	pthread_t t;
	pthread_create(&t, 0, execer, argv[0]);
	for (;;) pause();
}
