// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report_text.h"

static void pct(char *buf, size_t len, double frac)
{
	if (frac > 0 && frac < 0.005)
		snprintf(buf, len, "<1%%");
	else
		snprintf(buf, len, "%.0f%%", frac * 100);
}

static void frame_where(const struct bp_frame *f, char *buf, size_t len)
{
	char label[400];

	bp_frame_label(f, false, label, sizeof(label));
	if (!f->kernel)
		snprintf(buf, len, "%s (%s)", label, f->module);
	else if (!strcmp(f->module, "[kernel]"))
		snprintf(buf, len, "%s [kernel]", label);
	else
		snprintf(buf, len, "%s [kernel module %s]", label, f->module);
}

static void losses(const struct bp_profile *p, struct bp_buf *out)
{
	static const struct {
		enum bp_stat stat;
		const char *what;
	} rows[] = {
		{ BP_STAT_MAP_FULL, "samples lost: aggregation map full" },
		{ BP_STAT_STACK_FULL, "stacks lost: stack map full" },
		{ BP_STAT_KSTACK_ERR, "kernel stacks lost: unwind error" },
		{ BP_STAT_USTACK_ERR, "user stacks lost: unwind error" },
		{ BP_STAT_USTACK_TRUNC, "user stacks truncated at 127 frames" },
		{ BP_STAT_EVENT_DROP, "process events lost: ring buffer full" },
		{ BP_STAT_SEEN_FULL, "first-sample notices lost: tracking map full" },
		{ BP_STAT_TARGET_FULL, "children not followed: target map full" },
	};
	unsigned int i;
	bool any = false;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v = p->stats.v[rows[i].stat];

		if (!v)
			continue;
		if (!any)
			bp_buf_puts(out, "\nlosses:\n");
		any = true;
		bp_buf_printf(out, "  %" PRIu64 " %s\n", v, rows[i].what);
	}
	if (p->user_stacks_cut)
		bp_buf_printf(out, "%s%" PRIu64 " user stacks end at [truncated]: code without frame"
			      " pointers\n", any ? "" : "\n", p->user_stacks_cut);
}

int bp_report_text(const struct bp_profile *p, const struct bp_summary *s,
		   const struct bp_text_opts *o, struct bp_buf *out)
{
	unsigned int max_procs = o && o->max_procs ? o->max_procs : 10;
	unsigned int max_hot = o && o->max_hot ? o->max_hot : 5;
	uint64_t floor = s->counted / 100, rest_samples = 0;
	char a[16], where[512];
	uint32_t i, j, shown = 0, rest = 0;

	bp_buf_printf(out, "boundprof: %.2f s on %d CPU%s (%s, %d Hz): %" PRIu64
		      " samples, CPUs %.0f%% busy\n", s->duration_s, p->ncpus,
		      p->ncpus == 1 ? "" : "s", p->event, p->hz, s->samples, s->busy_frac * 100);
	if (!s->nr_procs)
		bp_buf_puts(out, "\nno on-CPU samples from the profiled processes\n");

	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];
		const struct bp_proc *proc = ps->proc;

		if (!proc)
			continue;
		if (shown >= max_procs || ps->samples < 2 || ps->samples < floor) {
			rest++;
			rest_samples += ps->samples;
			continue;
		}
		shown++;
		bp_buf_printf(out, "\npid %u %s: %.2f s on-CPU", proc->pid,
			      proc->comm[0] ? proc->comm : "[unknown]", ps->on_cpu_s);
		if (ps->wall_s > 0) {
			pct(a, sizeof(a), ps->on_cpu_s / ps->wall_s);
			bp_buf_printf(out, " in %.2f s wall (%s)", ps->wall_s, a);
		}
		bp_buf_printf(out, ", %u thread%s%s\n", ps->threads, ps->threads == 1 ? "" : "s",
			      proc->exited ? ", exited" : "");
		if (proc->cmdline && *proc->cmdline)
			bp_buf_printf(out, "  cmd: %.200s\n", proc->cmdline);
		for (j = 0; j < ps->nr_hot && j < max_hot; j++) {
			if (j > 0 && ps->hot[j].self_frac < 0.01)
				break;
			pct(a, sizeof(a), ps->hot[j].self_frac);
			frame_where(&p->frames[ps->hot[j].frame], where, sizeof(where));
			bp_buf_printf(out, "  %4s of on-CPU time in %s\n", a, where);
		}
	}
	if (rest)
		bp_buf_printf(out, "\n%u more process%s with %" PRIu64 " samples\n", rest,
			      rest == 1 ? "" : "es", rest_samples);
	losses(p, out);
	return out->err;
}
