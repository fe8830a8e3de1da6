/* Threads that write files of their own and pass data through a pipe:
 * the main thread writes what the reader thread sends it, in order. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int p[2];

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[32], line[64];
	snprintf(name, sizeof name, "worker%ld.txt", id);
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; i < 200; i++) {
		int n = snprintf(line, sizeof line, "worker %ld line %d\n", id, i);
		write(fd, line, n);
		if (i % 50 == 0)
			write(p[1], line, n);
	}
	close(fd);
	return NULL;
}

int main(void)
{
	pipe(p);
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	int out = open("from_pipe.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char buf[256];
	size_t total = 0;
	while (total < 3 * 4 * strlen("worker 0 line 0\n")) {
		ssize_t n = read(p[0], buf, sizeof buf);
		if (n <= 0)
			break;
		write(out, buf, n);
		total += n;
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	close(out);
	return 0;
}
