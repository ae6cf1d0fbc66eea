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

/* what a sink received, in order */
struct got {
	char text[8192];
	size_t len;
	int calls;
	int fail_at;	/* this call fails with -ENOSPC; 0 never */
};

static int to_got(void *ctx, const char *data, size_t len)
{
	struct got *g = ctx;

	g->calls++;
	if (g->fail_at && g->calls == g->fail_at)
		return -ENOSPC;
	assert_true(g->len + len < sizeof(g->text));
	memcpy(g->text + g->len, data, len);
	g->len += len;
	return 0;
}

static void sink__document_in_pieces__small_buffer(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct got g = {};
	char want[8192];
	size_t n = 0;
	int i;

	bp_buf_sink(&b, to_got, &g, 256);
	for (i = 0; i < 300; i++) {
		assert_int_equal(bp_buf_printf(&b, "line %d;", i), 0);
		n += (size_t)snprintf(want + n, sizeof(want) - n, "line %d;", i);
		assert_int_equal(bp_buf_puts(&b, "x"), 0);
		want[n++] = 'x';
		/* never more than the threshold and one append held */
		assert_true(b.len < 256);
	}
	assert_int_equal(bp_buf_flush(&b), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(g.len, n);
	assert_memory_equal(g.text, want, n);
	assert_true(g.calls > 10);
	assert_true(b.cap <= 512);
	/* a flush with nothing held calls nobody */
	i = g.calls;
	assert_int_equal(bp_buf_flush(&b), 0);
	assert_int_equal(g.calls, i);
	bp_buf_free(&b);
	assert_null(b.sink);
}

static void sink__error__sticky(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct got g = { .fail_at = 2 };
	char chunk[100];

	memset(chunk, 'a', sizeof(chunk));
	bp_buf_sink(&b, to_got, &g, 150);
	assert_int_equal(bp_buf_append(&b, chunk, 100), 0);
	assert_int_equal(bp_buf_append(&b, chunk, 100), 0);	/* 200: first call */
	assert_int_equal(bp_buf_append(&b, chunk, 100), 0);
	assert_int_equal(bp_buf_append(&b, chunk, 100), -ENOSPC);	/* second call fails */
	assert_int_equal(bp_buf_puts(&b, "more"), -ENOSPC);
	assert_int_equal(bp_buf_flush(&b), -ENOSPC);
	assert_int_equal(g.len, 200);
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
		cmocka_unit_test(sink__document_in_pieces__small_buffer),
		cmocka_unit_test(sink__error__sticky),
	};

	return cmocka_run_group_tests_name("buf", tests, NULL, NULL);
}
