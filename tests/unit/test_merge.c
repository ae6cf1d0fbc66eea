// SPDX-License-Identifier: GPL-2.0
/*
 * Merging profiles (agent/model/merge.c), as the agent adds one-second
 * slices into windows and captures: a profile merged into an empty one
 * like it renders the same report; merged twice, everything additive
 * doubles and the rest stays; frames and stacks are re-interned by value;
 * the newer process facts win; the time span and the busy share cover both.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "export/folded.h"
#include "model/merge.h"
#include "unit/builders.h"

#define SEC	1000000000ULL

/* an empty profile like p, with p merged into it */
static struct bp_profile *copy_by_merge(const struct bp_profile *p)
{
	struct bp_profile *q = bp_profile__new_like(p, p->start_ns);

	assert_non_null(q);
	assert_int_equal(bp_profile__merge(q, p), 0);
	return q;
}

static char *folded(const struct bp_profile *p)
{
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_export_folded(p, &b), 0);
	return b.data ? b.data : strdup("");
}

static void merge__into_empty_like__same_report(void **state)
{
	struct bp_profile *p = rich_profile(), *q = copy_by_merge(p);
	char *a = json_report(p), *b = json_report(q);

	assert_string_equal(a, b);
	assert_true(q->start_ns == p->start_ns);
	assert_true(q->end_ns == p->end_ns);
	assert_true(q->start_unix_ns == p->start_unix_ns);
	assert_true(q->machine_busy == p->machine_busy);
	assert_memory_equal(q->stats.v, p->stats.v, sizeof(p->stats.v));
	assert_memory_equal(q->ucounts, p->ucounts, sizeof(p->ucounts));
	assert_int_equal(q->nr_samples, p->nr_samples);
	assert_int_equal(q->nr_procs, p->nr_procs);
	assert_int_equal(q->nr_io_rows, p->nr_io_rows);
	free(a);
	free(b);
	bp_profile__free(q);
	bp_profile__free(p);
}

static void merge__twice__additive_doubles_facts_stay(void **state)
{
	struct bp_profile *p = rich_profile(), *q = copy_by_merge(p);
	const struct bp_proc *pp, *qp;
	const struct bp_thread *pt, *qt;
	uint32_t i, k;

	assert_int_equal(bp_profile__merge(q, p), 0);
	assert_int_equal(q->nr_samples, p->nr_samples);
	for (i = 0; i < p->nr_samples; i++) {
		assert_true(q->samples[i].count == 2 * p->samples[i].count);
		assert_true(q->samples[i].ns == 2 * p->samples[i].ns);
	}
	for (i = 0; i < BP_STAT__MAX; i++)
		assert_true(q->stats.v[i] == 2 * p->stats.v[i]);
	assert_true(q->user_stacks_cut == 2 * p->user_stacks_cut);
	assert_true(q->io_done_unseen == 2 * p->io_done_unseen);
	for (i = 0; i < p->nr_io_rows; i++) {
		assert_true(q->io_rows[i].st.ops == 2 * p->io_rows[i].st.ops);
		assert_true(q->io_rows[i].st.lat_ns == 2 * p->io_rows[i].st.lat_ns);
		for (k = 0; k < BP_HIST_SLOTS; k++)
			assert_true(q->io_rows[i].st.hist[k] == 2 * p->io_rows[i].st.hist[k]);
	}
	for (i = 0; i < p->nr_io_devs; i++) {
		assert_true(q->io_devs[i].busy_ns == 2 * p->io_devs[i].busy_ns);
		assert_true(q->io_devs[i].max_inflight == p->io_devs[i].max_inflight);
		assert_string_equal(q->io_devs[i].name, p->io_devs[i].name);
	}

	pp = bp_profile__proc(p, 100, false);
	qp = bp_profile__proc(q, 100, false);
	assert_non_null(qp);
	for (k = 0; k < BP_TS__MAX; k++)
		assert_true(qp->tl_ns[k] == 2 * pp->tl_ns[k]);
	assert_true(qp->cycles == 2 * pp->cycles);
	assert_true(qp->pmu_seconds == 2 * pp->pmu_seconds);
	/* the latest memory probe, not a sum */
	assert_true(qp->wss_max == pp->wss_max);
	assert_true(qp->rss == pp->rss);
	assert_true(qp->end_ns == pp->end_ns);
	assert_int_equal(qp->nr_threads, pp->nr_threads);
	pt = &pp->threads[0];
	qt = &qp->threads[0];
	assert_true(qt->oncpu_ns == 2 * pt->oncpu_ns);
	assert_true(qt->steal_ns == 2 * pt->steal_ns);
	assert_true(qt->switches == 2 * pt->switches);
	assert_true(qt->wake_lat_ns == 2 * pt->wake_lat_ns);
	assert_true(qt->wake_lat_max == pt->wake_lat_max);
	assert_true(qt->wake_hist[BP_HIST_SLOTS - 1] == 2 * pt->wake_hist[BP_HIST_SLOTS - 1]);
	assert_true(qt->start_ns == pt->start_ns);
	/* the same time span: the busy share is the same */
	assert_true(q->end_ns == p->end_ns);
	assert_true(fabs(q->machine_busy - p->machine_busy) < 1e-15);
	bp_profile__free(q);
	bp_profile__free(p);
}

static void merge__frames_and_stacks_by_value(void **state)
{
	struct bp_profile *a = bp_profile__new(), *b = bp_profile__new();
	uint32_t x, y, z;
	char *f;

	assert_non_null(a);
	assert_non_null(b);
	bld_proc(a, 10, 1, "app", NULL);
	x = bld_frame(a, "x", "app", NULL, NULL, 0x10, false);
	y = bld_frame(a, "y", "app", NULL, NULL, 0x20, false);
	bld_sample(a, 10, 10, BP_KIND_ONCPU, BLD_STACK(a, x, y), 5, 5000);

	/* the same functions under other ids, and one new one */
	bld_proc(b, 10, 1, "app", NULL);
	z = bld_frame(b, "z", "app", NULL, NULL, 0x30, false);
	y = bld_frame(b, "y", "app", NULL, NULL, 0x20, false);
	x = bld_frame(b, "x", "app", NULL, NULL, 0x10, false);
	bld_sample(b, 10, 10, BP_KIND_ONCPU, BLD_STACK(b, x, y), 2, 2000);
	bld_sample(b, 10, 10, BP_KIND_ONCPU, BLD_STACK(b, x, y, z), 1, 1000);
	bld_sample(b, 10, 11, BP_KIND_IO, BLD_STACK(b, z), 1, 7000);

	assert_int_equal(bp_profile__merge(a, b), 0);
	assert_int_equal(a->nr_frames, 3);
	assert_int_equal(a->nr_stacks, 3);
	assert_int_equal(a->nr_samples, 3);
	f = folded(a);
	assert_string_equal(f, "app;x;y 7\napp;x;y;z 1\n");
	free(f);
	bp_profile__free(b);
	bp_profile__free(a);
}

static void merge__newer_facts_win_unknown_do_not(void **state)
{
	struct bp_profile *w = bp_profile__new(), *s1 = bp_profile__new(), *s2 = bp_profile__new();
	struct bp_proc *pr;
	struct bp_thread *t;

	assert_non_null(w);
	assert_non_null(s1);
	assert_non_null(s2);
	/* the first slice saw the process before /proc was read */
	pr = bld_proc(s1, 42, 0, "sh", NULL);
	pr->start_ns = 5 * SEC;
	assert_non_null(bp_proc__thread(pr, 42, "sh"));
	assert_int_equal(bp_profile__merge(w, s1), 0);
	/* the second after an exec, with its facts; then it exited */
	pr = bld_proc(s2, 42, 7, "python3", "python3 app.py");
	pr->start_ns = 6 * SEC;
	pr->exited = true;
	pr->end_ns = 9 * SEC;
	t = bp_proc__thread(pr, 42, "python3");
	assert_non_null(t);
	assert_int_equal(bp_profile__merge(w, s2), 0);
	/* a later slice without facts changes none of them */
	bp_profile__free(s1);
	s1 = bp_profile__new();
	assert_non_null(s1);
	pr = bld_proc(s1, 42, 0, "stale", NULL);
	assert_non_null(bp_proc__thread(pr, 42, "stale"));
	assert_int_equal(bp_profile__merge(w, s1), 0);

	pr = bp_profile__proc(w, 42, false);
	assert_non_null(pr);
	assert_string_equal(pr->comm, "python3");
	assert_string_equal(pr->cmdline, "python3 app.py");
	assert_int_equal(pr->ppid, 7);
	assert_true(pr->have_meta);
	assert_true(pr->start_ns == 5 * SEC);	/* the earliest */
	assert_true(pr->exited);
	assert_true(pr->end_ns == 9 * SEC);
	assert_int_equal(pr->nr_threads, 1);
	/* a thread's comm follows the newest slice that named it */
	assert_string_equal(pr->threads[0].comm, "stale");
	bp_profile__free(s1);
	bp_profile__free(s2);
	bp_profile__free(w);
}

static void merge__span_and_busy_share_cover_both(void **state)
{
	struct bp_profile *d = bp_profile__new(), *s = bp_profile__new();

	assert_non_null(d);
	assert_non_null(s);
	d->start_ns = 10 * SEC;
	d->end_ns = 20 * SEC;
	d->start_unix_ns = 1000 * (int64_t)SEC;
	d->machine_busy = 0.5;
	s->start_ns = 5 * SEC;
	s->end_ns = 15 * SEC;
	s->start_unix_ns = 995 * (int64_t)SEC;
	s->machine_busy = 0.8;
	assert_int_equal(bp_profile__merge(d, s), 0);
	assert_true(d->start_ns == 5 * SEC);
	assert_true(d->start_unix_ns == 995 * (int64_t)SEC);
	assert_true(d->end_ns == 20 * SEC);
	/* weighted by each part's length: 10 s at 0.5, 10 s at 0.8 */
	assert_true(fabs(d->machine_busy - 0.65) < 1e-12);

	/* an unknown share leaves the known one; a known one replaces an unknown one */
	s->machine_busy = -1;
	s->end_ns = 30 * SEC;
	assert_int_equal(bp_profile__merge(d, s), 0);
	assert_true(d->end_ns == 30 * SEC);
	assert_true(fabs(d->machine_busy - 0.65) < 1e-12);
	d->machine_busy = -1;
	s->machine_busy = 0.25;
	assert_int_equal(bp_profile__merge(d, s), 0);
	assert_true(d->machine_busy == 0.25);
	bp_profile__free(s);
	bp_profile__free(d);
}

static void new_like__settings_outlive_the_source(void **state)
{
	struct bp_profile *p = rich_profile(), *q;

	p->pmu = true;
	p->system_wide = true;
	q = bp_profile__new_like(p, p->start_ns + 3 * SEC);
	assert_non_null(q);
	bp_profile__free(p);
	/* its strings are its own: the source is gone (ASan would see a dangling one) */
	assert_string_equal(q->event, "cpu-clock");
	assert_string_equal(q->llc_source, "cpuid 0x80000006 (one CCX: 32 MiB)");
	assert_int_equal(q->hz, 499);
	assert_int_equal(q->ncpus, 2);
	assert_true(q->pmu);
	assert_true(q->system_wide);
	assert_true(q->offcpu_enabled);
	assert_true(q->io_enabled);
	assert_true(q->llc_bytes == 33554432);
	/* an empty window starting then, with the wall clock moved along */
	assert_true(q->end_ns == q->start_ns);
	assert_true(q->start_unix_ns == 1764437000123456789LL + 3 * (int64_t)SEC);
	assert_int_equal(q->nr_samples, 0);
	assert_int_equal(q->nr_procs, 0);
	assert_true(q->stats.v[0] == 0 && q->user_stacks_cut == 0);
	assert_true(q->machine_busy < 0);
	bp_profile__free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge__into_empty_like__same_report),
		cmocka_unit_test(merge__twice__additive_doubles_facts_stay),
		cmocka_unit_test(merge__frames_and_stacks_by_value),
		cmocka_unit_test(merge__newer_facts_win_unknown_do_not),
		cmocka_unit_test(merge__span_and_busy_share_cover_both),
		cmocka_unit_test(new_like__settings_outlive_the_source),
	};

	return cmocka_run_group_tests_name("merge", tests, NULL, NULL);
}
