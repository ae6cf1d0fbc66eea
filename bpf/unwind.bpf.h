/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user stack walker: from a thread's user registers, frame by frame
 * with the unwind rows userspace built from each file's .eh_frame
 * (docs/symbols.md), into a struct bp_stack that is then hashed and stored
 * like any other. Code without rows is walked by its frame pointers.
 *
 * One bpf_loop() iteration per frame (5.17+), the state in the caller's
 * stack; the searches inside are bounded by the map sizes.
 */
#ifndef BP_UNWIND_BPF_H
#define BP_UNWIND_BPF_H

#include "common.bpf.h"

static __always_inline long bp_uw_read(__u64 addr, __u64 *dst)
{
	return bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}
#define BP_UW_READ(ctx, addr, dst)	bp_uw_read(addr, dst)
#include "unwind.h"

/*
 * every file's rows, one contiguous run each, in chunks of BP_UW_CHUNK_ROWS
 * rows: userspace adds a chunk when a table first needs its slots, so the
 * kernel memory follows the tables loaded (a 16-MiB array preallocated
 * whole was 58% of the maps' memory; a busy machine's tables fill 7 MiB).
 * Userspace writes a file's rows through a mapping of a chunk's pages: a
 * batch update costs ~1.5 us a row in the kernel (a libc is 23k rows).
 */
struct bp_uw_chunk_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	/*
	 * fixed: libbpf (1.1) cannot resize an inner map's template, and a
	 * template that lets sizes differ (BPF_F_INNER_MAP) costs every
	 * lookup a helper call
	 */
	__uint(max_entries, BP_UW_CHUNK_ROWS);
	__type(key, __u32);
	/* a struct bp_uw_row: named only here, clang gives it no body in BTF */
	__type(value, __u64);
};

struct bp_uw_rows_map {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);		/* chunks in the budget, set from userspace */
	__type(key, __u32);
	__array(values, struct bp_uw_chunk_map);
};
BP_EXTERN struct bp_uw_rows_map unwind_rows SEC(".maps");

/*
 * row idx of unwind_rows, or NULL where no chunk holds it yet. k is the
 * caller's one key for all its lookups: a key of their own for each copy
 * inlined took stack slots past the 512 bytes the deepest call chain may
 * use.
 */
static __always_inline struct bp_uw_row *bp_uw_row_at(__u32 idx, __u32 *k)
{
	void *chunk;

	*k = idx >> BP_UW_CHUNK_SHIFT;
	chunk = bpf_map_lookup_elem(&unwind_rows, k);
	if (!chunk)
		return NULL;
	*k = idx & (BP_UW_CHUNK_ROWS - 1);
	return (struct bp_uw_row *)bpf_map_lookup_elem(chunk, k);
}

/* tgid -> its executable mappings; written by userspace, dropped at exec and exit */
struct bp_uw_procs_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);	/* sized from userspace before load */
	__type(key, __u32);
	__type(value, struct bp_uw_proc);
};
BP_EXTERN struct bp_uw_procs_map unwind_procs SEC(".maps");

/*
 * (device, inode) -> the table of every file whose rows are loaded: for an
 * address in a mapping the process's list does not have yet, the walker
 * finds the mapping itself (the bridge, bp_uw_frame()). ld.so maps a program's
 * libraries a moment after the exec whose list userspace wrote, and a miss
 * took a round trip through a busy event loop (40 ms alone, 100 ms and more
 * under perf): libc and libm are loaded for some other process already.
 * Written by userspace with the tables.
 */
struct bp_uw_files_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1024);	/* sized from userspace before load */
	__type(key, struct bp_uw_file_key);
	__type(value, struct bp_uw_file);
};
BP_EXTERN struct bp_uw_files_map unwind_files SEC(".maps");

/*
 * (tgid, slot) -> a mapping the bridge found, for the process's next
 * walks. Not preallocated: an update allocates a new element and frees the
 * old one after a grace period, so a walk on another CPU never reads one
 * half rewritten. Dropped at exec and exit (proc.bpf.c); an entry of an
 * older image or older mappings is known by its mm and exec_vm.
 */
struct bp_uw_bridges_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);	/* sized from userspace before load */
	__type(key, struct bp_uw_bridge_key);
	__type(value, struct bp_uw_bridge);
};
BP_EXTERN struct bp_uw_bridges_map unwind_bridges SEC(".maps");

/* a new image, or none: the mappings its walks found go */
static __always_inline void bp_uw_bridges_drop(__u32 tgid)
{
	struct bp_uw_bridge_key k = { .tgid = tgid };
	__u32 i;

#pragma unroll
	for (i = 0; i < BP_UW_BRIDGES; i++) {
		k.slot = i;
		map_drop(&unwind_bridges, &k);
	}
}

/* set by userspace when it loads unwind tables (--unwind-mem is not 0) */
BP_EXTERN const volatile __u8 unwind_on;

/*
 * Unwind the user stack of process tgid from regs into st (nr, ips,
 * flags): with its mappings' tables once userspace has loaded them, by
 * frame pointers before (so that a stack cut there is marked and counted
 * too). -ENOENT when unwinding is off (the caller falls back to
 * bpf_get_stack), else the number of frames.
 *
 * A global function, defined once (proc.bpf.c) and verified once on its
 * own: inlined into bp_switch and bp_oncpu, the verifier walked the walk
 * again for every state of its callers, 650,000 instructions of the
 * 1,000,000 it allows, two seconds of every start.
 */
/* whose walk it is: each kind keeps its last walk's rows apart (bp_uw_row_lookup()) */
enum bp_uw_walk_kind {
	BP_UW_WALK_ONCPU = 0,	/* a sample's */
	BP_UW_WALK_SWITCH = 1,	/* a switch-out's */
};

#ifndef BP_DEFINE
extern int bp_unwind_user(struct bp_stack *st, __u32 tgid, __u64 ip, __u64 sp, __u64 bp);
#else
/* enough halvings for BP_UW_MAPS mappings and BP_CFI_ROWS_MAX rows per file */
#define BP_UW_MAP_STEPS		8
#define BP_UW_ROW_STEPS		23

/* why a walk stopped */
enum bp_uw_stop {
	BP_UWS_WHOLE = 0,
	BP_UWS_DEPTH,
	BP_UWS_NO_TABLE,
	BP_UWS_BUDGET,
	BP_UWS_READ,
	BP_UWS_INVALID,
};

struct bp_uw_walk {
	struct bp_stack *st;
	struct bp_uw_proc *proc;
	struct bp_uw_map found;	/* the mapping the bridge found last */
	struct bp_uw_regs r;
	__u32 tgid;		/* also the key of unwind_procs */
	__u8 stop;		/* enum bp_uw_stop */
	/* a byte of its own from stop's: a ninth byte here overflowed bp_switch's stack */
	__u8 kind;		/* BP_UW_WALK_* */
	__u8 done;
	__u8 last_map;		/* the mapping of the frame before, or BP_UW_NO_MAP */
};

#define BP_UW_NO_MAP	0xff	/* above BP_UW_MAPS */

/*
 * 1 when a <= b (both below 2^63), computed without a branch: a branch per
 * halving makes the verifier walk every path through the search (2^steps),
 * arithmetic keeps it one path. The barrier keeps clang from turning it
 * back into a compare and jump.
 */
static __always_inline __u64 bp_uw_le(__u64 a, __u64 b)
{
	__u64 d = b - a;

	/* the shift in asm: clang saw through a barrier on d and made a select */
	asm volatile("%[d] >>= 63" : [d] "+r"(d));
	return d ^ 1;
}

/*
 * The index of the mapping holding pc, or BP_UW_MAPS for none. A global
 * function, verified once on its own: inlined, its eight halvings were
 * walked again on every path into the frame callback (3,700 instructions
 * of each program that unwinds; log level 2).
 */
__noinline __u32 bp_uw_map_idx(const struct bp_uw_proc *p, __u64 pc)
{
	__u64 base = 0, n, half, idx;
	__u32 i;

	if (!p)
		return BP_UW_MAPS;
	n = p->nr;
	if (n > BP_UW_MAPS)
		n = BP_UW_MAPS;
	if (!n)
		return BP_UW_MAPS;
	for (i = 0; i < BP_UW_MAP_STEPS; i++) {
		half = n >> 1;
		idx = base + half;
		if (idx >= BP_UW_MAPS)
			return BP_UW_MAPS;
		base += bp_uw_le(p->maps[idx].start, pc) * half;
		n -= half;
	}
	if (base >= BP_UW_MAPS || pc < p->maps[base].start || pc >= p->maps[base].end)
		return BP_UW_MAPS;
	return base;
}

/*
 * The mapping holding pc, or NULL: the frame before's when it holds pc too
 * (a program's callers are mostly in its own executable), else by search.
 */
static __always_inline struct bp_uw_map *bp_uw_find_map(struct bp_uw_walk *w,
							struct bp_uw_proc *p, __u64 pc)
{
	__u32 i = w->last_map;

	if (!(i < BP_UW_MAPS && pc >= p->maps[i].start && pc < p->maps[i].end)) {
		i = bp_uw_map_idx(p, pc);
		w->last_map = i < BP_UW_MAPS ? i : BP_UW_NO_MAP;
	}
	return i < BP_UW_MAPS ? &p->maps[i] : NULL;
}

#define BP_VM_EXEC	0x4

/*
 * bpf_find_vma()'s callback: the mapping holding the address, as a
 * struct bp_uw_map (count 0 when its file has no table loaded). The
 * lookup is done here, not by the caller, so that the key stays in this
 * frame: bp_switch's five nested frames stay within the 512 bytes of
 * stack BPF allows (528 with the key and the vma's facts one level up).
 */
static long bp_uw_vma_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct bp_uw_map *m = data;
	struct bp_uw_file_key key;
	struct bp_uw_file *f;
	struct file *file = BPF_CORE_READ(vma, vm_file);
	struct inode *ino;
	__u64 start;

	if (!file || !(BPF_CORE_READ(vma, vm_flags) & BP_VM_EXEC))
		return 0;
	ino = BPF_CORE_READ(file, f_inode);
	if (!ino)
		return 0;
	key.dev = BPF_CORE_READ(ino, i_sb, s_dev);
	key.ino = BPF_CORE_READ(ino, i_ino);
	f = bpf_map_lookup_elem(&unwind_files, &key);
	/* the very file the table was built from, as far as size and mtime tell */
	if (!f || f->size != (__u64)BPF_CORE_READ(ino, i_size) ||
	    f->mtime_sec != bp_inode_mtime(ino))
		return 0;
	start = BPF_CORE_READ(vma, vm_start);
	m->start = start;
	m->end = BPF_CORE_READ(vma, vm_end);
	m->bias = start - (BPF_CORE_READ(vma, vm_pgoff) << 12) + f->delta;
	m->first = f->first;
	m->count = f->count;
	return 0;
}

/* an empty mapping in m, as the verifier sees it written by a call (below) */
__noinline int bp_uw_found_reset(struct bp_uw_map *m)
{
	if (m)
		__builtin_memset(m, 0, sizeof(*m));
	return 0;
}

/*
 * The bridge: the executable file mapping holding pc, when the process's
 * list lacks it and its file's table is loaded (for any process). The walk
 * is always of current's stack.
 *
 * bpf_find_vma() only tries the mmap lock (a writer holding it, an mmap
 * under way, makes it fail and the frame is cut as before), and in a
 * sample's interrupt it leaves the unlock to an irq_work: a second call
 * before that ran fails (-EBUSY). So one lookup a walk, and what it found
 * is kept for the process's next walks in unwind_bridges, until its image
 * or its executable mappings change (mm, mm->exec_vm): a program that
 * just started and calls from libm through its own code into libc is
 * whole from its third sample, not once userspace has caught up.
 *
 * bp_uw_bridge_find(): the kept mapping of tgid's image that holds pc
 * (the walk's last one in m first), into m: BP_UW_BRIDGES + 1. Else the
 * slot a new one may take (a free or stale one), or BP_UW_BRIDGES when
 * all are taken. It and bp_uw_bridge_keep() are global functions, verified
 * once; the lookup itself is in the frame callback (bp_uw_frame()).
 */
__noinline __u32 bp_uw_bridge_find(__u32 tgid, __u64 pc, struct bp_uw_map *m)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct bp_uw_bridge_key k = { .tgid = tgid };
	__u64 mm = (__u64)BPF_CORE_READ(t, mm), exec_vm = BPF_CORE_READ(t, mm, exec_vm);
	struct bp_uw_bridge *b;
	__u32 i, free = BP_UW_BRIDGES;

	if (!m)
		return BP_UW_BRIDGES;
	/* the mapping found for an earlier frame of this walk: a library's frames share it */
	if (m->count && pc >= m->start && pc < m->end)
		return BP_UW_BRIDGES + 1;
	/* unrolled: the slot lives in the key, on the stack, where no loop bound is seen */
#pragma unroll
	for (i = 0; i < BP_UW_BRIDGES; i++) {
		k.slot = i;
		b = bpf_map_lookup_elem(&unwind_bridges, &k);
		if (!b || b->mm != mm || b->exec_vm != exec_vm) {
			free = i;
			continue;
		}
		if (b->m.count && pc >= b->m.start && pc < b->m.end) {
			*m = b->m;
			return BP_UW_BRIDGES + 1;
		}
	}
	return free;
}

/* keep m for tgid's next walks, in slot (BP_UW_BRIDGES: the one its address picks) */
__noinline int bp_uw_bridge_keep(__u32 tgid, __u32 slot, const struct bp_uw_map *m)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct bp_uw_bridge_key k = { .tgid = tgid, .slot = slot };
	struct bp_uw_bridge v = {
		.mm = (__u64)BPF_CORE_READ(t, mm),
		.exec_vm = BPF_CORE_READ(t, mm, exec_vm),
	};

	if (!m)
		return 0;
	v.m = *m;
	if (slot >= BP_UW_BRIDGES)
		k.slot = (__u32)(m->start >> 12) % BP_UW_BRIDGES;
	/* a new element, never one rewritten in place: a reader sees it whole or not */
	return bpf_map_update_elem(&unwind_bridges, &k, &v, BPF_ANY);
}

#define BP_UW_NO_ROW	0xffffffffU

/*
 * The index of the last row at or below rel in [first, first + count) if
 * any is (the caller checks the row it reads there), or BP_UW_NO_ROW. A
 * global function, verified once on its own: inside the
 * frame callback, its 23 unrolled steps were walked again at every pass
 * the verifier made over the callback (about 100,000 instructions for
 * each program that unwinds; log level 4).
 */
__noinline __u32 bp_uw_find_row_idx(__u32 first, __u32 count, __u32 rel)
{
	__u64 base = first, n = count, half;
	struct bp_uw_row *row;
	__u32 i, idx, k;

	if (!n)
		return BP_UW_NO_ROW;
	/* a bucket's few rows take a few halvings, not all 23 */
	for (i = 0; i < BP_UW_ROW_STEPS && n > 1; i++) {
		half = n >> 1;
		idx = base + half;
		row = bp_uw_row_at(idx, &k);
		if (!row)
			return BP_UW_NO_ROW;
		base += bp_uw_le(row->pc, rel) * half;
		n -= half;
	}
	/* the caller reads the row at base and checks it: one lookup less here */
	return base;
}

/*
 * The last row at or below rel in the table of len slots at first (header,
 * bucket index, rows: see BP_UW_INDEX), or NULL. rel's bucket bounds the
 * search to the rows that can hold it: a whole-table search of stress-ng's
 * 100k rows missed the cache at almost every one of its 17 halvings, ~1 us
 * a frame in a guest.
 */
static __always_inline struct bp_uw_row *bp_uw_find_row(__u32 first, __u32 len, __u32 rel,
							  __u32 *k)
{
	struct bp_uw_row *h, *e;
	__u32 nb, b, lo, hi, nrows, idx;

	h = bp_uw_row_at(first, k);
	if (!h || h->kind != BP_UW_INDEX)
		return NULL;
	nb = h->pc;
	if (nb >= len || len - nb < BP_UW_INDEX_SLOTS(0))
		return NULL;
	nrows = len - BP_UW_INDEX_SLOTS(nb);
	b = rel >> (h->cfa & 31);
	if (b >= nb) {
		/* past the last bucket: only the last row can hold it */
		lo = nrows ? nrows - 1 : 0;
		hi = nrows;
	} else {
		idx = first + 1 + b;
		e = bp_uw_row_at(idx, k);
		if (!e)
			return NULL;
		lo = e->pc ? e->pc - 1 : 0;
		idx++;
		e = bp_uw_row_at(idx, k);
		if (!e)
			return NULL;
		hi = e->pc < nrows ? e->pc : nrows;
	}
	if (hi <= lo)
		return NULL;
	idx = bp_uw_find_row_idx(first + BP_UW_INDEX_SLOTS(nb) + lo, hi - lo, rel);
	if (idx == BP_UW_NO_ROW)
		return NULL;
	e = bp_uw_row_at(idx, k);
	return e && e->pc <= rel ? e : NULL;
}

/*
 * A row found is kept per CPU, by (table, count, rel): a thread sampled
 * again and again walks the same callers, and their rows' search (header,
 * bucket, halvings, each a cache and TLB miss in a 16-MiB array) cost
 * 0.76 us of a frame's 1.3 in a guest. The count of table uploads
 * (uw_rows_gen, read before the rows) makes a kept row stale once its
 * slots may have been written again. Programs on one CPU may nest (an NMI
 * sample inside bp_switch): an entry's key is cleared while it is
 * rewritten, and a reader checks the key again after the row.
 */
#define BP_UW_RCACHE		512
#define BP_UW_RCACHE_SHIFT	23	/* 32 - log2(BP_UW_RCACHE) */
#define BP_UW_ROW_NONE		(~0ULL)	/* no row covers rel */

struct bp_uw_rcache_ent {
	__u64 at;	/* first << 32 | rel; 0 while being written */
	__u64 of;	/* count << 32 | gen */
	__u64 row;	/* struct bp_uw_row as 8 bytes, or BP_UW_ROW_NONE */
};

/*
 * The rows of the last walk of each kind, by frame: a thread sampled again
 * walks the same callers at the same depths, and these few lines in a row
 * stay where the hashed entries above scatter one frame a line (under the
 * bench's mix every line is cold at a sample: ~0.4 us each in a guest).
 * On-CPU samples and switch-outs keep theirs apart: a CPU switches a few
 * times between two samples, and their walks would take each other's.
 */
#define BP_UW_LAST		24
#define BP_UW_WALKS		2	/* BP_UW_WALK_* */

struct bp_uw_rcache {
	struct bp_uw_rcache_ent last[BP_UW_WALKS][BP_UW_LAST];
	struct bp_uw_rcache_ent e[BP_UW_RCACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_uw_rcache);
} unwind_rcache SEC(".maps");

/* counted up by userspace after each table it writes (agent/collect/unwind.c) */
volatile __u32 uw_rows_gen;

/* an entry's row, when its key is (at, of): read between two looks at the key */
static __always_inline bool bp_uw_kept(struct bp_uw_rcache_ent *e, __u64 at, __u64 of,
				       __u64 *row)
{
	if (!at || e->at != at || e->of != of)
		return false;
	*row = e->row;
	barrier();
	return e->at == at && e->of == of;
}

/* the entry keyed (at, of) holds row: its key cleared while it is rewritten */
static __always_inline void bp_uw_keep(struct bp_uw_rcache_ent *e, __u64 at, __u64 of, __u64 row)
{
	e->at = 0;
	barrier();
	e->of = of;
	e->row = row;
	barrier();
	e->at = at;
}

/*
 * The row covering rel in the table of count slots at first, as 8 bytes,
 * or BP_UW_ROW_NONE; where is the walk's kind << 8 | the frame's depth.
 * A global function, verified once; a row comes back by value, which the
 * frame copies to its stack.
 */
__noinline __u64 bp_uw_row_lookup(__u32 first, __u32 count, __u32 rel, __u32 where)
{
	__u64 at = (__u64)first << 32 | rel, of, row = BP_UW_ROW_NONE;
	struct bp_uw_rcache_ent *e, *l = NULL;
	struct bp_uw_rcache *c;
	struct bp_uw_row *r;
	__u32 zero = 0, gen = uw_rows_gen, slot, kind = where >> 8, depth = where & 0xff;

	barrier_var(gen);
	of = (__u64)count << 32 | gen;
	c = bpf_map_lookup_elem(&unwind_rcache, &zero);
	if (!c)
		return BP_UW_ROW_NONE;
	if (kind < BP_UW_WALKS && depth < BP_UW_LAST) {
		l = &c->last[kind][depth];
		if (bp_uw_kept(l, at, of, &row)) {
			stat_inc(BP_STAT_UW_ROW_KEPT);
			return row;
		}
	}
	slot = ((first * 0x9e3779b1U) ^ (rel * 0x85ebca6bU)) >> BP_UW_RCACHE_SHIFT;
	if (slot >= BP_UW_RCACHE)
		return BP_UW_ROW_NONE;
	e = &c->e[slot];
	if (bp_uw_kept(e, at, of, &row)) {
		stat_inc(BP_STAT_UW_ROW_KEPT);
	} else {
		row = BP_UW_ROW_NONE;
		/* zero's slot is the search's key: 16 bytes more overflowed bp_switch's stack */
		r = bp_uw_find_row(first, count, rel, &zero);
		if (r)
			__builtin_memcpy(&row, r, sizeof(row));
		bp_uw_keep(e, at, of, row);
	}
	if (l)
		bp_uw_keep(l, at, of, row);
	return row;
}

static __always_inline void bp_uw_cut(struct bp_uw_walk *w, __u32 why)
{
	w->stop = why;
	w->done = 1;
}

/*
 * An address outside the process's list: new code (dlopen, JIT) or garbage
 * from a frame-pointer walk. The first miss asks for fresh maps; after it
 * the list stays marked until userspace writes it again, which for
 * garbage (maps unchanged) is a recheck 0.1 or 1 s later. New code mapped
 * meanwhile (Python importing _json just after a garbage miss) would be
 * cut all that time: a miss is reported again when the process's
 * executable mappings changed since the last report, as mm->exec_vm
 * (pages mapped executable) tells. The walk is always of current's stack.
 */
/*
 * A global function of its own (the list found again by tgid): inline, the
 * frame callback's paths through it and on to the bridge made the verifier
 * walk the rest of the frame once more (5,700 instructions for bp_switch).
 */
__noinline int bp_uw_missed(__u32 tgid)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct bp_uw_proc *p = bpf_map_lookup_elem(&unwind_procs, &tgid);
	__u64 now, seen;

	if (!p)
		return 0;
	now = BPF_CORE_READ(t, mm, exec_vm);
	seen = p->exec_vm;
	if (!(__sync_fetch_and_or(&p->flags, BP_UWP_MISSED) & BP_UWP_MISSED)) {
		p->exec_vm = now;
		emit_event(BP_EV_UNWIND_MISS, tgid, 0, 0);
		return 1;
	}
	/* one report per change, however many CPUs see it */
	if (now != seen && __sync_val_compare_and_swap(&p->exec_vm, seen, now) == seen) {
		stat_inc(BP_STAT_UW_REMISS);
		emit_event(BP_EV_UNWIND_MISS, tgid, 0, 0);
		return 1;
	}
	return 0;
}

/* one frame: push pc, then step to the caller */
static long bp_uw_frame(__u32 i, void *data)
{
	struct bp_uw_walk *w = data;
	struct bp_stack *st = w->st;
	struct bp_uw_row *row = NULL, found;
	struct bp_uw_map *m;
	__u32 n = st->nr, none = BP_UW_NONE_NOCFI, first = BP_UW_NONE_NOCFI, count = 0, slot;
	__u64 pc = bp_uw_lookup_pc(&w->r), rel, bias = 0, packed;
	int res;

	if (n >= BP_MAX_STACK_DEPTH) {
		bp_uw_cut(w, BP_UWS_DEPTH);
		return 1;
	}
	/* the symbolizer takes every frame but the first as a return address */
	st->ips[n] = w->r.exact && n ? w->r.pc + 1 : w->r.pc;
	st->nr = n + 1;

	/* no list yet (userspace has not seen the process): frame pointers */
	m = w->proc ? bp_uw_find_map(w, w->proc, pc) : NULL;
	if (!w->proc) {
		;
	} else if (!m) {
		if (!(w->proc->flags & BP_UWP_PARTIAL)) {
			/* the list is asked for anyway: the bridge holds until it is written */
			bp_uw_missed(w->tgid);
			m = &w->found;
			slot = bp_uw_bridge_find(w->tgid, pc, m);
			if (slot <= BP_UW_BRIDGES) {
				/*
				 * Here, not in a function of its own: the lookup's
				 * context is the walk's, and bp_switch's nested
				 * frames stay within 512 bytes of stack as 6.1
				 * counts them (each frame rounded up to 32).
				 */
				m->count = 0;
				if (bpf_find_vma(bpf_get_current_task_btf(), pc, bp_uw_vma_cb, m,
						 0) || !m->count) {
					bp_uw_cut(w, BP_UWS_NO_TABLE);
					return 1;
				}
				bp_uw_bridge_keep(w->tgid, slot, m);
			}
			stat_inc(BP_STAT_UW_BY_FILE);
		}
	}
	/*
	 * Scalars from here on: a pointer into the list or into the walk's
	 * stack made the verifier walk the rest of the frame twice (7,800
	 * instructions more for bp_switch).
	 */
	if (m) {
		bias = m->bias;
		first = m->first;
		count = m->count;
	}
	if (count) {
		rel = pc - bias;
		if (rel <= 0xffffffffULL) {
			packed = bp_uw_row_lookup(first, count, (__u32)rel,
						   (__u32)w->kind << 8 | (n & 0xff));
			if (packed != BP_UW_ROW_NONE) {
				__builtin_memcpy(&found, &packed, sizeof(found));
				row = &found;
			}
		}
		if (row && row->kind == BP_UW_FP)
			row = NULL;
	} else {
		none = first;
	}

	res = bp_uw_step(NULL, row, &w->r);
	switch (res) {
	case BP_UW_NEXT:
		return 0;
	case BP_UW_END:
		w->done = 1;
		return 1;
	case BP_UW_CUT_READ:
		bp_uw_cut(w, BP_UWS_READ);
		return 1;
	case BP_UW_CUT_FP:
		bp_uw_cut(w, none == BP_UW_NONE_BUDGET ? BP_UWS_BUDGET : BP_UWS_NO_TABLE);
		return 1;
	default:
		bp_uw_cut(w, BP_UWS_INVALID);
		return 1;
	}
}

__noinline int bp_unwind_user(struct bp_stack *st, __u32 tgid, __u64 ip, __u64 sp, __u64 bp)
{
	struct bp_uw_walk w = {};

	if (!unwind_on || !st)
		return -ENOENT;
	/*
	 * w is the only key: with a copy of tgid beside it, bp_switch's
	 * frames took 528 bytes of stack once the bridge was added.
	 */
	w.tgid = tgid;
	w.proc = bpf_map_lookup_elem(&unwind_procs, &w.tgid);
	w.st = st;
	w.r.pc = ip;
	w.r.sp = sp;
	w.r.bp = bp;
	w.r.exact = 1;
	w.last_map = BP_UW_NO_MAP;
	/*
	 * The caller's kind of walk comes in st->flags (capture_ustack()).
	 * Masked, not compared: a compare gave the verifier two constant
	 * kinds, and it walked the frames once for each (190,456 instructions
	 * verified at every start against 173,492 masked).
	 */
	w.kind = st->flags & BP_UW_WALK_SWITCH;
	st->nr = 0;
	st->flags = 0;
	if (!ip)
		return 0;
	if (w.proc)
		stat_inc(BP_STAT_UW_STACKS);
	/*
	 * Zeroed by a call, not by the initializer: the verifier then knows
	 * the slots as written, like after a bridge, rather than as zeros,
	 * and prunes the frames after a bridge against the others (7,000
	 * instructions of bp_switch's verification).
	 */
	bp_uw_found_reset(&w.found);
	bpf_loop(BP_MAX_STACK_DEPTH, bp_uw_frame, &w, 0);
	if (!w.done)
		w.stop = BP_UWS_DEPTH;
	/*
	 * Frame pointers alone, in code not known to have them: a chain
	 * that ends (rbp 0) may as well have ended in a register that
	 * happened to hold 0. Whole only once the tables say so.
	 */
	if (!w.proc && w.stop == BP_UWS_WHOLE)
		w.stop = BP_UWS_NO_TABLE;
	switch (w.stop) {
	case BP_UWS_WHOLE:
		return st->nr;
	case BP_UWS_DEPTH:
		stat_inc(BP_STAT_USTACK_TRUNC);
		break;
	case BP_UWS_NO_TABLE:
		stat_inc(BP_STAT_UW_NO_TABLE);
		break;
	case BP_UWS_BUDGET:
		stat_inc(BP_STAT_UW_BUDGET);
		break;
	case BP_UWS_READ:
		stat_inc(BP_STAT_UW_BAD_READ);
		break;
	default:
		stat_inc(BP_STAT_UW_INVALID);
		break;
	}
	st->flags |= BP_STACK_CUT;
	return st->nr;
}
#endif /* BP_DEFINE */

#endif /* BP_UNWIND_BPF_H */
