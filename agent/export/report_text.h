/* SPDX-License-Identifier: GPL-2.0 */
/* The human report: what a person reads first on the terminal. */
#ifndef BP_REPORT_TEXT_H
#define BP_REPORT_TEXT_H

#include <stdbool.h>

#include "analyze/analyze.h"
#include "analyze/groups.h"
#include "util/buf.h"
#include "model/profile.h"

struct bp_text_opts {
	unsigned int max_procs;		/* busy processes shown (default 10) */
	unsigned int max_hot;		/* hotspots per process (default 5) */
	const struct bp_groups *groups;	/* a paragraph per group first, NULL: none */
	unsigned int max_groups;	/* groups shown (default 10) */
	bool verbose;			/* every loss, even those under 1% of the samples */
};

/* 0 or -errno */
int bp_report_text(const struct bp_profile *p, const struct bp_summary *s,
		   const struct bp_text_opts *o, struct bp_buf *out);

#endif /* BP_REPORT_TEXT_H */
