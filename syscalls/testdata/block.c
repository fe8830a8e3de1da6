/* A thread blocks in read on a pipe while the main thread sleeps and
 * writes: strace -f prints the read as <unfinished ...> and resumed. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static int p[2];

static void *reader(void *arg)
{
	char buf[8];
	read(p[0], buf, sizeof buf);
	write(-1, buf, 1);
	return arg;
}

int main(void)
{
	pipe(p);
	pthread_t t;
	pthread_create(&t, NULL, reader, NULL);
	struct timespec ts = {0, 50000000};
	nanosleep(&ts, NULL);
	write(-1, "main", 4);
	write(p[1], "x", 1);
	pthread_join(t, NULL);
	write(-1, "END", 3);
	return 0;
}
