// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "model/wait_class.h"

#define BP__UNPAREN(...)	__VA_ARGS__
#define ROW(kind_, ts_, value_, rank_, busy_, name_, state_, label_, frame_, text_, threads_,	\
	    wall_, verdict_, user_, kernel_)							\
	[BP_KIND_##kind_] = { .tstate = value_, .rank = rank_, .busy = BP_BUSY_##busy_,		\
			      .name = name_, .state = state_, .label = label_, .frame = frame_,	\
			      .text = text_, .threads = threads_, .wall = wall_,		\
			      .verdict = verdict_, .user = { BP__UNPAREN user_ },		\
			      .kernel = { BP__UNPAREN kernel_ } },

const struct bp_wait_class bp_wait_classes[BP_KIND__MAX] = { BP_WAIT_CLASSES(ROW) };

/* as many states as kinds, every value below BP_TS__MAX, and no two values or ranks alike */
_Static_assert((int)BP_KIND__MAX == (int)BP_TS__MAX, "a wait class without a thread state");
#define FITS(kind_, ts_, value_, rank_, ...)						\
	_Static_assert(value_ < BP_TS__MAX && rank_ < BP_TS__MAX, #kind_ " past BP_TS__MAX");
BP_WAIT_CLASSES(FITS)
#define VALUE_CASE(kind_, ts_, value_, ...)	case value_:
#define RANK_CASE(kind_, ts_, value_, rank_, ...)	case rank_:
static inline void __attribute__((unused)) values_unique(int v)
{
	switch (v) {
	BP_WAIT_CLASSES(VALUE_CASE)
		break;
	}
	switch (v) {
	BP_WAIT_CLASSES(RANK_CASE)
		break;
	}
}

#define KIND_OF(kind_, ts_, value_, ...)	[value_] = BP_KIND_##kind_,
static const enum bp_kind kind_of_state[BP_TS__MAX] = { BP_WAIT_CLASSES(KIND_OF) };

enum bp_kind bp_kind_of_state(uint32_t s)
{
	return s < BP_TS__MAX ? kind_of_state[s] : BP_KIND_OTHER;
}

const char *bp_kind_name(enum bp_kind k)
{
	return k < BP_KIND__MAX ? bp_wait_classes[k].name : "unknown";
}

int bp_kind_find(const char *name)
{
	int k;

	for (k = 0; k < BP_KIND__MAX; k++)
		if (!strcmp(name, bp_wait_classes[k].name))
			return k;
	return -ENOENT;
}

double bp_busy_s(double on_s, const double *off_s, double net_work_s, bool peers)
{
	double busy = on_s;
	int k;

	/* in the table's order, so that the sum rounds the same everywhere */
	for (k = BP_KIND_ONCPU + 1; k < BP_KIND__MAX; k++) {
		switch (bp_wait_classes[k].busy) {
		case BP_BUSY_YES:
			busy += off_s[k];
			break;
		case BP_BUSY_CLIENT:
			busy += net_work_s;
			break;
		case BP_BUSY_PEER:
			if (peers)
				busy += off_s[k];
			break;
		case BP_BUSY_NO:
			break;
		}
	}
	return busy;
}
