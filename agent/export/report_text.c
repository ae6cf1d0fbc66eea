// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export/report_io.h"
#include "model/hist.h"
#include "export/report_text.h"

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

/* the non-zero losses of the counter table (model/counters.h), then its notes */
static void losses(const struct bp_profile *p, struct bp_buf *out)
{
	bool any = false;
	uint32_t i;

	for (i = 0; i < bp_nr_counters; i++) {
		const struct bp_counter *c = &bp_counters[i];
		uint64_t v = bp_counter_value(c, &p->stats, p->ucounts);

		if (!v || !bp_counter_is_loss(c))
			continue;
		if (!any)
			bp_buf_puts(out, "\nlosses:\n");
		any = true;
		bp_buf_printf(out, "  %" PRIu64 " %s\n", v, c->what);
	}
	for (i = 0; i < bp_nr_counters; i++) {
		const struct bp_counter *c = &bp_counters[i];
		uint64_t v = bp_counter_value(c, &p->stats, p->ucounts);

		if (!v || c->kind != BP_CNT_NOTE)
			continue;
		bp_buf_printf(out, "%s%" PRIu64 " %s\n", any ? "" : "\n", v, c->what);
		any = true;
	}
}

static const char *state_phrase(int state)
{
	switch (state) {
	case BP_TS_RUNNING:
		return "on-CPU";
	case BP_TS_RUNQUEUE:
		return "waiting for a CPU";
	case BP_TS_IO:
		return "waiting on block IO";
	case BP_TS_LOCK:
		return "waiting on locks";
	case BP_TS_OTHER:
		return "in other kernel waits";
	default:
		return "sleeping or waiting for events";
	}
}

static void verdict_block(struct bp_buf *out, const struct bp_verdict *v)
{
	uint32_t i;

	for (i = 0; i < v->nr_evidence; i++)
		bp_buf_printf(out, "  %s %s\n", i ? " " : "-", v->evidence[i]);
	for (i = 0; i < v->nr_levers; i++)
		bp_buf_printf(out, "  %s %s\n", i ? "  " : "=>", v->levers[i]);
}

static const char *kind_phrase(int kind)
{
	switch (kind) {
	case BP_KIND_RUNQUEUE:
		return "waiting for a CPU";
	case BP_KIND_IO:
		return "waiting on block IO";
	case BP_KIND_LOCK:
		return "waiting on locks";
	case BP_KIND_SLEEP:
		return "sleeping";
	default:
		return "in other waits";
	}
}

/* the merged timeline: the biggest state in words, then the rest */
static void wall_lines(struct bp_buf *out, const struct bp_profile *p,
		       const struct bp_proc_summary *ps)
{
	double total = ps->tl_idle_s, share[BP_TS__MAX];
	int order[BP_TS__MAX], i, j, n = 0;
	char a[16], io[256];

	for (i = 0; i < BP_TS__MAX; i++)
		total += ps->tl_s[i];
	if (total <= 0)
		return;
	for (i = 0; i < BP_TS__MAX; i++) {
		share[i] = ps->tl_s[i] / total;
		order[n++] = i;
	}
	/* biggest first; n is 6, a plain insertion sort */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && share[order[j]] > share[order[j - 1]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	bp_buf_printf(out, "  time: %.2f s wall:", total);
	for (i = 0, j = 0; i < n; i++) {
		if (share[order[i]] < 0.005 && i > 0)
			continue;
		pct(a, sizeof(a), share[order[i]]);
		bp_buf_printf(out, "%s %s %s", j++ ? "," : "", a, state_phrase(order[i]));
		if (order[i] == BP_TS_IO && bp_report_text_proc_io(io, sizeof(io), p, ps->proc->pid))
			bp_buf_printf(out, " (%s)", io);
	}
	bp_buf_putc(out, '\n');
}

/* summed over threads: eight threads serialized on one lock show as such */
static void thread_line(struct bp_buf *out, const struct bp_proc_summary *ps)
{
	int k, j = 0;

	bp_buf_printf(out, "  threads (sum of %u): %.2f s on-CPU", ps->threads, ps->on_cpu_s);
	for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++) {
		if (ps->off_s[k] < 0.005)
			continue;
		bp_buf_printf(out, ", %.2f s %s", ps->off_s[k], kind_phrase(k));
		j++;
	}
	bp_buf_putc(out, '\n');
}

/* what makes a process worth a paragraph */
static double weight(const struct bp_proc_summary *ps)
{
	return ps->on_cpu_s + ps->off_s[BP_KIND_RUNQUEUE] + ps->off_s[BP_KIND_IO] +
	       ps->off_s[BP_KIND_LOCK] + ps->off_s[BP_KIND_OTHER];
}

int bp_report_text(const struct bp_profile *p, const struct bp_summary *s,
		   const struct bp_text_opts *o, struct bp_buf *out)
{
	unsigned int max_procs = o && o->max_procs ? o->max_procs : 10;
	unsigned int max_hot = o && o->max_hot ? o->max_hot : 5;
	double total_weight = 0, floor_w;
	uint64_t rest_samples = 0;
	char a[16], where[512];
	uint32_t i, j, shown = 0, rest = 0;

	bp_buf_printf(out, "boundprof: %.2f s on %d CPU%s (%s, %d Hz): %" PRIu64
		      " samples, CPUs %.0f%% busy\n", s->duration_s, p->ncpus,
		      p->ncpus == 1 ? "" : "s", p->event, p->hz, s->samples, s->busy_frac * 100);
	if (s->have_overall) {
		int c, k = 0;

		bp_buf_printf(out, "overall: %s (%s confidence)", bp_class_name(s->overall.cls),
			      bp_confidence_name(s->overall.conf));
		for (c = 0; c < BP_CLASS__MAX; c++)
			if (s->class_count[c])
				bp_buf_printf(out, "%s %u %s", k++ ? "," : " —", s->class_count[c],
					      bp_class_name(c));
		bp_buf_printf(out, "%s\n", k ? (s->nr_procs == 1 ? " process" : "") : "");
	}
	if (!s->nr_procs)
		bp_buf_puts(out, "\nnothing recorded from the profiled processes\n");

	for (i = 0; i < s->nr_procs; i++)
		total_weight += weight(&s->procs[i]);
	floor_w = total_weight * 0.01;

	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];
		const struct bp_proc *proc = ps->proc;
		bool show;

		if (!proc)
			continue;
		/*
		 * The busiest processes; in a targeted run also the command
		 * itself when it only waited (a sleeper is worth a verdict).
		 */
		show = shown < max_procs &&
		       ((weight(ps) >= floor_w && (ps->samples >= 2 || weight(ps) >= 0.01)) ||
			(!p->system_wide && shown == 0 && ps->wall_s > 0));
		if (!show) {
			rest++;
			rest_samples += ps->samples;
			continue;
		}
		shown++;
		bp_buf_printf(out, "\npid %u %s", proc->pid, proc->comm[0] ? proc->comm : "[unknown]");
		if (ps->verdict)
			bp_buf_printf(out, ": %s (%s confidence)", bp_class_name(ps->verdict->cls),
				      bp_confidence_name(ps->verdict->conf));
		bp_buf_printf(out, "\n");
		if (proc->cmdline && *proc->cmdline)
			bp_buf_printf(out, "  cmd: %.200s\n", proc->cmdline);
		if (ps->verdict)
			verdict_block(out, ps->verdict);
		bp_buf_printf(out, "  %.2f s on-CPU", ps->on_cpu_s);
		if (ps->wall_s > 0)
			bp_buf_printf(out, ", %.2f s wall", ps->wall_s);
		bp_buf_printf(out, ", %u thread%s%s", ps->threads, ps->threads == 1 ? "" : "s",
			      proc->exited ? ", exited" : "");
		if (proc->python)
			bp_buf_printf(out, ", Python %s%s", proc->python,
				      proc->python_free_threaded ? " (free-threaded)" : "");
		bp_buf_printf(out, "\n");
		if (ps->have_timeline)
			wall_lines(out, p, ps);
		if (p->offcpu_enabled && ps->threads > 1)
			thread_line(out, ps);
		if (ps->wakeups >= 10 && bp_hist_quantile(ps->wake_hist, 0.99) >= 1000)
			bp_buf_printf(out, "  after %" PRIu64 " wakeups it waited for a CPU: p50 %.2f ms,"
				      " p99 %.2f ms, max %.2f ms\n", ps->wakeups,
				      fmin(bp_hist_quantile(ps->wake_hist, 0.5) / 1e3, ps->wake_max_s * 1e3),
				      fmin(bp_hist_quantile(ps->wake_hist, 0.99) / 1e3, ps->wake_max_s * 1e3),
				      ps->wake_max_s * 1e3);
		for (j = 0; j < ps->nr_hot && j < max_hot; j++) {
			if (j > 0 && ps->hot[j].self_frac < 0.01)
				break;
			pct(a, sizeof(a), ps->hot[j].self_frac);
			frame_where(&p->frames[ps->hot[j].frame], where, sizeof(where));
			bp_buf_printf(out, "  %4s of on-CPU time in %s\n", a, where);
		}
	}
	if (rest)
		bp_buf_printf(out, "\n%u more process%s with %" PRIu64 " on-CPU samples\n", rest,
			      rest == 1 ? "" : "es", rest_samples);
	bp_report_text_devices(out, p);
	losses(p, out);
	return out->err;
}
