/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a CPython code object says, decoded: the line of an instruction from
 * its line table in each version's format (3.6 - 3.9 co_lnotab, 3.10
 * co_linetable, 3.11+ the location table), and its names as UTF-8. The
 * bytes come from another process: every read is bounded by the table, and
 * a table that ends early says so rather than guess.
 */
#ifndef BP_PYTHON_CODE_H
#define BP_PYTHON_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python.h"

/*
 * The source line of the instruction at idx (code units) in a code object
 * of 3.minor whose first line is firstlineno; 0 when the table gives it no
 * line. *cut (may be NULL) is set when the table ended before idx: a table
 * that was copied only in part may hold the answer further on.
 */
uint32_t bp_py_line(unsigned int minor, const uint8_t *table, size_t len, int32_t firstlineno,
		    uint32_t idx, bool *cut);

/*
 * A string the BPF side copied (s, its copied bytes at raw) as UTF-8 into
 * out, NUL-terminated; control characters become '?'. Returns the length,
 * or -EINVAL when it is not a string we can read (unreadable, or a length
 * that does not match its kind), -E2BIG when more was stored than copied
 * (out then holds the part copied).
 */
int bp_py_text(const struct bp_py_str *s, const uint8_t *raw, size_t raw_len, char *out,
	       size_t out_len);

struct bp_profile;

/*
 * Merge a Python stack into the native user frames of its sample, root
 * first: nat[0..nn) the native frame ids, ids[0..nr) the Python frames'
 * innermost first, ends[i] set on the outermost frame of each run (what
 * one call of the interpreter loop executes). Each run takes the place of
 * an interpreter-loop frame of module (_PyEval_EvalFrameDefault), the
 * innermost run the innermost loop frame; runs the native walk did not
 * reach go at the root. The count written to out (at most max).
 */
uint32_t bp_py_merge(const struct bp_profile *prof, const char *module, const uint32_t *nat,
		     uint32_t nn, const uint32_t *ids, const bool *ends, uint32_t nr,
		     uint32_t *out, uint32_t max);

#endif /* BP_PYTHON_CODE_H */
