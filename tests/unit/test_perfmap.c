// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/perfmap.h"
#include "unit/symfix/symfix_test.h"

static void parse_line__forms(void **state)
{
	uint64_t addr, size;
	const char *name;
	char buf[256];

	strcpy(buf, "7f0000001000 40 java.lang.String::hashCode\n");
	assert_int_equal(bp_perfmap__parse_line(buf, &addr, &size, &name), 0);
	assert_int_equal(addr, 0x7f0000001000ULL);
	assert_int_equal(size, 0x40);
	assert_string_equal(name, "java.lang.String::hashCode");

	strcpy(buf, "0x7F00 0X10 LazyCompile:~f /a b.js:1\r\n");
	assert_int_equal(bp_perfmap__parse_line(buf, &addr, &size, &name), 0);
	assert_int_equal(addr, 0x7f00);
	assert_int_equal(size, 0x10);
	assert_string_equal(name, "LazyCompile:~f /a b.js:1");

	strcpy(buf, "1000\t10\tname");
	assert_int_equal(bp_perfmap__parse_line(buf, &addr, &size, &name), 0);
	assert_string_equal(name, "name");
}

static void parse_line__bad__einval(void **state)
{
	static const char *const bad[] = {
		"", "\n", "zz 10 x", "1000 10", "1000 10 \n", "1000 0 zero", "1000 zz x",
		"1000x 10 x", "0x 10 x", "ffffffffffffffff 10 wraps",
		"11112222333344445 10 too_long",
	};
	uint64_t addr, size;
	const char *name;
	char buf[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		if (bp_perfmap__parse_line(buf, &addr, &size, &name) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	}
}

static void update__sample_file__overlap_newest_wins(void **state)
{
	struct bp_perfmap *pm = bp_perfmap__new();
	const struct bp_perfmap_sym *s;
	char path[PATH_MAX];

	assert_non_null(pm);
	sf_data_path(path, sizeof(path), "perf-sample.map");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 5);

	/* regenerated code: the later line covers the start of the older one */
	s = bp_perfmap__find(pm, 0x7f0000001010ULL);
	assert_non_null(s);
	assert_string_equal(s->name, "LazyCompile:*main /app/index.js:1");
	s = bp_perfmap__find(pm, 0x7f0000001030ULL);
	assert_non_null(s);
	assert_string_equal(s->name, "LazyCompile:~main /app/index.js:1");
	assert_int_equal(s->addr, 0x7f0000001000ULL);

	s = bp_perfmap__find(pm, 0x7f000000117fULL);
	assert_non_null(s);
	assert_string_equal(s->name, "Interpreter stub");
	assert_null(bp_perfmap__find(pm, 0x7f0000001180ULL));

	s = bp_perfmap__find(pm, 0x7f0000004001ULL);
	assert_non_null(s);
	assert_string_equal(s->name, "tab_separated");
	assert_null(bp_perfmap__find(pm, 0x7f0000003000ULL));
	assert_null(bp_perfmap__find(pm, 0x7f0000005000ULL));
	assert_null(bp_perfmap__find(pm, 0x1000));

	/* unchanged file: nothing re-read */
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 5);
	bp_perfmap__free(pm);
}

/*
 * /tmp is everyone's: a FIFO must not hang us, and a file of another user
 * (root included) must not name a process's frames.
 */
static void update__fifo_or_foreign_owner__refused(void **state)
{
	struct bp_perfmap *pm = bp_perfmap__new();
	struct bp_perfmap_stats st;
	char path[PATH_MAX];

	assert_non_null(pm);
	snprintf(path, sizeof(path), "%s/perf-77.map", sf_tmpdir());
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(bp_perfmap__update(pm, path), -EPERM);
	assert_int_equal(unlink(path), 0);

	/* ours, for a process of someone else: refused, also when we are root */
	sf_write_file(path, "1000 100 jitted\n", "w");
	bp_perfmap__set_owner(pm, getuid() + 1);
	assert_int_equal(bp_perfmap__update(pm, path), -EPERM);
	assert_int_equal(bp_perfmap__count(pm), 0);
	bp_perfmap__set_owner(pm, getuid());
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 1);
	if (getuid() == 0) {
		/* a file of uid 4242 for a process of uid 4243 is not read */
		sf_write_file(path, "2000 100 other\n", "a");
		assert_int_equal(chown(path, 4242, 4242), 0);
		bp_perfmap__set_owner(pm, 4243);
		assert_int_equal(bp_perfmap__update(pm, path), -EPERM);
		assert_null(bp_perfmap__find(pm, 0x2000));
		bp_perfmap__set_owner(pm, 4242);
		assert_int_equal(bp_perfmap__update(pm, path), 0);
		assert_non_null(bp_perfmap__find(pm, 0x2000));
	}
	bp_perfmap__stats(pm, &st);
	assert_int_equal(st.refused, getuid() == 0 ? 3 : 2);
	bp_perfmap__free(pm);
}

/* a symlink under the name is never followed, to a file of the owner's or not */
static void update__symlink__refused(void **state)
{
	struct bp_perfmap *pm = bp_perfmap__new();
	const char *dir = sf_tmpdir();
	char path[PATH_MAX], target[PATH_MAX], sub[PATH_MAX];
	struct bp_perfmap_stats st;

	assert_non_null(pm);
	bp_perfmap__set_owner(pm, getuid());
	snprintf(target, sizeof(target), "%s/secret", dir);
	sf_write_file(target, "1000 100 secret_function\n", "w");
	snprintf(path, sizeof(path), "%s/perf-78.map", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(bp_perfmap__update(pm, path), -ELOOP);
	assert_int_equal(bp_perfmap__count(pm), 0);

	/* nor a symlinked directory on the way */
	snprintf(sub, sizeof(sub), "%s/linkdir", dir);
	assert_int_equal(symlink(dir, sub), 0);
	snprintf(path, sizeof(path), "%s/linkdir/secret", dir);
	assert_true(bp_perfmap__update(pm, path) < 0);
	assert_int_equal(bp_perfmap__count(pm), 0);
	bp_perfmap__stats(pm, &st);
	assert_int_equal(st.refused, 2);
	bp_perfmap__free(pm);
}

/* in a process's root: an absolute link or ".." cannot leave it */
static void update_at__stays_in_root(void **state)
{
	struct bp_perfmap *pm = bp_perfmap__new();
	const char *dir = sf_tmpdir();
	char path[PATH_MAX];
	int root_fd;

	assert_non_null(pm);
	snprintf(path, sizeof(path), "%s/root", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/root/tmp", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	/* outside the root, where "../" would lead */
	snprintf(path, sizeof(path), "%s/perf-9.map", dir);
	sf_write_file(path, "1000 100 outside\n", "w");
	snprintf(path, sizeof(path), "%s/root/tmp/perf-9.map", dir);
	sf_write_file(path, "2000 100 inside\n", "w");
	snprintf(path, sizeof(path), "%s/root", dir);
	root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root_fd >= 0);

	assert_int_equal(bp_perfmap__update_at(pm, root_fd, "/tmp/perf-9.map"), 0);
	assert_non_null(bp_perfmap__find(pm, 0x2000));
	/* ".." at the root stays at the root: this is not the outside file */
	assert_true(bp_perfmap__update_at(pm, root_fd, "/../../perf-9.map") < 0);
	assert_null(bp_perfmap__find(pm, 0x1000));
	close(root_fd);
	bp_perfmap__free(pm);
}

/* a huge (sparse) map is refused from its size, before anything is read */
static void update__too_big__refused_unread(void **state)
{
	struct bp_perfmap_limits lim = { .max_size = 1 << 20 };
	struct bp_perfmap *pm = bp_perfmap__new();
	struct bp_perfmap_stats st;
	char path[PATH_MAX];

	assert_non_null(pm);
	bp_perfmap__set_limits(pm, &lim);
	snprintf(path, sizeof(path), "%s/perf-80.map", sf_tmpdir());
	sf_write_file(path, "1000 100 first\n", "w");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(truncate(path, (1 << 20) + 1), 0);
	assert_int_equal(bp_perfmap__update(pm, path), -EFBIG);
	/* what was read before stays */
	assert_non_null(bp_perfmap__find(pm, 0x1000));
	bp_perfmap__stats(pm, &st);
	assert_int_equal(st.refused, 1);
	/* the default bound is the documented one */
	bp_perfmap__set_limits(pm, NULL);
	assert_int_equal(truncate(path, BP_PERFMAP_SIZE_MAX + 1), 0);
	assert_int_equal(bp_perfmap__update(pm, path), -EFBIG);
	bp_perfmap__free(pm);
}

/*
 * A line longer than the bound is skipped whole, also when it has no end yet:
 * the next read goes on skipping it instead of buffering it.
 */
static void update__long_lines__skipped(void **state)
{
	struct bp_perfmap_limits lim = { .max_line = 64 };
	struct bp_perfmap *pm = bp_perfmap__new();
	struct bp_perfmap_stats st;
	char path[PATH_MAX], line[256];

	assert_non_null(pm);
	bp_perfmap__set_limits(pm, &lim);
	snprintf(path, sizeof(path), "%s/perf-81.map", sf_tmpdir());
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	sf_write_file(path, "1000 10 short\n2000 10 ", "w");
	sf_write_file(path, line, "a");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 1);
	/* the long line ends, a good one follows */
	sf_write_file(path, line, "a");
	sf_write_file(path, "\n3000 10 after\n", "a");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 2);
	assert_null(bp_perfmap__find(pm, 0x2000));
	assert_string_equal(bp_perfmap__find(pm, 0x3000)->name, "after");
	bp_perfmap__stats(pm, &st);
	assert_int_equal(st.lines_skipped, 1);
	bp_perfmap__free(pm);
}

/* the memory held is bounded: lines past it are dropped and counted */
static void update__memory_bound__lines_dropped(void **state)
{
	struct bp_perfmap_limits lim = { .max_mem = 64 * 1024 };
	struct bp_perfmap *pm = bp_perfmap__new();
	struct bp_perfmap_stats st;
	char path[PATH_MAX], line[128];
	FILE *f;
	int i;

	assert_non_null(pm);
	bp_perfmap__set_limits(pm, &lim);
	snprintf(path, sizeof(path), "%s/perf-82.map", sf_tmpdir());
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 0; i < 10000; i++) {
		snprintf(line, sizeof(line), "%x 10 function_number_%d\n", 0x1000 + i * 0x10, i);
		fputs(line, f);
	}
	fclose(f);
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_true(bp_perfmap__mem(pm) <= lim.max_mem);
	bp_perfmap__stats(pm, &st);
	assert_true(st.lines_dropped > 0);
	assert_int_equal(bp_perfmap__count(pm) + st.lines_dropped, 10000);
	/* the first ones were kept */
	assert_string_equal(bp_perfmap__find(pm, 0x1000)->name, "function_number_0");
	bp_perfmap__free(pm);
}

static void update__growth__reads_new_lines(void **state)
{
	struct bp_perfmap *pm = bp_perfmap__new();
	const struct bp_perfmap_sym *s;
	char path[PATH_MAX];

	assert_non_null(pm);
	snprintf(path, sizeof(path), "%s/perf-1234.map", sf_tmpdir());
	assert_int_equal(bp_perfmap__update(pm, path), -ENOENT);

	sf_write_file(path, "1000 100 first\n2000 100 second\n", "w");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 2);
	assert_null(bp_perfmap__find(pm, 0x3000));

	/* appended: one whole line, one still being written */
	sf_write_file(path, "3000 100 third\n4000 100 fou", "a");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 3);
	s = bp_perfmap__find(pm, 0x3050);
	assert_non_null(s);
	assert_string_equal(s->name, "third");
	assert_null(bp_perfmap__find(pm, 0x4000));

	sf_write_file(path, "rth\n", "a");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 4);
	s = bp_perfmap__find(pm, 0x40ff);
	assert_non_null(s);
	assert_string_equal(s->name, "fourth");
	s = bp_perfmap__find(pm, 0x1000);
	assert_non_null(s);
	assert_string_equal(s->name, "first");

	/* rewritten smaller: read again from the start */
	sf_write_file(path, "5000 10 fifth\n", "w");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 1);
	assert_null(bp_perfmap__find(pm, 0x1000));

	/* gone: what was read stays */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(bp_perfmap__update(pm, path), -ENOENT);
	s = bp_perfmap__find(pm, 0x5001);
	assert_non_null(s);
	assert_string_equal(s->name, "fifth");
	bp_perfmap__free(pm);
}

static void update__replaced_file__reread(void **state)
{
	struct bp_perfmap *pm = bp_perfmap__new();
	const char *dir = sf_tmpdir();
	char path[PATH_MAX], tmp[PATH_MAX];

	assert_non_null(pm);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	snprintf(tmp, sizeof(tmp), "%s/new", dir);
	sf_write_file(path, "1000 10 a\n", "w");
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	/* bigger, but another file: not an append */
	sf_write_file(tmp, "9000 10 other\n2000 10 b\n", "w");
	assert_int_equal(rename(tmp, path), 0);
	assert_int_equal(bp_perfmap__update(pm, path), 0);
	assert_int_equal(bp_perfmap__count(pm), 2);
	assert_null(bp_perfmap__find(pm, 0x1000));
	assert_non_null(bp_perfmap__find(pm, 0x9000));
	bp_perfmap__free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_line__forms),
		cmocka_unit_test(parse_line__bad__einval),
		cmocka_unit_test(update__sample_file__overlap_newest_wins),
		cmocka_unit_test_teardown(update__fifo_or_foreign_owner__refused, sf_cleanup),
		cmocka_unit_test_teardown(update__symlink__refused, sf_cleanup),
		cmocka_unit_test_teardown(update_at__stays_in_root, sf_cleanup),
		cmocka_unit_test_teardown(update__too_big__refused_unread, sf_cleanup),
		cmocka_unit_test_teardown(update__long_lines__skipped, sf_cleanup),
		cmocka_unit_test_teardown(update__memory_bound__lines_dropped, sf_cleanup),
		cmocka_unit_test_teardown(update__growth__reads_new_lines, sf_cleanup),
		cmocka_unit_test_teardown(update__replaced_file__reread, sf_cleanup),
	};

	return cmocka_run_group_tests_name("perfmap", tests, NULL, sf_cleanup);
}
