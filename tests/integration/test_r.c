// SPDX-License-Identifier: GPL-2.0
/*
 * R frames, end to end, with Debian's R (r-base-core). The fixtures
 * (tests/fixtures/r*.R) time their own functions with proc.time and run
 * Rprof (line.profiling, summaryRprof) over the same work in the same run:
 * those are the oracles the profile is checked against.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })
#define RSCRIPT	"/usr/bin/Rscript"
#define R_EXEC	"/usr/lib/R/bin/exec/R"

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

static const char *fixture_r(const char *name)
{
	static char buf[4][1024];
	static int k;
	const char *src = getenv("BP_SRC");
	char rel[1024];

	k = (k + 1) % 4;
	snprintf(rel, sizeof(rel), "%s/tests/fixtures/%s", src ? src : ".", name);
	/* absolute: R's srcfile keeps the name it was given */
	if (!realpath(rel, buf[k]))
		snprintf(buf[k], sizeof(buf[k]), "%s", rel);
	return buf[k];
}

/* source(FILE, keep.source = TRUE): R keeps srcrefs, so frames have lines */
static const char *source_expr(const char *file)
{
	static char buf[2][1200];
	static int k;

	k = (k + 1) % 2;
	snprintf(buf[k], sizeof(buf[k]), "source(\"%s\", keep.source = TRUE)", file);
	return buf[k];
}

/* the line of the first line containing text after the line containing after */
static int source_line(const char *file, const char *after, const char *text)
{
	char *src = h_slurp(file, NULL), *p, *q;
	int line = 1;

	assert_non_null(src);
	p = strstr(src, after);
	assert_non_null(p);
	q = strstr(p, text);
	assert_non_null(q);
	for (p = src; p < q; p++)
		line += *p == '\n';
	free(src);
	return line;
}

/* the process of a report whose R frames were walked (the one with most samples), or by pid */
static const struct bp_json *r_proc(const struct bp_json *rep, pid_t pid)
{
	const struct bp_json *procs = bp_json_get(rep, "processes"), *best = NULL;
	size_t i;

	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);

		if (pid > 0 && (pid_t)bp_json_num(bp_json_get(p, "pid")) != pid)
			continue;
		if (!bp_json_get(p, "r"))
			continue;
		if (!best || bp_json_num(bp_json_get(p, "samples")) >
			     bp_json_num(bp_json_get(best, "samples")))
			best = p;
	}
	return best;
}

/*
 * Samples of an R function over its lines, from a list ("inclusive":
 * total_samples, "hotspots": self_samples); *line the hottest one's.
 */
static double r_samples(const struct bp_json *proc, const char *list, const char *function,
			const char *key, int *line)
{
	const struct bp_json *hs = bp_json_get(proc, list);
	double n = 0, most = -1;
	size_t i;

	for (i = 0; i < bp_json_len(hs); i++) {
		const struct bp_json *h = bp_json_at(hs, i);
		const char *f = bp_json_str(bp_json_get(h, "function"));
		double k;

		if (!f || strcmp(f, function) || bp_json_bool(bp_json_get(h, "r")) != 1)
			continue;
		k = bp_json_num(bp_json_get(h, key));
		n += k;
		if (line && k > most) {
			most = k;
			*line = (int)bp_json_num(bp_json_get(h, "line"));
		}
	}
	return n;
}

/* the verdict's levers joined, for searching */
static void levers_text(const struct bp_json *proc, char *buf, size_t len)
{
	const struct bp_json *lv = bp_json_path(proc, "verdict.levers");
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < bp_json_len(lv) && n < len; i++)
		n += snprintf(buf + n, len - n, "%s\n", bp_json_str(bp_json_at(lv, i)));
}

/*
 * The 3:1 split of interpreted R work: heavy's share of heavy + light
 * within 3 points of the script's own CPU times and of Rprof's by.total on
 * the same run; heavy's hottest line the one Rprof reports.
 */
static void test_r_split(void **state)
{
	const char *fix = fixture_r("rsplit.R"), *json = h_path("split.json");
	const char *rprof = h_path("split.rprof");
	int want = source_line(fix, "heavy <- function", "for (i in");
	double th, tl, rh, rl, h, l, got, self, peer;
	const struct bp_json *proc;
	struct bp_json *rep;
	char rfile[256];
	int hline = 0, rline = 0;
	const char *p, *hash;
	struct run r;

	/* 999 Hz for 4 s of work: thousands of samples unless the machine is very busy */
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "999", "-o", (char *)json,
				    "--", RSCRIPT, "-e", (char *)source_expr(fix), "4",
				    (char *)rprof), 180, &r), 0);
	if (r.exit_code)
		print_run("rsplit.R", &r);
	assert_int_equal(r.exit_code, 0);
	p = strstr(r.out, "self heavy");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "self heavy %lf light %lf", &th, &tl), 2);
	p = strstr(r.out, "rprof heavy");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "rprof heavy %lf light %lf line %255s", &rh, &rl, rfile), 3);
	h_run_free(&r);
	hash = strchr(rfile, '#');
	assert_non_null(hash);
	rline = atoi(hash + 1);
	rep = h_json_file(json);
	assert_non_null(rep);
	proc = r_proc(rep, 0);
	if (!proc)
		fail_msg("no process with R frames");
	/* inclusive: Rprof's builtin frames (%/%) sit under them while it runs */
	h = r_samples(proc, "inclusive", "heavy", "total_samples", &hline);
	l = r_samples(proc, "inclusive", "light", "total_samples", NULL);
	assert_true(h + l > 0);
	got = h / (h + l);
	self = th / (th + tl);
	peer = rh / (rh + rl);
	fprintf(stderr, "R %s: heavy %.0f light %.0f samples: %.1f%% heavy; the script says "
		"%.1f%% (%.2f s / %.2f s), Rprof %.1f%% (%.1f%% / %.1f%%); heavy's line %d, "
		"Rprof's %s\n", bp_json_str(bp_json_path(proc, "r.version")), h, l, 100 * got,
		100 * self, th, tl, 100 * peer, rh, rl, hline, rfile);
	assert_true(got > self - 0.03 && got < self + 0.03);
	assert_true(got > peer - 0.03 && got < peer + 0.03);
	assert_int_equal(hline, rline);
	assert_int_equal(hline, want);
	assert_true(bp_json_bool(bp_json_path(proc, "r.lines")) == 1);
	bp_json_free(rep);
}

/*
 * crossprod() of a large matrix under an R function: the function over
 * BLAS in the stacks, and a building block, never told to vectorize.
 */
static void test_r_native(void **state)
{
	const char *fix = fixture_r("rblas.R"), *json = h_path("blas.json");
	const char *folded = h_path("blas.folded"), *pb = h_path("blas.pb.gz");
	const char *mixed = h_path("blas.native.folded");
	double blas = 0, all = 0, interp = 0, mixed_interp = 0;
	const struct bp_json *proc;
	struct bp_json *rep;
	char lv[4096], *text, *line, *save = NULL;
	struct run r;

	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)json,
				    "-o", (char *)folded, "-o", (char *)pb, "--", RSCRIPT, "-e",
				    (char *)source_expr(fix), "3"), 180, &r), 0);
	if (r.exit_code)
		print_run("rblas.R", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	/* gram, the R function, right over the BLAS routine crossprod calls */
	text = h_slurp(folded, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *sp = strrchr(line, ' ');
		double n = sp ? atof(sp + 1) : 0;

		if (!strstr(line, ";gram;"))
			continue;
		all += n;
		if (strstr(line, ";gram;crossprod;dsyrk") || strstr(line, ";gram;crossprod;dgemm"))
			blas += n;
		/* the R view: nothing of the interpreter's own (Rf_eval, R_execClosure) */
		if (strstr(line, ";Rf_"))
			interp += n;
	}
	free(text);
	/* the mixed view, again from the saved profile: the interpreter's frames are there */
	assert_int_equal(h_run(ARGV((char *)h_bin(), "report", (char *)pb, "--native", "-o",
				    (char *)mixed), 60, &r), 0);
	if (r.exit_code)
		print_run("report --native", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	text = h_slurp(mixed, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, ";gram;") && strstr(line, ";Rf_"))
			mixed_interp += atof(strrchr(line, ' ') + 1);
	free(text);
	rep = h_json_file(json);
	assert_non_null(rep);
	proc = r_proc(rep, 0);
	assert_non_null(proc);
	levers_text(proc, lv, sizeof(lv));
	h_show_verdict("rblas.R", proc);
	fprintf(stderr, "R over BLAS: %.0f of %.0f samples under gram in gram;crossprod;BLAS\n",
		blas, all);
	assert_true(all > 0);
	assert_true(blas >= 0.5 * all);
	assert_true(interp == 0);
	assert_true(mixed_interp > 0);
	assert_null(strstr(lv, "Vectorize"));
	bp_json_free(rep);
}

/* a loop-heavy script: the vectorize lever, naming its function and line */
static void test_r_vectorize(void **state)
{
	const char *fix = fixture_r("rsplit.R"), *json = h_path("loop.json");
	const char *cls;
	const struct bp_json *proc;
	struct bp_json *rep;
	char lv[4096], want[128];
	struct run r;

	snprintf(want, sizeof(want), "Vectorize heavy (rsplit.R:%d)",
		 source_line(fix, "heavy <- function", "for (i in"));
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--", RSCRIPT,
				    "-e", (char *)source_expr(fix), "3", "-"), 180, &r), 0);
	if (r.exit_code)
		print_run("rsplit.R", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	proc = r_proc(rep, 0);
	assert_non_null(proc);
	h_show_verdict("rsplit.R", proc);
	cls = bp_json_str(bp_json_path(proc, "verdict.class"));
	levers_text(proc, lv, sizeof(lv));
	/*
	 * The levers of a CPU-bound verdict. On a machine so busy that the
	 * script mostly waited for a CPU the verdict says that instead (its
	 * own test checks that class against the kernel's schedstat); the
	 * hot spot is still the R function, which the hotspots must show.
	 */
	if (cls && !strcmp(cls, "cpu-bound")) {
		/*
		 * The lever names the function; its line only when the run's
		 * hottest line stood out (byte code compiled mid-run moves it)
		 */
		if (!strstr(lv, want))
			fprintf(stderr, "  the lever names heavy without its line %s\n", want);
		assert_non_null(strstr(lv, "Vectorize heavy"));
	} else {
		fprintf(stderr, "NOTE: verdict %s, not cpu-bound: the machine is busy; checking "
			"the hot spot instead of the lever\n", cls ? cls : "?");
		assert_non_null(cls);
		assert_string_equal(cls, "cpu-starved");
	}
	assert_true(r_samples(proc, "hotspots", "heavy", "self_samples", NULL) >
		    r_samples(proc, "hotspots", "light", "self_samples", NULL));
	bp_json_free(rep);
}

/* -p on an R that is already running: its frames, without stopping it */
static void test_r_pid(void **state)
{
	const char *fix = fixture_r("rsplit.R");
	const struct bp_json *proc;
	struct bp_json *rep;
	char line[64], pid[16];
	struct run r;
	int fd;
	pid_t p;

	/*
	 * This R is killed at the end: its session directory (Rtmp*) goes in
	 * the test's own, which the harness removes, not in /tmp.
	 */
	assert_int_equal(setenv("TMPDIR", h_tmpdir(), 1), 0);
	p = h_spawn(ARGV(RSCRIPT, "-e", (char *)source_expr(fix), "60", "-"), &fd);
	unsetenv("TMPDIR");
	assert_true(p > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 60), 0);
	snprintf(pid, sizeof(pid), "%d", p);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-p", pid, "-d", "2", "--json"), 60,
			       &r), 0);
	if (r.exit_code)
		print_run("record -p", &r);
	assert_int_equal(r.exit_code, 0);
	rep = bp_json_parse(r.out, r.out_len, NULL, 0);
	assert_non_null(rep);
	proc = r_proc(rep, p);
	assert_non_null(proc);
	fprintf(stderr, "R -p: heavy %.0f light %.0f of %.0f samples\n",
		r_samples(proc, "inclusive", "heavy", "total_samples", NULL),
		r_samples(proc, "inclusive", "light", "total_samples", NULL),
		bp_json_num(bp_json_get(proc, "samples")));
	assert_true(r_samples(proc, "inclusive", "heavy", "total_samples", NULL) > 0);
	assert_true(r_samples(proc, "inclusive", "light", "total_samples", NULL) > 0);
	bp_json_free(rep);
	h_run_free(&r);
	/* still running: attaching stopped nothing */
	assert_int_equal(kill(p, 0), 0);
	kill(p, SIGKILL);
	close(fd);
}

/* an R that starts after the recording did: found at its first samples */
static void test_r_late(void **state)
{
	const char *fix = fixture_r("rsplit.R"), *json = h_path("late.json");
	const struct bp_json *proc;
	struct bp_json *rep;
	struct run r, fr;
	int out, rout;
	pid_t rec, rp;

	rec = h_spawn(ARGV((char *)h_bin(), "record", "-a", "-d", "8", "-o", (char *)json), &out);
	assert_true(rec > 0);
	assert_int_equal(h_wait_recording(rec, 60), 0);
	h_sleep(0.5);
	rp = h_spawn(ARGV(RSCRIPT, "-e", (char *)source_expr(fix), "2", "-"), &rout);
	assert_true(rp > 0);
	assert_int_equal(h_wait(rp, rout, -1, 60, &fr), 0);
	assert_int_equal(fr.exit_code, 0);
	h_run_free(&fr);
	assert_int_equal(h_wait(rec, out, -1, 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	/* system-wide: other R processes may run too, so by pid */
	proc = r_proc(rep, rp);
	assert_non_null(proc);
	fprintf(stderr, "late R: heavy %.0f of %.0f samples, %.0f unnamed\n",
		r_samples(proc, "inclusive", "heavy", "total_samples", NULL),
		bp_json_num(bp_json_get(proc, "samples")),
		r_samples(proc, "hotspots", "[R]", "self_samples", NULL));
	assert_true(r_samples(proc, "inclusive", "heavy", "total_samples", NULL) > 0);
	assert_true(r_samples(proc, "hotspots", "[R]", "self_samples", NULL) == 0);
	bp_json_free(rep);
}

/* a shell command, run and waited for; its exit status */
static int sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/*
 * An R whose version boundprof does not know: Debian's R with a copy of
 * its libR in an R_HOME whose base package says 9.0.0 (everything else
 * linked to the real one). One line says so, and no R frames are walked.
 */
static void test_r_unknown_version(void **state)
{
	const char *home = h_path("rhome"), *json = h_path("r9.json");
	char env_home[1200], env_ld[1200];
	struct bp_json *rep;
	const char *p;
	int lines = 0;
	struct run r;

	assert_int_equal(sh("set -e; H='%s'; mkdir -p \"$H/lib\" \"$H/library/base\" \"$H/bin/exec\"; "
			    "cp /usr/lib/R/lib/libR.so \"$H/lib/\"; "
			    "for f in /usr/lib/R/*; do case ${f##*/} in lib|library|bin) ;; "
			    "*) ln -s \"$f\" \"$H/\";; esac; done; "
			    "for f in /usr/lib/R/library/*; do [ ${f##*/} = base ] || "
			    "ln -s \"$f\" \"$H/library/\"; done; "
			    "for f in /usr/lib/R/library/base/*; do [ ${f##*/} = DESCRIPTION ] || "
			    "ln -s \"$f\" \"$H/library/base/\"; done; "
			    "sed 's/^Version: .*/Version: 9.0.0/' /usr/lib/R/library/base/DESCRIPTION "
			    "> \"$H/library/base/DESCRIPTION\"", home), 0);
	snprintf(env_home, sizeof(env_home), "R_HOME=%s", home);
	snprintf(env_ld, sizeof(env_ld), "LD_LIBRARY_PATH=%s/lib", home);
	assert_int_equal(h_run(ARGV("/usr/bin/env", env_home, env_ld, (char *)h_bin(), "record",
				    "-o", (char *)json, "--", R_EXEC, "--no-echo", "--no-restore",
				    "-e", "x <- 0; for (i in 1:3e6) x <- x + i"), 120, &r), 0);
	if (r.exit_code)
		print_run("R 9.0.0", &r);
	assert_int_equal(r.exit_code, 0);
	for (p = r.err; (p = strstr(p, "not supported")); p++)
		lines++;
	if (lines != 1)
		print_run("R 9.0.0", &r);
	assert_int_equal(lines, 1);
	assert_non_null(strstr(r.err, "R 9.0.0 is not supported"));
	assert_non_null(strstr(r.err, "native frames only"));
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	assert_null(r_proc(rep, 0));
	bp_json_free(rep);
}

/*
 * Every loss the R walk can have is a named counter in the report; and
 * code from the command line keeps no srcrefs: the report says so.
 */
static void test_r_counters(void **state)
{
	static const char *const names[] = {
		"r_contexts_unreadable", "r_stacks_truncated", "r_names_lost",
	};
	const char *json = h_path("c.json");
	struct bp_json *rep;
	unsigned int i;
	struct run r;

	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--", RSCRIPT,
				    "-e", "f <- function(n) { x <- 0; for (i in 1:n) x <- x + i; x }; "
				    "f(3e6)"), 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_non_null(bp_json_get(bp_json_get(rep, "drops_detail"), names[i]));
	assert_non_null(r_proc(rep, 0));
	assert_true(bp_json_bool(bp_json_path(r_proc(rep, 0), "r.lines")) == 0);
	bp_json_free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_r_split, teardown),
		cmocka_unit_test_teardown(test_r_native, teardown),
		cmocka_unit_test_teardown(test_r_vectorize, teardown),
		cmocka_unit_test_teardown(test_r_pid, teardown),
		cmocka_unit_test_teardown(test_r_late, teardown),
		cmocka_unit_test_teardown(test_r_unknown_version, teardown),
		cmocka_unit_test_teardown(test_r_counters, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	if (access(RSCRIPT, X_OK) || access(R_EXEC, X_OK)) {
		/* make test installs r-base-core (TEST_NEEDS): its absence is a broken setup */
		fprintf(stderr, "FAILED: no Debian R (%s, %s): install r-base-core\n", RSCRIPT,
			R_EXEC);
		return 1;
	}
	return cmocka_run_group_tests_name("r", tests, NULL, NULL);
}
