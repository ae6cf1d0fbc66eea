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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/elfsym.h"
#include "util/htab.h"
#include "symbolize/kallsyms.h"
#include "util/log.h"
#include "symbolize/perfmap.h"
#include "proc/procmaps.h"
#include "symbolize/symbols.h"

/*
 * Garbage addresses from broken frame-pointer chains are common; without a
 * limit each one would re-read /proc/PID/maps or stat the perf map.
 */
#define REFRESH_NS		(100ULL * 1000 * 1000)
/* unreferenced files kept open: a short-lived process run again and again
 * (shell loops, make) would otherwise re-parse its binary every time */
#define IDLE_FILES_MAX		64
/* how far a non-executable file mapping looks for an executable one of the
 * same file, to borrow its ELF for the vaddr arithmetic */
#define LINK_WALK		4
#define ARENA_CHUNK		(64 * 1024)
#define VDSO_MAX		(1024 * 1024)

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* --- a minimal intrusive hash table ------------------------------------- */

struct hnode {
	struct hnode *next;
	uint64_t hash;
};

struct htab {
	struct hnode **b;
	size_t nb;		/* power of two */
	size_t n;
};

static int htab_init(struct htab *h)
{
	h->nb = 64;
	h->n = 0;
	h->b = calloc(h->nb, sizeof(*h->b));
	return h->b ? 0 : -ENOMEM;
}

static void htab_grow(struct htab *h)
{
	size_t nb = h->nb * 2, i;
	struct hnode **b;

	b = calloc(nb, sizeof(*b));
	if (!b)
		return;		/* longer chains, still correct */
	for (i = 0; i < h->nb; i++) {
		struct hnode *n = h->b[i], *next;

		for (; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(h->b);
	h->b = b;
	h->nb = nb;
}

static void htab_add(struct htab *h, struct hnode *n, uint64_t hash)
{
	struct hnode **slot;

	if (h->n >= h->nb)
		htab_grow(h);
	slot = &h->b[hash & (h->nb - 1)];
	n->hash = hash;
	n->next = *slot;
	*slot = n;
	h->n++;
}

static void htab_del(struct htab *h, struct hnode *n)
{
	struct hnode **pp = &h->b[n->hash & (h->nb - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			h->n--;
			return;
		}
	}
}

static struct hnode *htab_first(const struct htab *h, uint64_t hash)
{
	struct hnode *n = h->b[hash & (h->nb - 1)];

	while (n && n->hash != hash)
		n = n->next;
	return n;
}

static struct hnode *htab_next(struct hnode *n, uint64_t hash)
{
	for (n = n->next; n && n->hash != hash; n = n->next)
		;
	return n;
}

static uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (len--) {
		h ^= *c++;
		h *= 0x100000001b3ULL;
	}
	return h;
}


/* --- state ---------------------------------------------------------------- */

struct chunk {
	struct chunk *next;
	size_t used, cap;
	_Alignas(16) char data[];
};

struct istr {
	struct hnode node;
	size_t len;
	char s[];
};

struct sym_file {
	struct hnode node;
	dev_t dev;
	ino_t ino;
	int fd;			/* ours until the ELF is opened, then the ELF's */
	struct bp_elf *elf;
	int elf_err;		/* not ELF, or failed: don't try again */
	const char *path;	/* interned, as the first process saw it */
	char *root;		/* where that path lives from here; "" = our root */
	const char *module;	/* interned basename */
	const char *build_id;	/* interned */
	unsigned int refcnt;
	struct sym_file *idle_prev, *idle_next;
	bool idle;
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
	struct hnode node;
	pid_t pid;
	pid_t nspid;		/* pid inside its own pid namespace */
	bool exited;
	bool retiring;		/* gone: dropped at the next bp_syms__retire() */
	struct sym_map *maps;
	size_t nr_maps;
	struct bp_perfmap *pm;
	uint64_t last_refresh;
	uint64_t last_pm_check;
};

struct bp_syms {
	char *proc_root;
	char *kallsyms_path;
	char *debug_root;
	char *perfmap_dir;

	struct htab procs;
	struct htab files;
	struct htab strs;
	struct chunk *chunks;

	struct bp_kallsyms *ksyms;
	struct bp_kallsyms **old_ksyms;	/* kept: their names were handed out */
	size_t nr_old_ksyms;
	const char *kernel_build_id;

	struct bp_elf *vdso;
	int vdso_err;
	uint64_t vdso_size;
	const char *vdso_build_id;

	struct sym_file *idle_head, *idle_tail;
	size_t nr_idle;

	ino_t self_mnt_ns;
	struct bp_syms_stats stats;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
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

static const char *intern_len(struct bp_syms *s, const char *str, size_t len)
{
	uint64_t h = hash_bytes(str, len);
	struct hnode *n;
	struct istr *is;

	for (n = htab_first(&s->strs, h); n; n = htab_next(n, h)) {
		is = container_of(n, struct istr, node);
		if (is->len == len && !memcmp(is->s, str, len))
			return is->s;
	}
	is = arena_alloc(s, sizeof(*is) + len + 1);
	if (!is)
		return NULL;
	is->len = len;
	memcpy(is->s, str, len);
	is->s[len] = '\0';
	htab_add(&s->strs, &is->node, h);
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

static struct sym_file *file_find(struct bp_syms *s, dev_t dev, ino_t ino)
{
	uint64_t h = file_hash(dev, ino);
	struct hnode *n;

	for (n = htab_first(&s->files, h); n; n = htab_next(n, h)) {
		struct sym_file *f = container_of(n, struct sym_file, node);

		if (f->dev == dev && f->ino == ino)
			return f;
	}
	return NULL;
}

static void file_destroy(struct bp_syms *s, struct sym_file *f)
{
	htab_del(&s->files, &f->node);
	bp_elf__free(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->root);
	free(f);
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

/* takes fd: it is kept in a new entry or closed */
static struct sym_file *file_from_fd(struct bp_syms *s, int fd, const char *path,
				     const char *module, const char *root)
{
	struct sym_file *f;
	struct stat st;

	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	f = file_find(s, st.st_dev, st.st_ino);
	if (f) {
		close(fd);
		return file_get(s, f);
	}
	f = calloc(1, sizeof(*f));
	if (f)
		f->root = strdup(root);
	if (!f || !f->root) {
		free(f);
		close(fd);
		return NULL;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->fd = fd;
	f->path = path;
	f->module = module;
	f->refcnt = 1;
	htab_add(&s->files, &f->node, file_hash(f->dev, f->ino));
	s->stats.files_opened++;
	return f;
}

/* the ELF behind a file, opened on first use; 0 or -errno (remembered) */
static int file_elf(struct bp_syms *s, struct sym_file *f)
{
	struct bp_elf_opts opts = {
		.path = f->path,
		.root = f->root,
		.debug_root = s->debug_root,
	};
	int fd, err;

	if (f->elf || f->elf_err)
		return f->elf_err;
	/* a dup, so the entry keeps its fd (and its inode) if this fails */
	fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;	/* EMFILE: not remembered, may work later */
	err = bp_elf__open_fd(fd, &opts, &f->elf);
	if (err) {
		bp_dbg("%s: not usable as ELF: %s", f->path, strerror(-err));
		f->elf_err = err;
		return err;
	}
	close(f->fd);
	f->fd = -1;
	f->build_id = intern(s, bp_elf__build_id(f->elf));
	return 0;
}

static void count_parse(struct bp_syms *s, struct bp_elf *e)
{
	if (bp_elf__syms_loaded(e))
		return;
	bp_elf__load_syms(e);
	s->stats.files_parsed++;
	if (bp_elf__debug_path(e))
		s->stats.debug_files++;
}

/* --- processes ------------------------------------------------------------ */

static struct sym_proc *proc_find(struct bp_syms *s, pid_t pid)
{
	uint64_t h = bp_hash_u64((uint64_t)(uint32_t)pid);
	struct hnode *n;

	for (n = htab_first(&s->procs, h); n; n = htab_next(n, h)) {
		struct sym_proc *p = container_of(n, struct sym_proc, node);

		if (p->pid == pid)
			return p;
	}
	return NULL;
}

static struct sym_proc *proc_new(struct bp_syms *s, pid_t pid)
{
	struct sym_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->nspid = pid;
	htab_add(&s->procs, &p->node, bp_hash_u64((uint64_t)(uint32_t)pid));
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
	htab_del(&s->procs, &p->node);
	maps_release(s, p->maps, p->nr_maps);
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

static pid_t read_nspid(struct bp_syms *s, pid_t pid)
{
	char path[4096], *line = NULL;
	pid_t nspid = pid;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", s->proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (getline(&line, &cap, f) > 0) {
		char *last;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* one pid per nested namespace, innermost last */
		line[strcspn(line, "\n")] = '\0';
		last = strrchr(line, '\t');
		if (!last)
			last = strrchr(line, ' ');
		if (last && atoi(last + 1) > 0)
			nspid = atoi(last + 1);
		break;
	}
	free(line);
	fclose(f);
	return nspid;
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

static void perfmap_refresh(struct bp_syms *s, struct sym_proc *p, bool force)
{
	char path[4096];
	uint64_t now = now_ns();
	int err = -ENOENT;

	if (!force && p->last_pm_check && now - p->last_pm_check < REFRESH_NS)
		return;
	p->last_pm_check = now;
	if (!p->pm) {
		struct stat st;

		p->pm = bp_perfmap__new();
		if (!p->pm)
			return;
		/* /proc/PID belongs to the process's effective user */
		snprintf(path, sizeof(path), "%s/%d", s->proc_root, p->pid);
		if (!p->exited && !stat(path, &st))
			bp_perfmap__set_owner(p->pm, st.st_uid);
	}
	/* the JIT wrote it inside its own mount and pid namespace */
	if (!p->exited) {
		snprintf(path, sizeof(path), "%s/%d/root%s/perf-%d.map", s->proc_root,
			 p->pid, s->perfmap_dir, p->nspid);
		err = bp_perfmap__update(p->pm, path);
	}
	if (p->exited || (err && err != -ENOENT)) {
		snprintf(path, sizeof(path), "%s/perf-%d.map", s->perfmap_dir, p->pid);
		bp_perfmap__update(p->pm, path);
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
	struct sym_proc *p;
	pid_t pid;
	const char *root;	/* "" when the process shares our mount namespace */
	struct sym_map *maps;
	size_t nr, cap;
	int err;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int open_mapped(struct snap_ctx *c, const struct bp_maps_line *l)
{
	struct bp_syms *s = c->s;
	char path[4096];
	struct stat st;
	int fd, i;

	/* works for deleted files and other mount namespaces alike */
	snprintf(path, sizeof(path), "%s/%d/map_files/%llx-%llx", s->proc_root, c->pid,
		 (unsigned long long)l->start, (unsigned long long)l->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || l->deleted)
		return fd;
	/* a path may now name another file: the inode tells */
	for (i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s/%d/root%s", s->proc_root, c->pid,
				 l->path);
		else
			snprintf(path, sizeof(path), "%s", l->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && (!l->inode || st.st_ino == l->inode))
			return fd;
		close(fd);
	}
	return -1;
}

static struct sym_file *snap_file(struct snap_ctx *c, const struct bp_maps_line *l,
				  const char *path, const char *module)
{
	struct sym_proc *p = c->p;
	const struct sym_map *old;
	int fd;

	/* refreshing a live process: most mappings are unchanged */
	old = p ? map_find(p->maps, p->nr_maps, l->start) : NULL;
	if (old && old->file && old->start == l->start && old->end == l->end &&
	    old->pgoff == l->pgoff && old->inode == l->inode && old->path == path)
		return file_get(c->s, old->file);

	fd = open_mapped(c, l);
	if (fd < 0) {
		bp_dbg("pid %d: cannot open %s, its frames stay unnamed", c->pid, path);
		return NULL;
	}
	return file_from_fd(c->s, fd, path, module, c->root);
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
	struct snap_ctx c = { .s = s, .pid = pid };
	char path[4096], root[4096];
	struct sym_proc *p = proc_find(s, pid);
	bool anon_exec = false;
	size_t i, bad = 0;
	int err;

	if (!same_mnt_ns(s, pid)) {
		snprintf(root, sizeof(root), "%s/%d/root", s->proc_root, pid);
		c.root = root;
	} else {
		c.root = "";
	}
	c.p = p;
	snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, pid);
	err = bp_procmaps__read(path, snap_cb, &c, &bad);
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
	if (bad)
		bp_dbg("pid %d: %zu malformed maps lines skipped", pid, bad);
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
	if (p->exited) {
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
	p->nspid = read_nspid(s, pid);
	s->stats.snapshots++;

	for (i = 0; i < c.nr && !anon_exec; i++)
		anon_exec = c.maps[i].exec && c.maps[i].kind == MAP_ANON;
	/* while it is alive: a container's perf map is only reachable then */
	if (anon_exec || (p->pm && bp_perfmap__count(p->pm)))
		perfmap_refresh(s, p, true);
	return 0;
}

uint64_t bp_syms__snapshot_ns(struct bp_syms *s, pid_t pid)
{
	struct sym_proc *p = proc_find(s, pid);

	return p && p->nr_maps ? p->last_refresh : 0;
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

static bool proc_gone(const struct bp_syms *s, pid_t pid)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%d", s->proc_root, pid);
	return access(path, F_OK) && errno == ENOENT;
}

uint32_t bp_syms__retire(struct bp_syms *s)
{
	uint32_t dropped = 0;
	size_t i;

	for (i = 0; s->procs.b && i < s->procs.nb; i++) {
		struct hnode *n = s->procs.b[i], *next;

		for (; n; n = next) {
			struct sym_proc *p = container_of(n, struct sym_proc, node);

			next = n->next;
			if (p->retiring) {
				proc_destroy(s, p);
				dropped++;
			} else if (p->exited || proc_gone(s, p->pid)) {
				/* an exit event can be lost; the pid's absence cannot */
				p->exited = true;
				p->retiring = true;
			}
		}
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

static const char *sym_name(struct bp_syms *s, struct bp_elf_sym *sym)
{
	if (!sym->udata)
		sym->udata = intern(s, sym->name);
	return sym->udata;
}

static int resolve_elf(struct bp_syms *s, struct bp_elf *e, uint64_t off,
		       struct bp_frame_info *out)
{
	struct bp_elf_sym *sym;
	uint64_t vaddr;

	if (bp_elf__file_to_vaddr(e, off, &vaddr))
		return -ENOENT;
	out->offset = vaddr;
	count_parse(s, e);
	sym = bp_elf__find(e, vaddr);
	if (!sym)
		return -ENOENT;
	out->name = sym_name(s, sym);
	out->sym_offset = vaddr - sym->addr;
	return out->name ? 0 : -ENOMEM;
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
		       uint64_t addr, struct bp_frame_info *out)
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
		if (f && !file_elf(s, f)) {
			out->build_id = f->build_id;
			return resolve_elf(s, f->elf, off, out);
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
		return resolve_elf(s, vdso, off, out);
	case MAP_ANON:
		if (m->exec)
			err = resolve_perfmap(s, p, addr, out);
		return err;
	default:
		return -ENOENT;
	}
}

int bp_syms__resolve_user(struct bp_syms *s, pid_t pid, uint64_t addr,
			  struct bp_frame_info *out)
{
	struct sym_proc *p = proc_find(s, pid);
	const struct sym_map *m = NULL;
	int err;

	memset(out, 0, sizeof(*out));
	out->module = "[unknown]";
	out->offset = addr;

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
	m = map_find(p->maps, p->nr_maps, addr);
	if (!m && !p->exited && now_ns() - p->last_refresh >= REFRESH_NS) {
		if (!bp_syms__snapshot(s, pid))
			m = map_find(p->maps, p->nr_maps, addr);
	}
	if (m) {
		out->code = m->exec;
		err = resolve_map(s, p, m, addr, out);
	} else {
		err = resolve_perfmap(s, p, addr, out);
		out->code = !err;
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

size_t bp_syms__kernel_ranges(const struct bp_syms *s, const char *base, uint64_t *start,
			      uint64_t *end, size_t max)
{
	return s->ksyms ? bp_kallsyms__ranges(s->ksyms, base, start, end, max) : 0;
}

int bp_syms__resolve_kernel(struct bp_syms *s, uint64_t addr, struct bp_frame_info *out)
{
	struct bp_ksym ks;

	memset(out, 0, sizeof(*out));
	out->kernel = true;
	out->code = true;
	out->module = "[kernel]";
	out->offset = addr;
	if (!s->ksyms || bp_kallsyms__find(s->ksyms, addr, &ks)) {
		s->stats.unresolved++;
		return -ENOENT;
	}
	out->name = ks.name;
	out->sym_offset = addr - ks.addr;
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
	static const char hex[] = "0123456789abcdef";
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
		size_t name_off, desc_off, i;

		memcpy(&nh, buf + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = name_off + ((nh.n_namesz + 3) & ~3U);
		off = desc_off + ((nh.n_descsz + 3) & ~3U);
		if (off > len)
			break;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp(buf + name_off, "GNU", 4) || !nh.n_descsz || nh.n_descsz > 64)
			continue;
		for (i = 0; i < nh.n_descsz; i++) {
			out[2 * i] = hex[buf[desc_off + i] >> 4];
			out[2 * i + 1] = hex[buf[desc_off + i] & 0xf];
		}
		out[2 * i] = '\0';
		return intern(s, out);
	}
	return NULL;
}

int bp_syms__load_kernel(struct bp_syms *s)
{
	struct bp_kallsyms *k, **old;
	int err;

	err = bp_kallsyms__load(s->kallsyms_path, &k);
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

	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->proc_root = strdup(o.proc_root);
	s->kallsyms_path = strdup(o.kallsyms_path);
	s->debug_root = strdup(o.debug_root);
	s->perfmap_dir = strdup(o.perfmap_dir);
	if (!s->proc_root || !s->kallsyms_path || !s->debug_root || !s->perfmap_dir ||
	    htab_init(&s->procs) || htab_init(&s->files) || htab_init(&s->strs)) {
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
	for (i = 0; s->procs.b && i < s->procs.nb; i++)
		while (s->procs.b[i])
			proc_destroy(s, container_of(s->procs.b[i], struct sym_proc, node));
	for (i = 0; s->files.b && i < s->files.nb; i++)
		while (s->files.b[i])
			file_destroy(s, container_of(s->files.b[i], struct sym_file, node));
	for (c = s->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	bp_kallsyms__free(s->ksyms);
	for (i = 0; i < s->nr_old_ksyms; i++)
		bp_kallsyms__free(s->old_ksyms[i]);
	free(s->old_ksyms);
	bp_elf__free(s->vdso);
	free(s->procs.b);
	free(s->files.b);
	free(s->strs.b);
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
	out->string_bytes = 0;
	for (c = s->chunks; c; c = c->next)
		out->string_bytes += c->cap;
}
