/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU accounting rules as pure functions, compiled into the BPF
 * programs and into the unit tests alike (tests/unit/test_rules.c), so the
 * rules the tests check are the rules the kernel side runs. Needs the __u32 /
 * __u64 types and enum bp_tstate (boundprof.h) before inclusion.
 */
#ifndef BP_RULES_H
#define BP_RULES_H

#include "boundprof.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define BP_TASK_RUNNING		0x0000
#define BP_TASK_INTERRUPTIBLE	0x0001
#define BP_TASK_UNINTERRUPTIBLE	0x0002
#define BP_TASK_DEAD		0x0080
#define BP_TASK_NOLOAD		0x0400
#define BP_TASK_RTLOCK_WAIT	0x1000

#define BP_NR_FUTEX		202	/* x86-64 */
#define BP_FUTEX_CMD_MASK	0x7f
#define BP_FUTEX_WAIT		0
#define BP_FUTEX_LOCK_PI	6
#define BP_FUTEX_LOCK_PI2	13

/* what a thread is switched out for (see docs/offcpu.md) */
struct bp_switch_facts {
	__u32 preempt;		/* involuntary: the task is still runnable */
	__u32 state;		/* prev_state at the switch */
	__u32 in_iowait;	/* set by io_schedule() */
	__u32 k_lock;		/* the kernel stack is in a kernel lock slow path */
	__u64 syscall;		/* orig_ax of the user registers; ~0 without them */
	__u64 futex_op;		/* second syscall argument when syscall is futex */
	__u32 gil;		/* the futex is in a Python interpreter's GIL (bpf/python.bpf.h) */
	__u32 pad;
};

static __always_inline __u32 bp_wait_class(const struct bp_switch_facts *f)
{
	if (f->preempt || f->state == BP_TASK_RUNNING)
		return BP_TS_RUNQUEUE;
	if (f->state & BP_TASK_RTLOCK_WAIT)
		return BP_TS_LOCK;
	if (f->state & BP_TASK_UNINTERRUPTIBLE) {
		if (f->in_iowait)
			return BP_TS_IO;
		/* TASK_IDLE: a kernel thread waiting for work */
		if (f->state & BP_TASK_NOLOAD)
			return BP_TS_SLEEP;
		return f->k_lock ? BP_TS_LOCK : BP_TS_OTHER;
	}
	if (f->state & BP_TASK_INTERRUPTIBLE) {
		/*
		 * glibc's mutex slow path waits with FUTEX_WAIT (or LOCK_PI);
		 * condition variables, semaphores and joins use
		 * FUTEX_WAIT_BITSET: waiting for something to happen, not for a
		 * lock. Interruptible kernel mutexes show in the kernel stack.
		 */
		if (f->syscall == BP_NR_FUTEX) {
			__u64 op = f->futex_op & BP_FUTEX_CMD_MASK;

			/* the GIL's condition variable: waiting for a lock all the same */
			if (f->gil)
				return BP_TS_LOCK;

			if (op == BP_FUTEX_WAIT || op == BP_FUTEX_LOCK_PI || op == BP_FUTEX_LOCK_PI2)
				return BP_TS_LOCK;
			return BP_TS_SLEEP;
		}
		return f->k_lock ? BP_TS_LOCK : BP_TS_SLEEP;
	}
	return BP_TS_OTHER;
}

/*
 * Split the off-CPU piece [a, b) of a thread that switched out in class cls
 * and was woken at wake (0: not yet): before the wakeup it waited in cls,
 * after it for a CPU. A preempted thread waited for a CPU all along.
 */
static __always_inline void bp_split_off(__u64 a, __u64 b, __u64 wake, __u32 cls,
					 __u64 *blocked, __u64 *runq)
{
	__u64 w = b;

	*blocked = 0;
	*runq = 0;
	if (b <= a)
		return;
	if (cls == BP_TS_RUNQUEUE)
		w = a;
	else if (wake)
		w = wake < a ? a : wake > b ? b : wake;
	*blocked = w - a;
	*runq = b - w;
}

/*
 * The process timeline: cnt[] threads are in each state; charge the time
 * since *last to the most productive state any thread is in (or to idle
 * when none is known), then move the clock to now.
 */
static __always_inline void bp_timeline_advance(const __u32 *cnt, __u64 *last, __u64 now,
						__u64 *ns, __u64 *idle_ns)
{
	__u32 best = BP_TS__MAX, i;

	for (i = 0; i < BP_TS__MAX; i++) {
		if (cnt[i]) {
			best = i;
			break;
		}
	}
	if (*last && now > *last) {
		if (best < BP_TS__MAX)
			ns[best] += now - *last;
		else
			*idle_ns += now - *last;
	}
	if (now > *last)
		*last = now;
}

/* move one thread from state from to state to (-1: none) */
static __always_inline void bp_timeline_move(__u32 *cnt, int from, int to)
{
	if (from >= 0 && from < BP_TS__MAX && cnt[from])
		cnt[from]--;
	if (to >= 0 && to < BP_TS__MAX)
		cnt[to]++;
}

#endif /* BP_RULES_H */
