// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer: a table of processes (each a snapshot of its maps), a cache
 * of mapped files keyed by (st_dev, st_ino) and shared by every process that
 * maps them, the kernel table, the vdso, and an arena of interned strings
 * that outlives all of them. See docs/symbols.md.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "proc/procinfo.h"
#include "proc/procmaps.h"
#include "symbolize/demangle.h"
#include "symbolize/dwarf_lines.h"
#include "symbolize/elfsym.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perfmap.h"
#include "symbolize/symbols.h"
#include "util/hex.h"
#include "util/htab.h"
#include "util/log.h"
#include "util/safeopen.h"
#include "proc/pidset.h"

/*
 * Garbage addresses from broken frame-pointer chains are common; without a
 * limit each one would re-read /proc/PID/maps or stat the perf map.
 */
#define REFRESH_NS		(100ULL * 1000 * 1000)
/* unreferenced files whose symbols are kept: a short-lived process run again
 * and again (shell loops, make) would otherwise re-parse its binary every time */
#define IDLE_FILES_MAX		64
/*
 * Files shared by many processes (libc, ld.so, a shell's libraries) whose
 * inode we hold by an O_PATH fd: a new process mapping one is checked by
 * an fstat() of that fd, not a stat() of its map_files entry (a lookup that
 * makes a proc inode and takes the process's mmap lock; two a process
 * under 20 new processes a second). Few, so that the agent's fds stay
 * bounded, and let go as soon as the file is deleted (its blocks would
 * stay allocated while we held it).
 */
#define INODE_FDS_MAX		8
/* how far a non-executable file mapping looks for an executable one of the
 * same file, to borrow its ELF for the vaddr arithmetic */
#define LINK_WALK		4
#define ARENA_CHUNK		(64 * 1024)
#define VDSO_MAX		(1024 * 1024)

/* --- state ---------------------------------------------------------------- */

struct chunk {
	struct chunk *next;
	size_t used, cap;
	_Alignas(16) char data[];
};

struct istr {
	size_t len;
	char s[];
};

/*
 * A mapped file, known by (st_dev, st_ino) and checked by size, mtime and
 * ctime (which no user can set back), so that a reused inode is not taken
 * for the file that had it. No fd is held: its symbols were loaded while a
 * process mapping it was alive, then the file was closed.
 */
struct sym_file {
	uint32_t idx;		/* in bp_syms.filev */
	bool indexed;		/* findable by (dev, ino); a stale version only
				 * serves the snapshots that hold it */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	struct bp_elf *elf;	/* symbols loaded; NULL when not usable as ELF */
	const char *path;	/* interned, as the first process saw it */
	const char *module;	/* interned basename */
	const char *build_id;	/* interned */
	unsigned int refcnt;
	struct sym_file *idle_prev, *idle_next;
	bool idle;
	bool pending;		/* its symbols not read yet: see BP_SYMS_PENDING_MAX */
	int ifd;		/* O_PATH fd of its inode (INODE_FDS_MAX), or -1 */
	uint64_t ifd_used;	/* when that fd last served, for the LRU */
};

enum map_kind {
	MAP_FILE,
	MAP_ANON,
	MAP_VDSO,
	MAP_SPECIAL,		/* [heap], [stack], [vvar], ... */
};

struct sym_map {
	uint64_t start, end, pgoff, inode;
	const char *module;	/* interned */
	const char *path;	/* interned; NULL unless a file */
	struct sym_file *file;	/* a reference, or NULL */
	uint8_t kind;
	bool exec;
};

struct sym_proc {
	uint32_t idx;		/* in bp_syms.procv */
	pid_t pid;
	pid_t nspid;		/* pid inside its own pid namespace */
	uid_t euid;		/* its owner, for the files it names */
	bool euid_known;
	bool same_root;		/* shares our mount namespace */
	bool exited;
	bool retiring;		/* gone: dropped at the next bp_syms__retire() */
	struct sym_map *maps;
	size_t nr_maps;
	/* the image an exec replaced, kept for its samples (bp_syms__keep_image()) */
	struct sym_map *kept;
	size_t nr_kept;
	uint16_t kept_image;
	bool has_kept;
	struct bp_perfmap *pm;
	uint64_t last_refresh;
	uint64_t last_pm_check;
};

/* pointers kept dense, indexed by a util/htab table */
struct ptr_vec {
	void **v;
	uint32_t n, cap;
	struct bp_htab h;
};

/* a range of one of the names a kallsyms prefetch looked for */
struct ksym_range {
	size_t which;
	uint64_t lo, hi;
};

struct bp_syms {
	char *proc_root;
	char *kallsyms_path;
	char *debug_root;
	char *perfmap_dir;
	uint64_t dwarf_budget;
	bool dwarf_not_from_root;
	bool lazy;

	struct ptr_vec procs;	/* struct sym_proc * */
	struct ptr_vec files;	/* struct sym_file * */
	struct ptr_vec strs;	/* struct istr * */
	struct chunk *chunks;

	struct bp_kallsyms *ksyms;
	struct bp_kallsyms **old_ksyms;	/* kept: their names were handed out */
	size_t nr_old_ksyms;
	const char *kernel_build_id;
	/* kallsyms read on a thread of its own (bp_syms__prefetch_kernel) */
	pthread_t kload;
	bool kload_started;
	struct bp_kallsyms *kload_k;
	int kload_err;
	/* the ranges of pre_names that thread found in ksyms, while they were hot */
	const char *const *pre_names;
	size_t nr_pre_names;
	struct ksym_range *pre;
	size_t nr_pre, cap_pre;
	bool pre_valid;

	struct bp_elf *vdso;
	int vdso_err;
	uint64_t vdso_size;
	const char *vdso_build_id;
	void *vdso_image;	/* a copy, for its CFI */
	size_t vdso_image_size;

	struct sym_file *idle_head, *idle_tail;
	size_t nr_idle;
	size_t nr_pending;
	uint32_t nr_kept;		/* processes with a kept image */

	uint32_t nr_ifds;		/* sym_file.ifd open */
	uint64_t ifd_tick;
	ino_t self_mnt_ns;
	struct {			/* bp_syms__hold_ids() */
		pid_t pid;		/* 0: none held */
		uid_t euid;
		pid_t nspid;
		uint64_t mnt_ns;
	} held;
	struct bp_syms_stats stats;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* --- dense pointer vectors ---------------------------------------------- */

static int vec_add(struct ptr_vec *v, void *ptr, uint64_t hash, uint32_t *idx)
{
	if (v->n == UINT32_MAX)
		return -E2BIG;
	if (v->n == v->cap) {
		uint32_t ncap = v->cap ? v->cap * 2 : 64;
		void *np = reallocarray(v->v, ncap, sizeof(*v->v));

		if (!np)
			return -ENOMEM;
		v->v = np;
		v->cap = ncap;
	}
	if (bp_htab_insert(&v->h, hash, v->n))
		return -ENOMEM;
	v->v[v->n] = ptr;
	*idx = v->n++;
	return 0;
}

/*
 * Take out entry idx (indexed under hash when indexed): the last entry moves
 * into its place, so moved_idx() tells it its new index (and is given its
 * hash to re-index it).
 */
static void vec_del(struct ptr_vec *v, uint32_t idx, bool indexed, uint64_t hash,
		    bool last_indexed, uint64_t last_hash)
{
	uint32_t last = v->n - 1;

	if (indexed)
		bp_htab_remove(&v->h, hash, idx);
	if (idx != last) {
		if (last_indexed) {
			bp_htab_remove(&v->h, last_hash, last);
			/* cannot fail: the table has the room the removal made */
			bp_htab_insert(&v->h, last_hash, idx);
		}
		v->v[idx] = v->v[last];
	}
	v->n--;
}

static void vec_free(struct ptr_vec *v)
{
	free(v->v);
	bp_htab_free(&v->h);
	memset(v, 0, sizeof(*v));
}

/* --- interned strings --------------------------------------------------- */

static void *arena_alloc(struct bp_syms *s, size_t size)
{
	struct chunk *c = s->chunks;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		/* a big one-off goes behind the current chunk, which keeps its room */
		if (s->chunks && cap > ARENA_CHUNK) {
			c->next = s->chunks->next;
			s->chunks->next = c;
		} else {
			c->next = s->chunks;
			s->chunks = c;
		}
	}
	p = c->data + c->used;
	c->used += size;
	return p;
}

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct istr *is = ((const struct ptr_vec *)ctx)->v[idx];
	const struct str_key *k = key;

	return is->len == k->len && !memcmp(is->s, k->s, k->len);
}

static const char *intern_len(struct bp_syms *s, const char *str, size_t len)
{
	struct str_key k = { str, len };
	uint64_t h = bp_hash_bytes(str, len, 0);
	struct istr *is;
	uint32_t idx;

	if (!bp_htab_find(&s->strs.h, h, str_eq, &s->strs, &k, &idx))
		return ((struct istr *)s->strs.v[idx])->s;
	is = arena_alloc(s, sizeof(*is) + len + 1);
	if (!is)
		return NULL;
	is->len = len;
	memcpy(is->s, str, len);
	is->s[len] = '\0';
	if (vec_add(&s->strs, is, h, &idx))
		return NULL;
	return is->s;
}

static const char *intern(struct bp_syms *s, const char *str)
{
	return str ? intern_len(s, str, strlen(str)) : NULL;
}

/* --- files ---------------------------------------------------------------- */

static uint64_t file_hash(dev_t dev, ino_t ino)
{
	return bp_hash_u64((uint64_t)dev * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ino);
}

struct file_key {
	dev_t dev;
	ino_t ino;
};

static bool file_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sym_file *f = ((const struct ptr_vec *)ctx)->v[idx];
	const struct file_key *k = key;

	return f->dev == k->dev && f->ino == k->ino;
}

static struct sym_file *file_find(struct bp_syms *s, dev_t dev, ino_t ino)
{
	struct file_key k = { dev, ino };
	uint32_t idx;

	if (bp_htab_find(&s->files.h, file_hash(dev, ino), file_eq, &s->files, &k, &idx))
		return NULL;
	return s->files.v[idx];
}

static void idle_unlink(struct bp_syms *s, struct sym_file *f);

static void ifd_close(struct bp_syms *s, struct sym_file *f)
{
	if (f->ifd < 0)
		return;
	close(f->ifd);
	f->ifd = -1;
	s->nr_ifds--;
}

/* hold f's inode by the map_files entry mf just found to be f: the least used gives way */
static void ifd_open(struct bp_syms *s, struct sym_file *f, const char *mf)
{
	struct sym_file *lru = NULL;
	struct stat st;
	uint32_t i;
	int fd;

	if (f->ifd >= 0)
		return;
	if (s->nr_ifds >= INODE_FDS_MAX) {
		for (i = 0; i < s->files.n; i++) {
			struct sym_file *g = s->files.v[i];

			if (g->ifd >= 0 && (!lru || g->ifd_used < lru->ifd_used))
				lru = g;
		}
		if (!lru)
			return;
		ifd_close(s, lru);
	}
	fd = open(mf, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return;
	/* replaced since: not f's inode */
	if (fstat(fd, &st) || st.st_dev != f->dev || st.st_ino != f->ino) {
		close(fd);
		return;
	}
	f->ifd = fd;
	f->ifd_used = ++s->ifd_tick;
	s->nr_ifds++;
}

/*
 * The stat of the inode a maps line names, from the fd we hold it by:
 * the same answer a stat of its map_files entry gives (the very inode: we
 * hold it, so its number cannot have been taken by another). False when
 * we hold no such inode, or it was deleted (then it is let go).
 */
static bool ifd_stat(struct bp_syms *s, const struct bp_maps_line *l, struct stat *st)
{
	struct sym_file *f = file_find(s, makedev(l->dev_major, l->dev_minor), l->inode);

	if (!f || f->ifd < 0)
		return false;
	if (fstat(f->ifd, st) || st->st_dev != f->dev || st->st_ino != f->ino ||
	    !st->st_nlink || !S_ISREG(st->st_mode)) {
		ifd_close(s, f);
		return false;
	}
	f->ifd_used = ++s->ifd_tick;
	return true;
}

static void file_destroy(struct bp_syms *s, struct sym_file *f)
{
	struct sym_file *last = s->files.v[s->files.n - 1];

	if (f->idle)
		idle_unlink(s, f);
	if (f->pending)
		s->nr_pending--;
	if (f->elf && bp_elf__dwarf(f->elf))
		s->stats.dwarf_bytes -= bp_dwarf__bytes(bp_elf__dwarf(f->elf));
	vec_del(&s->files, f->idx, f->indexed, file_hash(f->dev, f->ino), last->indexed,
		file_hash(last->dev, last->ino));
	last->idx = f->idx;
	ifd_close(s, f);
	bp_elf__free(f->elf);
	free(f);
}

/* a newer version of the file took its (dev, ino): holders keep this one */
static void file_unindex(struct bp_syms *s, struct sym_file *f)
{
	if (!f->indexed)
		return;
	/* no longer found by its inode: nothing to check against it */
	ifd_close(s, f);
	bp_htab_remove(&s->files.h, file_hash(f->dev, f->ino), f->idx);
	f->indexed = false;
}

static void idle_unlink(struct bp_syms *s, struct sym_file *f)
{
	if (f->idle_prev)
		f->idle_prev->idle_next = f->idle_next;
	else
		s->idle_head = f->idle_next;
	if (f->idle_next)
		f->idle_next->idle_prev = f->idle_prev;
	else
		s->idle_tail = f->idle_prev;
	f->idle_prev = f->idle_next = NULL;
	f->idle = false;
	s->nr_idle--;
}

static struct sym_file *file_get(struct bp_syms *s, struct sym_file *f)
{
	if (f->idle)
		idle_unlink(s, f);
	f->refcnt++;
	return f;
}

static void file_put(struct bp_syms *s, struct sym_file *f)
{
	if (!f || --f->refcnt)
		return;
	/* nobody can find a stale version again */
	if (!f->indexed) {
		file_destroy(s, f);
		return;
	}
	f->idle = true;
	f->idle_next = NULL;
	f->idle_prev = s->idle_tail;
	if (s->idle_tail)
		s->idle_tail->idle_next = f;
	else
		s->idle_head = f;
	s->idle_tail = f;
	s->nr_idle++;
	while (s->nr_idle > IDLE_FILES_MAX) {
		struct sym_file *old = s->idle_head;

		idle_unlink(s, old);
		file_destroy(s, old);
	}
}

static bool same_version(const struct sym_file *f, const struct stat *st)
{
	return f->size == st->st_size && f->mtime.tv_sec == st->st_mtim.tv_sec &&
	       f->mtime.tv_nsec == st->st_mtim.tv_nsec && f->ctime.tv_sec == st->st_ctim.tv_sec &&
	       f->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static void set_version(struct sym_file *f, const struct stat *st)
{
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
}

static void count_parse(struct bp_syms *s, struct bp_elf *e)
{
	struct bp_dwarf *d;

	if (bp_elf__syms_loaded(e))
		return;
	bp_elf__load_syms(e);
	s->stats.files_parsed++;
	if (bp_elf__debug_path(e))
		s->stats.debug_files++;
	if (bp_elf__dwarf_in_root_skipped(e))
		s->stats.dwarf_root_skipped++;
	/*
	 * The DWARF of every file a system-wide agent meets is hundreds of
	 * MiB (debug files of libc, of each Python): held within the budget,
	 * first come first kept, the rest named without lines.
	 */
	d = bp_elf__dwarf(e);
	if (!d)
		return;
	if (s->stats.dwarf_bytes + bp_dwarf__bytes(d) > s->dwarf_budget) {
		bp_elf__drop_dwarf(e);
		s->stats.dwarf_over_budget++;
		return;
	}
	s->stats.dwarf_bytes += bp_dwarf__bytes(d);
}

/* --- processes ------------------------------------------------------------ */

static uint64_t proc_hash(pid_t pid)
{
	return bp_hash_u64((uint64_t)(uint32_t)pid);
}

static bool proc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sym_proc *p = ((const struct ptr_vec *)ctx)->v[idx];

	return p->pid == *(const pid_t *)key;
}

static struct sym_proc *proc_find(struct bp_syms *s, pid_t pid)
{
	uint32_t idx;

	if (bp_htab_find(&s->procs.h, proc_hash(pid), proc_eq, &s->procs, &pid, &idx))
		return NULL;
	return s->procs.v[idx];
}

static struct sym_proc *proc_new(struct bp_syms *s, pid_t pid)
{
	struct sym_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->nspid = pid;
	if (vec_add(&s->procs, p, proc_hash(pid), &p->idx)) {
		free(p);
		return NULL;
	}
	return p;
}

static void maps_release(struct bp_syms *s, struct sym_map *maps, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		file_put(s, maps[i].file);
	free(maps);
}

static void proc_destroy(struct bp_syms *s, struct sym_proc *p)
{
	struct sym_proc *last = s->procs.v[s->procs.n - 1];

	vec_del(&s->procs, p->idx, true, proc_hash(p->pid), true, proc_hash(last->pid));
	last->idx = p->idx;
	maps_release(s, p->maps, p->nr_maps);
	if (p->has_kept) {
		maps_release(s, p->kept, p->nr_kept);
		s->nr_kept--;
	}
	bp_perfmap__free(p->pm);
	free(p);
}

static const struct sym_map *map_find(const struct sym_map *maps, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < maps[lo - 1].end)
		return &maps[lo - 1];
	return NULL;
}

static bool same_mnt_ns(struct bp_syms *s, pid_t pid)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/ns/mnt", s->proc_root, pid);
	if (!s->self_mnt_ns || stat(path, &st))
		return true;
	return st.st_ino == s->self_mnt_ns;
}

/* --- perf maps ---------------------------------------------------------- */

/* a process's root, as a directory fd to resolve its paths in; -errno */
static int open_root(const struct bp_syms *s, pid_t pid)
{
	char path[4096];
	int fd;

	/* /proc/PID/root is a magic link to its root: the one link we follow */
	snprintf(path, sizeof(path), "%s/%d/root", s->proc_root, pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static void perfmap_update(struct bp_syms *s, struct sym_proc *p, int root_fd,
			   const char *path, int *err)
{
	struct bp_perfmap_stats before, after;

	bp_perfmap__stats(p->pm, &before);
	*err = root_fd >= 0 ? bp_perfmap__update_at(p->pm, root_fd, path)
			    : bp_perfmap__update(p->pm, path);
	bp_perfmap__stats(p->pm, &after);
	s->stats.perfmaps_refused += after.refused - before.refused;
	s->stats.perfmap_lines_skipped += after.lines_skipped - before.lines_skipped +
					  after.lines_dropped - before.lines_dropped;
}

static void perfmap_refresh(struct bp_syms *s, struct sym_proc *p, bool force)
{
	char path[4096];
	uint64_t now = now_ns();
	int err = -ENOENT, root_fd;

	if (!force && p->last_pm_check && now - p->last_pm_check < REFRESH_NS)
		return;
	p->last_pm_check = now;
	/* whose map it must be is not known: nothing is read */
	if (!p->euid_known)
		return;
	if (!p->pm) {
		p->pm = bp_perfmap__new();
		if (!p->pm)
			return;
		bp_perfmap__set_owner(p->pm, p->euid);
	}
	/* the JIT wrote it inside its own mount and pid namespace */
	if (!p->exited) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", s->perfmap_dir, p->nspid);
		root_fd = open_root(s, p->pid);
		if (root_fd >= 0) {
			perfmap_update(s, p, root_fd, path, &err);
			close(root_fd);
			return;
		}
	}
	/*
	 * Gone: a map it left in our /tmp, when its /tmp and pid numbers were
	 * ours; still its owner's file only.
	 */
	if (p->same_root && p->nspid == p->pid) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", s->perfmap_dir, p->pid);
		perfmap_update(s, p, -1, path, &err);
	}
}

static const struct bp_perfmap_sym *perfmap_find(struct bp_syms *s, struct sym_proc *p,
						 uint64_t addr)
{
	const struct bp_perfmap_sym *sym = p->pm ? bp_perfmap__find(p->pm, addr) : NULL;

	if (sym)
		return sym;
	perfmap_refresh(s, p, false);
	return p->pm ? bp_perfmap__find(p->pm, addr) : NULL;
}

/* --- snapshots -------------------------------------------------------- */

struct snap_ctx {
	struct bp_syms *s;
	struct sym_proc *p;	/* the previous snapshot's, or NULL */
	pid_t pid;
	uid_t euid;
	bool same_root;
	bool root_tried;	/* snap_root() ran */
	bool gone;		/* its map_files said it exited: no more asked */
	const char *maps_path;	/* its /proc/PID/maps */
	bool maps_held;		/* read from bp_procmaps__hold(): its exe's stat is too */
	int root_fd;		/* the process's root, or -1 */
	char root[64];		/* its path, for the debug-file lookups */
	struct sym_map *maps;
	size_t nr, cap;
	int err;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * The mapped file without /proc/PID/map_files (an older kernel, no
 * capability for it): by path in the process's root, then in ours when that
 * is the same; no symlinks, regular files, and only the inode that the maps
 * line names (a path may now name another file). Deleted files are not
 * looked up by path. fd or -errno.
 */
static int open_by_path(struct snap_ctx *c, const struct bp_maps_line *l, struct stat *st)
{
	int i, fd;

	if (l->deleted)
		return -ENOENT;
	for (i = 0; i < 2; i++) {
		if (i == 0 && c->root_fd < 0)
			continue;
		if (i == 1 && !c->same_root)
			break;
		fd = bp_open_untrusted(i == 0 ? c->root_fd : AT_FDCWD, l->path, NULL, st);
		if (fd < 0)
			continue;
		if (!l->inode || st->st_ino == l->inode)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/*
 * The process's root, opened at the first of its files that is not known
 * already: under process churn the same few files are mapped by every new
 * process, and most snapshots never need it.
 */
static void snap_root(struct snap_ctx *c)
{
	if (c->root_tried)
		return;
	c->root_tried = true;
	c->root_fd = open_root(c->s, c->pid);
	if (c->root_fd >= 0)
		snprintf(c->root, sizeof(c->root), "%s/%d/root", c->s->proc_root, c->pid);
}

/*
 * The executable's mapping: the stat of /proc/PID/exe taken with the maps
 * held (procmaps.h), when it is the very file the line names, stands for
 * the stat of its map_files entry. Only when held: else it costs the same.
 * Maps BPF walked come with each file's stat, read from its inode where
 * the process ran (collect/mapfiles.h): that stands for any file's.
 */
static bool held_exe(struct snap_ctx *c, const struct bp_maps_line *l, struct stat *st)
{
	if (c->maps_held && bp_procmaps__held_stat(c->maps_path, l, st))
		return S_ISREG(st->st_mode);
	return c->maps_held && !bp_procmaps__exe_stat(c->maps_path, st) &&
	       S_ISREG(st->st_mode) && st->st_ino == l->inode &&
	       major(st->st_dev) == l->dev_major && minor(st->st_dev) == l->dev_minor;
}

/*
 * The file of an executable mapping: found again by identity, or opened now
 * (while the process is alive), its symbols loaded, and closed.
 */
static struct sym_file *snap_file(struct snap_ctx *c, const struct bp_maps_line *l,
				  const char *path, const char *module)
{
	struct bp_elf_opts opts = {
		.path = path,
		.debug_root = c->s->debug_root,
		.uid_known = true,
		.uid = c->euid,
		.want_dwarf = c->s->stats.dwarf_bytes < c->s->dwarf_budget,
		/* what is left of the budget: no file read whole only to be dropped */
		.dwarf_max = c->s->dwarf_budget - c->s->stats.dwarf_bytes,
		.dwarf_not_from_root = c->s->dwarf_not_from_root,
	};
	struct bp_syms *s = c->s;
	struct sym_proc *p = c->p;
	const struct sym_map *old;
	struct sym_file *f, *stale;
	struct bp_elf *e = NULL;
	char mf[4096];
	struct stat st, fst;
	bool by_mf = false;
	int fd = -1, err;

	/* refreshing a live process: most mappings are unchanged */
	old = p ? map_find(p->maps, p->nr_maps, l->start) : NULL;
	if (old && old->file && old->start == l->start && old->end == l->end &&
	    old->pgoff == l->pgoff && old->inode == l->inode && old->path == path)
		return file_get(s, old->file);

	/* the very inode mapped, also when deleted or in another mount namespace */
	snprintf(mf, sizeof(mf), "%s/%d/map_files/%llx-%llx", s->proc_root, c->pid,
		 (unsigned long long)l->start, (unsigned long long)l->end);
	if (!c->gone && held_exe(c, l, &st)) {
		s->stats.exe_held++;
	} else if (!c->gone && ifd_stat(s, l, &st)) {
		s->stats.inode_held++;
	} else if (!c->gone && !stat(mf, &st)) {
		if (!S_ISREG(st.st_mode))
			return NULL;
		by_mf = true;
	} else {
		/* exited under us (ESRCH): its other map_files would say the same */
		if (!c->gone && errno == ESRCH)
			c->gone = true;
		snap_root(c);
		fd = open_by_path(c, l, &st);
		if (fd < 0) {
			bp_dbg("pid %d: cannot open %s, its frames stay unnamed", c->pid, path);
			return NULL;
		}
	}
	stale = file_find(s, st.st_dev, st.st_ino);
	if (stale && same_version(stale, &st)) {
		if (fd >= 0)
			close(fd);
		/* a second process maps it: worth holding (its map_files entry was just there) */
		else if (by_mf)
			ifd_open(s, stale, mf);
		return file_get(s, stale);
	}
	snap_root(c);
	opts.root = c->root[0] ? c->root : NULL;
	/* its paths mean nothing in our root: no debug-file lookup by path */
	if (c->root_fd < 0 && !c->same_root) {
		opts.path = NULL;
		opts.debug_root = NULL;
	}
	if (fd < 0) {
		fd = open(mf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		/* gone since its maps were walked (mapfiles.h): by its path, the same inode */
		if (fd < 0 && errno == ENOENT)
			fd = open_by_path(c, l, &fst);
		else if (fd >= 0 && fstat(fd, &fst)) {
			close(fd);
			fd = -1;
		}
		/* replaced between the stat and the open: take what is there now */
		if (fd < 0 || !S_ISREG(fst.st_mode) ||
		    fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		st = fst;
	}
	err = bp_elf__open_fd(fd, &opts, &e);	/* takes fd */
	if (err)
		bp_dbg("%s: not usable as ELF: %s", path, strerror(-err));
	/* a new version of a file we know: the same build, if the build-id says so */
	if (stale && e && stale->elf && stale->build_id && bp_elf__build_id(e) &&
	    !strcmp(stale->build_id, bp_elf__build_id(e))) {
		bp_elf__free(e);
		set_version(stale, &st);
		return file_get(s, stale);
	}
	if (stale) {
		file_unindex(s, stale);
		/* idle, and now unreachable */
		if (!stale->refcnt)
			file_destroy(s, stale);
	}

	f = calloc(1, sizeof(*f));
	if (!f || vec_add(&s->files, f, file_hash(st.st_dev, st.st_ino), &f->idx)) {
		free(f);
		bp_elf__free(e);
		return NULL;
	}
	f->indexed = true;
	f->ifd = -1;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	set_version(f, &st);
	f->path = path;
	f->module = module;
	f->refcnt = 1;
	s->stats.files_opened++;
	if (e) {
		f->elf = e;
		f->build_id = intern(s, bp_elf__build_id(e));
		/*
		 * What needs the process (its root, its map_files) is done
		 * now, while it lives; the symbols are read from the open
		 * files when a frame first falls in this one.
		 */
		if (s->lazy && s->nr_pending < BP_SYMS_PENDING_MAX) {
			bp_elf__prepare(e);
			f->pending = true;
			s->nr_pending++;
		} else {
			count_parse(s, e);
		}
	}
	return f;
}

static int snap_cb(const struct bp_maps_line *l, void *ctx)
{
	struct snap_ctx *c = ctx;
	struct bp_syms *s = c->s;
	const char *path = l->path;
	struct sym_map *m;

	if (c->nr == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		void *np = reallocarray(c->maps, ncap, sizeof(*c->maps));

		if (!np)
			return -ENOMEM;
		c->maps = np;
		c->cap = ncap;
	}
	m = &c->maps[c->nr];
	memset(m, 0, sizeof(*m));
	m->start = l->start;
	m->end = l->end;
	m->pgoff = l->pgoff;
	m->inode = l->inode;
	m->exec = l->exec;

	if (!l->path_len || !strncmp(path, "[anon:", 6)) {
		m->kind = MAP_ANON;
		m->module = "[anon]";
	} else if (!strcmp(path, "[vdso]")) {
		m->kind = MAP_VDSO;
		m->module = "[vdso]";
	} else if (!strncmp(path, "[stack", 6)) {
		m->kind = MAP_SPECIAL;
		m->module = "[stack]";	/* "[stack:TID]" on old kernels */
	} else if (path[0] == '/') {
		m->kind = MAP_FILE;
		m->path = intern_len(s, path, l->path_len);
		m->module = intern(s, base_name(path));
		if (!m->path || !m->module)
			return -ENOMEM;
		if (l->exec)
			m->file = snap_file(c, l, m->path, m->module);
	} else {
		m->kind = MAP_SPECIAL;
		m->module = intern_len(s, path, l->path_len);
		if (!m->module)
			return -ENOMEM;
	}
	c->nr++;
	return 0;
}

static int cmp_map(const void *a, const void *b)
{
	const struct sym_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* r--/rw- mappings of a file borrow the file of its r-x mapping */
static void link_files(struct bp_syms *s, struct sym_map *maps, size_t nr)
{
	size_t i, j;

	for (i = 0; i < nr; i++) {
		struct sym_map *m = &maps[i];
		size_t lo = i > LINK_WALK ? i - LINK_WALK : 0;
		size_t hi = i + LINK_WALK < nr ? i + LINK_WALK : nr - 1;

		if (m->kind != MAP_FILE || m->file)
			continue;
		for (j = lo; j <= hi; j++) {
			if (maps[j].file && maps[j].exec && maps[j].path == m->path &&
			    maps[j].inode == m->inode) {
				m->file = file_get(s, maps[j].file);
				break;
			}
		}
	}
}

int bp_syms__snapshot(struct bp_syms *s, pid_t pid)
{
	struct snap_ctx c = { .s = s, .pid = pid, .root_fd = -1 };
	struct sym_proc *p = proc_find(s, pid);
	bool anon_exec = false;
	pid_t nspid = pid;
	char path[4096];
	size_t i, bad = 0;
	int err;

	/* whose it is first: the files it names are opened as that user's */
	if (s->held.pid == pid && s->held.nspid) {
		c.euid = s->held.euid;
		nspid = s->held.nspid;
		s->stats.ids_held++;
		err = 0;
	} else {
		err = bp_procinfo_read_ids(s->proc_root, pid, &c.euid, &nspid);
	}
	if (!err) {
		if (s->held.pid == pid && s->held.mnt_ns)
			c.same_root = !s->self_mnt_ns || s->held.mnt_ns == s->self_mnt_ns;
		else
			c.same_root = same_mnt_ns(s, pid);
		c.p = p;
		snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, pid);
		c.maps_path = path;
		c.maps_held = bp_procmaps__holds(path);
		err = bp_procmaps__read(path, snap_cb, &c, &bad);
		if (c.root_fd >= 0)
			close(c.root_fd);
	}
	/* a zombie or a process gone under us reads as empty: keep the old one */
	if (!err && !c.nr)
		err = -ESRCH;
	if (err == -ENOENT)
		err = -ESRCH;
	if (err) {
		maps_release(s, c.maps, c.nr);
		if (p && err == -ESRCH)
			p->exited = true;
		if (err != -ESRCH)
			bp_dbg("pid %d: failed to read maps: %s", pid, strerror(-err));
		return err;
	}
	if (bad) {
		s->stats.maps_lines_skipped += bad;
		bp_dbg("pid %d: %zu maps lines skipped (malformed, or out of bounds)", pid, bad);
	}
	qsort(c.maps, c.nr, sizeof(*c.maps), cmp_map);
	link_files(s, c.maps, c.nr);

	if (!p) {
		p = proc_new(s, pid);
		if (!p) {
			maps_release(s, c.maps, c.nr);
			return -ENOMEM;
		}
	}
	/* gone, and now alive again: a new process got the pid */
	if (p->exited || (p->euid_known && p->euid != c.euid)) {
		bp_perfmap__free(p->pm);
		p->pm = NULL;
		p->last_pm_check = 0;
	}
	maps_release(s, p->maps, p->nr_maps);
	/* kept for the process's life, possibly thousands of them: no slack */
	if (c.nr && c.nr < c.cap) {
		void *np = reallocarray(c.maps, c.nr, sizeof(*c.maps));

		if (np)
			c.maps = np;
	}
	p->maps = c.maps;
	p->nr_maps = c.nr;
	p->exited = false;
	p->retiring = false;
	p->last_refresh = now_ns();
	p->nspid = nspid;
	p->euid = c.euid;
	p->euid_known = true;
	p->same_root = c.same_root;
	s->stats.snapshots++;

	for (i = 0; i < c.nr && !anon_exec; i++)
		anon_exec = c.maps[i].exec && (c.maps[i].kind == MAP_ANON ||
					       (c.maps[i].kind == MAP_FILE &&
					        (!c.maps[i].file || !c.maps[i].file->elf)));
	/* while it is alive: a container's perf map is only reachable then */
	if (anon_exec || (p->pm && bp_perfmap__count(p->pm)))
		perfmap_refresh(s, p, true);
	return 0;
}

void bp_syms__hold_ids(struct bp_syms *s, pid_t pid, uid_t euid, pid_t nspid, uint64_t mnt_ns)
{
	s->held.pid = pid;
	s->held.euid = euid;
	s->held.nspid = nspid;
	s->held.mnt_ns = mnt_ns;
}

void bp_syms__drop_ids(struct bp_syms *s)
{
	s->held.pid = 0;
}

int bp_syms__clone(struct bp_syms *s, pid_t from, pid_t to, uid_t euid, pid_t nspid,
		   uint64_t mnt_ns, uint64_t not_before_ns, uint64_t as_of_ns)
{
	struct sym_proc *pp = proc_find(s, from), *c = proc_find(s, to);
	struct sym_map *maps;
	size_t i;

	if (!pp || pp->exited || !pp->nr_maps)
		return -ENOENT;
	if (pp->last_refresh < not_before_ns)
		return -ESTALE;
	if (!pp->euid_known || pp->euid != euid)
		return -EPERM;
	if (c && (c->nr_maps || c->has_kept))
		return -EEXIST;
	maps = malloc(pp->nr_maps * sizeof(*maps));
	if (!maps)
		return -ENOMEM;
	if (!c) {
		c = proc_new(s, to);
		if (!c) {
			free(maps);
			return -ENOMEM;
		}
	}
	memcpy(maps, pp->maps, pp->nr_maps * sizeof(*maps));
	for (i = 0; i < pp->nr_maps; i++)
		if (maps[i].file)
			file_get(s, maps[i].file);
	/* a pid used again: the perf map was the other process's */
	bp_perfmap__free(c->pm);
	c->pm = NULL;
	c->last_pm_check = 0;
	c->maps = maps;
	c->nr_maps = pp->nr_maps;
	c->exited = false;
	c->retiring = false;
	c->last_refresh = as_of_ns;
	c->nspid = nspid ? nspid : to;
	c->euid = euid;
	c->euid_known = true;
	/* an unshare() between the fork and the sample moves it out of its parent's root */
	c->same_root = mnt_ns ? !s->self_mnt_ns || mnt_ns == s->self_mnt_ns : pp->same_root;
	s->stats.clones++;
	return 0;
}

uint64_t bp_syms__snapshot_ns(struct bp_syms *s, pid_t pid)
{
	struct sym_proc *p = proc_find(s, pid);

	return p && p->nr_maps ? p->last_refresh : 0;
}

int bp_syms__keep_image(struct bp_syms *s, pid_t pid, uint16_t image)
{
	struct sym_proc *p = proc_find(s, pid);

	if (!p || !p->nr_maps)
		return -ENOENT;
	if (p->has_kept)
		return -EBUSY;
	p->kept = p->maps;
	p->nr_kept = p->nr_maps;
	p->kept_image = image;
	p->has_kept = true;
	p->maps = NULL;
	p->nr_maps = 0;
	/* the next lookup of the new image reads its maps */
	p->last_refresh = 0;
	s->nr_kept++;
	return 0;
}

bool bp_syms__kept_image(struct bp_syms *s, pid_t pid, uint16_t image)
{
	struct sym_proc *p;

	if (!s->nr_kept)
		return false;
	p = proc_find(s, pid);
	return p && p->has_kept && p->kept_image == image;
}

void bp_syms__drop_images(struct bp_syms *s)
{
	uint32_t i;

	for (i = 0; s->nr_kept && i < s->procs.n; i++) {
		struct sym_proc *p = s->procs.v[i];

		if (!p->has_kept)
			continue;
		maps_release(s, p->kept, p->nr_kept);
		p->kept = NULL;
		p->nr_kept = 0;
		p->has_kept = false;
		s->nr_kept--;
	}
}

void bp_syms__exited(struct bp_syms *s, pid_t pid)
{
	struct sym_proc *p = proc_find(s, pid);

	if (p)
		p->exited = true;
}

void bp_syms__forget(struct bp_syms *s, pid_t pid)
{
	struct sym_proc *p = proc_find(s, pid);

	if (p)
		proc_destroy(s, p);
}

static bool proc_gone(const struct bp_syms *s, const struct bp_pidset *live, pid_t pid)
{
	char path[4096];

	if (live)
		return !bp_pidset__has(live, pid);
	snprintf(path, sizeof(path), "%s/%d", s->proc_root, pid);
	return access(path, F_OK) && errno == ENOENT;
}

uint32_t bp_syms__retire(struct bp_syms *s)
{
	return bp_syms__retire_live(s, NULL);
}

uint32_t bp_syms__retire_live(struct bp_syms *s, const struct bp_pidset *live)
{
	uint32_t dropped = 0, i;

	/* backwards: a destroyed entry takes the last one, already seen */
	for (i = s->procs.n; i-- > 0;) {
		struct sym_proc *p = s->procs.v[i];

		if (p->retiring) {
			proc_destroy(s, p);
			dropped++;
		} else if (p->exited || proc_gone(s, live, p->pid)) {
			/* an exit event can be lost; the pid's absence cannot */
			p->exited = true;
			p->retiring = true;
		}
	}
	/* a held inode deleted since: its blocks are freed when its last holder lets go */
	for (i = 0; i < s->files.n && s->nr_ifds; i++) {
		struct sym_file *f = s->files.v[i];
		struct stat st;

		if (f->ifd >= 0 && (fstat(f->ifd, &st) || !st.st_nlink))
			ifd_close(s, f);
	}
	return dropped;
}

/* --- vdso --------------------------------------------------------------- */

static int vdso_map_cb(const struct bp_maps_line *l, void *ctx)
{
	uint64_t *size = ctx;

	if (strcmp(l->path, "[vdso]"))
		return 0;
	*size = l->end - l->start;
	return 1;
}

/*
 * Every process of a kernel gets the same vdso image, so ours names theirs.
 * Its size comes from its headers, checked against our [vdso] mapping.
 */
static int vdso_load(struct bp_syms *s)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	uint64_t size = 0, map_size = 0, end;
	long page = sysconf(_SC_PAGESIZE);
	int i, err;

	if (!base)
		return -ENOENT;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOEXEC;
	bp_procmaps__read("/proc/self/maps", vdso_map_cb, &map_size, NULL);
	end = eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize;
	if (map_size && end > map_size)
		return -ENOEXEC;
	for (i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(base + eh->e_phoff +
						      (uint64_t)i * eh->e_phentsize);

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	if (end > size)
		size = end;
	if (page > 0)
		size = (size + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	if (map_size && size > map_size)
		size = map_size;
	/* without our own maps to check against, trust only a sane size */
	if (!size || (!map_size && size > VDSO_MAX))
		return -ENOEXEC;
	err = bp_elf__open_mem((const void *)base, size, &s->vdso);
	if (err)
		return err;
	s->vdso_image = malloc(size);
	if (s->vdso_image) {
		memcpy(s->vdso_image, (const void *)base, size);
		s->vdso_image_size = size;
	}
	s->vdso_size = map_size ? map_size : size;
	s->vdso_build_id = intern(s, bp_elf__build_id(s->vdso));
	count_parse(s, s->vdso);
	return 0;
}

static struct bp_elf *vdso_get(struct bp_syms *s)
{
	if (!s->vdso && !s->vdso_err) {
		s->vdso_err = vdso_load(s);
		if (s->vdso_err)
			bp_warn("cannot read the vdso image, its frames stay unnamed: %s",
				strerror(-s->vdso_err));
	}
	return s->vdso;
}

/* --- resolution --------------------------------------------------------- */

/* demangled once per symbol: the interned name is kept in the symbol */
static const char *sym_name(struct bp_syms *s, struct bp_elf_sym *sym)
{
	char *d;

	if (!sym->udata) {
		d = bp_demangle(sym->name);
		sym->udata = intern(s, d ? d : sym->name);
		free(d);
	}
	return sym->udata;
}

/* inlined frames found on the way, innermost first */
struct inl_frames {
	struct bp_frame_info v[BP_DWARF_INLINE_MAX];
	int n;
};

/* a DWARF name, demangled when mangled, interned */
static const char *dwarf_name(struct bp_syms *s, const char *raw)
{
	char *d;
	const char *n;

	if (!raw)
		return NULL;
	d = bp_demangle(raw);
	n = intern(s, d ? d : raw);
	free(d);
	return n;
}

/*
 * The DWARF's view of vaddr: the line in the function (out), and the
 * functions inlined there (inl), which the symbol table does not know.
 */
static void resolve_dwarf(struct bp_syms *s, struct bp_dwarf *dw, uint64_t vaddr,
			  struct bp_frame_info *out, struct inl_frames *inl)
{
	struct bp_dwarf_frame df[BP_DWARF_INLINE_MAX];
	int n, i;

	n = bp_dwarf__frames(dw, vaddr, df, BP_DWARF_INLINE_MAX);
	if (n <= 0)
		return;
	/* the outermost is the function the symbol names (or would) */
	out->file = intern(s, df[n - 1].file);
	out->line = df[n - 1].line;
	if (!out->name && !df[n - 1].inlined)
		out->name = dwarf_name(s, df[n - 1].name);
	if (!inl)
		return;
	for (i = 0; i < n - 1; i++) {
		struct bp_frame_info *f = &inl->v[inl->n++];

		memset(f, 0, sizeof(*f));
		f->name = dwarf_name(s, df[i].name);
		f->file = intern(s, df[i].file);
		f->line = df[i].line;
		f->offset = vaddr;
		f->inlined = true;
	}
}

static int resolve_elf(struct bp_syms *s, struct bp_elf *e, uint64_t off,
		       struct bp_frame_info *out, struct inl_frames *inl)
{
	struct bp_elf_sym *sym;
	uint64_t vaddr, start, end;

	if (bp_elf__file_to_vaddr(e, off, &vaddr))
		return -ENOENT;
	out->offset = vaddr;
	count_parse(s, e);
	sym = bp_elf__find(e, vaddr);
	if (sym) {
		out->name = sym_name(s, sym);
		out->sym_offset = vaddr - sym->addr;
		if (!out->name)
			return -ENOMEM;
	} else if (!bp_elf__fde_func(e, vaddr, &start, &end)) {
		/* stripped: one frame per function its CFI describes, not per address */
		out->offset = start;
		out->sym_offset = vaddr - start;
	}
	if (bp_elf__dwarf(e))
		resolve_dwarf(s, bp_elf__dwarf(e), vaddr, out, inl);
	return out->name ? 0 : -ENOENT;
}

static int resolve_perfmap(struct bp_syms *s, struct sym_proc *p, uint64_t addr,
			   struct bp_frame_info *out)
{
	const struct bp_perfmap_sym *sym = perfmap_find(s, p, addr);

	if (!sym)
		return -ENOENT;
	out->name = intern(s, sym->name);
	out->sym_offset = addr - sym->addr;
	return out->name ? 0 : -ENOMEM;
}

static int resolve_map(struct bp_syms *s, struct sym_proc *p, const struct sym_map *m,
		       uint64_t addr, struct bp_frame_info *out, struct inl_frames *inl)
{
	uint64_t off = addr - m->start + m->pgoff;
	struct sym_file *f = m->file;
	struct bp_elf *vdso;
	int err = -ENOENT;

	out->module = m->module;
	out->path = m->path;
	out->offset = addr - m->start;

	switch (m->kind) {
	case MAP_FILE:
		out->offset = off;
		if (f && f->elf) {
			out->build_id = f->build_id;
			if (f->pending) {
				f->pending = false;
				s->nr_pending--;
			}
			return resolve_elf(s, f->elf, off, out, inl);
		}
		/* not ELF: JIT code in a memfd, named by its perf map if at all */
		if (m->exec)
			err = resolve_perfmap(s, p, addr, out);
		return err;
	case MAP_VDSO:
		vdso = vdso_get(s);
		/* a different size is another image (a 32-bit process) */
		if (!vdso || m->end - m->start != s->vdso_size)
			return -ENOENT;
		out->build_id = s->vdso_build_id;
		return resolve_elf(s, vdso, off, out, inl);
	case MAP_ANON:
		if (m->exec)
			err = resolve_perfmap(s, p, addr, out);
		return err;
	default:
		return -ENOENT;
	}
}

/* image: a kept image of pid's (bp_syms__keep_image()), or -1 for its current one */
static int resolve_user(struct bp_syms *s, pid_t pid, int image, uint64_t addr,
			struct bp_frame_info *out, struct inl_frames *inl)
{
	struct sym_proc *p = proc_find(s, pid);
	const struct sym_map *m = NULL;
	int err;

	/* outside every mapping: no base to count from, and the address
	 * itself is not ours to print (it would place another user's code) */
	memset(out, 0, sizeof(*out));
	out->module = "[unknown]";

	if (!p) {
		/* dead before we saw it: remember that, don't retry every frame */
		if (bp_syms__snapshot(s, pid)) {
			p = proc_new(s, pid);
			if (p)
				p->exited = true;
		}
		p = proc_find(s, pid);
		if (!p)
			goto unresolved;
	}
	if (image >= 0) {
		/* its maps are gone from /proc, and its perf map is the new image's */
		if (p->has_kept && p->kept_image == image)
			m = map_find(p->kept, p->nr_kept, addr);
	} else {
		m = map_find(p->maps, p->nr_maps, addr);
		if (!m && !p->exited && now_ns() - p->last_refresh >= REFRESH_NS &&
		    !bp_syms__snapshot(s, pid))
			m = map_find(p->maps, p->nr_maps, addr);
	}
	if (m) {
		out->code = m->exec;
		err = resolve_map(s, p, m, addr, out, inl);
	} else if (image < 0) {
		err = resolve_perfmap(s, p, addr, out);
		out->code = !err;
	} else {
		goto unresolved;
	}
	if (!err) {
		s->stats.resolved++;
		return 0;
	}
	out->name = NULL;
	out->sym_offset = 0;
unresolved:
	s->stats.unresolved++;
	return -ENOENT;
}

int bp_syms__resolve_user(struct bp_syms *s, pid_t pid, uint64_t addr,
			  struct bp_frame_info *out)
{
	return resolve_user(s, pid, -1, addr, out, NULL);
}

static int resolve_inline(struct bp_syms *s, pid_t pid, int image, uint64_t addr,
			  struct bp_frame_info *out, int max)
{
	struct inl_frames inl;
	struct bp_frame_info fi;
	int i, k;

	if (max <= 0)
		return -EINVAL;
	inl.n = 0;
	resolve_user(s, pid, image, addr, &fi, &inl);
	/* too many for out: the ones nearest the function are kept */
	k = inl.n < max - 1 ? inl.n : max - 1;
	for (i = 0; i < k; i++) {
		struct bp_frame_info *f = &out[i];

		*f = inl.v[inl.n - k + i];
		f->module = fi.module;
		f->path = fi.path;
		f->build_id = fi.build_id;
		f->code = fi.code;
	}
	out[k] = fi;
	return k + 1;
}

int bp_syms__resolve_user_inline(struct bp_syms *s, pid_t pid, uint64_t addr,
				 struct bp_frame_info *out, int max)
{
	return resolve_inline(s, pid, -1, addr, out, max);
}

int bp_syms__resolve_image_inline(struct bp_syms *s, pid_t pid, uint16_t image, uint64_t addr,
				  struct bp_frame_info *out, int max)
{
	return resolve_inline(s, pid, image, addr, out, max);
}

void bp_syms__kernel_ranges_each(const struct bp_syms *s, const char *const *names, size_t n,
				 bp_ksym_range_fn fn, void *ctx)
{
	size_t i;

	if (!s->ksyms)
		return;
	if (!s->pre_valid || names != s->pre_names || n != s->nr_pre_names) {
		bp_kallsyms__ranges_each(s->ksyms, names, n, fn, ctx);
		return;
	}
	for (i = 0; i < s->nr_pre; i++)
		fn(ctx, s->pre[i].which, s->pre[i].lo, s->pre[i].hi);
}

int bp_syms__resolve_kernel(struct bp_syms *s, uint64_t addr, struct bp_frame_info *out)
{
	struct bp_ksym ks;

	memset(out, 0, sizeof(*out));
	out->kernel = true;
	out->code = true;
	out->module = "[kernel]";
	if (!s->ksyms || bp_kallsyms__find(s->ksyms, addr, &ks)) {
		/* relative to _text, or nothing: never where KASLR put it */
		if (s->ksyms)
			bp_kallsyms__core_offset(s->ksyms, addr, &out->offset);
		s->stats.unresolved++;
		return -ENOENT;
	}
	out->name = ks.name;
	out->sym_offset = addr - ks.addr;
	/* ks.base <= addr always: it is the lowest symbol of its module or _text */
	if (addr >= ks.base)
		out->offset = addr - ks.base;
	if (ks.module)
		out->module = ks.module;
	else
		out->build_id = s->kernel_build_id;
	s->stats.resolved++;
	return 0;
}

/* --- kernel ------------------------------------------------------------- */

/* /sys/kernel/notes is the kernel's own note section: its build-id */
static const char *kernel_build_id(struct bp_syms *s)
{
	unsigned char buf[4096];
	char out[2 * 64 + 1];
	size_t off = 0, len;
	ssize_t n;
	int fd;

	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return NULL;
	len = (size_t)n;
	while (off + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		size_t name_off, desc_off;

		memcpy(&nh, buf + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = name_off + ((nh.n_namesz + 3) & ~3U);
		off = desc_off + ((nh.n_descsz + 3) & ~3U);
		if (off > len)
			break;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp(buf + name_off, "GNU", 4) || !nh.n_descsz || nh.n_descsz > 64)
			continue;
		bp_hex_encode(buf + desc_off, nh.n_descsz, out);
		return intern(s, out);
	}
	return NULL;
}

static void pre_found(void *ctx, size_t which, uint64_t lo, uint64_t hi)
{
	struct bp_syms *s = ctx;
	struct ksym_range *v;

	if (!s->pre_valid)
		return;
	if (s->nr_pre == s->cap_pre) {
		size_t cap = s->cap_pre ? 2 * s->cap_pre : 64;

		v = reallocarray(s->pre, cap, sizeof(*v));
		if (!v) {
			/* asked again later, by a pass of its own */
			s->pre_valid = false;
			return;
		}
		s->pre = v;
		s->cap_pre = cap;
	}
	s->pre[s->nr_pre++] = (struct ksym_range){ which, lo, hi };
}

static void *kload_run(void *arg)
{
	struct bp_syms *s = arg;

	s->kload_err = bp_kallsyms__load(s->kallsyms_path, &s->kload_k);
	if (!s->kload_err && s->pre_names) {
		s->pre_valid = true;
		bp_kallsyms__ranges_each(s->kload_k, s->pre_names, s->nr_pre_names, pre_found, s);
	}
	return NULL;
}

int bp_syms__prefetch_kernel(struct bp_syms *s, const char *const *names, size_t n)
{
	sigset_t all, old;
	int err;

	if (s->kload_started)
		return 0;
	s->pre_names = names;
	s->nr_pre_names = names ? n : 0;
	s->nr_pre = 0;
	s->pre_valid = false;
	/* signals stay with the threads that handle them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->kload, NULL, kload_run, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	s->kload_started = true;
	return 0;
}

/* the started prefetch's result: 0 and *k, or -errno */
static int kload_join(struct bp_syms *s, struct bp_kallsyms **k)
{
	pthread_join(s->kload, NULL);
	s->kload_started = false;
	*k = s->kload_k;
	s->kload_k = NULL;
	return s->kload_err;
}

int bp_syms__load_kernel(struct bp_syms *s)
{
	struct bp_kallsyms *k = NULL, **old;
	int err;

	/* a failed prefetch is not read again: its error is the answer */
	if (s->kload_started) {
		err = kload_join(s, &k);
	} else {
		/* read again: what a prefetch found was in the old symbols */
		s->pre_valid = false;
		err = bp_kallsyms__load(s->kallsyms_path, &k);
	}
	if (err)
		return err;
	if (s->ksyms) {
		old = reallocarray(s->old_ksyms, s->nr_old_ksyms + 1, sizeof(*old));
		if (!old) {
			bp_kallsyms__free(k);
			return -ENOMEM;
		}
		old[s->nr_old_ksyms++] = s->ksyms;
		s->old_ksyms = old;
	}
	s->ksyms = k;
	/* the running kernel's notes only describe the real kallsyms */
	if (!strcmp(s->kallsyms_path, "/proc/kallsyms"))
		s->kernel_build_id = kernel_build_id(s);
	return 0;
}

/* --- life cycle --------------------------------------------------------- */

struct bp_syms *bp_syms__new(const struct bp_syms_opts *opts)
{
	struct bp_syms_opts o = {
		.proc_root = "/proc",
		.kallsyms_path = "/proc/kallsyms",
		.debug_root = "/usr/lib/debug",
		.perfmap_dir = "/tmp",
	};
	struct bp_syms *s;
	struct stat st;

	if (opts && opts->proc_root)
		o.proc_root = opts->proc_root;
	if (opts && opts->kallsyms_path)
		o.kallsyms_path = opts->kallsyms_path;
	if (opts && opts->debug_root)
		o.debug_root = opts->debug_root;
	if (opts && opts->perfmap_dir)
		o.perfmap_dir = opts->perfmap_dir;
	o.dwarf_budget = opts && opts->dwarf_budget ? opts->dwarf_budget : BP_SYMS_DWARF_BUDGET;

	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->proc_root = strdup(o.proc_root);
	s->kallsyms_path = strdup(o.kallsyms_path);
	s->debug_root = strdup(o.debug_root);
	s->dwarf_budget = o.dwarf_budget;
	s->dwarf_not_from_root = opts && opts->dwarf_not_from_root;
	s->lazy = opts && opts->lazy;
	s->perfmap_dir = strdup(o.perfmap_dir);
	if (!s->proc_root || !s->kallsyms_path || !s->debug_root || !s->perfmap_dir) {
		bp_syms__free(s);
		errno = ENOMEM;
		return NULL;
	}
	if (!stat("/proc/self/ns/mnt", &st))
		s->self_mnt_ns = st.st_ino;
	return s;
}

void bp_syms__free(struct bp_syms *s)
{
	struct chunk *c, *next;
	size_t i;

	if (!s)
		return;
	if (s->kload_started) {
		struct bp_kallsyms *k = NULL;

		kload_join(s, &k);
		bp_kallsyms__free(k);
	}
	free(s->pre);
	while (s->procs.n)
		proc_destroy(s, s->procs.v[s->procs.n - 1]);
	while (s->files.n)
		file_destroy(s, s->files.v[s->files.n - 1]);
	for (c = s->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	bp_kallsyms__free(s->ksyms);
	for (i = 0; i < s->nr_old_ksyms; i++)
		bp_kallsyms__free(s->old_ksyms[i]);
	free(s->old_ksyms);
	bp_elf__free(s->vdso);
	free(s->vdso_image);
	vec_free(&s->procs);
	vec_free(&s->files);
	vec_free(&s->strs);
	free(s->proc_root);
	free(s->kallsyms_path);
	free(s->debug_root);
	free(s->perfmap_dir);
	free(s);
}

void bp_syms__stats(const struct bp_syms *s, struct bp_syms_stats *out)
{
	const struct chunk *c;

	*out = s->stats;
	out->processes = s->procs.n;
	out->files = s->files.n;
	out->files_pending = s->nr_pending;
	out->string_bytes = 0;
	for (c = s->chunks; c; c = c->next)
		out->string_bytes += c->cap;
}

/* --- for the unwinder --------------------------------------------------- */

const void *bp_syms__vdso_image(struct bp_syms *s, size_t *size)
{
	if (!vdso_get(s) || !s->vdso_image)
		return NULL;
	*size = s->vdso_image_size;
	return s->vdso_image;
}
