/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack storage shared by the sampling programs: a stack is captured into a
 * per-CPU scratch slot (capture_ustack(), store_kstack()), hashed, and
 * stored once in the current buffer's stack map under its hash
 * (put_stack()).
 */
#ifndef BP_STACKS_BPF_H
#define BP_STACKS_BPF_H

#include "common.bpf.h"
#include "unwind.bpf.h"

struct bp_stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);	/* sized from userspace before load */
	__type(key, __u64);
	__type(value, struct bp_stack);
};

/*
 * Kernel and user stacks live in separate maps: each non-preallocated map
 * refills its per-CPU element cache from irq_work after the program returns,
 * and starts with a single element for values this large, so storing two new
 * stacks in one map within one program run can fail with -ENOMEM.
 */
BP_EXTERN struct bp_stacks_map kstacks0 SEC(".maps");
BP_EXTERN struct bp_stacks_map kstacks1 SEC(".maps");
BP_EXTERN struct bp_stacks_map ustacks0 SEC(".maps");
BP_EXTERN struct bp_stacks_map ustacks1 SEC(".maps");

/* the short ones (boundprof.h, BP_SHORT_STACK_DEPTH), apart for the same reason */
struct bp_short_stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);	/* sized from userspace before load */
	__type(key, __u64);
	__type(value, struct bp_stack_short);
};

BP_EXTERN struct bp_short_stacks_map kstacks_s0 SEC(".maps");
BP_EXTERN struct bp_short_stacks_map kstacks_s1 SEC(".maps");
BP_EXTERN struct bp_short_stacks_map ustacks_s0 SEC(".maps");
BP_EXTERN struct bp_short_stacks_map ustacks_s1 SEC(".maps");

/*
 * The map of buffer idx that keeps a stack of nr frames: kernel or user,
 * short or not. The update copies the map's value size from the stack, so a
 * short one is stored straight from its struct bp_stack.
 */
static __always_inline void *stack_map(__u32 idx, bool user, __u32 nr)
{
	if (nr <= BP_SHORT_STACK_DEPTH) {
		if (user)
			return idx ? (void *)&ustacks_s1 : (void *)&ustacks_s0;
		return idx ? (void *)&kstacks_s1 : (void *)&kstacks_s0;
	}
	if (user)
		return idx ? (void *)&ustacks1 : (void *)&ustacks0;
	return idx ? (void *)&kstacks1 : (void *)&kstacks0;
}

/* murmur3's 64-bit finalizer: cheap, and every input bit reaches every output bit */
static __always_inline __u64 mix64(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/*
 * A global function, defined once (proc.bpf.c) and verified once on its
 * own: inlined, its loop over up to BP_MAX_STACK_DEPTH frames was walked
 * again for every state of its callers (16,000 instructions of bp_switch's
 * verification, twice; log level 2).
 */
#ifndef BP_DEFINE
extern __u64 bp_hash_stack(const struct bp_stack *st);
#else
struct bp_hash_walk {
	const struct bp_stack *st;
	__u64 h;
};

static long bp_hash_frame(__u32 i, void *data)
{
	struct bp_hash_walk *w = data;

	if (i >= w->st->nr || i >= BP_MAX_STACK_DEPTH)
		return 1;
	w->h = mix64(w->h ^ w->st->ips[i]);
	return 0;
}

/*
 * The frames mixed in a bpf_loop() (inlined by the verifier, 5.19): as a
 * bounded loop the verifier walked all BP_MAX_STACK_DEPTH rounds of it in
 * each program that hashes (2,200 instructions each; log level 2).
 */
__noinline __u64 bp_hash_stack(const struct bp_stack *st)
{
	struct bp_hash_walk w;

	if (!st)
		return 1;
	w.st = st;
	w.h = 0x9e3779b97f4a7c15ULL ^ st->nr ^ (__u64)st->flags << 32;
	bpf_loop(BP_MAX_STACK_DEPTH, bp_hash_frame, &w, 0);
	return w.h ? w.h : 1;
}
#endif /* BP_DEFINE */

/*
 * Store a captured stack in the current buffer's kernel or user stack map;
 * returns its hash, or 0 when there is none (or it was lost, counted).
 */
static __always_inline __u64 put_stack(struct bp_stack *st, __u32 idx, bool user)
{
	void *map;
	long err;
	__u64 h;

	if (!st->nr)
		return 0;
	h = bp_hash_stack(st);
	map = stack_map(idx, user, st->nr);
	err = bpf_map_update_elem(map, &h, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_inc(BP_STAT_STACK_FULL);
		return 0;
	}
	if (!err)
		pend_add(&pend_rows[BP_PEND_STACKS]);
	return h;
}

/*
 * bpf_get_stack() into st: flags 0 for the kernel stack, BPF_F_USER_STACK
 * for the frame-pointer walk of the user stack. -EFAULT is expected (a
 * kernel stack of a sample taken in user mode) and not counted as a loss.
 */
static __always_inline long get_stack(void *ctx, struct bp_stack *st, __u64 flags)
{
	long n = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);

	st->flags = 0;
	if (n <= 0) {
		if (n < 0 && n != -EFAULT)
			stat_inc(flags ? BP_STAT_USTACK_ERR : BP_STAT_KSTACK_ERR);
		st->nr = 0;
		return 0;
	}
	st->nr = n / sizeof(__u64);
	if (flags && st->nr >= BP_MAX_STACK_DEPTH)
		stat_inc(BP_STAT_USTACK_TRUNC);
	return st->nr;
}

/* capture and store the current kernel stack; its hash or 0 */
static __always_inline __u64 store_kstack(void *ctx, struct bp_stack *st, __u32 idx)
{
	get_stack(ctx, st, 0);
	return put_stack(st, idx, false);
}

/*
 * Capture the user stack of the current thread, of process tgid, whose
 * user registers are ip, sp, bp, into st: unwound with the process's
 * tables once userspace has loaded them (unwind.bpf.h), by the kernel's
 * frame-pointer walk before that; kind is whose walk it is (enum
 * bp_uw_walk_kind). Returns the number of frames (0: none). Callers may
 * add to st before put_stack().
 */
static __always_inline long capture_ustack(void *ctx, struct bp_stack *st, __u32 tgid, __u64 ip,
					   __u64 sp, __u64 bp, __u32 kind)
{
	struct task_struct *t = bpf_get_current_task_btf();
	long n;

	st->flags = kind;
	n = bp_unwind_user(st, tgid, ip, sp, bp);

	if (n == -ENOENT)
		n = get_stack(ctx, st, BPF_F_USER_STACK);
	/* whose image the addresses are: boundprof.h */
	if (n > 0)
		st->flags |= (__u32)(t->self_exec_id & 0xffff) << BP_STACK_IMAGE_SHIFT;
	return n;
}

#endif /* BP_STACKS_BPF_H */
