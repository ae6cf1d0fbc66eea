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
 * finer latency histograms (network round trips): eight linear steps per
 * power of two in us; slots 0-7 = [0..7] us, slot s >= 8 = [(8 + s % 8) <<
 * (s / 8 - 1), (9 + s % 8) << (s / 8 - 1)) us
 */
#define BP_FHIST_SLOTS		256

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
	__u32 flags;		/* BP_STACK_*; hashed with the frames */
	__u64 ips[BP_MAX_STACK_DEPTH];	/* innermost first */
};

/*
 * A stack of at most BP_SHORT_STACK_DEPTH frames is stored as this, the
 * head of a struct bp_stack, in maps of its own (kstacks_s0/1,
 * ustacks_s0/1): most stacks are short (new ones in a mixed load: 8 user
 * frames, 10 kernel frames on average), and each was a 1-KiB element to
 * allocate, write and drain. A hash is in one class only: nr is hashed.
 */
#define BP_SHORT_STACK_DEPTH	32

struct bp_stack_short {
	__u32 nr;
	__u32 flags;
	__u64 ips[BP_SHORT_STACK_DEPTH];
};

/*
 * The unwinder stopped before the outermost frame (a cut counted in the
 * unwind_* stats): the stack is shown under [truncated], never as whole.
 */
#define BP_STACK_CUT	1

/*
 * A user stack's flags carry, from this bit up, the low 16 bits of its
 * process's image: task->self_exec_id, one more at each exec. The stacks
 * of an image that an exec replaced are named by its maps, kept aside
 * (symbolize/symbols.h, bp_syms__keep_image()), instead of every map
 * being drained at the exec to name them while those maps were held.
 */
#define BP_STACK_IMAGE_SHIFT	16

/* on-CPU aggregation key: one row per (process, thread, kernel, user, Python stack) */
struct bp_oncpu_key {
	__u32 tgid;
	__u32 tid;
	__u64 kstack;		/* stack hash, 0: none */
	__u64 ustack;
	__u64 pystack;		/* Python frames (bpf/python.h), 0: none */
	/*
	 * A sample in the kernel on behalf of a user thread: the system call
	 * number its saved registers hold (orig_ax), + 1; 0: a user-mode
	 * sample or none. An exception's error code sits in the same slot,
	 * so userspace keeps it only under a system-call kernel stack.
	 */
	__u32 sysnr;
	__u32 pad;
};

struct bp_oncpu_val {
	__u64 samples;
	__u64 ns;		/* sum of sample periods (cpu-clock: ns) */
	char comm[BP_COMM_LEN];	/* the thread's comm at its first sample */
	/*
	 * The user stack key.ustack names, when it is short, kept in the row
	 * (nr 0: in the stack maps, or none). A sample's leaf seldom repeats,
	 * so most on-CPU rows are born with a user stack nobody stored
	 * before: a second element made in the stack map, and drained and
	 * freed again, for each of them.
	 */
	struct bp_stack_short ustk;
};

/*
 * One on-CPU sample in its CPU's slots (oncpu_slots, buffer by buffer):
 * the row's key, its period, the thread's comm and, for a short user
 * stack, its frames. Userspace folds a drain's samples into rows by key,
 * as the kernel's rows were made; a sample that finds its CPU's slots full
 * makes a kernel row as before. A row per sample in a kernel hash map
 * (lookup, and for 60% of samples a new element) was a quarter of the
 * sample's cost, and a BPF ring buffer's lock and commit most of that
 * again (docs/agent.md): each CPU writes only its own slots, with plain
 * stores, and userspace reads them once the buffer is flipped out.
 */
struct bp_oncpu_rec {
	struct bp_oncpu_key key;
	__u64 ns;
	char comm[BP_COMM_LEN];
	__u32 nr;
	__u32 flags;
	__u64 ips[BP_SHORT_STACK_DEPTH];
};

/* how many of a CPU's slots of a buffer hold samples (one cache line a CPU) */
struct bp_oncpu_fill {
	__u32 n;
	__u32 pad[15];
};

/*
 * Per-CPU counters. Every sample the program sees and every sample or stack it
 * loses lands in one of these, so userspace can report losses. The enum is
 * made from the table of every counter (counters.h), where each has its
 * value, report name and meaning.
 */
#include "counters.h"
#include "wait_classes.h"

#define BP__STAT_ENUM(id, value, ...)	BP_STAT_##id = value,
#define BP__STAT_NONE(...)
enum bp_stat {
	BP_COUNTERS(BP__STAT_ENUM, BP__STAT_NONE)
	BP_STAT__MAX = 48,
};
#undef BP__STAT_ENUM
#undef BP__STAT_NONE

struct bp_stats {
	__u64 v[BP_STAT__MAX];
};

/*
 * The double-buffered maps, by the room they share, for the rows the BPF
 * side counts as it adds them (pend_rows[], agent/collect/drainpol.h): a
 * drain is due when one of them fills, not when all of them together fill
 * the smallest. The stack maps (kernel, user, their short variants and
 * the Python ones) are each as large as the others: counted together.
 */
enum bp_pend_map {
	BP_PEND_ONCPU,		/* oncpu0/1 */
	BP_PEND_STACKS,		/* kstacks*, ustacks*, pystacks* */
	BP_PEND_OFF,		/* off0/1 */
	BP_PEND_WAKE,		/* wake0/1 */
	BP_PEND_NET,		/* net0/1 */
	BP_PEND_IO,		/* io0/1 */
	BP_PEND__MAX,
};

enum bp_event_kind {
	BP_EV_EXEC = 1,		/* a process called exec */
	BP_EV_FIRST_SAMPLE = 2,	/* first on-CPU sample of a process in this session */
	BP_EV_EXIT = 3,		/* the last thread of a process exited */
	BP_EV_FORK = 4,		/* a targeted process forked a new process */
	BP_EV_UNWIND_MISS = 5,	/* a user address outside the process's unwind mappings */
};

/* bp_event.flags */
#define BP_EVF_WAS_SAMPLED	1	/* exec: the old image has samples not yet drained */
#define BP_EVF_IDS		2	/* first sample: bp_first_event's ids were read */
#define BP_EVF_FORK_IMAGE	4	/* first sample: still its parent's image (ev.ppid), no exec since the fork */
#define BP_EVF_EXE		8	/* first sample: bp_first_event.exe was read */
#define BP_EVF_MAPS		16	/* exit: struct bp_exit_event, its mappings walked */
#define BP_EVF_EXEC_FILE	32	/* exec: bp_exec_event.file and .path were read */
#define BP_EVF_LAZY		64	/* first sample: it woke no one (its exit names it if gone) */

struct bp_event {
	__u32 kind;
	__u32 tgid;
	__u32 ppid;
	__u32 flags;
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	char comm[BP_COMM_LEN];
};

/* cgroup ids of the trees a process's groups are read from (bp_exec_event.cg) */
enum bp_exec_cg {
	BP_EXCG_V2,		/* the v2 (default) tree */
	BP_EXCG_CPU,		/* the cpu controller's tree: v1 or v2 */
	BP_EXCG_MEMORY,		/* the memory controller's */
	BP_EXCG__MAX,
};

/*
 * BP_EV_FIRST_SAMPLE: whose the process is, read where it runs, so that
 * its symbols need neither /proc/PID/status nor /proc/PID/ns/mnt (under
 * 20 new processes a second, those were a tenth of the agent's own work).
 * Valid with BP_EVF_IDS; 0 in nspid or mnt_ns: not known on this kernel.
 * Its executable's identity spares a stat of /proc/PID/exe (BP_EVF_EXE).
 * A child that has not exec'd since its fork (BP_EVF_FORK_IMAGE) maps
 * what its parent (ev.ppid) mapped then, at the same addresses: its
 * symbols and facts are its parent's, with the fork time and cgroups
 * read here, and userspace reads nothing of it from /proc.
 */
/*
 * An executable as stat(2) of /proc/PID/exe describes it, read from its
 * inode by BPF (bp_first_event.exe): device (the kernel's dev_t, major <<
 * 20 | minor, as /proc/PID/maps prints it), inode, type, links, size,
 * modification and change times.
 */
struct bp_exe_id {
	__u64 ino;
	__s64 size;
	__s64 mtime_sec;
	__s64 ctime_sec;
	__u32 mtime_nsec;
	__u32 ctime_nsec;
	__u32 dev;
	__u32 mode;
	__u32 nlink;
	__u32 pad;
};

/*
 * A process's mappings, walked by BPF at its exit while its memory is
 * still there (BP_EV_EXIT with BP_EVF_MAPS, struct bp_exit_event): each
 * one /proc/PID/maps shows with a file, and its [heap], [stack] and [vdso];
 * other anonymous mappings are left out. A process gone before userspace
 * read its maps is named from them: its first sample need not wake
 * userspace to read /proc at once (first_lazy in oncpu.bpf.c). The walk
 * keeps the first BP_WALK_MAPS mappings of BP_WALK_FILES files (whole 0
 * when there were more); it needs the task_vma iterator (6.7).
 */
#define BP_WALK_MAPS		96
#define BP_WALK_FILES		16
/* bp_walk_map.file: an index into bp_maps_walk.files, or one of these */
#define BP_WM_HEAP		0xfd
#define BP_WM_STACK		0xfe
#define BP_WM_VDSO		0xff
/* bp_walk_map.prot: the kernel's VM_READ, VM_WRITE, VM_EXEC, and VM_MAYSHARE as this */
#define BP_WM_R			1
#define BP_WM_W			2
#define BP_WM_X			4
#define BP_WM_SHARED		8

struct bp_walk_map {
	__u64 start;
	__u64 end;
	__u64 off;		/* bytes into the file, as /proc prints vm_pgoff */
	__u8 file;
	__u8 prot;
	__u8 pad[6];
};

struct bp_maps_walk {
	__u32 nr_maps;		/* in address order */
	__u32 nr_files;
	__u32 vmas;		/* mappings looked at, those left out too */
	__u32 whole;		/* 1: none left out for want of room */
	struct bp_exe_id files[BP_WALK_FILES];
	struct bp_walk_map maps[BP_WALK_MAPS];	/* last: the record ends at maps[nr_maps] */
};

/*
 * BP_EV_EXIT of a sampled process, with BP_EVF_MAPS: its ids, as
 * bp_first_event's, and its mappings; the record is cut after the last
 * one (BP_EXIT_EVENT_SIZE).
 */
struct bp_exit_event {
	struct bp_event ev;
	__u32 euid;
	__u32 nspid;
	__u32 mnt_ns;
	__u32 pad;
	struct bp_maps_walk w;
};

#define BP_EXIT_EVENT_SIZE(nr_maps)						\
	(__builtin_offsetof(struct bp_exit_event, w.maps) +			\
	 (nr_maps) * sizeof(struct bp_walk_map))

struct bp_first_event {
	struct bp_event ev;
	__u32 euid;		/* effective, as /proc/PID/status's second Uid: field */
	__u32 nspid;		/* in its own pid namespace, as NSpid:'s last field */
	__u32 mnt_ns;		/* inode of its mount namespace, as /proc/PID/ns/mnt */
	__u32 pad;
	__u64 start_ns;		/* the process's fork (task->start_time), CLOCK_MONOTONIC */
	__u64 cg[BP_EXCG__MAX];	/* its cgroups, as bp_exec_event's */
	struct bp_exe_id exe;	/* its executable, with BP_EVF_EXE */
};

/* the head of argv an exec event carries: a command line longer is read from /proc */
#define BP_ARGS_LEN		256
/* the longest executable path an exec event carries */
#define BP_PATH_LEN		256

/* bp_exec_event.ids_flags */
#define BP_EXF_ARGS	1	/* args holds argv, or its head (BP_EXF_ARGS_CUT) */
#define BP_EXF_ARGS_CUT	2	/* argv is longer than BP_ARGS_LEN */

/*
 * BP_EV_EXEC: what /proc would say of the new image, read in the kernel at
 * the exec, so that userspace does not read four /proc files per exec and
 * still knows a process that is gone before its event is handled.
 */
struct bp_exec_event {
	struct bp_event ev;
	__u64 start_ns;		/* the process's fork (task->start_time), CLOCK_MONOTONIC */
	__u64 cg[BP_EXCG__MAX];	/* kernfs ids of its cgroups; 0 unknown */
	__u32 euid;		/* effective, as /proc/PID/status's second Uid: field */
	__u16 args_len;		/* bytes of args: argv NUL-separated, as /proc/PID/cmdline */
	__u16 flags;		/* BP_EXF_* */
	__u32 image;		/* task->self_exec_id after the exec: BP_STACK_IMAGE_SHIFT */
	__u32 mnt_ns;		/* as bp_first_event's: the namespace path is in */
	char args[BP_ARGS_LEN];
	/*
	 * With BP_EVF_EXEC_FILE: the file exec'd and the path it was asked
	 * by, absolute or relative to the process's directory (for a script:
	 * its interpreter's): what names a process gone before its maps were
	 * read.
	 */
	struct bp_exe_id file;
	char path[BP_PATH_LEN];
};

/* ------------------------------------------------------------ off-CPU */

/*
 * Thread states for wall-clock accounting. Wait classes of off-CPU
 * intervals use the same numbers. The numbers are the ABI and only grow
 * (saved profiles keep arrays by them); a process's timeline takes, at
 * each moment, the most productive state among its threads by the RANK of
 * the table (bp_timeline_advance() in rules.h), not in the order of the
 * numbers. Every state is a row of bpf/wait_classes.h: running (on a CPU),
 * runqueue (runnable, waiting for a CPU), io (uninterruptible with
 * in_iowait: block IO, page cache miss, fsync), lock (futex mutex wait,
 * kernel mutex, rwsem, semaphore), other (other uninterruptible waits,
 * stopped, traced), sleep (interruptible: waiting for work or events), net
 * (a network socket: receive, send buffer full, connect, accept), pipe
 * (another local process: a pipe, FIFO or Unix socket).
 */
#define BP__TS_ENUM(kind, ts, value, ...)	BP_TS_##ts = value,
enum bp_tstate {
	BP_WAIT_CLASSES(BP__TS_ENUM)
	BP_TS__MAX,		/* the table's last row has the highest value */
};

/*
 * What a blocked thread's kernel stack waits in, from the innermost of its
 * first frames that falls in a range userspace gave (kernel functions by
 * name, from kallsyms; see bpf/offcpu.bpf.c and docs/offcpu.md).
 */
enum bp_wsite {
	BP_WS_NONE = 0,
	BP_WS_LOCK,		/* a kernel lock slow path: mutex, rwsem, semaphore */
	BP_WS_PIPE_IN,		/* reading a pipe, FIFO or Unix socket */
	BP_WS_PIPE_OUT,		/* writing to one that is full, connecting to a Unix socket */
	BP_WS_NET_IN,		/* receiving from a network socket */
	BP_WS_NET_OUT,		/* sending: the socket's buffer is full */
	BP_WS_ACCEPT,		/* waiting for a connection */
	BP_WS_CONNECT,		/* waiting for a connection to be set up */
	BP_WS_POLL,		/* poll, select, epoll: classed by what ends the wait */
	BP_WS__MAX,
};

/* what kind of file an fd is, as far as the wait classes care */
enum bp_fd_kind {
	BP_FD_NONE = 0,		/* not looked up, or no such fd */
	BP_FD_PIPE,		/* pipe or FIFO */
	BP_FD_UNIX,		/* Unix socket */
	BP_FD_INET,		/* IPv4 or IPv6 socket */
	BP_FD_OTHER,
};

/* which way the data of a wait flows, seen from the waiting process */
enum bp_dir {
	BP_DIR_NONE = 0,
	BP_DIR_IN,		/* it waits for input */
	BP_DIR_OUT,		/* it waits to get its output out */
	BP_DIR__MAX,
};

/* where the waker of a thread ran */
enum bp_wctx {
	BP_WCTX_TASK = 0,	/* a task, in its own context */
	BP_WCTX_SOFTIRQ,	/* a softirq (network receive, ...), on top of the task named */
	BP_WCTX_HARDIRQ,	/* a hardirq (timers, devices), on top of the task named */
	BP_WCTX_IDLE,		/* an interrupt while the CPU was idle */
};

/* off-CPU aggregation key: time a thread spent in one state at one place */
struct bp_off_key {
	__u32 tgid;
	__u32 tid;
	__u64 kstack;		/* stack hash at switch-out, 0: none */
	__u64 ustack;
	__u32 state;		/* enum bp_tstate, never BP_TS_RUNNING */
	__u8 side;		/* BP_TS_NET: enum bp_side of the socket */
	__u8 dir;		/* enum bp_dir of the wait */
	__u16 flags;		/* BP_OFF_* */
};

/* bp_off_key.flags */
#define BP_OFF_GIL	1	/* waiting for a Python interpreter's GIL (a lock wait) */

struct bp_off_val {
	__u64 ns;		/* time in this state */
	__u64 count;		/* intervals (switch-out to switch-in, or pieces of one) */
};

/*
 * Cumulative totals, reported by the task iterator at every full drain
 * and, for threads and processes that exit, sent in the event ring. Each
 * record starts with its kind, apart from every enum bp_event_kind: the
 * ring's reader tells the two by it.
 */
enum bp_rec_kind {
	BP_REC_THREAD = 0x100,
	BP_REC_PROC = 0x101,
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
	__u64 rchar, wchar;	/* bytes through read and write system calls (task io accounting) */
	__u64 syscr, syscw;	/* read- and write-family system calls (task io accounting) */
	__u64 steal_ns;		/* of oncpu_ns, what the hypervisor took (the vCPU ran no guest) */
};

struct bp_proc_rec {
	__u32 kind;		/* BP_REC_PROC */
	__u32 tgid;
	__u64 end_ns;		/* exited at; 0: alive */
	__u64 ns[BP_TS__MAX];	/* merged timeline: time in each most productive state */
	__u64 idle_ns;		/* no thread in a known state */
	/* threads taking turns (bp_turns_advance() in rules.h) */
	__u64 turn_ns;		/* one thread ran while another waited on a lock */
	__u64 want_ns;		/* at least one ran while another wanted to */
};

/*
 * Who ended each wait: one row per (woken process, waker thread, class of
 * the wait, its direction, the waker's context), with the time the waits
 * it ended had lasted.
 */
struct bp_wake_key {
	__u32 tgid;		/* the process whose thread was woken */
	__u32 waker_tgid;	/* the waking task (0: the idle task) */
	__u32 waker_tid;
	__u8 state;		/* enum bp_tstate of the wait that ended */
	__u8 dir;		/* enum bp_dir */
	__u8 ctx;		/* enum bp_wctx */
	__u8 pad;
};

struct bp_wake_val {
	__u64 ns;		/* blocked time of the waits it ended */
	__u64 count;
	char comm[BP_COMM_LEN];	/* the waker's comm when the row was made */
};

/* which end of a connection a process is */
enum bp_side {
	BP_SIDE_UNKNOWN = 0,	/* connected before the recording began */
	BP_SIDE_CLIENT,		/* it connected (SYN_SENT) */
	BP_SIDE_SERVER,		/* it was accepted (SYN_RECV -> ESTABLISHED) */
	BP_SIDE_LISTEN,		/* a listening socket: waiting for connections */
	BP_SIDE__MAX,
};

/* network waits of a process by peer: one row per (process, peer, side) */
struct bp_net_key {
	__u32 tgid;
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 port;		/* the peer's port (ours for a listening socket), host order */
	__u8 addr[16];		/* the peer's address; IPv4 in the first four bytes */
	__u8 proto;		/* IPPROTO_TCP, IPPROTO_UDP, ... */
	__u8 side;		/* enum bp_side */
	__u16 lport;		/* our port, host order */
};

struct bp_net_val {
	__u64 wait_ns;		/* blocked on it, in waits that ended */
	__u64 waits;		/* wait episodes: round trips for a client */
	__u64 rx_bytes;		/* TCP payload received */
	__u64 tx_bytes;		/* TCP payload sent and acknowledged */
	__u64 hist[BP_FHIST_SLOTS];	/* blocked time per wait (fine slots) */
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

/* ------------------------------------------------------------ unwinding */

/*
 * User stacks of code without frame pointers are unwound in BPF from tables
 * that userspace builds from each file's .eh_frame (or .debug_frame) and
 * loads into the unwind_rows array (docs/symbols.md). One file's rows are a
 * contiguous run sorted by pc; a row says how to find the caller's frame
 * from any address between its pc and the next row's (x86-64 registers).
 */
enum bp_uw_kind {
	BP_UW_FP = 0,		/* no CFI covers this: a frame-pointer step */
	BP_UW_CFA_SP,		/* CFA = rsp + 8 * cfa */
	BP_UW_CFA_BP,		/* CFA = rbp + 8 * cfa */
	BP_UW_CFA_DEREF_BP,	/* CFA = *(rbp + 8 * cfa): a frame that realigned its stack */
	BP_UW_PLT,		/* CFA = rsp + 8, plus 8 when (pc & 15) >= cfa: a PLT stub */
	BP_UW_SIGNAL,		/* a signal trampoline: registers from the sigcontext */
	BP_UW_STOP,		/* return address undefined: the outermost frame */
	BP_UW_INVALID,		/* a rule the walker cannot apply: the walk stops, counted */
	BP_UW_INDEX,		/* a table's header, never a frame's row (below) */
};

/* bp_uw_row.bp: how to get the caller's rbp */
#define BP_UW_BP_SAME	0	/* unchanged */
#define BP_UW_BP_AT_BP	(-128)	/* saved at [rbp] (a realigned frame's frame pointer) */
				/* else: saved at CFA + 8 * bp */

struct bp_uw_row {
	__u32 pc;		/* first address, counted from the table's base */
	__u8 kind;		/* enum bp_uw_kind */
	__s8 bp;		/* BP_UW_BP_* or a slot relative to the CFA */
	__s16 cfa;		/* CFA offset in 8-byte slots (frames of up to 256 KiB);
				 * the PLT threshold in bytes for BP_UW_PLT */
};

/*
 * A file's table in unwind_rows is a header, a bucket index, then its rows
 * sorted by pc. The header's kind is BP_UW_INDEX, its pc the number of
 * buckets nb, its cfa the bucket shift s. Then come nb + 1 bucket rows:
 * bucket b's pc counts the rows whose pc is at most b << s. So the row
 * for an address in bucket b is among a few rows that the two counts
 * bound (a cache line of them, on average), where a search of the whole
 * table took a cache miss at almost every halving.
 */
#define BP_UW_ROWS_PER_BUCKET	8

/* entries of an interpreter walker's cache (py_seen, r_seen, r_locs: bpf/python.bpf.h) */
#define BP_INTERP_CACHE_ENTRIES	16384

/* unwind_rows holds its rows in chunks of 1 << 16 (512 KiB) */
#define BP_UW_CHUNK_SHIFT	16
#define BP_UW_CHUNK_ROWS	(1U << BP_UW_CHUNK_SHIFT)
#define BP_UW_INDEX_SLOTS(nb)	((nb) + 2)

/* why a mapping has no rows: bp_uw_map.first when count is 0 */
enum bp_uw_none {
	BP_UW_NONE_NOCFI = 0,	/* no unwind table in the file (or not ELF, or JIT code) */
	BP_UW_NONE_BUDGET = 1,	/* its table did not fit the unwind memory budget */
};

/* one executable mapping of a process */
struct bp_uw_map {
	__u64 start, end;	/* [start, end) in the process */
	__u64 bias;		/* row pc = address - bias */
	__u32 first;		/* its file's table (header first) in unwind_rows */
	__u32 count;		/* slots of that table; 0: frame pointers only, first says why */
};

/*
 * A file as the kernel names it: the super block's s_dev (MAJOR << 20 |
 * MINOR, not stat()'s encoding) and the inode number. The key of
 * unwind_files, which finds a file's table from a mapping BPF looks up
 * itself.
 */
struct bp_uw_file_key {
	__u64 dev, ino;
};

/* a loaded table by its file, for a mapping no list has yet (unwind.bpf.h) */
struct bp_uw_file {
	__u64 size;		/* the inode's, as when the table was built */
	__s64 mtime_sec;
	__s64 delta;		/* bias = vm_start - vm_pgoff * 4096 + delta */
	__u32 first, count;	/* as in struct bp_uw_map (count > 0) */
};

/* a mapping the walker found itself, kept for the process's next walks */
#define BP_UW_BRIDGES	4
struct bp_uw_bridge_key {
	__u32 tgid;
	__u32 slot;		/* below BP_UW_BRIDGES */
};

struct bp_uw_bridge {
	struct bp_uw_map m;
	__u64 mm;		/* the image it was found in (mm_struct address) */
	__u64 exec_vm;		/* its executable pages then */
};

/*
 * 248 mappings keep a value within 8 KiB with the hash element around it;
 * a process with more executable mappings is marked partial.
 */
#define BP_UW_MAPS	248
#define BP_UWP_PARTIAL	1	/* not every executable mapping is listed */
#define BP_UWP_MISSED	2	/* BPF asked for a refresh (BP_EV_UNWIND_MISS) */

/* the executable mappings of one process, sorted by start, in unwind_procs */
struct bp_uw_proc {
	__u32 nr;
	__u32 flags;		/* BP_UWP_* */
	__u64 exec_vm;		/* BPF's: mm->exec_vm at the last miss reported (0 as written) */
	struct bp_uw_map maps[BP_UW_MAPS];
};

#endif /* BOUNDPROF_H */
