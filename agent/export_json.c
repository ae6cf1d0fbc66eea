// SPDX-License-Identifier: GPL-2.0
#include "export_io.h"
#include "export_json.h"
#include "json.h"

static void write_stats(struct bp_json_w *w, const struct bp_profile *p)
{
	static const struct {
		const char *key;
		enum bp_stat stat;
	} rows[] = {
		{ "samples_map_full", BP_STAT_MAP_FULL },
		{ "kernel_stack_errors", BP_STAT_KSTACK_ERR },
		{ "user_stack_errors", BP_STAT_USTACK_ERR },
		{ "stack_map_full", BP_STAT_STACK_FULL },
		{ "user_stacks_truncated", BP_STAT_USTACK_TRUNC },
		{ "events_lost", BP_STAT_EVENT_DROP },
		{ "seen_map_full", BP_STAT_SEEN_FULL },
		{ "target_map_full", BP_STAT_TARGET_FULL },
	};
	unsigned int i;

	bp_json_w_key(w, "drops_detail");
	bp_json_w_begin_object(w);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		bp_json_w_kv_uint64(w, rows[i].key, p->stats.v[rows[i].stat]);
	bp_json_w_kv_uint64(w, "user_stacks_cut", p->user_stacks_cut);
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
		bp_json_w_kv_string(w, "function", bp_frame_label(f, false, label, sizeof(label)));
		bp_json_w_kv_string(w, "module", f->module);
		bp_json_w_kv_bool(w, "kernel", f->kernel);
		bp_json_w_kv_double(w, "self", h[i].self_frac);
		bp_json_w_kv_double(w, "total", h[i].total_frac);
		bp_json_w_kv_uint64(w, "self_samples", h[i].self);
		bp_json_w_kv_uint64(w, "total_samples", h[i].total);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

static void write_proc(struct bp_json_w *w, const struct bp_profile *p,
		       const struct bp_proc_summary *ps)
{
	const struct bp_proc *proc = ps->proc;
	int k;

	bp_json_w_begin_object(w);
	bp_json_w_kv_int64(w, "pid", proc->pid);
	bp_json_w_kv_int64(w, "ppid", proc->ppid);
	bp_json_w_kv_string(w, "comm", proc->comm[0] ? proc->comm : "[unknown]");
	bp_json_w_kv_string(w, "cmdline", proc->cmdline ? proc->cmdline : "");
	bp_json_w_kv_bool(w, "exited", proc->exited);
	bp_json_w_kv_double(w, "wall_s", ps->wall_s);
	bp_json_w_kv_double(w, "on_cpu_s", ps->on_cpu_s);
	bp_json_w_kv_uint64(w, "samples", ps->samples);
	bp_json_w_kv_uint64(w, "threads", ps->threads);
	/* off-CPU and IO accounting arrive with the off-CPU programs */
	bp_json_w_key(w, "off_cpu_s");
	bp_json_w_begin_object(w);
	for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++)
		bp_json_w_kv_double(w, bp_kind_name(k), 0.0);
	bp_json_w_end_object(w);
	bp_json_w_key(w, "io");
	bp_export_json_proc_io(w, p, proc->pid, 0.0);
	bp_json_w_key(w, "verdict");
	bp_json_w_begin_object(w);
	bp_json_w_kv_string(w, "class", "unknown");
	bp_json_w_kv_string(w, "confidence", "low");
	bp_json_w_key(w, "evidence");
	bp_json_w_begin_array(w);
	bp_json_w_end_array(w);
	bp_json_w_key(w, "levers");
	bp_json_w_begin_array(w);
	bp_json_w_end_array(w);
	bp_json_w_end_object(w);
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
	uint32_t i;
	int err;

	bp_json_w_init(&w, out, pretty);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "version", BP_REPORT_VERSION);
	bp_json_w_kv_double(&w, "duration_s", s->duration_s);
	bp_json_w_kv_int64(&w, "hz", p->hz);
	bp_json_w_kv_string(&w, "event", p->event);
	bp_json_w_kv_int64(&w, "start_unix_ns", p->start_unix_ns);
	bp_json_w_kv_bool(&w, "system_wide", p->system_wide);

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
	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].proc)
			write_proc(&w, p, &s->procs[i]);
	bp_json_w_end_array(&w);

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
