// SPDX-License-Identifier: GPL-2.0
#include "collect/drainpol.h"

static const char *const map_names[BP_PEND__MAX] = {
	[BP_PEND_ONCPU] = "oncpu", [BP_PEND_STACKS] = "stacks", [BP_PEND_OFF] = "offcpu",
	[BP_PEND_WAKE] = "wake", [BP_PEND_NET] = "net", [BP_PEND_IO] = "io",
};

const char *bp_drainpol__map_name(int map)
{
	return map >= 0 && map < BP_PEND__MAX ? map_names[map] : "none";
}

/* a map's share that makes a drain due: see drainpol.h */
#define FILL_SHARE	4

void bp_drainpol__init(struct bp_drainpol *p, const uint32_t entries[BP_PEND__MAX],
		       double busy_rate, double busy_every_s)
{
	int i;

	*p = (struct bp_drainpol){
		.busy_rate = busy_rate,
		.busy_every_s = busy_every_s,
		.why_map = -1,
	};
	for (i = 0; i < BP_PEND__MAX; i++) {
		if (!entries[i])
			p->row_limit[i] = UINT32_MAX;
		else
			p->row_limit[i] = entries[i] / FILL_SHARE ? entries[i] / FILL_SHARE : 1;
	}
}

enum bp_drain_need bp_drainpol__decide(struct bp_drainpol *p, const struct bp_drain_pend *now,
				       uint64_t now_ns, bool forced)
{
	double since = now_ns > p->last_busy_ns ? (now_ns - p->last_busy_ns) / 1e9 : 0;
	int i;

	p->why = BP_DRAIN_WHY_NONE;
	p->why_map = -1;
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
	for (i = 0; i < BP_PEND__MAX; i++) {
		if (now->rows[i] - p->last.rows[i] >= p->row_limit[i]) {
			p->why = BP_DRAIN_WHY_ROWS;
			p->why_map = i;
			return BP_DRAIN_LIGHT;
		}
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
