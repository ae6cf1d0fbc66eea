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
 *
 * A wait's class comes from its kernel stack (the innermost of its first
 * frames in a kernel function userspace named, kept with the cached stacks),
 * else from the system call and the type of its fd; a poll, select or epoll
 * wait is classed at its wakeup, by what the waker was doing. The wakeup
 * (sched_waking, which runs in the waker's context) also records who ended
 * each wait, and network waits are kept by peer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "bits.bpf.h"
#include "common.bpf.h"
#include "compat.bpf.h"
/* indices the rules checked, bounded again for 6.1 (rules.h) */
#define BP_RULES_IDX(i, n)	bp_bound_idx(i, n)
#include "rules.h"
#include "stacks.bpf.h"
#include "python.bpf.h"

#define PF_KTHREAD		0x00200000
#define PF_EXITING		0x00000004

#define S_IFMT			00170000
#define S_IFSOCK		0140000
#define S_IFIFO			0010000
#define AF_UNIX			1
#define AF_INET			2
#define AF_INET6		10

/* sorted, disjoint kernel address ranges, each with its wait site (enum bp_wsite) */
#define MAX_SITE_RANGES		64
#define SITE_SEARCH_STEPS	7	/* ceil(log2(MAX_SITE_RANGES + 1)) */
/*
 * The first frames are the BPF trampoline and __schedule; the functions
 * that say what a thread waits in follow within a dozen (a TCP receive:
 * schedule_timeout, wait_woken, sk_wait_data).
 */
#define SITE_SCAN_FRAMES	16

/*
 * A kernel thread's site is its depth in its own stack and, to tell apart
 * two paths into the scheduler at one depth, the return addresses of its
 * kernel stack's frames BP_KRET_FIRST on, where they lie in that stack
 * (kret_learn()). Frames 0-3 are this program, bpf_trace_run4(), the
 * tracepoint's iterator and __schedule(), the same at every switch. The
 * paths that shared a depth differed next to the scheduler (kdamond calls
 * cond_resched() from two places in shrink_folio_list()) and 10 frames
 * out (a writeback worker throttled in wbt_wait(), under one of two calls
 * of ext4_io_submit(); 26 frames): so every frame is checked. They are
 * looked for in the BP_KRET_WORDS words above the tracepoint's arguments.
 */
#define BP_KRET_FIRST	4
#define BP_KRET_FRAMES	32
#define BP_KRET_WORDS	512

/*
 * One blocking site of a thread and the stacks taken there. The stacks are
 * kept so they can be stored again after a flip.
 */
/*
 * Where a thread blocks, as far as can be told without a walk (site_of()):
 * a user thread's registers at the syscall boundary, or a kernel thread's
 * depth in its own stack; and the task state it blocks in.
 */
struct bp_site {
	__u64 ip, sp, bp;
	__u64 sys;		/* syscall (orig_ax); BP_KTHREAD_SITE for a kernel thread */
	__u32 state;
	__u32 pad;
};

/*
 * An off-CPU row gathered in its thread (account_off()): the wait part of
 * its key (the thread and its stacks are the rest) and what it adds up to.
 */
struct bp_off_pend {
	__u32 state;
	__u8 side, dir;
	__u16 flags;
	__u32 tid;
	__u32 pad;
	__u64 ns, count;
};

struct bp_stslot {
	__u64 kstack, ustack;	/* hashes of the stacks at switch-out */
	/* rows with these stacks not written yet: [0] the wait, [1] the run queue after it */
	struct bp_off_pend pend[2];
	struct bp_site site;	/* where they were taken */
	__u32 kc_valid;		/* enum bp_kc: may they be reused, and how */
	__u32 wsite;		/* enum bp_wsite of the kernel stack */
	__u32 stored;		/* buffer index + 1 the stacks were last stored in */
	__u32 reused;		/* times stacks to recheck (BP_KC_RECHECK) were reused since a walk */
	/* a kernel thread's: where its callers' return addresses lie (kret_learn()) */
	__u16 kret_n;		/* frames BP_KRET_FIRST on that kret[] holds */
	__u16 kret[BP_KRET_FRAMES];	/* in words above the tracepoint's arguments */
	struct bp_stack kst;
	struct bp_stack ust;
};

/*
 * May a slot's stacks be taken again for its site (take_stacks())? A
 * kernel thread's, when yes, are walked again every ksite_check-th time
 * all the same (bp_kret_same() may miss a path).
 */
enum bp_kc {
	BP_KC_NO = 0,		/* no: walk again */
	BP_KC_YES,		/* yes */
	/*
	 * yes, but every ksite_check-th time walked again: a user stack cut
	 * short (a process whose unwind list was not written yet is walked
	 * by its frame pointers, and a table may come)
	 */
	BP_KC_RECHECK,
};

/*
 * A thread's last two blocking sites. Threads that block at one place
 * alternate with another more often than not (fio: the read, then the
 * rate limiter's sleep; a server: accept, then read), and with one slot
 * each such switch missed and paid both walks: fio hit 38%.
 */
#define BP_STSLOTS	2

/* the syscall of a kernel thread's site (site_of()): none, unlike any number */
#define BP_KTHREAD_SITE	(~0ULL - 1)

/* one waker's waits gathered in a thread's state (bp_tls.wks) */
struct bp_wk_slot {
	struct bp_wake_key k;
	__u64 ns, count;
	char comm[BP_COMM_LEN];
};

/*
 * The process timeline (bp_timeline_*() in rules.h), in the thread-group
 * leader's storage (ptl_of()), under its pl_lock.
 */
struct bp_ptl {
	__u32 cnt[BP_TS__MAX];
	__u64 last;		/* 0: never moved, no timeline */
	__u64 ns[BP_TS__MAX];
	__u64 idle_ns;
	__u64 moved, claimed;	/* sleep time reclassified (bp_timeline_reclass()) */
	__u32 qlock;		/* threads woken from a lock wait that have not run yet */
	__u32 pad;
	__u64 turn_ns, want_ns;	/* bp_turns_advance() */
};

/*
 * Thread local state. The fields a switch and a wake-up touch come first,
 * together, then the waker slots a wake-up looks at: under the bench's
 * mix the tasks' storage is cold at most switches (a second agent's
 * programs on the same tracepoints ran ~20% cheaper than the first's,
 * which had brought the lines in), and these fields had been spread over
 * six lines by the latency histogram and the network key between them.
 */
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
	__u32 cur;		/* slot of the stacks at the last switch-out */
	__u32 nostack;		/* this off-CPU piece is charged without stacks */
	__u32 off_class;	/* class of the current off-CPU interval */
	__u32 state;		/* state counted in the process timeline */
	__u32 known;		/* state is valid and counted */
	__u32 tgid;
	__u32 pending;		/* the class is decided at the wakeup (a poll wait) */
	__u32 dir;		/* enum bp_dir of the current wait */
	__u32 net_valid;	/* net holds the peer of the current wait */
	__u32 side;		/* enum bp_side of the current network wait */
	__u32 kc_gen;		/* site_gen the cached kernel stacks' sites were found with */
	__u32 gil;		/* the current off-CPU interval waits for a Python GIL */
	__u32 lockwoken;	/* runnable after a lock wait, counted in the leader's pl.qlock */
	__u32 wk_last;		/* the waker slot used last */
	struct bpf_spin_lock pl_lock;
	__u64 blk_ts;		/* the current wait began (not moved by the iterator) */
	__u64 poll_mark;	/* the timeline's sleep clock when a pending wait began */
	__u64 se_ns;		/* the kernel's count of its run time when it last left a CPU */
	__u64 steal_in;		/* its CPU's steal clock when it was switched in; 0: unknown */
	__u64 in_ts;		/* switched in at (on_ts moves with the task iterator) */
	__u64 steal_ns;		/* of oncpu_ns, the time the hypervisor ran something else */
	/*
	 * The leader's: its process's timeline, which every switch and
	 * wake-up of the process moves. In a task storage of its own it was
	 * a second element, on lines of its own, at each of them.
	 */
	struct bp_ptl pl;
	/*
	 * Who ended its waits, gathered here while the waker is one of the
	 * last two (a pipe's two ends wake each other over and over; a
	 * reader's interrupts come on top of the one busy task or of an idle
	 * CPU, by turns) and written to the waker map when a third comes, at
	 * each drain and at exit. With one slot two thirds of the wake-ups
	 * under the bench's mix changed it, each a hash lookup and atomic
	 * adds on cold lines.
	 */
	struct bp_wk_slot wks[2];
	__u64 wake_hist[BP_HIST_SLOTS];
	struct bp_net_key net;
	__u32 net_pad;
	struct bp_stslot sl[BP_STSLOTS];
	/* rows without stacks not written yet (a preemption's run queue wait) */
	struct bp_off_pend nopend[2];
};

/* the slot of the thread's current stacks */
static __always_inline struct bp_stslot *cur_slot(struct bp_tls *st)
{
	return &st->sl[st->cur & (BP_STSLOTS - 1)];
}

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bp_tls);
} tls SEC(".maps");

struct bp_off_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* sized from userspace */
	__type(key, struct bp_off_key);
	__type(value, struct bp_off_val);
};

struct bp_off_map off0 SEC(".maps");
struct bp_off_map off1 SEC(".maps");

/* who ended each wait (drained like the off-CPU maps) */
struct bp_wake_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);	/* sized from userspace */
	__type(key, struct bp_wake_key);
	__type(value, struct bp_wake_val);
};

struct bp_wake_map wake0 SEC(".maps");
struct bp_wake_map wake1 SEC(".maps");

/* network waits by peer */
struct bp_net_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* sized from userspace */
	__type(key, struct bp_net_key);
	__type(value, struct bp_net_val);
};

struct bp_net_map net0 SEC(".maps");
struct bp_net_map net1 SEC(".maps");

/*
 * TCP sockets by address: which end of the connection (from the state
 * changes that made it), whose, and the byte counters already counted, so
 * that each wait and the close add what flowed since.
 */
struct bp_sock_ent {
	struct bp_net_key key;	/* the row its bytes go to; key.tgid 0: no owner seen yet */
	__u64 rx, tx;		/* tcp_sock bytes_received / bytes_acked counted */
	__u32 side;		/* enum bp_side */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct bp_sock_ent);
} socks SEC(".maps");

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
 * The kernel functions that say what a blocked thread waits in (lock slow
 * paths, pipe and socket waits, poll), from kallsyms: written by userspace
 * after load, sorted and disjoint, once it has read kallsyms. Until then
 * kernel lock waits count as "other" and pipes and sockets are told by the
 * fd of the system call.
 */
volatile __u32 nr_site_ranges;
/* bumped with each new set of ranges: stacks cached before it name no site */
volatile __u32 site_gen;
volatile __u64 site_lo[MAX_SITE_RANGES];
volatile __u64 site_hi[MAX_SITE_RANGES];
volatile __u8 site_cat[MAX_SITE_RANGES];

/*
 * &__preempt_count - &runqueues: per-CPU variables sit at the same offsets
 * in every CPU's area, so the running CPU's preempt count is found from its
 * run queue. From the kernel's BTF, set by userspace; 0: unknown, wakers
 * are then taken to run in task context.
 */
const volatile __s64 preempt_from_rq;

/*
 * A global function, verified once on its own: inlined in the frame
 * callback, each halving's branches multiplied the paths the verifier
 * walked (24,000 instructions of bp_switch's verification; log level 2).
 */
__noinline __u32 bp_site_of(__u64 ip)
{
	__u32 lo = 0, hi = nr_site_ranges, i, mid;

	if (hi > MAX_SITE_RANGES)
		hi = MAX_SITE_RANGES;
	for (i = 0; i < SITE_SEARCH_STEPS && lo < hi; i++) {
		mid = ((lo + hi) / 2) & (MAX_SITE_RANGES - 1);
		if (ip < site_lo[mid])
			hi = mid;
		else if (ip >= site_hi[mid])
			lo = mid + 1;
		else
			return site_cat[mid];
	}
	return BP_WS_NONE;
}

struct site_scan {
	const struct bp_stack *st;
	__u32 site;
};

static long site_scan_frame(__u32 i, void *data)
{
	struct site_scan *c = data;

	if (i >= c->st->nr || i >= BP_MAX_STACK_DEPTH)
		return 1;
	c->site = bp_site_of(c->st->ips[i]);
	return c->site != BP_WS_NONE;
}

/*
 * The innermost frame with a known site names the wait: one bpf_loop()
 * callback per frame, verified once rather than unrolled frame by frame.
 */
static __always_inline __u32 kstack_site(const struct bp_stack *st)
{
	struct site_scan c = { .st = st, .site = BP_WS_NONE };

	if (!nr_site_ranges)
		return BP_WS_NONE;
	bpf_loop(SITE_SCAN_FRAMES, site_scan_frame, &c, 0);
	return c.site;
}

/*
 * The storage that holds the timeline of the process led by @leader, made
 * if need be; @create 0: NULL when the leader has none, or its process no
 * timeline yet. A single-threaded process's is the storage its events
 * just looked up: the lookup finds it on lines already read. (Taking the
 * caller's own storage without a lookup when the thread leads saved
 * nothing measurable, 0.05 ms/s the other way under the mix, and cost the
 * verifier a second path through the timeline in every program: 161,525
 * -> 189,281 instructions at start.)
 */
static __always_inline struct bp_tls *ptl_of(struct task_struct *leader, bool create)
{
	struct bp_tls *ls;

	ls = bpf_task_storage_get(&tls, leader, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (!create && ls && !ls->pl.last)
		return NULL;
	return ls;
}

/*
 * Move one thread of the process led by @leader from state @from to @to
 * (-1: none), first charging the time since the last change to the state
 * the process was in. With @reclass (a poll wait its end just named), the
 * sleep time charged since @mark goes to that class first. Returns the
 * timeline's sleep clock after the change (bp_timeline_sleep_clock()).
 * @dq: the change to the threads woken from a lock wait that have not run.
 */
static __always_inline __u64 ptl_change(struct task_struct *leader, int from, int to, __u64 now,
					 int reclass, __u64 mark, int dq)
{
	struct bp_tls *ls = ptl_of(leader, true);
	struct bp_ptl *ps;
	__u64 clock;

	if (!ls) {
		stat_inc(BP_STAT_PSTATE_FULL);
		return 0;
	}
	ps = &ls->pl;
	bpf_spin_lock(&ls->pl_lock);
	bp_turns_advance(ps->cnt, ps->qlock, ps->last, now, &ps->turn_ns, &ps->want_ns);
	bp_timeline_advance(ps->cnt, &ps->last, now, ps->ns, &ps->idle_ns);
	if (dq < 0 && ps->qlock)
		ps->qlock--;
	else if (dq > 0)
		ps->qlock++;
	if (reclass >= 0)
		bp_timeline_reclass(ps->ns, &ps->moved, &ps->claimed, mark, reclass);
	bp_timeline_move(ps->cnt, from, to);
	clock = bp_timeline_sleep_clock(ps->ns, ps->moved);
	bpf_spin_unlock(&ls->pl_lock);
	return clock;
}

static __always_inline void ptl_move(struct task_struct *leader, int from, int to, __u64 now,
				     int dq)
{
	ptl_change(leader, from, to, now, -1, 0, dq);
}

/* a thread woken from a lock wait leaves the count when it leaves the run queue */
static __always_inline int lockwoken_leaves(struct bp_tls *st, int to)
{
	if (!st->lockwoken || to == BP_TS_RUNQUEUE)
		return 0;
	st->lockwoken = 0;
	return -1;
}

/*
 * @leader is t->group_leader, read once at the top of each program:
 * every load of a pointer field the verifier walks costs it four searches
 * of the kernel's BTF by name, and inlined here the load was walked again
 * on each path (25 times in bp_switch; a third of all start-up time).
 */
static __always_inline __u64 set_state(struct task_struct *leader, struct bp_tls *st, int to,
				       __u64 now)
{
	__u64 clock = ptl_change(leader, st->known ? (int)st->state : -1, to, now, -1, 0,
				 lockwoken_leaves(st, to));

	st->state = to;
	st->known = 1;
	return clock;
}

/* the file behind fd in t's table, as an address; 0: none */
static __always_inline __u64 fd_file(struct task_struct *t, __u64 fd)
{
	/* probe reads, not loads: see set_state() */
	struct files_struct *files = BPF_CORE_READ(t, files);
	struct fdtable *fdt;
	__u64 f = 0, arr;

	if (!files)
		return 0;
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	arr = (__u64)BPF_CORE_READ(fdt, fd);
	if (!arr || bpf_probe_read_kernel(&f, sizeof(f), (void *)(arr + fd * sizeof(f))))
		return 0;
	return f;
}

/* what kind of file it is (enum bp_fd_kind); *skp: its struct sock, for sockets */
static __always_inline __u32 fd_kind_of(__u64 file, __u64 *skp)
{
	struct file *f = (struct file *)file;
	struct socket *sock;
	struct sock *sk;
	__u16 mode, family;

	*skp = 0;
	if (!file)
		return BP_FD_NONE;
	mode = BPF_CORE_READ(f, f_inode, i_mode);
	if ((mode & S_IFMT) == S_IFIFO)
		return BP_FD_PIPE;
	if ((mode & S_IFMT) != S_IFSOCK)
		return BP_FD_OTHER;
	sock = (struct socket *)BPF_CORE_READ(f, private_data);
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return BP_FD_OTHER;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	*skp = (__u64)sk;
	if (family == AF_UNIX)
		return BP_FD_UNIX;
	if (family == AF_INET || family == AF_INET6)
		return BP_FD_INET;
	return BP_FD_OTHER;
}

/* each CPU's run queue, as an address: found once per CPU (this_rq()) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_rq SEC(".maps");

/*
 * The run queue of this CPU, found from @t on it the first time and kept;
 * 0 when unknown (no CONFIG_FAIR_GROUP_SCHED). Read with probe reads: as
 * loads (t->se.cfs_rq->rq), each pointer made the verifier search the
 * kernel's BTF by name four times on every path it walked to it, a quarter
 * of all start-up time once bp_switch had more paths. The per-CPU variable
 * itself (runqueues as a ksym) needs a kernel whose kallsyms lists data.
 */
static __always_inline __u64 this_rq(struct task_struct *t)
{
	__u32 zero = 0;
	__u64 *slot = bpf_map_lookup_elem(&cpu_rq, &zero), rq;
	struct cfs_rq *cfs;

	if (!slot)
		return 0;
	if (*slot)
		return *slot;
	if (!bpf_core_field_exists(((struct cfs_rq *)0)->rq))
		return 0;
	cfs = BPF_CORE_READ(t, se.cfs_rq);
	rq = cfs ? (__u64)BPF_CORE_READ(cfs, rq) : 0;
	if (!rq || BPF_CORE_READ((struct rq *)rq, cpu) != (int)bpf_get_smp_processor_id())
		return 0;
	*slot = rq;
	return rq;
}

/* where the running task's wakeup comes from (enum bp_wctx) */
static __always_inline __u32 waker_ctx(struct task_struct *cur)
{
	__u64 rq;
	__u32 pc = 0;

	if (!cur->pid)
		return BP_WCTX_IDLE;
	if (!preempt_from_rq)
		return BP_WCTX_TASK;
	rq = this_rq(cur);
	if (!rq)
		return BP_WCTX_TASK;
	if (bpf_probe_read_kernel(&pc, sizeof(pc), (void *)(rq + preempt_from_rq)))
		return BP_WCTX_TASK;
	return bp_preempt_ctx(pc);
}

/* the kind of fd a waking task's system call touched */
static __always_inline __u32 waker_fd_kind(struct task_struct *cur)
{
	struct pt_regs *regs;
	__u64 fd, sk;
	int arg;

	if (cur->flags & PF_KTHREAD)
		return BP_FD_NONE;
	regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	if (!regs)
		return BP_FD_NONE;
	arg = bp_waker_fd_arg(regs->orig_ax);
	if (arg < 0)
		return BP_FD_NONE;
	fd = arg == 0 ? regs->di : arg == 1 ? regs->si : regs->dx;
	return fd_kind_of(fd_file(cur, fd), &sk);
}

/*
 * A row into the off-CPU map being written. Global, so verified once: a
 * thread's gathered rows are written from six places of bp_switch, and
 * inlined there they added 40% to what the verifier walks at every start.
 */
__noinline int bp_off_add(const struct bp_off_key *row, __u64 ns, __u64 count)
{
	void *map = buf_idx & 1 ? (void *)&off1 : (void *)&off0;
	struct bp_off_val *v, init = { .ns = ns, .count = count };
	struct bp_off_key key, *k = &key;
	long err;

	if (!row)
		return 0;
	key = *row;
	v = bpf_map_lookup_elem(map, k);
	if (v) {
		__sync_fetch_and_add(&v->ns, ns);
		__sync_fetch_and_add(&v->count, count);
		return 0;
	}
	err = bpf_map_update_elem(map, k, &init, BPF_NOEXIST);
	if (!err)
		pend_add(&pend_rows[BP_PEND_OFF]);
	if (err == -EEXIST) {
		v = bpf_map_lookup_elem(map, k);
		if (v) {
			__sync_fetch_and_add(&v->ns, ns);
			__sync_fetch_and_add(&v->count, count);
		}
	} else if (err) {
		stat_inc(BP_STAT_OFF_MAP_FULL);
	}
	return 0;
}

/* make sure a slot's stacks are in the buffer being written */
static __always_inline void store_slot(struct bp_stslot *sl, __u32 idx)
{
	long err;

	if (sl->stored == idx + 1)
		return;
	if (sl->kstack) {
		err = bpf_map_update_elem(stack_map(idx, false, sl->kst.nr), &sl->kstack, &sl->kst,
					  BPF_NOEXIST);
		if (err && err != -EEXIST)
			stat_inc(BP_STAT_STACK_FULL);
		else if (!err)
			pend_add(&pend_rows[BP_PEND_STACKS]);
	}
	if (sl->ustack) {
		err = bpf_map_update_elem(stack_map(idx, true, sl->ust.nr), &sl->ustack, &sl->ust,
					  BPF_NOEXIST);
		if (err && err != -EEXIST)
			stat_inc(BP_STAT_STACK_FULL);
		else if (!err)
			pend_add(&pend_rows[BP_PEND_STACKS]);
	}
	sl->stored = idx + 1;
}

/* a gathered row into the off-CPU map being written; its stacks must be there */
static __always_inline void pend_flush(struct bp_tls *st, struct bp_off_pend *p, __u64 kstack,
				       __u64 ustack)
{
	struct bp_off_key k = {};

	if (!p->count)
		return;
	k.tgid = st->tgid;
	k.tid = p->tid;
	k.kstack = kstack;
	k.ustack = ustack;
	k.state = p->state;
	k.side = p->side;
	k.dir = p->dir;
	k.flags = p->flags;
	bp_off_add(&k, p->ns, p->count);
	p->ns = 0;
	p->count = 0;
}

/* a slot's gathered rows, with its stacks: before the slot takes others, at a drain */
static __always_inline void slot_flush(struct bp_tls *st, struct bp_stslot *sl)
{
	if (!sl->pend[0].count && !sl->pend[1].count)
		return;
	store_slot(sl, buf_idx & 1);
	pend_flush(st, &sl->pend[0], sl->kstack, sl->ustack);
	pend_flush(st, &sl->pend[1], sl->kstack, sl->ustack);
}

/*
 * slot_flush() of the current thread's slot c, its storage looked up
 * again: a global function, verified once. Inlined where the switch and
 * the exit write gathered rows, the stores added a third to what the
 * verifier walks at every start; and a global function's pointer arguments
 * cannot be a map's key or value before 6.2, so the storage is not passed.
 */
__noinline int bp_flush_cur_slot(__u32 c)
{
	struct bp_tls *st = bpf_task_storage_get(&tls, bpf_get_current_task_btf(), 0, 0);

	if (st)
		slot_flush(st, &st->sl[c & (BP_STSLOTS - 1)]);
	return 0;
}

/* rows gathered without stacks */
static __always_inline void nostack_flush(struct bp_tls *st)
{
	pend_flush(st, &st->nopend[0], 0, 0);
	pend_flush(st, &st->nopend[1], 0, 0);
}

/* ns more of a wait part into p, which writes out what it held if that was another part */
static __always_inline void gather(struct bp_tls *st, struct bp_off_pend *p, __u64 kstack,
				   __u64 ustack, __u32 tid, __u32 state, __u8 side, __u8 dir,
				   __u16 flags, __u64 ns)
{
	if (p->count && (p->state != state || p->side != side || p->dir != dir ||
			 p->flags != flags || p->tid != tid))
		pend_flush(st, p, kstack, ustack);
	if (!p->count) {
		p->state = state;
		p->side = side;
		p->dir = dir;
		p->flags = flags;
		p->tid = tid;
	}
	p->ns += ns;
	p->count++;
}

/*
 * Charge the off-CPU piece [a, b) of a thread: the part before its wakeup to
 * the class it blocked in, the part after to the run queue. Gathered in the
 * thread while the row stays the same and written when it changes, when its
 * stacks' slot takes others, at each drain's task walk and at exit: a
 * thread blocking at one site over and over (a reader, a preempted
 * spinner) wrote the same one or two rows at every switch-in, two map
 * lookups of a 32-byte key, 0.76 us of bp_switch's 1.69 us under the
 * bench's mixed load.
 */
static __always_inline void account_off(struct bp_tls *st, __u32 tid, __u64 a, __u64 b)
{
	struct bp_off_pend *pend = st->nopend;
	__u64 blocked, runq, ks = 0, us = 0;

	bp_split_off(a, b, st->wake_ts, st->off_class, &blocked, &runq);
	if (!blocked && !runq)
		return;
	if (!st->nostack) {
		struct bp_stslot *sl = cur_slot(st);

		/* its gathered rows are written with these stacks, into this buffer or a later one */
		store_slot(sl, buf_idx & 1);
		ks = sl->kstack;
		us = sl->ustack;
		pend = sl->pend;
	}
	if (blocked)
		gather(st, &pend[0], ks, us, tid, st->off_class, st->side, st->dir,
		       st->gil ? BP_OFF_GIL : 0, blocked);
	if (runq)
		gather(st, &pend[1], ks, us, tid, BP_TS_RUNQUEUE, 0, 0, 0, runq);
}

/*
 * A thread found running (or leaving a CPU) that was never seen switching
 * in: some kernels leave switches untraced (under Firecracker, the switch
 * back from the guest agent's threads to the thread they preempted, a few
 * a second on a busy guest). Unrepaired, that run counts as run-queue
 * time: a spinning process was once called cpu-starved. The kernel's own
 * count of the thread's run time since it last left a CPU says how long
 * it ran: the open off-CPU piece [off, now) ended that long before now.
 * Returns that run time, 0 when the piece hides no run.
 */
static __always_inline __u64 unseen_ran(struct task_struct *t, struct bp_tls *st, __u64 off,
					__u64 now)
{
	__u64 se = BPF_CORE_READ(t, se.sum_exec_runtime), ran;

	if (!st->known || st->state == BP_TS_RUNNING || !off || !st->se_ns || se <= st->se_ns ||
	    now <= off)
		return 0;
	ran = se - st->se_ns;
	return ran < now - off ? ran : now - off;
}

/* the piece closed at @in, a run of @ran since: on-CPU, and running in the timeline */
static __always_inline void unseen_ran_done(struct task_struct *leader, struct bp_tls *st,
					    __u64 ran, __u64 in)
{
	stat_inc(BP_STAT_SWITCH_UNSEEN);
	__sync_fetch_and_add(&st->oncpu_ns, ran);
	st->wake_ts = 0;
	st->pending = 0;
	set_state(leader, st, BP_TS_RUNNING, in);
}

/* at a switch-out or exit: repair the run unseen_ran() finds */
static __always_inline void unseen_run(struct task_struct *t, struct task_struct *leader,
				       struct bp_tls *st, __u64 now)
{
	__u64 off = st->off_ts, ran = unseen_ran(t, st, off, now);

	/* the iterator may be closing the same piece */
	if (!ran || __sync_val_compare_and_swap(&st->off_ts, off, 0) != off)
		return;
	account_off(st, t->pid, off, now - ran);
	unseen_ran_done(leader, st, ran, now - ran);
}

static __always_inline void add_bytes(struct bp_net_val *v, __u64 rx, __u64 tx)
{
	if (rx)
		__sync_fetch_and_add(&v->rx_bytes, rx);
	if (tx)
		__sync_fetch_and_add(&v->tx_bytes, tx);
}

/* a new row's value: too big for the BPF stack */
static const struct bp_net_val net_zero = {};

/* the peer's row in the current buffer, made when new; NULL when the map is full */
static __always_inline struct bp_net_val *net_row(const struct bp_net_key *k)
{
	void *map = buf_idx & 1 ? (void *)&net1 : (void *)&net0;
	struct bp_net_val *v;
	long err;

	v = bpf_map_lookup_elem(map, k);
	if (v)
		return v;
	err = bpf_map_update_elem(map, k, &net_zero, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_inc(BP_STAT_NET_MAP_FULL);
		return NULL;
	}
	if (!err)
		pend_add(&pend_rows[BP_PEND_NET]);
	return bpf_map_lookup_elem(map, k);
}

/*
 * A thread blocks on a network socket: remember the peer for its wakeup,
 * and add the TCP bytes that flowed since this socket was last seen.
 */
static __always_inline void net_wait(struct bp_tls *st, __u64 skaddr, __u32 site)
{
	struct sock *sk = (struct sock *)skaddr;
	struct tcp_sock *tp = (struct tcp_sock *)skaddr;
	struct bp_net_key *k = &st->net;
	struct bp_sock_ent *e, init = {};
	struct bp_net_val *v;
	__u64 rx, tx, drx = 0, dtx = 0;
	__u8 state;

	__builtin_memset(k, 0, sizeof(*k));
	k->tgid = st->tgid;
	k->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	k->proto = BPF_CORE_READ(sk, sk_protocol);
	k->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	state = BPF_CORE_READ(sk, __sk_common.skc_state);
	if (site == BP_WS_ACCEPT || state == TCP_LISTEN) {
		k->side = BP_SIDE_LISTEN;
		k->port = k->lport;
		if (k->family == AF_INET6)
			BPF_CORE_READ_INTO(&k->addr, sk, __sk_common.skc_v6_rcv_saddr);
		else
			BPF_CORE_READ_INTO((__u32 *)k->addr, sk, __sk_common.skc_rcv_saddr);
		st->net_valid = 1;
		return;
	}
	k->port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (k->family == AF_INET6)
		BPF_CORE_READ_INTO(&k->addr, sk, __sk_common.skc_v6_daddr);
	else
		BPF_CORE_READ_INTO((__u32 *)k->addr, sk, __sk_common.skc_daddr);
	st->net_valid = 1;
	if (k->proto != IPPROTO_TCP)
		return;
	rx = BPF_CORE_READ(tp, bytes_received);
	tx = BPF_CORE_READ(tp, bytes_acked);
	e = bpf_map_lookup_elem(&socks, &skaddr);
	if (!e) {
		/* connected before we looked: only what flows from now on counts */
		init.rx = rx;
		init.tx = tx;
		bpf_map_update_elem(&socks, &skaddr, &init, BPF_NOEXIST);
		e = bpf_map_lookup_elem(&socks, &skaddr);
		if (!e)
			return;
	}
	k->side = e->side;
	if (rx > e->rx)
		drx = rx - e->rx;
	if (tx > e->tx)
		dtx = tx - e->tx;
	e->rx = rx;
	e->tx = tx;
	e->key = *k;
	if (drx || dtx) {
		v = net_row(k);
		if (v)
			add_bytes(v, drx, dtx);
	}
}

/* what the rules (rules.h) make of one switch's facts */
struct bp_judged {
	__u32 cls;		/* enum bp_tstate */
	__u32 pending;		/* the class waits for the wakeup to be named */
	__u32 site;		/* the wait site, from the stack or from the fd */
	__u32 dir;		/* enum bp_dir of that site */
};

/*
 * The rules as a global function, verified once on its own: inlined, their
 * switches over syscalls and sites were walked again for every state of
 * bp_switch (42,000 of its 78,000 instructions; log level 2).
 */
__noinline int bp_judge_switch(const struct bp_switch_facts *f, struct bp_judged *j)
{
	if (!f || !j)
		return -1;
	j->cls = bp_wait_class(f);
	j->pending = bp_wait_pending(f, j->cls);
	j->site = f->site ? f->site : bp_fd_site(f->syscall, f->fd_kind);
	j->dir = bp_site_dir(j->site);
	return 0;
}

static __always_inline __u32 classify(struct task_struct *prev, bool preempt, __u32 prev_state,
				      struct bp_tls *st, struct pt_regs *regs)
{
	struct bp_switch_facts f = {
		.preempt = preempt,
		.state = prev_state,
		.site = cur_slot(st)->wsite,
		.syscall = regs ? regs->orig_ax : ~0ULL,
		.futex_op = regs ? regs->si : 0,
	};
	struct bp_judged j = {};
	__u64 sk = 0;
	__u32 cls, site;

	if (prev_state & BP_TASK_UNINTERRUPTIBLE)
		f.in_iowait = BPF_CORE_READ_BITFIELD(prev, in_iowait);
	st->net_valid = 0;
	st->side = 0;
	/*
	 * The fd is looked up only where it matters: to find the peer of a
	 * network wait, or the wait itself when the stack named no site.
	 */
	if (!preempt && (prev_state & BP_TASK_INTERRUPTIBLE) && regs &&
	    (f.site == BP_WS_NET_IN || f.site == BP_WS_NET_OUT || f.site == BP_WS_ACCEPT ||
	     f.site == BP_WS_CONNECT ||
	     (f.site == BP_WS_NONE && bp_fd_syscall(f.syscall))))
		f.fd_kind = fd_kind_of(fd_file(prev, regs->di), &sk);
	f.gil = st->gil = py_gil_wait(prev->tgid, regs);
	bp_judge_switch(&f, &j);
	cls = j.cls;
	site = j.site;
	st->pending = j.pending;
	st->dir = j.dir;
	if (cls == BP_TS_NET && f.fd_kind == BP_FD_INET && sk) {
		net_wait(st, sk, site);
		st->side = st->net.side;
	}
	return cls;
}

static __always_inline __u64 hash_into(struct bp_stack *st, long n)
{
	if (n <= 0)
		return 0;
	st->nr = n / sizeof(__u64);
	st->flags = 0;
	return bp_hash_stack(st);
}

/*
 * The frame pointer's part of a user site: rbp itself while it could be a
 * frame's (at or above the stack pointer: a walk steps up from there),
 * else only whether it is zero. Code built without frame pointers keeps
 * anything in rbp, a loop counter as often as not, and keyed by its value
 * a read loop blocked at "a new site" every time: a pipe ping-pong reused
 * its stacks at 516 of 200,187 switches, and bp_switch cost 3.3 us a
 * switch. Below the stack pointer no walk follows it (a frame-pointer step
 * stops there, cut, or ends the stack at zero; CFI that sets the CFA from
 * rbp is only emitted where rbp holds the frame), so its value cannot
 * change the stacks. Without a branch: each would be a path the verifier
 * walks the rest of the switch along.
 */
static __always_inline __u64 site_bp(__u64 bp, __u64 sp)
{
	/*
	 * All ones when bp is below sp. sp is a user address, below 2^63;
	 * a bp 2^63 or more above it reads as below, and no frame lies there.
	 */
	__u64 below = (__u64)((__s64)(bp - sp) >> 63), nonzero = (bp | -bp) >> 63;

	return (bp & ~below) | (nonzero & below);
}

/*
 * Where a thread blocks, as far as can be told without a walk: a user
 * thread by the registers it entered the kernel with (user call site and
 * syscall); a kernel thread, which has none, by how deep in its own stack
 * sched_switch runs (the address of the tracepoint's arguments, which lie
 * on that stack). False: neither (no registers to go by). A kernel
 * thread's stack never moves and, with no syscall entry, gets no random
 * offset: a path into schedule() has its own depth, or else its own
 * return addresses (bp_kret_same()). rcu_preempt alone switched 127 times
 * a second under the bench's mixed load, each a kernel walk of ~1 us that
 * bought the same stack again (bp_switch: 1.9 us a switch, 0.8 us without
 * those walks).
 */
static __always_inline bool site_of(void *ctx, struct task_struct *t, struct pt_regs *regs,
				    struct bp_site *s)
{
	if (regs) {
		s->ip = regs->ip;
		s->sp = regs->sp;
		s->bp = site_bp(regs->bp, regs->sp);
		s->sys = regs->orig_ax;
		return true;
	}
	if (!(t->flags & PF_KTHREAD))
		return false;
	/* needs allow_ptr_leaks (CAP_PERFMON), which loading these programs needs anyway */
	s->ip = 0;
	s->sp = (__u64)ctx;
	s->bp = 0;
	s->sys = BP_KTHREAD_SITE;
	return true;
}

/* the thread blocks again where @sl's stacks were taken, as far as @s tells */
static __always_inline bool same_site(const struct bp_stslot *sl, const struct bp_site *s,
				      bool user)
{
	const struct bp_site *o = &sl->site;
	__u64 diff = (s->ip ^ o->ip) | (s->bp ^ o->bp) | (s->sys ^ o->sys) | (s->state ^ o->state);

	/*
	 * One test of the differences or'ed, not one branch per field: each
	 * branch was a path the verifier walked the rest of take_stacks()
	 * along (6,700 instructions of bp_switch's verification). sp apart:
	 * a kernel thread's is the context pointer, which only compares.
	 */
	barrier_var(diff);
	return !diff && s->sp == o->sp && sl->kc_valid && (sl->ustack || !user);
}

/* a kernel thread's stack as read above the tracepoint's arguments */
struct bp_kret_buf {
	__u64 w[BP_KRET_WORDS];
};

/* sched_switch runs with interrupts off: one buffer per CPU is enough */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_kret_buf);
} kret_buf SEC(".maps");

struct kret_scan {
	const struct bp_kret_buf *b;
	struct bp_stslot *sl;
	__u32 words;		/* read into b */
	__u32 want;		/* frames to find */
};

static long kret_scan_word(__u32 i, void *data)
{
	struct kret_scan *c = data;
	struct bp_stslot *sl = c->sl;
	__u32 k = sl->kret_n, f = BP_KRET_FIRST + k;

	if (i >= c->words || k >= c->want || k >= BP_KRET_FRAMES || f >= BP_MAX_STACK_DEPTH)
		return 1;
	/* word 0 is the tracepoint's first argument, never a return address */
	if (i && c->b->w[i & (BP_KRET_WORDS - 1)] == sl->kst.ips[f]) {
		sl->kret[k] = i;
		sl->kret_n = k + 1;
	}
	return 0;
}

/*
 * After a walk of a kernel thread's stack (@sl->kst), where the return
 * addresses of its frames BP_KRET_FIRST on lie: words above @sp (the
 * tracepoint's arguments) in the stack that ends at @top. Frames are
 * stored innermost first, each above the one before, so one pass finds
 * them in order. 1: all found (up to BP_KRET_FRAMES of them), and a reuse
 * can tell this path from any other at the same depth (bp_kret_same()).
 */
__noinline int bp_kret_learn(struct bp_stslot *sl, __u64 sp, __u64 top)
{
	struct kret_scan c = { .sl = sl };
	__u32 zero = 0;
	__u64 len;

	if (!sl)
		return 0;
	sl->kret_n = 0;
	c.want = sl->kst.nr > BP_KRET_FIRST ? sl->kst.nr - BP_KRET_FIRST : 0;
	if (c.want > BP_KRET_FRAMES)
		c.want = BP_KRET_FRAMES;
	if (!c.want)
		return 1;
	c.b = bpf_map_lookup_elem(&kret_buf, &zero);
	if (!c.b || top <= sp)
		return 0;
	len = top - sp;
	if (len > sizeof(struct bp_kret_buf))
		len = sizeof(struct bp_kret_buf);
	if (bpf_probe_read_kernel((void *)c.b, len, (void *)sp))
		return 0;
	c.words = len / sizeof(__u64);
	bpf_loop(BP_KRET_WORDS, kret_scan_word, &c, 0);
	return sl->kret_n == c.want;
}

/*
 * The return addresses kret_learn() found are where they were: the thread
 * came to the scheduler through the same calls, and a walk would find the
 * same stack. One read of the stack up to the outermost of them (0.5 KiB
 * for rcu_preempt's 11 frames, 2.5 KiB for a writeback worker's 26)
 * instead of a walk.
 */
__noinline int bp_kret_same(const struct bp_stslot *sl, __u64 sp)
{
	struct bp_kret_buf *b;
	__u32 zero = 0, n, len;

	if (!sl)
		return 0;
	n = sl->kret_n;
	if (!n)
		return 1;
	/* up to the outermost, found last */
	len = sl->kret[(n - 1) & (BP_KRET_FRAMES - 1)] + 1;
	b = bpf_map_lookup_elem(&kret_buf, &zero);
	if (!b || len > BP_KRET_WORDS ||
	    bpf_probe_read_kernel(b, len * sizeof(__u64), (void *)sp))
		return 0;
	for (__u32 i = 0; i < BP_KRET_FRAMES; i++) {
		if (i >= n)
			break;
		if (b->w[sl->kret[i] & (BP_KRET_WORDS - 1)] != sl->kst.ips[BP_KRET_FIRST + i])
			return 0;
	}
	return 1;
}

/*
 * The end of @t's kernel stack, which holds @sp. THREAD_SIZE is 16 KiB
 * on x86-64 and arm64 with 4 KiB pages, twice that with KASAN; a stack
 * read is bounded by it and a guess too small only finds fewer frames.
 */
static __always_inline __u64 kstack_top(struct task_struct *t, __u64 sp)
{
	/* read, not loaded: a number to add to, not a pointer to follow */
	__u64 base = (__u64)BPF_CORE_READ(t, stack);

	return sp - base < 16384 ? base + 16384 : base + 32768;
}

/*
 * A kernel thread's site's depth as a number: read back from the map, not
 * the context pointer site_of() stored, which only compares.
 */
static __always_inline __u64 kthread_sp(const struct bp_stslot *sl)
{
	return *(volatile const __u64 *)&sl->site.sp;
}

/* @sl's stacks are the ones a switch at site @s would take (site_of()) */
static __always_inline bool site_matches(const struct bp_stslot *sl, const struct bp_site *s,
					 bool user, struct pt_regs *regs)
{
	if (!same_site(sl, s, user))
		return false;
	return regs || bp_kret_same(sl, kthread_sp(sl));
}

/*
 * Every ksite_check-th reuse of a kernel thread's stacks walks again, and
 * counts a stack that was not the one reused: two paths into schedule()
 * at the same depth that differ only beyond BP_KRET_FRAMES frames, the
 * one loss the key can cause. So does a user thread's whose user stack
 * was cut (BP_KC_RECHECK). 64 by default; the tests check every reuse
 * (BOUNDPROF_KSITE_CHECK=1).
 */
const volatile __u32 ksite_check = 64;

static __always_inline void take_stacks(void *ctx, struct task_struct *prev, struct bp_tls *st,
					struct pt_regs *regs, __u32 prev_state, bool user)
{
	struct bp_site site = { .state = prev_state };
	__u32 c = st->cur & (BP_STSLOTS - 1);
	bool keyed = site_of(ctx, prev, regs, &site), hit = false;
	struct bp_stslot *sl;
	__u64 was = 0;
	long n;

	st->nostack = 0;
	/* a kernel thread has no user stack to want */
	user = user && regs;
	/*
	 * A thread that blocks again from the same site (site_of()), in the
	 * same state, has the same stacks: reuse them and skip both walks.
	 * The kernel walk costs ~1 us per switch; the user walk's final
	 * faulting read costs microseconds in a guest. A user thread's
	 * blocking path that differs only inside the kernel for the same
	 * site, syscall and state is the one case this gets wrong
	 * (docs/offcpu.md).
	 */
	if (keyed) {
		hit = site_matches(&st->sl[c], &site, user, regs);
		if (!hit && site_matches(&st->sl[c ^ 1], &site, user, regs)) {
			c ^= 1;
			hit = true;
		}
	}
	sl = &st->sl[c];
	if (hit) {
		if ((regs && sl->kc_valid == BP_KC_YES) || ++sl->reused < ksite_check) {
			st->cur = c;
			stat_inc(BP_STAT_STACKS_CACHED);
			return;
		}
		/* a check walk, into the same slot: a kernel thread's counts a stale stack */
		if (!regs)
			was = sl->kstack;
	} else {
		/* a new site replaces the one used longer ago */
		c ^= 1;
		sl = &st->sl[c];
	}
	st->cur = c;
	sl->reused = 0;
	/* what was gathered with the stacks about to be replaced (prev is current) */
	if (sl->pend[0].count || sl->pend[1].count)
		bp_flush_cur_slot(c);

	n = bpf_get_stack(ctx, sl->kst.ips, sizeof(sl->kst.ips), 0);
	if (n < 0 && n != -EFAULT)
		stat_inc(BP_STAT_KSTACK_ERR);
	sl->kstack = hash_into(&sl->kst, n);
	if (was && sl->kstack != was)
		stat_inc(BP_STAT_KSITE_STALE);
	sl->stored = 0;
	sl->site = site;
	sl->kc_valid = keyed;
	/* a path that cannot be told apart from others at its depth is walked each time */
	if (keyed && !regs) {
		__u64 sp = kthread_sp(sl);

		sl->kc_valid = bp_kret_learn(sl, sp, kstack_top(prev, sp));
	}
	/* only blocking switches wait somewhere: spare preemptions the scan */
	sl->wsite = prev_state ? kstack_site(&sl->kst) : BP_WS_NONE;
	sl->ustack = 0;
	if (!user)
		return;
	/* unwound from the registers the thread entered the kernel with */
	n = capture_ustack(ctx, &sl->ust, prev->tgid, regs->ip, regs->sp, regs->bp,
			   BP_UW_WALK_SWITCH);
	sl->ustack = n > 0 ? bp_hash_stack(&sl->ust) : 0;
	/*
	 * Cut short, it is walked again now and then: reused for good, the
	 * frame-pointer walk of a process's first switch, made before its
	 * tables came, was the stack of all its waits there (a pipe
	 * ping-pong without frame pointers: 0.55 s of its 0.55 s of waits
	 * under "[truncated]").
	 */
	if (sl->ust.flags & BP_STACK_CUT)
		sl->kc_valid = BP_KC_RECHECK;
}

/*
 * The steal clock of this CPU, as its run queue last read it (at the top
 * of __schedule(), just before sched_switch): the time the hypervisor kept
 * this vCPU from running. 0 when the kernel keeps none (no
 * CONFIG_PARAVIRT_TIME_ACCOUNTING, or bare metal).
 */
static __always_inline __u64 cpu_steal(struct task_struct *t)
{
	__u64 rq;

	if (!bpf_core_field_exists(((struct rq *)0)->prev_steal_time_rq))
		return 0;
	rq = this_rq(t);
	return rq ? BPF_CORE_READ((struct rq *)rq, prev_steal_time_rq) : 0;
}

/*
 * The run [old, now) of @t on this CPU ends. The kernel leaves stolen time
 * out of a thread's run time, and a switch-to-switch count has it in: the
 * part stolen is kept apart so that both are known.
 */
static __always_inline void run_done(struct task_struct *t, struct bp_tls *st, __u64 old,
				     __u64 now, __u64 *steal_now)
{
	__u64 steal;

	__sync_fetch_and_add(&st->oncpu_ns, now - old);
	if (!st->steal_in)
		return;
	if (*steal_now == ~0ULL)
		*steal_now = cpu_steal(t);
	steal = *steal_now;
	/* only the thread's own switch-out and exit add to it: no atomic needed */
	if (steal > st->steal_in && now > st->in_ts) {
		steal -= st->steal_in;
		st->steal_ns += steal < now - st->in_ts ? steal : now - st->in_ts;
	}
}

static __always_inline struct bp_tls *tls_get(struct task_struct *t, __u64 now)
{
	struct bp_tls *st;

	/*
	 * A thread on its way out (PF_EXITING) is followed only while it is
	 * still counted: past sched_process_exit (bp_thread_exit() uncounted
	 * it) it runs on a moment, closing files and running task work, and
	 * a walk, a preemption or a wakeup then would count it again. Its
	 * last switch (TASK_DEAD) is not followed, so it would stay counted,
	 * running, for the rest of the process's life (a server's dead
	 * worker held it "running" while it waited 3 s for clients). Nor is
	 * such a thread first seen then.
	 */
	if (t->flags & PF_EXITING) {
		st = bpf_task_storage_get(&tls, t, 0, 0);
		return st && st->known ? st : NULL;
	}
	st = bpf_task_storage_get(&tls, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

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
	__u64 now = bpf_ktime_get_ns(), old, steal = ~0ULL;
	struct task_struct *prev_leader = prev->group_leader, *next_leader = next->group_leader;
	struct bp_tls *st;

	/* loaded here, once on every path: see set_state() */
	barrier_var(prev_leader);
	barrier_var(next_leader);

	if (prev->pid && is_target_task(prev) && !(prev_state & BP_TASK_DEAD)) {
		st = tls_get(prev, now);
		if (st) {
			struct pt_regs *regs = NULL;
			bool user = offcpu_ustacks == 2 ||
				    (offcpu_ustacks == 1 && filter_targets);

			stat_inc(BP_STAT_SWITCHES);
			old = __sync_lock_test_and_set(&st->on_ts, 0);
			if (old && now > old)
				run_done(prev, st, old, now, &steal);
			else if (!old)
				unseen_run(prev, prev_leader, st, now);
			st->steal_in = 0;
			/* before the state leaves RUNNING: see unseen_run() */
			st->se_ns = BPF_CORE_READ(prev, se.sum_exec_runtime);
			st->switches++;
			if (!(prev->flags & PF_KTHREAD))
				regs = (struct pt_regs *)bpf_task_pt_regs(prev);
			/* the cached stack's site was looked for among older ranges */
			if (st->kc_gen != site_gen) {
				st->sl[0].kc_valid = 0;
				st->sl[1].kc_valid = 0;
				st->kc_gen = site_gen;
			}
			if (prev_state || offcpu_preempt_stacks) {
				take_stacks(ctx, prev, st, regs, prev_state, user);
			} else {
				/* the cached stacks stay valid for the next block */
				st->nostack = 1;
			}
			st->off_class = classify(prev, preempt, prev_state, st, regs);
			st->wake_ts = 0;
			st->off_ts = now;
			st->blk_ts = now;
			st->poll_mark = set_state(prev_leader, st, st->off_class, now);
		}
	}

	if (next->pid && is_target_task(next)) {
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
			st->pending = 0;
			/* prev's and next's CPU: one read serves both */
			if (steal == ~0ULL)
				steal = cpu_steal(next);
			st->steal_in = steal;
			st->in_ts = now;
			st->on_ts = now;
			set_state(next_leader, st, BP_TS_RUNNING, now);
		}
	}
	return 0;
}

/* a slot's gathered waker row into the current buffer's waker map */
static __always_inline void flush_wk_slot(struct bp_wk_slot *w)
{
	void *map = buf_idx & 1 ? (void *)&wake1 : (void *)&wake0;
	struct bp_wake_val *v, init = {};
	long err;

	if (!w->count)
		return;
	v = bpf_map_lookup_elem(map, &w->k);
	if (!v) {
		__builtin_memcpy(init.comm, w->comm, sizeof(init.comm));
		err = bpf_map_update_elem(map, &w->k, &init, BPF_NOEXIST);
		if (err && err != -EEXIST)
			stat_inc(BP_STAT_WAKE_MAP_FULL);
		else if (!err)
			pend_add(&pend_rows[BP_PEND_WAKE]);
		v = bpf_map_lookup_elem(map, &w->k);
	}
	if (v) {
		__sync_fetch_and_add(&v->ns, w->ns);
		__sync_fetch_and_add(&v->count, w->count);
	}
	w->count = 0;
	w->ns = 0;
}

/* the thread's gathered waker rows into the current buffer's waker map */
static __always_inline void flush_waker(struct bp_tls *st)
{
	flush_wk_slot(&st->wks[0]);
	flush_wk_slot(&st->wks[1]);
}

/* the key's 16 bytes (its pad is zero), compared as two words */
static __always_inline bool wk_same(const struct bp_wk_slot *w, const struct bp_wake_key *k)
{
	const __u64 *a = (const __u64 *)&w->k, *b = (const __u64 *)k;

	return w->count && a[0] == b[0] && a[1] == b[1];
}

/* the wait that ended: who ended it, and for a network wait its peer's row */
static __always_inline void wake_rows(struct task_struct *p, struct bp_tls *st,
				      struct task_struct *cur, __u32 ctx, __u64 now)
{
	struct bp_wake_key k = {
		.tgid = p->tgid,
		.state = st->off_class,
		.dir = st->dir,
		.ctx = ctx,
	};
	struct bp_net_val *nv;
	struct bp_wk_slot *w;
	__u64 blocked = now > st->blk_ts ? now - st->blk_ts : 0;

	/*
	 * An interrupt's waker is the task it came on top of only where that
	 * task sent what the wait was for: a loopback receive runs in a
	 * softirq on the sender's stack. A device's or a timer's interrupt
	 * lands on whatever ran: naming that task named a stranger as the
	 * waker, and a reader woken by turns from interrupts on top of three
	 * tasks wrote a row at near a quarter of its wake-ups (3,772 of
	 * 16,615 in 30 s of the bench's mix; 1,539 of 18,037 since).
	 */
	if (ctx == BP_WCTX_TASK || (ctx == BP_WCTX_SOFTIRQ && st->off_class == BP_TS_NET)) {
		k.waker_tgid = cur->tgid;
		k.waker_tid = cur->pid;
	}
	if (wk_same(&st->wks[0], &k)) {
		w = &st->wks[0];
	} else if (wk_same(&st->wks[1], &k)) {
		w = &st->wks[1];
	} else {
		/* the slot not used last makes room */
		w = &st->wks[st->wk_last ? 0 : 1];
		flush_wk_slot(w);
		w->k = k;
		if (k.waker_tid)
			bpf_get_current_comm(w->comm, sizeof(w->comm));
		else
			__builtin_memset(w->comm, 0, sizeof(w->comm));
	}
	st->wk_last = w == &st->wks[1];
	w->ns += blocked;
	w->count++;
	if (st->net_valid) {
		st->net_valid = 0;
		nv = net_row(&st->net);
		if (nv) {
			__sync_fetch_and_add(&nv->wait_ns, blocked);
			__sync_fetch_and_add(&nv->waits, 1);
			__sync_fetch_and_add(&nv->hist[bp_bound_idx(bp_fhist_slot_ns(blocked),
								  BP_FHIST_SLOTS)], 1);
		}
	}
}

/*
 * record -- COMMAND: a local process that ends a wait of the command's own
 * processes on a pipe, Unix socket or loopback TCP connection (a server it
 * talks to) joins the recording at once, so that its whole part in the
 * exchange is seen; userspace says which were added and why
 * (agent/analyze/chain.c). Peers of peers are not followed.
 */
const volatile __u8 follow_peers;
/* boundprof itself, which releases the command it starts through a pipe */
const volatile __u32 follow_skip_tgid;

static __always_inline bool loopback(const struct bp_net_key *k)
{
	if (k->family == AF_INET)
		return k->addr[0] == 127;
	if (k->family != AF_INET6)
		return false;
	/* ::1, or ::ffff:127.x.y.z */
	return (k->addr[15] == 1 && !k->addr[0] && !k->addr[10] && !k->addr[11] &&
		!k->addr[12]) ||
	       (k->addr[10] == 0xff && k->addr[11] == 0xff && k->addr[12] == 127);
}

/*
 * A wakeup in a softirq on top of a task sending on a loopback TCP socket:
 * the receive of what that task sent. A poll's wait names no socket of its
 * own, so the sender's does.
 */
static __always_inline bool waker_sends_loopback(struct task_struct *cur)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	struct sock *sk;
	__u64 skaddr = 0;
	__u16 family;
	__u8 a[16];

	if (!regs || bp_waker_fd_arg(regs->orig_ax) != 0 ||
	    fd_kind_of(fd_file(cur, regs->di), &skaddr) != BP_FD_INET || !skaddr)
		return false;
	sk = (struct sock *)skaddr;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family == AF_INET) {
		BPF_CORE_READ_INTO((__u32 *)a, sk, __sk_common.skc_daddr);
		return a[0] == 127;
	}
	BPF_CORE_READ_INTO(&a, sk, __sk_common.skc_v6_daddr);
	return (a[15] == 1 && !a[0] && !a[10] && !a[11] && !a[12]) ||
	       (a[10] == 0xff && a[11] == 0xff && a[12] == 127);
}

static __always_inline void follow_peer(struct task_struct *p, struct bp_tls *st,
					struct task_struct *cur, __u32 ctx)
{
	__u32 tgid = cur->tgid, ptgid = p->tgid;
	__u8 peer = BP_TARGET_PEER, *v;
	long err;

	if (!follow_peers || !cur->pid || tgid == ptgid || tgid == follow_skip_tgid ||
	    (cur->flags & PF_KTHREAD))
		return;
	if (st->off_class == BP_TS_PIPE) {
		if (ctx != BP_WCTX_TASK)
			return;
	} else if (st->off_class == BP_TS_NET) {
		/* loopback: the receive runs in a softirq on the sender's own stack */
		if (ctx != BP_WCTX_TASK && ctx != BP_WCTX_SOFTIRQ)
			return;
		if (!(st->net_valid && loopback(&st->net)) && !waker_sends_loopback(cur))
			return;
	} else {
		return;
	}
	v = bpf_map_lookup_elem(&targets, &ptgid);
	if (!v || *v != BP_TARGET_CMD || bpf_map_lookup_elem(&targets, &tgid))
		return;
	err = bpf_map_update_elem(&targets, &tgid, &peer, BPF_NOEXIST);
	if (err && err != -EEXIST)
		stat_inc(BP_STAT_TARGET_FULL);
}

static __always_inline void woken(struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	struct task_struct *cur, *leader;
	struct bp_tls *st;
	int reclass = -1, dq;
	__u32 ctx;

	if (!p->pid || !is_target_task(p))
		return;
	leader = p->group_leader;
	barrier_var(leader);
	st = bpf_task_storage_get(&tls, p, 0, 0);
	/*
	 * A wakeup of a thread that never went to sleep changes nothing, nor
	 * one of a thread no longer counted (past its exit: see tls_get())
	 */
	if (!st || ((p->flags & PF_EXITING) && !st->known) || !st->off_ts ||
	    st->state == BP_TS_RUNNING || st->state == BP_TS_RUNQUEUE)
		return;
	cur = bpf_get_current_task_btf();
	ctx = waker_ctx(cur);
	if (st->pending) {
		struct bp_wake_facts w = { .ctx = ctx };

		if (ctx == BP_WCTX_TASK)
			w.fd_kind = waker_fd_kind(cur);
		st->off_class = bp_wake_class(&w);
		st->pending = 0;
		if (st->off_class != BP_TS_SLEEP)
			reclass = st->off_class;
	}
	st->wake_ts = now;
	dq = st->off_class == BP_TS_LOCK && !st->lockwoken;
	st->lockwoken |= dq;
	ptl_change(leader, st->known ? (int)st->state : -1, BP_TS_RUNQUEUE, now,
		   reclass, st->poll_mark, dq);
	st->state = BP_TS_RUNQUEUE;
	st->known = 1;
	follow_peer(p, st, cur, ctx);
	wake_rows(p, st, cur, ctx, now);
}

/*
 * sched_waking runs in the waker's context; sched_wakeup runs where the
 * woken task is queued, which for a wakeup queued to an idle CPU is that
 * CPU's interrupt, with the idle task as current.
 */
SEC("?tp_btf/sched_waking")
int BPF_PROG(bp_wakeup, struct task_struct *p)
{
	woken(p);
	return 0;
}

/*
 * The woken task queued on its CPU: its wait for a CPU starts here, as the
 * kernel's run_delay (schedstat) and perf sched's "sch delay" count it. A
 * wakeup sent to an idle CPU reaches it through an IPI, tens of
 * microseconds on a guest: that time stays with the wait that ended, not
 * the run queue (measured: 20,000 handoffs to an idle vCPU added 0.21 s of
 * run queue that run_delay did not have). Not the kernel's own count
 * (sched_info.run_delay, read at the switch-in): a wakeup that preempts,
 * as one to an idle CPU does, skips the run queue's next clock update
 * (rq_clock_skip_update() in wakeup_preempt()), so run_delay counts
 * nothing of its wait; tried, an O_DIRECT reader's 9,945 handoffs of
 * 0.006 ms each became 23 counted wake-ups.
 */
SEC("?tp_btf/sched_wakeup")
int BPF_PROG(bp_wakeup_enq, struct task_struct *p)
{
	struct bp_tls *st;
	__u64 now;

	if (!p->pid || !is_target_task(p))
		return 0;
	st = bpf_task_storage_get(&tls, p, 0, 0);
	/* a wakeup of a task that never left its CPU (ttwu_runnable) changes nothing */
	if (!st || !st->wake_ts || !st->off_ts)
		return 0;
	now = bpf_ktime_get_ns();
	if (now > st->wake_ts)
		st->wake_ts = now;
	return 0;
}

/* a TCP connection's end: which side made it, and its last bytes */
SEC("?tp_btf/inet_sock_set_state")
int BPF_PROG(bp_sock_state, struct sock *sk, int oldstate, int newstate)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u64 key = (__u64)sk, rx, tx;
	struct bp_sock_ent *e, init = {};
	struct bp_net_val *v;

	if (sk->sk_protocol != IPPROTO_TCP)
		return 0;
	if (newstate == TCP_SYN_SENT) {
		if (!is_target(bpf_get_current_pid_tgid() >> 32))
			return 0;
		init.side = BP_SIDE_CLIENT;
		bpf_map_update_elem(&socks, &key, &init, BPF_ANY);
	} else if (newstate == TCP_ESTABLISHED && oldstate == TCP_SYN_RECV) {
		/* in a softirq: whose it is shows at its first wait */
		init.side = BP_SIDE_SERVER;
		bpf_map_update_elem(&socks, &key, &init, BPF_ANY);
	} else if (newstate == TCP_CLOSE) {
		e = bpf_map_lookup_elem(&socks, &key);
		if (!e)
			return 0;
		if (e->key.tgid) {
			rx = BPF_CORE_READ(tp, bytes_received);
			tx = BPF_CORE_READ(tp, bytes_acked);
			/* a FIN received moved rcv_nxt, and bytes_received with it, by one */
			if (rx && (BPF_CORE_READ(sk, __sk_common.skc_flags) &
				   (1UL << bpf_core_enum_value(enum sock_flags, SOCK_DONE))))
				rx--;
			if ((rx > e->rx || tx > e->tx) && (v = net_row(&e->key)))
				add_bytes(v, rx > e->rx ? rx - e->rx : 0, tx > e->tx ? tx - e->tx : 0);
		}
		bpf_map_delete_elem(&socks, &key);
	}
	return 0;
}

SEC("?tp_btf/sched_wakeup_new")
int BPF_PROG(bp_wakeup_new, struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns();
	struct bp_tls *st;

	if (!p->pid || !is_target_task(p))
		return 0;
	st = tls_get(p, now);
	if (!st)
		return 0;
	/* born runnable: everything until its first switch-in is run-queue time */
	st->off_class = BP_TS_RUNQUEUE;
	st->off_ts = now;
	st->blk_ts = now;
	st->wake_ts = now;
	set_state(p->group_leader, st, BP_TS_RUNQUEUE, now);
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
	r->steal_ns = st->steal_ns;
	r->switches = st->switches;
	r->wakeups = st->wakeups;
	r->wake_lat_ns = st->wake_lat_ns;
	r->wake_lat_max = st->wake_lat_max;
	__builtin_memcpy(r->wake_hist, st->wake_hist, sizeof(r->wake_hist));
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), t->comm);
	/* CONFIG_TASK_XACCT */
	if (bpf_core_field_exists(t->ioac.rchar)) {
		r->rchar = BPF_CORE_READ(t, ioac.rchar);
		r->wchar = BPF_CORE_READ(t, ioac.wchar);
		r->syscr = BPF_CORE_READ(t, ioac.syscr);
		r->syscw = BPF_CORE_READ(t, ioac.syscw);
	} else {
		r->rchar = r->wchar = r->syscr = r->syscw = 0;
	}
}

static __always_inline void fill_proc_rec(struct bp_proc_rec *r, __u32 tgid, struct bp_tls *ls,
					  __u64 now)
{
	struct bp_ptl *ps = &ls->pl;
	__u32 i;

	r->kind = BP_REC_PROC;
	r->tgid = tgid;
	bpf_spin_lock(&ls->pl_lock);
	/* bring the timeline up to now, so every record covers the time so far */
	bp_turns_advance(ps->cnt, ps->qlock, ps->last, now, &ps->turn_ns, &ps->want_ns);
	bp_timeline_advance(ps->cnt, &ps->last, now, ps->ns, &ps->idle_ns);
	for (i = 0; i < BP_TS__MAX; i++)
		r->ns[i] = ps->ns[i];
	r->idle_ns = ps->idle_ns;
	r->turn_ns = ps->turn_ns;
	r->want_ns = ps->want_ns;
	bpf_spin_unlock(&ls->pl_lock);
}

/*
 * A thread's and, with its last thread, its process's totals at their exit:
 * records in the event ring, read at the agent's next look. Kept in hash
 * maps until a full drain took them, each exit was two elements made,
 * drained and freed (~5 us of this program and ~4 us of the agent's at 20
 * exits a second), and a full drain was due whenever they filled an
 * eighth of their maps. A record the ring has no room for is counted lost.
 */
SEC("?tp_btf/sched_process_exit")
int BPF_PROG(bp_thread_exit, struct task_struct *p)
{
	__u64 now = bpf_ktime_get_ns(), old, steal = ~0ULL;
	struct bp_thr_rec *rec;
	struct bp_proc_rec *prec;
	struct bp_tls *st;
	struct task_struct *leader;
	struct bp_tls *ls;
	__u32 tid = p->pid, tgid = p->tgid;

	/*
	 * No is_target() here: proc.bpf.c's exit program may already have
	 * removed the process from the target set. Storage exists only for
	 * tracked threads anyway.
	 */
	if (!tid)
		return 0;
	leader = p->group_leader;
	barrier_var(leader);
	st = bpf_task_storage_get(&tls, p, 0, 0);
	if (st) {
		old = __sync_lock_test_and_set(&st->on_ts, 0);
		if (old && now > old)
			run_done(p, st, old, now, &steal);
		else if (!old)
			unseen_run(p, leader, st, now);
		if (st->known)
			ptl_move(leader, st->state, -1, now, lockwoken_leaves(st, -1));
		st->known = 0;
		flush_waker(st);
		bp_flush_cur_slot(0);
		bp_flush_cur_slot(1);
		nostack_flush(st);
		rec = bpf_ringbuf_reserve(&events, sizeof(*rec), 0);
		if (rec) {
			fill_thr_rec(rec, p, st);
			rec->end_ns = now;
			bpf_ringbuf_submit(rec, event_wakeup(false, sizeof(*rec)));
		} else {
			stat_inc(BP_STAT_TSTORE_FAIL);
		}
	}
	ls = BPF_CORE_READ(p, signal, live.counter) == 0 ? ptl_of(leader, false) : NULL;
	if (ls) {
		prec = bpf_ringbuf_reserve(&events, sizeof(*prec), 0);
		if (prec) {
			fill_proc_rec(prec, tgid, ls, now);
			prec->end_ns = now;
			bpf_ringbuf_submit(prec, event_wakeup(false, sizeof(*prec)));
		} else {
			stat_inc(BP_STAT_PSTATE_FULL);
		}
	}
	return 0;
}

/* what a thread not seen switching yet is doing right now */
static __always_inline __u32 current_state(struct task_struct *t, struct bp_tls *st)
{
	struct bp_switch_facts f = {
		.state = bp_task_state(t),
		.site = cur_slot(st)->wsite,
		.syscall = ~0ULL,
	};
	struct pt_regs *regs = NULL;
	struct bp_judged j = {};

	if (BPF_CORE_READ(t, on_cpu))
		return BP_TS_RUNNING;
	/* a blocked task's saved user registers tell its syscall, as at a switch */
	if (!(t->flags & PF_KTHREAD)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(t);
		if (regs) {
			__u64 sk;

			f.syscall = regs->orig_ax;
			f.futex_op = regs->si;
			if (f.site == BP_WS_NONE && (f.state & BP_TASK_INTERRUPTIBLE) &&
			    bp_fd_syscall(f.syscall))
				f.fd_kind = fd_kind_of(fd_file(t, regs->di), &sk);
		}
	}
	if (f.state & BP_TASK_UNINTERRUPTIBLE)
		f.in_iowait = BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
	f.gil = st->gil = py_gil_wait(t->tgid, regs);
	bp_judge_switch(&f, &j);
	return j.cls;
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
	struct task_struct *leader;
	__u64 ran;
	__u32 slot;
	long n;

	if (!t || !t->pid || !is_target_task(t))
		return 0;
	leader = t->group_leader;
	barrier_var(leader);
	st = tls_get(t, now);
	if (!st)
		return 0;
	if (!st->known) {
		struct bp_stslot *sl = cur_slot(st);
		__u32 s;

		slot_flush(st, sl);
		n = bpf_get_task_stack(t, sl->kst.ips, sizeof(sl->kst.ips), 0);
		sl->kstack = hash_into(&sl->kst, n);
		sl->wsite = kstack_site(&sl->kst);
		sl->kc_valid = 0;
		sl->ustack = 0;
		sl->stored = 0;
		st->nostack = 0;
		s = current_state(t, st);
		if (s == BP_TS_RUNNING) {
			st->on_ts = now;
		} else {
			st->off_class = s;
			st->wake_ts = 0;
			st->se_ns = BPF_CORE_READ(t, se.sum_exec_runtime);
			st->off_ts = now;
			st->blk_ts = now;
			st->pending = 0;
			st->net_valid = 0;
			st->side = 0;
			st->dir = bp_site_dir(sl->wsite);
		}
		set_state(leader, st, s, now);
	} else {
		/*
		 * Running, but its switch-in was never seen: the piece ends
		 * where the kernel's count of its run time says (unseen_run(),
		 * with one account_off() here for the verifier's sake).
		 */
		old = st->off_ts;
		ran = !st->on_ts && BPF_CORE_READ(t, on_cpu) ? unseen_ran(t, st, old, now) : 0;
		if (old && now > old &&
		    __sync_val_compare_and_swap(&st->off_ts, old, ran ? 0 : now) == old) {
			account_off(st, t->pid, old, now - ran);
			if (ran) {
				unseen_ran_done(leader, st, ran, now - ran);
				__sync_val_compare_and_swap(&st->on_ts, 0, now);
			}
		}
		/*
		 * The piece just closed was charged as sleep: what ends a
		 * pending wait reclassifies only the time from here on, in the
		 * timeline as in the off-CPU rows, so that no drained total
		 * goes back.
		 */
		if (st->pending)
			st->poll_mark = ptl_change(leader, -1, -1, now, -1, 0, 0);
		/* the drain that follows must see who ended the waits so far, and the waits */
		flush_waker(st);
		slot_flush(st, &st->sl[0]);
		slot_flush(st, &st->sl[1]);
		nostack_flush(st);
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
	/* the leader's storage holds its process's timeline, if it has one */
	if (t->pid == t->tgid && st->pl.last) {
		fill_proc_rec(prec, t->tgid, st, now);
		prec->end_ns = 0;
		bpf_seq_write(seq, prec, sizeof(*prec));
	}
	scratch_exit(sc);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
