// SPDX-License-Identifier: GPL-2.0
/*
 * The memory-bandwidth state file (proc/membw.h): what is written reads
 * back the same, the traffic window's calibration with it; a file from a
 * hand or a disk that lies is refused whole, or loses only its window
 * calibration (which is then measured again).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proc/membw.h"

static struct bp_membw sample(void)
{
	struct bp_membw m = {
		.gbs_1 = 38.6, .gbs_n = 92.8, .threads = 2, .bytes = 267386880,
		.cache_bytes = 25165824, .when = 1796371200,
		.probe_err = 0, .probe_stream_gbs = 37.2, .probe_seen_gbs = 0.03,
		.probe_visible = 0.03 / 37.2, .probe_floor = false,
	};

	snprintf(m.cpu, sizeof(m.cpu), "AMD EPYC");
	snprintf(m.probe_boot, sizeof(m.probe_boot), "7c1e2f1a-3b7d-4c52-9a1e-0f3d2b6c8a90");
	return m;
}

static void state__round_trip__window_kept(void **state)
{
	struct bp_membw m = sample(), r;
	char text[2048];

	assert_int_equal(bp_membw_format(&m, text, sizeof(text)), 0);
	assert_non_null(strstr(text, "\"traffic_window\""));
	assert_int_equal(bp_membw_parse(text, strlen(text), &r), 0);
	assert_string_equal(r.cpu, "AMD EPYC");
	assert_true(r.gbs_1 == m.gbs_1 && r.gbs_n == m.gbs_n);
	assert_string_equal(r.probe_boot, m.probe_boot);
	assert_int_equal(r.probe_err, 0);
	assert_true(r.probe_stream_gbs == m.probe_stream_gbs);
	assert_true(r.probe_seen_gbs == m.probe_seen_gbs);
	assert_true(r.probe_visible == m.probe_visible);

	/* a window that could not be opened is kept as such: not tried on every run */
	m.probe_err = -13;
	m.probe_stream_gbs = m.probe_seen_gbs = m.probe_visible = 0;
	assert_int_equal(bp_membw_format(&m, text, sizeof(text)), 0);
	assert_int_equal(bp_membw_parse(text, strlen(text), &r), 0);
	assert_string_equal(r.probe_boot, m.probe_boot);
	assert_int_equal(r.probe_err, -13);

	/* uncalibrated: no object written, none read */
	m.probe_boot[0] = '\0';
	assert_int_equal(bp_membw_format(&m, text, sizeof(text)), 0);
	assert_null(strstr(text, "traffic_window"));
	assert_int_equal(bp_membw_parse(text, strlen(text), &r), 0);
	assert_string_equal(r.probe_boot, "");
}

/* a bad window loses the window, never the bandwidth figures */
static void state__bad_window__measured_again(void **state)
{
	static const char *const windows[] = {
		"{\"boot_id\": \"b\", \"error\": 0, \"stream_gbs\": 0, \"seen_gbs\": 1, \"visible\": 1}",
		"{\"boot_id\": \"b\", \"error\": 0, \"stream_gbs\": 30, \"seen_gbs\": -1, \"visible\": 0.1}",
		"{\"boot_id\": \"b\", \"error\": 0, \"stream_gbs\": 30, \"seen_gbs\": 1, \"visible\": \"x\"}",
		"{\"boot_id\": \"\", \"error\": 0, \"stream_gbs\": 30, \"seen_gbs\": 1, \"visible\": 0.1}",
		"{\"boot_id\": \"b\", \"error\": 5, \"stream_gbs\": 30, \"seen_gbs\": 1, \"visible\": 0.1}",
		"{\"boot_id\": \"0123456789012345678901234567890123456789xx\", \"error\": 0, "
		"\"stream_gbs\": 30, \"seen_gbs\": 1, \"visible\": 0.1}",
		"[1, 2]",
	};
	struct bp_membw r;
	char text[2048];
	size_t i;

	for (i = 0; i < sizeof(windows) / sizeof(windows[0]); i++) {
		snprintf(text, sizeof(text), "{\"version\": 2, \"cpu\": \"AMD EPYC\", "
			 "\"measured_unix_s\": 1, \"one_thread_gbs\": 38.6, \"gbs\": 92.8, "
			 "\"threads\": 2, \"bytes\": 3, \"cache_bytes\": 0, "
			 "\"traffic_window\": %s}", windows[i]);
		assert_int_equal(bp_membw_parse(text, strlen(text), &r), 0);
		assert_true(r.gbs_1 == 38.6);
		assert_string_equal(r.probe_boot, "");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(state__round_trip__window_kept),
		cmocka_unit_test(state__bad_window__measured_again),
	};

	return cmocka_run_group_tests_name("membw", tests, NULL, NULL);
}
