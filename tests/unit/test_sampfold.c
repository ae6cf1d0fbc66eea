// SPDX-License-Identifier: GPL-2.0
/* the sample slots' records folded into rows, as the kernel's rows were made */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collect/sampfold.h"

static struct bp_oncpu_rec rec(uint32_t tid, uint64_t ustack, uint32_t nr, uint64_t leaf,
			       const char *comm)
{
	struct bp_oncpu_rec r;
	uint32_t i;

	memset(&r, 0, sizeof(r));
	r.key.tgid = 100;
	r.key.tid = tid;
	r.key.kstack = 0;
	r.key.ustack = ustack;
	r.ns = 10101010;
	strncpy(r.comm, comm, sizeof(r.comm) - 1);
	r.nr = nr;
	r.flags = 3 << BP_STACK_IMAGE_SHIFT;
	for (i = 0; i < nr; i++)
		r.ips[i] = leaf + i;
	/* what a slot holds past the frames is the slot's older sample's */
	for (; i < BP_SHORT_STACK_DEPTH; i++)
		r.ips[i] = 0xdead;
	return r;
}

static void same_key__one_row_with_the_first_sample_kept(void **state)
{
	struct bp_sampfold f = {};
	struct bp_oncpu_rec a = rec(101, 0xabc, 3, 0x1000, "worker"),
			    b = rec(101, 0xabc, 3, 0x1000, "renamed");
	int i;

	(void)state;
	assert_int_equal(bp_sampfold__add(&f, &a), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(bp_sampfold__add(&f, &b), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.v[0].val.samples, 5);
	assert_int_equal(f.v[0].val.ns, 5 * 10101010ULL);
	/* the row's comm and stack are its first sample's, as a kernel row's were */
	assert_string_equal(f.v[0].val.comm, "worker");
	assert_int_equal(f.v[0].val.ustk.nr, 3);
	assert_int_equal(f.v[0].val.ustk.flags, 3 << BP_STACK_IMAGE_SHIFT);
	assert_int_equal(f.v[0].val.ustk.ips[2], 0x1002);
	assert_int_equal(f.samples, 5);
	bp_sampfold__free(&f);
}

static void keys_apart__rows_apart(void **state)
{
	struct bp_sampfold f = {};
	struct bp_oncpu_rec r;
	uint32_t i, samples = 0;

	(void)state;
	/* 3 threads x 700 stacks, each key twice: past the table's first growths */
	for (i = 0; i < 2 * 3 * 700; i++) {
		r = rec(200 + i % 3, 1 + (i / 3) % 700, 2, 0x4000 + i % 700, "t");
		assert_int_equal(bp_sampfold__add(&f, &r), 0);
	}
	assert_int_equal(f.n, 3 * 700);
	for (i = 0; i < f.n; i++) {
		assert_int_equal(f.v[i].val.samples, 2);
		samples += f.v[i].val.samples;
	}
	assert_int_equal(samples, 2 * 3 * 700);
	/* one field apart is a row apart: the system call */
	r = rec(200, 1, 2, 0x4000, "t");
	r.key.sysnr = 1;
	assert_int_equal(bp_sampfold__add(&f, &r), 0);
	assert_int_equal(f.n, 3 * 700 + 1);
	bp_sampfold__free(&f);
}

static void reset__next_drain_starts_empty(void **state)
{
	struct bp_sampfold f = {};
	struct bp_oncpu_rec r = rec(7, 9, 1, 0x10, "x");

	(void)state;
	assert_int_equal(bp_sampfold__add(&f, &r), 0);
	assert_int_equal(bp_sampfold__add(&f, &r), 0);
	bp_sampfold__reset(&f);
	assert_int_equal(f.n, 0);
	assert_int_equal(bp_sampfold__add(&f, &r), 0);
	assert_int_equal(f.n, 1);
	assert_int_equal(f.v[0].val.samples, 1);
	bp_sampfold__free(&f);
}

static void long_stack_in_a_slot__refused(void **state)
{
	struct bp_sampfold f = {};
	struct bp_oncpu_rec r = rec(7, 9, 1, 0x10, "x");

	(void)state;
	r.nr = BP_SHORT_STACK_DEPTH + 1;
	assert_int_equal(bp_sampfold__add(&f, &r), -EINVAL);
	assert_int_equal(f.n, 0);
	r.nr = BP_SHORT_STACK_DEPTH;
	assert_int_equal(bp_sampfold__add(&f, &r), 0);
	assert_int_equal(f.v[0].val.ustk.nr, BP_SHORT_STACK_DEPTH);
	bp_sampfold__free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(same_key__one_row_with_the_first_sample_kept),
		cmocka_unit_test(keys_apart__rows_apart),
		cmocka_unit_test(reset__next_drain_starts_empty),
		cmocka_unit_test(long_stack_in_a_slot__refused),
	};

	return cmocka_run_group_tests_name("sampfold", tests, NULL, NULL);
}
