// SPDX-License-Identifier: GPL-2.0
#include <math.h>

#include "export/report_io.h"
#include "model/hist.h"
#include "export/report_json.h"
#include "util/json.h"

/* every loss and note of the counter table (model/counters.h), zero or not */
static void write_stats(struct bp_json_w *w, const struct bp_profile *p)
{
	uint32_t i;

	bp_json_w_key(w, "drops_detail");
	bp_json_w_begin_object(w);
	for (i = 0; i < bp_nr_counters; i++) {
		const struct bp_counter *c = &bp_counters[i];

		if (c->kind != BP_CNT_SEEN)
			bp_json_w_kv_uint64(w, c->name, bp_counter_value(c, &p->stats, p->ucounts));
	}
	bp_json_w_end_object(w);
}

static void write_hotspots(struct bp_json_w *w, const struct bp_profile *p,
			   const struct bp_hotspot *h, uint32_t n)
{
	char label[512];
	uint32_t i;

	bp_json_w_begin_array(w);
	for (i = 0; i < n; i++) {
		const struct bp_frame *f = &p->frames[h[i].frame];

		bp_json_w_begin_object(w);
		/* with its line known, the function is named alone and the place beside it */
		if (f->name && f->file && f->line)
			bp_json_w_kv_string(w, "function", f->name);
		else
			bp_json_w_kv_string(w, "function",
					    bp_frame_label(f, false, label, sizeof(label)));
		bp_json_w_kv_string(w, "module", f->module);
		bp_json_w_kv_bool(w, "kernel", f->kernel);
		if (f->name && f->file && f->line) {
			bp_json_w_kv_string(w, "file", f->file);
			bp_json_w_kv_uint64(w, "line", f->line);
		}
		if (f->python)
			bp_json_w_kv_bool(w, "python", true);
		if (f->inlined)
			bp_json_w_kv_bool(w, "inlined", true);
		bp_json_w_kv_double(w, "self", h[i].self_frac);
		bp_json_w_kv_double(w, "total", h[i].total_frac);
		bp_json_w_kv_uint64(w, "self_samples", h[i].self);
		bp_json_w_kv_uint64(w, "total_samples", h[i].total);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

static void write_kinds(struct bp_json_w *w, const char *key, const double *v)
{
	int k;

	bp_json_w_key(w, key);
	bp_json_w_begin_object(w);
	for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++)
		bp_json_w_kv_double(w, bp_kind_name(k), v[k]);
	bp_json_w_end_object(w);
}

#define MAX_THREADS_DETAIL 64

static void write_threads(struct bp_json_w *w, const struct bp_proc_summary *ps)
{
	uint32_t i;

	bp_json_w_key(w, "threads_detail");
	bp_json_w_begin_array(w);
	for (i = 0; i < ps->nr_thr && i < MAX_THREADS_DETAIL; i++) {
		const struct bp_thread_summary *t = &ps->thr[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_int64(w, "tid", t->tid);
		bp_json_w_kv_string(w, "comm", t->t ? t->t->comm : "");
		bp_json_w_kv_double(w, "wall_s", t->wall_s);
		bp_json_w_kv_double(w, "on_cpu_s", t->on_cpu_s);
		write_kinds(w, "off_cpu_s", t->off_s);
		bp_json_w_kv_double(w, "accounted_s", t->accounted_s);
		if (t->gil_s > 0)
			bp_json_w_kv_double(w, "gil_wait_s", t->gil_s);
		if (t->t && t->t->have_totals) {
			bp_json_w_kv_uint64(w, "switches", t->t->switches);
			bp_json_w_kv_uint64(w, "wakeups", t->t->wakeups);
			bp_json_w_kv_bool(w, "exited", t->t->exited);
		}
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	if (ps->nr_thr > MAX_THREADS_DETAIL)
		bp_json_w_kv_uint64(w, "threads_detail_omitted", ps->nr_thr - MAX_THREADS_DETAIL);
}

static void write_offcpu(struct bp_json_w *w, const struct bp_proc_summary *ps)
{
	int k;

	if (ps->have_timeline) {
		bp_json_w_key(w, "timeline_s");
		bp_json_w_begin_object(w);
		for (k = 0; k < BP_TS__MAX; k++)
			bp_json_w_kv_double(w, bp_tstate_name(k), ps->tl_s[k]);
		bp_json_w_kv_double(w, "idle", ps->tl_idle_s);
		bp_json_w_end_object(w);
	}
	bp_json_w_key(w, "wakeups");
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "count", ps->wakeups);
	bp_json_w_kv_double(w, "total_s", ps->wake_lat_s);
	bp_json_w_kv_double(w, "mean_ms", ps->wakeups ? ps->wake_lat_s * 1e3 / ps->wakeups : 0);
	/* interpolating inside a log2 bucket can overshoot the largest value seen */
	bp_json_w_kv_double(w, "p50_ms", fmin(bp_hist_quantile(ps->wake_hist, 0.50) / 1e3,
					      ps->wake_max_s * 1e3));
	bp_json_w_kv_double(w, "p99_ms", fmin(bp_hist_quantile(ps->wake_hist, 0.99) / 1e3,
					      ps->wake_max_s * 1e3));
	bp_json_w_kv_double(w, "max_ms", ps->wake_max_s * 1e3);
	bp_json_w_end_object(w);
	write_threads(w, ps);
}

static void write_lines(struct bp_json_w *w, const char *key,
			const char *const *lines, uint32_t n)
{
	uint32_t i;

	bp_json_w_key(w, key);
	bp_json_w_begin_array(w);
	for (i = 0; i < n; i++)
		bp_json_w_string(w, lines[i]);
	bp_json_w_end_array(w);
}

static void kv_speedup(struct bp_json_w *w, const char *key, double v)
{
	/* removing a wait that is all of the time has no finite bound */
	if (isfinite(v))
		bp_json_w_kv_double(w, key, v);
	else
		bp_json_w_kv_string(w, key, "unbounded");
}

/* a verdict; NULL (a quiet process) reads as class unknown */
static void write_verdict(struct bp_json_w *w, const struct bp_verdict *v)
{
	bp_json_w_begin_object(w);
	if (!v) {
		bp_json_w_kv_string(w, "class", "unknown");
		bp_json_w_kv_string(w, "confidence", "low");
		write_lines(w, "evidence", NULL, 0);
		write_lines(w, "levers", NULL, 0);
		bp_json_w_end_object(w);
		return;
	}
	bp_json_w_kv_string(w, "class", bp_class_name(v->cls));
	bp_json_w_kv_string(w, "confidence", bp_confidence_name(v->conf));
	write_lines(w, "evidence", v->evidence, v->nr_evidence);
	write_lines(w, "levers", v->levers, v->nr_levers);
	if (v->second != BP_CLASS_UNKNOWN)
		bp_json_w_kv_string(w, "second", bp_class_name(v->second));
	bp_json_w_kv_double(w, "busy_s", v->busy_s);
	bp_json_w_key(w, "shares");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "cpu", v->share_cpu);
	bp_json_w_kv_double(w, "memory", v->share_mem);
	bp_json_w_kv_double(w, "io", v->share_io);
	bp_json_w_kv_double(w, "lock", v->share_lock);
	bp_json_w_kv_double(w, "runqueue", v->share_rq);
	bp_json_w_kv_double(w, "other", v->share_other);
	if (v->share_gil > 0)
		bp_json_w_kv_double(w, "gil", v->share_gil);
	bp_json_w_end_object(w);
	bp_json_w_key(w, "amdahl");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "hot_wall_share", v->hot_wall);
	kv_speedup(w, "hot_4x_speedup", v->hot_4x);
	kv_speedup(w, "hot_removed_speedup", bp_amdahl(v->hot_wall, 0));
	if (v->wait_class != BP_CLASS_UNKNOWN) {
		bp_json_w_kv_string(w, "wait", bp_class_name(v->wait_class));
		bp_json_w_kv_double(w, "wait_share", v->wait_share);
		kv_speedup(w, "wait_overlapped_speedup", bp_amdahl(v->wait_share, 0));
	}
	bp_json_w_kv_double(w, "parallelism", v->parallelism);
	bp_json_w_end_object(w);
	bp_json_w_end_object(w);
}

static void write_summary(struct bp_json_w *w, const struct bp_profile *p,
			  const struct bp_summary *s)
{
	int c;

	bp_json_w_key(w, "summary");
	bp_json_w_begin_object(w);
	bp_json_w_key(w, "verdict");
	write_verdict(w, s->have_overall ? &s->overall : NULL);
	bp_json_w_key(w, "classes");
	bp_json_w_begin_object(w);
	for (c = 0; c < BP_CLASS__MAX; c++)
		if (s->class_count[c])
			bp_json_w_kv_uint64(w, bp_class_name(c), s->class_count[c]);
	bp_json_w_end_object(w);
	bp_json_w_kv_double(w, "cpu_busy", s->busy_frac);
	if (p->llc_bytes) {
		bp_json_w_kv_uint64(w, "llc_bytes", p->llc_bytes);
		bp_json_w_kv_string(w, "llc_source", p->llc_source);
	}
	bp_json_w_end_object(w);
}

static void write_proc(struct bp_json_w *w, const struct bp_profile *p,
		       const struct bp_proc_summary *ps)
{
	const struct bp_proc *proc = ps->proc;

	bp_json_w_begin_object(w);
	bp_json_w_kv_int64(w, "pid", proc->pid);
	bp_json_w_kv_int64(w, "ppid", proc->ppid);
	bp_json_w_kv_string(w, "comm", proc->comm[0] ? proc->comm : "[unknown]");
	bp_json_w_kv_string(w, "cmdline", proc->cmdline ? proc->cmdline : "");
	bp_json_w_kv_bool(w, "exited", proc->exited);
	bp_json_w_kv_double(w, "wall_s", ps->wall_s);
	bp_json_w_kv_double(w, "on_cpu_s", ps->on_cpu_s);
	bp_json_w_kv_double(w, "on_cpu_sampled_s", ps->on_cpu_sampled_s);
	bp_json_w_kv_uint64(w, "samples", ps->samples);
	bp_json_w_kv_uint64(w, "threads", ps->threads);
	if (proc->python) {
		bp_json_w_key(w, "python");
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "version", proc->python);
		bp_json_w_kv_bool(w, "free_threaded", proc->python_free_threaded);
		bp_json_w_kv_double(w, "gil_wait_s", ps->gil_s);
		bp_json_w_end_object(w);
	}
	write_kinds(w, "off_cpu_s", ps->off_s);
	bp_json_w_key(w, "io");
	bp_export_json_proc_io(w, p, proc->pid, ps->off_s[BP_KIND_IO]);
	if (p->offcpu_enabled)
		write_offcpu(w, ps);
	bp_json_w_key(w, "verdict");
	write_verdict(w, ps->verdict);
	bp_json_w_key(w, "hotspots");
	write_hotspots(w, p, ps->hot, ps->nr_hot);
	bp_json_w_key(w, "inclusive");
	write_hotspots(w, p, ps->incl, ps->nr_incl);
	bp_json_w_end_object(w);
}

int bp_export_json(const struct bp_profile *p, const struct bp_summary *s, bool pretty,
		   struct bp_buf *out)
{
	struct bp_json_w w;
	uint32_t i, quiet = 0;
	int err;

	bp_json_w_init(&w, out, pretty);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "version", BP_REPORT_VERSION);
	bp_json_w_kv_double(&w, "duration_s", s->duration_s);
	bp_json_w_kv_int64(&w, "hz", p->hz);
	bp_json_w_kv_string(&w, "event", p->event);
	bp_json_w_kv_int64(&w, "start_unix_ns", p->start_unix_ns);
	bp_json_w_kv_bool(&w, "system_wide", p->system_wide);
	write_summary(&w, p, s);

	bp_json_w_key(&w, "system");
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "cpus", p->ncpus);
	bp_json_w_kv_bool(&w, "pmu", p->pmu);
	bp_json_w_kv_uint64(&w, "samples", s->samples);
	bp_json_w_kv_uint64(&w, "idle_samples", s->idle);
	bp_json_w_kv_double(&w, "busy", s->busy_frac);
	bp_json_w_end_object(&w);

	bp_json_w_key(&w, "processes");
	bp_json_w_begin_array(&w);
	/* system-wide, processes that only slept are left out (counted below) */
	for (i = 0; i < s->nr_procs; i++) {
		if (!s->procs[i].proc)
			continue;
		if (p->system_wide && !s->procs[i].active) {
			quiet++;
			continue;
		}
		write_proc(&w, p, &s->procs[i]);
	}
	bp_json_w_end_array(&w);
	bp_json_w_kv_uint64(&w, "processes_quiet", quiet);
	bp_json_w_key(&w, "offcpu");
	bp_json_w_begin_object(&w);
	bp_json_w_kv_bool(&w, "enabled", p->offcpu_enabled);
	bp_json_w_kv_uint64(&w, "switches", p->stats.v[BP_STAT_SWITCHES]);
	bp_json_w_kv_uint64(&w, "stacks_cached", p->stats.v[BP_STAT_STACKS_CACHED]);
	bp_json_w_end_object(&w);

	bp_export_json_devices(&w, p);

	bp_json_w_key(&w, "drops");
	bp_json_w_begin_object(&w);
	bp_json_w_kv_uint64(&w, "samples", s->lost_samples);
	bp_json_w_kv_uint64(&w, "stacks", s->lost_stacks);
	bp_json_w_end_object(&w);
	write_stats(&w, p);
	bp_json_w_end_object(&w);
	err = bp_json_w_finish(&w);
	if (!err)
		err = bp_buf_putc(out, '\n');
	return err;
}
