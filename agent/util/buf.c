// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define BP_BUF_MIN_CAP	64

void bp_buf_init(struct bp_buf *b)
{
	memset(b, 0, sizeof(*b));
}

static int buf_fail(struct bp_buf *b, int err)
{
	if (!b->err)
		b->err = err;
	return b->err;
}

int bp_buf_reserve(struct bp_buf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->err)
		return b->err;
	/*
	 * No object can exceed PTRDIFF_MAX bytes; refusing here keeps the size
	 * arithmetic below free of overflow and never asks realloc for the absurd.
	 */
	if (n > PTRDIFF_MAX - 1 - b->len)
		return buf_fail(b, -ENOMEM);
	need = b->len + n + 1;
	if (need <= b->cap)
		return 0;

	/* doubling keeps a long series of small appends linear overall */
	cap = b->cap < BP_BUF_MIN_CAP ? BP_BUF_MIN_CAP : b->cap;
	while (cap < need)
		cap = cap > PTRDIFF_MAX / 2 ? need : cap * 2;

	p = realloc(b->data, cap);
	if (!p)
		return buf_fail(b, -ENOMEM);
	if (!b->data)
		p[0] = '\0';
	b->data = p;
	b->cap = cap;
	return 0;
}

void bp_buf_sink(struct bp_buf *b, int (*sink)(void *ctx, const char *data, size_t len),
		 void *ctx, size_t sink_at)
{
	b->sink = sink;
	b->sink_ctx = ctx;
	b->sink_at = sink_at;
}

int bp_buf_flush(struct bp_buf *b)
{
	int err;

	if (b->err || !b->sink || !b->len)
		return b->err;
	err = b->sink(b->sink_ctx, b->data, b->len);
	if (err)
		return buf_fail(b, err);
	b->len = 0;
	b->data[0] = '\0';
	return 0;
}

static int held(struct bp_buf *b)
{
	return b->sink && b->len >= b->sink_at ? bp_buf_flush(b) : 0;
}

int bp_buf_append_slow(struct bp_buf *b, const void *data, size_t n)
{
	int err;

	err = bp_buf_reserve(b, n);
	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return held(b);
}

int bp_buf_puts(struct bp_buf *b, const char *s)
{
	return bp_buf_append(b, s, strlen(s));
}

int bp_buf_vprintf(struct bp_buf *b, const char *fmt, va_list ap)
{
	size_t room;
	va_list aq;
	int n, err;

	if (b->err)
		return b->err;

	/* first try whatever room is left, so most calls format only once */
	room = b->cap ? b->cap - b->len : 0;
	va_copy(aq, ap);
	n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, aq);
	va_end(aq);
	if (n >= 0 && (size_t)n < room) {
		b->len += n;
		return held(b);
	}
	/* a truncated attempt must not show up in bp_buf_str() */
	if (room)
		b->data[b->len] = '\0';
	if (n < 0)
		return buf_fail(b, -EINVAL);

	err = bp_buf_reserve(b, n);
	if (err)
		return err;
	va_copy(aq, ap);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, aq);
	va_end(aq);
	if (n < 0) {
		/* keep the old contents terminated even if vsnprintf wrote garbage */
		b->data[b->len] = '\0';
		return buf_fail(b, -EINVAL);
	}
	b->len += n;
	return held(b);
}

int bp_buf_printf(struct bp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = bp_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}

const char *bp_buf_str(const struct bp_buf *b)
{
	return b->data ? b->data : "";
}

void bp_buf_reset(struct bp_buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data)
		b->data[0] = '\0';
}

void bp_buf_free(struct bp_buf *b)
{
	free(b->data);
	bp_buf_init(b);
}

void bp_buf_put_xml(struct bp_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			bp_buf_puts(b, "&lt;");
			break;
		case '>':
			bp_buf_puts(b, "&gt;");
			break;
		case '&':
			bp_buf_puts(b, "&amp;");
			break;
		case '"':
			bp_buf_puts(b, "&quot;");
			break;
		case '\'':
			bp_buf_puts(b, "&#39;");
			break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r')
				bp_buf_putc(b, ' ');
			else
				bp_buf_putc(b, *s);
		}
	}
}
