// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"

/* grow *arr to hold at least need elements of size sz; 0 or -ENOMEM */
static int grow(void **arr, uint32_t *cap, uint64_t need, size_t sz)
{
	uint64_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		return -ENOMEM;
	n = realloc(*arr, ncap * sz);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

struct bp_profile *bp_profile__new(void)
{
	struct bp_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->event = "cpu-clock";
	p->machine_busy = -1;
	return p;
}

void bp_profile__free(struct bp_profile *p)
{
	uint32_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_strs; i++)
		free(p->strs[i]);
	for (i = 0; i < p->nr_procs; i++) {
		free(p->procs[i]->threads);
		bp_htab_free(&p->procs[i]->thread_h);
		free(p->procs[i]);
	}
	free(p->strs);
	free(p->frames);
	free(p->stack_pool);
	free(p->stack_off);
	free(p->stack_len);
	free(p->samples);
	free(p->procs);
	bp_htab_free(&p->str_h);
	bp_htab_free(&p->frame_h);
	bp_htab_free(&p->stack_h);
	bp_htab_free(&p->sample_h);
	bp_htab_free(&p->proc_h);
	bp_htab_free(&p->io_row_h);
	bp_htab_free(&p->cgroup_h);
	free(p->cgroups);
	free(p->io_devs);
	free(p->io_rows);
	bp_htab_free(&p->wake_h);
	bp_htab_free(&p->net_h);
	free(p->wake_rows);
	free(p->net_rows);
	free(p->runs);
	free(p);
}

int bp_profile__add_run(struct bp_profile *p, const struct bp_run *r)
{
	if (p->nr_runs == p->cap_runs) {
		uint32_t ncap = p->cap_runs ? p->cap_runs * 2 : 4;
		struct bp_run *n = reallocarray(p->runs, ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->runs = n;
		p->cap_runs = ncap;
	}
	p->runs[p->nr_runs++] = *r;
	return 0;
}

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_profile *p = ctx;

	return strcmp(p->strs[idx], key) == 0;
}

const char *bp_profile__intern(struct bp_profile *p, const char *s)
{
	uint64_t h;
	uint32_t idx;
	char *copy;

	if (!s)
		return NULL;
	h = bp_hash_bytes(s, strlen(s), 1);
	if (bp_htab_find(&p->str_h, h, str_eq, p, s, &idx) == 0)
		return p->strs[idx];
	if (grow((void **)&p->strs, &p->cap_strs, p->nr_strs + 1, sizeof(*p->strs)))
		return NULL;
	copy = strdup(s);
	if (!copy)
		return NULL;
	if (bp_htab_insert(&p->str_h, h, p->nr_strs)) {
		free(copy);
		return NULL;
	}
	p->strs[p->nr_strs++] = copy;
	return copy;
}

/*
 * Frames are functions, not addresses: every address inside one named
 * function of one file is one frame. Unnamed addresses stay distinct.
 */
static uint64_t frame_hash(const struct bp_frame *f)
{
	uint64_t h = f->kernel | f->inlined << 1 | f->python << 2 | (uint64_t)f->line << 3;

	h = bp_hash_bytes(f->module, strlen(f->module), h);
	if (f->path)
		h = bp_hash_bytes(f->path, strlen(f->path), h);
	if (f->file)
		h = bp_hash_bytes(f->file, strlen(f->file), h);
	if (f->name)
		return bp_hash_bytes(f->name, strlen(f->name), h);
	return bp_hash_u64(h ^ f->offset);
}

static bool opt_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_frame *a = &((const struct bp_profile *)ctx)->frames[idx];
	const struct bp_frame *b = key;

	if (a->kernel != b->kernel || a->inlined != b->inlined || a->python != b->python ||
	    a->line != b->line || !opt_str_eq(a->name, b->name) ||
	    strcmp(a->module, b->module) || !opt_str_eq(a->path, b->path) ||
	    !opt_str_eq(a->file, b->file))
		return false;
	return a->name || a->offset == b->offset;
}

int64_t bp_profile__frame(struct bp_profile *p, const struct bp_frame *f)
{
	struct bp_frame n = *f;
	uint64_t h;
	uint32_t idx;

	if (!n.module)
		n.module = "[unknown]";
	h = frame_hash(&n);
	if (bp_htab_find(&p->frame_h, h, frame_eq, p, &n, &idx) == 0)
		return idx;
	if (grow((void **)&p->frames, &p->cap_frames, p->nr_frames + 1, sizeof(*p->frames)))
		return -ENOMEM;
	n.name = bp_profile__intern(p, f->name);
	n.module = bp_profile__intern(p, n.module);
	n.path = bp_profile__intern(p, f->path);
	n.build_id = bp_profile__intern(p, f->build_id);
	n.file = bp_profile__intern(p, f->file);
	if (!n.module || (f->name && !n.name) || (f->file && !n.file))
		return -ENOMEM;
	if (bp_htab_insert(&p->frame_h, h, p->nr_frames))
		return -ENOMEM;
	p->frames[p->nr_frames] = n;
	return p->nr_frames++;
}

struct stack_key {
	const uint32_t *frames;
	uint32_t nr;
};

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_profile *p = ctx;
	const struct stack_key *k = key;

	return p->stack_len[idx] == k->nr &&
	       !memcmp(p->stack_pool + p->stack_off[idx], k->frames, k->nr * sizeof(uint32_t));
}

int64_t bp_profile__stack(struct bp_profile *p, const uint32_t *frames, uint32_t nr)
{
	struct stack_key k = { frames, nr };
	uint64_t h = bp_hash_bytes(frames, nr * sizeof(uint32_t), 2);
	uint32_t idx, cap;

	if (bp_htab_find(&p->stack_h, h, stack_eq, p, &k, &idx) == 0)
		return idx;
	/* a pool even for an empty first stack: stacks point into it, never at NULL */
	if (!p->stack_pool || p->pool_len + nr > p->pool_cap) {
		uint64_t ncap = p->pool_cap ? p->pool_cap : 1024;
		uint32_t *np;

		while (ncap < p->pool_len + nr)
			ncap *= 2;
		np = realloc(p->stack_pool, ncap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		p->stack_pool = np;
		p->pool_cap = ncap;
	}
	cap = p->cap_stacks;
	if (grow((void **)&p->stack_off, &cap, p->nr_stacks + 1, sizeof(*p->stack_off)))
		return -ENOMEM;
	cap = p->cap_stacks;
	if (grow((void **)&p->stack_len, &cap, p->nr_stacks + 1, sizeof(*p->stack_len)))
		return -ENOMEM;
	p->cap_stacks = cap;
	if (bp_htab_insert(&p->stack_h, h, p->nr_stacks))
		return -ENOMEM;
	memcpy(p->stack_pool + p->pool_len, frames, nr * sizeof(uint32_t));
	p->stack_off[p->nr_stacks] = p->pool_len;
	p->stack_len[p->nr_stacks] = nr;
	p->pool_len += nr;
	return p->nr_stacks++;
}

static uint64_t sample_hash(uint32_t pid, uint32_t tid, uint32_t kind, uint32_t stack)
{
	return bp_hash_u64(((uint64_t)pid << 32 | tid) ^ bp_hash_u64((uint64_t)kind << 32 | stack));
}

static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_sample *a = &((const struct bp_profile *)ctx)->samples[idx];
	const struct bp_sample *b = key;

	return a->pid == b->pid && a->tid == b->tid && a->kind == b->kind && a->stack == b->stack;
}

int bp_profile__add(struct bp_profile *p, uint32_t pid, uint32_t tid, enum bp_kind kind,
		    uint32_t stack, uint64_t count, uint64_t ns)
{
	struct bp_sample k = { .pid = pid, .tid = tid, .stack = stack, .kind = kind };
	uint64_t h = sample_hash(pid, tid, kind, stack);
	uint32_t idx;

	if (bp_htab_find(&p->sample_h, h, sample_eq, p, &k, &idx) == 0) {
		p->samples[idx].count += count;
		p->samples[idx].ns += ns;
		return 0;
	}
	if (grow((void **)&p->samples, &p->cap_samples, p->nr_samples + 1, sizeof(*p->samples)))
		return -ENOMEM;
	if (bp_htab_insert(&p->sample_h, h, p->nr_samples))
		return -ENOMEM;
	k.count = count;
	k.ns = ns;
	p->samples[p->nr_samples++] = k;
	return 0;
}

int bp_profile__restack(struct bp_profile *p, const uint32_t *map)
{
	struct bp_sample *old = p->samples;
	uint32_t i, nr = p->nr_samples, cap = p->cap_samples;
	struct bp_htab h = p->sample_h;

	p->samples = NULL;
	p->nr_samples = p->cap_samples = 0;
	memset(&p->sample_h, 0, sizeof(p->sample_h));
	for (i = 0; i < nr; i++) {
		if (bp_profile__add(p, old[i].pid, old[i].tid, old[i].kind, map[old[i].stack],
				    old[i].count, old[i].ns)) {
			free(p->samples);
			bp_htab_free(&p->sample_h);
			p->samples = old;
			p->nr_samples = nr;
			p->cap_samples = cap;
			p->sample_h = h;
			return -ENOMEM;
		}
	}
	free(old);
	bp_htab_free(&h);
	return 0;
}

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct bp_profile *)ctx)->procs[idx]->pid == *(const uint32_t *)key;
}

struct bp_proc *bp_profile__proc(struct bp_profile *p, uint32_t pid, bool create)
{
	struct bp_proc *proc;
	uint64_t h = bp_hash_u64(pid);
	uint32_t idx;

	if (bp_htab_find(&p->proc_h, h, proc_eq, p, &pid, &idx) == 0)
		return p->procs[idx];
	if (!create)
		return NULL;
	if (grow((void **)&p->procs, &p->cap_procs, p->nr_procs + 1, sizeof(*p->procs)))
		return NULL;
	proc = calloc(1, sizeof(*proc));
	if (!proc)
		return NULL;
	if (bp_htab_insert(&p->proc_h, h, p->nr_procs)) {
		free(proc);
		return NULL;
	}
	proc->pid = pid;
	p->procs[p->nr_procs++] = proc;
	return proc;
}

/* up to this many threads a scan beats an index, and costs no memory */
#define THREAD_SCAN	16

static bool thread_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct bp_proc *)ctx)->threads[idx].tid == *(const uint32_t *)key;
}

/* index the threads of a process that has outgrown the scan; 0 or -ENOMEM */
static int thread_index(struct bp_proc *proc)
{
	uint32_t i;

	for (i = 0; i < proc->nr_threads; i++) {
		if (bp_htab_insert(&proc->thread_h, bp_hash_u64(proc->threads[i].tid), i)) {
			bp_htab_free(&proc->thread_h);
			return -ENOMEM;
		}
	}
	return 0;
}

void bp_proc__add_sys(struct bp_proc *proc, uint64_t nr, uint64_t n)
{
	int k;

	for (k = 0; k < BP_SYS_TOP; k++) {
		if (proc->sys_nr[k] == nr + 1 || !proc->sys_nr[k]) {
			proc->sys_nr[k] = nr + 1;
			proc->sys_samples[k] += n;
			return;
		}
	}
	proc->sys_other += n;
}

struct bp_thread *bp_proc__thread(struct bp_proc *proc, uint32_t tid, const char *comm)
{
	uint64_t h = bp_hash_u64(tid);
	struct bp_thread *t;
	uint32_t idx;

	/* a search, not a scan, for a process with thousands of threads */
	if (proc->nr_threads <= THREAD_SCAN) {
		for (idx = 0; idx < proc->nr_threads; idx++)
			if (proc->threads[idx].tid == tid)
				return &proc->threads[idx];
	} else {
		if (!proc->thread_h.len && thread_index(proc))
			return NULL;
		if (bp_htab_find(&proc->thread_h, h, thread_eq, proc, &tid, &idx) == 0)
			return &proc->threads[idx];
	}
	/* doubling: one more each time copied them all, each time */
	if (proc->nr_threads == proc->cap_threads) {
		uint32_t ncap = proc->cap_threads ? proc->cap_threads * 2 : 1;

		if (proc->cap_threads > UINT32_MAX / 2)
			return NULL;
		t = reallocarray(proc->threads, ncap, sizeof(*t));
		if (!t)
			return NULL;
		proc->threads = t;
		proc->cap_threads = ncap;
	}
	if (proc->thread_h.len && bp_htab_insert(&proc->thread_h, h, proc->nr_threads))
		return NULL;
	t = &proc->threads[proc->nr_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
	return t;
}

struct bp_io_dev *bp_profile__io_dev(struct bp_profile *p, uint32_t dev, bool create)
{
	uint32_t i;

	/* a machine has a handful of block devices: a scan is fastest */
	for (i = 0; i < p->nr_io_devs; i++)
		if (p->io_devs[i].dev == dev)
			return &p->io_devs[i];
	if (!create)
		return NULL;
	if (grow((void **)&p->io_devs, &p->cap_io_devs, p->nr_io_devs + 1, sizeof(*p->io_devs)))
		return NULL;
	memset(&p->io_devs[p->nr_io_devs], 0, sizeof(p->io_devs[0]));
	p->io_devs[p->nr_io_devs].dev = dev;
	snprintf(p->io_devs[p->nr_io_devs].name, sizeof(p->io_devs[0].name), "%u:%u", dev >> 20,
		 dev & 0xfffff);
	return &p->io_devs[p->nr_io_devs++];
}

struct io_row_key {
	uint32_t dev, pid, op;
	bool kthread;
	const char *comm;
};

static bool io_row_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_io_row *r = &((const struct bp_profile *)ctx)->io_rows[idx];
	const struct io_row_key *k = key;

	/* kernel threads share pid 0 and are told apart by name */
	return r->dev == k->dev && r->pid == k->pid && r->op == k->op &&
	       r->kthread == k->kthread && (!k->kthread || !strcmp(r->comm, k->comm));
}

struct bp_io_row *bp_profile__io_row(struct bp_profile *p, uint32_t dev, uint32_t pid,
				     uint32_t op, bool kthread, const char *comm, bool create)
{
	struct io_row_key k = { dev, pid, op, kthread, comm ? comm : "" };
	uint64_t h = bp_hash_u64(((uint64_t)dev << 32 | pid) ^ ((uint64_t)op << 1 | kthread));
	struct bp_io_row *r;
	uint32_t idx;

	if (kthread)
		h = bp_hash_bytes(k.comm, strlen(k.comm), h);
	if (bp_htab_find(&p->io_row_h, h, io_row_eq, p, &k, &idx) == 0)
		return &p->io_rows[idx];
	if (!create)
		return NULL;
	if (grow((void **)&p->io_rows, &p->cap_io_rows, p->nr_io_rows + 1, sizeof(*p->io_rows)))
		return NULL;
	if (bp_htab_insert(&p->io_row_h, h, p->nr_io_rows))
		return NULL;
	r = &p->io_rows[p->nr_io_rows++];
	memset(r, 0, sizeof(*r));
	r->dev = dev;
	r->pid = pid;
	r->op = op;
	r->kthread = kthread;
	snprintf(r->comm, sizeof(r->comm), "%s", k.comm);
	return r;
}

static const char *const cgroup_trees[BP_CGROUP__TREES] = { "v2", "cpu", "memory", "systemd" };

const char *bp_cgroup_tree_name(uint32_t t)
{
	return t < BP_CGROUP__TREES ? cgroup_trees[t] : "?";
}

struct cgroup_key {
	uint32_t tree;
	const char *path;
};

static bool cgroup_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_cgroup *c = &((const struct bp_profile *)ctx)->cgroups[idx];
	const struct cgroup_key *k = key;

	return c->tree == k->tree && !strcmp(c->path, k->path);
}

struct bp_cgroup *bp_profile__cgroup(struct bp_profile *p, uint32_t tree, const char *path,
				     bool create)
{
	struct cgroup_key k = { tree, path };
	uint64_t h;
	struct bp_cgroup *c;
	uint32_t idx;

	if (!path)
		return NULL;
	h = bp_hash_bytes(path, strlen(path), 5 + tree);
	if (bp_htab_find(&p->cgroup_h, h, cgroup_eq, p, &k, &idx) == 0)
		return &p->cgroups[idx];
	if (!create)
		return NULL;
	if (grow((void **)&p->cgroups, &p->cap_cgroups, p->nr_cgroups + 1, sizeof(*p->cgroups)))
		return NULL;
	c = &p->cgroups[p->nr_cgroups];
	memset(c, 0, sizeof(*c));
	c->path = bp_profile__intern(p, path);
	if (!c->path || bp_htab_insert(&p->cgroup_h, h, p->nr_cgroups))
		return NULL;
	c->tree = tree;
	c->quota_us = -1;
	c->mem_max = c->mem_high = UINT64_MAX;
	p->nr_cgroups++;
	return c;
}

uint64_t bp_profile__proc_wall_ns(const struct bp_profile *p, const struct bp_proc *proc)
{
	uint64_t start = p->start_ns, end = p->end_ns;

	if (proc->start_ns > start)
		start = proc->start_ns;
	if (proc->end_ns && proc->end_ns < end)
		end = proc->end_ns;
	return end > start ? end - start : 0;
}

/*
 * An unnamed frame is labelled by its offset from a base: its mapping's
 * start ("[anon]+0x0" is JIT code at the first byte of its page, where a
 * CPU that fuses a loop's compare and branch puts every sample), or the
 * kernel's _text. Only an address outside every mapping ("[unknown]") and a
 * kernel address with no kallsyms to place it have none: an offset of 0
 * means no base only there.
 */
static bool frame_has_base(const struct bp_frame *f)
{
	return f->offset || (strcmp(f->module, "[unknown]") && strcmp(f->module, "[kernel]"));
}

const char *bp_frame_label(const struct bp_frame *f, bool kernel_suffix, char *buf, size_t len)
{
	const char *k = kernel_suffix && f->kernel ? "_[k]" : "";

	if (f->name && f->line && f->file) {
		const char *base = strrchr(f->file, '/');

		snprintf(buf, len, "%s (%s:%" PRIu32 ")%s", f->name, base ? base + 1 : f->file,
			 f->line, k);
	} else if (f->name) {
		snprintf(buf, len, "%s%s", f->name, k);
	} else if (!frame_has_base(f)) {
		snprintf(buf, len, "%s%s", f->module, k);
	} else {
		snprintf(buf, len, "%s+0x%" PRIx64 "%s", f->module, f->offset, k);
	}
	return buf;
}

const char *bp_func_label(const struct bp_frame *f, char *buf, size_t len)
{
	if (!f->name) {
		snprintf(buf, len, "unnamed code in %s", f->module);
		return buf;
	}
	snprintf(buf, len, "%s", f->name);
	return buf;
}
