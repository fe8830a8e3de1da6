package emu

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestFutex checks futex semantics (values, timeouts, bitsets, requeue,
// wake_op) against the host.
func TestFutex(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		compare(t, build(t, tc, "futex.c"))
	})
}

const signalThreadProgram = `
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic long handler_tid, target_tid;
static atomic_int stop;
static void on_usr1(int sig) { atomic_store(&handler_tid, syscall(SYS_gettid)); }
static void *target(void *arg) {
	atomic_store(&target_tid, syscall(SYS_gettid));
	while (!atomic_load(&stop))
		;
	return 0;
}
int main(void) {
	signal(SIGUSR1, on_usr1);
	pthread_t t;
	pthread_create(&t, 0, target, 0);
	while (!atomic_load(&target_tid))
		sched_yield();
	syscall(SYS_tgkill, getpid(), (int)atomic_load(&target_tid), SIGUSR1);
	while (!atomic_load(&handler_tid))
		sched_yield();
	atomic_store(&stop, 1);
	pthread_join(t, 0);
	printf("handled by the target: %s\n", handler_tid == target_tid ? "yes" : "no");
	printf("target is not the main thread: %s\n", target_tid != getpid() ? "yes" : "no");
	return 0;
}
`

// TestSignalToOtherThread sends a signal to a thread spinning in user
// code: its handler must run on that thread.
func TestSignalToOtherThread(t *testing.T) {
	forEachToolchain(t, libcToolchains, func(t *testing.T, tc toolchain) {
		r := compare(t, build(t, tc, signalThreadProgram))
		if !strings.Contains(r.stdout, "handled by the target: yes") {
			t.Errorf("got %q", r.stdout)
		}
	})
}

const blockedReaderProgram = `
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int fds[2];
static void *reader(void *arg) {
	char buf[16];
	ssize_t n = read(fds[0], buf, sizeof buf);
	return (void *)n;
}
int main(void) {
	pipe(fds);
	pthread_t t;
	pthread_create(&t, 0, reader, 0);
	/* The reader blocks in read while this thread computes. */
	unsigned long x = 1;
	for (long i = 0; i < 20000000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	write(fds[1], "done", 4);
	void *n;
	pthread_join(t, &n);
	printf("computed %lu, reader got %ld bytes\n", x % 1000, (long)n);
	return 0;
}
`

// TestBlockedReaderDoesNotStopOthers checks that a thread waiting in a
// host read lets the other threads run.
func TestBlockedReaderDoesNotStopOthers(t *testing.T) {
	exe := build(t, muslStatic, blockedReaderProgram)
	done := make(chan result, 1)
	go func() { done <- compare(t, exe) }()
	select {
	case r := <-done:
		if !strings.Contains(r.stdout, "reader got 4 bytes") {
			t.Errorf("got %q", r.stdout)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the computing thread did not run while the other waited in read")
	}
}

// schedObserver records the scheduler's decisions.
type schedObserver struct {
	recordingObserver
	p           *Process
	switches    []string
	checkpoints []uint64
	bad         []string
	every       uint64
}

func (o *schedObserver) Switch(t *Thread) {
	o.switches = append(o.switches, itoa(t.Tid-t.P.PID)+"@"+itoa(int(t.P.Icount())))
}

func (o *schedObserver) Checkpoint(p *Process) {
	n := p.Icount()
	if n%o.every != 0 || n != uint64(len(o.checkpoints)+1)*o.every {
		o.bad = append(o.bad, "checkpoint at "+itoa(int(n)))
	}
	var sum uint64
	for _, t := range p.Threads() {
		sum += t.CPU.Icount
	}
	if sum+p.m.sched.retiredByExited != n {
		o.bad = append(o.bad, "thread counts do not add up at "+itoa(int(n)))
	}
	o.checkpoints = append(o.checkpoints, n)
}

const computeThreadsProgram = `
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long shared, turn;
static void *work(void *arg) {
	long id = (long)arg;
	for (int round = 0; round < 20; round++) {
		pthread_mutex_lock(&mu);
		while (turn % 3 != id)
			pthread_cond_wait(&cv, &mu);
		for (int i = 0; i < 5000; i++)
			shared = shared * 31 + id + i;
		turn++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
	}
	return 0;
}
int main(void) {
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], 0, work, (void *)i);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], 0);
	printf("%ld %ld\n", shared, turn);
	return 0;
}
`

// TestDeterministicSchedule runs a program whose threads only wait for
// each other (no host timing) twice: the Switch and Checkpoint callbacks
// must come at the same global counts, checkpoints exactly at multiples
// of CheckpointEvery.
func TestDeterministicSchedule(t *testing.T) {
	exe := build(t, muslStatic, computeThreadsProgram)
	var runs [2]*schedObserver
	var outs [2]string
	for i := range runs {
		o := &schedObserver{every: 10007}
		cfg := Config{Path: exe, Observer: o, CheckpointEvery: o.every, TimeSlice: 3000}
		r, err := runEmuErr(t, cfg)
		if err != nil {
			t.Fatal(err)
		}
		runs[i], outs[i] = o, r.stdout
		if len(o.bad) > 0 {
			t.Errorf("run %d: %v", i, o.bad)
		}
		if len(o.checkpoints) == 0 || len(o.switches) < 10 {
			t.Fatalf("run %d: %d checkpoints, %d switches", i, len(o.checkpoints), len(o.switches))
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("outputs differ: %q vs %q", outs[0], outs[1])
	}
	if a, b := strings.Join(runs[0].switches, " "), strings.Join(runs[1].switches, " "); a != b {
		t.Errorf("schedules differ:\n%s\n%s", a, b)
	}
	if len(runs[0].checkpoints) != len(runs[1].checkpoints) {
		t.Errorf("checkpoints: %d vs %d", len(runs[0].checkpoints), len(runs[1].checkpoints))
	}
}

// TestTimeSliceFairness checks that a thread spinning on a flag set by
// another thread (no syscalls, no pause) does not starve it.
func TestTimeSliceFairness(t *testing.T) {
	src := `
#include <pthread.h>
#include <stdio.h>
static volatile int flag;
static void *setter(void *arg) { for (volatile int i = 0; i < 100000; i++); flag = 1; return 0; }
int main(void) {
	pthread_t t;
	pthread_create(&t, 0, setter, 0);
	while (!flag)
		;
	pthread_join(t, 0);
	puts("flag seen");
	return 0;
}
`
	compare(t, build(t, muslStatic, src))
}

// TestDeadlockReported checks that threads waiting for each other for
// ever end the emulation with ErrDeadlock (no host events can help).
func TestDeadlockReported(t *testing.T) {
	src := `
#include <pthread.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t bar;
static void *other(void *arg) {
	pthread_mutex_lock(&b);
	pthread_barrier_wait(&bar);
	pthread_mutex_lock(&a);
	return 0;
}
int main(void) {
	pthread_barrier_init(&bar, 0, 2);
	pthread_t t;
	pthread_create(&t, 0, other, 0);
	pthread_mutex_lock(&a);
	pthread_barrier_wait(&bar);
	pthread_mutex_lock(&b);
	return 0;
}
`
	exe := build(t, muslStatic, src)
	r, err := runEmuErr(t, Config{Path: exe})
	if !errors.Is(err, ErrDeadlock) || r.status.Signal != unix.SIGKILL {
		t.Fatalf("got %v, %v", r.status, err)
	}
	if !strings.Contains(err.Error(), "futex 0x") {
		t.Errorf("message %q does not say what the threads wait for (the futex's address)", err)
	}
}

// TestThreadExitStatus: when every thread ends with exit(2) (not
// exit_group), the process lives until the last one, whose code is the
// status (Linux 6; the host is the oracle).
func TestThreadExitStatus(t *testing.T) {
	src := `
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
static void *last(void *arg) {
	usleep(20000);
	puts("last thread exits with 9");
	fflush(stdout);
	syscall(SYS_exit, 9);
	return 0;
}
int main(void) {
	pthread_t t;
	pthread_create(&t, 0, last, 0);
	syscall(SYS_exit, 4);
	return 0;
}
`
	r := compare(t, build(t, glibcStat, src))
	if !strings.Contains(r.stdout, "last thread exits") {
		t.Errorf("the process ended with its main thread: %q", r.stdout)
	}
}

// cpuTimerObserver notes the global count at each signal delivery.
type cpuTimerObserver struct {
	recordingObserver
	at []uint64
	p  *Process
}

func (o *cpuTimerObserver) Signal(t *Thread, ev *SignalEvent) {
	o.at = append(o.at, t.P.Icount())
}

// TestCPUTimerExact checks that ITIMER_VIRTUAL, on the virtual CPU clock
// (one instruction per nanosecond), fires at exact instruction counts.
func TestCPUTimerExact(t *testing.T) {
	src := `
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
static volatile int ticks;
static void on_tick(int sig) { ticks++; }
int main(void) {
	signal(SIGVTALRM, on_tick);
	struct itimerval it = {{0, 100}, {0, 100}};
	setitimer(ITIMER_VIRTUAL, &it, 0);
	while (ticks < 5)
		;
	printf("%d ticks\n", ticks);
	return 0;
}
`
	exe := build(t, muslStatic, src)
	o := &cpuTimerObserver{}
	r, err := runEmuErr(t, Config{Path: exe, Observer: o})
	if err != nil || r.stdout != "5 ticks\n" {
		t.Fatalf("%q, %v", r.stdout, err)
	}
	if len(o.at) != 5 {
		t.Fatalf("%d deliveries", len(o.at))
	}
	for i := 1; i < len(o.at); i++ {
		// 100µs = 100000 instructions, plus the handler's own
		// instructions, which also count.
		if d := o.at[i] - o.at[i-1]; d != 100000 {
			t.Errorf("deliveries %d and %d are %d instructions apart, want 100000", i-1, i, d)
		}
	}
}

// TestFatalSignalInThread: a fault in one thread kills the whole process,
// with the status a shell sees natively, while other threads wait.
func TestFatalSignalInThread(t *testing.T) {
	cases := map[string]string{
		"segv":    "*(volatile int *)8 = 1;",
		"abort":   "abort();",
		"sigterm": "pthread_kill(main_thread, SIGTERM); for (;;) pause();",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			src := `
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_t main_thread;
static int fds[2];
static volatile int printed;
static void *die(void *arg) { while (!printed) usleep(1000); ` + body + ` return 0; }
static void *sleeper(void *arg) { char c; read(fds[0], &c, 1); return 0; }
int main(void) {
	main_thread = pthread_self();
	pipe(fds);
	pthread_t a, b;
	pthread_create(&b, 0, sleeper, 0);
	pthread_create(&a, 0, die, 0);
	puts("waiting");
	fflush(stdout);
	printed = 1;
	pthread_join(a, 0);
	puts("not reached");
	return 0;
}
`
			r := compare(t, build(t, glibcDyn, src))
			if r.status.Signal == 0 {
				t.Errorf("status %v", r.status)
			}
		})
	}
}
