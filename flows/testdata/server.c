/* server.c: a server thread handles the requests a client thread sends
   over a socketpair, one at a time, replying to each. With argument N,
   request N goes wrong: it fails validation, the server recovers the slow
   way and sends a long error reply. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "work.h"

static int sv[2];

__attribute__((noinline)) int respond(int fd, const void *msg, int n) { return send(fd, msg, n, 0); }
__attribute__((noinline)) void handle(int fd, const struct req *r) {
	char out[256];
	if (!validate(r)) {
		unsigned h = slow_recover(r);
		memset(out, 'E', sizeof out);
		memcpy(out, &h, sizeof h);
		respond(fd, out, sizeof out);
		return;
	}
	unsigned v = checksum(r->data, sizeof r->data) ^ checksum(r->data + 1, sizeof r->data - 1);
	memcpy(out, &v, sizeof v);
	respond(fd, out, 16);
}
static void *server(void *arg) {
	struct req r;
	(void)arg;
	while (recv(sv[1], &r, sizeof r, MSG_WAITALL) == sizeof r)
		handle(sv[1], &r);
	return 0;
}
__attribute__((noinline)) void request(int i, int bad) {
	struct req r = {i, i == bad ? 9 : 1, {0}};
	memset(r.data, 'a' + i, sizeof r.data);
	send(sv[0], &r, sizeof r, 0);
	char buf[256];
	int n = recv(sv[0], buf, sizeof buf, 0);
	if (n <= 0)
		exit(1);
}
int main(int argc, char **argv) {
	int bad = argc > 1 ? atoi(argv[1]) : -1;
	pthread_t t;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	pthread_create(&t, 0, server, 0);
	for (int i = 1; i <= 8; i++)
		request(i, bad);
	shutdown(sv[0], SHUT_WR);
	pthread_join(t, 0);
	printf("done\n");
	return 0;
}
