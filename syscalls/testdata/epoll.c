/* epoll for the strace comparison: epoll_ctl's operations (a bad one
 * too) and struct epoll_event (edge-triggered, 64-bit data, bits strace
 * has no name for), and the waits' arrays of events: filled, empty ([]),
 * failed, with a signal mask and with epoll_pwait2's timespec. No wait
 * blocks. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	int p[2];
	pipe(p);
	write(p[1], "x", 1);
	write(-1, "START", 5);
	int e = epoll_create1(EPOLL_CLOEXEC);
	close(epoll_create1(0));
	epoll_create1(1); /* EINVAL */
	struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = 0x100000003ULL};
	epoll_ctl(e, EPOLL_CTL_ADD, p[0], &ev);
	struct epoll_event ev2 = {.events = EPOLLOUT | 0x800, .data.fd = p[1]};
	epoll_ctl(e, EPOLL_CTL_ADD, p[1], &ev2);
	struct epoll_event ev3 = {.events = 0x4000, .data.fd = p[1]};
	epoll_ctl(e, EPOLL_CTL_MOD, p[1], &ev3);
	epoll_ctl(e, 7, p[1], &ev2); /* EINVAL */
	struct epoll_event out[4];
	epoll_wait(e, out, 4, 0);
	epoll_ctl(e, EPOLL_CTL_DEL, p[1], NULL);
	epoll_ctl(e, EPOLL_CTL_DEL, p[1], &ev2); /* ENOENT; strace shows the event's address */
	epoll_wait(e, out, 4, 0); /* edge-triggered, nothing new: [] */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	epoll_pwait(e, out, 4, 0, &s);
	epoll_pwait(e, out, 4, 0, NULL);
	struct timespec ts = {0, 1000};
	syscall(SYS_epoll_pwait2, e, out, 4, &ts, NULL, 8);
	epoll_wait(-1, out, 4, 0); /* EBADF */
	close(p[1]);
	epoll_wait(e, out, 4, 0); /* the write end closed: EPOLLIN|EPOLLHUP? */
	write(-1, "END", 3);
	return 0;
}
