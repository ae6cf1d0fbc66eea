// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

/* every test takes cmocka's state argument; none uses it */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "util/buf.h"

static void init__empty__str_is_empty_string(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_string_equal(bp_buf_str(&b), "");
	bp_buf_free(&b);

	bp_buf_init(&b);
	assert_null(b.data);
	assert_int_equal(b.err, 0);
	bp_buf_free(&b);
}

static void append__pieces__concatenated_and_terminated(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_buf_append(&b, "ab", 2), 0);
	assert_int_equal(bp_buf_puts(&b, "cd"), 0);
	assert_int_equal(bp_buf_putc(&b, 'e'), 0);
	assert_int_equal(bp_buf_append(&b, "ignored", 0), 0);
	assert_int_equal(b.len, 5);
	assert_string_equal(bp_buf_str(&b), "abcde");
	assert_true(b.cap > b.len);
	bp_buf_free(&b);
}

static void append__embedded_nul__kept_by_length(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_buf_append(&b, "a\0b", 3), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "a\0b\0", 4);
	bp_buf_free(&b);
}

static void append__many_small__grows_and_keeps_everything(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	size_t i;

	for (i = 0; i < 100000; i++)
		assert_int_equal(bp_buf_putc(&b, 'a' + i % 26), 0);
	assert_int_equal(b.len, 100000);
	for (i = 0; i < 100000; i++)
		assert_int_equal(b.data[i], 'a' + i % 26);
	assert_int_equal(b.data[b.len], '\0');
	bp_buf_free(&b);
}

static void printf__short_and_long__formats_in_place(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	char big[5000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';

	assert_int_equal(bp_buf_printf(&b, "%d-%s", 42, "ok"), 0);
	assert_string_equal(bp_buf_str(&b), "42-ok");
	/* larger than the room left: must reformat after growing */
	assert_int_equal(bp_buf_printf(&b, "[%s]", big), 0);
	assert_int_equal(b.len, 5 + 2 + sizeof(big) - 1);
	assert_memory_equal(b.data, "42-ok[xxx", 9);
	assert_int_equal(b.data[b.len - 1], ']');
	assert_int_equal(b.data[b.len], '\0');
	assert_int_equal(bp_buf_printf(&b, "%s", ""), 0);
	assert_int_equal(b.len, 5 + 2 + sizeof(big) - 1);
	bp_buf_free(&b);
}

static void printf__exactly_fills_room__no_truncation(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	size_t room, i;

	assert_int_equal(bp_buf_reserve(&b, 10), 0);
	room = b.cap - b.len - 1;
	/* room bytes plus the NUL fit exactly; one more must grow */
	for (i = 0; i < room; i++)
		assert_int_equal(bp_buf_printf(&b, "%c", 'y'), 0);
	assert_int_equal(b.len, room);
	assert_int_equal(bp_buf_printf(&b, "%s", "zz"), 0);
	assert_int_equal(b.len, room + 2);
	assert_int_equal(b.data[room], 'z');
	assert_int_equal(b.data[room + 2], '\0');
	bp_buf_free(&b);
}

static void reserve__then_append__no_reallocation(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	char *before;

	assert_int_equal(bp_buf_reserve(&b, 1000), 0);
	assert_true(b.cap >= 1001);
	assert_string_equal(bp_buf_str(&b), "");
	before = b.data;
	for (int i = 0; i < 1000; i++)
		bp_buf_putc(&b, 'q');
	assert_ptr_equal(b.data, before);
	bp_buf_free(&b);
}

static void append__impossible_size__sticky_enomem(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_buf_puts(&b, "keep"), 0);
	/* refused before anything is read from the (small) source */
	assert_int_equal(bp_buf_append(&b, "x", PTRDIFF_MAX), -ENOMEM);
	assert_int_equal(b.err, -ENOMEM);
	assert_int_equal(bp_buf_puts(&b, "more"), -ENOMEM);
	assert_int_equal(bp_buf_putc(&b, 'c'), -ENOMEM);
	assert_int_equal(bp_buf_printf(&b, "%d", 1), -ENOMEM);
	assert_int_equal(bp_buf_reserve(&b, 1), -ENOMEM);
	assert_string_equal(bp_buf_str(&b), "keep");

	/* also the reserve path, and SIZE_MAX must not wrap around */
	bp_buf_reset(&b);
	assert_int_equal(bp_buf_reserve(&b, SIZE_MAX), -ENOMEM);
	assert_int_equal(bp_buf_append(&b, "x", 1), -ENOMEM);
	assert_int_equal(b.len, 0);
	bp_buf_free(&b);
}

static void reset__after_error__clears_error_keeps_memory(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	size_t cap;
	char *data;

	bp_buf_puts(&b, "hello");
	bp_buf_append(&b, "x", PTRDIFF_MAX);
	cap = b.cap;
	data = b.data;
	bp_buf_reset(&b);
	assert_int_equal(b.err, 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, cap);
	assert_ptr_equal(b.data, data);
	assert_string_equal(bp_buf_str(&b), "");
	assert_int_equal(bp_buf_puts(&b, "again"), 0);
	assert_string_equal(bp_buf_str(&b), "again");
	bp_buf_free(&b);
}

static void free__twice_and_reuse__safe(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	bp_buf_free(&b);
	bp_buf_puts(&b, "one");
	bp_buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	bp_buf_free(&b);
	assert_int_equal(bp_buf_puts(&b, "two"), 0);
	assert_string_equal(bp_buf_str(&b), "two");
	bp_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(init__empty__str_is_empty_string),
		cmocka_unit_test(append__pieces__concatenated_and_terminated),
		cmocka_unit_test(append__embedded_nul__kept_by_length),
		cmocka_unit_test(append__many_small__grows_and_keeps_everything),
		cmocka_unit_test(printf__short_and_long__formats_in_place),
		cmocka_unit_test(printf__exactly_fills_room__no_truncation),
		cmocka_unit_test(reserve__then_append__no_reallocation),
		cmocka_unit_test(append__impossible_size__sticky_enomem),
		cmocka_unit_test(reset__after_error__clears_error_keeps_memory),
		cmocka_unit_test(free__twice_and_reuse__safe),
	};

	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
