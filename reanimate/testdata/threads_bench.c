/* THREADS threads (argv[1]) each write LINES lines (argv[2]) to a file of
 * their own, with an fsync every 100: the reanimation benchmark. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int lines;

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[32], line[64];
	snprintf(name, sizeof name, "bench%ld.txt", id);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < lines; i++) {
		int n = snprintf(line, sizeof line, "thread %ld line %d\n", id, i);
		write(fd, line, n);
		if (i % 100 == 99)
			fsync(fd);
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	lines = argc > 2 ? atoi(argv[2]) : 1000;
	pthread_t t[64];
	for (long i = 0; i < n && i < 64; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < n && i < 64; i++)
		pthread_join(t[i], NULL);
	return 0;
}
