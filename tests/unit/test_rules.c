// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU accounting rules (bpf/rules.h), the same code the BPF programs
 * run: wait classes (at the switch and at the wakeup), the wakeup split, and
 * the process timeline merge with its order of productivity.
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
		.preempt = preempt, .state = state, .in_iowait = iowait,
		.site = k_lock ? BP_WS_LOCK : BP_WS_NONE, .syscall = sys, .futex_op = op,
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

/* a blocking interruptible wait in syscall sys at a kernel site, with an fd of kind fd */
static __u32 site_cls(__u32 site, __u64 sys, __u32 fd)
{
	struct bp_switch_facts f = {
		.state = BP_TASK_INTERRUPTIBLE, .site = site, .syscall = sys, .fd_kind = fd,
	};

	return bp_wait_class(&f);
}

static void classify__pipes_and_unix_sockets_are_pipe(void **state)
{
	/* read() and write() blocked in pipe_read / pipe_write, a Unix socket's recv */
	assert_int_equal(site_cls(BP_WS_PIPE_IN, BP_NR_READ, 0), BP_TS_PIPE);
	assert_int_equal(site_cls(BP_WS_PIPE_OUT, BP_NR_WRITE, 0), BP_TS_PIPE);
	assert_int_equal(site_cls(BP_WS_PIPE_IN, BP_NR_RECVMSG, 0), BP_TS_PIPE);
	/* pipe_read blocked on the pipe's mutex: the lock frame is inner, it wins */
	assert_int_equal(site_cls(BP_WS_LOCK, BP_NR_READ, BP_FD_PIPE), BP_TS_LOCK);
	/* before kernel symbols: the fd tells */
	assert_int_equal(site_cls(BP_WS_NONE, BP_NR_READ, BP_FD_PIPE), BP_TS_PIPE);
	assert_int_equal(site_cls(BP_WS_NONE, BP_NR_WRITEV, BP_FD_UNIX), BP_TS_PIPE);
}

static void classify__sockets_are_net(void **state)
{
	assert_int_equal(site_cls(BP_WS_NET_IN, BP_NR_RECVFROM, 0), BP_TS_NET);
	assert_int_equal(site_cls(BP_WS_NET_OUT, BP_NR_SENDTO, 0), BP_TS_NET);
	assert_int_equal(site_cls(BP_WS_ACCEPT, 43, 0), BP_TS_NET);
	assert_int_equal(site_cls(BP_WS_CONNECT, 42, 0), BP_TS_NET);
	assert_int_equal(site_cls(BP_WS_NONE, BP_NR_READ, BP_FD_INET), BP_TS_NET);
	/* a read of a terminal or a regular file: not a pipe, not the network */
	assert_int_equal(site_cls(BP_WS_NONE, BP_NR_READ, BP_FD_OTHER), BP_TS_SLEEP);
	/* a socket wait the process is killed out of uninterruptibly: other */
	{
		struct bp_switch_facts f = { .state = BP_TASK_UNINTERRUPTIBLE,
					     .site = BP_WS_NET_IN };

		assert_int_equal(bp_wait_class(&f), BP_TS_OTHER);
	}
}

static void classify__poll_waits_are_decided_at_their_end(void **state)
{
	struct bp_switch_facts f = { .state = BP_TASK_INTERRUPTIBLE, .site = BP_WS_POLL,
				     .syscall = 232 };
	struct bp_wake_facts w = {};
	__u32 c = bp_wait_class(&f);

	/* a sleep until its waker says otherwise */
	assert_int_equal(c, BP_TS_SLEEP);
	assert_true(bp_wait_pending(&f, c));
	/* before kernel symbols, the system call says poll */
	f.site = BP_WS_NONE;
	assert_true(bp_wait_pending(&f, bp_wait_class(&f)));
	f.syscall = 7;
	assert_true(bp_wait_pending(&f, bp_wait_class(&f)));
	/* a nanosleep is never pending */
	f.syscall = 35;
	assert_false(bp_wait_pending(&f, bp_wait_class(&f)));

	w.ctx = BP_WCTX_SOFTIRQ;		/* the network receive path */
	assert_int_equal(bp_wake_class(&w), BP_TS_NET);
	w.ctx = BP_WCTX_HARDIRQ;		/* a timeout */
	assert_int_equal(bp_wake_class(&w), BP_TS_SLEEP);
	w.ctx = BP_WCTX_IDLE;
	assert_int_equal(bp_wake_class(&w), BP_TS_SLEEP);
	w.ctx = BP_WCTX_TASK;
	w.fd_kind = BP_FD_PIPE;			/* a writer into a pipe it polls */
	assert_int_equal(bp_wake_class(&w), BP_TS_PIPE);
	w.fd_kind = BP_FD_UNIX;
	assert_int_equal(bp_wake_class(&w), BP_TS_PIPE);
	w.fd_kind = BP_FD_INET;
	assert_int_equal(bp_wake_class(&w), BP_TS_NET);
	w.fd_kind = BP_FD_OTHER;		/* an eventfd, a signal */
	assert_int_equal(bp_wake_class(&w), BP_TS_SLEEP);
	w.fd_kind = BP_FD_NONE;
	assert_int_equal(bp_wake_class(&w), BP_TS_SLEEP);
}

static void wake__context_and_fd_of_the_waker(void **state)
{
	/* x86 preempt count: hardirq bits, the serving-softirq bit, bh disabled alone */
	assert_int_equal(bp_preempt_ctx(0x00010000), BP_WCTX_HARDIRQ);
	assert_int_equal(bp_preempt_ctx(0x00010100), BP_WCTX_HARDIRQ);
	assert_int_equal(bp_preempt_ctx(0x00000100), BP_WCTX_SOFTIRQ);
	assert_int_equal(bp_preempt_ctx(0x00000200), BP_WCTX_TASK);
	assert_int_equal(bp_preempt_ctx(0x80000001), BP_WCTX_TASK);
	assert_int_equal(bp_preempt_ctx(0x00100000), BP_WCTX_HARDIRQ);
	/* the fd a waker touched: the first argument, splice's and tee's output */
	assert_int_equal(bp_waker_fd_arg(BP_NR_WRITE), 0);
	assert_int_equal(bp_waker_fd_arg(BP_NR_RECVFROM), 0);
	assert_int_equal(bp_waker_fd_arg(BP_NR_SPLICE), 2);
	assert_int_equal(bp_waker_fd_arg(BP_NR_TEE), 1);
	assert_int_equal(bp_waker_fd_arg(BP_NR_FUTEX), -1);
	/* directions */
	assert_int_equal(bp_site_dir(BP_WS_PIPE_IN), BP_DIR_IN);
	assert_int_equal(bp_site_dir(BP_WS_NET_OUT), BP_DIR_OUT);
	assert_int_equal(bp_site_dir(BP_WS_POLL), BP_DIR_NONE);
	assert_int_equal(bp_fd_site(BP_NR_SENDMSG, BP_FD_INET), BP_WS_NET_OUT);
	assert_int_equal(bp_fd_site(BP_NR_READ, BP_FD_OTHER), BP_WS_NONE);
	assert_int_equal(bp_fd_site(BP_NR_FUTEX, BP_FD_PIPE), BP_WS_NONE);
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

static void timeline__net_and_pipe_rank_above_sleep_below_lock(void **state)
{
	__u64 ns[BP_TS__MAX], idle;
	/*
	 * A sleeps throughout; B waits on the network 0..30; C on a pipe
	 * 10..50; D on a lock 20..25.
	 */
	const struct change c[] = {
		{ 0, -1, BP_TS_SLEEP },
		{ 0, -1, BP_TS_NET },
		{ 10, -1, BP_TS_PIPE },
		{ 20, -1, BP_TS_LOCK },
		{ 25, BP_TS_LOCK, -1 },
		{ 30, BP_TS_NET, -1 },
		{ 50, BP_TS_PIPE, -1 },
	};
	const __u32 ranks[BP_TS__MAX] = BP_TS_RANK_OF;
	__u32 seen[BP_TS__MAX] = {}, i;

	replay(c, sizeof(c) / sizeof(c[0]), 60, ns, &idle);
	assert_int_equal(ns[BP_TS_NET], 25);
	assert_int_equal(ns[BP_TS_LOCK], 5);
	assert_int_equal(ns[BP_TS_PIPE], 20);
	assert_int_equal(ns[BP_TS_SLEEP], 10);
	/* every state has a rank, and no two the same */
	for (i = 0; i < BP_TS__MAX; i++) {
		assert_true(ranks[i] < BP_TS__MAX);
		seen[ranks[i]]++;
	}
	for (i = 0; i < BP_TS__MAX; i++)
		assert_int_equal(seen[i], 1);
}

static void timeline__reclass_moves_the_sleep_of_a_wait_once(void **state)
{
	__u32 cnt[BP_TS__MAX] = {};
	__u64 ns[BP_TS__MAX] = {}, idle = 0, last = 0, moved = 0, claimed = 0, mark_a, mark_b;

	/* A polls from 0 (counted as sleep); B polls from 10; both alone in the process */
	bp_timeline_advance(cnt, &last, T0, ns, &idle);
	bp_timeline_move(cnt, -1, BP_TS_SLEEP);
	mark_a = bp_timeline_sleep_clock(ns, moved);
	bp_timeline_advance(cnt, &last, T0 + 10, ns, &idle);
	bp_timeline_move(cnt, -1, BP_TS_SLEEP);
	mark_b = bp_timeline_sleep_clock(ns, moved);
	/* at 30 the network ends A's wait: 0..30 was A waiting on the network */
	bp_timeline_advance(cnt, &last, T0 + 30, ns, &idle);
	bp_timeline_reclass(ns, &moved, &claimed, mark_a, BP_TS_NET);
	bp_timeline_move(cnt, BP_TS_SLEEP, BP_TS_RUNQUEUE);
	assert_int_equal(ns[BP_TS_NET], 30);
	assert_int_equal(ns[BP_TS_SLEEP], 0);
	/* B's wait overlapped: its 10..30 is already claimed; 30..40 ran (A) */
	bp_timeline_advance(cnt, &last, T0 + 40, ns, &idle);
	bp_timeline_move(cnt, BP_TS_RUNQUEUE, BP_TS_SLEEP);
	bp_timeline_advance(cnt, &last, T0 + 50, ns, &idle);
	/* a pipe writer ends B's wait at 50: only 40..50 (both asleep) moves */
	bp_timeline_reclass(ns, &moved, &claimed, mark_b, BP_TS_PIPE);
	assert_int_equal(ns[BP_TS_PIPE], 10);
	assert_int_equal(ns[BP_TS_RUNQUEUE], 10);
	assert_int_equal(ns[BP_TS_SLEEP], 0);
	assert_int_equal(ns[BP_TS_NET] + ns[BP_TS_PIPE] + ns[BP_TS_RUNQUEUE] + ns[BP_TS_SLEEP], 50);
	/* the clock never goes back, and a wait ended as a sleep moves nothing */
	assert_int_equal(bp_timeline_sleep_clock(ns, moved), 40);
	bp_timeline_reclass(ns, &moved, &claimed, 0, BP_TS_SLEEP);
	assert_int_equal(ns[BP_TS_PIPE], 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classify__preempted_or_runnable__runqueue),
		cmocka_unit_test(classify__uninterruptible_iowait__io),
		cmocka_unit_test(classify__uninterruptible_without_iowait),
		cmocka_unit_test(classify__futex_mutex_is_lock_condition_is_sleep),
		cmocka_unit_test(classify__interruptible_sleeps),
		cmocka_unit_test(classify__pipes_and_unix_sockets_are_pipe),
		cmocka_unit_test(classify__sockets_are_net),
		cmocka_unit_test(classify__poll_waits_are_decided_at_their_end),
		cmocka_unit_test(wake__context_and_fd_of_the_waker),
		cmocka_unit_test(classify__stopped_and_traced__other),
		cmocka_unit_test(split__before_wakeup_blocked_after_runqueue),
		cmocka_unit_test(timeline__most_productive_state_wins),
		cmocka_unit_test(timeline__sums_to_wall_time_and_idle_when_nobody_known),
		cmocka_unit_test(timeline__stray_moves_do_not_underflow),
		cmocka_unit_test(timeline__eight_threads_on_one_lock_show_as_running),
		cmocka_unit_test(timeline__net_and_pipe_rank_above_sleep_below_lock),
		cmocka_unit_test(timeline__reclass_moves_the_sleep_of_a_wait_once),
	};

	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
