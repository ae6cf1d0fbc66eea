// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind table cache and the rows array's allocator. See unwind.h and
 * docs/symbols.md ("Unwinding").
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "boundprof.h"
#include "collect/loader.h"
#include "collect/unwind.h"
#include "symbolize/dwarf_cfi.h"
#include "symbolize/elfsym.h"
#include "symbolize/symbols.h"
#include "util/htab.h"
#include "util/log.h"

/* rows written per batch update */
#define UPLOAD_BATCH	65536

enum uwf_state {
	UWF_NONE = 0,		/* not built yet */
	UWF_LOADED,		/* rows in the kernel */
	UWF_NOCFI,		/* no usable CFI: frame pointers */
	UWF_BUDGET,		/* did not fit; need rows */
};

struct uw_file {
	uint32_t idx;		/* in files */
	char *build_id;
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	bool vdso;
	uint8_t state;
	uint32_t first, count;	/* the loaded region */
	uint32_t need;		/* rows, once known (for an over-budget file) */
	uint64_t base;		/* ELF vaddr the rows count from */
	uint32_t refs;		/* processes listing it */
	uint64_t used;		/* tick of its last reference */
};

struct uw_proc {
	uint32_t idx;		/* in procs */
	pid_t pid;
	struct uw_file **files;	/* one reference each */
	uint32_t nr_files;
	uint64_t updated_ns;
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
	struct bp_syms *syms;
	int rows_fd, procs_fd;
	uint32_t capacity;	/* rows */
	struct extent *free;	/* sorted by start, coalesced */
	uint32_t nr_free, cap_free;
	struct vec files, procs;
	uint64_t tick;
	struct bp_uw_proc *val;	/* the value being written */
	struct bp_unwind_stats st;
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
	return bp_hash_u64(k->dev * 0x9e3779b97f4a7c15ULL ^ k->ino ^ (k->size << 20) ^
			   (uint64_t)k->mtime_ns);
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
	free_add(u, f->first, f->count);
	u->st.rows -= f->count;
	u->st.files--;
	f->state = UWF_NONE;
	f->first = f->count = 0;
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

static int upload(struct bp_unwind *u, uint32_t first, const struct bp_uw_row *rows, uint32_t n)
{
	uint32_t *keys, done = 0, i;
	int err = 0;

	keys = malloc((n < UPLOAD_BATCH ? n : UPLOAD_BATCH) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	while (done < n) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t cnt = n - done < UPLOAD_BATCH ? n - done : UPLOAD_BATCH;

		for (i = 0; i < cnt; i++)
			keys[i] = first + done + i;
		err = bpf_map_update_batch(u->rows_fd, keys, rows + done, &cnt, &opts);
		if (err) {
			/* no batch updates on arrays before 5.6: one at a time */
			for (i = 0; i < cnt; i++) {
				err = bpf_map_update_elem(u->rows_fd, &keys[i], &rows[done + i],
							  BPF_ANY);
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

/* an Elf for the file of mapping m (fd opened, or the vdso image): 0 or -errno */
static int open_mapped(struct bp_unwind *u, pid_t pid, const struct bp_syms_xmap *m,
		       struct bp_elf **e)
{
	const void *img;
	size_t size;
	int fd;

	if (m->vdso) {
		img = bp_syms__vdso_image(u->syms, &size);
		return img ? bp_elf__open_mem(img, size, e) : -ENOENT;
	}
	fd = bp_syms__open_exec(u->syms, pid, m);
	if (fd < 0)
		return fd;
	return bp_elf__open_fd(fd, NULL, e);	/* takes fd */
}

/* build and load the table of file f, mapped by pid at m */
static void file_load(struct bp_unwind *u, struct uw_file *f, pid_t pid,
		      const struct bp_syms_xmap *m, struct bp_elf *open)
{
	struct bp_cfi_table t;
	struct bp_elf *e = NULL;
	uint64_t t0 = mono_ns();
	uint32_t start;
	int err;

	/* known not to fit, and nothing changed since: don't rebuild */
	if (f->state == UWF_BUDGET) {
		uint32_t i, best = 0;

		for (i = 0; i < u->nr_free; i++)
			if (u->free[i].len > best)
				best = u->free[i].len;
		if (best < f->need) {
			for (i = 0; i < u->files.n; i++) {
				struct uw_file *g = u->files.v[i];

				if (g->state == UWF_LOADED && !g->refs)
					break;
			}
			if (i == u->files.n)
				return;
		}
	}
	if (open) {
		e = open;
	} else {
		err = open_mapped(u, pid, m, &e);
		if (err) {
			/* gone or replaced under us: the next process mapping it may do better */
			bp_dbg("pid %d: cannot open %s for its unwind table: %s", pid,
			       m->path ? m->path : "[vdso]", strerror(-err));
			return;
		}
	}
	err = bp_cfi__build(bp_elf__elf(e), bp_elf__size(e), &t);
	if (!open)
		bp_elf__free(e);
	u->st.build_ns += mono_ns() - t0;
	if (err) {
		bp_dbg("pid %d: no unwind table for %s: %s", pid, m->path ? m->path : "[vdso]",
		       strerror(-err));
		if (f->state == UWF_BUDGET)
			u->st.files_over_budget--;
		f->state = UWF_NOCFI;
		u->st.files_nocfi++;
		return;
	}
	err = make_room(u, t.nr_rows, &start);
	if (err) {
		if (f->state != UWF_BUDGET) {
			f->state = UWF_BUDGET;
			u->st.files_over_budget++;
			u->st.over_budget++;
			bp_warn("unwind memory budget full: %s (%u rows) is walked by its frame "
				"pointers (raise --unwind-mem)", m->path ? m->path : "[vdso]",
				t.nr_rows);
		}
		f->need = t.nr_rows;
		bp_cfi__free(&t);
		return;
	}
	err = upload(u, start, t.rows, t.nr_rows);
	if (err) {
		bp_err("failed to load the unwind table of %s: %s",
		       m->path ? m->path : "[vdso]", strerror(-err));
		free_add(u, start, t.nr_rows);
		bp_cfi__free(&t);
		return;
	}
	if (f->state == UWF_BUDGET)
		u->st.files_over_budget--;
	f->state = UWF_LOADED;
	f->first = start;
	f->count = t.nr_rows;
	f->base = t.base;
	u->st.rows += t.nr_rows;
	u->st.files++;
	bp_dbg("unwind table of %s: %u rows from %u FDEs (%s), %u not applicable",
	       m->path ? m->path : "[vdso]", t.nr_rows, t.st.fdes, t.st.source, t.st.rows_invalid);
	bp_cfi__free(&t);
}

static struct uw_file *file_get(struct bp_unwind *u, pid_t pid, const struct bp_syms_xmap *m,
				struct bp_elf *open)
{
	struct file_key k = { m->build_id, m->dev, m->ino, m->size, m->mtime_ns };
	uint64_t h = key_hash(&k);
	struct uw_file *f;
	uint32_t idx;

	if (!bp_htab_find(&u->files.h, h, file_eq, &u->files, &k, &idx)) {
		f = u->files.v[idx];
	} else {
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		f->build_id = m->build_id ? strdup(m->build_id) : NULL;
		f->dev = m->dev;
		f->ino = m->ino;
		f->size = m->size;
		f->mtime_ns = m->mtime_ns;
		f->vdso = m->vdso;
		if ((m->build_id && !f->build_id) || vec_push(&u->files, f, h, &f->idx)) {
			free(f->build_id);
			free(f);
			return NULL;
		}
	}
	f->used = ++u->tick;
	if (f->state == UWF_NONE || f->state == UWF_BUDGET)
		file_load(u, f, pid, m, open);
	f->refs++;
	return f;
}

static void file_put(struct bp_unwind *u, struct uw_file *f)
{
	if (!f || !f->refs)
		return;
	f->refs--;
	/* without rows it costs nothing to remember, but memory: forget it */
	if (!f->refs && f->state != UWF_LOADED)
		file_destroy(u, f);
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

int bp_unwind__update(struct bp_unwind *u, pid_t pid, bool force)
{
	struct uw_proc *p = proc_find(u, pid);
	struct bp_uw_proc *v = u->val;
	struct bp_syms_xmap *xm = NULL;
	struct uw_file **files = NULL;
	uint32_t key = (uint32_t)pid;
	size_t nr = 0, i;
	uint32_t nf = 0;
	uint64_t h;
	int err;

	err = bp_syms__exec_maps(u->syms, pid, &xm, &nr);
	if (err)
		return err;
	files = calloc(nr ? nr : 1, sizeof(*files));
	if (!files) {
		free(xm);
		return -ENOMEM;
	}
	memset(v, 0, sizeof(*v));
	for (i = 0; i < nr; i++) {
		const struct bp_syms_xmap *m = &xm[i];
		struct bp_uw_map *um;
		struct uw_file *f = NULL;

		if (m->elf) {
			f = file_get(u, pid, m, NULL);
			if (f)
				files[nf++] = f;
		}
		if (v->nr == BP_UW_MAPS) {
			/* addresses past the list are walked by frame pointers, not missed */
			v->flags |= BP_UWP_PARTIAL;
			continue;
		}
		um = &v->maps[v->nr++];
		um->start = m->start;
		um->end = m->end;
		if (f && f->state == UWF_LOADED) {
			um->bias = m->bias + f->base;
			um->first = f->first;
			um->count = f->count;
		} else {
			um->first = f && f->state == UWF_BUDGET ? BP_UW_NONE_BUDGET
							       : BP_UW_NONE_NOCFI;
		}
	}
	free(xm);
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
	}
	/* the new references first: a file in both lists keeps its table */
	proc_release(u, p);
	p->files = files;
	p->nr_files = nf;
	p->updated_ns = mono_ns();
	p->val_hash = h;
	return 0;
}

uint64_t bp_unwind__updated_ns(struct bp_unwind *u, pid_t pid)
{
	struct uw_proc *p = proc_find(u, pid);

	return p ? p->updated_ns : 0;
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

uint32_t bp_unwind__sweep(struct bp_unwind *u, const char *proc_root)
{
	char path[64];
	uint32_t i, n = 0;

	for (i = u->procs.n; i-- > 0;) {
		struct uw_proc *p = u->procs.v[i];

		snprintf(path, sizeof(path), "%s/%d", proc_root ? proc_root : "/proc", p->pid);
		if (access(path, F_OK) && errno == ENOENT) {
			bp_unwind__forget(u, p->pid);
			n++;
		}
	}
	return n;
}

void bp_unwind__stats(const struct bp_unwind *u, struct bp_unwind_stats *out)
{
	*out = u->st;
	out->used_bytes = u->st.rows * sizeof(struct bp_uw_row);
	out->procs_bytes = u->st.procs * sizeof(struct bp_uw_proc);
}

/*
 * The C runtime every process maps, as we map it too: its tables are built
 * before any process needs them, so that a command's first samples (which
 * reach libc before its first maps read can have listed it) are one maps
 * read, not one table build, from whole stacks. They stay evictable.
 */
static void preload(struct bp_unwind *u)
{
	static const char *const names[] = { "libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2" };
	unsigned long long start, end, pgoff;
	char line[4352], path[4096], perms[8];
	struct bp_syms_xmap m;
	struct stat st;
	struct bp_elf *e;
	FILE *f;
	size_t i;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *base;
		struct uw_file *uf;
		int fd;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &pgoff,
			   path) != 5 || perms[2] != 'x')
			continue;
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(base, names[i]))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) || bp_elf__open_fd(fd, NULL, &e)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		memset(&m, 0, sizeof(m));
		m.start = start;
		m.end = end;
		m.build_id = bp_elf__build_id(e);
		m.dev = st.st_dev;
		m.ino = st.st_ino;
		m.size = st.st_size;
		m.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
		m.elf = !bp_elf__map_bias(e, start, end, pgoff, &m.bias);
		m.path = path;
		uf = m.elf && m.build_id ? file_get(u, getpid(), &m, e) : NULL;
		file_put(u, uf);
		bp_elf__free(e);
	}
	fclose(f);
}

int bp_unwind__new(struct bp_loader *l, struct bp_syms *syms, struct bp_unwind **out)
{
	struct bp_unwind *u;

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
	u->rows_fd = bp_loader__unwind_rows_fd(l);
	u->procs_fd = bp_loader__unwind_procs_fd(l);
	u->capacity = l->uw_rows;
	u->st.budget_bytes = (uint64_t)u->capacity * sizeof(struct bp_uw_row);
	if (free_add(u, 0, u->capacity)) {
		bp_unwind__free(u);
		return -ENOMEM;
	}
	preload(u);
	*out = u;
	return 0;
}

void bp_unwind__free(struct bp_unwind *u)
{
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
	free(u->free);
	free(u->val);
	free(u);
}
