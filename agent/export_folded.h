/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collapsed stacks ("folded"): one line per distinct stack,
 * "process;outermost;...;innermost VALUE", the format flamegraph.pl,
 * speedscope and inferno read. See docs/formats.md.
 */
#ifndef BP_EXPORT_FOLDED_H
#define BP_EXPORT_FOLDED_H

#include "buf.h"
#include "profile.h"

/* on-CPU samples; lines sorted so equal profiles give equal files. 0 or -errno */
int bp_export_folded(const struct bp_profile *p, struct bp_buf *out);

#endif /* BP_EXPORT_FOLDED_H */
