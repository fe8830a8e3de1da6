// threads: three threads spin for different counts (and yield, so
// their runs interleave); main joins them. profile:::N's per-thread
// firings are checked against every instruction of the replay.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
volatile long sink;
static void *spin(void *arg) {
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		sink += i;
		if (i % 500 == 0) sched_yield();
	}
	return 0;
}
int main(void) {
	pthread_t t[3];
	for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, spin, (void *)(3000 * (i + 1)));
	spin((void *)2000);
	for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
	printf("sink %ld\n", sink);
	return 0;
}
