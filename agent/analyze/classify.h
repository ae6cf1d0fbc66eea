/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict: from measured evidence to what bounds a workload, how sure we
 * are, the evidence in numbers, and the levers that fit. Pure: no I/O, so
 * the decision table is unit-tested on synthetic evidence. The method and
 * the thresholds, with the reasoning, are in docs/classification.md.
 */
#ifndef BP_CLASSIFY_H
#define BP_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "boundprof.h"
#include "analyze/interp.h"
#include "analyze/verdict_classes.h"

/*
 * The verdict classes (analyze/verdict_classes.h; docs/classification.md):
 * unknown is too little data, blocked-on-peer mostly waiting on a neighbour
 * through a pipe, cpu-throttled waiting out its cgroup's CPU quota,
 * gil-bound threads of one Python interpreter waiting for its GIL,
 * syscall-bound on-CPU mostly in the kernel serving its system calls.
 */
#define BP__CLASS_ENUM(id, ...)	BP_CLASS_##id,
enum bp_class {
	BP_VERDICT_CLASSES(BP__CLASS_ENUM)
	BP_CLASS__MAX,
};

enum bp_confidence {
	BP_CONF_LOW = 0,
	BP_CONF_MEDIUM,
	BP_CONF_HIGH,
};

const char *bp_class_name(enum bp_class c);		/* "cpu-bound", ... (the contract) */
const char *bp_class_colour(enum bp_class c);		/* "#e4572e": plots and tables */
/* the class named name (bp_class_name), or -ENOENT */
int bp_class_find(const char *name);

/* what memory does to a process's speed (bp_verdict.mem_judgement) */
enum bp_mem_judgement {
	BP_MEM_UNMEASURED = 0,
	BP_MEM_FITS,			/* its working set fits in the last-level cache */
	BP_MEM_CPU,			/* its traffic is small next to the machine's bandwidth */
	BP_MEM_BANDWIDTH,		/* its traffic is a good part of it */
	BP_MEM_FAULTS,			/* page faults: memory being mapped in */
	BP_MEM_COUNTERS_CPU,		/* hardware counters say compute */
	BP_MEM_COUNTERS_MEM,		/* hardware counters say memory */
};

/* "bandwidth", "cpu", "fits-cache", "page-faults", "memory", "unmeasured" */
const char *bp_mem_judgement_name(uint32_t j);
const char *bp_confidence_name(enum bp_confidence c);	/* "low", "medium", "high" */

/* every number the decision uses, in one table (docs/classification.md) */
struct bp_thresholds {
	double min_wall_s;		/* less wall time: unknown */
	double min_busy_s;		/* busy thread-time for full confidence */
	uint64_t min_samples;		/* on-CPU samples for full confidence in a compute verdict */
	double idle_sleep;		/* sleep share of wall time: idle */
	double idle_max_cpu;		/* ... while on-CPU below this share of wall time */
	double io;			/* IO share of busy thread-time: io-bound */
	double lock;			/* lock share: lock-bound */
	double gil;			/* Python GIL-wait share: gil-bound (before lock) */
	double runqueue;		/* run-queue share: cpu-starved */
	double compute;			/* on-CPU share: compute (cpu or memory) */
	double fault;			/* page-fault share of on-CPU time: memory */
	double wss_llc;			/* unused since the traffic rule; kept for the ABI of the table */
	double wss_llc_medium;
	double wss_rss;
	double fits_llc;		/* working set below this x LLC: fits, cpu with confidence */
	double membw_traffic;		/* memory traffic / this machine's bandwidth: memory (no PMU) */
	double window_visible;		/* less of a stream seen: the traffic window is blind here */
	double peer;			/* pipe-wait share of wall time: blocked-on-peer */
	double ipc_cpu;			/* PMU: IPC at or above, with low MPKI: cpu */
	double mpki_cpu;
	double ipc_mem;			/* PMU: IPC below, with high MPKI: memory */
	double mpki_mem;
	double busy_machine;		/* machine CPU busy share that makes starvation certain */
	double borderline;		/* a share this close to its threshold costs a confidence level */
	double io_saturated_busy;	/* device busy share ... */
	double io_saturated_inflight;	/* ... with this many in flight: the device is the limit */
	double throttled;		/* run-queue share spent throttled by a CPU quota: cpu-throttled */
	double mem_pressure;		/* memory pressure share (some) that names the memory limit */
	double syscall;			/* on-CPU share in the kernel serving system calls: syscall-bound */
	/*
	 * cpu-starved needs busy CPUs: the machine's busy share, or the host's
	 * steal as a share of wall time; else the wait after a wakeup is
	 * wake-up (handoff) latency, not contention
	 */
	double starved_busy;
	double starved_steal;
	/* threads taking turns on a lock (analyze/turns.h): lock-bound whatever the lock share */
	double turn_share;		/* one ran, others waited on the lock, of the time 2+ wanted to */
	double turn_share_medium;	/* ... this much: medium confidence */
	double turn_parallelism;	/* ... with at most this many CPUs used */
	double turn_demand;		/* ... and at least this many threads wanting to run */
	double turn_sibling;		/* lock waits its own threads ended, below: one level less */
};

extern const struct bp_thresholds bp_default_thresholds;

/* what was measured about one process (or the whole recording) */
struct bp_evidence {
	const char *who;		/* "it" or a process name, for the sentences */
	double wall_s;			/* wall time inside the window */
	bool have_timeline;
	double tl_s[BP_TS__MAX];	/* merged timeline: most productive state */
	double tl_idle_s;
	double tl_wall_s;		/* what tl_s are shares of; 0: wall_s */
	/* thread-seconds in each state, summed over threads */
	double on_s, rq_s, io_s, lock_s, other_s, sleep_s;
	/*
	 * network waits: a client's (net_s, a cost of the work) and a server's
	 * (net_idle_s: accepting, or reading the next request: waiting for work)
	 */
	double net_s, net_idle_s;
	double pipe_s;			/* waiting on a neighbour through a pipe */
	/* the neighbour it waited on most, and which way (enum bp_dir) */
	uint32_t peer_pid;
	const char *peer_comm;
	uint32_t peer_dir;
	/* its network waits (client side), all peers together */
	const char *net_peer;		/* the peer it waited on most: "127.0.0.1:8080" */
	uint32_t net_peers;		/* peers in all */
	uint64_t net_waits;		/* wait episodes: round trips */
	double net_wait_s;		/* of those episodes */
	double net_p50_ms, net_p99_ms;
	uint64_t net_rx, net_tx;
	/* the pipeline it is a stage of ("cat → gzip -9 → wc -c"), and whether it bounds it */
	const char *pipeline;
	bool bottleneck;
	uint32_t threads;
	uint32_t ncpus;
	double machine_busy;		/* share of all CPUs busy during the window */
	double others_cpu_s;		/* CPU seconds other processes used meanwhile */
	double steal_s;			/* of on_s, the hypervisor ran something else */
	/* on-CPU samples by what the code was doing */
	uint64_t samples;
	double frac_io_path;		/* kernel submitting or completing block IO */
	double frac_fault;		/* kernel handling page faults */
	double frac_kernel;		/* other kernel work (system calls, interrupts) */
	/* memory, without counters */
	bool mem_valid;
	uint64_t llc_bytes;
	const char *llc_source;
	uint32_t wss_probes;
	uint64_t wss_max;		/* bytes touched in one probe window */
	double wss_per_s;
	uint64_t rss;
	double minflt_per_s, majflt_per_s;
	/* memory traffic against this machine's measured bandwidth (proc/membw.h) */
	bool traffic_valid;
	bool traffic_floor;		/* the whole working set was seen: a lower bound */
	double traffic_per_s;		/* bytes re-referenced per second */
	double traffic_per_cpu_s;	/* ... per second of CPU it had in the window */
	double traffic_cpus;		/* the CPUs it had in the window */
	bool membw_valid;
	double membw_1_gbs, membw_n_gbs;
	uint32_t membw_threads;
	const char *membw_source;
	uint64_t membw_cache_bytes;	/* the cache streamed from here (membw.h), 0 unknown */
	/*
	 * The traffic window against a stream that timed itself
	 * (proc/probecal.h): below BP_PROBECAL_VISIBLE_MIN seen, traffic
	 * says nothing about the process.
	 */
	bool window_cal;
	bool window_floor;		/* it saw the stream's whole set: it sees */
	double window_stream_gbs, window_seen_gbs, window_visible;
	/* memory, with counters */
	bool pmu_valid;
	double ipc, mpki, dram_gbs, pmu_running;
	/* the device it waited on most */
	bool io_valid;
	const char *io_dev;
	uint64_t io_ops;
	double io_req_kib;		/* typical request size */
	bool io_reads;			/* mostly reads */
	uint64_t io_flushes;		/* flush / FUA-only and other non-data requests */
	double io_p50_ms, io_p99_ms;
	double dev_busy, dev_inflight;	/* the device's own busy share and mean in flight */
	/* the hottest function, for the Amdahl lines */
	const char *hot_name;
	double hot_frac;		/* of on-CPU samples, as the leaf */
	/* limits set from outside, from the cgroup's own accounting (docs/groups.md) */
	double throttled_rq_s;		/* the part of rq_s spent waiting out a CPU quota */
	bool quota_valid;		/* a quota applies */
	bool quota_v1;			/* set in a v1 tree (cpu.cfs_quota_us), else cpu.max */
	const char *quota_at;		/* the cgroup that sets it */
	int64_t quota_us;
	uint64_t period_us;
	double throttled_s;		/* throttled time cpu.stat counted ... */
	double throttle_window_s;	/* ... over this much of the window */
	uint64_t nr_periods, nr_throttled;
	bool mem_limit_valid;		/* a memory limit applies */
	bool mem_v1;
	const char *mem_at;
	uint64_t mem_max, mem_high;	/* bytes, UINT64_MAX: none */
	uint64_t mem_events;		/* high and max events (v1: failcnt) in the window */
	uint64_t mem_oom_kill;
	bool psi_valid;			/* the cgroup's pressure, shares of the time covered */
	double psi_some[3], psi_full[3];	/* cpu, memory, io */
	/* Python: set when the process ran CPython and its frames were walked */
	const char *python;		/* its version, "3.11.2" */
	bool python_free_threaded;	/* a build without a GIL */
	double gil_s;			/* thread-seconds waiting for the GIL (part of lock_s) */
	char gil_threads[160];		/* the threads that waited most, for the sentence */
	bool py_hot;			/* hot_name is the innermost Python frame (function and line) */
	double py_native;		/* the share of its time inside compiled code below it */
	char py_native_name[192];	/* that code's hottest function (module), "" if none */
	/*
	 * Whose code the hot spot is (analyze/owned.h). hot_own: hot_name is
	 * the user's innermost function on most samples, not the hottest leaf,
	 * and hot_frac its share; the code beneath it that is not the user's
	 * is the reason. hot_foreign: hot_name is such code itself (a library,
	 * the kernel) and no caller of the user's was found.
	 */
	bool hot_own;
	bool hot_foreign;
	const char *hot_module;		/* hot_foreign: where hot_name is */
	double own_beneath;		/* share of hot_name's time in code the user does not own */
	double own_kernel;		/* ... of its time in the kernel */
	double own_callee_frac;		/* ... under own_callee */
	const char *own_callee;		/* what it calls most: "memset" ... */
	const char *own_callee_module;	/* ... and where: "libc.so.6", "[kernel]" */
	bool own_callee_kernel;
	char own_callee_buf[128];	/* what own_callee points to, when set from a profile */
	/*
	 * Code without a name ([anon] JIT code, an address outside any file,
	 * a stripped file): the module it is in, so that the advice says why
	 * and how to get names instead of calling it a building block.
	 */
	const char *hot_unnamed;	/* hot_name has no name; NULL: it has one */
	const char *own_callee_unnamed;	/* own_callee has no name; NULL: it has one */
	/*
	 * The hot code is an interpreter's that boundprof does not walk
	 * (analyze/interp.h): hot_name is then unset, since the interpreter's
	 * internals are no code its user can change.
	 */
	const struct bp_interp *interp;
	char interp_script[128];	/* the script it runs, "" unknown */
	char interp_calls[192];		/* what the script calls that has a name: "sin() and sqrt()" */
	double interp_calls_frac;	/* ... its share of on-CPU samples */
	uint32_t interp_calls_n;	/* ... how many functions that names */
	/* the system calls it makes (syscall-bound) */
	bool sys_valid;			/* syscr/syscw were counted for it */
	uint64_t sys_reads, sys_writes;	/* read- and write-family calls in the window */
	uint64_t sys_rbytes, sys_wbytes;	/* bytes through them */
	double frac_syscall;		/* on-CPU samples in the kernel inside a system call */
	uint32_t sys_top[3];		/* the calls most samples were in (x86-64 numbers) */
	double sys_top_frac[3];		/* their share of the on-CPU samples; 0: none */
	/*
	 * Wakeups of its blocked threads and their wait for a CPU afterwards
	 * (wake_lat_s is part of rq_s; the rest of rq_s followed preemptions)
	 */
	uint64_t wakeups;
	double wake_lat_s;
	double wake_p50_ms, wake_max_ms;
	/* threads taking turns on a lock (analyze/turns.h) */
	bool turns_valid;
	double turn_s;			/* one thread ran while another waited on a lock */
	double want_s;			/* at least one ran while another wanted to */
	uint32_t turn_threads;		/* threads that waited on a lock */
	double sibling_wake;		/* of lock-wait time, ended by its own threads; <0 unknown */
	char lock_site[160];		/* where they waited: pthread_mutex_lock's caller, "" unknown */
	double lock_site_share;		/* ... its share of the lock wait */
	/* R: set when the process ran GNU R and its frames were walked (analyze/rlang.h) */
	const char *r_version;		/* "4.2.2"; py_hot, hot_name and py_native as for Python */
	bool r_nosrc;			/* no frame had a source line: R kept no srcrefs */
	bool r_native_block;		/* the compiled code under it is a building block (BLAS) */
};

#define BP_VERDICT_LINES	10
#define BP_VERDICT_LEN		320	/* longest line, NUL included */

struct bp_verdict {
	enum bp_class cls;
	enum bp_class second;		/* the runner-up share (mixed, and context) */
	enum bp_confidence conf;
	/*
	 * The lines live in one allocation (text) sized to fit: the agent keeps
	 * a verdict for every active process of a window, thousands of them
	 * under process churn.
	 */
	const char *evidence[BP_VERDICT_LINES];
	uint32_t nr_evidence;
	const char *levers[BP_VERDICT_LINES];
	uint32_t nr_levers;
	char *text;			/* owns the lines; bp_verdict_free() */
	/* shares of busy thread-time the decision used */
	double busy_s;
	double share_cpu, share_mem, share_io, share_lock, share_rq, share_other;
	double share_net;		/* client-side network waits */
	/* blocked-on-peer: the neighbour, which way, and its share of wall time */
	uint32_t peer_pid;
	char peer_comm[BP_COMM_LEN];
	uint32_t peer_dir;		/* enum bp_dir */
	double peer_share;
	bool wait_net;			/* the dominant wait is the network (wait_class io-bound) */
	/* what memory does to its speed, whatever the class (enum bp_mem_judgement) */
	uint32_t mem_judgement;
	double mem_traffic_gbs;		/* its traffic; 0: unmeasured */
	double mem_traffic_per_cpu_gbs;	/* ... per second of CPU it had */
	double mem_machine_gbs;		/* what this machine streams at its parallelism */
	double mem_ratio;
	double share_throttled;		/* run-queue time waiting out a CPU quota (not in share_rq) */
	double share_gil;		/* of share_lock: waiting for a Python GIL */
	double share_syscall;		/* of on-CPU time: in the kernel serving system calls */
	/* Amdahl caps */
	double hot_wall;		/* the hottest function's share of wall time */
	double hot_4x;			/* speedup if it became 4x faster */
	double wait_share;		/* the dominant wait's share of wall time */
	enum bp_class wait_class;
	double wait_cap;		/* speedup if all of that wait were overlapped */
	double parallelism;		/* CPUs used: on-CPU seconds per wall second */
	/*
	 * Run-queue time after wakeups while the CPUs were not busy: wake-up
	 * (handoff) latency, left out of share_rq and of the shares' whole
	 */
	double handoff_s;
	double share_handoff;		/* of busy thread-time with it */
	uint64_t handoffs;
	double handoff_p50_ms, handoff_max_ms;
	/* threads taking turns on a lock (lock-bound by analyze/turns.h), else 0 */
	double turn_share;		/* of the time 2+ threads wanted to run, one ran under the lock */
	double serial_share;		/* of wall time, one ran while the others waited for the lock */
};

/*
 * Decide; t may be NULL for the defaults. *v is overwritten: free a verdict
 * it held before. Out of memory, the verdict keeps its class but no lines.
 */
void bp_classify(const struct bp_evidence *e, const struct bp_thresholds *t, struct bp_verdict *v);

/*
 * dst = a copy of src with its own lines, the line lead (NULL: none) first.
 * 0, or -ENOMEM (dst then has no lines).
 */
int bp_verdict_lead(const struct bp_verdict *src, const char *lead, struct bp_verdict *dst);

/* release the lines; v reads as no lines afterwards. NULL is fine. */
void bp_verdict_free(struct bp_verdict *v);

/* Amdahl: the whole speedup when a fraction w gets k times faster (k <= 0: removed) */
double bp_amdahl(double w, double k);

#endif /* BP_CLASSIFY_H */
