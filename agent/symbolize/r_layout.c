// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/python_elf.h"
#include "symbolize/r_layout.h"

/*
 * RCNTXT on x86-64 with glibc (src/include/Defn.h): nextcontext 0,
 * callflag 8, the 200-byte sigjmp_buf at 16, ... call 248, cloenv 256,
 * bcbody 312, bcpc 320. 4.0 to 4.3 have the same struct byte for byte;
 * 4.4 adds relpc after bcpc and bcframe before srcref (R-4-4-0 tag, and
 * trunk as of 4.5). 4.2's offsets are the ones Debian 12's libR uses
 * (its Rf_begincontext and R_GetCurrentSrcref, disassembled); 4.4's are
 * computed from the headers, and checked like every row against the
 * libR a process maps before they are used.
 */
static const struct bp_r_layout rows[] = {
	{ .major = 4, .minor_lo = 0, .minor_hi = 3, .pc_kind = BP_R_PC_PTR,
	  .call = 248, .bcbody = 312, .bcpc = 320, .relpc = 0, .srcref = 368, .size = 408 },
	{ .major = 4, .minor_lo = 4, .minor_hi = 5, .pc_kind = BP_R_PC_REL,
	  .call = 248, .bcbody = 312, .bcpc = 320, .relpc = 328, .srcref = 384, .size = 432 },
};

const struct bp_r_layout *bp_r_layout_find(unsigned int major, unsigned int minor)
{
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].major == major && minor >= rows[i].minor_lo &&
		    minor <= rows[i].minor_hi)
			return &rows[i];
	return NULL;
}

const char *bp_r_layout_known(void)
{
	return "4.0 to 4.5";
}

#define CODE_MAX	1024

static int func_code(struct bp_pyelf *e, const char *name, uint8_t *buf, size_t *len)
{
	uint64_t addr, size;

	if (bp_pyelf__dynsym(e, name, &addr, &size))
		return -ENOENT;
	if (!size || size > CODE_MAX)
		size = CODE_MAX;
	if (bp_pyelf__read(e, addr, buf, size))
		return -ENOENT;
	*len = size;
	*(uint64_t *)(buf + CODE_MAX - 8) = addr;	/* where the code is: rip-relative targets */
	return 0;
}

/* a 32-bit displacement after a ModRM byte of mod 2 (disp32[reg]), or after its SIB */
static bool has_disp(const uint8_t *c, size_t n, uint32_t disp)
{
	size_t i;

	for (i = 2; i + 4 <= n; i++) {
		uint32_t d;

		memcpy(&d, c + i, 4);
		if (d != disp)
			continue;
		if ((c[i - 1] & 0xc0) == 0x80 && (c[i - 1] & 7) != 4)
			return true;
		if ((c[i - 2] & 0xc0) == 0x80 && (c[i - 2] & 7) == 4)
			return true;
	}
	return false;
}

/* the first mov r64, disp32(reg) with a displacement in [lo, hi): the field read */
static uint32_t first_load_disp(const uint8_t *c, size_t n, uint32_t lo, uint32_t hi)
{
	size_t i;

	for (i = 0; i + 7 <= n; i++) {
		uint32_t d;

		if ((c[i] & 0xf8) != 0x48 || c[i + 1] != 0x8b || (c[i + 2] & 0xc0) != 0x80 ||
		    (c[i + 2] & 7) == 4)
			continue;
		memcpy(&d, c + i + 3, 4);
		if (d >= lo && d < hi)
			return d;
	}
	return 0;
}

/*
 * The first two lea disp32(%rip), r64 targets 8 bytes apart: R_BCbody and
 * R_BCpc, which Rf_begincontext copies into the new context first.
 */
static int bc_globals(const uint8_t *c, size_t n, uint64_t at, uint64_t *body, uint64_t *pc)
{
	uint64_t t[8];
	size_t i, k = 0, j;

	for (i = 0; i + 7 <= n && k < 8; i++) {
		int32_t d;

		if ((c[i] & 0xfb) != 0x48 || c[i + 1] != 0x8d || (c[i + 2] & 0xc7) != 0x05)
			continue;
		memcpy(&d, c + i + 3, 4);
		t[k++] = at + i + 7 + (int64_t)d;
		i += 6;
	}
	for (j = 0; j + 1 < k; j++) {
		if (t[j + 1] == t[j] + 8) {
			*body = t[j];
			*pc = t[j + 1];
			return 0;
		}
	}
	return -ENOENT;
}

int bp_r_facts(struct bp_pyelf *e, struct bp_r_facts *f)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
		{ "R_GlobalContext", offsetof(struct bp_r_facts, global_ctx) },
		{ "R_Srcref", offsetof(struct bp_r_facts, srcref) },
		{ "R_InBCInterpreter", offsetof(struct bp_r_facts, in_bc) },
		{ "R_NilValue", offsetof(struct bp_r_facts, nil) },
		{ "R_SrcfileSymbol", offsetof(struct bp_r_facts, srcfile_sym) },
		{ "R_DoubleColonSymbol", offsetof(struct bp_r_facts, dcolon) },
		{ "R_TripleColonSymbol", offsetof(struct bp_r_facts, tcolon) },
		{ "R_DollarSymbol", offsetof(struct bp_r_facts, dollar) },
	};
	uint8_t code[CODE_MAX];
	uint64_t size;
	size_t i, n;

	memset(f, 0, sizeof(*f));
	if (bp_pyelf__dynsym(e, "R_GlobalContext", &f->global_ctx, &size))
		return -ENOENT;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (bp_pyelf__dynsym(e, syms[i].name, (uint64_t *)((char *)f + syms[i].off), &size))
			return -EINVAL;
	memset(code, 0, sizeof(code));
	if (!func_code(e, "R_GetCurrentSrcref", code, &n))
		f->srcref_off = first_load_disp(code, n, 0x100, 0x200);
	memset(code, 0, sizeof(code));
	if (!func_code(e, "Rf_begincontext", code, &n))
		bc_globals(code, n, *(uint64_t *)(code + CODE_MAX - 8), &f->bc_body, &f->bc_pc);
	return f->srcref_off ? 0 : -EINVAL;
}

int bp_r_layout_check(struct bp_pyelf *e, const struct bp_r_facts *f,
		      const struct bp_r_layout *row, char *why, size_t len)
{
	uint8_t code[CODE_MAX];
	size_t n;

	if (f->srcref_off != row->srcref) {
		snprintf(why, len, "its R_GetCurrentSrcref reads a context's srcref at %u, "
			 "not at %u as R %u.%u-%u.%u does", f->srcref_off, row->srcref, row->major,
			 row->minor_lo, row->major, row->minor_hi);
		return -EINVAL;
	}
	memset(code, 0, sizeof(code));
	if (func_code(e, "Rf_begincontext", code, &n) || !has_disp(code, n, row->call) ||
	    !has_disp(code, n, row->bcbody)) {
		snprintf(why, len, "its Rf_begincontext does not store call at %u and bcbody at %u",
			 row->call, row->bcbody);
		return -EINVAL;
	}
	return 0;
}

void bp_r_layout_to_proc(const struct bp_r_layout *l, struct bp_r_proc *out)
{
	out->ctx_lo = l->call;
	out->c_call = 0;
	out->c_bcbody = l->bcbody - l->call;
	out->c_bcpc = l->bcpc - l->call;
	out->c_relpc = l->relpc ? l->relpc - l->call : 0;
	out->c_srcref = l->srcref - l->call;
	out->pc_kind = l->pc_kind;
}
