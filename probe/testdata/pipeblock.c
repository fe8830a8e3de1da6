// pipeblock: a reader thread blocks in read(2) on a pipe while main
// runs (spins, calls getpid) and then writes to the pipe; main then
// blocks reading the reader's acknowledgement. Three rounds: each
// read's entry and return come at different positions, with the other
// thread's events between them.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
int data[2], ack[2];
volatile long sink;
static void *reader(void *arg) {
	char buf[16];
	long total = 0;
	for (;;) {
		long n = read(data[0], buf, sizeof buf);
		if (n <= 0) break;
		total += n;
		write(ack[1], "k", 1);
	}
	return (void *)total;
}
int main(void) {
	if (pipe(data) != 0 || pipe(ack) != 0) return 1;
	pthread_t t;
	pthread_create(&t, 0, reader, 0);
	char k;
	for (int i = 0; i < 3; i++) {
		for (long j = 0; j < 20000; j++) {
			sink += j;
			if (j % 5000 == 0) getpid();
		}
		write(data[1], "abcdefgh", 4 + i);
		if (read(ack[0], &k, 1) != 1) return 2;
	}
	close(data[1]); // the reader's next read returns 0
	void *total;
	pthread_join(t, &total);
	printf("read %ld\n", (long)total);
	return 0;
}
