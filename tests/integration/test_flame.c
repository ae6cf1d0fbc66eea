// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs end to end (root, real BPF): record the split fixture into
 * .html and .svg flame graphs, then drive both in headless Chromium with
 * tests/browser/flame.test.mjs (load offline without console errors, draw,
 * tooltip, zoom, reset, search, view switch).
 *
 * Needs node, Chromium (/usr/bin/chromium, or BP_CHROMIUM) and
 * tests/browser/node_modules (npm ci): the test dependency install.
 */
#include <setjmp.h>
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

static char script[4096];

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static void print_run(const char *what, const struct run *r)
{
	fprintf(stderr, "--- %s: exit %d\n--- stdout:\n%s--- stderr:\n%s---\n", what,
		r->exit_code, r->out, r->err);
}

/* what the browser test needs; NULL when all there, else what is missing */
static const char *missing(void)
{
	static char what[4200];
	const char *src = getenv("BP_SRC") ? getenv("BP_SRC") : ".";
	const char *chromium = getenv("BP_CHROMIUM") ? getenv("BP_CHROMIUM") : "/usr/bin/chromium";
	char path[4096];
	struct run r;

	snprintf(script, sizeof(script), "%s/tests/browser/flame.test.mjs", src);
	if (access(script, R_OK))
		return "tests/browser/flame.test.mjs (is BP_SRC the source root?)";
	if (h_run(ARGV("node", "--version"), 30, &r) || r.exit_code) {
		h_run_free(&r);
		return "node (apt-get install nodejs npm)";
	}
	h_run_free(&r);
	if (access(chromium, X_OK)) {
		snprintf(what, sizeof(what), "%s (apt-get install chromium)", chromium);
		return what;
	}
	snprintf(path, sizeof(path), "%s/tests/browser/node_modules/playwright-core/package.json",
		 src);
	if (access(path, R_OK)) {
		snprintf(what, sizeof(what),
			 "%s/tests/browser/node_modules (npm ci in tests/browser)", src);
		return what;
	}
	return NULL;
}

static void test_flame_in_browser(void **state)
{
	const char *html = h_path("split.html"), *svg = h_path("split.svg");
	const char *why = missing();
	struct stat st;
	struct run r;
	char *doc;

	if (why)
		fail_msg("the browser test cannot run: missing %s. Run the test dependency "
			 "install (make test-deps as root: npm ci in tests/browser, "
			 "apt-get install chromium)", why);

	assert_int_equal(h_run(ARGV((char *)h_bin(), "record", "-F", "499", "-o", (char *)html,
				    "-o", (char *)svg, "--", (char *)h_fixture("split"), "2"),
			       60, &r), 0);
	if (r.exit_code)
		print_run("record -o split.html -o split.svg -- split 2", &r);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	assert_int_equal(stat(html, &st), 0);
	assert_true(st.st_size > 0);
	assert_int_equal(stat(svg, &st), 0);
	assert_true(st.st_size > 0);

	/* the recording is in there: the process, its hot function, a verdict */
	doc = h_slurp(html, NULL);
	assert_non_null(doc);
	assert_non_null(strstr(doc, "\"split ["));
	/* a box per function: split has its DWARF, but lines are --lines' */
	assert_non_null(strstr(doc, "\"alpha\""));
	assert_null(strstr(doc, "\"alpha (split.c:"));
	assert_non_null(strstr(doc, "\"verdict\":{\"class\":"));
	free(doc);

	assert_int_equal(h_run(ARGV("node", script, (char *)html, (char *)svg), 300, &r), 0);
	fprintf(stderr, "%s", r.out);
	if (r.exit_code) {
		print_run("node tests/browser/flame.test.mjs split.html split.svg", &r);
		fail_msg("the flame graphs failed in the browser (output above)");
	}
	assert_non_null(strstr(r.out, "all checks passed"));
	h_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_flame_in_browser, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("flame", tests, NULL, NULL);
}
