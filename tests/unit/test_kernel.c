// SPDX-License-Identifier: GPL-2.0
/* the oldest-kernel check: uname releases as distributions spell them */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "collect/loader.h"

static int at_least_min(const char *release)
{
	return bp_kernel_at_least(release, BP_KERNEL_MIN_MAJOR, BP_KERNEL_MIN_MINOR);
}

static void kernel__supported_releases__accepted(void **state)
{
	assert_int_equal(at_least_min("6.1.0-57-cloud-amd64"), 1);	/* Debian 12 */
	assert_int_equal(at_least_min("6.18.44-fc-v669"), 1);
	assert_int_equal(at_least_min("6.1"), 1);
	assert_int_equal(at_least_min("6.8.0-49-generic"), 1);	/* Ubuntu 24.04 */
	assert_int_equal(at_least_min("6.5.0-45-generic"), 1);	/* Ubuntu 22.04 HWE */
	assert_int_equal(at_least_min("10.0.0"), 1);
}

static void kernel__older_releases__refused(void **state)
{
	/* the perf_event program's hash maps must be preallocated there */
	assert_int_equal(at_least_min("6.0.19"), 0);
	assert_int_equal(at_least_min("5.19.0-50-generic"), 0);	/* Ubuntu 22.04 HWE, 2022 */
	assert_int_equal(at_least_min("5.17.0"), 0);
	assert_int_equal(at_least_min("5.15.0-119-generic"), 0);	/* Ubuntu 22.04 GA: no bpf_loop */
	assert_int_equal(at_least_min("5.16.20"), 0);
	assert_int_equal(at_least_min("5.14.0-427.13.1.el9_4.x86_64"), 0);	/* RHEL 9 */
	assert_int_equal(at_least_min("5.10.0-30-amd64"), 0);		/* Debian 11 */
	assert_int_equal(at_least_min("4.19.0-27-amd64"), 0);
	assert_int_equal(at_least_min("5.4.0"), 0);
}

static void kernel__bounds__exact(void **state)
{
	assert_int_equal(bp_kernel_at_least("6.1.0", 6, 1), 1);
	assert_int_equal(bp_kernel_at_least("6.0.19", 6, 1), 0);
	assert_int_equal(bp_kernel_at_least("7.0", 6, 1), 1);
	/* minor 10 is after minor 9, not before minor 2 */
	assert_int_equal(bp_kernel_at_least("5.10.0", 5, 9), 1);
}

static void kernel__unparsable__einval(void **state)
{
	assert_int_equal(bp_kernel_at_least(NULL, 5, 15), -EINVAL);
	assert_int_equal(bp_kernel_at_least("", 5, 15), -EINVAL);
	assert_int_equal(bp_kernel_at_least("linux", 5, 15), -EINVAL);
	assert_int_equal(bp_kernel_at_least("6", 5, 15), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kernel__supported_releases__accepted),
		cmocka_unit_test(kernel__older_releases__refused),
		cmocka_unit_test(kernel__bounds__exact),
		cmocka_unit_test(kernel__unparsable__einval),
	};

	return cmocka_run_group_tests_name("kernel", tests, NULL, NULL);
}
