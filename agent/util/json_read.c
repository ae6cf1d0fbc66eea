// SPDX-License-Identifier: GPL-2.0
/* The JSON reader (util/json.h): strict RFC 8259 into a read-only tree. */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/json.h"
#include "util/numfmt.h"
#include "util/utf8.h"

/* NUM_BIGINT: an integer literal past 64 bits, so only its double is known */
enum { NUM_DOUBLE, NUM_INT, NUM_UINT, NUM_BIGINT };

struct obj_body;

/*
 * 24 bytes: a large report is mostly these, and on big inputs building the
 * tree is dominated by first-touch page faults, so size is speed.
 */
struct bp_json {
	unsigned char type;
	unsigned char num_kind;
	bool b;
	union {
		struct {
			double d;
			union {
				int64_t i;
				uint64_t u;
			};
		} num;
		struct {
			const char *p;
			size_t len;
		} str;
		struct {
			struct bp_json *items;
			size_t len;
		} arr;
		struct {
			struct obj_body *body;
			size_t len;	/* members, duplicates included */
		} obj;
	} u;
};

struct bp_json_member {
	const char *key;
	size_t key_len;
	struct bp_json val;
};

/* sorted by (key, position): binary search finds the last duplicate */
struct key_ref {
	const char *key;
	size_t len;
	size_t idx;
};

struct obj_body {
	struct key_ref *index;	/* large objects only */
	struct bp_json_member members[];
};

/* below this many members a backwards scan beats sorting */
#define OBJ_INDEX_MIN	9

_Static_assert(sizeof(struct bp_json) <= 24, "keep tree nodes small");

/*
 * The whole tree lives in a few large chunks: one malloc per value would make
 * a 50 MB report cost millions of allocations, and freeing would walk the tree.
 */
struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	size_t mapped;		/* bytes mmap()ed, 0 when malloc()ed */
	unsigned char data[];
};

#define ARENA_MIN	(64 * 1024)
#define ARENA_MAX	(4 * 1024 * 1024)
#define ARENA_BIG	(ARENA_MIN / 4)
#define ARENA_HUGE	(2 * 1024 * 1024)

struct bp_json_doc {
	struct bp_json root;
	struct arena_chunk *chunks;
};

static struct arena_chunk *chunk_new(size_t cap)
{
	struct arena_chunk *c;
	size_t len = sizeof(*c) + cap;

	if (len < ARENA_HUGE) {
		c = malloc(len);
		if (!c)
			return NULL;
		c->mapped = 0;
	} else {
		/*
		 * First-touch page faults were half the time of parsing a 50 MB
		 * report on a 2-vCPU VM; huge pages cut their number 512-fold
		 * where THP is enabled only on request (enabled=madvise). Recent
		 * kernels put mappings sized in 2 MiB multiples on 2 MiB boundaries.
		 */
		len = (len + ARENA_HUGE - 1) & ~(size_t)(ARENA_HUGE - 1);
		c = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			return NULL;
		/* only a hint: without THP the chunk just uses small pages */
		madvise(c, len, MADV_HUGEPAGE);
		c->mapped = len;
		cap = len - sizeof(*c);
	}
	c->next = NULL;
	c->used = 0;
	c->cap = cap;
	return c;
}

static void *arena_alloc(struct bp_json_doc *doc, size_t size)
{
	struct arena_chunk *c = doc->chunks;
	size_t cap;

	if (size > PTRDIFF_MAX / 2)
		return NULL;
	/* everything stored is at most 8-aligned, and so is the chunk header */
	size = (size + 7) & ~(size_t)7;
	if (c && c->cap - c->used >= size) {
		c->used += size;
		return c->data + c->used - size;
	}

	if (size >= ARENA_BIG) {
		/* a big string or array gets its own chunk, behind the current one */
		c = chunk_new(size);
		if (!c)
			return NULL;
		c->used = size;
		if (doc->chunks) {
			c->next = doc->chunks->next;
			doc->chunks->next = c;
		} else {
			doc->chunks = c;
		}
		return c->data;
	}

	/* whole sizes, header included, so that mmap()ed ones waste nothing */
	cap = doc->chunks ? 2 * (sizeof(*c) + doc->chunks->cap) : ARENA_MIN;
	if (cap > ARENA_MAX)
		cap = ARENA_MAX;
	c = chunk_new(cap - sizeof(*c));
	if (!c)
		return NULL;
	c->used = size;
	c->next = doc->chunks;
	doc->chunks = c;
	return c->data;
}

struct parser {
	const unsigned char *start, *p, *end;
	struct bp_json_doc *doc;
	struct bp_json_member *stack;	/* members of all open containers */
	size_t top, cap;
	unsigned int depth;
	int err;
	const unsigned char *err_at;
	char msg[64];
};

__attribute__((format(printf, 3, 4)))
static int perr(struct parser *ps, const unsigned char *at, const char *fmt, ...)
{
	va_list ap;

	if (ps->err)
		return ps->err;
	ps->err = -EINVAL;
	ps->err_at = at;
	va_start(ap, fmt);
	vsnprintf(ps->msg, sizeof(ps->msg), fmt, ap);
	va_end(ap);
	return ps->err;
}

static int pnomem(struct parser *ps)
{
	if (!ps->err)
		ps->err = -ENOMEM;
	return ps->err;
}

static int unexpected(struct parser *ps, const char *expected)
{
	unsigned char c;

	if (ps->p >= ps->end)
		return perr(ps, ps->p, "unexpected end of input");
	if (expected)
		return perr(ps, ps->p, "expected %s", expected);
	c = *ps->p;
	if (c > 0x20 && c < 0x7f)
		return perr(ps, ps->p, "unexpected character '%c'", c);
	return perr(ps, ps->p, "unexpected byte 0x%02x", c);
}

static void skip_ws(struct parser *ps)
{
	const unsigned char *p = ps->p, *end = ps->end;

	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	ps->p = p;
}

static bool next_is(const struct parser *ps, unsigned char c)
{
	return ps->p < ps->end && *ps->p == c;
}

static int push(struct parser *ps, const char *key, size_t key_len, const struct bp_json *v)
{
	struct bp_json_member *m;
	size_t cap;

	if (ps->top == ps->cap) {
		cap = ps->cap ? ps->cap * 2 : 64;
		m = reallocarray(ps->stack, cap, sizeof(*m));
		if (!m)
			return pnomem(ps);
		ps->stack = m;
		ps->cap = cap;
	}
	m = &ps->stack[ps->top++];
	m->key = key;
	m->key_len = key_len;
	m->val = *v;
	return 0;
}

static int hex4(const unsigned char *s, const unsigned char *end, unsigned int *out)
{
	unsigned int v = 0, d;
	int i;

	if (end - s < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'f')
			d = (s[i] | 0x20) - 'a' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

static size_t utf8_put(unsigned char *d, unsigned int cp)
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

/* s points just past the backslash; returns the input consumed, or 0 */
static size_t decode_escape(const unsigned char *s, const unsigned char *end,
			    unsigned char **dp)
{
	unsigned int cp, lo;
	unsigned char *d = *dp;

	switch (*s) {
	case '"':
	case '\\':
	case '/':
		*d++ = *s;
		break;
	case 'b':
		*d++ = '\b';
		break;
	case 'f':
		*d++ = '\f';
		break;
	case 'n':
		*d++ = '\n';
		break;
	case 'r':
		*d++ = '\r';
		break;
	case 't':
		*d++ = '\t';
		break;
	case 'u':
		if (hex4(s + 1, end, &cp))
			return 0;
		if (cp >= 0xd800 && cp <= 0xdbff && end - s >= 11 && s[5] == '\\' &&
		    s[6] == 'u' && !hex4(s + 7, end, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
			*dp = d + utf8_put(d, 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00));
			return 11;
		}
		/* a lone surrogate has no UTF-8 form */
		if (cp >= 0xd800 && cp <= 0xdfff)
			cp = 0xfffd;
		*dp = d + utf8_put(d, cp);
		return 5;
	default:
		return 0;
	}
	*dp = d;
	return 1;
}

static int parse_string(struct parser *ps, const char **out, size_t *out_len)
{
	const unsigned char *open = ps->p, *s = open + 1, *end = ps->end, *close;
	unsigned char *dst, *d, c;
	size_t n, bad;

	/*
	 * Find the closing quote first so that the decoded copy, never longer
	 * than the source, is allocated once; errors are found on the way.
	 */
	close = s;
	while (close < end && *close != '"') {
		if (*close == '\\' && end - close >= 2)
			close++;
		close++;
	}
	dst = arena_alloc(ps->doc, close - s + 1);
	if (!dst)
		return pnomem(ps);

	d = dst;
	while (s < close) {
		c = *s;
		if (c >= 0x20 && c < 0x80 && c != '\\') {
			*d++ = c;
			s++;
		} else if (c == '\\') {
			if (close - s < 2)
				break;
			n = decode_escape(s + 1, close, &d);
			if (!n)
				return perr(ps, s, "%s", s[1] == 'u' ? "invalid \\u escape" : "invalid escape");
			s += 1 + n;
		} else if (c < 0x20) {
			return perr(ps, s, "unescaped control character in string");
		} else {
			n = bp_utf8_seq(s, close - s, &bad);
			if (!n)
				return perr(ps, s, "invalid UTF-8 in string");
			memcpy(d, s, n);
			d += n;
			s += n;
		}
	}
	if (close == end)
		return perr(ps, open, "unterminated string");
	*d = '\0';
	*out = (const char *)dst;
	*out_len = d - dst;
	ps->p = close + 1;
	return 0;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* every power of ten up to 1e22 is exact in a double */
static const double pow10_exact[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int slow_strtod(struct parser *ps, const unsigned char *s, size_t len, double *out)
{
	char tmp[64], *copy = tmp;

	/* the text need not be NUL-terminated, and strtod would read past it */
	if (len >= sizeof(tmp)) {
		copy = malloc(len + 1);
		if (!copy)
			return pnomem(ps);
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	*out = bp_num_strtod(copy, NULL);
	if (copy != tmp)
		free(copy);
	return 0;
}

static int parse_number(struct parser *ps, struct bp_json *out)
{
	const unsigned char *s = ps->p, *p = s, *end = ps->end;
	bool neg = false, integer = true, overflow = false;
	uint64_t m = 0;		/* the digits, while they fit */
	long exp10 = 0, e = 0;
	int esign = 1, err;
	unsigned int d;
	double v;

	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p == end || !is_digit(*p))
		return perr(ps, p, "invalid number");
	if (*p == '0' && end - p > 1 && is_digit(p[1]))
		return perr(ps, s, "leading zeros are not allowed");
	while (p < end && is_digit(*p)) {
		d = *p++ - '0';
		if (overflow || m > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			m = m * 10 + d;
	}
	if (p < end && *p == '.') {
		integer = false;
		p++;
		if (p == end || !is_digit(*p))
			return perr(ps, p, "invalid number: expected a digit after '.'");
		while (p < end && is_digit(*p)) {
			d = *p++ - '0';
			if (m > (UINT64_MAX - d) / 10) {
				overflow = true;
			} else if (!overflow) {
				m = m * 10 + d;
				exp10--;
			}
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		integer = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			esign = *p++ == '-' ? -1 : 1;
		if (p == end || !is_digit(*p))
			return perr(ps, p, "invalid number: expected a digit in the exponent");
		while (p < end && is_digit(*p)) {
			/* past any double's range already; strtod gets the digits */
			if (e < 100000)
				e = e * 10 + (*p - '0');
			p++;
		}
		exp10 += esign * e;
	}

	out->type = BP_JSON_NUMBER;
	out->num_kind = integer ? NUM_BIGINT : NUM_DOUBLE;
	if (integer && !overflow) {
		/* exact, and int to double conversion rounds correctly */
		if (neg) {
			if (m <= (uint64_t)INT64_MAX + 1) {
				out->num_kind = NUM_INT;
				out->u.num.i = m > INT64_MAX ? INT64_MIN : -(int64_t)m;
			}
			v = -(double)m;
		} else {
			out->num_kind = m <= INT64_MAX ? NUM_INT : NUM_UINT;
			out->u.num.u = m;
			v = (double)m;
		}
#if FLT_EVAL_METHOD == 0
	} else if (!overflow && m <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
		/*
		 * Clinger's fast path: m and 10^|exp10| are both exact doubles,
		 * so one IEEE multiply or divide rounds the result correctly.
		 */
		v = (double)m;
		v = exp10 < 0 ? v / pow10_exact[-exp10] : v * pow10_exact[exp10];
		if (neg)
			v = -v;
#endif
	} else {
		err = slow_strtod(ps, s, p - s, &v);
		if (err)
			return err;
		if (isinf(v))
			return perr(ps, s, "number out of range");
	}
	out->u.num.d = v;
	ps->p = p;
	return 0;
}

static int parse_literal(struct parser *ps, const char *word, size_t len)
{
	if ((size_t)(ps->end - ps->p) < len || memcmp(ps->p, word, len))
		return perr(ps, ps->p, "invalid literal");
	ps->p += len;
	return 0;
}

static int parse_value(struct parser *ps, struct bp_json *out);

static int key_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return (alen > blen) - (alen < blen);
}

static int key_ref_cmp(const void *pa, const void *pb)
{
	const struct key_ref *a = pa, *b = pb;
	int c = key_cmp(a->key, a->len, b->key, b->len);

	if (c)
		return c;
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static int enter(struct parser *ps)
{
	if (++ps->depth > BP_JSON_MAX_DEPTH)
		return perr(ps, ps->p, "nesting deeper than %d levels", BP_JSON_MAX_DEPTH);
	ps->p++;
	skip_ws(ps);
	return 0;
}

/* after a ',': the next element must not be the closing bracket */
static int after_comma(struct parser *ps, unsigned char close)
{
	const unsigned char *comma = ps->p;

	ps->p++;
	skip_ws(ps);
	if (next_is(ps, close))
		return perr(ps, comma, "trailing comma");
	return 0;
}

static int parse_array(struct parser *ps, struct bp_json *out)
{
	size_t base = ps->top, n, i;
	struct bp_json v;
	int err;

	err = enter(ps);
	if (err)
		return err;
	if (next_is(ps, ']')) {
		ps->p++;
	} else {
		for (;;) {
			err = parse_value(ps, &v);
			if (!err)
				err = push(ps, NULL, 0, &v);
			if (err)
				return err;
			skip_ws(ps);
			if (next_is(ps, ']')) {
				ps->p++;
				break;
			}
			if (!next_is(ps, ','))
				return unexpected(ps, "',' or ']'");
			err = after_comma(ps, ']');
			if (err)
				return err;
		}
	}

	n = ps->top - base;
	out->type = BP_JSON_ARRAY;
	out->u.arr.len = n;
	if (n) {
		out->u.arr.items = arena_alloc(ps->doc, n * sizeof(*out->u.arr.items));
		if (!out->u.arr.items)
			return pnomem(ps);
		for (i = 0; i < n; i++)
			out->u.arr.items[i] = ps->stack[base + i].val;
	}
	ps->top = base;
	ps->depth--;
	return 0;
}

static int index_object(struct parser *ps, struct bp_json *obj)
{
	struct bp_json_member *m = obj->u.obj.body->members;
	struct key_ref *idx;
	size_t i, n = obj->u.obj.len;

	idx = arena_alloc(ps->doc, n * sizeof(*idx));
	if (!idx)
		return pnomem(ps);
	for (i = 0; i < n; i++) {
		idx[i].key = m[i].key;
		idx[i].len = m[i].key_len;
		idx[i].idx = i;
	}
	/* sorting, unlike hashing, stays O(n log n) whatever keys an attacker picks */
	qsort(idx, n, sizeof(*idx), key_ref_cmp);
	obj->u.obj.body->index = idx;
	return 0;
}

static int parse_object(struct parser *ps, struct bp_json *out)
{
	size_t base = ps->top, n, key_len;
	struct obj_body *body;
	const char *key;
	struct bp_json v;
	int err;

	err = enter(ps);
	if (err)
		return err;
	if (next_is(ps, '}')) {
		ps->p++;
	} else {
		for (;;) {
			if (!next_is(ps, '"'))
				return unexpected(ps, "a string key");
			err = parse_string(ps, &key, &key_len);
			if (err)
				return err;
			skip_ws(ps);
			if (!next_is(ps, ':'))
				return unexpected(ps, "':'");
			ps->p++;
			err = parse_value(ps, &v);
			if (!err)
				err = push(ps, key, key_len, &v);
			if (err)
				return err;
			skip_ws(ps);
			if (next_is(ps, '}')) {
				ps->p++;
				break;
			}
			if (!next_is(ps, ','))
				return unexpected(ps, "',' or '}'");
			err = after_comma(ps, '}');
			if (err)
				return err;
		}
	}

	n = ps->top - base;
	out->type = BP_JSON_OBJECT;
	out->u.obj.len = n;
	if (n) {
		body = arena_alloc(ps->doc, sizeof(*body) + n * sizeof(body->members[0]));
		if (!body)
			return pnomem(ps);
		body->index = NULL;
		memcpy(body->members, ps->stack + base, n * sizeof(body->members[0]));
		out->u.obj.body = body;
	}
	ps->top = base;
	ps->depth--;
	if (n >= OBJ_INDEX_MIN)
		return index_object(ps, out);
	return 0;
}

static int parse_value(struct parser *ps, struct bp_json *out)
{
	memset(out, 0, sizeof(*out));
	skip_ws(ps);
	if (ps->p >= ps->end)
		return unexpected(ps, NULL);

	switch (*ps->p) {
	case '{':
		return parse_object(ps, out);
	case '[':
		return parse_array(ps, out);
	case '"':
		out->type = BP_JSON_STRING;
		return parse_string(ps, &out->u.str.p, &out->u.str.len);
	case 't':
		out->type = BP_JSON_BOOL;
		out->b = true;
		return parse_literal(ps, "true", 4);
	case 'f':
		out->type = BP_JSON_BOOL;
		return parse_literal(ps, "false", 5);
	case 'n':
		out->type = BP_JSON_NULL;
		return parse_literal(ps, "null", 4);
	case '-':
	case '0' ... '9':
		return parse_number(ps, out);
	}
	return unexpected(ps, NULL);
}

static void doc_free(struct bp_json_doc *doc)
{
	struct arena_chunk *c, *next;

	for (c = doc->chunks; c; c = next) {
		next = c->next;
		if (c->mapped)
			munmap(c, c->mapped);
		else
			free(c);
	}
	free(doc);
}

static void format_error(const struct parser *ps, char *errbuf, size_t errlen)
{
	const unsigned char *q;
	size_t line = 1, col = 1;

	if (!errbuf || !errlen)
		return;
	if (ps->err == -ENOMEM) {
		snprintf(errbuf, errlen, "out of memory");
		return;
	}
	/* only failures pay for counting lines */
	for (q = ps->start; q < ps->err_at; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(errbuf, errlen, "line %zu col %zu: %s", line, col, ps->msg);
}

struct bp_json *bp_json_parse(const char *text, size_t len, char *errbuf, size_t errlen)
{
	struct parser ps = { 0 };
	struct bp_json_doc *doc;
	struct bp_json v;
	int err;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!text)
		text = "";
	doc = calloc(1, sizeof(*doc));
	if (!doc) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}

	ps.start = ps.p = (const unsigned char *)text;
	ps.end = ps.start + len;
	ps.doc = doc;
	err = parse_value(&ps, &v);
	if (!err) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			err = perr(&ps, ps.p, "trailing characters after the JSON value");
	}
	free(ps.stack);
	if (err) {
		format_error(&ps, errbuf, errlen);
		doc_free(doc);
		errno = -err;
		return NULL;
	}
	doc->root = v;
	return &doc->root;
}

void bp_json_free(struct bp_json *root)
{
	if (root)
		doc_free((struct bp_json_doc *)((char *)root - offsetof(struct bp_json_doc, root)));
}

enum bp_json_type bp_json_type(const struct bp_json *v)
{
	return v ? v->type : BP_JSON_NONE;
}

static const struct bp_json *get_n(const struct bp_json *obj, const char *key, size_t len)
{
	const struct bp_json_member *m;
	const struct key_ref *idx;
	size_t i, lo, hi, mid;

	if (!obj || obj->type != BP_JSON_OBJECT || !obj->u.obj.len)
		return NULL;
	m = obj->u.obj.body->members;
	idx = obj->u.obj.body->index;
	if (!idx) {
		for (i = obj->u.obj.len; i-- > 0;)
			if (m[i].key_len == len && !memcmp(m[i].key, key, len))
				return &m[i].val;
		return NULL;
	}
	/* the last equal key sits just before the first greater one */
	lo = 0;
	hi = obj->u.obj.len;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (key_cmp(idx[mid].key, idx[mid].len, key, len) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && !key_cmp(idx[lo - 1].key, idx[lo - 1].len, key, len))
		return &m[idx[lo - 1].idx].val;
	return NULL;
}

const struct bp_json *bp_json_get(const struct bp_json *obj, const char *key)
{
	return key ? get_n(obj, key, strlen(key)) : NULL;
}

const struct bp_json *bp_json_at(const struct bp_json *v, size_t i)
{
	if (!v)
		return NULL;
	if (v->type == BP_JSON_ARRAY && i < v->u.arr.len)
		return &v->u.arr.items[i];
	if (v->type == BP_JSON_OBJECT && i < v->u.obj.len)
		return &v->u.obj.body->members[i].val;
	return NULL;
}

const char *bp_json_key_at(const struct bp_json *obj, size_t i)
{
	if (!obj || obj->type != BP_JSON_OBJECT || i >= obj->u.obj.len)
		return NULL;
	return obj->u.obj.body->members[i].key;
}

size_t bp_json_len(const struct bp_json *v)
{
	if (!v)
		return 0;
	switch (v->type) {
	case BP_JSON_STRING:
		return v->u.str.len;
	case BP_JSON_ARRAY:
		return v->u.arr.len;
	case BP_JSON_OBJECT:
		return v->u.obj.len;
	}
	return 0;
}

const char *bp_json_str(const struct bp_json *v)
{
	return v && v->type == BP_JSON_STRING ? v->u.str.p : NULL;
}

double bp_json_num(const struct bp_json *v)
{
	return v && v->type == BP_JSON_NUMBER ? v->u.num.d : NAN;
}

int bp_json_int(const struct bp_json *v, int64_t *out)
{
	double d;

	if (!v || v->type != BP_JSON_NUMBER)
		return -EINVAL;
	if (v->num_kind == NUM_INT) {
		*out = v->u.num.i;
		return 0;
	}
	if (v->num_kind == NUM_UINT || v->num_kind == NUM_BIGINT)
		return -ERANGE;
	/* -2^63 is a double, 2^63 the first one too big; casts are safe inside */
	d = v->u.num.d;
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) ||
	    d != (double)(int64_t)d)
		return -ERANGE;
	*out = (int64_t)d;
	return 0;
}

int bp_json_uint(const struct bp_json *v, uint64_t *out)
{
	double d;

	if (!v || v->type != BP_JSON_NUMBER)
		return -EINVAL;
	if (v->num_kind == NUM_INT) {
		if (v->u.num.i < 0)
			return -ERANGE;
		*out = v->u.num.i;
		return 0;
	}
	if (v->num_kind == NUM_UINT) {
		*out = v->u.num.u;
		return 0;
	}
	if (v->num_kind == NUM_BIGINT)
		return -ERANGE;
	d = v->u.num.d;
	if (!(d >= 0 && d < 18446744073709551616.0) || d != (double)(uint64_t)d)
		return -ERANGE;
	*out = (uint64_t)d;
	return 0;
}

int bp_json_bool(const struct bp_json *v)
{
	if (!v || v->type != BP_JSON_BOOL)
		return -EINVAL;
	return v->b;
}

const struct bp_json *bp_json_path(const struct bp_json *root, const char *path)
{
	const struct bp_json *v = root;
	const char *p = path, *key;
	size_t i;

	if (!path)
		return NULL;
	if (!*p)
		return root;
	for (;;) {
		key = p;
		while (*p && *p != '.' && *p != '[' && *p != ']')
			p++;
		if (p > key)
			v = get_n(v, key, p - key);
		else if (key != path || *p != '[')
			return NULL;	/* empty key: only "[i]" may start a path */
		while (*p == '[') {
			p++;
			if (!is_digit(*p))
				return NULL;
			for (i = 0; is_digit(*p); p++) {
				if (i > (SIZE_MAX - 9) / 10)
					return NULL;
				i = i * 10 + (*p - '0');
			}
			if (*p++ != ']')
				return NULL;
			v = bp_json_type(v) == BP_JSON_ARRAY ? bp_json_at(v, i) : NULL;
		}
		if (!v)
			return NULL;
		if (!*p)
			return v;
		if (*p++ != '.')
			return NULL;
	}
}
