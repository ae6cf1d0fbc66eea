// SPDX-License-Identifier: GPL-2.0
/* diff: two hand-made profiles compared: time per class, shares, order, JSON */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "analyze/diff.h"
#include "model/profile.h"
#include "util/json.h"

#define PERIOD 10101010ULL	/* cpu-clock at 99 Hz, ns */

#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

static void add(struct bp_profile *p, enum bp_kind kind, const char *leaf, bool kernel,
		uint64_t count, uint64_t ns)
{
	struct bp_frame m = { .name = "main", .module = "app", .offset = 0x10 };
	struct bp_frame l = { .name = leaf, .module = kernel ? "[kernel]" : "app", .offset = 0x20,
			      .kernel = kernel };
	uint32_t fr[2];
	int64_t st;

	fr[0] = bp_profile__frame(p, &m);
	fr[1] = bp_profile__frame(p, &l);
	st = bp_profile__stack(p, fr, 2);
	assert_true(st >= 0);
	assert_int_equal(bp_profile__add(p, 1, 1, kind, st, count, ns), 0);
}

static struct bp_profile *profile(void)
{
	struct bp_profile *p = bp_profile__new();

	assert_non_null(p);
	p->hz = 99;
	p->ncpus = 2;
	return p;
}

/*
 * before: alpha 60, beta 40 (on-CPU), 2 s of io
 * after:  alpha 30, beta 40, gamma 30, 1 s of io, 0.5 s of lock
 */
static void diff__shares_order_and_time(void **state)
{
	struct bp_profile *a = profile(), *b = profile();
	struct bp_diff d;
	uint32_t i;

	add(a, BP_KIND_ONCPU, "alpha", false, 60, 60 * PERIOD);
	add(a, BP_KIND_ONCPU, "beta", false, 40, 40 * PERIOD);
	add(a, BP_KIND_IO, "io_schedule", true, 0, 2000000000ULL);
	add(b, BP_KIND_ONCPU, "alpha", false, 30, 30 * PERIOD);
	add(b, BP_KIND_ONCPU, "beta", false, 40, 40 * PERIOD);
	add(b, BP_KIND_ONCPU, "gamma", false, 30, 30 * PERIOD);
	add(b, BP_KIND_IO, "io_schedule", true, 0, 1000000000ULL);
	add(b, BP_KIND_LOCK, "futex_wait", true, 0, 500000000ULL);

	assert_int_equal(bp_diff(a, b, &d), 0);
	assert_int_equal(d.total[0], 100);
	assert_int_equal(d.total[1], 100);
	assert_near(d.time_s[0][BP_KIND_ONCPU], 100 * PERIOD / 1e9, 1e-9);
	assert_near(d.time_s[0][BP_KIND_IO], 2.0, 1e-9);
	assert_near(d.time_s[1][BP_KIND_IO], 1.0, 1e-9);
	assert_near(d.time_s[1][BP_KIND_LOCK], 0.5, 1e-9);
	/* only on-CPU leaves are functions of the diff */
	assert_int_equal(d.nr_fns, 3);
	/* alpha -30 points and gamma +30 tie: by key; beta unchanged, last */
	assert_string_equal(d.fns[0].label, "alpha");
	assert_string_equal(d.fns[1].label, "gamma");
	assert_string_equal(d.fns[2].label, "beta");
	assert_near(bp_diff_share(&d, &d.fns[0], 0), 0.6, 1e-12);
	assert_near(bp_diff_share(&d, &d.fns[0], 1), 0.3, 1e-12);
	assert_near(bp_diff_share(&d, &d.fns[1], 0), 0, 1e-12);
	assert_near(d.biggest, 0.3, 1e-12);
	for (i = 0; i < d.nr_fns; i++)
		assert_string_equal(d.fns[i].module, "app");
	bp_diff_free(&d);
	bp_profile__free(a);
	bp_profile__free(b);
}

static void diff__same_profile__no_change(void **state)
{
	struct bp_profile *a = profile();
	struct bp_diff d;

	add(a, BP_KIND_ONCPU, "alpha", false, 10, 10 * PERIOD);
	add(a, BP_KIND_ONCPU, "schedule", true, 5, 5 * PERIOD);
	assert_int_equal(bp_diff(a, a, &d), 0);
	assert_int_equal(d.nr_fns, 2);
	assert_near(d.biggest, 0, 0);
	/* a kernel function and a user one of other names stay apart */
	assert_true(d.fns[0].kernel != d.fns[1].kernel);
	bp_diff_free(&d);
	bp_profile__free(a);
}

static void json__parses_back_with_top_limit(void **state)
{
	struct bp_profile *a = profile(), *b = profile();
	struct bp_buf out = BP_BUF_INIT;
	const struct bp_json *fns, *f0;
	struct bp_json *j;
	struct bp_diff d;
	char err[128];

	add(a, BP_KIND_ONCPU, "alpha", false, 3, 3 * PERIOD);
	add(b, BP_KIND_ONCPU, "alpha", false, 1, PERIOD);
	add(b, BP_KIND_ONCPU, "beta", false, 3, 3 * PERIOD);
	assert_int_equal(bp_diff(a, b, &d), 0);
	assert_int_equal(bp_diff_json(&d, "a.pb.gz", "b.pb.gz", 1, &out), 0);
	j = bp_json_parse(out.data, out.len, err, sizeof(err));
	if (!j)
		fail_msg("%s: %.*s", err, (int)out.len, out.data);
	assert_string_equal(bp_json_str(bp_json_get(j, "before")), "a.pb.gz");
	assert_int_equal(bp_json_num(bp_json_get(j, "after_samples")), 4);
	assert_non_null(bp_json_path(j, "time_s.on_cpu.before"));
	assert_non_null(bp_json_path(j, "time_s.other.after"));
	fns = bp_json_get(j, "functions");
	assert_int_equal(bp_json_len(fns), 1);
	f0 = bp_json_at(fns, 0);
	/* alpha 100% -> 25%, beta 0 -> 75%: alpha moved as far, and sorts first */
	assert_string_equal(bp_json_str(bp_json_get(f0, "function")), "alpha");
	assert_near(bp_json_num(bp_json_get(f0, "change")), -0.75, 1e-12);
	assert_false(bp_json_bool(bp_json_get(f0, "kernel")));
	bp_json_free(j);
	bp_buf_free(&out);
	bp_diff_free(&d);
	bp_profile__free(a);
	bp_profile__free(b);
}


/* a profile of runs with these wall and CPU times, hot in fn for all its on-CPU time */
static struct bp_profile *runs_profile(const char *fn, const double *wall, const double *cpu,
				       const double *rq, uint32_t n)
{
	struct bp_profile *p = profile();
	double total = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct bp_run r = { .pid = 100 + i, .wall_s = wall[i], .cpu_s = cpu[i],
				    .runqueue_s = rq ? rq[i] : 0 };

		assert_int_equal(bp_profile__add_run(p, &r), 0);
		total += cpu[i];
	}
	add(p, BP_KIND_ONCPU, fn, false, (uint64_t)(total * 99), (uint64_t)(total * 1e9));
	if (rq)
		for (i = 0; i < n; i++)
			add(p, BP_KIND_RUNQUEUE, "schedule", true, 1, (uint64_t)(rq[i] * 1e9));
	return p;
}

static void gate__same_medians_pass(void **state)
{
	struct bp_profile *a = runs_profile("work", (double[]){ 1.0, 1.02, 0.99 },
					    (double[]){ 0.98, 1.0, 0.97 }, NULL, 3);
	struct bp_profile *b = runs_profile("work", (double[]){ 1.01, 0.98, 1.3 },
					    (double[]){ 0.99, 0.97, 1.2 }, NULL, 3);
	struct bp_diff d;
	struct bp_gate g;

	assert_int_equal(bp_diff(a, b, &d), 0);
	assert_int_equal(bp_diff_gate(a, b, &d, 0.05, &g), 0);
	/* one slow run of three does not move the median */
	assert_near(g.side[0].wall_s, 1.0, 0);
	assert_near(g.side[1].wall_s, 1.01, 0);
	assert_near(g.side[1].cpu_s, 0.99, 0);
	assert_int_equal(g.side[1].runs, 3);
	assert_true(g.side[1].noisy);
	assert_near(g.wall_change, 0.01, 1e-12);
	assert_false(g.failed);
	bp_diff_free(&d);
	bp_profile__free(a);
	bp_profile__free(b);
}

static void gate__cpu_twenty_percent_slower_fails_naming_it(void **state)
{
	struct bp_profile *a = profile();
	struct bp_profile *b = runs_profile("work", (double[]){ 1.2, 1.2 }, (double[]){ 1.2, 1.2 },
					    NULL, 2);
	struct bp_diff d;
	struct bp_gate g;
	struct bp_run r = { .pid = 1, .wall_s = 1.0, .cpu_s = 1.0 };

	assert_int_equal(bp_profile__add_run(a, &r), 0);
	add(a, BP_KIND_ONCPU, "work", false, 99, 1000000000);
	add(b, BP_KIND_ONCPU, "helper", false, 9, 100000000);
	assert_int_equal(bp_diff(a, b, &d), 0);
	assert_int_equal(bp_diff_gate(a, b, &d, 0.1, &g), 0);
	assert_near(g.cpu_change, 0.2, 1e-12);
	assert_near(g.ready_change, 0.2, 1e-12);
	assert_true(g.cpu_slower);
	assert_true(g.wall_slower);
	assert_true(g.failed);
	/* per run: work 1.0 -> 1.2 s, helper 0 -> 0.05 s */
	assert_int_equal(g.nr_fns, 2);
	assert_string_equal(g.fns[0].fn->label, "work");
	assert_near(g.fns[0].before_s, 1.0, 1e-9);
	assert_near(g.fns[0].after_s, 1.2, 1e-9);
	assert_string_equal(g.fns[1].fn->label, "helper");
	assert_near(g.fns[1].after_s, 0.05, 1e-9);
	assert_true(g.nr_kinds >= 1);
	assert_int_equal(g.kinds[0].kind, BP_KIND_ONCPU);
	/* within a wider limit */
	assert_int_equal(bp_diff_gate(a, b, &d, 0.25, &g), 0);
	assert_false(g.failed);
	bp_diff_free(&d);
	bp_profile__free(a);
	bp_profile__free(b);
}

/* slower only by waiting for a CPU while others ran: load, not the code */
static void gate__wall_grown_by_cpu_waits_only_passes(void **state)
{
	struct bp_profile *a = runs_profile("work", (double[]){ 1.0, 1.0, 1.0 },
					    (double[]){ 1.0, 1.0, 1.0 }, NULL, 3);
	struct bp_profile *b = runs_profile("work", (double[]){ 1.5, 1.6, 1.4 },
					    (double[]){ 1.0, 1.01, 0.99 },
					    (double[]){ 0.5, 0.59, 0.41 }, 3);
	struct bp_diff d;
	struct bp_gate g;

	assert_int_equal(bp_diff(a, b, &d), 0);
	assert_int_equal(bp_diff_gate(a, b, &d, 0.1, &g), 0);
	assert_near(g.wall_change, 0.5, 1e-12);
	assert_near(g.ready_change, 0.0, 1e-12);
	assert_false(g.failed);
	/* what grew is named all the same */
	assert_int_equal(g.kinds[0].kind, BP_KIND_RUNQUEUE);
	bp_diff_free(&d);
	bp_profile__free(a);
	bp_profile__free(b);
}

/* without runs, each recording is one: its length and its on-CPU time */
static void gate__without_runs_compares_whole_recordings(void **state)
{
	struct bp_profile *a = profile(), *b = profile();
	struct bp_buf out = BP_BUF_INIT;
	struct bp_json *j;
	struct bp_diff d;
	struct bp_gate g;

	a->start_ns = 0;
	a->end_ns = 2000000000;
	b->start_ns = 0;
	b->end_ns = 2000000000;
	add(a, BP_KIND_ONCPU, "work", false, 100, 1000000000);
	add(b, BP_KIND_ONCPU, "work", false, 130, 1300000000);
	assert_int_equal(bp_diff(a, b, &d), 0);
	assert_int_equal(bp_diff_gate(a, b, &d, 0.2, &g), 0);
	assert_int_equal(g.side[0].runs, 0);
	assert_near(g.side[0].wall_s, 2.0, 0);
	assert_near(g.wall_change, 0, 0);
	assert_near(g.cpu_change, 0.3, 1e-12);
	assert_true(g.failed);
	assert_int_equal(bp_diff_json_gate(&d, &g, "a", "b", 5, &out), 0);
	j = bp_json_parse(out.data, out.len, NULL, 0);
	assert_non_null(j);
	assert_int_equal(bp_json_bool(bp_json_path(j, "gate.failed")), 1);
	assert_near(bp_json_num(bp_json_path(j, "gate.fail_above")), 0.2, 0);
	assert_near(bp_json_num(bp_json_path(j, "gate.cpu_change")), g.cpu_change, 0);
	assert_string_equal(bp_json_str(bp_json_path(j, "gate.grew[0].function")), "work");
	assert_near(bp_json_num(bp_json_path(j, "gate.after.cpu_s")), 1.3, 1e-9);
	bp_json_free(j);
	bp_buf_free(&out);
	bp_diff_free(&d);
	bp_profile__free(a);
	bp_profile__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff__shares_order_and_time),
		cmocka_unit_test(diff__same_profile__no_change),
		cmocka_unit_test(json__parses_back_with_top_limit),
		cmocka_unit_test(gate__same_medians_pass),
		cmocka_unit_test(gate__cpu_twenty_percent_slower_fails_naming_it),
		cmocka_unit_test(gate__wall_grown_by_cpu_waits_only_passes),
		cmocka_unit_test(gate__without_runs_compares_whole_recordings),
	};

	return cmocka_run_group_tests_name("diff", tests, NULL, NULL);
}
