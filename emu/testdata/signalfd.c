/* signalfd, emulated: readiness in poll, a read per signal (kill,
 * sigqueue's value, SIGCHLD's status), a read that blocks until a child
 * exits, non-blocking reads, dup, a new mask, a buffer too small. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
static volatile int handled;
static void on_usr2(int sig) { handled = sig; }

int main(void){
	sigset_t m; sigemptyset(&m); sigaddset(&m, SIGUSR1); sigaddset(&m, SIGCHLD); sigaddset(&m, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int fd = signalfd(-1, &m, SFD_CLOEXEC);
	struct signalfd_siginfo si;
	struct pollfd p = {fd, POLLIN, 0};
	printf("poll empty %d\n", poll(&p, 1, 0));
	int fl = fcntl(fd, F_GETFL); printf("nonblock %d\n", !!(fl & O_NONBLOCK));
	kill(getpid(), SIGUSR1);
	int r = poll(&p, 1, 0);
	printf("poll ready %d %#x\n", r, p.revents);
	ssize_t n = read(fd, &si, sizeof si);
	printf("read %zd signo %u code %d pid_ok %d\n", n, si.ssi_signo, si.ssi_code, si.ssi_pid == (unsigned)getpid());
	union sigval v = {.sival_int = 77};
	sigqueue(getpid(), SIGRTMIN, v);
	n = read(fd, &si, sizeof si);
	printf("read %zd signo %u code %d int %d\n", n, si.ssi_signo - SIGRTMIN, si.ssi_code, si.ssi_int);
	pid_t c = fork(); if (c == 0) _exit(5);
	n = read(fd, &si, sizeof si); /* blocks until SIGCHLD */
	printf("chld %zd signo %u code %d status %d pid_ok %d\n", n, si.ssi_signo, si.ssi_code, si.ssi_status, si.ssi_pid == (unsigned)c);
	waitpid(c, NULL, 0);
	int nb = signalfd(-1, &m, SFD_NONBLOCK);
	n = read(nb, &si, sizeof si);
	printf("nonblock read %zd\n", n);
	int d = dup(nb); close(nb);
	raise(SIGUSR1);
	n = read(d, &si, sizeof si);
	printf("dup read %zd %u\n", n, si.ssi_signo);
	sigset_t only; sigemptyset(&only); sigaddset(&only, SIGUSR2);
	printf("remask %d\n", signalfd(d, &only, 0) == d);
	raise(SIGUSR1);
	p.fd = d; printf("poll other %d\n", poll(&p, 1, 0));
	n = read(fd, &si, sizeof si);
	printf("first fd %zd %u\n", n, si.ssi_signo);
	printf("small %zd\n", read(fd, &si, 8));
	/* A signal a handler takes is no longer pending for the signalfd. */
	signal(SIGUSR2, on_usr2);
	sigaddset(&only, SIGUSR2);
	signalfd(d, &only, 0);
	raise(SIGUSR2);
	printf("handled %d, poll %d\n", handled, poll(&p, 1, 0));
	return 0;
}
