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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff__shares_order_and_time),
		cmocka_unit_test(diff__same_profile__no_change),
		cmocka_unit_test(json__parses_back_with_top_limit),
	};

	return cmocka_run_group_tests_name("diff", tests, NULL, NULL);
}
