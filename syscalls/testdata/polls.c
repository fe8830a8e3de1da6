/* ppoll, pselect6, select and ioctl as strace decodes them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	int p[2];
	pipe(p);
	write(-1, "START", 5);
	struct pollfd pf[2] = {{.fd = p[0], .events = POLLIN}, {.fd = p[1], .events = POLLOUT}};
	struct timespec ts = {0, 1000};
	ppoll(pf, 2, &ts, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ppoll(pf, 1, &ts, &set);
	ppoll(pf, 2, NULL, NULL);
	write(p[1], "x", 1);
	ppoll(pf, 2, &ts, NULL);
	fd_set r, w;
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(p[0], &r);
	FD_SET(p[1], &w);
	pselect(p[1] + 1, &r, &w, NULL, &ts, &set);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	read(p[0], (char[4]){0}, 1);
	struct timespec zero = {0, 0};
	pselect(p[1] + 1, &r, NULL, NULL, &zero, NULL);
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = {0, 500};
	select(p[0] + 1, &r, NULL, NULL, &tv);
	int n = 0;
	write(p[1], "abc", 3);
	ioctl(p[0], FIONREAD, &n);
	struct termios t;
	ioctl(p[0], TCGETS, &t);
	struct winsize ws;
	ioctl(p[0], TIOCGWINSZ, &ws);
	int on = 1;
	ioctl(p[0], FIONBIO, &on);
	ioctl(p[0], FIOCLEX);
	ioctl(p[0], FIONCLEX);
	ioctl(p[0], 0x1234, 0);
	write(-1, "END", 3);
	return 0;
}
