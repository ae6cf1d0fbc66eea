// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
#include "analyze/runs.h"
#include "util/json.h"

static bool fn_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const struct bp_diff *)ctx)->fns[idx].key, key);
}

static int add_profile(struct bp_diff *d, const struct bp_profile *p, int side)
{
	char label[512], *key;
	uint32_t i, nr;

	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const struct bp_frame *fr;
		struct bp_frame fn;
		const uint32_t *frames;
		uint32_t idx;
		uint64_t h;

		double secs = s->kind == BP_KIND_ONCPU ?
			(!p->pmu && s->ns ? s->ns / 1e9 : p->hz ? (double)s->count / p->hz : 0) :
			s->ns / 1e9;

		if (s->kind < BP_KIND__MAX)
			d->time_s[side][s->kind] += secs;
		if (s->kind != BP_KIND_ONCPU || !s->count)
			continue;
		frames = bp_profile__stack_frames(p, s->stack, &nr);
		if (!nr)
			continue;
		d->total[side] += s->count;
		/*
		 * By function, as the hotspots are: a function inlined into the
		 * leaf is the leaf's, and no source line, which moves between
		 * the two versions compared.
		 */
		while (nr > 1 && p->frames[frames[nr - 1]].inlined)
			nr--;
		fr = &p->frames[frames[nr - 1]];
		fn = *fr;
		fn.file = NULL;
		fn.line = 0;
		bp_frame_label(&fn, false, label, sizeof(label));
		if (asprintf(&key, "%d|%s|%s", fr->kernel, fr->module, label) < 0)
			return -ENOMEM;
		h = bp_hash_bytes(key, strlen(key), 7);
		if (!bp_htab_find(&d->h, h, fn_eq, d, key, &idx)) {
			d->fns[idx].n[side] += s->count;
			d->fns[idx].s[side] += secs;
			free(key);
			continue;
		}
		if (d->nr_fns == d->cap_fns) {
			uint32_t ncap = d->cap_fns ? d->cap_fns * 2 : 256;
			struct bp_diff_fn *nv = realloc(d->fns, ncap * sizeof(*nv));

			if (!nv) {
				free(key);
				return -ENOMEM;
			}
			d->fns = nv;
			d->cap_fns = ncap;
		}
		if (bp_htab_insert(&d->h, h, d->nr_fns)) {
			free(key);
			return -ENOMEM;
		}
		d->fns[d->nr_fns] = (struct bp_diff_fn){ .key = key, .kernel = fr->kernel };
		d->fns[d->nr_fns].label = strchr(strchr(key, '|') + 1, '|') + 1;
		d->fns[d->nr_fns].module = fr->module;
		d->fns[d->nr_fns].n[side] = s->count;
		d->fns[d->nr_fns].s[side] = secs;
		d->nr_fns++;
	}
	return 0;
}

double bp_diff_share(const struct bp_diff *d, const struct bp_diff_fn *f, int side)
{
	return d->total[side] ? (double)f->n[side] / d->total[side] : 0;
}

static int cmp_change(const void *a, const void *b, void *ctx)
{
	const struct bp_diff_fn *x = a, *y = b;
	const struct bp_diff *d = ctx;
	double dx = fabs(bp_diff_share(d, x, 1) - bp_diff_share(d, x, 0));
	double dy = fabs(bp_diff_share(d, y, 1) - bp_diff_share(d, y, 0));

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->key, y->key);
}

int bp_diff(const struct bp_profile *before, const struct bp_profile *after, struct bp_diff *d)
{
	uint32_t i;
	int err;

	memset(d, 0, sizeof(*d));
	err = add_profile(d, before, 0);
	if (!err)
		err = add_profile(d, after, 1);
	if (err) {
		bp_diff_free(d);
		return err;
	}
	for (i = 0; i < d->nr_fns; i++)
		d->biggest = fmax(d->biggest, fabs(bp_diff_share(d, &d->fns[i], 1) -
						   bp_diff_share(d, &d->fns[i], 0)));
	/* the index is of no use once sorted, and would point at the wrong entries */
	bp_htab_free(&d->h);
	if (d->nr_fns)
		qsort_r(d->fns, d->nr_fns, sizeof(*d->fns), cmp_change, d);
	return 0;
}

void bp_diff_free(struct bp_diff *d)
{
	uint32_t i;

	for (i = 0; i < d->nr_fns; i++)
		free(d->fns[i].key);
	free(d->fns);
	bp_htab_free(&d->h);
	memset(d, 0, sizeof(*d));
}

const char *bp_diff_kind_label(int kind)
{
	return kind >= 0 && kind < BP_KIND__MAX ? bp_wait_classes[kind].label : "?";
}

/* one side of the gate: its runs' medians, or the recording as one run */
static int gate_side(const struct bp_profile *p, const struct bp_diff *d, int side,
		     struct bp_gate_side *g)
{
	struct bp_runs_summary rs;
	int err;

	memset(g, 0, sizeof(*g));
	err = bp_runs_summarize(p, &rs);
	if (err == -ENOMEM)
		return err;
	if (!err) {
		g->runs = rs.n;
		g->wall_s = rs.wall.median;
		g->ready_s = rs.ready.median;
		g->cpu_s = rs.cpu.median;
		g->wall_spread = rs.wall.spread;
		g->noisy = rs.noisy;
		return 0;
	}
	g->wall_s = p->end_ns > p->start_ns ? (p->end_ns - p->start_ns) / 1e9 : 0;
	g->ready_s = g->wall_s;
	g->cpu_s = d->time_s[side][BP_KIND_ONCPU];
	return 0;
}

static double change(double before, double after)
{
	return before > 0 ? after / before - 1 : after > 0 ? INFINITY : 0;
}

static int cmp_grew(const void *a, const void *b)
{
	const struct bp_gate_grew *x = a, *y = b;
	double dx = x->after_s - x->before_s, dy = y->after_s - y->before_s;

	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

int bp_diff_gate(const struct bp_profile *before, const struct bp_profile *after,
		 const struct bp_diff *d, double limit, struct bp_gate *g)
{
	double r0, r1;
	uint32_t i;
	int k, err;

	memset(g, 0, sizeof(*g));
	g->limit = limit;
	err = gate_side(before, d, 0, &g->side[0]);
	if (!err)
		err = gate_side(after, d, 1, &g->side[1]);
	if (err)
		return err;
	g->wall_change = change(g->side[0].wall_s, g->side[1].wall_s);
	g->ready_change = change(g->side[0].ready_s, g->side[1].ready_s);
	g->cpu_change = change(g->side[0].cpu_s, g->side[1].cpu_s);
	g->wall_slower = g->ready_change > limit;
	g->cpu_slower = g->cpu_change > limit;
	g->failed = g->wall_slower || g->cpu_slower;

	/* per run, so that 5 runs against 3 compare */
	r0 = g->side[0].runs ? g->side[0].runs : 1;
	r1 = g->side[1].runs ? g->side[1].runs : 1;
	for (i = 0; i < d->nr_fns; i++) {
		struct bp_gate_grew x = { .fn = &d->fns[i], .before_s = d->fns[i].s[0] / r0,
					  .after_s = d->fns[i].s[1] / r1 };
		uint32_t j;

		if (x.after_s <= x.before_s)
			continue;
		/* keep the BP_GATE_TOP largest, sorted */
		for (j = g->nr_fns; j > 0 && cmp_grew(&x, &g->fns[j - 1]) < 0; j--)
			if (j < BP_GATE_TOP)
				g->fns[j] = g->fns[j - 1];
		if (j < BP_GATE_TOP) {
			g->fns[j] = x;
			if (g->nr_fns < BP_GATE_TOP)
				g->nr_fns++;
		}
	}
	for (k = 0; k < BP_KIND__MAX; k++) {
		double b = d->time_s[0][k] / r0, a = d->time_s[1][k] / r1;

		if (a > b)
			g->kinds[g->nr_kinds++] = (struct bp_gate_grew){ .kind = k, .before_s = b,
									  .after_s = a };
	}
	qsort(g->kinds, g->nr_kinds, sizeof(g->kinds[0]), cmp_grew);
	/* sleep last: waiting for work, timers or children grows with any longer run */
	for (i = 0; i + 1 < g->nr_kinds; i++) {
		if (g->kinds[i].kind == BP_KIND_SLEEP) {
			struct bp_gate_grew sl = g->kinds[i];

			memmove(&g->kinds[i], &g->kinds[i + 1],
				(g->nr_kinds - i - 1) * sizeof(g->kinds[0]));
			g->kinds[g->nr_kinds - 1] = sl;
			break;
		}
	}
	return 0;
}

static void write_gate_side(struct bp_json_w *w, const char *key, const struct bp_gate_side *s)
{
	bp_json_w_key(w, key);
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "runs", s->runs);
	bp_json_w_kv_double(w, "wall_s", s->wall_s);
	bp_json_w_kv_double(w, "wall_excl_runqueue_s", s->ready_s);
	bp_json_w_kv_double(w, "cpu_s", s->cpu_s);
	bp_json_w_kv_double(w, "wall_spread", s->wall_spread);
	bp_json_w_kv_bool(w, "noisy", s->noisy);
	bp_json_w_end_object(w);
}

static void kv_change(struct bp_json_w *w, const char *key, double v)
{
	bp_json_w_key(w, key);
	if (isfinite(v))
		bp_json_w_double_val(w, v);
	else
		bp_json_w_null_val(w);
}

static void write_gate(struct bp_json_w *w, const struct bp_gate *g)
{
	uint32_t i;

	bp_json_w_key(w, "gate");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "fail_above", g->limit);
	bp_json_w_kv_bool(w, "failed", g->failed);
	write_gate_side(w, "before", &g->side[0]);
	write_gate_side(w, "after", &g->side[1]);
	kv_change(w, "wall_change", g->wall_change);
	kv_change(w, "wall_excl_runqueue_change", g->ready_change);
	kv_change(w, "cpu_change", g->cpu_change);
	bp_json_w_key(w, "grew");
	bp_json_w_begin_array(w);
	for (i = 0; i < g->nr_fns; i++) {
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "function", g->fns[i].fn->label);
		bp_json_w_kv_string(w, "module", g->fns[i].fn->module);
		bp_json_w_kv_double(w, "before_s", g->fns[i].before_s);
		bp_json_w_kv_double(w, "after_s", g->fns[i].after_s);
		bp_json_w_end_object(w);
	}
	for (i = 0; i < g->nr_kinds; i++) {
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "class", bp_diff_kind_label(g->kinds[i].kind));
		bp_json_w_kv_double(w, "before_s", g->kinds[i].before_s);
		bp_json_w_kv_double(w, "after_s", g->kinds[i].after_s);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_end_object(w);
}

int bp_diff_json(const struct bp_diff *d, const char *before, const char *after, uint32_t top,
		 struct bp_buf *out)
{
	return bp_diff_json_gate(d, NULL, before, after, top, out);
}

int bp_diff_json_gate(const struct bp_diff *d, const struct bp_gate *g, const char *before,
		      const char *after, uint32_t top, struct bp_buf *out)
{
	static const char *const names[BP_KIND__MAX] = {
		"on_cpu", "runqueue", "io", "lock", "sleep", "other", "net", "pipe",
	};
	struct bp_json_w w;
	uint32_t i;
	int k;

	bp_json_w_init(&w, out, true);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_string(&w, "before", before);
	bp_json_w_kv_string(&w, "after", after);
	bp_json_w_kv_uint64(&w, "before_samples", d->total[0]);
	bp_json_w_kv_uint64(&w, "after_samples", d->total[1]);
	bp_json_w_key(&w, "time_s");
	bp_json_w_begin_object(&w);
	for (k = 0; k < BP_KIND__MAX; k++) {
		bp_json_w_key(&w, names[k]);
		bp_json_w_begin_object(&w);
		bp_json_w_kv_double(&w, "before", d->time_s[0][k]);
		bp_json_w_kv_double(&w, "after", d->time_s[1][k]);
		bp_json_w_end_object(&w);
	}
	bp_json_w_end_object(&w);
	bp_json_w_key(&w, "functions");
	bp_json_w_begin_array(&w);
	for (i = 0; i < d->nr_fns && i < top; i++) {
		const struct bp_diff_fn *x = &d->fns[i];

		bp_json_w_begin_object(&w);
		bp_json_w_kv_string(&w, "function", x->label);
		bp_json_w_kv_string(&w, "module", x->module);
		bp_json_w_kv_bool(&w, "kernel", x->kernel);
		bp_json_w_kv_double(&w, "before", bp_diff_share(d, x, 0));
		bp_json_w_kv_double(&w, "after", bp_diff_share(d, x, 1));
		bp_json_w_kv_double(&w, "change", bp_diff_share(d, x, 1) - bp_diff_share(d, x, 0));
		bp_json_w_end_object(&w);
	}
	bp_json_w_end_array(&w);
	if (g)
		write_gate(&w, g);
	bp_json_w_end_object(&w);
	return bp_json_w_finish(&w) ? -ENOMEM : bp_buf_putc(out, '\n');
}
