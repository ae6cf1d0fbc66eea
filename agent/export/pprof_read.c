// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof reader (docs/pprof.md): boundprof's own profiles back into the
 * struct bp_profile they were written from, and pprof profiles of other
 * tools as far as they go.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/pb.h"
#include "export/pprof.h"
#include "export/pprof_proto.h"

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
	/* ours with several lines: resolved after the others (resolve_runs) */
	bool deferred;
	size_t src;		/* index in the file */
};

struct reader {
	struct bp_pprof_err err;
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
	uint64_t nr_frames_all;		/* stack frames of all samples so far */
	size_t nr_threads;		/* threads made from labels */

	struct bp_pprof_state st;	/* st.json NULL: not written by boundprof */

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

int bp_pprof_fail(struct bp_pprof_err *e, const char *fmt, ...)
{
	va_list ap;

	if (e->len && !e->msg[0]) {
		va_start(ap, fmt);
		vsnprintf(e->msg, e->len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int bp_pprof_toobig(struct bp_pprof_err *e, const char *fmt, ...)
{
	va_list ap;

	if (e->len && !e->msg[0]) {
		va_start(ap, fmt);
		vsnprintf(e->msg, e->len, fmt, ap);
		va_end(ap);
	}
	return -E2BIG;
}

int bp_pprof_nomem(struct bp_pprof_err *e)
{
	if (e->len && !e->msg[0])
		snprintf(e->msg, e->len, "out of memory");
	return -ENOMEM;
}

/* the reader's own, shorter */
#define fail(r, ...)	bp_pprof_fail(&(r)->err, __VA_ARGS__)
#define toobig(r, ...)	bp_pprof_toobig(&(r)->err, __VA_ARGS__)
#define nomem(r)	bp_pprof_nomem(&(r)->err)

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
 * BP_PPROF_MAX_INFLATED bytes; 0, -EINVAL, -E2BIG (errmsg says why) or -ENOMEM.
 */
static int inflate_all(struct reader *r, const uint8_t *in, size_t len, uint8_t **out,
		       size_t *out_len)
{
	size_t cap = len < (1u << 20) ? (1u << 20) : len * 4, n = 0;
	uint8_t *buf = NULL;
	z_stream z;
	int ret, err = 0;

	if (cap > BP_PPROF_MAX_INFLATED)
		cap = BP_PPROF_MAX_INFLATED;
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

			if (cap >= BP_PPROF_MAX_INFLATED) {
				err = toobig(r, "decompressed profile larger than %u MiB",
					     BP_PPROF_MAX_INFLATED >> 20);
				goto out;
			}
			cap = cap * 2 > BP_PPROF_MAX_INFLATED ? BP_PPROF_MAX_INFLATED : cap * 2;
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
		const char *what = NULL;

		switch (f.num) {
		case PROF_SAMPLE_TYPE:
			vec = &r->types;
			what = "sample types";
			break;
		case PROF_SAMPLE:
			vec = &r->samples;
			what = "samples";
			break;
		case PROF_MAPPING:
			vec = &r->mappings;
			what = "mappings";
			break;
		case PROF_LOCATION:
			vec = &r->locations;
			what = "locations";
			break;
		case PROF_FUNCTION:
			vec = &r->functions;
			what = "functions";
			break;
		case PROF_STRING_TABLE:
			vec = &r->strs_raw;
			what = "strings";
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
				if (r->nr_comments == BP_PPROF_MAX_RECORDS)
					return toobig(r, "more than %u comments", BP_PPROF_MAX_RECORDS);
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
			if (vec->n == BP_PPROF_MAX_RECORDS)
				return toobig(r, "more than %u %s", BP_PPROF_MAX_RECORDS, what);
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

/*
 * One frame of a location: fn is NULL for a location without lines. With
 * boundprof's state the system_name scheme of write_frames() applies;
 * otherwise the frame is named after the function and its module after the
 * mapping's file.
 */
/*
 * The marks write_frames() appends to a named frame's system_name, in its
 * order; false when the rest is anything else (then the frame is unnamed).
 */
static bool parse_marks(const char *rest, struct bp_frame *f)
{
	static const struct { const char *mark; size_t off; } marks[] = {
		{ KERNEL_MARK, offsetof(struct bp_frame, kernel) },
		{ PYTHON_MARK, offsetof(struct bp_frame, python) },
		{ INLINE_MARK, offsetof(struct bp_frame, inlined) },
	};
	size_t i, n;

	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		n = strlen(marks[i].mark);
		if (!strncmp(rest, marks[i].mark, n)) {
			*(bool *)((char *)f + marks[i].off) = true;
			rest += n;
		}
	}
	return !*rest;
}

static int64_t make_frame(struct reader *r, const struct rfunc *fn, const struct rmap *m,
			  uint64_t mapping_id, uint64_t address, uint64_t line, bool inlined)
{
	const char *mfile = m ? m->file : "";
	struct bp_frame f = {};
	size_t nl;

	f.offset = address;
	f.build_id = m && m->build_id[0] ? m->build_id : NULL;
	if (r->st.json && fn) {
		const char *name = fn->name, *sys = fn->sys;
		struct bp_frame marks = {};

		nl = strlen(name);
		if (nl && !strncmp(sys, name, nl) && parse_marks(sys + nl, &marks)) {
			f.name = name;
			f.kernel = marks.kernel;
			f.python = marks.python;
			f.inlined = marks.inlined;
		} else {
			f.kernel = !strcmp(sys, KERNEL_MARK);
		}
		if (f.name && line && line <= UINT32_MAX && fn->file[0]) {
			/* Function.filename is the source; the binary is the mapping's */
			f.file = fn->file;
			f.line = line;
			f.path = mfile[0] == '/' ? mfile : NULL;
		} else {
			f.path = fn->file[0] ? fn->file : NULL;
		}
		f.module = bp_pprof_state_module(&r->st, mapping_id);
		if (!f.module)
			f.module = f.path ? base_name(f.path) : mfile[0] ? mfile : "[unknown]";
		return bp_profile__frame(r->p, &f);
	}
	if (fn) {
		f.name = fn->name[0] ? fn->name : fn->sys[0] ? fn->sys : NULL;
		if (f.name && line && line <= UINT32_MAX && fn->file[0]) {
			f.file = fn->file;
			f.line = line;
		}
	}
	f.inlined = inlined;
	f.kernel = kernel_mapping(mfile);
	f.module = mfile[0] ? base_name(mfile) : "[unknown]";
	f.path = mfile[0] == '/' ? mfile : NULL;
	/* an unnamed address reads as an offset into its file, like our own */
	if (m && address >= m->start)
		f.offset = address - m->start + m->file_offset;
	return bp_profile__frame(r->p, &f);
}

/* one Location's lines, as read */
struct rlines {
	uint64_t *fids;		/* pairs: function id, line; line[0] first */
	size_t nf, cap;
};

/* Location i of the file: its id, mapping (checked), address and lines */
static int read_location(struct reader *r, size_t i, struct rloc *l, const struct rmap **m,
			 uint64_t *mapping_id, uint64_t *address, struct rlines *ln)
{
	struct bp_pb_reader rd;
	struct bp_pb_field f;
	int ret;

	*m = NULL;
	*mapping_id = *address = 0;
	ln->nf = 0;
	bp_pb_reader_init(&rd, r->locations.v[i].p, r->locations.v[i].len);
	while ((ret = bp_pb_next(&rd, &f)) > 0) {
		if (f.num == LOC_ID) {
			l->id = f.u64;
		} else if (f.num == LOC_MAPPING_ID) {
			*mapping_id = f.u64;
		} else if (f.num == LOC_ADDRESS) {
			*address = f.u64;
		} else if (f.num == LOC_LINE && f.wire == BP_PB_LEN) {
			struct bp_pb_reader lr;
			struct bp_pb_field lf;
			uint64_t fid = 0, line = 0;

			bp_pb_reader_init(&lr, f.data, f.len);
			while ((ret = bp_pb_next(&lr, &lf)) > 0) {
				if (lf.num == LINE_FUNCTION_ID)
					fid = lf.u64;
				else if (lf.num == LINE_LINE)
					line = lf.u64;
			}
			if (ret < 0)
				break;
			if (ln->nf == BP_PPROF_MAX_LINES)
				return toobig(r, "location %zu has more than %u lines", i,
					      BP_PPROF_MAX_LINES);
			if (grow((void **)&ln->fids, &ln->cap, 2 * (ln->nf + 1), sizeof(*ln->fids)))
				return nomem(r);
			ln->fids[2 * ln->nf] = fid;
			ln->fids[2 * ln->nf + 1] = line;
			ln->nf++;
		}
	}
	if (ret < 0)
		return fail(r, "malformed location %zu", i);
	if (*mapping_id) {
		*m = find_id(r->maps, r->nr_maps, sizeof(*r->maps), *mapping_id);
		if (!*m)
			return fail(r, "location %" PRIu64 " refers to unknown mapping %" PRIu64,
				    l->id, *mapping_id);
	}
	return 0;
}

static int push_loc_frame(struct reader *r, uint32_t id)
{
	if (grow((void **)&r->loc_frames, &r->cap_loc_frames, r->nr_loc_frames + 1,
			   sizeof(*r->loc_frames)))
		return nomem(r);
	r->loc_frames[r->nr_loc_frames++] = id;
	return 0;
}

/*
 * The frame of line k of a location. In one of our profiles written with
 * inlined runs, the function id is also the id of the frame's own
 * Location (write_frames()): that frame, offset and all, is the one
 * written; otherwise (and in other tools' profiles) a frame made from the
 * function.
 */
static int64_t line_frame(struct reader *r, const struct rloc *l, const struct rmap *m,
			  uint64_t mapping_id, uint64_t address, const struct rlines *ln,
			  size_t k, bool resolve)
{
	const struct rfunc *fn = NULL;

	if (resolve) {
		const struct rloc *own = find_id(r->locs, r->nr_locs, sizeof(*r->locs),
						 ln->fids[2 * k]);

		if (own && !own->deferred && own->nr == 1)
			return r->loc_frames[own->first];
	}
	if (ln->nf) {
		fn = find_id(r->funcs, r->nr_funcs, sizeof(*r->funcs), ln->fids[2 * k]);
		if (!fn)
			return fail(r, "location %" PRIu64 " refers to unknown function %" PRIu64,
				    l->id, ln->fids[2 * k]);
	}
	/* every line but the last is inlined into the one after it */
	return make_frame(r, fn, m, mapping_id, address, ln->nf ? ln->fids[2 * k + 1] : 0,
			  k + 1 < ln->nf);
}

/* the frames of a location, root first: line[0] is the innermost inlined function */
static int location_frames(struct reader *r, struct rloc *l, const struct rmap *m,
			   uint64_t mapping_id, uint64_t address, const struct rlines *ln,
			   bool resolve)
{
	size_t k, n = ln->nf ? ln->nf : 1;
	int64_t id;
	int err;

	if (r->nr_loc_frames + n > BP_PPROF_MAX_ALL_LINES)
		return toobig(r, "more than %u lines in all locations", BP_PPROF_MAX_ALL_LINES);
	l->first = r->nr_loc_frames;
	for (k = n; k-- > 0;) {
		id = line_frame(r, l, m, mapping_id, address, ln, k, resolve);
		if (id < 0)
			return id == -EINVAL ? -EINVAL : nomem(r);
		err = push_loc_frame(r, id);
		if (err)
			return err;
	}
	l->nr = r->nr_loc_frames - l->first;
	return 0;
}

static int parse_locations(struct reader *r)
{
	struct rlines ln = {};
	uint64_t mapping_id, address;
	const struct rmap *m;
	size_t i;
	int err = 0;

	r->locs = calloc(r->locations.n + 1, sizeof(*r->locs));
	if (!r->locs)
		return nomem(r);
	/* in file order, so that our own frames come back with their ids */
	for (i = 0; i < r->locations.n; i++) {
		struct rloc *l = &r->locs[i];

		err = read_location(r, i, l, &m, &mapping_id, &address, &ln);
		if (err)
			goto out;
		l->src = i;
		/* ours: the lines are frames of Locations that may come later */
		if (r->st.json && ln.nf > 1) {
			l->deferred = true;
			continue;
		}
		err = location_frames(r, l, m, mapping_id, address, &ln, false);
		if (err)
			goto out;
	}
	r->nr_locs = r->locations.n;
	err = sort_ids(r, r->locs, r->nr_locs, sizeof(*r->locs), "location");
	if (err)
		goto out;
	/* sorted: the deferred ones find the frames' own Locations by id */
	for (i = 0; i < r->nr_locs; i++) {
		struct rloc *l = &r->locs[i];

		if (!l->deferred)
			continue;
		err = read_location(r, l->src, l, &m, &mapping_id, &address, &ln);
		if (!err)
			err = location_frames(r, l, m, mapping_id, address, &ln, true);
		if (err)
			goto out;
	}
out:
	free(ln.fids);
	return err;
}

/* ------------------------------------------------------------ the state */

/* boundprof's state: in its own field, or in a comment in older files */
static int read_state_early(struct reader *r)
{
	size_t i, plen = strlen(STATE_PREFIX);

	if (r->state_text)
		return bp_pprof_state_parse(&r->st, (const char *)r->state_text + plen,
					    r->state_len - plen, &r->err);
	for (i = 0; i < r->nr_comments; i++) {
		const char *c = str_at(r, r->comments[i]);

		if (!c)
			return -EINVAL;
		/* other comments (and other state versions) are not ours: skip them */
		if (!strncmp(c, STATE_PREFIX, plen))
			return bp_pprof_state_parse(&r->st, c + plen, strlen(c + plen), &r->err);
	}
	return 0;
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

/* a wait label: never on-CPU, and one this build does not know is other */
static enum bp_kind wait_kind(const char *s)
{
	int k = bp_kind_find(s);

	return k > BP_KIND_ONCPU ? (enum bp_kind)k : BP_KIND_OTHER;
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
	return r->st.json || v > 0 ? (uint64_t)v : 0;
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
	struct bp_proc *proc = bp_profile__proc(r->p, pid, false);
	uint32_t nt;

	if (!proc && r->p->nr_procs == BP_PPROF_MAX_PROCS)
		return toobig(r, "more than %u processes", BP_PPROF_MAX_PROCS);
	if (!proc)
		proc = bp_profile__proc(r->p, pid, true);
	if (!proc)
		return nomem(r);
	if (!proc->comm[0] && lb->comm)
		snprintf(proc->comm, sizeof(proc->comm), "%s", lb->comm);
	/* each thread costs a bp_thread: bounded per process and in all */
	nt = proc->nr_threads;
	if (!bp_proc__thread(proc, tid, lb->comm))
		return nomem(r);
	if (proc->nr_threads > nt && (++r->nr_threads > BP_PPROF_MAX_THREADS ||
				      proc->nr_threads > BP_PPROF_MAX_PROC_THREADS))
		return toobig(r, "more than %u threads in a process or %u in all",
			      BP_PPROF_MAX_PROC_THREADS, BP_PPROF_MAX_THREADS);
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
					if (nids == BP_PPROF_MAX_DEPTH)
						return toobig(r, "sample %zu has more than %u locations",
							      i, BP_PPROF_MAX_DEPTH);
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
			if (nf + l->nr > BP_PPROF_MAX_DEPTH)
				return toobig(r, "sample %zu has more than %u frames", i,
					      BP_PPROF_MAX_DEPTH);
			if (grow((void **)&r->stack, &r->cap_stack, nf + l->nr, sizeof(*r->stack)))
				return nomem(r);
			memcpy(r->stack + nf, r->loc_frames + l->first, l->nr * sizeof(*r->stack));
			nf += l->nr;
		}
		r->nr_frames_all += nf;
		if (r->nr_frames_all > BP_PPROF_MAX_FRAMES)
			return toobig(r, "more than %u frames in all samples", BP_PPROF_MAX_FRAMES);
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
		if (!r->st.json) {
			/* time without a count: the count the sampling period implies */
			if (r->col_count < 0)
				count = r->period_ns ? (ns + r->period_ns / 2) / r->period_ns : !!ns;
			if (r->col_ns < 0 && kind == BP_KIND_ONCPU)
				ns = count * r->period_ns;
		}
		pid = lb.pid;
		tid = lb.have_tid ? lb.tid : pid;
		if (!r->st.json && (pid != last_pid || tid != last_tid)) {
			err = foreign_proc(r, &lb, pid, tid);
			if (err)
				return err;
			last_pid = pid;
			last_tid = tid;
		}
		if (!r->st.json && kind != BP_KIND_ONCPU)
			r->p->offcpu_enabled = true;
		if (!r->st.json && kind == BP_KIND_ONCPU) {
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
	bp_pprof_state_free(&r->st);
	free(r->ids);
	free(r->stack);
	free(r->vals);
}

struct bp_profile *bp_pprof_read(const void *data, size_t len, char *errmsg, size_t errlen)
{
	struct reader r = { .err = { .msg = errmsg, .len = errmsg ? errlen : 0 } };
	const uint8_t *in = data;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	int err;

	if (r.err.len)
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
	} else if (len > BP_PPROF_MAX_INFLATED) {
		err = toobig(&r, "profile larger than %u MiB", BP_PPROF_MAX_INFLATED >> 20);
		goto out;
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
	if (!err && r.st.json)
		err = bp_pprof_state_stacks(&r.st, r.p, &r.err);
	if (!err)
		err = read_samples(&r);
	if (!err && r.st.json)
		err = bp_pprof_state_apply(&r.st, r.p, &r.err);
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
