// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "symbolize/perfmap.h"

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

	/* whose process it is: a map owned by anyone else (bar root) is refused */
	bool uid_known;
	uid_t uid;
};

struct bp_perfmap *bp_perfmap__new(void)
{
	return calloc(1, sizeof(struct bp_perfmap));
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
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (;; p++, n++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (v >> 60)
			return -EINVAL;
		v = (v << 4) | (uint64_t)d;
	}
	if (!n)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
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
}

static int add(struct bp_perfmap *pm, uint64_t addr, uint64_t size, const char *name)
{
	size_t len = strlen(name) + 1;
	struct pm_ent *e;

	if (pm->nr == pm->cap) {
		size_t ncap = pm->cap ? pm->cap * 2 : 256;
		void *p = reallocarray(pm->ents, ncap, sizeof(*pm->ents));

		if (!p)
			return -ENOMEM;
		pm->ents = p;
		pm->cap = ncap;
	}
	if (pm->names_len + len > pm->names_cap) {
		size_t ncap = pm->names_cap ? pm->names_cap : 4096;
		char *p;

		while (ncap < pm->names_len + len)
			ncap *= 2;
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

/* complete lines from pm->consumed on; a line still being written waits */
static int read_from(struct bp_perfmap *pm, int fd, const char *path)
{
	size_t cap = 0, bad = 0;
	char *line = NULL;
	ssize_t n;
	int err = 0;
	FILE *f;

	f = fdopen(fd, "r");
	if (!f)
		return -errno;
	if (fseeko(f, pm->consumed, SEEK_SET)) {
		err = -errno;
		goto out;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		uint64_t addr, size;
		const char *name;

		if (line[n - 1] != '\n')
			break;
		pm->consumed += n;
		if (bp_perfmap__parse_line(line, &addr, &size, &name)) {
			bad++;
			continue;
		}
		err = add(pm, addr, size, name);
		if (err)
			break;
	}
	if (bad)
		bp_dbg("%s: %zu malformed lines skipped", path, bad);
out:
	free(line);
	fclose(f);
	return err;
}

int bp_perfmap__update(struct bp_perfmap *pm, const char *path)
{
	struct stat st;
	size_t i;
	int fd, err;

	/*
	 * /tmp is everyone's: a FIFO or device planted under the name would
	 * block or feed us forever. Open without blocking, read regular files
	 * only, and only those owned by root or by the process's owner (what
	 * perf checks too); path is /tmp/perf-PID.map, or under /proc/PID/root.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || (pm->uid_known && st.st_uid && st.st_uid != pm->uid)) {
		close(fd);
		return -EPERM;
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
	err = read_from(pm, fd, path);	/* closes fd */
	pm->have = true;
	pm->dev = st.st_dev;
	pm->ino = st.st_ino;
	pm->size = st.st_size;
	pm->mtime = st.st_mtim;

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
