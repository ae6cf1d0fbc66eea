/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verdict's facts for an R process whose frames were walked (docs/r.md):
 * the R function (and line) its on-CPU time is under, the share of that
 * time in compiled code it calls (BLAS, a package's C), whether that code
 * is a building block, and whether R kept source references at all. The
 * levers follow R's ladder: vectorize, then data.table or matrix algebra,
 * then Rcpp, then processes (parallel::mclapply, future).
 */
#ifndef BP_ANALYZE_RLANG_H
#define BP_ANALYZE_RLANG_H

#include <stddef.h>

#include "analyze/classify.h"
#include "analyze/analyze.h"

/* any R frame of the process has a source line: R kept its srcrefs */
bool bp_r_has_lines(const struct bp_profile *p, uint32_t pid);

void bp_r_evidence(const struct bp_profile *p, const struct bp_proc_summary *ps,
		   struct bp_evidence *e, char *hot, size_t hot_len);

#endif /* BP_ANALYZE_RLANG_H */
