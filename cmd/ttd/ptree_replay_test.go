package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// forkQuerySrc forks twice: a child that writes a global and exits 7,
// and one that execs echo. The parent writes the global again after
// the first child ended.
const forkQuerySrc = `#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
long before_fork = 0; /* the parent writes it before fork, nobody after */
long by_child = 0;    /* 1 before fork, 2 in the child, 3 in the parent after wait */
int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	before_fork = 41;
	by_child = 1;
	pid_t c = fork();
	if (c == 0) {
		by_child = 2;
		printf("child %ld %ld\n", before_fork, by_child);
		_exit(7);
	}
	int st;
	waitpid(c, &st, 0);
	by_child = 3;
	pid_t e = fork();
	if (e == 0) {
		execl("/bin/echo", "echo", "execed", (char *)0);
		_exit(127);
	}
	waitpid(e, NULL, 0);
	printf("parent %ld %ld %d\n", before_fork, by_child, WEXITSTATUS(st));
	return 3;
}
`

// recordForkQuery builds and records forkQuerySrc, checks the
// recording against the native run, and returns the trace and the pids
// of the tree (first process first).
func recordForkQuery(t *testing.T, flags ...string) (string, []int) {
	return recordTreeC(t, forkQuerySrc, []string{"-O0", "-g"}, 3, 3, flags...)
}

// recordTreeC builds the C program src (with cflags), records it
// (with flags) after running it natively, checks that the recording
// printed what the native run did and exited with wantStatus, and
// returns the trace and the pids of its nprocs processes (first
// process first, from ttd info --json).
func recordTreeC(t *testing.T, src string, cflags []string, wantStatus, nprocs int, flags ...string) (string, []int) {
	t.Helper()
	exe := buildC(t, src, cflags...)
	nat := exec.Command(exe)
	natOut, _ := nat.Output()
	if nat.ProcessState.ExitCode() != wantStatus {
		t.Fatalf("native run: status %d, want %d", nat.ProcessState.ExitCode(), wantStatus)
	}
	trace := filepath.Join(t.TempDir(), "tree.ttd")
	out, errs, st := ttdCmd(t, append(append([]string{"record", "-o", trace}, flags...), "--", exe)...)
	if st != wantStatus || out != string(natOut) {
		t.Fatalf("record: status %d (native %d), stdout %q (native %q); stderr %s", st, wantStatus, out, natOut, errs)
	}
	info, errs, st := ttdCmd(t, "info", "--json", trace)
	if st != 0 {
		t.Fatalf("info: %s", errs)
	}
	var rep struct {
		Processes []struct {
			Pid  int      `json:"pid"`
			Argv []string `json:"argv"`
		} `json:"processes"`
	}
	if err := json.Unmarshal([]byte(info), &rep); err != nil || len(rep.Processes) != nprocs {
		t.Fatalf("info --json: %v, %d processes (want %d):\n%s", err, len(rep.Processes), nprocs, info)
	}
	var pids []int
	for _, p := range rep.Processes {
		pids = append(pids, p.Pid)
	}
	return trace, pids
}

// TestReplayVerifiesEveryProcess records a fork/exec/wait tree and
// checks that ttd replay --verify re-simulates all three processes:
// the output of all of them, their exits, and the registers each had
// when it ended.
func TestReplayVerifiesEveryProcess(t *testing.T) {
	trace, pids := recordForkQuery(t, "--checkpoint-every", "50000")
	out, errs, st := ttdCmd(t, "replay", "--verify", "--segments", trace)
	if st != 0 {
		t.Fatalf("replay --verify: status %d\n%s", st, errs)
	}
	if out != "child 41 2\nexeced\nparent 41 3 7\n" {
		t.Errorf("replayed output %q", out)
	}
	js, errs, st := ttdCmd(t, "replay", "--verify", "--quiet", "--json", trace)
	if st != 0 {
		t.Fatalf("replay --json: status %d\n%s", st, errs)
	}
	var sum replaySummary
	if err := json.Unmarshal([]byte(js), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Processes) != 3 {
		t.Fatalf("replay --json lists %d processes, want 3:\n%s", len(sum.Processes), js)
	}
	wantCode := []int{3, 7, 0}
	for i, p := range sum.Processes {
		if p.Pid != pids[i] || p.Exit == nil || p.Exit.Code != wantCode[i] {
			t.Errorf("process %d: %+v, want pid %d exiting with %d", i, p, pids[i], wantCode[i])
		}
		// Every process's end is checked (its final registers, or
		// the last checkpoint for the first one).
		if p.VerifiedStates < 1 {
			t.Errorf("process %d: no thread state verified", p.Pid)
		}
	}
	if sum.Processes[1].Argv[0] != "./fork" && !strings.HasSuffix(sum.Processes[1].Argv[0], "fork") && sum.Processes[2].Argv[0] != "echo" {
		t.Errorf("argv: %v %v", sum.Processes[1].Argv, sum.Processes[2].Argv)
	}
}

// TestQueryPid checks that ttd query --pid answers in that process's
// address space: the child's last write of a global is its own, the
// parent's is its own, and a global the child never wrote was last
// written by the parent before the fork (the child's copy).
func TestQueryPid(t *testing.T) {
	trace, pids := recordForkQuery(t)
	parent, child := pids[0], pids[1]
	find := func(sym string, pid int) *queryJSON {
		t.Helper()
		args := []string{"query", "--json", "--find-prev-write", sym, trace}
		if pid != 0 {
			args = append([]string{"query", "--pid", strconv.Itoa(pid)}, args[1:]...)
		}
		out, errs, st := ttdCmd(t, args...)
		if st != 0 {
			t.Fatalf("query --pid %d --find-prev-write %s: status %d\n%s", pid, sym, st, errs)
		}
		var q queryJSON
		if err := json.Unmarshal([]byte(out), &q); err != nil || q.Found == nil || q.Found.AfterValue == nil {
			t.Fatalf("query --pid %d --find-prev-write %s: %v\n%s", pid, sym, err, out)
		}
		return &q
	}
	for _, c := range []struct {
		sym      string
		pid      int
		want     uint64
		wantLine int
	}{
		{"by_child", 0, 3, 18},      // the first process by default
		{"by_child", parent, 3, 18}, // the parent after the child ended
		{"by_child", child, 2, 12},  // the child's own write
		{"before_fork", child, 41, 8},
	} {
		q := find(c.sym, c.pid)
		if *q.Found.AfterValue != c.want || q.Found.Line != c.wantLine {
			t.Errorf("--pid %d --find-prev-write %s: value %d at line %d, want %d at line %d", c.pid, c.sym,
				*q.Found.AfterValue, q.Found.Line, c.want, c.wantLine)
		}
	}
	// The child's write comes after the parent's pre-fork write and
	// before its later one, on the one timeline.
	pre, mid, post := find("before_fork", child).Found.Position, find("by_child", child).Found.Position, find("by_child", parent).Found.Position
	if !(pre < mid && mid < post) {
		t.Errorf("positions %d (parent before fork) %d (child) %d (parent after): not in order", pre, mid, post)
	}
	// --regs with --pid: the process's main thread, wherever the
	// position is.
	out, errs, st := ttdCmd(t, "query", "--json", "--regs", "--pid", strconv.Itoa(child), "--at", strconv.FormatUint(mid, 10), trace)
	var q queryJSON
	if st != 0 || json.Unmarshal([]byte(out), &q) != nil || q.Registers == nil || !strings.Contains(out, `"thread": `+strconv.Itoa(child)) {
		t.Errorf("query --regs --pid %d: status %d\n%s%s", child, st, out, errs)
	}
	if _, errs, st := ttdCmd(t, "query", "--pid", "1", trace); st == 0 || !strings.Contains(errs, "process 1: no such process") {
		t.Errorf("query --pid 1: status %d, stderr %q", st, errs)
	}
}

// BenchmarkRecordMakeJ2 records the make -j2 build of
// BenchmarkRunMakeJ2 (about 14 processes, every one recorded, 240M
// instructions) and reports the recording's time as a multiple of the
// native run ("x-native"), without the access summaries (a replay of
// their own). rr's paper names make as its worst case, at 8x.
func BenchmarkRecordMakeJ2(b *testing.B) {
	benchMakeJ2(b, "record", func(dir string) []string {
		return []string{"record", "--no-summaries", "-o", filepath.Join(dir, "make.ttd"), "--"}
	})
}

// execQuerySrc forks a child that writes g and reads r, then execs
// this same program (non-PIE: g and r are at the same addresses in the
// new image), whose image touches neither.
const execQuerySrc = `#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
long g = 0; /* the child's first image writes it, its second does not */
long r = 0; /* the child's first image reads it, its second does not */
int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1) {
		printf("second image\n");
		return 4;
	}
	pid_t c = fork();
	if (c == 0) {
		g = 5;
		if (r == 0)
			execl(argv[0], argv[0], "again", (char *)0);
		_exit(127);
	}
	int st;
	waitpid(c, &st, 0);
	printf("child %d\n", WEXITSTATUS(st));
	return 0;
}
`

// TestQueryPidAfterExec checks that a pid's address spaces before and
// after its exec are different spaces: searching backwards from after
// the exec, the last write to g and the last read of r in the child are
// the exec itself (its new program never touched them), not the first
// image's accesses at the same addresses; from before the exec, the
// first image's write is found.
func TestQueryPidAfterExec(t *testing.T) {
	trace, pids := recordTreeC(t, execQuerySrc, []string{"-O0", "-g", "-no-pie"}, 0, 2, "--checkpoint-every", "20000")
	child := strconv.Itoa(pids[1])
	execAt := uint64(0)
	for _, kind := range []string{"--find-prev-write", "--find-prev-read"} {
		for _, sym := range []string{"g", "r"} {
			q, st := queryJSONOut(t, "--pid", child, kind, sym, trace)
			if st != 0 || q.Found == nil {
				t.Fatalf("--pid %s %s %s: status %d, %+v", child, kind, sym, st, q)
			}
			if q.Found.Source != "exec (the address space was replaced)" || q.Found.Line != 0 || q.Found.AfterValue != nil {
				t.Errorf("--pid %s %s %s: found %+v, want the exec", child, kind, sym, *q.Found)
			}
			if execAt != 0 && q.Found.Position != execAt {
				t.Errorf("--pid %s %s %s: exec at %d, before at %d", child, kind, sym, q.Found.Position, execAt)
			}
			execAt = q.Found.Position
		}
	}
	// From the exec backwards, the first image is the process's space.
	q, st := queryJSONOut(t, "--pid", child, "--at", strconv.FormatUint(execAt, 10), "--find-prev-write", "g", trace)
	if st != 0 || q.Found == nil || q.Found.Line != 14 || q.Found.AfterValue == nil || *q.Found.AfterValue != 5 {
		t.Errorf("--pid %s --at %d --find-prev-write g: status %d, %+v", child, execAt, st, q.Found)
	}
	// The parent never execed: its write is its own.
	if q, st := queryJSONOut(t, "--pid", strconv.Itoa(pids[0]), "--find-prev-write", "g", trace); !q.NotFound {
		t.Errorf("--pid %d --find-prev-write g: status %d, %+v (the parent never wrote g)", pids[0], st, q)
	}
}

// execFromThreadSrc: a forked child starts two threads; the second
// execs this program again, which prints whether its tid is its pid
// (Linux gives the execing thread the leader's tid and ends the
// others) and how many threads /proc/self/status counts.
const execFromThreadSrc = `#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
static char *self;
static void *sleeper(void *a) { (void)a; for (;;) pause(); return 0; }
static void *execer(void *a) {
	(void)a;
	char buf[32];
	snprintf(buf, sizeof buf, "%d", (int)getpid());
	execl(self, self, "again", buf, (char *)0);
	perror("execl");
	exit(126);
}
int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	self = argv[0];
	if (argc > 2) {
		pid_t tid = (pid_t)syscall(SYS_gettid);
		printf("after exec: tid==pid %d, same pid %d\n", tid == getpid(), atoi(argv[2]) == getpid());
		/* Only this thread survived the exec. */
		FILE *f = fopen("/proc/self/status", "r");
		char line[256];
		while (f && fgets(line, sizeof line, f))
			if (strncmp(line, "Threads:", 8) == 0)
				printf("%s", line);
		if (f) fclose(f);
		return 5;
	}
	pid_t c = fork();
	if (c == 0) {
		pthread_t s, e;
		pthread_create(&s, 0, sleeper, 0);
		pthread_create(&e, 0, execer, 0);
		for (;;) pause();
	}
	int st;
	waitpid(c, &st, 0);
	printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
	return 0;
}
`

// TestExecFromThread checks an exec from a thread other than the
// leader under ttd run, ttd record and replay --verify from every
// checkpoint: the thread takes the pid as its tid, the other threads
// end.
func TestExecFromThread(t *testing.T) {
	checkTreeC(t, execFromThreadSrc, []string{"-O1", "-g", "-pthread"}, 0, 2)
}

// sharedSrc: per-process umask (a child's umask(077) changes neither the
// parent's mask nor its files' modes), and memory shared across fork
// (MAP_SHARED|MAP_ANONYMOUS) holding process-shared semaphores and a
// PTHREAD_PROCESS_SHARED mutex: each process waits on a futex the other
// wakes, and both increment one counter under the mutex, yielding
// inside it; a file mapped MAP_SHARED by the parent and, separately, by
// the child (each sees the other's writes); a System V segment attached
// before fork, written by the child.
const sharedSrc = `#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <unistd.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>

struct box { sem_t ready, done; pthread_mutex_t mu; long counter; long value; };

/* count adds 2000 to b->counter under the shared mutex, yielding
   inside it every yield_every times. */
static void count(struct box *b, int yield_every) {
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&b->mu);
		long v = b->counter;
		if (i % yield_every == 0) sched_yield();
		b->counter = v + 1;
		pthread_mutex_unlock(&b->mu);
	}
}

static void child_umask(const char *dir) {
	char path[512];
	snprintf(path, sizeof path, "%s/child", dir);
	umask(077);
	int fd = open(path, O_CREAT | O_WRONLY, 0666);
	close(fd);
}

int main(void) {
	setvbuf(stdout, NULL, _IONBF, 0);
	/* Per-process umask. */
	char dir[] = "/tmp/ttd-shared-XXXXXX";
	if (!mkdtemp(dir)) return 1;
	umask(022);
	pid_t c = fork();
	if (c == 0) { child_umask(dir); _exit(0); }
	waitpid(c, NULL, 0);
	char path[512];
	snprintf(path, sizeof path, "%s/parent", dir);
	close(open(path, O_CREAT | O_WRONLY, 0666));
	struct stat st;
	stat(path, &st);
	printf("umask: parent file %o", st.st_mode & 0777);
	snprintf(path, sizeof path, "%s/child", dir);
	stat(path, &st);
	printf(", child file %o, parent umask still %o\n", st.st_mode & 0777, umask(022));

	/* MAP_SHARED|MAP_ANONYMOUS inherited across fork, with a
	   process-shared semaphore and mutex in it. */
	struct box *b = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sem_init(&b->ready, 1, 0);
	sem_init(&b->done, 1, 0);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&b->mu, &ma);
	c = fork();
	if (c == 0) {
		b->value = 42;
		sem_post(&b->ready);
		count(b, 97);
		sem_wait(&b->done); /* blocks until the parent posts */
		_exit(b->value == 43 ? 0 : 1);
	}
	sem_wait(&b->ready); /* blocks until the child posts */
	printf("anonymous shared: parent sees %ld\n", b->value);
	count(b, 89);
	b->value = 43;
	sem_post(&b->done);
	int ws;
	waitpid(c, &ws, 0);
	printf("child saw 43: %d, counter %ld\n", WEXITSTATUS(ws) == 0, b->counter);

	/* A MAP_SHARED file mapping in two processes, mapped in each. */
	snprintf(path, sizeof path, "%s/file", dir);
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	ftruncate(fd, 4096);
	char *p = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	strcpy(p, "from parent");
	c = fork();
	if (c == 0) {
		int fd2 = open(path, O_RDWR);
		char *q = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0);
		int ok = strcmp(q, "from parent") == 0;
		strcpy(q + 100, "from child");
		munmap(q, 4096);
		_exit(ok ? 0 : 1);
	}
	waitpid(c, &ws, 0);
	printf("file shared: child saw parent's %d, parent sees %s\n", WEXITSTATUS(ws) == 0, p + 100);

	/* System V shared memory. */
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	if (id < 0) { perror("shmget"); return 2; }
	long *s = shmat(id, 0, 0);
	s[0] = 7;
	c = fork();
	if (c == 0) { s[1] = s[0] * 6; shmdt(s); _exit(0); }
	waitpid(c, &ws, 0);
	printf("sysv shm: %ld\n", s[1]);
	shmdt(s);
	shmctl(id, IPC_RMID, 0);

	unlink(path);
	snprintf(path, sizeof path, "%s/parent", dir); unlink(path);
	snprintf(path, sizeof path, "%s/child", dir); unlink(path);
	rmdir(dir);
	return 0;
}
`

// TestSharedAcrossProcesses checks sharedSrc natively, under ttd run,
// ttd record --mode predicted and the default mode (whose replay shares
// the pages between the processes, memory hashes compared) and replay
// --verify from every checkpoint.
func TestSharedAcrossProcesses(t *testing.T) {
	checkTreeC(t, sharedSrc, []string{"-O1", "-g", "-pthread"}, 0, 5, "--mode", "predicted")
	checkTreeShared(t, sharedSrc, []string{"-O1", "-g", "-pthread"}, 5)
}

// procViewSrc looks at /proc as a process of the tree: Threads in
// /proc/self/status and the entries of /proc/self/task (the guest's,
// not ttd's Go threads), a child's cmdline, stat, fd and task
// directories and maps by its pid, and /proc/self/exe of a program run
// through a symbolic link (the resolved path, which $ORIGIN needs).
const procViewSrc = `#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static int count_dir(const char *path) {
	DIR *d = opendir(path);
	if (!d) return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') n++;
	closedir(d);
	return n;
}

static int threads_line(void) {
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1) break;
	if (f) fclose(f);
	return n;
}

static void *idle(void *a) { pause(); return a; }

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IONBF, 0);
	char exe[PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	if (argc > 1) {
		/* Run through the symlink argv[1]: /proc/self/exe is the target. */
		realpath(argv[1], real);
		printf("via symlink: exe is the resolved path %d, not the link %d\n", strcmp(exe, real) == 0, strcmp(exe, argv[1]) != 0);
		return 0;
	}
	printf("threads: %d", threads_line());
	pthread_t th;
	pthread_create(&th, 0, idle, 0);
	printf(" then %d, task entries %d\n", threads_line(), count_dir("/proc/self/task"));
	int p[2];
	pipe(p);
	pid_t c = fork();
	if (c == 0) {
		char b;
		read(p[0], &b, 1); /* wait for the parent's look */
		_exit(0);
	}
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/cmdline", c);
	FILE *f = fopen(path, "r");
	size_t k = f ? fread(buf, 1, sizeof buf, f) : 0;
	if (f) fclose(f);
	printf("child cmdline is argv[0] %d\n", k == strlen(argv[0]) + 1 && memcmp(buf, argv[0], k) == 0);
	snprintf(path, sizeof path, "/proc/%d/stat", c);
	f = fopen(path, "r");
	int pid = 0, ppid = 0;
	char state = 0;
	if (f && fscanf(f, "%d %*s %c %d", &pid, &state, &ppid) == 3)
		printf("child stat: pid %d, running or sleeping %d, ppid is me %d\n", pid == c, state == 'R' || state == 'S', ppid == getpid());
	if (f) fclose(f);
	int fds = 0;
	for (int i = 0; i < 3; i++) {
		char fdp[80];
		snprintf(fdp, sizeof fdp, "/proc/%d/fd/%d", c, i ? p[i - 1] : 1);
		/* listed in the directory, not only openable */
		snprintf(path, sizeof path, "/proc/%d/fd", c);
		DIR *d = opendir(path);
		struct dirent *e;
		char want[16];
		snprintf(want, sizeof want, "%d", i ? p[i - 1] : 1);
		while (d && (e = readdir(d)))
			if (strcmp(e->d_name, want) == 0 && e->d_type == DT_LNK) fds++;
		if (d) closedir(d);
	}
	snprintf(path, sizeof path, "/proc/%d/task", c);
	printf("child fd dir lists 1 and the pipe: %d, task entries %d\n", fds, count_dir(path));
	snprintf(path, sizeof path, "/proc/%d/maps", c);
	f = fopen(path, "r");
	int mapped = 0;
	while (f && fgets(buf, sizeof buf, f))
		if (strstr(buf, exe)) mapped = 1;
	if (f) fclose(f);
	printf("child maps name the executable %d\n", mapped);
	write(p[1], "x", 1);
	waitpid(c, NULL, 0);
	/* Through a symlink. */
	char dir[] = "/tmp/ttd-procview-XXXXXX", link[PATH_MAX];
	mkdtemp(dir);
	snprintf(link, sizeof link, "%s/link", dir);
	symlink(exe, link);
	c = fork();
	if (c == 0) {
		execl(link, link, link, (char *)0);
		_exit(127);
	}
	int st;
	waitpid(c, &st, 0);
	unlink(link);
	rmdir(dir);
	return WEXITSTATUS(st);
}
`

// TestProcViews checks procViewSrc natively, under ttd run, ttd record
// and replay --verify.
func TestProcViews(t *testing.T) {
	checkTreeC(t, procViewSrc, []string{"-O1", "-g", "-pthread"}, 0, 3)
}

// checkTreeC runs the C program src natively, records it (checkpoints
// every 3000 instructions), checks that ttd replay --verify
// --segments of the recording and ttd run print what the native run
// printed, and that the replay verified every process.
func checkTreeC(t *testing.T, src string, cflags []string, wantStatus, nprocs int, recFlags ...string) {
	t.Helper()
	exe := buildC(t, src, cflags...)
	want, err := exec.Command(exe).Output()
	if err != nil && wantStatus == 0 {
		t.Fatalf("native run: %v", err)
	}
	if !slices.Contains(recFlags, "--checkpoint-every") {
		recFlags = append(recFlags, "--checkpoint-every", "3000")
	}
	trace, pids := recordTreeC(t, src, cflags, wantStatus, nprocs, recFlags...)
	out, errs, st := ttdCmd(t, "replay", "--verify", "--segments", trace)
	if st != 0 || out != string(want) {
		t.Fatalf("replay --verify --segments: status %d, output %q (native %q)\n%s", st, out, want, errs)
	}
	for _, pid := range pids {
		if !strings.Contains(errs, "process "+strconv.Itoa(pid)+" ") {
			t.Errorf("replay --verify does not report process %d:\n%s", pid, errs)
		}
	}
	if out, errs, st := ttdCmd(t, "run", "--", exe); st != wantStatus || out != string(want) {
		t.Errorf("ttd run: status %d, output %q (native %q)\n%s", st, out, want, errs)
	}
}
