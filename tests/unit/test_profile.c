// SPDX-License-Identifier: GPL-2.0
/* profile: interning, frame identity, stacks, sample aggregation, processes */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "collect/cpus.h"
#include "proc/procinfo.h"
#include "model/profile.h"

static void intern__same_string__same_pointer(void **state)
{
	struct bp_profile *p = bp_profile__new();
	char a[] = "alpha", b[] = "alpha";
	const char *x = bp_profile__intern(p, a), *y = bp_profile__intern(p, b);

	assert_non_null(x);
	assert_ptr_equal(x, y);
	assert_ptr_not_equal(x, a);
	assert_ptr_not_equal(x, bp_profile__intern(p, "beta"));
	assert_null(bp_profile__intern(p, NULL));
	bp_profile__free(p);
}

static void frame__named_functions_merge_unnamed_addresses_do_not(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_frame f1 = { .name = "alpha", .module = "split", .offset = 0x1190 };
	struct bp_frame f2 = { .name = "alpha", .module = "split", .offset = 0x11a4 };
	struct bp_frame k = { .name = "alpha", .module = "split", .offset = 0x1190, .kernel = true };
	struct bp_frame u1 = { .module = "gzip", .offset = 0x4330 };
	struct bp_frame u2 = { .module = "gzip", .offset = 0x4313 };
	struct bp_frame u3 = { .module = "gzip", .offset = 0x4330 };
	int64_t a = bp_profile__frame(p, &f1);

	/* two addresses of one function are one frame */
	assert_int_equal(bp_profile__frame(p, &f2), a);
	/* a kernel function of the same name is not */
	assert_int_not_equal(bp_profile__frame(p, &k), a);
	assert_int_not_equal(bp_profile__frame(p, &u1), bp_profile__frame(p, &u2));
	assert_int_equal(bp_profile__frame(p, &u1), bp_profile__frame(p, &u3));
	/* the first address seen is kept as the representative */
	assert_int_equal(p->frames[a].offset, 0x1190);
	assert_int_equal(p->nr_frames, 4);
	bp_profile__free(p);
}

static void frame__missing_module__becomes_unknown(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_frame f = { .offset = 0x10 };
	char buf[64];
	int64_t id = bp_profile__frame(p, &f);

	assert_true(id >= 0);
	assert_string_equal(p->frames[id].module, "[unknown]");
	assert_string_equal(bp_frame_label(&p->frames[id], true, buf, sizeof(buf)), "[unknown]+0x10");
	bp_profile__free(p);
}

static void frame_label__kernel_suffix_and_offsets(void **state)
{
	struct bp_frame k = { .name = "schedule", .module = "[kernel]", .kernel = true };
	struct bp_frame u = { .module = "libfoo.so", .offset = 0xabc };
	char buf[64];

	assert_string_equal(bp_frame_label(&k, true, buf, sizeof(buf)), "schedule_[k]");
	assert_string_equal(bp_frame_label(&k, false, buf, sizeof(buf)), "schedule");
	assert_string_equal(bp_frame_label(&u, true, buf, sizeof(buf)), "libfoo.so+0xabc");
	/*
	 * an offset of 0 from a mapping is an offset all the same: JIT code
	 * sampled at its page's first byte (issue 23); only an address with
	 * no base at all has none
	 */
	u.module = "[anon]";
	u.offset = 0;
	assert_string_equal(bp_frame_label(&u, true, buf, sizeof(buf)), "[anon]+0x0");
	u.module = "libfoo.so";
	assert_string_equal(bp_frame_label(&u, true, buf, sizeof(buf)), "libfoo.so+0x0");
	u.module = "[unknown]";
	assert_string_equal(bp_frame_label(&u, true, buf, sizeof(buf)), "[unknown]");
	k.name = NULL;
	assert_string_equal(bp_frame_label(&k, true, buf, sizeof(buf)), "[kernel]_[k]");
	k.name = "schedule";
	u.module = "libfoo.so";
	u.offset = 0xabc;
	/* a known line names the source file's base name */
	u.name = "distance_matrix";
	u.file = "/src/dm/main.rs";
	u.line = 3;
	assert_string_equal(bp_frame_label(&u, true, buf, sizeof(buf)), "distance_matrix (main.rs:3)");
	u.file = "dm.py";
	assert_string_equal(bp_frame_label(&u, false, buf, sizeof(buf)), "distance_matrix (dm.py:3)");
	/* a line without a file, or a file without a line, is not shown */
	u.line = 0;
	assert_string_equal(bp_frame_label(&u, false, buf, sizeof(buf)), "distance_matrix");
	k.file = "kernel/sched/core.c";
	k.line = 6700;
	assert_string_equal(bp_frame_label(&k, true, buf, sizeof(buf)), "schedule (core.c:6700)_[k]");
}

static void stack__dedup_and_frames_root_first(void **state)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t s1[] = { 1, 2, 3 }, s2[] = { 1, 2 }, s3[] = { 1, 2, 3 }, nr, i;
	int64_t a = bp_profile__stack(p, s1, 3), b = bp_profile__stack(p, s2, 2);
	const uint32_t *fr;

	assert_int_not_equal(a, b);
	assert_int_equal(bp_profile__stack(p, s3, 3), a);
	fr = bp_profile__stack_frames(p, a, &nr);
	assert_int_equal(nr, 3);
	assert_memory_equal(fr, s1, sizeof(s1));
	/* many stacks: the pool and the index grow without losing any */
	for (i = 0; i < 5000; i++) {
		uint32_t st[4] = { i, i + 1, i + 2, i + 3 };

		assert_int_equal(bp_profile__stack(p, st, 4), i + 2);
	}
	for (i = 0; i < 5000; i++) {
		uint32_t st[4] = { i, i + 1, i + 2, i + 3 };

		assert_int_equal(bp_profile__stack(p, st, 4), i + 2);
	}
	bp_profile__free(p);
}

static void add__same_key_merges_other_keys_do_not(void **state)
{
	struct bp_profile *p = bp_profile__new();

	assert_int_equal(bp_profile__add(p, 10, 11, BP_KIND_ONCPU, 0, 2, 20), 0);
	assert_int_equal(bp_profile__add(p, 10, 11, BP_KIND_ONCPU, 0, 3, 30), 0);
	assert_int_equal(bp_profile__add(p, 10, 12, BP_KIND_ONCPU, 0, 1, 10), 0);
	assert_int_equal(bp_profile__add(p, 10, 11, BP_KIND_IO, 0, 1, 10), 0);
	assert_int_equal(p->nr_samples, 3);
	assert_int_equal(p->samples[0].count, 5);
	assert_int_equal(p->samples[0].ns, 50);
	bp_profile__free(p);
}

static void proc__pointers_stay_valid_as_the_table_grows(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_proc *first = bp_profile__proc(p, 1, true);
	uint32_t i;

	assert_non_null(first);
	assert_null(bp_profile__proc(p, 2, false));
	for (i = 2; i < 2000; i++)
		assert_non_null(bp_profile__proc(p, i, true));
	assert_ptr_equal(bp_profile__proc(p, 1, false), first);
	assert_int_equal(first->pid, 1);
	assert_non_null(bp_proc__thread(first, 7, "worker"));
	assert_ptr_equal(bp_proc__thread(first, 7, "worker"), &first->threads[0]);
	assert_int_equal(first->nr_threads, 1);
	bp_profile__free(p);
}

static void proc_wall__clipped_to_the_window(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_proc *pr = bp_profile__proc(p, 1, true);

	p->start_ns = 1000;
	p->end_ns = 5000;
	assert_int_equal(bp_profile__proc_wall_ns(p, pr), 4000);
	pr->start_ns = 2000;
	assert_int_equal(bp_profile__proc_wall_ns(p, pr), 3000);
	pr->end_ns = 2500;
	assert_int_equal(bp_profile__proc_wall_ns(p, pr), 500);
	pr->start_ns = 500;
	pr->end_ns = 9000;
	assert_int_equal(bp_profile__proc_wall_ns(p, pr), 4000);
	bp_profile__free(p);
}

static void cpu_list__ranges_and_garbage(void **state)
{
	int *c, n;

	n = bp_parse_cpu_list("0-3,8,10-11\n", &c);
	assert_int_equal(n, 7);
	assert_int_equal(c[0], 0);
	assert_int_equal(c[3], 3);
	assert_int_equal(c[4], 8);
	assert_int_equal(c[6], 11);
	free(c);
	n = bp_parse_cpu_list("5", &c);
	assert_int_equal(n, 1);
	assert_int_equal(c[0], 5);
	free(c);
	assert_int_equal(bp_parse_cpu_list("", &c), -EINVAL);
	assert_int_equal(bp_parse_cpu_list("3-1", &c), -EINVAL);
	assert_int_equal(bp_parse_cpu_list("a-b", &c), -EINVAL);
	assert_int_equal(bp_parse_cpu_list("1,,2", &c), -EINVAL);
	assert_int_equal(bp_parse_cpu_list("0-99999", &c), -EINVAL);
	assert_null(c);
}

static void stat_parse__comm_with_spaces_and_parens(void **state)
{
	const char *line = "4242 (a (b) c) R 17 4242 4242 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 1 0 "
			   "987654 1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0";
	char comm[16];
	uint32_t ppid;
	uint64_t start;

	assert_int_equal(bp_procinfo_parse_stat(line, comm, sizeof(comm), &ppid, &start), 0);
	assert_string_equal(comm, "a (b) c");
	assert_int_equal(ppid, 17);
	assert_int_equal(start, 987654);
	assert_int_equal(bp_procinfo_parse_stat("garbage", comm, sizeof(comm), &ppid, &start),
			 -EINVAL);
	assert_int_equal(bp_procinfo_parse_stat("1 (x) R", comm, sizeof(comm), &ppid, &start),
			 -EINVAL);
}

static void procinfo__reads_ourselves(void **state)
{
	struct bp_procinfo pi;

	assert_int_equal(bp_procinfo_read(NULL, getpid(), &pi), 0);
	assert_string_equal(pi.comm, "test_profile");
	assert_int_equal(pi.ppid, getppid());
	assert_non_null(pi.cmdline);
	assert_non_null(strstr(pi.cmdline, "test_profile"));
	/* we started before now */
	assert_true(pi.start_ns <= bp_now_ns());
	bp_procinfo_free(&pi);
	assert_int_equal(bp_procinfo_read("/nonexistent-proc", 1, &pi), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(intern__same_string__same_pointer),
		cmocka_unit_test(frame__named_functions_merge_unnamed_addresses_do_not),
		cmocka_unit_test(frame__missing_module__becomes_unknown),
		cmocka_unit_test(frame_label__kernel_suffix_and_offsets),
		cmocka_unit_test(stack__dedup_and_frames_root_first),
		cmocka_unit_test(add__same_key_merges_other_keys_do_not),
		cmocka_unit_test(proc__pointers_stay_valid_as_the_table_grows),
		cmocka_unit_test(proc_wall__clipped_to_the_window),
		cmocka_unit_test(cpu_list__ranges_and_garbage),
		cmocka_unit_test(stat_parse__comm_with_spaces_and_parens),
		cmocka_unit_test(procinfo__reads_ourselves),
	};

	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
