// SPDX-License-Identifier: GPL-2.0
/*
 * Draining a real BPF hash map: every entry is read once and deleted, in
 * batches whose buffers the caller keeps from one drain to the next.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "collect/mapdrain.h"

#define ENTRIES	1000
#define VSZ	1024	/* a stack's size: 64 entries a batch */

struct seen {
	uint8_t hits[ENTRIES];
	int rows;
	int bad;
};

static int row(void *ctx, const void *key, const void *val)
{
	struct seen *s = ctx;
	uint64_t k;
	const uint8_t *v = val;

	memcpy(&k, key, sizeof(k));
	if (k >= ENTRIES || v[0] != (uint8_t)k || v[VSZ - 1] != (uint8_t)(k * 7))
		s->bad++;
	else
		s->hits[k]++;
	s->rows++;
	return 0;
}

static int map_with_entries(void)
{
	static uint8_t val[VSZ];
	uint64_t k;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "bp_test_drain", sizeof(uint64_t), VSZ,
				2 * ENTRIES, NULL);

	if (fd < 0)
		return fd;
	for (k = 0; k < ENTRIES; k++) {
		val[0] = (uint8_t)k;
		val[VSZ - 1] = (uint8_t)(k * 7);
		assert_int_equal(bpf_map_update_elem(fd, &k, val, BPF_NOEXIST), 0);
	}
	return fd;
}

static void drain__every_entry_once_buffers_kept(void **state)
{
	struct bp_drain_buf buf = {};
	static struct seen s;
	uint64_t k, next;
	void *keys;
	int fd, i;

	/* CI runs as root: a BPF map it cannot create is a failure */
	fd = map_with_entries();
	assert_true(fd >= 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(bp_drain_map(fd, sizeof(uint64_t), VSZ, &buf, row, &s), 0);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.rows, ENTRIES);
	for (i = 0; i < ENTRIES; i++)
		assert_int_equal(s.hits[i], 1);
	/* emptied */
	assert_int_equal(bpf_map_get_next_key(fd, NULL, &next), -ENOENT);
	/* the batch stays under malloc's mmap threshold: 64 KiB of values */
	assert_non_null(buf.vals);
	assert_true(buf.vbytes <= 64 * 1024);
	assert_true(buf.vbytes >= VSZ);

	/* the same buffers serve the next drain, of an empty map and of a full one */
	keys = buf.keys;
	memset(&s, 0, sizeof(s));
	assert_int_equal(bp_drain_map(fd, sizeof(uint64_t), VSZ, &buf, row, &s), 0);
	assert_int_equal(s.rows, 0);
	for (k = 0; k < ENTRIES; k += 3) {
		uint8_t val[VSZ] = { (uint8_t)k };

		val[VSZ - 1] = (uint8_t)(k * 7);
		assert_int_equal(bpf_map_update_elem(fd, &k, val, BPF_NOEXIST), 0);
	}
	assert_int_equal(bp_drain_map(fd, sizeof(uint64_t), VSZ, &buf, row, &s), 0);
	assert_ptr_equal(buf.keys, keys);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.rows, (ENTRIES + 2) / 3);

	/* and without kept buffers, the call's own */
	close(fd);
	fd = map_with_entries();
	memset(&s, 0, sizeof(s));
	assert_int_equal(bp_drain_map(fd, sizeof(uint64_t), VSZ, NULL, row, &s), 0);
	assert_int_equal(s.rows, ENTRIES);
	close(fd);
	bp_drain_buf_free(&buf);
	assert_null(buf.vals);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drain__every_entry_once_buffers_kept),
	};

	return cmocka_run_group_tests_name("mapdrain", tests, NULL, NULL);
}
