// SPDX-License-Identifier: GPL-2.0
/*
 * Threads taking turns on a lock: the kernel side's overlap clock
 * (bp_turns_advance() in bpf/rules.h, the code the BPF program runs) on
 * made-up thread states, and the verdict it leads to on synthetic
 * evidence, where each thread's lock share swings as an unfair mutex makes
 * it swing between runs.
 */
#include <linux/types.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rules.h"
#include "analyze/classify.h"
#include "analyze/turns.h"

#define T0 1000000

/* the threads' states for the next dt ns: running, runnable, on a lock, woken from one */
static void step(__u32 *cnt, __u32 *qlock, __u64 *last, __u64 *now, int r, int q, int l, int ql,
		 __u64 dt, __u64 *turn, __u64 *want)
{
	cnt[BP_TS_RUNNING] = r;
	cnt[BP_TS_RUNQUEUE] = q;
	cnt[BP_TS_LOCK] = l;
	*qlock = ql;
	*now += dt;
	bp_turns_advance(cnt, *qlock, *last, *now, turn, want);
	*last = *now;
}

static void advance__counts_one_running_while_others_wait_on_the_lock(void **state)
{
	__u32 cnt[BP_TS__MAX] = { 0 }, qlock = 0;
	__u64 last = T0, now = T0, turn = 0, want = 0;

	(void)state;
	/* the holder runs, the other waits on the lock: a turn */
	step(cnt, &qlock, &last, &now, 1, 0, 1, 0, 100, &turn, &want);
	/* the waiter woken by the unlock, not yet on a CPU (an unfair mutex's futile wake) */
	step(cnt, &qlock, &last, &now, 1, 1, 0, 1, 20, &turn, &want);
	/* both run (work outside the lock): wanted, not a turn */
	step(cnt, &qlock, &last, &now, 2, 0, 0, 0, 30, &turn, &want);
	/* one runs, the other waits for a CPU it was preempted from: the machine's, not the lock's */
	step(cnt, &qlock, &last, &now, 1, 1, 0, 0, 40, &turn, &want);
	/* nobody runs: not counted at all */
	step(cnt, &qlock, &last, &now, 0, 1, 1, 0, 50, &turn, &want);
	/* one thread alone: nobody else wants to run */
	step(cnt, &qlock, &last, &now, 1, 0, 0, 0, 60, &turn, &want);
	assert_int_equal(turn, 120);
	assert_int_equal(want, 190);
}

static void advance__nothing_before_the_clock_starts(void **state)
{
	__u32 cnt[BP_TS__MAX] = { 0 };
	__u64 turn = 0, want = 0;

	(void)state;
	cnt[BP_TS_RUNNING] = 1;
	cnt[BP_TS_LOCK] = 1;
	bp_turns_advance(cnt, 0, 0, T0, &turn, &want);
	bp_turns_advance(cnt, 0, T0, T0, &turn, &want);
	bp_turns_advance(cnt, 0, T0 + 5, T0, &turn, &want);
	assert_int_equal(turn, 0);
	assert_int_equal(want, 0);
}

/*
 * Two threads on one unfair mutex for a second: 1.02 CPUs used, each
 * thread about half on-CPU, the rest of their time in the lock and woken
 * in the run queue, in proportions that move from run to run.
 */
static struct bp_evidence taking_turns(double lock_s, double rq_s)
{
	struct bp_evidence e = {
		.who = "turns",
		.wall_s = 1.0,
		.have_timeline = true,
		.on_s = 1.02,
		.lock_s = lock_s,
		.rq_s = rq_s,
		.sleep_s = 1.0,
		.threads = 3,
		.ncpus = 2,
		.machine_busy = 0.55,
		.samples = 200,
		.turns_valid = true,
		.turn_s = 0.93,
		.want_s = 0.98,
		.turn_threads = 2,
		.sibling_wake = 1.0,
		.lock_site_share = 1.0,
	};

	e.tl_s[BP_TS_RUNNING] = 1.0;
	snprintf(e.lock_site, sizeof(e.lock_site), "turns_update (turns.c:65)");
	return e;
}

static bool has_line(const struct bp_verdict *v, bool lever, const char *needle)
{
	uint32_t i, n = lever ? v->nr_levers : v->nr_evidence;

	for (i = 0; i < n; i++)
		if (strstr(lever ? v->levers[i] : v->evidence[i], needle))
			return true;
	return false;
}

static void verdict__lock_bound_high_whatever_each_lock_share(void **state)
{
	/* lock shares of busy thread-time from 25% to 45%: across the old 30% threshold */
	const double lock[] = { 0.5, 0.6, 0.7, 0.9 }, rq[] = { 0.5, 0.4, 0.3, 0.1 };
	struct bp_verdict v;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lock) / sizeof(lock[0]); i++) {
		struct bp_evidence e = taking_turns(lock[i], rq[i]);

		bp_classify(&e, NULL, &v);
		assert_int_equal(v.cls, BP_CLASS_LOCK);
		assert_int_equal(v.conf, BP_CONF_HIGH);
		assert_true(fabs(v.turn_share - 0.93 / 0.98) < 1e-9);
		assert_true(fabs(v.serial_share - 0.93) < 1e-9);
		assert_true(has_line(&v, false, "2 threads take turns on one lock (taken in "
				     "turns_update (turns.c:65))"));
		assert_true(has_line(&v, true, "1.02 of 2 CPUs used"));
		assert_true(has_line(&v, true, "More threads will not help"));
		bp_verdict_free(&v);
	}
}

static void verdict__medium_between_the_shares(void **state)
{
	struct bp_evidence e = taking_turns(0.6, 0.4);
	struct bp_verdict v;
	double share;

	(void)state;
	e.turn_s = 0.5 * e.want_s;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), BP_CONF_MEDIUM);
	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_LOCK);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);
	bp_verdict_free(&v);
	/* waits mostly ended by others than its own threads: one level less */
	e = taking_turns(0.6, 0.4);
	e.sibling_wake = 0.3;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), BP_CONF_MEDIUM);
	e.turn_s = 0.5 * e.want_s;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), -1);
}

static void verdict__not_turns(void **state)
{
	struct bp_evidence e;
	struct bp_verdict v;
	double share;

	(void)state;
	/* both threads compute side by side, a short lock now and then: cpu-bound */
	e = taking_turns(0.05, 0.0);
	e.on_s = 1.9;
	e.tl_s[BP_TS_RUNNING] = 1.0;
	e.turn_s = 0.05;
	e.want_s = 1.0;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), -1);
	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(v.turn_share == 0);
	bp_verdict_free(&v);
	/* one CPU: taking turns is all the machine allows */
	e = taking_turns(0.6, 0.4);
	e.ncpus = 1;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), -1);
	/* one thread waited on a lock: no one to take turns with */
	e = taking_turns(0.6, 0.4);
	e.turn_threads = 1;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), -1);
	/* no timeline (a saved profile from before) */
	e = taking_turns(0.6, 0.4);
	e.turns_valid = false;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), -1);
	/* turns on a Python GIL: the GIL's rule, not this one */
	e = taking_turns(0.6, 0.4);
	e.gil_s = 0.5;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), -1);
	/* threads that mostly sleep: nobody wanted the CPU */
	e = taking_turns(0.1, 0.0);
	e.on_s = 0.3;
	assert_int_equal(bp_turns_judge(&e, NULL, &share), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(advance__counts_one_running_while_others_wait_on_the_lock),
		cmocka_unit_test(advance__nothing_before_the_clock_starts),
		cmocka_unit_test(verdict__lock_bound_high_whatever_each_lock_share),
		cmocka_unit_test(verdict__medium_between_the_shares),
		cmocka_unit_test(verdict__not_turns),
	};

	return cmocka_run_group_tests_name("turns", tests, NULL, NULL);
}
