// Threads using the thread-local variables of a shared library
// (tlslib.c) and of the program, for the TLS tests of gdbremote and dap.
#include <pthread.h>
#include <stdio.h>

extern __thread long libcount;
extern __thread char libname[8];
void libwork(long id);
__thread long mine = 7;

void *worker(void *arg) {
	long id = (long)arg;
	libwork(id);
	mine += id;
	printf("%ld %ld %s\n", id, libcount, libname); /* MARK done */
	return NULL;
}

int main(void) {
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
