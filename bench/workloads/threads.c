// threads: a multi-threaded CPU-bound workload for the speed comparison.
// Four workers hash disjoint slices of a table and merge partial results
// under a mutex every few thousand items; a producer/consumer pair hands
// blocks through a condition-variable queue; atomics count the work. The
// output is independent of the schedule.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 4
#define ITEMS (1 << 18)

static uint32_t table[ITEMS];
static pthread_mutex_t merge_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t merged;
static atomic_long work_done;
static int rounds;

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	uint64_t local = 0;
	for (int r = 0; r < rounds; r++) {
		for (int i = (int)id; i < ITEMS; i += WORKERS) {
			table[i] = mix(table[i] + (uint32_t)r);
			local += table[i] & 0xffff;
			if ((i & 4095) == (int)id) {
				pthread_mutex_lock(&merge_mu);
				merged += local;
				pthread_mutex_unlock(&merge_mu);
				local = 0;
			}
		}
		atomic_fetch_add(&work_done, ITEMS / WORKERS);
	}
	pthread_mutex_lock(&merge_mu);
	merged += local;
	pthread_mutex_unlock(&merge_mu);
	return 0;
}

#define QCAP 16
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t block[QCAP][256];
	int head, len, done;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void *producer(void *arg)
{
	(void)arg;
	uint32_t seed = 1;
	for (int b = 0; b < rounds * 200; b++) {
		pthread_mutex_lock(&q.mu);
		while (q.len == QCAP)
			pthread_cond_wait(&q.cv, &q.mu);
		uint32_t *blk = q.block[(q.head + q.len) % QCAP];
		for (int i = 0; i < 256; i++)
			blk[i] = seed = mix(seed);
		q.len++;
		pthread_cond_broadcast(&q.cv);
		pthread_mutex_unlock(&q.mu);
	}
	pthread_mutex_lock(&q.mu);
	q.done = 1;
	pthread_cond_broadcast(&q.cv);
	pthread_mutex_unlock(&q.mu);
	return 0;
}

static void *consumer(void *arg)
{
	uint64_t *sum = arg;
	for (;;) {
		pthread_mutex_lock(&q.mu);
		while (q.len == 0 && !q.done)
			pthread_cond_wait(&q.cv, &q.mu);
		if (q.len == 0) {
			pthread_mutex_unlock(&q.mu);
			return 0;
		}
		uint32_t *blk = q.block[q.head];
		for (int i = 0; i < 256; i++)
			*sum += mix(blk[i]) >> 8;
		q.head = (q.head + 1) % QCAP;
		q.len--;
		pthread_cond_broadcast(&q.cv);
		pthread_mutex_unlock(&q.mu);
	}
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < ITEMS; i++)
		table[i] = (uint32_t)i * 2654435761u;
	pthread_t th[WORKERS], p, c;
	uint64_t consumed = 0;
	pthread_create(&p, 0, producer, 0);
	pthread_create(&c, 0, consumer, &consumed);
	for (long i = 0; i < WORKERS; i++)
		pthread_create(&th[i], 0, worker, (void *)i);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], 0);
	pthread_join(p, 0);
	pthread_join(c, 0);
	printf("merged %llu consumed %llu work %ld\n", (unsigned long long)merged, (unsigned long long)consumed,
	       atomic_load(&work_done));
	return 0;
}
