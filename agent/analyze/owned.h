/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whose code a frame is: the user's own (a module they build and can
 * change) or a building block they call (the kernel, the C runtime, libm,
 * the C++ runtime, BLAS, the Python interpreter). Advice names the user's
 * innermost function and gives the building block beneath it as the
 * reason: a lever only helps when it points at code its reader can change.
 * The list is data (owned.c, docs/classification.md); --own adds to it.
 */
#ifndef BP_ANALYZE_OWNED_H
#define BP_ANALYZE_OWNED_H

#include <stdbool.h>
#include <stddef.h>

#include "model/profile.h"

/* the modules --own gave; they stay the user's whatever the table says */
#define BP_OWN_MAX	32

/*
 * Mark a module as the user's: a file name ("libfoo.so.1"), matched on its
 * own or as the start of a versioned name (libfoo.so matches libfoo.so.1).
 * 0, -EINVAL for an empty name or one with a '/', -ENOSPC past BP_OWN_MAX.
 */
int bp_own_add(const char *module);

/* forget every --own (tests) */
void bp_own_reset(void);

/* a module the user does not build (by its file name), --own aside */
bool bp_module_foreign(const char *module);

/* the frame is code its user owns: not the kernel, not a building block, not a marker */
bool bp_frame_owned(const struct bp_frame *f);

/* the frame is a building block's: the kernel, or a module of the table not --own'd */
bool bp_frame_foreign(const struct bp_frame *f);

/*
 * The name a reader knows a building block by: a C runtime or libm variant
 * picked at load time loses its decoration ("__memset_avx512_unaligned_erms"
 * is memset, "__ieee754_pow_fma" is pow), and V8's maths are JavaScript's
 * ("v8::base::ieee754::sin" is Math.sin). Other names are kept. Returns buf.
 */
const char *bp_short_name(const char *name, const char *module, char *buf, size_t len);

#endif /* BP_ANALYZE_OWNED_H */
