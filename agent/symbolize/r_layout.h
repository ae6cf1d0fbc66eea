/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GNU R's evaluation contexts (RCNTXT) as the BPF walker reads them: one
 * row per range of R versions with the same struct, and the check of a row
 * against the libR a process maps: the offsets its own exported functions
 * use (R_GetCurrentSrcref reads the srcref field, Rf_begincontext stores
 * call and bcbody), and where the hidden R_BCbody and R_BCpc globals are
 * (the first pair of variables Rf_begincontext copies into the context).
 * docs/r.md has the table's sources.
 */
#ifndef BP_R_LAYOUT_H
#define BP_R_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "rstack.h"

struct bp_pyelf;

struct bp_r_layout {
	uint8_t major, minor_lo, minor_hi;	/* the versions it covers */
	uint8_t pc_kind;		/* enum bp_r_pc */
	uint16_t call, bcbody, bcpc, relpc, srcref;	/* offsets in RCNTXT; relpc 0: none */
	uint16_t size;			/* sizeof(RCNTXT) */
};

/* the row for R major.minor, or NULL */
const struct bp_r_layout *bp_r_layout_find(unsigned int major, unsigned int minor);
/* "4.0 to 4.5": the versions there are rows for */
const char *bp_r_layout_known(void);

/* what the file's own code says (vaddrs in the file) */
struct bp_r_facts {
	uint64_t global_ctx, srcref, in_bc, nil, srcfile_sym, dcolon, tcolon, dollar;
	uint64_t bc_body, bc_pc;	/* 0: not found */
	uint16_t srcref_off;		/* RCNTXT.srcref as R_GetCurrentSrcref reads it; 0: not found */
};

/*
 * Read the facts of a file that exports R_GlobalContext: 0, -ENOENT when
 * it is not R, -EINVAL when its code is not what the fingerprint expects.
 */
int bp_r_facts(struct bp_pyelf *e, struct bp_r_facts *f);

/*
 * A row checked against the file: its srcref offset is the one the file's
 * R_GetCurrentSrcref reads and Rf_begincontext stores call and bcbody at
 * the row's offsets. 0, or -EINVAL with why (for the one line the user gets).
 */
int bp_r_layout_check(struct bp_pyelf *e, const struct bp_r_facts *f,
		      const struct bp_r_layout *row, char *why, size_t len);

/* the BPF side's view of a row */
void bp_r_layout_to_proc(const struct bp_r_layout *l, struct bp_r_proc *out);

#endif /* BP_R_LAYOUT_H */
