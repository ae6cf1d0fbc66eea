// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

double bp_oncpu_seconds(const struct bp_profile *p, uint64_t samples, uint64_t ns)
{
	/* cpu-clock periods are ns of CPU time; for cycles only the count is time-like */
	if (!p->pmu && ns)
		return ns / 1e9;
	return p->hz > 0 ? (double)samples / p->hz : 0;
}

static int cmp_hot_self(const void *a, const void *b)
{
	const struct bp_hotspot *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int cmp_hot_total(const void *a, const void *b)
{
	const struct bp_hotspot *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct bp_proc_summary *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->proc->pid < y->proc->pid ? -1 : x->proc->pid > y->proc->pid;
}

/* on-CPU sample indices grouped by process */
static int cmp_sample_idx(const void *a, const void *b, void *ctx)
{
	const struct bp_sample *s = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (s[x].pid != s[y].pid)
		return s[x].pid < s[y].pid ? -1 : 1;
	return x < y ? -1 : x > y;
}

struct acc {
	uint64_t *self, *total;
	uint32_t *mark;		/* sample stamp: count a function once per stack */
	uint32_t *touched;
	uint32_t nr_touched;
	uint32_t *tids;
	uint32_t nr_tids, cap_tids;
};

static int add_tid(struct acc *a, uint32_t tid)
{
	uint32_t i;

	for (i = 0; i < a->nr_tids; i++)
		if (a->tids[i] == tid)
			return 0;
	if (a->nr_tids == a->cap_tids) {
		uint32_t ncap = a->cap_tids ? a->cap_tids * 2 : 16;
		uint32_t *t = realloc(a->tids, ncap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		a->tids = t;
		a->cap_tids = ncap;
	}
	a->tids[a->nr_tids++] = tid;
	return 0;
}

static int summarize_proc(const struct bp_profile *p, const uint32_t *idx, uint32_t n,
			  uint32_t max_hot, struct acc *a, uint32_t *stamp,
			  struct bp_proc_summary *ps)
{
	uint64_t samples = 0, ns = 0;
	struct bp_hotspot *all;
	uint32_t i, j, nr;

	a->nr_touched = 0;
	a->nr_tids = 0;
	for (i = 0; i < n; i++) {
		const struct bp_sample *s = &p->samples[idx[i]];
		const uint32_t *fr = bp_profile__stack_frames(p, s->stack, &nr);

		samples += s->count;
		ns += s->ns;
		if (add_tid(a, s->tid))
			return -ENOMEM;
		(*stamp)++;
		for (j = 0; j < nr; j++) {
			uint32_t f = fr[j];

			if (!a->self[f] && !a->total[f])
				a->touched[a->nr_touched++] = f;
			if (a->mark[f] != *stamp) {
				a->mark[f] = *stamp;
				a->total[f] += s->count;
			}
		}
		if (nr)
			a->self[fr[nr - 1]] += s->count;
	}
	ps->proc = bp_profile__proc((struct bp_profile *)p, p->samples[idx[0]].pid, false);
	ps->samples = samples;
	ps->on_cpu_s = bp_oncpu_seconds(p, samples, ns);
	ps->wall_s = ps->proc ? bp_profile__proc_wall_ns(p, ps->proc) / 1e9 : 0;
	ps->threads = a->nr_tids;

	all = calloc(a->nr_touched ? a->nr_touched : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < a->nr_touched; i++) {
		uint32_t f = a->touched[i];

		all[i].frame = f;
		all[i].self = a->self[f];
		all[i].total = a->total[f];
		all[i].self_frac = samples ? (double)a->self[f] / samples : 0;
		all[i].total_frac = samples ? (double)a->total[f] / samples : 0;
		a->self[f] = a->total[f] = 0;
	}
	nr = a->nr_touched < max_hot ? a->nr_touched : max_hot;
	ps->hot = calloc(nr ? nr : 1, sizeof(*ps->hot));
	ps->incl = calloc(nr ? nr : 1, sizeof(*ps->incl));
	if (!ps->hot || !ps->incl) {
		free(all);
		return -ENOMEM;
	}
	qsort(all, a->nr_touched, sizeof(*all), cmp_hot_self);
	for (i = 0; i < nr && all[i].self; i++)
		ps->hot[i] = all[i];
	ps->nr_hot = i;
	qsort(all, a->nr_touched, sizeof(*all), cmp_hot_total);
	memcpy(ps->incl, all, nr * sizeof(*all));
	ps->nr_incl = nr;
	free(all);
	return 0;
}

int bp_summarize(const struct bp_profile *p, uint32_t max_hot, struct bp_summary *out)
{
	const struct bp_stats *st = &p->stats;
	uint32_t *idx = NULL, n = 0, i, start, stamp = 0;
	struct acc a = {};
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->duration_s = p->end_ns > p->start_ns ? (p->end_ns - p->start_ns) / 1e9 : 0;
	out->samples = st->v[BP_STAT_SAMPLES];
	out->idle = st->v[BP_STAT_IDLE];
	out->counted = st->v[BP_STAT_COUNTED];
	out->lost_samples = st->v[BP_STAT_MAP_FULL];
	out->lost_stacks = st->v[BP_STAT_KSTACK_ERR] + st->v[BP_STAT_USTACK_ERR] +
			   st->v[BP_STAT_STACK_FULL];
	out->busy_frac = out->samples ? 1.0 - (double)out->idle / out->samples : 0;

	idx = malloc((p->nr_samples ? p->nr_samples : 1) * sizeof(*idx));
	a.self = calloc(p->nr_frames + 1, sizeof(*a.self));
	a.total = calloc(p->nr_frames + 1, sizeof(*a.total));
	a.mark = calloc(p->nr_frames + 1, sizeof(*a.mark));
	a.touched = calloc(p->nr_frames + 1, sizeof(*a.touched));
	out->procs = calloc(p->nr_procs + 1, sizeof(*out->procs));
	if (!idx || !a.self || !a.total || !a.mark || !a.touched || !out->procs)
		goto out;
	for (i = 0; i < p->nr_samples; i++)
		if (p->samples[i].kind == BP_KIND_ONCPU && p->samples[i].count)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_sample_idx, p->samples);
	for (start = 0; start < n;) {
		uint32_t end = start;

		while (end < n && p->samples[idx[end]].pid == p->samples[idx[start]].pid)
			end++;
		err = summarize_proc(p, idx + start, end - start, max_hot, &a, &stamp,
				     &out->procs[out->nr_procs]);
		out->nr_procs++;
		if (err)
			goto out;
		start = end;
	}
	qsort(out->procs, out->nr_procs, sizeof(*out->procs), cmp_proc);
	err = 0;
out:
	free(idx);
	free(a.self);
	free(a.total);
	free(a.mark);
	free(a.touched);
	free(a.tids);
	if (err)
		bp_summary_free(out);
	return err;
}

void bp_summary_free(struct bp_summary *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_procs; i++) {
		free(s->procs[i].hot);
		free(s->procs[i].incl);
	}
	free(s->procs);
	memset(s, 0, sizeof(*s));
}
