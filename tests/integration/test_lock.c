// SPDX-License-Identifier: GPL-2.0
/*
 * Threads serialized by a lock (root, real BPF): the turns fixture, two
 * threads on one plain pthread_mutex (glibc's default, unfair), must be
 * lock-bound with high confidence on every run, with the function that
 * takes the lock named, whatever the mutex lets each thread's lock share
 * do. Oracles nobody here computes: the fixture's own count of its CPU
 * time, wall time, acquisitions and time spent taking the lock
 * (clock_gettime), and the kernel's schedstat of its threads.
 *
 * RUNS runs of one second each: enough to see the verdict hold where each
 * thread's lock share used to swing across the 30% threshold (three
 * classes in four runs before), in a few seconds of test.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })
#define RUNS 5

static int teardown(void **state)
{
	(void)state;
	unsetenv("BP_FIXTURE_SCHED");
	h_cleanup();
	return 0;
}

/* the fixture's own totals: "turns: threads=T wall=S cpu=S parallelism=P ..." */
struct turns_out {
	int threads;
	double wall, cpu, par, held, waited;
	unsigned long long acq;
};

static void parse_turns(const char *out, struct turns_out *t)
{
	const char *l = out ? strstr(out, "turns: threads=") : NULL;

	if (!l || sscanf(l, "turns: threads=%d wall=%lf cpu=%lf parallelism=%lf acquisitions=%llu "
			 "held=%lf waited=%lf", &t->threads, &t->wall, &t->cpu, &t->par, &t->acq,
			 &t->held, &t->waited) != 7)
		fail_msg("no totals line from the fixture in:\n%s", out ? out : "");
}

static const char *line(const struct bp_json *v, const char *key, size_t i)
{
	const char *s = bp_json_str(bp_json_at(bp_json_get(v, key), i));

	return s ? s : "";
}

static void unfair_mutex__lock_bound_every_run(void **state)
{
	int i, checked = 0;

	(void)state;
	if (!h_have_schedstat())
		return;
	for (i = 0; i < RUNS; i++) {
		char name[32];
		const char *path;
		struct turns_out f;
		struct h_sched k;
		struct bp_json *rep;
		const struct bp_json *p, *v;
		const char *cls, *conf;
		struct run r;
		double par, turn;

		snprintf(name, sizeof(name), "turns%d.json", i);
		path = h_path(name);
		h_sched_arm();
		assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-o", (char *)path, "--",
					    (char *)h_fixture("turns"), "1"), 120, &r), 0);
		if (r.exit_code)
			fail_msg("boundprof record exited %d:\n%s\n%s", r.exit_code, r.out, r.err);
		parse_turns(r.out, &f);
		h_run_free(&r);
		assert_int_equal(h_sched_read("turns", &k, 1), 1);
		rep = h_json_file(path);
		assert_non_null(rep);
		p = h_find_proc(rep, "turns");
		assert_non_null(p);
		v = bp_json_get(p, "verdict");
		cls = bp_json_str(bp_json_get(v, "class"));
		conf = bp_json_str(bp_json_get(v, "confidence"));
		par = bp_json_num(bp_json_path(v, "amdahl.parallelism"));
		/* present only when the turns decided the verdict */
		turn = bp_json_path(v, "turns.share") ? bp_json_num(bp_json_path(v, "turns.share")) : 0;
		fprintf(stderr, "run %d: %s (%s), turn share %.2f, parallelism %.2f; the fixture: "
			"%.2f (%.3f CPU-s in %.3f s), %llu acquisitions, %.3f s taking the lock, "
			"%.3f s held; its threads %.3f s in the run queue\n  %s\n  %s\n", i, cls, conf,
			turn, par, f.par, f.cpu, f.wall, f.acq, f.waited, f.held, k.rq,
			line(v, "evidence", 0), line(v, "levers", 0));
		/* both threads took the lock, in turns, and never ran the section together */
		assert_int_equal(f.threads, 2);
		assert_true(f.acq > 0 && f.held <= f.wall * 1.01);
		/*
		 * Achieved parallelism: boundprof's (the process's on-CPU time
		 * over its wall time, the main thread's start and join included)
		 * against the workers' own CPU time over their wall time.
		 */
		assert_true(fabs(par - f.par) <= 0.1 * f.par + 0.05);
		if (k.rq > f.waited) {
			/*
			 * The machine took the CPUs: the threads waited longer for
			 * one than for the lock (the fixture's own count and
			 * schedstat). Both limits bind; the run queue may win.
			 */
			fprintf(stderr, "NOT CHECKED: high confidence in run %d: other work took the "
				"CPUs (its threads waited %.3f s for a CPU, %.3f s for the lock)\n", i,
				k.rq, f.waited);
			if (strcmp(cls, "cpu-starved"))
				assert_string_equal(cls, "lock-bound");
		} else {
			assert_string_equal(cls, "lock-bound");
			assert_string_equal(conf, "high");
			checked++;
		}
		if (!strcmp(cls, "lock-bound")) {
			/* the lock is named by the function that takes it, and the lever says why */
			assert_non_null(strstr(line(v, "evidence", 0), "take turns on one lock"));
			assert_non_null(strstr(line(v, "evidence", 0), "turns_update"));
			assert_non_null(strstr(line(v, "levers", 0), "turns_update"));
			assert_non_null(strstr(line(v, "levers", 0), "More threads will not help"));
		}
		bp_json_free(rep);
	}
	fprintf(stderr, "%d of %d runs checked for high confidence on CPUs free enough\n", checked,
		RUNS);
}

/* `boundprof scale -j 1,2`: the lock is the serial part, and it is named */
static void unfair_mutex__scale_names_the_lock(void **state)
{
	char *argv[] = { (char *)h_bin(), "scale", "-j", "1,2", "-r", "2", "-o",
			 (char *)h_path("scale.json"), "--", (char *)h_fixture("turns"), "40000r",
			 "{}", NULL };
	const struct bp_json *pts, *p2 = NULL;
	const char *concl, *cls;
	struct bp_json *c;
	struct run r;
	size_t i;

	(void)state;
	assert_int_equal(h_run(argv, 300, &r), 0);
	if (r.exit_code)
		fail_msg("boundprof scale exited %d:\n%s\n%s", r.exit_code, r.out, r.err);
	h_run_free(&r);
	c = h_json_file(h_path("scale.json"));
	assert_non_null(c);
	pts = bp_json_get(c, "points");
	for (i = 0; i < bp_json_len(pts); i++)
		if (bp_json_num(bp_json_get(bp_json_at(pts, i), "workers")) == 2)
			p2 = bp_json_at(pts, i);
	assert_non_null(p2);
	concl = bp_json_str(bp_json_get(c, "conclusion"));
	cls = bp_json_str(bp_json_get(p2, "verdict"));
	fprintf(stderr, "2 workers: %s, lock site %s, serial share %.2f, others used %.2f CPU-s; "
		"conclusion: %s\n", cls,
		bp_json_str(bp_json_path(p2, "lock_site.function")) ?
		bp_json_str(bp_json_path(p2, "lock_site.function")) : "none",
		bp_json_get(p2, "lock_serial_share") ?
		bp_json_num(bp_json_get(p2, "lock_serial_share")) : 0,
		bp_json_num(bp_json_get(p2, "others_cpu_s")), concl);
	/* the lock's site is measured whatever the class */
	assert_non_null(strstr(bp_json_str(bp_json_path(p2, "lock_site.function")),
			       "turns_update"));
	if (bp_json_get(p2, "disturbed") && bp_json_bool(bp_json_get(p2, "disturbed"))) {
		fprintf(stderr, "NOT CHECKED: the serial part at 2 workers: other processes used "
			"the CPUs during the point\n");
		if (strcmp(cls, "cpu-starved"))
			assert_string_equal(cls, "lock-bound");
	} else {
		assert_string_equal(cls, "lock-bound");
		assert_true(bp_json_num(bp_json_get(p2, "lock_serial_share")) > 0);
		assert_non_null(strstr(concl, "ran under the lock taken in turns_update"));
		assert_non_null(strstr(concl, "That is the serial part"));
	}
	bp_json_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(unfair_mutex__lock_bound_every_run, teardown),
		cmocka_unit_test_teardown(unfair_mutex__scale_names_the_lock, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("lock", tests, NULL, NULL);
}
