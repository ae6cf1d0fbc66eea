// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs (analyze/jobs.c) on profiles built by hand: a shell loop's short
 * runs of one program are one job judged on their summed time, with their
 * start-up counted from the samples in the dynamic loader, exec and exit;
 * the shell that waited for them and the command take the job's verdict;
 * a child feeding its parent through a pipe ($(seq 10)) is no pipeline;
 * and too few runs, or long ones, stay processes of their own.
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
#include "analyze/jobs.h"
#include "analyze/pipeline.h"
#include "analyze/verdict.h"
#include "model/waits.h"
#include "unit/builders.h"

#define SEC 1000000000ULL
#define MS (SEC / 1000)
#define T0 1000000000000ULL	/* builders.c's window start */

static struct bp_profile *base(void)
{
	return bld_window(T0, 4 * SEC, 0.3);
}

static void woke(struct bp_profile *p, uint32_t pid, uint32_t waker, const char *comm,
		 uint8_t state, uint8_t dir, uint64_t ns)
{
	struct bp_wake_row k = { .pid = pid, .waker_pid = waker, .waker_tid = waker,
				 .state = state, .dir = dir, .ctx = BP_WCTX_TASK }, *r;

	snprintf(k.comm, sizeof(k.comm), "%s", comm);
	r = bp_profile__wake_row(p, &k, true);
	assert_non_null(r);
	r->ns += ns;
	r->count++;
}

/*
 * One run of a network client, 40 ms: 12 on-CPU (4 ms of it sampled in
 * ld.so, 2 in exit), 24 waiting on the network, 4 for a CPU.
 */
/* a run that started at at and exited wall later, run of it on-CPU, one thread */
static struct bp_proc *exited_run(struct bp_profile *p, uint32_t pid, uint32_t ppid,
				  const char *comm, const char *cmdline, uint64_t at, uint64_t wall,
				  uint64_t run)
{
	struct bp_proc *pr = bld_proc(p, pid, ppid, comm, cmdline);
	struct bp_thread *t;

	pr->start_ns = at;
	pr->end_ns = at + wall;
	pr->exited = true;
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_RUNNING] = run;
	t = bld_thread(pr, pid, comm, run, pid);
	t->start_ns = at;
	t->end_ns = at + wall;
	t->steal_ns = 0;
	return pr;
}

static void client_run(struct bp_profile *p, uint32_t pid, uint32_t ppid, uint64_t at,
		       uint64_t wall)
{
	uint32_t ld = bld_frame(p, "_dl_relocate_object", "ld-linux-x86-64.so.2", NULL, NULL,
				0x100, false);
	uint32_t mainf = bld_frame(p, "main", "curl", NULL, NULL, 0x10, false);
	uint32_t ex = bld_frame(p, "do_exit", "[kernel]", NULL, NULL, 0x20, true);
	uint32_t mm = bld_frame(p, "exit_mmap", "[kernel]", NULL, NULL, 0x30, true);
	uint32_t poll = bld_frame(p, "poll", "libc.so.6", NULL, NULL, 0x40, false);
	uint64_t run = wall * 12 / 40, net = wall * 24 / 40, rq = wall - run - net;
	struct bp_proc *pr = exited_run(p, pid, ppid, "curl", "/usr/bin/curl -s http://x/item",
					at, wall, run);

	pr->tl_ns[BP_TS_NET] = net;
	pr->tl_ns[BP_TS_RUNQUEUE] = rq;
	pr->net_side_ns[BP_SIDE_CLIENT] = net;
	bld_sample(p, pid, pid, BP_KIND_ONCPU, BLD_STACK(p, ld), 2, run / 3);
	bld_sample(p, pid, pid, BP_KIND_ONCPU, BLD_STACK(p, mainf, ex, mm), 1, run / 6);
	bld_sample(p, pid, pid, BP_KIND_ONCPU, BLD_STACK(p, mainf), 3, run / 2);
	bld_sample(p, pid, pid, BP_KIND_NET, BLD_STACK(p, mainf, poll), 1, net);
	bld_sample(p, pid, pid, BP_KIND_RUNQUEUE, BLD_STACK(p, mainf), 1, rq);
}

/* sh -c 'for i in $(seq N); do curl ...; done': seq, then N runs of curl, one at a time */
static struct bp_profile *loop(uint32_t runs, uint64_t wall)
{
	struct bp_profile *p = base();
	struct bp_proc *sh = bld_proc(p, 1, 0, "sh", "sh -c for i in $(seq 10); do curl ...; done");
	struct bp_proc *seq = bld_proc(p, 2, 1, "seq", "seq 10");
	uint32_t f = bld_frame(p, "dash_main", "dash", NULL, NULL, 0x10, false), i;
	uint64_t at = T0 + 10 * MS, sleep = 0;
	struct bp_thread *t;

	sh->start_ns = T0 + 1;
	sh->have_timeline = true;
	t = bld_thread(sh, 1, "sh", 2 * MS, 1);
	t->steal_ns = 0;
	bld_sample(p, 1, 1, BP_KIND_ONCPU, BLD_STACK(p, f), 1, 2 * MS);
	seq->start_ns = T0 + 2 * MS;
	seq->end_ns = T0 + 3 * MS;
	seq->exited = true;
	seq->have_timeline = true;
	seq->tl_ns[BP_TS_RUNNING] = MS;
	bld_thread(seq, 2, "seq", MS, 2)->steal_ns = 0;
	/* the shell drains seq's output before it waits for it: a pipe wait seq ends */
	sh->pipe_dir_ns[BP_DIR_IN] = MS;
	woke(p, 1, 2, "seq", BP_TS_PIPE, BP_DIR_IN, MS);
	for (i = 0; i < runs; i++) {
		client_run(p, 10 + i, 1, at, wall);
		/* the shell's wait4 ends at each run's exit */
		woke(p, 1, 10 + i, "curl", BP_TS_SLEEP, BP_DIR_NONE, wall);
		sleep += wall;
		at += wall + MS;
	}
	sh->end_ns = at;
	sh->exited = true;
	sh->tl_ns[BP_TS_RUNNING] = 2 * MS;
	sh->tl_ns[BP_TS_PIPE] = MS;
	sh->tl_ns[BP_TS_SLEEP] = sleep;
	bld_sample(p, 1, 1, BP_KIND_SLEEP, BLD_STACK(p, f), runs, sleep);
	bld_sample(p, 1, 1, BP_KIND_PIPE, BLD_STACK(p, f), 1, MS);
	return p;
}

static void judge(const struct bp_profile *p, struct bp_summary *s)
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

static bool has_line(const char *const *lines, uint32_t n, const char *needle)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (strstr(lines[i], needle))
			return true;
	return false;
}

static void loop__ten_short_runs__one_job_on_summed_time(void **state)
{
	struct bp_profile *p = loop(10, 40 * MS);
	const struct bp_job *j;
	struct bp_summary s;
	uint32_t i;

	(void)state;
	judge(p, &s);
	assert_non_null(s.jobs);
	assert_int_equal(s.jobs->nr, 1);
	j = &s.jobs->j[0];
	assert_string_equal(j->name, "curl");
	assert_int_equal(j->nr, 10);
	assert_int_equal(j->ppid, 1);
	assert_true(j->median_s > 0.039 && j->median_s < 0.041);
	assert_true(j->total_s > 0.39 && j->total_s < 0.41);
	/* 0.4 s in all, not ten times 0.04 s: a verdict, not "record for longer" */
	assert_int_equal(j->verdict.cls, BP_CLASS_IO);
	assert_true(j->verdict.wait_net);
	assert_false(has_line(j->verdict.levers, j->verdict.nr_levers, "Record for longer"));
	/* 0.24 of 0.4 s on the network */
	assert_true(j->net_wait_s > 0.239 && j->net_wait_s < 0.241);
	/* start-up: 3 of every 6 samples (ld.so 2, exit 1) */
	assert_int_equal(j->st.samples, 60);
	assert_int_equal(j->st.loader, 20);
	assert_int_equal(j->st.exit, 10);
	assert_int_equal(j->st.exec, 0);
	assert_true(has_line(j->verdict.evidence, j->verdict.nr_evidence, "process start-up"));
	assert_true(has_line(j->verdict.levers, j->verdict.nr_levers, "Run them concurrently"));
	/* half of (12 on-CPU + 4 run queue) of 40 ms: 20%, the start-up lever's threshold */
	assert_true(j->st.share > 0.199 && j->st.share < 0.201);
	/* every run, and the shell that waited for them, says the job's verdict */
	for (i = 0; i < 10; i++) {
		const struct bp_verdict *v = ps_of(&s, 10 + i)->verdict;

		assert_non_null(v);
		assert_int_equal(v->cls, BP_CLASS_IO);
		assert_non_null(strstr(v->evidence[0], "judged together"));
		assert_non_null(bp_job_of(&s, ps_of(&s, 10 + i) - s.procs));
	}
	assert_true(j->parent_waits);
	assert_int_equal(ps_of(&s, 1)->verdict->cls, BP_CLASS_IO);
	assert_non_null(strstr(ps_of(&s, 1)->verdict->evidence[0], "waiting for its children"));
	assert_null(bp_job_of(&s, ps_of(&s, 1) - s.procs));
	/* the command's verdict is the job's, led by the path */
	assert_true(s.have_overall);
	assert_int_equal(s.overall.cls, BP_CLASS_IO);
	assert_non_null(strstr(s.overall.evidence[0], "waiting for 10 runs of curl"));
	assert_true(j->critical);
	/* $(seq 10) feeds the shell: no pipeline */
	assert_int_equal(s.waits->nr, 0);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void loop__four_runs__no_job(void **state)
{
	struct bp_profile *p = loop(BP_JOB_MIN_RUNS - 1, 40 * MS);
	struct bp_summary s;

	(void)state;
	judge(p, &s);
	assert_null(s.jobs);
	assert_int_equal(s.waits->nr, 0);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void loop__long_runs__no_job(void **state)
{
	/* five runs of 1.2 s: each long enough to be judged alone */
	struct bp_profile *p = loop(5, 1200 * MS);
	struct bp_summary s;

	(void)state;
	p->end_ns = T0 + 8 * SEC;
	judge(p, &s);
	assert_null(s.jobs);
	bp_summary_free(&s);
	bp_profile__free(p);
}

/*
 * Runs that only waited themselves (wrappers waiting for their own
 * children): the job is idle, and no answer for the shell that waited.
 */
static void loop__idle_runs__shell_keeps_its_own_verdict(void **state)
{
	struct bp_profile *p = base();
	struct bp_proc *sh = bld_proc(p, 1, 0, "sh", "sh -c for i in ...; do sleep 0.04; done");
	uint32_t f = bld_frame(p, "x", "sleep", NULL, NULL, 0x10, false), i;
	uint64_t at = T0 + MS;
	struct bp_summary s;

	(void)state;
	sh->start_ns = T0 + 1;
	sh->have_timeline = true;
	bld_thread(sh, 1, "sh", MS, 1)->steal_ns = 0;
	for (i = 0; i < 10; i++) {
		struct bp_proc *pr = bld_proc(p, 10 + i, 1, "sleep", "sleep 0.04");

		pr->start_ns = at;
		pr->end_ns = at + 40 * MS;
		pr->exited = true;
		pr->have_timeline = true;
		pr->tl_ns[BP_TS_SLEEP] = 40 * MS;
		bld_thread(pr, 10 + i, "sleep", 0, 10 + i)->steal_ns = 0;
		bld_sample(p, 10 + i, 10 + i, BP_KIND_SLEEP, BLD_STACK(p, f), 1, 40 * MS);
		woke(p, 1, 10 + i, "sleep", BP_TS_SLEEP, BP_DIR_NONE, 40 * MS);
		at += 41 * MS;
	}
	sh->end_ns = at;
	sh->exited = true;
	sh->tl_ns[BP_TS_SLEEP] = at - T0 - 1;
	bld_sample(p, 1, 1, BP_KIND_SLEEP, BLD_STACK(p, f), 10, at - T0 - 1);
	judge(p, &s);
	assert_non_null(s.jobs);
	assert_int_equal(s.jobs->j[0].verdict.cls, BP_CLASS_IDLE);
	assert_true(s.jobs->j[0].parent_waits);
	assert_false(s.jobs->j[0].critical);
	assert_null(strstr(ps_of(&s, 1)->verdict->evidence[0], "waiting for its children"));
	bp_summary_free(&s);
	bp_profile__free(p);
}

/*
 * Ten CPU-bound runs of a program whose hottest leaf is the kernel (a
 * system call's paravirtualized interrupt toggle on 3 of every 6 samples,
 * under the program's work(); work() itself on 2, main on 1): the advice
 * names work(), the code the user can change, with the kernel as the
 * reason, not "a better algorithm in pvm_irq_enable".
 */
static void loop__kernel_leaf_under_own_code__advice_names_own_code(void **state)
{
	struct bp_profile *p = base();
	uint32_t mainf = bld_frame(p, "main", "crunch", NULL, NULL, 0x10, false);
	uint32_t work = bld_frame(p, "work", "crunch", NULL, NULL, 0x40, false);
	uint32_t sys = bld_frame(p, "__x64_sys_getppid", "[kernel]", NULL, NULL, 0x30, true);
	uint32_t irq = bld_frame(p, "pvm_irq_enable", "[kernel]", NULL, NULL, 0x20, true);
	uint32_t shf = bld_frame(p, "dash_main", "dash", NULL, NULL, 0x10, false);
	uint64_t at = T0 + MS, run = 30 * MS;
	const struct bp_verdict *v;
	struct bp_proc *sh;
	struct bp_summary s;
	uint32_t i;

	(void)state;
	sh = bld_proc(p, 1, 0, "sh", "sh -c for f in *.dat; do crunch $f; done");
	sh->start_ns = T0 + 1;
	bld_thread(sh, 1, "sh", MS, 1)->steal_ns = 0;
	bld_sample(p, 1, 1, BP_KIND_ONCPU, BLD_STACK(p, shf), 1, MS);
	for (i = 0; i < 10; i++) {
		exited_run(p, 10 + i, 1, "crunch", "crunch x.dat", at, run, run);
		bld_sample(p, 10 + i, 10 + i, BP_KIND_ONCPU, BLD_STACK(p, mainf, work, sys, irq),
			   3, run / 2);
		bld_sample(p, 10 + i, 10 + i, BP_KIND_ONCPU, BLD_STACK(p, mainf, work), 2, run / 3);
		bld_sample(p, 10 + i, 10 + i, BP_KIND_ONCPU, BLD_STACK(p, mainf), 1, run / 6);
		at += run + MS;
	}
	judge(p, &s);
	assert_non_null(s.jobs);
	assert_int_equal(s.jobs->nr, 1);
	v = &s.jobs->j[0].verdict;
	assert_int_equal(v->cls, BP_CLASS_CPU);
	/* work() is the innermost own frame on 5 of 6 samples; 3 of those 5 in the kernel */
	assert_true(has_line(v->evidence, v->nr_evidence,
			     "work spends 60% of its time in __x64_sys_getppid"));
	assert_true(has_line(v->evidence, v->nr_evidence, "work is 83% of wall time"));
	assert_true(has_line(v->levers, v->nr_levers, "Tune work first"));
	assert_false(has_line(v->levers, v->nr_levers, "pvm_irq_enable"));
	assert_false(has_line(v->evidence, v->nr_evidence, "pvm_irq_enable is"));
	/* each run says the job's verdict */
	assert_true(has_line(ps_of(&s, 10)->verdict->levers, ps_of(&s, 10)->verdict->nr_levers,
			     "Tune work first"));
	bp_summary_free(&s);
	bp_profile__free(p);
}

/* siblings connected by a pipe stay a pipeline: only parent and child are not */
static void siblings_through_a_pipe__still_a_pipeline(void **state)
{
	struct bp_profile *p = base();
	struct bp_proc *a = bld_proc(p, 10, 1, "cat", "cat f");
	struct bp_proc *b = bld_proc(p, 11, 1, "wc", "wc -c");
	uint32_t f = bld_frame(p, "x", "x", NULL, NULL, 0x10, false);
	struct bp_summary s;

	(void)state;
	bld_proc(p, 1, 0, "sh", "sh -c cat f | wc -c");
	a->start_ns = b->start_ns = T0 + 1;
	bld_thread(a, 10, "cat", SEC, 10);
	bld_thread(b, 11, "wc", SEC / 10, 11);
	bld_sample(p, 10, 10, BP_KIND_ONCPU, BLD_STACK(p, f), 100, SEC);
	bld_sample(p, 11, 11, BP_KIND_PIPE, BLD_STACK(p, f), 10, 3 * SEC);
	b->pipe_dir_ns[BP_DIR_IN] = 3 * SEC;
	woke(p, 11, 10, "cat", BP_TS_PIPE, BP_DIR_IN, 3 * SEC);
	judge(p, &s);
	assert_int_equal(s.waits->nr, 1);
	assert_int_equal(s.waits->pl[0].nr_stages, 2);
	bp_summary_free(&s);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loop__ten_short_runs__one_job_on_summed_time),
		cmocka_unit_test(loop__four_runs__no_job),
		cmocka_unit_test(loop__long_runs__no_job),
		cmocka_unit_test(loop__idle_runs__shell_keeps_its_own_verdict),
		cmocka_unit_test(loop__kernel_leaf_under_own_code__advice_names_own_code),
		cmocka_unit_test(siblings_through_a_pipe__still_a_pipeline),
	};

	return cmocka_run_group_tests_name("jobs", tests, NULL, NULL);
}
