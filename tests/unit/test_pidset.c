// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/pidset.h"

/*
 * The kernel's /proc against the set: we are in it, and so is our parent;
 * a child is while it lives (a zombie too: /proc still lists it) and is not
 * once reaped; pid 0 never is; an unreadable root is an error, and an
 * empty set.
 */
static void read__live_processes_only(void **state)
{
	struct bp_pidset ps = { 0 };
	pid_t child;
	int status;

	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	/* a zombie until reaped */
	assert_int_equal(bp_pidset__read(&ps, "/proc"), 0);
	assert_true(ps.n > 2);
	assert_true(bp_pidset__has(&ps, getpid()));
	assert_true(bp_pidset__has(&ps, getppid()));
	assert_true(bp_pidset__has(&ps, child));
	assert_false(bp_pidset__has(&ps, 0));
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(bp_pidset__read(&ps, "/proc"), 0);
	assert_true(bp_pidset__has(&ps, getpid()));
	assert_false(bp_pidset__has(&ps, child));
	bp_pidset__free(&ps);
	assert_int_equal(bp_pidset__read(&ps, "/nonexistent"), -ENOENT);
	assert_int_equal(ps.n, 0);
	assert_false(bp_pidset__has(&ps, getpid()));
	bp_pidset__free(&ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read__live_processes_only),
	};

	return cmocka_run_group_tests_name("pidset", tests, NULL, NULL);
}
