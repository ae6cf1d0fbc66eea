// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof record, end to end, with the real BPF programs (root).
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* the samples of every process in a report, which its oncpu.samples counts */
static double procs_samples(const struct bp_json *rep)
{
	const struct bp_json *procs = bp_json_get(rep, "processes");
	double sum = 0;
	size_t i;

	for (i = 0; i < bp_json_len(procs); i++)
		sum += bp_json_num(bp_json_get(bp_json_at(procs, i), "samples"));
	return sum;
}

/*
 * A fixture with a known 3:1 split of its work between alpha and beta. It
 * runs for 4 s of CPU time, so it gets as many samples on a busy machine as
 * on an idle one; and whichever CPUs it got, a sample is as likely to fall
 * in any of its CPU time as in any other: alpha's share of the samples is
 * binomial around 3/4. Its on-CPU time is the kernel's count in the same
 * run, its verdict what the kernel's count of its waits allows. Catches
 * samples charged to the wrong function or lost, on-CPU time miscounted,
 * stacks that do not reach main, the exit status not passed on.
 */
static void test_split_accuracy(void **state)
{
	const char *json = h_path("split.json"), *folded = h_path("split.folded");
	const struct bp_json *proc;
	struct h_sched k;
	struct h_busy busy;
	struct bp_json *rep;
	struct run r;
	double a, b, n, se, on, kon, steal, sum;
	char *text;

	h_sched_arm();
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)json,
				    "-o", (char *)folded, "--", (char *)h_fixture("split"), "4",
				    "7"),
			       120, &r), 0);
	print_run("record -- split", &r);
	/* boundprof exits with the command's status */
	assert_int_equal(r.exit_code, 7);
	assert_non_null(strstr(r.out, "of on-CPU time in alpha"));
	h_run_free(&r);
	assert_int_equal(h_sched_read("split", &k, 1), 1);

	rep = h_json_file(json);
	assert_non_null(rep);
	proc = h_find_proc(rep, "split");
	assert_non_null(proc);
	a = h_hotspot_self(proc, "alpha");
	b = h_hotspot_self(proc, "beta");
	n = bp_json_num(bp_json_get(proc, "samples"));
	on = bp_json_num(bp_json_get(proc, "on_cpu_s"));
	kon = k.on + k.pre_on;
	/* four standard errors: a false alarm once in 16,000 runs */
	se = sqrt(0.75 * 0.25 / (n > 0 ? n : 1));
	fprintf(stderr, "split: alpha %.3f beta %.3f of %.0f samples (4 standard errors: "
		"%.3f); on-CPU %.3f s, the kernel counted %.3f s in %.0f runs\n", a, b, n, 4 * se,
		on, kon, k.runs);
	/* the samples cover the CPU time it had (a busy host may delay some ticks) */
	assert_true(n >= 0.5 * kon * 499);
	/*
	 * and each once: the CPUs' sample slots are read and emptied at each
	 * of the drains (one a second), and every sample counted is in a row
	 */
	assert_true(n <= 1.1 * on * 499 + 20);
	sum = procs_samples(rep);
	fprintf(stderr, "split: %.0f samples in the processes' rows, %.0f counted, %.0f in "
		"kernel rows\n", sum, bp_json_num(bp_json_path(rep, "oncpu.samples")),
		bp_json_num(bp_json_path(rep, "oncpu.in_kernel_rows")));
	assert_true(sum == bp_json_num(bp_json_path(rep, "oncpu.samples")));
	assert_true(bp_json_num(bp_json_path(rep, "oncpu.in_kernel_rows")) == 0);
	assert_true(fabs(a - 0.75) <= 4 * se);
	assert_true(fabs(b - 0.25) <= 4 * se);
	/*
	 * The kernel's run time leaves out what the hypervisor stole (the
	 * steal clock); boundprof's on-CPU time holds it, and says how much.
	 */
	steal = bp_json_num(bp_json_get(proc, "steal_s"));
	fprintf(stderr, "split: %.3f s of the on-CPU time stolen (the machine's steal: %.2f s)\n",
		steal, k.steal);
	assert_true(steal >= 0 && steal <= k.steal + 0.01);
	assert_true(h_near_kernel("split on-CPU less steal", on - steal, kon, k.runs * H_WAKEUP_S,
				  0));
	busy = h_busy_of(&k, NULL);
	h_expect_class("split", bp_json_str(bp_json_path(rep, "processes[0].verdict.class")),
		       &busy, "cpu-bound");
	assert_non_null(bp_json_get(rep, "drops"));
	bp_json_free(rep);

	text = h_slurp(folded, NULL);
	assert_non_null(text);
	/* the user stack reaches main through the frame pointers */
	assert_non_null(strstr(text, "split;"));
	/* a frame per function: split has its DWARF, but lines are --lines' */
	assert_non_null(strstr(text, ";main;alpha"));
	assert_non_null(strstr(text, ";main;beta"));
	assert_null(strstr(text, "(split.c:"));
	free(text);
}

/*
 * Past the CPUs' sample slots: at 5000 Hz a CPU-bound thread fills its
 * CPU's slots (at most 4096 a buffer, fewer on bigger machines) before the
 * drain a second later, and the samples after them make kernel rows. Both
 * kinds end in the same rows, each sample once, the split as known.
 */
static void test_samples_past_the_slots(void **state)
{
	const struct bp_json *proc;
	struct bp_json *rep;
	double n, kern, counted, on, a, se, sum;

	rep = h_record_json_opts("slots.json", ARGV("-F", "5000"),
				 ARGV((char *)h_fixture("split"), "3", "0"));
	assert_non_null(rep);
	proc = h_find_proc(rep, "split");
	assert_non_null(proc);
	sum = procs_samples(rep);
	n = bp_json_num(bp_json_get(proc, "samples"));
	on = bp_json_num(bp_json_get(proc, "on_cpu_s"));
	counted = bp_json_num(bp_json_path(rep, "oncpu.samples"));
	kern = bp_json_num(bp_json_path(rep, "oncpu.in_kernel_rows"));
	a = h_hotspot_self(proc, "alpha");
	se = sqrt(0.75 * 0.25 / (n > 0 ? n : 1));
	fprintf(stderr, "slots: split %.0f samples in %.3f s on-CPU, alpha %.3f; all processes "
		"%.0f, counted %.0f, %.0f of them in kernel rows\n", n, on, a, sum, counted, kern);
	assert_true(kern > 0);
	assert_true(sum == counted);
	assert_true(n >= 0.5 * on * 5000 && n <= 1.1 * on * 5000 + 50);
	assert_true(fabs(a - 0.75) <= 4 * se);
	bp_json_free(rep);
}

/* the frames after main's in every line of a folded file that has main */
static int main_frames(const char *text, const char *main_frame, int *other)
{
	const char *s = text;
	int n = 0;

	*other = 0;
	while ((s = strstr(s, ";main")) != NULL) {
		if (!strncmp(s, main_frame, strlen(main_frame)))
			n++;
		else
			(*other)++;
		s++;
	}
	return n;
}

/* run boundprof with these arguments; it must exit 0 */
static void run_ok(char *const argv[], const char *what)
{
	struct run r;

	assert_int_equal(h_run(argv, 120, &r), 0);
	if (r.exit_code)
		print_run(what, &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
}

/*
 * The lines fixture calls alpha and beta from two lines of main. A folded
 * file has main as one frame, so that its box is main's time; --lines on
 * report, from the saved profile, brings a frame per line back.
 */
static void test_folded_functions(void **state)
{
	const char *folded = h_path("lines.folded"), *saved = h_path("lines.pb.gz");
	const char *lfolded = h_path("lines-by-line.folded");
	char *text;
	int other;

	run_ok(ARGV((char *)h_bin(), "record", "-o", (char *)folded, "-o", (char *)saved, "--",
		    (char *)h_fixture("lines"), "1"), "record -- lines 1");
	text = h_slurp(folded, NULL);
	assert_non_null(text);
	assert_true(main_frames(text, ";main;", &other) > 0);
	if (other)
		fail_msg("main is more than one frame in\n%s", text);
	assert_null(strstr(text, "(lines.c:"));
	free(text);

	run_ok(ARGV((char *)h_bin(), "report", (char *)saved, "--lines", "-o", (char *)lfolded),
	       "report --lines");
	text = h_slurp(lfolded, NULL);
	assert_non_null(text);
	/* alpha's call and beta's, each on its own line of main */
	assert_true(main_frames(text, ";main (lines.c:46);alpha (lines.c:", &other) > 0);
	assert_true(main_frames(text, ";main (lines.c:47);beta (lines.c:", &other) > 0);
	free(text);
}

/* pid has exited (not reaped: h_wait() does that) */
static bool exited(pid_t pid)
{
	siginfo_t si = {};

	return waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid == pid;
}

/*
 * -p on a fixture that is already running, with all its threads. How much
 * CPU its two threads got is the machine's business: it is checked against
 * the kernel's count of the process over the recording's window (sampled
 * meanwhile; the samples bracket the window's edges). Catches a thread left
 * out, time outside the window counted, on-CPU time lost or doubled.
 */
static void test_pid(void **state)
{
	static struct h_psample smp[4096];
	const char *json = h_path("pid.json");
	char line[64], pid[16];
	const struct bp_json *proc;
	double start, end, on, lo, hi;
	struct bp_json *rep;
	struct run r;
	int fd, out, n = 0;
	pid_t p = h_spawn(ARGV((char *)h_fixture("spin"), "60", "2"), &fd), rec;

	assert_true(p > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 10), 0);
	snprintf(pid, sizeof(pid), "%d", p);
	rec = h_spawn(ARGV((char *)h_bin(), "record", "-p", pid, "-d", "2", "-o", (char *)json),
		      &out);
	assert_true(rec > 0);
	do {
		assert_int_equal(h_sample_proc(p, &smp[n]), 0);
		n += n < 4095;
		h_sleep(0.02);
	} while (!exited(rec));
	assert_int_equal(h_sample_proc(p, &smp[n++]), 0);
	assert_int_equal(h_wait(rec, out, -1, 30, &r), 0);
	if (r.exit_code)
		print_run("record -p", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	assert_int_equal(bp_json_len(bp_json_get(rep, "processes")), 1);
	proc = h_find_proc(rep, "spin");
	assert_non_null(proc);
	assert_int_equal((int)bp_json_num(bp_json_get(proc, "pid")), p);
	start = bp_json_num(bp_json_get(rep, "start_unix_ns")) / 1e9;
	end = start + bp_json_num(bp_json_get(rep, "duration_s"));
	h_cpu_between(smp, n, start, end, &lo, &hi);
	/* less what the hypervisor stole: the kernel's run time leaves that out */
	on = bp_json_num(bp_json_get(proc, "on_cpu_s")) - bp_json_num(bp_json_get(proc, "steal_s"));
	fprintf(stderr, "pid: on_cpu_s less steal %.3f over %.3f s, the kernel counted %.3f-%.3f s; "
		"spin_hot %.2f\n", on, end - start, lo, hi, h_hotspot_self(proc, "spin_hot"));
	assert_false(isnan(lo) || isnan(hi));
	/* the precision h_near_kernel() allows, on the bracket's ends */
	assert_true(on >= 0.95 * lo - 0.01 && on <= 1.05 * hi + 0.01);
	assert_int_equal((int)bp_json_num(bp_json_get(proc, "threads")), 2);
	assert_true(h_hotspot_self(proc, "spin_hot") > 0.9);
	bp_json_free(rep);
	close(fd);
}

/*
 * System-wide: a process that starts and exits during the recording keeps
 * its names. The recording is live before the process starts and ends
 * after it exits (whenever the machine lets it finish); the process burns
 * 0.8 s of CPU time, so it has as many samples however busy the machine is.
 */
static void test_short_lived(void **state)
{
	const char *json = h_path("sys.json");
	const struct bp_json *proc;
	struct bp_json *rep;
	struct run r, fr;
	int out, err;
	pid_t rec;

	rec = h_spawn(ARGV((char *)h_bin(), "record", "-a", "-o", (char *)json), &out);
	assert_true(rec > 0);
	assert_int_equal(h_wait_recording(rec, 60), 0);
	assert_int_equal(h_run(ARGV((char *)h_fixture("shortlived"), "0.8"), 60, &fr), 0);
	assert_int_equal(fr.exit_code, 0);
	h_run_free(&fr);
	kill(rec, SIGINT);
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
	/* all but its start (exec, the loader: a millisecond or two) is shortlived_work */
	assert_true(h_hotspot_self(proc, "shortlived_work") > 0.8);
	bp_json_free(rep);
}

/*
 * One process, two images: CPU time in chain_burn() (execchain), then in
 * shortlived_work() once it has exec'd shortlived. Samples of the first
 * image still in the maps at the exec are named by its maps, kept aside
 * past the exec (symbolize/symbols.h), not by the second image's: those
 * put other code at those addresses (ASLR), or none.
 */
static void test_exec_images(void **state)
{
	const struct bp_json *proc;
	struct bp_json *rep;
	double first, second;

	rep = h_record_json("exec.json", ARGV((char *)h_fixture("execchain"), "0.6",
					      (char *)h_fixture("shortlived"), "0.6"));
	assert_non_null(rep);
	proc = h_find_proc(rep, "shortlived");
	assert_non_null(proc);
	first = h_hotspot_self(proc, "chain_burn");
	second = h_hotspot_self(proc, "shortlived_work");
	fprintf(stderr, "exec images: chain_burn %.2f, shortlived_work %.2f of %.0f samples\n",
		first, second, bp_json_num(bp_json_get(proc, "samples")));
	/* 0.6 s of CPU time each: half and half, less the exec and the loaders */
	assert_true(first > 0.35);
	assert_true(second > 0.35);
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
	/* loading the programs takes longer on a busy machine: count from when it records */
	assert_int_equal(h_wait_recording(rec, 60), 0);
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
	assert_int_equal(h_wait_recording(rec, 60), 0);
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
		cmocka_unit_test_teardown(test_samples_past_the_slots, teardown),
		cmocka_unit_test_teardown(test_folded_functions, teardown),
		cmocka_unit_test_teardown(test_pid, teardown),
		cmocka_unit_test_teardown(test_short_lived, teardown),
		cmocka_unit_test_teardown(test_exec_images, teardown),
		cmocka_unit_test_teardown(test_sigint_writes, teardown),
		cmocka_unit_test_teardown(test_sigterm_command, teardown),
		cmocka_unit_test_teardown(test_command_tree, teardown),
	};

	if (!h_need_root() || !h_have_schedstat())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}
