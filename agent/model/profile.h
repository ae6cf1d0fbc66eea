/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profile: symbolized samples with interned strings, frames and stacks.
 * Every exporter reads this and nothing else; it is what `report` will load
 * back from a saved profile.
 *
 * A sample is (process, thread, kind, stack) with a count and a time: for
 * on-CPU samples count = samples and ns = sampled CPU time; for off-CPU kinds
 * (added later) count = blocking events and ns = time blocked.
 */
#ifndef BP_PROFILE_H
#define BP_PROFILE_H

#include <stdbool.h>
#include <string.h>
#include <stdint.h>
#include <sys/types.h>

#include "boundprof.h"
#include "model/counters.h"
#include "model/wait_class.h"
#include "util/htab.h"

struct bp_frame {
	const char *name;	/* interned; NULL when it could not be named */
	const char *module;	/* interned, never NULL */
	const char *path;	/* interned or NULL */
	const char *build_id;	/* interned or NULL */
	uint64_t offset;	/* module-relative address (see symbols.h) */
	bool kernel;
	/*
	 * Source position, where known: DWARF line tables for native code, the
	 * code object for Python. A frame is then one line of a function, so
	 * hotspots and Amdahl caps can name the line.
	 */
	const char *file;	/* interned source file as recorded, or NULL */
	uint32_t line;		/* 1-based; 0: unknown */
	bool inlined;		/* inlined into the frame below it (its caller) */
	bool python;		/* a Python function: name is its qualname */
};

struct bp_sample {
	uint32_t pid;
	uint32_t tid;
	uint32_t stack;		/* index into the stack table */
	uint32_t kind;		/* enum bp_kind */
	uint64_t count;
	uint64_t ns;
};

/* system calls kept apart per process; more are counted together */
#define BP_SYS_TOP	16

struct bp_thread {
	uint32_t tid;
	char comm[BP_COMM_LEN];
	/* exact totals from context switches (have_totals), cumulative */
	bool have_totals;
	bool exited;
	uint32_t state;			/* enum bp_tstate at the last report */
	uint64_t start_ns, end_ns;	/* tracked from / exited at (0: alive) */
	uint64_t oncpu_ns;
	uint64_t steal_ns;		/* of oncpu_ns, the hypervisor ran something else */
	uint64_t switches;
	uint64_t wakeups;
	uint64_t wake_lat_ns;
	uint64_t wake_lat_max;
	uint64_t wake_hist[BP_HIST_SLOTS];
	uint64_t rchar, wchar;		/* bytes through read and write system calls */
	uint64_t syscr, syscw;		/* read- and write-family system calls */
	uint64_t gil_ns;		/* of its lock waits, those for a Python GIL */
};

struct bp_proc {
	uint32_t pid;
	uint32_t ppid;
	char comm[BP_COMM_LEN];
	const char *cmdline;	/* interned, arguments joined by spaces; NULL if unknown */
	uint64_t start_ns;	/* CLOCK_MONOTONIC; 0: already running at the start */
	uint64_t end_ns;	/* 0: still running at the end */
	bool exited;
	bool have_meta;		/* comm/cmdline/start read from /proc */
	const char *python;	/* interned CPython version ("3.11.2") whose frames it has */
	bool python_free_threaded;	/* ... a free-threaded build: no GIL */
	const char *r_version;	/* interned GNU R version ("4.2.2") whose frames it has */
	uint32_t nr_threads, cap_threads;
	struct bp_thread *threads;
	struct bp_htab thread_h;	/* tid -> index in threads, once there are many */
	/* merged timeline (have_timeline): ns in each most productive state */
	bool have_timeline;
	uint64_t tl_ns[BP_TS__MAX];
	uint64_t tl_idle_ns;
	/* memory evidence without counters (mem_valid), filled by the session */
	bool mem_valid;
	uint32_t wss_probes;
	uint64_t wss_max;		/* bytes touched in one probe window */
	double wss_per_s;
	uint64_t rss;
	uint64_t minflt, majflt;
	double fault_window_s;
	/* hardware counters (pmu_valid): for a COMMAND, its whole tree, on the root */
	bool pmu_valid;
	uint64_t cycles, instructions, cache_misses;
	double pmu_running;		/* share of the time the counters actually counted */
	double pmu_seconds;
	uint64_t last_drain_samples;	/* on-CPU samples in the latest drain */
	/* network waits by side (enum bp_side), pipe waits by direction (enum bp_dir): thread-ns */
	uint64_t net_side_ns[BP_SIDE__MAX];
	uint64_t pipe_dir_ns[BP_DIR__MAX];
	/*
	 * Memory traffic (traffic_valid): bytes re-referenced per second over a
	 * short probe window; traffic_floor when the window saw the whole
	 * working set, so that the rate is a lower bound.
	 */
	bool traffic_valid;
	bool traffic_floor;
	double traffic_per_s;
	double traffic_per_cpu_s;	/* per second of CPU it had meanwhile */
	double traffic_cpus;		/* the CPUs it had in the window */
	/* whose it is and where it runs (have_ids), read with the facts (docs/groups.md) */
	bool have_ids;
	uint32_t uid;			/* effective */
	const char *user;		/* interned name; NULL: the uid has none */
	const char *cgroup;		/* interned: the path to group by; NULL unknown */
	const char *unit;		/* interned: systemd unit or container; NULL none */
	const char *cg_v2;		/* interned: its v2 path (pressure); NULL none */
	const char *cg_cpu;		/* interned: the cgroup carrying the cpu controller */
	const char *cg_memory;		/* ... and the memory controller; NULL unknown */
	uint8_t cg_cpu_tree, cg_memory_tree;	/* enum bp_cgroup_tree of those */
	/*
	 * On-CPU samples in the kernel serving a system call, by call: the
	 * BP_SYS_TOP calls first seen, the rest in sys_other. sys_nr holds
	 * the x86-64 number + 1: 0 is an empty slot.
	 */
	uint64_t sys_nr[BP_SYS_TOP];
	uint64_t sys_samples[BP_SYS_TOP];
	uint64_t sys_other;
	/*
	 * Threads taking turns (have_timeline; analyze/turns.h): ns with one
	 * thread running while another waited on a lock, of want_ns with at
	 * least one running while another wanted to.
	 */
	uint64_t turn_ns, want_ns;
};

/* add n syscall samples of call nr to proc */
void bp_proc__add_sys(struct bp_proc *proc, uint64_t nr, uint64_t n);

/* the trees a cgroup path is in; the values of proc/cgroup.h's enum bp_cg_tree */
enum bp_cgroup_tree {
	BP_CGROUP_V2 = 0,
	BP_CGROUP_V1_CPU,
	BP_CGROUP_V1_MEMORY,
	BP_CGROUP_V1_SYSTEMD,
	BP_CGROUP__TREES,
};

const char *bp_cgroup_tree_name(uint32_t t);	/* "v2", "cpu", "memory", "systemd" */

/* pressure stall information: cpu, memory, io */
#define BP_PSI_RES	3

/*
 * A cgroup's own accounting over the window (collect/cgroups.c): the CPU
 * quota that applies and its throttling, pressure stalls, the memory limit
 * and its events. Counters are differences over watched_ns.
 */
struct bp_cgroup {
	const char *path;		/* interned, as /proc/PID/cgroup shows it */
	uint32_t tree;			/* enum bp_cgroup_tree */
	uint64_t watched_ns;		/* the part of the window its counters cover */
	bool cpu_valid;			/* the cpu controller is there */
	const char *quota_at;		/* interned: the nearest cgroup with a quota; NULL none */
	int64_t quota_us;		/* -1: no quota */
	uint64_t period_us;
	uint64_t nr_periods, nr_throttled, throttled_ns;	/* of quota_at */
	bool psi_valid;			/* a v2 cgroup: stall time, us */
	uint64_t psi_some_us[BP_PSI_RES], psi_full_us[BP_PSI_RES];
	bool mem_valid;			/* the memory controller is there */
	const char *mem_at;		/* interned: the nearest cgroup with a limit; NULL none */
	uint64_t mem_max, mem_high;	/* bytes; UINT64_MAX: none */
	uint64_t mem_high_events, mem_max_events, mem_oom, mem_oom_kill;	/* of mem_at */
};

/* block IO, per device and per (device, process, direction) */
struct bp_io_stats {
	uint64_t ops;
	uint64_t bytes;
	uint64_t lat_ns;		/* sum of start-to-done latencies */
	uint64_t hist[BP_HIST_SLOTS];	/* latency, log2 us (see boundprof.h) */
};

struct bp_io_dev {
	uint32_t dev;			/* kernel encoding: major << 20 | minor */
	char name[32];			/* "vda", or "MAJOR:MINOR" when sysfs has no name */
	struct bp_io_stats op[BP_IO_OP__MAX];
	uint64_t busy_ns;		/* time with a request in flight, inside the window */
	uint64_t max_inflight;
};

struct bp_io_row {
	uint32_t dev;
	uint32_t pid;			/* submitter; 0 unknown */
	uint32_t op;			/* enum bp_io_op */
	bool kthread;			/* submitted by a kernel thread */
	char comm[BP_COMM_LEN];
	struct bp_io_stats st;
};

struct bp_wake_row;
struct bp_net_row;
/*
 * One run of a COMMAND recorded into the profile: `record -- COMMAND` makes
 * one, `record -r N` N of them, so that a comparison can take medians.
 */
struct bp_run {
	uint32_t pid;		/* the command's process */
	int status;		/* its wait status */
	double wall_s;		/* from its release into exec to its exit */
	double cpu_s;		/* user + system time of it and its children (getrusage) */
	double runqueue_s;	/* wall time its process tree had nothing running, waiting for a CPU */
};

struct bp_profile {
	/* what was recorded */
	uint64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
	int64_t start_unix_ns;		/* wall-clock start, for saved profiles */
	int hz;
	int ncpus;
	bool pmu;			/* sampled a hardware cycles event */
	const char *event;		/* "cpu-clock" or "cycles" */
	bool system_wide;
	bool offcpu_enabled;		/* context switches were traced */
	double machine_busy;		/* share of all CPU time busy (/proc/stat), -1 unknown */
	uint64_t llc_bytes;		/* last-level cache one core uses, 0 unknown */
	const char *llc_source;		/* interned: where llc_bytes came from */
	struct bp_stats stats;		/* BPF-side counters, summed over CPUs */
	/* the native unwinder's tables in the kernel, at the end of the profile */
	struct {
		bool enabled;
		uint64_t budget_bytes;	/* the rows array (--unwind-mem) */
		uint64_t used_bytes;	/* rows loaded */
		uint64_t procs_bytes;	/* per-process mapping lists */
		uint64_t files, rows;
	} unwind;
	BP_UCOUNTER_FIELDS;		/* userspace counters (user_stacks_cut, ...) */

	/* interned data; indices are stable */
	struct bp_frame *frames;
	uint32_t nr_frames, cap_frames;
	uint32_t *stack_pool;		/* frame ids, root first, per stack */
	uint64_t pool_len, pool_cap;
	uint64_t *stack_off;		/* stack i: pool[off[i] .. off[i] + len[i]) */
	uint32_t *stack_len;
	uint32_t nr_stacks, cap_stacks;
	struct bp_sample *samples;
	uint32_t nr_samples, cap_samples;
	struct bp_proc **procs;		/* each allocated alone: pointers stay valid */
	uint32_t nr_procs, cap_procs;

	/* block IO (io_enabled when the block programs ran) */
	bool io_enabled;
	struct bp_io_dev *io_devs;
	uint32_t nr_io_devs, cap_io_devs;
	struct bp_io_row *io_rows;
	uint32_t nr_io_rows, cap_io_rows;

	/* who ended each wait, network waits by peer (model/waits.h) */
	struct bp_wake_row *wake_rows;
	uint32_t nr_wake_rows, cap_wake_rows;
	struct bp_net_row *net_rows;
	uint32_t nr_net_rows, cap_net_rows;
	struct bp_htab wake_h, net_h;

	/* this machine's memory bandwidth, measured (proc/membw.h); membw_valid */
	bool membw_valid;
	double membw_1_gbs;		/* one thread streaming */
	double membw_n_gbs;		/* membw_threads threads streaming */
	uint32_t membw_threads;
	const char *membw_source;	/* interned: when and on what CPU it was measured */
	uint64_t membw_cache_bytes;	/* the cache streamed from here (membw.h), 0 unknown */
	/*
	 * What memprobe's traffic window saw of a stream timed by itself
	 * (proc/probecal.h), when membw_window: err 0, or why it could not
	 * look (-errno).
	 */
	bool membw_window;
	bool membw_window_floor;	/* it saw the whole set: it sees, whatever the ratio */
	int membw_window_err;
	double membw_window_stream_gbs, membw_window_seen_gbs, membw_window_visible;
	/* COMMAND runs, in order (see struct bp_run); none for -a and -p */
	struct bp_run *runs;
	uint32_t nr_runs, cap_runs;

	/* cgroups the processes run in, with their accounting (docs/groups.md) */
	struct bp_cgroup *cgroups;
	uint32_t nr_cgroups, cap_cgroups;
	/* system-wide pressure stall time in the window (psi_valid, /proc/pressure), us */
	bool psi_valid;
	uint64_t psi_some_us[BP_PSI_RES], psi_full_us[BP_PSI_RES];

	struct bp_htab str_h, frame_h, stack_h, sample_h, proc_h, io_row_h, cgroup_h;
	char **strs;
	uint32_t nr_strs, cap_strs;
	/* recorded by the agent for a user without root (serve/local.h); not saved */
	bool via_agent;
};

struct bp_profile *bp_profile__new(void);
void bp_profile__free(struct bp_profile *p);

/* intern a string; NULL for NULL or on allocation failure */
const char *bp_profile__intern(struct bp_profile *p, const char *s);

/* the id of a frame equal to *f (its strings need not be interned); <0: -ENOMEM */
int64_t bp_profile__frame(struct bp_profile *p, const struct bp_frame *f);

/* the id of the stack with these frame ids, root first; <0: -ENOMEM */
int64_t bp_profile__stack(struct bp_profile *p, const uint32_t *frames, uint32_t nr);

static inline const uint32_t *bp_profile__stack_frames(const struct bp_profile *p,
						       uint32_t stack, uint32_t *nr)
{
	*nr = p->stack_len[stack];
	return p->stack_pool + p->stack_off[stack];
}

/*
 * Move every sample to the stack map[its stack] (samples that land on the
 * same key add up), keeping their order; 0 or -ENOMEM (the samples are
 * then as before).
 */
int bp_profile__restack(struct bp_profile *p, const uint32_t *map);

/* add count/ns to the sample (pid, tid, kind, stack); 0 or -ENOMEM */
int bp_profile__add(struct bp_profile *p, uint32_t pid, uint32_t tid, enum bp_kind kind,
		    uint32_t stack, uint64_t count, uint64_t ns);

/* the process with this pid, created (zeroed but for pid) when create is set */
struct bp_proc *bp_profile__proc(struct bp_profile *p, uint32_t pid, bool create);

/* the thread, added with this comm when new; NULL on -ENOMEM */
struct bp_thread *bp_proc__thread(struct bp_proc *proc, uint32_t tid, const char *comm);

/* the device / row with this key, created zeroed when create is set; NULL: none or -ENOMEM */
struct bp_io_dev *bp_profile__io_dev(struct bp_profile *p, uint32_t dev, bool create);
struct bp_io_row *bp_profile__io_row(struct bp_profile *p, uint32_t dev, uint32_t pid,
				     uint32_t op, bool kthread, const char *comm, bool create);

/* append a run; 0 or -ENOMEM */
int bp_profile__add_run(struct bp_profile *p, const struct bp_run *r);
/* the cgroup row of (tree, path), created (zeroed) when create is set; NULL: none or -ENOMEM */
struct bp_cgroup *bp_profile__cgroup(struct bp_profile *p, uint32_t tree, const char *path,
				     bool create);

/* wall time of the process inside the recording window, in ns */
uint64_t bp_profile__proc_wall_ns(const struct bp_profile *p, const struct bp_proc *proc);

/*
 * The display name of a frame: "name", "name (FILE:LINE)" when its line is
 * known (FILE is the source file's base name), or "module+0xOFFSET"; "_[k]"
 * is appended for kernel frames when kernel_suffix is set. Returns buf.
 */
const char *bp_frame_label(const struct bp_frame *f, bool kernel_suffix, char *buf, size_t len);

/*
 * The display name of the function a frame is a line of: its name alone,
 * or "unnamed code in MODULE" for a frame without one (all of a module's
 * unnamed code counts as one function: its addresses say nothing a user
 * can act on). Returns buf.
 */
const char *bp_func_label(const struct bp_frame *f, char *buf, size_t len);

/*
 * An R function's frame: walked interpreter frames (python) are Python's
 * but for R's, whose module is R's own (libR.so, or an R executable built
 * without it) (docs/r.md).
 */
static inline bool bp_frame_r(const struct bp_frame *f)
{
	return f->python && f->module && (!strcmp(f->module, "libR.so") || !strcmp(f->module, "R"));
}

#endif /* BP_PROFILE_H */
