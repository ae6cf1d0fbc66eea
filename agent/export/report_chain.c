// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>

#include "analyze/chain.h"
#include "export/report_chain.h"

void bp_export_text_chains(struct bp_buf *out, const struct bp_summary *s)
{
	const struct bp_chains *cs = s->chains;
	uint32_t i;

	for (i = 0; cs && i < cs->nr_added; i++) {
		const struct bp_added_peer *a = &cs->added[i];

		if (a->judged)
			bp_buf_printf(out, "added %s[%u]: %s waited %.2f s on it over %" PRIu64
				      " wakeups\n", a->comm, a->pid, a->by_comm, a->wait_s, a->wakeups);
		else
			bp_buf_printf(out, "followed %s[%u] briefly: the command waited %.3f s on it "
				      "over %" PRIu64 " wakeups, too little to judge\n", a->comm, a->pid,
				      a->wait_s, a->wakeups);
	}
	for (i = 0; cs && i < cs->nr; i++) {
		const struct bp_chain *c = &cs->c[i];
		const struct bp_proc *cl = s->procs[c->client].proc, *sv = s->procs[c->server].proc;

		bp_buf_printf(out, "chain: %s (pid %u) ⇄ %s (pid %u): %" PRIu64 " round trips, %.0f/s, "
			      "%.3f ms each: %s %.3f ms, %s %.3f ms, flushes %.3f ms, block IO %.3f ms, "
			      "handoffs %.3f ms, other %.3f ms — %s\n", cl->comm, cl->pid, sv->comm,
			      sv->pid, c->round_trips, c->rate, c->rt_ms, cl->comm, c->client_ms,
			      sv->comm, c->server_ms, c->flush_ms, c->server_io_ms, c->handoff_ms,
			      c->other_ms, bp_class_name(c->verdict.cls));
	}
}

void bp_export_json_chains(struct bp_json_w *w, const struct bp_summary *s)
{
	const struct bp_chains *cs = s->chains;
	uint32_t i, k;

	if (!cs)
		return;
	bp_json_w_key(w, "added_peers");
	bp_json_w_begin_array(w);
	for (i = 0; i < cs->nr_added; i++) {
		const struct bp_added_peer *a = &cs->added[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_int64(w, "pid", a->pid);
		bp_json_w_kv_string(w, "comm", a->comm);
		bp_json_w_kv_int64(w, "by_pid", a->by_pid);
		bp_json_w_kv_string(w, "by_comm", a->by_comm);
		bp_json_w_kv_double(w, "wait_s", a->wait_s);
		bp_json_w_kv_uint64(w, "wakeups", a->wakeups);
		bp_json_w_kv_bool(w, "judged", a->judged);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_key(w, "chains");
	bp_json_w_begin_array(w);
	for (i = 0; i < cs->nr; i++) {
		const struct bp_chain *c = &cs->c[i];
		const struct bp_verdict *v = &c->verdict;

		bp_json_w_begin_object(w);
		bp_json_w_kv_int64(w, "client", s->procs[c->client].proc->pid);
		bp_json_w_kv_int64(w, "server", s->procs[c->server].proc->pid);
		bp_json_w_kv_bool(w, "server_added", c->added);
		bp_json_w_kv_uint64(w, "round_trips", c->round_trips);
		bp_json_w_kv_uint64(w, "client_waits", c->client_waits);
		bp_json_w_kv_uint64(w, "server_wakeups", c->server_wakeups);
		bp_json_w_kv_double(w, "rate_per_s", c->rate);
		bp_json_w_kv_double(w, "client_wait_share", c->cover);
		bp_json_w_kv_double(w, "flush_s", c->flush_s);
		bp_json_w_kv_double(w, "flush_cpu_s", c->flush_cpu_s);
		bp_json_w_kv_uint64(w, "flushes", c->flushes);
		bp_json_w_kv_double(w, "handoff_s", c->client_handoff_s + c->server_handoff_s);
		bp_json_w_key(w, "per_round_trip_ms");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "total", c->rt_ms);
		bp_json_w_kv_double(w, "client", c->client_ms);
		bp_json_w_kv_double(w, "server", c->server_ms);
		bp_json_w_kv_double(w, "flush", c->flush_ms);
		bp_json_w_kv_double(w, "io", c->server_io_ms);
		bp_json_w_kv_double(w, "handoff", c->handoff_ms);
		bp_json_w_kv_double(w, "other", c->other_ms);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "verdict");
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "class", bp_class_name(v->cls));
		bp_json_w_kv_string(w, "confidence", bp_confidence_name(v->conf));
		bp_json_w_key(w, "evidence");
		bp_json_w_begin_array(w);
		for (k = 0; k < v->nr_evidence; k++)
			bp_json_w_string(w, v->evidence[k]);
		bp_json_w_end_array(w);
		bp_json_w_key(w, "levers");
		bp_json_w_begin_array(w);
		for (k = 0; k < v->nr_levers; k++)
			bp_json_w_string(w, v->levers[k]);
		bp_json_w_end_array(w);
		bp_json_w_end_object(w);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}
