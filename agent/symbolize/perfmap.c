// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/perfmap.h"
#include "util/hex.h"
#include "util/log.h"
#include "util/readfile.h"
#include "util/safeopen.h"

/* how many earlier entries a lookup checks for an overlapping, newer one */
#define OVERLAP_WALK	32

struct pm_ent {
	struct bp_perfmap_sym sym;
	size_t name_off;
};

struct bp_perfmap {
	struct pm_ent *ents;
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
	uint64_t next_seq;

	/* what was read: file identity, and how far complete lines went */
	bool have;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	off_t consumed;
	bool skipping;		/* consumed ends inside a too-long line */

	/* whose process it is: a map owned by anyone else is refused */
	bool uid_known;
	uid_t uid;

	struct bp_perfmap_limits lim;
	struct bp_perfmap_stats st;
};

struct bp_perfmap *bp_perfmap__new(void)
{
	struct bp_perfmap *pm = calloc(1, sizeof(*pm));

	if (pm)
		bp_perfmap__set_limits(pm, NULL);
	return pm;
}

void bp_perfmap__set_limits(struct bp_perfmap *pm, const struct bp_perfmap_limits *l)
{
	pm->lim.max_size = l && l->max_size ? l->max_size : BP_PERFMAP_SIZE_MAX;
	pm->lim.max_line = l && l->max_line ? l->max_line : BP_PERFMAP_LINE_MAX;
	pm->lim.max_mem = l && l->max_mem ? l->max_mem : BP_PERFMAP_MEM_MAX;
}

void bp_perfmap__set_owner(struct bp_perfmap *pm, uid_t uid)
{
	pm->uid_known = true;
	pm->uid = uid;
}

void bp_perfmap__free(struct bp_perfmap *pm)
{
	if (!pm)
		return;
	free(pm->ents);
	free(pm->names);
	free(pm);
}

static int parse_hex(const char **pp, uint64_t *out)
{
	if ((*pp)[0] == '0' && ((*pp)[1] == 'x' || (*pp)[1] == 'X'))
		*pp += 2;
	return bp_parse_hex(pp, out);
}

int bp_perfmap__parse_line(char *line, uint64_t *addr, uint64_t *size, const char **name)
{
	const char *p = line;
	size_t len;
	char *n;

	if (parse_hex(&p, addr) || (*p != ' ' && *p != '\t'))
		return -EINVAL;
	p += strspn(p, " \t");
	if (parse_hex(&p, size) || (*p != ' ' && *p != '\t'))
		return -EINVAL;
	p += strspn(p, " \t");
	n = line + (p - line);
	len = strcspn(n, "\r\n");
	n[len] = '\0';
	if (!len || !*size || *addr + *size < *addr)
		return -EINVAL;
	*name = n;
	return 0;
}

static void reset(struct bp_perfmap *pm)
{
	pm->nr = 0;
	pm->names_len = 0;
	pm->next_seq = 0;
	pm->consumed = 0;
	pm->skipping = false;
}

uint64_t bp_perfmap__mem(const struct bp_perfmap *pm)
{
	return (uint64_t)pm->cap * sizeof(*pm->ents) + pm->names_cap;
}

/* a line past max_mem is dropped: what is held never exceeds it */
static int add(struct bp_perfmap *pm, uint64_t addr, uint64_t size, const char *name)
{
	const size_t esz = sizeof(*pm->ents);
	size_t len = strlen(name) + 1;
	size_t ents_need = pm->nr == pm->cap ? pm->nr + 1 : pm->cap;
	size_t names_need = pm->names_len + len > pm->names_cap ? pm->names_len + len
								  : pm->names_cap;
	struct pm_ent *e;

	if ((uint64_t)ents_need * esz + names_need > pm->lim.max_mem) {
		pm->st.lines_dropped++;
		return 0;
	}
	if (pm->nr == pm->cap) {
		uint64_t room = (pm->lim.max_mem - names_need) / esz;
		size_t ncap = pm->cap ? pm->cap * 2 : 256;
		void *p;

		if (ncap > room)
			ncap = (size_t)room;	/* >= nr + 1, checked above */
		p = reallocarray(pm->ents, ncap, esz);
		if (!p)
			return -ENOMEM;
		pm->ents = p;
		pm->cap = ncap;
	}
	if (pm->names_len + len > pm->names_cap) {
		uint64_t room = pm->lim.max_mem - (uint64_t)pm->cap * esz;
		size_t ncap = pm->names_cap ? pm->names_cap : 4096;
		char *p;

		while (ncap < pm->names_len + len)
			ncap *= 2;
		if (ncap > room)
			ncap = (size_t)room;	/* >= names_len + len, checked above */
		p = realloc(pm->names, ncap);
		if (!p)
			return -ENOMEM;
		pm->names = p;
		pm->names_cap = ncap;
	}
	memcpy(pm->names + pm->names_len, name, len);
	e = &pm->ents[pm->nr++];
	e->sym.addr = addr;
	e->sym.size = size;
	e->sym.seq = pm->next_seq++;
	e->name_off = pm->names_len;
	pm->names_len += len;
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct pm_ent *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	return x->sym.seq < y->sym.seq ? -1 : x->sym.seq > y->sym.seq;
}

static int read_line(char *line, size_t len, void *ctx)
{
	struct bp_perfmap *pm = ctx;
	uint64_t addr, size;
	const char *name;

	if (bp_perfmap__parse_line(line, &addr, &size, &name)) {
		pm->st.lines_skipped++;
		return 0;
	}
	return add(pm, addr, size, name);
}

/* complete lines from pm->consumed to the size fstat() saw; a line still being written waits */
static int read_from(struct bp_perfmap *pm, int fd, off_t size)
{
	struct bp_lines lr = {
		.max_line = pm->lim.max_line,
		.max_bytes = (uint64_t)(size - pm->consumed),
		.skipping = pm->skipping,
	};
	int err;

	if (lseek(fd, pm->consumed, SEEK_SET) < 0)
		return -errno;
	err = bp_read_lines(fd, &lr, read_line, pm);
	pm->consumed += (off_t)lr.consumed;
	pm->skipping = lr.skipping;
	pm->st.lines_skipped += lr.too_long;
	return err;
}

int bp_perfmap__update(struct bp_perfmap *pm, const char *path)
{
	return bp_perfmap__update_at(pm, AT_FDCWD, path);
}

int bp_perfmap__update_at(struct bp_perfmap *pm, int root_fd, const char *path)
{
	struct bp_open_opts o = {
		.flags = pm->uid_known ? BP_OPEN_OWNER : 0,
		.uid = pm->uid,
		.max_size = pm->lim.max_size,
	};
	struct stat st;
	size_t i;
	int fd, err;

	/*
	 * /tmp is everyone's: a symlink planted under the name would make us
	 * read another user's file, a FIFO or device would block or feed us
	 * forever, a huge sparse file would eat our memory. The size is
	 * checked before any of it is read.
	 */
	fd = bp_open_untrusted(root_fd, path, &o, &st);
	if (fd < 0) {
		if (fd == -ELOOP || fd == -EPERM || fd == -EFBIG || fd == -EXDEV ||
		    fd == -ENOTDIR) {
			pm->st.refused++;
			bp_dbg("%s: perf map refused: %s", path, strerror(-fd));
		}
		return fd;
	}
	if (pm->have && pm->dev == st.st_dev && pm->ino == st.st_ino &&
	    pm->size == st.st_size && pm->mtime.tv_sec == st.st_mtim.tv_sec &&
	    pm->mtime.tv_nsec == st.st_mtim.tv_nsec) {
		close(fd);
		return 0;
	}
	if (!pm->have || pm->dev != st.st_dev || pm->ino != st.st_ino ||
	    st.st_size < pm->consumed)
		reset(pm);
	err = read_from(pm, fd, st.st_size);
	close(fd);
	if (pm->st.lines_skipped || pm->st.lines_dropped)
		bp_dbg("%s: %llu lines skipped, %llu dropped so far", path,
		       (unsigned long long)pm->st.lines_skipped,
		       (unsigned long long)pm->st.lines_dropped);
	pm->have = true;
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	pm->size = st.st_size;
	pm->mtime = st.st_mtim;

	/* qsort() of no entries (NULL) is undefined */
	if (pm->nr)
		qsort(pm->ents, pm->nr, sizeof(*pm->ents), cmp_ent);
	for (i = 0; i < pm->nr; i++)
		pm->ents[i].sym.name = pm->names + pm->ents[i].name_off;
	return err;
}

const struct bp_perfmap_sym *bp_perfmap__find(const struct bp_perfmap *pm, uint64_t addr)
{
	const struct bp_perfmap_sym *best = NULL;
	size_t lo = 0, hi = pm->nr, i, walked;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->ents[mid].sym.addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo, walked = 0; i > 0 && walked < OVERLAP_WALK; i--, walked++) {
		const struct bp_perfmap_sym *s = &pm->ents[i - 1].sym;

		if (addr - s->addr < s->size && (!best || s->seq > best->seq))
			best = s;
	}
	return best;
}

size_t bp_perfmap__count(const struct bp_perfmap *pm)
{
	return pm->nr;
}

void bp_perfmap__stats(const struct bp_perfmap *pm, struct bp_perfmap_stats *out)
{
	*out = pm->st;
}
