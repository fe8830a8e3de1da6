// proctask.c: /proc/PID/task/TID/{comm,stat,status} and /proc/thread-self
// of every thread, and of a child process's thread, as Linux shows them.
// Ids are printed relative to what the program knows (its own gettid,
// getpid), so the output is the same natively and under ttd.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_barrier_t ready, done;
static pid_t tids[3];
static char worker_self[64];
static int worker_pid_ok;

static char *slurp(const char *path) {
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return "(missing)";
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

// field returns the value of a "Key:\tvalue" line of a status file.
static long field(const char *status, const char *key) {
	const char *p = strstr(status, key);
	return p ? strtol(p + strlen(key) + 1, 0, 10) : -1;
}

static void show(pid_t pid, pid_t tid, const char *who) {
	char path[128];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
	printf("%s comm %s", who, slurp(path));
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
	char *stat = slurp(path);
	long id = strtol(stat, 0, 10);
	char *open = strchr(stat, '('), *close = strrchr(stat, ')');
	int nthreads = 0, ppid = 0;
	char state;
	if (close)
		sscanf(close + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %d", &state, &ppid, &nthreads);
	printf("%s stat id=tid %d name %.*s ppid=getppid %d threads %d\n", who, id == tid,
	       open && close ? (int)(close - open + 1) : 0, open ? open : "", ppid == (pid == getpid() ? getppid() : getpid()), nthreads);
	snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, tid);
	char *st = slurp(path);
	char name[32] = "";
	sscanf(strstr(st, "Name:") ? strstr(st, "Name:") : "", "Name:\t%31s", name);
	printf("%s status Name %s Pid=tid %d Tgid=pid %d NSpid=tid %d Threads %ld\n", who, name, field(st, "\nPid:") == tid,
	       field(st, "Tgid:") == pid, field(st, "NSpid:") == tid, field(st, "Threads:"));
}

static void *worker(void *arg) {
	long i = (long)arg;
	tids[i] = gettid();
	if (i == 1) {
		prctl(PR_SET_NAME, "worker-one");
		snprintf(worker_self, sizeof worker_self, "%s", slurp("/proc/thread-self/comm"));
		worker_pid_ok = field(slurp("/proc/thread-self/status"), "\nPid:") == gettid();
	}
	pthread_barrier_wait(&ready);
	pthread_barrier_wait(&done);
	return 0;
}

int main(void) {
	pthread_barrier_init(&ready, 0, 3);
	pthread_barrier_init(&done, 0, 3);
	pthread_t th[3];
	tids[0] = gettid();
	for (long i = 1; i < 3; i++)
		pthread_create(&th[i], 0, worker, (void *)i);
	pthread_barrier_wait(&ready);
	for (int i = 0; i < 3; i++) {
		char who[16];
		snprintf(who, sizeof who, "thread%d", i);
		show(getpid(), tids[i], who);
	}
	char link[64], want[64];
	ssize_t n = readlink("/proc/thread-self", link, sizeof link - 1);
	link[n > 0 ? n : 0] = 0;
	snprintf(want, sizeof want, "%d/task/%d", getpid(), gettid());
	printf("thread-self link ok %d\n", strcmp(link, want) == 0);
	n = readlink("/proc/self", link, sizeof link - 1);
	link[n > 0 ? n : 0] = 0;
	snprintf(want, sizeof want, "%d", getpid());
	printf("self link ok %d\n", strcmp(link, want) == 0);
	printf("thread-self comm %s", slurp("/proc/thread-self/comm"));
	char *st = slurp("/proc/thread-self/status");
	printf("thread-self Pid=tid %d\n", field(st, "\nPid:") == gettid());
	printf("worker thread-self comm %s", worker_self);
	printf("worker thread-self Pid=tid %d\n", worker_pid_ok);
	printf("missing task %s\n", slurp("/proc/self/task/999999/comm"));
	pthread_barrier_wait(&done);
	for (int i = 1; i < 3; i++)
		pthread_join(th[i], 0);

	// A child names itself; the parent reads the child's thread files.
	int up[2], down[2];
	pipe(up);
	pipe(down);
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "kid");
		write(up[1], "x", 1);
		char c;
		read(down[0], &c, 1);
		_exit(0);
	}
	char c;
	read(up[0], &c, 1);
	show(child, child, "child");
	write(down[1], "x", 1);
	int status;
	waitpid(child, &status, 0);
	printf("child exit %d\n", WEXITSTATUS(status));
	return 0;
}
