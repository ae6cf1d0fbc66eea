// SPDX-License-Identifier: GPL-2.0
#include "model/hist.h"

uint32_t bp_hist_slot(uint64_t us)
{
	uint32_t slot;

	if (us < 2)
		return 0;
	slot = 63 - __builtin_clzll(us);
	return slot < BP_HIST_SLOTS ? slot : BP_HIST_SLOTS - 1;
}

uint64_t bp_hist_lo(uint32_t slot)
{
	return slot ? 1ULL << slot : 0;
}

uint64_t bp_hist_hi(uint32_t slot)
{
	return 2ULL << slot;
}

void bp_hist_add(uint64_t *h, uint64_t us, uint64_t n)
{
	h[bp_hist_slot(us)] += n;
}

void bp_hist_merge(uint64_t *dst, const uint64_t *src)
{
	uint32_t i;

	for (i = 0; i < BP_HIST_SLOTS; i++)
		dst[i] += src[i];
}

uint64_t bp_hist_count(const uint64_t *h)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < BP_HIST_SLOTS; i++)
		n += h[i];
	return n;
}

double bp_hist_quantile(const uint64_t *h, double q)
{
	uint64_t total = bp_hist_count(h), cum = 0;
	double rank;
	uint32_t i;

	if (!total)
		return 0;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	rank = q * (double)total;
	for (i = 0; i < BP_HIST_SLOTS; i++) {
		double lo = bp_hist_lo(i), hi = bp_hist_hi(i);

		if (!h[i])
			continue;
		if ((double)(cum + h[i]) >= rank)
			return lo + (hi - lo) * ((rank - (double)cum) / (double)h[i]);
		cum += h[i];
	}
	/* rounding: rank a hair above the total */
	for (i = BP_HIST_SLOTS; i-- > 0;)
		if (h[i])
			return bp_hist_hi(i);
	return 0;
}

double bp_hist_mean(const uint64_t *h)
{
	uint64_t total = 0;
	double sum = 0;
	uint32_t i;

	for (i = 0; i < BP_HIST_SLOTS; i++) {
		total += h[i];
		sum += (double)h[i] * (bp_hist_lo(i) + bp_hist_hi(i)) / 2.0;
	}
	return total ? sum / (double)total : 0;
}

uint32_t bp_fhist_slot(uint64_t us)
{
	uint32_t e, slot;

	if (us < 8)
		return us;
	e = 63 - __builtin_clzll(us);
	slot = 8 * (e - 2) + ((us >> (e - 3)) & 7);
	return slot < BP_FHIST_SLOTS ? slot : BP_FHIST_SLOTS - 1;
}

uint64_t bp_fhist_lo(uint32_t slot)
{
	return slot < 8 ? slot : (8ULL + slot % 8) << (slot / 8 - 1);
}

uint64_t bp_fhist_hi(uint32_t slot)
{
	return slot < 8 ? slot + 1 : (9ULL + slot % 8) << (slot / 8 - 1);
}

double bp_fhist_quantile(const uint64_t *h, double q)
{
	uint64_t total = 0, cum = 0;
	double rank;
	uint32_t i;

	for (i = 0; i < BP_FHIST_SLOTS; i++)
		total += h[i];
	if (!total)
		return 0;
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	rank = q * (double)total;
	for (i = 0; i < BP_FHIST_SLOTS; i++) {
		double lo = bp_fhist_lo(i), hi = bp_fhist_hi(i);

		if (!h[i])
			continue;
		if ((double)(cum + h[i]) >= rank)
			return lo + (hi - lo) * ((rank - (double)cum) / (double)h[i]);
		cum += h[i];
	}
	for (i = BP_FHIST_SLOTS; i-- > 0;)
		if (h[i])
			return bp_fhist_hi(i);
	return 0;
}
