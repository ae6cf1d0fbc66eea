// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counters: metrics from recorded counter values, multiplexing
 * scale-up, bp_pmu__new() agreeing with bp_pmu_available() on this machine,
 * and the counting machinery (threads, inheritance, reads) driven with
 * software events, which every kernel has.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/pmu.h"

/* Debian 12's cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

static void assert_finite_metrics(const struct bp_pmu_metrics *x)
{
	assert_true(isfinite(x->ipc));
	assert_true(isfinite(x->mpki));
	assert_true(isfinite(x->dram_gbs));
	assert_true(isfinite(x->running_frac));
}

/* cycles, instructions, misses as perf stat reported them for a compute loop */
static void metrics__compute_loop__high_ipc_low_mpki(void **state)
{
	struct bp_pmu_counts c = {
		.cycles = 4000000000ULL, .instructions = 9600000000ULL,
		.cache_misses = 1200000ULL, .enabled_ns = 1000000000ULL,
		.running_ns = 1000000000ULL, .valid = true,
	};
	struct bp_pmu_metrics x;

	bp_pmu_metrics(&c, 1.0, &x);
	assert_near(x.ipc, 2.4, 1e-12);
	assert_near(x.mpki, 0.125, 1e-12);
	assert_near(x.dram_gbs, 0.0768, 1e-12);
	assert_near(x.running_frac, 1.0, 0);
	assert_false(x.scaled);
	assert_false(x.misses_unknown);
}

/* a STREAM triad over 1 s: few instructions per cycle, one miss per ~11 instructions */
static void metrics__stream_triad__low_ipc_high_mpki_bandwidth(void **state)
{
	struct bp_pmu_counts c = {
		.cycles = 4000000000ULL, .instructions = 1600000000ULL,
		.cache_misses = 150000000ULL, .enabled_ns = 1000000000ULL,
		.running_ns = 1000000000ULL, .valid = true,
	};
	struct bp_pmu_metrics x;

	bp_pmu_metrics(&c, 1.0, &x);
	assert_near(x.ipc, 0.4, 1e-12);
	assert_near(x.mpki, 93.75, 1e-9);
	assert_near(x.dram_gbs, 9.6, 1e-9);
	/* over 2 s the same misses are half the bandwidth */
	bp_pmu_metrics(&c, 2.0, &x);
	assert_near(x.dram_gbs, 4.8, 1e-9);
}

/* the PMU was shared: counting ran half the enabled time */
static void metrics__multiplexed_halves__scaled_and_running_frac(void **state)
{
	struct bp_pmu_counts c = {
		.cycles = 4000000000ULL, .instructions = 1600000000ULL,
		.cache_misses = 150000000ULL, .enabled_ns = 2000000000ULL,
		.running_ns = 1000000000ULL, .valid = true,
	};
	struct bp_pmu_metrics x;

	bp_pmu_metrics(&c, 2.0, &x);
	assert_true(x.scaled);
	assert_near(x.running_frac, 0.5, 0);
	/* ratios of scaled counts are unchanged */
	assert_near(x.ipc, 0.4, 1e-12);
	assert_near(x.mpki, 93.75, 1e-9);

	/* one group multiplexed while another ran all the time: still scaled */
	c.running_ns = c.enabled_ns;
	c.scaled = true;
	bp_pmu_metrics(&c, 2.0, &x);
	assert_true(x.scaled);
	assert_near(x.running_frac, 1.0, 0);
}

static void metrics__zeros__no_nan_or_inf(void **state)
{
	struct bp_pmu_counts c = { .valid = true };
	struct bp_pmu_metrics x;

	bp_pmu_metrics(&c, 0, &x);
	assert_finite_metrics(&x);
	assert_near(x.ipc, 0, 0);
	assert_near(x.mpki, 0, 0);
	assert_near(x.dram_gbs, 0, 0);
	assert_near(x.running_frac, 0, 0);
	assert_false(x.scaled);

	/* misses without instructions or cycles, over a negative window */
	c.cache_misses = 1000;
	bp_pmu_metrics(&c, -1.0, &x);
	assert_finite_metrics(&x);
	assert_near(x.mpki, 0, 0);
	assert_near(x.dram_gbs, 0, 0);

	/* enabled but never running (the group never got on the PMU) */
	c = (struct bp_pmu_counts){ .enabled_ns = 1000, .valid = true };
	bp_pmu_metrics(&c, 1.0, &x);
	assert_finite_metrics(&x);
	assert_true(x.scaled);
	assert_near(x.running_frac, 0, 0);

	/* the largest counts stay finite */
	c = (struct bp_pmu_counts){ .cycles = 1, .instructions = UINT64_MAX,
				    .cache_misses = UINT64_MAX, .enabled_ns = UINT64_MAX,
				    .running_ns = UINT64_MAX, .valid = true };
	bp_pmu_metrics(&c, 1e-300, &x);
	assert_finite_metrics(&x);
}

static void metrics__invalid_or_misses_unknown(void **state)
{
	struct bp_pmu_counts c = {
		.cycles = 4000000000ULL, .instructions = 9600000000ULL,
		.cache_misses = 1200000ULL, .enabled_ns = 1, .running_ns = 1,
	};
	struct bp_pmu_metrics x;

	/* not valid: nothing is derived */
	bp_pmu_metrics(&c, 1.0, &x);
	assert_near(x.ipc, 0, 0);
	assert_near(x.running_frac, 0, 0);

	/* misses not counted: IPC still stands, mpki and bandwidth are 0 and flagged */
	c.valid = true;
	c.misses_unknown = true;
	bp_pmu_metrics(&c, 1.0, &x);
	assert_near(x.ipc, 2.4, 1e-12);
	assert_true(x.misses_unknown);
	assert_near(x.mpki, 0, 0);
	assert_near(x.dram_gbs, 0, 0);
}

static void scale__by_enabled_over_running(void **state)
{
	assert_int_equal(bp_pmu_scale(1000, 10, 10), 1000);
	assert_int_equal(bp_pmu_scale(1000, 10, 5), 2000);
	assert_int_equal(bp_pmu_scale(1000, 30, 10), 3000);
	/* never ran: nothing known, not a division by zero */
	assert_int_equal(bp_pmu_scale(0, 10, 0), 0);
	assert_int_equal(bp_pmu_scale(7, 0, 0), 0);
	/* running can round past enabled: never scale down */
	assert_int_equal(bp_pmu_scale(1000, 10, 11), 1000);
	/* value * enabled does not overflow 64 bits */
	assert_true(bp_pmu_scale(UINT64_MAX / 2, 3000000000ULL, 1000000000ULL) == UINT64_MAX);
	assert_true(bp_pmu_scale(1ULL << 62, 4000000000ULL, 2000000000ULL) == 1ULL << 63);
}

static volatile uint64_t sink;

/* CPU time of the calling thread */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* s seconds of CPU time in this thread, however many CPUs there are */
static void burn(double s)
{
	double end = cpu_now() + s;
	uint64_t x = sink;
	long i;

	while (cpu_now() < end)
		for (i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

/* the object under test, freed in teardown even when an assertion fails */
static struct bp_pmu *m;

static int free_pmu(void **state)
{
	bp_pmu__free(m);
	m = NULL;
	return 0;
}

/* the real PMU where there is one; on this guest a clear "no PMU" */
static void new__agrees_with_available(void **state)
{
	struct bp_pmu_counts c;
	struct bp_pmu_metrics x;
	bool avail = bp_pmu_available();

	errno = 0;
	m = bp_pmu__new();
	if (!avail) {
		fprintf(stderr, "no hardware PMU here: bp_pmu__new() -> NULL, errno %d (%s)\n",
			errno, strerror(errno));
		assert_null(m);
		assert_true(errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV);
		return;
	}
	assert_non_null(m);
	assert_int_equal(bp_pmu__add(m, getpid()), 0);
	burn(0.2);
	assert_int_equal(bp_pmu__read(m, getpid(), &c), 0);
	bp_pmu_metrics(&c, 0.2, &x);
	fprintf(stderr, "own loop: cycles %llu instructions %llu misses %llu ipc %.2f\n",
		(unsigned long long)c.cycles, (unsigned long long)c.instructions,
		(unsigned long long)c.cache_misses, x.ipc);
	assert_true(c.valid);
	assert_true(c.cycles > 0);
	assert_true(c.instructions > 0);
	assert_true(x.ipc > 0);
}

/* software stand-ins: task-clock (ns on CPU), context switches, page faults */
static const uint64_t soft_events[3] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS,
};

static void fault_pages(size_t pages)
{
	size_t len = pages * 4096, i;
	volatile char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	/* no huge pages: one fault per page */
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len; i += 4096)
		p[i] = 1;
	munmap((void *)p, len);
}

static void soft__own_process__counts_cpu_time_and_faults(void **state)
{
	struct bp_pmu_counts c;
	struct bp_pmu_metrics x;

	m = bp_pmu__new_events(PERF_TYPE_SOFTWARE, soft_events);
	assert_non_null(m);
	assert_int_equal(bp_pmu__add(m, getpid()), 0);
	burn(0.2);
	fault_pages(2000);
	assert_int_equal(bp_pmu__read(m, getpid(), &c), 0);
	fprintf(stderr, "soft: task-clock %llu ns, page faults %llu, enabled %llu running %llu\n",
		(unsigned long long)c.cycles, (unsigned long long)c.cache_misses,
		(unsigned long long)c.enabled_ns, (unsigned long long)c.running_ns);
	assert_true(c.valid);
	assert_false(c.misses_unknown);
	assert_true(c.cycles >= 150000000ULL);
	assert_true(c.cache_misses >= 2000);
	assert_true(c.enabled_ns >= 150000000ULL);
	/* software events are never multiplexed */
	assert_false(c.scaled);
	assert_true(c.running_ns == c.enabled_ns);
	bp_pmu_metrics(&c, 0.2, &x);
	assert_false(x.scaled);
	assert_near(x.running_frac, 1.0, 0);
	/* counting goes on */
	burn(0.1);
	{
		struct bp_pmu_counts c2;

		assert_int_equal(bp_pmu__read(m, getpid(), &c2), 0);
		assert_true(c2.cycles >= c.cycles + 50000000ULL);
	}
}

static void *burn_thread(void *arg)
{
	burn(*(double *)arg);
	return NULL;
}

/* threads and child processes created after bp_pmu__add() are counted (inherit) */
static void soft__new_threads_and_children__inherited(void **state)
{
	double s = 0.2;
	struct bp_pmu_counts c;
	pthread_t t;
	pid_t child;
	int status;

	m = bp_pmu__new_events(PERF_TYPE_SOFTWARE, soft_events);
	assert_non_null(m);
	assert_int_equal(bp_pmu__add(m, getpid()), 0);
	assert_int_equal(pthread_create(&t, NULL, burn_thread, &s), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		burn(0.2);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(bp_pmu__read(m, getpid(), &c), 0);
	fprintf(stderr, "inherit: task-clock %llu ns over thread + child\n",
		(unsigned long long)c.cycles);
	/* 0.2 s in the thread and 0.2 s in the child; we only waited */
	assert_true(c.cycles >= 350000000ULL);
}

static pthread_barrier_t go;

static void *wait_then_burn(void *arg)
{
	pthread_barrier_wait(&go);
	burn(*(double *)arg);
	return NULL;
}

/* like -p PID: threads that exist already are opened one by one and summed */
static void soft__existing_threads__summed(void **state)
{
	double s = 0.2;
	struct bp_pmu_counts c;
	pthread_t t[3];
	int i;

	m = bp_pmu__new_events(PERF_TYPE_SOFTWARE, soft_events);
	assert_non_null(m);
	assert_int_equal(pthread_barrier_init(&go, NULL, 4), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&t[i], NULL, wait_then_burn, &s), 0);
	assert_int_equal(bp_pmu__add(m, getpid()), 0);
	pthread_barrier_wait(&go);
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	pthread_barrier_destroy(&go);
	assert_int_equal(bp_pmu__read(m, getpid(), &c), 0);
	fprintf(stderr, "threads: task-clock %llu ns over 3 threads\n",
		(unsigned long long)c.cycles);
	/* 3 x 0.2 s of CPU time, on 2 vCPUs or fewer */
	assert_true(c.cycles >= 550000000ULL);
}

/* the third event does not open: the group is kept and misses are unknown */
static void soft__misses_event_missing__group_kept(void **state)
{
	const uint64_t ev[3] = {
		PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
		PERF_COUNT_SW_MAX + 50,
	};
	struct bp_pmu_counts c;
	struct bp_pmu_metrics x;

	m = bp_pmu__new_events(PERF_TYPE_SOFTWARE, ev);
	assert_non_null(m);
	assert_int_equal(bp_pmu__add(m, getpid()), 0);
	burn(0.05);
	assert_int_equal(bp_pmu__read(m, getpid(), &c), 0);
	assert_true(c.valid);
	assert_true(c.misses_unknown);
	assert_true(c.cycles > 0);
	assert_int_equal(c.cache_misses, 0);
	bp_pmu_metrics(&c, 0.05, &x);
	assert_true(x.misses_unknown);
	assert_near(x.mpki, 0, 0);
}

static void soft__errors(void **state)
{
	const uint64_t bad[3] = { PERF_COUNT_SW_MAX + 50, 0, 0 };
	struct bp_pmu_counts c;
	pid_t gone;
	int status;

	errno = 0;
	assert_null(bp_pmu__new_events(PERF_TYPE_SOFTWARE, bad));
	assert_int_not_equal(errno, 0);
	bp_pmu__free(NULL);

	m = bp_pmu__new_events(PERF_TYPE_SOFTWARE, soft_events);
	assert_non_null(m);
	/* a pid that has exited and been reaped */
	gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, &status, 0), gone);
	assert_int_equal(bp_pmu__add(m, gone), -ESRCH);
	assert_int_equal(bp_pmu__add(m, 0), -EINVAL);
	assert_int_equal(bp_pmu__add(m, -1), -EINVAL);
	/* never added */
	assert_int_equal(bp_pmu__read(m, getpid(), &c), -ENOENT);
	assert_false(c.valid);
	assert_int_equal(bp_pmu__add(m, getpid()), 0);
	assert_int_equal(bp_pmu__add(m, getpid()), -EEXIST);
	assert_int_equal(bp_pmu__read(m, getpid(), &c), 0);
	assert_true(c.valid);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* three fds per thread, all closed by bp_pmu__free() */
static void soft__free__closes_every_fd(void **state)
{
	int before = open_fds();

	m = bp_pmu__new_events(PERF_TYPE_SOFTWARE, soft_events);
	assert_non_null(m);
	assert_int_equal(bp_pmu__add(m, getpid()), 0);
	assert_int_equal(open_fds(), before + 3);
	bp_pmu__free(m);
	m = NULL;
	assert_int_equal(open_fds(), before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metrics__compute_loop__high_ipc_low_mpki),
		cmocka_unit_test(metrics__stream_triad__low_ipc_high_mpki_bandwidth),
		cmocka_unit_test(metrics__multiplexed_halves__scaled_and_running_frac),
		cmocka_unit_test(metrics__zeros__no_nan_or_inf),
		cmocka_unit_test(metrics__invalid_or_misses_unknown),
		cmocka_unit_test(scale__by_enabled_over_running),
		cmocka_unit_test_teardown(new__agrees_with_available, free_pmu),
		cmocka_unit_test_teardown(soft__own_process__counts_cpu_time_and_faults, free_pmu),
		cmocka_unit_test_teardown(soft__new_threads_and_children__inherited, free_pmu),
		cmocka_unit_test_teardown(soft__existing_threads__summed, free_pmu),
		cmocka_unit_test_teardown(soft__misses_event_missing__group_kept, free_pmu),
		cmocka_unit_test_teardown(soft__errors, free_pmu),
		cmocka_unit_test_teardown(soft__free__closes_every_fd, free_pmu),
	};

	return cmocka_run_group_tests_name("pmu", tests, NULL, NULL);
}
