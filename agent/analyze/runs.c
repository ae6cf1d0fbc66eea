// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/runs.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int bp_spread_of(const double *v, uint32_t n, struct bp_spread *out)
{
	double small[16], *s = n <= 16 ? small : malloc(n * sizeof(*s));

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return 0;
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	out->spread = n > 1 && out->median > 0 ? (out->max - out->min) / out->median : 0;
	if (s != small)
		free(s);
	return 0;
}

int bp_runs_summarize(const struct bp_profile *p, struct bp_runs_summary *out)
{
	double *v;
	uint32_t i, n = p->nr_runs;

	memset(out, 0, sizeof(*out));
	if (!n)
		return -ENOENT;
	v = malloc(3 * n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct bp_run *r = &p->runs[i];

		v[i] = r->wall_s;
		v[n + i] = r->cpu_s;
		v[2 * n + i] = r->wall_s > r->runqueue_s ? r->wall_s - r->runqueue_s : 0;
		out->failed += r->status != 0;
	}
	out->n = n;
	if (bp_spread_of(v, n, &out->wall) || bp_spread_of(v + n, n, &out->cpu) ||
	    bp_spread_of(v + 2 * n, n, &out->ready)) {
		free(v);
		return -ENOMEM;
	}
	out->noisy = out->wall.spread > BP_RUNS_NOISY;
	free(v);
	return 0;
}

/* the run whose tree holds pid: follow ppid up, at most depth steps; -1 none */
static int run_of(const struct bp_profile *p, uint32_t pid)
{
	uint32_t depth, i;

	for (depth = 0; pid && depth < 64; depth++) {
		const struct bp_proc *pr;

		for (i = 0; i < p->nr_runs; i++)
			if (p->runs[i].pid == pid)
				return i;
		pr = bp_profile__proc((struct bp_profile *)p, pid, false);
		if (!pr || pr->ppid == pid)
			return -1;
		pid = pr->ppid;
	}
	return -1;
}

void bp_runs_attribute(struct bp_profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_runs; i++)
		p->runs[i].runqueue_s = 0;
	for (i = 0; i < p->nr_procs; i++) {
		const struct bp_proc *pr = p->procs[i];
		int r;

		if (!pr->have_timeline || !pr->tl_ns[BP_TS_RUNQUEUE])
			continue;
		r = run_of(p, pr->pid);
		if (r >= 0)
			p->runs[r].runqueue_s += pr->tl_ns[BP_TS_RUNQUEUE] / 1e9;
	}
	for (i = 0; i < p->nr_runs; i++)
		if (p->runs[i].runqueue_s > p->runs[i].wall_s)
			p->runs[i].runqueue_s = p->runs[i].wall_s;
}
