// SPDX-License-Identifier: GPL-2.0
/*
 * analyze/groups: processes grouped by user, cgroup and unit, each group's
 * sums, busiest processes and verdict; the share of the run-queue time a
 * CPU quota explains; the group frame of folded stacks; the JSON keys.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/groups.h"
#include "analyze/verdict.h"
#include "builders.h"
#include "export/folded.h"
#include "export/report_json.h"
#include "util/json.h"

#define SEC 1000000000ULL
#define T0 (1000 * SEC)

#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.6g, expected %.6g", #a, a_, b_);              \
	} while (0)

static void ids(struct bp_profile *p, struct bp_proc *pr, uint32_t uid, const char *user,
		const char *cgroup, const char *unit)
{
	pr->have_ids = true;
	pr->uid = uid;
	pr->user = bp_profile__intern(p, user);
	pr->cgroup = bp_profile__intern(p, cgroup);
	pr->unit = bp_profile__intern(p, unit);
	pr->cg_v2 = pr->cgroup;
	pr->cg_cpu = pr->cgroup;
	pr->cg_memory = pr->cgroup;
}

/* a process busy for on_ns and queued for rq_ns over a 3 s window, one thread */
static struct bp_proc *busy(struct bp_profile *p, uint32_t pid, const char *comm, uint32_t stack,
			    uint64_t on_ns, uint64_t rq_ns, uint64_t sleep_ns)
{
	struct bp_proc *pr = bld_proc(p, pid, 1, comm, comm);

	bld_thread(pr, pid, comm, on_ns, pid);
	pr->threads[0].start_ns = T0;
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_RUNNING] = on_ns;
	pr->tl_ns[BP_TS_RUNQUEUE] = rq_ns;
	pr->tl_ns[BP_TS_SLEEP] = sleep_ns;
	bld_sample(p, pid, pid, BP_KIND_ONCPU, stack, on_ns / 10000000, on_ns);
	if (rq_ns)
		bld_sample(p, pid, pid, BP_KIND_RUNQUEUE, stack, 10, rq_ns);
	if (sleep_ns)
		bld_sample(p, pid, pid, BP_KIND_SLEEP, stack, 10, sleep_ns);
	return pr;
}

/*
 * Two users' jobs: nobody's three workers of one service, and daemon's
 * spinner under a 20% quota that cpu.stat says throttled it 2.1 s of 3 s
 * (its 2.4 s run-queue wait: 2.1 s of that is the quota's).
 */
static struct bp_profile *machine(void)
{
	struct bp_profile *p = bld_window(T0, 3 * SEC, 1.0);
	struct bp_cgroup *c;
	uint32_t f, st;

	f = bld_frame(p, "work", "svc", "/opt/svc", NULL, 0x10, false);
	st = BLD_STACK(p, f);
	ids(p, busy(p, 11, "worker", st, 1 * SEC, SEC / 2, SEC + SEC / 2), 65534, "nobody",
	    "/svc.slice/web.service", "web.service");
	ids(p, busy(p, 12, "worker", st, 1 * SEC, SEC / 2, SEC + SEC / 2), 65534, "nobody",
	    "/svc.slice/web.service", "web.service");
	ids(p, busy(p, 13, "worker", st, SEC / 2, SEC / 2, 2 * SEC), 65534, "nobody",
	    "/svc.slice/web.service/sub", "web.service");
	ids(p, busy(p, 20, "spin", st, 6 * SEC / 10, 24 * SEC / 10, 0), 1, "daemon", "/bp-quota",
	    NULL);
	/* a process whose facts were never read */
	busy(p, 30, "ghost", st, SEC / 10, 0, 2 * SEC);
	c = bp_profile__cgroup(p, BP_CGROUP_V2, "/bp-quota", true);
	assert_non_null(c);
	c->watched_ns = 3 * SEC;
	c->cpu_valid = true;
	c->quota_at = bp_profile__intern(p, "/bp-quota");
	c->quota_us = 20000;
	c->period_us = 100000;
	c->nr_periods = 30;
	c->nr_throttled = 29;
	c->throttled_ns = 21 * SEC / 10;
	c = bp_profile__cgroup(p, BP_CGROUP_V2, "/svc.slice/web.service", true);
	assert_non_null(c);
	c->watched_ns = 3 * SEC;
	c->cpu_valid = true;
	return p;
}

static const struct bp_group *group(const struct bp_groups *g, const char *name)
{
	uint32_t i;

	for (i = 0; i < g->nr; i++)
		if (!strcmp(g->g[i].name, name))
			return &g->g[i];
	fail_msg("no group %s", name);
	return NULL;
}

static void summarize(const struct bp_profile *p, struct bp_summary *s)
{
	assert_int_equal(bp_summarize(p, 5, s), 0);
	assert_int_equal(bp_verdicts(p, s), 0);
}

static const struct bp_proc_summary *summary_of(const struct bp_summary *s, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].proc->pid == pid)
			return &s->procs[i];
	fail_msg("pid %u not summarized", pid);
	return NULL;
}

static void throttle__quota_share_of_runqueue(void **state)
{
	struct bp_profile *p = machine();
	const struct bp_proc_summary *ps;
	struct bp_summary s;

	summarize(p, &s);
	ps = summary_of(&s, 20);
	assert_near(ps->off_s[BP_KIND_RUNQUEUE], 2.4, 1e-9);
	assert_near(ps->throttled_s, 2.1, 1e-9);
	assert_non_null(ps->verdict);
	assert_int_equal(ps->verdict->cls, BP_CLASS_THROTTLED);
	/* a cgroup without a quota explains none of its run queue */
	assert_near(summary_of(&s, 11)->throttled_s, 0, 0);
	assert_near(summary_of(&s, 30)->throttled_s, 0, 0);
	bp_summary_free(&s);

	/* throttled longer than anyone queued: capped at the run-queue time */
	bp_profile__cgroup(p, BP_CGROUP_V2, "/bp-quota", false)->throttled_ns = 9 * SEC;
	summarize(p, &s);
	assert_near(summary_of(&s, 20)->throttled_s, 2.4, 1e-9);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void groups__by_user_unit_and_cgroup(void **state)
{
	struct bp_profile *p = machine();
	const struct bp_group *g;
	struct bp_summary s;
	struct bp_groups gs;

	summarize(p, &s);
	assert_int_equal(bp_groups_build(p, &s, BP_GROUP_USER, &gs), 0);
	assert_int_equal(gs.nr, 3);
	g = group(&gs, "nobody");
	assert_int_equal(g->nr_procs, 3);
	assert_near(g->on_cpu_s, 2.5, 1e-9);
	assert_near(g->off_s[BP_KIND_RUNQUEUE], 1.5, 1e-9);
	/* the busiest first, by on-CPU and waits */
	assert_int_equal(g->nr_top, 3);
	assert_true(g->top[0]->proc->pid == 11 || g->top[0]->proc->pid == 12);
	assert_int_equal(g->top[2]->proc->pid, 13);
	g = group(&gs, "daemon");
	assert_int_equal(g->nr_procs, 1);
	assert_near(g->throttled_s, 2.1, 1e-9);
	assert_true(g->have_verdict);
	assert_int_equal(g->verdict.cls, BP_CLASS_THROTTLED);
	assert_non_null(g->cpu);
	assert_string_equal(g->cpu->quota_at, "/bp-quota");
	group(&gs, "?");
	/* most active first */
	assert_string_equal(gs.g[0].name, "nobody");
	bp_groups_free(&gs);

	/* the service's processes in a sub-cgroup are still the unit's */
	assert_int_equal(bp_groups_build(p, &s, BP_GROUP_UNIT, &gs), 0);
	g = group(&gs, "web.service");
	assert_int_equal(g->nr_procs, 3);
	assert_true(g->have_verdict);
	/* no unit: the cgroup path stands in */
	group(&gs, "/bp-quota");
	bp_groups_free(&gs);

	assert_int_equal(bp_groups_build(p, &s, BP_GROUP_CGROUP, &gs), 0);
	assert_int_equal(group(&gs, "/svc.slice/web.service")->nr_procs, 2);
	assert_int_equal(group(&gs, "/svc.slice/web.service/sub")->nr_procs, 1);
	bp_groups_free(&gs);
	bp_summary_free(&s);
	bp_profile__free(p);
}

/*
 * A user's busiest process spends 80% of its samples in libc's memcpy,
 * called from its own work(): the group's advice names work(), as the
 * process's own does, not the library.
 */
static void groups__advice_names_the_members_own_code(void **state)
{
	struct bp_profile *p = bld_window(T0, 3 * SEC, 0.5);
	const struct bp_group *g;
	struct bp_summary s;
	struct bp_groups gs;
	struct bp_proc *pr;
	uint32_t work, cpy;
	uint32_t i;
	bool named = false;

	(void)state;
	work = bld_frame(p, "work", "svc", "/opt/svc", NULL, 0x10, false);
	cpy = bld_frame(p, "memcpy", "libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL,
			0x20, false);
	/* 2.5 s on-CPU: 50 samples of work() alone, 200 in memcpy under it */
	pr = busy(p, 11, "svc", BLD_STACK(p, work), SEC / 2, 0, SEC / 2);
	ids(p, pr, 65534, "nobody", "/svc.slice/web.service", "web.service");
	bld_sample(p, 11, 11, BP_KIND_ONCPU, BLD_STACK(p, work, cpy), 200, 2 * SEC);
	pr->threads[0].oncpu_ns = 5 * SEC / 2;
	pr->tl_ns[BP_TS_RUNNING] = 5 * SEC / 2;
	summarize(p, &s);
	assert_int_equal(bp_groups_build(p, &s, BP_GROUP_USER, &gs), 0);
	g = group(&gs, "nobody");
	assert_true(g->have_verdict);
	for (i = 0; i < g->verdict.nr_evidence; i++)
		named |= strstr(g->verdict.evidence[i], "work spends 80% of its time in memcpy") !=
			 NULL;
	assert_true(named);
	for (i = 0; i < g->verdict.nr_levers; i++)
		assert_null(strstr(g->verdict.levers[i], "algorithm or data structure in memcpy"));
	bp_groups_free(&gs);
	bp_summary_free(&s);
	bp_profile__free(p);
}

static void names__unknown_and_nameless(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_proc *pr = bld_proc(p, 5, 1, "x", NULL);
	enum bp_group_by by;
	char buf[64];

	assert_string_equal(bp_group_name(pr, BP_GROUP_USER, buf, sizeof(buf)), "?");
	pr->have_ids = true;
	pr->uid = 4242;
	assert_string_equal(bp_group_name(pr, BP_GROUP_USER, buf, sizeof(buf)), "4242");
	assert_string_equal(bp_group_name(pr, BP_GROUP_UNIT, buf, sizeof(buf)), "?");
	assert_int_equal(bp_group_by_parse("unit", &by), 0);
	assert_int_equal(by, BP_GROUP_UNIT);
	assert_int_equal(bp_group_by_parse("units", &by), -EINVAL);
	assert_string_equal(bp_group_by_name(BP_GROUP_CGROUP), "cgroup");
	bp_profile__free(p);
}

static void folded__group_frame_first(void **state)
{
	struct bp_profile *p = machine();
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_export_folded_grouped(p, BP_VIEW_ONCPU, BP_GROUP_UNIT, &b), 0);
	assert_non_null(strstr(b.data, "unit:web.service;worker;work 250\n"));
	assert_non_null(strstr(b.data, "unit:/bp-quota;spin;work 60\n"));
	assert_non_null(strstr(b.data, "unit:?;ghost;work 10\n"));
	bp_buf_reset(&b);
	assert_int_equal(bp_export_folded_grouped(p, BP_VIEW_WALL, BP_GROUP_USER, &b), 0);
	assert_non_null(strstr(b.data, "user:daemon;spin;[runqueue];work 2400000\n"));
	/* without a grouping, as it always was */
	bp_buf_reset(&b);
	assert_int_equal(bp_export_folded_grouped(p, BP_VIEW_ONCPU, BP_GROUP_NONE, &b), 0);
	assert_non_null(strstr(b.data, "\nworker;work 250\n"));
	assert_null(strstr(b.data, "unit:"));
	bp_buf_free(&b);
	bp_profile__free(p);
}

static void json__keys_per_process_and_groups(void **state)
{
	struct bp_profile *p = machine();
	struct bp_buf b = BP_BUF_INIT;
	const struct bp_json *procs, *pr = NULL, *g;
	struct bp_summary s;
	struct bp_groups gs;
	struct bp_json *j;
	char err[128];
	size_t i;

	summarize(p, &s);
	assert_int_equal(bp_groups_build(p, &s, BP_GROUP_UNIT, &gs), 0);
	assert_int_equal(bp_export_json_groups(p, &s, &gs, true, &b), 0);
	j = bp_json_parse(b.data, b.len, err, sizeof(err));
	assert_non_null(j);
	procs = bp_json_get(j, "processes");
	for (i = 0; i < bp_json_len(procs); i++)
		if (bp_json_num(bp_json_get(bp_json_at(procs, i), "pid")) == 20)
			pr = bp_json_at(procs, i);
	assert_non_null(pr);
	assert_string_equal(bp_json_str(bp_json_get(pr, "user")), "daemon");
	assert_int_equal((int)bp_json_num(bp_json_get(pr, "uid")), 1);
	assert_string_equal(bp_json_str(bp_json_get(pr, "cgroup")), "/bp-quota");
	assert_string_equal(bp_json_str(bp_json_get(pr, "unit")), "");
	assert_near(bp_json_num(bp_json_get(pr, "throttled_s")), 2.1, 1e-9);
	assert_near(bp_json_num(bp_json_path(pr, "limits.cpu.quota_cpus")), 0.2, 1e-12);
	assert_near(bp_json_num(bp_json_path(pr, "limits.cpu.throttled_share")), 0.7, 1e-9);
	assert_string_equal(bp_json_str(bp_json_path(pr, "verdict.class")), "cpu-throttled");
	assert_near(bp_json_num(bp_json_path(pr, "verdict.shares.throttled")), 0.7, 1e-9);
	/* all of the run queue, as before the quota had a share of its own */
	assert_near(bp_json_num(bp_json_path(pr, "verdict.shares.runqueue")), 0.8, 1e-9);

	assert_string_equal(bp_json_str(bp_json_get(j, "group_by")), "unit");
	g = bp_json_at(bp_json_get(j, "groups"), 0);
	assert_string_equal(bp_json_str(bp_json_get(g, "name")), "web.service");
	assert_int_equal((int)bp_json_num(bp_json_get(g, "processes")), 3);
	assert_int_equal(bp_json_len(bp_json_get(g, "busiest")), 3);
	assert_non_null(bp_json_path(g, "verdict.class"));
	assert_true(bp_json_len(bp_json_get(j, "cgroups")) == 2);
	bp_json_free(j);
	bp_groups_free(&gs);
	bp_summary_free(&s);
	bp_buf_free(&b);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(throttle__quota_share_of_runqueue),
		cmocka_unit_test(groups__by_user_unit_and_cgroup),
		cmocka_unit_test(groups__advice_names_the_members_own_code),
		cmocka_unit_test(names__unknown_and_nameless),
		cmocka_unit_test(folded__group_frame_first),
		cmocka_unit_test(json__keys_per_process_and_groups),
	};

	return cmocka_run_group_tests_name("groups", tests, NULL, NULL);
}
