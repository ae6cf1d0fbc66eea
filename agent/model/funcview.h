/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The function view: a profile with one frame per function. A recording
 * keeps source lines in its frames (a frame is one line of a function),
 * so a flame graph of it has a box per line, and a caller's box per call
 * line: no box's width is then a function's time. Folded stacks and flame
 * graphs show this view unless asked for lines (docs/formats.md); pprof
 * keeps the lines in its Locations, as `go tool pprof` expects.
 */
#ifndef BP_MODEL_FUNCVIEW_H
#define BP_MODEL_FUNCVIEW_H

#include "model/profile.h"

/*
 * A copy of p whose frames have no source line; frames that differed only
 * in their line become one, and an inlined frame stays a frame of its own.
 * NULL and errno on failure.
 */
struct bp_profile *bp_func_view(const struct bp_profile *p);

#endif /* BP_MODEL_FUNCVIEW_H */
