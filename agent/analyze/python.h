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

#endif /* BP_ANALYZE_PYTHON_H */
