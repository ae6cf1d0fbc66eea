/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Analysis: per-process numbers derived from a profile (on-CPU time, wall
 * time, hotspots as fractions of on-CPU samples), shared by the human
 * report and the JSON report so both always say the same thing.
 */
#ifndef BP_ANALYZE_H
#define BP_ANALYZE_H

#include <stdint.h>

#include "profile.h"

struct bp_hotspot {
	uint32_t frame;		/* frame id: one function of one module */
	uint64_t self;		/* samples with the function as the leaf */
	uint64_t total;		/* samples with the function anywhere on the stack */
	double self_frac;	/* of the process's on-CPU samples */
	double total_frac;
};

struct bp_proc_summary {
	const struct bp_proc *proc;
	uint64_t samples;
	double on_cpu_s;
	double wall_s;
	uint32_t threads;	/* threads with on-CPU samples */
	struct bp_hotspot *hot;	/* by self desc, then total desc */
	uint32_t nr_hot;
	struct bp_hotspot *incl;	/* by total desc: where time goes inclusively */
	uint32_t nr_incl;
};

struct bp_summary {
	double duration_s;
	uint64_t samples;	/* every on-CPU sample, idle included */
	uint64_t idle;
	uint64_t counted;	/* aggregated into the profile */
	uint64_t lost_samples;
	uint64_t lost_stacks;
	double busy_frac;	/* non-idle share of all CPU samples */
	struct bp_proc_summary *procs;	/* by on-CPU samples, desc */
	uint32_t nr_procs;
};

/* keep at most max_hot hotspots per process; 0 or -ENOMEM */
int bp_summarize(const struct bp_profile *p, uint32_t max_hot, struct bp_summary *out);
void bp_summary_free(struct bp_summary *s);

/* on-CPU seconds for a sample count / ns sum under this profile's event */
double bp_oncpu_seconds(const struct bp_profile *p, uint64_t samples, uint64_t ns);

#endif /* BP_ANALYZE_H */
