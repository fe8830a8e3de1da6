// Futex semantics through raw syscalls, checked against the host: every
// line printed must be the same natively and under ttd.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// From <linux/futex.h> (not in every libc's include path).
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define FUTEX_REQUEUE_PRIVATE 131
#define FUTEX_CMP_REQUEUE_PRIVATE 132
#define FUTEX_WAKE_OP_PRIVATE 133
#define FUTEX_WAIT_BITSET_PRIVATE 137
#define FUTEX_WAKE_BITSET_PRIVATE 138
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_OP_ADD 1
#define FUTEX_OP_CMP_EQ 0
#define FUTEX_OP(op, oparg, cmp, cmparg) \
	(((op & 0xf) << 28) | ((cmp & 0xf) << 24) | ((oparg & 0xfff) << 12) | (cmparg & 0xfff))

static long futex(atomic_int *uaddr, int op, int val, const struct timespec *ts, atomic_int *uaddr2, int val3)
{
	long r = syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
	return r < 0 ? -errno : r;
}

static long futex_n(atomic_int *uaddr, int op, int val, long val2, atomic_int *uaddr2, int val3)
{
	long r = syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
	return r < 0 ? -errno : r;
}

static atomic_int word, word2, started, woken_count;

static void *waiter(void *arg)
{
	int bitset = (int)(intptr_t)arg;
	atomic_fetch_add(&started, 1);
	long r = futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, 0, 0, bitset);
	if (r == 0)
		atomic_fetch_add(&woken_count, 1);
	return (void *)r;
}

// count_waiters counts the threads waiting on w without waking them: it
// requeues them all to a parking word and back.
static atomic_int parking;
static long count_waiters(atomic_int *w)
{
	long n = futex_n(w, FUTEX_REQUEUE_PRIVATE, 0, 1 << 30, &parking, 0);
	futex_n(&parking, FUTEX_REQUEUE_PRIVATE, 0, 1 << 30, w, 0);
	return n;
}

// wait_waiting waits until n threads wait on w.
static void wait_waiting(atomic_int *w, int n)
{
	while (count_waiters(w) < n)
		sched_yield();
}

static void *plain_waiter(void *arg)
{
	atomic_int *w = arg;
	atomic_fetch_add(&started, 1);
	long r;
	do
		r = futex(w, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0);
	while (r == -EAGAIN && atomic_load(w) == 0);
	atomic_fetch_add(&woken_count, 1);
	return (void *)r;
}

int main(void)
{
	// Value mismatch, bad alignment, timeouts.
	atomic_store(&word, 1);
	printf("wait on changed value: %ld\n", futex(&word, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0));
	printf("misaligned: %ld\n", futex((atomic_int *)((char *)&word + 1), FUTEX_WAIT_PRIVATE, 1, 0, 0, 0));
	struct timespec rel = {0, 10 * 1000 * 1000};
	printf("relative timeout: %ld\n", futex(&word, FUTEX_WAIT_PRIVATE, 1, &rel, 0, 0));
	struct timespec abs;
	clock_gettime(CLOCK_MONOTONIC, &abs);
	abs.tv_nsec += 10 * 1000 * 1000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	printf("absolute timeout: %ld\n", futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 1, &abs, 0, -1));
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_sec -= 1;
	printf("realtime deadline passed: %ld\n",
	       futex(&word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 1, &abs, 0, -1));
	printf("zero bitset: %ld\n", futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 1, 0, 0, 0));
	printf("wake nobody: %ld\n", futex(&word, FUTEX_WAKE_PRIVATE, 5, 0, 0, 0));

	// Bitsets: two waiters on bit 1, one on bit 2; waking bit 2 wakes one.
	atomic_store(&word, 0);
	pthread_t t[3];
	pthread_create(&t[0], 0, waiter, (void *)1);
	pthread_create(&t[1], 0, waiter, (void *)1);
	pthread_create(&t[2], 0, waiter, (void *)2);
	wait_waiting(&word, 3);
	printf("wake bitset 2: %ld\n", futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, 0, 0, 2));
	pthread_join(t[2], 0);
	printf("wake bitset 1, one of two: %ld\n", futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, 0, 0, 1));
	while (atomic_load(&woken_count) < 2)
		sched_yield();
	printf("wake all: %ld\n", futex(&word, FUTEX_WAKE_PRIVATE, 100, 0, 0, 0));
	pthread_join(t[0], 0);
	pthread_join(t[1], 0);
	printf("woken: %d\n", atomic_load(&woken_count));

	// Requeue: four waiters on word; wake one, move two to word2.
	atomic_store(&started, 0);
	atomic_store(&woken_count, 0);
	atomic_store(&word, 0);
	atomic_store(&word2, 0);
	pthread_t r[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&r[i], 0, plain_waiter, &word);
	wait_waiting(&word, 4);
	printf("cmp_requeue with a stale value: %ld\n", futex_n(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, &word2, 7));
	printf("cmp_requeue: %ld\n", futex_n(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, 2, &word2, 0));
	while (atomic_load(&woken_count) < 1)
		sched_yield();
	printf("wake on word2 (requeued): %ld\n", futex(&word2, FUTEX_WAKE_PRIVATE, 10, 0, 0, 0));
	while (atomic_load(&woken_count) < 3)
		sched_yield();
	printf("requeue the last: %ld\n", futex_n(&word, FUTEX_REQUEUE_PRIVATE, 0, 5, &word2, 0));
	atomic_store(&word2, 1);
	printf("wake the last on word2: %ld\n", futex(&word2, FUTEX_WAKE_PRIVATE, 10, 0, 0, 0));
	for (int i = 0; i < 4; i++)
		pthread_join(r[i], 0);
	printf("requeue woken: %d\n", atomic_load(&woken_count));

	// WAKE_OP: word2 += 5 and wake a waiter on word2 if it was 1.
	atomic_store(&started, 0);
	atomic_store(&woken_count, 0);
	atomic_store(&word, 0);
	atomic_store(&word2, 0);
	pthread_t a, b;
	pthread_create(&a, 0, plain_waiter, &word);
	pthread_create(&b, 0, plain_waiter, &word2);
	wait_waiting(&word, 1);
	wait_waiting(&word2, 1);
	int op = FUTEX_OP(FUTEX_OP_ADD, 5, FUTEX_OP_CMP_EQ, 0);
	long woke = futex_n(&word, FUTEX_WAKE_OP_PRIVATE, 1, 1, &word2, op);
	printf("wake_op: %ld, word2 now %d\n", woke, atomic_load(&word2));
	pthread_join(a, 0);
	pthread_join(b, 0);
	printf("wake_op woken: %d\n", atomic_load(&woken_count));
	return 0;
}
