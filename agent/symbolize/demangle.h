/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbol names as their languages write them: Rust (legacy _ZN...17h<hash>E
 * and v0 _R...) and C++ (Itanium _Z...), through libiberty, the GNU
 * demangler binutils and gdb use. Without parameter lists, which make a
 * flame graph unreadable and add nothing for a profile: one name per
 * function. The Rust hash is dropped too.
 */
#ifndef BP_DEMANGLE_H
#define BP_DEMANGLE_H

#include <stddef.h>

/* names longer than this are left as they are (libiberty recurses on them) */
#define BP_DEMANGLE_MAX	(16 * 1024)

/*
 * The demangled form of sym (malloc()ed), or NULL when sym is not a
 * mangled name, is malformed or too long (then the caller keeps sym).
 */
char *bp_demangle(const char *sym);

#endif /* BP_DEMANGLE_H */
