// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "boundprof.h"
#include "collect/mapfiles.h"
#include "proc/procmaps.h"
#include "util/htab.h"

/*
 * Files remembered at most: a process maps a few dozen, a machine's
 * processes a few thousand between them. When full, the table is emptied
 * and learnt again (a file deleted or replaced would keep its row for good).
 */
#define KNOWN_MAX	4096

struct known_key {
	uint64_t ino;
	uint32_t dev;		/* the kernel's dev_t, as BPF reads it */
	uint32_t mnt_ns;
};

struct known {
	struct known_key key;
	char *path;
};

struct bp_mapfiles {
	struct known *v;
	uint32_t n;
	struct bp_htab idx;
	struct bp_mapfiles_stats st;
};

int bp_mapfiles__new(struct bp_mapfiles **out)
{
	struct bp_mapfiles *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->v = calloc(KNOWN_MAX, sizeof(*m->v));
	if (!m->v) {
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

static void forget_all(struct bp_mapfiles *m)
{
	uint32_t i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].path);
	m->n = 0;
	bp_htab_clear(&m->idx);
}

void bp_mapfiles__free(struct bp_mapfiles *m)
{
	if (!m)
		return;
	forget_all(m);
	bp_htab_free(&m->idx);
	free(m->v);
	free(m);
}

static uint64_t key_hash(const struct known_key *k)
{
	return bp_hash_bytes(k, sizeof(*k), 0x6d617073);
}

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_mapfiles *m = ctx;

	return !memcmp(&m->v[idx].key, key, sizeof(struct known_key));
}

static struct known *find(const struct bp_mapfiles *m, const struct known_key *k)
{
	uint32_t i;

	return bp_htab_find(&m->idx, key_hash(k), key_eq, m, k, &i) ? NULL : &m->v[i];
}

/* replace: a path /proc gave (the file's own, links resolved) is preferred to an exec's */
static void learn(struct bp_mapfiles *m, const struct known_key *k, const char *path, size_t len,
		  bool replace)
{
	struct known *kn = find(m, k);
	char *p;

	if (kn && (!replace || (strlen(kn->path) == len && !memcmp(kn->path, path, len))))
		return;
	p = strndup(path, len);
	if (!p)
		return;
	if (!kn) {
		if (m->n >= KNOWN_MAX) {
			forget_all(m);
			m->st.resets++;
		}
		if (bp_htab_insert(&m->idx, key_hash(k), m->n)) {
			free(p);
			return;
		}
		kn = &m->v[m->n++];
		kn->key = *k;
		kn->path = NULL;
	}
	free(kn->path);
	kn->path = p;
	m->st.learnt++;
}

struct learn_ctx {
	struct bp_mapfiles *m;
	uint32_t mnt_ns;
	uint64_t last_ino;
};

static int learn_line(const struct bp_maps_line *l, void *ctx)
{
	struct learn_ctx *c = ctx;
	struct known_key k = { .mnt_ns = c->mnt_ns };

	/* a file's segments are side by side: once is enough */
	if (!l->path_len || l->path[0] != '/' || !l->inode || l->deleted ||
	    l->inode == c->last_ino)
		return 0;
	c->last_ino = l->inode;
	k.ino = l->inode;
	k.dev = l->dev_major << 20 | l->dev_minor;
	learn(c->m, &k, l->path, l->path_len, true);
	return 0;
}

void bp_mapfiles__learn_maps(struct bp_mapfiles *m, uint32_t mnt_ns, const char *maps_path)
{
	struct learn_ctx c = { .m = m, .mnt_ns = mnt_ns };

	/* only what is held: never a read of its own */
	if (!m || !mnt_ns || !bp_procmaps__holds(maps_path))
		return;
	bp_procmaps__read(maps_path, learn_line, &c, NULL);
}

/*
 * A path relative to the exec'ing process's directory (./prog, a build
 * tree's bin/prog): taken in its parent's, which it inherited at the fork
 * and which outlives it, and kept only when it names the very file
 * exec'd. Two system calls, once per file.
 */
static void learn_relative(struct bp_mapfiles *m, const struct known_key *k,
			   const struct bp_exec_event *x, size_t len)
{
	char link[32], cwd[4096], via[32 + BP_PATH_LEN], path[4096 + BP_PATH_LEN];
	const char *rel = x->path;
	struct stat st;
	ssize_t n;

	while (len > 2 && rel[0] == '.' && rel[1] == '/') {
		rel += 2;
		len -= 2;
	}
	/* through the parent's own directory, in its own mount namespace */
	snprintf(via, sizeof(via), "/proc/%u/cwd/%.*s", x->ev.ppid, (int)len, rel);
	if (stat(via, &st) || st.st_ino != k->ino ||
	    (uint32_t)(major(st.st_dev) << 20 | minor(st.st_dev)) != k->dev)
		return;
	snprintf(link, sizeof(link), "/proc/%u/cwd", x->ev.ppid);
	n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0 || cwd[0] != '/')
		return;
	cwd[n] = '\0';
	snprintf(path, sizeof(path), "%s/%.*s", n > 1 ? cwd : "", (int)len, rel);
	learn(m, k, path, strlen(path), false);
}

void bp_mapfiles__learn_exec(struct bp_mapfiles *m, const struct bp_exec_event *x)
{
	struct known_key k = { .ino = x->file.ino, .dev = x->file.dev, .mnt_ns = x->mnt_ns };
	size_t len = strnlen(x->path, sizeof(x->path));

	if (!m || !(x->ev.flags & BP_EVF_EXEC_FILE) || !x->mnt_ns || !k.ino || !len ||
	    len == sizeof(x->path))
		return;
	if (find(m, &k))
		return;
	if (x->path[0] == '/')
		learn(m, &k, x->path, len, false);
	else if (x->ev.ppid)
		learn_relative(m, &k, x, len);
}

void bp_exe_id_stat(const struct bp_exe_id *x, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = makedev(x->dev >> 20, x->dev & 0xfffff);
	st->st_ino = x->ino;
	st->st_mode = x->mode;
	st->st_nlink = x->nlink;
	st->st_size = x->size;
	st->st_mtim.tv_sec = x->mtime_sec;
	st->st_mtim.tv_nsec = x->mtime_nsec;
	st->st_ctim.tv_sec = x->ctime_sec;
	st->st_ctim.tv_nsec = x->ctime_nsec;
}

int bp_mapfiles__hold(struct bp_mapfiles *m, const struct bp_exit_event *x,
		      const char *maps_path)
{
	const struct bp_maps_walk *w = &x->w;
	const char *paths[BP_WALK_FILES];
	struct stat st[BP_WALK_FILES];
	struct bp_maps_line lines[BP_WALK_MAPS];
	uint32_t i, nf = w->nr_files, nm = w->nr_maps, known = 0, nl = 0;
	int err;

	if (!m || !(x->ev.flags & BP_EVF_MAPS) || !x->mnt_ns || nf > BP_WALK_FILES ||
	    nm > BP_WALK_MAPS)
		return -ENOENT;
	for (i = 0; i < nf; i++) {
		struct known_key k = {
			.ino = w->files[i].ino, .dev = w->files[i].dev, .mnt_ns = x->mnt_ns,
		};
		const struct known *kn = find(m, &k);

		paths[i] = kn ? kn->path : NULL;
		m->st.unnamed += !kn;
		if (kn)
			bp_exe_id_stat(&w->files[i], &st[known++]);
	}
	if (!known)
		return -ENOENT;
	for (i = 0; i < nm; i++) {
		const struct bp_walk_map *mp = &w->maps[i];
		struct bp_maps_line *l = &lines[nl];
		const char *path;
		uint32_t dev = 0;
		uint64_t ino = 0;

		switch (mp->file) {
		case BP_WM_HEAP:
			path = "[heap]";
			break;
		case BP_WM_STACK:
			path = "[stack]";
			break;
		case BP_WM_VDSO:
			path = "[vdso]";
			break;
		default:
			if (mp->file >= nf || !paths[mp->file])
				continue;
			path = paths[mp->file];
			dev = w->files[mp->file].dev;
			ino = w->files[mp->file].ino;
		}
		/*
		 * The line /proc/PID/maps would have had, as its parser gives
		 * it: rendered as text and parsed back (two snprintf()s and a
		 * parse a mapping), it was 15% of the agent's CPU between
		 * windows under 20 new processes a second.
		 */
		memset(l, 0, sizeof(*l));
		l->start = mp->start;
		l->end = mp->end;
		l->pgoff = mp->off;
		l->inode = ino;
		l->dev_major = dev >> 20;
		l->dev_minor = dev & 0xfffff;
		l->read = mp->prot & BP_WM_R;
		l->write = mp->prot & BP_WM_W;
		l->exec = mp->prot & BP_WM_X;
		l->shared = mp->prot & BP_WM_SHARED;
		l->path = path;
		l->path_len = strlen(path);
		nl++;
	}
	err = bp_procmaps__hold_lines(maps_path, lines, nl, st, known);
	if (!err)
		m->st.held++;
	return err;
}

void bp_mapfiles__stats(const struct bp_mapfiles *m, struct bp_mapfiles_stats *out)
{
	if (m)
		*out = m->st;
	else
		memset(out, 0, sizeof(*out));
}
