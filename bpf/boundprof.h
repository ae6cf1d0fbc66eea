/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one header shared by the BPF programs and userspace: the ABI between
 * them. Fixed-width types only, explicit padding, enums append-only.
 */
#ifndef BOUNDPROF_H
#define BOUNDPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>	/* userspace; BPF code gets these from vmlinux.h */
#endif

/* kernel.perf_event_max_stack default; a deeper stack map value is rejected */
#define BP_MAX_STACK_DEPTH	127
#define BP_COMM_LEN		16

/*
 * Stacks are stored once, keyed by a 64-bit hash of their frames, instead of
 * in a BPF_MAP_TYPE_STACK_TRACE map: that map loses a stack on every bucket
 * collision (-EEXIST), which at the sizes we can afford loses about n/2m of
 * n unique stacks in m buckets. A 64-bit hash collides with odds ~n^2/2^65.
 * 0 means "no stack" (kernel stack of a sample taken in user mode, user stack
 * of a kernel thread, or an error counted in bp_stats).
 */
struct bp_stack {
	__u32 nr;		/* frames used in ips[] */
	__u32 pad;
	__u64 ips[BP_MAX_STACK_DEPTH];	/* innermost first */
};

/* on-CPU aggregation key: one row per (process, thread, kernel, user stack) */
struct bp_oncpu_key {
	__u32 tgid;
	__u32 tid;
	__u64 kstack;		/* stack hash, 0: none */
	__u64 ustack;
};

struct bp_oncpu_val {
	__u64 samples;
	__u64 ns;		/* sum of sample periods (cpu-clock: ns) */
	char comm[BP_COMM_LEN];	/* the thread's comm at its first sample */
};

/*
 * Per-CPU counters. Every sample the program sees and every sample or stack it
 * loses lands in one of these, so userspace can report losses.
 */
enum bp_stat {
	BP_STAT_SAMPLES = 0,		/* every on-CPU sample the program ran for */
	BP_STAT_IDLE,			/* ... of which the CPU was idle */
	BP_STAT_FILTERED,		/* ... of which belonged to an untargeted process */
	BP_STAT_COUNTED,		/* ... of which were aggregated */
	BP_STAT_MAP_FULL,		/* ... of which were lost: the counts map was full */
	BP_STAT_KSTACK_ERR,		/* kernel stack lost: bpf_get_stack() failed */
	BP_STAT_USTACK_ERR,		/* user stack lost: bpf_get_stack() failed (not -EFAULT) */
	BP_STAT_STACK_FULL,		/* stack lost: the stack map was full */
	BP_STAT_USTACK_TRUNC,		/* user stack hit BP_MAX_STACK_DEPTH */
	BP_STAT_EVENT_DROP,		/* process event lost: ring buffer full */
	BP_STAT_SEEN_FULL,		/* first-sample tracking map full */
	BP_STAT_TARGET_FULL,		/* a child could not be added to the target set */
	BP_STAT__MAX = 32,
};

struct bp_stats {
	__u64 v[BP_STAT__MAX];
};

enum bp_event_kind {
	BP_EV_EXEC = 1,		/* a process called exec */
	BP_EV_FIRST_SAMPLE = 2,	/* first on-CPU sample of a process in this session */
	BP_EV_EXIT = 3,		/* the last thread of a process exited */
	BP_EV_FORK = 4,		/* a targeted process forked a new process */
};

/* bp_event.flags */
#define BP_EVF_WAS_SAMPLED	1	/* exec: the old image has samples not yet drained */

struct bp_event {
	__u32 kind;
	__u32 tgid;
	__u32 ppid;
	__u32 flags;
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	char comm[BP_COMM_LEN];
};

#endif /* BOUNDPROF_H */
