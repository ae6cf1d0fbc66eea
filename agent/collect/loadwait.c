// SPDX-License-Identifier: GPL-2.0
#include "collect/loadwait.h"

enum bp_loadwait_res bp_loadwait__still(struct bp_loadwait *w, uint64_t now)
{
	bool was = w->waiting;

	if (!w->first_ns)
		w->first_ns = now;
	if (now - w->first_ns > BP_LOADWAIT_NS)
		return BP_LOADWAIT_GAVE_UP;
	w->waiting = true;
	return was ? BP_LOADWAIT_AGAIN : BP_LOADWAIT_NEW;
}
