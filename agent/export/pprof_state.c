// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof's own state in a saved profile (docs/pprof.md, "The state
 * field"): everything of struct bp_profile that profile.proto has no place
 * for, as one JSON document in a field of its own, written and read back.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hex.h"
#include "util/json.h"
#include "export/pprof.h"
#include "export/pprof_proto.h"
#include "util/utf8.h"

/* ================================================================== write */

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
	if (t->gil_ns)
		bp_json_w_kv_uint64(j, "gil_ns", t->gil_ns);
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
	if (pr->python) {
		kv_str(j, x, "python", pr->python);
		bp_json_w_kv_bool(j, "python_free_threaded", pr->python_free_threaded);
	}
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

int bp_pprof_state_write(const struct bp_profile *p, const struct bp_pprof_map *maps,
			 uint32_t nr_maps, struct bp_buf *out)
{
	struct bp_buf hex = BP_BUF_INIT;
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
	kv_str(&j, &hex, "event", p->event);
	bp_json_w_kv_bool(&j, "system_wide", p->system_wide);
	bp_json_w_kv_bool(&j, "offcpu_enabled", p->offcpu_enabled);
	kv_double(&j, "machine_busy", p->machine_busy);
	bp_json_w_kv_uint64(&j, "llc_bytes", p->llc_bytes);
	kv_str(&j, &hex, "llc_source", p->llc_source);
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
	for (i = 0; i < nr_maps; i++) {
		const struct bp_pprof_map *m = &maps[i];

		if (!m->path || !m->path[0] || !strcmp(m->module, base_name(m->path)))
			continue;
		bp_json_w_begin_array(&j);
		bp_json_w_uint64(&j, i + 1);
		put_str(&j, &hex, m->module);
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
		write_proc(&j, &hex, p->procs[i]);
	bp_json_w_end_array(&j);
	write_io(&j, &hex, p);
	bp_json_w_end_object(&j);
	err = bp_json_w_finish(&j);
	if (!err)
		err = hex.err;
	bp_buf_free(&hex);
	return err;
}

/* =================================================================== read */

/* reads the state's values; the first bad one fails the whole read */
struct st {
	struct bp_pprof_err *e;
	struct bp_profile *p;
	const struct bp_json *root;
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
	in = bp_profile__intern(s->p, v);
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
		return bp_pprof_nomem(s->e);
	return bp_pprof_fail(s->e, "bad boundprof state: \"%s\"", s->bad);
}

/* how many processes, threads and IO records the state asks for, before any is made */
static int state_counts(const struct bp_json *o, struct bp_pprof_err *e)
{
	const struct bp_json *procs = bp_json_get(o, "procs");
	size_t i, n, threads = 0;

	if (bp_json_len(procs) > BP_PPROF_MAX_PROCS)
		return bp_pprof_toobig(e, "boundprof state: more than %u processes",
				       BP_PPROF_MAX_PROCS);
	for (i = 0; i < bp_json_len(procs); i++) {
		n = bp_json_len(bp_json_get(bp_json_at(procs, i), "threads"));
		threads += n;
		if (n > BP_PPROF_MAX_PROC_THREADS || threads > BP_PPROF_MAX_THREADS)
			return bp_pprof_toobig(e, "boundprof state: more than %u threads in a "
					       "process or %u in all", BP_PPROF_MAX_PROC_THREADS,
					       BP_PPROF_MAX_THREADS);
	}
	if (bp_json_len(bp_json_get(o, "io_devs")) > BP_PPROF_MAX_IO_DEVS)
		return bp_pprof_toobig(e, "boundprof state: more than %u block devices",
				       BP_PPROF_MAX_IO_DEVS);
	if (bp_json_len(bp_json_get(o, "io_rows")) > BP_PPROF_MAX_IO_ROWS)
		return bp_pprof_toobig(e, "boundprof state: more than %u IO rows",
				       BP_PPROF_MAX_IO_ROWS);
	return 0;
}

/* by mapping id, and for the same id in document order: the first one counts */
static int cmp_module(const void *a, const void *b)
{
	const struct bp_pprof_module *x = a, *y = b;

	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int bp_pprof_state_parse(struct bp_pprof_state *ps, const char *text, size_t len,
			 struct bp_pprof_err *e)
{
	const struct bp_json *mods;
	struct st s = { .e = e };
	char jerr[160] = "";
	size_t i;
	int err;

	if (len > BP_PPROF_MAX_STATE)
		return bp_pprof_toobig(e, "boundprof state larger than %u MiB",
				       BP_PPROF_MAX_STATE >> 20);
	ps->json = bp_json_parse(text, len, jerr, sizeof(jerr));
	if (!ps->json)
		return errno == ENOMEM ? bp_pprof_nomem(e) :
					 bp_pprof_fail(e, "bad boundprof state: %s", jerr);
	if (bp_json_type(ps->json) != BP_JSON_OBJECT)
		return bp_pprof_fail(e, "bad boundprof state: not an object");
	err = state_counts(ps->json, e);
	if (err)
		return err;
	mods = bp_json_get(ps->json, "modules");
	if (mods && bp_json_type(mods) != BP_JSON_ARRAY)
		return bp_pprof_fail(e, "bad boundprof state: \"modules\"");
	ps->modules = calloc(bp_json_len(mods) + 1, sizeof(*ps->modules));
	if (!ps->modules)
		return bp_pprof_nomem(e);
	for (i = 0; i < bp_json_len(mods); i++) {
		const struct bp_json *m = bp_json_at(mods, i);
		struct bp_pprof_module *rm = &ps->modules[ps->nr_modules];

		if (bp_json_len(m) != 2 || bp_json_uint(bp_json_at(m, 0), &rm->mapping))
			return bp_pprof_fail(e, "bad boundprof state: \"modules\"");
		rm->module = st_str_val(&s, bp_json_at(m, 1), "modules");
		if (!rm->module)
			st_fail(&s, "modules", -EINVAL);
		if (s.err)
			return st_result(&s);
		rm->order = ps->nr_modules++;
	}
	qsort(ps->modules, ps->nr_modules, sizeof(*ps->modules), cmp_module);
	return 0;
}

const char *bp_pprof_state_module(const struct bp_pprof_state *s, uint64_t mapping)
{
	size_t lo = 0, hi = s->nr_modules;

	/* every location asks: a search, not a scan */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->modules[mid].mapping < mapping)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nr_modules && s->modules[lo].mapping == mapping ? s->modules[lo].module :
									    NULL;
}

/* stacks in the writer's order, when sample order would not give it */
int bp_pprof_state_stacks(const struct bp_pprof_state *s, struct bp_profile *p,
			  struct bp_pprof_err *e)
{
	const struct bp_json *stacks = bp_json_get(s->json, "stacks");
	uint32_t *stack = NULL;
	size_t i, j, n, cap = 0;
	uint64_t all = 0;
	int err = 0;

	if (stacks && bp_json_type(stacks) != BP_JSON_ARRAY)
		return bp_pprof_fail(e, "bad boundprof state: \"stacks\"");
	for (i = 0; i < bp_json_len(stacks) && !err; i++) {
		const struct bp_json *st = bp_json_at(stacks, i);

		n = bp_json_len(st);
		if (bp_json_type(st) != BP_JSON_ARRAY) {
			err = bp_pprof_fail(e, "bad boundprof state: \"stacks\"");
			break;
		}
		all += n;
		if (n > BP_PPROF_MAX_DEPTH || all > BP_PPROF_MAX_FRAMES) {
			err = bp_pprof_toobig(e, "boundprof state: more than %u frames in a stack "
					      "or %u in all", BP_PPROF_MAX_DEPTH, BP_PPROF_MAX_FRAMES);
			break;
		}
		if (n + 1 > cap) {
			uint32_t *ns = reallocarray(stack, n + 1, sizeof(*stack));

			if (!ns) {
				err = bp_pprof_nomem(e);
				break;
			}
			stack = ns;
			cap = n + 1;
		}
		for (j = 0; j < n && !err; j++) {
			uint64_t f;

			if (bp_json_uint(bp_json_at(st, j), &f) || f >= p->nr_frames)
				err = bp_pprof_fail(e, "bad boundprof state: \"stacks\"");
			stack[j] = f;
		}
		if (!err && bp_profile__stack(p, stack, n) < 0)
			err = bp_pprof_nomem(e);
	}
	free(stack);
	return err;
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
	t->gil_ns = st_u64(s, o, "gil_ns");
	return 0;
}

static int read_proc(struct st *s, const struct bp_json *o)
{
	const struct bp_json *threads = bp_json_get(o, "threads");
	struct bp_proc *pr;
	size_t i;

	pr = bp_profile__proc(s->p, st_u32(s, o, "pid"), true);
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
	pr->python = st_istr(s, o, "python");
	pr->python_free_threaded = st_bool(s, o, "python_free_threaded");
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
	const struct bp_json *devs = bp_json_get(s->root, "io_devs");
	const struct bp_json *rows = bp_json_get(s->root, "io_rows");
	size_t i, k;

	if ((devs && bp_json_type(devs) != BP_JSON_ARRAY) ||
	    (rows && bp_json_type(rows) != BP_JSON_ARRAY)) {
		st_fail(s, devs && bp_json_type(devs) != BP_JSON_ARRAY ? "io_devs" : "io_rows",
			-EINVAL);
		return 0;
	}
	for (i = 0; i < bp_json_len(devs) && !s->err; i++) {
		const struct bp_json *o = bp_json_at(devs, i), *ops = bp_json_get(o, "op");
		struct bp_io_dev *d = bp_profile__io_dev(s->p, st_u32(s, o, "dev"), true);

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
		row = bp_profile__io_row(s->p, st_u32(s, o, "dev"), st_u32(s, o, "pid"),
					 st_u32(s, o, "op"), st_bool(s, o, "kthread"), comm, true);
		if (!row)
			return -ENOMEM;
		read_io_stats(s, o, &row->st);
	}
	return 0;
}

int bp_pprof_state_apply(const struct bp_pprof_state *ps, struct bp_profile *p,
			 struct bp_pprof_err *e)
{
	const struct bp_json *o = ps->json, *procs = bp_json_get(o, "procs");
	uint64_t stats[BP_STAT__MAX];
	struct st s = { .e = e, .p = p, .root = ps->json };
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

void bp_pprof_state_free(struct bp_pprof_state *s)
{
	size_t i;

	bp_json_free(s->json);
	for (i = 0; i < s->nr_modules; i++)
		free(s->modules[i].module);
	free(s->modules);
	memset(s, 0, sizeof(*s));
}
