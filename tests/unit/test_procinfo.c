// SPDX-License-Identifier: GPL-2.0
/* proc/procinfo: whose a process is, from /proc/PID/status. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <unistd.h>

#include "proc/procinfo.h"

static void parse_status__euid_and_innermost_nspid(void **state)
{
	uid_t euid = 99;
	pid_t nspid = 1;

	assert_int_equal(bp_procinfo_parse_status("Name:\tx\nUid:\t1000\t1001\t1002\t1003\n"
						  "Gid:\t5\t5\t5\t5\nNSpid:\t4242\t17\t7\n",
						  &euid, &nspid), 0);
	assert_int_equal(euid, 1001);
	assert_int_equal(nspid, 7);

	/* an old kernel: no NSpid line, nspid untouched */
	nspid = 55;
	assert_int_equal(bp_procinfo_parse_status("Uid:\t0\t0\t0\t0\n", &euid, &nspid), 0);
	assert_int_equal(euid, 0);
	assert_int_equal(nspid, 55);
}

static void parse_status__bad__einval(void **state)
{
	static const char *const bad[] = {
		"", "Name:\tx\n", "Uid:\t1000\n", "Uid:\tx\ty\n", "Uid:\t1\t-2\t3\t4\n",
		"Uid:\t1\t99999999999999999999999\t3\t4\n", "Uid:\t1\t4294967295\t1\t1\n",
		"XUid:\t1\t2\t3\t4\n",
	};
	uid_t euid;
	pid_t nspid;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (bp_procinfo_parse_status(bad[i], &euid, &nspid) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
}

static void read_ids__ourselves_and_gone(void **state)
{
	uid_t euid = 12345;
	pid_t nspid = 0;

	assert_int_equal(bp_procinfo_read_ids(NULL, getpid(), &euid, &nspid), 0);
	assert_int_equal(euid, geteuid());
	assert_true(nspid > 0);
	assert_int_equal(bp_procinfo_read_ids("/nonexistent-proc", 1, &euid, &nspid), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_status__euid_and_innermost_nspid),
		cmocka_unit_test(parse_status__bad__einval),
		cmocka_unit_test(read_ids__ourselves_and_gone),
	};

	return cmocka_run_group_tests_name("procinfo", tests, NULL, NULL);
}
