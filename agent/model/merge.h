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

/*
 * Map one stack of v (frame ids, root first) to the frames of its view, into
 * out (room for nr): how many, or -errno. It may add frames to v.
 */
typedef int64_t (*bp_stack_map_fn)(struct bp_profile *v, const uint32_t *fr, uint32_t nr,
				   uint32_t *out, void *ctx);

/*
 * A copy of p in which every stack is what fn makes of it (a view: the
 * Python view, the function view); samples on stacks that become one add
 * up. NULL and errno on failure.
 */
struct bp_profile *bp_profile__view(const struct bp_profile *p, bp_stack_map_fn fn, void *ctx);

#endif /* BP_MERGE_H */
