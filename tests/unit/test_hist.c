// SPDX-License-Identifier: GPL-2.0
/* log2 latency histograms: slots, quantiles, and agreement with the BPF twin */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/hist.h"

/* bits.bpf.h is BPF code; it compiles as plain C given the kernel's spelling */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "bits.bpf.h"

/* Debian 12's cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

static void slot__bounds_of_each_bucket(void **state)
{
	uint32_t k;

	assert_int_equal(bp_hist_slot(0), 0);
	assert_int_equal(bp_hist_slot(1), 0);
	assert_int_equal(bp_hist_slot(2), 1);
	assert_int_equal(bp_hist_slot(3), 1);
	assert_int_equal(bp_hist_slot(4), 2);
	assert_int_equal(bp_hist_slot(1023), 9);
	assert_int_equal(bp_hist_slot(1024), 10);
	for (k = 1; k < BP_HIST_SLOTS; k++) {
		assert_int_equal(bp_hist_slot(bp_hist_lo(k)), k);
		assert_int_equal(bp_hist_slot(bp_hist_hi(k) - 1), k);
		assert_int_equal(bp_hist_lo(k), bp_hist_hi(k - 1));
	}
	assert_int_equal(bp_hist_lo(0), 0);
	assert_int_equal(bp_hist_hi(0), 2);
}

static void slot__huge_values__capped_at_the_last_slot(void **state)
{
	assert_int_equal(bp_hist_slot(1ULL << 31), BP_HIST_SLOTS - 1);
	assert_int_equal(bp_hist_slot(1ULL << 40), BP_HIST_SLOTS - 1);
	assert_int_equal(bp_hist_slot(UINT64_MAX), BP_HIST_SLOTS - 1);
}

static void slot__bpf_twin_agrees(void **state)
{
	uint64_t ns;
	int shift, d;

	/* every power of two and its neighbours, in ns, up to 2^63 */
	for (shift = 0; shift < 64; shift++) {
		for (d = -1; d <= 1; d++) {
			ns = (1ULL << shift) + d;
			assert_int_equal(bp_hist_slot_ns(ns), bp_hist_slot(ns / 1000));
			assert_int_equal(bp_log2(ns), ns ? 63 - __builtin_clzll(ns) : 0);
		}
	}
	for (ns = 0; ns < 5000000; ns += 997)
		assert_int_equal(bp_hist_slot_ns(ns), bp_hist_slot(ns / 1000));
	assert_int_equal(bp_hist_slot_ns(UINT64_MAX), BP_HIST_SLOTS - 1);
}

static void add_merge_count(void **state)
{
	uint64_t a[BP_HIST_SLOTS] = {}, b[BP_HIST_SLOTS] = {};

	bp_hist_add(a, 1, 2);
	bp_hist_add(a, 100, 3);
	bp_hist_add(b, 100, 1);
	bp_hist_add(b, 5000, 4);
	bp_hist_merge(a, b);
	assert_int_equal(a[0], 2);
	assert_int_equal(a[6], 4);
	assert_int_equal(a[12], 4);
	assert_int_equal(bp_hist_count(a), 10);
	assert_int_equal(bp_hist_count(b), 5);
}

static void quantile__empty__zero(void **state)
{
	uint64_t h[BP_HIST_SLOTS] = {};

	assert_near(bp_hist_quantile(h, 0.5), 0, 0);
	assert_near(bp_hist_mean(h), 0, 0);
}

static void quantile__one_bucket__interpolated_inside_it(void **state)
{
	uint64_t h[BP_HIST_SLOTS] = {};

	h[6] = 100;	/* [64, 128) us */
	assert_near(bp_hist_quantile(h, 0.0), 64, 1e-9);
	assert_near(bp_hist_quantile(h, 0.5), 96, 1e-9);
	assert_near(bp_hist_quantile(h, 0.99), 64 + 64 * 0.99, 1e-9);
	assert_near(bp_hist_quantile(h, 1.0), 128, 1e-9);
	/* out of range q is clamped */
	assert_near(bp_hist_quantile(h, -1), 64, 1e-9);
	assert_near(bp_hist_quantile(h, 2), 128, 1e-9);
	assert_near(bp_hist_mean(h), 96, 1e-9);
}

static void quantile__tail_bucket__p99_lands_in_it(void **state)
{
	uint64_t h[BP_HIST_SLOTS] = {};

	/* 98 fast requests in [64, 128) us, 2 slow ones in [1024, 2048) us */
	h[6] = 98;
	h[10] = 2;
	/* rank 50 of 98 in the first bucket */
	assert_near(bp_hist_quantile(h, 0.5), 64 + 64 * 50.0 / 98, 1e-9);
	/* rank 99: the first of the two slow ones, half way through their bucket */
	assert_near(bp_hist_quantile(h, 0.99), 1024 + 1024 * 0.5, 1e-9);
	/* exactly at a bucket's end: the top of the fast bucket */
	assert_near(bp_hist_quantile(h, 0.98), 128, 1e-9);
	assert_near(bp_hist_mean(h), (98 * 96.0 + 2 * 1536.0) / 100, 1e-9);
}

static void quantile__slot_zero__starts_at_zero(void **state)
{
	uint64_t h[BP_HIST_SLOTS] = {};

	h[0] = 4;
	assert_near(bp_hist_quantile(h, 0.5), 1, 1e-9);
	assert_near(bp_hist_mean(h), 1, 1e-9);
}

static void quantile__monotonic_in_q(void **state)
{
	uint64_t h[BP_HIST_SLOTS] = {};
	double q, prev = -1;

	h[3] = 5;
	h[7] = 1;
	h[9] = 30;
	h[20] = 2;
	for (q = 0; q <= 1.0; q += 0.01) {
		double v = bp_hist_quantile(h, q);

		assert_true(v >= prev);
		prev = v;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slot__bounds_of_each_bucket),
		cmocka_unit_test(slot__huge_values__capped_at_the_last_slot),
		cmocka_unit_test(slot__bpf_twin_agrees),
		cmocka_unit_test(add_merge_count),
		cmocka_unit_test(quantile__empty__zero),
		cmocka_unit_test(quantile__one_bucket__interpolated_inside_it),
		cmocka_unit_test(quantile__tail_bucket__p99_lands_in_it),
		cmocka_unit_test(quantile__slot_zero__starts_at_zero),
		cmocka_unit_test(quantile__monotonic_in_q),
	};

	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
