// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind table cache and the rows array's allocator. See unwind.h and
 * docs/symbols.md ("Unwinding").
 *
 * A process's list is made from its /proc/PID/maps here, not from the
 * symbolizer's snapshot: that one loads every new file's symbols and
 * debug information first (milliseconds each), and a process just started
 * or that just mapped a library walks its stacks by frame pointers, cut,
 * until its list is in. Files are found again by the identity the kernel
 * gives the mapped inode (a stat() through /proc/PID/map_files), opened
 * the way the symbolizer opens them, and closed once their table is built.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "boundprof.h"
#include "collect/loader.h"
#include "collect/unwind.h"
#include "proc/pidset.h"
#include "proc/procmaps.h"
#include "symbolize/dwarf_cfi.h"
#include "symbolize/elfsym.h"
#include "symbolize/symbols.h"
#include "util/htab.h"
#include "util/log.h"
#include "util/safeopen.h"

/* rows written per batch update */
#define UPLOAD_BATCH	65536
/* segments kept per file, for the load bias of a mapping */
#define SEGS_MAX	8

enum uwf_state {
	UWF_NONE = 0,		/* not built yet */
	UWF_LOADED,		/* rows in the kernel */
	UWF_NOCFI,		/* no usable CFI: frame pointers */
	UWF_BUDGET,		/* did not fit; need rows */
};

struct uw_file {
	uint32_t idx;		/* in files */
	char *build_id;
	uint64_t dev, ino, size;	/* the key without a build-id */
	int64_t mtime_ns;
	uint8_t state;
	uint8_t nr_segs;
	struct bp_elf_segment segs[SEGS_MAX];
	uint32_t first, count;	/* the loaded region: index, then rows (BP_UW_INDEX) */
	uint32_t rows;		/* of count, the rows */
	uint32_t need;		/* slots, once known (for an over-budget file) */
	uint64_t base;		/* ELF vaddr the rows count from */
	uint32_t refs;		/* processes listing it */
	uint32_t idents;	/* identities pointing at it */
	uint64_t used;		/* tick of its last reference */
};

/*
 * A file as a process maps it (device, inode, size, mtime): a file known
 * is found again by it without being opened; several identities may share
 * one table (one build copied, or in two containers).
 */
struct ident {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	struct uw_file *f;
};

struct uw_proc {
	uint32_t idx;		/* in procs */
	pid_t pid;
	struct uw_file **files;	/* one reference each */
	uint32_t nr_files;
	uint64_t val_hash;	/* of the list last written */
};

struct extent {
	uint32_t start, len;
};

struct vec {
	void **v;
	uint32_t n, cap;
	struct bp_htab h;
};

struct bp_unwind {
	struct bp_loader *l;
	struct bp_syms *syms;
	int rows_fd, procs_fd, files_fd;
	bool no_mmap;		/* the rows map could not be mapped: upload() batches */
	uint32_t capacity;	/* rows */
	uint32_t nr_chunks;	/* that hold capacity rows (BP_UW_CHUNK_ROWS each) */
	int *chunk_fd;		/* nr_chunks of them; -1 until added */
	struct extent *free;	/* sorted by start, coalesced */
	uint32_t nr_free, cap_free;
	struct vec files, procs;
	struct ident *idents;
	uint32_t nr_idents, cap_idents;
	struct bp_htab ident_h;
	ino_t self_mnt_ns;
	uint64_t tick;
	struct bp_uw_proc *val;	/* the value being written */
	struct bp_unwind_stats st;
	uint64_t deadline_ns;	/* no new table builds after this, in this update; 0 none */
	bool deferred;		/* the last update left files without their tables */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int vec_push(struct vec *v, void *p, uint64_t hash, uint32_t *idx)
{
	if (v->n == v->cap) {
		uint32_t ncap = v->cap ? 2 * v->cap : 64;
		void *np = reallocarray(v->v, ncap, sizeof(*v->v));

		if (!np)
			return -ENOMEM;
		v->v = np;
		v->cap = ncap;
	}
	if (bp_htab_insert(&v->h, hash, v->n))
		return -ENOMEM;
	v->v[v->n] = p;
	*idx = v->n++;
	return 0;
}

/* --- the rows allocator ------------------------------------------------- */

static int free_add(struct bp_unwind *u, uint32_t start, uint32_t len)
{
	uint32_t i, j;

	if (!len)
		return 0;
	for (i = 0; i < u->nr_free && u->free[i].start < start; i++)
		;
	/* merge with the extent before and after */
	if (i && u->free[i - 1].start + u->free[i - 1].len == start) {
		u->free[i - 1].len += len;
		if (i < u->nr_free && start + len == u->free[i].start) {
			u->free[i - 1].len += u->free[i].len;
			for (j = i; j + 1 < u->nr_free; j++)
				u->free[j] = u->free[j + 1];
			u->nr_free--;
		}
		return 0;
	}
	if (i < u->nr_free && start + len == u->free[i].start) {
		u->free[i].start = start;
		u->free[i].len += len;
		return 0;
	}
	if (u->nr_free == u->cap_free) {
		uint32_t ncap = u->cap_free ? 2 * u->cap_free : 64;
		void *np = reallocarray(u->free, ncap, sizeof(*u->free));

		if (!np)
			return -ENOMEM;
		u->free = np;
		u->cap_free = ncap;
	}
	memmove(&u->free[i + 1], &u->free[i], (u->nr_free - i) * sizeof(*u->free));
	u->free[i] = (struct extent){ start, len };
	u->nr_free++;
	return 0;
}

/* first fit; -ENOSPC when no extent is large enough */
static int rows_alloc(struct bp_unwind *u, uint32_t len, uint32_t *start)
{
	uint32_t i, j;

	for (i = 0; i < u->nr_free; i++) {
		if (u->free[i].len < len)
			continue;
		*start = u->free[i].start;
		u->free[i].start += len;
		u->free[i].len -= len;
		if (!u->free[i].len) {
			for (j = i; j + 1 < u->nr_free; j++)
				u->free[j] = u->free[j + 1];
			u->nr_free--;
		}
		return 0;
	}
	return -ENOSPC;
}

/* --- identities ------------------------------------------------------------ */

static uint64_t ident_hash(uint64_t dev, uint64_t ino, uint64_t size, int64_t mtime_ns)
{
	return bp_hash_u64(dev * 0x9e3779b97f4a7c15ULL ^ ino ^ (size << 20) ^ (uint64_t)mtime_ns);
}

static bool ident_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct ident *a = &((const struct bp_unwind *)ctx)->idents[idx], *b = key;

	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

static struct uw_file *ident_find(struct bp_unwind *u, const struct ident *k)
{
	uint32_t idx;

	if (bp_htab_find(&u->ident_h, ident_hash(k->dev, k->ino, k->size, k->mtime_ns), ident_eq,
			 u, k, &idx))
		return NULL;
	return u->idents[idx].f;
}

/*
 * The term of a file's mapping bias that comes from the file, for BPF:
 * bias = start - pgoff + delta (map_bias() with the executable segment).
 * false when its executable segments disagree: BPF could not tell which.
 */
static bool file_delta(const struct uw_file *f, int64_t *delta)
{
	bool have = false;
	int64_t d;
	int i;

	for (i = 0; i < f->nr_segs; i++) {
		const struct bp_elf_segment *g = &f->segs[i];

		if (!g->exec || !g->filesz)
			continue;
		d = (int64_t)(g->off - g->vaddr + f->base);
		if (have && d != *delta)
			return false;
		*delta = d;
		have = true;
	}
	return have;
}

/*
 * Tell BPF (unwind_files) that identity k has f's table, or no longer has
 * it: the walker's bridge for a mapping the process's list lacks
 * (bp_uw_by_file()). The key is the kernel's view of the inode: s_dev is
 * MAJOR << 20 | MINOR, not stat()'s encoding. A file system whose stat()
 * device is not its super block's (btrfs subvolumes) finds nothing, and
 * its processes wait for their lists as before.
 */
static void ident_publish(struct bp_unwind *u, const struct ident *k, const struct uw_file *f)
{
	struct bp_uw_file_key key = {
		.dev = ((uint64_t)major(k->dev) << 20) | minor(k->dev),
		.ino = k->ino,
	};
	/* BPF compares the inode's seconds: floored, as the kernel keeps them */
	struct bp_uw_file v = {
		.size = k->size,
		.mtime_sec = k->mtime_ns / 1000000000 - (k->mtime_ns % 1000000000 < 0),
	};
	int64_t delta = 0;

	if (u->files_fd < 0)
		return;
	if (!f || f->state != UWF_LOADED || !file_delta(f, &delta)) {
		bpf_map_delete_elem(u->files_fd, &key);
		return;
	}
	v.delta = delta;
	v.first = f->first;
	v.count = f->count;
	/* full (BP_UNWIND_FILES): that file's new mappings wait for their lists, as before */
	if (bpf_map_update_elem(u->files_fd, &key, &v, BPF_ANY))
		bp_dbg("unwind: no bridge for inode %llu: %s", (unsigned long long)k->ino,
		       strerror(errno));
}

/* f's table came or went: every identity of it tells BPF */
static void file_publish(struct bp_unwind *u, const struct uw_file *f)
{
	uint32_t i;

	if (!f->idents)
		return;
	for (i = 0; i < u->nr_idents; i++)
		if (u->idents[i].f == f)
			ident_publish(u, &u->idents[i], f);
}

static int ident_add(struct bp_unwind *u, const struct ident *k, struct uw_file *f)
{
	if (ident_find(u, k))
		return 0;
	if (u->nr_idents == u->cap_idents) {
		uint32_t ncap = u->cap_idents ? 2 * u->cap_idents : 64;
		void *np = reallocarray(u->idents, ncap, sizeof(*u->idents));

		if (!np)
			return -ENOMEM;
		u->idents = np;
		u->cap_idents = ncap;
	}
	if (bp_htab_insert(&u->ident_h, ident_hash(k->dev, k->ino, k->size, k->mtime_ns),
			   u->nr_idents))
		return -ENOMEM;
	u->idents[u->nr_idents] = *k;
	u->idents[u->nr_idents].f = f;
	u->nr_idents++;
	f->idents++;
	if (f->state == UWF_LOADED)
		ident_publish(u, k, f);
	return 0;
}

/* drop the identities of a file that goes */
static void ident_drop_file(struct bp_unwind *u, struct uw_file *f)
{
	uint32_t i, n = 0;

	if (!f->idents)
		return;
	for (i = 0; i < u->nr_idents; i++)
		if (u->idents[i].f != f)
			u->idents[n++] = u->idents[i];
	u->nr_idents = n;
	f->idents = 0;
	/* the slots moved: index them again (the table only grows back as large) */
	bp_htab_clear(&u->ident_h);
	for (i = 0; i < u->nr_idents; i++)
		bp_htab_insert(&u->ident_h, ident_hash(u->idents[i].dev, u->idents[i].ino,
						       u->idents[i].size, u->idents[i].mtime_ns), i);
}

/* --- files ---------------------------------------------------------------- */

struct file_key {
	const char *build_id;
	uint64_t dev, ino, size;
	int64_t mtime_ns;
};

static uint64_t key_hash(const struct file_key *k)
{
	if (k->build_id)
		return bp_hash_bytes(k->build_id, strlen(k->build_id), 1);
	return ident_hash(k->dev, k->ino, k->size, k->mtime_ns);
}

static bool file_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct uw_file *f = ((const struct vec *)ctx)->v[idx];
	const struct file_key *k = key;

	if (k->build_id || f->build_id)
		return k->build_id && f->build_id && !strcmp(k->build_id, f->build_id);
	return f->dev == k->dev && f->ino == k->ino && f->size == k->size &&
	       f->mtime_ns == k->mtime_ns;
}

static uint64_t file_hash(const struct uw_file *f)
{
	struct file_key k = { f->build_id, f->dev, f->ino, f->size, f->mtime_ns };

	return key_hash(&k);
}

static void file_unload(struct bp_unwind *u, struct uw_file *f)
{
	if (f->state != UWF_LOADED)
		return;
	/* BPF lets go of the rows before they are handed to another file */
	f->state = UWF_NONE;
	file_publish(u, f);
	free_add(u, f->first, f->count);
	u->st.rows -= f->rows;
	u->st.slots -= f->count;
	u->st.files--;
	f->first = f->count = f->rows = 0;
}

static void file_destroy(struct bp_unwind *u, struct uw_file *f)
{
	struct uw_file *last = u->files.v[u->files.n - 1];
	uint32_t idx = f->idx;

	file_unload(u, f);
	if (f->state == UWF_NOCFI)
		u->st.files_nocfi--;
	else if (f->state == UWF_BUDGET)
		u->st.files_over_budget--;
	ident_drop_file(u, f);
	bp_htab_remove(&u->files.h, file_hash(f), idx);
	if (last != f) {
		bp_htab_remove(&u->files.h, file_hash(last), last->idx);
		bp_htab_insert(&u->files.h, file_hash(last), idx);
		u->files.v[idx] = last;
		last->idx = idx;
	}
	u->files.n--;
	free(f->build_id);
	free(f);
}

/* make room for len rows by dropping tables no process lists, least recently used first */
static int make_room(struct bp_unwind *u, uint32_t len, uint32_t *start)
{
	for (;;) {
		struct uw_file *victim = NULL;
		uint32_t i;

		if (!rows_alloc(u, len, start))
			return 0;
		for (i = 0; i < u->files.n; i++) {
			struct uw_file *f = u->files.v[i];

			if (f->state == UWF_LOADED && !f->refs &&
			    (!victim || f->used < victim->used))
				victim = f;
		}
		if (!victim)
			return -ENOSPC;
		u->st.evicted++;
		file_destroy(u, victim);
	}
}

/* an array map's values are laid out 8-byte aligned, one after another */
_Static_assert(sizeof(struct bp_uw_row) % 8 == 0, "unwind rows are not packed in the map");

/*
 * Rows first..first+n of a chunk written through a mapping of just their
 * pages: a memcpy, where a batch update took ~1.5 us a row in the kernel
 * (the tables of a curl run's libraries were a quarter of an idle agent's
 * CPU). Only those pages are ever mapped, and only while written: they
 * would count in our resident set. -errno when the map cannot be mapped.
 */
static int upload_mapped(int fd, uint32_t first, const struct bp_uw_row *rows, uint32_t n)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t lo = (uint64_t)first * sizeof(*rows), hi = lo + (uint64_t)n * sizeof(*rows);
	uint64_t off = lo & ~(page - 1), len = ((hi + page - 1) & ~(page - 1)) - off;
	char *m;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return -errno;
	memcpy(m + (lo - off), rows, (size_t)n * sizeof(*rows));
	munmap(m, len);
	return 0;
}

static int upload_chunk(struct bp_unwind *u, int fd, uint32_t first,
			const struct bp_uw_row *rows, uint32_t n)
{
	uint32_t *keys, done = 0, i;
	int err = 0;

	if (!u->no_mmap) {
		err = upload_mapped(fd, first, rows, n);
		if (!err)
			return 0;
		/* kernels before 5.5 map no arrays: batches from now on */
		bp_dbg("unwind rows not mapped (%s): batch updates", strerror(-err));
		u->no_mmap = true;
	}

	keys = malloc((n < UPLOAD_BATCH ? n : UPLOAD_BATCH) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	while (done < n) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t cnt = n - done < UPLOAD_BATCH ? n - done : UPLOAD_BATCH;

		for (i = 0; i < cnt; i++)
			keys[i] = first + done + i;
		err = bpf_map_update_batch(fd, keys, rows + done, &cnt, &opts);
		if (err) {
			/* no batch updates on arrays before 5.6: one at a time */
			for (i = 0; i < cnt; i++) {
				err = bpf_map_update_elem(fd, &keys[i], &rows[done + i], BPF_ANY);
				if (err)
					goto out;
			}
		}
		done += cnt;
	}
out:
	free(keys);
	return err;
}

/*
 * Chunk c of the rows, added to unwind_rows when a table first takes its
 * slots: the kernel holds the chunks that tables have used, not the whole
 * budget from the start. A chunk stays once added (a table evicted leaves
 * its slots for the next), so the memory is the load's peak.
 */
static int chunk_get(struct bp_unwind *u, uint32_t c, int *fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int err;

	if (u->chunk_fd[c] >= 0) {
		*fd = u->chunk_fd[c];
		return 0;
	}
	*fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bp_uw_chunk", sizeof(uint32_t),
			     sizeof(struct bp_uw_row), BP_UW_CHUNK_ROWS, &o);
	if (*fd < 0)
		return -errno;
	if (bpf_map_update_elem(u->rows_fd, &c, fd, BPF_ANY)) {
		err = -errno;
		close(*fd);
		return err;
	}
	u->chunk_fd[c] = *fd;
	u->st.kernel_bytes += bp_loader__fd_map_bytes(*fd);
	return 0;
}

/* rows first..first+n, in the chunks that hold them */
static int upload(struct bp_unwind *u, uint32_t first, const struct bp_uw_row *rows, uint32_t n)
{
	uint32_t mask = BP_UW_CHUNK_ROWS - 1, k;
	int err, fd;

	while (n) {
		err = chunk_get(u, first >> BP_UW_CHUNK_SHIFT, &fd);
		if (err)
			return err;
		k = mask + 1 - (first & mask);
		if (k > n)
			k = n;
		err = upload_chunk(u, fd, first & mask, rows, k);
		if (err)
			return err;
		first += k;
		rows += k;
		n -= k;
	}
	return 0;
}

/* is there room for f's rows, or a table that could make it? */
static bool may_fit(struct bp_unwind *u, const struct uw_file *f)
{
	uint32_t i;

	for (i = 0; i < u->nr_free; i++)
		if (u->free[i].len >= f->need)
			return true;
	for (i = 0; i < u->files.n; i++) {
		const struct uw_file *g = u->files.v[i];

		if (g->state == UWF_LOADED && !g->refs)
			return true;
	}
	return false;
}

/*
 * n rows sorted by pc with their bucket index in front (BP_UW_INDEX), in
 * *out (malloc()ed) of *len slots. About BP_UW_ROWS_PER_BUCKET rows a
 * bucket: the index costs an eighth more memory.
 */
static int index_rows(const struct bp_uw_row *rows, uint32_t n, struct bp_uw_row **out,
		      uint32_t *len)
{
	uint64_t top = n ? rows[n - 1].pc : 0, want = n / BP_UW_ROWS_PER_BUCKET, at;
	uint32_t shift = 0, nb, b, r = 0;
	struct bp_uw_row *v;

	if (!want)
		want = 1;
	while (shift < 31 && (top >> shift) + 1 > want)
		shift++;
	nb = (uint32_t)(top >> shift) + 1;
	if ((uint64_t)n + BP_UW_INDEX_SLOTS(nb) > UINT32_MAX)
		return -EFBIG;
	v = calloc((size_t)n + BP_UW_INDEX_SLOTS(nb), sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[0].kind = BP_UW_INDEX;
	v[0].pc = nb;
	v[0].cfa = (int16_t)shift;
	for (b = 0; b <= nb; b++) {
		at = (uint64_t)b << shift;
		while (r < n && rows[r].pc <= at)
			r++;
		v[1 + b].kind = BP_UW_INDEX;
		v[1 + b].pc = r;
	}
	memcpy(v + BP_UW_INDEX_SLOTS(nb), rows, (size_t)n * sizeof(*rows));
	*out = v;
	*len = n + BP_UW_INDEX_SLOTS(nb);
	return 0;
}

/* build and load the table of file f from its open ELF e (what: its name, for logs) */
static void file_load(struct bp_unwind *u, struct uw_file *f, struct bp_elf *e, const char *what)
{
	struct bp_cfi_table t;
	struct bp_uw_row *v = NULL;
	uint64_t t0 = mono_ns();
	uint32_t start, len = 0;
	int err;

	err = bp_cfi__build(bp_elf__elf(e), bp_elf__size(e), &t);
	if (!err) {
		err = index_rows(t.rows, t.nr_rows, &v, &len);
		if (err)
			bp_cfi__free(&t);
	}
	u->st.build_ns += mono_ns() - t0;
	if (err) {
		bp_dbg("no unwind table for %s: %s", what, strerror(-err));
		if (f->state == UWF_BUDGET)
			u->st.files_over_budget--;
		f->state = UWF_NOCFI;
		u->st.files_nocfi++;
		return;
	}
	err = make_room(u, len, &start);
	if (err) {
		if (f->state != UWF_BUDGET) {
			f->state = UWF_BUDGET;
			u->st.files_over_budget++;
			u->st.over_budget++;
			bp_warn("unwind memory budget full: %s (%u rows) is walked by its frame "
				"pointers (raise --unwind-mem)", what, t.nr_rows);
		}
		f->need = len;
		goto out;
	}
	err = upload(u, start, v, len);
	/* written, even in part: rows kept from these slots' last table go */
	bp_loader__unwind_rows_written(u->l);
	if (err) {
		bp_err("failed to load the unwind table of %s: %s", what, strerror(-err));
		free_add(u, start, len);
		goto out;
	}
	if (f->state == UWF_BUDGET)
		u->st.files_over_budget--;
	f->state = UWF_LOADED;
	f->first = start;
	f->count = len;
	f->rows = t.nr_rows;
	f->base = t.base;
	u->st.rows += t.nr_rows;
	u->st.slots += len;
	u->st.files++;
	file_publish(u, f);
	if (u->st.slots * sizeof(struct bp_uw_row) > u->st.used_peak_bytes)
		u->st.used_peak_bytes = u->st.slots * sizeof(struct bp_uw_row);
	bp_dbg("unwind table of %s: %u rows from %u FDEs (%s), %u not applicable, %u index slots",
	       what, t.nr_rows, t.st.fdes, t.st.source, t.st.rows_invalid, len - t.nr_rows);
out:
	free(v);
	bp_cfi__free(&t);
}

/*
 * The file of an ELF just opened (identity id), found by its build-id or
 * created; its table built when it has none yet. A reference is taken.
 */
static struct uw_file *file_get(struct bp_unwind *u, struct bp_elf *e, const struct ident *id,
				const char *what)
{
	struct file_key k = { bp_elf__build_id(e), id->dev, id->ino, id->size, id->mtime_ns };
	uint64_t h = key_hash(&k);
	struct uw_file *f;
	uint32_t idx;
	size_t n;

	if (!bp_htab_find(&u->files.h, h, file_eq, &u->files, &k, &idx)) {
		f = u->files.v[idx];
	} else {
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		f->build_id = k.build_id ? strdup(k.build_id) : NULL;
		f->dev = id->dev;
		f->ino = id->ino;
		f->size = id->size;
		f->mtime_ns = id->mtime_ns;
		n = bp_elf__segments(e, f->segs, SEGS_MAX);
		f->nr_segs = n < SEGS_MAX ? n : SEGS_MAX;
		if ((k.build_id && !f->build_id) || vec_push(&u->files, f, h, &f->idx)) {
			free(f->build_id);
			free(f);
			return NULL;
		}
	}
	if (f->state == UWF_NONE || (f->state == UWF_BUDGET && may_fit(u, f)))
		file_load(u, f, e, what);
	ident_add(u, id, f);
	f->used = ++u->tick;
	f->refs++;
	return f;
}

static void file_put(struct bp_unwind *u, struct uw_file *f)
{
	if (!f || !f->refs)
		return;
	f->refs--;
	/* without rows it costs nothing in the kernel: no reason to keep it */
	if (!f->refs && f->state != UWF_LOADED)
		file_destroy(u, f);
}

/* row pc = address - bias, through the executable segment the mapping covers */
static bool map_bias(const struct uw_file *f, uint64_t start, uint64_t end, uint64_t pgoff,
		     uint64_t *bias)
{
	uint64_t len = end - start;
	int pass, i;

	/*
	 * The kernel maps from the page below p_offset, so the mapping
	 * overlaps its segment rather than lies in it, and may overlap the
	 * tail of the segment before: the executable one is the mapping's.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < f->nr_segs; i++) {
			const struct bp_elf_segment *g = &f->segs[i];

			if (!pass && !g->exec)
				continue;
			if (g->filesz && pgoff < g->off + g->filesz && g->off < pgoff + len) {
				*bias = start - pgoff + g->off - g->vaddr + f->base;
				return true;
			}
		}
	}
	return false;
}

/* --- a process's maps ------------------------------------------------------- */

enum xkind {
	X_FILE,
	X_VDSO,
	X_OTHER,		/* anonymous (JIT), [vsyscall], ...: frame pointers */
};

struct xmap {
	uint64_t start, end, pgoff, inode;
	char *path;		/* X_FILE */
	uint8_t kind;
	bool deleted;
};

struct maps_ctx {
	struct xmap *v;
	size_t n, cap;
	int err;
};

static int maps_cb(const struct bp_maps_line *l, void *ctx)
{
	struct maps_ctx *c = ctx;
	struct xmap *x;

	if (!l->exec)
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		void *np = reallocarray(c->v, ncap, sizeof(*c->v));

		if (!np) {
			c->err = -ENOMEM;
			return 1;
		}
		c->v = np;
		c->cap = ncap;
	}
	x = &c->v[c->n];
	memset(x, 0, sizeof(*x));
	x->start = l->start;
	x->end = l->end;
	x->pgoff = l->pgoff;
	x->inode = l->inode;
	x->deleted = l->deleted;
	if (l->path_len && l->path[0] == '/') {
		x->kind = X_FILE;
		x->path = strndup(l->path, l->path_len);
		if (!x->path) {
			c->err = -ENOMEM;
			return 1;
		}
	} else {
		x->kind = !strcmp(l->path, "[vdso]") ? X_VDSO : X_OTHER;
	}
	c->n++;
	return 0;
}

static void maps_free(struct maps_ctx *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
}

static int cmp_xmap(const void *a, const void *b)
{
	const struct xmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool same_mnt_ns(struct bp_unwind *u, pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	return !u->self_mnt_ns || stat(path, &st) || st.st_ino == u->self_mnt_ns;
}

/*
 * The mapped file without /proc/PID/map_files (an old kernel, or no
 * capability for it): by path inside the process's root, then in ours when
 * that is the same, untrusted (util/safeopen.h), and only the inode the
 * maps line names. Deleted files are not looked up by path. fd or -errno.
 */
static int open_by_path(struct bp_unwind *u, pid_t pid, const struct xmap *x, struct stat *st)
{
	char root[64];
	int fd = -ENOENT, root_fd;

	if (x->deleted)
		return -ENOENT;
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	/* /proc/PID/root is a magic link to its root: the one link we follow */
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd >= 0) {
		fd = bp_open_untrusted(root_fd, x->path, NULL, st);
		close(root_fd);
	}
	if (fd < 0 && same_mnt_ns(u, pid))
		fd = bp_open_untrusted(AT_FDCWD, x->path, NULL, st);
	if (fd >= 0 && x->inode && (uint64_t)st->st_ino != x->inode) {
		close(fd);
		fd = -ESTALE;
	}
	return fd;
}

static void ident_of(const struct stat *st, struct ident *id)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = st->st_size;
	id->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	id->f = NULL;
}

/*
 * The file of an executable mapping, with a reference: known by its
 * identity, or opened now (while the process lives), its table built, and
 * closed. NULL when it cannot be opened or is not ELF.
 */
static struct uw_file *map_file(struct bp_unwind *u, pid_t pid, const struct xmap *x)
{
	struct uw_file *f;
	struct bp_elf *e;
	char mf[96];
	struct stat st, fst;
	struct ident id;
	int fd = -1, err;

	/* the very inode mapped, also when deleted or in another mount namespace */
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)x->start, (unsigned long long)x->end);
	if (stat(mf, &st)) {
		fd = open_by_path(u, pid, x, &st);
		if (fd < 0)
			return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	ident_of(&st, &id);
	f = ident_find(u, &id);
	if (f) {
		if (fd >= 0)
			close(fd);
		if (f->state == UWF_BUDGET && may_fit(u, f))
			goto reopen;
		f->used = ++u->tick;
		f->refs++;
		return f;
	}
reopen:
	/* time's up for this update: listed without a table until the next slice */
	if (u->deadline_ns && mono_ns() >= u->deadline_ns) {
		if (fd >= 0)
			close(fd);
		u->deferred = true;
		return NULL;
	}
	if (fd < 0) {
		fd = open(mf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		/* replaced between the stat and the open: next time */
		if (fd < 0 || fstat(fd, &fst) || !S_ISREG(fst.st_mode) ||
		    fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
	}
	err = bp_elf__open_fd(fd, NULL, &e);	/* takes fd */
	if (err) {
		bp_dbg("pid %d: %s not usable as ELF for unwinding: %s", pid, x->path,
		       strerror(-err));
		return NULL;
	}
	f = file_get(u, e, &id, x->path);
	bp_elf__free(e);
	return f;
}

/* every 64-bit process of this kernel maps the same vdso: ours names theirs */
static struct uw_file *vdso_file(struct bp_unwind *u)
{
	/* an identity no file has: device 0, inode 0, mtime -1 */
	struct ident id = { .dev = 0, .ino = 0, .size = 0, .mtime_ns = -1 };
	struct uw_file *f;
	const void *img;
	struct bp_elf *e;
	size_t size;

	f = ident_find(u, &id);
	if (f) {
		f->used = ++u->tick;
		f->refs++;
		return f;
	}
	img = bp_syms__vdso_image(u->syms, &size);
	if (!img || bp_elf__open_mem(img, size, &e))
		return NULL;
	f = file_get(u, e, &id, "[vdso]");
	bp_elf__free(e);
	return f;
}

/* --- processes ------------------------------------------------------------ */

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct uw_proc *)((const struct vec *)ctx)->v[idx])->pid ==
	       *(const pid_t *)key;
}

static struct uw_proc *proc_find(struct bp_unwind *u, pid_t pid)
{
	uint32_t idx;

	if (bp_htab_find(&u->procs.h, bp_hash_u64((uint32_t)pid), proc_eq, &u->procs, &pid, &idx))
		return NULL;
	return u->procs.v[idx];
}

static void proc_release(struct bp_unwind *u, struct uw_proc *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_files; i++)
		file_put(u, p->files[i]);
	free(p->files);
	p->files = NULL;
	p->nr_files = 0;
}

static void proc_destroy(struct bp_unwind *u, struct uw_proc *p)
{
	struct uw_proc *last = u->procs.v[u->procs.n - 1];
	uint32_t idx = p->idx;

	proc_release(u, p);
	bp_htab_remove(&u->procs.h, bp_hash_u64((uint32_t)p->pid), idx);
	if (last != p) {
		bp_htab_remove(&u->procs.h, bp_hash_u64((uint32_t)last->pid), last->idx);
		bp_htab_insert(&u->procs.h, bp_hash_u64((uint32_t)last->pid), idx);
		u->procs.v[idx] = last;
		last->idx = idx;
	}
	u->procs.n--;
	u->st.procs--;
	free(p);
}

static int update_once(struct bp_unwind *u, pid_t pid, bool force)
{
	struct uw_proc *p = proc_find(u, pid);
	struct bp_uw_proc *v = u->val;
	struct maps_ctx mc = {};
	struct uw_file **files = NULL;
	uint32_t key = (uint32_t)pid, nf = 0;
	char path[64];
	size_t i, bad = 0;
	uint64_t h;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	err = bp_procmaps__read(path, maps_cb, &mc, &bad);
	if (!err)
		err = mc.err;
	/* gone, or a zombie (its maps read empty) */
	if (!err && !mc.n)
		err = -ESRCH;
	if (err == -ENOENT)
		err = -ESRCH;
	if (err) {
		maps_free(&mc);
		return err;
	}
	qsort(mc.v, mc.n, sizeof(*mc.v), cmp_xmap);
	files = calloc(mc.n, sizeof(*files));
	if (!files) {
		maps_free(&mc);
		return -ENOMEM;
	}
	memset(v, 0, sizeof(*v));
	for (i = 0; i < mc.n; i++) {
		const struct xmap *x = &mc.v[i];
		struct uw_file *f = NULL;
		struct bp_uw_map *um;
		uint64_t bias;

		if (x->kind == X_FILE)
			f = map_file(u, pid, x);
		else if (x->kind == X_VDSO)
			f = vdso_file(u);
		if (f)
			files[nf++] = f;
		if (v->nr == BP_UW_MAPS) {
			/* addresses past the list are walked by frame pointers, not missed */
			v->flags |= BP_UWP_PARTIAL;
			continue;
		}
		um = &v->maps[v->nr++];
		um->start = x->start;
		um->end = x->end;
		if (f && f->state == UWF_LOADED && map_bias(f, x->start, x->end, x->pgoff, &bias)) {
			um->bias = bias;
			um->first = f->first;
			um->count = f->count;
		} else {
			um->first = f && f->state == UWF_BUDGET ? BP_UW_NONE_BUDGET
							       : BP_UW_NONE_NOCFI;
		}
	}
	maps_free(&mc);
	h = bp_hash_bytes(v, offsetof(struct bp_uw_proc, maps) + v->nr * sizeof(v->maps[0]), 3);
	if (p && !force && h == p->val_hash) {
		for (i = 0; i < nf; i++)
			file_put(u, files[i]);
		free(files);
		return 1;
	}
	err = bpf_map_update_elem(u->procs_fd, &key, v, BPF_ANY);
	if (err) {
		if (err == -E2BIG || err == -ENOMEM)
			u->st.procs_full++;
		else
			bp_dbg("pid %d: cannot load its unwind mappings: %s", pid, strerror(-err));
		for (i = 0; i < nf; i++)
			file_put(u, files[i]);
		free(files);
		if (p)
			proc_destroy(u, p);
		return err;
	}
	u->st.updates++;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || vec_push(&u->procs, p, bp_hash_u64(key), &p->idx)) {
			free(p);
			bpf_map_delete_elem(u->procs_fd, &key);
			for (i = 0; i < nf; i++)
				file_put(u, files[i]);
			free(files);
			return -ENOMEM;
		}
		p->pid = pid;
		u->st.procs++;
		if (u->st.procs > u->st.procs_peak)
			u->st.procs_peak = u->st.procs;
	}
	/* the new references first: a file in both lists keeps its table */
	proc_release(u, p);
	p->files = files;
	p->nr_files = nf;
	p->val_hash = h;
	return 0;
}

/*
 * A table built on first sight takes tens of ms (a big executable's), and
 * a process just started maps its libraries meanwhile (ld.so, the first
 * imports): the list read before the build misses them, and their frames
 * would stay cut until a miss round trip. The maps are read once more
 * after a build, so that the list is as new as the tables took to make.
 */
#define UW_REREAD_NS	(1000ULL * 1000)

/*
 * Tables built in one update, at most this long: a process that maps 30
 * libraries (perf: 250,000 rows, 120 ms here, several times that on a
 * busy machine) would hold the event loop, and the command it execs next
 * would run with cut stacks all that time. The rest is built in later
 * slices, between events (bp_unwind__deferred()).
 */
#define UW_SLICE_NS	(10ULL * 1000 * 1000)

int bp_unwind__update(struct bp_unwind *u, pid_t pid, bool force)
{
	uint64_t built = u->st.build_ns;
	int err;

	u->deferred = false;
	u->deadline_ns = mono_ns() + UW_SLICE_NS;
	err = update_once(u, pid, force);
	if (!err && u->st.build_ns - built >= UW_REREAD_NS)
		update_once(u, pid, false);
	u->deadline_ns = 0;
	return err;
}

bool bp_unwind__deferred(const struct bp_unwind *u)
{
	return u && u->deferred;
}

void bp_unwind__forget(struct bp_unwind *u, pid_t pid)
{
	struct uw_proc *p = proc_find(u, pid);
	uint32_t key = (uint32_t)pid;

	if (!p)
		return;
	/* BPF drops it at exec and exit itself; a write racing with those may not */
	bpf_map_delete_elem(u->procs_fd, &key);
	proc_destroy(u, p);
}

uint32_t bp_unwind__sweep(struct bp_unwind *u)
{
	return bp_unwind__sweep_live(u, NULL);
}

uint32_t bp_unwind__sweep_live(struct bp_unwind *u, const struct bp_pidset *live)
{
	char path[64];
	uint32_t i, n = 0;

	for (i = u->procs.n; i-- > 0;) {
		struct uw_proc *p = u->procs.v[i];
		bool gone;

		if (live) {
			gone = !bp_pidset__has(live, p->pid);
		} else {
			snprintf(path, sizeof(path), "/proc/%d", p->pid);
			gone = access(path, F_OK) && errno == ENOENT;
		}
		if (gone) {
			bp_unwind__forget(u, p->pid);
			n++;
		}
	}
	return n;
}

int bp_unwind__preload(struct bp_unwind *u, const char *path)
{
	struct uw_file *f;
	struct bp_elf *e;
	struct stat st;
	struct ident id;
	int fd, err;

	/* our own files, or a command we are about to run: our root, our rights */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	ident_of(&st, &id);
	if (ident_find(u, &id)) {
		close(fd);
		return 0;
	}
	err = bp_elf__open_fd(fd, NULL, &e);
	if (err)
		return err;
	f = file_get(u, e, &id, path);
	bp_elf__free(e);
	if (!f)
		return -ENOMEM;
	/* cached, unreferenced: evictable like any table no process lists */
	file_put(u, f);
	return 0;
}

/*
 * The C runtime every process maps, as we map it too: its tables are built
 * before any process needs them, so that a command's first samples (which
 * reach libc before its first list can have listed it) need one maps
 * read, not a table build.
 */
static void preload_runtime(struct bp_unwind *u)
{
	static const char *const names[] = { "libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2" };
	char line[BP_MAPS_LINE_MAX];
	FILE *f;
	size_t i;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct bp_maps_line l;
		const char *base;

		if (bp_procmaps__parse_line(line, &l) || !l.exec || l.path[0] != '/')
			continue;
		base = strrchr(l.path, '/') + 1;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(base, names[i]))
				bp_unwind__preload(u, l.path);
	}
	fclose(f);
}

void bp_unwind__stats(const struct bp_unwind *u, struct bp_unwind_stats *out)
{
	*out = u->st;
	out->used_bytes = u->st.slots * sizeof(struct bp_uw_row);
	out->procs_bytes = u->st.procs * sizeof(struct bp_uw_proc);
	out->procs_peak_bytes = u->st.procs_peak * sizeof(struct bp_uw_proc);
}

int bp_unwind__new(struct bp_loader *l, struct bp_syms *syms, struct bp_unwind **out)
{
	struct bp_unwind *u;
	struct stat st;
	uint32_t i;

	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->val = calloc(1, sizeof(*u->val));
	if (!u->val) {
		free(u);
		return -ENOMEM;
	}
	u->syms = syms;
	u->l = l;
	u->rows_fd = bp_loader__unwind_rows_fd(l);
	u->procs_fd = bp_loader__unwind_procs_fd(l);
	u->files_fd = bp_loader__unwind_files_fd(l);
	u->capacity = l->uw_rows;
	u->nr_chunks = (u->capacity + BP_UW_CHUNK_ROWS - 1) / BP_UW_CHUNK_ROWS;
	u->st.budget_bytes = (uint64_t)u->capacity * sizeof(struct bp_uw_row);
	u->chunk_fd = malloc(u->nr_chunks * sizeof(*u->chunk_fd));
	if (!u->chunk_fd) {
		bp_unwind__free(u);
		return -ENOMEM;
	}
	for (i = 0; i < u->nr_chunks; i++)
		u->chunk_fd[i] = -1;
	if (!stat("/proc/self/ns/mnt", &st))
		u->self_mnt_ns = st.st_ino;
	if (free_add(u, 0, u->capacity)) {
		bp_unwind__free(u);
		return -ENOMEM;
	}
	preload_runtime(u);
	*out = u;
	return 0;
}

void bp_unwind__free(struct bp_unwind *u)
{
	uint32_t i;

	if (!u)
		return;
	while (u->procs.n)
		proc_destroy(u, u->procs.v[u->procs.n - 1]);
	while (u->files.n)
		file_destroy(u, u->files.v[u->files.n - 1]);
	free(u->procs.v);
	bp_htab_free(&u->procs.h);
	free(u->files.v);
	bp_htab_free(&u->files.h);
	free(u->idents);
	bp_htab_free(&u->ident_h);
	free(u->free);
	free(u->val);
	for (i = 0; u->chunk_fd && i < u->nr_chunks; i++)
		if (u->chunk_fd[i] >= 0)
			close(u->chunk_fd[i]);
	free(u->chunk_fd);
	free(u);
}
