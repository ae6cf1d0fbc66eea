// SPDX-License-Identifier: GPL-2.0
/*
 * pprof save format: a rich synthetic profile survives write -> read field
 * for field and renders the same JSON report; other tools' profiles load;
 * corrupt input is rejected with a message, without leaks.
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
#include <zlib.h>

#include <cmocka.h>

#include "analyze/analyze.h"
#include "export/report_json.h"
#include "util/pb.h"
#include "export/pprof.h"
#include "model/profile.h"
#include "analyze/verdict.h"

#define DEV(ma, mi)	((uint32_t)(ma) << 20 | (mi))
#define T0		1000000000000ULL	/* window start, CLOCK_MONOTONIC ns */
#define SEC		1000000000ULL
#define STATE_PREFIX_FOR_TEST	"boundprof-state v1 "

/* ----------------------------------------------------------- the profile */

static uint32_t fr(struct bp_profile *p, const char *name, const char *module, const char *path,
		   const char *build_id, uint64_t off, bool kernel)
{
	struct bp_frame f = { .name = name, .module = module, .path = path,
			      .build_id = build_id, .offset = off, .kernel = kernel };
	int64_t id = bp_profile__frame(p, &f);

	assert_true(id >= 0);
	return id;
}

static uint32_t stk(struct bp_profile *p, const uint32_t *frames, uint32_t n)
{
	int64_t id = bp_profile__stack(p, frames, n);

	assert_true(id >= 0);
	return id;
}

#define STACK(p, ...) stk(p, (uint32_t[]){ __VA_ARGS__ }, sizeof((uint32_t[]){ __VA_ARGS__ }) / 4)

static void add(struct bp_profile *p, uint32_t pid, uint32_t tid, enum bp_kind kind,
		uint32_t stack, uint64_t count, uint64_t ns)
{
	assert_int_equal(bp_profile__add(p, pid, tid, kind, stack, count, ns), 0);
}

static struct bp_proc *proc(struct bp_profile *p, uint32_t pid, uint32_t ppid, const char *comm,
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

/* a thread with exact totals from context switches and a wakeup histogram */
static struct bp_thread *thr(struct bp_proc *pr, uint32_t tid, const char *comm, uint64_t oncpu,
			     uint64_t seed)
{
	struct bp_thread *t = bp_proc__thread(pr, tid, comm);
	int i;

	assert_non_null(t);
	t->have_totals = true;
	t->state = seed % BP_TS__MAX;
	t->start_ns = T0 + seed * 1000;
	t->oncpu_ns = oncpu;
	t->switches = 100 + seed;
	t->wakeups = 40 + seed;
	t->wake_lat_ns = 123456789 + seed;
	t->wake_lat_max = 3400000 + seed;
	for (i = 0; i < 12; i++)
		t->wake_hist[i] = (seed * 7 + i * 3) % 11;
	t->wake_hist[BP_HIST_SLOTS - 1] = seed;	/* the last slot too */
	return t;
}

static void io_stats(struct bp_io_stats *st, uint64_t ops, uint64_t seed)
{
	int i;

	st->ops = ops;
	st->bytes = ops * 4096 * (seed + 1);
	st->lat_ns = ops * 90000 + seed;
	for (i = 0; i < BP_HIST_SLOTS; i++)
		st->hist[i] = i >= 5 && i <= 9 ? (ops * (i + seed)) % 17 : 0;
}

/*
 * Three recorded processes and a sleeper: on-CPU and off-CPU samples of
 * every kind, kernel, unnamed and oddly named frames, bytes that are not
 * UTF-8, block IO on two devices, counters, memory and PMU evidence.
 */
static struct bp_profile *rich_profile(void)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t m, a, b, ksched, kio, kext4, unk, kunk, anon, odd, libc, deep[BP_MAX_STACK_DEPTH];
	uint32_t s_alpha, s_beta, s_sched, s_io, s_empty, s_deep, s_unk, i;
	struct bp_proc *pr;
	struct bp_thread *t;
	struct bp_io_dev *d;
	struct bp_io_row *row;

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
	libc = fr(p, "__libc_start_main", "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", NULL,
		  0x27000, false);
	m = fr(p, "main", "split", "/opt/split", "0123abcd", 0x1200, false);
	a = fr(p, "alpha", "split", "/opt/split", "0123abcd", 0x1190, false);
	b = fr(p, "beta", "split", "/opt/split", "0123abcd", 0x11d0, false);
	ksched = fr(p, "schedule", "[kernel]", NULL, "feedbeef", 0xabc000, true);
	kio = fr(p, "submit_bio", "[kernel]", NULL, "feedbeef", 0x5000, true);
	kext4 = fr(p, "ext4_sync_file", "ext4", NULL, NULL, 0x220, true);
	unk = fr(p, NULL, "libfoo.so", "/usr/lib/libfoo.so", "99", 0x4321, false);
	kunk = fr(p, NULL, "[kernel]", NULL, "feedbeef", 0xffffffffc0001234ULL, true);
	anon = fr(p, NULL, "[anon]", NULL, NULL, 0, false);
	/* a user function whose name looks like our kernel mark, and bytes not UTF-8 */
	odd = fr(p, "weird_[k]", "py\xff", "/srv/app/py\xff", NULL, 0x10, false);
	/* a module that is not the base name of its path (a renamed mapping) */
	(void)fr(p, "jit_entry", "[jit]", "/memfd:jit (deleted)", NULL, 0x99, false);
	for (i = 0; i < BP_MAX_STACK_DEPTH; i++) {
		char name[32];

		snprintf(name, sizeof(name), "rec%u", i % 5);
		deep[i] = fr(p, name, "split", "/opt/split", "0123abcd", 0x2000 + i, false);
	}

	s_alpha = STACK(p, libc, m, a);
	s_beta = STACK(p, libc, m, b);
	s_sched = STACK(p, libc, m, b, ksched);
	s_io = STACK(p, m, kext4, kio, ksched);
	s_empty = stk(p, deep, 0);
	s_deep = stk(p, deep, BP_MAX_STACK_DEPTH);
	/* a stack no sample uses: stack ids must survive anyway */
	(void)STACK(p, odd, odd, odd);
	s_unk = STACK(p, anon, unk, kunk, odd);

	pr = proc(p, 100, 1, "split", "split 3");
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
	t = thr(pr, 100, "split", 3 * SEC, 1);
	t->exited = true;
	t->end_ns = T0 + 4 * SEC;
	thr(pr, 101, "split-w\xe9", 0.5 * SEC, 2);	/* Latin-1 comm */

	pr = proc(p, 200, 100, "gz\xff;ip", "gzip \xff\xfe -9");
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_IO] = 2 * SEC;
	pr->tl_ns[BP_TS_RUNNING] = SEC / 3;
	thr(pr, 200, "gz\xff;ip", SEC / 3, 3);

	/* no samples, asleep: known from its thread totals only; no cmdline */
	pr = proc(p, 300, 1, "sleeper", NULL);
	pr->wss_per_s = NAN;
	pr->fault_window_s = INFINITY;
	pr->pmu_running = -INFINITY;
	thr(pr, 300, "sleeper", 1000, 4);

	/* a process with huge counters */
	pr = proc(p, 400, 1, "big", "big --counters");
	thr(pr, 400, "big", 0, 5);

	add(p, 100, 100, BP_KIND_ONCPU, s_alpha, 1100, 1100 * 2004008ULL);
	add(p, 100, 101, BP_KIND_ONCPU, s_alpha, 400, 400 * 2004008ULL);
	add(p, 100, 100, BP_KIND_ONCPU, s_beta, 500, 500 * 2004008ULL);
	add(p, 100, 100, BP_KIND_ONCPU, s_deep, 9, 9 * 2004008ULL);
	add(p, 100, 100, BP_KIND_RUNQUEUE, s_sched, 30, 45000000);
	add(p, 100, 101, BP_KIND_LOCK, s_sched, 12, 700000000);
	add(p, 100, 101, BP_KIND_SLEEP, s_empty, 3, 300000000);
	add(p, 200, 200, BP_KIND_IO, s_io, 250, 2 * SEC);
	add(p, 200, 200, BP_KIND_OTHER, s_io, 2, 1500);
	add(p, 200, 200, BP_KIND_ONCPU, s_unk, 160, 160 * 2004008ULL);
	add(p, 200, 200, BP_KIND_ONCPU, s_empty, 7, 7 * 2004008ULL);
	add(p, 300, 300, BP_KIND_SLEEP, s_sched, 1, 5 * SEC);
	add(p, 400, 400, BP_KIND_ONCPU, s_alpha, 1ULL << 60, UINT64_MAX - 1);
	add(p, 400, 400, BP_KIND_SLEEP, s_alpha, UINT64_MAX, (1ULL << 63) + 1);
	/* a sample of a process we know nothing else about */
	add(p, 999, 1000, BP_KIND_ONCPU, s_beta, 2, 2 * 2004008ULL);

	d = bp_profile__io_dev(p, DEV(254, 0), true);
	assert_non_null(d);
	snprintf(d->name, sizeof(d->name), "vda");
	io_stats(&d->op[BP_IO_READ], 250, 1);
	io_stats(&d->op[BP_IO_WRITE], 40, 2);
	io_stats(&d->op[BP_IO_OTHER], 5, 3);
	d->busy_ns = 2 * SEC + 7;
	d->max_inflight = 32;
	d = bp_profile__io_dev(p, DEV(8, 16), true);	/* keeps its "8:16" name */
	assert_non_null(d);
	io_stats(&d->op[BP_IO_WRITE], 3, 4);
	d->busy_ns = 1000;
	d->max_inflight = 1;

	row = bp_profile__io_row(p, DEV(254, 0), 200, BP_IO_READ, false, "gz\xff;ip", true);
	assert_non_null(row);
	io_stats(&row->st, 250, 1);
	row = bp_profile__io_row(p, DEV(254, 0), 100, BP_IO_WRITE, false, "split", true);
	assert_non_null(row);
	io_stats(&row->st, 40, 2);
	row = bp_profile__io_row(p, DEV(254, 0), 0, BP_IO_OTHER, true, "jbd2/vda-8", true);
	assert_non_null(row);
	io_stats(&row->st, 5, 3);
	row = bp_profile__io_row(p, DEV(8, 16), 0, BP_IO_WRITE, true, "kworker/u4:2", true);
	assert_non_null(row);
	io_stats(&row->st, 3, 4);
	return p;
}

/* ------------------------------------------------------------ comparison */

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
	assert_true(a->switches == b->switches);
	assert_true(a->wakeups == b->wakeups);
	assert_true(a->wake_lat_ns == b->wake_lat_ns);
	assert_true(a->wake_lat_max == b->wake_lat_max);
	assert_memory_equal(a->wake_hist, b->wake_hist, sizeof(a->wake_hist));
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
	assert_int_equal(a->nr_threads, b->nr_threads);
	for (i = 0; i < a->nr_threads; i++)
		assert_thread_eq(&a->threads[i], &b->threads[i]);
}

/* every field of struct bp_profile, ids included */
static void assert_profile_eq(const struct bp_profile *a, const struct bp_profile *b)
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

	assert_int_equal(a->nr_frames, b->nr_frames);
	for (i = 0; i < a->nr_frames; i++) {
		const struct bp_frame *x = &a->frames[i], *y = &b->frames[i];

		assert_str_eq(x->name, y->name);
		assert_str_eq(x->module, y->module);
		assert_str_eq(x->path, y->path);
		assert_str_eq(x->build_id, y->build_id);
		assert_true(x->offset == y->offset);
		assert_int_equal(x->kernel, y->kernel);
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
}

/* the JSON report, as `boundprof record --json` renders it */
static char *report(const struct bp_profile *p)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_summary s;

	assert_int_equal(bp_summarize(p, 20, &s), 0);
	assert_int_equal(bp_verdicts(p, &s), 0);
	assert_int_equal(bp_export_json(p, &s, true, &b), 0);
	bp_summary_free(&s);
	return b.data;
}

static struct bp_profile *round_trip(const struct bp_profile *p, struct bp_buf *file)
{
	struct bp_profile *q;
	char err[256] = "x";

	assert_int_equal(bp_pprof_write(p, file), 0);
	q = bp_pprof_read(file->data, file->len, err, sizeof(err));
	if (!q)
		fail_msg("read back: %s", err);
	assert_string_equal(err, "");
	return q;
}

/* ---------------------------------------------------------------- tests */

static void round_trip__every_field_and_the_report(void **state)
{
	struct bp_profile *p = rich_profile(), *q;
	struct bp_buf file = BP_BUF_INIT, again = BP_BUF_INIT;
	char *r1, *r2;

	q = round_trip(p, &file);
	assert_profile_eq(p, q);
	r1 = report(p);
	r2 = report(q);
	assert_string_equal(r1, r2);
	/* the report has the parts that depend on the state, not just the samples */
	assert_non_null(strstr(r1, "\"timeline_s\""));
	assert_non_null(strstr(r1, "\"vda\""));
	assert_non_null(strstr(r1, "\"llc_source\""));

	/* and writing the copy gives the very same bytes */
	assert_int_equal(bp_pprof_write(q, &again), 0);
	assert_int_equal(again.len, file.len);
	assert_memory_equal(again.data, file.data, file.len);

	free(r1);
	free(r2);
	bp_buf_free(&file);
	bp_buf_free(&again);
	bp_profile__free(p);
	bp_profile__free(q);
}

/* system-wide, cycles event, no off-CPU: other branches of the report */
static void round_trip__system_wide_cycles(void **state)
{
	struct bp_profile *p = rich_profile(), *q;
	struct bp_buf file = BP_BUF_INIT;
	char *r1, *r2;

	p->system_wide = true;
	p->pmu = true;
	p->event = bp_profile__intern(p, "cycles");
	p->offcpu_enabled = false;
	p->machine_busy = -1;
	p->llc_bytes = 0;
	p->llc_source = NULL;
	q = round_trip(p, &file);
	assert_profile_eq(p, q);
	r1 = report(p);
	r2 = report(q);
	assert_string_equal(r1, r2);
	free(r1);
	free(r2);
	bp_buf_free(&file);
	bp_profile__free(p);
	bp_profile__free(q);
}

static void round_trip__empty_profile(void **state)
{
	struct bp_profile *p = bp_profile__new(), *q;
	struct bp_buf file = BP_BUF_INIT;
	char *r1, *r2;

	q = round_trip(p, &file);
	assert_profile_eq(p, q);
	r1 = report(p);
	r2 = report(q);
	assert_string_equal(r1, r2);
	free(r1);
	free(r2);
	bp_buf_free(&file);
	bp_profile__free(p);
	bp_profile__free(q);
}

/* gunzip with zlib, for looking inside a written file */
static void gunzip(const struct bp_buf *in, struct bp_buf *out)
{
	unsigned char chunk[65536];
	z_stream z = {};
	int ret;

	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)in->data;
	z.avail_in = in->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = inflate(&z, Z_NO_FLUSH);
		assert_true(ret == Z_OK || ret == Z_STREAM_END);
		bp_buf_append(out, chunk, sizeof(chunk) - z.avail_out);
	} while (ret != Z_STREAM_END);
	inflateEnd(&z);
}

static void gzip(const void *data, size_t len, struct bp_buf *out)
{
	unsigned char chunk[65536];
	z_stream z = {};
	int ret;

	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)data;
	z.avail_in = len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		bp_buf_append(out, chunk, sizeof(chunk) - z.avail_out);
	} while (ret == Z_OK);
	assert_int_equal(ret, Z_STREAM_END);
	deflateEnd(&z);
}

/* the string table of a raw Profile message */
static uint32_t count_strings(const struct bp_buf *raw, int64_t *find, const char *what)
{
	struct bp_pb_reader r;
	struct bp_pb_field f;
	uint32_t n = 0;

	bp_pb_reader_init(&r, raw->data, raw->len);
	while (bp_pb_next(&r, &f) == 1) {
		if (f.num != 6)
			continue;
		if (find && f.len == strlen(what) && !memcmp(f.data, what, f.len))
			*find = n;
		n++;
	}
	return n;
}

/* uncompressed input, and comments of other tools next to ours */
static void read__raw_proto_and_foreign_comments(void **state)
{
	struct bp_profile *p = rich_profile(), *q;
	struct bp_buf file = BP_BUF_INIT, raw = BP_BUF_INIT, gz = BP_BUF_INIT;
	uint32_t nstr;
	char err[256];

	assert_int_equal(bp_pprof_write(p, &file), 0);
	gunzip(&file, &raw);
	q = bp_pprof_read(raw.data, raw.len, err, sizeof(err));
	assert_non_null(q);
	assert_profile_eq(p, q);
	bp_profile__free(q);

	/* protobuf fields concatenate: append two strings and two comments naming them */
	nstr = count_strings(&raw, NULL, NULL);
	bp_pb_put_string(&raw, 6, "recorded by a human");
	bp_pb_put_string(&raw, 6, "boundprof-state v9 {\"future\": true}");
	bp_pb_put_uint64(&raw, 13, nstr);
	bp_pb_put_uint64(&raw, 13, nstr + 1);
	/* and fields no profile.proto has yet */
	bp_pb_put_string(&raw, 1000, "from the future");
	gzip(raw.data, raw.len, &gz);
	q = bp_pprof_read(gz.data, gz.len, err, sizeof(err));
	assert_non_null(q);
	assert_profile_eq(p, q);
	bp_profile__free(q);

	bp_buf_free(&file);
	bp_buf_free(&raw);
	bp_buf_free(&gz);
	bp_profile__free(p);
}

/* what pprof readers look at: types, period, kernel and unnamed frames, labels */
static void write__pprof_view(void **state)
{
	struct bp_profile *p = rich_profile();
	struct bp_buf file = BP_BUF_INIT, raw = BP_BUF_INIT;
	int64_t cpu = -1, label = -1, ksys = -1, wait = -1;

	assert_int_equal(bp_pprof_write(p, &file), 0);
	assert_true(file.len > 18);
	assert_int_equal((unsigned char)file.data[0], 0x1f);
	assert_int_equal((unsigned char)file.data[1], 0x8b);
	gunzip(&file, &raw);
	count_strings(&raw, &cpu, "cpu");
	count_strings(&raw, &label, "alpha");
	count_strings(&raw, &ksys, "schedule_[k]");
	count_strings(&raw, &wait, "lock");
	assert_true(cpu > 0 && label > 0 && ksys > 0 && wait > 0);
	/* the unnamed frames are labelled module+0xOFFSET */
	assert_non_null(memmem(raw.data, raw.len, "libfoo.so+0x4321", 16));
	assert_non_null(memmem(raw.data, raw.len, "[kernel]+0xffffffffc0001234", 27));
	assert_non_null(memmem(raw.data, raw.len, STATE_PREFIX_FOR_TEST, 19));
	bp_buf_free(&file);
	bp_buf_free(&raw);
	bp_profile__free(p);
}

/* ------------------------------------------------------ foreign profiles */

struct fw {
	struct bp_buf out;
	uint32_t nstr;
};

static uint64_t fstr(struct fw *w, const char *s)
{
	bp_pb_put_string(&w->out, 6, s);
	return w->nstr++;
}

static void fmsg(struct bp_buf *into, uint32_t field, struct bp_buf *msg)
{
	bp_pb_put_bytes(into, field, msg->data, msg->len);
	bp_buf_free(msg);
}

static void fvt(struct fw *w, uint32_t field, const char *type, const char *unit)
{
	struct bp_buf m = BP_BUF_INIT;

	bp_pb_put_uint64(&m, 1, fstr(w, type));
	bp_pb_put_uint64(&m, 2, fstr(w, unit));
	fmsg(&w->out, field, &m);
}

static void flabel(struct fw *w, struct bp_buf *sample, const char *key, const char *str,
		   int64_t num)
{
	struct bp_buf m = BP_BUF_INIT;

	bp_pb_put_uint64(&m, 1, fstr(w, key));
	if (str)
		bp_pb_put_uint64(&m, 2, fstr(w, str));
	else
		bp_pb_put_int64(&m, 3, num);
	fmsg(sample, 3, &m);
}

/*
 * What Go's runtime/pprof writes for a CPU profile: samples/count and
 * cpu/nanoseconds, a 10 ms period, functions in one mapping, no labels but
 * one sample with pid/tid/comm labels (as perf-based tools add), an
 * unsymbolized address, a kernel mapping, and an inlined call.
 */
static void foreign__go_cpu_profile_loads(void **state)
{
	struct fw w = { .out = BP_BUF_INIT };
	struct bp_buf m = BP_BUF_INIT, s = BP_BUF_INIT, line = BP_BUF_INIT;
	struct bp_profile *p;
	struct bp_summary sum;
	uint64_t period = 10000000, ids[3], vals[2];
	char err[256];
	const struct bp_frame *f;
	uint32_t nr, i;
	const uint32_t *st;

	fstr(&w, "");
	fvt(&w, 1, "samples", "count");
	fvt(&w, 1, "cpu", "nanoseconds");
	fvt(&w, 11, "cpu", "nanoseconds");
	bp_pb_put_int64(&w.out, 12, period);
	bp_pb_put_int64(&w.out, 10, 2 * SEC);
	bp_pb_put_int64(&w.out, 9, 1700000000000000000LL);

	/* mappings: the binary at 0x400000 (file offset 0), and the kernel */
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&m, 2, 0x400000);
	bp_pb_put_uint64(&m, 3, 0x800000);
	bp_pb_put_uint64(&m, 5, fstr(&w, "/usr/bin/app"));
	fmsg(&w.out, 3, &m);
	bp_pb_put_uint64(&m, 1, 2);
	bp_pb_put_uint64(&m, 5, fstr(&w, "[kernel.kallsyms]"));
	fmsg(&w.out, 3, &m);
	/* functions 10: main.main, 11: main.work, 12: main.inlined, 13: do_syscall_64 */
	bp_pb_put_uint64(&m, 1, 10);
	bp_pb_put_uint64(&m, 2, fstr(&w, "main.main"));
	bp_pb_put_uint64(&m, 4, fstr(&w, "/src/main.go"));
	fmsg(&w.out, 5, &m);
	bp_pb_put_uint64(&m, 1, 11);
	bp_pb_put_uint64(&m, 2, fstr(&w, "main.work"));
	fmsg(&w.out, 5, &m);
	bp_pb_put_uint64(&m, 1, 12);
	bp_pb_put_uint64(&m, 2, fstr(&w, "main.inlined"));
	fmsg(&w.out, 5, &m);
	bp_pb_put_uint64(&m, 1, 13);
	bp_pb_put_uint64(&m, 2, fstr(&w, "do_syscall_64"));
	fmsg(&w.out, 5, &m);
	/* locations, ids not from 1: 100 main.main, 101 work with inlined, 102 raw address, 103 kernel */
	bp_pb_put_uint64(&m, 1, 100);
	bp_pb_put_uint64(&m, 2, 1);
	bp_pb_put_uint64(&m, 3, 0x401000);
	bp_pb_put_uint64(&line, 1, 10);
	fmsg(&m, 4, &line);
	fmsg(&w.out, 4, &m);
	bp_pb_put_uint64(&m, 1, 101);
	bp_pb_put_uint64(&m, 2, 1);
	bp_pb_put_uint64(&m, 3, 0x402000);
	bp_pb_put_uint64(&line, 1, 12);	/* line[0]: the inlined callee */
	fmsg(&m, 4, &line);
	bp_pb_put_uint64(&line, 1, 11);
	fmsg(&m, 4, &line);
	fmsg(&w.out, 4, &m);
	bp_pb_put_uint64(&m, 1, 102);
	bp_pb_put_uint64(&m, 2, 1);
	bp_pb_put_uint64(&m, 3, 0x403456);
	fmsg(&w.out, 4, &m);
	bp_pb_put_uint64(&m, 1, 103);
	bp_pb_put_uint64(&m, 2, 2);
	bp_pb_put_uint64(&m, 3, 0xffffffff81000000ULL);
	bp_pb_put_uint64(&line, 1, 13);
	fmsg(&m, 4, &line);
	fmsg(&w.out, 4, &m);

	/* 30 samples in work (leaf first: 101, 100), unpacked location ids */
	bp_pb_put_uint64(&s, 1, 101);
	bp_pb_put_uint64(&s, 1, 100);
	vals[0] = 30;
	vals[1] = 30 * period;
	bp_pb_put_packed(&s, 2, vals, 2);
	fmsg(&w.out, 2, &s);
	/* 10 at an unsymbolized address under main */
	ids[0] = 102;
	ids[1] = 100;
	bp_pb_put_packed(&s, 1, ids, 2);
	vals[0] = 10;
	vals[1] = 10 * period;
	bp_pb_put_packed(&s, 2, vals, 2);
	fmsg(&w.out, 2, &s);
	/* 5 in the kernel, with perf-style labels, pid as a string */
	ids[0] = 103;
	ids[1] = 101;
	ids[2] = 100;
	bp_pb_put_packed(&s, 1, ids, 3);
	vals[0] = 5;
	vals[1] = 5 * period;
	bp_pb_put_packed(&s, 2, vals, 2);
	flabel(&w, &s, "pid", "4242", 0);
	flabel(&w, &s, "tid", NULL, 4243);
	flabel(&w, &s, "comm", "app", 0);
	fmsg(&w.out, 2, &s);

	p = bp_pprof_read(w.out.data, w.out.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->hz, 100);
	assert_true(p->end_ns - p->start_ns == 2 * SEC);
	assert_true(p->start_unix_ns == 1700000000000000000LL);
	assert_int_equal(p->nr_samples, 3);
	assert_int_equal(p->nr_procs, 2);

	/* work's stack, root first: main, work, inlined */
	st = bp_profile__stack_frames(p, p->samples[0].stack, &nr);
	assert_int_equal(nr, 3);
	assert_string_equal(p->frames[st[0]].name, "main.main");
	assert_string_equal(p->frames[st[1]].name, "main.work");
	assert_string_equal(p->frames[st[2]].name, "main.inlined");
	assert_string_equal(p->frames[st[0]].module, "app");
	assert_string_equal(p->frames[st[0]].path, "/usr/bin/app");
	assert_true(p->samples[0].count == 30);
	assert_true(p->samples[0].ns == 30 * period);
	/* the raw address reads as an offset into the file */
	st = bp_profile__stack_frames(p, p->samples[1].stack, &nr);
	f = &p->frames[st[1]];
	assert_null(f->name);
	assert_true(f->offset == 0x3456);
	assert_false(f->kernel);
	/* the kernel mapping's frames are kernel frames; labels make a process */
	st = bp_profile__stack_frames(p, p->samples[2].stack, &nr);
	f = &p->frames[st[nr - 1]];
	assert_string_equal(f->name, "do_syscall_64");
	assert_true(f->kernel);
	assert_int_equal(p->samples[2].pid, 4242);
	assert_int_equal(p->samples[2].tid, 4243);
	assert_string_equal(bp_profile__proc(p, 4242, false)->comm, "app");

	/* and it summarizes: 40 of 40 unlabelled samples have main on the stack */
	assert_int_equal(bp_summarize(p, 20, &sum), 0);
	assert_int_equal(bp_verdicts(p, &sum), 0);
	for (i = 0; i < sum.nr_procs; i++)
		if (sum.procs[i].proc->pid == 0)
			break;
	assert_true(i < sum.nr_procs);
	assert_true(sum.procs[i].samples == 40);
	assert_string_equal(p->frames[sum.procs[i].hot[0].frame].name, "main.inlined");
	bp_summary_free(&sum);
	bp_profile__free(p);
	bp_buf_free(&w.out);
}

/* off-CPU samples from a tool with only a time column: the period gives counts */
static void foreign__time_only_with_wait_labels(void **state)
{
	struct fw w = { .out = BP_BUF_INIT };
	struct bp_buf m = BP_BUF_INIT, s = BP_BUF_INIT, line = BP_BUF_INIT;
	struct bp_profile *p;
	uint64_t v;
	char err[256];

	fstr(&w, "");
	fvt(&w, 1, "wall", "microseconds");
	fvt(&w, 11, "wall", "microseconds");
	bp_pb_put_int64(&w.out, 12, 1000);	/* 1 ms */
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&m, 2, fstr(&w, "poll"));
	fmsg(&w.out, 5, &m);
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&line, 1, 1);
	fmsg(&m, 4, &line);
	fmsg(&w.out, 4, &m);
	v = 1;
	bp_pb_put_packed(&s, 1, &v, 1);
	v = 5000;	/* 5 ms */
	bp_pb_put_packed(&s, 2, &v, 1);
	flabel(&w, &s, "pid", NULL, 7);
	flabel(&w, &s, "wait", "sleep", 0);
	fmsg(&w.out, 2, &s);

	p = bp_pprof_read(w.out.data, w.out.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->hz, 1000);
	assert_int_equal(p->nr_samples, 1);
	assert_int_equal(p->samples[0].kind, BP_KIND_SLEEP);
	assert_true(p->samples[0].ns == 5000000);
	assert_true(p->samples[0].count == 5);
	assert_true(p->offcpu_enabled);
	assert_null(p->frames[0].path);
	assert_string_equal(p->frames[0].module, "[unknown]");
	bp_profile__free(p);
	bp_buf_free(&w.out);
}

/* ------------------------------------------------------------ bad input */

static char last_what[64];

static void assert_rejected(const void *data, size_t len, const char *what)
{
	struct bp_profile *p;
	char err[256] = "";

	errno = 0;
	p = bp_pprof_read(data, len, err, sizeof(err));
	if (p)
		fail_msg("%s: accepted", what);
	assert_true(errno == EINVAL);
	assert_true(err[0]);
	assert_null(strchr(err, '\n'));
	/* one line per kind of damage is enough to read */
	if (strcmp(what, last_what))
		print_message("%s: %s\n", what, err);
	snprintf(last_what, sizeof(last_what), "%s", what);
}

static void read__corrupt_input__rejected(void **state)
{
	struct bp_profile *p = bp_profile__new();
	struct bp_buf file = BP_BUF_INIT, raw = BP_BUF_INIT, gz = BP_BUF_INIT;
	struct bp_buf notprof = BP_BUF_INIT, badref = BP_BUF_INIT;
	unsigned char junk[4096];
	char *copy;
	size_t i, cut;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (i * 2654435761u) >> 13;
	junk[0] = 0x42;	/* neither gzip nor zlib: read as a raw proto */
	assert_rejected(junk, sizeof(junk), "random bytes");
	assert_rejected("", 0, "empty file");
	assert_rejected(NULL, 0, "no data");

	gzip(junk, sizeof(junk), &gz);
	assert_rejected(gz.data, gz.len, "gzip of garbage");
	bp_buf_reset(&gz);

	bp_profile__free(p);
	p = rich_profile();
	assert_int_equal(bp_pprof_write(p, &file), 0);
	/* truncated anywhere: in the header, the data, the CRC or the length */
	for (cut = 1; cut < file.len; cut += cut < 64 ? 1 : 97) {
		copy = malloc(cut);
		memcpy(copy, file.data, cut);
		assert_rejected(copy, cut, "truncated gzip");
		free(copy);
	}
	copy = malloc(file.len - 1);
	memcpy(copy, file.data, file.len - 1);
	assert_rejected(copy, file.len - 1, "gzip missing its last byte");
	free(copy);

	/* a flipped bit in the middle: bad data or a CRC mismatch */
	copy = malloc(file.len);
	memcpy(copy, file.data, file.len);
	copy[file.len / 2] ^= 0x10;
	assert_rejected(copy, file.len, "corrupt gzip");
	free(copy);

	/* trailing bytes that are no gzip member */
	copy = malloc(file.len + 3);
	memcpy(copy, file.data, file.len);
	memcpy(copy + file.len, "xyz", 3);
	assert_rejected(copy, file.len + 3, "trailing garbage");
	free(copy);

	/* valid protobuf, but no profile: no string table */
	bp_pb_put_string(&notprof, 1000, "hello");
	gzip(notprof.data, notprof.len, &gz);
	assert_rejected(gz.data, gz.len, "not a profile");
	bp_buf_reset(&gz);

	/* a sample naming a location that does not exist */
	bp_pb_put_string(&badref, 6, "");
	bp_pb_put_bytes(&badref, 2, "\x0a\x01\x07", 3);
	assert_rejected(badref.data, badref.len, "unknown location");
	bp_buf_reset(&badref);
	bp_pb_put_string(&badref, 6, "");
	bp_pb_put_bytes(&badref, 5, "\x08\x01\x10\x09", 4);	/* name index 9 */
	assert_rejected(badref.data, badref.len, "string index out of range");

	/* every prefix of the raw message: rejected or read, never a crash or a leak */
	gunzip(&file, &raw);
	for (cut = 0; cut < raw.len; cut += 1 + cut / 50) {
		struct bp_profile *q;
		char err[256] = "";

		copy = malloc(cut + 1);
		memcpy(copy, raw.data, cut);
		q = bp_pprof_read(copy, cut, err, sizeof(err));
		assert_true(q || err[0]);
		bp_profile__free(q);
		free(copy);
	}

	/* a broken state document */
	bp_buf_reset(&raw);
	gunzip(&file, &raw);
	copy = memmem(raw.data, raw.len, "\"hz\":499", 8);
	assert_non_null(copy);
	copy[5] = '"';	/* "hz":"99,"... no longer JSON */
	assert_rejected(raw.data, raw.len, "bad state");

	bp_buf_free(&file);
	bp_buf_free(&raw);
	bp_buf_free(&gz);
	bp_buf_free(&notprof);
	bp_buf_free(&badref);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip__every_field_and_the_report),
		cmocka_unit_test(round_trip__system_wide_cycles),
		cmocka_unit_test(round_trip__empty_profile),
		cmocka_unit_test(read__raw_proto_and_foreign_comments),
		cmocka_unit_test(write__pprof_view),
		cmocka_unit_test(foreign__go_cpu_profile_loads),
		cmocka_unit_test(foreign__time_only_with_wait_labels),
		cmocka_unit_test(read__corrupt_input__rejected),
	};

	return cmocka_run_group_tests_name("pprof", tests, NULL, NULL);
}
