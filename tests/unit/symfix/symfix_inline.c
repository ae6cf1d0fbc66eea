// SPDX-License-Identifier: GPL-2.0
/*
 * A function with another inlined into it, for the DWARF lines tests: built
 * with .debug_aranges (gcc's default) and without (as clang and rustc
 * write none).
 */
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) unsigned long inl_step(unsigned long x)
{
	x ^= x << 13;		/* INL_STEP_FIRST */
	x ^= x >> 7;
	x ^= x << 17;
	return x * 2654435761UL; /* INL_STEP_LAST */
}

__attribute__((noinline)) unsigned long inl_outer(unsigned long x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x = inl_step(x) + (unsigned long)i;
	return x;
}

int main(int argc, char **argv)
{
	printf("%lu\n", inl_outer((unsigned long)argc, argc > 1 ? atoi(argv[1]) : 3));
	return 0;
}
