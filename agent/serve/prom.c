// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/prom.h"
#include "util/numfmt.h"
#include "util/utf8.h"

static bool name_ok(const char *s, bool colon)
{
	const char *p;

	if (!s || !*s)
		return false;
	for (p = s; *p; p++) {
		char c = *p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
		    (colon && c == ':'))
			continue;
		if (p != s && c >= '0' && c <= '9')
			continue;
		return false;
	}
	return true;
}

bool bp_prom_metric_name_ok(const char *name)
{
	return name_ok(name, true) && strlen(name) <= BP_PROM_MAX_NAME;
}

bool bp_prom_label_name_ok(const char *name)
{
	/* names starting with "__" are reserved for Prometheus itself */
	return name_ok(name, false) && strncmp(name, "__", 2);
}

/*
 * The format is UTF-8 and a reader may refuse a whole scrape over one bad
 * byte, so each ill-formed byte becomes U+FFFD. Label values escape '\',
 * '"' and newline; HELP text only '\' and newline.
 */
static void put_escaped(struct bp_buf *b, const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p) {
		if (*p == '\\') {
			bp_buf_puts(b, "\\\\");
			p++;
		} else if (*p == '\n') {
			bp_buf_puts(b, "\\n");
			p++;
		} else if (*p == '"' && quote) {
			bp_buf_puts(b, "\\\"");
			p++;
		} else {
			n = bp_utf8_seq(p, SIZE_MAX, NULL);
			if (n) {
				bp_buf_append(b, p, n);
				p += n;
			} else {
				bp_buf_puts(b, "\xef\xbf\xbd");
				p++;
			}
		}
	}
}

void bp_prom_init(struct bp_prom *p, struct bp_buf *buf)
{
	memset(p, 0, sizeof(*p));
	p->buf = buf;
	p->start = buf->len;
}

static int prom_fail(struct bp_prom *p, int err)
{
	if (!p->err)
		p->err = err;
	return err;
}

static int prom_result(struct bp_prom *p)
{
	if (p->buf->err)
		return prom_fail(p, p->buf->err);
	return 0;
}

/* one # TYPE line per family, and this exposition holds all of them */
static bool declared(const struct bp_prom *p, const char *name)
{
	const char *text = bp_buf_str(p->buf) + p->start, *hit = text;
	size_t nlen = strlen(name);

	/* escaping keeps '\n' out of values and HELP: "\n# TYPE " starts a TYPE line */
	while ((hit = strstr(hit, "# TYPE "))) {
		if ((hit == text || hit[-1] == '\n') && !strncmp(hit + 7, name, nlen) &&
		    hit[7 + nlen] == ' ')
			return true;
		hit += 7;
	}
	return false;
}

int bp_prom_family(struct bp_prom *p, const char *name, enum bp_prom_type type,
		   const char *help)
{
	static const char *const types[] = {
		[BP_PROM_COUNTER] = "counter",
		[BP_PROM_GAUGE] = "gauge",
		[BP_PROM_HISTOGRAM] = "histogram",
	};
	struct bp_buf *b = p->buf;

	p->in_family = false;
	if (!bp_prom_metric_name_ok(name) || (unsigned int)type > BP_PROM_HISTOGRAM)
		return prom_fail(p, -EINVAL);
	if (b->err)
		return prom_fail(p, b->err);
	if (declared(p, name))
		return prom_fail(p, -EEXIST);

	if (help) {
		bp_buf_printf(b, "# HELP %s ", name);
		put_escaped(b, help, false);
		bp_buf_putc(b, '\n');
	}
	bp_buf_printf(b, "# TYPE %s %s\n", name, types[type]);
	if (b->err)
		return prom_fail(p, b->err);
	strcpy(p->family, name);
	p->type = type;
	p->in_family = true;
	return 0;
}

static int check_labels(const struct bp_prom_label *labels, size_t n, bool histogram)
{
	size_t i, j;

	if (n && !labels)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!bp_prom_label_name_ok(labels[i].name) || !labels[i].value)
			return -EINVAL;
		if (histogram && !strcmp(labels[i].name, "le"))
			return -EINVAL;
		for (j = 0; j < i; j++) {
			if (!strcmp(labels[i].name, labels[j].name))
				return -EINVAL;
		}
	}
	return 0;
}

/* name{labels,le="..."} with the value still to come; le may be NULL */
static void put_series(struct bp_prom *p, const char *suffix, const struct bp_prom_label *labels,
		       size_t n, const char *le)
{
	struct bp_buf *b = p->buf;
	size_t i;

	bp_buf_puts(b, p->family);
	bp_buf_puts(b, suffix);
	if (!n && !le) {
		bp_buf_putc(b, ' ');
		return;
	}
	bp_buf_putc(b, '{');
	for (i = 0; i < n; i++) {
		bp_buf_printf(b, "%s%s=\"", i ? "," : "", labels[i].name);
		put_escaped(b, labels[i].value, true);
		bp_buf_putc(b, '"');
	}
	if (le)
		bp_buf_printf(b, "%sle=\"%s\"", n ? "," : "", le);
	bp_buf_puts(b, "} ");
}

static int sample_check(struct bp_prom *p, const struct bp_prom_label *labels, size_t n)
{
	if (!p->in_family || p->type == BP_PROM_HISTOGRAM)
		return prom_fail(p, -EINVAL);
	if (check_labels(labels, n, false))
		return prom_fail(p, -EINVAL);
	if (p->buf->err)
		return prom_fail(p, p->buf->err);
	return 0;
}

int bp_prom_sample(struct bp_prom *p, const struct bp_prom_label *labels, size_t n, double value)
{
	char num[64];
	int err;

	err = sample_check(p, labels, n);
	if (err)
		return err;
	bp_num_double(num, sizeof(num), value, BP_NUM_PROM);
	put_series(p, "", labels, n, NULL);
	bp_buf_printf(p->buf, "%s\n", num);
	return prom_result(p);
}

int bp_prom_sample_u64(struct bp_prom *p, const struct bp_prom_label *labels, size_t n,
		       uint64_t value)
{
	int err;

	err = sample_check(p, labels, n);
	if (err)
		return err;
	put_series(p, "", labels, n, NULL);
	bp_buf_printf(p->buf, "%" PRIu64 "\n", value);
	return prom_result(p);
}

int bp_prom_histogram(struct bp_prom *p, const struct bp_prom_label *labels, size_t n,
		      const double *bounds, const uint64_t *counts, size_t nbounds, double sum)
{
	uint64_t total = 0;
	char num[64];
	size_t i;

	if (!p->in_family || p->type != BP_PROM_HISTOGRAM || !counts || (nbounds && !bounds))
		return prom_fail(p, -EINVAL);
	if (check_labels(labels, n, true))
		return prom_fail(p, -EINVAL);
	for (i = 0; i < nbounds; i++) {
		if (!isfinite(bounds[i]) || (i && bounds[i] <= bounds[i - 1]))
			return prom_fail(p, -EINVAL);
	}
	for (i = 0; i <= nbounds; i++) {
		if (__builtin_add_overflow(total, counts[i], &total))
			return prom_fail(p, -EINVAL);
	}
	if (p->buf->err)
		return prom_fail(p, p->buf->err);

	total = 0;
	for (i = 0; i < nbounds; i++) {
		total += counts[i];
		bp_num_double(num, sizeof(num), bounds[i], BP_NUM_PROM);
		put_series(p, "_bucket", labels, n, num);
		bp_buf_printf(p->buf, "%" PRIu64 "\n", total);
	}
	total += counts[nbounds];
	put_series(p, "_bucket", labels, n, "+Inf");
	bp_buf_printf(p->buf, "%" PRIu64 "\n", total);
	bp_num_double(num, sizeof(num), sum, BP_NUM_PROM);
	put_series(p, "_sum", labels, n, NULL);
	bp_buf_printf(p->buf, "%s\n", num);
	put_series(p, "_count", labels, n, NULL);
	bp_buf_printf(p->buf, "%" PRIu64 "\n", total);
	return prom_result(p);
}

int bp_prom_finish(const struct bp_prom *p)
{
	return p->err ? p->err : p->buf->err;
}
