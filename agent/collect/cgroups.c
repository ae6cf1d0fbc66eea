// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cgroups.h"
#include "proc/users.h"
#include "util/htab.h"
#include "util/log.h"

_Static_assert((int)BP_CGROUP_V2 == (int)BP_CGT_V2 && (int)BP_CGROUP_V1_CPU == (int)BP_CGT_V1_CPU &&
	       (int)BP_CGROUP_V1_MEMORY == (int)BP_CGT_V1_MEMORY &&
	       (int)BP_CGROUP_V1_SYSTEMD == (int)BP_CGT_V1_SYSTEMD &&
	       (int)BP_CGROUP__TREES == (int)BP_CGT__MAX, "model and proc name the trees alike");
_Static_assert(BP_PSI_RES == BP_PSI__MAX, "model and proc count pressure alike");

/* a busy machine runs a few hundred cgroups; past this many new ones are not watched */
#define MAX_WATCHED		4096
/* a cgroup no recorded process ran in for this long is forgotten */
#define FORGET_NS		(60ULL * 1000000000ULL)

struct entry {
	uint32_t tree;
	char *path;
	bool want_cpu, want_mem, want_psi;
	bool stale;			/* baseline not read since it was last used */
	uint64_t base_ns;		/* when the baseline was read */
	uint64_t used_ns;		/* when a process of a profile last ran in it */
	struct bp_cg_cpu_limit cpu;
	struct bp_cg_mem_limit mem;
	struct bp_psi_line psi[BP_PSI__MAX];
};

struct bp_cgwatch {
	struct bp_cg_mounts m;
	struct bp_cg_root roots[BP_CGT__MAX];
	struct bp_users *users;
	struct entry *e;
	uint32_t n, cap;
	struct bp_htab h;
	bool full_warned;
	bool sys_base;
	struct bp_psi_line sys[BP_PSI__MAX];
};

struct key {
	uint32_t tree;
	const char *path;
};

static uint64_t key_hash(uint32_t tree, const char *path)
{
	return bp_hash_bytes(path, strlen(path), 11 + tree);
}

static bool entry_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct entry *e = &((const struct bp_cgwatch *)ctx)->e[idx];
	const struct key *k = key;

	return e->tree == k->tree && !strcmp(e->path, k->path);
}

struct bp_cgwatch *bp_cgwatch__new(void)
{
	struct bp_cgwatch *w = calloc(1, sizeof(*w));
	int t;

	if (!w)
		return NULL;
	w->users = bp_users__new(NULL);
	if (!w->users) {
		free(w);
		return NULL;
	}
	for (t = 0; t < BP_CGT__MAX; t++)
		w->roots[t].fd = -1;
	if (bp_cg_mounts_read(NULL, &w->m)) {
		bp_dbg("no cgroup mounts: processes get no cgroup");
		memset(&w->m, 0, sizeof(w->m));
		return w;
	}
	for (t = 0; t < BP_CGT__MAX; t++)
		bp_cg_root_open(&w->m, t, &w->roots[t]);
	bp_dbg("cgroups: v2 at '%s' (cpu %s, memory %s), v1 cpu at '%s', memory at '%s'",
	       w->m.v2.dir, w->m.v2_has[BP_CGC_CPU] ? "yes" : "no",
	       w->m.v2_has[BP_CGC_MEMORY] ? "yes" : "no", w->m.v1[BP_CGC_CPU].dir,
	       w->m.v1[BP_CGC_MEMORY].dir);
	return w;
}

void bp_cgwatch__free(struct bp_cgwatch *w)
{
	uint32_t i;
	int t;

	if (!w)
		return;
	for (i = 0; i < w->n; i++)
		free(w->e[i].path);
	free(w->e);
	bp_htab_free(&w->h);
	for (t = 0; t < BP_CGT__MAX; t++)
		bp_cg_root_close(&w->roots[t]);
	bp_users__free(w->users);
	free(w);
}

const struct bp_cg_mounts *bp_cgwatch__mounts(const struct bp_cgwatch *w)
{
	return &w->m;
}

int bp_cgwatch__read_ids(struct bp_cgwatch *w, pid_t pid, struct bp_proc_ids *ids)
{
	return bp_proc_ids_read(NULL, pid, w->m.v2.dir[0] || w->m.v1[0].dir[0] ||
				w->m.v1[1].dir[0] || w->m.v1_systemd.dir[0] ? &w->m : NULL,
				w->users, ids);
}

/* the counters of one entry now */
static void read_now(struct bp_cgwatch *w, struct entry *e, struct bp_cg_cpu_limit *cpu,
		     struct bp_cg_mem_limit *mem, struct bp_psi_line *psi)
{
	const struct bp_cg_root *r = &w->roots[e->tree];

	memset(cpu, 0, sizeof(*cpu));
	memset(mem, 0, sizeof(*mem));
	memset(psi, 0, BP_PSI__MAX * sizeof(*psi));
	if (e->want_cpu)
		bp_cg_cpu_limit_read(r, e->path, cpu);
	if (e->want_mem)
		bp_cg_mem_limit_read(r, e->path, mem);
	if (e->want_psi)
		bp_cg_psi_read(r, e->path, NULL, psi);
}

static void rebase(struct bp_cgwatch *w, struct entry *e, uint64_t now)
{
	read_now(w, e, &e->cpu, &e->mem, e->psi);
	e->base_ns = now;
	e->stale = false;
}

static struct entry *watch(struct bp_cgwatch *w, uint32_t tree, const char *path, uint64_t now)
{
	struct key k = { tree, path };
	uint64_t h = key_hash(tree, path);
	struct entry *e;
	uint32_t idx;

	if (w->roots[tree].fd < 0)
		return NULL;
	if (!bp_htab_find(&w->h, h, entry_eq, w, &k, &idx))
		return &w->e[idx];
	if (w->n >= MAX_WATCHED) {
		if (!w->full_warned)
			bp_warn("more than %u cgroups in use: the accounting of the others is not "
				"read", MAX_WATCHED);
		w->full_warned = true;
		return NULL;
	}
	if (w->n == w->cap) {
		uint32_t ncap = w->cap ? w->cap * 2 : 32;
		struct entry *ne = reallocarray(w->e, ncap, sizeof(*ne));

		if (!ne)
			return NULL;
		w->e = ne;
		w->cap = ncap;
	}
	e = &w->e[w->n];
	memset(e, 0, sizeof(*e));
	e->tree = tree;
	e->path = strdup(path);
	if (!e->path || bp_htab_insert(&w->h, h, w->n)) {
		free(e->path);
		return NULL;
	}
	e->stale = true;
	e->used_ns = now;
	w->n++;
	return e;
}

void bp_cgwatch__use(struct bp_cgwatch *w, const struct bp_proc_ids *ids, uint64_t now)
{
	struct entry *v2 = NULL, *cpu = NULL, *mem = NULL;
	bool fresh;

	if (ids->cg_v2 && w->m.v2.dir[0])
		v2 = watch(w, BP_CGT_V2, ids->cg_v2, now);
	if (ids->cg_ctrl[BP_CGC_CPU])
		cpu = watch(w, ids->ctrl_tree[BP_CGC_CPU], ids->cg_ctrl[BP_CGC_CPU], now);
	if (ids->cg_ctrl[BP_CGC_MEMORY])
		mem = watch(w, ids->ctrl_tree[BP_CGC_MEMORY], ids->cg_ctrl[BP_CGC_MEMORY], now);
	/* the pointers stay valid: no entry is added below */
	if (v2) {
		fresh = !v2->want_psi;
		v2->want_psi = true;
		v2->stale |= fresh;
	}
	if (cpu) {
		fresh = !cpu->want_cpu;
		cpu->want_cpu = true;
		cpu->stale |= fresh;
	}
	if (mem) {
		fresh = !mem->want_mem;
		mem->want_mem = true;
		mem->stale |= fresh;
	}
	if (v2) {
		v2->used_ns = now;
		if (v2->stale)
			rebase(w, v2, now);
	}
	if (cpu) {
		cpu->used_ns = now;
		if (cpu->stale)
			rebase(w, cpu, now);
	}
	if (mem) {
		mem->used_ns = now;
		if (mem->stale)
			rebase(w, mem, now);
	}
}

static int intern_to(struct bp_profile *p, const char **dst, const char *s)
{
	*dst = bp_profile__intern(p, s);
	return s && !*dst ? -ENOMEM : 0;
}

int bp_cgwatch__fill(struct bp_profile *p, struct bp_proc *proc, const struct bp_proc_ids *ids)
{
	if (!ids->have_uid && !ids->cgroup)
		return 0;
	if (intern_to(p, &proc->user, ids->user) || intern_to(p, &proc->cgroup, ids->cgroup) ||
	    intern_to(p, &proc->unit, ids->unit) || intern_to(p, &proc->cg_v2, ids->cg_v2) ||
	    intern_to(p, &proc->cg_cpu, ids->cg_ctrl[BP_CGC_CPU]) ||
	    intern_to(p, &proc->cg_memory, ids->cg_ctrl[BP_CGC_MEMORY]))
		return -ENOMEM;
	proc->have_ids = true;
	proc->uid = ids->uid;
	proc->cg_cpu_tree = ids->ctrl_tree[BP_CGC_CPU];
	proc->cg_memory_tree = ids->ctrl_tree[BP_CGC_MEMORY];
	return 0;
}

/* b - a for a counter that can only grow; 0 when it went back (a cgroup made anew) */
static uint64_t delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0;
}

static int add_row(struct bp_profile *p, struct entry *e, const struct bp_cg_cpu_limit *cpu,
		   const struct bp_cg_mem_limit *mem, const struct bp_psi_line *psi, uint64_t now)
{
	struct bp_cgroup *c = bp_profile__cgroup(p, e->tree, e->path, true);
	int k;

	if (!c)
		return -ENOMEM;
	c->watched_ns += delta(e->base_ns, now);
	if (e->want_cpu && cpu->valid) {
		c->cpu_valid = true;
		c->quota_us = cpu->quota_us;
		c->period_us = cpu->period_us;
		if (intern_to(p, &c->quota_at, cpu->at[0] ? cpu->at : NULL))
			return -ENOMEM;
		/* throttling of the same cgroup as at the baseline, else none counted */
		if (!strcmp(cpu->at, e->cpu.at)) {
			c->nr_periods += delta(e->cpu.stat.nr_periods, cpu->stat.nr_periods);
			c->nr_throttled += delta(e->cpu.stat.nr_throttled, cpu->stat.nr_throttled);
			c->throttled_ns += delta(e->cpu.stat.throttled_ns, cpu->stat.throttled_ns);
		}
	}
	if (e->want_mem && mem->valid) {
		c->mem_valid = true;
		c->mem_max = mem->max;
		c->mem_high = mem->high;
		if (intern_to(p, &c->mem_at, mem->at[0] ? mem->at : NULL))
			return -ENOMEM;
		if (!strcmp(mem->at, e->mem.at)) {
			c->mem_high_events += delta(e->mem.ev.high, mem->ev.high);
			c->mem_max_events += delta(e->mem.ev.max, mem->ev.max);
			c->mem_oom += delta(e->mem.ev.oom, mem->ev.oom);
			c->mem_oom_kill += delta(e->mem.ev.oom_kill, mem->ev.oom_kill);
		}
	}
	if (e->want_psi && psi[BP_PSI_CPU].some_valid) {
		c->psi_valid = true;
		for (k = 0; k < BP_PSI__MAX; k++) {
			c->psi_some_us[k] += delta(e->psi[k].some_us, psi[k].some_us);
			c->psi_full_us[k] += delta(e->psi[k].full_us, psi[k].full_us);
		}
	}
	return 0;
}

/* drop the entries no process used for a while, and index the rest again */
static bool unused(const struct entry *e, uint64_t start, uint64_t now)
{
	return e->used_ns < start && e->used_ns + FORGET_NS < now;
}

static void forget(struct bp_cgwatch *w, uint64_t start, uint64_t now)
{
	uint32_t i, n = 0;

	for (i = 0; i < w->n; i++)
		if (unused(&w->e[i], start, now))
			break;
	if (i == w->n)
		return;
	bp_htab_clear(&w->h);
	for (i = 0; i < w->n; i++) {
		if (unused(&w->e[i], start, now)) {
			free(w->e[i].path);
			continue;
		}
		w->e[n] = w->e[i];
		/* an index smaller than before: the table had room for it */
		bp_htab_insert(&w->h, key_hash(w->e[n].tree, w->e[n].path), n);
		n++;
	}
	w->n = n;
}

void bp_cgwatch__begin(struct bp_cgwatch *w)
{
	w->sys_base = !bp_cg_psi_read(NULL, NULL, NULL, w->sys) && w->sys[BP_PSI_CPU].some_valid;
}

int bp_cgwatch__update(struct bp_cgwatch *w, struct bp_profile *p, uint64_t now)
{
	struct bp_psi_line sys[BP_PSI__MAX];
	uint32_t i;
	int k, err = 0;

	for (i = 0; i < w->n && !err; i++) {
		struct entry *e = &w->e[i];
		struct bp_cg_cpu_limit cpu;
		struct bp_cg_mem_limit mem;
		struct bp_psi_line psi[BP_PSI__MAX];

		/* not in this profile: its next use reads a fresh baseline */
		if (e->used_ns < p->start_ns || e->stale) {
			e->stale = true;
			continue;
		}
		read_now(w, e, &cpu, &mem, psi);
		err = add_row(p, e, &cpu, &mem, psi, now);
		e->cpu = cpu;
		e->mem = mem;
		memcpy(e->psi, psi, sizeof(psi));
		e->base_ns = now;
	}
	if (!bp_cg_psi_read(NULL, NULL, NULL, sys) && sys[BP_PSI_CPU].some_valid) {
		if (w->sys_base) {
			p->psi_valid = true;
			for (k = 0; k < BP_PSI__MAX; k++) {
				p->psi_some_us[k] += delta(w->sys[k].some_us, sys[k].some_us);
				p->psi_full_us[k] += delta(w->sys[k].full_us, sys[k].full_us);
			}
		}
		memcpy(w->sys, sys, sizeof(sys));
		w->sys_base = true;
	}
	forget(w, p->start_ns, now);
	return err;
}
