// SPDX-License-Identifier: GPL-2.0
/*
 * pprof save format: a rich synthetic profile survives write -> read field
 * for field and renders the same JSON report; other tools' profiles load;
 * corrupt input is rejected with a message, without leaks; and a profile
 * past any bound of export/pprof.h is refused before the work.
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
#include "fuzz/pprof_gen.h"
#include "unit/builders.h"

#define SEC		1000000000ULL
#define STATE_PREFIX_FOR_TEST	"boundprof-state v1 "

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
	r1 = json_report(p);
	r2 = json_report(q);
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
	r1 = json_report(p);
	r2 = json_report(q);
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
	r1 = json_report(p);
	r2 = json_report(q);
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

/* a frame with a source line, inlined into the frame before it or not */
static uint32_t line_frame(struct bp_profile *p, const char *name, uint64_t off,
			   const char *file, uint32_t line, bool inlined)
{
	struct bp_frame f = { .name = name, .module = "split", .path = "/opt/split",
			      .build_id = "0123abcd", .offset = off, .file = file,
			      .line = line, .inlined = inlined };
	int64_t id = bp_profile__frame(p, &f);

	assert_true(id >= 0);
	return id;
}

/* the Profile message without boundprof's state: what another reader sees */
static void strip_state(const struct bp_buf *raw, struct bp_buf *out)
{
	struct bp_pb_reader r;
	struct bp_pb_field f;
	int ret;

	bp_pb_reader_init(&r, raw->data, raw->len);
	while ((ret = bp_pb_next(&r, &f)) > 0) {
		if (f.num == 1000)
			continue;
		if (f.wire == BP_PB_LEN)
			bp_pb_put_bytes(out, f.num, f.data, f.len);
		else
			bp_pb_put_uint64(out, f.num, f.u64);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(out->err, 0);
}

/* Location id's address and function ids, line[0] first; how many lines */
static uint32_t location_lines(const struct bp_buf *raw, uint64_t id, uint64_t *addr,
			       uint64_t *fids, uint32_t max)
{
	struct bp_pb_reader r, lr, xr;
	struct bp_pb_field f, lf, xf;
	uint32_t n = 0;

	bp_pb_reader_init(&r, raw->data, raw->len);
	while (bp_pb_next(&r, &f) == 1) {
		uint64_t lid = 0, a = 0, got[8];
		uint32_t k = 0;

		if (f.num != 4)
			continue;
		bp_pb_reader_init(&lr, f.data, f.len);
		while (bp_pb_next(&lr, &lf) == 1) {
			if (lf.num == 1)
				lid = lf.u64;
			else if (lf.num == 3)
				a = lf.u64;
			else if (lf.num == 4 && k < 8) {
				got[k] = 0;
				bp_pb_reader_init(&xr, lf.data, lf.len);
				while (bp_pb_next(&xr, &xf) == 1)
					if (xf.num == 1)
						got[k] = xf.u64;
				k++;
			}
		}
		if (lid != id)
			continue;
		assert_true(k <= max);
		memcpy(fids, got, k * sizeof(*fids));
		*addr = a;
		n = k;
	}
	return n;
}

/*
 * Frames inlined into the frame before them: one Location per run with a
 * Line per function (innermost first) for pprof, and the very frames,
 * stacks and samples back for boundprof.
 */
static void round_trip__inlined_frames(void **state)
{
	struct bp_profile *p = bp_profile__new(), *q, *f;
	struct bp_buf file = BP_BUF_INIT, raw = BP_BUF_INIT, plain = BP_BUF_INIT, again = BP_BUF_INIT;
	uint32_t libc, m, a, b, lcg, mix, top, ksched, unk, rot, deep[300];
	uint32_t s_a, s_b, s_root, s_two, s_deep, s_unk;
	uint32_t i, nr, nlocs = 0;
	uint64_t fids[8], addr = 0;
	const uint32_t *st;
	char *r1, *r2, err[256];

	libc = bld_frame(p, "__libc_start_main", "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6",
			 NULL, 0x27000, false);
	m = line_frame(p, "main", 0x1200, "/src/split.c", 50, false);
	a = line_frame(p, "alpha", 0x1190, "/src/split.c", 33, false);
	b = line_frame(p, "beta", 0x11d0, "/src/split.c", 39, false);
	/* inlined into alpha and beta at their addresses (the symbolizer's offsets) */
	lcg = line_frame(p, "fixture_lcg", 0x1194, "/src/fixture.h", 20, true);
	mix = line_frame(p, "fixture_mix", 0x11d4, "/src/fixture.h", 12, true);
	/* inlined, at the root: nothing to attach it to */
	top = line_frame(p, "start_inl", 0x1000, "/src/crt.c", 5, true);
	ksched = bld_frame(p, "schedule", "[kernel]", NULL, "feedbeef", 0xabc000, true);
	/* an unnamed frame is its address: it must not come back at the inlined one's */
	unk = bld_frame(p, NULL, "split", "/opt/split", "0123abcd", 0x1500, false);
	rot = line_frame(p, "fixture_rot", 0x1504, "/src/fixture.h", 7, true);
	/* a run longer than a reader takes in one Location */
	for (i = 0; i < 300; i++)
		deep[i] = line_frame(p, "deep_inl", 0x3000, "/src/deep.h", i + 1, true);

	s_a = BLD_STACK(p, libc, m, a, lcg);
	s_b = BLD_STACK(p, libc, m, b, lcg, mix, ksched);
	s_root = BLD_STACK(p, top, m, a, lcg);
	s_two = BLD_STACK(p, m, a, lcg, b, lcg);
	s_unk = BLD_STACK(p, libc, m, unk, rot);
	{
		uint32_t fr[302] = { m, a };

		memcpy(fr + 2, deep, sizeof(deep));
		s_deep = bld_stack(p, fr, 302);
	}
	bld_proc(p, 100, 1, "split", "split 3");
	bld_sample(p, 100, 100, BP_KIND_ONCPU, s_a, 75, 750000000);
	bld_sample(p, 100, 100, BP_KIND_ONCPU, s_b, 25, 250000000);
	bld_sample(p, 100, 101, BP_KIND_LOCK, s_b, 3, 30000);
	bld_sample(p, 100, 101, BP_KIND_ONCPU, s_root, 5, 50000000);
	bld_sample(p, 100, 102, BP_KIND_ONCPU, s_two, 7, 70000000);
	bld_sample(p, 100, 102, BP_KIND_ONCPU, s_deep, 2, 20000000);
	bld_sample(p, 100, 102, BP_KIND_ONCPU, s_unk, 1, 10000000);
	p->hz = 100;
	p->start_ns = 1000;
	p->end_ns = 1000 + SEC;

	q = round_trip(p, &file);
	assert_profile_eq(p, q);
	r1 = json_report(p);
	r2 = json_report(q);
	assert_string_equal(r1, r2);
	assert_int_equal(bp_pprof_write(q, &again), 0);
	assert_int_equal(again.len, file.len);
	assert_memory_equal(again.data, file.data, file.len);

	/*
	 * In the file: the frames' own Locations, then one per distinct run
	 * ([alpha lcg], [beta lcg mix], [beta lcg], [unk rot]), the innermost line first,
	 * at the innermost frame's address. The root's start_inl and the
	 * 300 deep_inl frames keep their own.
	 */
	gunzip(&file, &raw);
	{
		struct bp_pb_reader r;
		struct bp_pb_field fl;

		bp_pb_reader_init(&r, raw.data, raw.len);
		while (bp_pb_next(&r, &fl) == 1)
			nlocs += fl.num == 4;
	}
	assert_int_equal(nlocs, p->nr_frames + 4);
	assert_int_equal(location_lines(&raw, p->nr_frames + 1, &addr, fids, 8), 2);
	assert_true(fids[0] == lcg + 1 && fids[1] == a + 1);
	assert_true(addr == 0x1194);
	assert_int_equal(location_lines(&raw, p->nr_frames + 2, &addr, fids, 8), 3);
	assert_true(fids[0] == mix + 1 && fids[1] == lcg + 1 && fids[2] == b + 1);
	assert_true(addr == 0x11d4);
	assert_int_equal(location_lines(&raw, p->nr_frames + 3, &addr, fids, 8), 2);
	assert_true(fids[0] == lcg + 1 && fids[1] == b + 1);
	assert_int_equal(location_lines(&raw, p->nr_frames + 4, &addr, fids, 8), 2);
	assert_true(fids[0] == rot + 1 && fids[1] == unk + 1);
	assert_true(addr == 0x1504);
	assert_int_equal(location_lines(&raw, lcg + 1, &addr, fids, 8), 1);
	assert_true(fids[0] == lcg + 1);

	/* read as another tool's profile: the lines are the calls, inlined as written */
	strip_state(&raw, &plain);
	f = bp_pprof_read(plain.data, plain.len, err, sizeof(err));
	if (!f)
		fail_msg("read without the state: %s", err);
	assert_int_equal(f->nr_samples, p->nr_samples);
	st = bp_profile__stack_frames(f, f->samples[1].stack, &nr);
	assert_int_equal(nr, 6);
	assert_string_equal(f->frames[st[2]].name, "beta");
	assert_false(f->frames[st[2]].inlined);
	assert_string_equal(f->frames[st[3]].name, "fixture_lcg");
	assert_true(f->frames[st[3]].inlined);
	assert_string_equal(f->frames[st[4]].name, "fixture_mix");
	assert_true(f->frames[st[4]].inlined);
	assert_int_equal(f->frames[st[4]].line, 12);
	assert_string_equal(f->frames[st[5]].name, "schedule");
	st = bp_profile__stack_frames(f, f->samples[4].stack, &nr);
	assert_int_equal(nr, 5);
	assert_true(f->frames[st[2]].inlined && f->frames[st[4]].inlined);
	assert_false(f->frames[st[1]].inlined || f->frames[st[3]].inlined);

	free(r1);
	free(r2);
	bp_buf_free(&file);
	bp_buf_free(&raw);
	bp_buf_free(&plain);
	bp_buf_free(&again);
	bp_profile__free(f);
	bp_profile__free(p);
	bp_profile__free(q);
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
	bp_pb_put_uint64(&line, 2, 17);	/* main.go:17 */
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
	/* Function.filename with Line.line is the source position */
	assert_string_equal(p->frames[st[0]].file, "/src/main.go");
	assert_int_equal(p->frames[st[0]].line, 17);
	assert_null(p->frames[st[1]].file);
	/* line[0] of a location is inlined into the line after it */
	assert_false(p->frames[st[1]].inlined);
	assert_true(p->frames[st[2]].inlined);
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
	/* the time of a function inlined into another is that other's, at its line */
	assert_string_equal(p->frames[sum.procs[i].hot[0].frame].name, "main.work");
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

/*
 * On-CPU samples with a count of 0 (a foreign profile's zero column): they
 * add nothing to any hotspot, and summarizing them must not count their
 * frames as touched again for each sample (it overran the list of them).
 */
static void foreign__zero_count_samples__summarize(void **state)
{
	struct fw w = { .out = BP_BUF_INIT };
	struct bp_buf m = BP_BUF_INIT, s = BP_BUF_INIT, line = BP_BUF_INIT;
	struct bp_summary sum;
	struct bp_profile *p;
	uint64_t v;
	char err[256];
	int tid;

	fstr(&w, "");
	fvt(&w, 1, "samples", "count");
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&m, 2, fstr(&w, "spin"));
	fmsg(&w.out, 5, &m);
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&line, 1, 1);
	fmsg(&m, 4, &line);
	fmsg(&w.out, 4, &m);
	for (tid = 1; tid <= 4; tid++) {
		v = 1;
		bp_pb_put_packed(&s, 1, &v, 1);
		v = 0;
		bp_pb_put_packed(&s, 2, &v, 1);
		flabel(&w, &s, "pid", NULL, 7);
		flabel(&w, &s, "tid", NULL, tid);
		fmsg(&w.out, 2, &s);
	}
	p = bp_pprof_read(w.out.data, w.out.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->nr_samples, 4);
	assert_int_equal(bp_summarize(p, 20, &sum), 0);
	assert_int_equal(bp_verdicts(p, &sum), 0);
	assert_int_equal(sum.nr_procs, 1);
	assert_true(sum.procs[0].samples == 0);
	assert_int_equal(sum.procs[0].nr_hot, 0);
	bp_summary_free(&sum);
	bp_profile__free(p);
	bp_buf_free(&w.out);
}

/* a sample with no location, before any other stack: one empty stack */
static void foreign__empty_stack_first__reads(void **state)
{
	static const char raw[] = "\x12\x00\x32\x00";	/* Sample {}, string_table "" */
	struct bp_profile *p;
	char err[256];
	uint32_t nr;

	p = bp_pprof_read(raw, sizeof(raw) - 1, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->nr_stacks, 1);
	assert_non_null(bp_profile__stack_frames(p, 0, &nr));
	assert_int_equal(nr, 0);
	bp_profile__free(p);
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

/* ------------------------------------------------------------ bounds */

/* refused as past a bound (E2BIG), with a one-line reason naming it */
static void assert_too_big(const void *data, size_t len, const char *reason)
{
	struct bp_profile *p;
	char err[256] = "";

	errno = 0;
	p = bp_pprof_read(data, len, err, sizeof(err));
	if (p)
		fail_msg("accepted, expected \"%s\"", reason);
	if (errno != E2BIG || !strstr(err, reason))
		fail_msg("errno %d \"%s\", expected E2BIG \"%s\"", errno, err, reason);
	assert_null(strchr(err, '\n'));
}

static void stacks_too_big(uint32_t lines, uint32_t refs, uint32_t samples, const char *reason)
{
	struct bp_buf raw = BP_BUF_INIT;

	assert_int_equal(pprof_gen_stacks(&raw, lines, refs, samples), 0);
	assert_too_big(raw.data, raw.len, reason);
	bp_buf_free(&raw);
}

/* the 100k-line location named 1000 times: under 500 bytes, refused at the location */
static void bounds__stack_bomb__refused(void **state)
{
	struct bp_buf raw = BP_BUF_INIT, gz = BP_BUF_INIT;

	assert_int_equal(pprof_gen_stacks(&raw, 100000, 1000, 1), 0);
	assert_int_equal(pprof_gen_gzip(raw.data, raw.len, 9, &gz), 0);
	assert_true(gz.len < 512);
	assert_too_big(gz.data, gz.len, "location 0 has more than 256 lines");
	bp_buf_free(&raw);
	bp_buf_free(&gz);
}

/* each bound is a limit, not one less: at it the profile reads */
static void bounds__at_the_limits__read(void **state)
{
	struct bp_buf raw = BP_BUF_INIT;
	struct bp_profile *p;
	char err[256];
	uint32_t nr;

	assert_int_equal(pprof_gen_stacks(&raw, BP_PPROF_MAX_LINES,
					  BP_PPROF_MAX_DEPTH / BP_PPROF_MAX_LINES, 3), 0);
	p = bp_pprof_read(raw.data, raw.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->nr_samples, 1);
	bp_profile__stack_frames(p, p->samples[0].stack, &nr);
	assert_int_equal(nr, BP_PPROF_MAX_DEPTH);
	assert_true(p->samples[0].count == 3);
	bp_profile__free(p);
	bp_buf_reset(&raw);

	assert_int_equal(pprof_gen_stacks(&raw, 1, BP_PPROF_MAX_DEPTH, 1), 0);
	p = bp_pprof_read(raw.data, raw.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	bp_profile__free(p);
	bp_buf_free(&raw);
}

static void bounds__frames__refused_past_each(void **state)
{
	char what[96];

	snprintf(what, sizeof(what), "location 0 has more than %u lines", BP_PPROF_MAX_LINES);
	stacks_too_big(BP_PPROF_MAX_LINES + 1, 1, 1, what);
	snprintf(what, sizeof(what), "sample 0 has more than %u locations", BP_PPROF_MAX_DEPTH);
	stacks_too_big(1, BP_PPROF_MAX_DEPTH + 1, 1, what);
	snprintf(what, sizeof(what), "sample 0 has more than %u frames", BP_PPROF_MAX_DEPTH);
	stacks_too_big(BP_PPROF_MAX_LINES, BP_PPROF_MAX_DEPTH / BP_PPROF_MAX_LINES + 1, 1, what);
	/* the same deepest stack, once too often */
	snprintf(what, sizeof(what), "more than %u frames in all samples", BP_PPROF_MAX_FRAMES);
	stacks_too_big(BP_PPROF_MAX_LINES, BP_PPROF_MAX_DEPTH / BP_PPROF_MAX_LINES,
		       BP_PPROF_MAX_FRAMES / BP_PPROF_MAX_DEPTH + 1, what);
}

static void bounds__sizes_and_counts__refused_past_each(void **state)
{
	struct bp_buf raw = BP_BUF_INIT, gz = BP_BUF_INIT;
	char what[96], *big;
	size_t i, n;

	/* decompressed size: a gzip of zeros one byte past it, and raw bytes past it */
	n = (size_t)BP_PPROF_MAX_INFLATED + 1;
	big = calloc(1, n);
	assert_non_null(big);
	assert_int_equal(pprof_gen_gzip(big, n, 1, &gz), 0);
	snprintf(what, sizeof(what), "larger than %u MiB", BP_PPROF_MAX_INFLATED >> 20);
	assert_too_big(gz.data, gz.len, what);
	assert_too_big(big, n, what);
	free(big);

	/* strings, one more than may be */
	for (i = 0; i <= BP_PPROF_MAX_RECORDS; i++)
		bp_pb_put_string(&raw, 6, "");
	snprintf(what, sizeof(what), "more than %u strings", BP_PPROF_MAX_RECORDS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_reset(&raw);

	/* comments: one byte each, packed */
	bp_pb_put_string(&raw, 6, "");
	bp_pb_put_tag(&raw, 13, BP_PB_LEN);
	bp_pb_put_varint(&raw, BP_PPROF_MAX_RECORDS + 1);
	for (i = 0; i <= BP_PPROF_MAX_RECORDS; i++)
		bp_buf_putc(&raw, 0);
	snprintf(what, sizeof(what), "more than %u comments", BP_PPROF_MAX_RECORDS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_free(&raw);
	bp_buf_free(&gz);
}

/* a raw profile whose state document is text */
static void state_profile(struct bp_buf *raw, const char *text, size_t len)
{
	struct bp_buf st = BP_BUF_INIT;

	bp_pb_put_string(raw, 6, "");
	bp_buf_puts(&st, STATE_PREFIX_FOR_TEST);
	bp_buf_append(&st, text, len);
	bp_pb_put_bytes(raw, 1000, st.data, st.len);
	assert_false(st.err || raw->err);
	bp_buf_free(&st);
}

/* ... is head, n copies of item separated by commas, tail */
static void state_array(struct bp_buf *raw, const char *head, const char *item, size_t n,
			const char *tail)
{
	struct bp_buf doc = BP_BUF_INIT;
	size_t i;

	bp_buf_puts(&doc, head);
	for (i = 0; i < n; i++) {
		if (i)
			bp_buf_putc(&doc, ',');
		bp_buf_puts(&doc, item);
	}
	bp_buf_puts(&doc, tail);
	state_profile(raw, doc.data, doc.len);
	bp_buf_free(&doc);
}

static void bounds__state__refused_past_each(void **state)
{
	struct bp_buf raw = BP_BUF_INIT;
	char what[96], *text;
	size_t n;

	n = (size_t)BP_PPROF_MAX_STATE + 1;
	text = malloc(n);
	assert_non_null(text);
	memset(text, ' ', n);
	text[0] = '{';
	text[n - 1] = '}';
	state_profile(&raw, text, n);
	free(text);
	snprintf(what, sizeof(what), "boundprof state larger than %u MiB",
		 BP_PPROF_MAX_STATE >> 20);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_reset(&raw);

	state_array(&raw, "{\"procs\":[", "{}", BP_PPROF_MAX_PROCS + 1, "]}");
	snprintf(what, sizeof(what), "more than %u processes", BP_PPROF_MAX_PROCS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_reset(&raw);

	state_array(&raw, "{\"procs\":[{\"threads\":[", "{}", BP_PPROF_MAX_PROC_THREADS + 1,
		    "]}]}");
	snprintf(what, sizeof(what), "more than %u threads in a process",
		 BP_PPROF_MAX_PROC_THREADS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_reset(&raw);

	state_array(&raw, "{\"io_rows\":[", "{}", BP_PPROF_MAX_IO_ROWS + 1, "]}");
	snprintf(what, sizeof(what), "more than %u IO rows", BP_PPROF_MAX_IO_ROWS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_reset(&raw);

	state_array(&raw, "{\"io_devs\":[", "{}", BP_PPROF_MAX_IO_DEVS + 1, "]}");
	snprintf(what, sizeof(what), "more than %u block devices", BP_PPROF_MAX_IO_DEVS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_reset(&raw);

	state_array(&raw, "{\"cgroups\":[", "{}", BP_PPROF_MAX_CGROUPS + 1, "]}");
	snprintf(what, sizeof(what), "more than %u cgroups", BP_PPROF_MAX_CGROUPS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_reset(&raw);

	state_array(&raw, "{\"stacks\":[[", "0", BP_PPROF_MAX_DEPTH + 1, "]]}");
	snprintf(what, sizeof(what), "more than %u frames in a stack", BP_PPROF_MAX_DEPTH);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_free(&raw);
}

/* a foreign profile: `samples` samples of process 7, thread 1000 + i % threads */
static void interleaved_threads(struct bp_buf *out, uint32_t threads, uint32_t samples)
{
	struct fw w = { .out = BP_BUF_INIT };
	struct bp_buf m = BP_BUF_INIT, s = BP_BUF_INIT, line = BP_BUF_INIT, lab = BP_BUF_INIT;
	uint64_t k_pid, k_tid, v = 1;
	uint32_t i;

	fstr(&w, "");
	fvt(&w, 1, "samples", "count");
	k_pid = fstr(&w, "pid");
	k_tid = fstr(&w, "tid");
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&m, 2, fstr(&w, "work"));
	fmsg(&w.out, 5, &m);
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&line, 1, 1);
	fmsg(&m, 4, &line);
	fmsg(&w.out, 4, &m);
	for (i = 0; i < samples; i++) {
		bp_buf_reset(&s);
		bp_pb_put_packed(&s, 1, &v, 1);
		bp_pb_put_packed(&s, 2, &v, 1);
		bp_buf_reset(&lab);
		bp_pb_put_uint64(&lab, 1, k_pid);
		bp_pb_put_int64(&lab, 3, 7);
		bp_pb_put_bytes(&s, 3, lab.data, lab.len);
		bp_buf_reset(&lab);
		bp_pb_put_uint64(&lab, 1, k_tid);
		bp_pb_put_int64(&lab, 3, 1000 + i % threads);
		bp_pb_put_bytes(&s, 3, lab.data, lab.len);
		bp_pb_put_bytes(&w.out, 2, s.data, s.len);
	}
	assert_false(w.out.err || s.err || lab.err);
	*out = w.out;
	bp_buf_free(&s);
	bp_buf_free(&lab);
}

/*
 * Many threads of one process, their samples interleaved: each thread is
 * looked for once (a scan of the process's threads for every sample was
 * quadratic); and one thread past the bound is refused.
 */
static void bounds__interleaved_threads__each_found_once(void **state)
{
	struct bp_buf raw = BP_BUF_INIT;
	struct bp_profile *p;
	struct bp_proc *pr;
	char err[256], what[96];

	interleaved_threads(&raw, 4096, 8 * 4096);
	p = bp_pprof_read(raw.data, raw.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	pr = bp_profile__proc(p, 7, false);
	assert_non_null(pr);
	assert_int_equal(pr->nr_threads, 4096);
	assert_int_equal(p->nr_samples, 4096);
	assert_true(p->samples[0].count == 8);
	bp_profile__free(p);
	bp_buf_free(&raw);

	interleaved_threads(&raw, BP_PPROF_MAX_PROC_THREADS + 1, BP_PPROF_MAX_PROC_THREADS + 1);
	snprintf(what, sizeof(what), "more than %u threads in a process", BP_PPROF_MAX_PROC_THREADS);
	assert_too_big(raw.data, raw.len, what);
	bp_buf_free(&raw);
}

/*
 * The state names the module of many mappings: each location finds its own
 * (a scan of the state's modules per location was quadratic).
 */
static void state__many_modules__each_location_finds_its_own(void **state)
{
	const uint32_t n = 100000;
	struct fw w = { .out = BP_BUF_INIT };
	struct bp_buf m = BP_BUF_INIT, line = BP_BUF_INIT, doc = BP_BUF_INIT;
	struct bp_profile *p;
	char err[256], name[32];
	uint32_t i;

	fstr(&w, "");
	bp_buf_puts(&doc, STATE_PREFIX_FOR_TEST "{\"modules\":[");
	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "/lib/file%u.so", i);
		bp_pb_put_uint64(&m, 1, i);
		bp_pb_put_uint64(&m, 5, fstr(&w, name));
		fmsg(&w.out, 3, &m);
		snprintf(name, sizeof(name), "fn%u", i);
		bp_pb_put_uint64(&m, 1, i);
		bp_pb_put_uint64(&m, 2, fstr(&w, name));
		bp_pb_put_uint64(&m, 3, w.nstr - 1);
		fmsg(&w.out, 5, &m);
		bp_pb_put_uint64(&m, 1, i);
		bp_pb_put_uint64(&m, 2, i);
		bp_pb_put_uint64(&line, 1, i);
		fmsg(&m, 4, &line);
		fmsg(&w.out, 4, &m);
		/* in reverse, and a second name for each that must lose to the first */
		bp_buf_printf(&doc, "%s[%u,\"mod%u\"],[%u,\"late%u\"]", i > 1 ? "," : "",
			      n + 1 - i, n + 1 - i, n + 1 - i, n + 1 - i);
	}
	bp_buf_puts(&doc, "]}");
	bp_pb_put_bytes(&w.out, 1000, doc.data, doc.len);
	p = bp_pprof_read(w.out.data, w.out.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->nr_frames, n);
	for (i = 0; i < n; i += 997) {
		snprintf(name, sizeof(name), "mod%u", i + 1);
		assert_string_equal(p->frames[i].module, name);
	}
	bp_profile__free(p);
	bp_buf_free(&w.out);
	bp_buf_free(&doc);
}

/* a Location of id with these function ids, line[0] first */
static void floc(struct fw *w, uint64_t id, const uint64_t *fids, uint32_t n)
{
	struct bp_buf m = BP_BUF_INIT, line = BP_BUF_INIT;
	uint32_t k;

	bp_pb_put_uint64(&m, 1, id);
	bp_pb_put_uint64(&m, 3, 0x1000 + id);
	for (k = 0; k < n; k++) {
		bp_pb_put_uint64(&line, 1, fids[k]);
		fmsg(&m, 4, &line);
	}
	fmsg(&w->out, 4, &m);
}

/*
 * A file with our state whose multi-line Locations are hand-made: before
 * the Locations they name, naming themselves, or functions without a
 * Location of their own. Each line is a frame all the same (made from its
 * function), and an unknown function is refused with a reason.
 */
static void state__inlined_lines_without_their_locations(void **state)
{
	static const char doc[] = STATE_PREFIX_FOR_TEST "{}";
	struct fw w = { .out = BP_BUF_INIT };
	struct bp_buf m = BP_BUF_INIT, s = BP_BUF_INIT;
	struct bp_profile *p;
	const uint32_t *st;
	char err[256], name[8];
	uint64_t ids[1] = { 5 }, one = 1, self[3] = { 5, 2, 1 }, bad[2] = { 9, 1 };
	uint32_t nr, i;

	fstr(&w, "");
	fvt(&w, 1, "samples", "count");
	fvt(&w, 1, "cpu", "nanoseconds");
	for (i = 1; i <= 5; i++) {
		snprintf(name, sizeof(name), "fn%u", i);
		bp_pb_put_uint64(&m, 1, i);
		bp_pb_put_uint64(&m, 2, fstr(&w, name));
		/* fn2 is marked inlined, the others are not */
		bp_pb_put_uint64(&m, 3, i == 2 ? fstr(&w, "fn2_[inl]") : w.nstr - 1);
		fmsg(&w.out, 5, &m);
	}
	/* first in the file: 5 = [fn5 (itself), fn2 (no Location 2), fn1] */
	floc(&w, 5, self, 3);
	floc(&w, 1, &one, 1);
	bp_pb_put_packed(&s, 1, ids, 1);
	bp_pb_put_packed(&s, 2, (uint64_t[]){ 3, 30 }, 2);
	fmsg(&w.out, 2, &s);
	bp_pb_put_bytes(&w.out, 1000, doc, strlen(doc));

	p = bp_pprof_read(w.out.data, w.out.len, err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	/* Location 1's frame keeps id 0: the multi-line one is read after it */
	assert_string_equal(p->frames[0].name, "fn1");
	assert_int_equal(p->nr_samples, 1);
	st = bp_profile__stack_frames(p, p->samples[0].stack, &nr);
	assert_int_equal(nr, 3);
	assert_int_equal(st[0], 0);
	assert_string_equal(p->frames[st[1]].name, "fn2");
	assert_true(p->frames[st[1]].inlined);
	assert_string_equal(p->frames[st[2]].name, "fn5");
	assert_int_equal(p->frames[st[2]].offset, 0x1005);
	assert_true(p->samples[0].count == 3 && p->samples[0].ns == 30);
	bp_profile__free(p);

	/* and a line of a function the file does not have */
	floc(&w, 6, bad, 2);
	assert_null(bp_pprof_read(w.out.data, w.out.len, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "location 6 refers to unknown function 9");
	bp_buf_free(&w.out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip__every_field_and_the_report),
		cmocka_unit_test(round_trip__system_wide_cycles),
		cmocka_unit_test(round_trip__empty_profile),
		cmocka_unit_test(round_trip__inlined_frames),
		cmocka_unit_test(read__raw_proto_and_foreign_comments),
		cmocka_unit_test(write__pprof_view),
		cmocka_unit_test(foreign__go_cpu_profile_loads),
		cmocka_unit_test(foreign__time_only_with_wait_labels),
		cmocka_unit_test(foreign__zero_count_samples__summarize),
		cmocka_unit_test(foreign__empty_stack_first__reads),
		cmocka_unit_test(read__corrupt_input__rejected),
		cmocka_unit_test(bounds__stack_bomb__refused),
		cmocka_unit_test(bounds__at_the_limits__read),
		cmocka_unit_test(bounds__frames__refused_past_each),
		cmocka_unit_test(bounds__sizes_and_counts__refused_past_each),
		cmocka_unit_test(bounds__state__refused_past_each),
		cmocka_unit_test(bounds__interleaved_threads__each_found_once),
		cmocka_unit_test(state__many_modules__each_location_finds_its_own),
		cmocka_unit_test(state__inlined_lines_without_their_locations),
	};

	return cmocka_run_group_tests_name("pprof", tests, NULL, NULL);
}
