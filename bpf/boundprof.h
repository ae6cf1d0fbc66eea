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
/* latency histograms: log2 buckets in us, slot 0 = [0, 2) us, slot k = [2^k, 2^(k+1)) us */
#define BP_HIST_SLOTS		32

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

/* on-CPU aggregation key: one row per (process, thread, kernel, user, Python stack) */
struct bp_oncpu_key {
	__u32 tgid;
	__u32 tid;
	__u64 kstack;		/* stack hash, 0: none */
	__u64 ustack;
	__u64 pystack;		/* Python frames (bpf/python.h), 0: none */
};

struct bp_oncpu_val {
	__u64 samples;
	__u64 ns;		/* sum of sample periods (cpu-clock: ns) */
	char comm[BP_COMM_LEN];	/* the thread's comm at its first sample */
};

/*
 * Per-CPU counters. Every sample the program sees and every sample or stack it
 * loses lands in one of these, so userspace can report losses. The enum is
 * made from the table of every counter (counters.h), where each has its
 * value, report name and meaning.
 */
#include "counters.h"

#define BP__STAT_ENUM(id, value, ...)	BP_STAT_##id = value,
#define BP__STAT_NONE(...)
enum bp_stat {
	BP_COUNTERS(BP__STAT_ENUM, BP__STAT_NONE)
	BP_STAT__MAX = 32,
};
#undef BP__STAT_ENUM
#undef BP__STAT_NONE

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

/* ------------------------------------------------------------ off-CPU */

/*
 * Thread states for wall-clock accounting, in order of productivity: a
 * process's timeline takes, at each moment, the lowest-numbered state among
 * its threads. Wait classes of off-CPU intervals use the same numbers.
 */
enum bp_tstate {
	BP_TS_RUNNING = 0,	/* on a CPU */
	BP_TS_RUNQUEUE,		/* runnable, waiting for a CPU (preempted, or woken) */
	BP_TS_IO,		/* uninterruptible with in_iowait: block IO, page cache miss, fsync */
	BP_TS_LOCK,		/* futex mutex wait, kernel mutex / rwsem / semaphore */
	BP_TS_OTHER,		/* other uninterruptible waits, stopped, traced */
	BP_TS_SLEEP,		/* interruptible: sleep, poll, network, waiting for work */
	BP_TS__MAX,
};

/* off-CPU aggregation key: time a thread spent in one state at one place */
struct bp_off_key {
	__u32 tgid;
	__u32 tid;
	__u64 kstack;		/* stack hash at switch-out, 0: none */
	__u64 ustack;
	__u32 state;		/* enum bp_tstate, never BP_TS_RUNNING */
	__u32 flags;		/* BP_OFF_* */
};

/* bp_off_key.flags */
#define BP_OFF_GIL	1	/* waiting for a Python interpreter's GIL (a lock wait) */

struct bp_off_val {
	__u64 ns;		/* time in this state */
	__u64 count;		/* intervals (switch-out to switch-in, or pieces of one) */
};

/*
 * Cumulative totals, reported by the task iterator at every drain and, for
 * threads and processes that exit, kept in the thr_exit / proc_exit maps
 * until userspace collects them. Each record starts with its kind.
 */
enum bp_rec_kind {
	BP_REC_THREAD = 1,
	BP_REC_PROC = 2,
};

struct bp_thr_rec {
	__u32 kind;		/* BP_REC_THREAD */
	__u32 tgid;
	__u32 tid;
	__u32 state;		/* current enum bp_tstate; BP_TS__MAX: unknown */
	__u64 start_ns;		/* first seen: created, or found at the start */
	__u64 end_ns;		/* exited at; 0: alive */
	__u64 oncpu_ns;		/* exact, from context switches */
	__u64 switches;		/* times switched out */
	__u64 wakeups;		/* woken from a blocking state */
	__u64 wake_lat_ns;	/* sum of wakeup-to-run latencies */
	__u64 wake_lat_max;
	__u64 wake_hist[BP_HIST_SLOTS];	/* wakeup-to-run latency */
	char comm[BP_COMM_LEN];
};

struct bp_proc_rec {
	__u32 kind;		/* BP_REC_PROC */
	__u32 tgid;
	__u64 end_ns;		/* exited at; 0: alive */
	__u64 ns[BP_TS__MAX];	/* merged timeline: time in each most productive state */
	__u64 idle_ns;		/* no thread in a known state */
};

/* ----------------------------------------------------------- block IO */

enum bp_io_op {
	BP_IO_READ = 0,
	BP_IO_WRITE = 1,
	BP_IO_OTHER = 2,	/* flush, discard, write-zeroes, ... */
	BP_IO_OP__MAX,
};

/* one row per (device, submitting process, direction) */
struct bp_io_key {
	__u32 dev;		/* MKDEV(major, minor) as the kernel encodes it: major << 20 | minor */
	__u32 tgid;		/* process that submitted the request; 0: unknown */
	__u32 op;		/* enum bp_io_op */
	__u32 kthread;		/* 1: submitted by a kernel thread (writeback, loop, journal) */
	char comm[BP_COMM_LEN];	/* submitter's comm (names kernel threads) */
};

struct bp_io_val {
	__u64 ops;
	__u64 bytes;
	__u64 lat_ns;		/* sum of start-to-done latencies */
	__u64 hist[BP_HIST_SLOTS];
};

/* device-wide state, never drained: userspace reads it and takes differences */
struct bp_dev_val {
	__s64 inflight;		/* requests started and not yet done */
	__u64 busy_start;	/* when inflight last went from 0 to 1 */
	__u64 busy_ns;		/* total time with at least one request in flight */
	__u64 max_inflight;
};

#endif /* BOUNDPROF_H */
