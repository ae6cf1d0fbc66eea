// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof save format on a real recording (root, real BPF): Go's pprof
 * reads it and agrees with boundprof's own hotspots, and reading it back
 * renders the very JSON report the recording wrote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "export/report_json.h"
#include "harness.h"
#include "export/pprof.h"
#include "analyze/verdict.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static void print_run(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s---\n", what,
		r->exit_code, r->out, r->err);
}

/*
 * The share of on-CPU time in the saved profile whose leaf is an inlined
 * frame of this name, as boundprof reads the file back; -1 on failure.
 */
static double leaf_share(const char *pb, const char *name)
{
	uint64_t all = 0, named = 0;
	struct bp_profile *p;
	char err[256], *data;
	uint32_t i, nr;
	size_t len;

	data = h_slurp(pb, &len);
	if (!data)
		return -1;
	p = bp_pprof_read(data, len, err, sizeof(err));
	free(data);
	if (!p) {
		fprintf(stderr, "reading %s: %s\n", pb, err);
		return -1;
	}
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *fr = bp_profile__stack_frames(p, s->stack, &nr);
		const struct bp_frame *leaf = nr ? &p->frames[fr[nr - 1]] : NULL;

		if (s->kind != BP_KIND_ONCPU)
			continue;
		all += s->ns;
		if (leaf && leaf->inlined && leaf->name && !strcmp(leaf->name, name))
			named += s->ns;
	}
	bp_profile__free(p);
	return all ? (double)named / all : -1;
}

/*
 * split's 3:1 alpha:beta in Go's pprof, against boundprof's own hotspots;
 * and the function inlined into both, when pprof is asked to show inlines
 */
static void test_go_pprof_reads_split(void **state)
{
	const char *pb = h_path("split.pb.gz"), *json = h_path("split.json");
	char gocache[512], *report_text, *saved;
	struct h_top_row rows[8];
	const struct bp_json *proc;
	struct bp_profile *p;
	struct bp_summary sum;
	struct bp_buf again = BP_BUF_INIT;
	struct bp_json *rep;
	char err[256];
	size_t pb_len, json_len;
	double a, b, lcg;
	struct run r;
	int n, i;

	if (!h_have("go"))
		fail_msg("`go` is not on PATH: install Debian's golang-go (make test-deps) "
			 "to run this test");

	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)pb,
				    "-o", (char *)json, "--", (char *)h_fixture("split"), "3"),
			       60, &r), 0);
	if (r.exit_code)
		print_run("record -o split.pb.gz", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);

	rep = h_json_file(json);
	assert_non_null(rep);
	proc = h_find_proc(rep, "split");
	assert_non_null(proc);
	a = h_hotspot_self(proc, "alpha");
	b = h_hotspot_self(proc, "beta");
	assert_true(a > 0 && b > 0);

	/* Go keeps a build cache under $HOME: keep it in the test's directory */
	snprintf(gocache, sizeof(gocache), "%s/gocache", h_tmpdir());
	setenv("HOME", h_tmpdir(), 1);
	setenv("GOCACHE", gocache, 1);
	setenv("PPROF_TMPDIR", h_tmpdir(), 1);
	/* -noinlines: fixture_lcg, inlined into both, is their own time, as in our hotspots */
	assert_int_equal(h_run(ARGV("go", "tool", "pprof", "-top", "-noinlines", "-nodecount=5",
				    (char *)pb), 120, &r), 0);
	if (r.exit_code)
		print_run("go tool pprof -top", &r);
	assert_int_equal(r.exit_code, 0);
	n = h_pprof_top(r.out, rows, 8);
	for (i = 0; i < n; i++)
		fprintf(stderr, "pprof top %d: %6.2f%% %s\n", i + 1, rows[i].flat_pct, rows[i].name);
	fprintf(stderr, "boundprof: alpha %.2f%% beta %.2f%%\n", a * 100, b * 100);
	if (n < 2)
		print_run("go tool pprof -top", &r);
	assert_true(n >= 2);
	assert_string_equal(rows[0].name, "alpha");
	assert_string_equal(rows[1].name, "beta");
	assert_true(rows[0].flat_pct >= a * 100 - 5 && rows[0].flat_pct <= a * 100 + 5);
	assert_true(rows[1].flat_pct >= b * 100 - 5 && rows[1].flat_pct <= b * 100 + 5);
	h_run_free(&r);
	bp_json_free(rep);

	/*
	 * Without -noinlines pprof charges the inlined function: fixture_lcg
	 * on top, as an inline, with the share of on-CPU time whose leaf frame it is in
	 * boundprof's own samples (the same locations, read as lines).
	 */
	assert_int_equal(h_run(ARGV("go", "tool", "pprof", "-top", "-nodecount=5", (char *)pb),
			       120, &r), 0);
	if (r.exit_code)
		print_run("go tool pprof -top (inlines)", &r);
	assert_int_equal(r.exit_code, 0);
	n = h_pprof_top(r.out, rows, 8);
	for (i = 0; i < n; i++)
		fprintf(stderr, "pprof top (inlines) %d: %6.2f%% %s\n", i + 1, rows[i].flat_pct,
			rows[i].name);
	lcg = leaf_share(pb, "fixture_lcg");
	fprintf(stderr, "boundprof: fixture_lcg inlined leaf %.2f%%\n", lcg * 100);
	if (n < 1)
		print_run("go tool pprof -top (inlines)", &r);
	assert_true(n >= 1);
	assert_true(lcg > 0);
	/* pprof marks a function it knows as inlined (a Line but the last of a Location) */
	assert_string_equal(rows[0].name, "fixture_lcg (inline)");
	assert_true(rows[0].flat_pct >= lcg * 100 - 5 && rows[0].flat_pct <= lcg * 100 + 5);
	h_run_free(&r);

	/* the saved profile renders the report the recording wrote, byte for byte */
	saved = h_slurp(pb, &pb_len);
	report_text = h_slurp(json, &json_len);
	assert_non_null(saved);
	assert_non_null(report_text);
	fprintf(stderr, "split.pb.gz %zu bytes, split.json %zu bytes\n", pb_len, json_len);
	p = bp_pprof_read(saved, pb_len, err, sizeof(err));
	if (!p)
		fail_msg("reading %s: %s", pb, err);
	assert_int_equal(bp_summarize(p, 20, &sum), 0);
	assert_int_equal(bp_verdicts(p, &sum), 0);
	assert_int_equal(bp_export_json(p, &sum, true, &again), 0);
	assert_string_equal(bp_buf_str(&again), report_text);
	bp_summary_free(&sum);
	bp_buf_free(&again);
	bp_profile__free(p);
	free(saved);
	free(report_text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_go_pprof_reads_split, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("pprof", tests, NULL, NULL);
}
