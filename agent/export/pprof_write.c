// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof writer (docs/pprof.md): a gzip-compressed profile.proto.
 * Samples, frames and stacks are ordinary proto messages so that any pprof
 * reader shows them; everything else of struct bp_profile travels as one
 * JSON document in a field of its own (pprof_state.c), so that a saved
 * profile re-renders every report with the same numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/log.h"
#include "util/pb.h"
#include "export/pprof.h"
#include "export/pprof_proto.h"

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

struct writer {
	const struct bp_profile *p;
	struct strtab st;
	struct bp_buf body;	/* fields 1..5 of the Profile */
	struct bp_buf msg;	/* one nested message */
	struct bp_buf sub;	/* a message nested in that one */
	struct bp_buf tmp;	/* scratch text */
	struct bp_pprof_map *maps;
	uint32_t nr_maps, cap_maps;
	struct bp_htab map_h;
	uint32_t *frame_map;	/* mapping id of each frame */
	uint64_t *ids;		/* scratch: a sample's location ids */
	uint32_t cap_ids;
	/* inlined runs: the frame ids of each, root first; location id nr_frames + 1 + index */
	uint32_t *run_pool;
	uint64_t run_pool_len, run_pool_cap;
	uint64_t *run_off;
	uint32_t *run_len;
	uint32_t nr_runs, cap_runs;
	struct bp_htab run_h;
	struct bp_buf samples;	/* the Sample messages, after every Location */
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
	const struct bp_pprof_map *a = &((const struct writer *)ctx)->maps[idx], *b = key;

	return a->module == b->module && a->path == b->path && a->build_id == b->build_id;
}

/* the mapping id (1-based) of a frame's module; 0 on -ENOMEM */
static uint32_t frame_mapping(struct writer *w, const struct bp_frame *f)
{
	struct bp_pprof_map k = { f->module, f->path, f->build_id };
	const void *ptrs[3] = { k.module, k.path, k.build_id };
	uint64_t h = bp_hash_bytes(ptrs, sizeof(ptrs), 4);
	uint32_t idx;

	if (bp_htab_find(&w->map_h, h, wmap_eq, w, &k, &idx) == 0)
		return idx + 1;
	if (w->nr_maps == w->cap_maps) {
		uint32_t ncap = w->cap_maps ? w->cap_maps * 2 : 64;
		struct bp_pprof_map *n = realloc(w->maps, (size_t)ncap * sizeof(*n));

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

static bool has_line(const struct bp_frame *f)
{
	return f->name && f->file && f->file[0] && f->line;
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
	struct bp_pprof_map m;

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
 * same frame ids back (the Locations of inlined runs come after these, see
 * run_location()). Function.name is the frame label; system_name says
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
			if (f->kernel || f->python || f->inlined) {
				bp_buf_printf(&w->tmp, "%s%s%s%s", f->name,
					      f->kernel ? KERNEL_MARK : "",
					      f->python ? PYTHON_MARK : "",
					      f->inlined ? INLINE_MARK : "");
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
		/*
		 * Function.filename is the source file where the line is known (what
		 * pprof's -lines and source views expect); otherwise, as before
		 * lines existed, the binary's path (the mapping has it too).
		 */
		if (has_line(f))
			bp_pb_put_uint64(&w->msg, FUNC_FILENAME, wstr(w, f->file));
		else if (has_path(f))
			bp_pb_put_uint64(&w->msg, FUNC_FILENAME, wstr(w, f->path));
		bp_pb_put_bytes(&w->body, PROF_FUNCTION, w->msg.data, w->msg.len);

		bp_buf_reset(&w->msg);
		bp_buf_reset(&w->sub);
		bp_pb_put_uint64(&w->msg, LOC_ID, i + 1);
		bp_pb_put_uint64(&w->msg, LOC_MAPPING_ID, w->frame_map[i]);
		if (f->offset)
			bp_pb_put_uint64(&w->msg, LOC_ADDRESS, f->offset);
		bp_pb_put_uint64(&w->sub, LINE_FUNCTION_ID, i + 1);
		if (has_line(f))
			bp_pb_put_uint64(&w->sub, LINE_LINE, f->line);
		bp_pb_put_bytes(&w->msg, LOC_LINE, w->sub.data, w->sub.len);
		bp_pb_put_bytes(&w->body, PROF_LOCATION, w->msg.data, w->msg.len);
	}
	for (i = 0; i < w->nr_maps; i++) {
		const struct bp_pprof_map *m = &w->maps[i];

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

/*
 * A frame followed (towards the leaf) by frames inlined into it is one
 * address: pprof wants it as one Location with a Line per function,
 * innermost first, so that -noinlines and source views see the calls that
 * were not made. Each distinct run gets such a Location (docs/pprof.md,
 * "Inlined frames"); the frames' own Locations stay, for the frame ids.
 */
struct run_key {
	const uint32_t *fr;
	uint32_t n;
};

static bool run_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct writer *w = ctx;
	const struct run_key *k = key;

	return w->run_len[idx] == k->n &&
	       !memcmp(w->run_pool + w->run_off[idx], k->fr, k->n * sizeof(*k->fr));
}

/* the Location id of the run fr[0..n), root first, written when new; 0 on -ENOMEM */
static uint64_t run_location(struct writer *w, const uint32_t *fr, uint32_t n)
{
	const struct bp_profile *p = w->p;
	const struct bp_frame *inner = &p->frames[fr[n - 1]];
	struct run_key k = { fr, n };
	uint64_t h = bp_hash_bytes(fr, n * sizeof(*fr), 5);
	uint32_t idx, j;

	if (bp_htab_find(&w->run_h, h, run_eq, w, &k, &idx) == 0)
		return (uint64_t)p->nr_frames + 1 + idx;
	if (w->nr_runs == w->cap_runs) {
		uint32_t ncap = w->cap_runs ? w->cap_runs * 2 : 64;
		uint64_t *noff = reallocarray(w->run_off, ncap, sizeof(*noff));
		uint32_t *nlen;

		if (!noff)
			return 0;
		w->run_off = noff;
		nlen = reallocarray(w->run_len, ncap, sizeof(*nlen));
		if (!nlen)
			return 0;
		w->run_len = nlen;
		w->cap_runs = ncap;
	}
	if (w->run_pool_len + n > w->run_pool_cap) {
		uint64_t ncap = w->run_pool_cap ? w->run_pool_cap * 2 : 256;
		uint32_t *np;

		while (ncap < w->run_pool_len + n)
			ncap *= 2;
		np = reallocarray(w->run_pool, ncap, sizeof(*np));
		if (!np)
			return 0;
		w->run_pool = np;
		w->run_pool_cap = ncap;
	}
	if (bp_htab_insert(&w->run_h, h, w->nr_runs))
		return 0;
	memcpy(w->run_pool + w->run_pool_len, fr, n * sizeof(*fr));
	w->run_off[w->nr_runs] = w->run_pool_len;
	w->run_len[w->nr_runs] = n;
	w->run_pool_len += n;

	/* the innermost frame's address: where the code that ran was */
	bp_buf_reset(&w->msg);
	bp_pb_put_uint64(&w->msg, LOC_ID, (uint64_t)p->nr_frames + 1 + w->nr_runs);
	bp_pb_put_uint64(&w->msg, LOC_MAPPING_ID, w->frame_map[fr[n - 1]]);
	if (inner->offset)
		bp_pb_put_uint64(&w->msg, LOC_ADDRESS, inner->offset);
	for (j = n; j-- > 0;) {
		const struct bp_frame *f = &p->frames[fr[j]];

		bp_buf_reset(&w->sub);
		bp_pb_put_uint64(&w->sub, LINE_FUNCTION_ID, fr[j] + 1);
		if (has_line(f))
			bp_pb_put_uint64(&w->sub, LINE_LINE, f->line);
		bp_pb_put_bytes(&w->msg, LOC_LINE, w->sub.data, w->sub.len);
	}
	bp_pb_put_bytes(&w->body, PROF_LOCATION, w->msg.data, w->msg.len);
	if (w->msg.err || w->sub.err || w->body.err)
		return 0;
	return (uint64_t)p->nr_frames + 1 + w->nr_runs++;
}

/*
 * A stack's location ids, leaf first (pprof's order; ours is root first):
 * a frame's own Location, or a run's where frames are inlined into it.
 * Inlined frames at the root, with nothing to attach them to, keep their
 * own, as does a run longer than a reader takes in one Location.
 */
static int stack_locations(struct writer *w, const uint32_t *fr, uint32_t nr, uint32_t *nids)
{
	const struct bp_frame *frames = w->p->frames;
	uint32_t i = nr, n = 0, start;

	while (i > 0) {
		start = i - 1;
		while (start > 0 && frames[fr[start]].inlined)
			start--;
		if (i - start > 1 && !frames[fr[start]].inlined &&
		    i - start <= BP_PPROF_MAX_LINES) {
			uint64_t id = run_location(w, fr + start, i - start);

			if (!id)
				return -ENOMEM;
			w->ids[n++] = id;
			i = start;
		} else {
			/* a frame alone, or frames each in its own Location */
			while (i > start)
				w->ids[n++] = fr[--i] + 1;
		}
	}
	*nids = n;
	return 0;
}

static int write_samples(struct writer *w)
{
	const struct bp_profile *p = w->p;
	uint32_t i, nr, nids;
	int err;

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
		err = stack_locations(w, fr, nr, &nids);
		if (err)
			return err;
		if (s->kind == BP_KIND_ONCPU) {
			v[COL_SAMPLES] = s->count;
			v[COL_CPU] = s->ns;
		} else {
			v[COL_OFFCPU] = s->ns;
			v[COL_IO] = s->kind == BP_KIND_IO ? s->ns : 0;
			v[COL_WAITS] = s->count;
		}
		bp_buf_reset(&w->msg);
		bp_pb_put_packed(&w->msg, SAMPLE_LOCATION_ID, w->ids, nids);
		bp_pb_put_packed(&w->msg, SAMPLE_VALUE, v, COL__MAX);
		put_label(w, "pid", NULL, s->pid);
		put_label(w, "tid", NULL, s->tid);
		if (proc && proc->comm[0])
			put_label(w, "comm", proc->comm, 0);
		if (proc && proc->have_ids) {
			char uid[16];

			snprintf(uid, sizeof(uid), "%u", proc->uid);
			put_label(w, "user", proc->user ? proc->user : uid, 0);
			if (proc->cgroup)
				put_label(w, "cgroup", proc->cgroup, 0);
			if (proc->unit)
				put_label(w, "unit", proc->unit, 0);
		}
		if (s->kind != BP_KIND_ONCPU)
			put_label(w, "wait", bp_kind_name(s->kind), 0);
		bp_pb_put_bytes(&w->samples, PROF_SAMPLE, w->msg.data, w->msg.len);
		if (w->err || w->msg.err || w->sub.err || w->samples.err)
			return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------- assembling */

static void put_value_type(struct writer *w, uint32_t field, const char *type, const char *unit)
{
	bp_buf_reset(&w->msg);
	bp_pb_put_uint64(&w->msg, VT_TYPE, wstr(w, type));
	bp_pb_put_uint64(&w->msg, VT_UNIT, wstr(w, unit));
	bp_pb_put_bytes(&w->body, field, w->msg.data, w->msg.len);
}

/*
 * gzip, fed in pieces as the parts of the Profile are done: deflate's
 * output does not depend on how its input is cut, and no part is copied
 * into a whole first (that copy was the largest block of a window's close).
 */
struct gz {
	z_stream z;
	struct bp_buf *out;
	int err;
};

static int gz_init(struct gz *g, struct bp_buf *out)
{
	int ret;

	memset(g, 0, sizeof(*g));
	g->out = out;
	/*
	 * Fastest deflate, as Go's own profile writer: an agent writes one
	 * every window. A 437 KB window under the mixed load: 57.8 KB at
	 * level 1, 45.7 KB at level 6, which cost 3-4 ms more of CPU.
	 */
	ret = deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (ret != Z_OK) {
		bp_err("pprof: deflateInit2 failed: %d", ret);
		return ret == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	return 0;
}

/* avail_in is 32 bits wide: a piece goes in at most 1 GiB at a time */
static int gz_deflate(struct gz *g, const void *data, size_t len, int flush)
{
	const unsigned char *in = data;
	unsigned char chunk[16384];
	int ret = Z_OK, f;

	if (g->err)
		return g->err;
	do {
		size_t n = len < (1u << 30) ? len : (1u << 30);

		g->z.next_in = (unsigned char *)in;
		g->z.avail_in = n;
		in += n;
		len -= n;
		f = len ? Z_NO_FLUSH : flush;
		do {
			g->z.next_out = chunk;
			g->z.avail_out = sizeof(chunk);
			ret = deflate(&g->z, f);
			if (ret == Z_STREAM_ERROR) {
				bp_err("pprof: deflate failed");
				return g->err = -EINVAL;
			}
			g->err = bp_buf_append(g->out, chunk, sizeof(chunk) - g->z.avail_out);
			if (g->err)
				return g->err;
		} while (g->z.avail_out == 0);
	} while (len);
	if (flush == Z_FINISH && ret != Z_STREAM_END) {
		bp_err("pprof: deflate did not finish: %d", ret);
		g->err = -EINVAL;
	}
	return g->err;
}

/* a struct bp_buf sink (bp_buf_sink()): the part so far goes to gzip */
static int gz_sink(void *ctx, const char *data, size_t len)
{
	return gz_deflate(ctx, data, len, Z_NO_FLUSH);
}

/* the part in b goes to gzip and b is freed: one part held at a time */
static int gz_part(struct gz *g, struct bp_buf *b)
{
	int err = b->err ? b->err : gz_deflate(g, b->data, b->len, Z_NO_FLUSH);

	bp_buf_free(b);
	return err;
}

int bp_pprof_write(const struct bp_profile *p, struct bp_buf *out)
{
	struct writer w = { .p = p };
	struct bp_buf state = BP_BUF_INIT, tail = BP_BUF_INIT;
	struct gz g;
	bool gz_on = false;
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
		err = bp_pprof_state_write(p, w.maps, w.nr_maps, &state);
	if (err)
		goto out;
	/* every string before the table is written out */
	cpu = wstr(&w, col_type[COL_CPU]);
	ns = wstr(&w, "nanoseconds");
	err = w.err ? w.err : w.msg.err;
	if (!err)
		err = gz_init(&g, out);
	if (err)
		goto out;
	gz_on = true;

	/* the fields in the order they always had: the body, its Samples, the rest */
	err = gz_part(&g, &w.body);
	if (!err)
		err = gz_part(&g, &w.samples);
	if (err)
		goto out;
	bp_buf_sink(&tail, gz_sink, &g, 65536);
	for (i = 0; i < w.st.nr; i++)
		bp_pb_put_bytes(&tail, PROF_STRING_TABLE, w.st.bytes.data + w.st.off[i],
				w.st.len[i]);
	if (p->start_unix_ns)
		bp_pb_put_int64(&tail, PROF_TIME_NANOS, p->start_unix_ns);
	if (p->end_ns > p->start_ns)
		bp_pb_put_int64(&tail, PROF_DURATION_NANOS, p->end_ns - p->start_ns);
	bp_buf_reset(&w.msg);
	bp_pb_put_uint64(&w.msg, VT_TYPE, cpu);
	bp_pb_put_uint64(&w.msg, VT_UNIT, ns);
	bp_pb_put_bytes(&tail, PROF_PERIOD_TYPE, w.msg.data, w.msg.len);
	if (p->hz > 0)
		bp_pb_put_int64(&tail, PROF_PERIOD, 1000000000 / p->hz);
	/* the state document goes to gzip from where it is, not copied after its tag */
	bp_pb_put_tag(&tail, PROF_BOUNDPROF_STATE, BP_PB_LEN);
	bp_pb_put_varint(&tail, state.len);
	bp_buf_flush(&tail);
	if (!tail.err)
		tail.err = gz_part(&g, &state);
	bp_pb_put_uint64(&tail, PROF_DEFAULT_SAMPLE_TYPE, cpu);
	err = w.msg.err ? w.msg.err : tail.err;
	if (!err)
		err = gz_deflate(&g, tail.data, tail.len, Z_FINISH);
out:
	if (gz_on)
		deflateEnd(&g.z);
	strtab_free(&w.st);
	bp_buf_free(&w.body);
	bp_buf_free(&w.msg);
	bp_buf_free(&w.sub);
	bp_buf_free(&w.tmp);
	bp_buf_free(&state);
	bp_buf_free(&tail);
	bp_htab_free(&w.map_h);
	free(w.maps);
	free(w.frame_map);
	free(w.ids);
	free(w.run_pool);
	free(w.run_off);
	free(w.run_len);
	bp_htab_free(&w.run_h);
	bp_buf_free(&w.samples);
	return err;
}
