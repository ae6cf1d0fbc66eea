// SPDX-License-Identifier: GPL-2.0
/* when the agent drains: forced, a busy process, rows filling the maps */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collect/drainpol.h"

#define SEC	1000000000ULL

/* the agent's maps at 99 Hz on 2 CPUs */
static const uint32_t entries[BP_PEND__MAX] = {
	[BP_PEND_ONCPU] = 4096, [BP_PEND_STACKS] = 4096, [BP_PEND_OFF] = 16384,
	[BP_PEND_WAKE] = 16384, [BP_PEND_NET] = 4096, [BP_PEND_IO] = 4096,
};

/* busy from 25 samples/s, every 2 s */
static void setup_pol(struct bp_drainpol *p)
{
	struct bp_drain_pend z = {};

	bp_drainpol__init(p, entries, 25, 2.0);
	bp_drainpol__flipped(p, &z, 100 * SEC, true);
}

static void quiet_seconds__nothing_due(void **state)
{
	struct bp_drainpol p;
	struct bp_drain_pend now = {};
	int s, m;

	setup_pol(&p);
	/* an idle machine: a few rows and samples a second, for a whole window */
	for (s = 1; s <= 10; s++) {
		for (m = 0; m < BP_PEND__MAX; m++)
			now.rows[m] += 40;
		now.samples += 3;
		assert_int_equal(bp_drainpol__decide(&p, &now, (100 + s) * SEC, false),
				 BP_DRAIN_NONE);
		assert_int_equal(p.why, BP_DRAIN_WHY_NONE);
	}
}

static void forced__full_whatever_the_counts(void **state)
{
	struct bp_drainpol p;
	struct bp_drain_pend now = {};

	setup_pol(&p);
	assert_int_equal(bp_drainpol__decide(&p, &now, 101 * SEC, true), BP_DRAIN_FULL);
	assert_int_equal(p.why, BP_DRAIN_WHY_FORCED);
}

static void rows_at_a_quarter_of_one_map__light(void **state)
{
	struct bp_drainpol p;
	struct bp_drain_pend now = {};

	setup_pol(&p);
	now.rows[BP_PEND_ONCPU] = 1023;
	assert_int_equal(bp_drainpol__decide(&p, &now, 101 * SEC, false), BP_DRAIN_NONE);
	now.rows[BP_PEND_ONCPU] = 1024;
	assert_int_equal(bp_drainpol__decide(&p, &now, 101 * SEC, false), BP_DRAIN_LIGHT);
	assert_int_equal(p.why, BP_DRAIN_WHY_ROWS);
	assert_int_equal(p.why_map, BP_PEND_ONCPU);
	assert_string_equal(bp_drainpol__map_name(p.why_map), "oncpu");
	/* drained: rows count from the flip on */
	bp_drainpol__flipped(&p, &now, 101 * SEC, false);
	now.rows[BP_PEND_ONCPU] += 100;
	assert_int_equal(bp_drainpol__decide(&p, &now, 102 * SEC, false), BP_DRAIN_NONE);
	assert_int_equal(p.why_map, -1);
	/* a larger map fills by its own size */
	now.rows[BP_PEND_OFF] = 4095;
	assert_int_equal(bp_drainpol__decide(&p, &now, 103 * SEC, false), BP_DRAIN_NONE);
	now.rows[BP_PEND_OFF] = 4096;
	assert_int_equal(bp_drainpol__decide(&p, &now, 103 * SEC, false), BP_DRAIN_LIGHT);
	assert_int_equal(p.why_map, BP_PEND_OFF);
}

/*
 * The rule that counted every map's rows against an eighth of the
 * smallest drained the bench's mix every ~5 s, its rows spread over four
 * maps (peaks 392 on-CPU rows, 223 off-CPU, 47 kernel stacks): no map
 * near full, and each drain freed rows that the next seconds made again.
 */
static void rows_spread_over_maps__no_drain(void **state)
{
	struct bp_drainpol p;
	struct bp_drain_pend now = {};
	int s;

	setup_pol(&p);
	for (s = 1; s <= 10; s++) {
		now.rows[BP_PEND_ONCPU] += 80;
		now.rows[BP_PEND_OFF] += 45;
		now.rows[BP_PEND_STACKS] += 12;
		now.rows[BP_PEND_WAKE] += 5;
		now.rows[BP_PEND_IO] += 2;
		assert_int_equal(bp_drainpol__decide(&p, &now, (100 + s) * SEC, false),
				 BP_DRAIN_NONE);
	}
}

static void map_not_created__never_due(void **state)
{
	struct bp_drainpol p;
	uint32_t e[BP_PEND__MAX];
	struct bp_drain_pend now = {};

	memcpy(e, entries, sizeof(e));
	e[BP_PEND_IO] = 0;
	bp_drainpol__init(&p, e, 0, 2.0);
	bp_drainpol__flipped(&p, &now, SEC, true);
	now.rows[BP_PEND_IO] = 1U << 30;
	assert_int_equal(bp_drainpol__decide(&p, &now, 2 * SEC, false), BP_DRAIN_NONE);
}

static void busy__light_every_two_seconds(void **state)
{
	struct bp_drainpol p;
	struct bp_drain_pend now = {};

	setup_pol(&p);
	/* one process on a CPU: 99 samples a second */
	now.samples = 99;
	assert_int_equal(bp_drainpol__decide(&p, &now, 101 * SEC, false), BP_DRAIN_NONE);
	now.samples = 198;
	assert_int_equal(bp_drainpol__decide(&p, &now, 102 * SEC, false), BP_DRAIN_LIGHT);
	assert_int_equal(p.why, BP_DRAIN_WHY_BUSY);
	bp_drainpol__flipped(&p, &now, 102 * SEC, false);
	/* the busy clock restarts at that drain, light as it was */
	now.samples += 99;
	assert_int_equal(bp_drainpol__decide(&p, &now, 103 * SEC, false), BP_DRAIN_NONE);
	now.samples += 99;
	assert_int_equal(bp_drainpol__decide(&p, &now, 104 * SEC, false), BP_DRAIN_LIGHT);
	assert_int_equal(p.why, BP_DRAIN_WHY_BUSY);
	/* what the session weighs against the busy processes' own CPU time */
	assert_int_equal(p.busy_samples, 198);
	assert_true(p.busy_s > 1.99 && p.busy_s < 2.01);
}

static void below_the_busy_rate__no_drain(void **state)
{
	struct bp_drainpol p;
	struct bp_drain_pend now = { .samples = 49 };

	setup_pol(&p);
	/* 24.5 samples/s over 2 s: no process can have a quarter of a CPU */
	assert_int_equal(bp_drainpol__decide(&p, &now, 102 * SEC, false), BP_DRAIN_NONE);
}

static void busy_rate_zero__never_busy(void **state)
{
	struct bp_drainpol p;
	struct bp_drain_pend now = { .samples = 100000 };

	bp_drainpol__init(&p, entries, 0, 2.0);
	bp_drainpol__flipped(&p, &(struct bp_drain_pend){}, SEC, true);
	assert_int_equal(bp_drainpol__decide(&p, &now, 10 * SEC, false), BP_DRAIN_NONE);
}

static void tiny_maps__limits_at_least_one(void **state)
{
	struct bp_drainpol p;
	uint32_t e[BP_PEND__MAX] = { [BP_PEND_NET] = 2 };
	struct bp_drain_pend now = {};

	bp_drainpol__init(&p, e, 0, 2.0);
	assert_int_equal(p.row_limit[BP_PEND_NET], 1);
	now.rows[BP_PEND_NET] = 1;
	assert_int_equal(bp_drainpol__decide(&p, &now, SEC, false), BP_DRAIN_LIGHT);
	assert_int_equal(p.why_map, BP_PEND_NET);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quiet_seconds__nothing_due),
		cmocka_unit_test(forced__full_whatever_the_counts),
		cmocka_unit_test(rows_at_a_quarter_of_one_map__light),
		cmocka_unit_test(rows_spread_over_maps__no_drain),
		cmocka_unit_test(map_not_created__never_due),
		cmocka_unit_test(busy__light_every_two_seconds),
		cmocka_unit_test(below_the_busy_rate__no_drain),
		cmocka_unit_test(busy_rate_zero__never_busy),
		cmocka_unit_test(tiny_maps__limits_at_least_one),
	};

	return cmocka_run_group_tests_name("drainpol", tests, NULL, NULL);
}
