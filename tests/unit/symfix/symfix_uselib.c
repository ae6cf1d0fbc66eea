// SPDX-License-Identifier: GPL-2.0
/* an executable using libsymfix.so: reports the library's functions */
#include "symfix_lib.h"
#include "symfix_report.h"

int main(int argc, char **argv)
{
	const struct symfix_lib_sym *s;

	(void)argv;
	for (s = symfix_lib_syms(); s->name; s++)
		symfix_report(s->name, s->addr);
	symfix_wait();
	return symfix_lib_gamma(argc) == 0x7fffffff;
}
