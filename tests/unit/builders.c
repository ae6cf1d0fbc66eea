// SPDX-License-Identifier: GPL-2.0
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "analyze/verdict.h"
#include "export/report_json.h"
#include "model/hist.h"
#include "model/waits.h"
#include "unit/builders.h"

#define DEV(ma, mi)	((uint32_t)(ma) << 20 | (mi))
#define T0		1000000000000ULL	/* window start, CLOCK_MONOTONIC ns */
#define SEC		1000000000ULL

/* ----------------------------------------------------------- building */

uint32_t bld_frame(struct bp_profile *p, const char *name, const char *module, const char *path,
		   const char *build_id, uint64_t off, bool kernel)
{
	struct bp_frame f = { .name = name, .module = module, .path = path,
			      .build_id = build_id, .offset = off, .kernel = kernel };
	int64_t id = bp_profile__frame(p, &f);

	assert_true(id >= 0);
	return id;
}

uint32_t bld_stack(struct bp_profile *p, const uint32_t *frames, uint32_t n)
{
	int64_t id = bp_profile__stack(p, frames, n);

	assert_true(id >= 0);
	return id;
}

void bld_sample(struct bp_profile *p, uint32_t pid, uint32_t tid, enum bp_kind kind,
		uint32_t stack, uint64_t count, uint64_t ns)
{
	assert_int_equal(bp_profile__add(p, pid, tid, kind, stack, count, ns), 0);
}

struct bp_proc *bld_proc(struct bp_profile *p, uint32_t pid, uint32_t ppid, const char *comm,
			 const char *cmdline)
{
	struct bp_proc *pr = bp_profile__proc(p, pid, true);

	assert_non_null(pr);
	pr->ppid = ppid;
	snprintf(pr->comm, sizeof(pr->comm), "%s", comm);
	pr->cmdline = bp_profile__intern(p, cmdline);
	pr->have_meta = cmdline != NULL;
	return pr;
}

struct bp_thread *bld_thread(struct bp_proc *pr, uint32_t tid, const char *comm, uint64_t oncpu,
			     uint64_t seed)
{
	struct bp_thread *t = bp_proc__thread(pr, tid, comm);
	int i;

	assert_non_null(t);
	t->have_totals = true;
	t->state = seed % BP_TS__MAX;
	t->start_ns = T0 + seed * 1000;
	t->oncpu_ns = oncpu;
	t->steal_ns = oncpu / 7;
	t->switches = 100 + seed;
	t->wakeups = 40 + seed;
	t->wake_lat_ns = 123456789 + seed;
	t->wake_lat_max = 3400000 + seed;
	for (i = 0; i < 12; i++)
		t->wake_hist[i] = (seed * 7 + i * 3) % 11;
	t->wake_hist[BP_HIST_SLOTS - 1] = seed;	/* the last slot too */
	return t;
}

void bld_io_stats(struct bp_io_stats *st, uint64_t ops, uint64_t seed)
{
	int i;

	st->ops = ops;
	st->bytes = ops * 4096 * (seed + 1);
	st->lat_ns = ops * 90000 + seed;
	for (i = 0; i < BP_HIST_SLOTS; i++)
		st->hist[i] = i >= 5 && i <= 9 ? (ops * (i + seed)) % 17 : 0;
}

struct bp_profile *bld_window(uint64_t start_ns, uint64_t dur_ns, double machine_busy)
{
	struct bp_profile *p = bp_profile__new();

	assert_non_null(p);
	p->start_ns = start_ns;
	p->end_ns = start_ns + dur_ns;
	p->hz = 99;
	p->ncpus = 2;
	p->offcpu_enabled = true;
	p->machine_busy = machine_busy;
	return p;
}

struct bp_profile *rich_profile(void)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t m, a, b, ksched, kio, kext4, unk, kunk, anon, odd, libc, deep[BP_MAX_STACK_DEPTH];
	uint32_t s_alpha, s_beta, s_sched, s_io, s_empty, s_deep, s_unk, i;
	struct bp_proc *pr;
	struct bp_thread *t;
	struct bp_io_dev *d;
	struct bp_io_row *row;
	struct bp_cgroup *cg;

	assert_non_null(p);
	p->start_ns = T0;
	p->end_ns = T0 + 5 * SEC + 12345;
	p->start_unix_ns = 1764437000123456789LL;
	p->hz = 499;
	p->ncpus = 2;
	p->event = bp_profile__intern(p, "cpu-clock");
	p->offcpu_enabled = true;
	p->machine_busy = 0.1 + 0.2;	/* 0.30000000000000004: needs all 17 digits */
	p->llc_bytes = 33554432;
	p->llc_source = bp_profile__intern(p, "cpuid 0x80000006 (one CCX: 32 MiB)");
	for (i = 0; i < BP_STAT__MAX; i++)
		p->stats.v[i] = i * 1000 + 7;
	p->stats.v[BP_STAT_SAMPLES] = 5000;
	p->stats.v[BP_STAT_IDLE] = 1200;
	p->stats.v[BP_STAT__MAX - 1] = UINT64_MAX;	/* past 2^53 and INT64_MAX */
	p->user_stacks_cut = 17;
	p->io_done_unseen = 3;
	p->io_enabled = true;

	/* libc's mapping comes first; split's, with the most leaf samples, is the main one */
	libc = bld_frame(p, "__libc_start_main", "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6",
			 NULL, 0x27000, false);
	m = bld_frame(p, "main", "split", "/opt/split", "0123abcd", 0x1200, false);
	a = bld_frame(p, "alpha", "split", "/opt/split", "0123abcd", 0x1190, false);
	b = bld_frame(p, "beta", "split", "/opt/split", "0123abcd", 0x11d0, false);
	ksched = bld_frame(p, "schedule", "[kernel]", NULL, "feedbeef", 0xabc000, true);
	kio = bld_frame(p, "submit_bio", "[kernel]", NULL, "feedbeef", 0x5000, true);
	kext4 = bld_frame(p, "ext4_sync_file", "ext4", NULL, NULL, 0x220, true);
	unk = bld_frame(p, NULL, "libfoo.so", "/usr/lib/libfoo.so", "99", 0x4321, false);
	kunk = bld_frame(p, NULL, "[kernel]", NULL, "feedbeef", 0xffffffffc0001234ULL, true);
	anon = bld_frame(p, NULL, "[anon]", NULL, NULL, 0, false);
	/* a user function whose name looks like our kernel mark, and bytes not UTF-8 */
	odd = bld_frame(p, "weird_[k]", "py\xff", "/srv/app/py\xff", NULL, 0x10, false);
	/* a module that is not the base name of its path (a renamed mapping) */
	(void)bld_frame(p, "jit_entry", "[jit]", "/memfd:jit (deleted)", NULL, 0x99, false);
	/* frames with source lines: native, inlined into it, and Python */
	{
		struct bp_frame fl = { .name = "distance_matrix", .module = "dm",
				       .path = "/opt/dm", .build_id = "77aa", .offset = 0x3010,
				       .file = "/src/dm/main.rs", .line = 3 };
		struct bp_frame inl = fl, py = { .name = "Grid.distance", .module = "python3.11",
						 .path = "/usr/bin/python3.11",
						 .file = "/home/u/dm.py", .line = 42,
						 .python = true };

		inl.name = "core::f64::sqrt";
		inl.file = "/rustc/library/core/src/f64.rs";
		inl.line = 410;
		inl.inlined = true;
		assert_true(bp_profile__frame(p, &fl) >= 0);
		assert_true(bp_profile__frame(p, &inl) >= 0);
		assert_true(bp_profile__frame(p, &py) >= 0);
	}
	for (i = 0; i < BP_MAX_STACK_DEPTH; i++) {
		char name[32];

		snprintf(name, sizeof(name), "rec%u", i % 5);
		deep[i] = bld_frame(p, name, "split", "/opt/split", "0123abcd", 0x2000 + i, false);
	}

	s_alpha = BLD_STACK(p, libc, m, a);
	s_beta = BLD_STACK(p, libc, m, b);
	s_sched = BLD_STACK(p, libc, m, b, ksched);
	s_io = BLD_STACK(p, m, kext4, kio, ksched);
	s_empty = bld_stack(p, deep, 0);
	s_deep = bld_stack(p, deep, BP_MAX_STACK_DEPTH);
	/* a stack no sample uses: stack ids must survive anyway */
	(void)BLD_STACK(p, odd, odd, odd);
	s_unk = BLD_STACK(p, anon, unk, kunk, odd);

	pr = bld_proc(p, 100, 1, "split", "split 3");
	pr->start_ns = T0 + 1000;
	pr->end_ns = T0 + 4 * SEC;
	pr->exited = true;
	pr->have_timeline = true;
	for (i = 0; i < BP_TS__MAX; i++)
		pr->tl_ns[i] = (i + 1) * 100000007ULL;
	pr->tl_idle_ns = 5555;
	pr->mem_valid = true;
	pr->wss_probes = 3;
	pr->wss_max = 1 << 30;
	pr->wss_per_s = 1.0 / 3;
	pr->rss = 123456789;
	pr->minflt = 1000;
	pr->majflt = 2;
	pr->fault_window_s = 2.9999999999999996;
	pr->pmu_valid = true;
	pr->cycles = 9000000000ULL;
	pr->instructions = 12000000001ULL;
	pr->cache_misses = 4000001;
	pr->pmu_running = 0.987654321;
	pr->pmu_seconds = 3.25;
	pr->last_drain_samples = 77;
	t = bld_thread(pr, 100, "split", 3 * SEC, 1);
	t->exited = true;
	t->end_ns = T0 + 4 * SEC;
	bld_thread(pr, 101, "split-w\xe9", 0.5 * SEC, 2);	/* Latin-1 comm */
	/* a throttled service: user, v2 cgroup, unit, quota and pressure */
	pr->have_ids = true;
	pr->uid = 65534;
	pr->user = bp_profile__intern(p, "nobody");
	pr->cgroup = bp_profile__intern(p, "/system.slice/split.service");
	pr->unit = bp_profile__intern(p, "split.service");
	pr->cg_v2 = pr->cgroup;
	pr->cg_cpu = pr->cgroup;
	pr->cg_memory = pr->cgroup;
	pr->cg_cpu_tree = BP_CGROUP_V2;
	pr->cg_memory_tree = BP_CGROUP_V2;
	cg = bp_profile__cgroup(p, BP_CGROUP_V2, "/system.slice/split.service", true);
	assert_non_null(cg);
	cg->watched_ns = 4 * SEC;
	cg->cpu_valid = true;
	cg->quota_at = bp_profile__intern(p, "/system.slice/split.service");
	cg->quota_us = 20000;
	cg->period_us = 100000;
	cg->nr_periods = 40;
	cg->nr_throttled = 38;
	cg->throttled_ns = 3 * SEC;
	cg->psi_valid = true;
	cg->psi_some_us[0] = 3200000;
	cg->psi_full_us[0] = 3100000;
	cg->psi_some_us[2] = 7;
	cg->mem_valid = true;
	cg->mem_max = UINT64_MAX;
	cg->mem_high = UINT64_MAX;

	pr = bld_proc(p, 200, 100, "gz\xff;ip", "gzip \xff\xfe -9");
	/* a user without a name, a hybrid machine's v1 paths, a memory limit hit */
	pr->have_ids = true;
	pr->uid = 4242;
	pr->cgroup = bp_profile__intern(p, "/jobs/gz\xff");
	pr->cg_v2 = bp_profile__intern(p, "/");
	pr->cg_cpu = bp_profile__intern(p, "/");
	pr->cg_memory = pr->cgroup;
	pr->cg_cpu_tree = BP_CGROUP_V1_CPU;
	pr->cg_memory_tree = BP_CGROUP_V1_MEMORY;
	cg = bp_profile__cgroup(p, BP_CGROUP_V1_MEMORY, "/jobs/gz\xff", true);
	assert_non_null(cg);
	cg->watched_ns = 5 * SEC;
	cg->mem_valid = true;
	cg->mem_at = bp_profile__intern(p, "/jobs");
	cg->mem_max = 64ULL << 20;
	cg->mem_max_events = 1234;
	cg->mem_oom_kill = 1;
	cg = bp_profile__cgroup(p, BP_CGROUP_V1_CPU, "/", true);
	assert_non_null(cg);
	cg->watched_ns = 5 * SEC;
	cg->cpu_valid = true;
	p->psi_valid = true;
	p->psi_some_us[1] = 250000;
	p->psi_full_us[1] = 100000;
	p->psi_some_us[2] = 4000000;
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_IO] = 2 * SEC;
	pr->tl_ns[BP_TS_RUNNING] = SEC / 3;
	bld_thread(pr, 200, "gz\xff;ip", SEC / 3, 3);

	/* no samples, asleep: known from its thread totals only; no cmdline */
	pr = bld_proc(p, 300, 1, "sleeper", NULL);
	pr->wss_per_s = NAN;
	pr->fault_window_s = INFINITY;
	pr->pmu_running = -INFINITY;
	bld_thread(pr, 300, "sleeper", 1000, 4);

	/* a process with huge counters */
	pr = bld_proc(p, 400, 1, "big", "big --counters");
	bld_thread(pr, 400, "big", 0, 5);

	bld_sample(p, 100, 100, BP_KIND_ONCPU, s_alpha, 1100, 1100 * 2004008ULL);
	bld_sample(p, 100, 101, BP_KIND_ONCPU, s_alpha, 400, 400 * 2004008ULL);
	bld_sample(p, 100, 100, BP_KIND_ONCPU, s_beta, 500, 500 * 2004008ULL);
	bld_sample(p, 100, 100, BP_KIND_ONCPU, s_deep, 9, 9 * 2004008ULL);
	bld_sample(p, 100, 100, BP_KIND_RUNQUEUE, s_sched, 30, 45000000);
	bld_sample(p, 100, 101, BP_KIND_LOCK, s_sched, 12, 700000000);
	bld_sample(p, 100, 101, BP_KIND_SLEEP, s_empty, 3, 300000000);
	bld_sample(p, 200, 200, BP_KIND_IO, s_io, 250, 2 * SEC);
	bld_sample(p, 200, 200, BP_KIND_OTHER, s_io, 2, 1500);
	bld_sample(p, 200, 200, BP_KIND_ONCPU, s_unk, 160, 160 * 2004008ULL);
	bld_sample(p, 200, 200, BP_KIND_ONCPU, s_empty, 7, 7 * 2004008ULL);
	bld_sample(p, 300, 300, BP_KIND_SLEEP, s_sched, 1, 5 * SEC);
	bld_sample(p, 400, 400, BP_KIND_ONCPU, s_alpha, 1ULL << 60, UINT64_MAX - 1);
	bld_sample(p, 400, 400, BP_KIND_SLEEP, s_alpha, UINT64_MAX, (1ULL << 63) + 1);
	/* a sample of a process we know nothing else about */
	bld_sample(p, 999, 1000, BP_KIND_ONCPU, s_beta, 2, 2 * 2004008ULL);

	d = bp_profile__io_dev(p, DEV(254, 0), true);
	assert_non_null(d);
	snprintf(d->name, sizeof(d->name), "vda");
	bld_io_stats(&d->op[BP_IO_READ], 250, 1);
	bld_io_stats(&d->op[BP_IO_WRITE], 40, 2);
	bld_io_stats(&d->op[BP_IO_OTHER], 5, 3);
	d->busy_ns = 2 * SEC + 7;
	d->max_inflight = 32;
	d = bp_profile__io_dev(p, DEV(8, 16), true);	/* keeps its "8:16" name */
	assert_non_null(d);
	bld_io_stats(&d->op[BP_IO_WRITE], 3, 4);
	d->busy_ns = 1000;
	d->max_inflight = 1;

	row = bp_profile__io_row(p, DEV(254, 0), 200, BP_IO_READ, false, "gz\xff;ip", true);
	assert_non_null(row);
	bld_io_stats(&row->st, 250, 1);
	row = bp_profile__io_row(p, DEV(254, 0), 100, BP_IO_WRITE, false, "split", true);
	assert_non_null(row);
	bld_io_stats(&row->st, 40, 2);

	/* who ended waits, network peers, this machine's bandwidth */
	{
		struct bp_wake_row wk = { .pid = 100, .waker_pid = 200, .waker_tid = 200,
					  .state = BP_TS_PIPE, .dir = BP_DIR_IN,
					  .ctx = BP_WCTX_TASK, .comm = "gz\xff;ip" }, *w;
		struct bp_net_row nk = { .pid = 100, .family = 10, .port = 443, .lport = 50123,
					 .proto = 6, .side = BP_SIDE_CLIENT }, *n;

		w = bp_profile__wake_row(p, &wk, true);
		assert_non_null(w);
		w->ns = 3 * SEC + 1;
		w->count = 77;
		wk.waker_pid = wk.waker_tid = 0;
		wk.ctx = BP_WCTX_IDLE;
		wk.state = BP_TS_SLEEP;
		w = bp_profile__wake_row(p, &wk, true);
		assert_non_null(w);
		w->ns = UINT64_MAX;
		w->count = 1;
		nk.addr[15] = 1;	/* ::1 */
		n = bp_profile__net_row(p, &nk, true);
		assert_non_null(n);
		n->wait_ns = 2 * SEC;
		n->waits = 100;
		n->rx_bytes = 110000;
		n->tx_bytes = 5200;
		n->hist[bp_fhist_slot(20480)] = 99;
		n->hist[BP_FHIST_SLOTS - 1] = 1;
		p->membw_valid = true;
		p->membw_1_gbs = 25.4;
		p->membw_n_gbs = 1.0 / 3;
		p->membw_threads = 2;
		p->membw_source = bp_profile__intern(p, "measured 2026-12-01 on AMD EPYC");
		pr = bp_profile__proc(p, 100, false);
		pr->net_side_ns[BP_SIDE_CLIENT] = 2 * SEC;
		pr->net_side_ns[BP_SIDE_LISTEN] = 5;
		pr->pipe_dir_ns[BP_DIR_IN] = 3 * SEC;
		pr->traffic_valid = true;
		pr->traffic_floor = true;
		pr->traffic_per_s = 9.5e9;
		pr->traffic_per_cpu_s = 0.1;
		pr->traffic_cpus = 1.05;
		pr->threads[0].rchar = 1ULL << 40;
		pr->threads[0].wchar = 12345;
	}
	row = bp_profile__io_row(p, DEV(254, 0), 0, BP_IO_OTHER, true, "jbd2/vda-8", true);
	assert_non_null(row);
	bld_io_stats(&row->st, 5, 3);
	row = bp_profile__io_row(p, DEV(8, 16), 0, BP_IO_WRITE, true, "kworker/u4:2", true);
	assert_non_null(row);
	bld_io_stats(&row->st, 3, 4);
	return p;
}

/* ----------------------------------------------------------- comparing */

static void assert_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

/* bit-exact, NaN included */
static void assert_double_same(double a, double b)
{
	if (isnan(a) || isnan(b)) {
		assert_true(isnan(a) && isnan(b));
		return;
	}
	if (memcmp(&a, &b, sizeof(a)))
		fail_msg("%.17g != %.17g", a, b);
}

static void assert_io_stats_eq(const struct bp_io_stats *a, const struct bp_io_stats *b)
{
	assert_true(a->ops == b->ops);
	assert_true(a->bytes == b->bytes);
	assert_true(a->lat_ns == b->lat_ns);
	assert_memory_equal(a->hist, b->hist, sizeof(a->hist));
}

static void assert_thread_eq(const struct bp_thread *a, const struct bp_thread *b)
{
	assert_int_equal(a->tid, b->tid);
	assert_string_equal(a->comm, b->comm);
	assert_int_equal(a->have_totals, b->have_totals);
	assert_int_equal(a->exited, b->exited);
	assert_int_equal(a->state, b->state);
	assert_true(a->start_ns == b->start_ns);
	assert_true(a->end_ns == b->end_ns);
	assert_true(a->oncpu_ns == b->oncpu_ns);
	assert_true(a->steal_ns == b->steal_ns);
	assert_true(a->switches == b->switches);
	assert_true(a->wakeups == b->wakeups);
	assert_true(a->wake_lat_ns == b->wake_lat_ns);
	assert_true(a->wake_lat_max == b->wake_lat_max);
	assert_memory_equal(a->wake_hist, b->wake_hist, sizeof(a->wake_hist));
	assert_true(a->rchar == b->rchar);
	assert_true(a->wchar == b->wchar);
}

static void assert_proc_eq(const struct bp_proc *a, const struct bp_proc *b)
{
	uint32_t i;

	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->ppid, b->ppid);
	assert_string_equal(a->comm, b->comm);
	assert_str_eq(a->cmdline, b->cmdline);
	assert_true(a->start_ns == b->start_ns);
	assert_true(a->end_ns == b->end_ns);
	assert_int_equal(a->exited, b->exited);
	assert_int_equal(a->have_meta, b->have_meta);
	assert_int_equal(a->have_timeline, b->have_timeline);
	assert_memory_equal(a->tl_ns, b->tl_ns, sizeof(a->tl_ns));
	assert_true(a->tl_idle_ns == b->tl_idle_ns);
	assert_int_equal(a->mem_valid, b->mem_valid);
	assert_int_equal(a->wss_probes, b->wss_probes);
	assert_true(a->wss_max == b->wss_max);
	assert_double_same(a->wss_per_s, b->wss_per_s);
	assert_true(a->rss == b->rss);
	assert_true(a->minflt == b->minflt);
	assert_true(a->majflt == b->majflt);
	assert_double_same(a->fault_window_s, b->fault_window_s);
	assert_int_equal(a->pmu_valid, b->pmu_valid);
	assert_true(a->cycles == b->cycles);
	assert_true(a->instructions == b->instructions);
	assert_true(a->cache_misses == b->cache_misses);
	assert_double_same(a->pmu_running, b->pmu_running);
	assert_double_same(a->pmu_seconds, b->pmu_seconds);
	assert_true(a->last_drain_samples == b->last_drain_samples);
	assert_memory_equal(a->net_side_ns, b->net_side_ns, sizeof(a->net_side_ns));
	assert_memory_equal(a->pipe_dir_ns, b->pipe_dir_ns, sizeof(a->pipe_dir_ns));
	assert_int_equal(a->traffic_valid, b->traffic_valid);
	assert_int_equal(a->traffic_floor, b->traffic_floor);
	assert_double_same(a->traffic_per_s, b->traffic_per_s);
	assert_double_same(a->traffic_per_cpu_s, b->traffic_per_cpu_s);
	assert_double_same(a->traffic_cpus, b->traffic_cpus);
	assert_int_equal(a->have_ids, b->have_ids);
	assert_int_equal(a->uid, b->uid);
	assert_str_eq(a->user, b->user);
	assert_str_eq(a->cgroup, b->cgroup);
	assert_str_eq(a->unit, b->unit);
	assert_str_eq(a->cg_v2, b->cg_v2);
	assert_str_eq(a->cg_cpu, b->cg_cpu);
	assert_str_eq(a->cg_memory, b->cg_memory);
	assert_int_equal(a->cg_cpu_tree, b->cg_cpu_tree);
	assert_int_equal(a->cg_memory_tree, b->cg_memory_tree);
	assert_int_equal(a->nr_threads, b->nr_threads);
	for (i = 0; i < a->nr_threads; i++)
		assert_thread_eq(&a->threads[i], &b->threads[i]);
}

void assert_profile_eq(const struct bp_profile *a, const struct bp_profile *b)
{
	uint32_t i, na, nb;

	assert_true(a->start_ns == b->start_ns);
	assert_true(a->end_ns == b->end_ns);
	assert_true(a->start_unix_ns == b->start_unix_ns);
	assert_int_equal(a->hz, b->hz);
	assert_int_equal(a->ncpus, b->ncpus);
	assert_int_equal(a->pmu, b->pmu);
	assert_str_eq(a->event, b->event);
	assert_int_equal(a->system_wide, b->system_wide);
	assert_int_equal(a->offcpu_enabled, b->offcpu_enabled);
	assert_double_same(a->machine_busy, b->machine_busy);
	assert_true(a->llc_bytes == b->llc_bytes);
	assert_str_eq(a->llc_source, b->llc_source);
	assert_memory_equal(a->stats.v, b->stats.v, sizeof(a->stats.v));
	assert_true(a->user_stacks_cut == b->user_stacks_cut);
	assert_true(a->io_done_unseen == b->io_done_unseen);
	assert_int_equal(a->io_enabled, b->io_enabled);
	assert_int_equal(a->membw_valid, b->membw_valid);
	assert_double_same(a->membw_1_gbs, b->membw_1_gbs);
	assert_double_same(a->membw_n_gbs, b->membw_n_gbs);
	assert_int_equal(a->membw_threads, b->membw_threads);
	assert_str_eq(a->membw_source, b->membw_source);
	assert_int_equal(a->nr_wake_rows, b->nr_wake_rows);
	for (i = 0; i < a->nr_wake_rows; i++) {
		const struct bp_wake_row *x = &a->wake_rows[i], *y = &b->wake_rows[i];

		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->waker_pid, y->waker_pid);
		assert_int_equal(x->waker_tid, y->waker_tid);
		assert_int_equal(x->state, y->state);
		assert_int_equal(x->dir, y->dir);
		assert_int_equal(x->ctx, y->ctx);
		assert_string_equal(x->comm, y->comm);
		assert_true(x->ns == y->ns);
		assert_true(x->count == y->count);
	}
	assert_int_equal(a->nr_net_rows, b->nr_net_rows);
	for (i = 0; i < a->nr_net_rows; i++) {
		const struct bp_net_row *x = &a->net_rows[i], *y = &b->net_rows[i];

		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->family, y->family);
		assert_int_equal(x->port, y->port);
		assert_int_equal(x->lport, y->lport);
		assert_int_equal(x->proto, y->proto);
		assert_int_equal(x->side, y->side);
		assert_memory_equal(x->addr, y->addr, sizeof(x->addr));
		assert_true(x->wait_ns == y->wait_ns);
		assert_true(x->waits == y->waits);
		assert_true(x->rx_bytes == y->rx_bytes);
		assert_true(x->tx_bytes == y->tx_bytes);
		assert_memory_equal(x->hist, y->hist, sizeof(x->hist));
	}
	assert_int_equal(a->nr_runs, b->nr_runs);
	for (i = 0; i < a->nr_runs; i++) {
		assert_int_equal(a->runs[i].pid, b->runs[i].pid);
		assert_int_equal(a->runs[i].status, b->runs[i].status);
		assert_double_same(a->runs[i].wall_s, b->runs[i].wall_s);
		assert_double_same(a->runs[i].cpu_s, b->runs[i].cpu_s);
		assert_double_same(a->runs[i].runqueue_s, b->runs[i].runqueue_s);
	}

	assert_int_equal(a->nr_frames, b->nr_frames);
	for (i = 0; i < a->nr_frames; i++) {
		const struct bp_frame *x = &a->frames[i], *y = &b->frames[i];

		assert_str_eq(x->name, y->name);
		assert_str_eq(x->module, y->module);
		assert_str_eq(x->path, y->path);
		assert_str_eq(x->build_id, y->build_id);
		assert_true(x->offset == y->offset);
		assert_int_equal(x->kernel, y->kernel);
		assert_str_eq(x->file, y->file);
		assert_int_equal(x->line, y->line);
		assert_int_equal(x->inlined, y->inlined);
		assert_int_equal(x->python, y->python);
	}
	assert_int_equal(a->nr_stacks, b->nr_stacks);
	for (i = 0; i < a->nr_stacks; i++) {
		const uint32_t *x = bp_profile__stack_frames(a, i, &na);
		const uint32_t *y = bp_profile__stack_frames(b, i, &nb);

		assert_int_equal(na, nb);
		if (na)
			assert_memory_equal(x, y, na * sizeof(*x));
	}
	assert_int_equal(a->nr_samples, b->nr_samples);
	for (i = 0; i < a->nr_samples; i++) {
		const struct bp_sample *x = &a->samples[i], *y = &b->samples[i];

		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->stack, y->stack);
		assert_int_equal(x->kind, y->kind);
		assert_true(x->count == y->count);
		assert_true(x->ns == y->ns);
	}
	assert_int_equal(a->nr_procs, b->nr_procs);
	for (i = 0; i < a->nr_procs; i++)
		assert_proc_eq(a->procs[i], b->procs[i]);
	assert_int_equal(a->nr_io_devs, b->nr_io_devs);
	for (i = 0; i < a->nr_io_devs; i++) {
		const struct bp_io_dev *x = &a->io_devs[i], *y = &b->io_devs[i];
		int k;

		assert_int_equal(x->dev, y->dev);
		assert_string_equal(x->name, y->name);
		for (k = 0; k < BP_IO_OP__MAX; k++)
			assert_io_stats_eq(&x->op[k], &y->op[k]);
		assert_true(x->busy_ns == y->busy_ns);
		assert_true(x->max_inflight == y->max_inflight);
	}
	assert_int_equal(a->nr_io_rows, b->nr_io_rows);
	for (i = 0; i < a->nr_io_rows; i++) {
		const struct bp_io_row *x = &a->io_rows[i], *y = &b->io_rows[i];

		assert_int_equal(x->dev, y->dev);
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->op, y->op);
		assert_int_equal(x->kthread, y->kthread);
		assert_string_equal(x->comm, y->comm);
		assert_io_stats_eq(&x->st, &y->st);
	}
	assert_int_equal(a->psi_valid, b->psi_valid);
	assert_memory_equal(a->psi_some_us, b->psi_some_us, sizeof(a->psi_some_us));
	assert_memory_equal(a->psi_full_us, b->psi_full_us, sizeof(a->psi_full_us));
	assert_int_equal(a->nr_cgroups, b->nr_cgroups);
	for (i = 0; i < a->nr_cgroups; i++) {
		const struct bp_cgroup *x = &a->cgroups[i], *y = &b->cgroups[i];

		assert_string_equal(x->path, y->path);
		assert_int_equal(x->tree, y->tree);
		assert_true(x->watched_ns == y->watched_ns);
		assert_int_equal(x->cpu_valid, y->cpu_valid);
		assert_str_eq(x->quota_at, y->quota_at);
		assert_true(x->quota_us == y->quota_us);
		assert_true(x->period_us == y->period_us);
		assert_true(x->nr_periods == y->nr_periods);
		assert_true(x->nr_throttled == y->nr_throttled);
		assert_true(x->throttled_ns == y->throttled_ns);
		assert_int_equal(x->psi_valid, y->psi_valid);
		assert_memory_equal(x->psi_some_us, y->psi_some_us, sizeof(x->psi_some_us));
		assert_memory_equal(x->psi_full_us, y->psi_full_us, sizeof(x->psi_full_us));
		assert_int_equal(x->mem_valid, y->mem_valid);
		assert_str_eq(x->mem_at, y->mem_at);
		assert_true(x->mem_max == y->mem_max);
		assert_true(x->mem_high == y->mem_high);
		assert_true(x->mem_high_events == y->mem_high_events);
		assert_true(x->mem_max_events == y->mem_max_events);
		assert_true(x->mem_oom == y->mem_oom);
		assert_true(x->mem_oom_kill == y->mem_oom_kill);
	}
}
char *json_report(const struct bp_profile *p)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_summary s;

	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_verdicts(p, &s), 0);
	assert_int_equal(bp_export_json(p, &s, true, &b), 0);
	bp_summary_free(&s);
	return b.data;
}

/* ----------------------------------------------------------- fake trees */

void bld_tree_make(char *root, size_t len, const char *name)
{
	snprintf(root, len, "/tmp/bp-%s-XXXXXX", name);
	assert_non_null(mkdtemp(root));
}

void bld_tree_put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	char *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

void bld_tree_remove(char *root)
{
	if (root[0])
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	root[0] = '\0';
}
