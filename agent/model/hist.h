/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Log2 latency histograms in microseconds, the layout the BPF programs fill
 * (boundprof.h): BP_HIST_SLOTS counters, slot 0 = [0, 2) us, slot k =
 * [2^k, 2^(k+1)) us; the last slot also holds everything above it. Used for
 * block IO and wakeup latencies.
 */
#ifndef BP_HIST_H
#define BP_HIST_H

#include <stdint.h>

#include "boundprof.h"

/* the slot of a value in us */
uint32_t bp_hist_slot(uint64_t us);

/* bounds of a slot in us: [lo, hi) */
uint64_t bp_hist_lo(uint32_t slot);
uint64_t bp_hist_hi(uint32_t slot);

/* add n values of us; merge: dst += src */
void bp_hist_add(uint64_t *h, uint64_t us, uint64_t n);
void bp_hist_merge(uint64_t *dst, const uint64_t *src);

uint64_t bp_hist_count(const uint64_t *h);

/*
 * The q-quantile (0..1) in us: the bucket holding rank q * count, with the
 * values spread evenly inside it (linear interpolation between its bounds).
 * 0 for an empty histogram.
 */
double bp_hist_quantile(const uint64_t *h, double q);

/* the mean in us, each value taken at its bucket's middle; 0 when empty */
double bp_hist_mean(const uint64_t *h);

/*
 * The fine histograms (BP_FHIST_SLOTS, boundprof.h: eight steps per power
 * of two): a slot's bounds in us, and the q-quantile as above.
 */
uint32_t bp_fhist_slot(uint64_t us);
uint64_t bp_fhist_lo(uint32_t slot);
uint64_t bp_fhist_hi(uint32_t slot);
double bp_fhist_quantile(const uint64_t *h, double q);

#endif /* BP_HIST_H */
