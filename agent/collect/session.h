/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recording session: wires loader -> collect -> symbols -> profile and
 * keeps per-process metadata as processes exec, get sampled and exit. The
 * caller runs the loop (poll until done) and then exports the profile.
 */
#ifndef BP_SESSION_H
#define BP_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "boundprof.h"
#include "util/htab.h"

struct bp_loader;
struct bp_syms;
struct bp_profile;
struct bp_collect;
struct bp_memprobe;
struct bp_pmu;
struct bp_python;

struct bp_session_opts {
	int hz;
	bool filter;			/* profile only added targets and their children */
	double drain_interval_s;	/* default 1 s */
	bool verbose_libbpf;
	bool offcpu;			/* off-CPU and wall-clock accounting */
	int offcpu_ustacks;		/* 0 never, 1 targeted runs only, 2 always */
	bool no_preempt_stacks;		/* runqueue waits after preemption: no stacks */
	bool no_python;			/* no Python frames (costs measured against) */
};

/* what /proc said about a process, kept across the agent's one-second slices */
struct bp_meta {
	uint32_t pid;		/* 0: free */
	uint32_t ppid;
	char comm[BP_COMM_LEN];
	char *cmdline;
	uint64_t start_ns;	/* CLOCK_MONOTONIC, as /proc/PID/stat says */
	uint64_t end_ns;
	bool exited;
	bool retiring;		/* gone: dropped at the next bp_session__retire() */
};

struct bp_session {
	struct bp_session_opts opts;
	struct bp_loader *loader;
	struct bp_syms *syms;
	struct bp_profile *prof;
	struct bp_collect *collect;
	struct bp_memprobe *memprobe;	/* working set and faults of busy processes */
	struct bp_pmu *pmu;		/* hardware counters per target, NULL without a PMU */
	struct bp_python *python;	/* CPython processes: their frames */
	pid_t *pmu_pids;
	uint32_t nr_pmu_pids;
	uint64_t last_drain_ns;
	uint64_t cpu_busy0, cpu_total0;	/* /proc/stat at the start of the profile */
	struct bp_stats stats0;		/* BPF counters at the start of the profile */
	uint64_t cut0, unseen0;		/* collect and blockio counters at the start */
	uint64_t py_unread0;		/* Python frames unnamed, at the start */
	/* process facts by pid */
	struct bp_htab meta_h;
	struct bp_meta *meta;
	uint32_t nr_meta, cap_meta, dead_meta;
	uint64_t next_drain_ns;
	uint64_t live_ns;		/* when sampling became live */
	uint64_t events;		/* process events received */
	uint64_t exec_drains_skipped;	/* execs whose old image we no longer held */
	uint64_t exits_noticed;		/* processes with facts kept found to have exited */
	int err;			/* first error from an event or drain */
	bool started, stopped;
	bool ksyms_tried;
};

/* open and load everything; 0 or -errno (logged) */
int bp_session__open(struct bp_session **out, const struct bp_session_opts *opts);

/* profile this process (and, with filter, its future children) */
int bp_session__add_target(struct bp_session *s, pid_t pid);

/* attach and start sampling; the recording window starts now */
int bp_session__start(struct bp_session *s);

/* handle events and drain on schedule; waits at most timeout_ms */
int bp_session__poll(struct bp_session *s, int timeout_ms);

/* end the window: last drain, counters, end time. The profile stays. */
int bp_session__stop(struct bp_session *s);

/*
 * Close the current profile and go on filling a fresh one (the agent's
 * slices): everything up to now is drained into the closed profile, which
 * gets its end, its share of the counters and device busy time. The closed
 * profile belongs to the caller. 0 or -errno.
 */
int bp_session__rotate(struct bp_session *s, struct bp_profile **closed);

/* memory probe and hardware counter evidence into the processes of p */
void bp_session__evidence(struct bp_session *s, struct bp_profile *p);

/*
 * Bounded memory for continuous recording, called at each window's close:
 * processes that exited (or were found gone) by the previous call leave the
 * fact and symbol caches; those gone now leave at the next call. Returns
 * how many left.
 */
uint32_t bp_session__retire(struct bp_session *s);

/*
 * For a caller that runs its own event loop (the agent): handle pending
 * process events and memory probes, without draining; the fd becomes
 * readable when events wait. 0 or -errno.
 */
int bp_session__tick(struct bp_session *s);
/* memory probes are under way: tick every ~100 ms rather than once a slice */
bool bp_session__wants_ticks(struct bp_session *s);
int bp_session__events_fd(struct bp_session *s);

/* processes whose facts are kept */
uint32_t bp_session__known(const struct bp_session *s);
/* ... of them, those known to have exited (dropped at the second bp_session__retire()) */
uint32_t bp_session__known_exited(const struct bp_session *s);
/* exits of processes whose facts were kept, noticed since the start (events or /proc) */
uint64_t bp_session__exits_noticed(const struct bp_session *s);

/* samples so far (cheap: reads the per-CPU counters) */
uint64_t bp_session__samples(struct bp_session *s);

void bp_session__free(struct bp_session *s);

#endif /* BP_SESSION_H */
