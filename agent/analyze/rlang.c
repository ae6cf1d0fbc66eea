// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "analyze/owned.h"
#include "analyze/python.h"
#include "analyze/rlang.h"

bool bp_r_has_lines(const struct bp_profile *p, uint32_t pid)
{
	uint32_t i, nr, k;

	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *fr;

		if (s->pid != pid)
			continue;
		fr = bp_profile__stack_frames(p, s->stack, &nr);
		for (k = 0; k < nr; k++)
			if (bp_frame_r(&p->frames[fr[k]]) && p->frames[fr[k]].line)
				return true;
	}
	return false;
}

void bp_r_evidence(const struct bp_profile *p, const struct bp_proc_summary *ps,
		   struct bp_evidence *e, char *hot, size_t hot_len)
{
	struct bp_python_hot h;
	char lbl[160];

	e->r_version = ps->proc->r_version;
	e->r_nosrc = !bp_r_has_lines(p, ps->proc->pid);
	/* the walked-interpreter hot spot: the innermost R frame of most samples */
	if (bp_python_hot(p, ps->proc->pid, &h) || !hot_len)
		return;
	bp_func_label(&p->frames[h.frame], hot, hot_len);
	e->hot_name = hot;
	e->hot_frac = h.frac;
	e->py_hot = true;
	e->hot_own = e->hot_foreign = false;
	e->py_native = h.native;
	if (h.native > 0) {
		const struct bp_frame *f = &p->frames[h.native_frame];

		bp_frame_label(f, false, lbl, sizeof(lbl));
		snprintf(e->py_native_name, sizeof(e->py_native_name), "%s in %s", lbl, f->module);
		e->r_native_block = bp_frame_foreign(f);
	}
}
