/* SPDX-License-Identifier: GPL-2.0 */
/* Rendering a summarized profile: the -o files and the report on stdout. */
#ifndef BP_CLI_RENDER_H
#define BP_CLI_RENDER_H

#include <stdbool.h>

#include "analyze/analyze.h"
#include "analyze/groups.h"
#include "output.h"
#include "model/profile.h"

/*
 * write every output (prepared with output_prepare), the saved profile
 * (.pb.gz) from full, which keeps every frame; 0 or the first -errno (printed)
 */
int render_outputs_saved(struct output *outs, int n, const struct bp_profile *full,
			 const struct bp_profile *p, const struct bp_summary *s);

/*
 * The profile the reports show: the Python view of full (analyze/python.h),
 * or full itself with native set or without Python frames. *out is full or
 * a new profile (free it when it is not full); 0 or -errno (printed).
 */
int render_view(const struct bp_profile *full, bool native, struct bp_profile **out);

/* the human report, or the JSON one, on stdout; 0 or -errno (printed) */
int render_report(const struct bp_profile *p, const struct bp_summary *s, bool json);

/* from now on, outputs and reports also show groups (BP_GROUP_NONE: not) */
void render_group_by(enum bp_group_by by);

/*
 * from now on, folded stacks and flame graphs show a frame per source line
 * (on) or per function (off, the default)
 */
void render_lines(bool on);

/* summary and verdicts for a profile; 0 or -errno (printed) */
int render_summarize(const struct bp_profile *p, struct bp_summary *s);

#endif /* BP_CLI_RENDER_H */
