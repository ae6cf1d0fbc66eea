// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's local socket without a socket: the protocol's parsers and
 * printer (serve/ipc.h), the ptrace rule's /proc parsing (proc/access.h),
 * and the cut that keeps other users' processes out of a profile
 * (model/restrict.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "export/folded.h"
#include "model/merge.h"
#include "model/restrict.h"
#include "model/waits.h"
#include "proc/access.h"
#include "serve/ipc.h"
#include "unit/builders.h"
#include "util/buf.h"

static void request__good__parsed(void **state)
{
	static const char line[] = "boundprof/1 record pids=12,34 seconds=5 hz=49\n";
	struct bp_ipc_req r;
	char why[128];

	assert_int_equal(bp_ipc_parse_request(line, strlen(line), &r, why, sizeof(why)), 0);
	assert_int_equal(r.verb, BP_IPC_RECORD);
	assert_int_equal(r.nr_pids, 2);
	assert_int_equal(r.pids[0], 12);
	assert_int_equal(r.pids[1], 34);
	assert_int_equal(r.seconds, 5);
	assert_int_equal(r.hz, 49);
	assert_int_equal(bp_ipc_parse_request("stop\n", 5, &r, why, sizeof(why)), 0);
	assert_int_equal(r.verb, BP_IPC_STOP);
	assert_int_equal(bp_ipc_parse_request("boundprof/1 dump pids=7", 23, &r, why, sizeof(why)),
			 0);
	assert_int_equal(r.verb, BP_IPC_DUMP);
	assert_false(r.json);
	assert_int_equal(bp_ipc_parse_request("boundprof/1 dump pids=7 json=1", 30, &r, why,
					      sizeof(why)), 0);
	assert_true(r.json);
}

static void request__bad__one_reason_each(void **state)
{
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "GET / HTTP/1.1", "not a boundprof/1 request" },
		{ "boundprof/1 frob", "unknown request 'frob'" },
		{ "boundprof/1 record uid=0", "unknown key 'uid'" },
		{ "boundprof/1 record hz=1 hz=2", "given twice" },
		{ "boundprof/1 record hz=0", "bad value for hz" },
		{ "boundprof/1 record pids=1,", "bad value for pids" },
		{ "boundprof/1 record pids=99999999999", "bad value for pids" },
		{ "boundprof/1 record tree=1 pids=2", "give one of" },
		{ "boundprof/1 record cgroup=relative", "bad value for cgroup" },
		{ "boundprof/1 record cgroup=/a%0ab", "bad value for cgroup" },
		{ "boundprof/1 record cgroup=/a%4", "bad value for cgroup" },
		{ "boundprof/1 record  hz=1", "two spaces" },
		{ "boundprof/1 record hz", "expected KEY=VALUE" },
		{ "boundprof/1 record \x01", "not printable" },
		{ "boundprof/1 dump pids=7 json=0", "bad value for json" },
		{ "boundprof/1 dump pids=7 json=yes", "bad value for json" },
	};
	struct bp_ipc_req r;
	char why[128], big[BP_IPC_MAX_LINE + 10];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(bp_ipc_parse_request(bad[i].line, strlen(bad[i].line), &r, why,
						      sizeof(why)), -EINVAL);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': '%s', not '%s'", bad[i].line, why, bad[i].why);
	}
	memset(big, 'a', sizeof(big));
	assert_int_equal(bp_ipc_parse_request(big, sizeof(big), &r, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "longer than"));
	assert_int_equal(bp_ipc_line(big, sizeof(big)), -EMSGSIZE);
	assert_int_equal(bp_ipc_line("abc", 3), 0);
	assert_int_equal(bp_ipc_line("ab\ncd", 5), 3);
}

static void format__round_trip__encoded_cgroup(void **state)
{
	struct bp_ipc_req r = { .verb = BP_IPC_TOP, .have_cgroup = true, .hz = 99 }, back;
	char line[BP_IPC_MAX_LINE], why[128];
	int n;

	strcpy(r.cgroup, "/user.slice/a b%c");
	n = bp_ipc_format_request(&r, line, sizeof(line));
	assert_true(n > 0);
	assert_string_equal(line, "boundprof/1 top cgroup=/user.slice/a%20b%25c hz=99\n");
	assert_int_equal(bp_ipc_parse_request(line, n, &back, why, sizeof(why)), 0);
	assert_string_equal(back.cgroup, r.cgroup);
	assert_int_equal(back.hz, 99);
	r = (struct bp_ipc_req){ .verb = BP_IPC_DUMP, .nr_pids = 1, .pids = { 42 }, .json = true };
	n = bp_ipc_format_request(&r, line, sizeof(line));
	assert_string_equal(line, "boundprof/1 dump pids=42 json=1\n");
	assert_int_equal(bp_ipc_parse_request(line, n, &back, why, sizeof(why)), 0);
	assert_true(back.json);
	assert_int_equal(back.pids[0], 42);
}

static void reply__each_kind(void **state)
{
	struct bp_ipc_reply rep;
	char line[64];

	assert_int_equal(bp_ipc_parse_reply("ok record hz=99\n", 16, &rep), 0);
	assert_int_equal(rep.kind, BP_IPC_R_OK);
	assert_int_equal(rep.hz, 99);
	assert_int_equal(bp_ipc_parse_reply("profile 1234\n", 13, &rep), 0);
	assert_int_equal(rep.kind, BP_IPC_R_PROFILE);
	assert_int_equal(rep.len, 1234);
	assert_int_equal(bp_ipc_parse_reply("profile 999999999999", 20, &rep), -EINVAL);
	assert_int_equal(bp_ipc_parse_reply("dump 77\n", 8, &rep), 0);
	assert_int_equal(rep.kind, BP_IPC_R_DUMP);
	assert_int_equal(rep.len, 77);
	assert_int_equal(bp_ipc_parse_reply("dump x", 6, &rep), -EINVAL);
	assert_int_equal(bp_ipc_parse_reply("note a b\n", 9, &rep), 0);
	assert_string_equal(rep.text, "a b");
	assert_int_equal(bp_ipc_format_error(line, sizeof(line), 2, "bad\nthing"), 18);
	assert_string_equal(line, "error 2 bad?thing\n");
	assert_int_equal(bp_ipc_parse_reply(line, strlen(line), &rep), 0);
	assert_int_equal(rep.kind, BP_IPC_R_ERROR);
	assert_int_equal(rep.status, 2);
	assert_int_equal(bp_ipc_parse_reply("error 3 x", 9, &rep), -EINVAL);
	assert_int_equal(bp_ipc_parse_reply("hello", 5, &rep), -EINVAL);
}

static void status_ids__parsed_or_refused(void **state)
{
	uint32_t u[4], g[4];

	assert_int_equal(bp_status_ids("Name:\tx\nUid:\t1000\t1000\t0\t1000\nGid:\t5\t6\t7\t8\n", u,
				       g), 0);
	assert_int_equal(u[0], 1000);
	assert_int_equal(u[2], 0);
	assert_int_equal(g[3], 8);
	assert_int_equal(bp_status_ids("Uid:\t1\t2\t3\n", u, g), -EINVAL);
	assert_int_equal(bp_status_ids("Uid:\t1\t2\nGid:\t1\t2\t3\t4\n", u, g), -EINVAL);
	/* ourselves: ours to trace; pid 1 is root's */
	assert_int_equal(bp_may_trace(NULL, getpid(), getuid(), getgid()), 0);
	if (getuid() != 0)
		assert_int_equal(bp_may_trace(NULL, 1, getuid(), getgid()), -EPERM);
	assert_int_equal(bp_may_trace(NULL, 1, 12345, 12345), -EPERM);
}

static bool only_10(uint32_t pid, void *ctx)
{
	return pid == 10;
}

static void merge_only__other_process__nothing_of_it(void **state)
{
	struct bp_profile *p = bp_profile__new(), *q;
	struct bp_wake_row key = { .pid = 10, .waker_pid = 20, .comm = "secretwaker" };
	uint32_t fa = bld_frame(p, "mine", "a.out", NULL, NULL, 1, false);
	uint32_t fb = bld_frame(p, "theirs_secret_fn", "b.out", NULL, NULL, 2, false);
	uint32_t sa = BLD_STACK(p, fa), sb = BLD_STACK(p, fb);
	struct bp_buf b = BP_BUF_INIT;
	uint32_t i;

	bld_proc(p, 10, 1, "mine", "mine --x");
	bld_proc(p, 20, 1, "theirs", "theirs --password=hunter2");
	bld_sample(p, 10, 10, BP_KIND_ONCPU, sa, 5, 0);
	bld_sample(p, 20, 20, BP_KIND_ONCPU, sb, 7, 0);
	assert_non_null(bp_profile__wake_row(p, &key, true));
	p->machine_busy = 0.5;
	q = bp_profile__new_like(p, p->start_ns);
	assert_non_null(q);
	assert_int_equal(bp_profile__merge_only(q, p, only_10, NULL), 0);
	assert_int_equal(q->nr_procs, 1);
	assert_int_equal(q->procs[0]->pid, 10);
	assert_int_equal(q->nr_samples, 1);
	assert_int_equal(q->nr_frames, 1);
	assert_int_equal(q->nr_wake_rows, 0);
	assert_true(q->machine_busy == 0.5);
	for (i = 0; i < q->nr_strs; i++)
		assert_null(strstr(q->strs[i], "secret"));
	for (i = 0; i < q->nr_strs; i++)
		assert_null(strstr(q->strs[i], "hunter2"));
	assert_int_equal(bp_export_folded(q, &b), 0);
	assert_non_null(strstr(bp_buf_str(&b), "mine"));
	assert_null(strstr(bp_buf_str(&b), "theirs"));
	assert_true(bp_profile__bytes(q) > 0 && bp_profile__bytes(q) < bp_profile__bytes(p) * 2);
	bp_buf_free(&b);
	bp_profile__free(q);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request__good__parsed),
		cmocka_unit_test(request__bad__one_reason_each),
		cmocka_unit_test(format__round_trip__encoded_cgroup),
		cmocka_unit_test(reply__each_kind),
		cmocka_unit_test(status_ids__parsed_or_refused),
		cmocka_unit_test(merge_only__other_process__nothing_of_it),
	};

	return cmocka_run_group_tests_name("ipc", tests, NULL, NULL);
}
