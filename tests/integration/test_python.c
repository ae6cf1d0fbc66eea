// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames, end to end, on every CPython installed: Debian's
 * python3.11 (static, no frame pointers) and each pyenv 3.x. The fixtures
 * (tests/fixtures/py*.py) time their own functions with time.process_time,
 * and that is the oracle the profile is checked against.
 */
#include <dirent.h>
#include <math.h>
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
#define MAX_PY	32

struct interp {
	char path[512];
	char label[64];		/* "3.11.2 (Debian)", "3.12.1 (pyenv)" */
	int minor;
};

static struct interp interps[MAX_PY];
static int nr_interps;

static int teardown(void **state)
{
	/* test_python_slow_loader's, also when it failed half-way */
	unsetenv("BP_SLOW_LIBRARY_PATH");
	h_cleanup();
	return 0;
}

static void print_run(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s---\n", what,
		r->exit_code, r->out, r->err);
}

static bool executable(const char *path)
{
	return access(path, X_OK) == 0;
}

static int cmp_interp(const void *a, const void *b)
{
	const struct interp *x = a, *y = b;

	return x->minor != y->minor ? x->minor - y->minor : strcmp(x->path, y->path);
}

/* every CPython 3 on the machine: Debian's and pyenv's */
static void find_interps(void)
{
	const char *root = getenv("PYENV_ROOT");
	char dir[512];
	struct dirent *de;
	DIR *d;
	int m;

	if (executable("/usr/bin/python3.11")) {
		struct interp *p = &interps[nr_interps++];

		snprintf(p->path, sizeof(p->path), "/usr/bin/python3.11");
		snprintf(p->label, sizeof(p->label), "3.11 (Debian)");
		p->minor = 11;
	}
	snprintf(dir, sizeof(dir), "%s/versions", root && *root ? root : "/root/.pyenv");
	d = opendir(dir);
	while (d && (de = readdir(d)) && nr_interps < MAX_PY) {
		struct interp *p = &interps[nr_interps];
		unsigned int maj, min, pat;

		if (sscanf(de->d_name, "%u.%u.%u", &maj, &min, &pat) != 3 || maj != 3)
			continue;
		snprintf(p->path, sizeof(p->path), "%.400s/%.64s/bin/python3.%u", dir, de->d_name, min);
		if (!executable(p->path))
			continue;
		snprintf(p->label, sizeof(p->label), "%.48s (pyenv)", de->d_name);
		p->minor = min;
		nr_interps++;
	}
	if (d)
		closedir(d);
	qsort(interps, nr_interps, sizeof(*interps), cmp_interp);
	/* loudly: a version not installed is a version not tested */
	for (m = 6; m <= 13; m++) {
		int i, have = 0;

		for (i = 0; i < nr_interps; i++)
			have |= interps[i].minor == m;
		if (!have)
			fprintf(stderr, "SKIPPED: no Python 3.%d installed: its frames are untested\n",
				m);
	}
}

/*
 * The interpreters that stand for the others where a case tests what does
 * not change with every version (the layouts are checked on every one by
 * test_python_split and the unit tests): the oldest, Debian's (static, no
 * frame pointers), 3.12 (the GIL and frames moved into the interpreter
 * state) and the newest. Every version once per case would be minutes of
 * recording that prove the same thing again.
 */
static bool representative(int i)
{
	const struct interp *p = &interps[i];

	if (i == 0 || i == nr_interps - 1 || strstr(p->label, "Debian"))
		return true;
	/* the first 3.12 (pyenv's, when Debian's is a 3.12 too) */
	return p->minor == 12 && (i == 0 || interps[i - 1].minor != 12);
}

static const char *fixture_py(const char *name)
{
	static char buf[4][1024];
	static int k;
	const char *src = getenv("BP_SRC");

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/tests/fixtures/%s", src ? src : ".", name);
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

/* the process of a report that ran Python (the one with most samples) */
static const struct bp_json *python_proc(const struct bp_json *rep)
{
	const struct bp_json *procs = bp_json_get(rep, "processes"), *best = NULL;
	size_t i;

	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);

		if (!bp_json_get(p, "python"))
			continue;
		if (!best || bp_json_num(bp_json_get(p, "samples")) >
			     bp_json_num(bp_json_get(best, "samples")))
			best = p;
	}
	return best;
}

/* samples of a Python function, summed over its lines: self from hotspots, total from inclusive */
static double py_samples(const struct bp_json *proc, const char *list, const char *function,
			 const char *key, int *line)
{
	const struct bp_json *hs = bp_json_get(proc, list);
	double n = 0, most = -1;
	size_t i;

	for (i = 0; i < bp_json_len(hs); i++) {
		const struct bp_json *h = bp_json_at(hs, i);
		const char *f = bp_json_str(bp_json_get(h, "function"));
		double k;

		if (!f || strcmp(f, function) || bp_json_bool(bp_json_get(h, "python")) != 1)
			continue;
		k = bp_json_num(bp_json_get(h, key));
		n += k;
		/* the hottest line: a sample on the return line adds a second entry */
		if (line && k > most) {
			most = k;
			*line = (int)bp_json_num(bp_json_get(h, "line"));
		}
	}
	return n;
}

/* self samples of native frames from modules starting with prefix */
static double module_self(const struct bp_json *proc, const char *prefix)
{
	const struct bp_json *hs = bp_json_get(proc, "hotspots");
	double n = 0;
	size_t i;

	for (i = 0; i < bp_json_len(hs); i++) {
		const struct bp_json *h = bp_json_at(hs, i);
		const char *m = bp_json_str(bp_json_get(h, "module"));

		if (m && !strncmp(m, prefix, strlen(prefix)) &&
		    bp_json_bool(bp_json_get(h, "python")) != 1)
			n += bp_json_num(bp_json_get(h, "self_samples"));
	}
	return n;
}

/* the two numbers after names a and b on the fixture's oracle line */
static void oracle(const char *out, const char *a, const char *b, double *va, double *vb)
{
	char fmt[64];
	const char *p = strstr(out, a);

	assert_non_null(p);
	snprintf(fmt, sizeof(fmt), "%s %%lf %s %%lf", a, b);
	assert_int_equal(sscanf(p, fmt, va, vb), 2);
}

/* the pysplit.py fixture recorded: boundprof's alpha/beta samples and the fixture's own times */
struct split {
	double a, b, got;	/* samples of each, alpha's share of the two */
	double share;		/* alpha's share by the fixture's own clock */
	int la, lb;		/* the hottest line of each */
};

static void record_split(struct split *sp, const char *label, const char *hz, char *const cmd[])
{
	const char *json = h_path("split.json");
	char *argv[16] = { (char *)h_bin(), "record", "-F", (char *)hz, "-o", (char *)json, "--" };
	const struct bp_json *proc;
	struct bp_json *rep;
	double ta, tb;
	struct run r;
	int n = 7, i;

	for (i = 0; cmd[i] && n < 15; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	memset(sp, 0, sizeof(*sp));
	assert_int_equal(h_run(argv, 120, &r), 0);
	if (r.exit_code)
		print_run(label, &r);
	assert_int_equal(r.exit_code, 0);
	oracle(r.out, "alpha_s", "beta_s", &ta, &tb);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	proc = python_proc(rep);
	if (!proc)
		fail_msg("%s: no process with Python frames", label);
	sp->a = py_samples(proc, "hotspots", "alpha", "self_samples", &sp->la);
	sp->b = py_samples(proc, "hotspots", "beta", "self_samples", &sp->lb);
	sp->share = ta / (ta + tb);
	sp->got = sp->a + sp->b > 0 ? sp->a / (sp->a + sp->b) : 0;
	fprintf(stderr, "python %-16s %s: alpha %.0f beta %.0f samples: %.1f%% alpha, "
		"the fixture says %.1f%% (%.2f s / %.2f s)\n", label,
		bp_json_str(bp_json_path(proc, "python.version")), sp->a, sp->b, 100 * sp->got,
		100 * sp->share, ta, tb);
	bp_json_free(rep);
}

/* the 3:1 split of pure-Python work, within 3 points of the fixture's own times */
static void test_python_split(void **state)
{
	const char *fix = fixture_py("pysplit.py");
	int want_a = source_line(fix, "def alpha", "for i in range");
	int want_b = source_line(fix, "def beta", "for i in range");
	int i;

	assert_true(nr_interps > 0);
	for (i = 0; i < nr_interps; i++) {
		struct split sp;

		/*
		 * 1999 Hz for 1.5 s: ~3000 samples put the binomial error near
		 * 0.8 points, in half the time of 999 Hz for 3 s (8 interpreters)
		 */
		int tries;

		/*
		 * The oracle's own times can be disturbed: alpha and beta run the
		 * same loop for 3:1 iterations, so a fixture whose process_time()
		 * says more than 2 points off 75% was slowed by the machine in
		 * one of them (seen: beta 0.42 s where it takes 0.36, with the
		 * code before and after a change alike). Such a run is said and
		 * recorded again, twice at most; the check is against the times
		 * of the run kept.
		 */
		for (tries = 0;; tries++) {
			record_split(&sp, interps[i].label, "1999",
				     ARGV(interps[i].path, (char *)fix, "1.5"));
			if (fabs(sp.share - 0.75) <= 0.02 || tries == 2)
				break;
			fprintf(stderr, "python %-16s the fixture's own times are %.1f%% alpha, not "
				"the 75%% its work is: the machine disturbed them; again\n",
				interps[i].label, 100 * sp.share);
		}
		assert_true(sp.a + sp.b > 0);
		/* each function named by its line, from the code object's line table */
		assert_int_equal(sp.la, want_a);
		assert_int_equal(sp.lb, want_b);
		assert_true(sp.got > sp.share - 0.03 && sp.got < sp.share + 0.03);
	}
}

/*
 * An interpreter whose dynamic loader is slow, as on a loaded machine or a
 * cold disk (issue 23: 3 of 6 fresh CI runs lost one interpreter's Python
 * frames): the first sample of python3.X comes while ld.so is still
 * searching for its libraries, before it mapped libpython or libc. Made on
 * purpose here: a library path of 15,000 missing directories (ld.so tries
 * each one for each library, ~1 s of CPU) at idle priority, behind a CPU
 * hog on the same CPU for 6 s. Before the fix boundprof gave up on the
 * process after three drains, or found no libc and walked no Python
 * frames: never attached, every time. The split must still be right.
 */
static void test_python_slow_loader(void **state)
{
	const char *fix = fixture_py("pysplit.py");
	const struct interp *py = NULL;
	char script[2048], *path;
	struct split sp;
	size_t off = 0;
	int i;

	/* a python with a libpython: the loader maps it, then libc, after the search */
	for (i = 0; i < nr_interps && !py; i++)
		if (strstr(interps[i].label, "pyenv"))
			py = &interps[i];
	if (!py && nr_interps)
		py = &interps[0];
	assert_non_null(py);
	path = malloc(15000 * 10 + 1);
	assert_non_null(path);
	for (i = 0; i < 15000; i++)
		off += (size_t)sprintf(path + off, "%s/x/%d", i ? ":" : "", i);
	assert_int_equal(setenv("BP_SLOW_LIBRARY_PATH", path, 1), 0);
	free(path);
	snprintf(script, sizeof(script),
		 "%s 6 & LD_LIBRARY_PATH=$BP_SLOW_LIBRARY_PATH exec chrt --idle 0 %s %s 2",
		 h_fixture("spin"), py->path, fix);
	record_split(&sp, py->label, "999", ARGV("taskset", "-c", "0", "sh", "-c", script));
	unsetenv("BP_SLOW_LIBRARY_PATH");
	assert_true(sp.got > sp.share - 0.04 && sp.got < sp.share + 0.04);
}

/* a Python caller and the compiled code it calls (zlib's deflate): both sides of the split */
static void test_python_native(void **state)
{
	const char *fix = fixture_py("pynative.py");
	int i;

	for (i = 0; i < nr_interps; i++) {
		if (!representative(i))
			continue;
		const char *json = h_path("native.json");
		const struct bp_json *proc;
		struct bp_json *rep;
		double tp, tn, p, n, z, share, got;
		struct run r;

		assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "999", "-o",
					    (char *)json, "--", interps[i].path, (char *)fix, "2"),
				       120, &r), 0);
		if (r.exit_code)
			print_run(interps[i].label, &r);
		assert_int_equal(r.exit_code, 0);
		oracle(r.out, "py_s", "native_s", &tp, &tn);
		h_run_free(&r);
		rep = h_json_file(json);
		assert_non_null(rep);
		proc = python_proc(rep);
		assert_non_null(proc);
		p = py_samples(proc, "inclusive", "py_part", "total_samples", NULL);
		n = py_samples(proc, "inclusive", "native_part", "total_samples", NULL);
		z = module_self(proc, "libz");
		share = tn / (tn + tp);
		got = n + p > 0 ? n / (n + p) : 0;
		fprintf(stderr, "python %-16s native_part %.1f%% of the two, the fixture says "
			"%.1f%%; %.0f of its %.0f samples in libz\n", interps[i].label, 100 * got,
			100 * share, z, n);
		assert_true(got > share - 0.05 && got < share + 0.05);
		/* the Python view keeps the callee under its Python caller */
		assert_true(z >= 0.8 * n);
		bp_json_free(rep);
	}
}

/* four threads of pure Python: the GIL serializes them, and threads are not the advice */
static void test_python_gil(void **state)
{
	const char *fix = fixture_py("pygil.py");
	int i;

	for (i = 0; i < nr_interps; i++) {
		if (!representative(i))
			continue;
		const char *json = h_path("gil.json");
		const struct bp_json *proc, *levers, *thr;
		struct bp_json *rep;
		double spin, all, gil_threads = 0;
		struct run r;
		size_t k;

		assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--",
					    interps[i].path, (char *)fix, "2", "4"), 120, &r), 0);
		if (r.exit_code)
			print_run(interps[i].label, &r);
		assert_int_equal(r.exit_code, 0);
		h_run_free(&r);
		rep = h_json_file(json);
		assert_non_null(rep);
		proc = python_proc(rep);
		assert_non_null(proc);
		fprintf(stderr, "python %-16s %s, %.2f s waiting for the GIL: %s\n",
			interps[i].label, bp_json_str(bp_json_path(proc, "verdict.class")),
			bp_json_num(bp_json_path(proc, "python.gil_wait_s")),
			bp_json_str(bp_json_path(proc, "verdict.evidence[0]")));
		assert_string_equal(bp_json_str(bp_json_path(proc, "verdict.class")), "gil-bound");
		levers = bp_json_path(proc, "verdict.levers");
		assert_true(bp_json_len(levers) > 0);
		assert_non_null(strstr(bp_json_str(bp_json_at(levers, 0)), "processes"));
		for (k = 0; k < bp_json_len(levers); k++) {
			const char *l = bp_json_str(bp_json_at(levers, k));

			assert_null(strstr(l, "parallelize further"));
			assert_null(strstr(l, "split the work across"));
		}
		/*
		 * The workers' frames were walked, not only the main thread's
		 * (which only joins): most samples are theirs. The rest is the
		 * interpreter starting and finalizing, with no frames at all.
		 */
		spin = py_samples(proc, "hotspots", "spin", "self_samples", NULL);
		all = bp_json_num(bp_json_get(proc, "samples"));
		assert_true(spin >= 0.5 * all);
		thr = bp_json_get(proc, "threads_detail");
		for (k = 0; k < bp_json_len(thr); k++)
			gil_threads += bp_json_num(bp_json_get(bp_json_at(thr, k), "gil_wait_s")) > 0;
		assert_true(gil_threads >= 4);
		bp_json_free(rep);
	}
}

/* -p on an interpreter that is already running: its frames, without stopping it */
static void test_python_pid(void **state)
{
	const char *fix = fixture_py("pysplit.py");
	int i;

	for (i = 0; i < nr_interps; i++) {
		if (!representative(i))
			continue;
		const struct bp_json *proc;
		struct bp_json *rep;
		char line[64], pid[16];
		struct run r;
		int fd;
		pid_t p = h_spawn(ARGV(interps[i].path, (char *)fix, "60"), &fd);

		assert_true(p > 0);
		assert_int_equal(h_read_line(fd, line, sizeof(line), 20), 0);
		snprintf(pid, sizeof(pid), "%d", p);
		assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-p", pid, "-d", "1.5",
					    "--json"), 30, &r), 0);
		if (r.exit_code)
			print_run("record -p", &r);
		assert_int_equal(r.exit_code, 0);
		rep = bp_json_parse(r.out, r.out_len, NULL, 0);
		assert_non_null(rep);
		proc = python_proc(rep);
		assert_non_null(proc);
		assert_int_equal((int)bp_json_num(bp_json_get(proc, "pid")), p);
		fprintf(stderr, "python %-16s -p: alpha %.0f beta %.0f of %.0f samples\n",
			interps[i].label, py_samples(proc, "hotspots", "alpha", "self_samples", NULL),
			py_samples(proc, "hotspots", "beta", "self_samples", NULL),
			bp_json_num(bp_json_get(proc, "samples")));
		assert_true(py_samples(proc, "hotspots", "alpha", "self_samples", NULL) > 0);
		assert_true(py_samples(proc, "hotspots", "beta", "self_samples", NULL) > 0);
		bp_json_free(rep);
		h_run_free(&r);
		/* still running: attaching stopped nothing */
		assert_int_equal(kill(p, 0), 0);
		kill(p, SIGKILL);
		close(fd);
		h_cleanup();
	}
}

/* the two views: Python frames alone by default, every native frame with --native */
static void test_python_views(void **state)
{
	const char *fix = fixture_py("pysplit.py");
	const char *py = NULL, *fpy = h_path("py.folded"), *fnat = h_path("nat.folded");
	const char *pb = h_path("py.pb.gz"), *fre = h_path("re.folded");
	char *text, *line, *save = NULL, *a, *b, *rec_err = NULL;
	bool below_py = false, below_nat = false, in_nat = false;
	int i;
	struct run r;

	/* a pyenv build: its libpython has every symbol */
	for (i = 0; i < nr_interps && !py; i++)
		if (strstr(interps[i].label, "pyenv") && interps[i].minor >= 11)
			py = interps[i].path;
	if (!py) {
		fprintf(stderr, "SKIPPED: no pyenv Python 3.11+ for the mixed view\n");
		return;
	}
	/* --lines: the frames this case reads are the per-line ones */
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-v", "--lines", "-o", (char *)fpy,
				    "-o", (char *)pb, "--", (char *)py, (char *)fix, "1.5"), 60, &r), 0);
	if (r.exit_code)
		print_run("record", &r);
	assert_int_equal(r.exit_code, 0);
	/* what the recording said (its losses, the interpreter it found): shown if a check fails */
	rec_err = strdup(r.err ? r.err : "");
	h_run_free(&r);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "report", (char *)pb, "--lines", "--native",
				    "-o", (char *)fnat), 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	/* the saved profile gives the same default view back */
	assert_int_equal(h_run(ARGV((char *)h_bin(), "report", (char *)pb, "--lines", "-o",
				    (char *)fre), 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	a = h_slurp(fpy, NULL);
	b = h_slurp(fre, NULL);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(b);
	text = a;
	/* default: below alpha's frame only kernel frames */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "alpha (pysplit.py:"), *q;

		if (!p)
			continue;
		q = strchr(p, ';');
		if (q && !strstr(q, "_[k]"))
			below_py = true;
	}
	free(text);
	text = h_slurp(fnat, NULL);
	assert_non_null(text);
	save = NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "alpha (pysplit.py:");

		in_nat = in_nat || p;
		if (p && strchr(p, ';') && !strstr(strchr(p, ';'), "_[k]"))
			below_nat = true;
	}
	/*
	 * and --native names the interpreter's frames that ran alpha (looked
	 * for line by line: strtok_r has cut the text at the first line)
	 */
	if (!in_nat || below_py || !below_nat) {
		/* once in a fresh run the native view had no alpha: say what there was */
		fprintf(stderr, "--- record -v stderr:\n%s--- views: alpha in --native %d, native "
			"frames below alpha by default %d, with --native %d\n", rec_err, in_nat,
			below_py, below_nat);
		free(text);
		text = h_slurp(fnat, NULL);
		fprintf(stderr, "--- --native folded, head:\n%.4000s\n---\n", text ? text : "");
	}
	free(rec_err);
	free(text);
	assert_true(in_nat);
	assert_false(below_py);
	assert_true(below_nat);
}

/* an interpreter that runs for a moment: its names survive its exit */
static void test_python_short_lived(void **state)
{
	const char *fix = fixture_py("pysplit.py"), *json = h_path("short.json");
	const struct bp_json *proc, *procs;
	struct bp_json *rep;
	struct run r, fr;
	int out, pyout;
	pid_t rec, py;
	size_t i;

	assert_true(nr_interps > 0);
	rec = h_spawn(ARGV((char *)h_bin(), "record", "-a", "-d", "3", "-o", (char *)json), &out);
	assert_true(rec > 0);
	/* loading the programs takes longer on a busy machine: count from when it records */
	assert_int_equal(h_wait_recording(rec, 60), 0);
	h_sleep(0.5);
	/*
	 * Gone before the next 1-s drain. At 0.4 s it was once not walked at
	 * all in a full run (no "python" in its entry; not reproduced in 14
	 * runs alone or beside two CPU hogs): its maps are read when its
	 * first sample's notice is handled, which a busy machine delays.
	 */
	py = h_spawn(ARGV(interps[nr_interps - 1].path, (char *)fix, "0.8"), &pyout);
	assert_true(py > 0);
	assert_int_equal(h_wait(py, pyout, -1, 20, &fr), 0);
	assert_int_equal(fr.exit_code, 0);
	h_run_free(&fr);
	assert_int_equal(h_wait(rec, out, -1, 30, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	/* system-wide: other Python processes may run too, so by pid */
	procs = bp_json_get(rep, "processes");
	for (i = 0, proc = NULL; i < bp_json_len(procs) && !proc; i++)
		if ((pid_t)bp_json_num(bp_json_get(bp_json_at(procs, i), "pid")) == py)
			proc = bp_json_at(procs, i);
	assert_non_null(proc);
	assert_non_null(bp_json_get(proc, "python"));
	assert_true(bp_json_bool(bp_json_get(proc, "exited")) == 1);
	fprintf(stderr, "short-lived python: alpha %.0f of %.0f samples, %.0f unnamed\n",
		py_samples(proc, "hotspots", "alpha", "self_samples", NULL),
		bp_json_num(bp_json_get(proc, "samples")),
		py_samples(proc, "hotspots", "[python]", "self_samples", NULL));
	assert_true(py_samples(proc, "hotspots", "alpha", "self_samples", NULL) > 0);
	assert_true(py_samples(proc, "hotspots", "[python]", "self_samples", NULL) == 0);
	bp_json_free(rep);
}

/* a Python process that starts another: both walked */
static void test_python_subprocess(void **state)
{
	const char *fix = fixture_py("pysplit.py"), *json = h_path("sub.json");
	const struct bp_json *procs;
	struct bp_json *rep;
	char code[1024];
	int with_alpha = 0;
	size_t i;
	struct run r;

	assert_true(nr_interps > 0);
	snprintf(code, sizeof(code),
		 "import runpy, subprocess, sys\n"
		 "subprocess.run([sys.executable, '%s', '1'], check=True)\n"
		 "sys.argv = ['%s', '1']\n"
		 "runpy.run_path('%s', run_name='__main__')\n", fix, fix, fix);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--",
				    interps[nr_interps - 1].path, "-c", code), 60, &r), 0);
	if (r.exit_code)
		print_run("subprocess", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	procs = bp_json_get(rep, "processes");
	for (i = 0; i < bp_json_len(procs); i++)
		with_alpha += py_samples(bp_json_at(procs, i), "hotspots", "alpha", "self_samples",
					 NULL) > 0;
	assert_int_equal(with_alpha, 2);
	bp_json_free(rep);
}

/* a version boundprof does not know: one clear line, native frames, no Python names */
static void test_python_unknown_version(void **state)
{
	const char *root = getenv("PYENV_ROOT");
	const char *json = h_path("py2.json");
	char py2[512];
	struct bp_json *rep;
	const char *p;
	int lines = 0;
	struct run r;

	snprintf(py2, sizeof(py2), "%s/versions/2.7.18/bin/python2.7",
		 root && *root ? root : "/root/.pyenv");
	if (!executable(py2)) {
		fprintf(stderr, "SKIPPED: no Python 2.7 to stand for an unknown version\n");
		return;
	}
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--", py2,
				    "-c", "x = 0\nfor i in range(3000000): x += i * i\n"), 60, &r), 0);
	assert_int_equal(r.exit_code, 0);
	for (p = r.err; (p = strstr(p, "not supported")); p++)
		lines++;
	if (lines != 1)
		print_run("python2.7", &r);
	assert_int_equal(lines, 1);
	assert_non_null(strstr(r.err, "native frames only"));
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	assert_null(python_proc(rep));
	bp_json_free(rep);
}

/* every loss the Python walk can have is a named counter in the report */
static void test_python_counters(void **state)
{
	static const char *const names[] = {
		"python_thread_state_errors", "python_frames_unreadable", "python_stacks_truncated",
		"python_code_events_lost", "python_code_unread",
	};
	const char *json = h_path("c.json");
	struct bp_json *rep;
	unsigned int i;
	struct run r;

	assert_true(nr_interps > 0);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--",
				    interps[0].path, (char *)fixture_py("pysplit.py"), "0.5"), 60,
			       &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_non_null(bp_json_get(bp_json_get(rep, "drops_detail"), names[i]));
	bp_json_free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_python_split, teardown),
		cmocka_unit_test_teardown(test_python_slow_loader, teardown),
		cmocka_unit_test_teardown(test_python_native, teardown),
		cmocka_unit_test_teardown(test_python_gil, teardown),
		cmocka_unit_test_teardown(test_python_pid, teardown),
		cmocka_unit_test_teardown(test_python_views, teardown),
		cmocka_unit_test_teardown(test_python_short_lived, teardown),
		cmocka_unit_test_teardown(test_python_subprocess, teardown),
		cmocka_unit_test_teardown(test_python_unknown_version, teardown),
		cmocka_unit_test_teardown(test_python_counters, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	find_interps();
	if (!nr_interps) {
		fprintf(stderr, "SKIPPED: no CPython 3 on this machine\n");
		return 0;
	}
	return cmocka_run_group_tests_name("python", tests, NULL, NULL);
}
