// SPDX-License-Identifier: GPL-2.0
/*
 * Who waited on whom (analyze/pipeline.c) on profiles built by hand: the
 * pipeline in data-flow order from the wakers of pipe waits, its
 * bottleneck, the blocked-on-peer verdicts that name it, the critical
 * path of a command and the recording's verdict that follows it, wakers
 * gathered by process, and the network peers of a client.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "analyze/pipeline.h"
#include "analyze/verdict.h"
#include "model/hist.h"
#include "model/waits.h"
#include "unit/builders.h"

#define SEC 1000000000ULL
#define T0 (100 * SEC)

static struct bp_profile *base(void)
{
	return bld_window(T0, 4 * SEC, 0.5);
}

/* a process of one thread: its timeline (ns per state), its thread-time off CPU */
static struct bp_proc *proc(struct bp_profile *p, uint32_t pid, uint32_t ppid, const char *comm,
			    const char *cmd, uint64_t run, uint64_t pipe_in, uint64_t pipe_out,
			    uint64_t sleep)
{
	struct bp_proc *pr = bld_proc(p, pid, ppid, comm, cmd);
	uint32_t f = bld_frame(p, comm, comm, NULL, NULL, 0x10, false), st = BLD_STACK(p, f);

	pr->start_ns = T0 + 1;
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_RUNNING] = run;
	pr->tl_ns[BP_TS_PIPE] = pipe_in + pipe_out;
	pr->tl_ns[BP_TS_SLEEP] = sleep;
	pr->pipe_dir_ns[BP_DIR_IN] = pipe_in;
	pr->pipe_dir_ns[BP_DIR_OUT] = pipe_out;
	bld_thread(pr, pid, comm, run, pid);
	if (run)
		bld_sample(p, pid, pid, BP_KIND_ONCPU, st, run / 10000000, run);
	if (pipe_in + pipe_out)
		bld_sample(p, pid, pid, BP_KIND_PIPE, st, 10, pipe_in + pipe_out);
	if (sleep)
		bld_sample(p, pid, pid, BP_KIND_SLEEP, st, 1, sleep);
	return pr;
}

static void woke(struct bp_profile *p, uint32_t pid, uint32_t waker, uint32_t tid,
		 const char *comm, uint8_t state, uint8_t dir, uint8_t ctx, uint64_t ns)
{
	struct bp_wake_row k = { .pid = pid, .waker_pid = waker, .waker_tid = tid,
				 .state = state, .dir = dir, .ctx = ctx }, *r;

	snprintf(k.comm, sizeof(k.comm), "%s", comm);
	r = bp_profile__wake_row(p, &k, true);
	assert_non_null(r);
	r->ns += ns;
	r->count += 10;
}

/* sh -c 'cat f | gzip -9 | wc -c': gzip computes, the others wait on it */
static struct bp_profile *cat_gzip_wc(void)
{
	struct bp_profile *p = base();

	proc(p, 1, 0, "sh", "sh -c cat f | gzip -9 | wc -c", 0, 0, 0, 4 * SEC);
	proc(p, 10, 1, "cat", "cat f", SEC / 10, 0, 3 * SEC, 0);
	proc(p, 11, 1, "gzip", "gzip -9", 38 * SEC / 10, SEC / 100, SEC / 100, 0);
	proc(p, 12, 1, "wc", "wc -c", SEC / 100, 39 * SEC / 10, 0, 0);
	/* cat waits for room in the pipe; gzip's reads empty it and wake cat */
	woke(p, 10, 11, 11, "gzip", BP_TS_PIPE, BP_DIR_OUT, BP_WCTX_TASK, 3 * SEC);
	/* wc waits for input; gzip's writes wake it */
	woke(p, 12, 11, 11, "gzip", BP_TS_PIPE, BP_DIR_IN, BP_WCTX_TASK, 39 * SEC / 10);
	/* gzip now and then waits on cat */
	woke(p, 11, 10, 10, "cat", BP_TS_PIPE, BP_DIR_IN, BP_WCTX_TASK, SEC / 100);
	/* the shell waits for its children: the last to exit ends its wait */
	woke(p, 1, 12, 12, "wc", BP_TS_SLEEP, BP_DIR_NONE, BP_WCTX_TASK, 4 * SEC);
	return p;
}

static void summarize(const struct bp_profile *p, struct bp_summary *s)
{
	assert_int_equal(bp_summarize(p, 20, s), 0);
	assert_int_equal(bp_verdicts(p, s), 0);
}

static const struct bp_proc_summary *ps_of(const struct bp_summary *s, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].proc->pid == pid)
			return &s->procs[i];
	fail_msg("pid %u not summarized", pid);
	return NULL;
}

static void pipeline__data_flow_order_and_bottleneck(void **state)
{
	struct bp_profile *p = cat_gzip_wc();
	const struct bp_pipeline *pl;
	struct bp_summary s;
	char lead[320];
	uint32_t stage;

	summarize(p, &s);
	assert_int_equal(s.waits->nr, 1);
	pl = &s.waits->pl[0];
	assert_int_equal(pl->nr_stages, 3);
	assert_int_equal(pl->stages[0].pid, 10);
	assert_int_equal(pl->stages[1].pid, 11);
	assert_int_equal(pl->stages[2].pid, 12);
	assert_int_equal(pl->stages[pl->bottleneck].pid, 11);
	assert_string_equal(pl->name, "cat f → gzip -9 → wc -c");
	bp_pipeline_lead(&s, pl, lead, sizeof(lead));
	assert_string_equal(lead, "cat f → gzip -9 → wc -c: bound by gzip -9 (pid 11, cpu-bound)");
	/* waits on each neighbour, from the rows by direction */
	assert_true(pl->stages[0].out_wait_s == 3.0);
	assert_true(pl->stages[2].in_wait_s == 3.9);
	assert_ptr_equal(bp_pipeline_of(s.waits, 12, &stage), pl);
	assert_int_equal(stage, 2);
	assert_null(bp_pipeline_of(s.waits, 1, NULL));
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void pipeline__stages_blocked_on_their_neighbour(void **state)
{
	struct bp_profile *p = cat_gzip_wc();
	const struct bp_verdict *v;
	struct bp_summary s;

	summarize(p, &s);
	v = ps_of(&s, 10)->verdict;
	assert_int_equal(v->cls, BP_CLASS_PEER);
	assert_int_equal(v->peer_pid, 11);
	assert_string_equal(v->peer_comm, "gzip");
	assert_int_equal(v->peer_dir, BP_DIR_OUT);
	v = ps_of(&s, 12)->verdict;
	assert_int_equal(v->cls, BP_CLASS_PEER);
	assert_int_equal(v->peer_pid, 11);
	assert_int_equal(v->peer_dir, BP_DIR_IN);
	assert_int_equal(ps_of(&s, 11)->verdict->cls, BP_CLASS_CPU);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void critical_path__command_verdict_is_what_held_it_back(void **state)
{
	struct bp_profile *p = cat_gzip_wc();
	struct bp_summary s;
	const struct bp_verdict *g;

	summarize(p, &s);
	/* sh waited for wc, wc for gzip: the path ends at gzip */
	assert_int_equal(s.waits->nr_crit, 3);
	assert_int_equal(s.procs[s.waits->crit[0]].proc->pid, 1);
	assert_int_equal(s.procs[s.waits->crit[1]].proc->pid, 12);
	assert_int_equal(s.procs[s.waits->crit[2]].proc->pid, 11);
	g = ps_of(&s, 11)->verdict;
	assert_int_equal(s.overall.cls, g->cls);
	assert_string_equal(s.overall.evidence[0],
			    "cat f → gzip -9 → wc -c: bound by gzip -9 (pid 11)");
	assert_string_equal(s.overall.evidence[1], g->evidence[0]);
	/* the same caps as the process's: not a sum over every process */
	assert_true(s.overall.hot_4x == g->hot_4x);
	assert_true(s.overall.wait_share == g->wait_share);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void critical_path__idle_parent_to_its_busiest_child(void **state)
{
	struct bp_profile *p = base();
	struct bp_summary s;

	/* a parent that polls in nanosleep, never woken by its child */
	proc(p, 1, 0, "fio", "fio job", 0, 0, 0, 4 * SEC);
	proc(p, 2, 1, "fio", "fio job", 39 * SEC / 10, 0, 0, 0);
	woke(p, 1, 0, 0, "", BP_TS_SLEEP, BP_DIR_NONE, BP_WCTX_IDLE, 4 * SEC);
	summarize(p, &s);
	assert_int_equal(s.waits->nr_crit, 2);
	assert_int_equal(s.procs[s.waits->crit[1]].proc->pid, 2);
	assert_int_equal(s.overall.cls, BP_CLASS_CPU);
	assert_non_null(strstr(s.overall.evidence[0], "what held the command back: fio (pid 1) "
						     "→ fio (pid 2)"));
	bp_summary_free(&s);
	bp_profile__free(p);
}

/*
 * A command whose path stops at itself while a child did the work: the
 * parent read its binary from a congested disk for 2 s, then waited in
 * wait4 for a child that computed, which never woke it (the child was
 * still running when the recording ended). The recording is the child's
 * CPU, not the parent's IO.
 */
static void critical_path__short_path_gives_way_to_a_busier_process(void **state)
{
	struct bp_profile *p = base();
	struct bp_proc *sh = proc(p, 1, 0, "stress-ng", "stress-ng --cpu 1", SEC / 100, 0, 0,
				  2 * SEC);
	struct bp_summary s;
	uint32_t f = bld_frame(p, "stress-ng", "filemap_read", NULL, NULL, 0x20, true);

	sh->tl_ns[BP_TS_IO] = 2 * SEC;
	bld_sample(p, 1, 1, BP_KIND_IO, BLD_STACK(p, f), 40, 2 * SEC);
	proc(p, 2, 1, "stress-ng-cpu", "stress-ng --cpu 1", 39 * SEC / 10, 0, 0, 0);
	summarize(p, &s);
	assert_int_equal(s.waits->nr_crit, 1);
	assert_int_equal(s.procs[s.waits->crit[0]].proc->pid, 1);
	assert_int_equal(ps_of(&s, 1)->verdict->cls, BP_CLASS_IO);
	assert_int_equal(s.overall.cls, BP_CLASS_CPU);
	/* with the child idle the parent's own IO is the command's verdict */
	bp_summary_free(&s);
	bp_profile__free(p);
	p = base();
	sh = proc(p, 1, 0, "stress-ng", "stress-ng --cpu 1", SEC / 100, 0, 0, 2 * SEC);
	f = bld_frame(p, "stress-ng", "filemap_read", NULL, NULL, 0x20, true);
	sh->tl_ns[BP_TS_IO] = 2 * SEC;
	bld_sample(p, 1, 1, BP_KIND_IO, BLD_STACK(p, f), 40, 2 * SEC);
	proc(p, 2, 1, "stress-ng-cpu", "stress-ng --cpu 1", SEC / 100, 0, 0, 39 * SEC / 10);
	summarize(p, &s);
	assert_int_equal(s.waits->nr_crit, 1);
	assert_int_equal(s.overall.cls, BP_CLASS_IO);
	assert_string_equal(s.overall.evidence[0], ps_of(&s, 1)->verdict->evidence[0]);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void critical_path__several_roots__none(void **state)
{
	struct bp_profile *p = cat_gzip_wc();
	struct bp_summary s;

	/* -p of two unrelated processes: no single command */
	proc(p, 50, 0, "other", "other", SEC, 0, 0, 0);
	summarize(p, &s);
	assert_int_equal(s.waits->nr_crit, 0);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void pipeline__both_ways_between_two__one_edge_no_loop(void **state)
{
	struct bp_profile *p = base();
	struct bp_summary s;

	/* a coprocess: each waits for the other's answers through two pipes */
	proc(p, 1, 0, "a", "a", SEC, 2 * SEC, 0, 0);
	proc(p, 2, 0, "b", "b", SEC, SEC, 0, 0);
	woke(p, 1, 2, 2, "b", BP_TS_PIPE, BP_DIR_IN, BP_WCTX_TASK, 2 * SEC);
	woke(p, 2, 1, 1, "a", BP_TS_PIPE, BP_DIR_IN, BP_WCTX_TASK, SEC);
	summarize(p, &s);
	assert_int_equal(s.waits->nr, 1);
	assert_int_equal(s.waits->pl[0].nr_stages, 2);
	/* the stronger evidence says which way the data mostly flows */
	assert_int_equal(s.waits->pl[0].stages[0].pid, 2);
	assert_int_equal(s.waits->pl[0].stages[1].pid, 1);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void wakers__threads_of_one_process_together(void **state)
{
	struct bp_profile *p = base();
	const struct bp_proc_waits *w;
	struct bp_summary s;
	uint32_t i;

	proc(p, 1, 0, "client", "client", SEC / 10, 0, 0, 0);
	/* a server with a thread per connection, from the network softirq */
	for (i = 0; i < 5; i++)
		woke(p, 1, 9, 100 + i, "server", BP_TS_NET, BP_DIR_IN, BP_WCTX_SOFTIRQ,
		     (i + 1) * SEC / 10);
	woke(p, 1, 0, 0, "", BP_TS_SLEEP, BP_DIR_NONE, BP_WCTX_IDLE, SEC / 20);
	summarize(p, &s);
	w = &s.waits->waits[ps_of(&s, 1) - s.procs];
	assert_int_equal(w->nr_wakers, 2);
	assert_int_equal(w->wakers[0].pid, 9);
	assert_int_equal(w->wakers[0].threads, 5);
	assert_int_equal(w->wakers[0].tid, 104);
	assert_true(w->wakers[0].s > 1.49 && w->wakers[0].s < 1.51);
	assert_int_equal(w->wakers[0].ctx, BP_WCTX_SOFTIRQ);
	assert_int_equal(w->wakers[1].pid, 0);
	assert_int_equal(w->wakers[1].ctx, BP_WCTX_IDLE);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void network__peers_and_round_trips_of_a_client(void **state)
{
	struct bp_profile *p = base();
	struct bp_net_row k = { .pid = 1, .family = 2, .port = 8080, .proto = 6,
				.side = BP_SIDE_CLIENT }, *r;
	const struct bp_proc_waits *w;
	struct bp_summary s;
	struct bp_proc *pr;
	int i;

	pr = proc(p, 1, 0, "python3", "python3 fetch.py", SEC / 10, 0, 0, 0);
	pr->tl_ns[BP_TS_NET] = 2 * SEC;
	pr->net_side_ns[BP_SIDE_CLIENT] = 2 * SEC;
	bld_sample(p, 1, 1, BP_KIND_NET, 0, 100, 2 * SEC);
	k.addr[0] = 127;
	k.addr[3] = 1;
	r = bp_profile__net_row(p, &k, true);
	assert_non_null(r);
	r->waits = 100;
	r->wait_ns = 2 * SEC;
	r->rx_bytes = 110000;
	r->tx_bytes = 12800;
	for (i = 0; i < 100; i++)
		r->hist[bp_fhist_slot(19800 + i * 10)]++;
	/* a listening socket of its own does not count as its work */
	k.side = BP_SIDE_LISTEN;
	k.port = 9000;
	r = bp_profile__net_row(p, &k, true);
	r->waits = 1;
	r->wait_ns = SEC;
	summarize(p, &s);
	w = &s.waits->waits[ps_of(&s, 1) - s.procs];
	assert_int_equal(w->nr_peers, 2);
	assert_string_equal(w->peers[0].name, "127.0.0.1:8080");
	assert_int_equal(w->net_waits, 100);
	assert_true(w->net_wait_s == 2.0);
	assert_true(w->net_p50_ms > 18.4 && w->net_p50_ms < 20.5);
	assert_int_equal(w->net_rx, 110000);
	assert_int_equal(ps_of(&s, 1)->verdict->cls, BP_CLASS_IO);
	assert_true(ps_of(&s, 1)->verdict->wait_net);
	bp_summary_free(&s);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pipeline__data_flow_order_and_bottleneck),
		cmocka_unit_test(pipeline__stages_blocked_on_their_neighbour),
		cmocka_unit_test(critical_path__command_verdict_is_what_held_it_back),
		cmocka_unit_test(critical_path__idle_parent_to_its_busiest_child),
		cmocka_unit_test(critical_path__short_path_gives_way_to_a_busier_process),
		cmocka_unit_test(critical_path__several_roots__none),
		cmocka_unit_test(pipeline__both_ways_between_two__one_edge_no_loop),
		cmocka_unit_test(wakers__threads_of_one_process_together),
		cmocka_unit_test(network__peers_and_round_trips_of_a_client),
	};

	return cmocka_run_group_tests_name("pipeline", tests, NULL, NULL);
}
