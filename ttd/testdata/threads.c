// Threads for the debugger tests of ttd, dap and gdbremote (one copy): three
// workers add to their own slot, a shared atomic total and a __thread counter.
#include <pthread.h>
#include <stdio.h>

#define N 3
long slots[N];
_Atomic long total;
__thread long mine;

void work(long id) {
	for (int i = 0; i < 1000; i++) {
		mine += id;
		slots[id] += 1;
		total += 1;
	}
}

void *worker(void *arg) {
	long id = (long)arg; // MARK worker-body
	work(id); // MARK worker-call
	return NULL; // MARK worker-return
}

int main(void) {
	pthread_t t[N];
	for (long i = 0; i < N; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld %ld %ld\n", slots[0], slots[1], slots[2], (long)total);
	return 0;
}
