/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interpreters boundprof does not walk: Perl, Ruby, Node.js without a perf
 * map, Java without one, R when its frames are not walked, the shells, Lua, PHP. Their samples show the
 * interpreter's own C functions (Perl_pp_sin, vm_exec_core), which no user
 * of the script can change; the script's functions are not in the stacks.
 * The verdict then says so, names the language's own profiler (or the
 * perf map boundprof reads), and says what it can: the building blocks the
 * script calls. Python is walked (collect/python.h), and so is R
 * (collect/rlang.h): R stays in this table for an R that is not walked (a
 * version boundprof does not know, --no-r).
 */
#ifndef BP_ANALYZE_INTERP_H
#define BP_ANALYZE_INTERP_H

#include <stdbool.h>
#include <stddef.h>

struct bp_interp {
	const char *lang;	/* "Perl" */
	const char *binary;	/* "perl": how the report names the interpreter */
	const char *units;	/* what its functions are called: "subs" */
	const char *const *modules;	/* file name starts, NULL-terminated */
	/*
	 * How to see the language's functions: a perf map boundprof reads
	 * (perf_map), or the language's own profiler.
	 */
	const char *how;
	bool perf_map;
};

/* the interpreter whose code a module (a file name or path) is; NULL: none */
const struct bp_interp *bp_interp_of_module(const char *module);

/*
 * The interpreter whose own library tree holds the file at path: the
 * extensions it loads from its standard library (Ruby's enc/encdb.so,
 * Perl's auto/POSIX/POSIX.so) are its code, not the script's. NULL: none.
 */
const struct bp_interp *bp_interp_of_path(const char *path);

/*
 * The script an interpreter runs, from its command line ("perl -w work.pl 3"
 * gives "work.pl"): the first argument that is not an option. Into buf;
 * false when there is none (a -e one-liner, a REPL).
 */
bool bp_interp_script(const char *cmdline, char *buf, size_t len);

#endif /* BP_ANALYZE_INTERP_H */
