/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory evidence without hardware counters: for busy processes the working
 * set they touch per second (clear_refs, then smaps_rollup Referenced, as the wss
 * technique does), their resident size and page-fault rates. Probing costs
 * the target (every page touched after a clear re-sets its accessed bit,
 * which traps in some guests), so each process is probed rarely.
 * See docs/classification.md and docs/memprobe.md.
 */
#ifndef BP_MEMPROBE_H
#define BP_MEMPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Processes tracked at once: past this many, the least recently seen one is
 * dropped with its evidence, so that a fork-heavy host cannot grow the table.
 */
#define BP_MEMPROBE_MAX_PROCS	4096

struct bp_memprobe_opts {
	const char *proc_root;		/* default "/proc" */
	uint64_t llc_bytes;		/* probe only processes with more resident than this */
	double window_s;		/* clear_refs .. read (default 1.0) */
	double every_s;			/* minimum time between probes of one process (default 5.0) */
	double min_cpu;			/* candidates use at least this many CPUs (default 0.25) */
	double stale_s;			/* ... as reported by a seen() at most this old (default 3.0) */
	double short_s;			/* the traffic window after a clear (default 0.005; <0: none) */
};

struct bp_mem_evidence {
	uint32_t probes;		/* completed working-set probes */
	uint64_t wss_max;		/* most bytes touched in one window */
	double wss_max_per_s;		/* ... per second of window */
	uint64_t rss;			/* resident bytes at the last look */
	uint64_t minflt, majflt;	/* page faults during the recording (from /proc/PID/stat) */
	double fault_window_s;		/* time those faults were counted over */
	bool valid;
	/*
	 * Memory traffic: bytes referenced again within a short window of a
	 * clear, per second (the most of any probe); floor when the window
	 * saw nearly the whole working set, so that the rate is a lower bound.
	 */
	uint32_t traffic_probes;
	double traffic_per_s;
	double traffic_per_cpu_s;	/* ... per second of CPU its threads had in the window */
	double traffic_cpus;		/* the CPUs it had in the window */
	bool traffic_floor;
};

struct bp_memprobe;

struct bp_memprobe *bp_memprobe__new(const struct bp_memprobe_opts *opts);
void bp_memprobe__free(struct bp_memprobe *m);

/*
 * A process used cpus CPUs over the last interval (on-CPU seconds / wall
 * seconds); busy ones with a large resident set become probe candidates.
 * The first call for a pid also takes its page-fault baseline.
 */
void bp_memprobe__seen(struct bp_memprobe *m, pid_t pid, double cpus, uint64_t now_ns);

/* advance probes: clear, and read back after the window; call every ~100 ms */
void bp_memprobe__tick(struct bp_memprobe *m, uint64_t now_ns);

/*
 * A probe is under way or due: the caller should tick every ~100 ms. When
 * false, ticking once a second (as processes are seen) loses nothing.
 */
bool bp_memprobe__busy(const struct bp_memprobe *m, uint64_t now_ns);

/*
 * The on-CPU samples since the last drain say some process may be busy
 * (cpu_s seconds of CPU sampled over since_s): true when the processes
 * seen busy but too small to probe (their resident sets, read again now)
 * ran all of it but less than a candidate's share (min_cpu) of since_s, so
 * that no process that could be probed can be busy. The agent then skips
 * the drain that would have told the probe: the processes it would have
 * heard of could not be probed. One /proc/PID/stat read per such process.
 */
bool bp_memprobe__explains(struct bp_memprobe *m, double cpu_s, double since_s,
			   uint64_t now_ns);

/* the process is gone: keep its evidence, stop touching /proc/PID */
void bp_memprobe__exited(struct bp_memprobe *m, pid_t pid);

/* the evidence so far (also refreshes page-fault counts if alive); 0 or -ENOENT */
int bp_memprobe__evidence(struct bp_memprobe *m, pid_t pid, uint64_t now_ns,
			  struct bp_mem_evidence *out);

/* the LLC threshold in use (opts->llc_bytes, or bp_llc_bytes() when that was 0) */
uint64_t bp_memprobe__llc_bytes(const struct bp_memprobe *m);

/*
 * The pieces below are pure and exported for the unit tests.
 */

/* /proc/PID/stat fields 10, 12, 22, 24 and 39 */
struct bp_pid_stat {
	uint64_t minflt, majflt;
	uint64_t start_ticks;		/* starttime: the process's identity with its pid */
	uint64_t rss_pages;
	uint64_t cpu_ticks;		/* utime + stime, in clock ticks */
	int cpu;			/* CPU it last ran on; -1 when the line ends before */
};

/* 0 or -EINVAL; comm may hold spaces and parentheses */
int bp_memprobe_parse_stat(const char *text, struct bp_pid_stat *out);
/* "Rss:" and "Referenced:" of smaps_rollup, in bytes; 0 or -EINVAL */
int bp_memprobe_parse_rollup(const char *text, uint64_t *rss, uint64_t *referenced);

#endif /* BP_MEMPROBE_H */
