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

#endif /* BP_DIFF_H */
