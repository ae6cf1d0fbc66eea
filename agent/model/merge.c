// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/merge.h"
#include "model/waits.h"

struct bp_profile *bp_profile__new_like(const struct bp_profile *src, uint64_t start_ns)
{
	struct bp_profile *p = bp_profile__new();

	if (!p)
		return NULL;
	p->start_ns = p->end_ns = start_ns;
	p->start_unix_ns = src->start_unix_ns + (int64_t)(start_ns - src->start_ns);
	p->hz = src->hz;
	p->ncpus = src->ncpus;
	p->pmu = src->pmu;
	/* interned: a window outlives the slice it was made like */
	p->event = bp_profile__intern(p, src->event);
	p->system_wide = src->system_wide;
	p->offcpu_enabled = src->offcpu_enabled;
	p->io_enabled = src->io_enabled;
	p->llc_bytes = src->llc_bytes;
	p->llc_source = bp_profile__intern(p, src->llc_source);
	p->membw_valid = src->membw_valid;
	p->membw_1_gbs = src->membw_1_gbs;
	p->membw_n_gbs = src->membw_n_gbs;
	p->membw_threads = src->membw_threads;
	p->membw_source = bp_profile__intern(p, src->membw_source);
	p->membw_cache_bytes = src->membw_cache_bytes;
	p->membw_window = src->membw_window;
	p->membw_window_err = src->membw_window_err;
	p->membw_window_floor = src->membw_window_floor;
	p->membw_window_stream_gbs = src->membw_window_stream_gbs;
	p->membw_window_seen_gbs = src->membw_window_seen_gbs;
	p->membw_window_visible = src->membw_window_visible;
	if ((src->event && !p->event) || (src->llc_source && !p->llc_source) ||
	    (src->membw_source && !p->membw_source)) {
		bp_profile__free(p);
		return NULL;
	}
	return p;
}

static void add_io_stats(struct bp_io_stats *d, const struct bp_io_stats *s)
{
	int i;

	d->ops += s->ops;
	d->bytes += s->bytes;
	d->lat_ns += s->lat_ns;
	for (i = 0; i < BP_HIST_SLOTS; i++)
		d->hist[i] += s->hist[i];
}

static int merge_thread(struct bp_proc *dp, const struct bp_thread *st)
{
	struct bp_thread *t = bp_proc__thread(dp, st->tid, st->comm);
	int i;

	if (!t)
		return -ENOMEM;
	if (st->comm[0])
		memcpy(t->comm, st->comm, sizeof(t->comm));
	/* from the off-CPU rows: known also without the thread's totals */
	t->gil_ns += st->gil_ns;
	if (!st->have_totals)
		return 0;
	if (!t->have_totals || (st->start_ns && st->start_ns < t->start_ns))
		t->start_ns = st->start_ns;
	t->have_totals = true;
	t->exited = t->exited || st->exited;
	if (st->end_ns)
		t->end_ns = st->end_ns;
	t->state = st->state;
	t->oncpu_ns += st->oncpu_ns;
	t->steal_ns += st->steal_ns;
	t->switches += st->switches;
	t->wakeups += st->wakeups;
	t->wake_lat_ns += st->wake_lat_ns;
	if (st->wake_lat_max > t->wake_lat_max)
		t->wake_lat_max = st->wake_lat_max;
	for (i = 0; i < BP_HIST_SLOTS; i++)
		t->wake_hist[i] += st->wake_hist[i];
	t->rchar += st->rchar;
	t->wchar += st->wchar;
	t->syscr += st->syscr;
	t->syscw += st->syscw;
	return 0;
}

/* whose and where: the newer slice knows better */
static int merge_ids(struct bp_profile *dst, struct bp_proc *dp, const struct bp_proc *sp)
{
	const char *const src[] = { sp->user, sp->cgroup, sp->unit, sp->cg_v2, sp->cg_cpu,
				    sp->cg_memory };
	const char **const dstp[] = { &dp->user, &dp->cgroup, &dp->unit, &dp->cg_v2, &dp->cg_cpu,
				      &dp->cg_memory };
	size_t i;

	for (i = 0; i < sizeof(src) / sizeof(src[0]); i++) {
		*dstp[i] = bp_profile__intern(dst, src[i]);
		if (src[i] && !*dstp[i])
			return -ENOMEM;
	}
	dp->have_ids = true;
	dp->uid = sp->uid;
	dp->cg_cpu_tree = sp->cg_cpu_tree;
	dp->cg_memory_tree = sp->cg_memory_tree;
	return 0;
}

/* counters add up; the limits are the newest slice's */
static int merge_cgroup(struct bp_profile *dst, const struct bp_cgroup *sc)
{
	struct bp_cgroup *c = bp_profile__cgroup(dst, sc->tree, sc->path, true);
	int k;

	if (!c)
		return -ENOMEM;
	c->watched_ns += sc->watched_ns;
	if (sc->cpu_valid) {
		c->cpu_valid = true;
		c->quota_at = bp_profile__intern(dst, sc->quota_at);
		if (sc->quota_at && !c->quota_at)
			return -ENOMEM;
		c->quota_us = sc->quota_us;
		c->period_us = sc->period_us;
		c->nr_periods += sc->nr_periods;
		c->nr_throttled += sc->nr_throttled;
		c->throttled_ns += sc->throttled_ns;
	}
	if (sc->psi_valid) {
		c->psi_valid = true;
		for (k = 0; k < BP_PSI_RES; k++) {
			c->psi_some_us[k] += sc->psi_some_us[k];
			c->psi_full_us[k] += sc->psi_full_us[k];
		}
	}
	if (sc->mem_valid) {
		c->mem_valid = true;
		c->mem_at = bp_profile__intern(dst, sc->mem_at);
		if (sc->mem_at && !c->mem_at)
			return -ENOMEM;
		c->mem_max = sc->mem_max;
		c->mem_high = sc->mem_high;
		c->mem_high_events += sc->mem_high_events;
		c->mem_max_events += sc->mem_max_events;
		c->mem_oom += sc->mem_oom;
		c->mem_oom_kill += sc->mem_oom_kill;
	}
	return 0;
}

static int merge_proc(struct bp_profile *dst, const struct bp_proc *sp)
{
	struct bp_proc *dp = bp_profile__proc(dst, sp->pid, true);
	uint32_t i;
	int k;

	if (!dp)
		return -ENOMEM;
	/* facts about the process: the newer slice knows better */
	if (sp->have_meta || !dp->have_meta) {
		if (sp->comm[0])
			memcpy(dp->comm, sp->comm, sizeof(dp->comm));
		if (sp->cmdline)
			dp->cmdline = bp_profile__intern(dst, sp->cmdline);
		if (sp->ppid)
			dp->ppid = sp->ppid;
		dp->have_meta = dp->have_meta || sp->have_meta;
	}
	if (sp->have_ids && merge_ids(dst, dp, sp))
		return -ENOMEM;
	if (sp->r_version) {
		dp->r_version = bp_profile__intern(dst, sp->r_version);
		if (!dp->r_version)
			return -ENOMEM;
	}
	if (sp->python) {
		dp->python = bp_profile__intern(dst, sp->python);
		dp->python_free_threaded = sp->python_free_threaded;
		if (!dp->python)
			return -ENOMEM;
	}
	if (sp->start_ns && (!dp->start_ns || sp->start_ns < dp->start_ns))
		dp->start_ns = sp->start_ns;
	if (sp->exited) {
		dp->exited = true;
		dp->end_ns = sp->end_ns;
	}
	for (i = 0; i < sp->nr_threads; i++)
		if (merge_thread(dp, &sp->threads[i]))
			return -ENOMEM;
	if (sp->have_timeline) {
		dp->have_timeline = true;
		for (k = 0; k < BP_TS__MAX; k++)
			dp->tl_ns[k] += sp->tl_ns[k];
		dp->tl_idle_ns += sp->tl_idle_ns;
		dp->turn_ns += sp->turn_ns;
		dp->want_ns += sp->want_ns;
	}
	if (sp->mem_valid) {
		dp->mem_valid = true;
		dp->wss_probes = sp->wss_probes;
		dp->wss_max = sp->wss_max;
		dp->wss_per_s = sp->wss_per_s;
		dp->rss = sp->rss;
		dp->minflt = sp->minflt;
		dp->majflt = sp->majflt;
		dp->fault_window_s = sp->fault_window_s;
	}
	if (sp->pmu_valid) {
		dp->pmu_valid = true;
		dp->cycles += sp->cycles;
		dp->instructions += sp->instructions;
		dp->cache_misses += sp->cache_misses;
		dp->pmu_running = sp->pmu_running;
		dp->pmu_seconds += sp->pmu_seconds;
	}
	dp->last_drain_samples = sp->last_drain_samples;
	for (k = 0; k < BP_SIDE__MAX; k++)
		dp->net_side_ns[k] += sp->net_side_ns[k];
	for (k = 0; k < BP_DIR__MAX; k++)
		dp->pipe_dir_ns[k] += sp->pipe_dir_ns[k];
	for (k = 0; k < BP_SYS_TOP; k++)
		if (sp->sys_nr[k])
			bp_proc__add_sys(dp, sp->sys_nr[k] - 1, sp->sys_samples[k]);
	dp->sys_other += sp->sys_other;
	if (sp->traffic_valid) {
		dp->traffic_valid = true;
		dp->traffic_floor = sp->traffic_floor;
		dp->traffic_per_s = sp->traffic_per_s;
		dp->traffic_per_cpu_s = sp->traffic_per_cpu_s;
		dp->traffic_cpus = sp->traffic_cpus;
	}
	return 0;
}

int bp_profile__merge(struct bp_profile *dst, const struct bp_profile *src)
{
	uint32_t *fmap = NULL, *smap = NULL, *frames = NULL, i, j, nr;
	double dst_s = dst->end_ns > dst->start_ns ? (double)(dst->end_ns - dst->start_ns) : 0;
	double src_s = src->end_ns > src->start_ns ? (double)(src->end_ns - src->start_ns) : 0;
	int err = -ENOMEM;

	fmap = malloc((src->nr_frames + 1) * sizeof(*fmap));
	smap = malloc((src->nr_stacks + 1) * sizeof(*smap));
	frames = malloc((2 * BP_MAX_STACK_DEPTH + 8) * sizeof(*frames));
	if (!fmap || !smap || !frames)
		goto out;
	for (i = 0; i < src->nr_frames; i++) {
		int64_t id = bp_profile__frame(dst, &src->frames[i]);

		if (id < 0)
			goto out;
		fmap[i] = id;
	}
	for (i = 0; i < src->nr_stacks; i++) {
		const uint32_t *fr = bp_profile__stack_frames(src, i, &nr);
		uint32_t *buf = frames;
		int64_t id;

		if (nr > 2 * BP_MAX_STACK_DEPTH + 8) {
			buf = malloc(nr * sizeof(*buf));
			if (!buf)
				goto out;
		}
		for (j = 0; j < nr; j++)
			buf[j] = fmap[fr[j]];
		id = bp_profile__stack(dst, buf, nr);
		if (buf != frames)
			free(buf);
		if (id < 0)
			goto out;
		smap[i] = id;
	}
	for (i = 0; i < src->nr_procs; i++)
		if (merge_proc(dst, src->procs[i]))
			goto out;
	for (i = 0; i < src->nr_samples; i++) {
		const struct bp_sample *s = &src->samples[i];

		if (bp_profile__add(dst, s->pid, s->tid, s->kind, smap[s->stack], s->count, s->ns))
			goto out;
	}
	for (i = 0; i < src->nr_io_devs; i++) {
		const struct bp_io_dev *sd = &src->io_devs[i];
		struct bp_io_dev *d = bp_profile__io_dev(dst, sd->dev, true);
		int k;

		if (!d)
			goto out;
		memcpy(d->name, sd->name, sizeof(d->name));
		for (k = 0; k < BP_IO_OP__MAX; k++)
			add_io_stats(&d->op[k], &sd->op[k]);
		d->busy_ns += sd->busy_ns;
		if (sd->max_inflight > d->max_inflight)
			d->max_inflight = sd->max_inflight;
	}
	for (i = 0; i < src->nr_io_rows; i++) {
		const struct bp_io_row *sr = &src->io_rows[i];
		struct bp_io_row *r = bp_profile__io_row(dst, sr->dev, sr->pid, sr->op, sr->kthread,
							 sr->comm, true);

		if (!r)
			goto out;
		add_io_stats(&r->st, &sr->st);
	}
	if (bp_waits_merge(dst, src))
		goto out;
	for (i = 0; i < src->nr_cgroups; i++)
		if (merge_cgroup(dst, &src->cgroups[i]))
			goto out;
	if (src->psi_valid) {
		int k;

		dst->psi_valid = true;
		for (k = 0; k < BP_PSI_RES; k++) {
			dst->psi_some_us[k] += src->psi_some_us[k];
			dst->psi_full_us[k] += src->psi_full_us[k];
		}
	}
	bp_counters_add(&dst->stats, dst->ucounts, &src->stats, src->ucounts);
	dst->io_enabled = dst->io_enabled || src->io_enabled;
	/* the busy share of the merged time, weighted by each part's length */
	if (src->machine_busy >= 0) {
		if (dst->machine_busy < 0 || dst_s <= 0)
			dst->machine_busy = src->machine_busy;
		else if (dst_s + src_s > 0)
			dst->machine_busy = (dst->machine_busy * dst_s + src->machine_busy * src_s) /
					    (dst_s + src_s);
	}
	if (!dst->start_ns || (src->start_ns && src->start_ns < dst->start_ns)) {
		dst->start_unix_ns = src->start_unix_ns;
		dst->start_ns = src->start_ns;
	}
	if (src->end_ns > dst->end_ns) {
		dst->end_ns = src->end_ns;
		/* the unwinder's memory is a level: the latest part's */
		if (src->unwind.enabled)
			dst->unwind = src->unwind;
	}
	err = 0;
out:
	free(fmap);
	free(smap);
	free(frames);
	return err;
}

struct bp_profile *bp_profile__view(const struct bp_profile *p, bp_stack_map_fn fn, void *ctx)
{
	struct bp_profile *v = bp_profile__new_like(p, p->start_ns);
	uint32_t *map = NULL, *buf = NULL, i, nr, nstacks, cap = 0;
	int err = -ENOMEM;

	if (!v)
		return NULL;
	if (bp_profile__merge(v, p))
		goto out;
	v->end_ns = p->end_ns;
	/* the command's runs: what tells its own processes from the servers it added */
	for (i = 0; i < p->nr_runs; i++)
		if (bp_profile__add_run(v, &p->runs[i]))
			goto out;
	nstacks = v->nr_stacks;
	map = malloc((nstacks + 1) * sizeof(*map));
	if (!map)
		goto out;
	for (i = 0; i < nstacks; i++) {
		const uint32_t *fr = bp_profile__stack_frames(v, i, &nr);
		int64_t n, id;

		if (nr > cap) {
			uint32_t *nb = realloc(buf, nr * sizeof(*nb));

			if (!nb)
				goto out;
			buf = nb;
			cap = nr;
		}
		/* fr points into the pool, which new stacks may move: fn copies it first */
		n = fn(v, fr, nr, buf, ctx);
		if (n < 0) {
			err = (int)n;
			goto out;
		}
		id = n ? bp_profile__stack(v, buf, (uint32_t)n) : (int64_t)i;
		if (id < 0)
			goto out;
		map[i] = (uint32_t)id;
	}
	err = bp_profile__restack(v, map);
out:
	free(map);
	free(buf);
	if (err) {
		bp_profile__free(v);
		errno = -err;
		return NULL;
	}
	return v;
}
