// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbolize/demangle.h"

char *bp_demangle(const char *sym)
{
	char *d;

	if (!sym || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R') ||
	    strnlen(sym, BP_DEMANGLE_MAX + 1) > BP_DEMANGLE_MAX)
		return NULL;
	/*
	 * Rust first: a legacy Rust name is also valid C++ (with the hash as
	 * a last component and $u7b$-style escapes left in); rust_demangle()
	 * rejects anything without the Rust hash or the v0 prefix cheaply.
	 */
	d = rust_demangle(sym, 0);
	if (d)
		return d;
	if (sym[1] != 'Z')
		return NULL;
	/* DMGL_ANSI keeps const and volatile; no DMGL_PARAMS: no argument lists */
	return cplus_demangle_v3(sym, DMGL_ANSI);
}
