/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-CPU samples of a drained buffer (struct bp_oncpu_rec) folded into
 * rows, as the kernel made them before the ring: one row per key
 * (process, thread, kernel, user and Python stack, system call), its
 * samples and periods summed, the comm and short user stack of its first
 * sample kept. The caller reads the rows (v[0..n)) and resets the table
 * for the next drain; its memory stays for the next one.
 */
#ifndef BP_SAMPFOLD_H
#define BP_SAMPFOLD_H

#include <stdint.h>

#include "boundprof.h"
#include "util/htab.h"

struct bp_sampfold_row {
	struct bp_oncpu_key key;
	struct bp_oncpu_val val;
};

struct bp_sampfold {
	struct bp_sampfold_row *v;
	uint32_t n;
	uint32_t cap;
	struct bp_htab h;
	uint64_t samples;	/* records folded, all drains */
};

/* one sample into its row: 0, -EINVAL for a stack longer than a short one, or -ENOMEM */
int bp_sampfold__add(struct bp_sampfold *f, const struct bp_oncpu_rec *r);
/* no rows, memory kept */
void bp_sampfold__reset(struct bp_sampfold *f);
void bp_sampfold__free(struct bp_sampfold *f);

#endif /* BP_SAMPFOLD_H */
