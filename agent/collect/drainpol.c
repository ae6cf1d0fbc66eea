// SPDX-License-Identifier: GPL-2.0
#include "collect/drainpol.h"

void bp_drainpol__init(struct bp_drainpol *p, uint32_t map_entries, double busy_rate,
		       double busy_every_s)
{
	*p = (struct bp_drainpol){
		.row_limit = map_entries / 8 ? map_entries / 8 : 1,
		.busy_rate = busy_rate,
		.busy_every_s = busy_every_s,
	};
}

enum bp_drain_need bp_drainpol__decide(struct bp_drainpol *p, const struct bp_drain_pend *now,
				       uint64_t now_ns, bool forced)
{
	double since = now_ns > p->last_busy_ns ? (now_ns - p->last_busy_ns) / 1e9 : 0;

	p->why = BP_DRAIN_WHY_NONE;
	if (forced) {
		p->why = BP_DRAIN_WHY_FORCED;
		return BP_DRAIN_FULL;
	}
	if (p->busy_rate > 0 && since >= p->busy_every_s &&
	    now->samples - p->last_busy.samples >= p->busy_rate * since) {
		p->why = BP_DRAIN_WHY_BUSY;
		p->busy_samples = now->samples - p->last_busy.samples;
		p->busy_s = since;
		p->last_busy = *now;
		p->last_busy_ns = now_ns;
		return BP_DRAIN_LIGHT;
	}
	if (now->rows - p->last.rows >= p->row_limit) {
		p->why = BP_DRAIN_WHY_ROWS;
		return BP_DRAIN_LIGHT;
	}
	return BP_DRAIN_NONE;
}

void bp_drainpol__flipped(struct bp_drainpol *p, const struct bp_drain_pend *at, uint64_t now_ns,
			  bool full)
{
	p->last = *at;
	if (full) {
		p->last_busy = *at;
		p->last_busy_ns = now_ns;
	}
}
