// SPDX-License-Identifier: GPL-2.0
/* protobuf wire format: varints, length-delimited and packed fields, skipping, bad input */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/pb.h"

static void assert_bytes(const struct bp_buf *b, const uint8_t *want, size_t n)
{
	assert_int_equal(b->err, 0);
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, want, n);
}

static void varint__known_encodings(void **state)
{
	static const struct {
		uint64_t v;
		uint8_t bytes[10];
		size_t n;
	} cases[] = {
		{ 0, { 0x00 }, 1 },
		{ 1, { 0x01 }, 1 },
		{ 127, { 0x7f }, 1 },
		{ 128, { 0x80, 0x01 }, 2 },
		{ 150, { 0x96, 0x01 }, 2 },
		{ 300, { 0xac, 0x02 }, 2 },
		{ 1ull << 32, { 0x80, 0x80, 0x80, 0x80, 0x10 }, 5 },
		{ UINT64_MAX, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10 },
		/* int64 -1: two's complement, ten bytes */
		{ (uint64_t)-1, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10 },
		{ 1ull << 63, { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 }, 10 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bp_buf b = BP_BUF_INIT;
		const uint8_t *p;
		uint64_t v;

		assert_int_equal(bp_pb_put_varint(&b, cases[i].v), 0);
		assert_bytes(&b, cases[i].bytes, cases[i].n);
		assert_int_equal(bp_pb_varint_len(cases[i].v), cases[i].n);
		p = (const uint8_t *)b.data;
		assert_int_equal(bp_pb_get_varint(&p, p + b.len, &v), 0);
		assert_true(v == cases[i].v);
		assert_ptr_equal(p, (const uint8_t *)b.data + b.len);
		bp_buf_free(&b);
	}
}

static void varint__overlong_or_truncated__rejected(void **state)
{
	/* eleven bytes, and ten whose last carries more than bit 63 */
	static const uint8_t eleven[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					  0x80, 0x80, 0x80, 0x80, 0x01 };
	static const uint8_t too_big[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					   0xff, 0xff, 0xff, 0x02 };
	static const uint8_t cut[] = { 0x96 };
	const uint8_t *p;
	uint64_t v;

	p = eleven;
	assert_int_equal(bp_pb_get_varint(&p, eleven + sizeof(eleven), &v), -EINVAL);
	p = too_big;
	assert_int_equal(bp_pb_get_varint(&p, too_big + sizeof(too_big), &v), -EINVAL);
	p = cut;
	assert_int_equal(bp_pb_get_varint(&p, cut + sizeof(cut), &v), -EINVAL);
	p = cut;
	assert_int_equal(bp_pb_get_varint(&p, cut, &v), -EINVAL);
}

/* the example from the protobuf encoding guide: field 1 = 150, field 2 = "testing" */
static void fields__encode_like_protoc(void **state)
{
	static const uint8_t want[] = { 0x08, 0x96, 0x01, 0x12, 0x07, 't', 'e', 's',
					't',  'i',  'n',  'g' };
	struct bp_buf b = BP_BUF_INIT;

	bp_pb_put_uint64(&b, 1, 150);
	bp_pb_put_string(&b, 2, "testing");
	assert_bytes(&b, want, sizeof(want));
	bp_buf_free(&b);
}

static void packed__encode_and_iterate(void **state)
{
	/* field 4, packed [3, 270, 86942]: 22 06 03 8e 02 9e a7 05 */
	static const uint8_t want[] = { 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05 };
	static const uint64_t vals[] = { 3, 270, 86942 };
	struct bp_buf b = BP_BUF_INIT;
	struct bp_pb_reader r;
	struct bp_pb_field f;
	struct bp_pb_iter it;
	uint64_t v;
	size_t n = 0;

	assert_int_equal(bp_pb_put_packed(&b, 4, vals, 3), 0);
	assert_bytes(&b, want, sizeof(want));
	/* an empty packed field is left out entirely */
	assert_int_equal(bp_pb_put_packed(&b, 5, vals, 0), 0);
	assert_int_equal(b.len, sizeof(want));

	bp_pb_reader_init(&r, b.data, b.len);
	assert_int_equal(bp_pb_next(&r, &f), 1);
	assert_int_equal(f.num, 4);
	assert_int_equal(f.wire, BP_PB_LEN);
	bp_pb_iter_init(&it, &f);
	while (bp_pb_iter_next(&it, &v) == 1)
		assert_true(v == vals[n++]);
	assert_int_equal(n, 3);
	assert_int_equal(bp_pb_next(&r, &f), 0);
	bp_buf_free(&b);
}

/* a repeated field written unpacked (proto2 style) reads through the same iterator */
static void packed__unpacked_occurrences_accepted(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_pb_reader r;
	struct bp_pb_field f;
	struct bp_pb_iter it;
	uint64_t v, sum = 0;
	int n = 0;

	bp_pb_put_uint64(&b, 1, 5);
	bp_pb_put_uint64(&b, 1, UINT64_MAX);
	bp_pb_reader_init(&r, b.data, b.len);
	while (bp_pb_next(&r, &f) == 1) {
		bp_pb_iter_init(&it, &f);
		while (bp_pb_iter_next(&it, &v) == 1) {
			sum += v;
			n++;
		}
	}
	assert_int_equal(n, 2);
	assert_true(sum == 4);	/* 5 + (2^64 - 1) wraps */
	/* a fixed64 is no varint field */
	f.wire = BP_PB_I64;
	bp_pb_iter_init(&it, &f);
	assert_int_equal(bp_pb_iter_next(&it, &v), -EINVAL);
	bp_buf_free(&b);
}

/* fields the reader does not know, of every wire type, are skipped whole */
static void reader__skips_unknown_fields(void **state)
{
	static const uint8_t fixed64[] = { 0x19, 1, 2, 3, 4, 5, 6, 7, 8 };	/* field 3, I64 */
	static const uint8_t fixed32[] = { 0x25, 0xaa, 0xbb, 0xcc, 0xdd };	/* field 4, I32 */
	struct bp_buf b = BP_BUF_INIT, sub = BP_BUF_INIT;
	struct bp_pb_reader r;
	struct bp_pb_field f;
	uint64_t want = 0, got = 0;
	int ret;

	bp_pb_put_uint64(&sub, 1, 7);
	bp_pb_put_string(&sub, 2, "nested");
	bp_pb_put_int64(&b, 1000, -5);
	bp_buf_append(&b, fixed64, sizeof(fixed64));
	bp_buf_append(&b, fixed32, sizeof(fixed32));
	bp_pb_put_bytes(&b, BP_PB_MAX_FIELD, sub.data, sub.len);
	bp_pb_put_uint64(&b, 2, 42);
	want = 42;
	assert_int_equal(b.err, 0);

	bp_pb_reader_init(&r, b.data, b.len);
	while ((ret = bp_pb_next(&r, &f)) == 1) {
		if (f.num == 2)
			got = f.u64;
		if (f.num == 3)
			assert_true(f.u64 == 0x0807060504030201ull);
		if (f.num == 4)
			assert_true(f.u64 == 0xddccbbaa);
		if (f.num == 1000)
			assert_true((int64_t)f.u64 == -5);
		if (f.num == BP_PB_MAX_FIELD) {
			assert_int_equal(f.len, sub.len);
			assert_memory_equal(f.data, sub.data, sub.len);
		}
	}
	assert_int_equal(ret, 0);
	assert_true(got == want);
	bp_buf_free(&b);
	bp_buf_free(&sub);
}

static void reader__truncated_and_garbage__rejected(void **state)
{
	static const uint8_t bad[][6] = {
		{ 0x12, 0x05, 'a', 'b' },		/* length past the end */
		{ 0x08 },				/* tag without its value */
		{ 0x19, 1, 2, 3 },			/* fixed64 cut short */
		{ 0x00, 0x01 },				/* field number 0 */
		{ 0x0b, 0x0c },				/* group start (deprecated) */
		{ 0x0e, 0x00 },				/* wire type 6 */
		{ 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f },	/* 4 GiB length */
	};
	static const size_t len[] = { 4, 1, 4, 2, 2, 2, 6 };
	struct bp_buf b = BP_BUF_INIT;
	struct bp_pb_reader r;
	struct bp_pb_field f;
	size_t i, cut;
	int ret;

	for (i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
		bp_pb_reader_init(&r, bad[i], len[i]);
		while ((ret = bp_pb_next(&r, &f)) == 1)
			;
		assert_int_equal(ret, -EINVAL);
	}

	/* every proper prefix of a message ending in a LEN field fails, never overreads */
	bp_pb_put_uint64(&b, 1, 300);
	bp_pb_put_string(&b, 2, "hello, world");
	for (cut = 1; cut < b.len; cut++) {
		uint8_t *copy = malloc(cut);

		memcpy(copy, b.data, cut);
		bp_pb_reader_init(&r, copy, cut);
		while ((ret = bp_pb_next(&r, &f)) == 1)
			;
		/* cutting right after the first field leaves a valid message */
		if (cut == 3)
			assert_int_equal(ret, 0);
		else
			assert_int_equal(ret, -EINVAL);
		free(copy);
	}
	bp_buf_free(&b);

	/* random bytes never crash the reader */
	srand(1);
	for (i = 0; i < 2000; i++) {
		uint8_t junk[64];
		size_t j, n = rand() % sizeof(junk);

		for (j = 0; j < n; j++)
			junk[j] = rand();
		bp_pb_reader_init(&r, junk, n);
		while ((ret = bp_pb_next(&r, &f)) == 1)
			;
		assert_true(ret == 0 || ret == -EINVAL);
	}
}

static void writer__bad_field_number__sticky_error(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_pb_put_uint64(&b, 0, 1), -EINVAL);
	assert_int_equal(bp_pb_put_uint64(&b, 1, 1), -EINVAL);
	bp_buf_free(&b);
	assert_int_equal(bp_pb_put_uint64(&b, BP_PB_MAX_FIELD + 1, 1), -EINVAL);
	bp_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varint__known_encodings),
		cmocka_unit_test(varint__overlong_or_truncated__rejected),
		cmocka_unit_test(fields__encode_like_protoc),
		cmocka_unit_test(packed__encode_and_iterate),
		cmocka_unit_test(packed__unpacked_occurrences_accepted),
		cmocka_unit_test(reader__skips_unknown_fields),
		cmocka_unit_test(reader__truncated_and_garbage__rejected),
		cmocka_unit_test(writer__bad_field_number__sticky_error),
	};

	return cmocka_run_group_tests_name("pb", tests, NULL, NULL);
}
