// SPDX-License-Identifier: GPL-2.0
/*
 * Executable for the symbolizer tests, built as PIE, non-PIE and stripped
 * variants. FN names the main function so that each variant's debug info
 * is told apart from the others'.
 */
#include "symfix_report.h"

#ifndef FN
#define FN symfix_alpha
#endif
#define STR_(x) #x
#define STR(x) STR_(x)

__attribute__((noinline)) int FN(int x)
{
	volatile int acc = x;
	int i;

	for (i = 0; i < x * 16; i++)
		acc += i * 3;
	return acc;
}

/* local: only in .symtab */
static __attribute__((noinline, used)) int symfix_local_zeta(int x)
{
	volatile int acc = x;
	int i;

	for (i = 0; i < x * 8; i++)
		acc ^= FN(i);
	return acc;
}

int main(int argc, char **argv)
{
	(void)argv;
	symfix_report(STR(FN), (const void *)FN);
	symfix_report("symfix_local_zeta", (const void *)symfix_local_zeta);
	symfix_wait();
	return symfix_local_zeta(argc) == 0x7fffffff;
}
