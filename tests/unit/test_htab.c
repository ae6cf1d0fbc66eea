// SPDX-License-Identifier: GPL-2.0
/*
 * The hash index (agent/util/htab.c): entries are found by key after any
 * mix of insertions and removals, with hashes that collide and runs that
 * wrap around the end of the table; removing what is not there is -ENOENT.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/htab.h"

#define N	3000

struct model {
	uint64_t key[N];
	bool live[N];
	uint64_t (*hash)(uint64_t key);
};

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct model *m = ctx;

	/* not m->live[]: a slot a removal left behind must show */
	return m->key[idx] == *(const uint64_t *)key;
}

/* few distinct hashes, near the end of a 64- and a 128-slot table: long runs that wrap */
static uint64_t clumped(uint64_t key)
{
	return 123 + key % 7;
}

static uint64_t spread(uint64_t key)
{
	return bp_hash_u64(key);
}

/* every live key is found at its index, every dead one not at all */
static void check(const struct bp_htab *h, const struct model *m, uint32_t n)
{
	uint32_t i, idx;
	size_t live = 0;

	for (i = 0; i < n; i++) {
		int err = bp_htab_find(h, m->hash(m->key[i]), key_eq, m, &m->key[i], &idx);

		if (m->live[i]) {
			live++;
			assert_int_equal(err, 0);
			assert_int_equal(idx, i);
		} else {
			assert_int_equal(err, -ENOENT);
		}
	}
	assert_int_equal(h->len, live);
}

static void run(uint64_t (*hash)(uint64_t), uint32_t n, uint32_t rounds)
{
	struct model *m = calloc(1, sizeof(*m));
	struct bp_htab h = {};
	uint64_t x = 88172645463325252ULL;
	uint32_t i, r;

	assert_non_null(m);
	m->hash = hash;
	for (i = 0; i < n; i++) {
		m->key[i] = i * 2654435761ULL + 1;
		assert_int_equal(bp_htab_insert(&h, hash(m->key[i]), i), 0);
		m->live[i] = true;
	}
	check(&h, m, n);
	for (r = 0; r < rounds; r++) {
		/* xorshift: a fixed sequence of removals and reuses */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = x % n;
		if (m->live[i]) {
			assert_int_equal(bp_htab_remove(&h, hash(m->key[i]), i), 0);
			m->live[i] = false;
			assert_int_equal(bp_htab_remove(&h, hash(m->key[i]), i), -ENOENT);
		} else {
			/* the slot reused for another key, as memprobe reuses a dropped process's */
			m->key[i] += 1000003;
			assert_int_equal(bp_htab_insert(&h, hash(m->key[i]), i), 0);
			m->live[i] = true;
		}
		if (r % 97 == 0)
			check(&h, m, n);
	}
	check(&h, m, n);
	bp_htab_free(&h);
	free(m);
}

static void remove__clumped_hashes_wrapping__all_found(void **state)
{
	run(clumped, 40, 5000);
}

static void remove__spread_hashes_many__all_found(void **state)
{
	run(spread, N, 20000);
}

static void remove__empty_or_absent__enoent(void **state)
{
	struct bp_htab h = {};

	assert_int_equal(bp_htab_remove(&h, 5, 0), -ENOENT);
	assert_int_equal(bp_htab_insert(&h, 5, 0), 0);
	/* the same hash, another entry */
	assert_int_equal(bp_htab_remove(&h, 5, 1), -ENOENT);
	assert_int_equal(bp_htab_remove(&h, 6, 0), -ENOENT);
	assert_int_equal(h.len, 1);
	assert_int_equal(bp_htab_remove(&h, 5, 0), 0);
	assert_int_equal(h.len, 0);
	bp_htab_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(remove__clumped_hashes_wrapping__all_found),
		cmocka_unit_test(remove__spread_hashes_many__all_found),
		cmocka_unit_test(remove__empty_or_absent__enoent),
	};

	return cmocka_run_group_tests_name("htab", tests, NULL, NULL);
}
