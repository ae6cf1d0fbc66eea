// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <cmocka.h>

/* every test takes cmocka's state argument; none uses it */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "util/buf.h"
#include "util/json.h"
#include "util/numfmt.h"

#define FFFD "\xef\xbf\xbd"

/* ------------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/* xorshift64*: deterministic, so a failure reproduces */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static struct bp_json *parse_ok_n(const char *text, size_t len)
{
	char err[128];
	struct bp_json *root;

	root = bp_json_parse(text, len, err, sizeof(err));
	if (!root)
		fail_msg("parse failed: %s (input %.80s)", err, text);
	return root;
}

static struct bp_json *parse_ok(const char *text)
{
	return parse_ok_n(text, strlen(text));
}

static void expect_error_n(const char *text, size_t len, int line, int col, const char *msg)
{
	char err[128], want[160];
	struct bp_json *root;

	errno = 0;
	root = bp_json_parse(text, len, err, sizeof(err));
	if (root) {
		bp_json_free(root);
		fail_msg("accepted invalid input: %.80s", text);
	}
	assert_int_equal(errno, EINVAL);
	snprintf(want, sizeof(want), "line %d col %d: %s", line, col, msg);
	if (strcmp(err, want))
		fail_msg("input %.80s: got \"%s\", want \"%s\"", text, err, want);
}

static void expect_error(const char *text, int line, int col, const char *msg)
{
	expect_error_n(text, strlen(text), line, col, msg);
}

static uint64_t bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double elapsed_s(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* the document used by the nested-structure writer tests */
static int write_nested(struct bp_json_w *w)
{
	bp_json_w_begin_object(w);
	bp_json_w_kv_string(w, "name", "x");
	bp_json_w_kv_int64(w, "n", -5);
	bp_json_w_kv_uint64(w, "u", UINT64_MAX);
	bp_json_w_kv_double(w, "f", 0.1);
	bp_json_w_kv_bool(w, "ok", true);
	bp_json_w_key(w, "nil");
	bp_json_w_null_val(w);
	bp_json_w_key(w, "arr");
	bp_json_w_begin_array(w);
	bp_json_w_int64(w, 1);
	bp_json_w_begin_array(w);
	bp_json_w_end_array(w);
	bp_json_w_begin_object(w);
	bp_json_w_end_object(w);
	bp_json_w_begin_array(w);
	bp_json_w_int64(w, 2);
	bp_json_w_bool_val(w, false);
	bp_json_w_end_array(w);
	bp_json_w_end_array(w);
	bp_json_w_key(w, "obj");
	bp_json_w_begin_object(w);
	bp_json_w_key(w, "a");
	bp_json_w_begin_object(w);
	bp_json_w_key(w, "b");
	bp_json_w_begin_array(w);
	bp_json_w_end_array(w);
	bp_json_w_end_object(w);
	bp_json_w_end_object(w);
	bp_json_w_end_object(w);
	return bp_json_w_finish(w);
}

/* write one string compactly; returns the JSON text (caller frees the buf) */
static const char *write_string(struct bp_buf *b, const char *s, size_t len)
{
	struct bp_json_w w;

	bp_buf_reset(b);
	bp_json_w_init(&w, b, false);
	bp_json_w_string_n(&w, s, len);
	assert_int_equal(bp_json_w_finish(&w), 0);
	return bp_buf_str(b);
}

static const char *write_double(struct bp_buf *b, double d)
{
	struct bp_json_w w;

	bp_buf_reset(b);
	bp_json_w_init(&w, b, false);
	bp_json_w_double_val(&w, d);
	assert_int_equal(bp_json_w_finish(&w), 0);
	return bp_buf_str(b);
}

/* ------------------------------------------------------------------ writer */

static void writer__nested_compact__exact_text(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;

	bp_json_w_init(&w, &b, false);
	assert_int_equal(write_nested(&w), 0);
	assert_string_equal(bp_buf_str(&b),
		"{\"name\":\"x\",\"n\":-5,\"u\":18446744073709551615,\"f\":0.1,"
		"\"ok\":true,\"nil\":null,\"arr\":[1,[],{},[2,false]],"
		"\"obj\":{\"a\":{\"b\":[]}}}");
	bp_buf_free(&b);
}

static void writer__nested_pretty__exact_text(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;

	bp_json_w_init(&w, &b, true);
	assert_int_equal(write_nested(&w), 0);
	assert_string_equal(bp_buf_str(&b),
		"{\n"
		"  \"name\": \"x\",\n"
		"  \"n\": -5,\n"
		"  \"u\": 18446744073709551615,\n"
		"  \"f\": 0.1,\n"
		"  \"ok\": true,\n"
		"  \"nil\": null,\n"
		"  \"arr\": [\n"
		"    1,\n"
		"    [],\n"
		"    {},\n"
		"    [\n"
		"      2,\n"
		"      false\n"
		"    ]\n"
		"  ],\n"
		"  \"obj\": {\n"
		"    \"a\": {\n"
		"      \"b\": []\n"
		"    }\n"
		"  }\n"
		"}");
	bp_buf_free(&b);
}

static void writer__top_level_scalars_and_empties__exact_text(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;

	bp_json_w_init(&w, &b, true);
	bp_json_w_begin_array(&w);
	bp_json_w_end_array(&w);
	assert_int_equal(bp_json_w_finish(&w), 0);
	assert_string_equal(bp_buf_str(&b), "[]");

	/* a new document appended to the same buffer, as for NDJSON */
	bp_buf_putc(&b, '\n');
	bp_json_w_init(&w, &b, true);
	bp_json_w_int64(&w, INT64_MIN);
	assert_int_equal(bp_json_w_finish(&w), 0);
	assert_string_equal(bp_buf_str(&b), "[]\n-9223372036854775808");

	bp_buf_reset(&b);
	bp_json_w_init(&w, &b, false);
	bp_json_w_string(&w, NULL);
	assert_int_equal(bp_json_w_finish(&w), 0);
	assert_string_equal(bp_buf_str(&b), "null");

	bp_buf_reset(&b);
	bp_json_w_init(&w, &b, true);
	bp_json_w_begin_object(&w);
	bp_json_w_key(&w, "");
	bp_json_w_begin_object(&w);
	bp_json_w_end_object(&w);
	bp_json_w_end_object(&w);
	assert_int_equal(bp_json_w_finish(&w), 0);
	assert_string_equal(bp_buf_str(&b), "{\n  \"\": {}\n}");
	bp_buf_free(&b);
}

static void writer__misuse__einval_sticky_and_no_output(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;
	size_t len;

	/* value in an object without a key */
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	assert_int_equal(bp_json_w_int64(&w, 1), -EINVAL);
	len = b.len;
	/* after the first misuse nothing more is written */
	assert_int_equal(bp_json_w_kv_int64(&w, "a", 1), -EINVAL);
	assert_int_equal(bp_json_w_end_object(&w), -EINVAL);
	assert_int_equal(b.len, len);
	assert_int_equal(bp_json_w_finish(&w), -EINVAL);

	/* key in an array */
	bp_buf_reset(&b);
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_array(&w);
	assert_int_equal(bp_json_w_key(&w, "a"), -EINVAL);

	/* key at top level */
	bp_json_w_init(&w, &b, false);
	assert_int_equal(bp_json_w_key(&w, "a"), -EINVAL);

	/* mismatched end */
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	assert_int_equal(bp_json_w_end_array(&w), -EINVAL);

	/* end with nothing open */
	bp_json_w_init(&w, &b, false);
	assert_int_equal(bp_json_w_end_object(&w), -EINVAL);

	/* two keys in a row */
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	bp_json_w_key(&w, "a");
	assert_int_equal(bp_json_w_key(&w, "b"), -EINVAL);

	/* key without value at end of object */
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	bp_json_w_key(&w, "a");
	assert_int_equal(bp_json_w_end_object(&w), -EINVAL);

	/* NULL key */
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	assert_int_equal(bp_json_w_key(&w, NULL), -EINVAL);

	/* a second top-level value */
	bp_json_w_init(&w, &b, false);
	assert_int_equal(bp_json_w_int64(&w, 1), 0);
	assert_int_equal(bp_json_w_int64(&w, 2), -EINVAL);
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_array(&w);
	bp_json_w_end_array(&w);
	assert_int_equal(bp_json_w_begin_object(&w), -EINVAL);

	/* unfinished documents */
	bp_json_w_init(&w, &b, false);
	assert_int_equal(bp_json_w_finish(&w), -EINVAL);
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_array(&w);
	assert_int_equal(bp_json_w_finish(&w), -EINVAL);
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	bp_json_w_key(&w, "k");
	assert_int_equal(bp_json_w_finish(&w), -EINVAL);
	bp_buf_free(&b);
}

static void writer__depth_limit__64_ok_65_einval(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;
	struct bp_json *root;
	int i;

	bp_json_w_init(&w, &b, true);
	for (i = 0; i < BP_JSON_W_MAX_DEPTH; i++)
		assert_int_equal(bp_json_w_begin_array(&w), 0);
	for (i = 0; i < BP_JSON_W_MAX_DEPTH; i++)
		assert_int_equal(bp_json_w_end_array(&w), 0);
	assert_int_equal(bp_json_w_finish(&w), 0);
	root = parse_ok(bp_buf_str(&b));
	bp_json_free(root);

	bp_buf_reset(&b);
	bp_json_w_init(&w, &b, false);
	for (i = 0; i < BP_JSON_W_MAX_DEPTH; i++) {
		assert_int_equal(bp_json_w_begin_object(&w), 0);
		assert_int_equal(bp_json_w_key(&w, "k"), 0);
	}
	assert_int_equal(bp_json_w_begin_array(&w), -EINVAL);
	for (i = 0; i < 1000; i++)
		assert_int_equal(bp_json_w_begin_array(&w), -EINVAL);
	assert_int_equal(bp_json_w_finish(&w), -EINVAL);
	bp_buf_free(&b);
}

static void writer__buffer_enomem__reported_by_finish(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;

	bp_buf_append(&b, "x", PTRDIFF_MAX);
	bp_json_w_init(&w, &b, false);
	assert_int_equal(bp_json_w_begin_object(&w), -ENOMEM);
	assert_int_equal(bp_json_w_kv_string(&w, "a", "b"), -ENOMEM);
	assert_int_equal(bp_json_w_end_object(&w), -ENOMEM);
	assert_int_equal(bp_json_w_finish(&w), -ENOMEM);
	assert_int_equal(b.len, 0);
	bp_buf_free(&b);
}

static void writer__escapes__exact_text(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	static const char in[] = "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	struct bp_json_w w;

	assert_string_equal(write_string(&b, in, sizeof(in) - 1),
		"\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	assert_string_equal(write_string(&b, "a\0b", 3), "\"a\\u0000b\"");
	assert_string_equal(write_string(&b, "", 0), "\"\"");

	/* keys are escaped the same way */
	bp_buf_reset(&b);
	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "k\"\n\xff", 1);
	bp_json_w_key_n(&w, "z\0z", 3);
	bp_json_w_int64(&w, 2);
	bp_json_w_end_object(&w);
	assert_int_equal(bp_json_w_finish(&w), 0);
	assert_string_equal(bp_buf_str(&b), "{\"k\\\"\\n" FFFD "\":1,\"z\\u0000z\":2}");
	bp_buf_free(&b);
}

/*
 * Every byte value at every place of a longer ASCII string: the writer
 * passes plain text eight bytes at a time, and a byte to escape in any
 * lane of those eight must still be found.
 */
static void writer__each_byte_at_each_lane__escaped_alike(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	char in[24], want[64], esc[16];
	unsigned int c, at;

	for (c = 0; c < 256; c++) {
		if (c == '"' || c == '\\')
			snprintf(esc, sizeof(esc), "\\%c", c);
		else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')
			snprintf(esc, sizeof(esc), "\\%c", c == '\b' ? 'b' : c == '\f' ? 'f' :
				 c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
		else if (c < 0x20)
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		else if (c >= 0x80)
			snprintf(esc, sizeof(esc), "%s", FFFD);
		else
			snprintf(esc, sizeof(esc), "%c", c);
		for (at = 0; at < sizeof(in); at++) {
			memset(in, 'x', sizeof(in));
			in[at] = (char)c;
			snprintf(want, sizeof(want), "\"%.*s%s%.*s\"", (int)at, in, esc,
				 (int)(sizeof(in) - at - 1), in + at + 1);
			assert_string_equal(write_string(&b, in, sizeof(in)), want);
		}
	}
	bp_buf_free(&b);
}

static void writer__invalid_utf8__replaced_by_maximal_subpart(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "\xff", FFFD },
		{ "\x80", FFFD },
		{ "\xf5", FFFD },
		{ "a\xc3", "a" FFFD },
		{ "\xc3(", FFFD "(" },
		{ "\xe2\x82" "A", FFFD "A" },			/* truncated: one U+FFFD */
		{ "\xf0\x9f\x98", FFFD },			/* truncated at the end */
		{ "\xc0\xaf", FFFD FFFD },			/* overlong */
		{ "\xe0\x80\xaf", FFFD FFFD FFFD },		/* overlong */
		{ "\xed\xa0\x80", FFFD FFFD FFFD },		/* UTF-16 surrogate */
		{ "\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD },	/* past U+10FFFF */
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },	/* valid U+1F600 */
		{ "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" },	/* valid U+10FFFF */
		{ "\xed\x9f\xbf", "\xed\x9f\xbf" },		/* valid U+D7FF */
		{ "ok\xff\xfe" "ok", "ok" FFFD FFFD "ok" },
	};
	struct bp_buf b = BP_BUF_INIT;
	char want[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(want, sizeof(want), "\"%s\"", cases[i].out);
		assert_string_equal(write_string(&b, cases[i].in, strlen(cases[i].in)), want);
	}
	bp_buf_free(&b);
}

static void writer__random_bytes__output_always_parses(void **state)
{
	struct bp_buf b = BP_BUF_INIT, again = BP_BUF_INIT;
	static const unsigned char pick[] = {
		0x00, 0x01, 0x1f, '"', '\\', 'a', 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xdf,
		0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x9f, 0xa0, 0x8f, 0x90,
	};
	unsigned char in[48];
	struct bp_json *root;
	const struct bp_json *s;
	size_t i, j, n;

	for (i = 0; i < 20000; i++) {
		n = rnd() % sizeof(in);
		for (j = 0; j < n; j++)
			in[j] = rnd() & 1 ? pick[rnd() % sizeof(pick)] : (unsigned char)rnd();
		write_string(&b, (const char *)in, n);
		root = parse_ok_n(b.data, b.len);
		s = root;
		assert_int_equal(bp_json_type(s), BP_JSON_STRING);
		/* the decoded text is valid UTF-8: writing it changes nothing */
		write_string(&again, bp_json_str(s), bp_json_len(s));
		assert_int_equal(again.len, b.len);
		assert_memory_equal(again.data, b.data, b.len);
		bp_json_free(root);
	}
	bp_buf_free(&b);
	bp_buf_free(&again);
}

static size_t put_utf8(unsigned char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = 0xc0 | cp >> 6;
		d[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = 0xe0 | cp >> 12;
		d[1] = 0x80 | (cp >> 6 & 0x3f);
		d[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	d[0] = 0xf0 | cp >> 18;
	d[1] = 0x80 | (cp >> 12 & 0x3f);
	d[2] = 0x80 | (cp >> 6 & 0x3f);
	d[3] = 0x80 | (cp & 0x3f);
	return 4;
}

static void writer__valid_utf8__round_trips_unchanged(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	unsigned char in[32 * 4];
	struct bp_json *root;
	uint32_t cp;
	size_t i, j, n;

	/* every ASCII byte, control characters included */
	for (i = 0; i < 128; i++)
		in[i] = i;
	write_string(&b, (const char *)in, 128);
	root = parse_ok(b.data);
	assert_int_equal(bp_json_len(root), 128);
	assert_memory_equal(bp_json_str(root), in, 128);
	bp_json_free(root);

	for (i = 0; i < 5000; i++) {
		n = 0;
		for (j = 0; j < 32; j++) {
			do {
				cp = rnd() % 0x110000;
			} while (cp >= 0xd800 && cp <= 0xdfff);
			n += put_utf8(in + n, cp);
		}
		write_string(&b, (const char *)in, n);
		root = parse_ok(b.data);
		assert_int_equal(bp_json_len(root), n);
		assert_memory_equal(bp_json_str(root), in, n);
		bp_json_free(root);
	}
	bp_buf_free(&b);
}

static void writer__doubles__shortest_text(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.1, "0.1" },
		{ 5.0, "5.0" },
		{ -0.0, "-0.0" },
		{ 0.0, "0.0" },
		{ 100.0, "100.0" },
		{ -1.5, "-1.5" },
		{ 0.01, "0.01" },
		{ 4.35, "4.35" },
		{ 1e21, "1e+21" },
		{ 1e-7, "1e-07" },
		{ 0.30000000000000004, "0.30000000000000004" },
		{ 1.0 / 3.0, "0.3333333333333333" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 123456789.0, "123456789.0" },
	};
	struct bp_buf b = BP_BUF_INIT;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(write_double(&b, cases[i].v), cases[i].text);
	assert_string_equal(write_double(&b, NAN), "null");
	assert_string_equal(write_double(&b, INFINITY), "null");
	assert_string_equal(write_double(&b, -INFINITY), "null");
	bp_buf_free(&b);
}

static double random_finite_double(void)
{
	uint64_t u;
	double d;

	do {
		u = rnd();
		memcpy(&d, &u, sizeof(d));
	} while (!isfinite(d));
	return d;
}

static void writer__doubles__parse_back_bit_exact(void **state)
{
	static const double fixed[] = {
		0.1, 0.2, 0.3, 1e-300, 1.7976931348623157e308, -0.0, 0.0, 5e-324,
		2.2250738585072014e-308, 2.2250738585072009e-308, DBL_EPSILON,
		1.0 / 3.0, 2.0 / 3.0, 123456.789, 1e15, 1e16, 1e17, 1e21, 1e22, 1e23,
		9007199254740993.0, 0.30000000000000004, 3.141592653589793,
		-2.718281828459045, 4.35, 0.1 + 0.2, 1e-7, 299792458.0, 1.5e-320,
	};
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;
	struct bp_json *root;
	double rand_vals[20000];
	size_t i, n = sizeof(rand_vals) / sizeof(rand_vals[0]);

	for (i = 0; i < n; i++)
		rand_vals[i] = random_finite_double();

	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_array(&w);
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		bp_json_w_double_val(&w, fixed[i]);
	for (i = 0; i < n; i++)
		bp_json_w_double_val(&w, rand_vals[i]);
	bp_json_w_end_array(&w);
	assert_int_equal(bp_json_w_finish(&w), 0);

	root = parse_ok(b.data);
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (bits(bp_json_num(bp_json_at(root, i))) != bits(fixed[i]))
			fail_msg("%.17g came back as %.17g", fixed[i], bp_json_num(bp_json_at(root, i)));
	}
	for (i = 0; i < n; i++) {
		double got = bp_json_num(bp_json_at(root, sizeof(fixed) / sizeof(fixed[0]) + i));

		if (bits(got) != bits(rand_vals[i]))
			fail_msg("%.17g came back as %.17g", rand_vals[i], got);
	}
	bp_json_free(root);
	bp_buf_free(&b);
}

static void writer__integers__extremes_exact(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;
	struct bp_json *root;
	uint64_t u;
	int64_t i;

	bp_json_w_init(&w, &b, false);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "min", INT64_MIN);
	bp_json_w_kv_int64(&w, "max", INT64_MAX);
	bp_json_w_kv_uint64(&w, "umax", UINT64_MAX);
	bp_json_w_kv_uint64(&w, "addr", 0xffffffff81000123ULL);
	bp_json_w_kv_int64(&w, "odd", 9007199254740993LL);
	bp_json_w_end_object(&w);
	assert_int_equal(bp_json_w_finish(&w), 0);
	assert_string_equal(b.data, "{\"min\":-9223372036854775808,\"max\":9223372036854775807,"
			    "\"umax\":18446744073709551615,\"addr\":18446744071578845475,"
			    "\"odd\":9007199254740993}");

	root = parse_ok(b.data);
	assert_int_equal(bp_json_int(bp_json_get(root, "min"), &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(bp_json_int(bp_json_get(root, "max"), &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(bp_json_uint(bp_json_get(root, "umax"), &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(bp_json_uint(bp_json_get(root, "addr"), &u), 0);
	assert_true(u == 0xffffffff81000123ULL);
	assert_int_equal(bp_json_int(bp_json_get(root, "odd"), &i), 0);
	assert_true(i == 9007199254740993LL);
	bp_json_free(root);
	bp_buf_free(&b);
}

static char locdir[64];

static void rm_locdir(void)
{
	char cmd[128];

	if (!locdir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", locdir);
	if (system(cmd))
		fprintf(stderr, "test_json: could not remove %s\n", locdir);
	unsetenv("LOCPATH");
	locdir[0] = '\0';
}

/* a failed assertion skips the test's own cleanup */
static int group_teardown(void **state)
{
	rm_locdir();
	return 0;
}

static const char *num(double v, enum bp_num_style style)
{
	static char out[BP_NUM_DOUBLE_MAX];
	int n = bp_num_double(out, sizeof(out), v, style);

	assert_int_equal(n, strlen(out));
	return out;
}

static void numfmt__styles__json_and_prometheus_spellings(void **state)
{
	assert_string_equal(num(5, BP_NUM_JSON), "5.0");
	assert_string_equal(num(0.1, BP_NUM_JSON), "0.1");
	assert_string_equal(num(1e20, BP_NUM_JSON), "1e+20");
	assert_string_equal(num(-0.0, BP_NUM_JSON), "-0.0");
	assert_string_equal(num(1.0 / 3, BP_NUM_JSON), "0.3333333333333333");
	assert_string_equal(num(NAN, BP_NUM_JSON), "null");
	assert_string_equal(num(-INFINITY, BP_NUM_JSON), "null");
	assert_string_equal(num(-DBL_MAX, BP_NUM_JSON), "-1.7976931348623157e+308");

	assert_string_equal(num(5, BP_NUM_PROM), "5");
	assert_string_equal(num(1e6, BP_NUM_PROM), "1000000");
	assert_string_equal(num(-0.0, BP_NUM_PROM), "0");
	assert_string_equal(num(0.1, BP_NUM_PROM), "0.1");
	assert_string_equal(num(1e20, BP_NUM_PROM), "1e+20");
	assert_string_equal(num(NAN, BP_NUM_PROM), "NaN");
	assert_string_equal(num(INFINITY, BP_NUM_PROM), "+Inf");
	assert_string_equal(num(-INFINITY, BP_NUM_PROM), "-Inf");
	assert_true(bp_num_strtod(num(DBL_MIN, BP_NUM_PROM), NULL) == DBL_MIN);
}

/* integers as printf spells them: the edges, and every magnitude between */
static void numfmt__integers__as_printf_spells_them(void **state)
{
	static const int64_t edge[] = { 0, 1, -1, 9, 10, -10, 99, 100, INT64_MAX, INT64_MIN,
					INT64_MIN + 1, 999999999999999999LL, 1000000000000000000LL };
	char got[BP_NUM_INT_MAX], want[32];
	uint64_t x = 0x9e3779b97f4a7c15ULL, u;
	int i, n;

	for (i = 0; i < (int)(sizeof(edge) / sizeof(edge[0])); i++) {
		n = bp_num_int64(got, edge[i]);
		snprintf(want, sizeof(want), "%" PRId64, edge[i]);
		assert_string_equal(got, want);
		assert_int_equal(n, strlen(want));
	}
	n = bp_num_uint64(got, UINT64_MAX);
	assert_string_equal(got, "18446744073709551615");
	assert_int_equal(n, 20);
	for (i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		u = x >> (x % 64);
		n = bp_num_uint64(got, u);
		snprintf(want, sizeof(want), "%" PRIu64, u);
		assert_string_equal(got, want);
		assert_int_equal(n, strlen(want));
		n = bp_num_int64(got, (int64_t)u);
		snprintf(want, sizeof(want), "%" PRId64, (int64_t)u);
		assert_string_equal(got, want);
		assert_int_equal(n, strlen(want));
	}
}

/* whole numbers skip the float formatting: spelled as printf's %.15g spells them, plus ".0" */
static void numfmt__whole_numbers__as_printf_spells_them(void **state)
{
	static const double edge[] = { 0, 1, -1, 9, 10, 99999, 1e14, 999999999999999.0,
				       -999999999999999.0, 1e15, 1e15 + 1, 123456789012345.0,
				       4503599627370496.0, -4503599627370497.0, 1e300 };
	char want[64];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	double v;
	int i;

	for (i = 0; i < (int)(sizeof(edge) / sizeof(edge[0])) + 100000; i++) {
		if (i < (int)(sizeof(edge) / sizeof(edge[0]))) {
			v = edge[i];
		} else {
			/* whole numbers of every size from a few bits to past 2^53 */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = (double)(int64_t)(x >> (x % 62)) * ((x & 1) ? -1 : 1);
		}
		snprintf(want, sizeof(want), "%.15g", v);
		/* what reads back at 15 digits is what the slow path printed, with a ".0" */
		if (bp_num_strtod(want, NULL) != v)
			continue;
		if (!strpbrk(want, ".e"))
			strcat(want, ".0");
		assert_string_equal(num(v, BP_NUM_JSON), want);
	}
}

/* printf's shortest of %.15g, %.16g and %.17g: what bp_num_double() printed before its fast path */
static void printf_shortest(char *out, size_t size, double v)
{
	int prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(out, size, "%.*g", prec, v);
		if (prec == 17 || bp_num_strtod(out, NULL) == v)
			break;
	}
}

/*
 * Numbers with a fraction skip printf where they can (numfmt.c,
 * fixed_short() and long_short()): each spelled as printf spells it, for
 * nanoseconds as seconds, shares, ratios, short decimals and their
 * neighbours, the range edges, and random doubles of every magnitude.
 */
static void numfmt__fractions__as_printf_spells_them(void **state)
{
	static const double edge[] = { 0.1, -0.1, 0.5, 1e-4, -1e-4, 9.9999999999999e-5, 0.00010000000000000002,
				       999999999999999.9, 99999999999999.98, 1.5, 0.3, 2.675,
				       1.0 / 3, 2.0 / 3, 0.013979402, 5.702452643129659e-06, 1e15 - 0.5,
				       123456789.123456789, 0.000123456789012345, 7.0000000000001,
				       741.0 / 991, 0.1 + 0.2, 99999999999999.99, 0.00010000000000000001 };
	char want[64], got[BP_NUM_DOUBLE_MAX];
	uint64_t x = 0x2545f4914f6cdd1dULL, bits;
	double v;
	int i, n;

	for (i = 0; i < (int)(sizeof(edge) / sizeof(edge[0])) + 600000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i < (int)(sizeof(edge) / sizeof(edge[0]))) {
			v = edge[i];
		} else if (i % 3 == 0) {
			/* durations: nanoseconds (or microseconds) as seconds */
			v = (double)(x >> (x % 50)) / (i % 2 ? 1e9 : 1e6);
		} else if (i % 3 == 1 && i % 2) {
			/* short decimals and shares */
			v = (double)(int64_t)(x % 100000000) / pow(10, (double)(x % 12)) - (double)(x % 7);
		} else if (i % 3 == 1 && i % 4) {
			/* ratios of counts (a window's shares: 741 of 991 samples) */
			v = (double)(x % 100000 + 1) / (double)((x >> 24) % 100000 + 1);
		} else if (i % 3 == 1) {
			/* a short decimal's neighbours: 17 digits, or 16 by a hair */
			v = nextafter((double)(int64_t)(x % 1000000) / pow(10, (double)(x % 9)),
				      x & 1 ? INFINITY : -INFINITY);
		} else {
			/* any double from 1e-6 to 1e17, sign and all */
			bits = (x & 0x800fffffffffffffULL) |
			       ((uint64_t)(1003 + (x >> 20) % 76) << 52);
			memcpy(&v, &bits, sizeof(v));
		}
		if (v == trunc(v) || !isfinite(v))
			continue;
		printf_shortest(want, sizeof(want), v);
		if (!strpbrk(want, ".e"))
			strcat(want, ".0");
		n = bp_num_double(got, sizeof(got), v, BP_NUM_JSON);
		assert_string_equal(got, want);
		assert_int_equal(n, strlen(want));
		/* Prometheus's spelling of a fraction is the same digits */
		n = bp_num_double(got, sizeof(got), v, BP_NUM_PROM);
		printf_shortest(want, sizeof(want), v);
		assert_string_equal(got, want);
	}
}

static void writer__comma_locale__still_writes_dot(void **state)
{
	static const char *const comma_locales[] = {
		"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "ru_RU.UTF-8",
	};
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json *root;
	const char *loc = NULL;
	size_t i;

	for (i = 0; i < sizeof(comma_locales) / sizeof(comma_locales[0]) && !loc; i++)
		loc = setlocale(LC_NUMERIC, comma_locales[i]);
	/* none installed: compile de_DE into a private directory, if the sources exist */
	if (!loc && !access("/usr/share/i18n/locales/de_DE", R_OK)) {
		char cmd[512];

		strcpy(locdir, "/tmp/bp-locale-XXXXXX");
		if (mkdtemp(locdir)) {
			snprintf(cmd, sizeof(cmd),
				 "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", locdir);
			if (system(cmd) == 0) {
				setenv("LOCPATH", locdir, 1);
				loc = setlocale(LC_NUMERIC, "de_DE.UTF-8");
			}
		}
	}
	if (!loc) {
		fprintf(stderr, "\n*** SKIPPED writer__comma_locale__still_writes_dot: no locale with a "
				"decimal comma is installed and /usr/share/i18n/locales/de_DE is missing "
				"(Debian package: locales) ***\n\n");
		rm_locdir();
		skip();
	}

	assert_string_equal(write_double(&b, 0.5), "0.5");
	assert_string_equal(num(0.5, BP_NUM_PROM), "0.5");
	assert_true(bp_num_strtod("0.25", NULL) == 0.25);
	root = parse_ok("[0.5, 1.25e-3, 1.7976931348623157e308]");
	assert_true(bp_json_num(bp_json_at(root, 0)) == 0.5);
	assert_true(bp_json_num(bp_json_at(root, 1)) == 1.25e-3);
	assert_true(bp_json_num(bp_json_at(root, 2)) == 1.7976931348623157e308);
	bp_json_free(root);
	setlocale(LC_NUMERIC, "C");
	bp_buf_free(&b);
	rm_locdir();
}

/* ------------------------------------------------------------------ reader */

static void parse__scalars__types_and_values(void **state)
{
	struct bp_json *root;

	root = parse_ok(" \t\r\n null \n");
	assert_int_equal(bp_json_type(root), BP_JSON_NULL);
	bp_json_free(root);

	root = parse_ok("true");
	assert_int_equal(bp_json_type(root), BP_JSON_BOOL);
	assert_int_equal(bp_json_bool(root), 1);
	bp_json_free(root);

	root = parse_ok("false");
	assert_int_equal(bp_json_bool(root), 0);
	bp_json_free(root);

	root = parse_ok("\"hi\"");
	assert_int_equal(bp_json_type(root), BP_JSON_STRING);
	assert_string_equal(bp_json_str(root), "hi");
	assert_int_equal(bp_json_len(root), 2);
	bp_json_free(root);

	root = parse_ok("-12.5e1");
	assert_int_equal(bp_json_type(root), BP_JSON_NUMBER);
	assert_true(bp_json_num(root) == -125.0);
	bp_json_free(root);

	root = parse_ok("[]");
	assert_int_equal(bp_json_type(root), BP_JSON_ARRAY);
	assert_int_equal(bp_json_len(root), 0);
	assert_null(bp_json_at(root, 0));
	bp_json_free(root);

	root = parse_ok("{ }");
	assert_int_equal(bp_json_type(root), BP_JSON_OBJECT);
	assert_int_equal(bp_json_len(root), 0);
	assert_null(bp_json_get(root, ""));
	bp_json_free(root);
}

static void parse__numbers__integers_exact_doubles_correct(void **state)
{
	struct bp_json *root;
	const struct bp_json *v;
	uint64_t u;
	int64_t i;

	root = parse_ok("[9223372036854775807, -9223372036854775808, 9223372036854775808,"
			" 18446744073709551615, 18446744073709551616, -9223372036854775809,"
			" -1, 1.5, 1e3, 2.0, -0, 9007199254740993, 1e19, 1E+2, 0.000123,"
			" 123456789012345678901234567890, 0e500, 1e-400, -0.0]");

	v = bp_json_at(root, 0);
	assert_int_equal(bp_json_int(v, &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(bp_json_uint(v, &u), 0);
	assert_true(u == INT64_MAX);

	v = bp_json_at(root, 1);
	assert_int_equal(bp_json_int(v, &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(bp_json_uint(v, &u), -ERANGE);

	v = bp_json_at(root, 2);
	assert_int_equal(bp_json_int(v, &i), -ERANGE);
	assert_int_equal(bp_json_uint(v, &u), 0);
	assert_true(u == 9223372036854775808ULL);

	v = bp_json_at(root, 3);
	assert_int_equal(bp_json_uint(v, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_true(bp_json_num(v) == 18446744073709551616.0);

	/* integer literals past 64 bits are only approximately known */
	v = bp_json_at(root, 4);
	assert_int_equal(bp_json_int(v, &i), -ERANGE);
	assert_int_equal(bp_json_uint(v, &u), -ERANGE);
	assert_true(bp_json_num(v) == 18446744073709551616.0);
	v = bp_json_at(root, 5);
	assert_int_equal(bp_json_int(v, &i), -ERANGE);
	assert_true(bp_json_num(v) == -9223372036854775808.0);

	assert_int_equal(bp_json_uint(bp_json_at(root, 6), &u), -ERANGE);
	assert_int_equal(bp_json_int(bp_json_at(root, 7), &i), -ERANGE);
	assert_int_equal(bp_json_int(bp_json_at(root, 8), &i), 0);
	assert_true(i == 1000);
	assert_int_equal(bp_json_int(bp_json_at(root, 9), &i), 0);
	assert_true(i == 2);

	v = bp_json_at(root, 10);
	assert_int_equal(bp_json_int(v, &i), 0);
	assert_true(i == 0);
	assert_true(signbit(bp_json_num(v)));

	assert_int_equal(bp_json_int(bp_json_at(root, 11), &i), 0);
	assert_true(i == 9007199254740993LL);
	assert_int_equal(bp_json_int(bp_json_at(root, 12), &i), -ERANGE);
	assert_int_equal(bp_json_uint(bp_json_at(root, 12), &u), 0);
	assert_true(u == 10000000000000000000ULL);
	assert_true(bp_json_num(bp_json_at(root, 13)) == 100.0);
	assert_true(bp_json_num(bp_json_at(root, 14)) == 0.000123);
	assert_true(bp_json_num(bp_json_at(root, 15)) == 123456789012345678901234567890.0);
	assert_true(bp_json_num(bp_json_at(root, 16)) == 0.0);
	/* underflow to zero is fine; only overflow is refused */
	assert_true(bp_json_num(bp_json_at(root, 17)) == 0.0);
	assert_true(signbit(bp_json_num(bp_json_at(root, 18))));
	bp_json_free(root);
}

static void parse__random_decimals__match_strtod(void **state)
{
	static const char *const hard[] = {
		"9007199254740993.0", "9007199254740993e0", "0.1e-22", "1e22", "1e23",
		"4.35", "2.2250738585072011e-308", "2.2250738585072012e-308",
		"4.9406564584124654e-324", "2.4703282292062327e-324", "1.7976931348623157e308",
		"1.7976931348623158e308", "0.30000000000000004", "123456789012345678e-10",
		"18446744073709551615.5", "0.000000000000000000000000000001",
		"1000000000000000000000000000000000000e-37",
	};
	char text[64];
	struct bp_json *root;
	size_t i;
	int k, digits, point;

	for (i = 0; i < sizeof(hard) / sizeof(hard[0]); i++) {
		root = parse_ok(hard[i]);
		assert_true(bits(bp_json_num(root)) == bits(strtod(hard[i], NULL)));
		bp_json_free(root);
	}
	for (i = 0; i < 50000; i++) {
		char *p = text;

		if (rnd() & 1)
			*p++ = '-';
		digits = 1 + rnd() % 20;
		point = rnd() % (digits + 1);
		*p++ = '1' + rnd() % 9;
		for (k = 1; k < digits; k++) {
			if (k == point)
				*p++ = '.';
			*p++ = '0' + rnd() % 10;
		}
		if (rnd() & 1)
			p += sprintf(p, "e%d", (int)(rnd() % 81) - 40);
		*p = '\0';
		root = parse_ok(text);
		if (bits(bp_json_num(root)) != bits(strtod(text, NULL)))
			fail_msg("%s: parsed %.17g, strtod %.17g", text, bp_json_num(root),
				 strtod(text, NULL));
		bp_json_free(root);
	}
}

static void parse__strings__escapes_decoded(void **state)
{
	struct bp_json *root;
	const struct bp_json *v;

	root = parse_ok("[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20AC\\ud83d\\ude00\","
			" \"\\ud800\", \"\\udc00x\", \"\\ud800\\u0041\", \"\\ud83d\\ud83d\\ude00\","
			" \"a\\u0000b\", \"\xc3\xa9\xf0\x9f\x98\x80\x7f\", \"\"]");
	assert_string_equal(bp_json_str(bp_json_at(root, 0)), "\"\\/\b\f\n\r\t");
	assert_string_equal(bp_json_str(bp_json_at(root, 1)),
			    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* lone surrogates have no UTF-8 form */
	assert_string_equal(bp_json_str(bp_json_at(root, 2)), FFFD);
	assert_string_equal(bp_json_str(bp_json_at(root, 3)), FFFD "x");
	assert_string_equal(bp_json_str(bp_json_at(root, 4)), FFFD "A");
	assert_string_equal(bp_json_str(bp_json_at(root, 5)), FFFD "\xf0\x9f\x98\x80");
	v = bp_json_at(root, 6);
	assert_int_equal(bp_json_len(v), 3);
	assert_memory_equal(bp_json_str(v), "a\0b", 4);
	assert_string_equal(bp_json_str(bp_json_at(root, 7)), "\xc3\xa9\xf0\x9f\x98\x80\x7f");
	assert_string_equal(bp_json_str(bp_json_at(root, 8)), "");
	assert_int_equal(bp_json_len(bp_json_at(root, 8)), 0);
	bp_json_free(root);
}

static void parse__invalid__rejected_with_line_and_col(void **state)
{
	static const struct {
		const char *text;
		int line, col;
		const char *msg;
	} cases[] = {
		/* trailing commas */
		{ "[1,]", 1, 3, "trailing comma" },
		{ "{\"a\":1,}", 1, 7, "trailing comma" },
		{ "[\"a\",]", 1, 5, "trailing comma" },
		{ "[1,\n 2,\n]", 2, 3, "trailing comma" },
		/* leading zeros and other number grammar */
		{ "[01]", 1, 2, "leading zeros are not allowed" },
		{ "-01", 1, 1, "leading zeros are not allowed" },
		{ "00", 1, 1, "leading zeros are not allowed" },
		{ "01.5", 1, 1, "leading zeros are not allowed" },
		{ "1.", 1, 3, "invalid number: expected a digit after '.'" },
		{ "1.e5", 1, 3, "invalid number: expected a digit after '.'" },
		{ "1e", 1, 3, "invalid number: expected a digit in the exponent" },
		{ "1e+", 1, 4, "invalid number: expected a digit in the exponent" },
		{ "1.5e+-3", 1, 6, "invalid number: expected a digit in the exponent" },
		{ "-", 1, 2, "invalid number" },
		{ "- 1", 1, 2, "invalid number" },
		{ "-Infinity", 1, 2, "invalid number" },
		{ ".5", 1, 1, "unexpected character '.'" },
		{ "+1", 1, 1, "unexpected character '+'" },
		{ "NaN", 1, 1, "unexpected character 'N'" },
		{ "Infinity", 1, 1, "unexpected character 'I'" },
		{ "0x10", 1, 2, "trailing characters after the JSON value" },
		{ "1e400", 1, 1, "number out of range" },
		{ "[-1e400]", 1, 2, "number out of range" },
		/* control characters, escapes, UTF-8 */
		{ "\"a\tb\"", 1, 3, "unescaped control character in string" },
		{ "\"a\nb\"", 1, 3, "unescaped control character in string" },
		{ "[\"\x01\"]", 1, 3, "unescaped control character in string" },
		{ "\"\\x\"", 1, 2, "invalid escape" },
		{ "\"\\u12G4\"", 1, 2, "invalid \\u escape" },
		{ "\"\\u12\"", 1, 2, "invalid \\u escape" },
		{ "\"\\ud800\\u\"", 1, 8, "invalid \\u escape" },
		{ "\"abc", 1, 1, "unterminated string" },
		{ "[\"abc\\", 1, 2, "unterminated string" },
		{ "\"\xff\"", 1, 2, "invalid UTF-8 in string" },
		{ "\"\xc0\x80\"", 1, 2, "invalid UTF-8 in string" },
		{ "\"ok\xed\xa0\x80\"", 1, 4, "invalid UTF-8 in string" },
		{ "\"\xf0\x9f\x98\"", 1, 2, "invalid UTF-8 in string" },
		/* trailing garbage */
		{ "[1] x", 1, 5, "trailing characters after the JSON value" },
		{ "[1]]", 1, 4, "trailing characters after the JSON value" },
		{ "{} {}", 1, 4, "trailing characters after the JSON value" },
		{ "nulll", 1, 5, "trailing characters after the JSON value" },
		{ "[1]\n\n  }", 3, 3, "trailing characters after the JSON value" },
		{ "\"a\"\"b\"", 1, 4, "trailing characters after the JSON value" },
		/* structure */
		{ "", 1, 1, "unexpected end of input" },
		{ "  \n ", 2, 2, "unexpected end of input" },
		{ "[", 1, 2, "unexpected end of input" },
		{ "{\"a\"", 1, 5, "unexpected end of input" },
		{ "{\"a\":1", 1, 7, "unexpected end of input" },
		{ "[1 2]", 1, 4, "expected ',' or ']'" },
		{ "{\"a\" 1}", 1, 6, "expected ':'" },
		{ "{\n  \"a\": 1,\n  \"b\" 2\n}", 3, 7, "expected ':'" },
		{ "{\"a\":1 \"b\":2}", 1, 8, "expected ',' or '}'" },
		{ "{1:2}", 1, 2, "expected a string key" },
		{ "{\"a\":1,,}", 1, 8, "expected a string key" },
		{ "{\"a\":}", 1, 6, "unexpected character '}'" },
		{ "[,1]", 1, 2, "unexpected character ','" },
		{ "[1,,2]", 1, 4, "unexpected character ','" },
		{ "tru", 1, 1, "invalid literal" },
		{ "[nul]", 1, 2, "invalid literal" },
		{ "True", 1, 1, "unexpected character 'T'" },
		{ "\xef\xbb\xbf{}", 1, 1, "unexpected byte 0xef" },
		{ "'a'", 1, 1, "unexpected character '''" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_error(cases[i].text, cases[i].line, cases[i].col, cases[i].msg);

	/* bytes past a NUL are still input */
	expect_error_n("[1]\0", 4, 1, 4, "trailing characters after the JSON value");
	expect_error_n("\0", 1, 1, 1, "unexpected byte 0x00");
	expect_error_n("\"a\0\"", 4, 1, 3, "unescaped control character in string");
}

static void parse__error_reporting__null_and_short_buffers(void **state)
{
	char small[8];

	errno = 0;
	assert_null(bp_json_parse("[1,]", 4, NULL, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(bp_json_parse("[1,]", 4, small, sizeof(small)));
	assert_string_equal(small, "line 1 ");
	/* NULL text is empty input, not a crash */
	assert_null(bp_json_parse(NULL, 0, small, sizeof(small)));
}

static void parse__not_nul_terminated__no_overread(void **state)
{
	static const char *const good[] = {
		"12345", "1.5e3", "1.7976931348623157e308", "-0.1", "true", "\"x\"", "[1]",
	};
	static const char *const bad[] = {
		"\"abc", "\"abc\\", "tru", "[1,2", "{\"a\"", "1e", "-", "\"\\u12",
	};
	struct bp_json *root;
	char *copy;
	size_t i, n;

	/* exact-size heap copies: ASan catches a read one byte too far */
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		n = strlen(good[i]);
		copy = malloc(n);
		assert_non_null(copy);
		memcpy(copy, good[i], n);
		root = parse_ok_n(copy, n);
		assert_true(bp_json_type(root) != BP_JSON_NONE);
		bp_json_free(root);
		free(copy);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = strlen(bad[i]);
		copy = malloc(n);
		assert_non_null(copy);
		memcpy(copy, bad[i], n);
		assert_null(bp_json_parse(copy, n, NULL, 0));
		free(copy);
	}
}

static char *nested(const char *open, const char *close, int depth, size_t *len)
{
	size_t lo = strlen(open), lc = strlen(close);
	char *s = malloc(depth * (lo + lc) + 2), *p = s;
	int i;

	assert_non_null(s);
	for (i = 0; i < depth; i++, p += lo)
		memcpy(p, open, lo);
	*p++ = '1';
	for (i = 0; i < depth; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	*len = p - s;
	return s;
}

static void parse__deep_nesting__limit_enforced(void **state)
{
	struct bp_json *root;
	char want[64];
	size_t len;
	char *s;

	s = nested("[", "]", BP_JSON_MAX_DEPTH, &len);
	root = parse_ok_n(s, len);
	assert_non_null(bp_json_path(root, "[0][0][0][0][0][0][0][0][0][0]"));
	bp_json_free(root);
	free(s);

	snprintf(want, sizeof(want), "nesting deeper than %d levels", BP_JSON_MAX_DEPTH);
	s = nested("[", "]", BP_JSON_MAX_DEPTH + 1, &len);
	expect_error_n(s, len, 1, BP_JSON_MAX_DEPTH + 1, want);
	free(s);

	s = nested("{\"a\":", "}", BP_JSON_MAX_DEPTH, &len);
	root = parse_ok_n(s, len);
	bp_json_free(root);
	free(s);
	s = nested("{\"a\":", "}", BP_JSON_MAX_DEPTH + 1, &len);
	expect_error_n(s, len, 1, 5 * BP_JSON_MAX_DEPTH + 1, want);
	free(s);

	/* hostile: far deeper than any stack would survive if unchecked */
	s = nested("[", "]", 1000000, &len);
	expect_error_n(s, len, 1, BP_JSON_MAX_DEPTH + 1, want);
	free(s);
}

static void parse__duplicate_keys__last_wins_order_kept(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json *root;
	int64_t v;
	int i;

	root = parse_ok("{\"a\":1,\"b\":2,\"a\":3}");
	assert_int_equal(bp_json_len(root), 3);
	assert_int_equal(bp_json_int(bp_json_get(root, "a"), &v), 0);
	assert_int_equal(v, 3);
	assert_string_equal(bp_json_key_at(root, 0), "a");
	assert_string_equal(bp_json_key_at(root, 1), "b");
	assert_string_equal(bp_json_key_at(root, 2), "a");
	assert_null(bp_json_key_at(root, 3));
	assert_int_equal(bp_json_int(bp_json_at(root, 0), &v), 0);
	assert_int_equal(v, 1);
	bp_json_free(root);

	/* large objects are looked up through a sorted index: same rules */
	bp_buf_puts(&b, "{");
	for (i = 0; i < 40; i++)
		bp_buf_printf(&b, "\"k%d\":%d,", i % 20, i);
	bp_buf_puts(&b, "\"\":-1,\"k\":-2}");
	root = parse_ok(b.data);
	assert_int_equal(bp_json_len(root), 42);
	for (i = 0; i < 20; i++) {
		char key[16];

		snprintf(key, sizeof(key), "k%d", i);
		assert_int_equal(bp_json_int(bp_json_get(root, key), &v), 0);
		assert_int_equal(v, i + 20);
	}
	assert_int_equal(bp_json_int(bp_json_get(root, ""), &v), 0);
	assert_int_equal(v, -1);
	assert_int_equal(bp_json_int(bp_json_get(root, "k"), &v), 0);
	assert_int_equal(v, -2);
	assert_null(bp_json_get(root, "k20"));
	assert_null(bp_json_get(root, "k1 "));
	assert_null(bp_json_get(root, "j"));
	assert_null(bp_json_get(root, "l"));
	assert_string_equal(bp_json_key_at(root, 0), "k0");
	assert_string_equal(bp_json_key_at(root, 41), "k");
	bp_json_free(root);
	bp_buf_free(&b);
}

static void accessors__null_and_wrong_type__safe(void **state)
{
	struct bp_json *root;
	const struct bp_json *n, *s;
	uint64_t u;
	int64_t i;

	assert_int_equal(bp_json_type(NULL), BP_JSON_NONE);
	assert_null(bp_json_get(NULL, "a"));
	assert_null(bp_json_at(NULL, 0));
	assert_null(bp_json_key_at(NULL, 0));
	assert_int_equal(bp_json_len(NULL), 0);
	assert_null(bp_json_str(NULL));
	assert_true(isnan(bp_json_num(NULL)));
	assert_int_equal(bp_json_int(NULL, &i), -EINVAL);
	assert_int_equal(bp_json_uint(NULL, &u), -EINVAL);
	assert_int_equal(bp_json_bool(NULL), -EINVAL);
	assert_null(bp_json_path(NULL, "a"));
	bp_json_free(NULL);

	root = parse_ok("{\"n\":1,\"s\":\"x\",\"z\":null,\"a\":[true]}");
	n = bp_json_get(root, "n");
	s = bp_json_get(root, "s");
	assert_null(bp_json_get(root, NULL));
	assert_null(bp_json_str(n));
	assert_true(isnan(bp_json_num(s)));
	assert_int_equal(bp_json_int(s, &i), -EINVAL);
	assert_int_equal(bp_json_bool(bp_json_get(root, "z")), -EINVAL);
	assert_int_equal(bp_json_bool(bp_json_path(root, "a[0]")), 1);
	assert_null(bp_json_at(s, 0));
	assert_null(bp_json_get(bp_json_get(root, "a"), "0"));
	assert_null(bp_json_key_at(bp_json_get(root, "a"), 0));
	assert_int_equal(bp_json_len(n), 0);
	assert_int_equal(bp_json_len(bp_json_get(root, "z")), 0);
	/* chained lookups through missing members just stay NULL */
	assert_null(bp_json_str(bp_json_get(bp_json_at(bp_json_get(root, "x"), 3), "y")));
	/* objects can be walked by position too */
	assert_string_equal(bp_json_key_at(root, 1), "s");
	assert_ptr_equal(bp_json_at(root, 1), s);
	bp_json_free(root);
}

static void path__lookups__found_missing_and_malformed(void **state)
{
	static const char *const malformed[] = {
		"processes[", "processes[x]", "processes[0", "processes[-1]", "processes..pid",
		".processes", "processes.", "processes]", "processes[0]x", "processes[]",
		"processes[99999999999999999999999999]", "processes.[0]", "[0]",
	};
	struct bp_json *root, *arr;
	size_t i;
	int64_t v;

	root = parse_ok("{\"processes\":[{\"pid\":1,\"verdict\":{\"class\":\"cpu-bound\"}},"
			"{\"pid\":2,\"tags\":[[\"a\",\"b\"],[\"c\"]]}],\"a.b\":1,\"\":{\"x\":2}}");
	assert_string_equal(bp_json_str(bp_json_path(root, "processes[0].verdict.class")),
			    "cpu-bound");
	assert_string_equal(bp_json_str(bp_json_path(root, "processes[1].tags[0][1]")), "b");
	assert_string_equal(bp_json_str(bp_json_path(root, "processes[1].tags[1][0]")), "c");
	assert_int_equal(bp_json_int(bp_json_path(root, "processes[1].pid"), &v), 0);
	assert_int_equal(v, 2);
	assert_ptr_equal(bp_json_path(root, ""), root);
	assert_int_equal(bp_json_len(bp_json_path(root, "processes")), 2);

	assert_null(bp_json_path(root, "processes[2]"));
	assert_null(bp_json_path(root, "processes[1].verdict"));
	assert_null(bp_json_path(root, "processes[1].tags[2][0]"));
	assert_null(bp_json_path(root, "processes.pid"));
	assert_null(bp_json_path(root, "processes[0].pid.x"));
	assert_null(bp_json_path(root, "processes[0].pid[0]"));
	assert_null(bp_json_path(root, "nope"));
	/* keys with '.' need bp_json_get() */
	assert_null(bp_json_path(root, "a.b"));
	assert_non_null(bp_json_get(root, "a.b"));
	assert_null(bp_json_path(root, NULL));
	for (i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++)
		if (bp_json_path(root, malformed[i]))
			fail_msg("malformed path \"%s\" resolved", malformed[i]);

	arr = parse_ok("[{\"name\":\"a\"},{\"name\":\"b\"}]");
	assert_string_equal(bp_json_str(bp_json_path(arr, "[1].name")), "b");
	assert_null(bp_json_path(arr, "[2].name"));
	assert_null(bp_json_path(arr, "name"));
	bp_json_free(arr);
	bp_json_free(root);
}

/* a document shaped like the --json report contract */
static void write_report(struct bp_json_w *w)
{
	static const char *const classes[] = { "cpu-bound", "io-bound" };
	int p, h;

	bp_json_w_begin_object(w);
	bp_json_w_kv_int64(w, "version", 1);
	bp_json_w_kv_double(w, "duration_s", 5.0);
	bp_json_w_kv_int64(w, "hz", 99);
	bp_json_w_key(w, "system");
	bp_json_w_begin_object(w);
	bp_json_w_kv_int64(w, "cpus", 2);
	bp_json_w_kv_bool(w, "pmu", false);
	bp_json_w_end_object(w);
	bp_json_w_key(w, "processes");
	bp_json_w_begin_array(w);
	for (p = 0; p < 2; p++) {
		bp_json_w_begin_object(w);
		bp_json_w_kv_int64(w, "pid", 1234 + p);
		bp_json_w_kv_string(w, "comm", p ? "dd" : "xz");
		bp_json_w_key(w, "cmdline");
		bp_json_w_string_n(w, "xz\0-9 \xff big.tar", 15);
		bp_json_w_kv_double(w, "wall_s", 5.0);
		bp_json_w_kv_double(w, "on_cpu_s", 4.9);
		bp_json_w_key(w, "off_cpu_s");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "runqueue", 0.01);
		bp_json_w_kv_double(w, "io", 0.0);
		bp_json_w_kv_double(w, "lock", 0.0);
		bp_json_w_kv_double(w, "sleep", 0.05);
		bp_json_w_kv_double(w, "other", 0.0);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "io");
		bp_json_w_begin_object(w);
		bp_json_w_kv_uint64(w, "ops", 0);
		bp_json_w_kv_uint64(w, "bytes", 0);
		bp_json_w_kv_double(w, "wait_s", 0.0);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "verdict");
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "class", classes[p]);
		bp_json_w_kv_string(w, "confidence", "high");
		bp_json_w_key(w, "evidence");
		bp_json_w_begin_array(w);
		bp_json_w_string(w, "98% of wall time on-CPU across 1 thread");
		bp_json_w_end_array(w);
		bp_json_w_key(w, "levers");
		bp_json_w_begin_array(w);
		bp_json_w_end_array(w);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "hotspots");
		bp_json_w_begin_array(w);
		for (h = 0; h < 3; h++) {
			bp_json_w_begin_object(w);
			bp_json_w_kv_string(w, "function", h ? "memcpy" : "lzma_mf_bt4_find");
			bp_json_w_kv_string(w, "module", "liblzma.so.5");
			bp_json_w_kv_double(w, "self", 0.41 / (h + 1));
			bp_json_w_kv_double(w, "total", NAN);
			bp_json_w_end_object(w);
		}
		bp_json_w_end_array(w);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_key(w, "drops");
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "samples", 0);
	bp_json_w_kv_uint64(w, "stacks", 7);
	bp_json_w_end_object(w);
	bp_json_w_end_object(w);
}

static void check_report(const struct bp_json *root)
{
	const struct bp_json *off;
	int64_t v;
	uint64_t u;

	assert_int_equal(bp_json_int(bp_json_path(root, "version"), &v), 0);
	assert_int_equal(v, 1);
	assert_true(bp_json_num(bp_json_path(root, "duration_s")) == 5.0);
	assert_int_equal(bp_json_int(bp_json_path(root, "duration_s"), &v), 0);
	assert_int_equal(bp_json_int(bp_json_path(root, "system.cpus"), &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(bp_json_bool(bp_json_path(root, "system.pmu")), 0);
	assert_int_equal(bp_json_len(bp_json_path(root, "processes")), 2);
	assert_string_equal(bp_json_str(bp_json_path(root, "processes[0].comm")), "xz");
	assert_string_equal(bp_json_str(bp_json_path(root, "processes[1].verdict.class")),
			    "io-bound");
	assert_int_equal(bp_json_len(bp_json_path(root, "processes[0].cmdline")), 17);
	assert_memory_equal(bp_json_str(bp_json_path(root, "processes[0].cmdline")),
			    "xz\0-9 " FFFD " big.tar", 17);
	assert_true(bits(bp_json_num(bp_json_path(root, "processes[0].on_cpu_s"))) == bits(4.9));
	assert_string_equal(bp_json_str(bp_json_path(root, "processes[0].verdict.evidence[0]")),
			    "98% of wall time on-CPU across 1 thread");
	assert_int_equal(bp_json_type(bp_json_path(root, "processes[0].verdict.levers")),
			 BP_JSON_ARRAY);
	assert_true(bits(bp_json_num(bp_json_path(root, "processes[1].hotspots[2].self"))) ==
		    bits(0.41 / 3));
	assert_int_equal(bp_json_type(bp_json_path(root, "processes[1].hotspots[2].total")),
			 BP_JSON_NULL);
	assert_int_equal(bp_json_uint(bp_json_path(root, "drops.stacks"), &u), 0);
	assert_int_equal(u, 7);

	/* key order is document order */
	off = bp_json_path(root, "processes[0].off_cpu_s");
	assert_int_equal(bp_json_len(off), 5);
	assert_string_equal(bp_json_key_at(off, 0), "runqueue");
	assert_string_equal(bp_json_key_at(off, 4), "other");
	assert_true(bits(bp_json_num(bp_json_at(off, 0))) == bits(0.01));
	assert_true(bits(bp_json_num(bp_json_at(off, 3))) == bits(0.05));
}

static void roundtrip__report_document__pretty_and_compact(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;
	struct bp_json *root;
	int pretty;

	for (pretty = 0; pretty < 2; pretty++) {
		bp_buf_reset(&b);
		bp_json_w_init(&w, &b, pretty);
		write_report(&w);
		assert_int_equal(bp_json_w_finish(&w), 0);
		assert_true(!pretty == !strchr(b.data, '\n'));
		root = parse_ok_n(b.data, b.len);
		check_report(root);
		bp_json_free(root);
	}
	bp_buf_free(&b);
}

static void parse__large_input__linear_time(void **state)
{
	struct bp_buf b = BP_BUF_INIT;
	struct timespec t0;
	struct bp_json *root;
	double secs;
	int64_t v;
	int i;

	/* ~12 MB: many small objects, one huge escaped string, one huge object */
	bp_buf_puts(&b, "{\"hotspots\":[");
	for (i = 0; i < 100000; i++)
		bp_buf_printf(&b, "%s{\"function\":\"sym_%d\",\"module\":\"lib\\u00e9.so\","
			      "\"self\":0.0123,\"total\":%d.5e-3,\"n\":%d}",
			      i ? "," : "", i, i, i);
	bp_buf_puts(&b, "],\"big\":\"");
	for (i = 0; i < 400000; i++)
		bp_buf_puts(&b, "ab\\n\\\"\xc3\xa9");
	bp_buf_puts(&b, "\",\"index\":{");
	for (i = 0; i < 200000; i++)
		bp_buf_printf(&b, "%s\"key%d\":%d", i ? "," : "", i, i);
	bp_buf_puts(&b, "}}");
	assert_int_equal(b.err, 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	root = parse_ok_n(b.data, b.len);
	secs = elapsed_s(&t0);
	print_message("      parsed %.1f MB in %.3f s (sanitizer build)\n", b.len / 1e6, secs);
	/* quadratic behaviour would take minutes here; even ASan is far below */
	assert_true(secs < 5.0);

	assert_int_equal(bp_json_len(bp_json_get(root, "hotspots")), 100000);
	assert_string_equal(bp_json_str(bp_json_path(root, "hotspots[99999].function")),
			    "sym_99999");
	assert_int_equal(bp_json_len(bp_json_get(root, "big")), 400000 * 6);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 200000; i += 7) {
		char key[16];

		snprintf(key, sizeof(key), "key%d", i);
		assert_int_equal(bp_json_int(bp_json_get(bp_json_get(root, "index"), key), &v), 0);
		assert_int_equal(v, i);
	}
	assert_true(elapsed_s(&t0) < 2.0);
	bp_json_free(root);
	bp_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writer__nested_compact__exact_text),
		cmocka_unit_test(writer__nested_pretty__exact_text),
		cmocka_unit_test(writer__top_level_scalars_and_empties__exact_text),
		cmocka_unit_test(writer__misuse__einval_sticky_and_no_output),
		cmocka_unit_test(writer__depth_limit__64_ok_65_einval),
		cmocka_unit_test(writer__buffer_enomem__reported_by_finish),
		cmocka_unit_test(writer__escapes__exact_text),
		cmocka_unit_test(writer__each_byte_at_each_lane__escaped_alike),
		cmocka_unit_test(writer__invalid_utf8__replaced_by_maximal_subpart),
		cmocka_unit_test(writer__random_bytes__output_always_parses),
		cmocka_unit_test(writer__valid_utf8__round_trips_unchanged),
		cmocka_unit_test(writer__doubles__shortest_text),
		cmocka_unit_test(writer__doubles__parse_back_bit_exact),
		cmocka_unit_test(writer__integers__extremes_exact),
		cmocka_unit_test(numfmt__styles__json_and_prometheus_spellings),
		cmocka_unit_test(numfmt__whole_numbers__as_printf_spells_them),
		cmocka_unit_test(numfmt__fractions__as_printf_spells_them),
		cmocka_unit_test(numfmt__integers__as_printf_spells_them),
		cmocka_unit_test(writer__comma_locale__still_writes_dot),
		cmocka_unit_test(parse__scalars__types_and_values),
		cmocka_unit_test(parse__numbers__integers_exact_doubles_correct),
		cmocka_unit_test(parse__random_decimals__match_strtod),
		cmocka_unit_test(parse__strings__escapes_decoded),
		cmocka_unit_test(parse__invalid__rejected_with_line_and_col),
		cmocka_unit_test(parse__error_reporting__null_and_short_buffers),
		cmocka_unit_test(parse__not_nul_terminated__no_overread),
		cmocka_unit_test(parse__deep_nesting__limit_enforced),
		cmocka_unit_test(parse__duplicate_keys__last_wins_order_kept),
		cmocka_unit_test(accessors__null_and_wrong_type__safe),
		cmocka_unit_test(path__lookups__found_missing_and_malformed),
		cmocka_unit_test(roundtrip__report_document__pretty_and_compact),
		cmocka_unit_test(parse__large_input__linear_time),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, group_teardown);
}
