// SPDX-License-Identifier: GPL-2.0
/*
 * report and diff on real recordings (root, real BPF): a saved profile
 * re-renders the recording's outputs with the same numbers, and diff shows
 * no change against itself and the expected shift between two workloads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static void run_ok(char *const argv[], struct run *r)
{
	assert_int_equal(h_run(argv, 120, r), 0);
	if (r->exit_code)
		fprintf(stderr, "--- %s: exit %d\n%s\n%s\n", argv[1], r->exit_code, r->out, r->err);
	assert_int_equal(r->exit_code, 0);
}

static void same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = h_slurp(a, &la), *y = h_slurp(b, &lb);

	assert_non_null(x);
	assert_non_null(y);
	if (la != lb || memcmp(x, y, la))
		fail_msg("%s and %s differ (%zu vs %zu bytes)", a, b, la, lb);
	free(x);
	free(y);
}

/*
 * report FILE.pb.gz gives back the recording's JSON and folded files, byte
 * for byte. The human report leads with the verdict the recording had,
 * which is what the kernel's count of the fixture's time allows (a busy
 * machine makes split cpu-starved, not cpu-bound).
 */
static void test_report_reproduces(void **state)
{
	const struct bp_json *proc;
	struct bp_json *rec;
	struct h_sched k;
	struct h_busy busy;
	const char *cls;
	struct run r;

	h_sched_arm();
	run_ok(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)h_path("rec.pb.gz"),
		    "-o", (char *)h_path("rec.json"), "-o", (char *)h_path("rec.folded"), "-o",
		    (char *)h_path("rec.wall.folded"), "--", "sh", "-c",
		    (char *)"exec \"$0\" 2", (char *)h_fixture("split")), &r);
	h_run_free(&r);
	run_ok(ARGV((char *)h_bin(), "report", (char *)h_path("rec.pb.gz"), "-o",
		    (char *)h_path("rep.json"), "-o", (char *)h_path("rep.folded"), "-o",
		    (char *)h_path("rep.wall.folded"), "-o", (char *)h_path("rep.html")), &r);
	rec = h_json_file(h_path("rec.json"));
	assert_non_null(rec);
	proc = h_find_proc(rec, "split");
	assert_non_null(proc);
	cls = bp_json_str(bp_json_path(proc, "verdict.class"));
	assert_non_null(cls);
	h_show_verdict("split", proc);
	assert_int_equal(h_sched_read("split", &k, 1), 1);
	busy = h_busy_of(&k, NULL);
	h_expect_class("split", cls, &busy, "cpu-bound");
	/* the human report leads with the verdict, as the recording's did */
	assert_non_null(strstr(r.out, "pid "));
	assert_non_null(strstr(r.out, cls));
	bp_json_free(rec);
	h_run_free(&r);
	same_file(h_path("rec.json"), h_path("rep.json"));
	same_file(h_path("rec.folded"), h_path("rep.folded"));
	same_file(h_path("rec.wall.folded"), h_path("rep.wall.folded"));
	fprintf(stderr, "report: JSON, folded and wall-clock folded identical to the recording\n");

	/* --json on stdout is the same document */
	run_ok(ARGV((char *)h_bin(), "report", (char *)h_path("rec.pb.gz"), "--json"), &r);
	{
		char *orig = h_slurp(h_path("rec.json"), NULL);

		assert_non_null(orig);
		assert_string_equal(r.out, orig);
		free(orig);
	}
	h_run_free(&r);
}

static void test_diff(void **state)
{
	struct bp_json *d;
	struct run r;
	const struct bp_json *fns;
	double alpha = 0, spin = 0;
	size_t i;

	run_ok(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)h_path("a.pb.gz"), "--",
		    (char *)h_fixture("split"), "2"), &r);
	h_run_free(&r);
	run_ok(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)h_path("b.pb.gz"), "--",
		    (char *)h_fixture("spin"), "2"), &r);
	h_run_free(&r);

	/* a profile against itself: nothing changed */
	run_ok(ARGV((char *)h_bin(), "diff", (char *)h_path("a.pb.gz"), (char *)h_path("a.pb.gz")),
	       &r);
	fprintf(stderr, "%s", r.out);
	assert_non_null(strstr(r.out, "no change"));
	h_run_free(&r);

	/* split then spin: alpha's share falls, spin_hot's rises */
	run_ok(ARGV((char *)h_bin(), "diff", (char *)h_path("a.pb.gz"), (char *)h_path("b.pb.gz"),
		    "-o", (char *)h_path("d.json"), "-o", (char *)h_path("d.svg")), &r);
	fprintf(stderr, "%s", r.out);
	h_run_free(&r);
	d = h_json_file(h_path("d.json"));
	assert_non_null(d);
	fns = bp_json_get(d, "functions");
	for (i = 0; i < bp_json_len(fns); i++) {
		const struct bp_json *f = bp_json_at(fns, i);
		const char *name = bp_json_str(bp_json_get(f, "function"));

		if (!strcmp(name, "alpha"))
			alpha = bp_json_num(bp_json_get(f, "change"));
		if (!strcmp(name, "spin_hot"))
			spin = bp_json_num(bp_json_get(f, "change"));
	}
	fprintf(stderr, "diff: alpha %+.3f, spin_hot %+.3f\n", alpha, spin);
	assert_true(alpha < -0.6);
	assert_true(spin > 0.8);
	bp_json_free(d);
	{
		char *svg = h_slurp(h_path("d.svg"), NULL);

		assert_non_null(svg);
		assert_non_null(strstr(svg, "<svg"));
		free(svg);
	}
}

static void expect_bad(char *const argv[], const char *needle)
{
	struct run r;

	assert_int_equal(h_run(argv, 30, &r), 0);
	fprintf(stderr, "bad: %s %s -> exit %d: %s", argv[1], argv[2] ? argv[2] : "",
		r.exit_code, r.err);
	assert_false(r.signaled);
	assert_int_equal(r.exit_code, 2);
	assert_int_equal(h_lines(r.err), 1);
	assert_non_null(strstr(r.err, needle));
	h_run_free(&r);
}

static void test_bad_input(void **state)
{
	FILE *f = fopen(h_path("junk.pb.gz"), "w");

	assert_non_null(f);
	fputs("this is not a profile\n", f);
	fclose(f);
	expect_bad(ARGV((char *)h_bin(), "report", (char *)h_path("missing.pb.gz")),
		   "No such file");
	expect_bad(ARGV((char *)h_bin(), "report", (char *)h_path("junk.pb.gz")), "not a profile");
	expect_bad(ARGV((char *)h_bin(), "report"), "needs a saved profile");
	expect_bad(ARGV((char *)h_bin(), "diff", (char *)h_path("junk.pb.gz")), "two saved");
	expect_bad(ARGV((char *)h_bin(), "top", "-i", "0"), "interval");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_report_reproduces, teardown),
		cmocka_unit_test_teardown(test_diff, teardown),
		cmocka_unit_test_teardown(test_bad_input, teardown),
	};

	if (!h_need_root() || !h_have_schedstat())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("formats", tests, NULL, NULL);
}
