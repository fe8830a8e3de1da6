/* Pipes, socketpair and poll in a single process (no fork): readiness,
 * EOF/POLLHUP, non-blocking EAGAIN, pipe capacity, datagram boundaries,
 * scatter/gather I/O and SCM_RIGHTS descriptor passing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define CHECK(x)                                                                         \
	do {                                                                             \
		if ((x) < 0) {                                                           \
			printf("FAILED line %d: %s: %s\n", __LINE__, #x, strerror(errno)); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static void show_poll(const char *what, struct pollfd *p, int n, int timeout)
{
	int r = poll(p, (nfds_t)n, timeout);
	printf("%s: poll=%d", what, r);
	for (int i = 0; i < n; i++)
		printf(" [%s%s%s%s]", p[i].revents & POLLIN ? "IN" : "", p[i].revents & POLLOUT ? "OUT" : "",
		       p[i].revents & POLLHUP ? "HUP" : "", p[i].revents & POLLERR ? "ERR" : "");
	printf("\n");
}

int main(void)
{
	int p[2];
	CHECK(pipe(p));
	struct pollfd pf[2] = {{.fd = p[0], .events = POLLIN}, {.fd = p[1], .events = POLLOUT}};
	show_poll("empty pipe", pf, 2, 0);
	CHECK(write(p[1], "hello, pipe", 11));
	show_poll("after write", pf, 2, 0);
	char buf[256];
	ssize_t n = read(p[0], buf, 5);
	printf("read %zd: %.*s\n", n, (int)n, buf);
	n = read(p[0], buf, sizeof buf);
	printf("read %zd: %.*s\n", n, (int)n, buf);
	CHECK(close(p[1]));
	show_poll("writer closed", pf, 1, 100);
	printf("read at EOF: %zd\n", read(p[0], buf, sizeof buf));
	close(p[0]);

	/* Non-blocking pipe: EAGAIN when empty, capacity when full. */
	CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC));
	errno = 0;
	n = read(p[0], buf, sizeof buf);
	printf("nonblocking empty read: %zd %s\n", n, errno == EAGAIN ? "EAGAIN" : strerror(errno));
	printf("cloexec=%d nonblock=%d\n", fcntl(p[0], F_GETFD) & FD_CLOEXEC, !!(fcntl(p[1], F_GETFL) & O_NONBLOCK));
	static char chunk[4096];
	memset(chunk, 'z', sizeof chunk);
	long total = 0;
	for (;;) {
		n = write(p[1], chunk, sizeof chunk);
		if (n < 0)
			break;
		total += n;
	}
	printf("pipe capacity: %ld (%s)\n", total, errno == EAGAIN ? "EAGAIN" : strerror(errno));
	pf[0].fd = p[0];
	pf[1].fd = p[1];
	show_poll("full pipe", pf, 2, 0);
	long drained = 0;
	while ((n = read(p[0], chunk, sizeof chunk)) > 0)
		drained += n;
	printf("drained %ld\n", drained);
	close(p[0]);
	close(p[1]);

	/* Stream socketpair */
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	CHECK(send(sv[0], "ping", 4, 0));
	CHECK(send(sv[1], "pong!", 5, 0));
	n = recv(sv[1], buf, sizeof buf, 0);
	printf("sv1 got %zd: %.*s\n", n, (int)n, buf);
	n = recv(sv[0], buf, 2, MSG_PEEK);
	printf("sv0 peek %zd: %.*s\n", n, (int)n, buf);
	n = recv(sv[0], buf, sizeof buf, 0);
	printf("sv0 got %zd: %.*s\n", n, (int)n, buf);
	struct iovec iov[3] = {{"scatter", 7}, {"/", 1}, {"gather", 6}};
	printf("writev: %zd\n", writev(sv[0], iov, 3));
	char a[5], b[20];
	struct iovec riov[2] = {{a, sizeof a}, {b, sizeof b}};
	n = readv(sv[1], riov, 2);
	printf("readv %zd: [%.5s][%.*s]\n", n, a, (int)(n - 5), b);
	CHECK(shutdown(sv[0], SHUT_WR));
	struct pollfd sp[2] = {{.fd = sv[1], .events = POLLIN}, {.fd = sv[0], .events = POLLIN | POLLOUT}};
	show_poll("after shutdown", sp, 2, 0);
	printf("recv after shutdown: %zd\n", recv(sv[1], buf, sizeof buf, 0));

	/* SCM_RIGHTS: pass a pipe write end through the socket. */
	CHECK(pipe(p));
	struct msghdr msg = {0};
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec one = {"F", 1};
	msg.msg_iov = &one;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof cbuf;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &p[1], sizeof(int));
	CHECK(sendmsg(sv[1], &msg, 0));
	struct msghdr rmsg = {0};
	char rc[CMSG_SPACE(sizeof(int))];
	char tag;
	struct iovec rone = {&tag, 1};
	rmsg.msg_iov = &rone;
	rmsg.msg_iovlen = 1;
	rmsg.msg_control = rc;
	rmsg.msg_controllen = sizeof rc;
	n = recvmsg(sv[0], &rmsg, 0);
	struct cmsghdr *rcm = CMSG_FIRSTHDR(&rmsg);
	int passed = -1;
	if (rcm && rcm->cmsg_type == SCM_RIGHTS)
		memcpy(&passed, CMSG_DATA(rcm), sizeof passed);
	printf("recvmsg %zd tag=%c got fd: %d distinct: %d\n", n, tag, passed >= 0, passed != p[1]);
	CHECK(write(passed, "via passed fd", 13));
	n = read(p[0], buf, sizeof buf);
	printf("pipe got %zd: %.*s\n", n, (int)n, buf);
	close(passed);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);

	/* Datagram socketpair keeps message boundaries. */
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	for (int i = 1; i <= 4; i++) {
		char m[32];
		int len = snprintf(m, sizeof m, "datagram-%d%.*s", i, i * 2, "++++++++");
		CHECK(send(sv[0], m, (size_t)len, 0));
	}
	for (int i = 0; i < 4; i++) {
		n = recv(sv[1], buf, i == 2 ? 5 : sizeof buf, 0);
		printf("dgram %d: %zd %.*s\n", i, n, (int)n, buf);
	}
	errno = 0;
	n = recv(sv[1], buf, sizeof buf, MSG_DONTWAIT);
	printf("dgram empty: %zd %s\n", n, errno == EAGAIN ? "EAGAIN" : strerror(errno));

	/* select() on several descriptors */
	int q[2];
	CHECK(pipe(q));
	CHECK(write(q[1], "s", 1));
	fd_set rfds, wfds;
	FD_ZERO(&rfds);
	FD_ZERO(&wfds);
	FD_SET(q[0], &rfds);
	FD_SET(sv[1], &rfds);
	FD_SET(sv[0], &wfds);
	struct timeval tv = {0, 0};
	int maxfd = q[0] > sv[1] ? q[0] : sv[1];
	if (sv[0] > maxfd)
		maxfd = sv[0];
	int r = select(maxfd + 1, &rfds, &wfds, NULL, &tv);
	printf("select=%d pipe readable=%d dgram readable=%d dgram writable=%d\n", r, FD_ISSET(q[0], &rfds),
	       FD_ISSET(sv[1], &rfds), FD_ISSET(sv[0], &wfds));
	/* poll with a timeout on nothing ready */
	struct pollfd w = {.fd = q[1], .events = POLLIN};
	show_poll("timeout", &w, 1, 20);
	/* invalid fd in poll */
	struct pollfd bad = {.fd = 999, .events = POLLIN};
	int br = poll(&bad, 1, 0);
	printf("poll bad fd: %d nval=%d\n", br, !!(bad.revents & POLLNVAL));
	return 0;
}
