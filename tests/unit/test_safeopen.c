// SPDX-License-Identifier: GPL-2.0
/* Opening and reading files that someone else controls: util/safeopen, util/readfile. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/readfile.h"
#include "util/safeopen.h"
#include "unit/symfix/symfix_test.h"

/* both resolvers: openat2(), and the walk used where it is missing */
static const unsigned int modes[] = { 0, BP_OPEN_WALK };

static int try_open(int root_fd, const char *path, unsigned int flags)
{
	struct bp_open_opts o = { .flags = flags };
	int fd = bp_open_untrusted(root_fd, path, &o, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return fd;
}

static void open__plain_file__both_resolvers(void **state)
{
	const char *dir = sf_tmpdir();
	char path[PATH_MAX];
	struct stat st;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/f", dir);
	sf_write_file(path, "hello\n", "w");
	for (i = 0; i < 2; i++) {
		struct bp_open_opts o = { .flags = modes[i] };

		fd = bp_open_untrusted(AT_FDCWD, path, &o, &st);
		assert_true(fd >= 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_size, 6);
		/* non-blocking and close-on-exec */
		assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		close(fd);
		assert_int_equal(try_open(AT_FDCWD, "/nonexistent/x", modes[i]), -ENOENT);
	}
}

static void open__symlinks__refused(void **state)
{
	const char *dir = sf_tmpdir();
	char target[PATH_MAX], link[PATH_MAX], via[PATH_MAX], dlink[PATH_MAX];
	size_t i;

	snprintf(target, sizeof(target), "%s/target", dir);
	sf_write_file(target, "secret\n", "w");
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(target, link), 0);
	snprintf(dlink, sizeof(dlink), "%s/dirlink", dir);
	assert_int_equal(symlink(dir, dlink), 0);
	snprintf(via, sizeof(via), "%s/dirlink/target", dir);
	for (i = 0; i < 2; i++) {
		assert_int_equal(try_open(AT_FDCWD, link, modes[i]), -ELOOP);
		assert_true(try_open(AT_FDCWD, via, modes[i]) < 0);
		/* /proc's magic links neither */
		assert_true(try_open(AT_FDCWD, "/proc/self/root/etc/hostname", modes[i]) < 0);
		assert_int_equal(try_open(AT_FDCWD, target, modes[i]), 0);
	}
}

static void open__fifo_and_dir__refused_without_blocking(void **state)
{
	const char *dir = sf_tmpdir();
	char fifo[PATH_MAX];
	size_t i;

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0666), 0);
	for (i = 0; i < 2; i++) {
		/* a blocking open of a FIFO with no writer would never return */
		assert_int_equal(try_open(AT_FDCWD, fifo, modes[i]), -EPERM);
		assert_int_equal(try_open(AT_FDCWD, dir, modes[i]), -EPERM);
		assert_int_equal(try_open(AT_FDCWD, "/dev/null", modes[i]), -EPERM);
	}
}

static void open__in_root__cannot_leave(void **state)
{
	const char *dir = sf_tmpdir();
	char path[PATH_MAX];
	size_t i;
	int root;

	snprintf(path, sizeof(path), "%s/root", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/root/in", dir);
	sf_write_file(path, "in\n", "w");
	snprintf(path, sizeof(path), "%s/out", dir);
	sf_write_file(path, "out\n", "w");
	snprintf(path, sizeof(path), "%s/root", dir);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0);
	for (i = 0; i < 2; i++) {
		/* absolute paths start at the root */
		assert_int_equal(try_open(root, "/in", modes[i]), 0);
		assert_int_equal(try_open(root, "in", modes[i]), 0);
		assert_true(try_open(root, "/../out", modes[i]) < 0);
		assert_true(try_open(root, "../out", modes[i]) < 0);
	}
	/* the walk refuses ".." outright */
	assert_int_equal(try_open(root, "/../root/in", BP_OPEN_WALK), -EXDEV);
	close(root);
}

static void open__owner_readable_size(void **state)
{
	const char *dir = sf_tmpdir();
	struct bp_open_opts o = { 0 };
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/f", dir);
	sf_write_file(path, "0123456789", "w");
	assert_int_equal(chmod(path, 0600), 0);

	o.flags = BP_OPEN_OWNER;
	o.uid = getuid() + 1;
	assert_int_equal(bp_open_untrusted(AT_FDCWD, path, &o, NULL), -EPERM);
	o.uid = getuid();
	fd = bp_open_untrusted(AT_FDCWD, path, &o, NULL);
	assert_true(fd >= 0);
	close(fd);

	/* readable: the owner's, or everyone's to read */
	o.flags = BP_OPEN_READABLE;
	o.uid = getuid() + 1;
	assert_int_equal(bp_open_untrusted(AT_FDCWD, path, &o, NULL), -EPERM);
	assert_int_equal(chmod(path, 0644), 0);
	fd = bp_open_untrusted(AT_FDCWD, path, &o, NULL);
	assert_true(fd >= 0);
	close(fd);

	o.flags = 0;
	o.max_size = 9;
	assert_int_equal(bp_open_untrusted(AT_FDCWD, path, &o, NULL), -EFBIG);
	o.max_size = 10;
	fd = bp_open_untrusted(AT_FDCWD, path, &o, NULL);
	assert_true(fd >= 0);
	close(fd);
}

/* --- bp_read_lines ------------------------------------------------------- */

struct got {
	int n;
	char lines[8][80];
};

static int got_line(char *line, size_t len, void *ctx)
{
	struct got *g = ctx;

	assert_int_equal(strlen(line), len);
	if (g->n < 8)
		snprintf(g->lines[g->n], sizeof(g->lines[0]), "%s", line);
	g->n++;
	return 0;
}

static int lines_of(const char *text, struct bp_lines *lr, struct got *g)
{
	const char *dir = sf_tmpdir();
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/lines", dir);
	sf_write_file(path, text, "w");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	memset(g, 0, sizeof(*g));
	err = bp_read_lines(fd, lr, got_line, g);
	close(fd);
	return err;
}

static void lines__bounds(void **state)
{
	struct bp_lines lr = { .max_line = 8 };
	struct got g;

	assert_int_equal(lines_of("a\nbb\n\ncut", &lr, &g), 0);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.lines[1], "bb");
	assert_string_equal(g.lines[2], "");
	assert_true(lr.partial);
	assert_int_equal(lr.consumed, 6);

	lr = (struct bp_lines){ .max_line = 8, .take_partial = true };
	assert_int_equal(lines_of("a\ncut", &lr, &g), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.lines[1], "cut");

	/* too long, ended or not: skipped, counted, the next line is read */
	lr = (struct bp_lines){ .max_line = 8 };
	assert_int_equal(lines_of("12345678\n123456789\nok\n1234567890123", &lr, &g), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.lines[0], "12345678");
	assert_string_equal(g.lines[1], "ok");
	assert_int_equal(lr.too_long, 2);
	/* stopped inside the last one: a later read goes on skipping it */
	assert_true(lr.skipping);
	assert_false(lr.partial);

	lr = (struct bp_lines){ .max_line = 8, .skipping = true };
	assert_int_equal(lines_of("rest of it\nnext\n", &lr, &g), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.lines[0], "next");
	assert_int_equal(lr.too_long, 0);

	lr = (struct bp_lines){ .max_line = 8, .max_lines = 2 };
	assert_int_equal(lines_of("1\n2\n3\n4\n", &lr, &g), 0);
	assert_int_equal(g.n, 2);
	assert_true(lr.truncated);

	lr = (struct bp_lines){ .max_line = 8, .max_bytes = 4 };
	assert_int_equal(lines_of("1\n2\n3\n4\n", &lr, &g), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(lr.consumed, 4);
}

/* a file with no newline at all costs one buffer, not its size */
static void lines__no_newline__bounded_memory(void **state)
{
	struct bp_lines lr = { .max_line = 4096 };
	const char *dir = sf_tmpdir();
	char path[PATH_MAX];
	struct got g = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/sparse", dir);
	sf_write_file(path, "", "w");
	assert_int_equal(truncate(path, 64 << 20), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bp_read_lines(fd, &lr, got_line, &g), 0);
	close(fd);
	assert_int_equal(g.n, 0);
	assert_int_equal(lr.too_long, 1);
	assert_int_equal(lr.consumed, 64 << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(open__plain_file__both_resolvers, sf_cleanup),
		cmocka_unit_test_teardown(open__symlinks__refused, sf_cleanup),
		cmocka_unit_test_teardown(open__fifo_and_dir__refused_without_blocking, sf_cleanup),
		cmocka_unit_test_teardown(open__in_root__cannot_leave, sf_cleanup),
		cmocka_unit_test_teardown(open__owner_readable_size, sf_cleanup),
		cmocka_unit_test_teardown(lines__bounds, sf_cleanup),
		cmocka_unit_test_teardown(lines__no_newline__bounded_memory, sf_cleanup),
	};

	return cmocka_run_group_tests_name("safeopen", tests, NULL, sf_cleanup);
}
