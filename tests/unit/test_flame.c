// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs (agent/export/flame.c): the data embedded in the file parses
 * back and adds up to the profile in every view; names cannot break out of
 * the <script> block; the .svg is well-formed XML; the diff carries BEFORE's
 * values on AFTER's paths; the embedded renderer matches agent/export/flame.js and
 * flame.css. What the page does with the data is tested in a real
 * browser by tests/browser/flame.test.mjs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "export/flame.h"
#include "export/folded.h"
#include "export/flame_assets.h"
#include "util/json.h"
#include "model/profile.h"
#include "unit/builders.h"
#include "unit/xml_check.h"

#define PERIOD		2004008ULL	/* cpu-clock at 499 Hz, ns */
#define EVIL		"</script><script>alert(1)</script>"

/* ------------------------------------------------------------------ profiles */

/*
 * split (100): main;alpha 75 samples, main;beta 25, runqueue under alpha
 * sh (200): sleeps in wait4 through kernel frames; one io wait; on-CPU in a
 *   frame named EVIL, and one sample without a stack
 * a<b&"c (300): off-CPU only (lock)
 */
static struct bp_profile *profile_a(void)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t main_, alpha, beta, sched, wait4, sys, evil, io, futex;

	assert_non_null(p);
	p->start_ns = 1000000000ULL;
	p->end_ns = 3000000000ULL;
	p->hz = 499;
	p->ncpus = 2;
	p->offcpu_enabled = true;
	bld_proc(p, 100, 0, "split", NULL);
	bld_proc(p, 200, 0, "sh", NULL);
	bld_proc(p, 300, 0, "a<b&\"c", NULL);

	main_ = bld_frame(p, "main", "split", NULL, NULL, 0, false);
	alpha = bld_frame(p, "alpha", "split", NULL, NULL, 0, false);
	beta = bld_frame(p, "beta", "split", NULL, NULL, 0, false);
	sched = bld_frame(p, "schedule", "[kernel]", NULL, NULL, 0, true);
	wait4 = bld_frame(p, "wait4", "libc.so.6", NULL, NULL, 0, false);
	sys = bld_frame(p, "do_wait", "[kernel]", NULL, NULL, 0, true);
	evil = bld_frame(p, EVIL, "sh", NULL, NULL, 0, false);
	io = bld_frame(p, "io_schedule", "[kernel]", NULL, NULL, 0, true);
	futex = bld_frame(p, "futex_wait", "[kernel]", NULL, NULL, 0, true);

	bld_sample(p, 100, 100, BP_KIND_ONCPU, BLD_STACK(p, main_, alpha), 75, 75 * PERIOD);
	bld_sample(p, 100, 100, BP_KIND_ONCPU, BLD_STACK(p, main_, beta), 25, 25 * PERIOD + 777);
	bld_sample(p, 100, 100, BP_KIND_RUNQUEUE, BLD_STACK(p, main_, alpha, sched), 4, 3500);
	bld_sample(p, 200, 200, BP_KIND_SLEEP, BLD_STACK(p, wait4, sys, sched), 1, 1999999500);
	bld_sample(p, 200, 200, BP_KIND_IO, BLD_STACK(p, wait4, io), 2, 1234567);
	bld_sample(p, 200, 200, BP_KIND_ONCPU, BLD_STACK(p, evil), 3, 3 * PERIOD);
	bld_sample(p, 200, 200, BP_KIND_ONCPU, bld_stack(p, &evil, 0), 1, PERIOD);
	bld_sample(p, 300, 300, BP_KIND_LOCK, BLD_STACK(p, main_, futex), 7, 700000499);
	return p;
}

/* what a sample is worth in each view, as the folded views count it */
static void expected_totals(const struct bp_profile *p, uint64_t tot[3])
{
	uint32_t i;

	tot[0] = tot[1] = tot[2] = 0;
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		uint64_t us = s->kind == BP_KIND_ONCPU && (p->pmu || !s->ns) ?
			      (p->hz ? s->count * 1000000ULL / p->hz : 0) : (s->ns + 500) / 1000;

		if (s->kind == BP_KIND_ONCPU)
			tot[BP_VIEW_ONCPU] += s->count;
		else
			tot[BP_VIEW_OFFCPU] += us;
		tot[BP_VIEW_WALL] += us;
	}
}

/* ------------------------------------------------------------------ reading the file back */

struct flame_tree {
	struct bp_json *root;
	const struct bp_json *names;
	const char *types;
	uint32_t n;
	uint64_t *name, *nchild, *s, *w, *b;
	int64_t *parent;
	uint32_t *depth;
};

static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

/* the coded numbers of a column (see put_code in export_flame.c); returns how many */
static uint32_t unpack(const char *s, uint64_t *out, uint32_t max)
{
	uint64_t acc = 0;
	uint32_t n = 0;
	const char *d;

	for (; *s; s++) {
		d = strchr(alphabet, *s);
		assert_non_null(d);
		if (d - alphabet < 32) {
			assert_true(n < max);
			out[n++] = acc * 32 + (d - alphabet);
			acc = 0;
		} else {
			acc = acc * 32 + (d - alphabet - 32);
		}
	}
	assert_int_equal(acc, 0);
	return n;
}

static uint64_t *column(const struct bp_json *tree, const char *key, uint32_t n, bool sparse)
{
	const struct bp_json *c = bp_json_get(tree, key);
	uint64_t *out, *pairs;
	uint32_t k, np, at = 0;

	if (!c)
		return NULL;
	assert_int_equal(bp_json_type(c), BP_JSON_STRING);
	out = calloc(n + 1, sizeof(*out));
	assert_non_null(out);
	if (!sparse) {
		assert_int_equal(unpack(bp_json_str(c), out, n), n);
		return out;
	}
	pairs = calloc(2 * n + 2, sizeof(*pairs));
	assert_non_null(pairs);
	np = unpack(bp_json_str(c), pairs, 2 * n + 2);
	assert_int_equal(np % 2, 0);
	for (k = 0; k < np; k += 2) {
		at += pairs[k];
		assert_true(at < n);
		assert_true(k == 0 || pairs[k] > 0);
		out[at] = pairs[k + 1];
	}
	free(pairs);
	return out;
}

/* the JSON between <script type="application/json" id="bp-data"> and its </script> */
static struct bp_json *extract(const char *doc)
{
	static const char open[] = "<script type=\"application/json\" id=\"bp-data\">";
	const char *a = strstr(doc, open), *b;
	char err[128] = "";
	struct bp_json *root;

	assert_non_null(a);
	a += strlen(open);
	b = strstr(a, "</script>");
	assert_non_null(b);
	root = bp_json_parse(a, b - a, err, sizeof(err));
	if (!root)
		fail_msg("embedded data does not parse: %s", err);
	return root;
}

static void tree_read(const char *doc, struct flame_tree *t)
{
	const struct bp_json *tree;
	uint64_t *left, *stack;
	uint32_t i, sp = 0;

	memset(t, 0, sizeof(*t));
	t->root = extract(doc);
	assert_int_equal((int)bp_json_num(bp_json_get(t->root, "version")), 1);
	t->names = bp_json_get(t->root, "names");
	t->types = bp_json_str(bp_json_get(t->root, "types"));
	assert_non_null(t->types);
	assert_int_equal(strlen(t->types), bp_json_len(t->names));
	assert_int_equal(bp_json_len(bp_json_get(t->root, "module")), bp_json_len(t->names));
	tree = bp_json_get(t->root, "tree");
	t->n = bp_json_num(bp_json_get(tree, "nodes"));
	assert_true(t->n >= 1);
	t->name = column(tree, "n", t->n, false);
	t->nchild = column(tree, "c", t->n, false);
	t->s = column(tree, "s", t->n, true);
	t->w = column(tree, "w", t->n, true);
	t->b = column(tree, "b", t->n, false);
	assert_non_null(t->w);
	t->parent = calloc(t->n, sizeof(*t->parent));
	t->depth = calloc(t->n, sizeof(*t->depth));
	left = calloc(t->n, sizeof(*left));
	stack = calloc(t->n, sizeof(*stack));
	assert_true(t->parent && t->depth && left && stack);
	for (i = 0; i < t->n; i++) {
		assert_true(t->name[i] < bp_json_len(t->names));
		while (sp && !left[sp - 1])
			sp--;
		/* only the root is nobody's child */
		assert_true(i == 0 ? sp == 0 : sp > 0);
		t->parent[i] = sp ? (int64_t)stack[sp - 1] : -1;
		t->depth[i] = sp ? t->depth[stack[sp - 1]] + 1 : 0;
		if (sp)
			left[sp - 1]--;
		if (t->nchild[i]) {
			stack[sp] = i;
			left[sp++] = t->nchild[i];
		}
	}
	while (sp && !left[sp - 1])
		sp--;
	assert_int_equal(sp, 0);
	free(left);
	free(stack);
}

static void tree_free(struct flame_tree *t)
{
	bp_json_free(t->root);
	free(t->name);
	free(t->nchild);
	free(t->s);
	free(t->w);
	free(t->b);
	free(t->parent);
	free(t->depth);
}

static const char *tname(const struct flame_tree *t, uint32_t i)
{
	return bp_json_str(bp_json_at(t->names, t->name[i]));
}

static char ttype(const struct flame_tree *t, uint32_t i)
{
	return t->types[t->name[i]];
}

/* the class frame above node i ("[io]"...), or NULL above the class level */
static const char *class_of(const struct flame_tree *t, uint32_t i)
{
	int64_t j = i;

	while (j > 0 && t->depth[j] > 2)
		j = t->parent[j];
	return j > 0 && t->depth[j] == 2 ? tname(t, j) : NULL;
}

/* totals per view, derived the way flame.js derives the views */
static void tree_totals(const struct flame_tree *t, uint64_t tot[3])
{
	uint32_t i;

	tot[0] = tot[1] = tot[2] = 0;
	for (i = 0; i < t->n; i++) {
		const char *cls = class_of(t, i);

		tot[BP_VIEW_ONCPU] += t->s ? t->s[i] : 0;
		tot[BP_VIEW_WALL] += t->w[i];
		if (cls && strcmp(cls, "[on-cpu]"))
			tot[BP_VIEW_OFFCPU] += t->w[i];
		/* samples only ever end inside [on-cpu] */
		if (t->s && t->s[i])
			assert_string_equal(cls, "[on-cpu]");
	}
}

/* the node at this path of names from the root, or -1 */
static int64_t tree_find(const struct flame_tree *t, const char *const *path, uint32_t n)
{
	int64_t at = 0;
	uint32_t i, d;

	for (d = 0; d < n; d++) {
		int64_t found = -1;

		for (i = at + 1; i < t->n && found < 0; i++)
			if (t->parent[i] == at && !strcmp(tname(t, i), path[d]))
				found = i;
		if (found < 0)
			return -1;
		at = found;
	}
	return at;
}

static char *export(const struct bp_profile *p, const struct bp_summary *s,
		    enum bp_flame_format fmt, int view, const char *title)
{
	struct bp_flame_opts o = { .format = fmt, .title = title, .initial_view = view };
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_export_flame(p, s, &o, &b), 0);
	assert_non_null(b.data);
	return b.data;
}

/* ------------------------------------------------------------------ tests */

static void data__parses_back__totals_equal_profile_per_view(void **state)
{
	struct bp_profile *p = profile_a();
	uint64_t want[3], got[3];
	struct flame_tree t;
	char *doc;
	int fmt;

	expected_totals(p, want);
	assert_int_equal(want[BP_VIEW_ONCPU], 104);
	for (fmt = BP_FLAME_HTML; fmt <= BP_FLAME_SVG; fmt++) {
		doc = export(p, NULL, fmt, BP_VIEW_WALL, NULL);
		tree_read(doc, &t);
		tree_totals(&t, got);
		assert_int_equal(got[BP_VIEW_ONCPU], want[BP_VIEW_ONCPU]);
		assert_int_equal(got[BP_VIEW_OFFCPU], want[BP_VIEW_OFFCPU]);
		assert_int_equal(got[BP_VIEW_WALL], want[BP_VIEW_WALL]);
		assert_string_equal(bp_json_str(bp_json_get(t.root, "kind")), "profile");
		assert_string_equal(bp_json_str(bp_json_get(t.root, "initial")), "wall");
		assert_string_equal(bp_json_str(bp_json_get(t.root, "title")), "boundprof");
		assert_int_equal((int)bp_json_num(bp_json_path(t.root, "meta.samples")), 104);
		assert_int_equal((int)bp_json_num(bp_json_path(t.root, "meta.hz")), 499);
		assert_true(bp_json_bool(bp_json_path(t.root, "meta.offcpu")) == 1);
		assert_null(bp_json_get(t.root, "verdict"));
		tree_free(&t);
		free(doc);
	}
	bp_profile__free(p);
}

static void data__root_process_class_frames(void **state)
{
	struct bp_profile *p = profile_a();
	char *doc = export(p, NULL, BP_FLAME_HTML, BP_VIEW_ONCPU, NULL);
	struct flame_tree t;
	const char *path[6];
	int64_t n;
	uint32_t i;

	tree_read(doc, &t);
	assert_string_equal(tname(&t, 0), "all");
	assert_int_equal(ttype(&t, 0), '4');
	for (i = 1; i < t.n; i++) {
		if (t.depth[i] == 1)
			assert_int_equal(ttype(&t, i), '2');
		else if (t.depth[i] == 2)
			assert_int_equal(ttype(&t, i), '3');
		else
			assert_true(ttype(&t, i) == '0' || ttype(&t, i) == '1');
		/* kernel frames are marked, in the name and in the type */
		if (t.depth[i] > 2)
			assert_int_equal(ttype(&t, i) == '1',
					 strstr(tname(&t, i), " [k]") != NULL);
		/* siblings by name, each name once */
		if (i > 1 && t.parent[i - 1] == t.parent[i])
			assert_true(strcmp(tname(&t, i - 1), tname(&t, i)) < 0);
	}
	path[0] = "split [100]";
	path[1] = "[on-cpu]";
	path[2] = "main";
	path[3] = "alpha";
	n = tree_find(&t, path, 4);
	assert_true(n > 0);
	assert_int_equal(t.s[n], 75);
	assert_int_equal(t.w[n], (75 * PERIOD + 500) / 1000);
	path[1] = "[runqueue]";
	path[4] = "schedule [k]";
	n = tree_find(&t, path, 5);
	assert_true(n > 0);
	assert_int_equal(t.w[n], 4);
	assert_int_equal(t.s[n], 0);
	path[0] = "sh [200]";
	path[1] = "[sleep]";
	path[2] = "wait4";
	path[3] = "do_wait [k]";
	path[4] = "schedule [k]";
	n = tree_find(&t, path, 5);
	assert_true(n > 0);
	assert_int_equal(t.w[n], 2000000);
	/* a sample without a stack ends on the class frame */
	path[1] = "[on-cpu]";
	n = tree_find(&t, path, 2);
	assert_true(n > 0);
	assert_int_equal(t.s[n], 1);
	path[0] = "a<b&\"c [300]";
	path[1] = "[lock]";
	assert_true(tree_find(&t, path, 2) > 0);
	/* the module rides along for the tooltip */
	path[0] = "split [100]";
	path[1] = "[on-cpu]";
	path[2] = "main";
	n = tree_find(&t, path, 3);
	assert_string_equal(bp_json_str(bp_json_at(bp_json_get(t.root, "modules"),
			    bp_json_num(bp_json_at(bp_json_get(t.root, "module"), t.name[n])))),
			    "split");
	assert_string_equal(bp_json_str(bp_json_get(t.root, "initial")), "on");
	tree_free(&t);
	free(doc);
	bp_profile__free(p);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

/* nothing that would fetch: the only URLs are XML namespace names */
static void assert_offline(const char *doc)
{
	static const char *const fetchers[] = { "src=", "href=", "url(", "@import", "fetch(",
						"XMLHttpRequest", "WebSocket", "import(" };
	const char *s;
	size_t i;

	for (s = strstr(doc, "http"); s; s = strstr(s + 1, "http"))
		if (!strncmp(s, "http:", 5) || !strncmp(s, "https:", 6))
			assert_int_equal(strncmp(s, "http://www.w3.org/", 18), 0);
	for (i = 0; i < sizeof(fetchers) / sizeof(fetchers[0]); i++)
		if (strstr(doc, fetchers[i]))
			fail_msg("%s in an offline document", fetchers[i]);
}

static void html__script_in_a_name__cannot_break_out(void **state)
{
	struct bp_profile *p = profile_a();
	char *doc = export(p, NULL, BP_FLAME_HTML, BP_VIEW_WALL, "t</script><b>&\"'");
	const char *data = strstr(doc, "id=\"bp-data\">");
	struct flame_tree t;
	const char *path[3] = { "sh [200]", "[on-cpu]", EVIL };

	/* the data block and the renderer: no other script ends, none begins in the data */
	assert_int_equal(count(doc, "</script"), 2);
	assert_int_equal(count(doc, "<script"), 2);
	assert_non_null(data);
	assert_null(memchr(data + 13, '<', strstr(data, "</script>") - data - 13));
	assert_non_null(strstr(doc, "<title>t&lt;/script&gt;&lt;b&gt;&amp;&quot;&#39;</title>"));
	assert_non_null(strstr(doc, "Content-Security-Policy"));
	assert_offline(doc);
	tree_read(doc, &t);
	/* and the name is intact once parsed */
	assert_true(tree_find(&t, path, 3) > 0);
	assert_string_equal(bp_json_str(bp_json_get(t.root, "title")), "t</script><b>&\"'");
	tree_free(&t);
	free(doc);
	bp_profile__free(p);
}

static void xml_check(const char *doc)
{
	const char *err = xml_error(doc);

	if (err)
		fail_msg("not well-formed XML: %s", err);
}

static void svg__well_formed_xml_with_escaped_text(void **state)
{
	struct bp_profile *p = profile_a();
	char *doc = export(p, NULL, BP_FLAME_SVG, BP_VIEW_OFFCPU, "x < y & \"z\" ]]> </script>");
	struct flame_tree t;
	uint64_t got[3], want[3];

	xml_check(doc);
	assert_int_equal(strncmp(doc, "<?xml", 5), 0);
	assert_non_null(strstr(doc, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(doc, "<title>x &lt; y &amp; &quot;z&quot; ]]&gt; "
				    "&lt;/script&gt;</title>"));
	/* the renderer is CDATA; the data needs none: no '<' or '&' in it */
	assert_int_equal(count(doc, "<![CDATA["), 2);
	tree_read(doc, &t);
	tree_totals(&t, got);
	expected_totals(p, want);
	assert_memory_equal(got, want, sizeof(got));
	assert_string_equal(bp_json_str(bp_json_get(t.root, "initial")), "off");
	tree_free(&t);
	free(doc);

	/* the checker itself catches the faults it is for */
	assert_null(xml_error("<?xml version=\"1.0\"?>\n<svg a='&amp;'><g/><t>&#x3c;</t></svg>\n"));
	assert_non_null(xml_error("<svg><g></svg>"));
	assert_non_null(xml_error("<svg>a & b</svg>"));
	assert_non_null(xml_error("<svg a=\"<\"></svg>"));
	assert_non_null(xml_error("<svg></svg><svg></svg>"));
	assert_non_null(xml_error("<svg><g>"));
	bp_profile__free(p);
}

static void header__verdict_and_process_verdicts(void **state)
{
	struct bp_profile *p = profile_a();
	struct bp_verdict v = { .cls = BP_CLASS_CPU, .conf = BP_CONF_HIGH };
	struct bp_proc_summary ps[2] = { { 0 } };
	struct bp_summary s = { .duration_s = 2.0, .procs = ps, .nr_procs = 2,
				.have_overall = true };
	struct flame_tree t;
	char *doc;

	v.evidence[0] = "alpha is 72% of wall time </script>";
	v.levers[0] = "Tune the hot code first";
	v.nr_evidence = 1;
	v.nr_levers = 1;
	s.overall = v;
	ps[0].proc = bp_profile__proc(p, 100, false);
	ps[0].verdict = &v;
	ps[1].proc = bp_profile__proc(p, 200, false);	/* quiet: no verdict */
	doc = export(p, &s, BP_FLAME_HTML, BP_VIEW_WALL, NULL);
	tree_read(doc, &t);
	assert_string_equal(bp_json_str(bp_json_path(t.root, "verdict.class")), "cpu-bound");
	assert_string_equal(bp_json_str(bp_json_path(t.root, "verdict.confidence")), "high");
	assert_string_equal(bp_json_str(bp_json_path(t.root, "verdict.evidence[0]")),
			    "alpha is 72% of wall time </script>");
	assert_string_equal(bp_json_str(bp_json_path(t.root, "verdict.levers[0]")),
			    "Tune the hot code first");
	assert_int_equal(bp_json_len(bp_json_get(t.root, "procs")), 1);
	/* named like the process frame, which is how the page finds it */
	assert_string_equal(bp_json_str(bp_json_path(t.root, "procs[0].name")), "split [100]");
	assert_string_equal(bp_json_str(bp_json_path(t.root, "procs[0].class")), "cpu-bound");
	assert_true(bp_json_num(bp_json_path(t.root, "meta.duration_s")) == 2.0);
	tree_free(&t);
	free(doc);
	bp_profile__free(p);
}

/* processes are matched by name: pids differ between two recordings */
static void diff__before_values_on_after_paths(void **state)
{
	struct bp_profile *a = profile_a(), *b = bp_profile__new();
	struct bp_flame_opts o = { .format = BP_FLAME_SVG };
	struct bp_buf out = BP_BUF_INIT;
	uint32_t main_, alpha, gone, i;
	uint64_t want[3], bw[3], sum = 0;
	struct flame_tree t;
	const char *path[4] = { "split", "[on-cpu]", "main", "alpha" };
	int64_t n;

	assert_non_null(b);
	b->hz = 499;
	/* another run of split: another pid, the same process in the diff */
	bld_proc(b, 4321, 0, "split", NULL);
	main_ = bld_frame(b, "main", "split", NULL, NULL, 0, false);
	alpha = bld_frame(b, "alpha", "split", NULL, NULL, 0, false);
	gone = bld_frame(b, "only_before", "split", NULL, NULL, 0, false);
	bld_sample(b, 4321, 4321, BP_KIND_ONCPU, BLD_STACK(b, main_, alpha), 10, 10 * PERIOD);
	bld_sample(b, 4321, 4321, BP_KIND_ONCPU, BLD_STACK(b, main_, gone), 30, 30 * PERIOD);

	assert_int_equal(bp_export_flame_diff(b, a, &o, &out), 0);
	xml_check(out.data);
	tree_read(out.data, &t);
	assert_string_equal(bp_json_str(bp_json_get(t.root, "kind")), "diff");
	assert_null(t.s);
	assert_non_null(t.b);
	expected_totals(a, want);
	expected_totals(b, bw);
	/* AFTER's stacks with AFTER's values; BEFORE's total on each path */
	for (i = 0; i < t.n; i++)
		sum += t.w[i];
	assert_int_equal(sum, want[BP_VIEW_WALL]);
	assert_int_equal(t.b[0], bw[BP_VIEW_WALL]);
	assert_int_equal((uint64_t)bp_json_num(bp_json_path(t.root, "before.total_us")),
			 bw[BP_VIEW_WALL]);
	n = tree_find(&t, path, 4);
	assert_true(n > 0);
	assert_int_equal(t.b[n], (10 * PERIOD + 500) / 1000);
	assert_int_equal(t.b[tree_find(&t, path, 3)], (10 * PERIOD + 500) / 1000 +
						      (30 * PERIOD + 500) / 1000);
	path[0] = "sh";
	n = tree_find(&t, path, 1);
	assert_true(n > 0);
	assert_int_equal(t.b[n], 0);
	/* BEFORE-only frames are not drawn, and their names are not shipped */
	for (i = 0; i < bp_json_len(t.names); i++)
		assert_string_not_equal(bp_json_str(bp_json_at(t.names, i)), "only_before");
	tree_free(&t);
	bp_buf_free(&out);
	bp_profile__free(a);
	bp_profile__free(b);
}

/* equal profiles give equal files, whatever order their samples came in */
static void output__deterministic(void **state)
{
	struct bp_profile *p = profile_a(), *q = bp_profile__new();
	uint32_t i, j, nr;
	char *x, *y;

	/* q: p's processes, frames and samples, in reverse order */
	q->start_ns = p->start_ns;
	q->end_ns = p->end_ns;
	q->hz = p->hz;
	q->ncpus = p->ncpus;
	q->offcpu_enabled = true;
	for (i = p->nr_procs; i-- > 0;)
		bld_proc(q, p->procs[i]->pid, 0, p->procs[i]->comm, NULL);
	for (i = p->nr_samples; i-- > 0;) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *f = bp_profile__stack_frames(p, s->stack, &nr);
		uint32_t g[8];

		for (j = 0; j < nr; j++) {
			const struct bp_frame *pf = &p->frames[f[j]];

			g[j] = bld_frame(q, pf->name, pf->module, NULL, NULL, 0, pf->kernel);
		}
		bld_sample(q, s->pid, s->pid, s->kind, bld_stack(q, g, nr), s->count, s->ns);
	}
	x = export(p, NULL, BP_FLAME_HTML, BP_VIEW_WALL, NULL);
	y = export(q, NULL, BP_FLAME_HTML, BP_VIEW_WALL, NULL);
	assert_string_equal(x, y);
	free(x);
	free(y);
	bp_profile__free(p);
	bp_profile__free(q);
}

static void output__empty_profile(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct flame_tree t;
	uint64_t got[3];
	char *doc;

	assert_non_null(p);
	doc = export(p, NULL, BP_FLAME_SVG, BP_VIEW_ONCPU, NULL);
	xml_check(doc);
	tree_read(doc, &t);
	assert_int_equal(t.n, 1);
	tree_totals(&t, got);
	assert_int_equal(got[0] + got[1] + got[2], 0);
	tree_free(&t);
	free(doc);
	bp_profile__free(p);
}

static void opts__invalid__einval(void **state)
{
	struct bp_profile *p = profile_a();
	struct bp_flame_opts o = { .format = BP_FLAME_HTML, .initial_view = BP_VIEW_WALL };
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_export_flame(NULL, NULL, &o, &b), -EINVAL);
	assert_int_equal(bp_export_flame(p, NULL, &o, NULL), -EINVAL);
	assert_int_equal(bp_export_flame_diff(NULL, p, &o, &b), -EINVAL);
	o.initial_view = 3;
	assert_int_equal(bp_export_flame(p, NULL, &o, &b), -EINVAL);
	o.initial_view = BP_VIEW_ONCPU;
	o.format = 7;
	assert_int_equal(bp_export_flame(p, NULL, &o, &b), -EINVAL);
	assert_int_equal(b.len, 0);
	/* no options: an HTML page opening on the wall-clock view */
	assert_int_equal(bp_export_flame(p, NULL, NULL, &b), 0);
	assert_int_equal(strncmp(b.data, "<!DOCTYPE html>", 15), 0);
	assert_non_null(strstr(b.data, "\"initial\":\"wall\""));
	bp_buf_free(&b);
	bp_profile__free(p);
}

/* a profile with many distinct stacks: every one is in the tree, with its value */
static void output__many_stacks(void **state)
{
	struct bp_profile *p = bp_profile__new();
	uint64_t want[3], got[3], x = 12345;
	uint32_t f[64], i, d, depth, leaves = 0, *uses;
	struct flame_tree t;
	char name[32], *doc;

	assert_non_null(p);
	p->hz = 99;
	bld_proc(p, 1, 0, "big", NULL);
	for (i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "fn_%u", i);
		bld_frame(p, name, "big", NULL, NULL, 0, i % 7 == 0);
	}
	while (p->nr_stacks < 5000) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		depth = 2 + (x >> 33) % 30;
		for (d = 0; d < depth; d++)
			f[d] = ((x >> (d % 40)) * (d + 1) + d * 31) % 1000;
		bld_sample(p, 1, 1, (x >> 60) % 3 ? BP_KIND_ONCPU : BP_KIND_IO, bld_stack(p, f, depth),
			   1 + (x >> 40) % 9, 1000 + (x >> 20) % 100000);
	}
	doc = export(p, NULL, BP_FLAME_HTML, BP_VIEW_WALL, NULL);
	tree_read(doc, &t);
	tree_totals(&t, got);
	expected_totals(p, want);
	assert_memory_equal(got, want, sizeof(got));
	for (i = 0; i < t.n; i++)
		leaves += t.nchild[i] == 0;
	assert_true(leaves <= p->nr_stacks);
	/* the most used names come first: they get the short codes */
	uses = calloc(bp_json_len(t.names), sizeof(*uses));
	assert_non_null(uses);
	for (i = 0; i < t.n; i++)
		uses[t.name[i]]++;
	for (i = 0; i + 1 < bp_json_len(t.names); i++)
		assert_true(uses[i] >= uses[i + 1] && uses[i + 1] > 0);
	free(uses);
	tree_free(&t);
	free(doc);
	bp_profile__free(p);
}

/* ---- the embedded renderer is the one in agent/export/ */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static void assets__up_to_date_and_embeddable(void **state)
{
	const char *src = getenv("BP_SRC") ? getenv("BP_SRC") : ".";
	static const char *const files[] = { "agent/export/flame.js", "agent/export/flame.css" };
	const char *embedded[] = { bp_flame_js, bp_flame_css };
	char path[4096];
	size_t i;

	for (i = 0; i < 2; i++) {
		char *text;

		snprintf(path, sizeof(path), "%s/%s", src, files[i]);
		text = slurp(path);
		if (!text)
			fail_msg("cannot read %s (BP_SRC is the source root)", path);
		if (strcmp(text, embedded[i]))
			fail_msg("the embedded renderer differs from %s: "
				 "rebuild (make)", files[i]);
		free(text);
		/* either would end the <script>/<style> element or the SVG's CDATA early */
		assert_null(strstr(embedded[i], "</script"));
		assert_null(strstr(embedded[i], "</style"));
		assert_null(strstr(embedded[i], "]]>"));
	}
	assert_offline(bp_flame_js);
	assert_offline(bp_flame_css);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(data__parses_back__totals_equal_profile_per_view),
		cmocka_unit_test(data__root_process_class_frames),
		cmocka_unit_test(html__script_in_a_name__cannot_break_out),
		cmocka_unit_test(svg__well_formed_xml_with_escaped_text),
		cmocka_unit_test(header__verdict_and_process_verdicts),
		cmocka_unit_test(diff__before_values_on_after_paths),
		cmocka_unit_test(output__deterministic),
		cmocka_unit_test(output__empty_profile),
		cmocka_unit_test(opts__invalid__einval),
		cmocka_unit_test(output__many_stacks),
		cmocka_unit_test(assets__up_to_date_and_embeddable),
	};

	return cmocka_run_group_tests_name("flame", tests, NULL, NULL);
}
