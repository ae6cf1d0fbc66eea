// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "blockio.h"
#include "collect.h"
#include "loader.h"
#include "log.h"
#include "profile.h"
#include "symbols.h"

#define BATCH 256

/* an address -> frame id cache, kept as parallel arrays behind a bp_htab */
struct addr_cache {
	struct bp_htab h;
	uint64_t *keys;		/* ip, or pid << 48 ^ ip for user addresses */
	uint32_t *pids;
	uint32_t *frames;
	uint32_t len, cap;
};

struct stack_table {
	struct bp_htab h;
	uint64_t *keys;
	struct bp_stack *stacks;
	uint32_t len, cap;
};

struct bp_collect {
	struct bp_loader *l;
	struct bp_syms *syms;
	struct bp_profile *prof;
	bp_new_proc_fn new_proc;
	void *ctx;
	struct addr_cache kcache;	/* kernel text does not move: kept */
	struct addr_cache ucache;	/* per drain: user mappings change */
	struct stack_table kst, ust;
	uint32_t *frames;		/* scratch for one stack */
	struct bp_collect_stats st;
};

struct bp_collect *bp_collect__new(struct bp_loader *l, struct bp_syms *syms,
				   struct bp_profile *prof, bp_new_proc_fn fn, void *ctx)
{
	struct bp_collect *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->frames = calloc(2 * BP_MAX_STACK_DEPTH + 1, sizeof(*c->frames));
	if (!c->frames) {
		free(c);
		return NULL;
	}
	c->l = l;
	c->syms = syms;
	c->prof = prof;
	c->new_proc = fn;
	c->ctx = ctx;
	return c;
}

static void cache_free(struct addr_cache *a)
{
	bp_htab_free(&a->h);
	free(a->keys);
	free(a->pids);
	free(a->frames);
	memset(a, 0, sizeof(*a));
}

static void stack_table_free(struct stack_table *t)
{
	bp_htab_free(&t->h);
	free(t->keys);
	free(t->stacks);
	memset(t, 0, sizeof(*t));
}

void bp_collect__free(struct bp_collect *c)
{
	if (!c)
		return;
	cache_free(&c->kcache);
	cache_free(&c->ucache);
	stack_table_free(&c->kst);
	stack_table_free(&c->ust);
	free(c->frames);
	free(c);
}

const struct bp_collect_stats *bp_collect__stats(const struct bp_collect *c)
{
	return &c->st;
}

struct addr_key {
	uint32_t pid;
	uint64_t ip;
};

static bool addr_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct addr_cache *a = ctx;
	const struct addr_key *k = key;

	return a->keys[idx] == k->ip && a->pids[idx] == k->pid;
}

static int cache_get(struct addr_cache *a, uint32_t pid, uint64_t ip, uint32_t *frame)
{
	struct addr_key k = { pid, ip };
	uint32_t idx;
	int err;

	err = bp_htab_find(&a->h, bp_hash_u64(ip ^ ((uint64_t)pid << 40)), addr_eq, a, &k, &idx);
	if (!err)
		*frame = a->frames[idx];
	return err;
}

static int cache_put(struct addr_cache *a, uint32_t pid, uint64_t ip, uint32_t frame)
{
	if (a->len == a->cap) {
		uint32_t ncap = a->cap ? a->cap * 2 : 1024;
		uint64_t *k = realloc(a->keys, ncap * sizeof(*k));
		uint32_t *p, *f;

		if (!k)
			return -ENOMEM;
		a->keys = k;
		p = realloc(a->pids, ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		a->pids = p;
		f = realloc(a->frames, ncap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		a->frames = f;
		a->cap = ncap;
	}
	if (bp_htab_insert(&a->h, bp_hash_u64(ip ^ ((uint64_t)pid << 40)), a->len))
		return -ENOMEM;
	a->keys[a->len] = ip;
	a->pids[a->len] = pid;
	a->frames[a->len] = frame;
	a->len++;
	return 0;
}

static void cache_clear(struct addr_cache *a)
{
	bp_htab_clear(&a->h);
	a->len = 0;
}

#define NOT_CODE 0x80000000u

/*
 * The first address of a stack is where the CPU was; the others are return
 * addresses, which point after the call and may already be in the next
 * function, so they are looked up one byte earlier. Returns the frame id,
 * with NOT_CODE set when the address is not in executable memory.
 */
static int64_t frame_for(struct bp_collect *c, uint32_t pid, uint64_t ip, bool is_ret, bool kernel)
{
	struct addr_cache *a = kernel ? &c->kcache : &c->ucache;
	uint64_t addr = is_ret && ip ? ip - 1 : ip;
	struct bp_frame_info fi;
	struct bp_frame f = {};
	uint32_t id;
	int64_t fid;
	int err;

	if (kernel)
		pid = 0;
	if (cache_get(a, pid, addr, &id) == 0)
		return id;
	if (kernel)
		err = bp_syms__resolve_kernel(c->syms, addr, &fi);
	else
		err = bp_syms__resolve_user(c->syms, pid, addr, &fi);
	if (err) {
		c->st.frames_unnamed++;
		bp_dbg("pid %u: %s address %#llx unnamed (%s+%#llx)", pid,
		       kernel ? "kernel" : "user", (unsigned long long)addr, fi.module,
		       (unsigned long long)fi.offset);
	} else {
		c->st.frames_resolved++;
	}
	f.name = fi.name;
	f.module = fi.module;
	f.path = fi.path;
	f.build_id = fi.build_id;
	f.offset = fi.offset;
	f.kernel = kernel;
	fid = bp_profile__frame(c->prof, &f);
	if (fid < 0)
		return fid;
	if (!fi.code)
		fid |= NOT_CODE;
	if (cache_put(a, pid, addr, fid))
		return -ENOMEM;
	return fid;
}

static bool stack_key_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct stack_table *)ctx)->keys[idx] == *(const uint64_t *)key;
}

static const struct bp_stack *stack_lookup(struct stack_table *t, uint64_t h)
{
	uint32_t idx;

	if (!h || bp_htab_find(&t->h, bp_hash_u64(h), stack_key_eq, t, &h, &idx))
		return NULL;
	return &t->stacks[idx];
}

static int stack_table_reserve(struct stack_table *t, uint32_t more)
{
	uint32_t ncap = t->cap ? t->cap : 256;
	uint64_t *k;
	struct bp_stack *s;

	if (t->len + more <= t->cap)
		return 0;
	while (ncap < t->len + more)
		ncap *= 2;
	k = realloc(t->keys, ncap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	t->keys = k;
	s = realloc(t->stacks, (size_t)ncap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->stacks = s;
	t->cap = ncap;
	return 0;
}

/*
 * Read and delete every entry of a hash map. The programs write into the
 * other buffer meanwhile, so nothing is added behind our back. Falls back to
 * get_next_key + delete on kernels without batch operations.
 */
typedef int (*row_fn)(void *ctx, const void *key, const void *val);

static int drain_map(int fd, size_t ksz, size_t vsz, row_fn fn, void *ctx)
{
	char *keys, *vals, *prev = NULL, in[16], out[16];
	bool first = true, batch_ok = true;
	uint32_t count, i;
	int err = 0, ferr = 0, r;

	keys = malloc(BATCH * ksz);
	vals = malloc(BATCH * vsz);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (batch_ok) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		count = BATCH;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : in, out, keys, vals,
						      &count, &opts);
		if (err && err != -ENOENT) {
			/* 524: the kernel's internal ENOTSUPP */
			if (first && (err == -EINVAL || err == -EOPNOTSUPP || err == -524)) {
				batch_ok = false;
				err = 0;
				break;
			}
			goto out;
		}
		for (i = 0; i < count; i++) {
			r = fn(ctx, keys + i * ksz, vals + i * vsz);
			if (r && !ferr)
				ferr = r;
		}
		if (err == -ENOENT) {
			err = 0;
			goto out;
		}
		memcpy(in, out, sizeof(in));
		first = false;
	}

	/* fallback: one key at a time */
	for (;;) {
		err = bpf_map_get_next_key(fd, prev, keys);
		if (err) {
			err = err == -ENOENT ? 0 : err;
			break;
		}
		if (bpf_map_lookup_elem(fd, keys, vals) == 0) {
			r = fn(ctx, keys, vals);
			if (r && !ferr)
				ferr = r;
		}
		bpf_map_delete_elem(fd, keys);
		/* deleted keys restart the walk from the first key */
		prev = NULL;
	}
out:
	free(keys);
	free(vals);
	/* a row we could not store is reported, but the map is emptied anyway */
	return err ? err : ferr;
}

static int stack_row(void *ctx, const void *key, const void *val)
{
	struct stack_table *t = ctx;
	uint64_t h;

	if (stack_table_reserve(t, 1))
		return -ENOMEM;
	memcpy(&h, key, sizeof(h));
	if (bp_htab_insert(&t->h, bp_hash_u64(h), t->len))
		return -ENOMEM;
	t->keys[t->len] = h;
	memcpy(&t->stacks[t->len], val, sizeof(struct bp_stack));
	if (t->stacks[t->len].nr > BP_MAX_STACK_DEPTH)
		t->stacks[t->len].nr = BP_MAX_STACK_DEPTH;
	t->len++;
	return 0;
}

static int load_stacks(int fd, struct stack_table *t)
{
	bp_htab_clear(&t->h);
	t->len = 0;
	return drain_map(fd, sizeof(uint64_t), sizeof(struct bp_stack), stack_row, t);
}

static int oncpu_row(void *ctx, const void *key, const void *val)
{
	struct bp_collect *c = ctx;
	const struct bp_oncpu_key *k = key;
	const struct bp_oncpu_val *v = val;
	const struct bp_stack *us = stack_lookup(&c->ust, k->ustack);
	const struct bp_stack *ks = stack_lookup(&c->kst, k->kstack);
	char comm[BP_COMM_LEN];
	struct bp_proc *proc;
	uint32_t n = 0, i;
	int64_t id;

	c->st.rows++;
	if ((k->ustack && !us) || (k->kstack && !ks))
		c->st.missing_stacks++;

	proc = bp_profile__proc(c->prof, k->tgid, true);
	if (!proc)
		return -ENOMEM;
	memcpy(comm, v->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	if (!proc->have_meta && c->new_proc)
		c->new_proc(c->ctx, proc);
	if (!proc->comm[0] && k->tid == k->tgid)
		memcpy(proc->comm, comm, sizeof(comm));
	bp_proc__thread(proc, k->tid, comm);

	/*
	 * Root first: user frames outermost to innermost, then kernel frames.
	 * A frame-pointer walk through code built without frame pointers runs
	 * off into data; the first return address outside executable memory
	 * ends the real stack, and what lies beyond it is not frames at all.
	 */
	if (us) {
		uint32_t depth = us->nr;
		int64_t ids[BP_MAX_STACK_DEPTH];

		for (i = 0; i < us->nr; i++) {
			ids[i] = frame_for(c, k->tgid, us->ips[i], i > 0, false);
			if (ids[i] < 0)
				return ids[i];
			if (i > 0 && (ids[i] & NOT_CODE)) {
				depth = i;
				break;
			}
		}
		if (depth < us->nr) {
			struct bp_frame t = { .name = "[truncated]", .module = "[unknown]" };

			c->st.user_stacks_cut++;
			id = bp_profile__frame(c->prof, &t);
			if (id < 0)
				return id;
			c->frames[n++] = id;
		}
		for (i = depth; i-- > 0;)
			c->frames[n++] = ids[i] & ~(int64_t)NOT_CODE;
	}
	if (ks) {
		for (i = ks->nr; i-- > 0;) {
			id = frame_for(c, k->tgid, ks->ips[i], i > 0, true);
			if (id < 0)
				return id;
			c->frames[n++] = id & ~(int64_t)NOT_CODE;
		}
	}
	if (!n) {
		struct bp_frame f = { .name = "[no stack]", .module = "[unknown]" };

		id = bp_profile__frame(c->prof, &f);
		if (id < 0)
			return id;
		c->frames[n++] = id;
	}
	id = bp_profile__stack(c->prof, c->frames, n);
	if (id < 0)
		return id;
	return bp_profile__add(c->prof, k->tgid, k->tid, BP_KIND_ONCPU, id, v->samples, v->ns);
}

int bp_collect__drain(struct bp_collect *c)
{
	int idx, err;

	idx = bp_loader__flip(c->l);
	c->st.drains++;
	cache_clear(&c->ucache);
	err = load_stacks(bp_loader__stacks_fd(c->l, idx, false), &c->kst);
	if (!err)
		err = load_stacks(bp_loader__stacks_fd(c->l, idx, true), &c->ust);
	if (!err)
		err = drain_map(bp_loader__oncpu_fd(c->l, idx), sizeof(struct bp_oncpu_key),
				sizeof(struct bp_oncpu_val), oncpu_row, c);
	if (err) {
		bp_err("failed to drain the on-CPU maps: %s", strerror(-err));
		return err;
	}
	if (c->l->blockio) {
		err = bp_blockio__drain(c->l->blockio, idx, c->prof);
		if (err)
			bp_err("failed to drain the block IO maps: %s", strerror(-err));
	}
	return err;
}
