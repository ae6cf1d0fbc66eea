// SPDX-License-Identifier: GPL-2.0
/*
 * libsymfix.so: an exported function, a local function with a global and a
 * weak alias (the global name must win), a versioned symbol, and hand-written
 * functions without a size (one followed by another symbol, one last in its
 * own section).
 */
#include <stddef.h>

#include "symfix_lib.h"

__attribute__((noinline)) int symfix_lib_gamma(int x)
{
	volatile int acc = x;
	int i;

	for (i = 0; i < x * 16; i++)
		acc += i * 5;
	return acc;
}

static __attribute__((noinline, used)) int symfix_lib_local(int x)
{
	volatile int acc = x;

	return acc * 7;
}

extern int symfix_lib_public(int x) __attribute__((alias("symfix_lib_local")));
extern int symfix_lib_weak(int x) __attribute__((weak, alias("symfix_lib_local")));

/* .symver, as glibc does: .symtab then says "symfix_lib_versioned@@SYMFIX_1" */
__attribute__((noinline, used)) int symfix_lib_v1(int x)
{
	volatile int acc = x;

	return acc * 11;
}
__asm__(".symver symfix_lib_v1, symfix_lib_versioned@@SYMFIX_1");

/* no .size: zero-size symbols */
__asm__(".text\n"
	".globl symfix_asm_zero\n"
	".type symfix_asm_zero, @function\n"
	"symfix_asm_zero:\n"
	"	nop; nop; nop; nop; nop; nop; nop; ret\n"
	".globl symfix_asm_next\n"
	".type symfix_asm_next, @function\n"
	"symfix_asm_next:\n"
	"	ret\n"
	".section .symfix_tail, \"ax\", @progbits\n"
	".globl symfix_asm_last\n"
	".type symfix_asm_last, @function\n"
	"symfix_asm_last:\n"
	"	nop; nop; nop; nop; nop; nop; nop; ret\n"
	".text\n");

void symfix_asm_zero(void);
void symfix_asm_next(void);
void symfix_asm_last(void);

const struct symfix_lib_sym *symfix_lib_syms(void)
{
	static const struct symfix_lib_sym syms[] = {
		{ "symfix_lib_gamma", (const void *)symfix_lib_gamma },
		{ "symfix_lib_public", (const void *)symfix_lib_public },
		{ "symfix_lib_versioned", (const void *)symfix_lib_v1 },
		{ "symfix_asm_zero", (const void *)symfix_asm_zero },
		{ "symfix_asm_next", (const void *)symfix_asm_next },
		{ "symfix_asm_last", (const void *)symfix_asm_last },
		{ NULL, NULL },
	};

	return syms;
}
