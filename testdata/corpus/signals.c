/* Signal handling: raise/kill/sigqueue with SA_SIGINFO, blocking and
 * pending sets, nested delivery, SIG_IGN, SA_RESETHAND, SA_NODEFER,
 * sigsuspend-free waiting via sigwaitinfo/sigtimedwait. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char log_[1024];
static volatile int logpos;
static void note(const char *s)
{
	while (*s && logpos < (int)sizeof log_ - 1)
		log_[logpos++] = *s++;
}

static volatile int usr1_count, last_code, last_value, pid_ok, nested_depth, max_nested;

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	usr1_count++;
	last_code = si->si_code;
	pid_ok = si->si_pid == getpid();
	if (si->si_code == SI_QUEUE)
		last_value = si->si_value.sival_int;
	note(sig == SIGUSR1 ? "[usr1" : "[?");
	if (usr1_count == 3)
		raise(SIGUSR2); /* nested: SIGUSR2 not in sa_mask */
	note("]");
}

static void on_usr2(int sig)
{
	(void)sig;
	note("[usr2]");
}

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	char b[32];
	snprintf(b, sizeof b, "<rt%d:%d>", sig - SIGRTMIN, si->si_value.sival_int);
	note(b);
}

static volatile int reraise_budget, nodefer_calls;
static void on_nodefer(int sig)
{
	nodefer_calls++;
	nested_depth++;
	if (nested_depth > max_nested)
		max_nested = nested_depth;
	if (reraise_budget > 0) {
		reraise_budget--;
		raise(sig);
	}
	nested_depth--;
}

static const char *code_name(int c)
{
	switch (c) {
	case SI_USER: return "SI_USER";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TKILL: return "SI_TKILL";
	default: return "other";
	}
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGUSR2, on_usr2);

	raise(SIGUSR1);
	printf("raise: count=%d code=%s pid_ok=%d\n", usr1_count, code_name(last_code), pid_ok);
	kill(getpid(), SIGUSR1);
	printf("kill: count=%d code=%s pid_ok=%d\n", usr1_count, code_name(last_code), pid_ok);
	raise(SIGUSR1);
	printf("nested: log=%s\n", log_);

	union sigval v = {.sival_int = 1234};
	sigqueue(getpid(), SIGUSR1, v);
	printf("sigqueue: count=%d code=%s value=%d\n", usr1_count, code_name(last_code), last_value);

	/* Blocking: signal stays pending until unblocked. */
	sigset_t block, pending, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	raise(SIGUSR1);
	raise(SIGUSR1); /* standard signals do not queue */
	sigpending(&pending);
	printf("blocked: count=%d pending=%d usr2 pending=%d\n", usr1_count, sigismember(&pending, SIGUSR1),
	       sigismember(&pending, SIGUSR2));
	sigprocmask(SIG_SETMASK, &old, NULL);
	sigpending(&pending);
	printf("unblocked: count=%d pending=%d\n", usr1_count, sigismember(&pending, SIGUSR1));

	/* Real-time signals queue. When several are unblocked at once the kernel
	 * stacks one handler frame per signal, so the order printed is the
	 * native one, whatever it is. */
	logpos = 0;
	memset(log_, 0, sizeof log_);
	struct sigaction rt;
	memset(&rt, 0, sizeof rt);
	rt.sa_sigaction = on_rt;
	rt.sa_flags = SA_SIGINFO;
	sigaction(SIGRTMIN, &rt, NULL);
	sigaction(SIGRTMIN + 1, &rt, NULL);
	sigset_t rtset;
	sigemptyset(&rtset);
	sigaddset(&rtset, SIGRTMIN);
	sigaddset(&rtset, SIGRTMIN + 1);
	sigprocmask(SIG_BLOCK, &rtset, NULL);
	for (int i = 0; i < 3; i++) {
		sigqueue(getpid(), SIGRTMIN + 1, (union sigval){.sival_int = 10 + i});
		sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 20 + i});
	}
	note("unblock:");
	sigprocmask(SIG_UNBLOCK, &rtset, NULL);
	printf("realtime: %s\n", log_);

	/* sigwaitinfo / sigtimedwait consume pending signals synchronously. */
	sigprocmask(SIG_BLOCK, &block, NULL);
	sigqueue(getpid(), SIGUSR1, (union sigval){.sival_int = 77});
	siginfo_t si;
	int s = sigwaitinfo(&block, &si);
	printf("sigwaitinfo: sig=%d code=%s value=%d handler count=%d\n", s, code_name(si.si_code), si.si_value.sival_int,
	       usr1_count);
	struct timespec ts = {0, 1000000};
	errno = 0;
	s = sigtimedwait(&block, &si, &ts);
	printf("sigtimedwait empty: %d EAGAIN=%d\n", s, errno == EAGAIN);
	sigprocmask(SIG_UNBLOCK, &block, NULL);

	/* SIG_IGN and SA_RESETHAND */
	signal(SIGUSR2, SIG_IGN);
	raise(SIGUSR2);
	printf("ignored SIGUSR2 survived\n");
	struct sigaction once;
	memset(&once, 0, sizeof once);
	once.sa_handler = on_usr2;
	once.sa_flags = SA_RESETHAND;
	sigaction(SIGUSR2, &once, NULL);
	struct sigaction now;
	sigaction(SIGUSR2, NULL, &now);
	printf("before: handler installed=%d\n", now.sa_handler == on_usr2);
	raise(SIGUSR2);
	sigaction(SIGUSR2, NULL, &now);
	printf("after SA_RESETHAND: default=%d\n", now.sa_handler == SIG_DFL);

	/* SA_NODEFER lets the handler interrupt itself. */
	struct sigaction nd;
	memset(&nd, 0, sizeof nd);
	nd.sa_handler = on_nodefer;
	nd.sa_flags = SA_NODEFER;
	sigaction(SIGUSR2, &nd, NULL);
	reraise_budget = 2;
	raise(SIGUSR2);
	printf("SA_NODEFER max nesting=%d calls=%d\n", max_nested, nodefer_calls);
	nd.sa_flags = 0;
	max_nested = 0;
	nodefer_calls = 0;
	sigaction(SIGUSR2, &nd, NULL);
	reraise_budget = 2;
	raise(SIGUSR2);
	printf("deferred max nesting=%d calls=%d\n", max_nested, nodefer_calls);

	/* Default action of SIGCHLD/SIGURG is ignore. */
	raise(SIGURG);
	raise(SIGCHLD);
	printf("default-ignored signals survived\n");
	printf("final log=%s\n", log_);
	return 0;
}
