/* acceptserver.c: a server listens on an AF_UNIX socket ("unix") or on
   loopback TCP ("tcp"), forks four client processes that each connect,
   send one request and read the reply, then accepts the four
   connections and hands each to a thread of its own. The handler
   threads read their requests and wait at a barrier until all four have
   one, so the four requests are in flight at once; then each handles
   its request and replies. With a second argument N, client N's request
   goes wrong: its handler recovers the slow way. "serial" (AF_UNIX)
   handles each connection in the accepting thread instead, one after
   the other, and does some work of its own (getppid marks it) between
   closing one and accepting the next. */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

#define CLIENTS 4

static pthread_barrier_t inflight;

__attribute__((noinline)) void handle(int fd, const struct req *r) {
	char out[16] = {0};
	unsigned v;
	if (!validate(r))
		v = slow_recover(r);
	else
		v = checksum(r->data, sizeof r->data) ^ checksum(r->data + 1, sizeof r->data - 1);
	memcpy(out, &v, sizeof v);
	send(fd, out, sizeof out, 0);
}
static void *connection(void *arg) {
	int fd = (int)(long)arg;
	struct req r;
	if (recv(fd, &r, sizeof r, MSG_WAITALL) != sizeof r)
		exit(4);
	pthread_barrier_wait(&inflight);
	handle(fd, &r);
	close(fd);
	return 0;
}
__attribute__((noinline)) void client(const struct sockaddr *sa, socklen_t n, int i, int bad) {
	int fd = socket(sa->sa_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, sa, n) != 0)
		_exit(2);
	struct req r = {i, i == bad ? 9 : 1, {0}};
	memset(r.data, 'a' + i, sizeof r.data);
	send(fd, &r, sizeof r, 0);
	char buf[16];
	if (recv(fd, buf, sizeof buf, MSG_WAITALL) != sizeof buf)
		_exit(3);
	_exit(0);
}
int main(int argc, char **argv) {
	int tcp = argc > 1 && strcmp(argv[1], "tcp") == 0;
	int serial = argc > 1 && strcmp(argv[1], "serial") == 0;
	int bad = argc > 2 ? atoi(argv[2]) : -1;
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr *sa = tcp ? (struct sockaddr *)&in : (struct sockaddr *)&un;
	socklen_t n = tcp ? sizeof in : sizeof un;
	int l = socket(sa->sa_family, SOCK_STREAM, 0);
	if (!tcp)
		snprintf(un.sun_path, sizeof un.sun_path, "/tmp/ttd-accept-%d.sock", getpid());
	if (l < 0 || bind(l, sa, n) != 0 || listen(l, CLIENTS) != 0 || getsockname(l, sa, &n) != 0)
		return 1;
	pid_t pids[CLIENTS];
	for (int i = 0; i < CLIENTS; i++)
		if ((pids[i] = fork()) == 0)
			client(sa, n, i + 1, bad);
	pthread_barrier_init(&inflight, 0, CLIENTS);
	pthread_t t[CLIENTS];
	for (int i = 0; i < CLIENTS; i++) {
		int c = accept(l, 0, 0);
		if (c < 0)
			return 1;
		if (serial) {
			struct req r;
			if (recv(c, &r, sizeof r, MSG_WAITALL) != sizeof r)
				return 4;
			handle(c, &r);
			close(c);
			getppid();
			continue;
		}
		pthread_create(&t[i], 0, connection, (void *)(long)c);
	}
	for (int i = 0; i < CLIENTS && !serial; i++)
		pthread_join(t[i], 0);
	int bads = 0;
	for (int i = 0; i < CLIENTS; i++) {
		int st;
		waitpid(pids[i], &st, 0);
		bads += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	if (!tcp)
		unlink(un.sun_path);
	printf("%d clients, %d failed\n", CLIENTS, bads);
	return bads != 0;
}
