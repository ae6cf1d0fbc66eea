// SPDX-License-Identifier: GPL-2.0
/*
 * One case of a test binary: `make test T=BINARY:CASE` sets BP_TEST_CASE,
 * and every test binary is linked with -Wl,--wrap=_cmocka_run_group_tests
 * so that this runs first and hands the pattern to cmocka (1.1 has the
 * filter, but reads no environment variable for it). A pattern that
 * matches no case of the binary fails it, so that a typo is not a pass.
 */
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown);

static const char *pattern;
static size_t matched;

static void none_matched(void)
{
	if (!matched) {
		fprintf(stderr, "no test case matches BP_TEST_CASE=%s\n", pattern);
		_exit(1);
	}
}

int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown)
{
	size_t i, n = 0;

	if (!pattern) {
		pattern = getenv("BP_TEST_CASE");
		if (pattern && !*pattern)
			pattern = NULL;
		if (pattern)
			atexit(none_matched);
	}
	if (pattern) {
		for (i = 0; i < num_tests; i++)
			n += fnmatch(pattern, tests[i].name, 0) == 0;
		/* a group without the case: not even its group setup runs */
		if (!n)
			return 0;
		matched += n;
		cmocka_set_test_filter(pattern);
	}
	return __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
					      group_teardown);
}
