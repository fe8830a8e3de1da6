// A process tree for the debugger tests: the parent forks a child, the
// child starts a thread, and each writes its own value into the same
// global (copy-on-write after the fork), so reading it in one process's
// thread must give that process's value.
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

long who = 1;

void mark(long v) {
	who = v; // MARK mark-body
}

void *child_thread(void *arg) {
	mark((long)arg);
	return NULL;
}

int main(void) {
	mark(10);
	pid_t c = fork();
	if (c == 0) {
		pthread_t t;
		mark(20);
		pthread_create(&t, NULL, child_thread, (void *)30);
		pthread_join(t, NULL);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	mark(40);
	printf("parent who=%ld child status=%d\n", who, WEXITSTATUS(st));
	return 0;
}
