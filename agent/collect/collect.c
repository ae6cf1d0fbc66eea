// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "collect/blockio.h"
#include "collect/collect.h"
#include "collect/drainpol.h"
#include "collect/loader.h"
#include "util/log.h"
#include "collect/mapdrain.h"
#include "collect/python.h"
#include "collect/rlang.h"
#include "collect/sampfold.h"
#include "rstack.h"
#include "model/profile.h"
#include "model/waits.h"
#include "symbolize/dwarf_lines.h"
#include "symbolize/symbols.h"

/*
 * An address -> frames cache, kept as parallel arrays behind a bp_htab: an
 * address is one frame, or several where functions were inlined into it
 * (a run of ids in pool, innermost first).
 */
struct addr_cache {
	struct bp_htab h;
	uint64_t *keys;		/* ip, or pid << 48 ^ ip for user addresses */
	uint32_t *pids;
	uint32_t *frames;	/* offset in pool */
	uint8_t *counts;	/* frames; NOT_CODE_BIT: not executable memory */
	/*
	 * User addresses: the snapshot of the process's maps they were named
	 * against (bp_syms__snapshot_ns(), 0: good for one drain only), and
	 * the drain that named them.
	 */
	uint64_t *snaps;
	uint32_t *drains;
	uint32_t len, cap;
	uint32_t *pool;
	uint32_t pool_len, pool_cap;
};

/* frames one address may expand to (inlined functions, then the function) */
#define ADDR_FRAMES	BP_DWARF_INLINE_MAX
/* the user part of a stack with its Python frames: inlined native frames, a marker, Python's */
#define MERGED_MAX	((ADDR_FRAMES + 1) * BP_MAX_STACK_DEPTH + 2)
#define NOT_CODE_BIT	0x80
/*
 * User addresses kept across drains: a drain of the same stacks named them
 * all again (a quarter of record -a's CPU under a steady load). Past this
 * many, the cache starts over: dead processes' addresses are never freed
 * one by one. ~40 bytes each.
 */
#define UCACHE_MAX	65536

/*
 * The stacks of one drain, stored compactly: a map row is a whole struct
 * bp_stack (127 frames, 1 KiB), most stacks use a tenth of it, and the
 * table kept its largest drain's size for the agent's lifetime.
 */
struct stack_table {
	struct bp_htab h;
	uint64_t *keys;
	uint32_t *at;		/* offset of the frames in ips */
	uint32_t *flags;
	uint8_t *nr;
	uint32_t len, cap;
	uint64_t *ips;
	uint32_t ips_len, ips_cap;
};

/*
 * The BPF side reports cumulative totals per thread and process; the
 * profile being filled may be a one-second slice of a continuous recording.
 * A baseline per thread (and process) turns each report into what happened
 * since the previous one. Entries of exited threads are dropped.
 */
struct base {
	uint32_t id;		/* tid, or tgid for a process; 0: dropped */
	uint32_t kind;		/* BP_REC_THREAD or BP_REC_PROC */
	uint64_t oncpu_ns, steal_ns, switches, wakeups, wake_lat_ns;
	uint64_t rchar, wchar, syscr, syscw;
	uint64_t hist[BP_HIST_SLOTS];	/* wakeup latency; for a process: timeline ns */
	uint64_t turn_ns, want_ns;	/* a process's turn-taking (bp_proc_rec) */
};

struct bases {
	struct bp_htab h;
	struct base *v;
	uint32_t len, cap, dead;
};

struct bp_collect {
	struct bp_loader *l;
	uint64_t cut_ns;		/* the last full drain's flip: bp_collect__cut_ns() */
	struct bp_drain_buf dbuf;	/* the drains' batch buffers */
	struct bp_syms *syms;
	struct bp_profile *prof;
	bp_new_proc_fn new_proc;
	void *ctx;
	struct addr_cache kcache;	/* kernel text does not move: kept */
	struct addr_cache ucache;	/* while the process's maps are the same */
	struct stack_table kst, ust, pst;
	struct bp_python *py;		/* Python stacks merged in, or NULL */
	struct bp_rlang *rl;		/* R stacks merged in, or NULL */
	struct bp_stack us, ks, ps;	/* the stacks of the row being built */
	uint32_t *frames;		/* scratch for one stack */
	uint32_t *merged;		/* its user part with the Python frames */
	struct bases base;
	struct bp_collect_stats st;
	struct bp_drainpol pol;		/* when the agent drains */
	struct bp_sampfold fold;	/* the sample slots' records into rows */
};

/*
 * The memory probe wants each busy process's CPU rate at most 3 s old and
 * calls a process busy from a quarter of a CPU (proc/memprobe.h defaults):
 * while the samples say some process may be, a drain every 2 s.
 */
#define BUSY_SHARE	0.25
#define BUSY_EVERY_S	2.0

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void on_record(void *ctx, const void *rec, size_t len);
static int on_sample(void *ctx, const struct bp_oncpu_rec *rec);

struct bp_collect *bp_collect__new(struct bp_loader *l, struct bp_syms *syms,
				   struct bp_profile *prof, bp_new_proc_fn fn, void *ctx)
{
	struct bp_collect *c = calloc(1, sizeof(*c));
	uint32_t entries[BP_PEND__MAX];

	if (!c)
		return NULL;
	/*
	 * User frames (each address up to ADDR_FRAMES with its inlined calls,
	 * a [truncated] marker, Python frames merged in), then kernel frames,
	 * or the one [no stack] frame
	 */
	c->frames = calloc(MERGED_MAX + BP_MAX_STACK_DEPTH + 1, sizeof(*c->frames));
	c->merged = calloc(MERGED_MAX, sizeof(*c->merged));
	if (!c->frames || !c->merged) {
		free(c->frames);
		free(c);
		return NULL;
	}
	c->l = l;
	c->syms = syms;
	c->prof = prof;
	c->new_proc = fn;
	c->ctx = ctx;
	bp_loader__pend_entries(l, entries);
	bp_drainpol__init(&c->pol, entries, l->hz * BUSY_SHARE, BUSY_EVERY_S);
	bp_loader__set_rec_fn(l, on_record, c);
	bp_loader__set_sample_fn(l, on_sample, c);
	return c;
}

static void cache_free(struct addr_cache *a)
{
	bp_htab_free(&a->h);
	free(a->keys);
	free(a->pids);
	free(a->frames);
	free(a->counts);
	free(a->snaps);
	free(a->drains);
	free(a->pool);
	memset(a, 0, sizeof(*a));
}

static void stack_table_free(struct stack_table *t)
{
	bp_htab_free(&t->h);
	free(t->keys);
	free(t->at);
	free(t->flags);
	free(t->nr);
	free(t->ips);
	memset(t, 0, sizeof(*t));
}

void bp_collect__free(struct bp_collect *c)
{
	if (!c)
		return;
	bp_loader__set_rec_fn(c->l, NULL, NULL);
	bp_loader__set_sample_fn(c->l, NULL, NULL);
	bp_sampfold__free(&c->fold);
	bp_htab_free(&c->base.h);
	free(c->base.v);
	cache_free(&c->kcache);
	cache_free(&c->ucache);
	stack_table_free(&c->kst);
	stack_table_free(&c->ust);
	stack_table_free(&c->pst);
	bp_drain_buf_free(&c->dbuf);
	free(c->frames);
	free(c->merged);
	free(c);
}

uint64_t bp_collect__cut_ns(const struct bp_collect *c)
{
	return c->cut_ns;
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

/* where an address is in the cache: 0 and *idx, or -ENOENT */
static int cache_find(struct addr_cache *a, uint32_t pid, uint64_t ip, uint32_t *idx)
{
	struct addr_key k = { pid, ip };

	return bp_htab_find(&a->h, bp_hash_u64(ip ^ ((uint64_t)pid << 40)), addr_eq, a, &k, idx);
}

static int grow_u32(uint32_t **v, uint32_t *cap, uint32_t want)
{
	uint32_t ncap = *cap ? *cap : 1024;
	uint32_t *nv;

	if (want <= *cap)
		return 0;
	while (ncap < want)
		ncap *= 2;
	nv = reallocarray(*v, ncap, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

static int cache_grow(struct addr_cache *a)
{
	uint32_t ncap = a->cap ? a->cap * 2 : 1024;
	uint64_t *k, *sn;
	uint32_t *p, *f, *d;
	uint8_t *cn;

	k = reallocarray(a->keys, ncap, sizeof(*k));
	if (!k)
		return -ENOMEM;
	a->keys = k;
	p = reallocarray(a->pids, ncap, sizeof(*p));
	if (!p)
		return -ENOMEM;
	a->pids = p;
	f = reallocarray(a->frames, ncap, sizeof(*f));
	if (!f)
		return -ENOMEM;
	a->frames = f;
	cn = reallocarray(a->counts, ncap, sizeof(*cn));
	if (!cn)
		return -ENOMEM;
	a->counts = cn;
	sn = reallocarray(a->snaps, ncap, sizeof(*sn));
	if (!sn)
		return -ENOMEM;
	a->snaps = sn;
	d = reallocarray(a->drains, ncap, sizeof(*d));
	if (!d)
		return -ENOMEM;
	a->drains = d;
	a->cap = ncap;
	return 0;
}

/*
 * The frames of an address into entry idx (a new one when idx is a->len);
 * an entry named again gets new room in the pool, the old is left until the
 * cache is cleared.
 */
static int cache_set(struct addr_cache *a, uint32_t idx, uint32_t pid, uint64_t ip,
		     const uint32_t *ids, uint8_t count, uint64_t snap, uint32_t drain)
{
	uint32_t n = count & ~NOT_CODE_BIT;

	if (idx == a->len && a->len == a->cap && cache_grow(a))
		return -ENOMEM;
	if (grow_u32(&a->pool, &a->pool_cap, a->pool_len + n))
		return -ENOMEM;
	if (idx == a->len) {
		if (bp_htab_insert(&a->h, bp_hash_u64(ip ^ ((uint64_t)pid << 40)), a->len))
			return -ENOMEM;
		a->keys[idx] = ip;
		a->pids[idx] = pid;
		a->len++;
	}
	memcpy(a->pool + a->pool_len, ids, n * sizeof(*ids));
	a->frames[idx] = a->pool_len;
	a->counts[idx] = count;
	a->snaps[idx] = snap;
	a->drains[idx] = drain;
	a->pool_len += n;
	return 0;
}

static void cache_clear(struct addr_cache *a)
{
	bp_htab_clear(&a->h);
	a->len = 0;
	a->pool_len = 0;
}

static void fill_frame(struct bp_frame *f, const struct bp_frame_info *fi, bool kernel)
{
	memset(f, 0, sizeof(*f));
	f->name = fi->name;
	f->module = fi->module;
	f->path = fi->path;
	f->build_id = fi->build_id;
	f->offset = fi->offset;
	f->kernel = kernel;
	f->file = fi->file;
	f->line = fi->line;
	f->inlined = fi->inlined;
}

/* the frames at a user address of pid's current image (image -1) or a kept one */
static int user_frames(struct bp_collect *c, uint32_t pid, int image, uint64_t addr,
		       struct bp_frame_info *fi)
{
	if (image < 0)
		return bp_syms__resolve_user_inline(c->syms, pid, addr, fi, ADDR_FRAMES);
	return bp_syms__resolve_image_inline(c->syms, pid, (uint16_t)image, addr, fi, ADDR_FRAMES);
}

/*
 * The frames of one address, innermost first (functions inlined there,
 * then the function): the first address of a stack is where the CPU was;
 * the others are return addresses, which point after the call and may
 * already be in the next function (or on the next line), so they are
 * looked up one byte earlier. Returns how many ids (>= 1), or -ENOMEM;
 * *not_code when the address is not in executable memory. image: the
 * kept image of pid the address is in (symbols.h), or -1 for its current
 * one; a kept image's addresses are few (the samples an exec cut short)
 * and never cached: the cache knows a process's current maps only.
 */
static int frames_for(struct bp_collect *c, uint32_t pid, int image, uint64_t ip, bool is_ret,
		      bool kernel, uint64_t snap, uint32_t *ids, bool *not_code)
{
	struct addr_cache *a = kernel ? &c->kcache : &c->ucache;
	uint64_t addr = is_ret && ip ? ip - 1 : ip;
	struct bp_frame_info fi[ADDR_FRAMES];
	uint32_t drain = (uint32_t)c->st.drains, idx;
	struct bp_frame f;
	uint8_t count;
	int64_t fid;
	int n = 1, i, err;

	if (kernel)
		pid = 0;
	if (image < 0 && cache_find(a, pid, addr, &idx) == 0) {
		/*
		 * A user address named in an earlier drain holds while the
		 * process's maps are the snapshot it was named against.
		 */
		if (kernel || a->drains[idx] == drain || (a->snaps[idx] && a->snaps[idx] == snap)) {
			count = a->counts[idx];
			n = count & ~NOT_CODE_BIT;
			memcpy(ids, a->pool + a->frames[idx], n * sizeof(*ids));
			*not_code = count & NOT_CODE_BIT;
			return n;
		}
	} else {
		idx = a->len;
	}
	if (kernel) {
		err = bp_syms__resolve_kernel(c->syms, addr, &fi[0]);
	} else {
		n = user_frames(c, pid, image, addr, fi);
		/*
		 * A signal frame's return address is the trampoline's first
		 * byte (the kernel pushed it; nothing called): one byte back
		 * is the nop libc puts before __restore_rt, in no function.
		 */
		if (!fi[n - 1].name && is_ret && ip) {
			struct bp_frame_info at[ADDR_FRAMES];
			int k = user_frames(c, pid, image, ip, at);

			if (at[k - 1].name && !at[k - 1].sym_offset) {
				memcpy(fi, at, k * sizeof(*at));
				n = k;
			}
		}
		err = fi[n - 1].name ? 0 : -ENOENT;
	}
	if (err) {
		c->st.frames_unnamed++;
		bp_dbg("pid %u: %s address %#llx unnamed (%s+%#llx)", pid,
		       kernel ? "kernel" : "user", (unsigned long long)addr, fi[n - 1].module,
		       (unsigned long long)fi[n - 1].offset);
	} else {
		c->st.frames_resolved++;
	}
	for (i = 0; i < n; i++) {
		fill_frame(&f, &fi[i], kernel);
		fid = bp_profile__frame(c->prof, &f);
		if (fid < 0)
			return (int)fid;
		ids[i] = (uint32_t)fid;
	}
	*not_code = !fi[n - 1].code;
	if (image >= 0)
		return n;
	/*
	 * Only an address in a mapped file is named the same next drain (a
	 * JIT's perf map can name an address later, or another way), and
	 * left unnamed the same: a stripped program's hot loop is looked up
	 * once, not at every drain.
	 */
	snap = !kernel && fi[n - 1].path ? bp_syms__snapshot_ns(c->syms, pid) : 0;
	if (cache_set(a, idx, pid, addr, ids, (uint8_t)n | (*not_code ? NOT_CODE_BIT : 0), snap,
		      drain))
		return -ENOMEM;
	return n;
}

/* the one frame of a kernel address */
static int64_t kframe_for(struct bp_collect *c, uint64_t ip, bool is_ret)
{
	uint32_t id;
	bool nc;
	int n = frames_for(c, 0, -1, ip, is_ret, true, 0, &id, &nc);

	return n < 0 ? (int64_t)n : (int64_t)id;
}

static bool stack_key_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct stack_table *)ctx)->keys[idx] == *(const uint64_t *)key;
}

/* the stack of hash h, copied into out; NULL when the table lacks it */
static const struct bp_stack *stack_lookup(struct stack_table *t, uint64_t h,
					   struct bp_stack *out)
{
	uint32_t idx;

	if (!h || bp_htab_find(&t->h, bp_hash_u64(h), stack_key_eq, t, &h, &idx))
		return NULL;
	out->nr = t->nr[idx];
	out->flags = t->flags[idx];
	memcpy(out->ips, t->ips + t->at[idx], out->nr * sizeof(*out->ips));
	return out;
}

static int stack_table_reserve(struct stack_table *t, uint32_t nr)
{
	uint32_t ncap = t->cap ? t->cap : 256;
	uint64_t *k, *ips;
	uint32_t *a, *f;
	uint8_t *n;

	if (t->ips_len + nr > t->ips_cap) {
		uint32_t icap = t->ips_cap ? t->ips_cap : 4096;

		while (icap < t->ips_len + nr)
			icap *= 2;
		ips = reallocarray(t->ips, icap, sizeof(*ips));
		if (!ips)
			return -ENOMEM;
		t->ips = ips;
		t->ips_cap = icap;
	}
	if (t->len < t->cap)
		return 0;
	ncap = t->cap ? t->cap * 2 : 256;
	k = reallocarray(t->keys, ncap, sizeof(*k));
	if (!k)
		return -ENOMEM;
	t->keys = k;
	a = reallocarray(t->at, ncap, sizeof(*a));
	if (!a)
		return -ENOMEM;
	t->at = a;
	f = reallocarray(t->flags, ncap, sizeof(*f));
	if (!f)
		return -ENOMEM;
	t->flags = f;
	n = reallocarray(t->nr, ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->nr = n;
	t->cap = ncap;
	return 0;
}

/* a stack of nr frames (at most BP_MAX_STACK_DEPTH) under its hash h */
static int stack_add(struct stack_table *t, const void *key, uint32_t nr, uint32_t flags,
		     const __u64 *ips)
{
	uint64_t h;

	if (stack_table_reserve(t, nr))
		return -ENOMEM;
	memcpy(&h, key, sizeof(h));
	if (bp_htab_insert(&t->h, bp_hash_u64(h), t->len))
		return -ENOMEM;
	t->keys[t->len] = h;
	t->at[t->len] = t->ips_len;
	t->flags[t->len] = flags;
	t->nr[t->len] = (uint8_t)nr;
	memcpy(t->ips + t->ips_len, ips, nr * sizeof(*t->ips));
	t->ips_len += nr;
	t->len++;
	return 0;
}

static int stack_row(void *ctx, const void *key, const void *val)
{
	const struct bp_stack *s = val;

	return stack_add(ctx, key, s->nr > BP_MAX_STACK_DEPTH ? BP_MAX_STACK_DEPTH : s->nr,
			 s->flags, s->ips);
}

/* a struct bp_stack_short (boundprof.h), its nr bounded like any value's */
static int short_stack_row(void *ctx, const void *key, const void *val)
{
	const struct bp_stack_short *s = val;

	return stack_add(ctx, key, s->nr > BP_SHORT_STACK_DEPTH ? BP_SHORT_STACK_DEPTH : s->nr,
			 s->flags, s->ips);
}

static void stack_table_reset(struct stack_table *t)
{
	bp_htab_clear(&t->h);
	t->len = 0;
	t->ips_len = 0;
}

/* the Python stacks of a buffer (struct bp_stack, frames as Python frame ids) */
static int load_pystacks(struct bp_collect *c, int fd, struct stack_table *t)
{
	stack_table_reset(t);
	return bp_drain_map(fd, sizeof(uint64_t), sizeof(struct bp_stack), &c->dbuf, stack_row, t);
}

/* a buffer's stacks of one kind, short and long, into one table */
static int load_stacks(struct bp_collect *c, int idx, bool user, struct stack_table *t)
{
	int err;

	stack_table_reset(t);
	err = bp_drain_map(bp_loader__stacks_fd(c->l, idx, user, true), sizeof(uint64_t),
			   sizeof(struct bp_stack_short), &c->dbuf, short_stack_row, t);
	if (err)
		return err;
	return bp_drain_map(bp_loader__stacks_fd(c->l, idx, user, false), sizeof(uint64_t),
			    sizeof(struct bp_stack), &c->dbuf, stack_row, t);
}

/* the process of a row, with its metadata filled in on first sight */
static struct bp_proc *row_proc(struct bp_collect *c, uint32_t tgid)
{
	struct bp_proc *proc = bp_profile__proc(c->prof, tgid, true);

	if (proc && !proc->have_meta && c->new_proc)
		c->new_proc(c->ctx, proc);
	return proc;
}

/*
 * The profile stack for a (process, kernel, user, Python stack) row; <0:
 * -errno. uin: the user stack the row holds itself (NULL: the one uhash
 * names in the stack maps).
 */
static int64_t build_stack(struct bp_collect *c, uint32_t tgid, uint64_t khash, uint64_t uhash,
			   const struct bp_stack *uin, uint64_t pyhash)
{
	const struct bp_stack *us = uin ? uin : stack_lookup(&c->ust, uhash, &c->us);
	const struct bp_stack *ks = stack_lookup(&c->kst, khash, &c->ks);
	const struct bp_stack *ps = c->py ? stack_lookup(&c->pst, pyhash, &c->ps) : NULL;
	uint32_t n = 0, i;
	int64_t id;

	if ((uhash && !us) || (khash && !ks) || (pyhash && c->py && !ps))
		c->st.missing_stacks++;
	/*
	 * Root first: user frames outermost to innermost, then kernel frames.
	 * A frame-pointer walk through code built without frame pointers runs
	 * off into data; the first return address outside executable memory
	 * ends the real stack, and what lies beyond it is not frames at all.
	 */
	if (us) {
		uint32_t ids[(ADDR_FRAMES) * BP_MAX_STACK_DEPTH], at[BP_MAX_STACK_DEPTH + 1];
		uint64_t snap = bp_syms__snapshot_ns(c->syms, tgid);
		uint16_t img = us->flags >> BP_STACK_IMAGE_SHIFT;
		int image = bp_syms__kept_image(c->syms, tgid, img) ? img : -1;
		uint32_t depth = us->nr, pos = 0, j;
		bool nc;
		int k;

		for (i = 0; i < us->nr; i++) {
			at[i] = pos;
			k = frames_for(c, tgid, image, us->ips[i], i > 0, false, snap, ids + pos,
				       &nc);
			if (k < 0)
				return k;
			if (i > 0 && nc) {
				depth = i;
				break;
			}
			pos += k;
		}
		at[depth] = pos;
		/* or the unwinder stopped before the outermost frame */
		if (depth < us->nr || (us->flags & BP_STACK_CUT)) {
			struct bp_frame t = { .name = "[truncated]", .module = "[unknown]" };

			c->st.user_stacks_cut++;
			id = bp_profile__frame(c->prof, &t);
			if (id < 0)
				return id;
			c->frames[n++] = id;
		}
		/* each address's frames were innermost first: outermost first here */
		for (i = depth; i-- > 0;)
			for (j = at[i + 1]; j-- > at[i];)
				c->frames[n++] = ids[j];
	}
	/* R frames after the interpreter frames that ran them */
	if (ps && (ps->flags & BP_STACK_R)) {
		int m = c->rl ? bp_rlang__merge(c->rl, tgid, ps, c->frames, n, c->merged,
						MERGED_MAX) : (int)n;

		if (m < 0)
			return m;
		if (c->rl)
			memcpy(c->frames, c->merged, m * sizeof(*c->frames));
		n = m;
	} else if (ps) {
		/* Python frames in place of the interpreter frames that ran them */
		int m = bp_python__merge(c->py, tgid, ps, c->frames, n, c->merged, MERGED_MAX);

		if (m < 0)
			return m;
		memcpy(c->frames, c->merged, m * sizeof(*c->frames));
		n = m;
	}
	if (ks) {
		uint32_t skip = 0;

		/*
		 * Stacks taken in a tracepoint start inside the BPF machinery
		 * that ran us (bpf_prog_..., bpf_trace_run4): not the workload.
		 */
		while (skip < ks->nr && skip < 4) {
			const struct bp_frame *f;

			id = kframe_for(c, ks->ips[skip], skip > 0);
			if (id < 0)
				return id;
			f = &c->prof->frames[id];
			if (!f->name || (strncmp(f->name, "bpf_prog_", 9) &&
					 strncmp(f->name, "bpf_trace_run", 13) &&
					 strncmp(f->name, "__bpf_trace_", 12) &&
					 strncmp(f->name, "__traceiter_", 12)))
				break;
			skip++;
		}
		for (i = ks->nr; i-- > skip;) {
			id = kframe_for(c, ks->ips[i], i > 0);
			if (id < 0)
				return id;
			c->frames[n++] = id;
		}
	}
	if (!n) {
		struct bp_frame f = { .name = "[no stack]", .module = "[unknown]" };

		id = bp_profile__frame(c->prof, &f);
		if (id < 0)
			return id;
		c->frames[n++] = id;
	}
	return bp_profile__stack(c->prof, c->frames, n);
}

/*
 * The kernel entered through the system-call path: an exception (a page
 * fault) leaves its error code where a system call's number would be.
 */
static bool syscall_stack(const struct bp_profile *p, uint32_t stack)
{
	const uint32_t *fr;
	uint32_t nr, i;

	fr = bp_profile__stack_frames(p, stack, &nr);
	for (i = 0; i < nr; i++) {
		const struct bp_frame *f = &p->frames[fr[i]];

		if (!f->kernel || !f->name)
			continue;
		if (!strcmp(f->name, "do_syscall_64") || !strncmp(f->name, "entry_SYSCALL", 13) ||
		    !strcmp(f->name, "x64_sys_call"))
			return true;
		if (strstr(f->name, "exc_") || strstr(f->name, "irq") || strstr(f->name, "_fault"))
			return false;
	}
	return false;
}

static int oncpu_row(void *ctx, const void *key, const void *val)
{
	struct bp_collect *c = ctx;
	const struct bp_oncpu_key *k = key;
	const struct bp_oncpu_val *v = val;
	const struct bp_stack *uin = NULL;
	char comm[BP_COMM_LEN];
	struct bp_proc *proc;
	int64_t id;

	c->st.rows++;
	proc = row_proc(c, k->tgid);
	if (!proc)
		return -ENOMEM;
	memcpy(comm, v->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	if (!proc->comm[0] && k->tid == k->tgid)
		memcpy(proc->comm, comm, sizeof(comm));
	if (!bp_proc__thread(proc, k->tid, comm))
		return -ENOMEM;
	proc->last_drain_samples += v->samples;
	if (k->ustack && v->ustk.nr) {
		c->us.nr = v->ustk.nr > BP_SHORT_STACK_DEPTH ? BP_SHORT_STACK_DEPTH : v->ustk.nr;
		c->us.flags = v->ustk.flags;
		memcpy(c->us.ips, v->ustk.ips, c->us.nr * sizeof(*c->us.ips));
		uin = &c->us;
	}
	id = build_stack(c, k->tgid, k->kstack, k->ustack, uin, k->pystack);
	if (id < 0)
		return id;
	if (k->sysnr && syscall_stack(c->prof, (uint32_t)id))
		bp_proc__add_sys(proc, k->sysnr - 1, v->samples);
	if (c->py && !proc->python) {
		bool nogil = false;
		const char *ver = bp_python__version(c->py, k->tgid, &nogil);

		proc->python = bp_profile__intern(c->prof, ver);
		proc->python_free_threaded = nogil;
	}
	if (c->rl && !proc->r_version && k->pystack)
		proc->r_version = bp_profile__intern(c->prof, bp_rlang__version(c->rl, k->tgid));
	return bp_profile__add(c->prof, k->tgid, k->tid, BP_KIND_ONCPU, id, v->samples, v->ns);
}

static int on_sample(void *ctx, const struct bp_oncpu_rec *rec)
{
	struct bp_collect *c = ctx;

	return bp_sampfold__add(&c->fold, rec);
}

/* buffer idx's samples, folded, into the profile (before its kernel rows) */
static int drain_samples(struct bp_collect *c, int idx)
{
	uint32_t i;
	int err;

	/* empty: each drain resets it when done, failed or not */
	err = bp_loader__drain_samples(c->l, idx);
	for (i = 0; !err && i < c->fold.n; i++)
		err = oncpu_row(c, &c->fold.v[i].key, &c->fold.v[i].val);
	bp_sampfold__reset(&c->fold);
	return err;
}

/* the class of an off-CPU row: never running, which would make it on-CPU time */
static enum bp_kind kind_of(uint32_t state)
{
	enum bp_kind k = bp_kind_of_state(state);

	return k == BP_KIND_ONCPU ? BP_KIND_OTHER : k;
}

static int off_row(void *ctx, const void *key, const void *val)
{
	struct bp_collect *c = ctx;
	const struct bp_off_key *k = key;
	const struct bp_off_val *v = val;
	struct bp_proc *proc;
	struct bp_thread *t;
	int64_t id;

	c->st.off_rows++;
	proc = row_proc(c, k->tgid);
	if (!proc)
		return -ENOMEM;
	t = bp_proc__thread(proc, k->tid, NULL);
	if (!t)
		return -ENOMEM;
	if (k->flags & BP_OFF_GIL)
		t->gil_ns += v->ns;
	id = build_stack(c, k->tgid, k->kstack, k->ustack, NULL, 0);
	if (id < 0)
		return id;
	if (k->state == BP_TS_NET && k->side < BP_SIDE__MAX)
		proc->net_side_ns[k->side] += v->ns;
	else if (k->state == BP_TS_PIPE && k->dir < BP_DIR__MAX)
		proc->pipe_dir_ns[k->dir] += v->ns;
	return bp_profile__add(c->prof, k->tgid, k->tid, kind_of(k->state), id, v->count, v->ns);
}

static int wake_row(void *ctx, const void *key, const void *val)
{
	struct bp_collect *c = ctx;
	const struct bp_wake_key *k = key;
	const struct bp_wake_val *v = val;
	struct bp_wake_row rk = {
		.pid = k->tgid, .waker_pid = k->waker_tgid, .waker_tid = k->waker_tid,
		.state = k->state, .dir = k->dir, .ctx = k->ctx,
	};
	struct bp_wake_row *r;

	memcpy(rk.comm, v->comm, sizeof(rk.comm));
	rk.comm[sizeof(rk.comm) - 1] = '\0';
	if (!row_proc(c, k->tgid))
		return -ENOMEM;
	r = bp_profile__wake_row(c->prof, &rk, true);
	if (!r)
		return -ENOMEM;
	r->ns += v->ns;
	r->count += v->count;
	return 0;
}

static int net_row(void *ctx, const void *key, const void *val)
{
	struct bp_collect *c = ctx;
	const struct bp_net_key *k = key;
	const struct bp_net_val *v = val;
	struct bp_net_row rk = {
		.pid = k->tgid, .family = k->family, .port = k->port, .lport = k->lport,
		.proto = k->proto, .side = k->side,
	};
	struct bp_net_row *r;
	int i;

	memcpy(rk.addr, k->addr, sizeof(rk.addr));
	if (!row_proc(c, k->tgid))
		return -ENOMEM;
	r = bp_profile__net_row(c->prof, &rk, true);
	if (!r)
		return -ENOMEM;
	r->wait_ns += v->wait_ns;
	r->waits += v->waits;
	r->rx_bytes += v->rx_bytes;
	r->tx_bytes += v->tx_bytes;
	for (i = 0; i < BP_FHIST_SLOTS; i++)
		r->hist[i] += v->hist[i];
	return 0;
}

static uint64_t base_hash(uint32_t kind, uint32_t id)
{
	return bp_hash_u64((uint64_t)kind << 32 | id);
}

static bool base_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct base *b = &((const struct bases *)ctx)->v[idx], *k = key;

	return b->id == k->id && b->kind == k->kind;
}

/*
 * Drop the dead entries: at every rotation, which the agent does once a
 * window now, so that a window's exited threads leave with it.
 */
static void bases_compact(struct bases *bs)
{
	uint32_t i, n = 0;

	if (!bs->dead)
		return;
	bp_htab_clear(&bs->h);
	for (i = 0; i < bs->len; i++) {
		if (!bs->v[i].id)
			continue;
		bs->v[n] = bs->v[i];
		/* the table was cleared and grows back as large: insertion cannot fail */
		bp_htab_insert(&bs->h, base_hash(bs->v[n].kind, bs->v[n].id), n);
		n++;
	}
	bs->len = n;
	bs->dead = 0;
	/* a burst of threads is over: its room goes back too */
	if (bs->cap > 256 && bs->cap >= 4 * n) {
		uint32_t ncap = bs->cap;
		struct base *nv;

		while (ncap > 256 && ncap >= 4 * n)
			ncap /= 2;
		nv = realloc(bs->v, ncap * sizeof(*nv));
		if (nv) {
			bs->v = nv;
			bs->cap = ncap;
		}
	}
}

static struct base *base_get(struct bases *bs, uint32_t kind, uint32_t id)
{
	struct base key = { .id = id, .kind = kind };
	uint64_t h = base_hash(kind, id);
	uint32_t idx;

	if (!bp_htab_find(&bs->h, h, base_eq, bs, &key, &idx))
		return &bs->v[idx];
	if (bs->len == bs->cap) {
		uint32_t ncap = bs->cap ? bs->cap * 2 : 256;
		struct base *nv = realloc(bs->v, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		bs->v = nv;
		bs->cap = ncap;
	}
	if (bp_htab_insert(&bs->h, h, bs->len))
		return NULL;
	bs->v[bs->len] = key;
	return &bs->v[bs->len++];
}

static void base_drop(struct bases *bs, struct base *b)
{
	b->id = 0;
	bs->dead++;
}

static uint64_t since(uint64_t now, uint64_t *then)
{
	uint64_t d = now >= *then ? now - *then : 0;

	*then = now;
	return d;
}

/*
 * The process of a totals record. An exit record comes from the event ring
 * at the agent's next look, while the process may still be a zombie whose
 * /proc answers: its facts are not read there (half of the agent's work
 * for 20 exits a second), but with every other process's at the end of the
 * window (settle_facts()), as when the records waited for a full drain.
 */
static struct bp_proc *rec_proc(struct bp_collect *c, uint32_t tgid, uint64_t end_ns)
{
	return end_ns ? bp_profile__proc(c->prof, tgid, true) : row_proc(c, tgid);
}

/* cumulative totals from the task iterator and the exit records, as increments */
static void on_record(void *ctx, const void *rec, size_t len)
{
	struct bp_collect *c = ctx;
	uint32_t kind, i;
	struct bp_proc *proc;
	struct base *b;

	memcpy(&kind, rec, sizeof(kind));
	if (kind == BP_REC_THREAD && len >= sizeof(struct bp_thr_rec)) {
		const struct bp_thr_rec *r = rec;
		char comm[BP_COMM_LEN];
		struct bp_thread *t;

		proc = rec_proc(c, r->tgid, r->end_ns);
		b = base_get(&c->base, BP_REC_THREAD, r->tid);
		if (!proc || !b)
			return;
		memcpy(comm, r->comm, sizeof(comm));
		comm[sizeof(comm) - 1] = '\0';
		/*
		 * The leader's name now, as ps shows it: a worker that renames
		 * itself after fork (prctl, as stress-ng's do) was named by
		 * the sample that came first.
		 */
		if (r->tid == r->tgid && comm[0])
			memcpy(proc->comm, comm, sizeof(proc->comm));
		t = bp_proc__thread(proc, r->tid, comm);
		if (!t)
			return;
		if (!t->have_totals || r->start_ns < t->start_ns)
			t->start_ns = r->start_ns;
		t->have_totals = true;
		t->state = r->state;
		t->end_ns = r->end_ns;
		t->exited = r->end_ns != 0;
		t->oncpu_ns += since(r->oncpu_ns, &b->oncpu_ns);
		t->steal_ns += since(r->steal_ns, &b->steal_ns);
		t->switches += since(r->switches, &b->switches);
		t->wakeups += since(r->wakeups, &b->wakeups);
		t->wake_lat_ns += since(r->wake_lat_ns, &b->wake_lat_ns);
		/* a maximum cannot be split: it is the thread's so far */
		t->wake_lat_max = r->wake_lat_max;
		for (i = 0; i < BP_HIST_SLOTS; i++)
			t->wake_hist[i] += since(r->wake_hist[i], &b->hist[i]);
		t->rchar += since(r->rchar, &b->rchar);
		t->wchar += since(r->wchar, &b->wchar);
		t->syscr += since(r->syscr, &b->syscr);
		t->syscw += since(r->syscw, &b->syscw);
		if (r->end_ns)
			base_drop(&c->base, b);
		c->st.thread_records++;
	} else if (kind == BP_REC_PROC && len >= sizeof(struct bp_proc_rec)) {
		const struct bp_proc_rec *r = rec;

		proc = rec_proc(c, r->tgid, r->end_ns);
		b = base_get(&c->base, BP_REC_PROC, r->tgid);
		if (!proc || !b)
			return;
		proc->have_timeline = true;
		for (i = 0; i < BP_TS__MAX; i++)
			proc->tl_ns[i] += since(r->ns[i], &b->hist[i]);
		proc->tl_idle_ns += since(r->idle_ns, &b->oncpu_ns);
		proc->turn_ns += since(r->turn_ns, &b->turn_ns);
		proc->want_ns += since(r->want_ns, &b->want_ns);
		/*
		 * Written at the exit of the process's last thread: its end,
		 * whether or not an exit event comes. None comes for a process
		 * first sampled on its way out (oncpu.bpf.c keeps no entry for
		 * it), a ninth of the sampled children of a 20-a-second churn,
		 * which were reported alive to the window's end.
		 */
		if (r->end_ns) {
			proc->exited = true;
			if (!proc->end_ns || proc->end_ns > r->end_ns)
				proc->end_ns = r->end_ns;
			base_drop(&c->base, b);
		}
	}
}

int bp_collect__track(struct bp_collect *c)
{
	struct bp_drain_pend at;

	bp_loader__pending(c->l, &at);
	bp_drainpol__flipped(&c->pol, &at, mono_ns(), true);
	return bp_loader__iterate(c->l, on_record, c);
}

enum bp_drain_need bp_collect__due(struct bp_collect *c, bool forced)
{
	struct bp_drain_pend now;

	bp_loader__pending(c->l, &now);
	return bp_drainpol__decide(&c->pol, &now, mono_ns(), forced);
}

const struct bp_drainpol *bp_collect__policy(const struct bp_collect *c)
{
	return &c->pol;
}

void bp_collect__set_python(struct bp_collect *c, struct bp_python *py)
{
	c->py = py;
	if (py)
		bp_python__set_profile(py, c->prof);
}

void bp_collect__set_rlang(struct bp_collect *c, struct bp_rlang *rl)
{
	c->rl = rl;
	if (rl)
		bp_rlang__set_profile(rl, c->prof);
}

void bp_collect__set_profile(struct bp_collect *c, struct bp_profile *prof)
{
	c->prof = prof;
	if (c->rl)
		bp_rlang__set_profile(c->rl, prof);
	if (c->py)
		bp_python__set_profile(c->py, prof);
	/* the caches hold frame ids of the old profile */
	cache_clear(&c->kcache);
	cache_clear(&c->ucache);
	bases_compact(&c->base);
}

int bp_collect__drain(struct bp_collect *c, bool full)
{
	struct bp_drain_pend at;
	uint64_t rows, off_rows;
	uint32_t i;
	int idx, err;

	/* before the flip: what comes in meanwhile counts toward the next drain */
	bp_loader__pending(c->l, &at);
	if (full) {
		/* close open intervals into the current buffer before leaving it */
		err = bp_loader__iterate(c->l, on_record, c);
		if (err)
			return err;
		/* samples since the last full drain: what the memory probe picks by */
		for (i = 0; i < c->prof->nr_procs; i++)
			c->prof->procs[i]->last_drain_samples = 0;
	} else {
		c->st.light_drains++;
	}
	if (full)
		c->cut_ns = mono_ns();
	idx = bp_loader__flip(c->l);
	bp_drainpol__flipped(&c->pol, &at, mono_ns(), full);
	/* the code objects of the Python stacks in the buffer: sent before the flip */
	bp_loader__consume_py(c->l);
	c->st.drains++;
	rows = c->st.rows;
	off_rows = c->st.off_rows;
	if (c->ucache.len > UCACHE_MAX || c->ucache.pool_len > 4 * UCACHE_MAX)
		cache_clear(&c->ucache);
	err = load_stacks(c, idx, false, &c->kst);
	if (!err)
		err = load_stacks(c, idx, true, &c->ust);
	if (!err)
		err = load_pystacks(c, bp_loader__pystacks_fd(c->l, idx), &c->pst);
	if (!err)
		err = drain_samples(c, idx);
	if (!err)
		err = bp_drain_map(bp_loader__oncpu_fd(c->l, idx), sizeof(struct bp_oncpu_key),
				sizeof(struct bp_oncpu_val), &c->dbuf, oncpu_row, c);
	if (err) {
		bp_err("failed to drain the on-CPU maps: %s", strerror(-err));
		return err;
	}
	if (c->l->offcpu) {
		err = bp_drain_map(bp_loader__off_fd(c->l, idx), sizeof(struct bp_off_key),
				sizeof(struct bp_off_val), &c->dbuf, off_row, c);
		if (!err)
			err = bp_drain_map(bp_loader__wake_fd(c->l, idx), sizeof(struct bp_wake_key),
					   sizeof(struct bp_wake_val), &c->dbuf, wake_row, c);
		if (!err)
			err = bp_drain_map(bp_loader__net_fd(c->l, idx), sizeof(struct bp_net_key),
					   sizeof(struct bp_net_val), &c->dbuf, net_row, c);
		if (err) {
			bp_err("failed to drain the off-CPU maps: %s", strerror(-err));
			return err;
		}
	}
	if (c->py)
		bp_python__drain_done(c->py);
	c->st.last_rows = c->st.rows - rows;
	c->st.last_off_rows = c->st.off_rows - off_rows;
	c->st.last_kstacks = c->kst.len;
	c->st.last_ustacks = c->ust.len;
	if (c->l->blockio) {
		err = bp_blockio__drain(c->l->blockio, idx, c->prof);
		if (err)
			bp_err("failed to drain the block IO maps: %s", strerror(-err));
	}
	/* the samples of replaced images were all in the buffer just drained */
	bp_syms__drop_images(c->syms);
	return err;
}
