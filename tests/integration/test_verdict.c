// SPDX-License-Identifier: GPL-2.0
/*
 * The verdict on real programs (root, real BPF): each workload of known
 * character gets the right class. Every case prints its verdict, confidence
 * and evidence, which the closing notes quote.
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

/* record COMMAND... into NAME.json; the parsed report */
static struct bp_json *record(const char *name, char *const cmd[])
{
	struct bp_json *rep = h_record_json(name, cmd);

	assert_non_null(rep);
	return rep;
}

static void show(const char *what, const struct bp_json *proc)
{
	const struct bp_json *v = bp_json_get(proc, "verdict");
	const struct bp_json *ev = bp_json_get(v, "evidence");
	size_t i;

	fprintf(stderr, "%s: pid %.0f %s -> %s (%s)\n", what,
		bp_json_num(bp_json_get(proc, "pid")), bp_json_str(bp_json_get(proc, "comm")),
		bp_json_str(bp_json_get(v, "class")), bp_json_str(bp_json_get(v, "confidence")));
	for (i = 0; i < bp_json_len(ev); i++)
		fprintf(stderr, "    %s\n", bp_json_str(bp_json_at(ev, i)));
}

/* the process with this comm that spent the most time on-CPU */
static const struct bp_json *busiest(const struct bp_json *rep, const char *comm)
{
	const struct bp_json *procs = bp_json_get(rep, "processes"), *best = NULL;
	size_t i;

	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);

		if (strcmp(bp_json_str(bp_json_get(p, "comm")), comm))
			continue;
		if (!best || bp_json_num(bp_json_get(p, "on_cpu_s")) +
				     bp_json_num(bp_json_path(p, "off_cpu_s.io")) >
			     bp_json_num(bp_json_get(best, "on_cpu_s")) +
				     bp_json_num(bp_json_path(best, "off_cpu_s.io")))
			best = p;
	}
	return best;
}

static void expect(const struct bp_json *rep, const char *comm, const char *cls)
{
	const struct bp_json *p = busiest(rep, comm);

	assert_non_null(p);
	show(cls, p);
	assert_string_equal(bp_json_str(bp_json_path(p, "verdict.class")), cls);
	assert_true(bp_json_len(bp_json_path(p, "verdict.evidence")) > 0);
	assert_true(bp_json_len(bp_json_path(p, "verdict.levers")) > 0);
}

static void expect_summary(const struct bp_json *rep, const char *cls)
{
	fprintf(stderr, "  summary: %s (%s)\n",
		bp_json_str(bp_json_path(rep, "summary.verdict.class")),
		bp_json_str(bp_json_path(rep, "summary.verdict.confidence")));
	assert_string_equal(bp_json_str(bp_json_path(rep, "summary.verdict.class")), cls);
}

static void test_cpu_bound(void **state)
{
	struct bp_json *rep = record("cpu.json", ARGV("stress-ng", "--cpu", "1", "-t", "4",
						      "--quiet"));

	expect(rep, "stress-ng-cpu", "cpu-bound");
	expect_summary(rep, "cpu-bound");
	bp_json_free(rep);
}

static void test_io_bound(void **state)
{
	char file[600];
	struct bp_json *rep;

	snprintf(file, sizeof(file), "--filename=%s", h_path("fio.data"));
	rep = record("io.json", ARGV("fio", "--name=randread", file, "--size=64M",
				     "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=psync",
				     "--runtime=4", "--time_based", "--output=/dev/null"));
	expect(rep, "fio", "io-bound");
	expect_summary(rep, "io-bound");
	bp_json_free(rep);
}

static void test_idle(void **state)
{
	struct bp_json *rep = record("idle.json", ARGV("sleep", "3"));

	expect(rep, "sleep", "idle");
	expect_summary(rep, "idle");
	bp_json_free(rep);
}

static void test_memory_bandwidth_bound(void **state)
{
	/* three 128 MiB arrays, two threads: 12x a 32 MiB last-level cache */
	struct bp_json *rep = record("mem.json", ARGV((char *)h_fixture("triad"), "5", "128",
						      "2"));

	expect(rep, "triad", "memory-bandwidth-bound");
	expect_summary(rep, "memory-bandwidth-bound");
	bp_json_free(rep);
}

static void test_lock_bound(void **state)
{
	struct bp_json *rep = record("lock.json", ARGV((char *)h_fixture("contend"), "3", "8"));

	expect(rep, "contend", "lock-bound");
	expect_summary(rep, "lock-bound");
	bp_json_free(rep);
}

static void test_cpu_starved(void **state)
{
	char cmd[600];
	struct bp_json *rep;
	const struct bp_json *procs;
	size_t i;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "%s 3 0 & %s 3 0; wait", h_fixture("pinned"),
		 h_fixture("pinned"));
	rep = record("starved.json", ARGV("sh", "-c", cmd));
	procs = bp_json_get(rep, "processes");
	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);

		if (strcmp(bp_json_str(bp_json_get(p, "comm")), "pinned"))
			continue;
		show("cpu-starved", p);
		assert_string_equal(bp_json_str(bp_json_path(p, "verdict.class")), "cpu-starved");
		n++;
	}
	assert_int_equal(n, 2);
	expect_summary(rep, "cpu-starved");
	bp_json_free(rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cpu_bound, teardown),
		cmocka_unit_test_teardown(test_io_bound, teardown),
		cmocka_unit_test_teardown(test_idle, teardown),
		cmocka_unit_test_teardown(test_memory_bandwidth_bound, teardown),
		cmocka_unit_test_teardown(test_lock_bound, teardown),
		cmocka_unit_test_teardown(test_cpu_starved, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
