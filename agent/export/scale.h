/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A scaling curve (analyze/scale.h) for people and programs: the table with
 * its notes and closing line, the JSON of docs/formats.md, and a plot of the
 * speedup against the ideal and of the efficiency, as a standalone SVG (no
 * script: it shows in image viewers and <img> tags too) or an HTML page that
 * adds the table and tooltips. Nothing in either fetches anything.
 */
#ifndef BP_EXPORT_SCALE_H
#define BP_EXPORT_SCALE_H

#include "analyze/scale.h"
#include "util/buf.h"

/* command: the command line as given, {} included. Each: 0 or -ENOMEM (-EINVAL) */
int bp_scale_text(const struct bp_scale *s, const char *command, struct bp_buf *out);
int bp_scale_json(const struct bp_scale *s, const char *command, struct bp_buf *out);
int bp_scale_svg(const struct bp_scale *s, const char *command, struct bp_buf *out);
int bp_scale_html(const struct bp_scale *s, const char *command, struct bp_buf *out);

#endif /* BP_EXPORT_SCALE_H */
