/* The calls that control a process, for the strace comparison: prctl's
 * common options, getrusage, the interval timers, POSIX timers (struct
 * sigevent in its forms), timerfd, rt_sigtimedwait (taken, timed out,
 * a bad size), rt_sigsuspend interrupted by a timer's signal, waitid (an exit,
 * then nothing to wait for), the scheduler's policy and parameters and
 * sched_setaffinity (a mask, NULL), ioprio_get and ioprio_set. Each through syscall(2), so that
 * glibc's wrappers choose nothing else. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void handler(int sig) { (void)sig; }

int main(void)
{
	struct rusage ru;
	struct itimerval it = {{0, 0}, {100, 5000}}, old;
	struct itimerspec its = {{0, 0}, {50, 0}}, olds, ts = {{1, 500}, {2, 0}};
	struct sigevent sev;
	timer_t tid = 0;
	write(-1, "START", 5);
	syscall(SYS_getrusage, RUSAGE_SELF, &ru);
	syscall(SYS_getrusage, RUSAGE_CHILDREN, &ru);
	syscall(SYS_getrusage, RUSAGE_THREAD, &ru);
	syscall(SYS_getrusage, 5, &ru); /* EINVAL */
	syscall(SYS_setitimer, ITIMER_REAL, &it, &old);
	syscall(SYS_getitimer, ITIMER_REAL, &old);
	memset(&it, 0, sizeof it);
	syscall(SYS_setitimer, ITIMER_REAL, &it, NULL);
	syscall(SYS_getitimer, 9, &old); /* EINVAL */

	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	sev.sigev_value.sival_int = 42;
	syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &tid);
	syscall(SYS_timer_settime, tid, 0, &its, &olds);
	syscall(SYS_timer_gettime, tid, &olds);
	syscall(SYS_timer_getoverrun, tid);
	syscall(SYS_timer_delete, tid);
	syscall(SYS_timer_delete, 77); /* EINVAL */
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_NONE;
	syscall(SYS_timer_create, CLOCK_REALTIME, &sev, &tid);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGRTMIN;
	sev._sigev_un._tid = syscall(SYS_gettid);
	syscall(SYS_timer_create, CLOCK_REALTIME, &sev, &tid);
	syscall(SYS_timer_create, CLOCK_REALTIME, NULL, &tid);
	sev.sigev_notify = 7;
	syscall(SYS_timer_create, CLOCK_REALTIME, &sev, &tid); /* EINVAL */
	its.it_value.tv_sec = 0;
	its.it_value.tv_nsec = 1000;
	syscall(SYS_timer_settime, 0, TIMER_ABSTIME, &its, NULL);

	int tfd = syscall(SYS_timerfd_create, CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	syscall(SYS_timerfd_settime, tfd, 0, &ts, &olds);
	syscall(SYS_timerfd_gettime, tfd, &olds);
	syscall(SYS_timerfd_settime, tfd, TFD_TIMER_ABSTIME, &ts, NULL);
	close(tfd);

	sigset_t set, none;
	siginfo_t si;
	struct timespec z = {0, 1000};
	sigemptyset(&set);
	sigemptyset(&none);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	syscall(SYS_rt_sigtimedwait, &set, &si, &z, 8); /* EAGAIN */
	kill(getpid(), SIGUSR2);
	syscall(SYS_rt_sigtimedwait, &set, &si, &z, 8);
	syscall(SYS_rt_sigtimedwait, &none, NULL, NULL, 3); /* EINVAL: size */

	struct sched_param sp;
	cpu_set_t cs;
	syscall(SYS_sched_getscheduler, 0);
	syscall(SYS_sched_getparam, 0, &sp);
	CPU_ZERO(&cs);
	CPU_SET(0, &cs);
	syscall(SYS_sched_setaffinity, 0, sizeof cs, &cs);
	syscall(SYS_sched_setaffinity, 0, 16, NULL); /* EFAULT */
	CPU_ZERO(&cs);
	CPU_SET(1000, &cs);
	syscall(SYS_sched_setaffinity, 0, sizeof cs, &cs); /* EINVAL: no such CPU */

	char name[16];
	int v;
	syscall(SYS_prctl, PR_SET_NAME, "worker", 0, 0, 0);
	syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_NAME, "a-name-longer-than-16", 0, 0, 0);
	syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_NAME, NULL, 0, 0, 0); /* EFAULT */
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_PDEATHSIG, &v, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_PDEATHSIG, 0, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_PDEATHSIG, &v, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_DUMPABLE, 5, 0, 0, 0); /* EINVAL */
	syscall(SYS_prctl, PR_GET_DUMPABLE, 0, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_TIMERSLACK, 50000, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_TIMERSLACK, 0, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_KEEPCAPS, 1, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_KEEPCAPS, 0, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_THP_DISABLE, 1, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_THP_DISABLE, 0, 0, 0, 0);
	syscall(SYS_prctl, PR_CAPBSET_READ, 0 /* CAP_CHOWN */, 0, 0, 0);
	syscall(SYS_prctl, PR_CAPBSET_READ, 99, 0, 0, 0); /* EINVAL */
	syscall(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_CHILD_SUBREAPER, &v, 0, 0, 0);
	syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	syscall(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	syscall(SYS_prctl, PR_MCE_KILL_GET, 0, 0, 0, 0);
	syscall(SYS_prctl, 999, 17, 0, 0, 0); /* EINVAL */

	syscall(SYS_ioprio_get, 1, 0);
	syscall(SYS_ioprio_set, 1, 0, (3 << 13) | 0);
	syscall(SYS_ioprio_get, 1, 0);
	syscall(SYS_ioprio_set, 1, 0, (7 << 13) | 0); /* EINVAL */
	syscall(SYS_ioprio_get, 9, 0);                /* EINVAL */

	pid_t c = fork();
	if (c == 0)
		_exit(3);
	siginfo_t wi;
	memset(&wi, 0, sizeof wi);
	syscall(SYS_waitid, P_PID, c, &wi, WEXITED, &ru);
	syscall(SYS_waitid, P_ALL, 0, &wi, WEXITED | WNOHANG, NULL); /* ECHILD */

	signal(SIGALRM, handler);
	struct itimerval soon = {{0, 0}, {0, 1000}};
	setitimer(ITIMER_REAL, &soon, NULL);
	syscall(SYS_rt_sigsuspend, &none, 8);
	write(-1, "END", 3);
	return 0;
}
