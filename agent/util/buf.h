/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A growable in-memory byte buffer for building reports and HTTP bodies.
 *
 * Errors are sticky: the first failure is recorded in err and every later
 * append is a no-op returning that error, so a caller can emit a whole
 * document and check once at the end.
 */
#ifndef BP_BUF_H
#define BP_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct bp_buf {
	char *data;	/* NUL-terminated once allocated; NULL before */
	size_t len;	/* bytes held, not counting the NUL */
	size_t cap;	/* bytes allocated, including room for the NUL */
	int err;	/* 0, or the first failure (-ENOMEM, -EINVAL) */
	/*
	 * A sink (bp_buf_sink()): once len reaches sink_at, the contents go to
	 * it and the buffer empties, so that a document of MiBs costs its
	 * writer sink_at bytes and not the whole. Only for writers that never
	 * look back at what they appended.
	 */
	int (*sink)(void *ctx, const char *data, size_t len);
	void *sink_ctx;
	size_t sink_at;
};

#define BP_BUF_INIT { .data = NULL, .len = 0, .cap = 0, .err = 0 }

void bp_buf_init(struct bp_buf *b);

/* make room for n more bytes without appending; 0 or -ENOMEM */
int bp_buf_reserve(struct bp_buf *b, size_t n);

/* bp_buf_append() and bp_buf_putc() when their fast path does not apply */
int bp_buf_append_slow(struct bp_buf *b, const void *data, size_t n);

/*
 * Room for n more bytes and its NUL, no error, no sink due after them: a
 * report's writers append a few bytes at a time, millions a window, and
 * the call and checks of the general path were a tenth of the agent's
 * JSON writing.
 */
static inline bool bp_buf_fits(const struct bp_buf *b, size_t n)
{
	return !b->err && n < b->cap - b->len && (!b->sink || b->len + n < b->sink_at);
}

/* 0, or the buffer's sticky error */
static inline int bp_buf_append(struct bp_buf *b, const void *data, size_t n)
{
	if (!bp_buf_fits(b, n))
		return bp_buf_append_slow(b, data, n);
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

static inline int bp_buf_putc(struct bp_buf *b, char c)
{
	if (!bp_buf_fits(b, 1))
		return bp_buf_append_slow(b, &c, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
	return 0;
}

int bp_buf_puts(struct bp_buf *b, const char *s);
int bp_buf_printf(struct bp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int bp_buf_vprintf(struct bp_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* send the contents to sink whenever sink_at bytes are held (see struct bp_buf) */
void bp_buf_sink(struct bp_buf *b, int (*sink)(void *ctx, const char *data, size_t len),
		 void *ctx, size_t sink_at);

/* what is held to the sink now; 0 or the sticky error (the sink's -errno) */
int bp_buf_flush(struct bp_buf *b);

/* the contents as a C string; "" when nothing was appended, never NULL */
const char *bp_buf_str(const struct bp_buf *b);

/* empty the buffer and clear its error, keeping the allocation for reuse */
void bp_buf_reset(struct bp_buf *b);

/* release the memory; the buffer is empty and usable again afterwards */
void bp_buf_free(struct bp_buf *b);

/*
 * s as text or an attribute value for HTML and XML alike: the five special
 * characters escaped, the control characters XML 1.0 forbids (all but tab,
 * newline, carriage return) as spaces
 */
void bp_buf_put_xml(struct bp_buf *b, const char *s);

#endif /* BP_BUF_H */
