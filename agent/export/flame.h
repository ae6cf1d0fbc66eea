/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flame graphs: one self-contained file (.html or .svg) that works offline:
 * click to zoom, reset, search with highlighting and the matched share,
 * tooltips with value and percentage; on-CPU, off-CPU and wall-clock views;
 * each wait class in its own colour with a legend; the verdict, evidence and
 * levers in the header. See docs/flamegraph.md.
 */
#ifndef BP_EXPORT_FLAME_H
#define BP_EXPORT_FLAME_H

#include <stdbool.h>

#include "analyze/analyze.h"
#include "util/buf.h"
#include "model/profile.h"

enum bp_flame_format {
	BP_FLAME_HTML,
	BP_FLAME_SVG,
};

struct bp_flame_opts {
	enum bp_flame_format format;
	const char *title;		/* NULL: "boundprof" */
	int initial_view;		/* enum bp_folded_view: which view opens first */
};

/* 0 or -errno; s may be NULL (no verdict header) */
int bp_export_flame(const struct bp_profile *p, const struct bp_summary *s,
		    const struct bp_flame_opts *o, struct bp_buf *out);

/*
 * Differential flame graph: the AFTER profile's stacks, each frame coloured by
 * how its share changed from BEFORE (red: grew, blue: shrank), with both
 * values in the tooltip. 0 or -errno.
 */
int bp_export_flame_diff(const struct bp_profile *before, const struct bp_profile *after,
			 const struct bp_flame_opts *o, struct bp_buf *out);

#endif /* BP_EXPORT_FLAME_H */
