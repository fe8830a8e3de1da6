/* POSIX threads: mutexes, condition variables, a bounded queue between
 * producers and consumers, C11 atomics, thread-local storage with
 * destructors, barriers, rwlocks, once, join values, detached threads and
 * pthread_cancel. All output is printed after the threads are joined, so it
 * does not depend on the schedule. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NTHREADS 6

/* 1. A mutex-protected counter and an atomic one. */
static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;
static long counted;
static atomic_long atomic_count;
static atomic_int cas_max;

static void *count_worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 20000; i++) {
		pthread_mutex_lock(&count_mu);
		counted += id + 1;
		pthread_mutex_unlock(&count_mu);
		atomic_fetch_add_explicit(&atomic_count, 1, memory_order_relaxed);
		int v = (int)(id * 100000 + i), old = atomic_load(&cas_max);
		while (v > old && !atomic_compare_exchange_weak(&cas_max, &old, v))
			;
	}
	return (void *)(id * id);
}

/* 2. A bounded queue with two condition variables. */
#define QCAP 8
static struct {
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	int items[QCAP];
	int head, len, closed;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void put(int v)
{
	pthread_mutex_lock(&q.mu);
	while (q.len == QCAP)
		pthread_cond_wait(&q.not_full, &q.mu);
	q.items[(q.head + q.len++) % QCAP] = v;
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.mu);
}

static int get(int *v)
{
	pthread_mutex_lock(&q.mu);
	while (q.len == 0 && !q.closed)
		pthread_cond_wait(&q.not_empty, &q.mu);
	if (q.len == 0) {
		pthread_mutex_unlock(&q.mu);
		return 0;
	}
	*v = q.items[q.head];
	q.head = (q.head + 1) % QCAP;
	q.len--;
	pthread_cond_signal(&q.not_full);
	pthread_mutex_unlock(&q.mu);
	return 1;
}

static void *producer(void *arg)
{
	long id = (long)arg;
	for (int i = 1; i <= 3000; i++)
		put((int)(id * 10000 + i));
	return 0;
}

struct consumed {
	long sum, n;
};

static void *consumer(void *arg)
{
	struct consumed *c = arg;
	int v;
	while (get(&v)) {
		c->sum += v;
		c->n++;
	}
	return 0;
}

/* 3. Thread-local storage and key destructors. */
static __thread int tls_counter = 100;
static __thread char tls_name[16];
static pthread_key_t key;
static atomic_int destructed;
static void key_destructor(void *p)
{
	atomic_fetch_add(&destructed, (int)(intptr_t)p);
}

static void *tls_worker(void *arg)
{
	long id = (long)arg;
	snprintf(tls_name, sizeof tls_name, "worker-%ld", id);
	for (int i = 0; i < 1000; i++)
		tls_counter++;
	pthread_setspecific(key, (void *)(intptr_t)(id + 1));
	return (void *)(intptr_t)(tls_counter * 10 + (int)strlen(tls_name));
}

/* 4. Barrier, rwlock and once. */
static pthread_barrier_t barrier;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int shared_table[64];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int once_runs;
static void init_once(void) { atomic_fetch_add(&once_runs, 1); }

static void *phase_worker(void *arg)
{
	long id = (long)arg;
	pthread_once(&once, init_once);
	for (int phase = 0; phase < 4; phase++) {
		pthread_rwlock_wrlock(&rw);
		shared_table[(id + phase * NTHREADS) % 64] += (int)id + phase;
		pthread_rwlock_unlock(&rw);
		pthread_barrier_wait(&barrier);
		pthread_rwlock_rdlock(&rw);
		int s = 0;
		for (int i = 0; i < 64; i++)
			s += shared_table[i];
		pthread_rwlock_unlock(&rw);
		(void)s;
		pthread_barrier_wait(&barrier);
	}
	return 0;
}

/* 5. Detached threads signalling completion through a semaphore-like
 * counter and a condition variable with a timeout. */
static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static int done_count;

static void *detached_worker(void *arg)
{
	usleep(1000 * (int)(long)arg);
	pthread_mutex_lock(&done_mu);
	done_count++;
	pthread_cond_broadcast(&done_cv);
	pthread_mutex_unlock(&done_mu);
	return 0;
}

/* 6. Cancellation of a thread blocked in a cancellation point. */
static atomic_int cleanup_ran;
static void cleanup(void *arg) { atomic_store(&cleanup_ran, (int)(intptr_t)arg); }
static void *cancel_victim(void *arg)
{
	(void)arg;
	pthread_cleanup_push(cleanup, (void *)7);
	for (;;)
		sleep(10);
	pthread_cleanup_pop(0);
	return 0;
}

int main(void)
{
	pthread_t th[NTHREADS];
	long joined = 0;

	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], 0, count_worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(th[i], &r);
		joined += (long)r;
	}
	printf("counters: mutex %ld atomic %ld cas-max %d joined %ld\n", counted, atomic_load(&atomic_count),
	       atomic_load(&cas_max), joined);

	pthread_t prod[3], cons[2];
	struct consumed got[2] = {{0, 0}, {0, 0}};
	for (long i = 0; i < 2; i++)
		pthread_create(&cons[i], 0, consumer, &got[i]);
	for (long i = 0; i < 3; i++)
		pthread_create(&prod[i], 0, producer, (void *)(i + 1));
	for (int i = 0; i < 3; i++)
		pthread_join(prod[i], 0);
	pthread_mutex_lock(&q.mu);
	q.closed = 1;
	pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.mu);
	for (int i = 0; i < 2; i++)
		pthread_join(cons[i], 0);
	printf("queue: consumed %ld items, sum %ld\n", got[0].n + got[1].n, got[0].sum + got[1].sum);

	pthread_key_create(&key, key_destructor);
	long tls_total = 0;
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], 0, tls_worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++) {
		void *r;
		pthread_join(th[i], &r);
		tls_total += (long)r;
	}
	printf("tls: main counter %d, workers %ld, destructors %d\n", tls_counter, tls_total, atomic_load(&destructed));

	pthread_barrier_init(&barrier, 0, NTHREADS);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], 0, phase_worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], 0);
	int table_sum = 0;
	for (int i = 0; i < 64; i++)
		table_sum += shared_table[i];
	printf("phases: table sum %d, once ran %d time(s)\n", table_sum, atomic_load(&once_runs));

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (long i = 0; i < 4; i++) {
		pthread_t d;
		pthread_create(&d, &attr, detached_worker, (void *)(i + 1));
	}
	pthread_mutex_lock(&done_mu);
	while (done_count < 4) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 5;
		if (pthread_cond_timedwait(&done_cv, &done_mu, &ts) == ETIMEDOUT)
			break;
	}
	printf("detached: %d done\n", done_count);
	pthread_mutex_unlock(&done_mu);

	/* A timed wait that must time out. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 20 * 1000 * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&done_mu);
	int rc = pthread_cond_timedwait(&done_cv, &done_mu, &ts);
	pthread_mutex_unlock(&done_mu);
	printf("timedwait: %s\n", rc == ETIMEDOUT ? "timed out" : "woken");
	rc = pthread_mutex_timedlock(&done_mu, &ts);
	printf("timedlock: %d\n", rc);
	pthread_mutex_unlock(&done_mu);

	pthread_t victim;
	pthread_create(&victim, 0, cancel_victim, 0);
	usleep(10000);
	pthread_cancel(victim);
	void *res;
	pthread_join(victim, &res);
	printf("cancel: %s, cleanup %d\n", res == PTHREAD_CANCELED ? "canceled" : "not canceled", atomic_load(&cleanup_ran));
	return 0;
}
