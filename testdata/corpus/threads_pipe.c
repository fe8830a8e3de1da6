/* Threads talking through pipes and a socket pair: a producer writes 1 MiB
 * in chunks of varying sizes (larger than the pipe buffer too) while a
 * consumer reads and checksums it; a ping-pong over a socket pair; poll on
 * both ends from different threads; a thread blocked in read must not stop
 * the others. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TOTAL (1 << 20)

static int pfd[2];

static uint8_t byte_at(long i) { return (uint8_t)(i * 31 + (i >> 9)); }

static void *producer(void *arg)
{
	(void)arg;
	static uint8_t buf[200000];
	long sent = 0;
	int step = 0;
	static const int sizes[] = {1, 7, 4096, 4097, 65536, 100000, 300, 200000, 12345};
	while (sent < TOTAL) {
		long n = sizes[step++ % 9];
		if (n > TOTAL - sent)
			n = TOTAL - sent;
		for (long i = 0; i < n; i++)
			buf[i] = byte_at(sent + i);
		long off = 0;
		while (off < n) {
			ssize_t w = write(pfd[1], buf + off, n - off);
			if (w <= 0) {
				perror("write");
				exit(1);
			}
			off += w;
		}
		sent += n;
	}
	close(pfd[1]);
	return 0;
}

struct stats {
	long bytes, reads, bad;
	uint32_t sum;
};

static void *consumer(void *arg)
{
	struct stats *st = arg;
	static uint8_t buf[50000];
	for (;;) {
		ssize_t r = read(pfd[0], buf, sizeof buf);
		if (r < 0) {
			perror("read");
			exit(1);
		}
		if (r == 0)
			break;
		for (ssize_t i = 0; i < r; i++) {
			if (buf[i] != byte_at(st->bytes + i))
				st->bad++;
			st->sum = st->sum * 33 + buf[i];
		}
		st->bytes += r;
		st->reads++;
	}
	return 0;
}

static int sp[2];

static void *ponger(void *arg)
{
	(void)arg;
	char msg[64];
	for (;;) {
		ssize_t r = recv(sp[1], msg, sizeof msg, 0);
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			msg[i] = (char)(msg[i] + 1);
		send(sp[1], msg, r, 0);
	}
	return 0;
}

/* A thread that waits in read on a pipe nobody writes to until the end. */
static int idle_pipe[2];
static void *sleeper(void *arg)
{
	(void)arg;
	char c;
	ssize_t r = read(idle_pipe[0], &c, 1);
	return (void *)(intptr_t)(r == 1 ? c : -1);
}

static int poll_pipe[2];
static void *poller(void *arg)
{
	(void)arg;
	struct pollfd p = {poll_pipe[0], POLLIN, 0};
	int n = poll(&p, 1, 10000);
	char buf[16] = {0};
	ssize_t r = read(poll_pipe[0], buf, sizeof buf - 1);
	return (void *)(intptr_t)(n == 1 && (p.revents & POLLIN) && r == 5 && strcmp(buf, "hello") == 0);
}

int main(void)
{
	pthread_t s;
	pipe(idle_pipe);
	pthread_create(&s, 0, sleeper, 0);

	pipe(pfd);
	pthread_t p, c;
	struct stats st = {0, 0, 0, 0};
	pthread_create(&c, 0, consumer, &st);
	pthread_create(&p, 0, producer, 0);
	pthread_join(p, 0);
	pthread_join(c, 0);
	printf("pipe: %ld bytes, %s, checksum %08x\n", st.bytes, st.bad ? "CORRUPT" : "intact", st.sum);

	socketpair(AF_UNIX, SOCK_STREAM, 0, sp);
	pthread_t pong;
	pthread_create(&pong, 0, ponger, 0);
	char msg[8] = "abcdefg";
	for (int i = 0; i < 1000; i++) {
		send(sp[0], msg, 7, 0);
		long got = 0;
		while (got < 7) {
			ssize_t r = recv(sp[0], msg + got, 7 - got, 0);
			if (r <= 0)
				break;
			got += r;
		}
	}
	shutdown(sp[0], SHUT_WR);
	pthread_join(pong, 0);
	printf("ping-pong: %s\n", msg);

	pipe(poll_pipe);
	pthread_t pl;
	pthread_create(&pl, 0, poller, 0);
	struct timespec d = {0, 5 * 1000 * 1000};
	nanosleep(&d, 0);
	write(poll_pipe[1], "hello", 5);
	void *ok;
	pthread_join(pl, &ok);
	printf("poll from another thread: %s\n", ok ? "ok" : "FAILED");

	write(idle_pipe[1], "z", 1);
	void *r;
	pthread_join(s, &r);
	printf("sleeper read: %c\n", (char)(intptr_t)r);
	return 0;
}
