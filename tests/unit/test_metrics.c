// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's /metrics on synthetic windows, read back with a parser of the
 * text exposition format 0.0.4 that is stricter than Prometheus where the
 * writer promises more (every family has # HELP and # TYPE, no duplicate
 * series, histograms whole and cumulative).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

/* every test takes cmocka's state argument; not all use it */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "analyze/analyze.h"
#include "analyze/classify.h"
#include "serve/metrics.h"
#include "model/profile.h"
#include "serve/prom.h"
#include "analyze/verdict.h"

/* Debian 12's cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

/* ------------------------------------------------------------------ parser */

#define MAX_LABELS	8
#define MAX_SERIES	1024
#define MAX_FAMS	128

struct series {
	char name[BP_PROM_MAX_NAME + 16];
	uint32_t fam;			/* index into expo.fams */
	uint32_t nl;
	char lname[MAX_LABELS][64];
	char lval[MAX_LABELS][256];	/* unescaped */
	double v;
};

struct fam {
	char name[BP_PROM_MAX_NAME + 1];
	char type[16];			/* "" while only # HELP was seen */
};

struct expo {
	struct fam fams[MAX_FAMS];
	uint32_t nfams;
	struct series *ser;
	uint32_t nser;
	uint32_t ln;			/* the line being read */
	char err[512];			/* why the text was refused */
};

static __attribute__((format(printf, 2, 3))) bool refuse(struct expo *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(e->err, sizeof(e->err), "line %u: ", e->ln);
	va_start(ap, fmt);
	vsnprintf(e->err + n, sizeof(e->err) - n, fmt, ap);
	va_end(ap);
	return false;
}

static bool utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned char c = *s, lo = 0x80, hi = 0xbf;
		int need, i;

		if (c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			lo = c == 0xe0 ? 0xa0 : 0x80;	/* overlong */
			hi = c == 0xed ? 0x9f : 0xbf;	/* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			lo = c == 0xf0 ? 0x90 : 0x80;
			hi = c == 0xf4 ? 0x8f : 0xbf;
		} else {
			return false;
		}
		for (i = 1; i <= need; i++) {
			if (s[i] < lo || s[i] > hi)
				return false;
			lo = 0x80;
			hi = 0xbf;
		}
		s += need + 1;
	}
	return true;
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metrics, without ':' for labels */
static size_t name_len(const char *p, bool colon)
{
	size_t n = 0;

	while (isalpha((unsigned char)p[n]) || p[n] == '_' || (colon && p[n] == ':') ||
	       (n && isdigit((unsigned char)p[n])))
		n++;
	return n;
}

static int fam_find(const struct expo *e, const char *name)
{
	uint32_t i;

	for (i = 0; i < e->nfams; i++)
		if (!strcmp(e->fams[i].name, name))
			return i;
	return -1;
}

static const char *label(const struct series *s, const char *name)
{
	uint32_t i;

	for (i = 0; i < s->nl; i++)
		if (!strcmp(s->lname[i], name))
			return s->lval[i];
	return NULL;
}

/* the same label set, in any order; le left out when skip_le */
static bool same_labels(const struct series *a, const struct series *b, bool skip_le)
{
	uint32_t i, na = 0, nb = 0;

	for (i = 0; i < a->nl; i++) {
		const char *v = label(b, a->lname[i]);

		if (skip_le && !strcmp(a->lname[i], "le"))
			continue;
		na++;
		if (!v || strcmp(v, a->lval[i]))
			return false;
	}
	for (i = 0; i < b->nl; i++)
		nb += !(skip_le && !strcmp(b->lname[i], "le"));
	return na == nb;
}

static bool parse_value(const char *tok, double *v)
{
	char *end;

	if (!strcmp(tok, "+Inf")) {
		*v = INFINITY;
		return true;
	}
	if (!strcmp(tok, "-Inf")) {
		*v = -INFINITY;
		return true;
	}
	if (!strcmp(tok, "NaN")) {
		*v = NAN;
		return true;
	}
	/* strtod would also take "inf", "nan", hex and leading blanks: Go's parser not all */
	if (!*tok || strspn(tok, "0123456789+-.eE") != strlen(tok))
		return false;
	errno = 0;
	*v = strtod(tok, &end);
	return !*end && !errno;
}

/* does the sample name belong to family f? */
static bool in_family(const struct fam *f, const struct series *s)
{
	size_t n = strlen(f->name);

	if (strcmp(f->type, "histogram"))
		return !strcmp(s->name, f->name) && !label(s, "le");
	if (strncmp(s->name, f->name, n))
		return false;
	if (!strcmp(s->name + n, "_bucket"))
		return label(s, "le") != NULL;
	return (!strcmp(s->name + n, "_sum") || !strcmp(s->name + n, "_count")) && !label(s, "le");
}

static bool parse_labels(struct expo *e, struct series *s, const char **pp)
{
	const char *p = *pp;
	uint32_t i;
	size_t n;

	while (*p != '}') {
		char *v = s->lval[s->nl];
		size_t vl = 0;

		if (s->nl == MAX_LABELS)
			return refuse(e, "too many labels");
		n = name_len(p, false);
		if (!n || n >= sizeof(s->lname[0]) || !strncmp(p, "__", 2))
			return refuse(e, "bad label name at '%s'", p);
		memcpy(s->lname[s->nl], p, n);
		p += n;
		if (p[0] != '=' || p[1] != '"')
			return refuse(e, "label %s without =\"value\"", s->lname[s->nl]);
		/* only \\, \" and \n are escapes; a raw '"' ends the value */
		for (p += 2; *p != '"'; p++) {
			char c = *p;

			if (!c)
				return refuse(e, "unterminated label value");
			if (c == '\\') {
				p++;
				if (*p == 'n')
					c = '\n';
				else if (*p == '\\' || *p == '"')
					c = *p;
				else
					return refuse(e, "bad escape \\%c", *p);
			}
			if (vl + 1 >= sizeof(s->lval[0]))
				return refuse(e, "label value too long");
			v[vl++] = c;
		}
		p++;
		for (i = 0; i < s->nl; i++)
			if (!strcmp(s->lname[i], s->lname[s->nl]))
				return refuse(e, "label %s twice", s->lname[i]);
		s->nl++;
		if (*p == ',')
			p++;
		else if (*p != '}')
			return refuse(e, "expected , or } at '%s'", p);
	}
	*pp = p + 1;
	return true;
}

static bool parse_sample(struct expo *e, const char *line, int cur)
{
	const char *p = line;
	struct series *s;
	char tok[128];
	uint32_t i;
	size_t n;

	if (cur < 0 || !e->fams[cur].type[0])
		return refuse(e, "sample outside a declared family");
	if (e->nser == MAX_SERIES)
		return refuse(e, "too many series for the test");
	s = &e->ser[e->nser];
	memset(s, 0, sizeof(*s));
	n = name_len(p, true);
	if (!n || n >= sizeof(s->name))
		return refuse(e, "bad metric name");
	memcpy(s->name, p, n);
	p += n;
	if (*p == '{') {
		p++;
		if (!parse_labels(e, s, &p))
			return false;
	}
	if (*p != ' ')
		return refuse(e, "no space before the value");
	p++;
	n = strcspn(p, " ");
	if (!n || n >= sizeof(tok))
		return refuse(e, "no value");
	memcpy(tok, p, n);
	tok[n] = '\0';
	if (!parse_value(tok, &s->v))
		return refuse(e, "bad value '%s'", tok);
	p += n;
	/* an optional timestamp: integer ms */
	if (*p == ' ') {
		p++;
		if (*p == '-')
			p++;
		if (!*p || strspn(p, "0123456789") != strlen(p))
			return refuse(e, "bad timestamp");
	}

	s->fam = cur;
	if (!in_family(&e->fams[cur], s))
		return refuse(e, "%s is not of family %s (%s)", s->name, e->fams[cur].name,
			      e->fams[cur].type);
	if (!strcmp(e->fams[cur].type, "counter") && !(s->v >= 0))
		return refuse(e, "counter %s is %g", s->name, s->v);
	for (i = 0; i < e->nser; i++)
		if (!strcmp(e->ser[i].name, s->name) && same_labels(&e->ser[i], s, false))
			return refuse(e, "duplicate series %s", s->name);
	e->nser++;
	return true;
}

static bool parse_comment(struct expo *e, const char *line, int *cur)
{
	bool help = !strncmp(line, "# HELP ", 7), type = !strncmp(line, "# TYPE ", 7);
	const char *p = line + 7, *rest;
	char name[BP_PROM_MAX_NAME + 1];
	size_t n;
	int i;

	if (!help && !type)
		return true;		/* any other comment */
	n = name_len(p, true);
	if (!n || n > BP_PROM_MAX_NAME || (p[n] != ' ' && p[n] != '\0'))
		return refuse(e, "bad family name");
	memcpy(name, p, n);
	name[n] = '\0';
	rest = p[n] ? p + n + 1 : p + n;
	i = fam_find(e, name);
	if (help) {
		/* HELP escapes only '\\' and '\n' */
		for (p = rest; *p; p++) {
			if (*p != '\\')
				continue;
			if (p[1] != '\\' && p[1] != 'n')
				return refuse(e, "bad escape in HELP");
			p++;
		}
		if (i >= 0)
			return refuse(e, "second # HELP for %s", name);
		if (e->nfams == MAX_FAMS)
			return refuse(e, "too many families for the test");
		snprintf(e->fams[e->nfams].name, sizeof(e->fams[0].name), "%s", name);
		e->fams[e->nfams].type[0] = '\0';
		*cur = e->nfams++;
		return true;
	}
	if (strcmp(rest, "counter") && strcmp(rest, "gauge") && strcmp(rest, "histogram") &&
	    strcmp(rest, "summary") && strcmp(rest, "untyped"))
		return refuse(e, "bad type '%s'", rest);
	/* the writer's promise: # HELP first, right before # TYPE, and once */
	if (i < 0 || i != *cur || e->fams[i].type[0])
		return refuse(e, "# TYPE %s without its # HELP right before, or twice", name);
	snprintf(e->fams[i].type, sizeof(e->fams[i].type), "%s", rest);
	return true;
}

/* each histogram: buckets ascending and cumulative, +Inf last and equal to _count, a _sum */
static bool check_histograms(struct expo *e)
{
	uint32_t i, j, buckets = 0, seen = 0;

	for (i = 0; i < e->nser; i++) {
		const struct series *c = &e->ser[i];
		const struct fam *f = &e->fams[c->fam];
		size_t n = strlen(f->name);
		double last_le = -INFINITY, last_v = 0;
		bool have_sum = false, have_inf = false;

		if (strcmp(f->type, "histogram"))
			continue;
		buckets += !strcmp(c->name + n, "_bucket");
		if (strcmp(c->name + n, "_count"))
			continue;
		for (j = 0; j < e->nser; j++) {
			const struct series *b = &e->ser[j];
			double le;

			if (b->fam != c->fam || !same_labels(b, c, true))
				continue;
			if (!strcmp(b->name + n, "_sum")) {
				have_sum = true;
				continue;
			}
			if (strcmp(b->name + n, "_bucket"))
				continue;
			seen++;
			if (have_inf)
				return refuse(e, "%s: a bucket after le=\"+Inf\"", f->name);
			if (!parse_value(label(b, "le"), &le) || isnan(le) || !(le > last_le))
				return refuse(e, "%s: le=\"%s\" not ascending", f->name,
					      label(b, "le"));
			if (b->v < last_v || b->v != floor(b->v))
				return refuse(e, "%s: bucket le=\"%s\" %g after %g", f->name,
					      label(b, "le"), b->v, last_v);
			last_le = le;
			last_v = b->v;
			have_inf = isinf(le);
		}
		if (!have_inf || !have_sum)
			return refuse(e, "%s: no le=\"+Inf\" bucket or no _sum", f->name);
		if (last_v != c->v)
			return refuse(e, "%s: +Inf bucket %g but _count %g", f->name, last_v, c->v);
	}
	if (seen != buckets)
		return refuse(e, "%u buckets without their _count", buckets - seen);
	return true;
}

/* read a whole exposition; false and e->err at the first problem */
static bool parse_text(struct expo *e, const char *text)
{
	const char *line, *nl;
	int cur = -1;
	char buf[4096];
	uint32_t i;

	memset(e, 0, sizeof(*e));
	e->ser = calloc(MAX_SERIES, sizeof(*e->ser));
	assert_non_null(e->ser);
	if (!utf8_ok((const unsigned char *)text))
		return refuse(e, "not UTF-8");
	if (*text && text[strlen(text) - 1] != '\n')
		return refuse(e, "the last line has no line feed");
	for (line = text; *line; line = nl + 1) {
		size_t n;

		nl = strchr(line, '\n');
		n = nl - line;
		e->ln++;
		if (n >= sizeof(buf))
			return refuse(e, "too long");
		memcpy(buf, line, n);
		buf[n] = '\0';
		if (!n)
			continue;
		if (buf[0] == '#' ? !parse_comment(e, buf, &cur) : !parse_sample(e, buf, cur))
			return false;
	}
	e->ln = 0;
	for (i = 0; i < e->nfams; i++)
		if (!e->fams[i].type[0])
			return refuse(e, "# HELP %s without # TYPE", e->fams[i].name);
	return check_histograms(e);
}

static void expo_free(struct expo *e)
{
	free(e->ser);
	e->ser = NULL;
}

/* as parse_text(), failing the test on any problem */
static void parse(struct expo *e, const char *text)
{
	if (!parse_text(e, text)) {
		expo_free(e);
		fail_msg("invalid exposition: %s\n%s", e->err, text);
	}
}

/* the series name{label pairs...}, with exactly those labels; pairs end with NULL */
static __attribute__((sentinel)) const struct series *find(const struct expo *e,
							    const char *name, ...)
{
	const char *k[MAX_LABELS], *v[MAX_LABELS];
	uint32_t n = 0, i, j;
	va_list ap;

	va_start(ap, name);
	while (n < MAX_LABELS && (k[n] = va_arg(ap, const char *))) {
		v[n] = va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	for (i = 0; i < e->nser; i++) {
		const struct series *s = &e->ser[i];

		if (strcmp(s->name, name) || s->nl != n)
			continue;
		for (j = 0; j < n; j++) {
			const char *have = label(s, k[j]);

			if (!have || strcmp(have, v[j]))
				break;
		}
		if (j == n)
			return s;
	}
	return NULL;
}

/* the value of a series that must exist */
#define VAL(e, name, ...)                                                              \
	({                                                                             \
		const struct series *s_ = find(e, name, ##__VA_ARGS__, NULL);          \
		if (!s_)                                                               \
			fail_msg("no series %s {%s}", name, #__VA_ARGS__);             \
		s_->v;                                                                 \
	})

static uint32_t count_series(const struct expo *e, const char *name)
{
	uint32_t i, n = 0;

	for (i = 0; i < e->nser; i++)
		n += !strcmp(e->ser[i].name, name);
	return n;
}

static bool has_family(const struct expo *e, const char *name)
{
	return fam_find(e, name) >= 0;
}

static const char *fam_type(const struct expo *e, const char *name)
{
	int i = fam_find(e, name);

	if (i < 0)
		fail_msg("no family %s", name);
	return e->fams[i].type;
}

/* ------------------------------------------------------------- the parser */

static void parser__invalid_text__refused(void **state)
{
	static const char *const bad[] = {
		"x 1\n",					/* no family */
		"# TYPE x gauge\nx 1\n",			/* no HELP */
		"# HELP x h\n# TYPE x gauge\n# HELP x h\n",	/* twice */
		"# HELP x h\n# HELP y h\n# TYPE x gauge\n",	/* HELP not right before */
		"# HELP x h\n",					/* no TYPE */
		"# HELP x h\n# TYPE x gauge\ny 1\n",		/* another family */
		"# HELP x h\n# TYPE x gauge\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n",
		"# HELP x h\n# TYPE x gauge\nx{a=\"1\",b=\"2\"} 1\nx{b=\"2\",a=\"1\"} 2\n",
		"# HELP x h\n# TYPE x gauge\nx{a=\"1\",a=\"2\"} 1\n",
		"# HELP x h\n# TYPE x gauge\nx{a=\"\\q\"} 1\n",
		"# HELP x h\n# TYPE x gauge\nx{a=\"1\" 1\n",
		"# HELP x h\n# TYPE x gauge\nx{a=\"a\"b\"} 1\n",
		"# HELP x h\n# TYPE x gauge\nx{1a=\"1\"} 1\n",
		"# HELP x h\n# TYPE x gauge\nx{a:b=\"1\"} 1\n",
		"# HELP x h\n# TYPE x gauge\nx{__a=\"1\"} 1\n",
		"# HELP x h\n# TYPE x gauge\nx{a=\"\xff\"} 1\n",
		"# HELP x h\n# TYPE x gauge\nx 1,5\n",
		"# HELP x h\n# TYPE x gauge\nx\t1\n",
		"# HELP x h\n# TYPE x gauge\nx inf\n",
		"# HELP x h\n# TYPE x gauge\nx 1",
		"# HELP x h\n# TYPE x gauge\nx{le=\"1\"} 1\n",
		"# HELP x h\n# TYPE x counter\nx -1\n",
		"# HELP x h\n# TYPE x counter\nx_total 1\n",
		"# HELP 9x h\n# TYPE 9x gauge\n",
		"# HELP x h\n# TYPE x gauges\n",
		"# HELP x h\\t\n# TYPE x gauge\n",
		"# HELP x h\n# TYPE x histogram\nx 1\n",
		"# HELP x h\n# TYPE x histogram\nx_bucket{le=\"1\"} 2\n"
		"x_bucket{le=\"+Inf\"} 1\nx_sum 1\nx_count 1\n",	/* not cumulative */
		"# HELP x h\n# TYPE x histogram\nx_bucket{le=\"2\"} 1\n"
		"x_bucket{le=\"1\"} 1\nx_bucket{le=\"+Inf\"} 1\nx_sum 1\nx_count 1\n",
		"# HELP x h\n# TYPE x histogram\nx_bucket{le=\"1\"} 2\n"
		"x_bucket{le=\"+Inf\"} 2\nx_sum 1\nx_count 3\n",	/* +Inf != _count */
		"# HELP x h\n# TYPE x histogram\nx_bucket{le=\"1\"} 2\nx_sum 1\nx_count 2\n",
		"# HELP x h\n# TYPE x histogram\nx_bucket{le=\"+Inf\"} 2\nx_count 2\n",
		"# HELP x h\n# TYPE x histogram\nx_bucket{le=\"+Inf\"} 2\nx_sum 1\n",
	};
	static const char good[] =
		"# HELP x h \\\\ \\n \"q\"\n# TYPE x gauge\nx{a=\"\\\"\\\\\\n\",b=\"\"} -1.5e-07\n"
		"x 1 1700000000000\n\n# other comment\nx{a=\"caf\xc3\xa9\",} +Inf\n"
		"# HELP y h\n# TYPE y histogram\ny_bucket{d=\"s\",le=\"0.5\"} 1\n"
		"y_bucket{d=\"s\",le=\"+Inf\"} 3\ny_sum{d=\"s\"} 4.5\ny_count{d=\"s\"} 3\n";
	struct expo e;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bool ok = parse_text(&e, bad[i]);

		expo_free(&e);
		if (ok)
			fail_msg("accepted bad input %zu: %s", i, bad[i]);
	}
	/* and what is valid reads back as written */
	parse(&e, good);
	assert_int_equal(e.nser, 7);
	assert_near(VAL(&e, "x", "a", "\"\\\n", "b", ""), -1.5e-7, 0);
	assert_true(isinf(VAL(&e, "x", "a", "caf\xc3\xa9")));
	assert_near(VAL(&e, "y_sum", "d", "s"), 4.5, 0);
	assert_string_equal(fam_type(&e, "y"), "histogram");
	expo_free(&e);
}

/* ---------------------------------------------------------------- profiles */

#define NPROC		12
#define TOP		5
#define PERIOD		10000000ULL		/* cpu-clock at 100 Hz, ns */
#define WIN_START	10000000000ULL
#define WIN_LEN		2000000000ULL
#define UNIX_START	1700000000000000000LL
#define SLEEPER		5000
#define KWORKER		77
#define DEV_SDA		(8u << 20)
#define DEV_NVME	(259u << 20)

/* a quote, a backslash and a newline; and bytes that are not UTF-8 */
static const char weird_comm[] = "we\"ir\\d\nname";
static const char bad_utf8_comm[] = "bad\xff\xfe";

/* what each process did, for checks that do not go through the summary */
struct spec {
	uint32_t pid;
	char comm[BP_COMM_LEN];
	uint64_t samples;
	uint64_t off_ns[BP_KIND__MAX];
	bool kthread;			/* a kernel thread: its IO is on nobody's behalf */
	uint64_t io_ops, io_bytes;	/* what the process series must say */
};

static struct spec spec[NPROC];

/* the comm label as written: invalid UTF-8 becomes U+FFFD */
static const char *comm_out(uint32_t i)
{
	return i == 1 ? "bad\xef\xbf\xbd\xef\xbf\xbd" : spec[i].comm;
}

static void add_proc(struct bp_profile *p, const struct spec *sp, uint32_t stack)
{
	struct bp_proc *pr = bp_profile__proc(p, sp->pid, true);
	struct bp_io_row *r;
	int k;

	assert_non_null(pr);
	memcpy(pr->comm, sp->comm, sizeof(pr->comm));
	assert_non_null(bp_proc__thread(pr, sp->pid, sp->comm));
	if (sp->samples)
		assert_int_equal(bp_profile__add(p, sp->pid, sp->pid, BP_KIND_ONCPU, stack,
						 sp->samples, sp->samples * PERIOD), 0);
	for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++)
		if (sp->off_ns[k])
			assert_int_equal(bp_profile__add(p, sp->pid, sp->pid, k, stack, 1,
							 sp->off_ns[k]), 0);
	if (!sp->io_ops)
		return;
	/* reads for everyone, plus two writes for every other process */
	r = bp_profile__io_row(p, DEV_SDA, sp->pid, BP_IO_READ, sp->kthread, sp->comm, true);
	assert_non_null(r);
	r->st.ops = sp->io_ops - (sp->pid % 2 ? 2 : 0);
	r->st.bytes = r->st.ops * 4096;
	if (sp->pid % 2) {
		r = bp_profile__io_row(p, DEV_NVME, sp->pid, BP_IO_WRITE, sp->kthread, sp->comm,
				       true);
		assert_non_null(r);
		r->st.ops = 2;
		r->st.bytes = 512;
	}
}

/*
 * NPROC active processes, the most active first (pid 1000 + i has
 * (NPROC - i) * 10 samples and waits a little in every class), a sleeper
 * that did nothing worth reporting, and IO by a kernel thread.
 */
static struct bp_profile *window(void)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_frame f = { .name = "work", .module = "m" };
	struct spec sleeper = { .pid = SLEEPER, .comm = "sleeper" };
	struct bp_io_row *r;
	int64_t fid, stack;
	uint32_t i, id;

	assert_non_null(p);
	p->start_ns = WIN_START;
	p->end_ns = WIN_START + WIN_LEN;
	p->start_unix_ns = UNIX_START;
	p->hz = 100;
	p->ncpus = 4;
	p->event = "cpu-clock";
	p->system_wide = true;
	p->machine_busy = 0.375;
	fid = bp_profile__frame(p, &f);
	assert_true(fid >= 0);
	id = fid;
	stack = bp_profile__stack(p, &id, 1);
	assert_true(stack >= 0);

	for (i = 0; i < NPROC; i++) {
		struct spec *sp = &spec[i];

		memset(sp, 0, sizeof(*sp));
		sp->pid = 1000 + i;
		if (i == 0)
			memcpy(sp->comm, weird_comm, sizeof(weird_comm));
		else if (i == 1)
			memcpy(sp->comm, bad_utf8_comm, sizeof(bad_utf8_comm));
		else if (i == 3)
			snprintf(sp->comm, sizeof(sp->comm), "kworker/0:1");
		else
			snprintf(sp->comm, sizeof(sp->comm), "proc%02u", i);
		sp->samples = (NPROC - i) * 10;
		sp->off_ns[BP_KIND_RUNQUEUE] = (i + 1) * 1000000ULL;
		sp->off_ns[BP_KIND_IO] = i % 3 ? (i + 1) * 3000000ULL : 0;
		sp->off_ns[BP_KIND_LOCK] = i * 500000ULL;
		sp->off_ns[BP_KIND_SLEEP] = 100000000ULL + i * 1000;
		sp->off_ns[BP_KIND_OTHER] = (i % 4) * 250000ULL;
		sp->io_ops = i + 3;
		/* as add_proc() splits it: 4 KiB reads, and 512 bytes in two writes if odd */
		sp->io_bytes = sp->pid % 2 ? (sp->io_ops - 2) * 4096 + 512 : sp->io_ops * 4096;
		/* a busy kernel thread doing writeback for others, among the top */
		sp->kthread = i == 3;
		add_proc(p, sp, stack);
		/* three users; the even processes in one service, the odd in containers */
		{
			struct bp_proc *pr = bp_profile__proc(p, sp->pid, false);
			char unit[64];

			pr->have_ids = true;
			pr->uid = 1000 + i % 3;
			pr->user = bp_profile__intern(p, (const char *[]){ "alice", "bob", NULL }[i % 3]);
			snprintf(unit, sizeof(unit), i % 2 ? "docker:%012u" : "web.service", i);
			pr->unit = bp_profile__intern(p, unit);
			snprintf(unit, sizeof(unit), "/system.slice/%s", pr->unit);
			pr->cgroup = bp_profile__intern(p, unit);
		}
		if (sp->kthread)
			sp->io_ops = sp->io_bytes = 0;
	}

	/* asleep the whole window: not active, so in no series and not folded */
	sleeper.off_ns[BP_KIND_SLEEP] = 1500000000ULL;
	add_proc(p, &sleeper, stack);
	/* and one that is not in the profile at all */
	r = bp_profile__io_row(p, DEV_SDA, KWORKER, BP_IO_WRITE, true, "kworker/0:1", true);
	assert_non_null(r);
	r->st.ops = 9;
	r->st.bytes = 9 * 4096;
	return p;
}

static void summarize(const struct bp_profile *p, struct bp_summary *s)
{
	uint32_t i;

	assert_int_equal(bp_summarize(p, 20, s), 0);
	assert_int_equal(bp_verdicts(p, s), 0);
	/* what the checks below rely on: the summary's order and who is active */
	assert_int_equal(s->nr_procs, NPROC + 1);
	for (i = 0; i < NPROC; i++) {
		assert_int_equal(s->procs[i].proc->pid, spec[i].pid);
		assert_true(s->procs[i].active);
		assert_non_null(s->procs[i].verdict);
	}
	assert_int_equal(s->procs[NPROC].proc->pid, SLEEPER);
	assert_false(s->procs[NPROC].active);
}

static void self_fill(struct bp_agent_self *a)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < BP_STAT__MAX; i++)
		a->bpf.v[i] = 1000 + i;
	a->windows = 7;
	a->write_errors = 1;
	a->slices = 70;
	a->cpu_s = 1.25;
	a->rss_bytes = 50ULL << 20;
	a->bpf_run_s = -1;
	a->user_stacks_cut = 33;
	a->io_done_unseen = 44;
	a->processes_known = 140;
	a->sym_processes = 120;
	a->sym_files = 45;
	a->sym_string_bytes = 1 << 20;
	a->map_bytes = 123456789;
	a->tls_bytes = 2457600;
	a->drains = 70;
	a->exec_drains = 4;
	a->map_fill[0] = 0.5;
	a->map_fill[1] = 0.25;
	a->map_fill[2] = 0.125;
	a->map_fill[3] = 1;
	a->http_requests = 12;
	a->http_errors = 2;
	a->processes_exited = 9;
	a->processes_forgotten = 3000;
	a->process_exits = 3009;
	a->http_connections = 5;
	for (i = 0; i < BP_HTTP_REJECT__MAX; i++)
		a->http_rejected[i] = 20 + i;
	a->http_evicted = 17;
	for (i = 0; i < BP_HTTP_TIMEOUT__MAX; i++)
		a->http_timeouts[i] = 30 + i;
}

static char *write_metrics(const struct bp_profile *win, const struct bp_summary *s,
			   uint32_t top, const struct bp_dev_totals *devs, uint32_t nr,
			   const struct bp_agent_self *self)
{
	struct bp_buf b = BP_BUF_INIT;
	char *text;

	assert_int_equal(bp_metrics_write(&b, win, s, top, devs, nr, self), 0);
	assert_int_equal(b.err, 0);
	text = strdup(bp_buf_str(&b));
	assert_non_null(text);
	bp_buf_free(&b);
	return text;
}

/* ---------------------------------------------------------------- processes */

static const char *pid_str(uint32_t pid)
{
	static char buf[4][16];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%u", pid);
	return buf[i];
}

/* every per-process series names a top process, or is the folded one */
static void check_pids(const struct expo *e, uint32_t top)
{
	uint32_t i, j;

	for (i = 0; i < e->nser; i++) {
		const char *pid = label(&e->ser[i], "pid");

		if (!pid)
			continue;
		if (!*pid) {
			assert_string_equal(label(&e->ser[i], "comm"), "other");
			continue;
		}
		for (j = 0; j < top && j < NPROC; j++)
			if (!strcmp(pid, pid_str(spec[j].pid)))
				break;
		if (j == top || j == NPROC)
			fail_msg("%s{pid=\"%s\"}: not a top process", e->ser[i].name, pid);
	}
}

static void processes__top_n_and_folded__sums_preserved(void **state)
{
	struct bp_profile *p = window();
	double on_top = 0, on_all = 0, off_top, off_all, v;
	uint64_t bytes_all = 0, ops_all = 0, bytes_top = 0, ops_top = 0;
	struct bp_agent_self self;
	struct bp_summary s;
	struct expo e;
	char *text;
	uint32_t i;
	int k;

	summarize(p, &s);
	self_fill(&self);
	text = write_metrics(p, &s, TOP, NULL, 0, &self);
	parse(&e, text);

	assert_near(VAL(&e, "boundprof_window_seconds"), 2.0, 1e-12);
	assert_near(VAL(&e, "boundprof_window_end_timestamp_seconds"), 1700000002.0, 1e-6);
	assert_near(VAL(&e, "boundprof_cpu_busy_ratio"), 0.375, 1e-12);

	/* on-CPU: the TOP most active have series of their own, the rest one together */
	assert_int_equal(count_series(&e, "boundprof_process_cpu_seconds"), TOP + 1);
	for (i = 0; i < NPROC; i++) {
		double sec = spec[i].samples * PERIOD / 1e9;

		on_all += sec;
		if (i >= TOP)
			continue;
		v = VAL(&e, "boundprof_process_cpu_seconds", "pid", pid_str(spec[i].pid), "comm",
			comm_out(i));
		assert_near(v, sec, 1e-9);
		on_top += v;
	}
	assert_near(VAL(&e, "boundprof_process_cpu_seconds", "pid", "1000", "comm", weird_comm),
		    1.2, 1e-12);
	v = VAL(&e, "boundprof_process_cpu_seconds", "pid", "", "comm", "other");
	assert_near(v + on_top, on_all, 1e-9);
	assert_near(v, (10 + 20 + 30 + 40 + 50 + 60 + 70) * PERIOD / 1e9, 1e-9);
	assert_int_equal(VAL(&e, "boundprof_processes_folded"), NPROC - TOP);

	/* off-CPU by wait class: the same processes, sums kept, sleepers' sleep not counted */
	assert_int_equal(count_series(&e, "boundprof_process_offcpu_seconds"),
			 (TOP + 1) * (BP_KIND__MAX - BP_KIND_RUNQUEUE));
	for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++) {
		const char *cls = bp_kind_name(k);

		off_top = off_all = 0;
		for (i = 0; i < NPROC; i++) {
			off_all += spec[i].off_ns[k] / 1e9;
			if (i >= TOP)
				continue;
			v = VAL(&e, "boundprof_process_offcpu_seconds", "pid", pid_str(spec[i].pid),
				"comm", comm_out(i),
				"class", cls);
			assert_near(v, spec[i].off_ns[k] / 1e9, 1e-12);
			off_top += v;
		}
		v = VAL(&e, "boundprof_process_offcpu_seconds", "pid", "", "comm", "other", "class",
			cls);
		assert_near(v + off_top, off_all, 1e-9);
	}
	assert_null(find(&e, "boundprof_process_offcpu_seconds", "pid", pid_str(SLEEPER), "comm",
			 "sleeper", "class", "sleep", NULL));

	/* block IO the processes submitted, kernel threads' left out */
	for (i = 0; i < NPROC; i++) {
		bytes_all += spec[i].io_bytes;
		ops_all += spec[i].io_ops;
		if (i >= TOP)
			continue;
		v = VAL(&e, "boundprof_process_io_bytes", "pid", pid_str(spec[i].pid), "comm",
			comm_out(i));
		assert_int_equal((uint64_t)v, spec[i].io_bytes);
		bytes_top += v;
		v = VAL(&e, "boundprof_process_io_ops", "pid", pid_str(spec[i].pid), "comm",
			comm_out(i));
		assert_int_equal((uint64_t)v, spec[i].io_ops);
		ops_top += v;
	}
	assert_int_equal(count_series(&e, "boundprof_process_io_bytes"), TOP + 1);
	assert_int_equal(count_series(&e, "boundprof_process_io_ops"), TOP + 1);
	assert_int_equal(bytes_top + VAL(&e, "boundprof_process_io_bytes", "pid", "", "comm",
					 "other"), bytes_all);
	assert_int_equal(ops_top + VAL(&e, "boundprof_process_io_ops", "pid", "", "comm", "other"),
			 ops_all);

	/* one verdict series per top process, none for the folded */
	assert_int_equal(count_series(&e, "boundprof_process_verdict"), TOP);
	for (i = 0; i < TOP; i++) {
		const struct bp_verdict *vd = s.procs[i].verdict;

		assert_int_equal(VAL(&e, "boundprof_process_verdict", "pid", pid_str(spec[i].pid),
				     "comm", comm_out(i), "class", bp_class_name(vd->cls),
				     "confidence", bp_confidence_name(vd->conf)), 1);
	}
	check_pids(&e, TOP);

	/* the label escapes, as written */
	assert_non_null(strstr(text, "comm=\"we\\\"ir\\\\d\\nname\""));
	assert_null(strstr(text, "\xff"));
	assert_non_null(find(&e, "boundprof_process_cpu_seconds", "pid", "1001", "comm",
			     "bad\xef\xbf\xbd\xef\xbf\xbd", NULL));

	expo_free(&e);
	free(text);
	bp_summary_free(&s);
	bp_profile__free(p);
}

/*
 * Ranking is by activity (on-CPU plus the waits that hold a process back),
 * not by samples: an IO-bound process that barely runs must not be folded
 * away behind busier CPU users, and a sleeper's sleep earns it nothing.
 */
static void processes__io_waiter__ranked_by_activity(void **state)
{
	struct bp_profile *p = window();
	struct spec io = { .pid = 4242, .comm = "ioworker", .samples = 1 };
	struct spec dozer = { .pid = 4343, .comm = "dozer", .samples = 2 };
	struct bp_agent_self self;
	struct bp_frame f = { .name = "work", .module = "m" };
	struct bp_summary s;
	struct expo e;
	int64_t fid, stack;
	uint32_t id;
	char *text;

	(void)state;
	fid = bp_profile__frame(p, &f);
	id = fid;
	stack = bp_profile__stack(p, &id, 1);
	/* 1.5 s of IO wait beats every spec process (at most 1.2 s on-CPU + waits) */
	io.off_ns[BP_KIND_IO] = 1500000000ULL;
	add_proc(p, &io, stack);
	/* 1.9 s asleep but only 20 ms on-CPU: stays folded */
	dozer.off_ns[BP_KIND_SLEEP] = 1900000000ULL;
	add_proc(p, &dozer, stack);
	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_verdicts(p, &s), 0);
	/* the summary still lists them after every spec process */
	assert_int_equal(s.procs[0].proc->pid, spec[0].pid);
	self_fill(&self);
	text = write_metrics(p, &s, TOP, NULL, 0, &self);
	parse(&e, text);

	assert_int_equal(count_series(&e, "boundprof_process_cpu_seconds"), TOP + 1);
	assert_near(VAL(&e, "boundprof_process_cpu_seconds", "pid", "4242", "comm", "ioworker"),
		    PERIOD / 1e9, 1e-12);
	assert_near(VAL(&e, "boundprof_process_offcpu_seconds", "pid", "4242", "comm", "ioworker",
			"class", "io"), 1.5, 1e-12);
	assert_null(find(&e, "boundprof_process_cpu_seconds", "pid", "4343", NULL));
	/* the least active of the old top five is folded now */
	assert_null(find(&e, "boundprof_process_cpu_seconds", "pid",
			 pid_str(spec[TOP - 1].pid), NULL));
	assert_int_equal(VAL(&e, "boundprof_processes_folded"), NPROC + 2 - TOP);
	expo_free(&e);
	free(text);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void processes__top_covers_all_or_none__folding_exact(void **state)
{
	struct bp_profile *p = window();
	struct bp_agent_self self;
	struct bp_summary s;
	double all = 0;
	struct expo e;
	char *text;
	uint32_t i;

	summarize(p, &s);
	self_fill(&self);
	for (i = 0; i < NPROC; i++)
		all += spec[i].samples * PERIOD / 1e9;

	/* room for everyone: nothing folded, no pid="" series */
	text = write_metrics(p, &s, NPROC + 10, NULL, 0, &self);
	parse(&e, text);
	assert_int_equal(VAL(&e, "boundprof_processes_folded"), 0);
	assert_int_equal(count_series(&e, "boundprof_process_cpu_seconds"), NPROC);
	assert_int_equal(count_series(&e, "boundprof_process_verdict"), NPROC);
	assert_null(find(&e, "boundprof_process_cpu_seconds", "pid", "", "comm", "other", NULL));
	assert_null(find(&e, "boundprof_process_io_bytes", "pid", "", "comm", "other", NULL));
	assert_null(find(&e, "boundprof_process_cpu_seconds", "pid", pid_str(SLEEPER), "comm",
			 "sleeper", NULL));
	check_pids(&e, NPROC);
	expo_free(&e);
	free(text);

	/* exactly as many as there are: still nothing folded */
	text = write_metrics(p, &s, NPROC, NULL, 0, &self);
	parse(&e, text);
	assert_int_equal(VAL(&e, "boundprof_processes_folded"), 0);
	assert_int_equal(count_series(&e, "boundprof_process_cpu_seconds"), NPROC);
	expo_free(&e);
	free(text);

	/* no room: one series holds everything */
	text = write_metrics(p, &s, 0, NULL, 0, &self);
	parse(&e, text);
	assert_int_equal(VAL(&e, "boundprof_processes_folded"), NPROC);
	assert_int_equal(count_series(&e, "boundprof_process_cpu_seconds"), 1);
	assert_near(VAL(&e, "boundprof_process_cpu_seconds", "pid", "", "comm", "other"), all,
		    1e-9);
	assert_int_equal(count_series(&e, "boundprof_process_offcpu_seconds"),
			 BP_KIND__MAX - BP_KIND_RUNQUEUE);
	assert_int_equal(count_series(&e, "boundprof_process_io_ops"), 1);
	assert_int_equal(count_series(&e, "boundprof_process_verdict"), 0);
	/* the family is declared even with no sample */
	assert_true(has_family(&e, "boundprof_process_verdict"));
	check_pids(&e, 0);
	expo_free(&e);
	free(text);

	bp_summary_free(&s);
	bp_profile__free(p);
}

/* ------------------------------------------------------------------ devices */

static void dev_op(struct bp_io_dev *d, int op, uint64_t ops, uint64_t bytes, uint64_t lat_us,
		   uint32_t slot)
{
	d->op[op].ops += ops;
	d->op[op].bytes += bytes;
	d->op[op].lat_ns += ops * lat_us * 1000;
	d->op[op].hist[slot] += ops;
}

static struct bp_io_dev *dev(struct bp_profile *p, uint32_t id, const char *name)
{
	struct bp_io_dev *d = bp_profile__io_dev(p, id, true);

	assert_non_null(d);
	snprintf(d->name, sizeof(d->name), "%s", name);
	return d;
}

/* the bucket le="2^(k+1) us" of a device */
static double bucket(const struct expo *e, const char *device, int k)
{
	char le[64];
	uint32_t i;

	for (i = 0; i < e->nser; i++) {
		const struct series *s = &e->ser[i];
		const char *l = label(s, "le");

		if (strcmp(s->name, "boundprof_device_io_latency_seconds_bucket") || !l ||
		    strcmp(label(s, "device"), device))
			continue;
		if (k < 0 ? !strcmp(l, "+Inf") : strtod(l, NULL) == (double)(2ULL << k) / 1e6)
			return s->v;
	}
	snprintf(le, sizeof(le), "%d", k);
	fail_msg("no bucket %s of %s", le, device);
	return 0;
}

static void devices__two_windows__counters_and_histogram_accumulate(void **state)
{
	struct bp_profile *w1 = bp_profile__new(), *w2 = bp_profile__new();
	struct bp_dev_totals *devs = NULL;
	struct bp_agent_self self;
	struct bp_io_dev *d;
	uint32_t nr = 0;
	struct expo e;
	char *text;
	int k;

	assert_non_null(w1);
	assert_non_null(w2);
	/* window 1: sda reads at ~100 us, writes at ~1.5 ms */
	d = dev(w1, DEV_SDA, "sda");
	dev_op(d, BP_IO_READ, 3, 3 * 4096, 100, 6);		/* [64, 128) us */
	dev_op(d, BP_IO_WRITE, 2, 2 * 65536, 1500, 10);	/* [1024, 2048) us */
	d->busy_ns = 1500000;
	assert_int_equal(bp_dev_totals_add(&devs, &nr, w1), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(devs[0].ops[BP_IO_READ], 3);

	/* window 2: sda again (a flush and a fast read), a new device past every bound */
	d = dev(w2, DEV_SDA, "sda");
	dev_op(d, BP_IO_READ, 1, 512, 1, 0);			/* [0, 2) us */
	dev_op(d, BP_IO_OTHER, 1, 0, 3000, 11);		/* [2048, 4096) us */
	d->busy_ns = 500000;
	d = dev(w2, DEV_NVME, "nvme0n1");
	dev_op(d, BP_IO_READ, 5, 5 * 4096, 5000000, BP_HIST_SLOTS - 1);
	d->busy_ns = 2000000000;
	assert_int_equal(bp_dev_totals_add(&devs, &nr, w2), 0);
	assert_int_equal(nr, 2);

	self_fill(&self);
	text = write_metrics(NULL, NULL, TOP, devs, nr, &self);
	parse(&e, text);

	assert_int_equal(VAL(&e, "boundprof_device_io_ops_total", "device", "sda", "op", "read"),
			 4);
	assert_int_equal(VAL(&e, "boundprof_device_io_ops_total", "device", "sda", "op", "write"),
			 2);
	assert_int_equal(VAL(&e, "boundprof_device_io_ops_total", "device", "sda", "op", "other"),
			 1);
	assert_int_equal(VAL(&e, "boundprof_device_io_ops_total", "device", "nvme0n1", "op",
			     "read"), 5);
	assert_int_equal(VAL(&e, "boundprof_device_io_ops_total", "device", "nvme0n1", "op",
			     "write"), 0);
	assert_int_equal(count_series(&e, "boundprof_device_io_ops_total"), 2 * BP_IO_OP__MAX);
	assert_int_equal(VAL(&e, "boundprof_device_io_bytes_total", "device", "sda", "op", "read"),
			 3 * 4096 + 512);
	assert_int_equal(VAL(&e, "boundprof_device_io_bytes_total", "device", "sda", "op",
			     "write"), 2 * 65536);
	assert_int_equal(VAL(&e, "boundprof_device_io_bytes_total", "device", "nvme0n1", "op",
			     "read"), 5 * 4096);
	assert_near(VAL(&e, "boundprof_device_busy_seconds_total", "device", "sda"), 0.002, 1e-12);
	assert_near(VAL(&e, "boundprof_device_busy_seconds_total", "device", "nvme0n1"), 2, 1e-12);

	/* the histogram: whole and cumulative (checked by parse()), with both windows in it */
	assert_string_equal(fam_type(&e, "boundprof_device_io_latency_seconds"), "histogram");
	assert_int_equal(count_series(&e, "boundprof_device_io_latency_seconds_bucket"),
			 2 * BP_HIST_SLOTS);
	assert_int_equal(bucket(&e, "sda", 0), 1);
	assert_int_equal(bucket(&e, "sda", 5), 1);
	assert_int_equal(bucket(&e, "sda", 6), 4);
	assert_int_equal(bucket(&e, "sda", 9), 4);
	assert_int_equal(bucket(&e, "sda", 10), 6);
	assert_int_equal(bucket(&e, "sda", 11), 7);
	assert_int_equal(bucket(&e, "sda", BP_HIST_SLOTS - 2), 7);
	assert_int_equal(bucket(&e, "sda", -1), 7);
	assert_int_equal(VAL(&e, "boundprof_device_io_latency_seconds_count", "device", "sda"), 7);
	assert_near(VAL(&e, "boundprof_device_io_latency_seconds_sum", "device", "sda"),
		    (3 * 100 + 2 * 1500 + 1 + 3000) / 1e6, 1e-12);
	/* slot 31 holds what lies past 2^31 us: only +Inf counts it */
	for (k = 0; k < BP_HIST_SLOTS - 1; k++)
		assert_int_equal(bucket(&e, "nvme0n1", k), 0);
	assert_int_equal(bucket(&e, "nvme0n1", -1), 5);
	assert_int_equal(VAL(&e, "boundprof_device_io_latency_seconds_count", "device", "nvme0n1"),
			 5);
	assert_near(VAL(&e, "boundprof_device_io_latency_seconds_sum", "device", "nvme0n1"), 25,
		    1e-9);
	expo_free(&e);
	free(text);

	/* a third window with nothing for nvme0n1: its counters stay */
	bp_profile__free(w1);
	w1 = bp_profile__new();
	assert_non_null(w1);
	dev_op(dev(w1, DEV_SDA, "sda"), BP_IO_READ, 2, 8192, 100, 6);
	assert_int_equal(bp_dev_totals_add(&devs, &nr, w1), 0);
	assert_int_equal(nr, 2);
	text = write_metrics(NULL, NULL, TOP, devs, nr, &self);
	parse(&e, text);
	assert_int_equal(VAL(&e, "boundprof_device_io_ops_total", "device", "sda", "op", "read"),
			 6);
	assert_int_equal(VAL(&e, "boundprof_device_io_ops_total", "device", "nvme0n1", "op",
			     "read"), 5);
	assert_int_equal(bucket(&e, "sda", 6), 6);
	assert_int_equal(VAL(&e, "boundprof_device_io_latency_seconds_count", "device", "sda"), 9);
	expo_free(&e);
	free(text);

	free(devs);
	bp_profile__free(w1);
	bp_profile__free(w2);
}

/* --------------------------------------------------------------------- self */

static void self__losses_drains_symbolizer__as_given(void **state)
{
	/* the reasons are the JSON report's drops_detail names of every loss */
	static const struct {
		const char *reason;
		uint64_t value;
	} losses[] = {
		{ "samples_map_full", 1000 + BP_STAT_MAP_FULL },
		{ "kernel_stack_errors", 1000 + BP_STAT_KSTACK_ERR },
		{ "user_stack_errors", 1000 + BP_STAT_USTACK_ERR },
		{ "stack_map_full", 1000 + BP_STAT_STACK_FULL },
		{ "user_stacks_truncated", 1000 + BP_STAT_USTACK_TRUNC },
		{ "events_lost", 1000 + BP_STAT_EVENT_DROP },
		{ "seen_map_full", 1000 + BP_STAT_SEEN_FULL },
		{ "target_map_full", 1000 + BP_STAT_TARGET_FULL },
		{ "offcpu_map_full", 1000 + BP_STAT_OFF_MAP_FULL },
		{ "thread_state_failures", 1000 + BP_STAT_TSTORE_FAIL },
		{ "process_state_failures", 1000 + BP_STAT_PSTATE_FULL },
		{ "io_requests_untracked", 1000 + BP_STAT_IO_RQ_FULL },
		{ "io_map_full", 1000 + BP_STAT_IO_MAP_FULL },
		{ "io_completions_unmatched", 1000 + BP_STAT_IO_NO_START },
		{ "io_completions_unseen", 44 },
	};
	struct bp_agent_self self;
	struct expo e;
	char *text;
	size_t i, n;

	self_fill(&self);
	text = write_metrics(NULL, NULL, TOP, NULL, 0, &self);
	parse(&e, text);

	assert_string_equal(fam_type(&e, "boundprof_agent_lost_total"), "counter");
	/* those, and one for every loss added to the counter table since */
	for (i = n = 0; i < bp_nr_counters; i++)
		n += bp_counter_is_loss(&bp_counters[i]);
	assert_true(n >= sizeof(losses) / sizeof(losses[0]));
	assert_int_equal(count_series(&e, "boundprof_agent_lost_total"), n);
	for (i = 0; i < sizeof(losses) / sizeof(losses[0]); i++)
		assert_int_equal(VAL(&e, "boundprof_agent_lost_total", "reason", losses[i].reason),
				 losses[i].value);
	assert_int_equal(VAL(&e, "boundprof_agent_samples_total"), 1000 + BP_STAT_SAMPLES);
	assert_int_equal(VAL(&e, "boundprof_agent_switches_total"), 1000 + BP_STAT_SWITCHES);
	assert_int_equal(VAL(&e, "boundprof_agent_stacks_cached_total"),
			 1000 + BP_STAT_STACKS_CACHED);
	assert_int_equal(VAL(&e, "boundprof_agent_user_stacks_cut_total"), 33);

	/* unknown BPF run time: no family at all, not a 0 or a -1 */
	assert_false(has_family(&e, "boundprof_agent_bpf_seconds_total"));
	assert_int_equal(count_series(&e, "boundprof_agent_bpf_seconds_total"), 0);

	assert_int_equal(VAL(&e, "boundprof_agent_drains_total", "reason", "interval"), 66);
	assert_int_equal(VAL(&e, "boundprof_agent_drains_total", "reason", "exec"), 4);
	assert_int_equal(count_series(&e, "boundprof_agent_drains_total"), 2);
	assert_string_equal(fam_type(&e, "boundprof_agent_symbolizer_processes"), "gauge");
	assert_int_equal(VAL(&e, "boundprof_agent_symbolizer_processes"), 120);
	assert_int_equal(VAL(&e, "boundprof_agent_symbolizer_files"), 45);
	assert_int_equal(VAL(&e, "boundprof_agent_symbolizer_name_bytes"), 1 << 20);
	assert_int_equal(VAL(&e, "boundprof_agent_bpf_map_bytes"), 123456789);
	assert_string_equal(fam_type(&e, "boundprof_agent_bpf_thread_storage_bytes"), "gauge");
	assert_int_equal(VAL(&e, "boundprof_agent_bpf_thread_storage_bytes"), 2457600);
	assert_int_equal(VAL(&e, "boundprof_agent_processes_known"), 140);
	assert_int_equal(VAL(&e, "boundprof_agent_resident_bytes"), 50 << 20);
	assert_near(VAL(&e, "boundprof_agent_cpu_seconds_total"), 1.25, 0);
	assert_int_equal(VAL(&e, "boundprof_agent_windows_total"), 7);
	assert_int_equal(VAL(&e, "boundprof_agent_write_errors_total"), 1);
	assert_int_equal(VAL(&e, "boundprof_agent_http_requests_total"), 12);
	assert_int_equal(VAL(&e, "boundprof_agent_http_errors_total"), 2);
	assert_string_equal(fam_type(&e, "boundprof_agent_processes_exited"), "gauge");
	assert_int_equal(VAL(&e, "boundprof_agent_processes_exited"), 9);
	assert_string_equal(fam_type(&e, "boundprof_agent_processes_forgotten_total"), "counter");
	assert_int_equal(VAL(&e, "boundprof_agent_processes_forgotten_total"), 3000);
	assert_int_equal(VAL(&e, "boundprof_agent_process_exits_total"), 3009);
	assert_string_equal(fam_type(&e, "boundprof_agent_http_connections"), "gauge");
	assert_int_equal(VAL(&e, "boundprof_agent_http_connections"), 5);
	assert_int_equal(count_series(&e, "boundprof_agent_http_rejected_total"), 5);
	assert_int_equal(VAL(&e, "boundprof_agent_http_rejected_total", "reason", "busy"), 20);
	assert_int_equal(VAL(&e, "boundprof_agent_http_rejected_total", "reason", "peer"), 21);
	assert_int_equal(VAL(&e, "boundprof_agent_http_rejected_total", "reason", "slots"), 22);
	assert_int_equal(VAL(&e, "boundprof_agent_http_rejected_total", "reason", "unauthorized"),
			 23);
	assert_int_equal(VAL(&e, "boundprof_agent_http_rejected_total", "reason", "forbidden"), 24);
	assert_int_equal(VAL(&e, "boundprof_agent_http_evicted_total"), 17);
	assert_int_equal(count_series(&e, "boundprof_agent_http_timeouts_total"), 3);
	assert_int_equal(VAL(&e, "boundprof_agent_http_timeouts_total", "phase", "head"), 30);
	assert_int_equal(VAL(&e, "boundprof_agent_http_timeouts_total", "phase", "write"), 31);
	assert_int_equal(VAL(&e, "boundprof_agent_http_timeouts_total", "phase", "held"), 32);
	assert_near(VAL(&e, "boundprof_agent_map_fill_ratio", "map", "oncpu"), 0.5, 0);
	assert_near(VAL(&e, "boundprof_agent_map_fill_ratio", "map", "offcpu"), 0.25, 0);
	assert_near(VAL(&e, "boundprof_agent_map_fill_ratio", "map", "kernel_stacks"), 0.125, 0);
	assert_near(VAL(&e, "boundprof_agent_map_fill_ratio", "map", "user_stacks"), 1, 0);
	expo_free(&e);
	free(text);

	/* known, even when 0 */
	self.bpf_run_s = 0;
	text = write_metrics(NULL, NULL, TOP, NULL, 0, &self);
	parse(&e, text);
	assert_string_equal(fam_type(&e, "boundprof_agent_bpf_seconds_total"), "counter");
	assert_int_equal(VAL(&e, "boundprof_agent_bpf_seconds_total"), 0);
	expo_free(&e);
	free(text);

	self.bpf_run_s = 2.5;
	text = write_metrics(NULL, NULL, TOP, NULL, 0, &self);
	parse(&e, text);
	assert_near(VAL(&e, "boundprof_agent_bpf_seconds_total"), 2.5, 0);
	/* no program read: no family of theirs */
	assert_false(has_family(&e, "boundprof_agent_bpf_program_seconds_total"));
	expo_free(&e);
	free(text);

	/* each program's, by name */
	self.bpf_run_s = 2.0;
	self.nr_progs = 2;
	snprintf(self.progs[0].name, sizeof(self.progs[0].name), "bp_oncpu");
	self.progs[0].ns = 1500000000;
	self.progs[0].runs = 12000;
	snprintf(self.progs[1].name, sizeof(self.progs[1].name), "bp_switch");
	self.progs[1].ns = 500000000;
	self.progs[1].runs = 600000;
	text = write_metrics(NULL, NULL, TOP, NULL, 0, &self);
	parse(&e, text);
	assert_int_equal(count_series(&e, "boundprof_agent_bpf_program_seconds_total"), 2);
	assert_string_equal(fam_type(&e, "boundprof_agent_bpf_program_seconds_total"), "counter");
	assert_near(VAL(&e, "boundprof_agent_bpf_program_seconds_total", "program", "bp_oncpu"),
		    1.5, 0);
	assert_near(VAL(&e, "boundprof_agent_bpf_program_seconds_total", "program", "bp_switch"),
		    0.5, 0);
	assert_string_equal(fam_type(&e, "boundprof_agent_bpf_program_runs_total"), "counter");
	assert_int_equal(VAL(&e, "boundprof_agent_bpf_program_runs_total", "program", "bp_oncpu"),
			 12000);
	assert_int_equal(VAL(&e, "boundprof_agent_bpf_program_runs_total", "program", "bp_switch"),
			 600000);
	expo_free(&e);
	free(text);

	/* not counted (-1): neither the total nor the programs' families */
	self.bpf_run_s = -1;
	text = write_metrics(NULL, NULL, TOP, NULL, 0, &self);
	parse(&e, text);
	assert_false(has_family(&e, "boundprof_agent_bpf_program_seconds_total"));
	assert_false(has_family(&e, "boundprof_agent_bpf_program_runs_total"));
	expo_free(&e);
	free(text);
}

static void no_window__self_and_devices_still_written(void **state)
{
	struct bp_profile *p = window();
	struct bp_agent_self self;
	struct bp_summary s;
	struct expo e;
	char *text;
	uint32_t i;

	self_fill(&self);
	text = write_metrics(NULL, NULL, TOP, NULL, 0, &self);
	parse(&e, text);
	for (i = 0; i < e.nfams; i++) {
		if (!strncmp(e.fams[i].name, "boundprof_process", 17) ||
		    !strncmp(e.fams[i].name, "boundprof_window", 16) ||
		    !strcmp(e.fams[i].name, "boundprof_cpu_busy_ratio"))
			fail_msg("%s written without a window", e.fams[i].name);
	}
	assert_int_equal(VAL(&e, "boundprof_agent_windows_total"), 7);
	assert_int_equal(VAL(&e, "boundprof_agent_lost_total", "reason", "events_lost"),
			 1000 + BP_STAT_EVENT_DROP);
	assert_int_equal(VAL(&e, "boundprof_agent_drains_total", "reason", "exec"), 4);
	/* no device yet: the families are there, empty */
	assert_true(has_family(&e, "boundprof_device_io_ops_total"));
	assert_true(has_family(&e, "boundprof_device_io_latency_seconds"));
	assert_int_equal(count_series(&e, "boundprof_device_io_ops_total"), 0);
	expo_free(&e);
	free(text);

	/* a window without its summary is no window either */
	summarize(p, &s);
	text = write_metrics(p, NULL, TOP, NULL, 0, &self);
	parse(&e, text);
	assert_false(has_family(&e, "boundprof_process_cpu_seconds"));
	assert_int_equal(VAL(&e, "boundprof_agent_windows_total"), 7);
	expo_free(&e);
	free(text);

	/* and with it, both */
	text = write_metrics(p, &s, TOP, NULL, 0, &self);
	parse(&e, text);
	assert_true(has_family(&e, "boundprof_process_cpu_seconds"));
	assert_int_equal(VAL(&e, "boundprof_agent_windows_total"), 7);
	expo_free(&e);
	free(text);
	bp_summary_free(&s);
	bp_profile__free(p);
}

/* ----------------------------------------------------------------- promtool */

/* the value of the group series {by, group} */
static double group_val(const struct expo *e, const char *fam, const char *by, const char *g)
{
	const struct series *s = find(e, fam, "by", by, "group", g, NULL);

	if (!s)
		fail_msg("no series %s{by=%s,group=%s}", fam, by, g);
	return s->v;
}

static void groups__top_n_and_folded__bounded_sums_kept(void **state)
{
	struct bp_profile *p = window();
	struct bp_agent_self self;
	struct bp_summary s;
	double all = 0, sum = 0;
	uint32_t i, units;
	struct expo e;
	char *text;

	summarize(p, &s);
	self_fill(&self);
	for (i = 0; i < NPROC; i++)
		all += spec[i].samples * PERIOD / 1e9;

	/* two groups of each grouping get series; the rest are summed in group="" */
	text = write_metrics(p, &s, 2, NULL, 0, &self);
	parse(&e, text);
	/* users alice, bob, the one without a name (1002) and the sleeper's "?" */
	assert_int_equal(count_series(&e, "boundprof_group_cpu_seconds"), 3 * 3);
	assert_int_equal(VAL(&e, "boundprof_groups_folded", "by", "user"), 2);
	units = NPROC / 2 + 1 + 1;	/* the containers, web.service, the sleeper's "?" */
	assert_int_equal(VAL(&e, "boundprof_groups_folded", "by", "unit"), units - 2);
	for (i = 0; i < e.nser; i++)
		if (!strcmp(e.ser[i].name, "boundprof_group_cpu_seconds") &&
		    !strcmp(label(&e.ser[i], "by"), "user"))
			sum += e.ser[i].v;
	assert_near(sum, all, 1e-9);
	/* every process's own series says who it is, once */
	assert_int_equal(count_series(&e, "boundprof_process_info"), 2);
	assert_non_null(find(&e, "boundprof_process_info", "pid", pid_str(spec[0].pid), "comm",
			     weird_comm, "uid", "1000", "user", "alice", "cgroup",
			     "/system.slice/web.service", "unit", "web.service", NULL));
	assert_int_equal(count_series(&e, "boundprof_group_verdict"), 3 * 2);
	/* the HELP line says the series are bounded */
	assert_non_null(strstr(text, "# HELP boundprof_groups_folded"));
	assert_non_null(strstr(text, "only the --top most active groups"));
	expo_free(&e);
	free(text);

	/* room for all: nothing folded, no group="" series */
	text = write_metrics(p, &s, 10000, NULL, 0, &self);
	parse(&e, text);
	assert_int_equal(VAL(&e, "boundprof_groups_folded", "by", "user"), 0);
	assert_null(find(&e, "boundprof_group_cpu_seconds", "by", "user", "group", "", NULL));
	assert_near(group_val(&e, "boundprof_group_processes", "unit", "web.service"),
		    NPROC / 2, 0);
	expo_free(&e);
	free(text);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static bool have_promtool(void)
{
	return !system("command -v promtool >/dev/null 2>&1");
}

static void full__promtool_agrees(void **state)
{
	struct bp_profile *p = window();
	struct bp_dev_totals *devs = NULL;
	struct bp_agent_self self;
	struct bp_summary s;
	uint32_t nr = 0;
	void (*old)(int);
	struct expo e;
	char *text;
	FILE *f;
	int rc;

	summarize(p, &s);
	dev_op(dev(p, DEV_SDA, "sda"), BP_IO_READ, 3, 3 * 4096, 100, 6);
	dev_op(dev(p, DEV_NVME, "nvme0n1"), BP_IO_WRITE, 1, 512, 40, 5);
	assert_int_equal(bp_dev_totals_add(&devs, &nr, p), 0);
	self_fill(&self);
	self.bpf_run_s = 0.75;
	text = write_metrics(p, &s, TOP, devs, nr, &self);
	/* our own reading first: it does not need promtool */
	parse(&e, text);
	expo_free(&e);

	if (!have_promtool()) {
		printf("promtool not on PATH (Debian package prometheus): skipping its check\n");
	} else {
		/* a promtool that quits early must fail the check, not kill the test */
		old = signal(SIGPIPE, SIG_IGN);
		fflush(NULL);
		f = popen("promtool check metrics", "w");
		assert_non_null(f);
		fwrite(text, 1, strlen(text), f);
		rc = pclose(f);
		signal(SIGPIPE, old);
		if (!WIFEXITED(rc) || WEXITSTATUS(rc))
			fail_msg("promtool check metrics failed (status %d) on:\n%s", rc, text);
	}
	free(text);
	free(devs);
	bp_summary_free(&s);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parser__invalid_text__refused),
		cmocka_unit_test(processes__top_n_and_folded__sums_preserved),
		cmocka_unit_test(processes__io_waiter__ranked_by_activity),
		cmocka_unit_test(processes__top_covers_all_or_none__folding_exact),
		cmocka_unit_test(devices__two_windows__counters_and_histogram_accumulate),
		cmocka_unit_test(self__losses_drains_symbolizer__as_given),
		cmocka_unit_test(no_window__self_and_devices_still_written),
		cmocka_unit_test(groups__top_n_and_folded__bounded_sums_kept),
		cmocka_unit_test(full__promtool_agrees),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
