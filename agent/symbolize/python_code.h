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

#endif /* BP_PYTHON_CODE_H */
