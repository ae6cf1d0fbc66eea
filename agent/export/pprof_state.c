// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof's own state in a saved profile (docs/pprof.md, "The state
 * field"): everything of struct bp_profile that profile.proto has no place
 * for, as one JSON document in a field of its own, written and read back.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/waits.h"
#include "util/hex.h"
#include "util/json.h"
#include "export/pprof.h"
#include "export/pprof_proto.h"
#include "util/utf8.h"

/* ================================================================== write */

static bool utf8_valid(const unsigned char *s)
{
	size_t n;

	for (; *s; s += n) {
		n = bp_utf8_seq(s, SIZE_MAX, NULL);
		if (!n)
			return false;
	}
	return true;
}

/*
 * Strings are exact bytes (comms and command lines need not be UTF-8), but
 * the JSON writer replaces invalid UTF-8: those go as {"hex": "..."}. The
 * digits pile up in hex, never reset, so that its sticky error is checked
 * once with the document's.
 */
static void put_str(struct bp_json_w *j, struct bp_buf *hex, const char *s)
{
	static const char digits[] = "0123456789abcdef";
	size_t i, start = hex->len;

	if (!s || utf8_valid((const unsigned char *)s)) {
		bp_json_w_string(j, s);
		return;
	}
	for (i = 0; s[i]; i++) {
		bp_buf_putc(hex, digits[(unsigned char)s[i] >> 4]);
		bp_buf_putc(hex, digits[(unsigned char)s[i] & 15]);
	}
	bp_json_w_begin_object(j);
	bp_json_w_key(j, "hex");
	if (hex->err)
		bp_json_w_null_val(j);
	else
		bp_json_w_string_n(j, hex->data + start, hex->len - start);
	bp_json_w_end_object(j);
}

static void kv_str(struct bp_json_w *j, struct bp_buf *hex, const char *key, const char *s)
{
	bp_json_w_key(j, key);
	put_str(j, hex, s);
}

/* doubles exact; the non-finite ones (JSON has none) as strings */
static void kv_double(struct bp_json_w *j, const char *key, double v)
{
	if (isfinite(v))
		bp_json_w_kv_double(j, key, v);
	else
		bp_json_w_kv_string(j, key, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* an array of counters, without its trailing zeros */
static void kv_u64s(struct bp_json_w *j, const char *key, const uint64_t *v, size_t n)
{
	size_t i;

	while (n && !v[n - 1])
		n--;
	bp_json_w_key(j, key);
	bp_json_w_begin_array(j);
	for (i = 0; i < n; i++)
		bp_json_w_uint64(j, v[i]);
	bp_json_w_end_array(j);
}

/*
 * A process's and a thread's fields are written only when they are not
 * zero, false, empty or null: the reader takes a missing one as exactly
 * that (st_u64(), st_bool(), st_double(), st_u64s(), st_istr()), and most
 * of a window's processes are quiet ones whose fields nearly all are. Every
 * field written was 70% of the document, and the document most of what
 * the agent deflated at each window.
 */
static void nz_u64(struct bp_json_w *j, const char *key, uint64_t v)
{
	if (v)
		bp_json_w_kv_uint64(j, key, v);
}

static void nz_bool(struct bp_json_w *j, const char *key, bool v)
{
	if (v)
		bp_json_w_kv_bool(j, key, true);
}

static void nz_double(struct bp_json_w *j, const char *key, double v)
{
	if (v != 0)
		kv_double(j, key, v);
}

static void nz_u64s(struct bp_json_w *j, const char *key, const uint64_t *v, size_t n)
{
	while (n && !v[n - 1])
		n--;
	if (n)
		kv_u64s(j, key, v, n);
}

static void nz_str(struct bp_json_w *j, struct bp_buf *hex, const char *key, const char *s)
{
	if (s)
		kv_str(j, hex, key, s);
}

static void write_thread(struct bp_json_w *j, struct bp_buf *x, const struct bp_thread *t)
{
	bp_json_w_begin_object(j);
	bp_json_w_kv_uint64(j, "tid", t->tid);
	if (t->comm[0])
		kv_str(j, x, "comm", t->comm);
	nz_bool(j, "have_totals", t->have_totals);
	nz_bool(j, "exited", t->exited);
	nz_u64(j, "state", t->state);
	nz_u64(j, "start_ns", t->start_ns);
	nz_u64(j, "end_ns", t->end_ns);
	nz_u64(j, "oncpu_ns", t->oncpu_ns);
	nz_u64(j, "steal_ns", t->steal_ns);
	nz_u64(j, "switches", t->switches);
	nz_u64(j, "wakeups", t->wakeups);
	nz_u64(j, "wake_lat_ns", t->wake_lat_ns);
	nz_u64(j, "wake_lat_max", t->wake_lat_max);
	nz_u64s(j, "wake_hist", t->wake_hist, BP_HIST_SLOTS);
	nz_u64(j, "rchar", t->rchar);
	nz_u64(j, "wchar", t->wchar);
	nz_u64(j, "syscr", t->syscr);
	nz_u64(j, "syscw", t->syscw);
	nz_u64(j, "gil_ns", t->gil_ns);
	bp_json_w_end_object(j);
}

static void write_proc(struct bp_json_w *j, struct bp_buf *x, const struct bp_proc *pr)
{
	uint32_t i;

	bp_json_w_begin_object(j);
	bp_json_w_kv_uint64(j, "pid", pr->pid);
	nz_u64(j, "ppid", pr->ppid);
	if (pr->comm[0])
		kv_str(j, x, "comm", pr->comm);
	nz_str(j, x, "cmdline", pr->cmdline);
	nz_u64(j, "start_ns", pr->start_ns);
	nz_u64(j, "end_ns", pr->end_ns);
	nz_bool(j, "exited", pr->exited);
	nz_bool(j, "have_meta", pr->have_meta);
	nz_bool(j, "have_timeline", pr->have_timeline);
	nz_str(j, x, "r", pr->r_version);
	if (pr->python) {
		nz_str(j, x, "python", pr->python);
		nz_bool(j, "python_free_threaded", pr->python_free_threaded);
	}
	nz_u64s(j, "tl_ns", pr->tl_ns, BP_TS__MAX);
	nz_u64(j, "tl_idle_ns", pr->tl_idle_ns);
	nz_u64(j, "turn_ns", pr->turn_ns);
	nz_u64(j, "want_ns", pr->want_ns);
	nz_bool(j, "mem_valid", pr->mem_valid);
	nz_u64(j, "wss_probes", pr->wss_probes);
	nz_u64(j, "wss_max", pr->wss_max);
	nz_double(j, "wss_per_s", pr->wss_per_s);
	nz_u64(j, "rss", pr->rss);
	nz_u64(j, "minflt", pr->minflt);
	nz_u64(j, "majflt", pr->majflt);
	nz_double(j, "fault_window_s", pr->fault_window_s);
	nz_bool(j, "pmu_valid", pr->pmu_valid);
	nz_u64(j, "cycles", pr->cycles);
	nz_u64(j, "instructions", pr->instructions);
	nz_u64(j, "cache_misses", pr->cache_misses);
	nz_double(j, "pmu_running", pr->pmu_running);
	nz_double(j, "pmu_seconds", pr->pmu_seconds);
	nz_u64(j, "last_drain_samples", pr->last_drain_samples);
	nz_u64s(j, "net_side_ns", pr->net_side_ns, BP_SIDE__MAX);
	nz_u64s(j, "pipe_dir_ns", pr->pipe_dir_ns, BP_DIR__MAX);
	nz_u64s(j, "sys_nr", pr->sys_nr, BP_SYS_TOP);
	nz_u64s(j, "sys_samples", pr->sys_samples, BP_SYS_TOP);
	nz_u64(j, "sys_other", pr->sys_other);
	nz_bool(j, "traffic_valid", pr->traffic_valid);
	nz_bool(j, "traffic_floor", pr->traffic_floor);
	nz_double(j, "traffic_per_s", pr->traffic_per_s);
	nz_double(j, "traffic_per_cpu_s", pr->traffic_per_cpu_s);
	nz_double(j, "traffic_cpus", pr->traffic_cpus);
	if (pr->have_ids) {
		bp_json_w_kv_bool(j, "have_ids", true);
		nz_u64(j, "uid", pr->uid);
		nz_str(j, x, "user", pr->user);
		nz_str(j, x, "cgroup", pr->cgroup);
		nz_str(j, x, "unit", pr->unit);
		nz_str(j, x, "cg_v2", pr->cg_v2);
		nz_str(j, x, "cg_cpu", pr->cg_cpu);
		nz_str(j, x, "cg_memory", pr->cg_memory);
		nz_u64(j, "cg_cpu_tree", pr->cg_cpu_tree);
		nz_u64(j, "cg_memory_tree", pr->cg_memory_tree);
	}
	bp_json_w_key(j, "threads");
	bp_json_w_begin_array(j);
	for (i = 0; i < pr->nr_threads; i++)
		write_thread(j, x, &pr->threads[i]);
	bp_json_w_end_array(j);
	bp_json_w_end_object(j);
}

static void write_io_stats(struct bp_json_w *j, const struct bp_io_stats *st)
{
	bp_json_w_kv_uint64(j, "ops", st->ops);
	bp_json_w_kv_uint64(j, "bytes", st->bytes);
	bp_json_w_kv_uint64(j, "lat_ns", st->lat_ns);
	kv_u64s(j, "hist", st->hist, BP_HIST_SLOTS);
}

static void write_io(struct bp_json_w *j, struct bp_buf *x, const struct bp_profile *p)
{
	uint32_t i;
	int k;

	bp_json_w_key(j, "io_devs");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_io_devs; i++) {
		const struct bp_io_dev *d = &p->io_devs[i];

		bp_json_w_begin_object(j);
		bp_json_w_kv_uint64(j, "dev", d->dev);
		kv_str(j, x, "name", d->name);
		bp_json_w_kv_uint64(j, "busy_ns", d->busy_ns);
		bp_json_w_kv_uint64(j, "max_inflight", d->max_inflight);
		bp_json_w_key(j, "op");
		bp_json_w_begin_array(j);
		for (k = 0; k < BP_IO_OP__MAX; k++) {
			bp_json_w_begin_object(j);
			write_io_stats(j, &d->op[k]);
			bp_json_w_end_object(j);
		}
		bp_json_w_end_array(j);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);

	bp_json_w_key(j, "io_rows");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_io_rows; i++) {
		const struct bp_io_row *r = &p->io_rows[i];

		bp_json_w_begin_object(j);
		bp_json_w_kv_uint64(j, "dev", r->dev);
		bp_json_w_kv_uint64(j, "pid", r->pid);
		bp_json_w_kv_uint64(j, "op", r->op);
		bp_json_w_kv_bool(j, "kthread", r->kthread);
		kv_str(j, x, "comm", r->comm);
		write_io_stats(j, &r->st);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);
}

static void hex16(const uint8_t *b, char *out)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[32] = '\0';
}

static void write_waits(struct bp_json_w *j, struct bp_buf *x, const struct bp_profile *p)
{
	uint32_t i;

	bp_json_w_key(j, "wake_rows");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_wake_rows; i++) {
		const struct bp_wake_row *r = &p->wake_rows[i];

		bp_json_w_begin_object(j);
		bp_json_w_kv_uint64(j, "pid", r->pid);
		bp_json_w_kv_uint64(j, "waker_pid", r->waker_pid);
		bp_json_w_kv_uint64(j, "waker_tid", r->waker_tid);
		bp_json_w_kv_uint64(j, "state", r->state);
		bp_json_w_kv_uint64(j, "dir", r->dir);
		bp_json_w_kv_uint64(j, "ctx", r->ctx);
		kv_str(j, x, "comm", r->comm);
		bp_json_w_kv_uint64(j, "ns", r->ns);
		bp_json_w_kv_uint64(j, "count", r->count);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);
	bp_json_w_key(j, "net_rows");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_net_rows; i++) {
		const struct bp_net_row *r = &p->net_rows[i];
		char addr[33];

		hex16(r->addr, addr);
		bp_json_w_begin_object(j);
		bp_json_w_kv_uint64(j, "pid", r->pid);
		bp_json_w_kv_uint64(j, "family", r->family);
		bp_json_w_kv_uint64(j, "port", r->port);
		bp_json_w_kv_uint64(j, "lport", r->lport);
		bp_json_w_kv_uint64(j, "proto", r->proto);
		bp_json_w_kv_uint64(j, "side", r->side);
		bp_json_w_kv_string(j, "addr", addr);
		bp_json_w_kv_uint64(j, "wait_ns", r->wait_ns);
		bp_json_w_kv_uint64(j, "waits", r->waits);
		bp_json_w_kv_uint64(j, "rx_bytes", r->rx_bytes);
		bp_json_w_kv_uint64(j, "tx_bytes", r->tx_bytes);
		kv_u64s(j, "hist", r->hist, BP_FHIST_SLOTS);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);
}

static void write_runs(struct bp_json_w *j, const struct bp_profile *p)
{
	uint32_t i;

	if (!p->nr_runs)
		return;
	bp_json_w_key(j, "runs");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_runs; i++) {
		const struct bp_run *r = &p->runs[i];

		bp_json_w_begin_object(j);
		bp_json_w_kv_uint64(j, "pid", r->pid);
		bp_json_w_kv_int64(j, "status", r->status);
		kv_double(j, "wall_s", r->wall_s);
		kv_double(j, "cpu_s", r->cpu_s);
		kv_double(j, "runqueue_s", r->runqueue_s);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);
}

/* an unsigned that may be UINT64_MAX ("none"), which JSON numbers lose: as -1 */
static void kv_u64_or_none(struct bp_json_w *j, const char *key, uint64_t v)
{
	if (v == UINT64_MAX)
		bp_json_w_kv_int64(j, key, -1);
	else
		bp_json_w_kv_uint64(j, key, v);
}

static void write_cgroups(struct bp_json_w *j, struct bp_buf *x, const struct bp_profile *p)
{
	uint32_t i;

	if (p->psi_valid) {
		kv_u64s(j, "psi_some_us", p->psi_some_us, BP_PSI_RES);
		kv_u64s(j, "psi_full_us", p->psi_full_us, BP_PSI_RES);
		bp_json_w_kv_bool(j, "psi_valid", true);
	}
	bp_json_w_key(j, "cgroups");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_cgroups; i++) {
		const struct bp_cgroup *c = &p->cgroups[i];

		bp_json_w_begin_object(j);
		kv_str(j, x, "path", c->path);
		bp_json_w_kv_uint64(j, "tree", c->tree);
		bp_json_w_kv_uint64(j, "watched_ns", c->watched_ns);
		bp_json_w_kv_bool(j, "cpu_valid", c->cpu_valid);
		kv_str(j, x, "quota_at", c->quota_at);
		bp_json_w_kv_int64(j, "quota_us", c->quota_us);
		bp_json_w_kv_uint64(j, "period_us", c->period_us);
		bp_json_w_kv_uint64(j, "nr_periods", c->nr_periods);
		bp_json_w_kv_uint64(j, "nr_throttled", c->nr_throttled);
		bp_json_w_kv_uint64(j, "throttled_ns", c->throttled_ns);
		bp_json_w_kv_bool(j, "psi_valid", c->psi_valid);
		kv_u64s(j, "psi_some_us", c->psi_some_us, BP_PSI_RES);
		kv_u64s(j, "psi_full_us", c->psi_full_us, BP_PSI_RES);
		bp_json_w_kv_bool(j, "mem_valid", c->mem_valid);
		kv_str(j, x, "mem_at", c->mem_at);
		kv_u64_or_none(j, "mem_max", c->mem_max);
		kv_u64_or_none(j, "mem_high", c->mem_high);
		bp_json_w_kv_uint64(j, "mem_high_events", c->mem_high_events);
		bp_json_w_kv_uint64(j, "mem_max_events", c->mem_max_events);
		bp_json_w_kv_uint64(j, "mem_oom", c->mem_oom);
		bp_json_w_kv_uint64(j, "mem_oom_kill", c->mem_oom_kill);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);
}

/*
 * Stacks are rebuilt from the samples in sample order. That gives back the
 * same stack ids when every stack first appears in id order, which is how
 * recording creates them; otherwise the stacks travel in the state too.
 */
static int stacks_in_sample_order(const struct bp_profile *p, bool *in_order)
{
	uint8_t *seen = calloc(p->nr_stacks + 1, 1);
	uint32_t i, next = 0;

	if (!seen)
		return -ENOMEM;
	*in_order = true;
	for (i = 0; i < p->nr_samples && *in_order; i++) {
		uint32_t s = p->samples[i].stack;

		if (seen[s])
			continue;
		seen[s] = 1;
		if (s != next++)
			*in_order = false;
	}
	if (next != p->nr_stacks)
		*in_order = false;
	free(seen);
	return 0;
}

int bp_pprof_state_write(const struct bp_profile *p, const struct bp_pprof_map *maps,
			 uint32_t nr_maps, struct bp_buf *out)
{
	struct bp_buf hex = BP_BUF_INIT;
	uint64_t stats[BP_STAT__MAX];
	struct bp_json_w j;
	bool in_order;
	uint32_t i, k, nr;
	int err;

	err = stacks_in_sample_order(p, &in_order);
	if (err)
		return err;
	bp_buf_puts(out, STATE_PREFIX);
	bp_json_w_init(&j, out, false);
	bp_json_w_begin_object(&j);
	bp_json_w_kv_uint64(&j, "start_ns", p->start_ns);
	bp_json_w_kv_uint64(&j, "end_ns", p->end_ns);
	bp_json_w_kv_int64(&j, "start_unix_ns", p->start_unix_ns);
	bp_json_w_kv_int64(&j, "hz", p->hz);
	bp_json_w_kv_int64(&j, "ncpus", p->ncpus);
	bp_json_w_kv_bool(&j, "pmu", p->pmu);
	kv_str(&j, &hex, "event", p->event);
	bp_json_w_kv_bool(&j, "system_wide", p->system_wide);
	bp_json_w_kv_bool(&j, "offcpu_enabled", p->offcpu_enabled);
	kv_double(&j, "machine_busy", p->machine_busy);
	bp_json_w_kv_uint64(&j, "llc_bytes", p->llc_bytes);
	kv_str(&j, &hex, "llc_source", p->llc_source);
	/* __u64 is not uint64_t to the compiler: copy */
	for (i = 0; i < BP_STAT__MAX; i++)
		stats[i] = p->stats.v[i];
	kv_u64s(&j, "stats", stats, BP_STAT__MAX);
	bp_json_w_kv_uint64(&j, "user_stacks_cut", p->user_stacks_cut);
	bp_json_w_kv_uint64(&j, "io_done_unseen", p->io_done_unseen);
	bp_json_w_kv_bool(&j, "io_enabled", p->io_enabled);
	bp_json_w_kv_bool(&j, "membw_valid", p->membw_valid);
	kv_double(&j, "membw_1_gbs", p->membw_1_gbs);
	kv_double(&j, "membw_n_gbs", p->membw_n_gbs);
	bp_json_w_kv_uint64(&j, "membw_threads", p->membw_threads);
	kv_str(&j, &hex, "membw_source", p->membw_source);
	bp_json_w_kv_uint64(&j, "membw_cache_bytes", p->membw_cache_bytes);
	bp_json_w_kv_bool(&j, "membw_window", p->membw_window);
	bp_json_w_kv_int64(&j, "membw_window_err", p->membw_window_err);
	bp_json_w_kv_bool(&j, "membw_window_floor", p->membw_window_floor);
	kv_double(&j, "membw_window_stream_gbs", p->membw_window_stream_gbs);
	kv_double(&j, "membw_window_seen_gbs", p->membw_window_seen_gbs);
	kv_double(&j, "membw_window_visible", p->membw_window_visible);
	bp_json_w_kv_uint64(&j, "uw_tables_over_budget", p->uw_tables_over_budget);
	if (p->unwind.enabled) {
		bp_json_w_kv_uint64(&j, "unwind_budget_bytes", p->unwind.budget_bytes);
		bp_json_w_kv_uint64(&j, "unwind_used_bytes", p->unwind.used_bytes);
		bp_json_w_kv_uint64(&j, "unwind_procs_bytes", p->unwind.procs_bytes);
		bp_json_w_kv_uint64(&j, "unwind_files", p->unwind.files);
		bp_json_w_kv_uint64(&j, "unwind_rows", p->unwind.rows);
	}

	/* modules that are not the base name of their mapping's path */
	bp_json_w_key(&j, "modules");
	bp_json_w_begin_array(&j);
	for (i = 0; i < nr_maps; i++) {
		const struct bp_pprof_map *m = &maps[i];

		if (!m->path || !m->path[0] || !strcmp(m->module, base_name(m->path)))
			continue;
		bp_json_w_begin_array(&j);
		bp_json_w_uint64(&j, i + 1);
		put_str(&j, &hex, m->module);
		bp_json_w_end_array(&j);
	}
	bp_json_w_end_array(&j);

	if (!in_order) {
		bp_json_w_key(&j, "stacks");
		bp_json_w_begin_array(&j);
		for (i = 0; i < p->nr_stacks; i++) {
			const uint32_t *fr = bp_profile__stack_frames(p, i, &nr);

			bp_json_w_begin_array(&j);
			for (k = 0; k < nr; k++)
				bp_json_w_uint64(&j, fr[k]);
			bp_json_w_end_array(&j);
		}
		bp_json_w_end_array(&j);
	}

	bp_json_w_key(&j, "procs");
	bp_json_w_begin_array(&j);
	for (i = 0; i < p->nr_procs; i++)
		write_proc(&j, &hex, p->procs[i]);
	bp_json_w_end_array(&j);
	write_io(&j, &hex, p);
	write_waits(&j, &hex, p);
	write_runs(&j, p);
	write_cgroups(&j, &hex, p);
	bp_json_w_end_object(&j);
	err = bp_json_w_finish(&j);
	if (!err)
		err = hex.err;
	bp_buf_free(&hex);
	return err;
}

/* =================================================================== read */

/* reads the state's values; the first bad one fails the whole read */
struct st {
	struct bp_pprof_err *e;
	struct bp_profile *p;
	const struct bp_json *root;
	int err;
	const char *bad;
};

static void st_fail(struct st *s, const char *key, int err)
{
	if (!s->err) {
		s->err = err;
		s->bad = key;
	}
}

static uint64_t st_u64(struct st *s, const struct bp_json *o, const char *key)
{
	const struct bp_json *v = bp_json_get(o, key);
	uint64_t x = 0;

	if (v && bp_json_uint(v, &x))
		st_fail(s, key, -EINVAL);
	return x;
}

static uint32_t st_u32(struct st *s, const struct bp_json *o, const char *key)
{
	uint64_t x = st_u64(s, o, key);

	if (x > UINT32_MAX) {
		st_fail(s, key, -EINVAL);
		return 0;
	}
	return x;
}

static int64_t st_i64(struct st *s, const struct bp_json *o, const char *key)
{
	const struct bp_json *v = bp_json_get(o, key);
	int64_t x = 0;

	if (v && bp_json_int(v, &x))
		st_fail(s, key, -EINVAL);
	return x;
}

static int st_int(struct st *s, const struct bp_json *o, const char *key)
{
	int64_t x = st_i64(s, o, key);

	if (x < INT32_MIN || x > INT32_MAX) {
		st_fail(s, key, -EINVAL);
		return 0;
	}
	return x;
}

static bool st_bool(struct st *s, const struct bp_json *o, const char *key)
{
	const struct bp_json *v = bp_json_get(o, key);
	int b;

	if (!v)
		return false;
	b = bp_json_bool(v);
	if (b < 0)
		st_fail(s, key, -EINVAL);
	return b > 0;
}

static double st_double(struct st *s, const struct bp_json *o, const char *key, double dflt)
{
	const struct bp_json *v = bp_json_get(o, key);
	const char *t;

	switch (bp_json_type(v)) {
	case BP_JSON_NONE:
		return dflt;
	case BP_JSON_NUMBER:
		return bp_json_num(v);
	case BP_JSON_STRING:
		t = bp_json_str(v);
		if (!strcmp(t, "nan"))
			return NAN;
		if (!strcmp(t, "inf"))
			return INFINITY;
		if (!strcmp(t, "-inf"))
			return -INFINITY;
		/* fall through */
	default:
		st_fail(s, key, -EINVAL);
		return dflt;
	}
}

/* a string written by put_str(), malloc()ed; NULL for null or missing */
static char *st_str_val(struct st *s, const struct bp_json *v, const char *key)
{
	const char *hex;
	size_t i, n;
	char *out;

	switch (bp_json_type(v)) {
	case BP_JSON_NONE:
	case BP_JSON_NULL:
		return NULL;
	case BP_JSON_STRING:
		out = strdup(bp_json_str(v));
		if (!out)
			st_fail(s, key, -ENOMEM);
		return out;
	case BP_JSON_OBJECT:
		hex = bp_json_str(bp_json_get(v, "hex"));
		if (!hex || (n = strlen(hex)) % 2)
			break;
		out = malloc(n / 2 + 1);
		if (!out) {
			st_fail(s, key, -ENOMEM);
			return NULL;
		}
		for (i = 0; i < n / 2; i++) {
			int hi = bp_hexval(hex[2 * i]), lo = bp_hexval(hex[2 * i + 1]);

			if (hi < 0 || lo < 0 || (!hi && !lo)) {
				free(out);
				st_fail(s, key, -EINVAL);
				return NULL;
			}
			out[i] = hi << 4 | lo;
		}
		out[n / 2] = '\0';
		return out;
	default:
		break;
	}
	st_fail(s, key, -EINVAL);
	return NULL;
}

/* into a fixed array (comm, device name), cut to fit */
static void st_chars(struct st *s, const struct bp_json *o, const char *key, char *dst, size_t len)
{
	char *v = st_str_val(s, bp_json_get(o, key), key);

	snprintf(dst, len, "%s", v ? v : "");
	free(v);
}

/* interned in the profile; NULL for null */
static const char *st_istr(struct st *s, const struct bp_json *o, const char *key)
{
	char *v = st_str_val(s, bp_json_get(o, key), key);
	const char *in;

	if (!v)
		return NULL;
	in = bp_profile__intern(s->p, v);
	free(v);
	if (!in)
		st_fail(s, key, -ENOMEM);
	return in;
}

static void st_u64s(struct st *s, const struct bp_json *o, const char *key, uint64_t *dst,
		    size_t n)
{
	const struct bp_json *a = bp_json_get(o, key);
	size_t i, len = bp_json_len(a);

	memset(dst, 0, n * sizeof(*dst));
	if (!a)
		return;
	if (bp_json_type(a) != BP_JSON_ARRAY || len > n) {
		st_fail(s, key, -EINVAL);
		return;
	}
	for (i = 0; i < len; i++)
		if (bp_json_uint(bp_json_at(a, i), &dst[i]))
			st_fail(s, key, -EINVAL);
}

static int st_result(struct st *s)
{
	if (!s->err)
		return 0;
	if (s->err == -ENOMEM)
		return bp_pprof_nomem(s->e);
	return bp_pprof_fail(s->e, "bad boundprof state: \"%s\"", s->bad);
}

/* how many processes, threads and IO records the state asks for, before any is made */
static int state_counts(const struct bp_json *o, struct bp_pprof_err *e)
{
	const struct bp_json *procs = bp_json_get(o, "procs");
	size_t i, n, threads = 0;

	if (bp_json_len(procs) > BP_PPROF_MAX_PROCS)
		return bp_pprof_toobig(e, "boundprof state: more than %u processes",
				       BP_PPROF_MAX_PROCS);
	for (i = 0; i < bp_json_len(procs); i++) {
		n = bp_json_len(bp_json_get(bp_json_at(procs, i), "threads"));
		threads += n;
		if (n > BP_PPROF_MAX_PROC_THREADS || threads > BP_PPROF_MAX_THREADS)
			return bp_pprof_toobig(e, "boundprof state: more than %u threads in a "
					       "process or %u in all", BP_PPROF_MAX_PROC_THREADS,
					       BP_PPROF_MAX_THREADS);
	}
	if (bp_json_len(bp_json_get(o, "io_devs")) > BP_PPROF_MAX_IO_DEVS)
		return bp_pprof_toobig(e, "boundprof state: more than %u block devices",
				       BP_PPROF_MAX_IO_DEVS);
	if (bp_json_len(bp_json_get(o, "cgroups")) > BP_PPROF_MAX_CGROUPS)
		return bp_pprof_toobig(e, "boundprof state: more than %u cgroups",
				       BP_PPROF_MAX_CGROUPS);
	if (bp_json_len(bp_json_get(o, "io_rows")) > BP_PPROF_MAX_IO_ROWS)
		return bp_pprof_toobig(e, "boundprof state: more than %u IO rows",
				       BP_PPROF_MAX_IO_ROWS);
	if (bp_json_len(bp_json_get(o, "wake_rows")) > BP_PPROF_MAX_WAKE_ROWS)
		return bp_pprof_toobig(e, "boundprof state: more than %u waker rows",
				       BP_PPROF_MAX_WAKE_ROWS);
	if (bp_json_len(bp_json_get(o, "net_rows")) > BP_PPROF_MAX_NET_ROWS)
		return bp_pprof_toobig(e, "boundprof state: more than %u network rows",
				       BP_PPROF_MAX_NET_ROWS);
	if (bp_json_len(bp_json_get(o, "runs")) > BP_PPROF_MAX_RUNS)
		return bp_pprof_toobig(e, "boundprof state: more than %u runs", BP_PPROF_MAX_RUNS);
	return 0;
}

/* by mapping id, and for the same id in document order: the first one counts */
static int cmp_module(const void *a, const void *b)
{
	const struct bp_pprof_module *x = a, *y = b;

	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int bp_pprof_state_parse(struct bp_pprof_state *ps, const char *text, size_t len,
			 struct bp_pprof_err *e)
{
	const struct bp_json *mods;
	struct st s = { .e = e };
	char jerr[160] = "";
	size_t i;
	int err;

	if (len > BP_PPROF_MAX_STATE)
		return bp_pprof_toobig(e, "boundprof state larger than %u MiB",
				       BP_PPROF_MAX_STATE >> 20);
	ps->json = bp_json_parse(text, len, jerr, sizeof(jerr));
	if (!ps->json)
		return errno == ENOMEM ? bp_pprof_nomem(e) :
					 bp_pprof_fail(e, "bad boundprof state: %s", jerr);
	if (bp_json_type(ps->json) != BP_JSON_OBJECT)
		return bp_pprof_fail(e, "bad boundprof state: not an object");
	err = state_counts(ps->json, e);
	if (err)
		return err;
	mods = bp_json_get(ps->json, "modules");
	if (mods && bp_json_type(mods) != BP_JSON_ARRAY)
		return bp_pprof_fail(e, "bad boundprof state: \"modules\"");
	ps->modules = calloc(bp_json_len(mods) + 1, sizeof(*ps->modules));
	if (!ps->modules)
		return bp_pprof_nomem(e);
	for (i = 0; i < bp_json_len(mods); i++) {
		const struct bp_json *m = bp_json_at(mods, i);
		struct bp_pprof_module *rm = &ps->modules[ps->nr_modules];

		if (bp_json_len(m) != 2 || bp_json_uint(bp_json_at(m, 0), &rm->mapping))
			return bp_pprof_fail(e, "bad boundprof state: \"modules\"");
		rm->module = st_str_val(&s, bp_json_at(m, 1), "modules");
		if (!rm->module)
			st_fail(&s, "modules", -EINVAL);
		if (s.err)
			return st_result(&s);
		rm->order = ps->nr_modules++;
	}
	qsort(ps->modules, ps->nr_modules, sizeof(*ps->modules), cmp_module);
	return 0;
}

const char *bp_pprof_state_module(const struct bp_pprof_state *s, uint64_t mapping)
{
	size_t lo = 0, hi = s->nr_modules;

	/* every location asks: a search, not a scan */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->modules[mid].mapping < mapping)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nr_modules && s->modules[lo].mapping == mapping ? s->modules[lo].module :
									    NULL;
}

/* stacks in the writer's order, when sample order would not give it */
int bp_pprof_state_stacks(const struct bp_pprof_state *s, struct bp_profile *p,
			  struct bp_pprof_err *e)
{
	const struct bp_json *stacks = bp_json_get(s->json, "stacks");
	uint32_t *stack = NULL;
	size_t i, j, n, cap = 0;
	uint64_t all = 0;
	int err = 0;

	if (stacks && bp_json_type(stacks) != BP_JSON_ARRAY)
		return bp_pprof_fail(e, "bad boundprof state: \"stacks\"");
	for (i = 0; i < bp_json_len(stacks) && !err; i++) {
		const struct bp_json *st = bp_json_at(stacks, i);

		n = bp_json_len(st);
		if (bp_json_type(st) != BP_JSON_ARRAY) {
			err = bp_pprof_fail(e, "bad boundprof state: \"stacks\"");
			break;
		}
		all += n;
		if (n > BP_PPROF_MAX_DEPTH || all > BP_PPROF_MAX_FRAMES) {
			err = bp_pprof_toobig(e, "boundprof state: more than %u frames in a stack "
					      "or %u in all", BP_PPROF_MAX_DEPTH, BP_PPROF_MAX_FRAMES);
			break;
		}
		if (n + 1 > cap) {
			uint32_t *ns = reallocarray(stack, n + 1, sizeof(*stack));

			if (!ns) {
				err = bp_pprof_nomem(e);
				break;
			}
			stack = ns;
			cap = n + 1;
		}
		for (j = 0; j < n && !err; j++) {
			uint64_t f;

			if (bp_json_uint(bp_json_at(st, j), &f) || f >= p->nr_frames)
				err = bp_pprof_fail(e, "bad boundprof state: \"stacks\"");
			stack[j] = f;
		}
		if (!err && bp_profile__stack(p, stack, n) < 0)
			err = bp_pprof_nomem(e);
	}
	free(stack);
	return err;
}

static uint8_t st_tree(struct st *s, const struct bp_json *o, const char *key)
{
	uint32_t t = st_u32(s, o, key);

	if (t >= BP_CGROUP__TREES) {
		st_fail(s, key, -EINVAL);
		return 0;
	}
	return (uint8_t)t;
}

/* kv_u64_or_none()'s -1 back to UINT64_MAX */
static uint64_t st_u64_or_none(struct st *s, const struct bp_json *o, const char *key)
{
	const struct bp_json *v = bp_json_get(o, key);
	int64_t x;

	if (v && !bp_json_int(v, &x) && x == -1)
		return UINT64_MAX;
	return v ? st_u64(s, o, key) : UINT64_MAX;
}

static int read_cgroups(struct st *s)
{
	const struct bp_json *cgs = bp_json_get(s->root, "cgroups");
	size_t i;

	s->p->psi_valid = st_bool(s, s->root, "psi_valid");
	st_u64s(s, s->root, "psi_some_us", s->p->psi_some_us, BP_PSI_RES);
	st_u64s(s, s->root, "psi_full_us", s->p->psi_full_us, BP_PSI_RES);
	if (cgs && bp_json_type(cgs) != BP_JSON_ARRAY) {
		st_fail(s, "cgroups", -EINVAL);
		return 0;
	}
	for (i = 0; i < bp_json_len(cgs) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(cgs, i);
		char *path = st_str_val(s, bp_json_get(o, "path"), "path");
		uint32_t tree = st_tree(s, o, "tree");
		struct bp_cgroup *c;
		int64_t q;

		if (!path) {
			st_fail(s, "cgroups", -EINVAL);
			break;
		}
		c = bp_profile__cgroup(s->p, tree, path, true);
		free(path);
		if (!c)
			return -ENOMEM;
		c->watched_ns = st_u64(s, o, "watched_ns");
		c->cpu_valid = st_bool(s, o, "cpu_valid");
		c->quota_at = st_istr(s, o, "quota_at");
		q = st_i64(s, o, "quota_us");
		c->quota_us = q < 0 ? -1 : q;
		c->period_us = st_u64(s, o, "period_us");
		c->nr_periods = st_u64(s, o, "nr_periods");
		c->nr_throttled = st_u64(s, o, "nr_throttled");
		c->throttled_ns = st_u64(s, o, "throttled_ns");
		c->psi_valid = st_bool(s, o, "psi_valid");
		st_u64s(s, o, "psi_some_us", c->psi_some_us, BP_PSI_RES);
		st_u64s(s, o, "psi_full_us", c->psi_full_us, BP_PSI_RES);
		c->mem_valid = st_bool(s, o, "mem_valid");
		c->mem_at = st_istr(s, o, "mem_at");
		c->mem_max = st_u64_or_none(s, o, "mem_max");
		c->mem_high = st_u64_or_none(s, o, "mem_high");
		c->mem_high_events = st_u64(s, o, "mem_high_events");
		c->mem_max_events = st_u64(s, o, "mem_max_events");
		c->mem_oom = st_u64(s, o, "mem_oom");
		c->mem_oom_kill = st_u64(s, o, "mem_oom_kill");
	}
	return 0;
}

static int read_thread(struct st *s, struct bp_proc *proc, const struct bp_json *o)
{
	struct bp_thread *t;
	char comm[BP_COMM_LEN];

	st_chars(s, o, "comm", comm, sizeof(comm));
	t = bp_proc__thread(proc, st_u32(s, o, "tid"), comm);
	if (!t)
		return -ENOMEM;
	t->have_totals = st_bool(s, o, "have_totals");
	t->exited = st_bool(s, o, "exited");
	t->state = st_u32(s, o, "state");
	t->start_ns = st_u64(s, o, "start_ns");
	t->end_ns = st_u64(s, o, "end_ns");
	t->oncpu_ns = st_u64(s, o, "oncpu_ns");
	t->steal_ns = st_u64(s, o, "steal_ns");
	t->switches = st_u64(s, o, "switches");
	t->wakeups = st_u64(s, o, "wakeups");
	t->wake_lat_ns = st_u64(s, o, "wake_lat_ns");
	t->wake_lat_max = st_u64(s, o, "wake_lat_max");
	st_u64s(s, o, "wake_hist", t->wake_hist, BP_HIST_SLOTS);
	t->rchar = st_u64(s, o, "rchar");
	t->wchar = st_u64(s, o, "wchar");
	t->syscr = st_u64(s, o, "syscr");
	t->syscw = st_u64(s, o, "syscw");
	t->gil_ns = st_u64(s, o, "gil_ns");
	return 0;
}

static int read_proc(struct st *s, const struct bp_json *o)
{
	const struct bp_json *threads = bp_json_get(o, "threads");
	struct bp_proc *pr;
	size_t i;

	pr = bp_profile__proc(s->p, st_u32(s, o, "pid"), true);
	if (!pr)
		return -ENOMEM;
	pr->ppid = st_u32(s, o, "ppid");
	st_chars(s, o, "comm", pr->comm, sizeof(pr->comm));
	pr->cmdline = st_istr(s, o, "cmdline");
	pr->start_ns = st_u64(s, o, "start_ns");
	pr->end_ns = st_u64(s, o, "end_ns");
	pr->exited = st_bool(s, o, "exited");
	pr->have_meta = st_bool(s, o, "have_meta");
	pr->have_timeline = st_bool(s, o, "have_timeline");
	pr->python = st_istr(s, o, "python");
	pr->r_version = st_istr(s, o, "r");
	pr->python_free_threaded = st_bool(s, o, "python_free_threaded");
	st_u64s(s, o, "tl_ns", pr->tl_ns, BP_TS__MAX);
	pr->tl_idle_ns = st_u64(s, o, "tl_idle_ns");
	pr->turn_ns = st_u64(s, o, "turn_ns");
	pr->want_ns = st_u64(s, o, "want_ns");
	pr->mem_valid = st_bool(s, o, "mem_valid");
	pr->wss_probes = st_u32(s, o, "wss_probes");
	pr->wss_max = st_u64(s, o, "wss_max");
	pr->wss_per_s = st_double(s, o, "wss_per_s", 0);
	pr->rss = st_u64(s, o, "rss");
	pr->minflt = st_u64(s, o, "minflt");
	pr->majflt = st_u64(s, o, "majflt");
	pr->fault_window_s = st_double(s, o, "fault_window_s", 0);
	pr->pmu_valid = st_bool(s, o, "pmu_valid");
	pr->cycles = st_u64(s, o, "cycles");
	pr->instructions = st_u64(s, o, "instructions");
	pr->cache_misses = st_u64(s, o, "cache_misses");
	pr->pmu_running = st_double(s, o, "pmu_running", 0);
	pr->pmu_seconds = st_double(s, o, "pmu_seconds", 0);
	pr->last_drain_samples = st_u64(s, o, "last_drain_samples");
	st_u64s(s, o, "net_side_ns", pr->net_side_ns, BP_SIDE__MAX);
	st_u64s(s, o, "pipe_dir_ns", pr->pipe_dir_ns, BP_DIR__MAX);
	st_u64s(s, o, "sys_nr", pr->sys_nr, BP_SYS_TOP);
	st_u64s(s, o, "sys_samples", pr->sys_samples, BP_SYS_TOP);
	pr->sys_other = st_u64(s, o, "sys_other");
	pr->traffic_valid = st_bool(s, o, "traffic_valid");
	pr->traffic_floor = st_bool(s, o, "traffic_floor");
	pr->traffic_per_s = st_double(s, o, "traffic_per_s", 0);
	pr->traffic_per_cpu_s = st_double(s, o, "traffic_per_cpu_s", 0);
	pr->traffic_cpus = st_double(s, o, "traffic_cpus", 0);
	pr->have_ids = st_bool(s, o, "have_ids");
	if (pr->have_ids) {
		pr->uid = st_u32(s, o, "uid");
		pr->user = st_istr(s, o, "user");
		pr->cgroup = st_istr(s, o, "cgroup");
		pr->unit = st_istr(s, o, "unit");
		pr->cg_v2 = st_istr(s, o, "cg_v2");
		pr->cg_cpu = st_istr(s, o, "cg_cpu");
		pr->cg_memory = st_istr(s, o, "cg_memory");
		pr->cg_cpu_tree = st_tree(s, o, "cg_cpu_tree");
		pr->cg_memory_tree = st_tree(s, o, "cg_memory_tree");
	}
	if (threads && bp_json_type(threads) != BP_JSON_ARRAY)
		st_fail(s, "threads", -EINVAL);
	for (i = 0; i < bp_json_len(threads) && !s->err; i++)
		if (read_thread(s, pr, bp_json_at(threads, i)))
			return -ENOMEM;
	return 0;
}

static void read_io_stats(struct st *s, const struct bp_json *o, struct bp_io_stats *st)
{
	st->ops = st_u64(s, o, "ops");
	st->bytes = st_u64(s, o, "bytes");
	st->lat_ns = st_u64(s, o, "lat_ns");
	st_u64s(s, o, "hist", st->hist, BP_HIST_SLOTS);
}

static int read_io(struct st *s)
{
	const struct bp_json *devs = bp_json_get(s->root, "io_devs");
	const struct bp_json *rows = bp_json_get(s->root, "io_rows");
	size_t i, k;

	if ((devs && bp_json_type(devs) != BP_JSON_ARRAY) ||
	    (rows && bp_json_type(rows) != BP_JSON_ARRAY)) {
		st_fail(s, devs && bp_json_type(devs) != BP_JSON_ARRAY ? "io_devs" : "io_rows",
			-EINVAL);
		return 0;
	}
	for (i = 0; i < bp_json_len(devs) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(devs, i), *ops = bp_json_get(o, "op");
		struct bp_io_dev *d = bp_profile__io_dev(s->p, st_u32(s, o, "dev"), true);

		if (!d)
			return -ENOMEM;
		st_chars(s, o, "name", d->name, sizeof(d->name));
		d->busy_ns = st_u64(s, o, "busy_ns");
		d->max_inflight = st_u64(s, o, "max_inflight");
		if (bp_json_len(ops) > BP_IO_OP__MAX || (ops && bp_json_type(ops) != BP_JSON_ARRAY))
			st_fail(s, "op", -EINVAL);
		for (k = 0; k < bp_json_len(ops) && k < BP_IO_OP__MAX; k++)
			read_io_stats(s, bp_json_at(ops, k), &d->op[k]);
	}
	for (i = 0; i < bp_json_len(rows) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(rows, i);
		struct bp_io_row *row;
		char comm[BP_COMM_LEN];

		st_chars(s, o, "comm", comm, sizeof(comm));
		row = bp_profile__io_row(s->p, st_u32(s, o, "dev"), st_u32(s, o, "pid"),
					 st_u32(s, o, "op"), st_bool(s, o, "kthread"), comm, true);
		if (!row)
			return -ENOMEM;
		read_io_stats(s, o, &row->st);
	}
	return 0;
}

/* a field that must fit in width bits */
static uint32_t st_small(struct st *s, const struct bp_json *o, const char *key, uint32_t max)
{
	uint32_t v = st_u32(s, o, key);

	if (v > max)
		st_fail(s, key, -EINVAL);
	return v;
}

static int read_waits(struct st *s)
{
	const struct bp_json *wake = bp_json_get(s->root, "wake_rows");
	const struct bp_json *net = bp_json_get(s->root, "net_rows");
	size_t i;

	if ((wake && bp_json_type(wake) != BP_JSON_ARRAY) ||
	    (net && bp_json_type(net) != BP_JSON_ARRAY)) {
		st_fail(s, wake && bp_json_type(wake) != BP_JSON_ARRAY ? "wake_rows" : "net_rows",
			-EINVAL);
		return 0;
	}
	for (i = 0; i < bp_json_len(wake) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(wake, i);
		struct bp_wake_row k = {}, *r;

		k.pid = st_u32(s, o, "pid");
		k.waker_pid = st_u32(s, o, "waker_pid");
		k.waker_tid = st_u32(s, o, "waker_tid");
		k.state = st_small(s, o, "state", 255);
		k.dir = st_small(s, o, "dir", BP_DIR__MAX - 1);
		k.ctx = st_small(s, o, "ctx", BP_WCTX_IDLE);
		st_chars(s, o, "comm", k.comm, sizeof(k.comm));
		if (s->err)
			break;
		r = bp_profile__wake_row(s->p, &k, true);
		if (!r)
			return -ENOMEM;
		r->ns += st_u64(s, o, "ns");
		r->count += st_u64(s, o, "count");
	}
	for (i = 0; i < bp_json_len(net) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(net, i);
		struct bp_net_row k = {}, *r;
		uint64_t hist[BP_FHIST_SLOTS];
		char addr[40];
		size_t j;

		k.pid = st_u32(s, o, "pid");
		k.family = st_small(s, o, "family", 65535);
		k.port = st_small(s, o, "port", 65535);
		k.lport = st_small(s, o, "lport", 65535);
		k.proto = st_small(s, o, "proto", 255);
		k.side = st_small(s, o, "side", BP_SIDE__MAX - 1);
		st_chars(s, o, "addr", addr, sizeof(addr));
		for (j = 0; j < 16 && strlen(addr) == 32; j++) {
			int hi = bp_hexval(addr[2 * j]), lo = bp_hexval(addr[2 * j + 1]);

			if (hi < 0 || lo < 0)
				break;
			k.addr[j] = hi << 4 | lo;
		}
		if (j != 16)
			st_fail(s, "addr", -EINVAL);
		if (s->err)
			break;
		r = bp_profile__net_row(s->p, &k, true);
		if (!r)
			return -ENOMEM;
		r->wait_ns += st_u64(s, o, "wait_ns");
		r->waits += st_u64(s, o, "waits");
		r->rx_bytes += st_u64(s, o, "rx_bytes");
		r->tx_bytes += st_u64(s, o, "tx_bytes");
		st_u64s(s, o, "hist", hist, BP_FHIST_SLOTS);
		for (j = 0; j < BP_FHIST_SLOTS; j++)
			r->hist[j] += hist[j];
	}
	return 0;
}

/* a run's times are seconds: finite and not negative, or the file is bad */
static double st_seconds(struct st *s, const struct bp_json *o, const char *key)
{
	double v = st_double(s, o, key, 0);

	if (!isfinite(v) || v < 0) {
		st_fail(s, key, -EINVAL);
		return 0;
	}
	return v;
}

static int read_runs(struct st *s)
{
	const struct bp_json *runs = bp_json_get(s->root, "runs");
	size_t i;

	if (runs && bp_json_type(runs) != BP_JSON_ARRAY) {
		st_fail(s, "runs", -EINVAL);
		return 0;
	}
	for (i = 0; i < bp_json_len(runs) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(runs, i);
		struct bp_run r = {};

		if (bp_json_type(o) != BP_JSON_OBJECT) {
			st_fail(s, "runs", -EINVAL);
			break;
		}
		r.pid = st_u32(s, o, "pid");
		r.status = st_int(s, o, "status");
		r.wall_s = st_seconds(s, o, "wall_s");
		r.cpu_s = st_seconds(s, o, "cpu_s");
		r.runqueue_s = st_seconds(s, o, "runqueue_s");
		if (bp_profile__add_run(s->p, &r))
			return -ENOMEM;
	}
	return 0;
}

int bp_pprof_state_apply(const struct bp_pprof_state *ps, struct bp_profile *p,
			 struct bp_pprof_err *e)
{
	const struct bp_json *o = ps->json, *procs = bp_json_get(o, "procs");
	uint64_t stats[BP_STAT__MAX];
	struct st s = { .e = e, .p = p, .root = ps->json };
	size_t i;

	p->start_ns = st_u64(&s, o, "start_ns");
	p->end_ns = st_u64(&s, o, "end_ns");
	p->start_unix_ns = st_i64(&s, o, "start_unix_ns");
	p->hz = st_int(&s, o, "hz");
	p->ncpus = st_int(&s, o, "ncpus");
	p->pmu = st_bool(&s, o, "pmu");
	if (bp_json_get(o, "event"))
		p->event = st_istr(&s, o, "event");
	p->system_wide = st_bool(&s, o, "system_wide");
	p->offcpu_enabled = st_bool(&s, o, "offcpu_enabled");
	p->machine_busy = st_double(&s, o, "machine_busy", -1);
	p->llc_bytes = st_u64(&s, o, "llc_bytes");
	p->llc_source = st_istr(&s, o, "llc_source");
	st_u64s(&s, o, "stats", stats, BP_STAT__MAX);
	for (i = 0; i < BP_STAT__MAX; i++)
		p->stats.v[i] = stats[i];
	p->user_stacks_cut = st_u64(&s, o, "user_stacks_cut");
	p->io_done_unseen = st_u64(&s, o, "io_done_unseen");
	p->io_enabled = st_bool(&s, o, "io_enabled");
	p->membw_valid = st_bool(&s, o, "membw_valid");
	p->membw_1_gbs = st_double(&s, o, "membw_1_gbs", 0);
	p->membw_n_gbs = st_double(&s, o, "membw_n_gbs", 0);
	p->membw_threads = st_u32(&s, o, "membw_threads");
	p->membw_source = st_istr(&s, o, "membw_source");
	p->membw_cache_bytes = st_u64(&s, o, "membw_cache_bytes");
	p->membw_window = st_bool(&s, o, "membw_window");
	p->membw_window_err = st_int(&s, o, "membw_window_err");
	p->membw_window_floor = st_bool(&s, o, "membw_window_floor");
	p->membw_window_stream_gbs = st_double(&s, o, "membw_window_stream_gbs", 0);
	p->membw_window_seen_gbs = st_double(&s, o, "membw_window_seen_gbs", 0);
	p->membw_window_visible = st_double(&s, o, "membw_window_visible", 0);
	p->uw_tables_over_budget = st_u64(&s, o, "uw_tables_over_budget");
	if (bp_json_get(o, "unwind_budget_bytes")) {
		p->unwind.enabled = true;
		p->unwind.budget_bytes = st_u64(&s, o, "unwind_budget_bytes");
		p->unwind.used_bytes = st_u64(&s, o, "unwind_used_bytes");
		p->unwind.procs_bytes = st_u64(&s, o, "unwind_procs_bytes");
		p->unwind.files = st_u64(&s, o, "unwind_files");
		p->unwind.rows = st_u64(&s, o, "unwind_rows");
	}
	if (procs && bp_json_type(procs) != BP_JSON_ARRAY)
		st_fail(&s, "procs", -EINVAL);
	for (i = 0; i < bp_json_len(procs) && !s.err; i++)
		if (read_proc(&s, bp_json_at(procs, i)))
			st_fail(&s, "procs", -ENOMEM);
	if (!s.err && read_io(&s))
		st_fail(&s, "io", -ENOMEM);
	if (!s.err && read_waits(&s))
		st_fail(&s, "waits", -ENOMEM);
	if (!s.err && read_runs(&s))
		st_fail(&s, "runs", -ENOMEM);
	if (!s.err && read_cgroups(&s))
		st_fail(&s, "cgroups", -ENOMEM);
	return st_result(&s);
}

void bp_pprof_state_free(struct bp_pprof_state *s)
{
	size_t i;

	bp_json_free(s->json);
	for (i = 0; i < s->nr_modules; i++)
		free(s->modules[i].module);
	free(s->modules);
	memset(s, 0, sizeof(*s));
}
