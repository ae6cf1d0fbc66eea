/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Jobs, not only processes: the short-lived processes one parent starts
 * over and over (a shell loop, xargs, make) judged together as one
 * workload, "60 runs of curl, 35 ms each", with a verdict on their summed
 * time, the cost of starting and ending each of them (fork, exec, the
 * dynamic loader, exit) as evidence of its own, and the parent that waits
 * for them judged by what it waits for. docs/classification.md has the
 * method.
 */
#ifndef BP_JOBS_H
#define BP_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "analyze/classify.h"
#include "model/profile.h"

#define BP_JOB_MIN_RUNS		5	/* runs of one program under one parent: a job */
#define BP_JOB_MAX_MEDIAN_S	1.0	/* ... when the median run is shorter than this */
#define BP_JOB_STARTUP		0.2	/* start-up share of the runs' time that gets its lever */
#define BP_JOB_PARENT_WAIT	0.5	/* share of its wall a parent waits on the runs: theirs */
#define BP_JOB_MIN_SAMPLES	10	/* on-CPU samples of the runs for a start-up share */

/*
 * What starting and ending the runs cost, from their on-CPU samples (and
 * the parent's, for fork): a sample is start-up when its stack is in the
 * dynamic loader (ld.so, with the page faults and system calls beneath it),
 * else in the kernel's exec, else in its exit.
 */
struct bp_job_startup {
	uint64_t samples;		/* on-CPU samples of the runs */
	uint64_t loader, exec, exit;	/* of them: in ld.so, in exec, in exit */
	uint64_t fork;			/* the parent's samples forking */
	double fork_s;			/* ... as the parent's on-CPU seconds */
	double loader_s;		/* the runs' on-CPU seconds in the dynamic loader */
	double cpu_s;			/* start-up and exit on-CPU seconds, fork included */
	double s;			/* ... with their part of the run-queue waits */
	double share;			/* s of the runs' summed wall time */
};

struct bp_job {
	char name[64];			/* the program: argv[0]'s base name, else comm */
	uint32_t ppid;
	int32_t parent;			/* summary index of the parent; -1 not summarized */
	uint32_t *members;		/* summary indices, by start */
	uint32_t nr;
	/* wall time per run */
	double median_s, p90_s, min_s, max_s, total_s;
	double on_cpu_s;		/* summed over the runs */
	double off_s[BP_KIND__MAX];
	double net_wait_s;		/* client-side network waits */
	uint64_t net_waits;
	double net_p50_ms, net_p99_ms;
	char net_peer[64];		/* the peer waited on most; "" none */
	struct bp_job_startup st;
	double parent_wait_s;		/* the parent's waits the runs ended */
	bool parent_waits;		/* ... at least BP_JOB_PARENT_WAIT of its wall */
	bool critical;			/* the command's critical path goes through it */
	struct bp_verdict verdict;
};

struct bp_jobs {
	struct bp_job *j;		/* most total wall first */
	uint32_t nr;
	int32_t *of;			/* per summary process: its job, -1 none */
	uint32_t nr_of;
};

/*
 * Find the jobs among the summary's processes and judge each; then give
 * their runs, and a parent that mostly waited for them, the job's verdict
 * (each led by a line that says so), and recount s->class_count. After the
 * per-process verdicts of bp_verdicts(). Sets s->jobs (NULL: none). 0 or
 * -ENOMEM.
 */
int bp_jobs_build(const struct bp_profile *p, struct bp_summary *s);

/*
 * The command's verdict when its critical path reaches a job (a run of it
 * is on the path, or a process on it waited for the runs): the job's, led
 * by the path. True when it set s->overall.
 */
bool bp_jobs_overall(const struct bp_profile *p, struct bp_summary *s);

/* the job of a summary process, or NULL */
const struct bp_job *bp_job_of(const struct bp_summary *s, uint32_t proc);

/* "60 runs of curl" and the rest of a job's header line; returns buf */
const char *bp_job_title(const struct bp_summary *s, const struct bp_job *j, char *buf,
			 size_t len);

void bp_jobs_free(struct bp_jobs *j);

#endif /* BP_JOBS_H */
