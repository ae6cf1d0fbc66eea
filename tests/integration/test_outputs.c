// SPDX-License-Identifier: GPL-2.0
/*
 * record's output files, for real (root, real BPF): 0600 whatever the umask,
 * out of other users' reach; and a SIGHUP (a closed terminal, a hang-up sent
 * to it) ends the recording as SIGTERM does: every output written, no
 * temporary left, the command's status passed on.
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

/* entries of the test directory whose name starts with '.': temporaries left behind */
static int hidden_files(void)
{
	struct dirent *de;
	DIR *d = opendir(h_tmpdir());
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* until record has created its n temporaries, i.e. is recording */
static void wait_hidden(int n, pid_t pid)
{
	int i;

	for (i = 0; hidden_files() < n; i++) {
		if (i == 200 || waitpid(pid, NULL, WNOHANG) == pid)
			fail_msg("record did not create its %d outputs", n);
		h_sleep(0.1);
	}
}

static void test_outputs_0600_whatever_the_umask(void **state)
{
	static const char *const exts[] = { "json", "pb.gz", "folded", "html" };
	char cmd[4096], path[1024];
	struct run r;
	size_t i;

	snprintf(cmd, sizeof(cmd), "umask 000; exec %s record -d 1 -o %s -o %s -o %s -o %s", h_bin(),
		 h_path("out.json"), h_path("out.pb.gz"), h_path("out.folded"),
		 h_path("out.html"));
	assert_int_equal(h_run(ARGV("sh", "-c", cmd), 60, &r), 0);
	if (r.exit_code)
		fprintf(stderr, "record: %d\n%s", r.exit_code, r.err);
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	for (i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		snprintf(path, sizeof(path), "%s/out.%s", h_tmpdir(), exts[i]);
		fprintf(stderr, "umask 000: %s is %04o\n", path, mode_of(path));
		assert_int_equal(mode_of(path), 0600);
	}
	/* the replay: another user, who may reach the directory, reads none of them */
	assert_int_equal(chmod(h_tmpdir(), 0711), 0);
	snprintf(cmd, sizeof(cmd), "cat %s/out.json >/dev/null 2>&1 || exit 7", h_tmpdir());
	assert_int_equal(h_run(ARGV("setpriv", "--reuid=nobody", "--regid=nogroup",
				    "--clear-groups", "sh", "-c", cmd), 30, &r), 0);
	assert_int_equal(r.exit_code, 7);
	h_run_free(&r);
}

/* SIGHUP to `record -a`: exit 0 with the outputs, as for SIGTERM */
static void test_sighup_ends_record_like_sigterm(void **state)
{
	int sigs[] = { SIGTERM, SIGHUP }, i, err_fd;
	char json[1024], pb[1024];
	struct bp_json *rep;
	struct run r;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		snprintf(json, sizeof(json), "%s", h_path(i ? "hup.json" : "term.json"));
		snprintf(pb, sizeof(pb), "%s", h_path(i ? "hup.pb.gz" : "term.pb.gz"));
		pid = h_spawn2(ARGV((char *)h_bin(), "record", "-a", "-o", json, "-o", pb), NULL,
			       &err_fd);
		assert_true(pid > 0);
		/* recording: the temporaries exist, and it samples (later on a busy machine) */
		wait_hidden(2, pid);
		assert_int_equal(h_wait_recording(pid, 60), 0);
		h_sleep(1.5);
		kill(pid, sigs[i]);
		assert_int_equal(h_wait(pid, -1, err_fd, 30, &r), 0);
		fprintf(stderr, "record -a, %s: exit %d%s%s\n", strsignal(sigs[i]), r.exit_code,
			r.err_len ? ": " : "", r.err);
		assert_false(r.signaled);
		assert_int_equal(r.exit_code, 0);
		h_run_free(&r);
		rep = h_json_file(json);
		assert_non_null(rep);
		assert_true(bp_json_num(bp_json_get(rep, "duration_s")) >= 1.0);
		bp_json_free(rep);
		assert_int_equal(mode_of(pb), 0600);
		assert_int_equal(hidden_files(), 0);
	}
}

/* SIGHUP sent to `record -- COMMAND`: passed on, outputs written, its status returned */
static void test_sighup_record_command(void **state)
{
	const char *json = h_path("cmd.json");
	struct bp_json *rep;
	struct run r;
	int err_fd;
	pid_t pid;

	pid = h_spawn2(ARGV((char *)h_bin(), "record", "-o", (char *)json, "--",
			    (char *)h_fixture("sleeper"), "60"), NULL, &err_fd);
	assert_true(pid > 0);
	wait_hidden(1, pid);
	assert_int_equal(h_wait_recording(pid, 60), 0);
	h_sleep(1.5);
	kill(pid, SIGHUP);
	assert_int_equal(h_wait(pid, -1, err_fd, 30, &r), 0);
	fprintf(stderr, "record -- sleeper, SIGHUP: exit %d%s%s\n", r.exit_code,
		r.err_len ? ": " : "", r.err);
	/* the command died of the SIGHUP passed on to it: 128 + 1, as a shell says */
	assert_false(r.signaled);
	assert_int_equal(r.exit_code, 129);
	h_run_free(&r);
	rep = h_json_file(json);
	assert_non_null(rep);
	assert_non_null(h_find_proc(rep, "sleeper"));
	bp_json_free(rep);
	assert_int_equal(hidden_files(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_outputs_0600_whatever_the_umask, teardown),
		cmocka_unit_test_teardown(test_sighup_ends_record_like_sigterm, teardown),
		cmocka_unit_test_teardown(test_sighup_record_command, teardown),
	};

	if (!h_need_root())
		return 0;
	return cmocka_run_group_tests_name("outputs", tests, NULL, NULL);
}
