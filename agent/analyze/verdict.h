/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Verdicts for a summarized profile: gathers each process's evidence (time
 * split, what its on-CPU time did, IO, memory, counters, hotspots) and runs
 * the classifier on it, and on the whole recording for the summary.
 */
#ifndef BP_VERDICT_H
#define BP_VERDICT_H

#include "analyze/analyze.h"
#include "analyze/classify.h"
#include "model/profile.h"

/*
 * Fill s->procs[i].verdict (for every process in a targeted run, for the
 * active ones system-wide) and s->overall. 0 or -ENOMEM.
 */
int bp_verdicts(const struct bp_profile *p, struct bp_summary *s);

/* the evidence the classifier got for one process (exported for tests and reports) */
void bp_proc_evidence(const struct bp_profile *p, const struct bp_summary *s,
		      const struct bp_proc_summary *ps, struct bp_evidence *e, char *hot,
		      size_t hot_len);

/*
 * Advice names code its reader can change: when ps's hottest leaf
 * (ps->funcs[0], already in e->hot_name) is a building block (libc, libm,
 * the kernel), the user's innermost function above it on most samples
 * (ps->own_*) takes its place; the building block becomes the reason.
 * For groups of processes too (analyze/jobs.c, analyze/groups.c).
 */
void bp_own_evidence(const struct bp_profile *p, const struct bp_proc_summary *ps,
		     struct bp_evidence *e, char *hot, size_t hot_len);

/*
 * The block IO evidence of the processes in() accepts (all with in NULL):
 * requests, their size and latency, the device used most and how busy it
 * was. For groups of processes (analyze/groups.c).
 */
void bp_io_evidence(const struct bp_profile *p, bool (*in)(uint32_t pid, const void *ctx),
		    const void *ctx, struct bp_evidence *e);

/* the memory probe's and the hardware counters' evidence of one process */
void bp_mem_evidence(const struct bp_profile *p, const struct bp_proc *proc,
		     struct bp_evidence *e);

#endif /* BP_VERDICT_H */
