// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
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
		const uint32_t *frames;
		uint32_t idx;
		uint64_t h;

		if (s->kind < BP_KIND__MAX)
			d->time_s[side][s->kind] += s->kind == BP_KIND_ONCPU ?
				(!p->pmu && s->ns ? s->ns / 1e9 : p->hz ? (double)s->count / p->hz : 0) :
				s->ns / 1e9;
		if (s->kind != BP_KIND_ONCPU || !s->count)
			continue;
		frames = bp_profile__stack_frames(p, s->stack, &nr);
		if (!nr)
			continue;
		d->total[side] += s->count;
		fr = &p->frames[frames[nr - 1]];
		bp_frame_label(fr, false, label, sizeof(label));
		if (asprintf(&key, "%d|%s|%s", fr->kernel, fr->module, label) < 0)
			return -ENOMEM;
		h = bp_hash_bytes(key, strlen(key), 7);
		if (!bp_htab_find(&d->h, h, fn_eq, d, key, &idx)) {
			d->fns[idx].n[side] += s->count;
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

int bp_diff_json(const struct bp_diff *d, const char *before, const char *after, uint32_t top,
		 struct bp_buf *out)
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
	bp_json_w_end_object(&w);
	return bp_json_w_finish(&w) ? -ENOMEM : bp_buf_putc(out, '\n');
}
