/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runs of a repeated COMMAND (record -r N, each point of `boundprof
 * scale`): the median, range and spread of their times, so that comparisons
 * rest on medians rather than on one noisy run; and each run's wall time
 * lost waiting for a CPU, from the timelines of its processes.
 */
#ifndef BP_RUNS_H
#define BP_RUNS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"

/* repeats that differ by more than this share of their median are noisy */
#define BP_RUNS_NOISY	0.05

struct bp_spread {
	uint32_t n;
	double median;		/* of an even count: the mean of the middle two */
	double min, max;
	double spread;		/* (max - min) / median; 0 for one value or a zero median */
};

/* the spread of n values (n 0: all zero), v left as it is; 0 or -ENOMEM */
int bp_spread_of(const double *v, uint32_t n, struct bp_spread *out);

struct bp_runs_summary {
	uint32_t n;			/* runs */
	uint32_t failed;		/* runs that did not exit 0 */
	struct bp_spread wall;		/* wall time per run */
	struct bp_spread cpu;		/* CPU time per run */
	struct bp_spread ready;		/* wall time less its CPU waits (runqueue_s) per run */
	bool noisy;			/* wall.spread above BP_RUNS_NOISY */
};

/* the summary of p's runs; 0, or -ENOMEM (-ENOENT: p has no runs) */
int bp_runs_summarize(const struct bp_profile *p, struct bp_runs_summary *out);

/*
 * Fill each run's runqueue_s from the profile: the time, summed over the
 * processes of its tree (its pid and their descendants, by ppid), that each
 * process had no thread running and one waiting for a CPU; at most the run's
 * wall time. Processes that run in parallel and wait at the same moment count
 * twice, hence the cap. Runs of a profile without timelines keep 0.
 */
void bp_runs_attribute(struct bp_profile *p);

#endif /* BP_RUNS_H */
