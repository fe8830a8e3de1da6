/* forkserver.c: a server process forks a worker process per request.
   A client process (forked first) sends eight requests over a
   socketpair, one at a time; for each the server forks a worker, hands
   it the request over another socketpair, reads the worker's answer from
   a pipe, reaps the worker and replies to the client. With argument N,
   request N goes wrong: the worker finds it invalid and recovers the
   slow way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

__attribute__((noinline)) unsigned work(const struct req *r) {
	if (!validate(r))
		return slow_recover(r);
	return checksum(r->data, sizeof r->data) ^ checksum(r->data + 1, sizeof r->data - 1);
}
/* worker: the child that handles one request. */
__attribute__((noinline)) void worker(int in, int out) {
	struct req r;
	if (recv(in, &r, sizeof r, MSG_WAITALL) != sizeof r)
		_exit(2);
	unsigned v = work(&r);
	if (write(out, &v, sizeof v) != sizeof v)
		_exit(3);
	_exit(0);
}
/* serve: fork a worker for one request and relay its answer. */
__attribute__((noinline)) void serve(int client, const struct req *r) {
	int ws[2], p[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, ws) != 0 || pipe(p) != 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		close(ws[0]);
		close(p[0]);
		worker(ws[1], p[1]);
	}
	close(ws[1]);
	close(p[1]);
	send(ws[0], r, sizeof *r, 0);
	unsigned v;
	if (read(p[0], &v, sizeof v) != sizeof v)
		exit(1);
	waitpid(pid, 0, 0);
	close(ws[0]);
	close(p[0]);
	char out[16] = {0};
	memcpy(out, &v, sizeof v);
	send(client, out, sizeof out, 0);
}
__attribute__((noinline)) void server(int fd) {
	struct req r;
	while (recv(fd, &r, sizeof r, MSG_WAITALL) == sizeof r)
		serve(fd, &r);
}
__attribute__((noinline)) void request(int fd, int i, int bad) {
	struct req r = {i, i == bad ? 9 : 1, {0}};
	memset(r.data, 'a' + i, sizeof r.data);
	send(fd, &r, sizeof r, 0);
	char buf[16];
	if (recv(fd, buf, sizeof buf, MSG_WAITALL) != sizeof buf)
		exit(1);
}
int main(int argc, char **argv) {
	int bad = argc > 1 ? atoi(argv[1]) : -1;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	pid_t client = fork();
	if (client == 0) {
		close(sv[1]);
		for (int i = 1; i <= 8; i++)
			request(sv[0], i, bad);
		_exit(0);
	}
	close(sv[0]);
	server(sv[1]);
	int st;
	waitpid(client, &st, 0);
	printf("done %d\n", WEXITSTATUS(st));
	return 0;
}
