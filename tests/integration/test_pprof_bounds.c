// SPDX-License-Identifier: GPL-2.0
/*
 * `boundprof report` on small files that ask for much, as an unprivileged
 * user would hand them over: refused with one line and exit 2, within a
 * peak RSS (the child's VmHWM, read at its exit) set by the bounds of
 * export/pprof.h, not by what the file asks for.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "export/pprof.h"
#include "fuzz/pprof_gen.h"

#define NOBODY	65534

static int teardown(void **state)
{
	h_cleanup();
	return 0;
}

struct bounded_run {
	int exit_code;		/* -1: did not exit */
	long hwm_kb;		/* VmHWM at exit, -1 unknown */
	char err[1024];		/* its stderr */
};

static long vm_hwm_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * `boundprof report FILE` as nobody. Traced so that it stops at its exit,
 * while its memory is still there to read: wait4()'s ru_maxrss would count
 * this test's own (sanitizer-sized) RSS, which the child has until exec.
 */
static void report_as_nobody(const char *file, struct bounded_run *r)
{
	const char *errpath = h_path("report.err");
	int status, fd, sig;
	ssize_t n;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->exit_code = -1;
	r->hwm_kb = -1;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		if (fd < 0 || devnull < 0 || fchown(fd, NOBODY, NOBODY))
			_exit(126);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(fd, 2);
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			_exit(126);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(126);
		raise(SIGSTOP);
		execl(h_bin(), h_bin(), "report", file, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSTOPPED(status));
	assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL,
				(void *)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
					 PTRACE_O_EXITKILL)), 0);
	sig = 0;
	for (;;) {
		assert_int_equal(ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		sig = 0;
		if (status >> 8 == (SIGTRAP | PTRACE_EVENT_EXIT << 8))
			r->hwm_kb = vm_hwm_kb(pid);
		else if (status >> 8 != (SIGTRAP | PTRACE_EVENT_EXEC << 8))
			sig = WSTOPSIG(status);
	}
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	fd = open(errpath, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, r->err, sizeof(r->err) - 1);
	close(fd);
	r->err[n > 0 ? n : 0] = '\0';
}

/* a file nobody may read, in a directory nobody may enter */
static const char *write_file(const char *name, const struct bp_buf *data)
{
	const char *path = h_path(name);
	int fd;

	assert_int_equal(chmod(h_tmpdir(), 0711), 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data->data, data->len), (ssize_t)data->len);
	close(fd);
	return path;
}

static void expect_refused(const struct bounded_run *r, const char *reason, long max_kb)
{
	if (r->exit_code != 2 || !strstr(r->err, reason) || strchr(r->err, '\n') !=
	    r->err + strlen(r->err) - 1 || r->hwm_kb < 0 || r->hwm_kb > max_kb)
		fail_msg("exit %d, peak RSS %ld kB (bound %ld), stderr: %s(expected one line "
			 "with \"%s\")", r->exit_code, r->hwm_kb, max_kb, r->err, reason);
	print_message("exit %d, peak RSS %ld kB: %s", r->exit_code, r->hwm_kb, r->err);
}

/* one location of 100k lines, named 1000 times: 767 MiB before the bounds */
static void test_stack_bomb_refused_small(void **state)
{
	struct bp_buf raw = BP_BUF_INIT, gz = BP_BUF_INIT;
	struct bounded_run r;
	const char *file;

	assert_int_equal(pprof_gen_stacks(&raw, 100000, 1000, 1), 0);
	assert_int_equal(pprof_gen_gzip(raw.data, raw.len, 9, &gz), 0);
	print_message("bomb: %zu bytes of gzip, %zu decompressed\n", gz.len, raw.len);
	assert_true(gz.len < 512);
	file = write_file("bomb.pb.gz", &gz);
	report_as_nobody(file, &r);
	expect_refused(&r, "more than 256 lines", 32 * 1024);
	bp_buf_free(&raw);
	bp_buf_free(&gz);
}

/* a sample naming 100k locations: refused at its 4097th */
static void test_deep_sample_refused_small(void **state)
{
	struct bp_buf raw = BP_BUF_INIT, gz = BP_BUF_INIT;
	struct bounded_run r;
	const char *file;

	assert_int_equal(pprof_gen_stacks(&raw, 1, 100000, 1), 0);
	assert_int_equal(pprof_gen_gzip(raw.data, raw.len, 9, &gz), 0);
	file = write_file("deep.pb.gz", &gz);
	report_as_nobody(file, &r);
	expect_refused(&r, "sample 0 has more than 4096 locations", 32 * 1024);
	bp_buf_free(&raw);
	bp_buf_free(&gz);
}

/* 100k samples of the deepest stack allowed: refused once all samples reach 2^26 frames */
static void test_many_deep_samples_refused_small(void **state)
{
	struct bp_buf raw = BP_BUF_INIT, gz = BP_BUF_INIT;
	struct bounded_run r;
	const char *file;

	assert_int_equal(pprof_gen_stacks(&raw, BP_PPROF_MAX_LINES,
					  BP_PPROF_MAX_DEPTH / BP_PPROF_MAX_LINES, 100000), 0);
	assert_int_equal(pprof_gen_gzip(raw.data, raw.len, 9, &gz), 0);
	file = write_file("many.pb.gz", &gz);
	report_as_nobody(file, &r);
	expect_refused(&r, "more than 67108864 frames in all samples", 32 * 1024);
	bp_buf_free(&raw);
	bp_buf_free(&gz);
}

/* a process per sample, 200k of them: refused at the 65537th */
static void test_many_processes_refused(void **state)
{
	struct bp_buf raw = BP_BUF_INIT, gz = BP_BUF_INIT;
	struct bounded_run r;
	const char *file;

	assert_int_equal(pprof_gen_procs(&raw, 200000), 0);
	assert_int_equal(pprof_gen_gzip(raw.data, raw.len, 9, &gz), 0);
	print_message("processes: %zu bytes of gzip\n", gz.len);
	file = write_file("procs.pb.gz", &gz);
	report_as_nobody(file, &r);
	expect_refused(&r, "more than 65536 processes", 128 * 1024);
	bp_buf_free(&raw);
	bp_buf_free(&gz);
}

/* zeros past the decompressed bound: inflating stops there */
static void test_inflate_bomb_stops_at_the_bound(void **state)
{
	size_t n = (size_t)BP_PPROF_MAX_INFLATED + (1 << 20);
	struct bp_buf gz = BP_BUF_INIT;
	struct bounded_run r;
	const char *file;
	char *zeros = calloc(1, n);

	assert_non_null(zeros);
	assert_int_equal(pprof_gen_gzip(zeros, n, 1, &gz), 0);
	free(zeros);
	print_message("inflate bomb: %zu bytes of gzip\n", gz.len);
	file = write_file("zeros.pb.gz", &gz);
	report_as_nobody(file, &r);
	expect_refused(&r, "decompressed profile larger than 128 MiB",
		       (BP_PPROF_MAX_INFLATED >> 10) + 32 * 1024);
	bp_buf_free(&gz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_stack_bomb_refused_small, teardown),
		cmocka_unit_test_teardown(test_deep_sample_refused_small, teardown),
		cmocka_unit_test_teardown(test_many_deep_samples_refused_small, teardown),
		cmocka_unit_test_teardown(test_many_processes_refused, teardown),
		cmocka_unit_test_teardown(test_inflate_bomb_stops_at_the_bound, teardown),
	};

	return cmocka_run_group_tests_name("pprof_bounds", tests, NULL, NULL);
}
