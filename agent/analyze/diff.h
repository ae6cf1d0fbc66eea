/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What changed between two profiles: the time per class (on-CPU and each
 * wait class), and each function's share of on-CPU self samples (as the
 * leaf) in both, the biggest changes first. `boundprof diff` prints it.
 */
#ifndef BP_DIFF_H
#define BP_DIFF_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"
#include "util/buf.h"
#include "util/htab.h"

/* one function's on-CPU self samples in each profile */
struct bp_diff_fn {
	char *key;		/* "k|module|label": identity across the two profiles */
	const char *label;	/* points into key */
	const char *module;	/* interned in whichever profile had it first */
	bool kernel;
	uint64_t n[2];		/* [0] before, [1] after */
	double s[2];		/* the on-CPU seconds they stand for */
};

struct bp_diff {
	struct bp_diff_fn *fns;	/* sorted: biggest change of share first, then by key */
	uint32_t nr_fns, cap_fns;
	struct bp_htab h;
	uint64_t total[2];	/* on-CPU samples with a stack, before and after */
	double time_s[2][BP_KIND__MAX];	/* thread-seconds per class */
	double biggest;		/* the largest change of a share, 0..1 */
};

/*
 * Compare before with after into d (zeroed by the caller or not: it is
 * reset). d points into both profiles: they must outlive it. 0 or -ENOMEM.
 */
int bp_diff(const struct bp_profile *before, const struct bp_profile *after, struct bp_diff *d);
void bp_diff_free(struct bp_diff *d);

/* a function's share of its side's on-CPU samples (side 0 before, 1 after), 0..1 */
double bp_diff_share(const struct bp_diff *d, const struct bp_diff_fn *f, int side);

/*
 * The comparison as JSON (docs/formats.md): before/after names as given,
 * at most top functions. 0 or -ENOMEM.
 */
int bp_diff_json(const struct bp_diff *d, const char *before, const char *after, uint32_t top,
		 struct bp_buf *out);

/*
 * The regression gate (`diff --fail-above PCT`): did the recorded workload
 * get slower by more than a limit? Each side is the median of its runs
 * (record -r N), or the whole recording when it has none. Compared: the
 * command's wall time, less the time it waited for a CPU with nothing of it
 * running (other processes' load, not its code), and its CPU time; either
 * growing past the limit fails. What grew most is named: the functions by
 * on-CPU seconds per run, the wait classes by thread-seconds per run.
 */
#define BP_GATE_TOP	5

struct bp_gate_side {
	uint32_t runs;		/* 0: no runs recorded, the whole recording is one */
	double wall_s;		/* medians of the runs */
	double ready_s;		/* wall time less its CPU waits */
	double cpu_s;
	double wall_spread;	/* (max - min) / median of the runs' wall times */
	bool noisy;
};

struct bp_gate_grew {
	const struct bp_diff_fn *fn;	/* NULL for a wait class */
	int kind;			/* enum bp_kind, for a wait class */
	double before_s, after_s;	/* per run */
};

struct bp_gate {
	double limit;			/* the fraction allowed, PCT / 100 */
	struct bp_gate_side side[2];
	double wall_change, ready_change, cpu_change;	/* after / before - 1 */
	bool wall_slower, cpu_slower;	/* ready_change, cpu_change past the limit */
	bool failed;
	struct bp_gate_grew fns[BP_GATE_TOP];	/* most grown first, only those that grew */
	uint32_t nr_fns;
	struct bp_gate_grew kinds[BP_KIND__MAX];	/* most grown first, sleep last */
	uint32_t nr_kinds;
};

/* the gate from d = bp_diff(before, after); limit a fraction (0.1: 10%). 0 or -ENOMEM */
int bp_diff_gate(const struct bp_profile *before, const struct bp_profile *after,
		 const struct bp_diff *d, double limit, struct bp_gate *g);

/* the comparison as JSON, with the gate (g may be NULL). 0 or -ENOMEM */
int bp_diff_json_gate(const struct bp_diff *d, const struct bp_gate *g, const char *before,
		      const char *after, uint32_t top, struct bp_buf *out);

/* the name of a wait class (or "on-CPU") as the diff prints it */
const char *bp_diff_kind_label(int kind);

#endif /* BP_DIFF_H */
