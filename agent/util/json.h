/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON: a streaming writer into a bp_buf, and a strict RFC 8259 reader that
 * builds a read-only tree.
 *
 * The writer always produces valid JSON and valid UTF-8, whatever bytes it is
 * given: symbol names and command lines are arbitrary bytes, so invalid UTF-8
 * becomes U+FFFD. Misuse (a value in an object without a key, unbalanced
 * ends, nesting past BP_JSON_W_MAX_DEPTH) never crashes: it is recorded as
 * -EINVAL, later calls become no-ops, and bp_json_w_finish() reports it.
 */
#ifndef BP_JSON_H
#define BP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* ------------------------------------------------------------------ writer */

#define BP_JSON_W_MAX_DEPTH	64

/* fields are private; the struct is public so it can live on the stack */
struct bp_json_w {
	struct bp_buf *buf;
	int err;
	bool pretty;
	bool first;		/* nothing written yet in the innermost container */
	bool has_key;		/* a key was written and waits for its value */
	bool done;		/* the top-level value is complete */
	unsigned int depth;
	char open[BP_JSON_W_MAX_DEPTH];	/* '{' or '[' per open container */
};

/*
 * Start one document appended to buf. pretty: newlines and 2-space indents,
 * "key": value; otherwise no whitespace at all. No trailing newline either way.
 */
void bp_json_w_init(struct bp_json_w *w, struct bp_buf *buf, bool pretty);

/* each returns 0, or the first error of the writer or of its buffer */
int bp_json_w_begin_object(struct bp_json_w *w);
int bp_json_w_end_object(struct bp_json_w *w);
int bp_json_w_begin_array(struct bp_json_w *w);
int bp_json_w_end_array(struct bp_json_w *w);
int bp_json_w_key(struct bp_json_w *w, const char *name);
int bp_json_w_key_n(struct bp_json_w *w, const char *name, size_t len);
/* s == NULL writes null */
int bp_json_w_string(struct bp_json_w *w, const char *s);
int bp_json_w_string_n(struct bp_json_w *w, const char *s, size_t len);
int bp_json_w_int64(struct bp_json_w *w, int64_t v);
int bp_json_w_uint64(struct bp_json_w *w, uint64_t v);
/*
 * Shortest of %.15g/%.16g/%.17g that reads back bit-exact, always with a '.'
 * or an exponent so readers see a float (5.0, not 5); NaN and Inf are null.
 */
int bp_json_w_double_val(struct bp_json_w *w, double v);
int bp_json_w_bool_val(struct bp_json_w *w, bool v);
int bp_json_w_null_val(struct bp_json_w *w);

int bp_json_w_kv_string(struct bp_json_w *w, const char *key, const char *s);
int bp_json_w_kv_int64(struct bp_json_w *w, const char *key, int64_t v);
int bp_json_w_kv_uint64(struct bp_json_w *w, const char *key, uint64_t v);
int bp_json_w_kv_double(struct bp_json_w *w, const char *key, double v);
int bp_json_w_kv_bool(struct bp_json_w *w, const char *key, bool v);

/*
 * 0 when exactly one complete value was written and nothing failed;
 * otherwise the first error: -EINVAL (misuse, or the document is unfinished)
 * or the buffer's -ENOMEM.
 */
int bp_json_w_finish(struct bp_json_w *w);

/* ------------------------------------------------------------------ reader */

#define BP_JSON_MAX_DEPTH	256

enum bp_json_type {
	BP_JSON_NONE = 0,	/* what bp_json_type(NULL) says */
	BP_JSON_NULL,
	BP_JSON_BOOL,
	BP_JSON_NUMBER,
	BP_JSON_STRING,
	BP_JSON_ARRAY,
	BP_JSON_OBJECT,
};

struct bp_json;

/*
 * Parse len bytes of text (need not be NUL-terminated). Returns the root, or
 * NULL with errno EINVAL (errbuf gets "line L col C: what", columns counted
 * in bytes from 1) or ENOMEM. errbuf may be NULL.
 *
 * Strict RFC 8259: one value, no trailing commas, no leading zeros, no raw
 * control characters or invalid UTF-8 in strings, no BOM, no NaN/Infinity,
 * numbers that overflow a double are rejected. Nesting deeper than
 * BP_JSON_MAX_DEPTH is rejected. An escaped lone surrogate (\ud800) decodes
 * to U+FFFD so that every decoded string is valid UTF-8.
 */
struct bp_json *bp_json_parse(const char *text, size_t len, char *errbuf, size_t errlen);

/* only for the root returned by bp_json_parse(); NULL is fine */
void bp_json_free(struct bp_json *root);

/*
 * Accessors accept NULL and values of the wrong type, answering NONE, NULL,
 * 0, NAN or -EINVAL, so lookups can be chained without checks in between.
 * Returned pointers live as long as the tree.
 */
enum bp_json_type bp_json_type(const struct bp_json *v);

/* object member by name; duplicate keys: the last one wins */
const struct bp_json *bp_json_get(const struct bp_json *obj, const char *key);
/* i-th element of an array, or value of the i-th member of an object */
const struct bp_json *bp_json_at(const struct bp_json *v, size_t i);
/* name of the i-th member of an object, in document order */
const char *bp_json_key_at(const struct bp_json *obj, size_t i);
/* array elements, object members (duplicates included), or string bytes */
size_t bp_json_len(const struct bp_json *v);

/* decoded UTF-8, NUL-terminated; may hold NULs (\u0000): see bp_json_len() */
const char *bp_json_str(const struct bp_json *v);
/* the number as a double; NAN when v is not a number */
double bp_json_num(const struct bp_json *v);
/*
 * The number as an exact integer: integer literals that fit are kept exact
 * (beyond 2^53 too); other numbers convert when integral and in range (1e3).
 * 0, -EINVAL (not a number) or -ERANGE (fractional, out of range, or an
 * integer literal too long for 64 bits, whose exact value is lost).
 */
int bp_json_int(const struct bp_json *v, int64_t *out);
int bp_json_uint(const struct bp_json *v, uint64_t *out);
/* 1 for true, 0 for false, -EINVAL when v is not a boolean */
int bp_json_bool(const struct bp_json *v);

/*
 * Follow a path such as "processes[0].verdict.class" or "[2].name": keys
 * separated by '.', each followed by any number of [index]. "" is root.
 * NULL when anything along the way is missing or the path is malformed.
 * Keys containing '.' or '[' need bp_json_get().
 */
const struct bp_json *bp_json_path(const struct bp_json *root, const char *path);

#endif /* BP_JSON_H */
