// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "proc/procmaps.h"
#include "util/hex.h"
#include "util/readfile.h"

#define DELETED_SUFFIX " (deleted)"


/* strtoull would accept signs, "0x" and leading blanks; maps have none */
static int parse_hex(const char **pp, uint64_t *out)
{
	return bp_parse_hex(pp, out);
}

static int parse_dec(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;

	while (*p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
		n++;
	}
	if (!n)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

static int expect(const char **pp, char c)
{
	if (**pp != c)
		return -EINVAL;
	(*pp)++;
	return 0;
}

static int parse_perm(char c, char yes, bool *out)
{
	if (c == yes)
		*out = true;
	else if (c == '-')
		*out = false;
	else
		return -EINVAL;
	return 0;
}

int bp_procmaps__parse_line(char *line, struct bp_maps_line *out)
{
	const char *p = line;
	uint64_t major, minor;
	size_t len, slen = strlen(DELETED_SUFFIX);
	char *path;

	memset(out, 0, sizeof(*out));
	if (parse_hex(&p, &out->start) || expect(&p, '-') ||
	    parse_hex(&p, &out->end) || expect(&p, ' '))
		return -EINVAL;
	if (out->end <= out->start)
		return -EINVAL;

	if (parse_perm(p[0], 'r', &out->read) || parse_perm(p[1], 'w', &out->write) ||
	    parse_perm(p[2], 'x', &out->exec))
		return -EINVAL;
	if (p[3] == 's')
		out->shared = true;
	else if (p[3] != 'p')
		return -EINVAL;
	p += 4;

	if (expect(&p, ' ') || parse_hex(&p, &out->pgoff) || expect(&p, ' ') ||
	    parse_hex(&p, &major) || expect(&p, ':') || parse_hex(&p, &minor) ||
	    expect(&p, ' ') || parse_dec(&p, &out->inode))
		return -EINVAL;
	if (major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	out->dev_major = (uint32_t)major;
	out->dev_minor = (uint32_t)minor;

	/* the kernel pads to a column before the path; anything else is junk */
	if (*p && *p != ' ' && *p != '\n')
		return -EINVAL;
	while (*p == ' ')
		p++;

	path = line + (p - line);
	len = strlen(path);
	if (len && path[len - 1] == '\n')
		path[--len] = '\0';
	if (len > slen && !strcmp(path + len - slen, DELETED_SUFFIX)) {
		len -= slen;
		path[len] = '\0';
		out->deleted = true;
	}
	out->path = path;
	out->path_len = len;
	return 0;
}

/*
 * The kernel lists the gate area ([vsyscall] on x86-64) after every
 * mapping (fs/proc/task_mmu.c: the gate vma follows the last one): the
 * line ends the file, and the read() that would only have said so is not
 * made. One system call of four per maps read; under 20 new processes a
 * second, a read per first sample, each ~15 us on a guest. Files without
 * the line (other architectures, vsyscall=none) are read to their end.
 */
#define MAPS_END	1

static int maps_last(const struct bp_maps_line *l)
{
	static const char gate[] = "[vsyscall]";

	return l->path_len == sizeof(gate) - 1 && !memcmp(l->path, gate, sizeof(gate) - 1) ?
		       MAPS_END : 0;
}

struct read_ctx {
	bp_procmaps_cb cb;
	void *ctx;
	size_t bad;
	bool ended;		/* stopped at the gate area's line, not by cb */
};

static int read_line(char *line, size_t len, void *ctx)
{
	struct read_ctx *rc = ctx;
	struct bp_maps_line l;
	int err;

	if (bp_procmaps__parse_line(line, &l)) {
		rc->bad++;
		return 0;
	}
	err = rc->cb(&l, rc->ctx);
	if (err)
		return err;
	rc->ended = maps_last(&l) == MAPS_END;
	return rc->ended ? MAPS_END : 0;
}

/*
 * One maps file, read and parsed once, see bp_procmaps__hold(); per
 * thread. The paths live in one arena: line i's path is at its offset
 * there until the read ends, then a pointer.
 */
static __thread struct {
	char path[128];
	bool on;
	struct bp_maps_line *lines;
	size_t nr, cap;
	char *paths;
	size_t paths_len, paths_cap;
	size_t bad;
	int exe_err;		/* 1: not asked yet; else bp_procmaps__exe_stat()'s answer */
	struct stat exe_st;
	struct stat *stats;	/* the files' own, when they came with the lines */
	size_t nr_stats;
} held;

/* what is held of one file at most: beyond it the readers read the file */
#define HOLD_MAX	(16u << 20)

/* one parsed line into held, its path copied into the arena (l->path then an offset) */
static int hold_parsed(struct bp_maps_line *l)
{
	size_t need;
	int last;
	void *p;

	need = held.paths_len + l->path_len + 1;
	if (need + (held.nr + 1) * sizeof(*l) > HOLD_MAX)
		return -EFBIG;
	if (held.nr == held.cap) {
		size_t ncap = held.cap ? 2 * held.cap : 64;

		p = reallocarray(held.lines, ncap, sizeof(*l));
		if (!p)
			return -ENOMEM;
		held.lines = p;
		held.cap = ncap;
	}
	if (need > held.paths_cap) {
		size_t ncap = held.paths_cap ? 2 * held.paths_cap : 4096;

		while (ncap < need)
			ncap *= 2;
		p = realloc(held.paths, ncap);
		if (!p)
			return -ENOMEM;
		held.paths = p;
		held.paths_cap = ncap;
	}
	memcpy(held.paths + held.paths_len, l->path, l->path_len);
	held.paths[held.paths_len + l->path_len] = '\0';
	last = maps_last(l);
	l->path = (const char *)(uintptr_t)held.paths_len;
	held.paths_len = need;
	held.lines[held.nr++] = *l;
	return last;
}

static int hold_line(char *line, size_t len, void *ctx)
{
	size_t *bad = ctx;
	struct bp_maps_line l;

	if (bp_procmaps__parse_line(line, &l)) {
		(*bad)++;
		return 0;
	}
	return hold_parsed(&l);
}

/* the lines read into held: theirs from now until the unhold */
static void hold_done(const char *path, size_t bad)
{
	size_t i;

	for (i = 0; i < held.nr; i++)
		held.lines[i].path = held.paths + (uintptr_t)held.lines[i].path;
	held.bad = bad;
	snprintf(held.path, sizeof(held.path), "%s", path);
	held.exe_err = 1;
	held.on = true;
}

/* the stats that came with held lines, copied; 0 or -ENOMEM */
static int hold_stats(const struct stat *stats, size_t nr_stats)
{
	if (!nr_stats)
		return 0;
	held.stats = calloc(nr_stats, sizeof(*stats));
	if (!held.stats)
		return -ENOMEM;
	memcpy(held.stats, stats, nr_stats * sizeof(*stats));
	held.nr_stats = nr_stats;
	return 0;
}

int bp_procmaps__hold_lines(const char *path, const struct bp_maps_line *lines, size_t nr,
			    const struct stat *stats, size_t nr_stats)
{
	size_t bad = 0, i, slen = strlen(DELETED_SUFFIX);
	struct bp_maps_line l;
	int err = 0;

	bp_procmaps__unhold();
	if (strlen(path) >= sizeof(held.path))
		return -ENAMETOOLONG;
	for (i = 0; i < nr && !err; i++) {
		l = lines[i];
		/* as the parser takes such a line: no empty range, no " (deleted)" in the path */
		if (l.end <= l.start) {
			bad++;
			continue;
		}
		if (l.path_len > slen && !memcmp(l.path + l.path_len - slen, DELETED_SUFFIX, slen)) {
			l.path_len -= slen;
			l.deleted = true;
		}
		err = hold_parsed(&l);
		if (err == MAPS_END) {
			err = 0;
			break;
		}
	}
	if (!err)
		err = hold_stats(stats, nr_stats);
	if (err) {
		bp_procmaps__unhold();
		return err;
	}
	hold_done(path, bad);
	return 0;
}

bool bp_procmaps__held_stat(const char *maps_path, const struct bp_maps_line *l, struct stat *st)
{
	size_t i;

	if (!held.nr_stats || !bp_procmaps__holds(maps_path))
		return false;
	for (i = 0; i < held.nr_stats; i++) {
		const struct stat *h = &held.stats[i];

		if (h->st_ino == l->inode && major(h->st_dev) == l->dev_major &&
		    minor(h->st_dev) == l->dev_minor) {
			*st = *h;
			return true;
		}
	}
	return false;
}

int bp_procmaps__hold(const char *path)
{
	struct bp_lines lr = {
		.max_line = BP_MAPS_LINE_MAX,
		.max_lines = BP_MAPS_LINES_MAX,
		.take_partial = true,
	};
	size_t bad = 0;
	int fd, err;

	bp_procmaps__unhold();
	if (strlen(path) >= sizeof(held.path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = bp_read_lines(fd, &lr, hold_line, &bad);
	close(fd);
	if (err == MAPS_END)
		err = 0;
	if (err) {
		bp_procmaps__unhold();
		return err;
	}
	hold_done(path, bad + lr.too_long + (lr.truncated ? 1 : 0));
	return 0;
}

size_t bp_procmaps__held_lines(void)
{
	return held.on ? held.nr : 0;
}

bool bp_procmaps__holds(const char *path)
{
	return held.on && !strcmp(path, held.path);
}

static __thread uint64_t exe_stats;

uint64_t bp_procmaps__exe_stats(void)
{
	return exe_stats;
}

int bp_procmaps__exe_stat(const char *maps_path, struct stat *st)
{
	bool mine = bp_procmaps__holds(maps_path);
	size_t len = strlen(maps_path);
	char path[160];
	int err = 0;

	if (mine && held.exe_err != 1) {
		*st = held.exe_st;
		return held.exe_err;
	}
	if (len < 5 || len - 4 >= sizeof(path) - 4 || strcmp(maps_path + len - 5, "/maps"))
		return -EINVAL;
	memcpy(path, maps_path, len - 4);
	memcpy(path + len - 4, "exe", 4);
	exe_stats++;
	if (stat(path, st)) {
		err = -errno;
		memset(st, 0, sizeof(*st));
	}
	if (mine) {
		held.exe_err = err;
		held.exe_st = *st;
	}
	return err;
}

void bp_procmaps__hold_exe(const struct stat *st)
{
	if (!held.on)
		return;
	held.exe_st = *st;
	held.exe_err = 0;
}

void bp_procmaps__unhold(void)
{
	free(held.lines);
	free(held.paths);
	free(held.stats);
	memset(&held, 0, sizeof(held));
}

int bp_procmaps__read(const char *path, bp_procmaps_cb cb, void *ctx, size_t *nr_bad)
{
	struct bp_lines lr = {
		.max_line = BP_MAPS_LINE_MAX,
		.max_lines = BP_MAPS_LINES_MAX,
		/* a maps file cut short by an exiting process keeps its last line */
		.take_partial = true,
	};
	struct read_ctx rc = { .cb = cb, .ctx = ctx };
	int fd, err;

	if (held.on && !strcmp(path, held.path)) {
		size_t i;

		if (nr_bad)
			*nr_bad = held.bad;
		for (i = 0; i < held.nr; i++) {
			err = cb(&held.lines[i], ctx);
			if (err)
				return err;
		}
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	err = bp_read_lines(fd, &lr, read_line, &rc);
	close(fd);
	if (rc.ended)
		err = 0;
	rc.bad += lr.too_long + (lr.truncated ? 1 : 0);
	if (nr_bad)
		*nr_bad = rc.bad;
	return err;
}
