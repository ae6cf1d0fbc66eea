/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collapsed stacks ("folded"): one line per distinct stack,
 * "process;outermost;...;innermost VALUE", the format flamegraph.pl,
 * speedscope and inferno read. See docs/formats.md.
 */
#ifndef BP_EXPORT_FOLDED_H
#define BP_EXPORT_FOLDED_H

#include "analyze/groups.h"
#include "util/buf.h"
#include "model/profile.h"

enum bp_folded_view {
	BP_VIEW_ONCPU,		/* on-CPU samples; values are sample counts */
	BP_VIEW_OFFCPU,		/* off-CPU time; values in us, class frame after process */
	BP_VIEW_WALL,		/* both, in us: on-CPU under [on-cpu], waits under their class */
};

/* on-CPU samples; lines sorted so equal profiles give equal files. 0 or -errno */
int bp_export_folded(const struct bp_profile *p, struct bp_buf *out);

/* one view; the off-CPU and wall views put "[io]", "[sleep]"... as the first frame */
int bp_export_folded_view(const struct bp_profile *p, enum bp_folded_view view,
			  struct bp_buf *out);

/*
 * One view with the group first: "unit:nginx.service;nginx;..." (by user,
 * cgroup or unit; BP_GROUP_NONE is bp_export_folded_view()).
 */
int bp_export_folded_grouped(const struct bp_profile *p, enum bp_folded_view view,
			     enum bp_group_by by, struct bp_buf *out);

#endif /* BP_EXPORT_FOLDED_H */
