// SPDX-License-Identifier: GPL-2.0
/* atomicfile: whole or nothing, exact mode whatever the umask, no symlink followed */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "util/atomicfile.h"

static char dir[256];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/bp-test-afile.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static const char *in(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

/* entries in dir, and the name of the one hidden entry if there is one */
static int entries(char *hidden, size_t len)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	if (hidden)
		hidden[0] = '\0';
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (hidden && de->d_name[0] == '.')
			snprintf(hidden, len, "%s", de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static void commit__hidden_until_renamed(void **state)
{
	struct bp_afile f = BP_AFILE_INIT;
	char hidden[256], buf[16] = "";
	struct stat st;
	FILE *fp;

	assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("out.json"), 0600), 0);
	/* only the temporary exists, beside the final name */
	assert_int_equal(entries(hidden, sizeof(hidden)), 1);
	assert_int_equal(strncmp(hidden, ".out.json.", 10), 0);
	assert_int_equal(strlen(hidden), 16);
	assert_int_not_equal(stat(in("out.json"), &st), 0);
	assert_int_equal(bp_afile_commit(&f, "{\"a\": 1}\n", 9), 0);
	assert_int_equal(entries(NULL, 0), 1);
	fp = fopen(in("out.json"), "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "{\"a\": 1}\n");
	/* a second abort after commit does nothing */
	bp_afile_abort(&f);
	assert_int_equal(entries(NULL, 0), 1);
}

/* written in parts: hidden until the commit, whole after it, nothing after an abort */
static void write__parts_then_commit_or_abort(void **state)
{
	struct bp_afile f = BP_AFILE_INIT;
	char buf[32] = "";
	FILE *fp;

	assert_int_equal(bp_afile_write(&f, "x", 1), -EBADF);
	assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("parts.json"), 0600), 0);
	assert_int_equal(bp_afile_write(&f, "{\"a\": ", 6), 0);
	assert_int_equal(bp_afile_write(&f, "12", 2), 0);
	assert_int_equal(entries(NULL, 0), 1);
	assert_int_not_equal(access(in("parts.json"), F_OK), 0);
	assert_int_equal(bp_afile_commit(&f, "}\n", 2), 0);
	fp = fopen(in("parts.json"), "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "{\"a\": 12}\n");

	assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("gone.json"), 0600), 0);
	assert_int_equal(bp_afile_write(&f, "half", 4), 0);
	bp_afile_abort(&f);
	assert_int_equal(entries(NULL, 0), 1);
}

static void mode__exact_whatever_the_umask(void **state)
{
	static const mode_t masks[] = { 0, 022, 077, 0277, 0777 };
	struct bp_afile f = BP_AFILE_INIT;
	struct stat st;
	mode_t old = umask(0);
	size_t i;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		umask(masks[i]);
		assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("m.pb.gz"), 0600), 0);
		assert_int_equal(bp_afile_commit(&f, "x", 1), 0);
		assert_int_equal(stat(in("m.pb.gz"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("m.pb.gz"), 0644), 0);
		assert_int_equal(bp_afile_commit(&f, "x", 1), 0);
		assert_int_equal(stat(in("m.pb.gz"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0644);
	}
	umask(old);
}

static void abort__leaves_nothing(void **state)
{
	struct bp_afile f = BP_AFILE_INIT;

	/* never opened: nothing to do */
	bp_afile_abort(&f);
	assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("a.folded"), 0600), 0);
	assert_int_equal(entries(NULL, 0), 1);
	bp_afile_abort(&f);
	assert_int_equal(entries(NULL, 0), 0);
}

static void open__directory_and_missing_parent__refused(void **state)
{
	struct bp_afile f = BP_AFILE_INIT;

	assert_int_equal(mkdir(in("d.json"), 0700), 0);
	assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("d.json"), 0600), -EISDIR);
	assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("no/such/x.json"), 0600), -ENOENT);
	assert_int_equal(entries(NULL, 0), 1);
}

static void dirfd__relative_names(void **state)
{
	struct bp_afile f = BP_AFILE_INIT;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	assert_true(dfd >= 0);
	assert_int_equal(bp_afile_open(&f, dfd, "w.json", 0600), 0);
	assert_int_equal(bp_afile_commit(&f, "{}", 2), 0);
	assert_int_equal(fstatat(dfd, "w.json", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 2);
	close(dfd);
}

static void final_symlink__replaced_not_followed(void **state)
{
	struct bp_afile f = BP_AFILE_INIT;
	char target[512];
	struct stat st;

	/* a link planted at the final name points elsewhere: the rename replaces the link */
	snprintf(target, sizeof(target), "%s", in("target"));
	assert_int_equal(symlink(target, in("p.json")), 0);
	assert_int_equal(bp_afile_open(&f, AT_FDCWD, in("p.json"), 0600), 0);
	assert_int_equal(bp_afile_commit(&f, "{}", 2), 0);
	assert_int_equal(lstat(in("p.json"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_not_equal(stat(target, &st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(commit__hidden_until_renamed, setup, teardown),
		cmocka_unit_test_setup_teardown(mode__exact_whatever_the_umask, setup, teardown),
		cmocka_unit_test_setup_teardown(abort__leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(open__directory_and_missing_parent__refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(dirfd__relative_names, setup, teardown),
		cmocka_unit_test_setup_teardown(write__parts_then_commit_or_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(final_symlink__replaced_not_followed, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("atomicfile", tests, NULL, NULL);
}
