// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/groups.h"
#include "analyze/verdict.h"
#include "util/htab.h"

static const char *const by_names[] = {
	[BP_GROUP_NONE] = "",
	[BP_GROUP_USER] = "user",
	[BP_GROUP_CGROUP] = "cgroup",
	[BP_GROUP_UNIT] = "unit",
};

const char *bp_group_by_name(enum bp_group_by by)
{
	return by <= BP_GROUP_UNIT ? by_names[by] : "";
}

int bp_group_by_parse(const char *s, enum bp_group_by *by)
{
	int i;

	for (i = BP_GROUP_USER; i <= BP_GROUP_UNIT; i++) {
		if (!strcmp(s, by_names[i])) {
			*by = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *bp_group_name(const struct bp_proc *proc, enum bp_group_by by, char *buf,
			  size_t len)
{
	const char *n = NULL;

	if (!proc->have_ids) {
		snprintf(buf, len, "?");
		return buf;
	}
	switch (by) {
	case BP_GROUP_USER:
		if (!proc->user) {
			snprintf(buf, len, "%u", proc->uid);
			return buf;
		}
		n = proc->user;
		break;
	case BP_GROUP_CGROUP:
		n = proc->cgroup;
		break;
	case BP_GROUP_UNIT:
		n = proc->unit ? proc->unit : proc->cgroup;
		break;
	default:
		break;
	}
	snprintf(buf, len, "%s", n ? n : "?");
	return buf;
}

/* the profile is not changed by a lookup that creates nothing */
static const struct bp_cgroup *row(const struct bp_profile *p, uint32_t tree, const char *path)
{
	return path ? bp_profile__cgroup((struct bp_profile *)p, tree, path, false) : NULL;
}

const struct bp_cgroup *bp_proc_cpu_cgroup(const struct bp_profile *p, const struct bp_proc *proc)
{
	return proc->have_ids ? row(p, proc->cg_cpu_tree, proc->cg_cpu) : NULL;
}

const struct bp_cgroup *bp_proc_mem_cgroup(const struct bp_profile *p, const struct bp_proc *proc)
{
	return proc->have_ids ? row(p, proc->cg_memory_tree, proc->cg_memory) : NULL;
}

const struct bp_cgroup *bp_proc_psi_cgroup(const struct bp_profile *p, const struct bp_proc *proc)
{
	return proc->have_ids ? row(p, BP_CGROUP_V2, proc->cg_v2) : NULL;
}

/* --------------------------------------------------------- throttling */

struct quota {
	const char *at;		/* interned: pointers compare */
	double throttled_s;	/* its cpu.stat over the window */
	double rq_s;		/* run-queue time of the processes under it */
};

static bool quota_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct quota *)ctx)[idx].at == key;
}

static uint64_t ptr_hash(const void *p)
{
	return bp_hash_u64((uint64_t)(uintptr_t)p);
}

void bp_throttle_attribute(const struct bp_profile *p, struct bp_summary *s)
{
	struct quota *q = NULL;
	struct bp_htab h = {};
	uint32_t i, nq = 0, idx;

	for (i = 0; i < s->nr_procs; i++)
		s->procs[i].throttled_s = 0;
	q = calloc(s->nr_procs + 1, sizeof(*q));
	if (!q)
		return;
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];
		const struct bp_cgroup *c = ps->proc ? bp_proc_cpu_cgroup(p, ps->proc) : NULL;
		double thr;

		if (!c || !c->cpu_valid || !c->quota_at || !c->throttled_ns)
			continue;
		thr = c->throttled_ns / 1e9;
		if (bp_htab_find(&h, ptr_hash(c->quota_at), quota_eq, q, c->quota_at, &idx)) {
			if (bp_htab_insert(&h, ptr_hash(c->quota_at), nq))
				goto out;
			idx = nq++;
			q[idx].at = c->quota_at;
		}
		/* rows under one quota all read its counters, from baselines a little apart */
		if (thr > q[idx].throttled_s)
			q[idx].throttled_s = thr;
		q[idx].rq_s += ps->off_s[BP_KIND_RUNQUEUE];
	}
	for (i = 0; i < s->nr_procs; i++) {
		struct bp_proc_summary *ps = &s->procs[i];
		const struct bp_cgroup *c = ps->proc ? bp_proc_cpu_cgroup(p, ps->proc) : NULL;
		double f;

		if (!c || !c->quota_at || !c->throttled_ns ||
		    bp_htab_find(&h, ptr_hash(c->quota_at), quota_eq, q, c->quota_at, &idx) ||
		    q[idx].rq_s <= 0)
			continue;
		/*
		 * A throttled run queue holds its runnable tasks for the whole
		 * throttled time, so that much of their run-queue wait is the
		 * quota's; the rest is contention (docs/groups.md).
		 */
		f = q[idx].throttled_s / q[idx].rq_s;
		ps->throttled_s = ps->off_s[BP_KIND_RUNQUEUE] * (f < 1 ? f : 1);
	}
out:
	bp_htab_free(&h);
	free(q);
}

void bp_cgroup_evidence(const struct bp_profile *p, const struct bp_cgroup *cpu,
			const struct bp_cgroup *mem, const struct bp_cgroup *psi,
			struct bp_evidence *e)
{
	int k;

	(void)p;
	if (cpu && cpu->cpu_valid && cpu->quota_us >= 0 && cpu->period_us) {
		e->quota_valid = true;
		e->quota_v1 = cpu->tree == BP_CGROUP_V1_CPU;
		e->quota_at = cpu->quota_at;
		e->quota_us = cpu->quota_us;
		e->period_us = cpu->period_us;
		e->throttled_s = cpu->throttled_ns / 1e9;
		/* of its own wall time, when it lived in the window for less than the cgroup */
		e->throttle_window_s = cpu->watched_ns / 1e9;
		if (e->wall_s > 0 && e->wall_s < e->throttle_window_s)
			e->throttle_window_s = e->wall_s;
		e->nr_periods = cpu->nr_periods;
		e->nr_throttled = cpu->nr_throttled;
	}
	if (mem && mem->mem_valid && mem->mem_at) {
		e->mem_limit_valid = true;
		e->mem_v1 = mem->tree == BP_CGROUP_V1_MEMORY;
		e->mem_at = mem->mem_at;
		e->mem_max = mem->mem_max;
		e->mem_high = mem->mem_high;
		e->mem_events = mem->mem_high_events + mem->mem_max_events;
		e->mem_oom_kill = mem->mem_oom_kill;
	}
	if (psi && psi->psi_valid && psi->watched_ns) {
		double w = psi->watched_ns / 1e3;

		e->psi_valid = true;
		for (k = 0; k < BP_PSI_RES; k++) {
			e->psi_some[k] = psi->psi_some_us[k] / w;
			e->psi_full[k] = psi->psi_full_us[k] / w;
		}
	}
}

/* ------------------------------------------------------------- groups */

struct build {
	struct bp_groups *out;
	uint32_t cap;
	struct bp_htab h;
	/* per group: its members' summaries (indices into s->procs) */
	uint32_t **members;
	uint32_t *nr_members, *cap_members;
};

static bool group_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const struct bp_groups *)ctx)->g[idx].name, key);
}

static int group_of(struct build *b, const char *name, uint32_t *idx)
{
	struct bp_groups *o = b->out;
	uint64_t h = bp_hash_bytes(name, strlen(name), 21);

	if (!bp_htab_find(&b->h, h, group_eq, o, name, idx))
		return 0;
	if (o->nr == b->cap) {
		uint32_t ncap = b->cap ? b->cap * 2 : 16;
		struct bp_group *ng = reallocarray(o->g, ncap, sizeof(*ng));
		uint32_t **nm;
		uint32_t *nn, *nc;

		if (!ng)
			return -ENOMEM;
		o->g = ng;
		nm = reallocarray(b->members, ncap, sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		b->members = nm;
		nn = reallocarray(b->nr_members, ncap, sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		b->nr_members = nn;
		nc = reallocarray(b->cap_members, ncap, sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		b->cap_members = nc;
		b->cap = ncap;
	}
	memset(&o->g[o->nr], 0, sizeof(o->g[0]));
	o->g[o->nr].name = strdup(name);
	b->members[o->nr] = NULL;
	b->nr_members[o->nr] = b->cap_members[o->nr] = 0;
	if (!o->g[o->nr].name || bp_htab_insert(&b->h, h, o->nr)) {
		free(o->g[o->nr].name);
		return -ENOMEM;
	}
	*idx = o->nr++;
	return 0;
}

static int add_member(struct build *b, uint32_t g, uint32_t i)
{
	if (b->nr_members[g] == b->cap_members[g]) {
		uint32_t ncap = b->cap_members[g] ? b->cap_members[g] * 2 : 4;
		uint32_t *n = reallocarray(b->members[g], ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		b->members[g] = n;
		b->cap_members[g] = ncap;
	}
	b->members[g][b->nr_members[g]++] = i;
	return 0;
}

/* block IO per pid, summed once: groups ask for many */
struct pid_io {
	uint32_t pid;
	uint64_t ops, bytes;
};

static bool pid_io_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct pid_io *)ctx)[idx].pid == *(const uint32_t *)key;
}

struct io_index {
	struct pid_io *v;
	uint32_t n;
	struct bp_htab h;
};

static int io_index(const struct bp_profile *p, struct io_index *x)
{
	uint32_t i, idx;

	memset(x, 0, sizeof(*x));
	x->v = calloc(p->nr_io_rows + 1, sizeof(*x->v));
	if (!x->v)
		return -ENOMEM;
	for (i = 0; i < p->nr_io_rows; i++) {
		const struct bp_io_row *r = &p->io_rows[i];

		if (r->kthread)
			continue;
		if (bp_htab_find(&x->h, bp_hash_u64(r->pid), pid_io_eq, x->v, &r->pid, &idx)) {
			if (bp_htab_insert(&x->h, bp_hash_u64(r->pid), x->n))
				return -ENOMEM;
			idx = x->n++;
			x->v[idx].pid = r->pid;
		}
		x->v[idx].ops += r->st.ops;
		x->v[idx].bytes += r->st.bytes;
	}
	return 0;
}

static void io_index_free(struct io_index *x)
{
	bp_htab_free(&x->h);
	free(x->v);
}

/* the group's pids, for the IO evidence */
struct pidset {
	const struct bp_summary *s;
	const uint32_t *members;
	uint32_t n;
};

static bool in_group(uint32_t pid, const void *ctx)
{
	const struct pidset *ps = ctx;
	uint32_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->s->procs[ps->members[i]].proc->pid == pid)
			return true;
	return false;
}

static void group_verdict(const struct bp_profile *p, const struct bp_summary *s,
			  struct bp_group *g, const uint32_t *members, uint32_t n)
{
	const struct bp_proc_summary *top = n ? g->top[0] : NULL;
	struct pidset set = { s, members, n };
	double io = 0, fault = 0, kern = 0, tl_total = 0, busy;
	bool timeline = n > 0;
	struct bp_evidence e;
	char hot[256];
	uint32_t i;
	int k;

	memset(&e, 0, sizeof(e));
	e.who = g->name;
	e.ncpus = p->ncpus;
	e.machine_busy = s->busy_frac;
	for (i = 0; i < n; i++) {
		const struct bp_proc_summary *ps = &s->procs[members[i]];

		e.on_s += ps->on_cpu_s;
		e.rq_s += ps->off_s[BP_KIND_RUNQUEUE];
		e.io_s += ps->off_s[BP_KIND_IO];
		e.lock_s += ps->off_s[BP_KIND_LOCK];
		e.other_s += ps->off_s[BP_KIND_OTHER];
		e.sleep_s += ps->off_s[BP_KIND_SLEEP];
		e.throttled_rq_s += ps->throttled_s;
		e.threads += ps->threads;
		e.samples += ps->samples;
		io += ps->frac_io_path * ps->samples;
		fault += ps->frac_fault * ps->samples;
		kern += ps->frac_kernel * ps->samples;
		if (!ps->have_timeline)
			timeline = false;
		for (k = 0; k < BP_TS__MAX; k++) {
			e.tl_s[k] += ps->tl_s[k];
			tl_total += ps->tl_s[k];
		}
		e.tl_idle_s += ps->tl_idle_s;
		tl_total += ps->tl_idle_s;
	}
	e.wall_s = g->wall_s;
	/*
	 * The members' timelines summed, scaled to the group's wall time: the
	 * shares are of the members' time, so one member alone reads as itself.
	 */
	e.have_timeline = timeline && tl_total > 0;
	if (e.have_timeline) {
		for (k = 0; k < BP_TS__MAX; k++)
			e.tl_s[k] *= g->wall_s / tl_total;
		e.tl_idle_s *= g->wall_s / tl_total;
	}
	if (e.samples) {
		e.frac_io_path = io / e.samples;
		e.frac_fault = fault / e.samples;
		e.frac_kernel = kern / e.samples;
	}
	busy = s->busy_frac * p->ncpus * s->duration_s - e.on_s;
	e.others_cpu_s = busy > 0 ? busy : 0;
	if (!e.threads)
		e.threads = 1;
	bp_io_evidence(p, in_group, &set, &e);
	if (top && top->proc) {
		bp_mem_evidence(p, top->proc, &e);
		if (top->nr_funcs && top->on_cpu_s > 0) {
			bp_func_label(&p->frames[top->funcs[0].frame], hot, sizeof(hot));
			e.hot_name = hot;
			e.hot_frac = top->funcs[0].self_frac;
			/* the busiest member's own code, not the kernel or libc it calls */
			bp_own_evidence(p, top, &e, hot, sizeof(hot));
			e.hot_frac *= top->on_cpu_s / (e.on_s > 0 ? e.on_s : 1);
		}
	}
	bp_cgroup_evidence(p, g->cpu, g->mem, g->psi, &e);
	bp_classify(&e, NULL, &g->verdict);
	g->have_verdict = true;
}

/* the cgroup rows that tell most about the group */
static void group_cgroups(const struct bp_profile *p, const struct bp_summary *s,
			  struct bp_group *g, const uint32_t *members, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct bp_proc *proc = s->procs[members[i]].proc;
		const struct bp_cgroup *c = bp_proc_cpu_cgroup(p, proc);
		const struct bp_cgroup *m = bp_proc_mem_cgroup(p, proc);

		if (c && c->cpu_valid &&
		    (!g->cpu || c->throttled_ns > g->cpu->throttled_ns ||
		     (g->cpu->quota_us < 0 && c->quota_us >= 0)))
			g->cpu = c;
		if (m && m->mem_valid &&
		    (!g->mem || m->mem_high_events + m->mem_max_events >
					g->mem->mem_high_events + g->mem->mem_max_events ||
		     (!g->mem->mem_at && m->mem_at)))
			g->mem = m;
	}
	/* members are in activity order: the first with a v2 cgroup */
	for (i = 0; i < n && !g->psi; i++)
		g->psi = bp_proc_psi_cgroup(p, s->procs[members[i]].proc);
}

static int cmp_groups(const void *a, const void *b)
{
	const struct bp_group *x = a, *y = b;

	if (x->activity != y->activity)
		return x->activity < y->activity ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* member indices by activity, busiest first */
static int cmp_members(const void *a, const void *b, void *ctx)
{
	const struct bp_summary *s = ctx;
	const struct bp_proc_summary *x = &s->procs[*(const uint32_t *)a];
	const struct bp_proc_summary *y = &s->procs[*(const uint32_t *)b];
	double ax = bp_proc_activity(x), ay = bp_proc_activity(y);

	if (ax != ay)
		return ax < ay ? 1 : -1;
	return x->proc->pid < y->proc->pid ? -1 : x->proc->pid > y->proc->pid;
}

int bp_groups_build(const struct bp_profile *p, const struct bp_summary *s, enum bp_group_by by,
		    struct bp_groups *out)
{
	struct build b = { .out = out };
	struct io_index io;
	char name[1100];
	uint32_t i, j, idx;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->by = by;
	if (io_index(p, &io))
		goto out;
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc *proc = s->procs[i].proc;

		if (!proc)
			continue;
		bp_group_name(proc, by, name, sizeof(name));
		if (group_of(&b, name, &idx) || add_member(&b, idx, i))
			goto out;
	}
	for (i = 0; i < out->nr; i++) {
		struct bp_group *g = &out->g[i];
		uint64_t start = UINT64_MAX, end = 0;

		qsort_r(b.members[i], b.nr_members[i], sizeof(uint32_t), cmp_members, (void *)s);
		for (j = 0; j < b.nr_members[i]; j++) {
			const struct bp_proc_summary *ps = &s->procs[b.members[i][j]];
			const struct bp_proc *proc = ps->proc;
			uint64_t ps_start = proc->start_ns > p->start_ns ? proc->start_ns : p->start_ns;
			uint64_t ps_end = proc->end_ns && proc->end_ns < p->end_ns ? proc->end_ns :
										    p->end_ns;
			int k;

			g->nr_procs++;
			g->threads += ps->threads;
			g->samples += ps->samples;
			g->on_cpu_s += ps->on_cpu_s;
			for (k = 0; k < BP_KIND__MAX; k++)
				g->off_s[k] += ps->off_s[k];
			g->throttled_s += ps->throttled_s;
			g->activity += bp_proc_activity(ps);
			if (!bp_htab_find(&io.h, bp_hash_u64(proc->pid), pid_io_eq, io.v, &proc->pid,
					  &idx)) {
				g->io_ops += io.v[idx].ops;
				g->io_bytes += io.v[idx].bytes;
			}
			if (ps_start < start)
				start = ps_start;
			if (ps_end > end)
				end = ps_end;
			if (g->nr_top < BP_GROUP_TOP_PROCS)
				g->top[g->nr_top++] = ps;
		}
		g->wall_s = end > start ? (end - start) / 1e9 : 0;
		group_cgroups(p, s, g, b.members[i], b.nr_members[i]);
		group_verdict(p, s, g, b.members[i], b.nr_members[i]);
	}
	qsort(out->g, out->nr, sizeof(*out->g), cmp_groups);
	err = 0;
out:
	io_index_free(&io);
	bp_htab_free(&b.h);
	for (i = 0; i < out->nr; i++)
		free(b.members ? b.members[i] : NULL);
	free(b.members);
	free(b.nr_members);
	free(b.cap_members);
	if (err)
		bp_groups_free(out);
	return err;
}

void bp_groups_free(struct bp_groups *g)
{
	uint32_t i;

	for (i = 0; i < g->nr; i++) {
		free(g->g[i].name);
		bp_verdict_free(&g->g[i].verdict);
	}
	free(g->g);
	memset(g, 0, sizeof(*g));
}
