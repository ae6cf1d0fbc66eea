// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>

#include "analyze/runs.h"
#include "export/report_io.h"
#include "export/report_jobs.h"
#include "export/report_chain.h"
#include "model/hist.h"
#include "export/report_json.h"
#include "analyze/pipeline.h"
#include "analyze/rlang.h"
#include "analyze/syscalls.h"
#include "model/waits.h"
#include "proc/probecal.h"
#include "util/json.h"

/* every loss and note of the counter table (model/counters.h), zero or not */
/*
 * The user's own code the advice names (analyze/owned.h): its innermost
 * function on most samples, and what it calls that the user does not own.
 */
static void write_own_code(struct bp_json_w *w, const struct bp_profile *p,
			   const struct bp_proc_summary *ps)
{
	const struct bp_frame *f;
	char lbl[256];

	if (!ps->have_own)
		return;
	f = &p->frames[ps->own_frame];
	bp_json_w_key(w, "own_code");
	bp_json_w_begin_object(w);
	bp_json_w_kv_string(w, "function", f->name ? f->name : bp_frame_label(f, false, lbl,
									      sizeof(lbl)));
	bp_json_w_kv_string(w, "module", f->module);
	bp_json_w_kv_double(w, "share", ps->own_frac);
	bp_json_w_kv_double(w, "beneath_share", ps->own_beneath);
	bp_json_w_kv_double(w, "kernel_share", ps->own_kernel);
	if (ps->own_beneath > 0) {
		f = &p->frames[ps->own_callee];
		if (f->name)
			bp_json_w_kv_string(w, "callee", f->name);
		bp_json_w_kv_string(w, "callee_module", f->module);
		bp_json_w_kv_double(w, "callee_share", ps->own_callee_frac);
	}
	bp_json_w_end_object(w);
}

/*
 * Its system calls: the on-CPU share the kernel spent serving them and the
 * calls the samples were in; with context-switch tracing, the read and
 * write calls the kernel counted.
 */
static void write_syscalls(struct bp_json_w *w, const struct bp_profile *p,
			   const struct bp_proc_summary *ps)
{
	const struct bp_proc *proc = ps->proc;
	char name[32];
	int k;

	bp_json_w_key(w, "syscalls");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "on_cpu_share", ps->frac_syscall);
	if (p->offcpu_enabled) {
		bp_json_w_kv_uint64(w, "reads", ps->syscr);
		bp_json_w_kv_uint64(w, "writes", ps->syscw);
	}
	bp_json_w_key(w, "calls");
	bp_json_w_begin_array(w);
	for (k = 0; k < BP_SYS_TOP; k++) {
		if (!proc->sys_nr[k])
			continue;
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "name",
				    bp_syscall_label(proc->sys_nr[k] - 1, name, sizeof(name)));
		bp_json_w_kv_uint64(w, "nr", proc->sys_nr[k] - 1);
		bp_json_w_kv_uint64(w, "samples", proc->sys_samples[k]);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_kv_uint64(w, "other_samples", proc->sys_other);
	bp_json_w_end_object(w);
}

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
			bp_json_w_kv_bool(w, bp_frame_r(f) ? "r" : "python", true);
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

/* hotspots by function, all lines together, each with its lines beneath */
static void write_functions(struct bp_json_w *w, const struct bp_profile *p,
			    const struct bp_proc_summary *ps)
{
	char label[512];
	uint32_t i;

	bp_json_w_begin_array(w);
	for (i = 0; i < ps->nr_funcs; i++) {
		const struct bp_func_hot *h = &ps->funcs[i];
		const struct bp_frame *f = &p->frames[h->frame];

		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "function", bp_func_label(f, label, sizeof(label)));
		bp_json_w_kv_string(w, "module", f->module);
		bp_json_w_kv_bool(w, "kernel", f->kernel);
		if (f->python)
			bp_json_w_kv_bool(w, bp_frame_r(f) ? "r" : "python", true);
		bp_json_w_kv_double(w, "self", h->self_frac);
		bp_json_w_kv_double(w, "total", h->total_frac);
		bp_json_w_kv_uint64(w, "self_samples", h->self);
		bp_json_w_kv_uint64(w, "total_samples", h->total);
		bp_json_w_key(w, "lines");
		write_hotspots(w, p, h->lines, h->nr_lines);
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
		bp_json_w_kv_double(w, "steal_s", t->steal_s);
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
	if (v->cls == BP_CLASS_PEER) {
		bp_json_w_key(w, "peer");
		bp_json_w_begin_object(w);
		if (v->peer_pid)
			bp_json_w_kv_int64(w, "pid", v->peer_pid);
		else
			bp_json_w_kv_string(w, "pid", NULL);
		bp_json_w_kv_string(w, "comm", v->peer_comm);
		bp_json_w_kv_string(w, "direction", v->peer_dir == BP_DIR_OUT ? "output" : "input");
		bp_json_w_kv_double(w, "wait_share", v->peer_share);
		bp_json_w_end_object(w);
	}
	bp_json_w_kv_double(w, "busy_s", v->busy_s);
	bp_json_w_key(w, "shares");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "cpu", v->share_cpu);
	bp_json_w_kv_double(w, "memory", v->share_mem);
	bp_json_w_kv_double(w, "io", v->share_io);
	bp_json_w_kv_double(w, "lock", v->share_lock);
	/* all of the run-queue time, as before; "throttled" is the quota's part of it */
	bp_json_w_kv_double(w, "runqueue", v->share_rq + v->share_throttled);
	bp_json_w_kv_double(w, "throttled", v->share_throttled);
	bp_json_w_kv_double(w, "other", v->share_other);
	bp_json_w_kv_double(w, "net", v->share_net);
	if (v->share_gil > 0)
		bp_json_w_kv_double(w, "gil", v->share_gil);
	/* wake-up latency on idle CPUs, left out of "runqueue" (docs/classification.md) */
	bp_json_w_kv_double(w, "handoff", v->share_handoff);
	bp_json_w_end_object(w);
	if (v->handoff_s > 0) {
		bp_json_w_key(w, "handoff");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "s", v->handoff_s);
		bp_json_w_kv_uint64(w, "count", v->handoffs);
		bp_json_w_kv_double(w, "p50_ms", v->handoff_p50_ms);
		bp_json_w_kv_double(w, "max_ms", v->handoff_max_ms);
		bp_json_w_end_object(w);
	}
	/* threads taking turns on a lock (analyze/turns.h) */
	if (v->turn_share > 0) {
		bp_json_w_key(w, "turns");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "share", v->turn_share);
		bp_json_w_kv_double(w, "serial_share", v->serial_share);
		bp_json_w_end_object(w);
	}
	bp_json_w_key(w, "memory");
	bp_json_w_begin_object(w);
	bp_json_w_kv_string(w, "judgement", bp_mem_judgement_name(v->mem_judgement));
	if (v->mem_machine_gbs > 0) {
		bp_json_w_kv_double(w, "traffic_per_cpu_gbs", v->mem_traffic_per_cpu_gbs);
		bp_json_w_kv_double(w, "traffic_gbs", v->mem_traffic_gbs);
		bp_json_w_kv_double(w, "machine_gbs", v->mem_machine_gbs);
		bp_json_w_kv_double(w, "ratio", v->mem_ratio);
	}
	bp_json_w_end_object(w);
	bp_json_w_key(w, "amdahl");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "hot_wall_share", v->hot_wall);
	kv_speedup(w, "hot_4x_speedup", v->hot_4x);
	kv_speedup(w, "hot_removed_speedup", bp_amdahl(v->hot_wall, 0));
	if (v->wait_class != BP_CLASS_UNKNOWN) {
		bp_json_w_kv_string(w, "wait", bp_class_name(v->wait_class));
		if (v->wait_class == BP_CLASS_IO)
			bp_json_w_kv_string(w, "wait_on", v->wait_net ? "network" : "block");
		bp_json_w_kv_double(w, "wait_share", v->wait_share);
		kv_speedup(w, "wait_overlapped_speedup", bp_amdahl(v->wait_share, 0));
	}
	bp_json_w_kv_double(w, "parallelism", v->parallelism);
	bp_json_w_end_object(w);
	bp_json_w_end_object(w);
}

static void write_psi(struct bp_json_w *w, const uint64_t *some, const uint64_t *full,
		      double covered_s);

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
	if (s->waits && s->waits->nr_crit) {
		uint32_t i;

		bp_json_w_key(w, "critical_path");
		bp_json_w_begin_array(w);
		for (i = 0; i < s->waits->nr_crit; i++)
			bp_json_w_int64(w, s->procs[s->waits->crit[i]].proc->pid);
		bp_json_w_end_array(w);
	}
	if (p->membw_valid) {
		bp_json_w_key(w, "memory_bandwidth");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "one_thread_gbs", p->membw_1_gbs);
		bp_json_w_kv_double(w, "gbs", p->membw_n_gbs);
		bp_json_w_kv_uint64(w, "threads", p->membw_threads);
		bp_json_w_kv_string(w, "source", p->membw_source ? p->membw_source : "");
		if (p->membw_cache_bytes)
			bp_json_w_kv_uint64(w, "cache_bytes", p->membw_cache_bytes);
		if (p->membw_window && !p->membw_window_err) {
			bp_json_w_key(w, "traffic_window");
			bp_json_w_begin_object(w);
			bp_json_w_kv_double(w, "stream_gbs", p->membw_window_stream_gbs);
			bp_json_w_kv_double(w, "seen_gbs", p->membw_window_seen_gbs);
			bp_json_w_kv_double(w, "visible", p->membw_window_visible);
			bp_json_w_kv_bool(w, "floor", p->membw_window_floor);
			bp_json_w_kv_bool(w, "blind", bp_probecal_blind(p->membw_window_visible,
									 p->membw_window_floor,
									 BP_PROBECAL_VISIBLE_MIN));
			bp_json_w_end_object(w);
		}
		bp_json_w_end_object(w);
	}
	if (p->psi_valid) {
		bp_json_w_key(w, "pressure");
		write_psi(w, p->psi_some_us, p->psi_full_us, s->duration_s);
	}
	if (p->llc_bytes) {
		bp_json_w_kv_uint64(w, "llc_bytes", p->llc_bytes);
		bp_json_w_kv_string(w, "llc_source", p->llc_source);
	}
	bp_export_json_chains(w, s);
	bp_json_w_end_object(w);
}

/* a byte count that may be "none" (UINT64_MAX): null then */
static void kv_bytes(struct bp_json_w *w, const char *key, uint64_t v)
{
	if (v == UINT64_MAX) {
		bp_json_w_key(w, key);
		bp_json_w_null_val(w);
	} else {
		bp_json_w_kv_uint64(w, key, v);
	}
}

static void write_cpu_limit(struct bp_json_w *w, const struct bp_cgroup *c)
{
	double win = c->watched_ns / 1e9;

	bp_json_w_begin_object(w);
	bp_json_w_kv_string(w, "cgroup", c->path);
	bp_json_w_kv_string(w, "tree", bp_cgroup_tree_name(c->tree));
	bp_json_w_kv_string(w, "quota_cgroup", c->quota_at ? c->quota_at : "");
	if (c->quota_us >= 0 && c->period_us) {
		bp_json_w_kv_double(w, "quota_cpus", (double)c->quota_us / c->period_us);
		bp_json_w_kv_int64(w, "quota_us", c->quota_us);
		bp_json_w_kv_uint64(w, "period_us", c->period_us);
	}
	bp_json_w_kv_uint64(w, "periods", c->nr_periods);
	bp_json_w_kv_uint64(w, "throttled_periods", c->nr_throttled);
	bp_json_w_kv_double(w, "throttled_s", c->throttled_ns / 1e9);
	bp_json_w_kv_double(w, "throttled_share", win > 0 ? c->throttled_ns / 1e9 / win : 0);
	bp_json_w_kv_double(w, "watched_s", win);
	bp_json_w_end_object(w);
}

static void write_mem_limit(struct bp_json_w *w, const struct bp_cgroup *c)
{
	bp_json_w_begin_object(w);
	bp_json_w_kv_string(w, "cgroup", c->path);
	bp_json_w_kv_string(w, "tree", bp_cgroup_tree_name(c->tree));
	bp_json_w_kv_string(w, "limit_cgroup", c->mem_at ? c->mem_at : "");
	kv_bytes(w, "max_bytes", c->mem_max);
	kv_bytes(w, "high_bytes", c->mem_high);
	bp_json_w_kv_uint64(w, "high_events", c->mem_high_events);
	bp_json_w_kv_uint64(w, "max_events", c->mem_max_events);
	bp_json_w_kv_uint64(w, "oom", c->mem_oom);
	bp_json_w_kv_uint64(w, "oom_kill", c->mem_oom_kill);
	bp_json_w_end_object(w);
}

/* stall time as shares of the time covered, and in seconds */
static void write_psi(struct bp_json_w *w, const uint64_t *some, const uint64_t *full,
		      double covered_s)
{
	static const char *const res[BP_PSI_RES] = { "cpu", "memory", "io" };
	int k;

	bp_json_w_begin_object(w);
	for (k = 0; k < BP_PSI_RES; k++) {
		bp_json_w_key(w, res[k]);
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "some", covered_s > 0 ? some[k] / 1e6 / covered_s : 0);
		bp_json_w_kv_double(w, "full", covered_s > 0 ? full[k] / 1e6 / covered_s : 0);
		bp_json_w_kv_double(w, "some_s", some[k] / 1e6);
		bp_json_w_kv_double(w, "full_s", full[k] / 1e6);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_object(w);
}

/* a cgroup's accounting: what of it is known */
static void write_limits(struct bp_json_w *w, const struct bp_cgroup *cpu,
			 const struct bp_cgroup *mem, const struct bp_cgroup *psi)
{
	bp_json_w_begin_object(w);
	if (cpu && cpu->cpu_valid) {
		bp_json_w_key(w, "cpu");
		write_cpu_limit(w, cpu);
	}
	if (mem && mem->mem_valid) {
		bp_json_w_key(w, "memory");
		write_mem_limit(w, mem);
	}
	if (psi && psi->psi_valid) {
		bp_json_w_key(w, "pressure");
		write_psi(w, psi->psi_some_us, psi->psi_full_us, psi->watched_ns / 1e9);
	}
	bp_json_w_end_object(w);
}

/* who the process is and where it runs; keys there even when unknown */
static void write_ids(struct bp_json_w *w, const struct bp_profile *p,
		      const struct bp_proc_summary *ps)
{
	const struct bp_proc *proc = ps->proc;
	char uid[16];

	snprintf(uid, sizeof(uid), "%u", proc->uid);
	bp_json_w_kv_int64(w, "uid", proc->have_ids ? (int64_t)proc->uid : -1);
	bp_json_w_kv_string(w, "user", !proc->have_ids ? "" : proc->user ? proc->user : uid);
	bp_json_w_kv_string(w, "cgroup", proc->cgroup ? proc->cgroup : "");
	bp_json_w_kv_string(w, "unit", proc->unit ? proc->unit : "");
	if ((proc->cg_cpu && proc->cg_cpu_tree != BP_CGROUP_V2) ||
	    (proc->cg_memory && proc->cg_memory_tree != BP_CGROUP_V2)) {
		bp_json_w_key(w, "cgroup_v1");
		bp_json_w_begin_object(w);
		if (proc->cg_cpu && proc->cg_cpu_tree != BP_CGROUP_V2)
			bp_json_w_kv_string(w, "cpu", proc->cg_cpu);
		if (proc->cg_memory && proc->cg_memory_tree != BP_CGROUP_V2)
			bp_json_w_kv_string(w, "memory", proc->cg_memory);
		bp_json_w_end_object(w);
	}
	if (proc->have_ids) {
		bp_json_w_key(w, "limits");
		write_limits(w, bp_proc_cpu_cgroup(p, proc), bp_proc_mem_cgroup(p, proc),
			     bp_proc_psi_cgroup(p, proc));
	}
	bp_json_w_kv_double(w, "throttled_s", ps->throttled_s);
}

static void write_spread(struct bp_json_w *w, const char *key, const struct bp_spread *sp)
{
	bp_json_w_key(w, key);
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "median", sp->median);
	bp_json_w_kv_double(w, "min", sp->min);
	bp_json_w_kv_double(w, "max", sp->max);
	bp_json_w_kv_double(w, "spread", sp->spread);
	bp_json_w_end_object(w);
}

/* the runs of the COMMAND (record -r N): each, and their medians and spread */
static void write_runs(struct bp_json_w *w, const struct bp_profile *p)
{
	struct bp_runs_summary rs;
	uint32_t i;

	if (bp_runs_summarize(p, &rs))
		return;
	bp_json_w_key(w, "runs");
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "count", rs.n);
	bp_json_w_kv_uint64(w, "failed", rs.failed);
	bp_json_w_kv_bool(w, "noisy", rs.noisy);
	write_spread(w, "wall_s", &rs.wall);
	write_spread(w, "cpu_s", &rs.cpu);
	write_spread(w, "wall_excl_runqueue_s", &rs.ready);
	bp_json_w_key(w, "each");
	bp_json_w_begin_array(w);
	for (i = 0; i < p->nr_runs; i++) {
		const struct bp_run *r = &p->runs[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_int64(w, "pid", r->pid);
		bp_json_w_kv_int64(w, "status", r->status);
		bp_json_w_kv_double(w, "wall_s", r->wall_s);
		bp_json_w_kv_double(w, "cpu_s", r->cpu_s);
		bp_json_w_kv_double(w, "runqueue_s", r->runqueue_s);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_end_object(w);
}

static void write_wakers(struct bp_json_w *w, const struct bp_proc_waits *pw)
{
	uint32_t i;

	bp_json_w_key(w, "woken_by");
	bp_json_w_begin_array(w);
	for (i = 0; pw && i < pw->nr_wakers; i++) {
		const struct bp_waker *k = &pw->wakers[i];

		bp_json_w_begin_object(w);
		/* an interrupt on an idle CPU, or one that names no task (bpf/offcpu.bpf.c) */
		if (k->ctx == BP_WCTX_IDLE || !k->pid) {
			bp_json_w_kv_string(w, "pid", NULL);
			bp_json_w_kv_string(w, "tid", NULL);
			bp_json_w_kv_string(w, "comm", "");
		} else {
			bp_json_w_kv_int64(w, "pid", k->pid);
			bp_json_w_kv_int64(w, "tid", k->tid);
			bp_json_w_kv_string(w, "comm", k->comm);
		}
		bp_json_w_kv_string(w, "context", bp_wctx_name(k->ctx));
		bp_json_w_kv_string(w, "class", bp_tstate_name(k->state));
		bp_json_w_kv_string(w, "direction", bp_dir_name(k->dir));
		bp_json_w_kv_double(w, "seconds", k->s);
		bp_json_w_kv_uint64(w, "waits", k->count);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

static void write_network(struct bp_json_w *w, const struct bp_proc_summary *ps,
			  const struct bp_proc_waits *pw)
{
	uint32_t i;

	if (!pw || (!pw->nr_peers && ps->off_s[BP_KIND_NET] <= 0))
		return;
	bp_json_w_key(w, "network");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "wait_s", ps->net_work_s);
	bp_json_w_kv_double(w, "server_wait_s", ps->net_idle_s);
	bp_json_w_kv_uint64(w, "round_trips", pw->net_waits);
	bp_json_w_kv_double(w, "p50_ms", pw->net_p50_ms);
	bp_json_w_kv_double(w, "p99_ms", pw->net_p99_ms);
	bp_json_w_kv_uint64(w, "rx_bytes", pw->net_rx);
	bp_json_w_kv_uint64(w, "tx_bytes", pw->net_tx);
	bp_json_w_key(w, "peers");
	bp_json_w_begin_array(w);
	for (i = 0; i < pw->nr_peers; i++) {
		const struct bp_peer *pe = &pw->peers[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "peer", pe->name);
		bp_json_w_kv_string(w, "side", bp_side_name(pe->side));
		bp_json_w_kv_string(w, "proto", pe->proto == 6 ? "tcp" : pe->proto == 17 ? "udp" :
						 "other");
		bp_json_w_kv_double(w, "wait_s", pe->wait_s);
		bp_json_w_kv_uint64(w, "waits", pe->waits);
		bp_json_w_kv_double(w, "p50_ms", pe->p50_ms);
		bp_json_w_kv_double(w, "p99_ms", pe->p99_ms);
		bp_json_w_kv_uint64(w, "rx_bytes", pe->rx_bytes);
		bp_json_w_kv_uint64(w, "tx_bytes", pe->tx_bytes);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	if (pw->peers_total > pw->nr_peers)
		bp_json_w_kv_uint64(w, "peers_omitted", pw->peers_total - pw->nr_peers);
	bp_json_w_end_object(w);
}

static void write_pipelines(struct bp_json_w *w, const struct bp_summary *s)
{
	const struct bp_pipelines *pl = s->waits;
	uint32_t i, j;

	bp_json_w_key(w, "pipelines");
	bp_json_w_begin_array(w);
	for (i = 0; pl && i < pl->nr; i++) {
		const struct bp_pipeline *pp = &pl->pl[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "name", pp->name);
		bp_json_w_key(w, "stages");
		bp_json_w_begin_array(w);
		for (j = 0; j < pp->nr_stages; j++)
			bp_json_w_int64(w, pp->stages[j].pid);
		bp_json_w_end_array(w);
		bp_json_w_kv_int64(w, "bottleneck", pp->stages[pp->bottleneck].pid);
		bp_json_w_key(w, "detail");
		bp_json_w_begin_array(w);
		for (j = 0; j < pp->nr_stages; j++) {
			const struct bp_stage *st = &pp->stages[j];
			const struct bp_proc_summary *ps = &s->procs[st->proc];

			bp_json_w_begin_object(w);
			bp_json_w_kv_int64(w, "pid", st->pid);
			bp_json_w_kv_string(w, "comm", ps->proc->comm);
			bp_json_w_kv_uint64(w, "read_bytes", st->rbytes);
			bp_json_w_kv_uint64(w, "written_bytes", st->wbytes);
			bp_json_w_kv_double(w, "input_wait_s", st->in_wait_s);
			bp_json_w_kv_double(w, "output_wait_s", st->out_wait_s);
			if (j > 0)
				bp_json_w_kv_int64(w, "input", pp->stages[j - 1].pid);
			else
				bp_json_w_kv_string(w, "input", NULL);
			if (j + 1 < pp->nr_stages)
				bp_json_w_kv_int64(w, "output", pp->stages[j + 1].pid);
			else
				bp_json_w_kv_string(w, "output", NULL);
			bp_json_w_kv_string(w, "class", ps->verdict ? bp_class_name(ps->verdict->cls) :
							     "unknown");
			bp_json_w_end_object(w);
		}
		bp_json_w_end_array(w);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

static void write_proc(struct bp_json_w *w, const struct bp_profile *p,
		       const struct bp_summary *s, const struct bp_proc_summary *ps)
{
	const struct bp_proc_waits *pw = s->waits && (uint32_t)(ps - s->procs) < s->waits->nr_waits ?
					 &s->waits->waits[ps - s->procs] : NULL;
	const struct bp_proc *proc = ps->proc;

	bp_json_w_begin_object(w);
	bp_json_w_kv_int64(w, "pid", proc->pid);
	bp_json_w_kv_int64(w, "ppid", proc->ppid);
	bp_json_w_kv_string(w, "comm", proc->comm[0] ? proc->comm : "[unknown]");
	bp_json_w_kv_string(w, "cmdline", proc->cmdline ? proc->cmdline : "");
	bp_json_w_kv_bool(w, "exited", proc->exited);
	write_ids(w, p, ps);
	bp_json_w_kv_double(w, "wall_s", ps->wall_s);
	bp_json_w_kv_double(w, "on_cpu_s", ps->on_cpu_s);
	bp_json_w_kv_double(w, "on_cpu_sampled_s", ps->on_cpu_sampled_s);
	bp_json_w_kv_double(w, "steal_s", ps->steal_s);
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
	if (proc->r_version) {
		bp_json_w_key(w, "r");
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "version", proc->r_version);
		/* false: R kept no srcrefs (docs/r.md) */
		bp_json_w_kv_bool(w, "lines", bp_r_has_lines(p, proc->pid));
		bp_json_w_end_object(w);
	}
	write_kinds(w, "off_cpu_s", ps->off_s);
	bp_json_w_key(w, "io");
	bp_export_json_proc_io(w, p, proc->pid, ps->off_s[BP_KIND_IO]);
	if (p->offcpu_enabled) {
		write_offcpu(w, ps);
		write_wakers(w, pw);
		write_network(w, ps, pw);
		bp_json_w_key(w, "syscall_bytes");
		bp_json_w_begin_object(w);
		bp_json_w_kv_uint64(w, "read", ps->rchar);
		bp_json_w_kv_uint64(w, "written", ps->wchar);
		bp_json_w_end_object(w);
	}
	write_syscalls(w, p, ps);
	write_own_code(w, p, ps);
	bp_json_w_key(w, "verdict");
	write_verdict(w, ps->verdict);
	bp_json_w_key(w, "hotspots");
	write_hotspots(w, p, ps->hot, ps->nr_hot);
	bp_json_w_key(w, "inclusive");
	write_hotspots(w, p, ps->incl, ps->nr_incl);
	bp_json_w_key(w, "functions");
	write_functions(w, p, ps);
	bp_json_w_end_object(w);
}

static void write_groups(struct bp_json_w *w, const struct bp_profile *p,
			 const struct bp_groups *g)
{
	uint32_t i, j;

	bp_json_w_kv_string(w, "group_by", bp_group_by_name(g->by));
	bp_json_w_key(w, "groups");
	bp_json_w_begin_array(w);
	for (i = 0; i < g->nr; i++) {
		const struct bp_group *gr = &g->g[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "name", gr->name);
		bp_json_w_kv_uint64(w, "processes", gr->nr_procs);
		bp_json_w_kv_uint64(w, "threads", gr->threads);
		bp_json_w_kv_double(w, "wall_s", gr->wall_s);
		bp_json_w_kv_double(w, "on_cpu_s", gr->on_cpu_s);
		bp_json_w_kv_uint64(w, "samples", gr->samples);
		write_kinds(w, "off_cpu_s", gr->off_s);
		bp_json_w_kv_double(w, "throttled_s", gr->throttled_s);
		bp_json_w_key(w, "io");
		bp_json_w_begin_object(w);
		bp_json_w_kv_uint64(w, "ops", gr->io_ops);
		bp_json_w_kv_uint64(w, "bytes", gr->io_bytes);
		bp_json_w_kv_double(w, "wait_s", gr->off_s[BP_KIND_IO]);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "busiest");
		bp_json_w_begin_array(w);
		for (j = 0; j < gr->nr_top; j++) {
			const struct bp_proc_summary *ps = gr->top[j];

			bp_json_w_begin_object(w);
			bp_json_w_kv_int64(w, "pid", ps->proc->pid);
			bp_json_w_kv_string(w, "comm", ps->proc->comm[0] ? ps->proc->comm :
									     "[unknown]");
			bp_json_w_kv_double(w, "on_cpu_s", ps->on_cpu_s);
			bp_json_w_kv_string(w, "class", ps->verdict ? bp_class_name(ps->verdict->cls) :
								      "unknown");
			bp_json_w_end_object(w);
		}
		bp_json_w_end_array(w);
		bp_json_w_key(w, "limits");
		write_limits(w, gr->cpu, gr->mem, gr->psi);
		bp_json_w_key(w, "verdict");
		write_verdict(w, gr->have_verdict ? &gr->verdict : NULL);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

static void write_cgroups(struct bp_json_w *w, const struct bp_profile *p)
{
	uint32_t i;

	bp_json_w_key(w, "cgroups");
	bp_json_w_begin_array(w);
	for (i = 0; i < p->nr_cgroups; i++) {
		const struct bp_cgroup *c = &p->cgroups[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "path", c->path);
		bp_json_w_kv_string(w, "tree", bp_cgroup_tree_name(c->tree));
		bp_json_w_kv_double(w, "watched_s", c->watched_ns / 1e9);
		bp_json_w_key(w, "limits");
		write_limits(w, c, c, c);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

int bp_export_json(const struct bp_profile *p, const struct bp_summary *s, bool pretty,
		   struct bp_buf *out)
{
	return bp_export_json_groups(p, s, NULL, pretty, out);
}

int bp_export_json_groups(const struct bp_profile *p, const struct bp_summary *s,
			  const struct bp_groups *g, bool pretty, struct bp_buf *out)
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
	if (p->via_agent)
		bp_json_w_kv_string(&w, "via", "agent");
	write_summary(&w, p, s);

	bp_json_w_key(&w, "system");
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "cpus", p->ncpus);
	bp_json_w_kv_bool(&w, "pmu", p->pmu);
	bp_json_w_kv_uint64(&w, "samples", s->samples);
	bp_json_w_kv_uint64(&w, "idle_samples", s->idle);
	bp_json_w_kv_double(&w, "busy", s->busy_frac);
	bp_json_w_end_object(&w);
	write_runs(&w, p);

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
		write_proc(&w, p, s, &s->procs[i]);
	}
	bp_json_w_end_array(&w);
	bp_json_w_kv_uint64(&w, "processes_quiet", quiet);
	write_pipelines(&w, s);
	bp_export_json_jobs(&w, s, write_verdict);
	if (g)
		write_groups(&w, p, g);
	write_cgroups(&w, p);
	/* the samples counted, and those a full CPU's slots made into kernel rows (oncpu.bpf.c) */
	bp_json_w_key(&w, "oncpu");
	bp_json_w_begin_object(&w);
	bp_json_w_kv_uint64(&w, "samples", p->stats.v[BP_STAT_COUNTED]);
	bp_json_w_kv_uint64(&w, "in_kernel_rows", p->stats.v[BP_STAT_ONCPU_SLOTS_FULL]);
	bp_json_w_end_object(&w);
	bp_json_w_key(&w, "offcpu");
	bp_json_w_begin_object(&w);
	bp_json_w_kv_bool(&w, "enabled", p->offcpu_enabled);
	bp_json_w_kv_uint64(&w, "switches", p->stats.v[BP_STAT_SWITCHES]);
	bp_json_w_kv_uint64(&w, "stacks_cached", p->stats.v[BP_STAT_STACKS_CACHED]);
	bp_json_w_end_object(&w);

	if (p->unwind.enabled) {
		bp_json_w_key(&w, "unwind");
		bp_json_w_begin_object(&w);
		bp_json_w_kv_uint64(&w, "budget_bytes", p->unwind.budget_bytes);
		bp_json_w_kv_uint64(&w, "used_bytes", p->unwind.used_bytes);
		bp_json_w_kv_uint64(&w, "process_bytes", p->unwind.procs_bytes);
		bp_json_w_kv_uint64(&w, "files", p->unwind.files);
		bp_json_w_kv_uint64(&w, "rows", p->unwind.rows);
		bp_json_w_kv_uint64(&w, "files_over_budget", p->uw_tables_over_budget);
		bp_json_w_kv_uint64(&w, "stacks_unwound", p->stats.v[BP_STAT_UW_STACKS]);
		/* misses asked again because new code was mapped after one (unwind.bpf.h) */
		bp_json_w_kv_uint64(&w, "new_code_misses", p->stats.v[BP_STAT_UW_REMISS]);
		/* frames walked by their file's table before the list had them */
		bp_json_w_kv_uint64(&w, "frames_by_file", p->stats.v[BP_STAT_UW_BY_FILE]);
		bp_json_w_end_object(&w);
	}

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
