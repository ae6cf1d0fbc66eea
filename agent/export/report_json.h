/* SPDX-License-Identifier: GPL-2.0 */
/* The JSON report: the contract in docs/formats.md, keys only ever added. */
#ifndef BP_EXPORT_JSON_H
#define BP_EXPORT_JSON_H

#include <stdbool.h>

#include "analyze/analyze.h"
#include "analyze/groups.h"
#include "util/buf.h"
#include "model/profile.h"

#define BP_REPORT_VERSION 1

/* 0 or -errno */
int bp_export_json(const struct bp_profile *p, const struct bp_summary *s, bool pretty,
		   struct bp_buf *out);

/* the same with a "groups" table (g may be NULL: none); 0 or -errno */
int bp_export_json_groups(const struct bp_profile *p, const struct bp_summary *s,
			  const struct bp_groups *g, bool pretty, struct bp_buf *out);

#endif /* BP_EXPORT_JSON_H */
