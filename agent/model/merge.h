/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Merging profiles: the continuous agent records in one-second slices and
 * adds each slice into the window it belongs to and into any pprof capture
 * in progress. Everything additive is added; per-process facts take the
 * latest value.
 */
#ifndef BP_MERGE_H
#define BP_MERGE_H

#include "model/profile.h"

/* add src into dst (frames and stacks re-interned); 0 or -ENOMEM */
int bp_profile__merge(struct bp_profile *dst, const struct bp_profile *src);

/* an empty profile with src's recording settings (hz, event, CPUs, flags), starting now */
struct bp_profile *bp_profile__new_like(const struct bp_profile *src, uint64_t start_ns);

#endif /* BP_MERGE_H */
