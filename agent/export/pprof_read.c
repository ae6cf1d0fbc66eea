// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof save format (docs/pprof.md): a gzip-compressed profile.proto.
 * Samples, frames and stacks are ordinary proto messages so that any pprof
 * reader shows them; everything else of struct bp_profile travels as one
 * JSON document in a comment, so that a saved profile re-renders every
 * report with the same numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/hex.h"
#include "util/json.h"
#include "util/log.h"
#include "util/pb.h"
#include "export/pprof.h"
#include "util/utf8.h"

#define STATE_PREFIX	"boundprof-state v1 "
/* a decompression bomb stops here; real profiles are megabytes */
#define MAX_INFLATED	(1ull << 30)
/* how kernel frames are told apart in Function.system_name */
#define KERNEL_MARK	"_[k]"

/* profile.proto field numbers */
enum {
	PROF_SAMPLE_TYPE = 1,
	PROF_SAMPLE = 2,
	PROF_MAPPING = 3,
	PROF_LOCATION = 4,
	PROF_FUNCTION = 5,
	PROF_STRING_TABLE = 6,
	PROF_TIME_NANOS = 9,
	PROF_DURATION_NANOS = 10,
	PROF_PERIOD_TYPE = 11,
	PROF_PERIOD = 12,
	PROF_COMMENT = 13,
	/*
	 * boundprof's own state, in a field number profile.proto does not use:
	 * every protobuf reader skips it, where a comment would be printed in
	 * the header of `go tool pprof -top` (kilobytes of JSON).
	 */
	PROF_BOUNDPROF_STATE = 1000,
	PROF_DEFAULT_SAMPLE_TYPE = 14,
};

enum { VT_TYPE = 1, VT_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
};
enum { LOC_ID = 1, LOC_MAPPING_ID = 2, LOC_ADDRESS = 3, LOC_LINE = 4 };
enum { LINE_FUNCTION_ID = 1 };
enum { FUNC_ID = 1, FUNC_NAME = 2, FUNC_SYSTEM_NAME = 3, FUNC_FILENAME = 4 };

/* the value columns we write, in sample_type order */
enum { COL_SAMPLES, COL_CPU, COL_OFFCPU, COL_IO, COL_WAITS, COL__MAX };

static const char *const col_type[COL__MAX] = {
	[COL_SAMPLES] = "samples",
	[COL_CPU] = "cpu",
	[COL_OFFCPU] = "offcpu",
	[COL_IO] = "io",
	[COL_WAITS] = "waits",
};

static const char *const col_unit[COL__MAX] = {
	[COL_SAMPLES] = "count",
	[COL_CPU] = "nanoseconds",
	[COL_OFFCPU] = "nanoseconds",
	[COL_IO] = "nanoseconds",
	[COL_WAITS] = "count",
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ================================================================== write */

/* the string table being built: every string once, in order of first use */
struct strtab {
	struct bp_buf bytes;	/* the strings back to back */
	uint64_t *off;
	uint32_t *len;
	uint32_t nr, cap;
	struct bp_htab h;
};

struct str_key {
	const char *s;
	size_t len;
};

static bool strtab_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct strtab *t = ctx;
	const struct str_key *k = key;

	if (t->len[idx] != k->len)
		return false;
	return !k->len || !memcmp(t->bytes.data + t->off[idx], k->s, k->len);
}

/* the index of the string, added when new; -ENOMEM */
static int64_t strtab_add_n(struct strtab *t, const char *s, size_t len)
{
	struct str_key k = { s, len };
	uint64_t h = bp_hash_bytes(s, len, 3);
	uint32_t idx;

	if (bp_htab_find(&t->h, h, strtab_eq, t, &k, &idx) == 0)
		return idx;
	if (len > UINT32_MAX || t->nr == UINT32_MAX)
		return -ENOMEM;
	if (t->nr == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 256;
		uint64_t *noff = realloc(t->off, (size_t)ncap * sizeof(*noff));
		uint32_t *nlen;

		if (!noff)
			return -ENOMEM;
		t->off = noff;
		nlen = realloc(t->len, (size_t)ncap * sizeof(*nlen));
		if (!nlen)
			return -ENOMEM;
		t->len = nlen;
		t->cap = ncap;
	}
	t->off[t->nr] = t->bytes.len;
	t->len[t->nr] = len;
	if (bp_buf_append(&t->bytes, s, len) || bp_htab_insert(&t->h, h, t->nr))
		return -ENOMEM;
	return t->nr++;
}

static int64_t strtab_add(struct strtab *t, const char *s)
{
	return strtab_add_n(t, s ? s : "", s ? strlen(s) : 0);
}

static void strtab_free(struct strtab *t)
{
	bp_buf_free(&t->bytes);
	free(t->off);
	free(t->len);
	bp_htab_free(&t->h);
}

/* one Mapping per distinct (module, path, build-id); the strings are interned */
struct wmap {
	const char *module;
	const char *path;
	const char *build_id;
};

struct writer {
	const struct bp_profile *p;
	struct strtab st;
	struct bp_buf body;	/* fields 1..5 of the Profile */
	struct bp_buf msg;	/* one nested message */
	struct bp_buf sub;	/* a message nested in that one */
	struct bp_buf tmp;	/* scratch text */
	struct bp_buf hex;	/* hex digits of the state's non-UTF-8 strings */
	struct wmap *maps;
	uint32_t nr_maps, cap_maps;
	struct bp_htab map_h;
	uint32_t *frame_map;	/* mapping id of each frame */
	uint64_t *ids;		/* scratch: a sample's location ids */
	uint32_t cap_ids;
	int err;
};

/* a string's index, remembering the first failure so callers check once */
static uint64_t wstr(struct writer *w, const char *s)
{
	int64_t i = strtab_add(&w->st, s);

	if (i < 0) {
		if (!w->err)
			w->err = (int)i;
		return 0;
	}
	return i;
}

static bool wmap_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct wmap *a = &((const struct writer *)ctx)->maps[idx], *b = key;

	return a->module == b->module && a->path == b->path && a->build_id == b->build_id;
}

/* the mapping id (1-based) of a frame's module; 0 on -ENOMEM */
static uint32_t frame_mapping(struct writer *w, const struct bp_frame *f)
{
	struct wmap k = { f->module, f->path, f->build_id };
	const void *ptrs[3] = { k.module, k.path, k.build_id };
	uint64_t h = bp_hash_bytes(ptrs, sizeof(ptrs), 4);
	uint32_t idx;

	if (bp_htab_find(&w->map_h, h, wmap_eq, w, &k, &idx) == 0)
		return idx + 1;
	if (w->nr_maps == w->cap_maps) {
		uint32_t ncap = w->cap_maps ? w->cap_maps * 2 : 64;
		struct wmap *n = realloc(w->maps, (size_t)ncap * sizeof(*n));

		if (!n)
			return 0;
		w->maps = n;
		w->cap_maps = ncap;
	}
	if (bp_htab_insert(&w->map_h, h, w->nr_maps))
		return 0;
	w->maps[w->nr_maps] = k;
	return ++w->nr_maps;
}

static bool has_path(const struct bp_frame *f)
{
	return f->path && f->path[0];
}

/*
 * pprof takes mapping[0] for the main binary (go tool pprof prints it as
 * "File:"). Ours are numbered by first use, which puts the dynamic loader
 * first; the user file with the most on-CPU leaf samples is a better guess.
 */
static int main_mapping_first(struct writer *w)
{
	const struct bp_profile *p = w->p;
	uint64_t *weight = calloc(w->nr_maps + 1, sizeof(*weight));
	uint32_t i, nr, best = 0;
	struct wmap m;

	if (!weight)
		return -ENOMEM;
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *fr = bp_profile__stack_frames(p, s->stack, &nr);
		const struct bp_frame *leaf = nr ? &p->frames[fr[nr - 1]] : NULL;

		if (s->kind == BP_KIND_ONCPU && leaf && !leaf->kernel && has_path(leaf))
			weight[w->frame_map[fr[nr - 1]] - 1] += s->count;
	}
	for (i = 1; i < w->nr_maps; i++)
		if (weight[i] > weight[best])
			best = i;
	free(weight);
	if (!best)
		return 0;
	/* move it to the front, the others keep their order (map_h is stale from here on) */
	m = w->maps[best];
	memmove(&w->maps[1], &w->maps[0], best * sizeof(m));
	w->maps[0] = m;
	for (i = 0; i < p->nr_frames; i++) {
		if (w->frame_map[i] == best + 1)
			w->frame_map[i] = 1;
		else if (w->frame_map[i] <= best)
			w->frame_map[i]++;
	}
	return 0;
}

/*
 * Frames: Function id = Location id = frame id + 1, so a reader gets the
 * same frame ids back. Function.name is the frame label; system_name says
 * what the label is (docs/pprof.md): the name itself for a named user frame,
 * name + "_[k]" for a named kernel frame, "" or "_[k]" for an unnamed user or
 * kernel frame, whose label is module+0xOFFSET.
 */
static int write_frames(struct writer *w)
{
	const struct bp_profile *p = w->p;
	uint32_t i;
	int err;

	w->frame_map = calloc(p->nr_frames + 1, sizeof(*w->frame_map));
	if (!w->frame_map)
		return -ENOMEM;
	for (i = 0; i < p->nr_frames; i++) {
		w->frame_map[i] = frame_mapping(w, &p->frames[i]);
		if (!w->frame_map[i])
			return -ENOMEM;
	}
	err = main_mapping_first(w);
	if (err)
		return err;
	for (i = 0; i < p->nr_frames; i++) {
		const struct bp_frame *f = &p->frames[i];
		uint64_t name, sys;

		bp_buf_reset(&w->tmp);
		if (f->name) {
			name = wstr(w, f->name);
			if (f->kernel) {
				bp_buf_printf(&w->tmp, "%s" KERNEL_MARK, f->name);
				sys = wstr(w, bp_buf_str(&w->tmp));
			} else {
				sys = name;
			}
		} else {
			char label[512];

			bp_buf_printf(&w->tmp, "%s", bp_frame_label(f, false, label, sizeof(label)));
			name = wstr(w, bp_buf_str(&w->tmp));
			sys = wstr(w, f->kernel ? KERNEL_MARK : "");
		}
		if (w->tmp.err)
			return w->tmp.err;

		bp_buf_reset(&w->msg);
		bp_pb_put_uint64(&w->msg, FUNC_ID, i + 1);
		bp_pb_put_uint64(&w->msg, FUNC_NAME, name);
		if (sys)
			bp_pb_put_uint64(&w->msg, FUNC_SYSTEM_NAME, sys);
		if (has_path(f))
			bp_pb_put_uint64(&w->msg, FUNC_FILENAME, wstr(w, f->path));
		bp_pb_put_bytes(&w->body, PROF_FUNCTION, w->msg.data, w->msg.len);

		bp_buf_reset(&w->msg);
		bp_buf_reset(&w->sub);
		bp_pb_put_uint64(&w->msg, LOC_ID, i + 1);
		bp_pb_put_uint64(&w->msg, LOC_MAPPING_ID, w->frame_map[i]);
		if (f->offset)
			bp_pb_put_uint64(&w->msg, LOC_ADDRESS, f->offset);
		bp_pb_put_uint64(&w->sub, LINE_FUNCTION_ID, i + 1);
		bp_pb_put_bytes(&w->msg, LOC_LINE, w->sub.data, w->sub.len);
		bp_pb_put_bytes(&w->body, PROF_LOCATION, w->msg.data, w->msg.len);
	}
	for (i = 0; i < w->nr_maps; i++) {
		const struct wmap *m = &w->maps[i];

		bp_buf_reset(&w->msg);
		bp_pb_put_uint64(&w->msg, MAPPING_ID, i + 1);
		bp_pb_put_uint64(&w->msg, MAPPING_FILENAME,
				 wstr(w, m->path && m->path[0] ? m->path : m->module));
		if (m->build_id && m->build_id[0])
			bp_pb_put_uint64(&w->msg, MAPPING_BUILD_ID, wstr(w, m->build_id));
		/* names are resolved: pprof must not try to symbolize */
		bp_pb_put_uint64(&w->msg, MAPPING_HAS_FUNCTIONS, 1);
		bp_pb_put_bytes(&w->body, PROF_MAPPING, w->msg.data, w->msg.len);
	}
	return w->err ? w->err : w->msg.err ? w->msg.err : w->sub.err;
}

static void put_label(struct writer *w, const char *key, const char *str, uint64_t num)
{
	bp_buf_reset(&w->sub);
	bp_pb_put_uint64(&w->sub, LABEL_KEY, wstr(w, key));
	if (str)
		bp_pb_put_uint64(&w->sub, LABEL_STR, wstr(w, str));
	else if (num)
		bp_pb_put_uint64(&w->sub, LABEL_NUM, num);
	bp_pb_put_bytes(&w->msg, SAMPLE_LABEL, w->sub.data, w->sub.len);
}

static int write_samples(struct writer *w)
{
	const struct bp_profile *p = w->p;
	uint32_t i, j, nr;

	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *fr = bp_profile__stack_frames(p, s->stack, &nr);
		const struct bp_proc *proc = bp_profile__proc((struct bp_profile *)p, s->pid, false);
		uint64_t v[COL__MAX] = {};

		if (nr > w->cap_ids) {
			uint64_t *n = realloc(w->ids, (size_t)nr * sizeof(*n));

			if (!n)
				return -ENOMEM;
			w->ids = n;
			w->cap_ids = nr;
		}
		/* pprof lists the leaf first, our stacks the root */
		for (j = 0; j < nr; j++)
			w->ids[j] = fr[nr - 1 - j] + 1;
		if (s->kind == BP_KIND_ONCPU) {
			v[COL_SAMPLES] = s->count;
			v[COL_CPU] = s->ns;
		} else {
			v[COL_OFFCPU] = s->ns;
			v[COL_IO] = s->kind == BP_KIND_IO ? s->ns : 0;
			v[COL_WAITS] = s->count;
		}
		bp_buf_reset(&w->msg);
		bp_pb_put_packed(&w->msg, SAMPLE_LOCATION_ID, w->ids, nr);
		bp_pb_put_packed(&w->msg, SAMPLE_VALUE, v, COL__MAX);
		put_label(w, "pid", NULL, s->pid);
		put_label(w, "tid", NULL, s->tid);
		if (proc && proc->comm[0])
			put_label(w, "comm", proc->comm, 0);
		if (s->kind != BP_KIND_ONCPU)
			put_label(w, "wait", bp_kind_name(s->kind), 0);
		bp_pb_put_bytes(&w->body, PROF_SAMPLE, w->msg.data, w->msg.len);
		if (w->err || w->msg.err || w->sub.err)
			return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ state (JSON) */

static bool utf8_valid(const unsigned char *s)
{
	size_t n;

	for (; *s; s += n) {
		n = bp_utf8_seq(s, SIZE_MAX, NULL);
		if (!n)
			return false;
	}
	return true;
}

/*
 * Strings are exact bytes (comms and command lines need not be UTF-8), but
 * the JSON writer replaces invalid UTF-8: those go as {"hex": "..."}. The
 * digits pile up in hex, never reset, so that its sticky error is checked
 * once with the document's.
 */
static void put_str(struct bp_json_w *j, struct bp_buf *hex, const char *s)
{
	static const char digits[] = "0123456789abcdef";
	size_t i, start = hex->len;

	if (!s || utf8_valid((const unsigned char *)s)) {
		bp_json_w_string(j, s);
		return;
	}
	for (i = 0; s[i]; i++) {
		bp_buf_putc(hex, digits[(unsigned char)s[i] >> 4]);
		bp_buf_putc(hex, digits[(unsigned char)s[i] & 15]);
	}
	bp_json_w_begin_object(j);
	bp_json_w_key(j, "hex");
	if (hex->err)
		bp_json_w_null_val(j);
	else
		bp_json_w_string_n(j, hex->data + start, hex->len - start);
	bp_json_w_end_object(j);
}

static void kv_str(struct bp_json_w *j, struct bp_buf *hex, const char *key, const char *s)
{
	bp_json_w_key(j, key);
	put_str(j, hex, s);
}

/* doubles exact; the non-finite ones (JSON has none) as strings */
static void kv_double(struct bp_json_w *j, const char *key, double v)
{
	if (isfinite(v))
		bp_json_w_kv_double(j, key, v);
	else
		bp_json_w_kv_string(j, key, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

/* an array of counters, without its trailing zeros */
static void kv_u64s(struct bp_json_w *j, const char *key, const uint64_t *v, size_t n)
{
	size_t i;

	while (n && !v[n - 1])
		n--;
	bp_json_w_key(j, key);
	bp_json_w_begin_array(j);
	for (i = 0; i < n; i++)
		bp_json_w_uint64(j, v[i]);
	bp_json_w_end_array(j);
}

static void write_thread(struct bp_json_w *j, struct bp_buf *x, const struct bp_thread *t)
{
	bp_json_w_begin_object(j);
	bp_json_w_kv_uint64(j, "tid", t->tid);
	kv_str(j, x, "comm", t->comm);
	bp_json_w_kv_bool(j, "have_totals", t->have_totals);
	bp_json_w_kv_bool(j, "exited", t->exited);
	bp_json_w_kv_uint64(j, "state", t->state);
	bp_json_w_kv_uint64(j, "start_ns", t->start_ns);
	bp_json_w_kv_uint64(j, "end_ns", t->end_ns);
	bp_json_w_kv_uint64(j, "oncpu_ns", t->oncpu_ns);
	bp_json_w_kv_uint64(j, "switches", t->switches);
	bp_json_w_kv_uint64(j, "wakeups", t->wakeups);
	bp_json_w_kv_uint64(j, "wake_lat_ns", t->wake_lat_ns);
	bp_json_w_kv_uint64(j, "wake_lat_max", t->wake_lat_max);
	kv_u64s(j, "wake_hist", t->wake_hist, BP_HIST_SLOTS);
	bp_json_w_end_object(j);
}

static void write_proc(struct bp_json_w *j, struct bp_buf *x, const struct bp_proc *pr)
{
	uint32_t i;

	bp_json_w_begin_object(j);
	bp_json_w_kv_uint64(j, "pid", pr->pid);
	bp_json_w_kv_uint64(j, "ppid", pr->ppid);
	kv_str(j, x, "comm", pr->comm);
	kv_str(j, x, "cmdline", pr->cmdline);
	bp_json_w_kv_uint64(j, "start_ns", pr->start_ns);
	bp_json_w_kv_uint64(j, "end_ns", pr->end_ns);
	bp_json_w_kv_bool(j, "exited", pr->exited);
	bp_json_w_kv_bool(j, "have_meta", pr->have_meta);
	bp_json_w_kv_bool(j, "have_timeline", pr->have_timeline);
	kv_u64s(j, "tl_ns", pr->tl_ns, BP_TS__MAX);
	bp_json_w_kv_uint64(j, "tl_idle_ns", pr->tl_idle_ns);
	bp_json_w_kv_bool(j, "mem_valid", pr->mem_valid);
	bp_json_w_kv_uint64(j, "wss_probes", pr->wss_probes);
	bp_json_w_kv_uint64(j, "wss_max", pr->wss_max);
	kv_double(j, "wss_per_s", pr->wss_per_s);
	bp_json_w_kv_uint64(j, "rss", pr->rss);
	bp_json_w_kv_uint64(j, "minflt", pr->minflt);
	bp_json_w_kv_uint64(j, "majflt", pr->majflt);
	kv_double(j, "fault_window_s", pr->fault_window_s);
	bp_json_w_kv_bool(j, "pmu_valid", pr->pmu_valid);
	bp_json_w_kv_uint64(j, "cycles", pr->cycles);
	bp_json_w_kv_uint64(j, "instructions", pr->instructions);
	bp_json_w_kv_uint64(j, "cache_misses", pr->cache_misses);
	kv_double(j, "pmu_running", pr->pmu_running);
	kv_double(j, "pmu_seconds", pr->pmu_seconds);
	bp_json_w_kv_uint64(j, "last_drain_samples", pr->last_drain_samples);
	bp_json_w_key(j, "threads");
	bp_json_w_begin_array(j);
	for (i = 0; i < pr->nr_threads; i++)
		write_thread(j, x, &pr->threads[i]);
	bp_json_w_end_array(j);
	bp_json_w_end_object(j);
}

static void write_io_stats(struct bp_json_w *j, const struct bp_io_stats *st)
{
	bp_json_w_kv_uint64(j, "ops", st->ops);
	bp_json_w_kv_uint64(j, "bytes", st->bytes);
	bp_json_w_kv_uint64(j, "lat_ns", st->lat_ns);
	kv_u64s(j, "hist", st->hist, BP_HIST_SLOTS);
}

static void write_io(struct bp_json_w *j, struct bp_buf *x, const struct bp_profile *p)
{
	uint32_t i;
	int k;

	bp_json_w_key(j, "io_devs");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_io_devs; i++) {
		const struct bp_io_dev *d = &p->io_devs[i];

		bp_json_w_begin_object(j);
		bp_json_w_kv_uint64(j, "dev", d->dev);
		kv_str(j, x, "name", d->name);
		bp_json_w_kv_uint64(j, "busy_ns", d->busy_ns);
		bp_json_w_kv_uint64(j, "max_inflight", d->max_inflight);
		bp_json_w_key(j, "op");
		bp_json_w_begin_array(j);
		for (k = 0; k < BP_IO_OP__MAX; k++) {
			bp_json_w_begin_object(j);
			write_io_stats(j, &d->op[k]);
			bp_json_w_end_object(j);
		}
		bp_json_w_end_array(j);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);

	bp_json_w_key(j, "io_rows");
	bp_json_w_begin_array(j);
	for (i = 0; i < p->nr_io_rows; i++) {
		const struct bp_io_row *r = &p->io_rows[i];

		bp_json_w_begin_object(j);
		bp_json_w_kv_uint64(j, "dev", r->dev);
		bp_json_w_kv_uint64(j, "pid", r->pid);
		bp_json_w_kv_uint64(j, "op", r->op);
		bp_json_w_kv_bool(j, "kthread", r->kthread);
		kv_str(j, x, "comm", r->comm);
		write_io_stats(j, &r->st);
		bp_json_w_end_object(j);
	}
	bp_json_w_end_array(j);
}

/*
 * Stacks are rebuilt from the samples in sample order. That gives back the
 * same stack ids when every stack first appears in id order, which is how
 * recording creates them; otherwise the stacks travel in the state too.
 */
static int stacks_in_sample_order(const struct bp_profile *p, bool *in_order)
{
	uint8_t *seen = calloc(p->nr_stacks + 1, 1);
	uint32_t i, next = 0;

	if (!seen)
		return -ENOMEM;
	*in_order = true;
	for (i = 0; i < p->nr_samples && *in_order; i++) {
		uint32_t s = p->samples[i].stack;

		if (seen[s])
			continue;
		seen[s] = 1;
		if (s != next++)
			*in_order = false;
	}
	if (next != p->nr_stacks)
		*in_order = false;
	free(seen);
	return 0;
}

static int write_state(struct writer *w, struct bp_buf *out)
{
	const struct bp_profile *p = w->p;
	uint64_t stats[BP_STAT__MAX];
	struct bp_json_w j;
	bool in_order;
	uint32_t i, k, nr;
	int err;

	err = stacks_in_sample_order(p, &in_order);
	if (err)
		return err;
	bp_buf_puts(out, STATE_PREFIX);
	bp_json_w_init(&j, out, false);
	bp_json_w_begin_object(&j);
	bp_json_w_kv_uint64(&j, "start_ns", p->start_ns);
	bp_json_w_kv_uint64(&j, "end_ns", p->end_ns);
	bp_json_w_kv_int64(&j, "start_unix_ns", p->start_unix_ns);
	bp_json_w_kv_int64(&j, "hz", p->hz);
	bp_json_w_kv_int64(&j, "ncpus", p->ncpus);
	bp_json_w_kv_bool(&j, "pmu", p->pmu);
	kv_str(&j, &w->hex, "event", p->event);
	bp_json_w_kv_bool(&j, "system_wide", p->system_wide);
	bp_json_w_kv_bool(&j, "offcpu_enabled", p->offcpu_enabled);
	kv_double(&j, "machine_busy", p->machine_busy);
	bp_json_w_kv_uint64(&j, "llc_bytes", p->llc_bytes);
	kv_str(&j, &w->hex, "llc_source", p->llc_source);
	/* __u64 is not uint64_t to the compiler: copy */
	for (i = 0; i < BP_STAT__MAX; i++)
		stats[i] = p->stats.v[i];
	kv_u64s(&j, "stats", stats, BP_STAT__MAX);
	bp_json_w_kv_uint64(&j, "user_stacks_cut", p->user_stacks_cut);
	bp_json_w_kv_uint64(&j, "io_done_unseen", p->io_done_unseen);
	bp_json_w_kv_bool(&j, "io_enabled", p->io_enabled);

	/* modules that are not the base name of their mapping's path */
	bp_json_w_key(&j, "modules");
	bp_json_w_begin_array(&j);
	for (i = 0; i < w->nr_maps; i++) {
		const struct wmap *m = &w->maps[i];

		if (!m->path || !m->path[0] || !strcmp(m->module, base_name(m->path)))
			continue;
		bp_json_w_begin_array(&j);
		bp_json_w_uint64(&j, i + 1);
		put_str(&j, &w->hex, m->module);
		bp_json_w_end_array(&j);
	}
	bp_json_w_end_array(&j);

	if (!in_order) {
		bp_json_w_key(&j, "stacks");
		bp_json_w_begin_array(&j);
		for (i = 0; i < p->nr_stacks; i++) {
			const uint32_t *fr = bp_profile__stack_frames(p, i, &nr);

			bp_json_w_begin_array(&j);
			for (k = 0; k < nr; k++)
				bp_json_w_uint64(&j, fr[k]);
			bp_json_w_end_array(&j);
		}
		bp_json_w_end_array(&j);
	}

	bp_json_w_key(&j, "procs");
	bp_json_w_begin_array(&j);
	for (i = 0; i < p->nr_procs; i++)
		write_proc(&j, &w->hex, p->procs[i]);
	bp_json_w_end_array(&j);
	write_io(&j, &w->hex, p);
	bp_json_w_end_object(&j);
	err = bp_json_w_finish(&j);
	return err ? err : w->hex.err;
}

/* ------------------------------------------------------------- assembling */

static void put_value_type(struct writer *w, uint32_t field, const char *type, const char *unit)
{
	bp_buf_reset(&w->msg);
	bp_pb_put_uint64(&w->msg, VT_TYPE, wstr(w, type));
	bp_pb_put_uint64(&w->msg, VT_UNIT, wstr(w, unit));
	bp_pb_put_bytes(&w->body, field, w->msg.data, w->msg.len);
}

/* gzip, fed in pieces: avail_in is 32 bits wide */
static int gzip_append(const void *data, size_t len, struct bp_buf *out)
{
	const unsigned char *in = data;
	unsigned char chunk[16384];
	z_stream z;
	int ret, flush, err = 0;

	memset(&z, 0, sizeof(z));
	ret = deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (ret != Z_OK) {
		bp_err("pprof: deflateInit2 failed: %d", ret);
		return ret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	do {
		size_t n = len < (1u << 30) ? len : (1u << 30);

		z.next_in = (unsigned char *)in;
		z.avail_in = n;
		in += n;
		len -= n;
		flush = len ? Z_NO_FLUSH : Z_FINISH;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			ret = deflate(&z, flush);
			if (ret == Z_STREAM_ERROR) {
				bp_err("pprof: deflate failed");
				err = -EINVAL;
				goto out;
			}
			err = bp_buf_append(out, chunk, sizeof(chunk) - z.avail_out);
			if (err)
				goto out;
		} while (z.avail_out == 0);
	} while (flush != Z_FINISH);
	if (ret != Z_STREAM_END) {
		bp_err("pprof: deflate did not finish: %d", ret);
		err = -EINVAL;
	}
out:
	deflateEnd(&z);
	return err;
}

int bp_pprof_write(const struct bp_profile *p, struct bp_buf *out)
{
	struct writer w = { .p = p };
	struct bp_buf state = BP_BUF_INIT, all = BP_BUF_INIT;
	uint64_t cpu, ns;
	uint32_t i;
	int err, c;

	wstr(&w, "");	/* string_table[0] must be "" */
	for (c = 0; c < COL__MAX; c++)
		put_value_type(&w, PROF_SAMPLE_TYPE, col_type[c], col_unit[c]);
	err = write_frames(&w);
	if (!err)
		err = write_samples(&w);
	if (!err)
		err = write_state(&w, &state);
	if (err)
		goto out;
	/* every string before the table is written out */
	cpu = wstr(&w, col_type[COL_CPU]);
	ns = wstr(&w, "nanoseconds");

	bp_buf_append(&all, w.body.data, w.body.len);
	for (i = 0; i < w.st.nr; i++)
		bp_pb_put_bytes(&all, PROF_STRING_TABLE, w.st.bytes.data + w.st.off[i],
				w.st.len[i]);
	if (p->start_unix_ns)
		bp_pb_put_int64(&all, PROF_TIME_NANOS, p->start_unix_ns);
	if (p->end_ns > p->start_ns)
		bp_pb_put_int64(&all, PROF_DURATION_NANOS, p->end_ns - p->start_ns);
	bp_buf_reset(&w.msg);
	bp_pb_put_uint64(&w.msg, VT_TYPE, cpu);
	bp_pb_put_uint64(&w.msg, VT_UNIT, ns);
	bp_pb_put_bytes(&all, PROF_PERIOD_TYPE, w.msg.data, w.msg.len);
	if (p->hz > 0)
		bp_pb_put_int64(&all, PROF_PERIOD, 1000000000 / p->hz);
	bp_pb_put_bytes(&all, PROF_BOUNDPROF_STATE, state.data, state.len);
	bp_pb_put_uint64(&all, PROF_DEFAULT_SAMPLE_TYPE, cpu);
	err = w.err ? w.err : w.body.err ? w.body.err : w.msg.err ? w.msg.err : all.err;
	if (!err)
		err = gzip_append(all.data, all.len, out);
out:
	strtab_free(&w.st);
	bp_buf_free(&w.body);
	bp_buf_free(&w.msg);
	bp_buf_free(&w.sub);
	bp_buf_free(&w.tmp);
	bp_buf_free(&w.hex);
	bp_buf_free(&state);
	bp_buf_free(&all);
	bp_htab_free(&w.map_h);
	free(w.maps);
	free(w.frame_map);
	free(w.ids);
	return err;
}

/* =================================================================== read */

struct slice {
	const uint8_t *p;
	size_t len;
};

struct svec {
	struct slice *v;
	size_t n, cap;
};

struct rmap {
	uint64_t id;
	uint64_t start, file_offset;
	const char *file;
	const char *build_id;
};

struct rfunc {
	uint64_t id;
	const char *name, *sys, *file;
};

struct rloc {
	uint64_t id;
	uint32_t first, nr;	/* its frames in loc_frames, root first */
};

/* a module that is not the base name of its mapping's file (the state says) */
struct rmodule {
	uint64_t mapping;
	char *module;
};

struct reader {
	char *errmsg;
	size_t errlen;
	struct bp_profile *p;

	/* the Profile message, field by field */
	struct svec strs_raw, samples, mappings, locations, functions, types;
	struct slice period_type;
	int64_t time_nanos, duration, period;
	uint64_t *comments;
	size_t nr_comments, cap_comments;
	const void *state_text;		/* PROF_BOUNDPROF_STATE, or NULL */
	size_t state_len;

	char **strs;		/* the string table, NUL-terminated copies */
	size_t nr_strs;
	char *str_block;

	struct rmap *maps;
	size_t nr_maps;
	struct rfunc *funcs;
	size_t nr_funcs;
	struct rloc *locs;
	size_t nr_locs;
	uint32_t *loc_frames;
	size_t nr_loc_frames, cap_loc_frames;

	struct bp_json *state;	/* NULL: not written by boundprof */
	struct rmodule *modules;
	size_t nr_modules;

	/* value columns: -1 when the profile has none */
	int col_count, col_ns, col_off, col_waits;
	double ns_scale;	/* of col_ns, to nanoseconds */
	uint64_t period_ns;

	/* scratch for one sample */
	uint64_t *ids;
	size_t cap_ids;
	uint32_t *stack;
	size_t cap_stack;
	int64_t *vals;
};

static int __attribute__((format(printf, 2, 3))) fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->errlen && !r->errmsg[0]) {
		va_start(ap, fmt);
		vsnprintf(r->errmsg, r->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int nomem(struct reader *r)
{
	if (r->errlen && !r->errmsg[0])
		snprintf(r->errmsg, r->errlen, "out of memory");
	return -ENOMEM;
}

/* grow *arr to hold need elements of sz bytes; 0 or -ENOMEM */
static int grow(void **arr, size_t *cap, size_t need, size_t sz)
{
	size_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = reallocarray(*arr, ncap, sz);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static int svec_push(struct svec *s, const struct bp_pb_field *f)
{
	if (grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
		return -ENOMEM;
	s->v[s->n].p = f->data;
	s->v[s->n].len = f->len;
	s->n++;
	return 0;
}

/* ------------------------------------------------------------ decompress */

static bool is_gzip(const uint8_t *d, size_t len)
{
	return len >= 2 && d[0] == 0x1f && d[1] == 0x8b;
}

static bool is_zlib(const uint8_t *d, size_t len)
{
	/* CM 8 (deflate), window at most 32 KiB, header checksum */
	return len >= 2 && (d[0] & 0x0f) == 8 && (d[0] >> 4) <= 7 && ((d[0] << 8 | d[1]) % 31) == 0;
}

/*
 * Inflate gzip (one or more members) or zlib data into *out, at most
 * MAX_INFLATED bytes; 0, -EINVAL (errmsg says why) or -ENOMEM.
 */
static int inflate_all(struct reader *r, const uint8_t *in, size_t len, uint8_t **out,
		       size_t *out_len)
{
	size_t cap = len < (1u << 20) ? (1u << 20) : len * 4, n = 0;
	uint8_t *buf = NULL;
	z_stream z;
	int ret, err = 0;

	if (cap > MAX_INFLATED)
		cap = MAX_INFLATED;
	memset(&z, 0, sizeof(z));
	ret = inflateInit2(&z, 15 + 32);
	if (ret != Z_OK)
		return ret == Z_MEM_ERROR ? nomem(r) : fail(r, "cannot start zlib: %d", ret);
	buf = malloc(cap);
	if (!buf) {
		err = nomem(r);
		goto out;
	}
	for (;;) {
		size_t chunk_in = len < (1u << 30) ? len : (1u << 30);

		if (n == cap) {
			uint8_t *nb;

			if (cap >= MAX_INFLATED) {
				err = fail(r, "decompressed profile larger than %llu MiB",
					   MAX_INFLATED >> 20);
				goto out;
			}
			cap = cap * 2 > MAX_INFLATED ? MAX_INFLATED : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				err = nomem(r);
				goto out;
			}
			buf = nb;
		}
		z.next_in = (uint8_t *)in;
		z.avail_in = chunk_in;
		z.next_out = buf + n;
		z.avail_out = cap - n < (1u << 30) ? cap - n : (1u << 30);
		ret = inflate(&z, Z_NO_FLUSH);
		n = z.next_out - buf;
		len -= (const uint8_t *)z.next_in - in;
		in = z.next_in;
		if (ret == Z_STREAM_END) {
			/* gzip allows several members back to back (cat a.gz b.gz) */
			if (len && is_gzip(in, len)) {
				inflateReset(&z);
				continue;
			}
			if (len) {
				err = fail(r, "%zu bytes of trailing garbage after the compressed data",
					   len);
				goto out;
			}
			break;
		}
		if (ret == Z_MEM_ERROR) {
			err = nomem(r);
			goto out;
		}
		if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR) {
			err = fail(r, "corrupt compressed data: %s", z.msg ? z.msg : "bad stream");
			goto out;
		}
		/* Z_OK or Z_BUF_ERROR: more output room, or the input ended early */
		if (!len && z.avail_out) {
			err = fail(r, "truncated compressed data");
			goto out;
		}
	}
	*out = buf;
	*out_len = n;
	buf = NULL;
out:
	free(buf);
	inflateEnd(&z);
	return err;
}

/* ------------------------------------------------------------ the message */

static int parse_profile(struct reader *r, const uint8_t *data, size_t len)
{
	struct bp_pb_reader rd;
	struct bp_pb_field f;
	struct bp_pb_iter it;
	uint64_t v;
	int ret;

	bp_pb_reader_init(&rd, data, len);
	while ((ret = bp_pb_next(&rd, &f)) > 0) {
		struct svec *vec = NULL;

		switch (f.num) {
		case PROF_SAMPLE_TYPE:
			vec = &r->types;
			break;
		case PROF_SAMPLE:
			vec = &r->samples;
			break;
		case PROF_MAPPING:
			vec = &r->mappings;
			break;
		case PROF_LOCATION:
			vec = &r->locations;
			break;
		case PROF_FUNCTION:
			vec = &r->functions;
			break;
		case PROF_STRING_TABLE:
			vec = &r->strs_raw;
			break;
		case PROF_TIME_NANOS:
			r->time_nanos = f.u64;
			break;
		case PROF_DURATION_NANOS:
			r->duration = f.u64;
			break;
		case PROF_PERIOD:
			r->period = f.u64;
			break;
		case PROF_PERIOD_TYPE:
			if (f.wire == BP_PB_LEN) {
				r->period_type.p = f.data;
				r->period_type.len = f.len;
			}
			break;
		case PROF_BOUNDPROF_STATE:
			/* only ours: another tool may one day use the number too */
			if (f.wire == BP_PB_LEN && f.len > strlen(STATE_PREFIX) &&
			    !memcmp(f.data, STATE_PREFIX, strlen(STATE_PREFIX))) {
				r->state_text = f.data;
				r->state_len = f.len;
			}
			break;
		case PROF_COMMENT:
			bp_pb_iter_init(&it, &f);
			while ((ret = bp_pb_iter_next(&it, &v)) > 0) {
				if (grow((void **)&r->comments, &r->cap_comments,
					 r->nr_comments + 1, sizeof(*r->comments)))
					return nomem(r);
				r->comments[r->nr_comments++] = v;
			}
			if (ret < 0)
				return fail(r, "not a pprof profile: malformed comment field");
			break;
		default:
			/* fields of newer profile.proto versions: not ours to judge */
			break;
		}
		if (vec) {
			if (f.wire != BP_PB_LEN)
				return fail(r, "not a pprof profile: field %u has wire type %d",
					    f.num, f.wire);
			if (svec_push(vec, &f))
				return nomem(r);
		}
	}
	if (ret < 0)
		return fail(r, "not a pprof profile: malformed protobuf at byte %zu",
			    (size_t)(rd.p - data));
	if (!r->strs_raw.n || r->strs_raw.v[0].len)
		return fail(r, "not a pprof profile: string table missing or not starting with \"\"");
	return 0;
}

static int build_strings(struct reader *r)
{
	size_t i, total = 0;
	char *q;

	for (i = 0; i < r->strs_raw.n; i++)
		total += r->strs_raw.v[i].len + 1;
	r->str_block = malloc(total);
	r->strs = calloc(r->strs_raw.n, sizeof(*r->strs));
	if (!r->str_block || !r->strs)
		return nomem(r);
	q = r->str_block;
	for (i = 0; i < r->strs_raw.n; i++) {
		/* a string with a NUL inside reads as its first part */
		memcpy(q, r->strs_raw.v[i].p, r->strs_raw.v[i].len);
		q[r->strs_raw.v[i].len] = '\0';
		r->strs[i] = q;
		q += r->strs_raw.v[i].len + 1;
	}
	r->nr_strs = r->strs_raw.n;
	return 0;
}

/* string_table[idx]; NULL (and errmsg) when out of range */
static const char *str_at(struct reader *r, uint64_t idx)
{
	if (idx >= r->nr_strs) {
		fail(r, "string index %" PRIu64 " out of range (table of %zu)", idx, r->nr_strs);
		return NULL;
	}
	return r->strs[idx];
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* sort records that start with their uint64_t id; ids must be nonzero and unique */
static int sort_ids(struct reader *r, void *arr, size_t n, size_t sz, const char *what)
{
	size_t i;

	qsort(arr, n, sz, cmp_id);
	for (i = 0; i < n; i++) {
		uint64_t id = *(const uint64_t *)((char *)arr + i * sz);

		if (!id)
			return fail(r, "%s with id 0", what);
		if (i && id == *(const uint64_t *)((char *)arr + (i - 1) * sz))
			return fail(r, "duplicate %s id %" PRIu64, what, id);
	}
	return 0;
}

/* the record with this id in an array sorted by sort_ids(); NULL when none */
static void *find_id(void *arr, size_t n, size_t sz, uint64_t id)
{
	/* writers number from 1 without gaps: look there first */
	if (id && id <= n && *(const uint64_t *)((char *)arr + (id - 1) * sz) == id)
		return (char *)arr + (id - 1) * sz;
	return bsearch(&id, arr, n, sz, cmp_id);
}

static int parse_mappings(struct reader *r)
{
	size_t i;

	r->maps = calloc(r->mappings.n + 1, sizeof(*r->maps));
	if (!r->maps)
		return nomem(r);
	for (i = 0; i < r->mappings.n; i++) {
		struct rmap *m = &r->maps[i];
		struct bp_pb_reader rd;
		struct bp_pb_field f;
		int ret;

		m->file = m->build_id = "";
		bp_pb_reader_init(&rd, r->mappings.v[i].p, r->mappings.v[i].len);
		while ((ret = bp_pb_next(&rd, &f)) > 0) {
			if (f.num == MAPPING_ID)
				m->id = f.u64;
			else if (f.num == MAPPING_MEMORY_START)
				m->start = f.u64;
			else if (f.num == MAPPING_FILE_OFFSET)
				m->file_offset = f.u64;
			else if (f.num == MAPPING_FILENAME && !(m->file = str_at(r, f.u64)))
				return -EINVAL;
			else if (f.num == MAPPING_BUILD_ID && !(m->build_id = str_at(r, f.u64)))
				return -EINVAL;
		}
		if (ret < 0)
			return fail(r, "malformed mapping %zu", i);
	}
	r->nr_maps = r->mappings.n;
	return sort_ids(r, r->maps, r->nr_maps, sizeof(*r->maps), "mapping");
}

static int parse_functions(struct reader *r)
{
	size_t i;

	r->funcs = calloc(r->functions.n + 1, sizeof(*r->funcs));
	if (!r->funcs)
		return nomem(r);
	for (i = 0; i < r->functions.n; i++) {
		struct rfunc *fn = &r->funcs[i];
		struct bp_pb_reader rd;
		struct bp_pb_field f;
		int ret;

		fn->name = fn->sys = fn->file = "";
		bp_pb_reader_init(&rd, r->functions.v[i].p, r->functions.v[i].len);
		while ((ret = bp_pb_next(&rd, &f)) > 0) {
			if (f.num == FUNC_ID)
				fn->id = f.u64;
			else if (f.num == FUNC_NAME && !(fn->name = str_at(r, f.u64)))
				return -EINVAL;
			else if (f.num == FUNC_SYSTEM_NAME && !(fn->sys = str_at(r, f.u64)))
				return -EINVAL;
			else if (f.num == FUNC_FILENAME && !(fn->file = str_at(r, f.u64)))
				return -EINVAL;
		}
		if (ret < 0)
			return fail(r, "malformed function %zu", i);
	}
	r->nr_funcs = r->functions.n;
	return sort_ids(r, r->funcs, r->nr_funcs, sizeof(*r->funcs), "function");
}

static bool kernel_mapping(const char *file)
{
	/* perf and the kernel's own names for its text */
	return !strncmp(file, "[kernel", 7) || !strcmp(base_name(file), "vmlinux");
}

static const char *module_override(const struct reader *r, uint64_t mapping)
{
	size_t i;

	for (i = 0; i < r->nr_modules; i++)
		if (r->modules[i].mapping == mapping)
			return r->modules[i].module;
	return NULL;
}

/*
 * One frame of a location: fn is NULL for a location without lines. With
 * boundprof's state the system_name scheme of write_frames() applies;
 * otherwise the frame is named after the function and its module after the
 * mapping's file.
 */
static int64_t make_frame(struct reader *r, const struct rfunc *fn, const struct rmap *m,
			  uint64_t mapping_id, uint64_t address)
{
	const char *mfile = m ? m->file : "";
	struct bp_frame f = {};
	size_t nl;

	f.offset = address;
	f.build_id = m && m->build_id[0] ? m->build_id : NULL;
	if (r->state && fn) {
		const char *name = fn->name, *sys = fn->sys;

		nl = strlen(name);
		if (!strcmp(sys, name)) {
			f.name = name;
		} else if (!strncmp(sys, name, nl) && !strcmp(sys + nl, KERNEL_MARK)) {
			f.name = name;
			f.kernel = true;
		} else {
			f.kernel = !strcmp(sys, KERNEL_MARK);
		}
		f.path = fn->file[0] ? fn->file : NULL;
		f.module = module_override(r, mapping_id);
		if (!f.module)
			f.module = f.path ? base_name(f.path) : mfile[0] ? mfile : "[unknown]";
		return bp_profile__frame(r->p, &f);
	}
	if (fn)
		f.name = fn->name[0] ? fn->name : fn->sys[0] ? fn->sys : NULL;
	f.kernel = kernel_mapping(mfile);
	f.module = mfile[0] ? base_name(mfile) : "[unknown]";
	f.path = mfile[0] == '/' ? mfile : NULL;
	/* an unnamed address reads as an offset into its file, like our own */
	if (m && address >= m->start)
		f.offset = address - m->start + m->file_offset;
	return bp_profile__frame(r->p, &f);
}

static int parse_locations(struct reader *r)
{
	uint64_t *fids = NULL;
	size_t i, cap_fids = 0;
	int err = 0;

	r->locs = calloc(r->locations.n + 1, sizeof(*r->locs));
	if (!r->locs)
		return nomem(r);
	/* in file order, so that our own frames come back with their ids */
	for (i = 0; i < r->locations.n; i++) {
		struct rloc *l = &r->locs[i];
		uint64_t mapping_id = 0, address = 0;
		const struct rmap *m = NULL;
		struct bp_pb_reader rd;
		struct bp_pb_field f;
		size_t nf = 0, k;
		int ret;

		bp_pb_reader_init(&rd, r->locations.v[i].p, r->locations.v[i].len);
		while ((ret = bp_pb_next(&rd, &f)) > 0) {
			if (f.num == LOC_ID) {
				l->id = f.u64;
			} else if (f.num == LOC_MAPPING_ID) {
				mapping_id = f.u64;
			} else if (f.num == LOC_ADDRESS) {
				address = f.u64;
			} else if (f.num == LOC_LINE && f.wire == BP_PB_LEN) {
				struct bp_pb_reader lr;
				struct bp_pb_field lf;
				uint64_t fid = 0;

				bp_pb_reader_init(&lr, f.data, f.len);
				while ((ret = bp_pb_next(&lr, &lf)) > 0)
					if (lf.num == LINE_FUNCTION_ID)
						fid = lf.u64;
				if (ret < 0)
					break;
				if (grow((void **)&fids, &cap_fids, nf + 1, sizeof(*fids))) {
					err = nomem(r);
					goto out;
				}
				fids[nf++] = fid;
			}
		}
		if (ret < 0) {
			err = fail(r, "malformed location %zu", i);
			goto out;
		}
		if (mapping_id) {
			m = find_id(r->maps, r->nr_maps, sizeof(*r->maps), mapping_id);
			if (!m) {
				err = fail(r, "location %" PRIu64 " refers to unknown mapping %" PRIu64,
					   l->id, mapping_id);
				goto out;
			}
		}
		l->first = r->nr_loc_frames;
		/* line[0] is the innermost inlined function: the last frame root-first */
		for (k = nf ? nf : 1; k-- > 0;) {
			const struct rfunc *fn = NULL;
			int64_t id;

			if (nf) {
				fn = find_id(r->funcs, r->nr_funcs, sizeof(*r->funcs), fids[k]);
				if (!fn) {
					err = fail(r, "location %" PRIu64 " refers to unknown function %"
						   PRIu64, l->id, fids[k]);
					goto out;
				}
			}
			id = make_frame(r, fn, m, mapping_id, address);
			if (id < 0 || grow((void **)&r->loc_frames, &r->cap_loc_frames,
					   r->nr_loc_frames + 1, sizeof(*r->loc_frames))) {
				err = nomem(r);
				goto out;
			}
			r->loc_frames[r->nr_loc_frames++] = id;
		}
		l->nr = r->nr_loc_frames - l->first;
	}
	r->nr_locs = r->locations.n;
	err = sort_ids(r, r->locs, r->nr_locs, sizeof(*r->locs), "location");
out:
	free(fids);
	return err;
}

/* ------------------------------------------------------------- the state */

/* reads the state's values; the first bad one fails the whole read */
struct st {
	struct reader *r;
	int err;
	const char *bad;
};

static void st_fail(struct st *s, const char *key, int err)
{
	if (!s->err) {
		s->err = err;
		s->bad = key;
	}
}

static uint64_t st_u64(struct st *s, const struct bp_json *o, const char *key)
{
	const struct bp_json *v = bp_json_get(o, key);
	uint64_t x = 0;

	if (v && bp_json_uint(v, &x))
		st_fail(s, key, -EINVAL);
	return x;
}

static uint32_t st_u32(struct st *s, const struct bp_json *o, const char *key)
{
	uint64_t x = st_u64(s, o, key);

	if (x > UINT32_MAX) {
		st_fail(s, key, -EINVAL);
		return 0;
	}
	return x;
}

static int64_t st_i64(struct st *s, const struct bp_json *o, const char *key)
{
	const struct bp_json *v = bp_json_get(o, key);
	int64_t x = 0;

	if (v && bp_json_int(v, &x))
		st_fail(s, key, -EINVAL);
	return x;
}

static int st_int(struct st *s, const struct bp_json *o, const char *key)
{
	int64_t x = st_i64(s, o, key);

	if (x < INT32_MIN || x > INT32_MAX) {
		st_fail(s, key, -EINVAL);
		return 0;
	}
	return x;
}

static bool st_bool(struct st *s, const struct bp_json *o, const char *key)
{
	const struct bp_json *v = bp_json_get(o, key);
	int b;

	if (!v)
		return false;
	b = bp_json_bool(v);
	if (b < 0)
		st_fail(s, key, -EINVAL);
	return b > 0;
}

static double st_double(struct st *s, const struct bp_json *o, const char *key, double dflt)
{
	const struct bp_json *v = bp_json_get(o, key);
	const char *t;

	switch (bp_json_type(v)) {
	case BP_JSON_NONE:
		return dflt;
	case BP_JSON_NUMBER:
		return bp_json_num(v);
	case BP_JSON_STRING:
		t = bp_json_str(v);
		if (!strcmp(t, "nan"))
			return NAN;
		if (!strcmp(t, "inf"))
			return INFINITY;
		if (!strcmp(t, "-inf"))
			return -INFINITY;
		/* fall through */
	default:
		st_fail(s, key, -EINVAL);
		return dflt;
	}
}

/* a string written by put_str(), malloc()ed; NULL for null or missing */
static char *st_str_val(struct st *s, const struct bp_json *v, const char *key)
{
	const char *hex;
	size_t i, n;
	char *out;

	switch (bp_json_type(v)) {
	case BP_JSON_NONE:
	case BP_JSON_NULL:
		return NULL;
	case BP_JSON_STRING:
		out = strdup(bp_json_str(v));
		if (!out)
			st_fail(s, key, -ENOMEM);
		return out;
	case BP_JSON_OBJECT:
		hex = bp_json_str(bp_json_get(v, "hex"));
		if (!hex || (n = strlen(hex)) % 2)
			break;
		out = malloc(n / 2 + 1);
		if (!out) {
			st_fail(s, key, -ENOMEM);
			return NULL;
		}
		for (i = 0; i < n / 2; i++) {
			int hi = bp_hexval(hex[2 * i]), lo = bp_hexval(hex[2 * i + 1]);

			if (hi < 0 || lo < 0 || (!hi && !lo)) {
				free(out);
				st_fail(s, key, -EINVAL);
				return NULL;
			}
			out[i] = hi << 4 | lo;
		}
		out[n / 2] = '\0';
		return out;
	default:
		break;
	}
	st_fail(s, key, -EINVAL);
	return NULL;
}

/* into a fixed array (comm, device name), cut to fit */
static void st_chars(struct st *s, const struct bp_json *o, const char *key, char *dst, size_t len)
{
	char *v = st_str_val(s, bp_json_get(o, key), key);

	snprintf(dst, len, "%s", v ? v : "");
	free(v);
}

/* interned in the profile; NULL for null */
static const char *st_istr(struct st *s, const struct bp_json *o, const char *key)
{
	char *v = st_str_val(s, bp_json_get(o, key), key);
	const char *in;

	if (!v)
		return NULL;
	in = bp_profile__intern(s->r->p, v);
	free(v);
	if (!in)
		st_fail(s, key, -ENOMEM);
	return in;
}

static void st_u64s(struct st *s, const struct bp_json *o, const char *key, uint64_t *dst,
		    size_t n)
{
	const struct bp_json *a = bp_json_get(o, key);
	size_t i, len = bp_json_len(a);

	memset(dst, 0, n * sizeof(*dst));
	if (!a)
		return;
	if (bp_json_type(a) != BP_JSON_ARRAY || len > n) {
		st_fail(s, key, -EINVAL);
		return;
	}
	for (i = 0; i < len; i++)
		if (bp_json_uint(bp_json_at(a, i), &dst[i]))
			st_fail(s, key, -EINVAL);
}

static int st_result(struct st *s)
{
	if (!s->err)
		return 0;
	if (s->err == -ENOMEM)
		return nomem(s->r);
	return fail(s->r, "bad boundprof state: \"%s\"", s->bad);
}

/* the state comment, if any, parsed; and the parts needed before the frames */
static int read_state_early(struct reader *r)
{
	const struct bp_json *mods;
	struct st s = { .r = r };
	char jerr[160] = "";
	size_t i, plen = strlen(STATE_PREFIX);

	if (r->state_text && r->state_len > plen &&
	    !memcmp(r->state_text, STATE_PREFIX, plen)) {
		r->state = bp_json_parse((const char *)r->state_text + plen, r->state_len - plen, jerr,
					 sizeof(jerr));
		if (!r->state)
			return errno == ENOMEM ? nomem(r) : fail(r, "bad boundprof state: %s", jerr);
		if (bp_json_type(r->state) != BP_JSON_OBJECT)
			return fail(r, "bad boundprof state: not an object");
	}
	/* older files kept the state in a comment */
	for (i = 0; !r->state && i < r->nr_comments; i++) {
		const char *c = str_at(r, r->comments[i]);

		if (!c)
			return -EINVAL;
		/* other comments (and other state versions) are not ours: skip them */
		if (strncmp(c, STATE_PREFIX, plen))
			continue;
		r->state = bp_json_parse(c + plen, strlen(c + plen), jerr, sizeof(jerr));
		if (!r->state)
			return errno == ENOMEM ? nomem(r) : fail(r, "bad boundprof state: %s", jerr);
		if (bp_json_type(r->state) != BP_JSON_OBJECT)
			return fail(r, "bad boundprof state: not an object");
		break;
	}
	if (!r->state)
		return 0;
	mods = bp_json_get(r->state, "modules");
	if (mods && bp_json_type(mods) != BP_JSON_ARRAY)
		return fail(r, "bad boundprof state: \"modules\"");
	r->modules = calloc(bp_json_len(mods) + 1, sizeof(*r->modules));
	if (!r->modules)
		return nomem(r);
	for (i = 0; i < bp_json_len(mods); i++) {
		const struct bp_json *m = bp_json_at(mods, i);
		struct rmodule *rm = &r->modules[r->nr_modules];

		if (bp_json_len(m) != 2 || bp_json_uint(bp_json_at(m, 0), &rm->mapping))
			return fail(r, "bad boundprof state: \"modules\"");
		rm->module = st_str_val(&s, bp_json_at(m, 1), "modules");
		if (!rm->module)
			st_fail(&s, "modules", -EINVAL);
		if (s.err)
			return st_result(&s);
		r->nr_modules++;
	}
	return 0;
}

/* stacks in the writer's order, when sample order would not give it */
static int read_state_stacks(struct reader *r)
{
	const struct bp_json *stacks = bp_json_get(r->state, "stacks");
	size_t i, j, n;

	if (stacks && bp_json_type(stacks) != BP_JSON_ARRAY)
		return fail(r, "bad boundprof state: \"stacks\"");
	for (i = 0; i < bp_json_len(stacks); i++) {
		const struct bp_json *st = bp_json_at(stacks, i);

		n = bp_json_len(st);
		if (bp_json_type(st) != BP_JSON_ARRAY)
			return fail(r, "bad boundprof state: \"stacks\"");
		if (grow((void **)&r->stack, &r->cap_stack, n + 1, sizeof(*r->stack)))
			return nomem(r);
		for (j = 0; j < n; j++) {
			uint64_t f;

			if (bp_json_uint(bp_json_at(st, j), &f) || f >= r->p->nr_frames)
				return fail(r, "bad boundprof state: \"stacks\"");
			r->stack[j] = f;
		}
		if (bp_profile__stack(r->p, r->stack, n) < 0)
			return nomem(r);
	}
	return 0;
}

static int read_thread(struct st *s, struct bp_proc *proc, const struct bp_json *o)
{
	struct bp_thread *t;
	char comm[BP_COMM_LEN];

	st_chars(s, o, "comm", comm, sizeof(comm));
	t = bp_proc__thread(proc, st_u32(s, o, "tid"), comm);
	if (!t)
		return -ENOMEM;
	t->have_totals = st_bool(s, o, "have_totals");
	t->exited = st_bool(s, o, "exited");
	t->state = st_u32(s, o, "state");
	t->start_ns = st_u64(s, o, "start_ns");
	t->end_ns = st_u64(s, o, "end_ns");
	t->oncpu_ns = st_u64(s, o, "oncpu_ns");
	t->switches = st_u64(s, o, "switches");
	t->wakeups = st_u64(s, o, "wakeups");
	t->wake_lat_ns = st_u64(s, o, "wake_lat_ns");
	t->wake_lat_max = st_u64(s, o, "wake_lat_max");
	st_u64s(s, o, "wake_hist", t->wake_hist, BP_HIST_SLOTS);
	return 0;
}

static int read_proc(struct st *s, const struct bp_json *o)
{
	const struct bp_json *threads = bp_json_get(o, "threads");
	struct bp_proc *pr;
	size_t i;

	pr = bp_profile__proc(s->r->p, st_u32(s, o, "pid"), true);
	if (!pr)
		return -ENOMEM;
	pr->ppid = st_u32(s, o, "ppid");
	st_chars(s, o, "comm", pr->comm, sizeof(pr->comm));
	pr->cmdline = st_istr(s, o, "cmdline");
	pr->start_ns = st_u64(s, o, "start_ns");
	pr->end_ns = st_u64(s, o, "end_ns");
	pr->exited = st_bool(s, o, "exited");
	pr->have_meta = st_bool(s, o, "have_meta");
	pr->have_timeline = st_bool(s, o, "have_timeline");
	st_u64s(s, o, "tl_ns", pr->tl_ns, BP_TS__MAX);
	pr->tl_idle_ns = st_u64(s, o, "tl_idle_ns");
	pr->mem_valid = st_bool(s, o, "mem_valid");
	pr->wss_probes = st_u32(s, o, "wss_probes");
	pr->wss_max = st_u64(s, o, "wss_max");
	pr->wss_per_s = st_double(s, o, "wss_per_s", 0);
	pr->rss = st_u64(s, o, "rss");
	pr->minflt = st_u64(s, o, "minflt");
	pr->majflt = st_u64(s, o, "majflt");
	pr->fault_window_s = st_double(s, o, "fault_window_s", 0);
	pr->pmu_valid = st_bool(s, o, "pmu_valid");
	pr->cycles = st_u64(s, o, "cycles");
	pr->instructions = st_u64(s, o, "instructions");
	pr->cache_misses = st_u64(s, o, "cache_misses");
	pr->pmu_running = st_double(s, o, "pmu_running", 0);
	pr->pmu_seconds = st_double(s, o, "pmu_seconds", 0);
	pr->last_drain_samples = st_u64(s, o, "last_drain_samples");
	if (threads && bp_json_type(threads) != BP_JSON_ARRAY)
		st_fail(s, "threads", -EINVAL);
	for (i = 0; i < bp_json_len(threads) && !s->err; i++)
		if (read_thread(s, pr, bp_json_at(threads, i)))
			return -ENOMEM;
	return 0;
}

static void read_io_stats(struct st *s, const struct bp_json *o, struct bp_io_stats *st)
{
	st->ops = st_u64(s, o, "ops");
	st->bytes = st_u64(s, o, "bytes");
	st->lat_ns = st_u64(s, o, "lat_ns");
	st_u64s(s, o, "hist", st->hist, BP_HIST_SLOTS);
}

static int read_io(struct st *s)
{
	const struct bp_json *devs = bp_json_get(s->r->state, "io_devs");
	const struct bp_json *rows = bp_json_get(s->r->state, "io_rows");
	size_t i, k;

	if ((devs && bp_json_type(devs) != BP_JSON_ARRAY) ||
	    (rows && bp_json_type(rows) != BP_JSON_ARRAY)) {
		st_fail(s, devs && bp_json_type(devs) != BP_JSON_ARRAY ? "io_devs" : "io_rows",
			-EINVAL);
		return 0;
	}
	for (i = 0; i < bp_json_len(devs) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(devs, i), *ops = bp_json_get(o, "op");
		struct bp_io_dev *d = bp_profile__io_dev(s->r->p, st_u32(s, o, "dev"), true);

		if (!d)
			return -ENOMEM;
		st_chars(s, o, "name", d->name, sizeof(d->name));
		d->busy_ns = st_u64(s, o, "busy_ns");
		d->max_inflight = st_u64(s, o, "max_inflight");
		if (bp_json_len(ops) > BP_IO_OP__MAX || (ops && bp_json_type(ops) != BP_JSON_ARRAY))
			st_fail(s, "op", -EINVAL);
		for (k = 0; k < bp_json_len(ops) && k < BP_IO_OP__MAX; k++)
			read_io_stats(s, bp_json_at(ops, k), &d->op[k]);
	}
	for (i = 0; i < bp_json_len(rows) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(rows, i);
		struct bp_io_row *row;
		char comm[BP_COMM_LEN];

		st_chars(s, o, "comm", comm, sizeof(comm));
		row = bp_profile__io_row(s->r->p, st_u32(s, o, "dev"), st_u32(s, o, "pid"),
					 st_u32(s, o, "op"), st_bool(s, o, "kthread"), comm, true);
		if (!row)
			return -ENOMEM;
		read_io_stats(s, o, &row->st);
	}
	return 0;
}

static int read_state(struct reader *r)
{
	const struct bp_json *o = r->state, *procs = bp_json_get(o, "procs");
	uint64_t stats[BP_STAT__MAX];
	struct bp_profile *p = r->p;
	struct st s = { .r = r };
	size_t i;

	p->start_ns = st_u64(&s, o, "start_ns");
	p->end_ns = st_u64(&s, o, "end_ns");
	p->start_unix_ns = st_i64(&s, o, "start_unix_ns");
	p->hz = st_int(&s, o, "hz");
	p->ncpus = st_int(&s, o, "ncpus");
	p->pmu = st_bool(&s, o, "pmu");
	if (bp_json_get(o, "event"))
		p->event = st_istr(&s, o, "event");
	p->system_wide = st_bool(&s, o, "system_wide");
	p->offcpu_enabled = st_bool(&s, o, "offcpu_enabled");
	p->machine_busy = st_double(&s, o, "machine_busy", -1);
	p->llc_bytes = st_u64(&s, o, "llc_bytes");
	p->llc_source = st_istr(&s, o, "llc_source");
	st_u64s(&s, o, "stats", stats, BP_STAT__MAX);
	for (i = 0; i < BP_STAT__MAX; i++)
		p->stats.v[i] = stats[i];
	p->user_stacks_cut = st_u64(&s, o, "user_stacks_cut");
	p->io_done_unseen = st_u64(&s, o, "io_done_unseen");
	p->io_enabled = st_bool(&s, o, "io_enabled");
	if (procs && bp_json_type(procs) != BP_JSON_ARRAY)
		st_fail(&s, "procs", -EINVAL);
	for (i = 0; i < bp_json_len(procs) && !s.err; i++)
		if (read_proc(&s, bp_json_at(procs, i)))
			st_fail(&s, "procs", -ENOMEM);
	if (!s.err && read_io(&s))
		st_fail(&s, "io", -ENOMEM);
	return st_result(&s);
}

/* ------------------------------------------------------------ samples */

static double time_unit(const char *unit)
{
	if (!strcmp(unit, "nanoseconds"))
		return 1;
	if (!strcmp(unit, "microseconds"))
		return 1e3;
	if (!strcmp(unit, "milliseconds"))
		return 1e6;
	if (!strcmp(unit, "seconds"))
		return 1e9;
	return 0;
}

/*
 * Which value is what. Ours by name; a foreign profile's sample count is its
 * first "count" column and its time the first time column, "cpu" or "wall"
 * preferred (Go: samples/count, cpu/nanoseconds).
 */
static int parse_types(struct reader *r)
{
	size_t i;

	r->col_count = r->col_ns = r->col_off = r->col_waits = -1;
	for (i = 0; i < r->types.n && i < INT32_MAX; i++) {
		const char *type = "", *unit = "";
		struct bp_pb_reader rd;
		struct bp_pb_field f;
		double scale;
		int ret;

		bp_pb_reader_init(&rd, r->types.v[i].p, r->types.v[i].len);
		while ((ret = bp_pb_next(&rd, &f)) > 0) {
			if (f.num == VT_TYPE && !(type = str_at(r, f.u64)))
				return -EINVAL;
			if (f.num == VT_UNIT && !(unit = str_at(r, f.u64)))
				return -EINVAL;
		}
		if (ret < 0)
			return fail(r, "malformed sample type %zu", i);
		scale = time_unit(unit);
		if (!strcmp(type, "offcpu") && scale == 1) {
			r->col_off = i;
		} else if (!strcmp(type, "waits") && !strcmp(unit, "count")) {
			r->col_waits = i;
		} else if (!strcmp(type, "io")) {
			continue;	/* a part of offcpu, for pprof users only */
		} else if (!strcmp(unit, "count")) {
			if (r->col_count < 0 || !strcmp(type, "samples"))
				r->col_count = i;
		} else if (scale > 0) {
			if (r->col_ns < 0 || !strcmp(type, "cpu") || !strcmp(type, "wall")) {
				r->col_ns = i;
				r->ns_scale = scale;
			}
		}
	}
	if (r->period_type.p) {
		struct bp_pb_reader rd;
		struct bp_pb_field f;
		const char *unit = "";
		int ret;

		bp_pb_reader_init(&rd, r->period_type.p, r->period_type.len);
		while ((ret = bp_pb_next(&rd, &f)) > 0)
			if (f.num == VT_UNIT && !(unit = str_at(r, f.u64)))
				return -EINVAL;
		if (ret < 0)
			return fail(r, "malformed period type");
		if (time_unit(unit) > 0 && r->period > 0)
			r->period_ns = r->period * time_unit(unit);
	}
	return 0;
}

static enum bp_kind wait_kind(const char *s)
{
	int k;

	for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++)
		if (!strcmp(s, bp_kind_name(k)))
			return k;
	return BP_KIND_OTHER;
}

struct labels {
	bool have_pid, have_tid;
	uint64_t pid, tid;
	const char *comm;
	const char *wait;
};

static int parse_label(struct reader *r, const struct bp_pb_field *lf, struct labels *lb)
{
	const char *key = "", *str = NULL;
	struct bp_pb_reader rd;
	struct bp_pb_field f;
	uint64_t num = 0;
	int ret;

	bp_pb_reader_init(&rd, lf->data, lf->len);
	while ((ret = bp_pb_next(&rd, &f)) > 0) {
		if (f.num == LABEL_KEY && !(key = str_at(r, f.u64)))
			return -EINVAL;
		if (f.num == LABEL_STR && !(str = str_at(r, f.u64)))
			return -EINVAL;
		if (f.num == LABEL_NUM)
			num = f.u64;
	}
	if (ret < 0)
		return fail(r, "malformed sample label");
	/* other tools put ids in string labels */
	if (str && (!strcmp(key, "pid") || !strcmp(key, "tid")))
		num = strtoull(str, NULL, 10);
	if (!strcmp(key, "pid")) {
		lb->pid = num;
		lb->have_pid = true;
	} else if (!strcmp(key, "tid")) {
		lb->tid = num;
		lb->have_tid = true;
	} else if (!strcmp(key, "comm") && str) {
		lb->comm = str;
	} else if (!strcmp(key, "wait") && str) {
		lb->wait = str;
	}
	return 0;
}

static uint64_t col(const struct reader *r, int c, size_t nv)
{
	int64_t v;

	if (c < 0 || (size_t)c >= nv)
		return 0;
	v = r->vals[c];
	/* ours are counters that may pass INT64_MAX; others' negatives are diffs */
	return r->state || v > 0 ? (uint64_t)v : 0;
}

/* a time in another unit, in ns; ours stay exact integers */
static uint64_t scaled(uint64_t v, double scale)
{
	double ns = v * scale;

	if (scale == 1)
		return v;
	return ns < 18446744073709551615.0 ? (uint64_t)ns : UINT64_MAX;
}

/* a foreign sample's process and thread, from its labels */
static int foreign_proc(struct reader *r, const struct labels *lb, uint32_t pid, uint32_t tid)
{
	struct bp_proc *proc = bp_profile__proc(r->p, pid, true);

	if (!proc)
		return nomem(r);
	if (!proc->comm[0] && lb->comm)
		snprintf(proc->comm, sizeof(proc->comm), "%s", lb->comm);
	if (!bp_proc__thread(proc, tid, lb->comm))
		return nomem(r);
	return 0;
}

static int read_samples(struct reader *r)
{
	size_t i, ncols = r->types.n;
	uint64_t last_pid = UINT64_MAX, last_tid = UINT64_MAX;
	int err;

	r->vals = calloc(ncols + 1, sizeof(*r->vals));
	/* never a NULL frame array, also for an empty stack: hashing reads it */
	if (!r->vals || grow((void **)&r->stack, &r->cap_stack, 1, sizeof(*r->stack)))
		return nomem(r);
	for (i = 0; i < r->samples.n; i++) {
		struct labels lb = {};
		struct bp_pb_reader rd;
		struct bp_pb_field f;
		struct bp_pb_iter it;
		size_t nids = 0, nv = 0, nf = 0, k;
		enum bp_kind kind;
		uint64_t v, count, ns;
		uint32_t pid, tid;
		int64_t stack;
		int ret;

		bp_pb_reader_init(&rd, r->samples.v[i].p, r->samples.v[i].len);
		while ((ret = bp_pb_next(&rd, &f)) > 0) {
			if (f.num == SAMPLE_LOCATION_ID) {
				bp_pb_iter_init(&it, &f);
				while ((ret = bp_pb_iter_next(&it, &v)) > 0) {
					if (grow((void **)&r->ids, &r->cap_ids, nids + 1,
						 sizeof(*r->ids)))
						return nomem(r);
					r->ids[nids++] = v;
				}
			} else if (f.num == SAMPLE_VALUE) {
				bp_pb_iter_init(&it, &f);
				while ((ret = bp_pb_iter_next(&it, &v)) > 0)
					if (nv < ncols)
						r->vals[nv++] = v;
			} else if (f.num == SAMPLE_LABEL && f.wire == BP_PB_LEN) {
				err = parse_label(r, &f, &lb);
				if (err)
					return err;
			}
			if (ret < 0)
				break;
		}
		if (ret < 0)
			return fail(r, "malformed sample %zu", i);

		/* leaf first in pprof, root first in ours */
		for (k = nids; k-- > 0;) {
			const struct rloc *l = find_id(r->locs, r->nr_locs, sizeof(*r->locs),
						       r->ids[k]);

			if (!l)
				return fail(r, "sample %zu refers to unknown location %" PRIu64, i,
					    r->ids[k]);
			if (nf + l->nr > UINT32_MAX ||
			    grow((void **)&r->stack, &r->cap_stack, nf + l->nr, sizeof(*r->stack)))
				return nomem(r);
			memcpy(r->stack + nf, r->loc_frames + l->first, l->nr * sizeof(*r->stack));
			nf += l->nr;
		}
		stack = bp_profile__stack(r->p, r->stack, nf);
		if (stack < 0)
			return nomem(r);

		kind = lb.wait ? wait_kind(lb.wait) : BP_KIND_ONCPU;
		if (kind == BP_KIND_ONCPU) {
			count = col(r, r->col_count, nv);
			ns = scaled(col(r, r->col_ns, nv), r->ns_scale);
		} else {
			count = col(r, r->col_waits >= 0 ? r->col_waits : r->col_count, nv);
			ns = r->col_off >= 0 ? col(r, r->col_off, nv) :
					       scaled(col(r, r->col_ns, nv), r->ns_scale);
		}
		if (!r->state) {
			/* time without a count: the count the sampling period implies */
			if (r->col_count < 0)
				count = r->period_ns ? (ns + r->period_ns / 2) / r->period_ns : !!ns;
			if (r->col_ns < 0 && kind == BP_KIND_ONCPU)
				ns = count * r->period_ns;
		}
		pid = lb.pid;
		tid = lb.have_tid ? lb.tid : pid;
		if (!r->state && (pid != last_pid || tid != last_tid)) {
			err = foreign_proc(r, &lb, pid, tid);
			if (err)
				return err;
			last_pid = pid;
			last_tid = tid;
		}
		if (!r->state && kind != BP_KIND_ONCPU)
			r->p->offcpu_enabled = true;
		if (!r->state && kind == BP_KIND_ONCPU) {
			r->p->stats.v[BP_STAT_SAMPLES] += count;
			r->p->stats.v[BP_STAT_COUNTED] += count;
		}
		if (bp_profile__add(r->p, pid, tid, kind, stack, count, ns))
			return nomem(r);
	}
	return 0;
}

/* what a profile from another tool says about the recording */
static void foreign_header(struct reader *r)
{
	struct bp_profile *p = r->p;

	p->start_unix_ns = r->time_nanos;
	p->start_ns = 0;
	p->end_ns = r->duration > 0 ? r->duration : 0;
	if (r->period_ns)
		p->hz = (1000000000 + r->period_ns / 2) / r->period_ns;
	p->event = "cpu-clock";
}

static void reader_free(struct reader *r)
{
	size_t i;

	free(r->strs_raw.v);
	free(r->samples.v);
	free(r->mappings.v);
	free(r->locations.v);
	free(r->functions.v);
	free(r->types.v);
	free(r->comments);
	free(r->strs);
	free(r->str_block);
	free(r->maps);
	free(r->funcs);
	free(r->locs);
	free(r->loc_frames);
	bp_json_free(r->state);
	for (i = 0; i < r->nr_modules; i++)
		free(r->modules[i].module);
	free(r->modules);
	free(r->ids);
	free(r->stack);
	free(r->vals);
}

struct bp_profile *bp_pprof_read(const void *data, size_t len, char *errmsg, size_t errlen)
{
	struct reader r = { .errmsg = errmsg, .errlen = errmsg ? errlen : 0 };
	const uint8_t *in = data;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int err;

	if (r.errlen)
		errmsg[0] = '\0';
	if (!data || !len) {
		err = fail(&r, "empty file");
		goto out;
	}
	if (is_gzip(in, len) || is_zlib(in, len)) {
		err = inflate_all(&r, in, len, &raw, &raw_len);
		if (err)
			goto out;
		in = raw;
		len = raw_len;
	}
	r.p = bp_profile__new();
	if (!r.p) {
		err = nomem(&r);
		goto out;
	}
	err = parse_profile(&r, in, len);
	if (!err)
		err = build_strings(&r);
	if (!err)
		err = read_state_early(&r);
	if (!err)
		err = parse_types(&r);
	if (!err)
		err = parse_mappings(&r);
	if (!err)
		err = parse_functions(&r);
	if (!err)
		err = parse_locations(&r);
	if (!err && r.state)
		err = read_state_stacks(&r);
	if (!err)
		err = read_samples(&r);
	if (!err && r.state)
		err = read_state(&r);
	else if (!err)
		foreign_header(&r);
out:
	reader_free(&r);
	free(raw);
	if (err) {
		bp_profile__free(r.p);
		errno = -err;
		return NULL;
	}
	return r.p;
}
