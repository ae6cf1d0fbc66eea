// SPDX-License-Identifier: GPL-2.0
/* The JSON writer (util/json.h): valid JSON and valid UTF-8 whatever it is given. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/json.h"
#include "util/numfmt.h"
#include "util/utf8.h"

void bp_json_w_init(struct bp_json_w *w, struct bp_buf *buf, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->pretty = pretty;
	w->first = true;
}

static int w_fail(struct bp_json_w *w, int err)
{
	if (!w->err)
		w->err = err;
	return w->err;
}

static int w_status(const struct bp_json_w *w)
{
	return w->err ? w->err : w->buf->err;
}

static void w_newline(struct bp_json_w *w)
{
	static const char spaces[] = "                                ";
	size_t n = 2 * (size_t)w->depth, k;

	bp_buf_putc(w->buf, '\n');
	while (n) {
		k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;
		bp_buf_append(w->buf, spaces, k);
		n -= k;
	}
}

/* check that a key or value may come now, and write what goes before it */
static int w_prefix(struct bp_json_w *w, bool key)
{
	bool in_object = w->depth && w->open[w->depth - 1] == '{';

	if (w->err)
		return w->err;
	if (key) {
		if (!in_object || w->has_key)
			return w_fail(w, -EINVAL);
	} else if (w->has_key) {
		/* the key already wrote the separator */
		w->has_key = false;
		return 0;
	} else if (!w->depth) {
		return w->done ? w_fail(w, -EINVAL) : 0;
	} else if (in_object) {
		return w_fail(w, -EINVAL);
	}
	if (!w->first)
		bp_buf_putc(w->buf, ',');
	w->first = false;
	if (w->pretty)
		w_newline(w);
	return 0;
}

static int w_scalar(struct bp_json_w *w, const char *text, size_t len)
{
	int err;

	err = w_prefix(w, false);
	if (err)
		return err;
	bp_buf_append(w->buf, text, len);
	if (!w->depth)
		w->done = true;
	return w_status(w);
}

static int w_begin(struct bp_json_w *w, char open)
{
	int err;

	if (!w->err && w->depth == BP_JSON_W_MAX_DEPTH)
		return w_fail(w, -EINVAL);
	err = w_prefix(w, false);
	if (err)
		return err;
	bp_buf_putc(w->buf, open);
	w->open[w->depth++] = open;
	w->first = true;
	return w_status(w);
}

static int w_end(struct bp_json_w *w, char open)
{
	if (w->err)
		return w->err;
	if (!w->depth || w->open[w->depth - 1] != open || w->has_key)
		return w_fail(w, -EINVAL);
	w->depth--;
	/* empty containers stay on one line: {} and [] */
	if (w->pretty && !w->first)
		w_newline(w);
	bp_buf_putc(w->buf, open == '{' ? '}' : ']');
	w->first = false;
	if (!w->depth)
		w->done = true;
	return w_status(w);
}

int bp_json_w_begin_object(struct bp_json_w *w)
{
	return w_begin(w, '{');
}

int bp_json_w_end_object(struct bp_json_w *w)
{
	return w_end(w, '{');
}

int bp_json_w_begin_array(struct bp_json_w *w)
{
	return w_begin(w, '[');
}

int bp_json_w_end_array(struct bp_json_w *w)
{
	return w_end(w, '[');
}

static const char *short_escape(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	}
	return NULL;
}

#define ONES	0x0101010101010101ULL
#define HIGHS	0x8080808080808080ULL

/* a byte of x is zero (exact as an "any": a borrow only reaches bytes above a zero one) */
static inline uint64_t any_zero(uint64_t x)
{
	return (x - ONES) & ~x & HIGHS;
}

/*
 * Eight bytes that go out as they are: ASCII, no control character, no
 * quote or backslash. Names and paths are most of a window's strings, and
 * the loop below took a byte at a time at four tests each: 5.7% of the
 * agent's CPU under the bench's mix.
 */
static inline bool plain8(const unsigned char *s)
{
	uint64_t x;

	memcpy(&x, s, sizeof(x));
	return !((x | ((x - 0x20 * ONES) & ~x)) & HIGHS) && !any_zero(x ^ ('"' * ONES)) &&
	       !any_zero(x ^ ('\\' * ONES));
}

static void w_quoted(struct bp_json_w *w, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str, *end = s + len, *run = s;
	struct bp_buf *b = w->buf;
	const char *esc;
	size_t n, bad = 1;
	unsigned char c;

	bp_buf_putc(b, '"');
	while (s < end) {
		while (end - s >= 8 && plain8(s))
			s += 8;
		if (s == end)
			break;
		c = *s;
		if (c >= 0x20 && c != '"' && c != '\\') {
			if (c < 0x80) {
				s++;
				continue;
			}
			n = bp_utf8_seq(s, end - s, &bad);
			if (n) {
				s += n;
				continue;
			}
		}
		/* copy the run that needed no change in one go */
		bp_buf_append(b, run, s - run);
		if (c >= 0x80) {
			bp_buf_append(b, "\xef\xbf\xbd", 3);
			s += bad;
		} else {
			esc = short_escape(c);
			if (esc) {
				bp_buf_append(b, esc, 2);
			} else {
				char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

				bp_buf_append(b, u, sizeof(u));
			}
			s++;
		}
		run = s;
	}
	bp_buf_append(b, run, s - run);
	bp_buf_putc(b, '"');
}

int bp_json_w_key_n(struct bp_json_w *w, const char *name, size_t len)
{
	int err;

	if (!name)
		return w_fail(w, -EINVAL);
	err = w_prefix(w, true);
	if (err)
		return err;
	w_quoted(w, name, len);
	if (w->pretty)
		bp_buf_append(w->buf, ": ", 2);
	else
		bp_buf_putc(w->buf, ':');
	w->has_key = true;
	return w_status(w);
}

int bp_json_w_key(struct bp_json_w *w, const char *name)
{
	return bp_json_w_key_n(w, name, name ? strlen(name) : 0);
}

int bp_json_w_string_n(struct bp_json_w *w, const char *s, size_t len)
{
	int err;

	if (!s)
		return bp_json_w_null_val(w);
	err = w_prefix(w, false);
	if (err)
		return err;
	w_quoted(w, s, len);
	if (!w->depth)
		w->done = true;
	return w_status(w);
}

int bp_json_w_string(struct bp_json_w *w, const char *s)
{
	return bp_json_w_string_n(w, s, s ? strlen(s) : 0);
}

int bp_json_w_int64(struct bp_json_w *w, int64_t v)
{
	char tmp[BP_NUM_INT_MAX];

	return w_scalar(w, tmp, bp_num_int64(tmp, v));
}

int bp_json_w_uint64(struct bp_json_w *w, uint64_t v)
{
	char tmp[BP_NUM_INT_MAX];

	return w_scalar(w, tmp, bp_num_uint64(tmp, v));
}

int bp_json_w_double_val(struct bp_json_w *w, double v)
{
	char tmp[BP_NUM_DOUBLE_MAX];
	int n;

	n = bp_num_double(tmp, sizeof(tmp), v, BP_NUM_JSON);
	return w_scalar(w, tmp, n);
}

int bp_json_w_bool_val(struct bp_json_w *w, bool v)
{
	return v ? w_scalar(w, "true", 4) : w_scalar(w, "false", 5);
}

int bp_json_w_null_val(struct bp_json_w *w)
{
	return w_scalar(w, "null", 4);
}

int bp_json_w_kv_string(struct bp_json_w *w, const char *key, const char *s)
{
	bp_json_w_key(w, key);
	return bp_json_w_string(w, s);
}

int bp_json_w_kv_int64(struct bp_json_w *w, const char *key, int64_t v)
{
	bp_json_w_key(w, key);
	return bp_json_w_int64(w, v);
}

int bp_json_w_kv_uint64(struct bp_json_w *w, const char *key, uint64_t v)
{
	bp_json_w_key(w, key);
	return bp_json_w_uint64(w, v);
}

int bp_json_w_kv_double(struct bp_json_w *w, const char *key, double v)
{
	bp_json_w_key(w, key);
	return bp_json_w_double_val(w, v);
}

int bp_json_w_kv_bool(struct bp_json_w *w, const char *key, bool v)
{
	bp_json_w_key(w, key);
	return bp_json_w_bool_val(w, v);
}

int bp_json_w_finish(struct bp_json_w *w)
{
	if (w->err)
		return w->err;
	if (w->buf->err)
		return w->buf->err;
	if (w->depth || w->has_key || !w->done)
		return w_fail(w, -EINVAL);
	return 0;
}
