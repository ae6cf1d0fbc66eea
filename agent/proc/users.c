// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc/users.h"
#include "util/htab.h"
#include "util/log.h"
#include "util/readfile.h"

/* a passwd file bigger than this is read this far: 100k users at 80 bytes a line */
#define PASSWD_MAX_BYTES	(8u << 20)
#define NAME_MAX_LEN		64

struct user {
	uint32_t uid;
	char name[NAME_MAX_LEN];
};

struct bp_users {
	char *path;
	struct user *v;
	uint32_t n, cap;
	struct bp_htab h;
	struct timespec mtime;
	off_t size;
	bool loaded;
	time_t checked;		/* CLOCK_MONOTONIC seconds of the last stat */
};

int bp_users_parse_line(const char *line, char *name, size_t len, uint32_t *uid)
{
	const char *c1 = strchr(line, ':'), *c2, *p;
	unsigned long long v = 0;
	size_t n;

	if (!c1 || c1 == line || line[0] == '#' || line[0] == '+' || line[0] == '-')
		return -EINVAL;
	c2 = strchr(c1 + 1, ':');
	if (!c2 || c2[1] < '0' || c2[1] > '9')
		return -EINVAL;
	for (p = c2 + 1; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	if (*p != ':')
		return -EINVAL;
	n = (size_t)(c1 - line);
	if (n >= len)
		return -EINVAL;
	memcpy(name, line, n);
	name[n] = '\0';
	*uid = (uint32_t)v;
	return 0;
}

static bool user_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct bp_users *)ctx)->v[idx].uid == *(const uint32_t *)key;
}

static int on_line(char *line, size_t len, void *ctx)
{
	struct bp_users *u = ctx;
	struct user e;
	uint32_t idx;

	(void)len;
	if (bp_users_parse_line(line, e.name, sizeof(e.name), &e.uid))
		return 0;
	/* the first line for a uid wins, as getpwuid() reads it */
	if (!bp_htab_find(&u->h, bp_hash_u64(e.uid), user_eq, u, &e.uid, &idx))
		return 0;
	if (u->n == u->cap) {
		uint32_t ncap = u->cap ? u->cap * 2 : 64;
		struct user *nv = reallocarray(u->v, ncap, sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		u->v = nv;
		u->cap = ncap;
	}
	if (bp_htab_insert(&u->h, bp_hash_u64(e.uid), u->n))
		return -ENOMEM;
	u->v[u->n++] = e;
	return 0;
}

static void load(struct bp_users *u)
{
	struct bp_lines lr = { .max_line = 4096, .max_bytes = PASSWD_MAX_BYTES,
			       .take_partial = true };
	struct stat st;
	int fd, err;

	u->n = 0;
	bp_htab_clear(&u->h);
	u->loaded = true;
	fd = open(u->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	u->mtime = st.st_mtim;
	u->size = st.st_size;
	err = bp_read_lines(fd, &lr, on_line, u);
	if (err)
		bp_dbg("%s: read stopped: %s", u->path, strerror(-err));
	close(fd);
}

static time_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* a changed file (a user added while we run) is read again, checked once a second */
static void refresh(struct bp_users *u)
{
	struct stat st;
	time_t now = mono_s();

	if (u->loaded && now == u->checked)
		return;
	u->checked = now;
	if (!u->loaded || stat(u->path, &st) ||
	    st.st_mtim.tv_sec != u->mtime.tv_sec || st.st_mtim.tv_nsec != u->mtime.tv_nsec ||
	    st.st_size != u->size)
		load(u);
}

struct bp_users *bp_users__new(const char *path)
{
	struct bp_users *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->path = strdup(path ? path : "/etc/passwd");
	if (!u->path) {
		free(u);
		return NULL;
	}
	return u;
}

const char *bp_users__name(struct bp_users *u, uint32_t uid)
{
	uint32_t idx;

	refresh(u);
	if (bp_htab_find(&u->h, bp_hash_u64(uid), user_eq, u, &uid, &idx))
		return NULL;
	return u->v[idx].name;
}

void bp_users__free(struct bp_users *u)
{
	if (!u)
		return;
	bp_htab_free(&u->h);
	free(u->v);
	free(u->path);
	free(u);
}
