// SPDX-License-Identifier: GPL-2.0
/* analysis and exporters on a synthetic profile: folded, JSON (parsed back), text */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "export/folded.h"
#include "export/report_json.h"
#include "util/json.h"
#include "model/funcview.h"
#include "model/profile.h"
#include "export/report_text.h"
#include "unit/builders.h"

/* Debian 12's cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

#define PERIOD 10101010ULL	/* cpu-clock at 99 Hz, ns */

/* on-CPU samples of one thread, as collect adds them: the thread is in its process's table */
static void oncpu(struct bp_profile *p, uint32_t pid, uint32_t tid, uint32_t stack, uint64_t count)
{
	bld_sample(p, pid, tid, BP_KIND_ONCPU, stack, count, count * PERIOD);
	assert_non_null(bp_proc__thread(bp_profile__proc(p, pid, false), tid, NULL));
}

/*
 * split (pid 100): main;alpha 75 over two threads, main;beta 25
 * rec (pid 300):   main;rec;rec;rec 6, main;rec;schedule[k] 4 (recursion counts once)
 * gz;ip (pid 200): gzip+0x10 3, dup (two files, one name) 1 + 2
 */
static int setup(void **state)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t main_, alpha, beta, rec, sched, unk, dupa, dupb, rmain;

	assert_non_null(p);
	p->start_ns = 1000000000ULL;
	p->end_ns = 5000000000ULL;
	p->hz = 99;
	p->ncpus = 2;
	p->stats.v[BP_STAT_SAMPLES] = 800;
	p->stats.v[BP_STAT_IDLE] = 400;
	p->stats.v[BP_STAT_COUNTED] = 400;
	p->stats.v[BP_STAT_MAP_FULL] = 3;
	p->stats.v[BP_STAT_USTACK_TRUNC] = 2;

	bld_proc(p, 100, 0, "split", "split 3");
	bld_proc(p, 200, 0, "gz;ip", "gzip \xff\xfe -9")->exited = true;
	bld_proc(p, 300, 0, "rec", "rec")->end_ns = 3000000000ULL;

	main_ = bld_frame(p, "main", "split", "/bin/split", NULL, 0x1200, false);
	alpha = bld_frame(p, "alpha", "split", "/bin/split", NULL, 0x1190, false);
	beta = bld_frame(p, "beta", "split", "/bin/split", NULL, 0x11d0, false);
	rmain = bld_frame(p, "main", "rec", "/bin/rec", NULL, 0x1000, false);
	rec = bld_frame(p, "rec", "rec", "/bin/rec", NULL, 0x1100, false);
	sched = bld_frame(p, "schedule", "[kernel]", NULL, NULL, 0x1234, true);
	unk = bld_frame(p, NULL, "gzip", "/bin/gzip", NULL, 0x10, false);
	dupa = bld_frame(p, "dup", "libx.so", "/a/libx.so", NULL, 0x10, false);
	dupb = bld_frame(p, "dup", "libx.so", "/b/libx.so", NULL, 0x10, false);
	assert_int_not_equal(dupa, dupb);

	oncpu(p, 100, 100, BLD_STACK(p, main_, alpha), 60);
	oncpu(p, 100, 101, BLD_STACK(p, main_, alpha), 15);
	oncpu(p, 100, 100, BLD_STACK(p, main_, beta), 25);
	oncpu(p, 300, 300, BLD_STACK(p, rmain, rec, rec, rec), 6);
	oncpu(p, 300, 300, BLD_STACK(p, rmain, rec, sched), 4);
	oncpu(p, 200, 200, BLD_STACK(p, unk), 3);
	oncpu(p, 200, 200, BLD_STACK(p, dupa), 1);
	oncpu(p, 200, 200, BLD_STACK(p, dupb), 2);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	bp_profile__free(*state);
	return 0;
}

static void folded__exact_sorted_sanitized_merged(void **state)
{
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_export_folded(*state, &b), 0);
	assert_string_equal(bp_buf_str(&b),
			    "gz:ip;dup 3\n"
			    "gz:ip;gzip+0x10 3\n"
			    "rec;main;rec;rec;rec 6\n"
			    "rec;main;rec;schedule_[k] 4\n"
			    "split;main;alpha 75\n"
			    "split;main;beta 25\n");
	bp_buf_free(&b);
}

static void folded__empty_profile__empty_output(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_export_folded(p, &b), 0);
	assert_int_equal(b.len, 0);
	bp_buf_free(&b);
	bp_profile__free(p);
}

static void summary__fractions_and_order(void **state)
{
	struct bp_profile *p = *state;
	struct bp_summary s;
	const struct bp_proc_summary *split, *rec;

	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(s.nr_procs, 3);
	split = &s.procs[0];
	rec = &s.procs[1];
	assert_int_equal(split->proc->pid, 100);
	assert_int_equal(split->samples, 100);
	assert_int_equal(split->threads, 2);
	assert_near(split->on_cpu_s, 100 * PERIOD / 1e9, 1e-9);
	assert_near(split->wall_s, 4.0, 1e-9);
	assert_string_equal(p->frames[split->hot[0].frame].name, "alpha");
	assert_near(split->hot[0].self_frac, 0.75, 1e-12);
	assert_near(split->hot[1].self_frac, 0.25, 1e-12);
	/* main never is a leaf, so it is no hotspot, but it is 100% inclusive */
	assert_int_equal(split->nr_hot, 2);
	assert_string_equal(p->frames[split->incl[0].frame].name, "main");
	assert_near(split->incl[0].total_frac, 1.0, 1e-12);

	assert_int_equal(rec->proc->pid, 300);
	assert_near(rec->wall_s, 2.0, 1e-9);
	/* a recursive function counts once per stack: total never exceeds 1 */
	assert_string_equal(p->frames[rec->hot[0].frame].name, "rec");
	assert_near(rec->hot[0].self_frac, 0.6, 1e-12);
	assert_near(rec->hot[0].total_frac, 1.0, 1e-12);
	assert_string_equal(p->frames[rec->hot[1].frame].name, "schedule");
	assert_near(rec->hot[1].self_frac, 0.4, 1e-12);

	assert_near(s.busy_frac, 0.5, 1e-12);
	assert_int_equal(s.lost_samples, 3);
	bp_summary_free(&s);
}

static void summary__cycles_event__seconds_from_counts(void **state)
{
	struct bp_profile *p = *state;
	struct bp_summary s;

	p->pmu = true;
	p->event = "cycles";
	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_near(s.procs[0].on_cpu_s, 100.0 / 99, 1e-9);
	bp_summary_free(&s);
}

static void json__parses_back_with_the_contract_keys(void **state)
{
	struct bp_profile *p = *state;
	struct bp_buf b = BP_BUF_INIT;
	struct bp_summary s;
	struct bp_json *j;
	const struct bp_json *pr;
	char err[128];
	int64_t v;

	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_export_json(p, &s, true, &b), 0);
	j = bp_json_parse(b.data, b.len, err, sizeof(err));
	if (!j)
		fail_msg("report does not parse: %s", err);
	assert_int_equal(bp_json_int(bp_json_get(j, "version"), &v), 0);
	assert_int_equal(v, 1);
	assert_near(bp_json_num(bp_json_get(j, "duration_s")), 4.0, 1e-9);
	assert_near(bp_json_num(bp_json_path(j, "hz")), 99, 0);
	assert_near(bp_json_num(bp_json_path(j, "system.cpus")), 2, 0);
	assert_int_equal(bp_json_bool(bp_json_path(j, "system.pmu")), 0);
	assert_int_equal(bp_json_len(bp_json_get(j, "processes")), 3);

	pr = bp_json_path(j, "processes[0]");
	assert_near(bp_json_num(bp_json_get(pr, "pid")), 100, 0);
	assert_string_equal(bp_json_str(bp_json_get(pr, "comm")), "split");
	assert_string_equal(bp_json_str(bp_json_get(pr, "cmdline")), "split 3");
	assert_near(bp_json_num(bp_json_get(pr, "wall_s")), 4.0, 1e-9);
	assert_near(bp_json_num(bp_json_get(pr, "on_cpu_s")), 100 * PERIOD / 1e9, 1e-9);
	assert_near(bp_json_num(bp_json_path(pr, "off_cpu_s.io")), 0, 0);
	assert_non_null(bp_json_path(pr, "off_cpu_s.runqueue"));
	assert_non_null(bp_json_path(pr, "off_cpu_s.lock"));
	assert_non_null(bp_json_path(pr, "off_cpu_s.sleep"));
	assert_non_null(bp_json_path(pr, "off_cpu_s.other"));
	assert_near(bp_json_num(bp_json_path(pr, "io.ops")), 0, 0);
	assert_non_null(bp_json_path(pr, "io.bytes"));
	assert_non_null(bp_json_path(pr, "io.wait_s"));
	assert_string_equal(bp_json_str(bp_json_path(pr, "verdict.class")), "unknown");
	assert_int_equal(bp_json_type(bp_json_path(pr, "verdict.evidence")), BP_JSON_ARRAY);
	assert_int_equal(bp_json_type(bp_json_path(pr, "verdict.levers")), BP_JSON_ARRAY);
	assert_string_equal(bp_json_str(bp_json_path(pr, "hotspots[0].function")), "alpha");
	assert_string_equal(bp_json_str(bp_json_path(pr, "hotspots[0].module")), "split");
	assert_near(bp_json_num(bp_json_path(pr, "hotspots[0].self")), 0.75, 1e-12);
	assert_near(bp_json_num(bp_json_path(pr, "hotspots[0].total")), 0.75, 1e-12);
	assert_string_equal(bp_json_str(bp_json_path(pr, "inclusive[0].function")), "main");

	/* unnamed frames are module+offset; arbitrary bytes in a cmdline stay valid JSON */
	pr = bp_json_path(j, "processes[2]");
	assert_string_equal(bp_json_str(bp_json_get(pr, "comm")), "gz;ip");
	assert_int_equal(bp_json_bool(bp_json_get(pr, "exited")), 1);
	assert_non_null(strstr(bp_json_str(bp_json_get(pr, "cmdline")), "\xef\xbf\xbd"));
	assert_string_equal(bp_json_str(bp_json_path(pr, "hotspots[0].function")), "gzip+0x10");
	assert_string_equal(bp_json_str(bp_json_path(pr, "hotspots[0].module")), "gzip");

	assert_near(bp_json_num(bp_json_path(j, "drops.samples")), 3, 0);
	assert_near(bp_json_num(bp_json_path(j, "drops.stacks")), 0, 0);
	assert_near(bp_json_num(bp_json_path(j, "drops_detail.user_stacks_truncated")), 2, 0);
	bp_json_free(j);
	bp_buf_free(&b);
	bp_summary_free(&s);
}

static void text__hotspots_as_fractions_and_losses(void **state)
{
	struct bp_profile *p = *state;
	struct bp_buf b = BP_BUF_INIT;
	struct bp_summary s;
	const char *t;

	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_report_text(p, &s, NULL, &b), 0);
	t = bp_buf_str(&b);
	assert_non_null(strstr(t, "\npid 100 split\n"));
	assert_non_null(strstr(t, "  1.01 s on-CPU, 4.00 s wall, 2 threads\n"));
	assert_non_null(strstr(t, "  75% of on-CPU time in alpha (split)\n"));
	assert_non_null(strstr(t, "  25% of on-CPU time in beta (split)\n"));
	assert_non_null(strstr(t, "  40% of on-CPU time in schedule [kernel]\n"));
	assert_non_null(strstr(t, "  50% of on-CPU time in unnamed code (gzip)\n"));
	/* 5 of 800 samples: one quiet line */
	assert_non_null(strstr(t, "\nlosses: under 1% of the samples (5 stacks or events; -v "
				  "lists them)\n"));
	assert_null(strstr(t, "2 user stacks truncated"));
	/* the split process comes before the smaller ones */
	assert_true(strstr(t, "pid 100") < strstr(t, "pid 300"));
	bp_buf_free(&b);
	bp_summary_free(&s);
}

static uint32_t line_frame(struct bp_profile *p, const char *name, const char *file,
			   uint32_t line)
{
	struct bp_frame f = { .name = name, .module = "hot", .path = "/bin/hot", .file = file,
			      .line = line, .offset = line * 16 };
	int64_t id = bp_profile__frame(p, &f);

	assert_true(id >= 0);
	return (uint32_t)id;
}

/* main on hot.c:23 and 24, alpha on 8 and 9, beta on 14, in that order; process hot (400) */
static struct bp_profile *hot_profile(uint32_t fr[5])
{
	static const struct {
		const char *name;
		uint32_t line;
	} lines[] = { { "main", 23 }, { "main", 24 }, { "alpha", 8 }, { "alpha", 9 },
		      { "beta", 14 } };
	struct bp_profile *p = bp_profile__new();
	unsigned int i;

	assert_non_null(p);
	p->start_ns = 1000000000ULL;
	p->end_ns = 2000000000ULL;
	p->hz = 99;
	p->ncpus = 2;
	bld_proc(p, 400, 0, "hot", "hot");
	for (i = 0; i < 5; i++)
		fr[i] = line_frame(p, lines[i].name, "src/hot.c", lines[i].line);
	return p;
}

/*
 * hot (pid 400): alpha 53 on hot.c:9 and 21 on hot.c:8, beta 26, each
 * called from its own line of main; rec (pid 500) recursing through two of
 * its lines: the advice takes a function whole, and counts it once a stack.
 */
static void summary__function_lines_together__recursion_once(void **state)
{
	uint32_t h[5], rm, r5, r6;
	struct bp_profile *p = hot_profile(h);
	struct bp_buf b_txt = BP_BUF_INIT, b_json = BP_BUF_INIT;
	const struct bp_proc_summary *hot, *rec;
	const struct bp_json *pr;
	struct bp_summary s;
	struct bp_json *j;
	char err[128];

	(void)state;
	bld_proc(p, 500, 0, "rec", "rec");
	rm = line_frame(p, "rmain", "rec.c", 30);
	r5 = line_frame(p, "rec", "rec.c", 5);
	r6 = line_frame(p, "rec", "rec.c", 6);
	oncpu(p, 400, 400, BLD_STACK(p, h[0], h[3]), 53);
	oncpu(p, 400, 400, BLD_STACK(p, h[0], h[2]), 21);
	oncpu(p, 400, 400, BLD_STACK(p, h[1], h[4]), 26);
	oncpu(p, 500, 500, BLD_STACK(p, rm, r5, r6, r5), 6);
	oncpu(p, 500, 500, BLD_STACK(p, rm, r6, r5, r6), 4);

	assert_int_equal(bp_summarize(p, 20, &s), 0);
	hot = s.procs[0].proc->pid == 400 ? &s.procs[0] : &s.procs[1];
	rec = s.procs[0].proc->pid == 500 ? &s.procs[0] : &s.procs[1];
	/* the lines stay in hotspots; the functions take them together */
	assert_int_equal(hot->nr_hot, 3);
	assert_int_equal(hot->nr_funcs, 2);
	assert_string_equal(p->frames[hot->funcs[0].frame].name, "alpha");
	assert_near(hot->funcs[0].self_frac, 0.74, 1e-12);
	assert_near(hot->funcs[0].total_frac, 0.74, 1e-12);
	assert_int_equal(hot->funcs[0].nr_lines, 2);
	assert_int_equal(p->frames[hot->funcs[0].lines[0].frame].line, 9);
	assert_near(hot->funcs[0].lines[0].self_frac, 0.53, 1e-12);
	assert_int_equal(p->frames[hot->funcs[0].lines[1].frame].line, 8);
	assert_near(hot->funcs[1].self_frac, 0.26, 1e-12);
	assert_int_equal(rec->nr_funcs, 1);
	assert_near(rec->funcs[0].self_frac, 1.0, 1e-12);
	assert_near(rec->funcs[0].total_frac, 1.0, 1e-12);
	assert_int_equal(rec->funcs[0].nr_lines, 2);

	assert_int_equal(bp_report_text(p, &s, NULL, &b_txt), 0);
	assert_non_null(strstr(bp_buf_str(&b_txt),
			       "  74% of on-CPU time in alpha (hot): hot.c:9 53%, hot.c:8 21%\n"));
	assert_non_null(strstr(bp_buf_str(&b_txt), "  26% of on-CPU time in beta (hot): hot.c:14\n"));

	assert_int_equal(bp_export_json(p, &s, true, &b_json), 0);
	j = bp_json_parse(b_json.data, b_json.len, err, sizeof(err));
	if (!j)
		fail_msg("report does not parse: %s", err);
	pr = bp_json_path(j, "processes[0]");
	if (bp_json_num(bp_json_get(pr, "pid")) != 400)
		pr = bp_json_path(j, "processes[1]");
	/* hotspots as documented: lines */
	assert_string_equal(bp_json_str(bp_json_path(pr, "hotspots[0].function")), "alpha");
	assert_near(bp_json_num(bp_json_path(pr, "hotspots[0].line")), 9, 0);
	assert_near(bp_json_num(bp_json_path(pr, "hotspots[0].self")), 0.53, 1e-12);
	assert_string_equal(bp_json_str(bp_json_path(pr, "functions[0].function")), "alpha");
	assert_near(bp_json_num(bp_json_path(pr, "functions[0].self")), 0.74, 1e-12);
	assert_near(bp_json_num(bp_json_path(pr, "functions[0].lines[1].line")), 8, 0);
	assert_near(bp_json_num(bp_json_path(pr, "functions[0].lines[1].self")), 0.21, 1e-12);
	bp_json_free(j);
	bp_buf_free(&b_json);
	bp_buf_free(&b_txt);
	bp_summary_free(&s);
	bp_profile__free(p);
}

/* main calls alpha and beta from two lines; fixture_lcg is inlined into alpha */
static void folded__function_view__a_frame_per_function(void **state)
{
	struct bp_frame inl = { .name = "lcg", .module = "hot", .file = "fixture.h", .line = 44,
				.inlined = true };
	uint32_t h[5], in44, in45;
	struct bp_profile *p = hot_profile(h), *v;
	struct bp_buf b = BP_BUF_INIT;

	(void)state;
	in44 = (uint32_t)bp_profile__frame(p, &inl);
	inl.line = 45;
	in45 = (uint32_t)bp_profile__frame(p, &inl);
	oncpu(p, 400, 400, BLD_STACK(p, h[0], h[3], in44), 50);
	oncpu(p, 400, 400, BLD_STACK(p, h[0], h[3], in45), 3);
	oncpu(p, 400, 400, BLD_STACK(p, h[0], h[2]), 21);
	oncpu(p, 400, 400, BLD_STACK(p, h[1], h[4]), 26);
	v = bp_func_view(p);
	assert_non_null(v);
	assert_int_equal(bp_export_folded(v, &b), 0);
	/* the inlined function stays a frame of its own */
	assert_string_equal(bp_buf_str(&b),
			    "hot;main;alpha 21\n"
			    "hot;main;alpha;lcg 53\n"
			    "hot;main;beta 26\n");
	/* the recording itself keeps its lines */
	bp_buf_reset(&b);
	assert_int_equal(bp_export_folded(p, &b), 0);
	assert_non_null(strstr(bp_buf_str(&b),
			       "hot;main (hot.c:23);alpha (hot.c:9);lcg (fixture.h:45) 3\n"));
	bp_buf_free(&b);
	bp_profile__free(v);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(folded__exact_sorted_sanitized_merged, setup, teardown),
		cmocka_unit_test(folded__empty_profile__empty_output),
		cmocka_unit_test_setup_teardown(summary__fractions_and_order, setup, teardown),
		cmocka_unit_test_setup_teardown(summary__cycles_event__seconds_from_counts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(json__parses_back_with_the_contract_keys, setup,
						teardown),
		cmocka_unit_test_setup_teardown(text__hotspots_as_fractions_and_losses, setup, teardown),
		cmocka_unit_test(summary__function_lines_together__recursion_once),
		cmocka_unit_test(folded__function_view__a_frame_per_function),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
