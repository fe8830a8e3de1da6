// Threads that run long enough to be switched mid-loop (the emulator
// switches threads every 100,000 instructions).
#include <pthread.h>
#include <stdio.h>

long counts[2];

void *spin(void *arg) {
	long id = (long)arg;
	for (long i = 0; i < 300000; i++)
		counts[id] += i & 3;
	return NULL;
}

int main(void) {
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld\n", counts[0], counts[1]);
	return 0;
}
