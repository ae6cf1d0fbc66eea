// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU accounting rules (bpf/rules.h), the same code the BPF programs
 * run: wait classes, the wakeup split, and the process timeline merge.
 */
#include <linux/types.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rules.h"

#define FUTEX_PRIVATE_FLAG	128
#define FUTEX_WAIT_BITSET	9
#define FUTEX_CLOCK_REALTIME	256
#define NO_SYSCALL		(~0ULL)

static __u32 cls(__u32 preempt, __u32 state, __u32 iowait, __u32 k_lock, __u64 sys, __u64 op)
{
	struct bp_switch_facts f = {
		.preempt = preempt, .state = state, .in_iowait = iowait, .k_lock = k_lock,
		.syscall = sys, .futex_op = op,
	};

	return bp_wait_class(&f);
}

static void classify__preempted_or_runnable__runqueue(void **state)
{
	assert_int_equal(cls(1, 0, 0, 0, NO_SYSCALL, 0), BP_TS_RUNQUEUE);
	/* preempted on the way to sleep: still runnable */
	assert_int_equal(cls(1, BP_TASK_INTERRUPTIBLE, 0, 0, 35, 0), BP_TS_RUNQUEUE);
	assert_int_equal(cls(0, BP_TASK_RUNNING, 0, 0, NO_SYSCALL, 0), BP_TS_RUNQUEUE);
}

static void classify__uninterruptible_iowait__io(void **state)
{
	assert_int_equal(cls(0, BP_TASK_UNINTERRUPTIBLE, 1, 0, 17, 0), BP_TS_IO);
	/* in_iowait wins over a lock frame: io_schedule() was called */
	assert_int_equal(cls(0, BP_TASK_UNINTERRUPTIBLE, 1, 1, 74, 0), BP_TS_IO);
}

static void classify__uninterruptible_without_iowait(void **state)
{
	/* kernel mutex / rwsem: the stack is in a lock slow path */
	assert_int_equal(cls(0, BP_TASK_UNINTERRUPTIBLE, 0, 1, 2, 0), BP_TS_LOCK);
	/* wait_for_completion and friends */
	assert_int_equal(cls(0, BP_TASK_UNINTERRUPTIBLE, 0, 0, 58, 0), BP_TS_OTHER);
	/* TASK_IDLE kernel threads wait for work */
	assert_int_equal(cls(0, BP_TASK_UNINTERRUPTIBLE | BP_TASK_NOLOAD, 0, 0, NO_SYSCALL, 0),
			 BP_TS_SLEEP);
}

static void classify__futex_mutex_is_lock_condition_is_sleep(void **state)
{
	/* glibc __lll_lock_wait: FUTEX_WAIT | FUTEX_PRIVATE_FLAG */
	assert_int_equal(cls(0, BP_TASK_INTERRUPTIBLE, 0, 0, BP_NR_FUTEX,
			     BP_FUTEX_WAIT | FUTEX_PRIVATE_FLAG), BP_TS_LOCK);
	assert_int_equal(cls(0, BP_TASK_INTERRUPTIBLE, 0, 0, BP_NR_FUTEX, BP_FUTEX_LOCK_PI),
			 BP_TS_LOCK);
	/* pthread_cond_wait, sem_wait, pthread_join: FUTEX_WAIT_BITSET */
	assert_int_equal(cls(0, BP_TASK_INTERRUPTIBLE, 0, 0, BP_NR_FUTEX,
			     FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME),
			 BP_TS_SLEEP);
}

static void classify__interruptible_sleeps(void **state)
{
	/* nanosleep, epoll_wait, read on a pipe */
	assert_int_equal(cls(0, BP_TASK_INTERRUPTIBLE, 0, 0, 35, 0), BP_TS_SLEEP);
	assert_int_equal(cls(0, BP_TASK_INTERRUPTIBLE, 0, 0, 232, 0), BP_TS_SLEEP);
	assert_int_equal(cls(0, BP_TASK_INTERRUPTIBLE, 0, 0, 0, 0), BP_TS_SLEEP);
	/* mutex_lock_interruptible() shows in the kernel stack */
	assert_int_equal(cls(0, BP_TASK_INTERRUPTIBLE, 0, 1, 16, 0), BP_TS_LOCK);
	/* PREEMPT_RT sleeping spinlocks */
	assert_int_equal(cls(0, BP_TASK_RTLOCK_WAIT, 0, 0, NO_SYSCALL, 0), BP_TS_LOCK);
}

static void classify__stopped_and_traced__other(void **state)
{
	assert_int_equal(cls(0, 0x0004 /* __TASK_STOPPED */, 0, 0, NO_SYSCALL, 0), BP_TS_OTHER);
	assert_int_equal(cls(0, 0x0008 /* __TASK_TRACED */, 0, 0, NO_SYSCALL, 0), BP_TS_OTHER);
}

static void split__before_wakeup_blocked_after_runqueue(void **state)
{
	__u64 b, r;

	/* slept 100..190, woken at 150: 50 in its class, 40 waiting for a CPU */
	bp_split_off(100, 190, 150, BP_TS_SLEEP, &b, &r);
	assert_int_equal(b, 50);
	assert_int_equal(r, 40);
	/* not woken yet (an open interval closed by the iterator) */
	bp_split_off(100, 190, 0, BP_TS_IO, &b, &r);
	assert_int_equal(b, 90);
	assert_int_equal(r, 0);
	/* a later piece of an interval whose wakeup came earlier: all run queue */
	bp_split_off(200, 260, 150, BP_TS_LOCK, &b, &r);
	assert_int_equal(b, 0);
	assert_int_equal(r, 60);
	/* preempted: the whole interval waits for a CPU */
	bp_split_off(100, 190, 0, BP_TS_RUNQUEUE, &b, &r);
	assert_int_equal(b, 0);
	assert_int_equal(r, 90);
	/* a wakeup stamped after the end (clock skew between CPUs) is clamped */
	bp_split_off(100, 190, 500, BP_TS_SLEEP, &b, &r);
	assert_int_equal(b + r, 90);
	bp_split_off(100, 100, 0, BP_TS_SLEEP, &b, &r);
	assert_int_equal(b + r, 0);
}

/* replay per-thread state changes and return the merged timeline */
struct change {
	__u64 t;
	int from, to;
};

/* clock readings are ns since boot, never 0 (0 means "not started") */
#define T0 1000000

static void replay(const struct change *c, int n, __u64 end, __u64 *ns, __u64 *idle)
{
	__u32 cnt[BP_TS__MAX] = {};
	__u64 last = 0;
	int i;

	memset(ns, 0, BP_TS__MAX * sizeof(*ns));
	*idle = 0;
	for (i = 0; i < n; i++) {
		bp_timeline_advance(cnt, &last, T0 + c[i].t, ns, idle);
		bp_timeline_move(cnt, c[i].from, c[i].to);
	}
	bp_timeline_advance(cnt, &last, T0 + end, ns, idle);
}

static void timeline__most_productive_state_wins(void **state)
{
	__u64 ns[BP_TS__MAX], idle;
	/*
	 * Thread A runs 0..40 then sleeps; thread B waits on IO 10..70 then
	 * runs to 100; thread C sits in a lock wait throughout.
	 */
	const struct change c[] = {
		{ 0, -1, BP_TS_RUNNING },	/* A */
		{ 0, -1, BP_TS_LOCK },		/* C */
		{ 10, -1, BP_TS_IO },		/* B */
		{ 40, BP_TS_RUNNING, BP_TS_SLEEP },
		{ 70, BP_TS_IO, BP_TS_RUNQUEUE },
		{ 75, BP_TS_RUNQUEUE, BP_TS_RUNNING },
	};

	replay(c, sizeof(c) / sizeof(c[0]), 100, ns, &idle);
	assert_int_equal(ns[BP_TS_RUNNING], 40 + 25);
	assert_int_equal(ns[BP_TS_IO], 30);
	assert_int_equal(ns[BP_TS_RUNQUEUE], 5);
	/* the lock waiter and the sleeper never show: someone better was always there */
	assert_int_equal(ns[BP_TS_LOCK], 0);
	assert_int_equal(ns[BP_TS_SLEEP], 0);
	assert_int_equal(idle, 0);
}

static void timeline__sums_to_wall_time_and_idle_when_nobody_known(void **state)
{
	__u64 ns[BP_TS__MAX], idle, sum = 0;
	const struct change c[] = {
		{ 5, -1, BP_TS_SLEEP },
		{ 20, BP_TS_SLEEP, -1 },	/* exits */
		{ 30, -1, BP_TS_RUNQUEUE },	/* a new thread */
		{ 31, BP_TS_RUNQUEUE, BP_TS_RUNNING },
	};
	int i;

	replay(c, sizeof(c) / sizeof(c[0]), 50, ns, &idle);
	for (i = 0; i < BP_TS__MAX; i++)
		sum += ns[i];
	assert_int_equal(ns[BP_TS_SLEEP], 15);
	assert_int_equal(idle, 10);
	assert_int_equal(ns[BP_TS_RUNQUEUE], 1);
	assert_int_equal(ns[BP_TS_RUNNING], 19);
	assert_int_equal(sum + idle, 50 - 5);
}

static void timeline__stray_moves_do_not_underflow(void **state)
{
	__u32 cnt[BP_TS__MAX] = {};

	/* a thread we never counted leaving a state must not wrap the count */
	bp_timeline_move(cnt, BP_TS_IO, BP_TS_RUNNING);
	assert_int_equal(cnt[BP_TS_IO], 0);
	assert_int_equal(cnt[BP_TS_RUNNING], 1);
	bp_timeline_move(cnt, -1, BP_TS__MAX);
	bp_timeline_move(cnt, BP_TS__MAX + 3, -1);
	assert_int_equal(cnt[BP_TS_RUNNING], 1);
}

static void timeline__eight_threads_on_one_lock_show_as_running(void **state)
{
	__u64 ns[BP_TS__MAX], idle;
	struct change c[16];
	int i, n = 0;

	/* one holds the lock and runs, seven wait; every 10 the holder changes */
	c[n++] = (struct change){ 0, -1, BP_TS_RUNNING };
	for (i = 1; i < 8; i++)
		c[n++] = (struct change){ 0, -1, BP_TS_LOCK };
	for (i = 1; i <= 4; i++) {
		c[n++] = (struct change){ i * 10, BP_TS_RUNNING, BP_TS_LOCK };
		c[n++] = (struct change){ i * 10, BP_TS_LOCK, BP_TS_RUNNING };
	}
	replay(c, n, 50, ns, &idle);
	assert_int_equal(ns[BP_TS_RUNNING], 50);
	assert_int_equal(ns[BP_TS_LOCK], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classify__preempted_or_runnable__runqueue),
		cmocka_unit_test(classify__uninterruptible_iowait__io),
		cmocka_unit_test(classify__uninterruptible_without_iowait),
		cmocka_unit_test(classify__futex_mutex_is_lock_condition_is_sleep),
		cmocka_unit_test(classify__interruptible_sleeps),
		cmocka_unit_test(classify__stopped_and_traced__other),
		cmocka_unit_test(split__before_wakeup_blocked_after_runqueue),
		cmocka_unit_test(timeline__most_productive_state_wins),
		cmocka_unit_test(timeline__sums_to_wall_time_and_idle_when_nobody_known),
		cmocka_unit_test(timeline__stray_moves_do_not_underflow),
		cmocka_unit_test(timeline__eight_threads_on_one_lock_show_as_running),
	};

	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
