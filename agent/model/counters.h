/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The table of every counter (bpf/counters.h) as data, for the reports, the
 * Prometheus exposition and the docs test: each counter's name, kind and
 * meaning, and where its value lives. BPF counters are in a struct
 * bp_stats, userspace ones in the ucounts[] of a profile (or of the
 * agent's totals), where they are named fields too.
 */
#ifndef BP_MODEL_COUNTERS_H
#define BP_MODEL_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "boundprof.h"

enum bp_cnt_kind {
	BP_CNT_SEEN,		/* counted, not lost */
	BP_CNT_LOST_SAMPLE,	/* lost, and in the report's drops.samples */
	BP_CNT_LOST_STACK,	/* lost, and in drops.stacks */
	BP_CNT_LOST,		/* any other loss */
	BP_CNT_NOTE,		/* not lost, but explains missing data */
	BP_CNT_REPAIR,		/* not lost: missing data made up from another source */
};

#define BP__CNT_NONE(...)
#define BP__UCNT_ENUM(field, ...)	BP_UCNT_##field,
#define BP__UCNT_FIELD(field, ...)	uint64_t field;

/* the userspace counters' positions in ucounts[] */
enum bp_ucounter {
	BP_COUNTERS(BP__CNT_NONE, BP__UCNT_ENUM)
	BP_UCNT__MAX
};

/*
 * The userspace counters as a struct member: each by its own name
 * (p->user_stacks_cut) and all of them as one array (p->ucounts[]).
 */
#define BP_UCOUNTER_FIELDS						\
	union {								\
		struct { BP_COUNTERS(BP__CNT_NONE, BP__UCNT_FIELD) };	\
		uint64_t ucounts[BP_UCNT__MAX];				\
	}

struct bp_counter {
	const char *name;	/* drops_detail key and /metrics reason: the contract */
	const char *what;	/* one line for the text report and the docs */
	const char *id;		/* "BP_STAT_MAP_FULL", or the profile field */
	enum bp_cnt_kind kind;
	bool bpf;		/* value in struct bp_stats (else in ucounts[]) */
	uint32_t idx;		/* enum bp_stat, or enum bp_ucounter */
	uint32_t value;		/* enum bp_stat value (BPF counters) */
};

/* every counter, in report order */
extern const struct bp_counter bp_counters[];
extern const uint32_t bp_nr_counters;

static inline bool bp_counter_is_loss(const struct bp_counter *c)
{
	return c->kind == BP_CNT_LOST_SAMPLE || c->kind == BP_CNT_LOST_STACK ||
	       c->kind == BP_CNT_LOST;
}

/* a note or a repair: not a loss, but the reports say it */
static inline bool bp_counter_is_note(const struct bp_counter *c)
{
	return c->kind == BP_CNT_NOTE || c->kind == BP_CNT_REPAIR;
}

/* the counter's value in one set: BPF counters from st, userspace ones from ucounts */
static inline uint64_t bp_counter_value(const struct bp_counter *c, const struct bp_stats *st,
					const uint64_t *ucounts)
{
	return c->bpf ? st->v[c->idx] : ucounts[c->idx];
}

/* "seen", "loss (drops.samples)", "loss (drops.stacks)", "loss", "note", "repair" */
const char *bp_cnt_kind_name(enum bp_cnt_kind kind);

/* the counter of that name, or NULL */
const struct bp_counter *bp_counter_find(const char *name);

/* dst += src, every counter (BPF: all BP_STAT__MAX slots) */
void bp_counters_add(struct bp_stats *dst, uint64_t *dst_ucounts, const struct bp_stats *src,
		     const uint64_t *src_ucounts);

/* the sum of the counters of one kind */
uint64_t bp_counters_sum(enum bp_cnt_kind kind, const struct bp_stats *st,
			 const uint64_t *ucounts);

#endif /* BP_MODEL_COUNTERS_H */
