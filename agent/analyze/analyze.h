/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Analysis: per-process numbers derived from a profile (on-CPU time, time in
 * each wait class, the merged wall-clock timeline, per-thread accounting,
 * wakeup latency, hotspots as fractions of on-CPU samples), shared by the
 * human report and the JSON report so both always say the same thing.
 */
#ifndef BP_ANALYZE_H
#define BP_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/classify.h"
#include "model/profile.h"

struct bp_hotspot {
	uint32_t frame;		/* frame id: a function, or one line of it when known (profile.h) */
	uint64_t self;		/* samples with the function as the leaf */
	uint64_t total;		/* samples with the function anywhere on the stack */
	double self_frac;	/* of the process's on-CPU samples */
	double total_frac;
};

/*
 * A function's time, all its lines together: what advice names, since
 * algorithms live in functions, not lines. Its lines are detail beneath it.
 */
struct bp_func_hot {
	uint32_t frame;		/* a frame of the function (its name and module; not a line) */
	uint64_t self;		/* samples with one of its lines as the leaf */
	uint64_t total;		/* samples with it anywhere on the stack, recursion counted once */
	double self_frac;	/* of the process's on-CPU samples */
	double total_frac;
	struct bp_hotspot *lines;	/* its lines with self time, by self desc */
	uint32_t nr_lines;
};

struct bp_thread_summary {
	uint32_t tid;
	const struct bp_thread *t;	/* NULL if only known from samples */
	double on_cpu_s;		/* exact with off-CPU tracing, else sampled */
	double steal_s;			/* of on_cpu_s, the hypervisor ran something else */
	double off_s[BP_KIND__MAX];	/* by wait class; [BP_KIND_ONCPU] unused */
	double wall_s;			/* its lifetime inside the window */
	double accounted_s;		/* on_cpu_s + every off_s */
	double gil_s;			/* of off_s[BP_KIND_LOCK], waiting for a Python GIL */
};

struct bp_proc_summary {
	const struct bp_proc *proc;
	uint64_t samples;		/* on-CPU samples */
	double on_cpu_s;		/* exact with off-CPU tracing, else sampled */
	double on_cpu_sampled_s;
	double steal_s;			/* of on_cpu_s, the hypervisor ran something else */
	double wall_s;
	double off_s[BP_KIND__MAX];	/* thread-seconds in each wait class */
	double throttled_s;		/* of off_s[RUNQUEUE]: waiting out a CPU quota (groups.h) */
	uint64_t off_events[BP_KIND__MAX];
	bool have_timeline;		/* merged process timeline (most productive state) */
	double tl_s[BP_TS__MAX];
	double tl_idle_s;
	uint64_t wakeups;		/* wakeups of blocked threads */
	double wake_lat_s;		/* their total wakeup-to-run latency */
	double wake_max_s;
	uint64_t wake_hist[BP_HIST_SLOTS];
	bool active;			/* did something worth reporting system-wide */
	/* on-CPU samples by what the code was doing (fractions of samples) */
	double frac_io_path;		/* the kernel submitting block IO */
	double frac_fault;		/* the kernel handling page faults */
	double frac_kernel;		/* other kernel work */
	uint32_t threads;		/* threads seen */
	/* network waits split: a client's (work) and a server's (waiting for work), thread-s */
	double net_work_s, net_idle_s;
	double pipe_in_s, pipe_out_s;	/* pipe waits for input and for room for output */
	uint64_t rchar, wchar;		/* bytes through read and write system calls */
	uint64_t syscr, syscw;		/* read- and write-family system calls */
	double frac_syscall;		/* on-CPU samples in the kernel serving a system call */
	double gil_s;			/* thread-seconds waiting for a Python GIL (in off_s lock) */
	struct bp_thread_summary *thr;	/* by on-CPU time desc */
	uint32_t nr_thr;
	struct bp_hotspot *hot;		/* by self desc, then total desc */
	uint32_t nr_hot;
	struct bp_hotspot *incl;	/* by total desc: where time goes inclusively */
	uint32_t nr_incl;
	struct bp_func_hot *funcs;	/* functions by self desc, then total desc */
	uint32_t nr_funcs;
	struct bp_verdict *verdict;	/* NULL until bp_verdicts(); NULL for quiet processes */
	/*
	 * The user's own code (analyze/owned.h): the innermost frame of theirs
	 * on most samples, and what it calls that is not theirs. Advice names
	 * it; the hotspots above still charge self time to the leaf.
	 */
	bool have_own;
	uint32_t own_frame;		/* a frame of that function (all its lines count) */
	double own_frac;		/* of on-CPU samples: it is their innermost own frame */
	double own_beneath;		/* of those: the leaf is code the user does not own */
	double own_kernel;		/* of those: the leaf is in the kernel */
	uint32_t own_callee;		/* a frame of the function it calls on most of those; valid if own_beneath */
	double own_callee_frac;		/* of its samples, under that callee */
};

struct bp_pipelines;
struct bp_jobs;
struct bp_chains;

struct bp_summary {
	double duration_s;
	uint64_t samples;	/* every on-CPU sample, idle included */
	uint64_t idle;
	uint64_t counted;	/* aggregated into the profile */
	uint64_t lost_samples;
	uint64_t lost_stacks;
	double busy_frac;	/* non-idle share of all CPU samples */
	struct bp_proc_summary *procs;	/* most active first */
	uint32_t nr_procs;
	bool have_overall;		/* set by bp_verdicts() */
	struct bp_verdict overall;	/* the whole recording */
	/* wakers, network peers, pipelines and the critical path (analyze/pipeline.h) */
	struct bp_pipelines *waits;
	uint32_t class_count[BP_CLASS__MAX];	/* processes per verdict */
	/* short runs of one program judged together (analyze/jobs.h); NULL: none */
	struct bp_jobs *jobs;
	/* client/server chains and the peers a command's recording added (analyze/chain.h) */
	struct bp_chains *chains;
};

/* keep at most max_hot hotspots per process; 0 or -ENOMEM */
int bp_summarize(const struct bp_profile *p, uint32_t max_hot, struct bp_summary *out);
void bp_summary_free(struct bp_summary *s);

/*
 * Per frame of p, the id of the first frame of its function (the frames
 * of a function differ only in their line; a module's unnamed frames are
 * one function); func has room for p->nr_frames. 0 or -ENOMEM.
 */
int bp_func_ids(const struct bp_profile *p, uint32_t *func);

/* on-CPU seconds for a sample count / ns sum under this profile's event */
double bp_oncpu_seconds(const struct bp_profile *p, uint64_t samples, uint64_t ns);

/* the state names of enum bp_tstate, as the reports print them */
const char *bp_tstate_name(uint32_t s);

/* the thread-time a process spent doing something (not waiting for work), s */
double bp_proc_activity(const struct bp_proc_summary *ps);

#endif /* BP_ANALYZE_H */
