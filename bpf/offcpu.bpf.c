// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU time and wall-clock accounting from context switches.
 *
 * Every tracked thread is, at each moment, in one state (enum bp_tstate):
 * running, waiting for a CPU, or blocked in one of the wait classes. The
 * programs keep that state in task local storage, add each off-CPU interval
 * (switch-out to switch-in) to the off-CPU map under the thread's stacks at
 * switch-out, and keep, per process, how many of its threads are in each
 * state: the process timeline takes at every moment the most productive of
 * them (see docs/offcpu.md).
 *
 * Intervals still open when userspace drains (a thread asleep for the whole
 * window) are closed up to "now" by the task iterator, which also reports
 * each thread's and process's cumulative totals.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bits.bpf.h"
#include "common.bpf.h"
#include "compat.bpf.h"
#include "rules.h"
#include "stacks.bpf.h"
#include "python.bpf.h"

#define PF_KTHREAD		0x00200000


#define MAX_LOCK_RANGES		32
/* the first frames are the BPF trampoline and __schedule; lock slow paths follow */
#define LOCK_SCAN_FRAMES	10

/* thread local state; the stacks are kept so they can be stored again after a flip */
struct bp_tls {
	__u64 off_ts;		/* start of the open off-CPU piece, 0: on a CPU */
	__u64 on_ts;		/* start of the open on-CPU piece, 0: off */
	__u64 wake_ts;		/* woken at, during the current off interval; 0: not yet */
	__u64 start_ns;		/* first seen (created, or found at the start) */
	__u64 oncpu_ns;
	__u64 switches;
	__u64 wakeups;
	__u64 wake_lat_ns;
	__u64 wake_lat_max;
	__u64 wake_hist[BP_HIST_SLOTS];
	__u64 kstack, ustack;	/* hashes of the stacks at switch-out */
	__u64 uc_ip, uc_sp, uc_bp;	/* user registers the cached stacks were taken at */
	__u64 kc_sys;		/* syscall (orig_ax) the cached kernel stack was taken in */
	__u32 kc_state;		/* task state it was taken in */
	__u32 kc_valid;
	__u32 k_lock;		/* the kernel stack is in a kernel lock slow path */
	__u32 nostack;		/* this off-CPU piece is charged without stacks */
	__u32 off_class;	/* class of the current off-CPU interval */
	__u32 state;		/* state counted in the process timeline */
	__u32 known;		/* state is valid and counted */
	__u32 stored;		/* buffer index + 1 the stacks were last stored in */
	__u32 tgid;
	__u32 gil;		/* the current off-CPU interval waits for a Python GIL */
	struct bp_stack kst;
	struct bp_stack ust;
};

/* process local state, in the thread-group leader's storage */
struct bp_pls {
	struct bpf_spin_lock lock;
	__u32 cnt[BP_TS__MAX];
	__u64 last;
	__u64 ns[BP_TS__MAX];
	__u64 idle_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bp_tls);
} tls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bp_pls);
} pls SEC(".maps");

struct bp_off_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* sized from userspace */
	__type(key, struct bp_off_key);
	__type(value, struct bp_off_val);
};

struct bp_off_map off0 SEC(".maps");
struct bp_off_map off1 SEC(".maps");

/* totals of threads and processes that exited, until userspace collects them */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct bp_thr_rec);
} thr_exit SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct bp_proc_rec);
} proc_exit SEC(".maps");

/*
 * Records are too big for the 512-byte BPF stack. Programs can be preempted
 * by others on the same CPU, so each run takes its own slot.
 */
#define REC_SLOTS 4

struct bp_rec_scratch {
	__u32 depth;
	__u32 pad;
	struct {
		struct bp_thr_rec t;
		struct bp_proc_rec p;
	} slot[REC_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_rec_scratch);
} rec_scratch SEC(".maps");

static __always_inline struct bp_rec_scratch *scratch_enter(__u32 *slot)
{
	__u32 zero = 0;
	struct bp_rec_scratch *sc = bpf_map_lookup_elem(&rec_scratch, &zero);

	if (!sc)
		return NULL;
	*slot = __sync_fetch_and_add(&sc->depth, 1);
	if (*slot >= REC_SLOTS) {
		__sync_fetch_and_add(&sc->depth, -1);
		return NULL;
	}
	return sc;
}

static __always_inline void scratch_exit(struct bp_rec_scratch *sc)
{
	__sync_fetch_and_add(&sc->depth, -1);
}

/* user stacks at switch-out: 0 never, 1 for targeted processes only, 2 always */
const volatile __u8 offcpu_ustacks = 2;

/*
 * Stacks for preemptions too. A preempted thread was running: where it
 * stood is what the on-CPU samples already show, and a busy thread is
 * preempted at a new place each time, so every such switch misses the
 * same-site cache and pays both walks. The agent turns this off.
 */
const volatile __u8 offcpu_preempt_stacks = 1;

/*
 * Kernel lock slow paths (mutex, rwsem, semaphore) from kallsyms. Written
 * by userspace after load, once it has read kallsyms: until then, kernel
 * lock waits count as "other".
 */
volatile __u32 nr_lock_ranges;
volatile __u64 lock_lo[MAX_LOCK_RANGES];
volatile __u64 lock_hi[MAX_LOCK_RANGES];

static __always_inline bool in_lock_code(__u64 ip)
{
	__u32 i;

	for (i = 0; i < MAX_LOCK_RANGES && i < nr_lock_ranges; i++)
		if (ip >= lock_lo[i] && ip < lock_hi[i])
			return true;
	return false;
}

static __always_inline bool kstack_in_lock(const struct bp_stack *st)
{
	__u32 i;

	for (i = 0; i < LOCK_SCAN_FRAMES; i++) {
		if (i >= st->nr)
			break;
		if (in_lock_code(st->ips[i]))
			return true;
	}
	return false;
}

/*
 * Move one thread of the process led by @leader from state @from to @to
 * (-1: none), first charging the time since the last change to the state
 * the process was in.
 */
static __always_inline void ptl_move(struct task_struct *leader, int from, int to, __u64 now)
{
	struct bp_pls *ps;

	ps = bpf_task_storage_get(&pls, leader, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ps) {
		stat_inc(BP_STAT_PSTATE_FULL);
		return;
	}
	bpf_spin_lock(&ps->lock);
	bp_timeline_advance(ps->cnt, &ps->last, now, ps->ns, &ps->idle_ns);
	bp_timeline_move(ps->cnt, from, to);
	bpf_spin_unlock(&ps->lock);
}

static __always_inline void set_state(struct task_struct *t, struct bp_tls *st, int to, __u64 now)
{
	ptl_move(t->group_leader, st->known ? (int)st->state : -1, to, now);
	st->state = to;
	st->known = 1;
}

static __always_inline void off_add(void *map, struct bp_off_key *k, __u64 ns)
{
	struct bp_off_val *v, init = { .ns = ns, .count = 1 };
	long err;

	v = bpf_map_lookup_elem(map, k);
	if (v) {
		__sync_fetch_and_add(&v->ns, ns);
		__sync_fetch_and_add(&v->count, 1);
		return;
	}
	err = bpf_map_update_elem(map, k, &init, BPF_NOEXIST);
	if (err == -EEXIST) {
		v = bpf_map_lookup_elem(map, k);
		if (v) {
			__sync_fetch_and_add(&v->ns, ns);
			__sync_fetch_and_add(&v->count, 1);
		}
	} else if (err) {
		stat_inc(BP_STAT_OFF_MAP_FULL);
	}
}

/* make sure the thread's stacks are in the buffer being written */
static __always_inline void store_stacks(struct bp_tls *st, __u32 idx)
{
	void *km = idx ? (void *)&kstacks1 : (void *)&kstacks0;
	void *um = idx ? (void *)&ustacks1 : (void *)&ustacks0;
	long err;

	if (st->stored == idx + 1)
		return;
	if (st->kstack) {
		err = bpf_map_update_elem(km, &st->kstack, &st->kst, BPF_NOEXIST);
		if (err && err != -EEXIST)
			stat_inc(BP_STAT_STACK_FULL);
	}
	if (st->ustack) {
		err = bpf_map_update_elem(um, &st->ustack, &st->ust, BPF_NOEXIST);
		if (err && err != -EEXIST)
			stat_inc(BP_STAT_STACK_FULL);
	}
	st->stored = idx + 1;
}

/*
 * Charge the off-CPU piece [a, b) of a thread: the part before its wakeup to
 * the class it blocked in, the part after to the run queue.
 */
static __always_inline void account_off(struct bp_tls *st, __u32 tid, __u64 a, __u64 b)
{
	__u32 idx = buf_idx & 1;
	void *map = idx ? (void *)&off1 : (void *)&off0;
	struct bp_off_key k = {};
	__u64 blocked, runq;

	bp_split_off(a, b, st->wake_ts, st->off_class, &blocked, &runq);
	if (!blocked && !runq)
		return;
	k.tgid = st->tgid;
	k.tid = tid;
	if (!st->nostack) {
		store_stacks(st, idx);
		k.kstack = st->kstack;
		k.ustack = st->ustack;
	}
	if (blocked) {
		k.state = st->off_class;
		k.flags = st->gil ? BP_OFF_GIL : 0;
		off_add(map, &k, blocked);
	}
	if (runq) {
		k.state = BP_TS_RUNQUEUE;
		k.flags = 0;
		off_add(map, &k, runq);
	}
}

static __always_inline __u32 classify(struct task_struct *prev, bool preempt, __u32 prev_state,
				      struct bp_tls *st, struct pt_regs *regs)
{
	struct bp_switch_facts f = {
		.preempt = preempt,
		.state = prev_state,
		.k_lock = st->k_lock,
		.syscall = regs ? regs->orig_ax : ~0ULL,
		.futex_op = regs ? regs->si : 0,
	};

	if (prev_state & BP_TASK_UNINTERRUPTIBLE)
		f.in_iowait = BPF_CORE_READ_BITFIELD(prev, in_iowait);
	f.gil = st->gil = py_gil_wait(prev->tgid, regs);
	return bp_wait_class(&f);
}

static __always_inline __u64 hash_into(struct bp_stack *st, long n)
{
	if (n <= 0)
		return 0;
	st->nr = n / sizeof(__u64);
	st->pad = 0;
	return hash_stack(st);
}

static __always_inline void take_stacks(void *ctx, struct task_struct *prev, struct bp_tls *st,
					struct pt_regs *regs, __u32 prev_state, bool user)
{
	bool same_site;
	long n;

	st->nostack = 0;
	/*
	 * A thread that blocks again from the same user call site (same ip,
	 * stack pointer and frame pointer), in the same syscall and state,
	 * has the same stacks: reuse them and skip both walks. The kernel
	 * walk costs ~1 us per switch; the user walk's final faulting read
	 * costs microseconds in a guest. A blocking path that differs only
	 * inside the kernel for the same site, syscall and state is the one
	 * case this gets wrong (docs/offcpu.md).
	 */
	same_site = regs && st->kc_valid && regs->ip == st->uc_ip && regs->sp == st->uc_sp &&
		    regs->bp == st->uc_bp && regs->orig_ax == st->kc_sys &&
		    prev_state == st->kc_state;
	if (same_site && (st->ustack || !user)) {
		stat_inc(BP_STAT_STACKS_CACHED);
		return;
	}

	n = bpf_get_stack(ctx, st->kst.ips, sizeof(st->kst.ips), 0);
	if (n < 0 && n != -EFAULT)
		stat_inc(BP_STAT_KSTACK_ERR);
	st->kstack = hash_into(&st->kst, n);
	st->stored = 0;
	st->kc_valid = 0;
	/* only blocking switches can be lock waits: spare preemptions the scan */
	st->k_lock = prev_state && kstack_in_lock(&st->kst);

	if (!regs || (prev->flags & PF_KTHREAD)) {
		st->ustack = 0;
		return;
	}
	st->uc_ip = regs->ip;
	st->uc_sp = regs->sp;
	st->uc_bp = regs->bp;
	st->kc_sys = regs->orig_ax;
	st->kc_state = prev_state;
	st->kc_valid = 1;
	if (!user) {
		st->ustack = 0;
		return;
	}
	n = bpf_get_stack(ctx, st->ust.ips, sizeof(st->ust.ips), BPF_F_USER_STACK);
	if (n < 0 && n != -EFAULT)
		stat_inc(BP_STAT_USTACK_ERR);
	st->ustack = hash_into(&st->ust, n);
}

static __always_inline struct bp_tls *tls_get(struct task_struct *t, __u64 now)
{
	struct bp_tls *st = bpf_task_storage_get(&tls, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!st) {
		stat_inc(BP_STAT_TSTORE_FAIL);
		return NULL;
	}
	if (!st->start_ns) {
		st->start_ns = now;
		st->tgid = t->tgid;
	}
	return st;
}

/* the kernel passes prev_state to sched_switch (5.18+): see compat.bpf.h */
const volatile __u8 switch_has_prev_state = 1;

SEC("?tp_btf/sched_switch")
int BPF_PROG(bp_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	unsigned int prev_state = bp_switch_prev_state(ctx, prev);
	__u64 now = bpf_ktime_get_ns(), old;
	struct bp_tls *st;

	if (prev->pid && is_target(prev->tgid) && !(prev_state & BP_TASK_DEAD)) {
		st = tls_get(prev, now);
		if (st) {
			struct pt_regs *regs = NULL;
			bool user = offcpu_ustacks == 2 ||
				    (offcpu_ustacks == 1 && filter_targets);

			stat_inc(BP_STAT_SWITCHES);
			old = __sync_lock_test_and_set(&st->on_ts, 0);
			if (old && now > old)
				__sync_fetch_and_add(&st->oncpu_ns, now - old);
			st->switches++;
			if (!(prev->flags & PF_KTHREAD))
				regs = (struct pt_regs *)bpf_task_pt_regs(prev);
			if (prev_state || offcpu_preempt_stacks) {
				take_stacks(ctx, prev, st, regs, prev_state, user);
			} else {
				/* the cached stacks stay valid for the next block */
				st->nostack = 1;
			}
			st->off_class = classify(prev, preempt, prev_state, st, regs);
			st->wake_ts = 0;
			st->off_ts = now;
			set_state(prev, st, st->off_class, now);
		}
	}

	if (next->pid && is_target(next->tgid)) {
		st = tls_get(next, now);
		if (st) {
			old = __sync_lock_test_and_set(&st->off_ts, 0);
			if (old)
				account_off(st, next->pid, old, now);
			if (st->wake_ts && now > st->wake_ts) {
				__u64 lat = now - st->wake_ts;

				st->wakeups++;
				st->wake_lat_ns += lat;
				if (lat > st->wake_lat_max)
					st->wake_lat_max = lat;
				st->wake_hist[bp_bound_idx(bp_hist_slot_ns(lat), BP_HIST_SLOTS)]++;
			}
			st->wake_ts = 0;
			st->on_ts = now;
			set_state(next, st, BP_TS_RUNNING, now);
		}
	}
	return 0;
}

static __always_inline void woken(struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	struct bp_tls *st;

	if (!p->pid || !is_target(p->tgid))
		return;
	st = bpf_task_storage_get(&tls, p, 0, 0);
	/* a wakeup of a thread that never went to sleep changes nothing */
	if (!st || !st->off_ts || st->state == BP_TS_RUNNING || st->state == BP_TS_RUNQUEUE)
		return;
	st->wake_ts = now;
	set_state(p, st, BP_TS_RUNQUEUE, now);
}

SEC("?tp_btf/sched_wakeup")
int BPF_PROG(bp_wakeup, struct task_struct *p)
{
	woken(p);
	return 0;
}

SEC("?tp_btf/sched_wakeup_new")
int BPF_PROG(bp_wakeup_new, struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	struct bp_tls *st;

	if (!p->pid || !is_target(p->tgid))
		return 0;
	st = tls_get(p, now);
	if (!st)
		return 0;
	/* born runnable: everything until its first switch-in is run-queue time */
	st->off_class = BP_TS_RUNQUEUE;
	st->off_ts = now;
	st->wake_ts = now;
	set_state(p, st, BP_TS_RUNQUEUE, now);
	return 0;
}

static __always_inline void fill_thr_rec(struct bp_thr_rec *r, struct task_struct *t,
					 struct bp_tls *st)
{
	r->kind = BP_REC_THREAD;
	r->tgid = t->tgid;
	r->tid = t->pid;
	r->state = st->known ? st->state : BP_TS__MAX;
	r->start_ns = st->start_ns;
	r->oncpu_ns = st->oncpu_ns;
	r->switches = st->switches;
	r->wakeups = st->wakeups;
	r->wake_lat_ns = st->wake_lat_ns;
	r->wake_lat_max = st->wake_lat_max;
	__builtin_memcpy(r->wake_hist, st->wake_hist, sizeof(r->wake_hist));
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), t->comm);
}

static __always_inline void fill_proc_rec(struct bp_proc_rec *r, __u32 tgid, struct bp_pls *ps,
					  __u64 now)
{
	__u32 i;

	r->kind = BP_REC_PROC;
	r->tgid = tgid;
	bpf_spin_lock(&ps->lock);
	/* bring the timeline up to now, so every record covers the time so far */
	bp_timeline_advance(ps->cnt, &ps->last, now, ps->ns, &ps->idle_ns);
	for (i = 0; i < BP_TS__MAX; i++)
		r->ns[i] = ps->ns[i];
	r->idle_ns = ps->idle_ns;
	bpf_spin_unlock(&ps->lock);
}

SEC("?tp_btf/sched_process_exit")
int BPF_PROG(bp_thread_exit, struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns(), old;
	struct bp_rec_scratch *sc;
	struct bp_thr_rec *rec;
	struct bp_proc_rec *prec;
	struct bp_tls *st;
	struct bp_pls *ps;
	__u32 tid = p->pid, tgid = p->tgid, slot;

	/*
	 * No is_target() here: proc.bpf.c's exit program may already have
	 * removed the process from the target set. Storage exists only for
	 * tracked threads anyway.
	 */
	if (!tid)
		return 0;
	st = bpf_task_storage_get(&tls, p, 0, 0);
	ps = bpf_task_storage_get(&pls, p->group_leader, 0, 0);
	sc = scratch_enter(&slot);
	if (!sc) {
		stat_inc(BP_STAT_TSTORE_FAIL);
		return 0;
	}
	rec = &sc->slot[slot & (REC_SLOTS - 1)].t;
	prec = &sc->slot[slot & (REC_SLOTS - 1)].p;
	if (st) {
		old = __sync_lock_test_and_set(&st->on_ts, 0);
		if (old && now > old)
			__sync_fetch_and_add(&st->oncpu_ns, now - old);
		if (st->known)
			ptl_move(p->group_leader, st->state, -1, now);
		st->known = 0;
		fill_thr_rec(rec, p, st);
		rec->end_ns = now;
		if (bpf_map_update_elem(&thr_exit, &tid, rec, BPF_ANY))
			stat_inc(BP_STAT_TSTORE_FAIL);
	}
	if (BPF_CORE_READ(p, signal, live.counter) == 0) {
		if (ps) {
			fill_proc_rec(prec, tgid, ps, now);
			prec->end_ns = now;
			if (bpf_map_update_elem(&proc_exit, &tgid, prec, BPF_ANY))
				stat_inc(BP_STAT_PSTATE_FULL);
		}
	}
	scratch_exit(sc);
	return 0;
}

/* what a thread not seen switching yet is doing right now */
static __always_inline __u32 current_state(struct task_struct *t, struct bp_tls *st)
{
	struct bp_switch_facts f = {
		.state = bp_task_state(t),
		.k_lock = st->k_lock,
		.syscall = ~0ULL,
	};
	struct pt_regs *regs = NULL;

	if (BPF_CORE_READ(t, on_cpu))
		return BP_TS_RUNNING;
	/* a blocked task's saved user registers tell its syscall, as at a switch */
	if (!(t->flags & PF_KTHREAD)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if (regs) {
			f.syscall = regs->orig_ax;
			f.futex_op = regs->si;
		}
	}
	if (f.state & BP_TASK_UNINTERRUPTIBLE)
		f.in_iowait = BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
	f.gil = st->gil = py_gil_wait(t->tgid, regs);
	return bp_wait_class(&f);
}

/*
 * Run by userspace at the start and at every drain: start tracking threads
 * that have not switched yet, close open intervals up to now (so a thread
 * asleep for the whole window still shows), and report cumulative totals.
 */
SEC("?iter/task")
int bp_iter_tasks(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	__u64 now = bpf_ktime_get_ns(), old;
	struct bp_rec_scratch *sc;
	struct bp_thr_rec *rec;
	struct bp_proc_rec *prec;
	struct bp_tls *st;
	struct bp_pls *ps;
	__u32 slot;
	long n;

	if (!t || !t->pid || !is_target(t->tgid))
		return 0;
	st = tls_get(t, now);
	if (!st)
		return 0;
	if (!st->known) {
		__u32 s;

		n = bpf_get_task_stack(t, st->kst.ips, sizeof(st->kst.ips), 0);
		st->kstack = hash_into(&st->kst, n);
		st->k_lock = kstack_in_lock(&st->kst);
		st->kc_valid = 0;
		st->ustack = 0;
		st->stored = 0;
		st->nostack = 0;
		s = current_state(t, st);
		if (s == BP_TS_RUNNING) {
			st->on_ts = now;
		} else {
			st->off_class = s;
			st->wake_ts = 0;
			st->off_ts = now;
		}
		set_state(t, st, s, now);
	} else {
		old = st->off_ts;
		if (old && now > old &&
		    __sync_val_compare_and_swap(&st->off_ts, old, now) == old)
			account_off(st, t->pid, old, now);
		old = st->on_ts;
		if (old && now > old &&
		    __sync_val_compare_and_swap(&st->on_ts, old, now) == old)
			__sync_fetch_and_add(&st->oncpu_ns, now - old);
	}
	sc = scratch_enter(&slot);
	if (!sc)
		return 0;
	rec = &sc->slot[slot & (REC_SLOTS - 1)].t;
	prec = &sc->slot[slot & (REC_SLOTS - 1)].p;
	fill_thr_rec(rec, t, st);
	rec->end_ns = 0;
	bpf_seq_write(seq, rec, sizeof(*rec));
	if (t->pid == t->tgid) {
		ps = bpf_task_storage_get(&pls, t, 0, 0);
		if (ps) {
			fill_proc_rec(prec, t->tgid, ps, now);
			prec->end_ns = 0;
			bpf_seq_write(seq, prec, sizeof(*prec));
		}
	}
	scratch_exit(sc);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
