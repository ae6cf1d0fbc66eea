/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU accounting rules as pure functions, compiled into the BPF
 * programs and into the unit tests alike (tests/unit/test_rules.c), so the
 * rules the tests check are the rules the kernel side runs. Needs the __u32 /
 * __u64 types and enum bp_tstate (boundprof.h) before inclusion.
 *
 * A wait is classed in two steps: bp_wait_class() at the switch-out, from
 * the facts the switch shows (struct bp_switch_facts); for waits that only
 * their end can name (poll, select, epoll), bp_wake_class() at the wakeup,
 * from what the waker was doing (struct bp_wake_facts). A new kind of wait
 * adds a fact to one of the structs, set where the program gathers the
 * others, and a rule at its place in the order below.
 */
#ifndef BP_RULES_H
#define BP_RULES_H

#include "boundprof.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * An index already checked against n, bounded again right at the access:
 * 6.1's verifier loses the check when clang reloads the index from the
 * stack (compat.bpf.h's bp_bound_idx() in BPF; nothing in userspace).
 */
#ifndef BP_RULES_IDX
#define BP_RULES_IDX(i, n)	(i)
#endif

#define BP_TASK_RUNNING		0x0000
#define BP_TASK_INTERRUPTIBLE	0x0001
#define BP_TASK_UNINTERRUPTIBLE	0x0002
#define BP_TASK_DEAD		0x0080
#define BP_TASK_NOLOAD		0x0400
#define BP_TASK_RTLOCK_WAIT	0x1000

/* x86-64 system call numbers the rules look at */
#define BP_NR_READ		0
#define BP_NR_WRITE		1
#define BP_NR_POLL		7
#define BP_NR_READV		19
#define BP_NR_WRITEV		20
#define BP_NR_SELECT		23
#define BP_NR_CONNECT		42
#define BP_NR_ACCEPT		43
#define BP_NR_SENDTO		44
#define BP_NR_RECVFROM		45
#define BP_NR_SENDMSG		46
#define BP_NR_RECVMSG		47
#define BP_NR_FUTEX		202
#define BP_NR_EPOLL_WAIT	232
#define BP_NR_PSELECT6		270
#define BP_NR_PPOLL		271
#define BP_NR_ACCEPT4		288
#define BP_NR_SPLICE		275
#define BP_NR_TEE		276
#define BP_NR_VMSPLICE		278
#define BP_NR_EPOLL_PWAIT	281
#define BP_NR_RECVMMSG		299
#define BP_NR_SENDMMSG		307
#define BP_NR_EPOLL_PWAIT2	441

#define BP_FUTEX_CMD_MASK	0x7f
#define BP_FUTEX_WAIT		0
#define BP_FUTEX_LOCK_PI	6
#define BP_FUTEX_LOCK_PI2	13

/*
 * The process timeline's order of productivity: each state's rank, 0 the
 * most productive (the RANK column of bpf/wait_classes.h). The states are
 * numbered in the order they were added (the numbers are the ABI), so the
 * order is a column of its own: waiting on the network or on a pipe is
 * waiting on work in flight elsewhere, ranked with the other waits on
 * something outside the process and above sleeping (docs/offcpu.md).
 */
#define BP__TS_RANK(kind, ts, value, rank, ...)	[BP_TS_##ts] = rank,
#define BP_TS_RANK_OF { BP_WAIT_CLASSES(BP__TS_RANK) }
/* the inverse: the state of each rank, most productive first */
#define BP__TS_BY_RANK(kind, ts, value, rank, ...)	[rank] = value,
#define BP_TS_BY_RANK { BP_WAIT_CLASSES(BP__TS_BY_RANK) }

/* what a thread is switched out for (see docs/offcpu.md) */
struct bp_switch_facts {
	__u32 preempt;		/* involuntary: the task is still runnable */
	__u32 state;		/* prev_state at the switch */
	__u32 in_iowait;	/* set by io_schedule() */
	__u32 site;		/* enum bp_wsite: what its kernel stack is waiting in */
	__u64 syscall;		/* orig_ax of the user registers; ~0 without them */
	__u64 futex_op;		/* second syscall argument when syscall is futex */
	__u32 fd_kind;		/* enum bp_fd_kind of the fd the syscall names, when looked up */
	__u32 gil;		/* the futex is in a Python interpreter's GIL (bpf/python.bpf.h) */
};

/* the fd-based system calls and which way their data flows */
static __always_inline __u32 bp_syscall_dir(__u64 sys)
{
	switch (sys) {
	case BP_NR_READ:
	case BP_NR_READV:
	case BP_NR_RECVFROM:
	case BP_NR_RECVMSG:
	case BP_NR_RECVMMSG:
		return BP_DIR_IN;
	case BP_NR_WRITE:
	case BP_NR_WRITEV:
	case BP_NR_SENDTO:
	case BP_NR_SENDMSG:
	case BP_NR_SENDMMSG:
	case BP_NR_VMSPLICE:
		return BP_DIR_OUT;
	}
	return BP_DIR_NONE;
}

/* the system call names an fd as its first argument that says what it waits on */
static __always_inline int bp_fd_syscall(__u64 sys)
{
	return bp_syscall_dir(sys) != BP_DIR_NONE || sys == BP_NR_ACCEPT || sys == BP_NR_ACCEPT4 ||
	       sys == BP_NR_CONNECT;
}

/* the direction of a wait site: input, output, or neither */
static __always_inline __u32 bp_site_dir(__u32 site)
{
	switch (site) {
	case BP_WS_PIPE_IN:
	case BP_WS_NET_IN:
	case BP_WS_ACCEPT:
		return BP_DIR_IN;
	case BP_WS_PIPE_OUT:
	case BP_WS_NET_OUT:
	case BP_WS_CONNECT:
		return BP_DIR_OUT;
	}
	return BP_DIR_NONE;
}

/*
 * When the kernel stack named no site (kernel symbols not read yet, or a
 * kernel whose functions are named otherwise), the system call and the
 * type of its fd name it.
 */
static __always_inline __u32 bp_fd_site(__u64 sys, __u32 fd_kind)
{
	__u32 dir = bp_syscall_dir(sys);

	switch (sys) {
	case BP_NR_POLL:
	case BP_NR_SELECT:
	case BP_NR_PSELECT6:
	case BP_NR_PPOLL:
	case BP_NR_EPOLL_WAIT:
	case BP_NR_EPOLL_PWAIT:
	case BP_NR_EPOLL_PWAIT2:
		return BP_WS_POLL;
	}
	if (sys == BP_NR_ACCEPT || sys == BP_NR_ACCEPT4)
		return fd_kind == BP_FD_INET ? BP_WS_ACCEPT :
		       fd_kind == BP_FD_UNIX ? BP_WS_PIPE_IN : BP_WS_NONE;
	if (sys == BP_NR_CONNECT)
		return fd_kind == BP_FD_INET ? BP_WS_CONNECT :
		       fd_kind == BP_FD_UNIX ? BP_WS_PIPE_OUT : BP_WS_NONE;
	if (dir == BP_DIR_NONE)
		return BP_WS_NONE;
	if (fd_kind == BP_FD_PIPE || fd_kind == BP_FD_UNIX)
		return dir == BP_DIR_IN ? BP_WS_PIPE_IN : BP_WS_PIPE_OUT;
	if (fd_kind == BP_FD_INET)
		return dir == BP_DIR_IN ? BP_WS_NET_IN : BP_WS_NET_OUT;
	return BP_WS_NONE;
}

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
		return f->site == BP_WS_LOCK ? BP_TS_LOCK : BP_TS_OTHER;
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
		switch (f->site ? f->site : bp_fd_site(f->syscall, f->fd_kind)) {
		case BP_WS_LOCK:
			return BP_TS_LOCK;
		case BP_WS_PIPE_IN:
		case BP_WS_PIPE_OUT:
			return BP_TS_PIPE;
		case BP_WS_NET_IN:
		case BP_WS_NET_OUT:
		case BP_WS_ACCEPT:
		case BP_WS_CONNECT:
			return BP_TS_NET;
		}
		/* poll, select, epoll: sleep until their end says otherwise */
		return BP_TS_SLEEP;
	}
	return BP_TS_OTHER;
}

/* the class of this wait is decided by what ends it (bp_wake_class()) */
static __always_inline int bp_wait_pending(const struct bp_switch_facts *f, __u32 cls)
{
	return cls == BP_TS_SLEEP &&
	       (f->site ? f->site : bp_fd_site(f->syscall, f->fd_kind)) == BP_WS_POLL;
}

/* what the waker of a thread was doing (see docs/offcpu.md) */
struct bp_wake_facts {
	__u32 ctx;		/* enum bp_wctx: task, softirq, hardirq, or the idle task */
	__u32 fd_kind;		/* a waking task: enum bp_fd_kind of its syscall's fd */
};

/*
 * A poll, select or epoll wait is classed by what ended it: the network
 * receive path (a softirq), a process writing to or reading from a pipe,
 * FIFO or Unix socket, or a socket touched from a task; a timer (a
 * hardirq) or anything else leaves it a sleep.
 */
static __always_inline __u32 bp_wake_class(const struct bp_wake_facts *w)
{
	if (w->ctx == BP_WCTX_SOFTIRQ)
		return BP_TS_NET;
	if (w->ctx != BP_WCTX_TASK)
		return BP_TS_SLEEP;
	if (w->fd_kind == BP_FD_PIPE || w->fd_kind == BP_FD_UNIX)
		return BP_TS_PIPE;
	if (w->fd_kind == BP_FD_INET)
		return BP_TS_NET;
	return BP_TS_SLEEP;
}

/*
 * Which argument of a waking task's system call is the fd it touched: the
 * first, or the output of splice(2) and tee(2); -1 for other calls.
 */
static __always_inline int bp_waker_fd_arg(__u64 sys)
{
	if (bp_syscall_dir(sys) != BP_DIR_NONE)
		return 0;
	if (sys == BP_NR_SPLICE)
		return 2;
	if (sys == BP_NR_TEE)
		return 1;
	return -1;
}

/* the waker's execution context from its preempt count (x86 layout) */
#define BP_PC_SOFTIRQ_OFFSET	0x00000100U	/* serving a softirq */
#define BP_PC_HARDIRQ_MASK	0x000f0000U
#define BP_PC_NMI_MASK		0x00f00000U

static __always_inline __u32 bp_preempt_ctx(__u32 pc)
{
	if (pc & (BP_PC_HARDIRQ_MASK | BP_PC_NMI_MASK))
		return BP_WCTX_HARDIRQ;
	if (pc & BP_PC_SOFTIRQ_OFFSET)
		return BP_WCTX_SOFTIRQ;
	return BP_WCTX_TASK;
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
 * since *last to the most productive state any thread is in (BP_TS_RANK_OF),
 * or to idle when none is known, then move the clock to now.
 */
static __always_inline void bp_timeline_advance(const __u32 *cnt, __u64 *last, __u64 now,
						__u64 *ns, __u64 *idle_ns)
{
	const __u32 by_rank[BP_TS__MAX] = BP_TS_BY_RANK;
	__u32 best = BP_TS__MAX, r, s;

	/*
	 * In rank order, stopping at the first state held: one path per rank
	 * for the verifier, where keeping the best so far made one per subset
	 * of states (6,000 instructions of bp_iter_tasks; log level 2).
	 */
	for (r = 0; r < BP_TS__MAX; r++) {
		s = by_rank[r];
		if (s < BP_TS__MAX && cnt[s]) {
			best = s;
			break;
		}
	}
	if (*last && now > *last) {
		if (best < BP_TS__MAX)
			ns[BP_RULES_IDX(best, BP_TS__MAX)] += now - *last;
		else
			*idle_ns += now - *last;
	}
	if (now > *last)
		*last = now;
}

/*
 * Threads taking turns (docs/offcpu.md, agent/analyze/turns.h): of the time
 * since last, *want gets the time at least one thread of the process ran
 * while another wanted to (runnable, or waiting on a lock), and *turn the
 * part of it with exactly one running while another waited on a lock or,
 * woken from a lock wait, had not run yet (qlock of them). Call it before
 * bp_timeline_advance() moves last.
 */
static __always_inline void bp_turns_advance(const __u32 *cnt, __u32 qlock, __u64 last, __u64 now,
					     __u64 *turn, __u64 *want)
{
	__u32 r = cnt[BP_TS_RUNNING], w = r + cnt[BP_TS_RUNQUEUE] + cnt[BP_TS_LOCK];

	if (!last || now <= last || !r || w < 2)
		return;
	*want += now - last;
	if (r == 1 && cnt[BP_TS_LOCK] + qlock >= 1)
		*turn += now - last;
}

/* move one thread from state from to state to (-1: none) */
static __always_inline void bp_timeline_move(__u32 *cnt, int from, int to)
{
	if (from >= 0 && from < BP_TS__MAX && cnt[BP_RULES_IDX((__u32)from, BP_TS__MAX)])
		cnt[BP_RULES_IDX((__u32)from, BP_TS__MAX)]--;
	if (to >= 0 && to < BP_TS__MAX)
		cnt[BP_RULES_IDX((__u32)to, BP_TS__MAX)]++;
}

/*
 * A wait counted as sleep until its end named its class (a poll wait the
 * network ended): the sleep time the timeline charged while it lasted was
 * time in which every thread slept, so with this one in class to, the
 * process was in to. *moved counts sleep time moved out so far, so that
 * ns[SLEEP] + *moved is a clock of sleep time that never goes back: mark is
 * its reading when the wait began. *claimed is the reading up to which
 * sleep time was already moved, so that overlapping waits move each
 * nanosecond once.
 */
static __always_inline __u64 bp_timeline_sleep_clock(const __u64 *ns, __u64 moved)
{
	return ns[BP_TS_SLEEP] + moved;
}

static __always_inline void bp_timeline_reclass(__u64 *ns, __u64 *moved, __u64 *claimed,
						__u64 mark, __u32 to)
{
	__u64 clock = ns[BP_TS_SLEEP] + *moved, from = mark > *claimed ? mark : *claimed, d;

	if (to >= BP_TS__MAX || to == BP_TS_SLEEP || clock <= from)
		return;
	d = clock - from;
	if (d > ns[BP_TS_SLEEP])
		d = ns[BP_TS_SLEEP];
	ns[BP_TS_SLEEP] -= d;
	ns[to] += d;
	*moved += d;
	*claimed = clock;
}

#endif /* BP_RULES_H */
