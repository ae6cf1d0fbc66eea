// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
/* sets of cgroups processes exec in, kept; past this many the cache starts anew */
#define MAX_IDSETS		1024
/* a cgroup no recorded process ran in for this long is forgotten */
#define FORGET_NS		(60ULL * 1000000000ULL)

/* a cgroup's own counters: what a baseline is made of */
struct counters {
	struct bp_cg_cpu_stat cpu;
	struct bp_cg_mem_events mem;
	struct bp_psi_line psi[BP_PSI__MAX];
};

/* where the limits are set, and the counters at the baseline */
struct base {
	char *cpu_at;			/* the quota's cgroup ("" none); NULL: no baseline */
	struct bp_cg_cpu_stat cpu;
	char *mem_at;
	struct bp_cg_mem_events mem;
	bool psi_ok;
	struct bp_psi_line psi[BP_PSI__MAX];
};

struct entry {
	uint32_t tree;
	char *path;
	bool want_cpu, want_mem, want_psi;
	bool stale;			/* baseline not read since it was last used */
	uint64_t base_ns;		/* when the baseline holds from */
	uint64_t used_ns;		/* when a process of a profile last ran in it */
	struct base b;
};

/* every cgroup's counters at the start, for those first seen in the first profile */
struct snap {
	uint32_t tree;
	char *path;
	struct counters c;
};

/* the cgroups of processes that exec'd in one set of cgroups (bp_cgwatch__exec_ids()) */
struct idset {
	__u64 cg[BP_EXCG__MAX];
	struct bp_proc_ids ids;		/* paths only: no user */
};

struct bp_cgwatch {
	struct bp_cg_mounts m;
	bool have_mounts;
	struct bp_cg_root roots[BP_CGT__MAX];
	struct bp_users *users;
	struct entry *e;
	uint32_t n, cap;
	struct bp_htab h;
	bool full_warned;
	bool sys_base;
	struct bp_psi_line sys[BP_PSI__MAX];
	/* the start snapshot, until the first update */
	struct snap *snap;
	uint32_t nsnap;
	struct bp_htab snap_h;
	bool snap_live;			/* baselines of new entries come from it */
	bool snap_complete;		/* it holds every cgroup there was: absent ones are new */
	uint64_t start_ns;
	struct idset *ids;		/* by the cgroup ids of an exec event */
	uint32_t nids, cap_ids;
	struct bp_htab ids_h;
	uint64_t ids_hits, ids_reads;
	uint64_t ids_by_id;		/* sets found by id: the process was gone */
};

static void ids_clear(struct bp_cgwatch *w);

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

static bool snap_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct snap *sn = &((const struct bp_cgwatch *)ctx)->snap[idx];
	const struct key *k = key;

	return sn->tree == k->tree && !strcmp(sn->path, k->path);
}

static void base_free(struct base *b)
{
	free(b->cpu_at);
	free(b->mem_at);
	memset(b, 0, sizeof(*b));
}

static void snap_free(struct bp_cgwatch *w)
{
	uint32_t i;

	for (i = 0; i < w->nsnap; i++)
		free(w->snap[i].path);
	free(w->snap);
	w->snap = NULL;
	w->nsnap = 0;
	bp_htab_free(&w->snap_h);
	w->snap_live = false;
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
	w->have_mounts = w->m.v2.dir[0] || w->m.v1[0].dir[0] || w->m.v1[1].dir[0] ||
			 w->m.v1_systemd.dir[0];
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
	if (w->ids_hits || w->ids_reads)
		bp_dbg("cgroups of new images: %llu known, %llu read from /proc, "
		       "%llu of them gone and found by id", (unsigned long long)w->ids_hits,
		       (unsigned long long)w->ids_reads, (unsigned long long)w->ids_by_id);
	for (i = 0; i < w->n; i++) {
		free(w->e[i].path);
		base_free(&w->e[i].b);
	}
	free(w->e);
	bp_htab_free(&w->h);
	ids_clear(w);
	free(w->ids);
	bp_htab_free(&w->ids_h);
	snap_free(w);
	for (t = 0; t < BP_CGT__MAX; t++)
		bp_cg_root_close(&w->roots[t]);
	bp_users__free(w->users);
	free(w);
}

int bp_cgwatch__read_ids(struct bp_cgwatch *w, pid_t pid, struct bp_proc_ids *ids)
{
	return bp_proc_ids_read(NULL, pid, w->have_mounts ? &w->m : NULL, w->users, ids);
}

static uint64_t idset_hash(const __u64 cg[BP_EXCG__MAX])
{
	return bp_hash_bytes(cg, BP_EXCG__MAX * sizeof(cg[0]), 7);
}

static bool idset_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !memcmp(((const struct bp_cgwatch *)ctx)->ids[idx].cg, key,
		       BP_EXCG__MAX * sizeof(__u64));
}

static void ids_clear(struct bp_cgwatch *w)
{
	uint32_t i;

	for (i = 0; i < w->nids; i++)
		bp_proc_ids_free(&w->ids[i].ids);
	w->nids = 0;
	bp_htab_clear(&w->ids_h);
}

/* each controller's slot among an event's cgroup ids */
static const int ctrl_excg[BP_CGC__MAX] = { [BP_CGC_CPU] = BP_EXCG_CPU,
					    [BP_CGC_MEMORY] = BP_EXCG_MEMORY };

/*
 * Do the paths /proc gave name the cgroups the exec event saw? The process
 * may have moved since its exec: its paths must not be kept for the ids.
 * A v1 controller's tree is checked by its own id; a controller on the v2
 * tree by the v2 path (its css may be an ancestor's). The name=systemd
 * tree has no controller to ask the kernel about: on hybrid systems it
 * mirrors the v2 tree.
 */
static bool ids_match(const struct bp_cgwatch *w, const __u64 cg[BP_EXCG__MAX],
		      const struct bp_proc_ids *ids)
{
	uint64_t ino;
	int c;

	if (ids->cg_v2 && (bp_cg_ino(&w->roots[BP_CGT_V2], ids->cg_v2, &ino) ||
			   ino != cg[BP_EXCG_V2]))
		return false;
	for (c = 0; c < BP_CGC__MAX; c++) {
		const char *path = ids->cg_ctrl[c];

		if (!path || ids->ctrl_tree[c] == BP_CGT_V2)
			continue;
		if (bp_cg_ino(&w->roots[ids->ctrl_tree[c]], path, &ino) || ino != cg[ctrl_excg[c]])
			return false;
	}
	return true;
}

/*
 * The cgroups of an exec or first-sample event found by their ids, for a
 * process gone before its event was read (a lazy event waits up to a
 * second; a short-lived process lives milliseconds): the v2 path, and the
 * v1 path of a controller that is not on the v2 tree. The name=systemd
 * tree has no id in the event: on a hybrid machine its path is the v2
 * one, which is the path grouped by. 0 with the paths set, -ESRCH when
 * none was found (nothing to keep for the ids), -ENOMEM.
 */
static int ids_by_id(struct bp_cgwatch *w, const __u64 cg[BP_EXCG__MAX], struct bp_proc_ids *ids)
{
	static const int v1[BP_CGC__MAX] = { [BP_CGC_CPU] = BP_CGT_V1_CPU,
					     [BP_CGC_MEMORY] = BP_CGT_V1_MEMORY };
	char v2[BP_CG_PATH_LEN], ctrl[BP_CGC__MAX][BP_CG_PATH_LEN];
	struct bp_cg_paths cp = {};
	int c;

	if (!bp_cg_id_path(&w->roots[BP_CGT_V2], cg[BP_EXCG_V2], v2, sizeof(v2)))
		cp.v2 = v2;
	for (c = 0; c < BP_CGC__MAX; c++)
		if (!w->m.v2_has[c] &&
		    !bp_cg_id_path(&w->roots[v1[c]], cg[ctrl_excg[c]], ctrl[c], sizeof(ctrl[c])))
			cp.v1[c] = ctrl[c];
	if (!cp.v2 && !cp.v1[BP_CGC_CPU] && !cp.v1[BP_CGC_MEMORY])
		return -ESRCH;
	w->ids_by_id++;
	return bp_proc_ids_set_groups(&w->m, &cp, ids);
}

int bp_cgwatch__exec_ids(struct bp_cgwatch *w, pid_t pid, const __u64 cg[BP_EXCG__MAX],
			 uint32_t euid, struct bp_proc_ids *ids)
{
	struct idset *d;
	uint32_t idx;
	int err;

	memset(ids, 0, sizeof(*ids));
	if (w->have_mounts && cg[BP_EXCG_V2]) {
		if (!bp_htab_find(&w->ids_h, idset_hash(cg), idset_eq, w, cg, &idx)) {
			w->ids_hits++;
			err = bp_proc_ids_copy(ids, &w->ids[idx].ids);
			if (err)
				return err;
		} else {
			w->ids_reads++;
			err = bp_proc_ids_read_groups(NULL, pid, &w->m, ids);
			/* gone: its cgroups by the ids its event carried */
			if (err == -ESRCH)
				err = ids_by_id(w, cg, ids);
			if (err == -ENOMEM) {
				bp_proc_ids_free(ids);
				return err;
			}
			/* gone, and its cgroups gone too (-ESRCH): its user is all that is known */
			if (!err && ids_match(w, cg, ids)) {
				if (w->nids == MAX_IDSETS)
					ids_clear(w);
				if (w->nids == w->cap_ids) {
					uint32_t ncap = w->cap_ids ? w->cap_ids * 2 : 16;

					d = realloc(w->ids, ncap * sizeof(*d));
					if (!d)
						goto user;
					w->ids = d;
					w->cap_ids = ncap;
				}
				d = &w->ids[w->nids];
				memcpy(d->cg, cg, sizeof(d->cg));
				if (bp_proc_ids_copy(&d->ids, ids))
					goto user;
				if (bp_htab_insert(&w->ids_h, idset_hash(cg), w->nids)) {
					bp_proc_ids_free(&d->ids);
					goto user;
				}
				w->nids++;
			}
		}
	}
user:
	ids->have_uid = true;
	ids->uid = euid;
	free(ids->user);
	ids->user = NULL;
	if (w->users) {
		const char *name = bp_users__name(w->users, euid);

		if (name) {
			ids->user = strdup(name);
			if (!ids->user) {
				bp_proc_ids_free(ids);
				return -ENOMEM;
			}
		}
	}
	return 0;
}

/* which controllers a tree's cgroups have */
static bool tree_has(const struct bp_cgwatch *w, uint32_t tree, enum bp_cg_ctrl c)
{
	if (tree == BP_CGT_V2)
		return w->m.v2_has[c];
	return (tree == BP_CGT_V1_CPU && c == BP_CGC_CPU) ||
	       (tree == BP_CGT_V1_MEMORY && c == BP_CGC_MEMORY);
}

/* one cgroup's own counters (not the limits' cgroups') */
static void own_counters(const struct bp_cgwatch *w, uint32_t tree, const char *path,
			 struct counters *c)
{
	const struct bp_cg_root *r = &w->roots[tree];
	char buf[4096];
	int64_t v;

	memset(c, 0, sizeof(*c));
	if (tree_has(w, tree, BP_CGC_CPU) && bp_cg_read(r, path, "cpu.stat", buf, sizeof(buf)) >= 0)
		bp_cg_parse_cpu_stat(buf, &c->cpu);
	if (tree == BP_CGT_V2) {
		if (tree_has(w, tree, BP_CGC_MEMORY) &&
		    bp_cg_read(r, path, "memory.events", buf, sizeof(buf)) >= 0)
			bp_cg_parse_mem_events(buf, &c->mem);
		bp_cg_psi_read(r, path, NULL, c->psi);
	} else if (tree == BP_CGT_V1_MEMORY) {
		if (bp_cg_read(r, path, "memory.failcnt", buf, sizeof(buf)) >= 0 &&
		    !bp_cg_parse_int(buf, &v) && v > 0)
			c->mem.max = (uint64_t)v;
		if (bp_cg_read(r, path, "memory.oom_control", buf, sizeof(buf)) >= 0)
			bp_cg_key_value(buf, "oom_kill", &c->mem.oom_kill);
	}
}

/* the start snapshot's counters of a cgroup: 1 found, 0 new since (zeros), -1 unknown */
static int snapped(const struct bp_cgwatch *w, uint32_t tree, const char *path,
		   const struct counters **c)
{
	struct key k = { tree, path };
	uint32_t idx;

	if (!w->snap_live)
		return -1;
	if (!bp_htab_find(&w->snap_h, key_hash(tree, path), snap_eq, w, &k, &idx)) {
		*c = &w->snap[idx].c;
		return 1;
	}
	return w->snap_complete ? 0 : -1;
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

static int set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

/* take what was read now as the baseline */
static void base_now(struct entry *e, const struct bp_cg_cpu_limit *cpu,
		     const struct bp_cg_mem_limit *mem, const struct bp_psi_line *psi, bool want_cpu,
		     bool want_mem, bool want_psi)
{
	if (want_cpu && !set_str(&e->b.cpu_at, cpu->at))
		e->b.cpu = cpu->stat;
	if (want_mem && !set_str(&e->b.mem_at, mem->at))
		e->b.mem = mem->ev;
	if (want_psi) {
		memcpy(e->b.psi, psi, sizeof(e->b.psi));
		e->b.psi_ok = true;
	}
}

/*
 * A baseline for the parts asked: in the first profile from the start
 * snapshot (what the limits' cgroups counted when the recording started, or
 * zeros for a cgroup made since), so that what a process did before
 * boundprof got to reading its cgroup still counts; later, the counters now.
 */
static void rebase(struct bp_cgwatch *w, struct entry *e, bool cpu_part, bool mem_part,
		   bool psi_part, uint64_t now)
{
	static const struct counters zero;
	const struct counters *c;
	struct bp_cg_cpu_limit cpu;
	struct bp_cg_mem_limit mem;
	struct bp_psi_line psi[BP_PSI__MAX];
	bool from_start = w->snap_live;
	int r;

	read_now(w, e, &cpu, &mem, psi);
	base_now(e, &cpu, &mem, psi, cpu_part, mem_part, psi_part);
	if (cpu_part && from_start) {
		r = snapped(w, e->tree, cpu.at[0] ? cpu.at : e->path, &c);
		if (r >= 0)
			e->b.cpu = (r ? c : &zero)->cpu;
		from_start = r >= 0;
	}
	if (mem_part && from_start) {
		r = snapped(w, e->tree, mem.at[0] ? mem.at : e->path, &c);
		if (r >= 0)
			e->b.mem = (r ? c : &zero)->mem;
		from_start = r >= 0;
	}
	if (psi_part && from_start) {
		r = snapped(w, e->tree, e->path, &c);
		if (r >= 0)
			memcpy(e->b.psi, (r ? c : &zero)->psi, sizeof(e->b.psi));
		from_start = r >= 0;
	}
	if (cpu_part)
		bp_dbg("cgroup %s: cpu baseline %s, quota at '%s', %llu us throttled",
		       e->path, from_start ? "from the start" : "now", cpu.at,
		       (unsigned long long)(e->b.cpu.throttled_ns / 1000));
	if (!e->stale && e->base_ns)
		return;
	e->base_ns = from_start ? w->start_ns : now;
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

/* a use of e for these parts: the new parts (or all, when stale) get a baseline */
static void use_entry(struct bp_cgwatch *w, struct entry *e, bool cpu, bool mem, bool psi,
		      uint64_t now)
{
	bool new_cpu = cpu && (!e->want_cpu || e->stale);
	bool new_mem = mem && (!e->want_mem || e->stale);
	bool new_psi = psi && (!e->want_psi || e->stale);

	e->used_ns = now;
	if (e->stale) {
		/* a stale baseline covers every part it watches */
		new_cpu |= e->want_cpu;
		new_mem |= e->want_mem;
		new_psi |= e->want_psi;
	}
	e->want_cpu |= cpu;
	e->want_mem |= mem;
	e->want_psi |= psi;
	if (new_cpu || new_mem || new_psi)
		rebase(w, e, new_cpu, new_mem, new_psi, now);
}

void bp_cgwatch__use(struct bp_cgwatch *w, const struct bp_proc_ids *ids, uint64_t now)
{
	struct entry *e;

	if (ids->cg_v2 && w->m.v2.dir[0]) {
		e = watch(w, BP_CGT_V2, ids->cg_v2, now);
		if (e)
			use_entry(w, e, false, false, true, now);
	}
	if (ids->cg_ctrl[BP_CGC_CPU]) {
		e = watch(w, ids->ctrl_tree[BP_CGC_CPU], ids->cg_ctrl[BP_CGC_CPU], now);
		if (e)
			use_entry(w, e, true, false, false, now);
	}
	if (ids->cg_ctrl[BP_CGC_MEMORY]) {
		e = watch(w, ids->ctrl_tree[BP_CGC_MEMORY], ids->cg_ctrl[BP_CGC_MEMORY], now);
		if (e)
			use_entry(w, e, false, true, false, now);
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
	bool same;
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
		same = e->b.cpu_at && !strcmp(cpu->at, e->b.cpu_at);
		if (same) {
			c->nr_periods += delta(e->b.cpu.nr_periods, cpu->stat.nr_periods);
			c->nr_throttled += delta(e->b.cpu.nr_throttled, cpu->stat.nr_throttled);
			c->throttled_ns += delta(e->b.cpu.throttled_ns, cpu->stat.throttled_ns);
		}
		if (cpu->at[0] || !same)
			bp_dbg("cgroup %s: %llu us throttled at the end (quota at '%s'%s%s)",
			       e->path, (unsigned long long)(cpu->stat.throttled_ns / 1000),
			       cpu->at, same ? "" : "; none counted, at the baseline: ",
			       same ? "" : (e->b.cpu_at ? e->b.cpu_at : "no read"));
	}
	if (e->want_mem && mem->valid) {
		c->mem_valid = true;
		c->mem_max = mem->max;
		c->mem_high = mem->high;
		if (intern_to(p, &c->mem_at, mem->at[0] ? mem->at : NULL))
			return -ENOMEM;
		if (e->b.mem_at && !strcmp(mem->at, e->b.mem_at)) {
			c->mem_high_events += delta(e->b.mem.high, mem->ev.high);
			c->mem_max_events += delta(e->b.mem.max, mem->ev.max);
			c->mem_oom += delta(e->b.mem.oom, mem->ev.oom);
			c->mem_oom_kill += delta(e->b.mem.oom_kill, mem->ev.oom_kill);
		}
	}
	if (e->want_psi && e->b.psi_ok && psi[BP_PSI_CPU].some_valid) {
		c->psi_valid = true;
		for (k = 0; k < BP_PSI__MAX; k++) {
			c->psi_some_us[k] += delta(e->b.psi[k].some_us, psi[k].some_us);
			c->psi_full_us[k] += delta(e->b.psi[k].full_us, psi[k].full_us);
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
			base_free(&w->e[i].b);
			continue;
		}
		w->e[n] = w->e[i];
		/* an index smaller than before: the table had room for it */
		bp_htab_insert(&w->h, key_hash(w->e[n].tree, w->e[n].path), n);
		n++;
	}
	w->n = n;
}

/* a cgroup tree's directories, breadth first, at most MAX_WATCHED in all */
static int snap_tree(struct bp_cgwatch *w, uint32_t tree)
{
	const struct bp_cg_root *r = &w->roots[tree];
	char **queue;
	uint32_t head = 0, tail = 0;
	int err = 0;

	if (r->fd < 0)
		return 0;
	queue = calloc(MAX_WATCHED + 1, sizeof(*queue));
	if (!queue)
		return -ENOMEM;
	queue[tail++] = strdup(r->prefix[0] ? r->prefix : "/");
	while (head < tail && queue[head] && !err) {
		char *path = queue[head++], rel[BP_CG_PATH_LEN + 2];
		struct snap *sn;
		struct dirent *de;
		DIR *d;
		int fd;

		if (w->nsnap >= MAX_WATCHED) {
			err = -E2BIG;
			break;
		}
		if (w->nsnap % 64 == 0) {
			struct snap *ns = reallocarray(w->snap, w->nsnap + 64, sizeof(*ns));

			if (!ns) {
				err = -ENOMEM;
				break;
			}
			w->snap = ns;
		}
		sn = &w->snap[w->nsnap];
		sn->tree = tree;
		sn->path = strdup(path);
		if (!sn->path || bp_htab_insert(&w->snap_h, key_hash(tree, path), w->nsnap)) {
			free(sn->path);
			err = -ENOMEM;
			break;
		}
		own_counters(w, tree, path, &sn->c);
		w->nsnap++;
		/* the children, inside the mount, never through a link */
		snprintf(rel, sizeof(rel), ".%s", path + strlen(r->prefix));
		fd = openat(r->fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d && fd >= 0)
			close(fd);
		while (d && (de = readdir(d))) {
			char child[BP_CG_PATH_LEN];

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if ((size_t)snprintf(child, sizeof(child), "%s%s%s", path,
					     strcmp(path, "/") ? "/" : "", de->d_name) >= sizeof(child))
				continue;
			if (tail >= MAX_WATCHED) {
				err = -E2BIG;
				break;
			}
			queue[tail++] = strdup(child);
		}
		if (d)
			closedir(d);
	}
	while (tail > 0)
		free(queue[--tail]);
	free(queue);
	return err;
}

void bp_cgwatch__begin(struct bp_cgwatch *w, uint64_t now)
{
	static const uint32_t trees[] = { BP_CGT_V2, BP_CGT_V1_CPU, BP_CGT_V1_MEMORY };
	size_t i;
	int err = 0;

	w->sys_base = !bp_cg_psi_read(NULL, NULL, NULL, w->sys) && w->sys[BP_PSI_CPU].some_valid;
	w->start_ns = now;
	snap_free(w);
	for (i = 0; i < sizeof(trees) / sizeof(trees[0]) && !err; i++)
		err = snap_tree(w, trees[i]);
	w->snap_live = true;
	w->snap_complete = !err;
	bp_dbg("cgroups at the start: %u%s", w->nsnap, err ? " (not all)" : "");
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
		base_now(e, &cpu, &mem, psi, e->want_cpu, e->want_mem, e->want_psi);
		e->base_ns = now;
	}
	/* the snapshot served the first profile's new cgroups */
	snap_free(w);
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
