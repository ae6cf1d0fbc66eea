/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SYMFIX_LIB_H
#define SYMFIX_LIB_H

struct symfix_lib_sym {
	const char *name;
	const void *addr;
};

int symfix_lib_gamma(int x);
const struct symfix_lib_sym *symfix_lib_syms(void);

#endif /* SYMFIX_LIB_H */
