// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof record, end to end, with the real BPF programs (root).
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

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static void print_run(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s---\n", what,
		r->exit_code, r->out, r->err);
}

/* a fixture with a known 3:1 split between alpha and beta is attributed within 5 points */
static void test_split_accuracy(void **state)
{
	const char *json = h_path("split.json"), *folded = h_path("split.folded");
	const struct bp_json *proc;
	struct bp_json *rep;
	struct run r;
	double a, b;
	char *text;

	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)json,
				    "-o", (char *)folded, "--", (char *)h_fixture("split"), "4",
				    "7"),
			       60, &r), 0);
	print_run("record -- split", &r);
	/* boundprof exits with the command's status */
	assert_int_equal(r.exit_code, 7);
	assert_non_null(strstr(r.out, "of on-CPU time in alpha"));
	h_run_free(&r);

	rep = h_json_file(json);
	assert_non_null(rep);
	proc = h_find_proc(rep, "split");
	assert_non_null(proc);
	a = h_hotspot_self(proc, "alpha");
	b = h_hotspot_self(proc, "beta");
	fprintf(stderr, "split: alpha %.3f beta %.3f (samples %.0f)\n", a, b,
		bp_json_num(bp_json_get(proc, "samples")));
	assert_true(a >= 0.70 && a <= 0.80);
	assert_true(b >= 0.20 && b <= 0.30);
	assert_true(bp_json_num(bp_json_get(proc, "on_cpu_s")) > 3.0);
	assert_string_equal(bp_json_str(bp_json_path(rep, "processes[0].verdict.class")),
			    "cpu-bound");
	assert_non_null(bp_json_get(rep, "drops"));
	bp_json_free(rep);

	text = h_slurp(folded, NULL);
	assert_non_null(text);
	/* the user stack reaches main through the frame pointers */
	assert_non_null(strstr(text, "split;"));
	assert_non_null(strstr(text, ";main;alpha"));
	assert_non_null(strstr(text, ";main;beta"));
	free(text);
}

/* -p on a fixture that is already running, with all its threads */
static void test_pid(void **state)
{
	char line[64], pid[16];
	const struct bp_json *proc;
	struct bp_json *rep;
	struct run r;
	int fd;
	pid_t p = h_spawn(ARGV((char *)h_fixture("spin"), "60", "2"), &fd);

	assert_true(p > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 10), 0);
	snprintf(pid, sizeof(pid), "%d", p);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-p", pid, "-d", "2", "--json"),
			       30, &r), 0);
	if (r.exit_code)
		print_run("record -p", &r);
	assert_int_equal(r.exit_code, 0);
	rep = bp_json_parse(r.out, r.out_len, NULL, 0);
	assert_non_null(rep);
	assert_int_equal(bp_json_len(bp_json_get(rep, "processes")), 1);
	proc = h_find_proc(rep, "spin");
	assert_non_null(proc);
	assert_int_equal((int)bp_json_num(bp_json_get(proc, "pid")), p);
	fprintf(stderr, "pid: on_cpu_s %.2f spin_hot %.2f\n",
		bp_json_num(bp_json_get(proc, "on_cpu_s")), h_hotspot_self(proc, "spin_hot"));
	/* two threads on two CPUs for 2 s: 4 s ideally, less on a loaded machine */
	assert_true(bp_json_num(bp_json_get(proc, "on_cpu_s")) > 1.5);
	assert_int_equal((int)bp_json_num(bp_json_get(proc, "threads")), 2);
	assert_true(h_hotspot_self(proc, "spin_hot") > 0.9);
	bp_json_free(rep);
	h_run_free(&r);
	close(fd);
}

/* system-wide: a process that starts and exits during the recording keeps its names */
static void test_short_lived(void **state)
{
	const char *json = h_path("sys.json");
	const struct bp_json *proc;
	struct bp_json *rep;
	struct run r, fr;
	int out, err;
	pid_t rec;

	rec = h_spawn(ARGV((char *)h_bin(), "record", "-a", "-d", "4", "-o", (char *)json), &out);
	assert_true(rec > 0);
	h_sleep(1.0);
	assert_int_equal(h_run(ARGV((char *)h_fixture("shortlived"), "0.8"), 20, &fr), 0);
	assert_int_equal(fr.exit_code, 0);
	h_run_free(&fr);
	err = -1;
	assert_int_equal(h_wait(rec, out, err, 30, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);

	rep = h_json_file(json);
	assert_non_null(rep);
	proc = h_find_proc(rep, "shortlived");
	assert_non_null(proc);
	assert_true(bp_json_bool(bp_json_get(proc, "exited")) == 1);
	fprintf(stderr, "short-lived: shortlived_work %.2f of %.0f samples\n",
		h_hotspot_self(proc, "shortlived_work"),
		bp_json_num(bp_json_get(proc, "samples")));
	assert_true(h_hotspot_self(proc, "shortlived_work") > 0.8);
	bp_json_free(rep);
}

/* SIGINT ends a recording and every requested output is still written */
static void test_sigint_writes(void **state)
{
	const char *json = h_path("int.json"), *folded = h_path("int.folded");
	struct bp_json *rep;
	struct run r;
	char *text;
	int out, fd;
	char line[64];
	pid_t spin = h_spawn(ARGV((char *)h_fixture("spin"), "60"), &fd);
	pid_t rec;

	assert_true(spin > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 10), 0);
	rec = h_spawn(ARGV((char *)h_bin(), "record", "-a", "-o", (char *)json, "-o",
			   (char *)folded), &out);
	assert_true(rec > 0);
	h_sleep(2.5);
	kill(rec, SIGINT);
	assert_int_equal(h_wait(rec, out, -1, 30, &r), 0);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);

	rep = h_json_file(json);
	assert_non_null(rep);
	assert_non_null(h_find_proc(rep, "spin"));
	assert_true(bp_json_num(bp_json_get(rep, "duration_s")) > 1.0);
	bp_json_free(rep);
	text = h_slurp(folded, NULL);
	assert_non_null(text);
	assert_non_null(strstr(text, "spin;"));
	assert_non_null(strstr(text, "spin_hot"));
	free(text);
	close(fd);
}

/* SIGTERM to boundprof running a command: passed on, outputs written, status kept */
static void test_sigterm_command(void **state)
{
	const char *json = h_path("term.json");
	struct bp_json *rep;
	struct run r;
	int out;
	pid_t rec;

	rec = h_spawn(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--",
			   (char *)h_fixture("spin"), "60"), &out);
	assert_true(rec > 0);
	h_sleep(2.0);
	kill(rec, SIGTERM);
	assert_int_equal(h_wait(rec, out, -1, 30, &r), 0);
	/* the command died of the forwarded SIGTERM: 128 + 15, as a shell reports it */
	assert_int_equal(r.exit_code, 128 + SIGTERM);
	assert_false(r.signaled);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	assert_non_null(h_find_proc(rep, "spin"));
	bp_json_free(rep);
}

/* children forked after the start are part of the command's tree */
static void test_command_tree(void **state)
{
	const char *json = h_path("tree.json");
	char script[1024];
	struct bp_json *rep;
	struct run r;

	snprintf(script, sizeof(script), "%s 1.5 & %s 1.5; wait", h_fixture("spin"),
		 h_fixture("shortlived"));
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--", "sh",
				    "-c", script), 60, &r), 0);
	if (r.exit_code)
		print_run("record -- sh -c", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	assert_non_null(h_find_proc(rep, "spin"));
	assert_non_null(h_find_proc(rep, "shortlived"));
	assert_true(h_hotspot_self(h_find_proc(rep, "spin"), "spin_hot") > 0.8);
	bp_json_free(rep);
}

static void expect_bad(char *const argv[], int code, const char *needle)
{
	struct run r;
	int i;

	assert_int_equal(h_run(argv, 30, &r), 0);
	fprintf(stderr, "bad input:");
	for (i = 0; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	fprintf(stderr, "\n  -> exit %d: %s", r.exit_code, r.err);
	assert_false(r.signaled);
	assert_int_equal(r.exit_code, code);
	/* one clear line, nothing on stdout */
	assert_int_equal(h_lines(r.err), 1);
	assert_int_equal(r.out_len, 0);
	if (needle)
		assert_non_null(strstr(r.err, needle));
	h_run_free(&r);
}

static void test_bad_input(void **state)
{
	char *bin = (char *)h_bin();
	char missing_pid[16];
	pid_t p;

	expect_bad(ARGV(bin, "record", "-F", "0", "-d", "1"), 2, "frequency");
	expect_bad(ARGV(bin, "record", "-F", "100000000", "-d", "1"), 2, "frequency");
	expect_bad(ARGV(bin, "record", "-F", "fast", "-d", "1"), 2, "frequency");
	expect_bad(ARGV(bin, "record", "-d", "-3"), 2, "duration");
	expect_bad(ARGV(bin, "record", "-d", "soon"), 2, "duration");
	expect_bad(ARGV(bin, "record", "-p", "12abc", "-d", "1"), 2, "pid");
	/* a pid that certainly does not exist: beyond any pid_max */
	for (p = 4194304 + 1000; kill(p, 0) == 0; p++)
		;
	snprintf(missing_pid, sizeof(missing_pid), "%d", p);
	expect_bad(ARGV(bin, "record", "-p", missing_pid, "-d", "1"), 2, "no process");
	expect_bad(ARGV(bin, "record", "--", "no-such-command-bp"), 2, "command not found");
	expect_bad(ARGV(bin, "record", "--", "/nonexistent/bin/tool"), 2, "cannot run");
	expect_bad(ARGV(bin, "record", "-d", "1", "-o", "/nonexistent-dir/x.json"), 2,
		   "cannot write");
	mkdir(h_path("dir.json"), 0755);
	expect_bad(ARGV(bin, "record", "-d", "1", "-o", (char *)h_path("dir.json")), 2,
		   "is a directory");
	expect_bad(ARGV(bin, "record", "-d", "1", "-o", (char *)h_path("x.txt")), 2,
		   "unknown format");
	expect_bad(ARGV(bin, "record", "-a", "-p", "1"), 2, NULL);
	expect_bad(ARGV(bin, "record", "--bogus"), 2, "unknown option");
	expect_bad(ARGV(bin, "record", "-F"), 2, "needs a value");
	expect_bad(ARGV(bin, "frobnicate"), 2, "unknown command");
	/* nothing was left behind in the output directory */
	assert_null(h_slurp(h_path("x.txt"), NULL));
}

static void test_no_privileges(void **state)
{
	const char *json = h_path("nopriv.json");
	struct stat st;

	/* root without capabilities: no CAP_BPF, no CAP_PERFMON */
	expect_bad(ARGV("setpriv", "--inh-caps=-all", "--bounding-set=-all", (char *)h_bin(),
			"record", "-d", "1", "-o", (char *)json), 1, "permission");
	assert_int_not_equal(stat(json, &st), 0);
}

static void test_no_btf(void **state)
{
	char cmd[1024];

	/* hide the kernel's BTF in a private mount namespace */
	snprintf(cmd, sizeof(cmd), "mount -t tmpfs none /sys/kernel/btf && exec %s record -d 1",
		 h_bin());
	expect_bad(ARGV("unshare", "-m", "--propagation", "private", "sh", "-c", cmd), 1, "BTF");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_bad_input, teardown),
		cmocka_unit_test_teardown(test_no_privileges, teardown),
		cmocka_unit_test_teardown(test_no_btf, teardown),
		cmocka_unit_test_teardown(test_split_accuracy, teardown),
		cmocka_unit_test_teardown(test_pid, teardown),
		cmocka_unit_test_teardown(test_short_lived, teardown),
		cmocka_unit_test_teardown(test_sigint_writes, teardown),
		cmocka_unit_test_teardown(test_sigterm_command, teardown),
		cmocka_unit_test_teardown(test_command_tree, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}
