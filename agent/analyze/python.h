/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python view: a profile as a Python user reads it. A recording keeps
 * the mixed stacks (every native frame, with Python frames in place of the
 * interpreter frames that ran them); the view keeps of a stack with Python
 * frames only the Python frames, the native code a Python frame calls into
 * (an extension, NumPy, libcrypto: everything from the first frame outside
 * the interpreter and the C runtime down to the next Python frame) and the
 * kernel frames. Stacks without Python frames stay as they are.
 */
#ifndef BP_ANALYZE_PYTHON_H
#define BP_ANALYZE_PYTHON_H

#include <stdbool.h>

#include "model/profile.h"

/* some stack of p has a Python frame */
bool bp_python_has_frames(const struct bp_profile *p);

/* a copy of p in the Python view; NULL and errno on failure */
struct bp_profile *bp_python_view(const struct bp_profile *p);

/*
 * The frames of one stack in the Python view, root first, into out (room
 * for nr); how many. Stacks without Python frames are copied.
 */
uint32_t bp_python_view_stack(const struct bp_profile *p, const uint32_t *fr, uint32_t nr,
			      uint32_t *out);

/*
 * Where a Python process's on-CPU time is, by Python function: the
 * innermost Python frame of each sample (in the Python view, the Python
 * line that ran, or that called the native code that ran), all the lines
 * of a function together.
 */
struct bp_python_hot {
	uint32_t frame;		/* a frame of the innermost Python function most samples have */
	double frac;		/* its share of the process's on-CPU samples */
	double native;		/* of those, the share inside compiled code below it */
	uint32_t native_frame;	/* the compiled code's hottest leaf; valid when native > 0 */
	uint64_t samples;	/* on-CPU samples with a Python frame */
};

/* 0, -ENOENT when pid has no on-CPU sample with a Python frame, or -ENOMEM */
int bp_python_hot(const struct bp_profile *p, uint32_t pid, struct bp_python_hot *out);

#endif /* BP_ANALYZE_PYTHON_H */
