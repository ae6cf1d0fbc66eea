// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU and wall-clock accounting, end to end, with the real BPF programs
 * (root): every second of a profiled thread is on-CPU or in one wait class.
 * How long a fixture waited, and for what, depends on the machine and on
 * what else runs on it; the fixtures report the kernel's own count of
 * their time (tests/fixtures/fixture.h), and boundprof must agree with it.
 */
#include <fcntl.h>
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

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static double num(const struct bp_json *v, const char *path)
{
	return bp_json_num(bp_json_path(v, path));
}

/* record COMMAND... into NAME.json; the parsed report */
static struct bp_json *record(const char *name, char *const cmd[])
{
	struct bp_json *rep = h_record_json(name, cmd);

	assert_non_null(rep);
	return rep;
}

/* every state of a process timeline (timeline_s): they add up to its wall time */
static const char *const states[] = { "running", "runqueue", "io", "lock", "other", "sleep",
				      "net", "pipe", "idle" };

/*
 * boundprof record ARGS...: it must succeed, and the fixture print a line
 * starting with @prefix, returned (a copy, to free) for the case to read
 */
static char *record_fixture_line(char *const cmd[], const char *prefix)
{
	const char *l;
	char *line;
	struct run r;

	assert_int_equal(h_run(cmd, 60, &r), 0);
	if (r.exit_code)
		fail_msg("boundprof record exited %d:\n%s\n%s", r.exit_code, r.out, r.err);
	l = strstr(r.out, prefix);
	if (!l)
		fail_msg("no line from the fixture in:\n%s", r.out);
	line = strndup(l, strcspn(l, "\n"));
	assert_non_null(line);
	h_run_free(&r);
	return line;
}

/*
 * Each thread: on-CPU + every off-CPU class = its wall time, within 5%;
 * and the merged timeline of the process covers its wall time.
 */
static void check_accounting(const struct bp_json *proc)
{
	const struct bp_json *thr = bp_json_get(proc, "threads_detail");
	double tl = 0;
	size_t i;

	assert_true(bp_json_len(thr) > 0);
	for (i = 0; i < bp_json_len(thr); i++) {
		const struct bp_json *t = bp_json_at(thr, i);
		double wall = num(t, "wall_s"), acc = num(t, "accounted_s");

		fprintf(stderr, "  tid %.0f: wall %.4f s, accounted %.4f s (%+.2f%%)\n",
			num(t, "tid"), wall, acc, wall > 0 ? (acc / wall - 1) * 100 : 0);
		assert_true(wall > 0);
		assert_true(acc >= wall * 0.95 && acc <= wall * 1.05);
	}
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		tl += bp_json_num(bp_json_get(bp_json_get(proc, "timeline_s"), states[i]));
	fprintf(stderr, "  timeline %.4f s, wall %.4f s\n", tl, num(proc, "wall_s"));
	assert_true(tl >= num(proc, "wall_s") * 0.95 && tl <= num(proc, "wall_s") * 1.05);
}

/* a file of @mib MiB with real blocks, on disk */
static void make_file(const char *path, int mib)
{
	static char buf[1 << 20];
	int fd, i;

	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_true(fd >= 0);
	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < mib; i++)
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

/* 20 x 100 ms of nanosleep shows 2.0 s +- 5% of sleep */
static void test_sleeper(void **state)
{
	struct bp_json *rep = record("sleep.json", ARGV((char *)h_fixture("sleeper"), "20", "100"));
	const struct bp_json *p = h_find_proc(rep, "sleeper");
	double sl;

	assert_non_null(p);
	sl = num(p, "off_cpu_s.sleep");
	fprintf(stderr, "sleeper: sleep %.4f s, on-CPU %.4f s, runqueue %.4f s, wall %.4f s\n",
		sl, num(p, "on_cpu_s"), num(p, "off_cpu_s.runqueue"), num(p, "wall_s"));
	assert_true(sl >= 1.9 && sl <= 2.1);
	assert_true(num(p, "timeline_s.sleep") >= 1.9);
	check_accounting(p);
	bp_json_free(rep);
}

/*
 * A thread that blocks at three sites in turn, more than the two a thread's
 * stacks are kept for, and a writer that leaves while it goes on: their
 * waits are gathered per site in BPF and written out as a site gives way
 * to another and at exit (bpf/offcpu.bpf.c, account_off()). Each wait is
 * counted once, in its class: the reader's sleep, pipe and run-queue waits
 * add up to the time the fixture's own clock spent in those calls, and
 * each thread's time is accounted for.
 */
static void sites__each_wait_counted_once(void **state)
{
	const char *path = h_path("sites.json"), *fpath = h_path("sites.offcpu.folded");
	double t_sleep = 0, t_pipe = 0, sl = -1, pi = -1, rq = -1, want, got;
	double f_sleep = 0, f_pipe = 0, f_wrong = 0, us;
	const struct bp_json *p, *thr, *t;
	char *text, *line, *save = NULL, *sp;
	struct bp_json *rep;
	long n = 0;
	size_t i;

	line = record_fixture_line(ARGV((char *)h_bin(), "record", "-o", (char *)path, "-o",
					(char *)fpath, "--", (char *)h_fixture("sites"), "300"),
				   "sites: ");
	if (sscanf(line, "sites: %ld rounds, sleep %lf s, pipe %lf s", &n, &t_sleep, &t_pipe) != 3)
		fail_msg("cannot read the fixture's line: %s", line);
	free(line);
	rep = h_json_file(path);
	assert_non_null(rep);
	p = h_find_proc(rep, "sites");
	assert_non_null(p);
	thr = bp_json_get(p, "threads_detail");
	assert_int_equal(bp_json_len(thr), 2);
	for (i = 0; i < bp_json_len(thr); i++) {
		t = bp_json_at(thr, i);
		if (num(t, "tid") != num(p, "pid"))
			continue;
		sl = num(t, "off_cpu_s.sleep");
		pi = num(t, "off_cpu_s.pipe");
		rq = num(t, "off_cpu_s.runqueue");
	}
	/* and the 1-ms sleep after the loop, which the fixture does not time */
	want = t_sleep + t_pipe + 0.001;
	got = sl + pi + rq;
	fprintf(stderr, "  sites: %ld rounds; fixture: sleep %.4f s, pipe %.4f s; boundprof: "
		"sleep %.4f s, pipe %.4f s, runqueue %.4f s (%+.2f%%)\n", n, t_sleep, t_pipe, sl,
		pi, rq, (got / want - 1) * 100);
	assert_int_equal(n, 300);
	assert_true(got >= 0.95 * want && got <= 1.05 * want);
	assert_true(sl >= 0.8 * t_sleep && sl <= t_sleep + 0.0011);
	assert_true(pi >= 0.8 * t_pipe && pi <= t_pipe);
	check_accounting(p);
	bp_json_free(rep);
	/*
	 * and with the stacks they were taken with: a row written out with
	 * another site's stacks would put the pipe's wait under a sleep
	 * (microseconds, the reader's own stacks only)
	 */
	text = h_slurp(fpath, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		sp = strrchr(line, ' ');
		if (strncmp(line, "sites;", 6) || !sp || !strstr(line, ";main;site_"))
			continue;
		us = atof(sp + 1) / 1e6;
		if (strstr(line, ";[pipe];") && strstr(line, ";site_pipe;"))
			f_pipe += us;
		else if (strstr(line, ";[sleep];") && (strstr(line, ";site_sleep;") ||
							strstr(line, ";site_poll;")))
			f_sleep += us;
		else if (strstr(line, ";[pipe];") || strstr(line, ";[sleep];"))
			f_wrong += us;
	}
	free(text);
	fprintf(stderr, "  folded: site_pipe [pipe] %.4f s, site_sleep/site_poll [sleep] %.4f s, "
		"either under the other's stack %.4f s\n", f_pipe, f_sleep, f_wrong);
	/* the folded lines are whole microseconds each */
	assert_true(f_pipe >= 0.8 * t_pipe && f_pipe <= pi + 0.001);
	assert_true(f_sleep >= 0.8 * t_sleep && f_sleep <= sl + 0.001);
	assert_true(f_wrong == 0);
}

/*
 * Thousands of threads exit while the task walk runs, then the process
 * sleeps alone: the timeline shows that sleep as sleep (the fixture's own
 * clock), not a dead thread still running through it.
 */
static void thread_churn__dead_threads_leave_the_timeline(void **state)
{
	const char *path = h_path("churn.json");
	struct bp_json *rep;
	const struct bp_json *p;
	double slept = 0, tl = 0;
	char *line;
	long n = 0;
	size_t i;

	line = record_fixture_line(ARGV((char *)h_bin(), "record", "-o", (char *)path, "--",
					(char *)h_fixture("threadchurn"), "2", "2"),
				   "threadchurn: ");
	if (sscanf(line, "threadchurn: %ld threads, slept %lf s", &n, &slept) != 2)
		fail_msg("cannot read the fixture's line: %s", line);
	free(line);
	rep = h_json_file(path);
	assert_non_null(rep);
	p = h_find_proc(rep, "threadchurn");
	assert_non_null(p);
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		tl += bp_json_num(bp_json_get(bp_json_get(p, "timeline_s"), states[i]));
	fprintf(stderr, "  %ld threads, then slept %.3f s; timeline: running %.3f s, sleep %.3f s "
		"of %.3f s (wall %.3f s)\n", n, slept, num(p, "timeline_s.running"),
		num(p, "timeline_s.sleep"), tl, num(p, "wall_s"));
	assert_true(n >= 100);
	assert_true(num(p, "timeline_s.sleep") >= 0.9 * slept);
	assert_true(num(p, "timeline_s.running") <= num(p, "wall_s") - 0.9 * slept);
	assert_true(tl >= num(p, "wall_s") * 0.95 && tl <= num(p, "wall_s") * 1.05);
	bp_json_free(rep);
}

/*
 * Two spinners pinned to one CPU: each waits for it while the other runs
 * (about half its wall time on an idle machine, more when other work shares
 * the CPU). Its run-queue time is the kernel's count; and the two cannot
 * have been on-CPU for longer than one CPU gives. Catches waits missed or
 * put in the wrong class, and on-CPU time counted twice.
 */
static void test_runqueue(void **state)
{
	struct h_sched ks[4];
	char cmd[512];
	struct bp_json *rep;
	const struct bp_json *procs;
	double on_sum = 0, wall_max = 0;
	size_t i;
	int found = 0, nk, j;

	h_sched_arm();
	snprintf(cmd, sizeof(cmd), "%s 3 0 & %s 3 0; wait", h_fixture("pinned"),
		 h_fixture("pinned"));
	rep = record("rq.json", ARGV("sh", "-c", cmd));
	nk = h_sched_read("pinned", ks, 4);
	assert_int_equal(nk, 2);
	procs = bp_json_get(rep, "processes");
	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);
		double wall = num(p, "wall_s"), rq = num(p, "off_cpu_s.runqueue");
		const struct h_sched *k = NULL;

		if (strcmp(bp_json_str(bp_json_get(p, "comm")), "pinned"))
			continue;
		for (j = 0; j < nk; j++)
			if (ks[j].pid == (int)num(p, "pid"))
				k = &ks[j];
		assert_non_null(k);
		found++;
		fprintf(stderr, "pinned %.0f: runqueue %.3f s of %.3f s wall (%.0f%%), on-CPU %.3f s\n",
			num(p, "pid"), rq, wall, rq / wall * 100, num(p, "on_cpu_s"));
		assert_true(h_near_kernel("run queue", rq, k->rq + k->pre_rq, 0,
					  k->runs * H_WAKEUP_S));
		/* one thread: its timeline waits when it does */
		assert_true(h_near_kernel("timeline run queue", num(p, "timeline_s.runqueue"),
					  k->rq + k->pre_rq, 0, k->runs * H_WAKEUP_S));
		on_sum += num(p, "on_cpu_s");
		if (wall > wall_max)
			wall_max = wall;
		check_accounting(p);
	}
	assert_int_equal(found, 2);
	fprintf(stderr, "pinned: %.3f s on-CPU together in %.3f s on one CPU\n", on_sum, wall_max);
	assert_true(on_sum <= wall_max * 1.01);
	bp_json_free(rep);
}

/*
 * Eight threads contending one mutex show lock time, with the futex stacks:
 * as much as the kernel says the workers were blocked (the mutex is all
 * they block on). Catches lock waits classed as sleep or missed.
 */
static void test_lock(void **state)
{
	struct bp_json *rep;
	const struct bp_json *p;
	struct h_sched k;
	char *folded;
	double lock;

	h_sched_arm();
	rep = record("lock.json", ARGV((char *)h_fixture("contend"), "3", "8"));
	assert_int_equal(h_sched_read("contend", &k, 1), 1);
	p = h_find_proc(rep, "contend");
	assert_non_null(p);
	lock = num(p, "off_cpu_s.lock");
	fprintf(stderr, "contend: lock %.2f thread-s, on-CPU %.2f s, runqueue %.2f s, wall %.2f s\n",
		lock, num(p, "on_cpu_s"), num(p, "off_cpu_s.runqueue"), num(p, "wall_s"));
	assert_true(h_near_kernel("lock wait", lock, k.wall - k.on - k.rq,
				  k.runs * H_WAKEUP_S, k.runs * H_WAKEUP_S));
	assert_true(lock > num(p, "off_cpu_s.sleep"));
	check_accounting(p);
	bp_json_free(rep);

	/* the off-CPU folded view puts the lock wait under its futex stack */
	folded = NULL;
	{
		struct run r;

		assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o",
					    (char *)h_path("lock.offcpu.folded"), "--",
					    (char *)h_fixture("contend"), "1", "8"),
				       60, &r), 0);
		assert_int_equal(r.exit_code, 0);
		h_run_free(&r);
	}
	folded = h_slurp(h_path("lock.offcpu.folded"), NULL);
	assert_non_null(folded);
	assert_non_null(strstr(folded, "contend;[lock];"));
	assert_non_null(strstr(folded, "futex_wait"));
	free(folded);
}

/*
 * Random O_DIRECT reads and fsync-heavy writes both wait on block IO, as
 * long as the kernel says the fixtures were blocked (their IO is all they
 * block on). Catches IO waits missed or put in another class.
 */
static void test_io_wait(void **state)
{
	const char *data = h_path("io.data");
	char count[16] = "10000";
	struct bp_json *rep;
	const struct bp_json *p;
	struct h_sched k;

	/* a 32 MiB file for the reader to pick 4 KiB blocks from */
	make_file(data, 32);

	h_sched_arm();
	rep = record("odirect.json", ARGV((char *)h_fixture("odirect"), (char *)data, count));
	assert_int_equal(h_sched_read("odirect", &k, 1), 1);
	p = h_find_proc(rep, "odirect");
	assert_non_null(p);
	fprintf(stderr, "odirect: io wait %.3f s (io.wait_s %.3f), on-CPU %.3f s, wall %.3f s\n",
		num(p, "off_cpu_s.io"), num(p, "io.wait_s"), num(p, "on_cpu_s"), num(p, "wall_s"));
	/* it waited on the disk, then for a CPU after each read, as the kernel says */
	assert_true(h_io_rq_split("odirect", &k, p));
	assert_true(num(p, "io.wait_s") == num(p, "off_cpu_s.io"));
	check_accounting(p);
	bp_json_free(rep);

	h_sched_arm();
	/* enough syncs that the edges (10 ms) are a small part of the wait */
	rep = record("fsync.json", ARGV((char *)h_fixture("fsyncer"), (char *)h_path("fs.data"),
					"2000"));
	assert_int_equal(h_sched_read("fsyncer", &k, 1), 1);
	p = h_find_proc(rep, "fsyncer");
	assert_non_null(p);
	fprintf(stderr, "fsyncer: io wait %.3f s, on-CPU %.3f s, wall %.3f s\n",
		num(p, "off_cpu_s.io"), num(p, "on_cpu_s"), num(p, "wall_s"));
	assert_true(h_io_rq_split("fsyncer", &k, p));
	check_accounting(p);
	bp_json_free(rep);
}

/*
 * Kernel threads' off-CPU stacks are reused while a thread blocks again at
 * the same depth of its own stack (offcpu.bpf.c, site_of()); every 64th
 * reuse walks again and counts a stack that differs; here every reuse is
 * checked. Under process churn and direct reads the kernel's workers block
 * on several paths: a key that did not tell them apart (checked: the same
 * key for every path) counts stale stacks; the depth key counts none.
 * Also: the kernel threads' waits still carry the scheduler's frames, as a
 * walk gives them.
 */
static void kthread_stacks__reused_only_at_their_own_site(void **state)
{
	const char *json = h_path("kthreads.json"), *folded = h_path("kthreads.offcpu.folded");
	const char *data = h_path("kthreads.data");
	const struct bp_json *dd;
	char of[600];
	struct bp_json *rep;
	char *text, *line, *save = NULL;
	long kthread_lines = 0;
	struct run r;

	/* processes come and go; a file is read block by block, past the page cache */
	make_file(data, 32);
	assert_true(h_spawn(ARGV((char *)h_fixture("churn"), "8", "100",
				 (char *)h_fixture("shortlived"), "0.002"), NULL) > 0);
	assert_true(h_spawn(ARGV((char *)h_fixture("odirect"), (char *)data, "40000"), NULL) > 0);
	/*
	 * and dirty pages written back: the flusher, the journal and, where
	 * DAMON reclaims, kdamond, whose cond_resched() calls at one depth
	 * from two places told the depth key apart from nothing (bp_kret_*())
	 */
	snprintf(of, sizeof(of), "of=%s", h_path("kthreads.dirty"));
	assert_true(h_spawn(ARGV("dd", "if=/dev/zero", of, "bs=1M", "count=256", "conv=fsync",
				 "status=none"), NULL) > 0);
	/* every reuse checked: a stack the depth key would have got wrong is counted */
	setenv("BOUNDPROF_KSITE_CHECK", "1", 1);
	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-a", "-d", "8", "-o", (char *)json,
				    "-o", (char *)folded), 60, &r), 0);
	unsetenv("BOUNDPROF_KSITE_CHECK");
	if (r.exit_code)
		fail_msg("boundprof record -a exited %d:\n%s", r.exit_code, r.err);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	dd = bp_json_get(rep, "drops_detail");
	assert_non_null(bp_json_get(dd, "kthread_stacks_stale"));
	fprintf(stderr, "  switches %.0f, stacks cached %.0f, kernel threads' stale %.0f\n",
		num(rep, "offcpu.switches"), num(rep, "offcpu.stacks_cached"),
		num(dd, "kthread_stacks_stale"));
	assert_true(num(rep, "offcpu.stacks_cached") > 0);
	assert_true(num(dd, "kthread_stacks_stale") == 0);
	bp_json_free(rep);

	text = h_slurp(folded, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, ";kthread_[k];") && strstr(line, ";[sleep];") &&
		    strstr(line, "schedule"))
			kthread_lines++;
	fprintf(stderr, "  %ld kernel threads' sleep stacks through the scheduler\n", kthread_lines);
	assert_true(kthread_lines > 0);
	free(text);
}

/*
 * A read loop built without frame pointers, with its counter in rbp
 * (tests/fixtures/nofp pingpong: two processes, two pipes): each blocks
 * from one call site, so its stacks are taken once and reused, whatever
 * rbp holds, and they are whole, not the frame-pointer walk made before
 * the process's unwind tables came. Keyed by rbp's value, 516 of 200,187
 * switches reused their stacks.
 */
static void pingpong__stacks_reused_and_whole(void **state)
{
	const char *json = h_path("pingpong.json"), *folded = h_path("pingpong.offcpu.folded");
	double switches, cached, pipe_us = 0, whole_us = 0;
	char *line, *text, *save = NULL;
	struct bp_json *rep;

	line = record_fixture_line(ARGV((char *)h_bin(), "record", "-o", (char *)json, "-o",
					(char *)folded, "--", (char *)h_fixture("nofp"), "pingpong",
					"2"),
				   "rounds ");
	fprintf(stderr, "  nofp pingpong: %s\n", line);
	assert_true(atol(line + strlen("rounds ")) > 1000);
	free(line);
	rep = h_json_file(json);
	assert_non_null(rep);
	switches = num(rep, "offcpu.switches");
	cached = num(rep, "offcpu.stacks_cached");
	fprintf(stderr, "  switches %.0f, stacks cached %.0f\n", switches, cached);
	assert_true(switches > 1000);
	assert_true(cached >= 0.9 * switches);
	bp_json_free(rep);

	text = h_slurp(folded, NULL);
	assert_non_null(text);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		double us = sp ? atof(sp + 1) : 0;

		if (strncmp(line, "nofp;[pipe];", 12))
			continue;
		pipe_us += us;
		if (strstr(line, ";main;pingpong;pingpong_read;") && !strstr(line, "[truncated]"))
			whole_us += us;
	}
	free(text);
	fprintf(stderr, "  pipe waits %.0f us, %.0f us of them under main;pingpong;pingpong_read\n",
		pipe_us, whole_us);
	assert_true(pipe_us > 0);
	assert_true(whole_us >= 0.95 * pipe_us);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sleeper, teardown),
		cmocka_unit_test_teardown(sites__each_wait_counted_once, teardown),
		cmocka_unit_test_teardown(test_runqueue, teardown),
		cmocka_unit_test_teardown(thread_churn__dead_threads_leave_the_timeline, teardown),
		cmocka_unit_test_teardown(test_lock, teardown),
		cmocka_unit_test_teardown(test_io_wait, teardown),
		cmocka_unit_test_teardown(kthread_stacks__reused_only_at_their_own_site, teardown),
		cmocka_unit_test_teardown(pingpong__stacks_reused_and_whole, teardown),
	};

	if (!h_need_root() || !h_have_schedstat())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("offcpu", tests, NULL, NULL);
}
