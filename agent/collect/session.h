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
#include "collect/loader.h"
#include "proc/pidset.h"
#include "util/htab.h"

struct bp_loader;
struct bp_syms;
struct bp_profile;
struct bp_collect;
struct bp_memprobe;
struct bp_pmu;
struct bp_cgwatch;
struct bp_proc_ids;
struct bp_cg_target;
struct bp_unwind;
struct bp_python;

struct bp_session_opts {
	int hz;
	bool filter;			/* profile only added targets and their children */
	double drain_interval_s;	/* default 1 s */
	bool verbose_libbpf;
	bool offcpu;			/* off-CPU and wall-clock accounting */
	int offcpu_ustacks;		/* 0 never, 1 targeted runs only, 2 always */
	bool no_preempt_stacks;		/* runqueue waits after preemption: no stacks */
	bool skip_self;			/* leave this process out of the profile */
	bool no_idle_samples;		/* idle CPUs' samples not taken (busy from /proc/stat) */
	/*
	 * A process sampled before it has lived this long gets its unwind
	 * tables when it has (0: at once); its samples until then are
	 * walked by frame pointers, and where those end counted in
	 * unwind_no_table.
	 */
	uint64_t unwind_min_age_ns;
	bool membw;			/* this machine's memory bandwidth, for the verdicts */
	const char *state_dir;		/* where it is kept; NULL: bp_state_dir() */
	const struct bp_cg_target *cgroup;	/* only this cgroup and its descendants (-G) */
	bool no_unwind;			/* user stacks by frame pointers only */
	uint64_t unwind_mem;		/* unwind table budget in bytes; 0: the default */
	bool no_python;			/* no Python frames (costs measured against) */
	bool no_r;			/* no R frames */
	uint64_t dwarf_budget;		/* DWARF bytes held for source lines; 0: the default */
	bool follow_peers;		/* record -- COMMAND: add the local processes it waits on */
	bool serial_load;		/* programs verified on one CPU (collect/twinload.h),
					 * and kallsyms read after them: a lower peak */
	bool lazy_symbols;		/* files read on their first frame (symbols.h) */
	bool dwarf_not_from_root;	/* no lines from distribution debug files (symbols.h) */
};

/* what /proc said about a process, kept across the agent's one-second slices */
struct bp_meta {
	uint32_t pid;		/* 0: free */
	uint32_t ppid;
	char comm[BP_COMM_LEN];
	char *cmdline;
	uint64_t start_ns;	/* CLOCK_MONOTONIC, as /proc/PID/stat says */
	uint64_t image_ns;	/* its exec, when seen: the current image began */
	uint64_t end_ns;
	bool exited;
	bool retiring;		/* gone: dropped at the next bp_session__retire() */
	struct bp_proc_ids *ids;	/* user and cgroups (collect/cgroups.h); NULL unknown */
};

/* a process whose unwind list missed with no change in its maps: rewritten later */
struct bp_uw_pending {
	pid_t pid;
	uint64_t due_ns;
};

struct bp_session {
	struct bp_session_opts opts;
	struct bp_loader *loader;
	struct bp_syms *syms;
	struct bp_profile *prof;
	struct bp_collect *collect;
	struct bp_memprobe *memprobe;	/* working set and faults of busy processes */
	struct bp_pmu *pmu;		/* hardware counters per target, NULL without a PMU */
	struct bp_cgwatch *cgw;		/* users, cgroups and their accounting */
	struct bp_unwind *unwind;	/* unwind tables, NULL with no_unwind */
	struct bp_uw_pending *uw_pending;	/* unwind lists to write again, when due */
	uint32_t nr_uw_pending, cap_uw_pending;
	uint64_t uw_over0;		/* unwind tables over budget at the start of the profile */
	struct bp_python *python;	/* CPython processes: their frames */
	struct bp_rlang *rlang;		/* R processes: their frames */
	struct bp_mapfiles *mapfiles;	/* paths of mapped files: maps from BPF's walk */
	struct bp_pidset live;		/* the pids alive at the last retire pass */
	struct first_q *first_q;	/* first samples held to the end of their batch */
	uint32_t nr_first_q, cap_first_q;
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
	uint64_t exec_images_kept;	/* execs whose old image's maps were kept, not drained */
	uint64_t exec_drains;		/* execs that drained the maps (a walked Python or R) */
	uint64_t busy_explained;	/* busy drains skipped: no process that could be probed */
	uint64_t exits_noticed;		/* processes with facts kept found to have exited */
	uint64_t meta_from_exec;	/* processes whose facts came with their exec event */
	uint64_t meta_proc_reads;	/* ... and whose facts or command line /proc gave */
	uint64_t meta_from_fork;	/* ... and whose facts were their parent's (no exec yet) */
	uint64_t meta_from_gone;	/* ... and of those gone before our tick: their first sample's */
	uint64_t exe_from_bpf;		/* first samples whose executable BPF named (no stat) */
	uint64_t first_gone;		/* first samples of processes gone (or zombies) when handled */
	uint64_t maps_from_proc;	/* first samples whose maps /proc gave */
	uint64_t first_gone_batch;	/* ... gone: their exit in the same batch, /proc not asked */
	uint64_t maps_from_exit;	/* processes gone first, named from their exit's walk */
	uint64_t uw_cancelled;		/* unwind list rewrites dropped: the process exited first */
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

/*
 * A command at path is about to be run (exec'd by a target): what its
 * first samples need is prepared now (its unwind table). Best effort.
 */
void bp_session__expect_exec(struct bp_session *s, const char *path);

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

/*
 * The agent between rotations: a drain is due when the maps fill, exits
 * pile up or a process may be busy (collect/drainpol.h), always when forced
 * (a window ends, a capture). bp_session__drain() drains into the current
 * profile; a light one feeds the memory probe too. 0 or -errno.
 */
enum bp_drain_need bp_session__due(struct bp_session *s, bool forced);
int bp_session__drain(struct bp_session *s, bool full);

/* the cgroups' accounting up to now into the profile (top, between its snapshots) */
int bp_session__cgroups(struct bp_session *s);

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

/* wait-site ranges the BPF side holds (MAX_SITE_RANGES in bpf/offcpu.bpf.c) */
#define BP_SITE_RANGES	64

/*
 * The kernel's wait-site ranges from its symbols, sorted and disjoint, at
 * most max, taken in the order of the function table (lock paths first);
 * *left: ranges that did not fit. How many.
 */
uint32_t bp_session_site_ranges(const struct bp_syms *syms, struct bp_site_range *out,
				uint32_t max, uint32_t *left);

/* processes whose facts are kept */
uint32_t bp_session__known(const struct bp_session *s);
/* ... of them, those known to have exited (dropped at the second bp_session__retire()) */
uint32_t bp_session__known_exited(const struct bp_session *s);
/* exits of processes whose facts were kept, noticed since the start (events or /proc) */
uint64_t bp_session__exits_noticed(const struct bp_session *s);

/* processes whose facts came with their exec event, from /proc, their parent, a gone one's event */
void bp_session__facts(const struct bp_session *s, uint64_t *from_exec, uint64_t *from_proc,
			uint64_t *from_fork, uint64_t *from_gone);
/* new processes' maps: read from /proc, and taken from the exit's walk (mapfiles.h) */
void bp_session__maps_sources(const struct bp_session *s, uint64_t *from_proc,
			      uint64_t *from_exit);

/* samples so far (cheap: reads the per-CPU counters) */
uint64_t bp_session__samples(struct bp_session *s);

void bp_session__free(struct bp_session *s);

#endif /* BP_SESSION_H */
