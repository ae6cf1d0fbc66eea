// SPDX-License-Identifier: GPL-2.0
/*
 * Option values, every command: a bad one gets the same line wherever it is
 * given ("boundprof: invalid WHAT OPT 'VALUE': give ..."), exit 2 and
 * nothing on stdout; the same value means the same thing in every command
 * (-F 99.0 is 99 in record, top and agent alike). Nothing is recorded: each
 * run stops at option parsing.
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

/* exit 2, nothing on stdout, and exactly this one line on stderr (after "boundprof: ") */
static void expect_line(char *const argv[], const char *line)
{
	char want[512];
	struct run r;
	int i;

	assert_int_equal(h_run(argv, 30, &r), 0);
	fprintf(stderr, "  ");
	for (i = 1; argv[i]; i++)
		fprintf(stderr, "%s ", argv[i]);
	fprintf(stderr, "-> %d: %s", r.exit_code, r.err);
	snprintf(want, sizeof(want), "boundprof: %s\n", line);
	assert_false(r.signaled);
	assert_int_equal(r.exit_code, 2);
	assert_int_equal(r.out_len, 0);
	assert_string_equal(r.err, want);
	h_run_free(&r);
}

/* exit 2 with one line that starts with this prefix (the rest names the range) */
static void expect_prefix(char *const argv[], const char *prefix)
{
	char want[512];
	struct run r;

	assert_int_equal(h_run(argv, 30, &r), 0);
	fprintf(stderr, "  %s %s %s -> %d: %s", argv[1], argv[2], argv[3] ? argv[3] : "",
		r.exit_code, r.err);
	snprintf(want, sizeof(want), "boundprof: %s", prefix);
	assert_int_equal(r.exit_code, 2);
	assert_int_equal(r.out_len, 0);
	assert_int_equal(h_lines(r.err), 1);
	assert_int_equal(strncmp(r.err, want, strlen(want)), 0);
	h_run_free(&r);
}

static void test_frequency_same_everywhere(void **state)
{
	static const char *const cmds[] = { "record", "top", "agent" };
	char *bin = (char *)h_bin(), line[256], max[32];
	char *text = h_slurp("/proc/sys/kernel/perf_event_max_sample_rate", NULL);
	size_t i;

	assert_non_null(text);
	snprintf(max, sizeof(max), "%d", atoi(text));
	free(text);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *cmd = (char *)cmds[i];

		snprintf(line, sizeof(line),
			 "invalid frequency -F '99.5': give a whole number of Hz from 1 to %s "
			 "(kernel.perf_event_max_sample_rate)", max);
		expect_line(ARGV(bin, cmd, "-F", "99.5"), line);
		expect_line(ARGV(bin, cmd, "--freq", "99.5"), line);
		snprintf(line, sizeof(line),
			 "invalid frequency -F '0': give a whole number of Hz from 1 to %s "
			 "(kernel.perf_event_max_sample_rate)", max);
		expect_line(ARGV(bin, cmd, "-F", "0"), line);
		expect_prefix(ARGV(bin, cmd, "-F", "fast"), "invalid frequency -F 'fast': ");
		expect_prefix(ARGV(bin, cmd, "-F", ""), "invalid frequency -F '': ");
		expect_prefix(ARGV(bin, cmd, "-F", "1e9"), "invalid frequency -F '1e9': ");
	}
	/* 99.0 is 99 for all: parsing goes on to the next, bad, option */
	expect_prefix(ARGV(bin, "record", "-F", "99.0", "-d", "soon"), "invalid duration -d 'soon'");
	expect_prefix(ARGV(bin, "top", "-F", "99.0", "-i", "0"), "invalid interval -i '0'");
	expect_prefix(ARGV(bin, "agent", "-F", "99.0", "--interval", "0"),
		      "invalid interval --interval '0'");
}

static void test_each_kind_one_wording(void **state)
{
	char *bin = (char *)h_bin();

	/* seconds */
	expect_line(ARGV(bin, "record", "-d", "-3"),
		    "invalid duration -d '-3': give seconds, more than 0 and at most 2592000");
	expect_line(ARGV(bin, "record", "-d", "0"),
		    "invalid duration -d '0': give seconds, more than 0 and at most 2592000");
	expect_line(ARGV(bin, "top", "-i", "0.1"),
		    "invalid interval -i '0.1': give seconds from 0.2 to 3600");
	expect_line(ARGV(bin, "agent", "--interval", "90000"),
		    "invalid interval --interval '90000': give seconds from 1 to 86400");
	expect_line(ARGV(bin, "agent", "--interval", "nan"),
		    "invalid interval --interval 'nan': give seconds from 1 to 86400");
	/* counts */
	expect_line(ARGV(bin, "top", "-n", "0"),
		    "invalid count -n '0': give a whole number of refreshes from 1 to 2147483647");
	expect_line(ARGV(bin, "diff", "-n", "2.5", "a", "b"),
		    "invalid count -n '2.5': give a whole number of functions from 1 to 100000");
	expect_line(ARGV(bin, "agent", "--keep", "-1"),
		    "invalid count --keep '-1': give a whole number of windows from 1 to 10000000");
	expect_line(ARGV(bin, "agent", "--top", " 5"),
		    "invalid count --top ' 5': give a whole number of processes from 1 to 10000");
	/* sizes */
	expect_line(ARGV(bin, "agent", "--keep-bytes", "5Q"),
		    "invalid size --keep-bytes '5Q': give bytes with an optional K, M or G suffix, "
		    "such as 500M");
	expect_line(ARGV(bin, "agent", "--keep-bytes", "-1M"),
		    "invalid size --keep-bytes '-1M': give bytes with an optional K, M or G suffix, "
		    "such as 500M");
	/* pid lists */
	expect_line(ARGV(bin, "record", "-p", "12abc"),
		    "invalid pid list -p '12abc': give process ids separated by commas, such as "
		    "1234,5678");
	expect_line(ARGV(bin, "record", "-p", "1,,-2"),
		    "invalid pid list -p '1,,-2': give process ids separated by commas, such as "
		    "1234,5678");
	expect_line(ARGV(bin, "record", "--pid", ","),
		    "invalid pid list -p ',': give process ids separated by commas, such as "
		    "1234,5678");
	/* listen addresses */
	expect_line(ARGV(bin, "agent", "--listen", "localhost:9741"),
		    "invalid address --listen 'localhost:9741': give a numeric ADDR:PORT such as "
		    "127.0.0.1:9741 or [::1]:9741, :PORT (every interface), or off");
	expect_line(ARGV(bin, "agent", "--listen", ":65536"),
		    "invalid address --listen ':65536': give a numeric ADDR:PORT such as "
		    "127.0.0.1:9741 or [::1]:9741, :PORT (every interface), or off");
	/* the generic ones, the same for each command */
	expect_line(ARGV(bin, "top", "--bogus"),
		    "unknown option '--bogus' (see: boundprof top --help)");
	expect_line(ARGV(bin, "agent", "-F"), "option -F needs a value (see: boundprof agent --help)");
}

/* a bad value fails before anything is created */
static void test_nothing_created(void **state)
{
	char *bin = (char *)h_bin();
	const char *dir = h_path("never");

	expect_prefix(ARGV(bin, "agent", "--dir", (char *)dir, "--listen", "nope"),
		      "invalid address --listen 'nope'");
	expect_prefix(ARGV(bin, "agent", "--listen", "nope", "--dir", (char *)dir),
		      "invalid address --listen 'nope'");
	assert_int_not_equal(access(dir, F_OK), 0);
	expect_prefix(ARGV(bin, "record", "-o", (char *)h_path("x.json"), "-F", "7.5"),
		      "invalid frequency -F '7.5'");
	assert_int_not_equal(access(h_path("x.json"), F_OK), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_frequency_same_everywhere, teardown),
		cmocka_unit_test_teardown(test_each_kind_one_wording, teardown),
		cmocka_unit_test_teardown(test_nothing_created, teardown),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
