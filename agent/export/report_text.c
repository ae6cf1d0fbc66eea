// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/runs.h"
#include "export/report_io.h"
#include "export/report_jobs.h"
#include "export/report_chain.h"
#include "model/hist.h"
#include "export/report_text.h"
#include "analyze/pipeline.h"
#include "analyze/rlang.h"
#include "model/waits.h"

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

	if (f->name)
		bp_func_label(f, label, sizeof(label));
	else
		snprintf(label, sizeof(label), "unnamed code");
	if (!f->kernel)
		snprintf(buf, len, "%s (%s)", label, f->module);
	else if (!strcmp(f->module, "[kernel]"))
		snprintf(buf, len, "%s [kernel]", label);
	else
		snprintf(buf, len, "%s [kernel module %s]", label, f->module);
}

/*
 * A function's hot lines, beneath its share: "lines.c:28 49%, lines.c:29
 * 26%". A line under 1% of the time is not worth a look; one line alone
 * needs no share.
 */
static void hot_lines(struct bp_buf *out, const struct bp_profile *p, const struct bp_func_hot *h)
{
	uint32_t i, shown = 0;
	char a[16];

	for (i = 0; i < h->nr_lines && shown < 3; i++) {
		const struct bp_frame *f = &p->frames[h->lines[i].frame];
		const char *base;

		if (!f->file || !f->line || (shown && h->lines[i].self_frac < 0.01))
			continue;
		base = strrchr(f->file, '/');
		bp_buf_printf(out, "%s%s:%" PRIu32, shown ? ", " : ": ", base ? base + 1 : f->file,
			      f->line);
		if (h->nr_lines > 1) {
			pct(a, sizeof(a), h->lines[i].self_frac);
			bp_buf_printf(out, " %s", a);
		}
		shown++;
	}
}

/*
 * The non-zero losses of the counter table (model/counters.h), then its
 * notes. One stack in hundreds cut changes no share a reader acts on, so
 * those under 1% of the samples are one quiet line unless verbose.
 */
static void losses(const struct bp_profile *p, bool verbose, struct bp_buf *out)
{
	uint64_t total = p->stats.v[BP_STAT_SAMPLES], small = 0;
	bool any = false;
	uint32_t i;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < bp_nr_counters; i++) {
			const struct bp_counter *c = &bp_counters[i];
			uint64_t v = bp_counter_value(c, &p->stats, p->ucounts);

			if (!v || (pass ? !bp_counter_is_note(c) : !bp_counter_is_loss(c)))
				continue;
			if (!verbose && total && v * 100 < total) {
				small += v;
				continue;
			}
			if (pass) {
				/* notes are no losses: no heading, a blank line if alone */
				bp_buf_printf(out, "%s%" PRIu64 " %s\n", any ? "" : "\n", v,
					      c->what);
			} else {
				if (!any)
					bp_buf_puts(out, "\nlosses:\n");
				bp_buf_printf(out, "  %" PRIu64 " %s\n", v, c->what);
			}
			any = true;
		}
	}
	if (small && any)
		bp_buf_printf(out, "and %" PRIu64 " more stacks or events lost or noted, each kind "
			      "under 1%% of the samples (-v lists them)\n", small);
	else if (small)
		bp_buf_printf(out, "\nlosses: under 1%% of the samples (%" PRIu64 " stacks or "
			      "events; -v lists them)\n", small);
}

static void verdict_block(struct bp_buf *out, const struct bp_verdict *v)
{
	uint32_t i;

	for (i = 0; i < v->nr_evidence; i++)
		bp_buf_printf(out, "  %s %s\n", i ? " " : "-", v->evidence[i]);
	for (i = 0; i < v->nr_levers; i++)
		bp_buf_printf(out, "  %s %s\n", i ? "  " : "=>", v->levers[i]);
}

/* who ended its waits, and the network peers it waited on */
static void wait_lines(struct bp_buf *out, const struct bp_summary *s,
		       const struct bp_proc_summary *ps)
{
	const struct bp_proc_waits *w;
	char rx[32];
	uint32_t i, n = 0;

	if (!s->waits || (uint32_t)(ps - s->procs) >= s->waits->nr_waits)
		return;
	w = &s->waits->waits[ps - s->procs];
	if (w->net_waits) {
		bp_buf_printf(out, "  network: %" PRIu64 " round trip%s, %.2f s, p50 %.2f ms, "
			      "p99 %.2f ms", w->net_waits, w->net_waits == 1 ? "" : "s",
			      w->net_wait_s, w->net_p50_ms, w->net_p99_ms);
		if (w->net_rx || w->net_tx) {
			snprintf(rx, sizeof(rx), "%.1f KiB", w->net_rx / 1024.0);
			bp_buf_printf(out, ", %s in, %.1f KiB out", rx, w->net_tx / 1024.0);
		}
		for (i = 0; i < w->nr_peers && i < 3; i++)
			bp_buf_printf(out, "%s %s (%s, %.2f s)", i ? "," : ";", w->peers[i].name,
				      bp_side_name(w->peers[i].side), w->peers[i].wait_s);
		bp_buf_putc(out, '\n');
	}
	for (i = 0; i < w->nr_wakers && n < 3; i++) {
		const struct bp_waker *k = &w->wakers[i];

		if (k->s < 0.01 || k->state == BP_TS_RUNQUEUE)
			continue;
		bp_buf_printf(out, "%s", n++ ? ", " : "  woken by: ");
		if (k->ctx == BP_WCTX_IDLE)
			bp_buf_printf(out, "an interrupt");
		else if (!k->pid)
			bp_buf_printf(out, "a %s", bp_wctx_name(k->ctx));
		else if (k->ctx == BP_WCTX_TASK)
			bp_buf_printf(out, "%s (pid %u)", k->comm, k->pid);
		else
			bp_buf_printf(out, "a %s on %s (pid %u)", bp_wctx_name(k->ctx), k->comm,
				      k->pid);
		bp_buf_printf(out, " %.2f s of %s waits", k->s, bp_tstate_name(k->state));
	}
	if (n)
		bp_buf_putc(out, '\n');
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
		bp_buf_printf(out, "%s %s %s", j++ ? "," : "", a,
			      bp_wclass_of_state(order[i])->wall);
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
		bp_buf_printf(out, ", %.2f s %s", ps->off_s[k], bp_wclass(k)->threads);
		j++;
	}
	bp_buf_putc(out, '\n');
}

/* whose it is and where it runs */
static void who_line(struct bp_buf *out, const struct bp_proc *proc)
{
	if (!proc->have_ids)
		return;
	if (proc->user)
		bp_buf_printf(out, "  user: %s (%u)", proc->user, proc->uid);
	else
		bp_buf_printf(out, "  user: %u", proc->uid);
	if (proc->unit)
		bp_buf_printf(out, ", unit: %.200s", proc->unit);
	if (proc->cgroup)
		bp_buf_printf(out, ", cgroup: %.300s", proc->cgroup);
	bp_buf_putc(out, '\n');
}

static void limits_lines(struct bp_buf *out, const struct bp_group *g)
{
	const struct bp_cgroup *c = g->cpu, *m = g->mem, *ps = g->psi;
	static const char *const res[BP_PSI_RES] = { "cpu", "memory", "io" };
	char a[16];
	int k;

	if (c && c->cpu_valid && c->quota_at && c->period_us) {
		double w = c->watched_ns / 1e9;

		pct(a, sizeof(a), w > 0 ? c->throttled_ns / 1e9 / w : 0);
		bp_buf_printf(out, "  CPU quota %.2f CPUs (cgroup %.300s): throttled %.2f s, %s of "
			      "%.2f s, in %" PRIu64 " of %" PRIu64 " periods\n",
			      (double)c->quota_us / c->period_us, c->quota_at,
			      c->throttled_ns / 1e9, a, w, c->nr_throttled, c->nr_periods);
	}
	if (m && m->mem_valid && m->mem_at) {
		uint64_t lim = m->mem_max != UINT64_MAX ? m->mem_max : m->mem_high;

		bp_buf_printf(out, "  memory limit %.0f MiB (cgroup %.300s): %" PRIu64 " high, %"
			      PRIu64 " max events, %" PRIu64 " OOM kills\n", lim / 1048576.0,
			      m->mem_at, m->mem_high_events, m->mem_max_events, m->mem_oom_kill);
	}
	if (ps && ps->psi_valid && ps->watched_ns) {
		bp_buf_printf(out, "  pressure of cgroup %.300s (some):", ps->path);
		for (k = 0; k < BP_PSI_RES; k++) {
			pct(a, sizeof(a), ps->psi_some_us[k] * 1e3 / ps->watched_ns);
			bp_buf_printf(out, "%s %s %s", k ? "," : "", res[k], a);
		}
		bp_buf_putc(out, '\n');
	}
}

static void group_paragraphs(struct bp_buf *out, const struct bp_profile *p,
			     const struct bp_summary *s, const struct bp_groups *gs,
			     unsigned int max)
{
	double dur = s->duration_s > 0 ? s->duration_s : 1;
	uint32_t i, j, shown = 0;
	int k;

	bp_buf_printf(out, "\ngroups by %s: %u\n", bp_group_by_name(gs->by), gs->nr);
	for (i = 0; i < gs->nr && shown < max; i++) {
		const struct bp_group *g = &gs->g[i];

		if (g->activity < 0.005 && i > 0)
			break;
		shown++;
		bp_buf_printf(out, "\n%s %.300s", bp_group_by_name(gs->by), g->name);
		if (g->have_verdict)
			bp_buf_printf(out, ": %s (%s confidence)", bp_class_name(g->verdict.cls),
				      bp_confidence_name(g->verdict.conf));
		bp_buf_printf(out, "\n  %u process%s, %u thread%s: %.2f s on-CPU (%.2f CPUs)",
			      g->nr_procs, g->nr_procs == 1 ? "" : "es", g->threads,
			      g->threads == 1 ? "" : "s", g->on_cpu_s, g->on_cpu_s / dur);
		for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++) {
			if (g->off_s[k] < 0.005)
				continue;
			bp_buf_printf(out, ", %.2f s %s", g->off_s[k], bp_wclass(k)->threads);
			if (k == BP_KIND_RUNQUEUE && g->throttled_s >= 0.005)
				bp_buf_printf(out, " (%.2f s throttled)", g->throttled_s);
		}
		if (g->io_ops)
			bp_buf_printf(out, "; IO %" PRIu64 " requests, %.1f MiB", g->io_ops,
				      g->io_bytes / 1048576.0);
		bp_buf_putc(out, '\n');
		bp_buf_puts(out, "  busiest:");
		for (j = 0; j < g->nr_top; j++)
			bp_buf_printf(out, "%s pid %u %s (%.2f s on-CPU)", j ? "," : "",
				      g->top[j]->proc->pid, g->top[j]->proc->comm[0] ?
				      g->top[j]->proc->comm : "[unknown]", g->top[j]->on_cpu_s);
		bp_buf_putc(out, '\n');
		limits_lines(out, g);
		if (g->have_verdict)
			verdict_block(out, &g->verdict);
	}
	if (shown < gs->nr)
		bp_buf_printf(out, "\n%u more group%s\n", gs->nr - shown,
			      gs->nr - shown == 1 ? "" : "s");
	(void)p;
}

/* what makes a process worth a paragraph */
static double weight(const struct bp_proc_summary *ps)
{
	return bp_proc_activity(ps);
}

/* a repeated COMMAND (record -r N): the median and spread of its runs */
static void runs_line(const struct bp_profile *p, struct bp_buf *out)
{
	struct bp_runs_summary rs;

	if (p->nr_runs < 2 || bp_runs_summarize(p, &rs))
		return;
	bp_buf_printf(out, "runs: %u, wall %.3f s median (%.3f-%.3f s, spread %.1f%%), on-CPU "
		      "%.3f s median\n", rs.n, rs.wall.median, rs.wall.min, rs.wall.max,
		      rs.wall.spread * 100, rs.cpu.median);
	if (rs.noisy)
		bp_buf_printf(out, "warning: the runs differ by %.1f%% of their median, more than "
			      "%.0f%%: a comparison needs more runs or a quieter machine\n",
			      rs.wall.spread * 100, BP_RUNS_NOISY * 100);
	if (rs.failed)
		bp_buf_printf(out, "warning: %u of the runs did not exit 0\n", rs.failed);
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
	for (i = 0; s->waits && i < s->waits->nr; i++) {
		const struct bp_pipeline *pl = &s->waits->pl[i];
		char lead[BP_VERDICT_LEN], name[64];

		bp_pipeline_lead(s, pl, lead, sizeof(lead));
		bp_buf_printf(out, "pipeline: %s\n", lead);
		for (j = 0; j < pl->nr_stages; j++) {
			const struct bp_stage *st = &pl->stages[j];
			const struct bp_proc_summary *ps = &s->procs[st->proc];
			double wall = ps->wall_s > 0 ? ps->wall_s : 1;

			bp_stage_name(ps->proc, name, sizeof(name));
			bp_buf_printf(out, "  %s%s: %.0f%% of its time waiting for input, %.0f%% for "
				      "room for output; %.1f MiB in, %.1f MiB out\n",
				      j == pl->bottleneck ? "* " : "", name,
				      st->in_wait_s / wall * 100, st->out_wait_s / wall * 100,
				      st->rbytes / 1048576.0, st->wbytes / 1048576.0);
		}
	}
	bp_export_text_chains(out, s);
	runs_line(p, out);
	/* short runs of one program: one paragraph for all of them */
	bp_report_text_jobs(out, p, s);
	if (!s->nr_procs)
		bp_buf_puts(out, "\nnothing recorded from the profiled processes\n");
	if (o && o->groups)
		group_paragraphs(out, p, s, o->groups, o->max_groups ? o->max_groups : 10);

	/* the folded runs count: a process that did next to nothing stays in the rest */
	for (i = 0; i < s->nr_procs; i++)
		total_weight += weight(&s->procs[i]);
	floor_w = total_weight * 0.01;

	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];
		const struct bp_proc *proc = ps->proc;
		bool show;

		if (!proc || bp_report_text_folded(s, i))
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
		who_line(out, proc);
		if (ps->verdict && !bp_report_text_job_parent(out, s, i))
			verdict_block(out, ps->verdict);
		bp_buf_printf(out, "  %.2f s on-CPU", ps->on_cpu_s);
		/* a busy host's doing, not the program's: said where the time is */
		if (ps->steal_s >= 0.01 && ps->steal_s >= 0.01 * ps->on_cpu_s)
			bp_buf_printf(out, " (%.2f s of it the hypervisor ran something else)",
				      ps->steal_s);
		if (ps->wall_s > 0)
			bp_buf_printf(out, ", %.2f s wall", ps->wall_s);
		bp_buf_printf(out, ", %u thread%s%s", ps->threads, ps->threads == 1 ? "" : "s",
			      proc->exited ? ", exited" : "");
		if (proc->python)
			bp_buf_printf(out, ", Python %s%s", proc->python,
				      proc->python_free_threaded ? " (free-threaded)" : "");
		if (proc->r_version)
			bp_buf_printf(out, ", R %s%s", proc->r_version,
				      bp_r_has_lines(p, proc->pid) ? "" :
				      " without source lines: it kept no srcrefs (run the script "
				      "with source(\"FILE.R\", keep.source = TRUE), or set "
				      "options(keep.source = TRUE) before it is parsed; "
				      "Rscript FILE.R keeps none)");
		bp_buf_printf(out, "\n");
		if (ps->have_timeline)
			wall_lines(out, p, ps);
		if (p->offcpu_enabled && ps->threads > 1)
			thread_line(out, ps);
		if (p->offcpu_enabled)
			wait_lines(out, s, ps);
		if (ps->wakeups >= 10 && bp_hist_quantile(ps->wake_hist, 0.99) >= 1000)
			bp_buf_printf(out, "  after %" PRIu64 " wakeups it waited for a CPU: p50 %.2f ms,"
				      " p99 %.2f ms, max %.2f ms\n", ps->wakeups,
				      fmin(bp_hist_quantile(ps->wake_hist, 0.5) / 1e3, ps->wake_max_s * 1e3),
				      fmin(bp_hist_quantile(ps->wake_hist, 0.99) / 1e3, ps->wake_max_s * 1e3),
				      ps->wake_max_s * 1e3);
		for (j = 0; j < ps->nr_funcs && j < max_hot; j++) {
			if (j > 0 && ps->funcs[j].self_frac < 0.01)
				break;
			pct(a, sizeof(a), ps->funcs[j].self_frac);
			frame_where(&p->frames[ps->funcs[j].frame], where, sizeof(where));
			bp_buf_printf(out, "  %4s of on-CPU time in %s", a, where);
			hot_lines(out, p, &ps->funcs[j]);
			bp_buf_printf(out, "\n");
		}
	}
	if (rest)
		bp_buf_printf(out, "\n%u more process%s with %" PRIu64 " on-CPU samples\n", rest,
			      rest == 1 ? "" : "es", rest_samples);
	bp_report_text_devices(out, p);
	losses(p, o && o->verbose, out);
	return out->err;
}
