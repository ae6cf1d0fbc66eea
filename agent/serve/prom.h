/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A writer for the Prometheus text exposition format 0.0.4 (what /metrics
 * serves with Content-Type "text/plain; version=0.0.4; charset=utf-8").
 *
 * Declare a family (# HELP and # TYPE, once), then write its samples; the
 * next family ends it. Nothing invalid is ever written: a bad metric or
 * label name, a family declared twice or a sample that does not fit its
 * family's type is refused with an error and leaves the output untouched,
 * so one bad metric cannot make a scrape unparsable. Label values and HELP
 * text may hold any bytes: they are escaped, and invalid UTF-8 becomes U+FFFD.
 *
 * Counter names should end in _total (0.0.4 keeps the suffix in # TYPE),
 * and units should be base units (_seconds, _bytes); neither is enforced.
 */
#ifndef BP_PROM_H
#define BP_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define BP_PROM_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"
#define BP_PROM_MAX_NAME	200	/* longest metric name accepted */

enum bp_prom_type {
	BP_PROM_COUNTER,
	BP_PROM_GAUGE,
	BP_PROM_HISTOGRAM,
};

struct bp_prom_label {
	const char *name;	/* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
	const char *value;	/* any bytes */
};

/* fields are private; the struct is public so it can live on the stack */
struct bp_prom {
	struct bp_buf *buf;
	size_t start;		/* where this exposition starts in buf */
	int err;		/* first error, for bp_prom_finish() */
	bool in_family;
	enum bp_prom_type type;
	char family[BP_PROM_MAX_NAME + 1];
};

/* start an exposition appended to buf */
void bp_prom_init(struct bp_prom *p, struct bp_buf *buf);

/*
 * Start family name ([a-zA-Z_:][a-zA-Z0-9_:]*) of type; help NULL leaves
 * out # HELP. 0, -EINVAL (bad name or type), -EEXIST (declared before in
 * this exposition) or the buffer's -ENOMEM. After a failure, samples are
 * refused until the next family starts.
 */
int bp_prom_family(struct bp_prom *p, const char *name, enum bp_prom_type type,
		   const char *help);

/*
 * One counter or gauge sample of the current family with these labels
 * (labels may be NULL when n is 0). The _u64 form prints integers past 2^53
 * exactly. 0, -EINVAL (no family, a histogram family, a bad or repeated
 * label name) or -ENOMEM.
 */
int bp_prom_sample(struct bp_prom *p, const struct bp_prom_label *labels, size_t n, double value);
int bp_prom_sample_u64(struct bp_prom *p, const struct bp_prom_label *labels, size_t n,
		       uint64_t value);

/*
 * One histogram of the current (histogram) family: nbounds finite, strictly
 * increasing upper bounds, and nbounds + 1 counts, each of its own bucket
 * (bounds[i-1], bounds[i]], the last one above every bound: the layout of a
 * histogram whose last slot takes the overflow. Writes cumulative
 * _bucket{le=...} lines ending with le="+Inf", then _sum and _count.
 * 0, -EINVAL (as above, a bad bound, a label named le, or counts that
 * overflow 64 bits) or -ENOMEM.
 */
int bp_prom_histogram(struct bp_prom *p, const struct bp_prom_label *labels, size_t n,
		      const double *bounds, const uint64_t *counts, size_t nbounds, double sum);

/* 0 when every call succeeded; otherwise the first error */
int bp_prom_finish(const struct bp_prom *p);

/* the format's name rules: metric names may hold ':', label names not */
bool bp_prom_metric_name_ok(const char *name);
bool bp_prom_label_name_ok(const char *name);

#endif /* BP_PROM_H */
