// SPDX-License-Identifier: GPL-2.0
/*
 * On-CPU sampling: runs on every perf_event sample (cpu-clock or cycles) and
 * writes (tgid, tid, kernel stack, user stack) into its CPU's sample slots,
 * which userspace maps and folds into rows when it drains the buffer; no
 * system call and no wakeup per sample. When a CPU's slots are full the
 * sample is counted in a kernel row (oncpu0/1), drained with the others.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "common.bpf.h"
#include "stacks.bpf.h"
#include "python.bpf.h"
#include "rlang.bpf.h"

#define PF_KTHREAD	0x00200000
#define PF_EXITING	0x00000004

struct bp_oncpu_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* sized from userspace before load */
	__type(key, struct bp_oncpu_key);
	__type(value, struct bp_oncpu_val);
};

struct bp_oncpu_counts_map oncpu0 SEC(".maps");
struct bp_oncpu_counts_map oncpu1 SEC(".maps");

/*
 * The samples themselves (struct bp_oncpu_rec): buffer, then CPU, then
 * slot; and each (buffer, CPU)'s count. Both mapped by userspace, which
 * folds the samples into rows when it drains the buffer.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);	/* 2 x smp_cpus x smp_slots, from userspace */
	__type(key, __u32);
	__type(value, struct bp_oncpu_rec);
} oncpu_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);	/* 2 x smp_cpus */
	__type(key, __u32);
	__type(value, struct bp_oncpu_fill);
} oncpu_fill SEC(".maps");

/* possible CPUs, and slots per CPU and buffer (0: every sample makes a row) */
const volatile __u32 smp_cpus = 0;
const volatile __u32 smp_slots = 0;

/* one scratch stack per CPU: perf_event programs never nest on a CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_stack);
} oncpu_scratch SEC(".maps");

/* a new row's value, built here: with its short user stack it outgrows the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_oncpu_val);
} oncpu_vscratch SEC(".maps");

/*
 * Per CPU: the process sampled last, and what is known of it: that it is
 * in seen as sampled, and whether it is an interpreter (as of interp_gen).
 * A CPU-bound process is sampled again and again on its CPU, and each of
 * these was a hash lookup (~1 us in a guest) for each of its samples.
 */
struct seen_memo {
	__u32 tgid;
	__u32 exec_id;
	__u64 start_ns;
	__u32 interp_gen;
	__u8 sampled;
	__u8 interp;	/* BP_MEMO_* */
	__u16 pad;
};

#define BP_MEMO_PY		1
#define BP_MEMO_R		2
#define BP_MEMO_KNOWN		4

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct seen_memo);
} seen_memo SEC(".maps");

/*
 * An interpreter, by the comm its exec gave it: python..., or R (Rscript
 * execs R). Their walkers are set up while they live: their first sample
 * wakes userspace at once.
 */
static __always_inline bool interp_comm(const char *c)
{
	return (c[0] == 'p' && c[1] == 'y' && c[2] == 't' && c[3] == 'h' && c[4] == 'o' &&
		c[5] == 'n') || (c[0] == 'R' && c[1] == '\0');
}

/*
 * The process's first sample: with its ids (struct bp_first_event), read
 * here in its own context, which userspace would otherwise read from /proc
 * while it lives. The process's, not the thread's: its leader's pid.
 */
static __always_inline void emit_first_sample(struct task_struct *task, __u32 tgid)
{
	struct bp_first_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	struct task_struct *leader, *parent;
	__u32 fork_id;
	bool lazy;

	if (!e) {
		stat_inc(BP_STAT_EVENT_DROP);
		return;
	}
	e->ev.kind = BP_EV_FIRST_SAMPLE;
	e->ev.tgid = tgid;
	e->ev.ppid = 0;
	e->ev.flags = BP_EVF_IDS;
	e->ev.ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->ev.comm, sizeof(e->ev.comm));
	bp_task_ids(task, &e->euid, &e->nspid, &e->mnt_ns);
	e->pad = 0;
	leader = BPF_CORE_READ(task, group_leader);
	e->start_ns = BPF_CORE_READ(leader, start_time);
	if (bp_exe_id(task, &e->exe))
		e->ev.flags |= BP_EVF_EXE;
	else
		__builtin_memset(&e->exe, 0, sizeof(e->exe));
	current_cg_ids(task, e->cg);
	/*
	 * Still the image it was forked with: no exec since (an exec counts
	 * self_exec_id up from the parent's count at the fork), its parent
	 * none either; the same executable open, so that a child taken over
	 * by a reaper is not named after the reaper; and as many executable
	 * pages as its parent, so that a child that loaded a library of its
	 * own (a dlopen after the fork) has its maps read.
	 */
	parent = BPF_CORE_READ(leader, real_parent);
	fork_id = BPF_CORE_READ(leader, parent_exec_id);
	if (BPF_CORE_READ(leader, self_exec_id) == fork_id &&
	    BPF_CORE_READ(parent, self_exec_id) == fork_id &&
	    BPF_CORE_READ(leader, mm, exe_file) == BPF_CORE_READ(parent, mm, exe_file) &&
	    BPF_CORE_READ(leader, mm, exe_file) &&
	    BPF_CORE_READ(leader, mm, exec_vm) == BPF_CORE_READ(parent, mm, exec_vm)) {
		e->ev.flags |= BP_EVF_FORK_IMAGE;
		e->ev.ppid = BPF_CORE_READ(parent, tgid);
	}
	/*
	 * Userspace reads a new process's maps when it handles this event.
	 * Once the exit program has shown that it walks a process's
	 * mappings at its exit (common.bpf.h, exit_walks), a process gone by
	 * then is named from those: the event waits for userspace's next
	 * tick, instead of waking it for each new process (11 times a second
	 * under 20 new processes a second, ~60 us each on a guest).
	 */
	lazy = exit_walks == BP_EXIT_WALKS_OK && !interp_comm(e->ev.comm) && !filter_targets &&
	       !filter_cgroup_id;
	if (lazy)
		e->ev.flags |= BP_EVF_LAZY;
	bpf_ringbuf_submit(e, event_wakeup(!lazy, sizeof(*e)));
}

/* sample_period is in ns for cpu-clock; for cycles the ns column stays 0 */
const volatile __u8 period_is_ns;

/*
 * The sampled thread's user stack: from the sample's registers when it was
 * taken in user mode, else (a sample in a syscall or an interrupt) from the
 * user registers the kernel saved when the thread entered it. Those also
 * say which system call a kernel-mode sample serves (*sysnr: orig_ax + 1,
 * 0 for none): one load per kernel sample, nothing per call.
 */
static __always_inline __u64 sample_ustack(struct bpf_perf_event_data *ctx, struct bp_stack *st,
					   __u32 idx, __u32 tgid, struct task_struct *task,
					   __u32 *sysnr)
{
	__u64 ip = ctx->regs.ip, sp = ctx->regs.sp, bp = ctx->regs.bp;
	struct pt_regs *regs;
	long nr;

	/*
	 * Loaded here, each at its own offset: left to clang, a load may sink
	 * below the branch from a precomputed ctx + off, which the verifier
	 * rejects ("dereference of modified ctx ptr").
	 */
	barrier_var(ip);
	barrier_var(sp);
	barrier_var(bp);
	/* kernel addresses have the top bit set on x86-64 */
	if (ip >> 63) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (!regs)
			return 0;
		ip = regs->ip;
		sp = regs->sp;
		bp = regs->bp;
		nr = regs->orig_ax;
		/* an interrupt's ~vector is negative; beyond 1023 is no x86-64 system call */
		if (nr >= 0 && nr < 1024)
			*sysnr = (__u32)nr + 1;
	}
	capture_ustack(ctx, st, tgid, ip, sp, bp, BP_UW_WALK_ONCPU);
	/* a short one goes into its row (struct bp_oncpu_val), not the stack maps */
	if (st->nr && st->nr <= BP_SHORT_STACK_DEPTH)
		return bp_hash_stack(st);
	return put_stack(st, idx, true);
}

/*
 * The sample into its CPU's next slot of buffer idx; false when they are
 * all taken (a drain late), and the sample makes a row in the kernel
 * instead. One writer per slot set: perf_event programs do not nest on a
 * CPU, and userspace reads a buffer only after the flip's grace period.
 */
static __always_inline bool slot_sample(struct bpf_perf_event_data *ctx,
					const struct bp_oncpu_key *key, const struct bp_stack *st,
					__u32 idx)
{
	__u32 cpu = bpf_get_smp_processor_id(), fk, sk, n, i;
	struct bp_oncpu_fill *f;
	struct bp_oncpu_rec *r;

	if (cpu >= smp_cpus)
		return false;
	fk = idx * smp_cpus + cpu;
	f = bpf_map_lookup_elem(&oncpu_fill, &fk);
	if (!f)
		return false;
	n = f->n;
	if (n >= smp_slots)
		return false;
	sk = fk * smp_slots + n;
	r = bpf_map_lookup_elem(&oncpu_slots, &sk);
	if (!r)
		return false;
	__builtin_memcpy(&r->key, key, sizeof(*key));
	r->ns = period_is_ns ? ctx->sample_period : 0;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	r->nr = 0;
	r->flags = 0;
	/* st still holds the user stack: the kernel's was taken before it */
	if (key->ustack && st->nr <= BP_SHORT_STACK_DEPTH) {
		r->nr = st->nr;
		r->flags = st->flags;
		/*
		 * Only its frames: each slot is written once a drain, so
		 * every line of it is a cache miss, and a whole short stack
		 * is four lines where a sample's has eight frames, one.
		 */
		for (i = 0; i < BP_SHORT_STACK_DEPTH && i < st->nr; i++)
			r->ips[i] = st->ips[i];
	}
	f->n = n + 1;
	return true;
}

SEC("perf_event")
int bp_oncpu(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct bp_oncpu_key key = {};
	struct bp_oncpu_val *val, *init;
	struct task_struct *task;
	struct bp_stack *scratch;
	__u32 idx = buf_idx & 1, zero = 0;
	void *counts = idx ? (void *)&oncpu1 : (void *)&oncpu0;
	__u8 one = BP_SEEN_SAMPLED, *seen_state, interp;
	struct seen_memo *memo;
	__u64 ip, start;
	__u32 exec_id, gen;
	bool in_exec, user;
	long err;

	stat_inc(BP_STAT_SAMPLES);
	if (tid == 0) {
		stat_inc(BP_STAT_IDLE);
		return 0;
	}
	task = bpf_get_current_task_btf();
	if (!is_target_task(task)) {
		stat_inc(BP_STAT_FILTERED);
		return 0;
	}
	scratch = bpf_map_lookup_elem(&oncpu_scratch, &zero);
	if (!scratch)
		return 0;

	key.tgid = tgid;
	key.tid = tid;
	/*
	 * A sample taken in user mode has no kernel stack: asking for it
	 * anyway cost 2 us a sample in a guest (perf's callchain buffers,
	 * cold), a fifth of a CPU-bound thread's sample.
	 */
	ip = ctx->regs.ip;
	barrier_var(ip);
	if (ip >> 63)
		key.kstack = store_kstack(ctx, scratch, idx);
	/*
	 * Inside execve the user stack belongs to an image about to vanish
	 * (or to one just born); such a sample marking the process sampled
	 * would make userspace drain every map to resolve one frame, which
	 * under process churn is most execs. The kernel stack tells the story.
	 */
	in_exec = BPF_CORE_READ_BITFIELD(task, in_execve);
	user = !(task->flags & PF_KTHREAD) && !in_exec;
	memo = bpf_map_lookup_elem(&seen_memo, &zero);
	if (!memo)
		return 0;
	start = BPF_CORE_READ(task, group_leader, start_time);
	exec_id = BPF_CORE_READ(task, self_exec_id);
	if (memo->tgid != tgid || memo->start_ns != start || memo->exec_id != exec_id) {
		memo->tgid = tgid;
		memo->exec_id = exec_id;
		memo->start_ns = start;
		memo->sampled = 0;
		memo->interp = 0;
	}
	if (user) {
		key.ustack = sample_ustack(ctx, scratch, idx, tgid, task, &key.sysnr);
		/* read once: userspace counts it up after adding a process */
		gen = interp_gen;
		barrier_var(gen);
		interp = memo->interp;
		if (!(interp & BP_MEMO_KNOWN) || memo->interp_gen != gen) {
			interp = BP_MEMO_KNOWN;
			if (py_walk && bpf_map_lookup_elem(&py_procs, &tgid))
				interp |= BP_MEMO_PY;
			if (r_walk && bpf_map_lookup_elem(&r_procs, &tgid))
				interp |= BP_MEMO_R;
			memo->interp = interp;
			memo->interp_gen = gen;
		}
		/*
		 * Read back: the verifier then knows one unknown value here,
		 * not a constant per path above, and walks the walks below
		 * once (24,000 instructions of bp_oncpu's verification).
		 */
		interp = *(volatile __u8 *)&memo->interp;
		/* Python frames apart from the native walk: merged in userspace */
		if (interp & BP_MEMO_PY)
			key.pystack = py_store_stack(task, tgid, tid, idx);
		/* or R's: a process runs one of the two (its own subprogram, verified once) */
		if (!key.pystack && (interp & BP_MEMO_R))
			key.pystack = r_store_stack(tgid, tid, idx);
	}

	if (slot_sample(ctx, &key, scratch, idx))
		goto counted;
	stat_inc(BP_STAT_ONCPU_SLOTS_FULL);
	val = bpf_map_lookup_elem(counts, &key);
	if (!val) {
		/*
		 * A new row is born holding this sample: a leaf address seldom
		 * repeats, so most samples of a busy thread make one, and the
		 * lookup after the insert was a third map operation for them.
		 */
		init = bpf_map_lookup_elem(&oncpu_vscratch, &zero);
		if (!init)
			return 0;
		bpf_get_current_comm(init->comm, sizeof(init->comm));
		init->samples = 1;
		init->ns = period_is_ns ? ctx->sample_period : 0;
		init->ustk.nr = 0;
		init->ustk.flags = 0;
		/* scratch still holds the user stack: the kernel's was taken before it */
		if (key.ustack && scratch->nr <= BP_SHORT_STACK_DEPTH) {
			init->ustk.nr = scratch->nr;
			init->ustk.flags = scratch->flags;
			__builtin_memcpy(init->ustk.ips, scratch->ips, sizeof(init->ustk.ips));
		}
		err = bpf_map_update_elem(counts, &key, init, BPF_NOEXIST);
		if (!err) {
			pend_add(&pend_rows[BP_PEND_ONCPU]);
		} else if (err != -EEXIST || !(val = bpf_map_lookup_elem(counts, &key))) {
			stat_inc(BP_STAT_MAP_FULL);
			return 0;
		}
	}
	if (val) {
		__sync_fetch_and_add(&val->samples, 1);
		if (period_is_ns)
			__sync_fetch_and_add(&val->ns, ctx->sample_period);
	}
counted:
	pend_add(&pend_samples);
	stat_inc(BP_STAT_COUNTED);
	if (in_exec)
		return 0;

	/*
	 * The process this CPU sampled last, known sampled already. The
	 * start time tells a reused pid apart, the exec count an image
	 * (whose first sample is reported anew).
	 */
	if (memo->sampled)
		return 0;
	seen_state = bpf_map_lookup_elem(&seen, &tgid);
	if (!seen_state) {
		/*
		 * Not seen, and its last thread on its way out (signal->live
		 * is 0): the exit program, which drops the process's entry,
		 * may have run already, and an entry made now would outlive
		 * the process and hide the first sample of the next one under
		 * its pid (pid_max is 32768 here: 300 forks a second reuse a
		 * pid within two minutes). 5 of 85 sampled children of a
		 * fork-per-input job were first sampled there. Reported
		 * without an entry, once per CPU (the memo).
		 */
		if ((task->flags & PF_EXITING) && BPF_CORE_READ(task, signal, live.counter) == 0) {
			emit_first_sample(task, tgid);
			memo->sampled = 1;
			return 0;
		}
		if (bpf_map_update_elem(&seen, &tgid, &one, BPF_NOEXIST) == 0)
			emit_first_sample(task, tgid);
		else if (!bpf_map_lookup_elem(&seen, &tgid)) {
			stat_inc(BP_STAT_SEEN_FULL);
			return 0;
		}
	} else if (*seen_state != BP_SEEN_SAMPLED) {
		*seen_state = BP_SEEN_SAMPLED;
		emit_first_sample(task, tgid);
	}
	memo->sampled = 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
