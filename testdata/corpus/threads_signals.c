/* Signals and threads: pthread_kill to another thread, per-thread masks,
 * a process-directed signal taken by the one thread that does not block it,
 * sigwait in a dedicated thread, per-thread alternate stacks, signals
 * interrupting blocking calls (EINTR without SA_RESTART, transparent restart
 * with it), setitimer/alarm, timer_create with SIGEV_THREAD_ID and
 * sigsuspend. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

static _Atomic pid_t handled_by;
static atomic_int usr1_hits, on_altstack;
static __thread char *my_alt;

static void on_usr1(int sig)
{
	(void)sig;
	char here;
	atomic_store(&handled_by, gettid_());
	atomic_fetch_add(&usr1_hits, 1);
	if (my_alt && &here >= my_alt && &here < my_alt + 65536)
		atomic_fetch_add(&on_altstack, 1);
}

static void on_alarm(int sig) { (void)sig; }

/* 1. pthread_kill to a thread spinning on a flag. */
static atomic_int stop_spin;
static _Atomic pid_t spinner_tid;
static void *spinner(void *arg)
{
	(void)arg;
	my_alt = malloc(65536);
	stack_t ss = {.ss_sp = my_alt, .ss_size = 65536};
	sigaltstack(&ss, 0);
	atomic_store(&spinner_tid, gettid_());
	while (!atomic_load(&stop_spin))
		;
	return 0;
}

/* 2. A process-directed signal goes to the only thread not blocking it. */
static _Atomic pid_t receiver_tid;
static atomic_int receiver_ready;
static void *receiver(void *arg)
{
	(void)arg;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, 0);
	atomic_store(&receiver_tid, gettid_());
	atomic_store(&receiver_ready, 1);
	while (atomic_load(&usr1_hits) < 2)
		usleep(1000);
	return 0;
}

/* 3. sigwait in a dedicated thread. */
static atomic_int waited;
static void *waiter(void *arg)
{
	(void)arg;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	int sig = 0, total = 0;
	for (int i = 0; i < 3; i++) {
		sigwait(&set, &sig);
		total += sig;
		atomic_fetch_add(&waited, 1);
	}
	return (void *)(intptr_t)total;
}

/* 4. A blocking read interrupted by a signal sent from another thread. */
static int rpipe[2];
static _Atomic pid_t reader_tid;
static atomic_int restart_installed;
static void *reader(void *arg)
{
	(void)arg;
	atomic_store(&reader_tid, gettid_());
	char c;
	ssize_t r = read(rpipe[0], &c, 1);
	int e = errno;
	/* Now with SA_RESTART semantics the main thread installs: the read
	 * is restarted and returns the byte written later. */
	atomic_store(&reader_tid, -gettid_());
	while (!atomic_load(&restart_installed))
		usleep(1000);
	ssize_t r2 = read(rpipe[0], &c, 1);
	return (void *)(intptr_t)(r == -1 && e == EINTR && r2 == 1 && c == 'x');
}

/* 5. timer_create with SIGEV_THREAD_ID. */
static _Atomic pid_t timer_target;
static atomic_int timer_hits_right, timer_hits_wrong;
static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (gettid_() == atomic_load(&timer_target) && si->si_code == SI_TIMER && si->si_value.sival_int == 77)
		atomic_fetch_add(&timer_hits_right, 1);
	else
		atomic_fetch_add(&timer_hits_wrong, 1);
}
static void *timer_thread(void *arg)
{
	(void)arg;
	atomic_store(&timer_target, gettid_());
	while (atomic_load(&timer_hits_right) + atomic_load(&timer_hits_wrong) < 3) {
		struct timespec d = {0, 2 * 1000 * 1000};
		nanosleep(&d, 0);
	}
	return 0;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, 0);

	pthread_t sp;
	pthread_create(&sp, 0, spinner, 0);
	while (!atomic_load(&spinner_tid))
		sched_yield();
	pthread_kill(sp, SIGUSR1);
	while (atomic_load(&usr1_hits) < 1)
		sched_yield();
	atomic_store(&stop_spin, 1);
	pthread_join(sp, 0);
	printf("pthread_kill: handled by the target %s, on its altstack %s\n",
	       atomic_load(&handled_by) == atomic_load(&spinner_tid) ? "yes" : "no",
	       atomic_load(&on_altstack) == 1 ? "yes" : "no");

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, 0);
	pthread_t rc, wt;
	pthread_create(&rc, 0, receiver, 0);
	pthread_create(&wt, 0, waiter, 0);
	while (!atomic_load(&receiver_ready))
		sched_yield();
	kill(getpid(), SIGUSR1);
	while (atomic_load(&usr1_hits) < 2)
		usleep(1000);
	pthread_join(rc, 0);
	printf("kill: taken by the unblocking thread %s\n",
	       atomic_load(&handled_by) == atomic_load(&receiver_tid) ? "yes" : "no");

	for (int i = 0; i < 3; i++) {
		/* One at a time: a standard signal sent twice before it is
		 * taken is pending only once. */
		kill(getpid(), SIGUSR2);
		while (atomic_load(&waited) <= i)
			usleep(1000);
	}
	void *total;
	pthread_join(wt, &total);
	printf("sigwait: total %ld\n", (long)(intptr_t)total);

	/* EINTR then restart. */
	sa.sa_handler = on_alarm;
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, 0);
	pipe(rpipe);
	pthread_t rd;
	pthread_create(&rd, 0, reader, 0);
	while (atomic_load(&reader_tid) <= 0)
		usleep(1000);
	/* Until the reader is in read when the signal comes: a signal that
	 * arrives before just runs the handler. */
	while (atomic_load(&reader_tid) >= 0) {
		pthread_kill(rd, SIGALRM);
		usleep(3000);
	}
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, 0);
	atomic_store(&restart_installed, 1);
	usleep(5000);
	pthread_kill(rd, SIGALRM);
	usleep(5000);
	write(rpipe[1], "x", 1);
	void *ok;
	pthread_join(rd, &ok);
	printf("interrupted read: %s\n", ok ? "EINTR, then restarted" : "WRONG");

	/* alarm interrupts a sleep in the main thread (SIGALRM is not
	 * blocked here, and SA_RESTART does not restart nanosleep). */
	sa.sa_flags = 0;
	sigaction(SIGALRM, &sa, 0);
	alarm(1);
	struct timespec longsleep = {30, 0}, rem = {0, 0};
	int r = nanosleep(&longsleep, &rem);
	printf("alarm: nanosleep %s, %s left\n", r == -1 && errno == EINTR ? "interrupted" : "not interrupted",
	       rem.tv_sec > 20 ? "most" : "little");

	/* setitimer ITIMER_REAL, periodic, counted with sigsuspend. */
	struct itimerval it = {{0, 5000}, {0, 5000}};
	setitimer(ITIMER_REAL, &it, 0);
	sigset_t none;
	sigemptyset(&none);
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, 0);
	for (int i = 0; i < 3; i++)
		sigsuspend(&none);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, 0);
	pthread_sigmask(SIG_UNBLOCK, &alrm, 0);
	printf("setitimer: three ticks\n");

	/* timer_create aimed at one thread. */
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN + 2, &sa, 0);
	pthread_t tt;
	pthread_create(&tt, 0, timer_thread, 0);
	while (!atomic_load(&timer_target))
		sched_yield();
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN + 2;
	sev.sigev_value.sival_int = 77;
#ifdef sigev_notify_thread_id
	sev.sigev_notify_thread_id = atomic_load(&timer_target);
#else
	sev._sigev_un._tid = atomic_load(&timer_target);
#endif
	timer_t tid;
	timer_create(CLOCK_MONOTONIC, &sev, &tid);
	struct itimerspec its = {{0, 3 * 1000 * 1000}, {0, 3 * 1000 * 1000}};
	timer_settime(tid, 0, &its, 0);
	pthread_join(tt, 0);
	timer_delete(tid);
	printf("timer_create: %d to the right thread, %d elsewhere\n", atomic_load(&timer_hits_right) >= 3,
	       atomic_load(&timer_hits_wrong));
	return 0;
}
