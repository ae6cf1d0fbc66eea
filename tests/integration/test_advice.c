// SPDX-License-Identifier: GPL-2.0
/*
 * Advice a user can act on (root, real BPF): on programs whose truth is
 * known, the verdict names the user's own function and the building block
 * it calls too often, and a program of one-byte system calls is
 * syscall-bound with the calls it made counted. Every case prints its
 * verdict, evidence and levers, which the closing notes quote.
 *
 * The class depends on the machine's other work (a program that waited a
 * fifth of its time for a CPU is cpu-starved), so the expected class comes
 * from the kernel's own count of the fixture's time, as in test_verdict.c.
 * What the advice names comes from the samples' stacks and does not: it is
 * checked in the JSON report's own_code whatever the class, and in the
 * verdict's lines whenever the class is one that speaks of the hot code.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/interp.h"
#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

/*
 * record COMMAND... into NAME.json; the parsed report, and the command's
 * output (the fixture's own count of its work) in *out
 */
static struct bp_json *record(const char *name, char *const cmd[], char **out)
{
	char *argv[16] = { (char *)h_bin(), "record", "-o", (char *)h_path(name), "--" };
	struct run r;
	int i, n = 5;

	for (i = 0; cmd[i] && n < 15; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	assert_int_equal(h_run(argv, 120, &r), 0);
	if (r.exit_code)
		fail_msg("record exited %d\n%s\n%s", r.exit_code, r.out, r.err);
	*out = strdup(r.out ? r.out : "");
	h_run_free(&r);
	assert_non_null(*out);
	return h_json_file(h_path(name));
}

/* some line of the verdict's evidence (or levers) has every one of the words */
static bool says(const struct bp_json *proc, const char *list, const char *a, const char *b)
{
	const struct bp_json *l = bp_json_path(proc, list);
	size_t i;

	for (i = 0; i < bp_json_len(l); i++) {
		const char *s = bp_json_str(bp_json_at(l, i));

		if (s && strstr(s, a) && (!b || strstr(s, b)))
			return true;
	}
	return false;
}

/* the one line the fixture named comm reported, as busy time that only sleeps */
static struct h_busy fixture_busy(const char *comm)
{
	struct h_sched k[2];

	if (h_sched_read(comm, k, 2) != 1)
		fail_msg("%s did not report the kernel's count of its time once", comm);
	return h_busy_of(&k[0], NULL);
}

static bool allowed(const struct h_busy *k, const char *compute, const char *cls)
{
	const char *classes[8];
	int n = h_verdict_classes(k, compute, classes, 8), i;

	for (i = 0; i < n; i++)
		if (!strcmp(classes[i], cls))
			return true;
	return false;
}

/* the JSON report's own_code: the function, and the module of what it calls */
static void expect_own(const struct bp_json *p, const char *function, const char *callee_module)
{
	const struct bp_json *own = bp_json_get(p, "own_code");

	assert_non_null(own);
	fprintf(stderr, "  own_code: %s (%s), %.0f%% of samples, %.0f%% beneath it, mostly %s (%s)\n",
		bp_json_str(bp_json_get(own, "function")), bp_json_str(bp_json_get(own, "module")),
		100 * bp_json_num(bp_json_get(own, "share")),
		100 * bp_json_num(bp_json_get(own, "beneath_share")),
		bp_json_str(bp_json_get(own, "callee")),
		bp_json_str(bp_json_get(own, "callee_module")));
	assert_string_equal(bp_json_str(bp_json_get(own, "function")), function);
	/* the loop does nothing but call the library: most of its time is beneath it */
	assert_true(bp_json_num(bp_json_get(own, "beneath_share")) >= 0.5);
	assert_non_null(bp_json_str(bp_json_get(own, "callee_module")));
	assert_non_null(strstr(bp_json_str(bp_json_get(own, "callee_module")), callee_module));
}

/* a compute verdict names the user's function, the library as the reason, never vectorizing */
static void expect_compute_advice(const struct bp_json *p, const char *function,
				  const char *reason)
{
	const struct bp_json *lv = bp_json_path(p, "verdict.levers");
	size_t i;

	assert_true(says(p, "verdict.evidence", function, reason));
	assert_true(says(p, "verdict.evidence", function, "of wall time"));
	for (i = 0; i < bp_json_len(lv); i++)
		assert_null(strstr(bp_json_str(bp_json_at(lv, i)), "vectorize"));
}

/* a loop around memset in fill_buffers: the advice names fill_buffers, memset the reason */
static void test_memset_loop(void **state)
{
	const struct bp_json *p;
	struct bp_json *rep;
	struct h_busy k;
	const char *cls, *top;
	char *out;

	h_sched_arm();
	/* 1 MiB: in the last-level cache of any machine, so the loop is compute */
	rep = record("memset.json", ARGV((char *)h_fixture("memsetloop"), "3", "1"), &out);
	assert_non_null(rep);
	k = fixture_busy("memsetloop");
	p = h_find_proc(rep, "memsetloop");
	assert_non_null(p);
	h_show_verdict("memsetloop", p);
	expect_own(p, "fill_buffers", "libc");
	assert_non_null(strstr(bp_json_str(bp_json_path(p, "own_code.callee")), "memset"));
	cls = bp_json_str(bp_json_path(p, "verdict.class"));
	if (!allowed(&k, "cpu-bound", cls) && !allowed(&k, "memory-bandwidth-bound", cls))
		fail_msg("memsetloop: %s is not what the kernel's count of its time allows", cls);
	if (!strcmp(cls, "cpu-bound") || !strcmp(cls, "memory-bandwidth-bound"))
		expect_compute_advice(p, "fill_buffers", "memset");
	if (!strcmp(cls, "cpu-bound"))
		assert_true(says(p, "verdict.levers", "Tune fill_buffers first", "set fewer bytes"));
	/* the self time stays with memset in the hotspot list */
	top = bp_json_str(bp_json_get(bp_json_at(bp_json_get(p, "hotspots"), 0), "function"));
	assert_non_null(top);
	assert_non_null(strstr(top, "memset"));
	free(out);
	bp_json_free(rep);
}

/* a loop around log1p and pow: the advice names accumulate_logs, libm the reason */
static void test_libm_loop(void **state)
{
	const struct bp_json *p;
	struct bp_json *rep;
	struct h_busy k;
	const char *cls;
	char *out;

	h_sched_arm();
	rep = record("libm.json", ARGV((char *)h_fixture("mathloop"), "3"), &out);
	assert_non_null(rep);
	k = fixture_busy("mathloop");
	p = h_find_proc(rep, "mathloop");
	assert_non_null(p);
	h_show_verdict("mathloop", p);
	expect_own(p, "accumulate_logs", "libm");
	cls = bp_json_str(bp_json_path(p, "verdict.class"));
	h_expect_class("mathloop", cls, &k, "cpu-bound");
	if (!strcmp(cls, "cpu-bound")) {
		expect_compute_advice(p, "accumulate_logs", "libm");
		assert_true(says(p, "verdict.levers", "Tune accumulate_logs first", "libm"));
	}
	free(out);
	bp_json_free(rep);
}

/*
 * A function split between two of its lines (the lines fixture: alpha 3/4,
 * 1/2 and 1/4 by line): the headline, the Amdahl cap and the lever take
 * alpha whole, and the lines are detail beneath it.
 */
static void test_hot_function_whole(void **state)
{
	const struct bp_json *p, *fn, *lines;
	double self, line0, on, wall, hot_wall;
	struct bp_json *rep;
	const char *s;
	char *out;

	rep = record("lines.json", ARGV((char *)h_fixture("lines"), "3"), &out);
	assert_non_null(rep);
	p = h_find_proc(rep, "lines");
	assert_non_null(p);
	h_show_verdict("lines", p);
	fn = bp_json_at(bp_json_get(p, "functions"), 0);
	lines = bp_json_get(fn, "lines");
	self = bp_json_num(bp_json_get(fn, "self"));
	line0 = bp_json_num(bp_json_path(p, "hotspots[0].self"));
	fprintf(stderr, "  functions[0]: %s %.0f%%, %zu lines; hotspots[0]: line %.0f %.0f%%\n",
		bp_json_str(bp_json_get(fn, "function")), 100 * self, bp_json_len(lines),
		bp_json_num(bp_json_path(p, "hotspots[0].line")), 100 * line0);
	assert_string_equal(bp_json_str(bp_json_get(fn, "function")), "alpha");
	/* 3/4 of the work, whatever else the process did around it */
	assert_true(self >= 0.6 && self <= 0.85);
	assert_int_equal(bp_json_len(lines), 2);
	assert_true(bp_json_num(bp_json_path(fn, "lines[1].self")) >= 0.1);
	assert_true(line0 < self - 0.1);
	/* the cap is the function's share of wall time, not its line's */
	on = bp_json_num(bp_json_get(p, "on_cpu_s"));
	wall = bp_json_num(bp_json_get(p, "wall_s"));
	hot_wall = bp_json_num(bp_json_path(p, "verdict.amdahl.hot_wall_share"));
	assert_true(wall > 0);
	assert_true(fabs(hot_wall - self * on / wall) <= 0.03);
	/* the text report: one line for alpha, its lines beneath */
	s = strstr(out, "of on-CPU time in alpha (lines): lines.c:");
	if (!s)
		fail_msg("no hotspot line for alpha as a whole in\n%s", out);
	assert_null(strstr(s + 1, "of on-CPU time in alpha"));
	assert_null(strstr(out, "alpha (lines.c:"));
	free(out);
	bp_json_free(rep);
}

/* a script fixture: tests/fixtures/NAME in the source tree */
static const char *fixture_src(const char *name)
{
	static char buf[1024];
	const char *src = getenv("BP_SRC");

	snprintf(buf, sizeof(buf), "%s/tests/fixtures/%s", src ? src : ".", name);
	return buf;
}

/*
 * No lever names the interpreter's code: none of the functions the report
 * lists in the interpreter's modules, no unnamed code, no building block,
 * no "better algorithm in" anything.
 */
static void expect_no_internals(const struct bp_json *p)
{
	const struct bp_json *fns = bp_json_get(p, "functions");
	const struct bp_json *lv = bp_json_path(p, "verdict.levers");
	size_t i, j;

	for (j = 0; j < bp_json_len(lv); j++) {
		const char *l = bp_json_str(bp_json_at(lv, j));

		if (strstr(l, "building block") || strstr(l, "better algorithm or data structure in") ||
		    strstr(l, "unnamed code"))
			fail_msg("a lever names the interpreter's code: %s", l);
		for (i = 0; i < bp_json_len(fns); i++) {
			const struct bp_json *f = bp_json_at(fns, i);
			const char *name = bp_json_str(bp_json_get(f, "function"));

			if (!bp_interp_of_module(bp_json_str(bp_json_get(f, "module"))))
				continue;
			if (name && strstr(l, name))
				fail_msg("a lever names %s, the interpreter's: %s", name, l);
		}
	}
}

/*
 * An interpreter boundprof does not walk, running a script fixture whose
 * work is sin() and sqrt() in a loop: the verdict says the time is in the
 * interpreter running the script, names the way to see its functions, and
 * never an interpreter function. The class is the machine's business (a
 * busy host makes it cpu-starved): the words are checked when it is
 * cpu-bound, the absence of internals always.
 */
static void expect_interp(const char *comm, char *const cmd[], const char *running,
			  const char *how)
{
	const struct bp_json *p;
	struct bp_json *rep;
	const char *cls;
	char *out;

	rep = record("interp.json", cmd, &out);
	assert_non_null(rep);
	p = h_find_proc(rep, comm);
	assert_non_null(p);
	h_show_verdict(comm, p);
	expect_no_internals(p);
	cls = bp_json_str(bp_json_path(p, "verdict.class"));
	if (!strcmp(cls, "cpu-bound")) {
		assert_true(says(p, "verdict.evidence", running, "cannot see"));
		assert_true(says(p, "verdict.levers", how, NULL));
	} else {
		fprintf(stderr, "  %s is %s here: the interpreter's words are a cpu-bound "
			"verdict's\n", comm, cls);
	}
	free(out);
	bp_json_free(rep);
}

static void test_interp_perl(void **state)
{
	expect_interp("perl", ARGV("perl", (char *)fixture_src("interp.pl"), "2"),
		      "the perl interpreter running interp.pl", "perl -d:NYTProf interp.pl");
}

static void test_interp_ruby(void **state)
{
	if (!h_have("ruby")) {
		fprintf(stderr, "SKIPPED: no ruby (apt-get install ruby)\n");
		return;
	}
	expect_interp("ruby", ARGV("ruby", (char *)fixture_src("interp.rb"), "2"),
		      "the ruby interpreter running interp.rb", "rbspy");
}

static void test_interp_node(void **state)
{
	if (!h_have("node")) {
		fprintf(stderr, "SKIPPED: no node (apt-get install nodejs)\n");
		return;
	}
	expect_interp("node", ARGV("node", (char *)fixture_src("interp.js"), "2"),
		      "the node runtime running interp.js", "node --perf-basic-prof interp.js");
}

/* with its perf map, node's JavaScript functions are the advice's */
static void test_node_perf_map(void **state)
{
	const struct bp_json *p, *own;
	struct bp_json *rep;
	const char *cls, *fn;
	char *out, logfile[512];

	if (!h_have("node")) {
		fprintf(stderr, "SKIPPED: no node (apt-get install nodejs)\n");
		return;
	}
	/* node's own log goes with the test's files, not into the working directory */
	snprintf(logfile, sizeof(logfile), "--logfile=%s", h_path("node-v8.log"));
	rep = record("perfmap.json", ARGV("node", "--perf-basic-prof", "--no-logfile-per-isolate",
					  logfile, (char *)fixture_src("interp.js"), "2"), &out);
	assert_non_null(rep);
	p = h_find_proc(rep, "node");
	assert_non_null(p);
	/* ... and its perf map, which node leaves in /tmp */
	snprintf(logfile, sizeof(logfile), "/tmp/perf-%.0f.map",
		 bp_json_num(bp_json_get(p, "pid")));
	unlink(logfile);
	h_show_verdict("node", p);
	/* the user's own code is score(), by the name node's perf map gives it */
	own = bp_json_get(p, "own_code");
	assert_non_null(own);
	fn = bp_json_str(bp_json_get(own, "function"));
	fprintf(stderr, "  own_code: %s\n", fn);
	assert_non_null(strstr(fn, "score"));
	cls = bp_json_str(bp_json_path(p, "verdict.class"));
	if (!strcmp(cls, "cpu-bound")) {
		assert_true(says(p, "verdict.levers", "score", NULL));
		assert_false(says(p, "verdict.evidence", "cannot see", NULL));
	}
	free(out);
	bp_json_free(rep);
}

/* the number after "key " in the fixture's output, or -1 */
static double count_of(const char *out, const char *key)
{
	const char *s = strstr(out, key);

	return s ? strtod(s + strlen(key), NULL) : -1;
}

/* the samples of system call `name` in the JSON report's syscalls.calls */
static double call_samples(const struct bp_json *p, const char *name)
{
	const struct bp_json *calls = bp_json_path(p, "syscalls.calls");
	size_t i;

	for (i = 0; i < bp_json_len(calls); i++)
		if (!strcmp(bp_json_str(bp_json_get(bp_json_at(calls, i), "name")), name))
			return bp_json_num(bp_json_get(bp_json_at(calls, i), "samples"));
	return 0;
}

/* dd bs=1: syscall-bound, with the calls it made counted within 5% */
static void test_one_byte_calls(void **state)
{
	const struct bp_json *p;
	struct bp_json *rep;
	double reads, writes, got_r, got_w;
	struct h_busy k;
	const char *cls;
	char *out;

	h_sched_arm();
	rep = record("byteio.json", ARGV((char *)h_fixture("byteio"), "3"), &out);
	assert_non_null(rep);
	k = fixture_busy("byteio");
	p = h_find_proc(rep, "byteio");
	assert_non_null(p);
	h_show_verdict("byteio", p);
	reads = count_of(out, "reads ");
	writes = count_of(out, "writes ");
	got_r = bp_json_num(bp_json_path(p, "syscalls.reads"));
	got_w = bp_json_num(bp_json_path(p, "syscalls.writes"));
	fprintf(stderr, "  calls: %.0f reads, %.0f writes made; %.0f and %.0f counted; "
		"%.0f%% of on-CPU samples in system calls (read %.0f, write %.0f samples)\n",
		reads, writes, got_r, got_w, 100 * bp_json_num(bp_json_path(p, "syscalls.on_cpu_share")),
		call_samples(p, "read"), call_samples(p, "write"));
	assert_true(reads > 1000 && writes > 1000);
	/* the loader's reads before main() come on top: a few */
	assert_true(got_r >= 0.95 * reads && got_r <= 1.05 * reads);
	assert_true(got_w >= 0.95 * writes && got_w <= 1.05 * writes);
	/* the samples in the kernel are in read and write, and nearly nothing else */
	assert_true(call_samples(p, "read") > 0 && call_samples(p, "write") > 0);
	expect_own(p, "copy_bytes", "libc");
	cls = bp_json_str(bp_json_path(p, "verdict.class"));
	h_expect_class("byteio", cls, &k, "syscall-bound");
	if (!strcmp(cls, "syscall-bound")) {
		assert_true(says(p, "verdict.evidence", "kernel serving its system calls", "read"));
		assert_true(says(p, "verdict.evidence", "1 B per read", "1 B per write"));
		assert_true(says(p, "verdict.levers", "fewer, larger calls", NULL));
		assert_true(says(p, "verdict.levers", "writev", "io_uring"));
		assert_true(says(p, "verdict.levers", "Start in copy_bytes", NULL));
	}
	free(out);
	bp_json_free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_memset_loop, teardown),
		cmocka_unit_test_teardown(test_libm_loop, teardown),
		cmocka_unit_test_teardown(test_one_byte_calls, teardown),
		cmocka_unit_test_teardown(test_hot_function_whole, teardown),
		cmocka_unit_test_teardown(test_interp_perl, teardown),
		cmocka_unit_test_teardown(test_interp_ruby, teardown),
		cmocka_unit_test_teardown(test_interp_node, teardown),
		cmocka_unit_test_teardown(test_node_perf_map, teardown),
	};

	if (!h_need_root() || !h_have_schedstat())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("advice", tests, NULL, NULL);
}
