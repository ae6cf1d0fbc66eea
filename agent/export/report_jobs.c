// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analyze/jobs.h"
#include "export/report_jobs.h"

bool bp_report_text_folded(const struct bp_summary *s, uint32_t proc)
{
	return bp_job_of(s, proc) != NULL;
}

bool bp_report_text_job_parent(struct bp_buf *out, const struct bp_summary *s, uint32_t proc)
{
	const struct bp_jobs *js = s->jobs;
	const struct bp_verdict *v = s->procs[proc].verdict;
	uint32_t i;

	for (i = 0; js && v && i < js->nr; i++) {
		const struct bp_job *j = &js->j[i];

		if (j->parent != (int32_t)proc || !v->nr_evidence || v->cls != j->verdict.cls ||
		    !strstr(v->evidence[0], "waiting for its children"))
			continue;
		bp_buf_printf(out, "  - %s (job: %u runs of %s above)\n", v->evidence[0], j->nr,
			      j->name);
		return true;
	}
	return false;
}

uint32_t bp_report_text_jobs(struct bp_buf *out, const struct bp_profile *p,
			     const struct bp_summary *s)
{
	const struct bp_jobs *js = s->jobs;
	char title[320];
	uint32_t i, k, folded = 0;

	(void)p;
	for (i = 0; js && i < js->nr; i++) {
		const struct bp_job *j = &js->j[i];
		const struct bp_verdict *v = &j->verdict;

		bp_buf_printf(out, "\njob: %s: %s (%s confidence)\n", bp_job_title(s, j, title,
			      sizeof(title)), bp_class_name(v->cls), bp_confidence_name(v->conf));
		for (k = 0; k < v->nr_evidence; k++)
			bp_buf_printf(out, "  %s %s\n", k ? " " : "-", v->evidence[k]);
		for (k = 0; k < v->nr_levers; k++)
			bp_buf_printf(out, "  %s %s\n", k ? "  " : "=>", v->levers[k]);
		bp_buf_printf(out, "  %.2f s on-CPU in all", j->on_cpu_s);
		if (j->off_s[BP_KIND_NET] >= 0.005)
			bp_buf_printf(out, ", %.2f s waiting on the network", j->net_wait_s);
		if (j->off_s[BP_KIND_RUNQUEUE] >= 0.005)
			bp_buf_printf(out, ", %.2f s waiting for a CPU",
				      j->off_s[BP_KIND_RUNQUEUE]);
		if (j->net_waits)
			bp_buf_printf(out, "; %" PRIu64 " round trips to %s, p50 %.2f ms",
				      j->net_waits, j->net_peer[0] ? j->net_peer : "its peers",
				      j->net_p50_ms);
		bp_buf_printf(out, "\n  runs: pid %u ... %u (every run's own figures are in the "
			      "JSON report)\n", s->procs[j->members[0]].proc->pid,
			      s->procs[j->members[j->nr - 1]].proc->pid);
		folded += j->nr;
	}
	return folded;
}

static void spread(struct bp_json_w *w, const struct bp_job *j)
{
	bp_json_w_key(w, "wall_s");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "median", j->median_s);
	bp_json_w_kv_double(w, "p90", j->p90_s);
	bp_json_w_kv_double(w, "min", j->min_s);
	bp_json_w_kv_double(w, "max", j->max_s);
	bp_json_w_kv_double(w, "total", j->total_s);
	bp_json_w_end_object(w);
}

void bp_export_json_jobs(struct bp_json_w *w, const struct bp_summary *s,
			 void (*write_verdict)(struct bp_json_w *w, const struct bp_verdict *v))
{
	const struct bp_jobs *js = s->jobs;
	uint32_t i, k;
	int c;

	bp_json_w_key(w, "jobs");
	bp_json_w_begin_array(w);
	for (i = 0; js && i < js->nr; i++) {
		const struct bp_job *j = &js->j[i];
		const struct bp_job_startup *st = &j->st;

		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "program", j->name);
		bp_json_w_kv_uint64(w, "runs", j->nr);
		bp_json_w_kv_int64(w, "ppid", j->ppid);
		bp_json_w_kv_string(w, "parent_comm", j->parent >= 0 ?
				    s->procs[j->parent].proc->comm : "");
		bp_json_w_key(w, "pids");
		bp_json_w_begin_array(w);
		for (k = 0; k < j->nr; k++)
			bp_json_w_int64(w, s->procs[j->members[k]].proc->pid);
		bp_json_w_end_array(w);
		spread(w, j);
		bp_json_w_kv_double(w, "on_cpu_s", j->on_cpu_s);
		bp_json_w_key(w, "off_cpu_s");
		bp_json_w_begin_object(w);
		for (c = BP_KIND_RUNQUEUE; c < BP_KIND__MAX; c++)
			bp_json_w_kv_double(w, bp_wclass(c)->name, j->off_s[c]);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "network");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "wait_s", j->net_wait_s);
		bp_json_w_kv_double(w, "share", j->total_s > 0 ? j->net_wait_s / j->total_s : 0);
		bp_json_w_kv_uint64(w, "round_trips", j->net_waits);
		bp_json_w_kv_double(w, "p50_ms", j->net_p50_ms);
		bp_json_w_kv_double(w, "p99_ms", j->net_p99_ms);
		bp_json_w_kv_string(w, "peer", j->net_peer);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "startup");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "share", st->share);
		bp_json_w_kv_double(w, "seconds", st->s);
		bp_json_w_kv_double(w, "cpu_s", st->cpu_s);
		bp_json_w_kv_double(w, "fork_s", st->fork_s);
		bp_json_w_kv_double(w, "loader_s", st->loader_s);
		bp_json_w_kv_uint64(w, "samples", st->samples);
		bp_json_w_kv_uint64(w, "loader_samples", st->loader);
		bp_json_w_kv_uint64(w, "exec_samples", st->exec);
		bp_json_w_kv_uint64(w, "exit_samples", st->exit);
		bp_json_w_kv_uint64(w, "fork_samples", st->fork);
		bp_json_w_end_object(w);
		bp_json_w_kv_double(w, "parent_wait_s", j->parent_wait_s);
		bp_json_w_kv_bool(w, "on_critical_path", j->critical);
		bp_json_w_key(w, "verdict");
		write_verdict(w, &j->verdict);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}
