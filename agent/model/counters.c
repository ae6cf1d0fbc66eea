// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "model/counters.h"

#define BPF_ROW(id_, value_, name_, kind_, what_)					\
	{ .name = name_, .what = what_, .id = "BP_STAT_" #id_, .kind = BP_CNT_##kind_,	\
	  .bpf = true, .idx = BP_STAT_##id_, .value = value_ },
#define USER_ROW(field_, name_, kind_, what_)						\
	{ .name = name_, .what = what_, .id = #field_, .kind = BP_CNT_##kind_,		\
	  .idx = BP_UCNT_##field_ },

const struct bp_counter bp_counters[] = { BP_COUNTERS(BPF_ROW, USER_ROW) };
const uint32_t bp_nr_counters = sizeof(bp_counters) / sizeof(bp_counters[0]);

/*
 * every BPF counter fits the per-CPU array, and no two share a value (the
 * switch never runs: a value twice is a duplicate case label, a build error)
 */
#define BPF_FITS(id_, value_, ...)	_Static_assert(value_ < BP_STAT__MAX, #id_ " past BP_STAT__MAX");
BP_COUNTERS(BPF_FITS, BP__CNT_NONE)
#define BPF_CASE(id_, value_, ...)	case value_:
static inline void __attribute__((unused)) values_unique(int v)
{
	switch (v) {
	BP_COUNTERS(BPF_CASE, BP__CNT_NONE)
		break;
	}
}

const char *bp_cnt_kind_name(enum bp_cnt_kind kind)
{
	switch (kind) {
	case BP_CNT_SEEN:
		return "seen";
	case BP_CNT_LOST_SAMPLE:
		return "loss (drops.samples)";
	case BP_CNT_LOST_STACK:
		return "loss (drops.stacks)";
	case BP_CNT_LOST:
		return "loss";
	case BP_CNT_NOTE:
		return "note";
	case BP_CNT_REPAIR:
		return "repair";
	}
	return "?";
}

const struct bp_counter *bp_counter_find(const char *name)
{
	uint32_t i;

	for (i = 0; i < bp_nr_counters; i++)
		if (!strcmp(bp_counters[i].name, name))
			return &bp_counters[i];
	return NULL;
}

void bp_counters_add(struct bp_stats *dst, uint64_t *dst_ucounts, const struct bp_stats *src,
		     const uint64_t *src_ucounts)
{
	uint32_t i;

	for (i = 0; i < BP_STAT__MAX; i++)
		dst->v[i] += src->v[i];
	for (i = 0; i < BP_UCNT__MAX; i++)
		dst_ucounts[i] += src_ucounts[i];
}

uint64_t bp_counters_sum(enum bp_cnt_kind kind, const struct bp_stats *st,
			 const uint64_t *ucounts)
{
	uint64_t sum = 0;
	uint32_t i;

	for (i = 0; i < bp_nr_counters; i++)
		if (bp_counters[i].kind == kind)
			sum += bp_counter_value(&bp_counters[i], st, ucounts);
	return sum;
}
