// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/cgroup.h"
#include "proc/procinfo.h"
#include "proc/users.h"
#include "util/readfile.h"
#include "util/safeopen.h"

/* cgroup files are a few lines; memory.stat-sized ones are not read */
#define CG_FILE_MAX	4096
/* cgroup trees nest a handful deep; a walk to the root stops after this many */
#define CG_MAX_DEPTH	64

static const char *const ctrl_names[BP_CGC__MAX] = {
	[BP_CGC_CPU] = "cpu",
	[BP_CGC_MEMORY] = "memory",
};

static const char *const tree_names[BP_CGT__MAX] = {
	[BP_CGT_V2] = "v2",
	[BP_CGT_V1_CPU] = "cpu",
	[BP_CGT_V1_MEMORY] = "memory",
	[BP_CGT_V1_SYSTEMD] = "systemd",
};

const char *bp_cg_tree_name(enum bp_cg_tree t)
{
	return t < BP_CGT__MAX ? tree_names[t] : "?";
}

/* the pressure files' names, as /proc/pressure and cgroup v2 spell them */
static const char *const psi_names[BP_PSI__MAX] = {
	[BP_PSI_CPU] = "cpu",
	[BP_PSI_MEMORY] = "memory",
	[BP_PSI_IO] = "io",
};

/* ------------------------------------------------------------- mounts */

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/* is word one of the comma-separated items of list */
static bool has_item(const char *list, const char *word)
{
	size_t n = strlen(word);

	while (list && *list) {
		size_t len = strcspn(list, ",");

		if (len == n && !strncmp(list, word, n))
			return true;
		list += len;
		if (*list == ',')
			list++;
	}
	return false;
}

static void set_mount(struct bp_cg_mount *mt, const char *root, const char *dir)
{
	if (mt->dir[0])
		return;
	if (strlen(dir) >= sizeof(mt->dir) || strlen(root) >= sizeof(mt->root))
		return;
	strcpy(mt->dir, dir);
	strcpy(mt->root, root);
}

int bp_cg_parse_mountinfo(char *text, struct bp_cg_mounts *m)
{
	char *line, *save = NULL;
	bool any = false;

	memset(m, 0, sizeof(*m));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[24], *p, *s2 = NULL, *fstype, *super;
		int n = 0, sep;

		for (p = strtok_r(line, " ", &s2); p && n < 24; p = strtok_r(NULL, " ", &s2))
			f[n++] = p;
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS */
		for (sep = 6; sep < n && strcmp(f[sep], "-"); sep++)
			;
		if (sep + 3 >= n)
			continue;
		fstype = f[sep + 1];
		super = f[sep + 3];
		unescape(f[3]);
		unescape(f[4]);
		if (!strcmp(fstype, "cgroup2")) {
			set_mount(&m->v2, f[3], f[4]);
			any = true;
		} else if (!strcmp(fstype, "cgroup")) {
			int c;

			for (c = 0; c < BP_CGC__MAX; c++)
				if (has_item(super, ctrl_names[c]))
					set_mount(&m->v1[c], f[3], f[4]);
			if (has_item(super, "name=systemd"))
				set_mount(&m->v1_systemd, f[3], f[4]);
			any = true;
		}
	}
	return any ? 0 : -ENOENT;
}

void bp_cg_parse_controllers(const char *text, struct bp_cg_mounts *m)
{
	int c;

	for (c = 0; c < BP_CGC__MAX; c++) {
		const char *p = text;
		size_t n = strlen(ctrl_names[c]);

		m->v2_has[c] = false;
		while ((p = strstr(p, ctrl_names[c]))) {
			if ((p == text || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n')) {
				m->v2_has[c] = true;
				break;
			}
			p += n;
		}
	}
}

int bp_cg_mounts_read(const char *proc_root, struct bp_cg_mounts *m)
{
	char path[128], *buf;
	ssize_t n;
	int err;

	/* a machine with many mounts has a long mountinfo: 1 MiB covers ~8000 */
	buf = malloc(1 << 20);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/self/mountinfo", proc_root ? proc_root : "/proc");
	n = bp_read_small(path, buf, 1 << 20);
	if (n < 0) {
		free(buf);
		memset(m, 0, sizeof(*m));
		return (int)n;
	}
	err = bp_cg_parse_mountinfo(buf, m);
	if (!err && m->v2.dir[0]) {
		char p2[BP_CG_MOUNT_LEN + 32];

		snprintf(p2, sizeof(p2), "%s/cgroup.controllers", m->v2.dir);
		if (bp_read_small(p2, buf, 4096) >= 0)
			bp_cg_parse_controllers(buf, m);
	}
	free(buf);
	return err;
}

const struct bp_cg_mount *bp_cg_mount_of(const struct bp_cg_mounts *m, enum bp_cg_tree t)
{
	const struct bp_cg_mount *mt;

	switch (t) {
	case BP_CGT_V2:
		mt = &m->v2;
		break;
	case BP_CGT_V1_CPU:
		mt = &m->v1[BP_CGC_CPU];
		break;
	case BP_CGT_V1_MEMORY:
		mt = &m->v1[BP_CGC_MEMORY];
		break;
	case BP_CGT_V1_SYSTEMD:
		mt = &m->v1_systemd;
		break;
	default:
		return NULL;
	}
	return mt->dir[0] ? mt : NULL;
}

/* ------------------------------------------------------ /proc/PID/cgroup */

int bp_cg_parse_proc(char *text, struct bp_cg_paths *out)
{
	/* hierarchy ids seen: v1 ids are small (one per mounted hierarchy) */
	uint64_t seen = 0;
	bool seen_big = false;
	char *line = text;

	memset(out, 0, sizeof(*out));
	while (*line) {
		char *nl = strchr(line, '\n'), *c1, *c2, *end;
		unsigned long id;
		int c;

		/* no newline: the read stopped inside the line */
		if (!nl)
			return -EINVAL;
		*nl = '\0';
		c1 = strchr(line, ':');
		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c1 || !c2 || c2[1] != '/' || c1 == line)
			return -EINVAL;
		errno = 0;
		id = strtoul(line, &end, 10);
		if (end != c1 || errno)
			return -EINVAL;
		/* the same hierarchy twice: a cgroup name with a newline forged a line */
		if (id < 64) {
			if (seen & (1ULL << id))
				return -EINVAL;
			seen |= 1ULL << id;
		} else if (seen_big) {
			return -EINVAL;
		} else {
			seen_big = true;
		}
		*c1 = *c2 = '\0';
		if (strlen(c2 + 1) >= BP_CG_PATH_LEN)
			return -EINVAL;
		if (id == 0 && !c1[1]) {
			out->v2 = c2 + 1;
		} else {
			for (c = 0; c < BP_CGC__MAX; c++) {
				if (!has_item(c1 + 1, ctrl_names[c]))
					continue;
				if (out->v1[c])
					return -EINVAL;
				out->v1[c] = c2 + 1;
			}
			if (has_item(c1 + 1, "name=systemd")) {
				if (out->systemd)
					return -EINVAL;
				out->systemd = c2 + 1;
			}
		}
		line = nl + 1;
	}
	return 0;
}

static bool is_root(const char *p)
{
	return p && !strcmp(p, "/");
}

const char *bp_cg_group_path(const struct bp_cg_mounts *m, const struct bp_cg_paths *p)
{
	const char *v1[3] = { p->systemd, p->v1[BP_CGC_CPU], p->v1[BP_CGC_MEMORY] };
	int i;

	(void)m;
	if (p->v2 && !is_root(p->v2))
		return p->v2;
	for (i = 0; i < 3; i++)
		if (v1[i] && !is_root(v1[i]))
			return v1[i];
	if (p->v2)
		return p->v2;
	for (i = 0; i < 3; i++)
		if (v1[i])
			return v1[i];
	return NULL;
}

const char *bp_cg_ctrl_path(const struct bp_cg_mounts *m, const struct bp_cg_paths *p,
			    enum bp_cg_ctrl c, enum bp_cg_tree *tree)
{
	if (c >= BP_CGC__MAX)
		return NULL;
	if (m->v2_has[c] && p->v2) {
		*tree = BP_CGT_V2;
		return p->v2;
	}
	if (p->v1[c]) {
		*tree = c == BP_CGC_CPU ? BP_CGT_V1_CPU : BP_CGT_V1_MEMORY;
		return p->v1[c];
	}
	return NULL;
}

/* ----------------------------------------------------------------- units */

static bool hex_run(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* a container id: 64 lowercase hex digits */
static bool is_id(const char *s, size_t n)
{
	return n == 64 && hex_run(s, n);
}

static bool starts(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);

	return n >= k && !strncmp(s, pre, k);
}

static bool ends(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && !strncmp(s + n - k, suf, k);
}

/* PREFIX<64 hex>SUFFIX -> the id */
static const char *wrapped_id(const char *s, size_t n, const char *pre, const char *suf)
{
	size_t a = strlen(pre), b = strlen(suf);

	if (n != a + 64 + b || !starts(s, n, pre) || !ends(s, n, suf) || !is_id(s + a, 64))
		return NULL;
	return s + a;
}

/*
 * The container a component names, given its parent component: runtime
 * and id (or lxc name) in out; false when it names none.
 */
static bool container(const char *s, size_t n, const char *parent, size_t pn, char *out,
		      size_t len)
{
	static const struct {
		const char *pre, *suf, *rt;
	} scopes[] = {
		{ "docker-", ".scope", "docker" },
		{ "cri-containerd-", ".scope", "containerd" },
		{ "crio-", ".scope", "crio" },
		{ "libpod-", ".scope", "podman" },
		{ "libpod-", "", "podman" },
	};
	const char *id;
	size_t i;

	for (i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
		id = wrapped_id(s, n, scopes[i].pre, scopes[i].suf);
		if (id) {
			snprintf(out, len, "%s:%.12s", scopes[i].rt, id);
			return true;
		}
	}
	if (is_id(s, n)) {
		/* cgroupfs drivers: /docker/ID, /kubepods/CLASS/podUID/ID, /NAMESPACE/ID */
		const char *rt = "container";

		if (parent && pn == 6 && !strncmp(parent, "docker", 6))
			rt = "docker";
		else if (parent && starts(parent, pn, "pod"))
			rt = "kubepods";
		else if (parent && pn == 13 && !strncmp(parent, "libpod_parent", 13))
			rt = "podman";
		snprintf(out, len, "%s:%.12s", rt, s);
		return true;
	}
	/* LXC 4 and LXD: lxc.payload.NAME; older LXC: /lxc/NAME */
	if (starts(s, n, "lxc.payload.") && n > 12) {
		snprintf(out, len, "lxc:%.*s", (int)(n - 12), s + 12);
		return true;
	}
	if (parent && ((pn == 3 && !strncmp(parent, "lxc", 3)) ||
		       (pn == 11 && !strncmp(parent, "lxc.payload", 11)))) {
		snprintf(out, len, "lxc:%.*s", (int)n, s);
		return true;
	}
	return false;
}

static bool systemd_unit(const char *s, size_t n)
{
	return n > 6 && (ends(s, n, ".service") || ends(s, n, ".scope") || ends(s, n, ".slice"));
}

int bp_cg_unit_at(const char *path, char *out, size_t len, size_t *prefix_len)
{
	/* components, outermost first */
	const char *cs[CG_MAX_DEPTH];
	size_t cn[CG_MAX_DEPTH];
	const char *p = path;
	int n = 0, i;

	if (!path || !len)
		return -ENOENT;
	while (*p && n < CG_MAX_DEPTH) {
		p += strspn(p, "/");
		if (!*p)
			break;
		cs[n] = p;
		cn[n] = strcspn(p, "/");
		p += cn[n];
		n++;
	}
	/* a container anywhere says more than the units around or inside it */
	for (i = n - 1; i >= 0; i--) {
		if (container(cs[i], cn[i], i ? cs[i - 1] : NULL, i ? cn[i - 1] : 0, out, len)) {
			if (prefix_len)
				*prefix_len = (size_t)(cs[i] + cn[i] - path);
			return 0;
		}
	}
	for (i = n - 1; i >= 0; i--) {
		if (systemd_unit(cs[i], cn[i])) {
			snprintf(out, len, "%.*s", (int)cn[i], cs[i]);
			if (prefix_len)
				*prefix_len = (size_t)(cs[i] + cn[i] - path);
			return 0;
		}
	}
	return -ENOENT;
}

int bp_cg_unit(const char *path, char *out, size_t len)
{
	return bp_cg_unit_at(path, out, len, NULL);
}

/* ---------------------------------------------------------------- parsers */

int bp_cg_key_value(const char *text, const char *key, uint64_t *v)
{
	size_t k = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, k) && p[k] == ' ') {
			char *end;
			unsigned long long x;

			errno = 0;
			x = strtoull(p + k + 1, &end, 10);
			if (errno || end == p + k + 1 || (*end && *end != '\n'))
				return -EINVAL;
			*v = x;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int bp_cg_parse_cpu_stat(const char *text, struct bp_cg_cpu_stat *st)
{
	uint64_t v;
	bool thr = false;

	memset(st, 0, sizeof(*st));
	if (!bp_cg_key_value(text, "usage_usec", &v)) {
		st->have_usage = true;
		st->usage_ns = v * 1000;
	}
	if (!bp_cg_key_value(text, "throttled_usec", &v)) {
		st->throttled_ns = v * 1000;
		thr = true;
	} else if (!bp_cg_key_value(text, "throttled_time", &v)) {
		st->throttled_ns = v;
		thr = true;
	}
	if (!bp_cg_key_value(text, "nr_periods", &st->nr_periods) &&
	    !bp_cg_key_value(text, "nr_throttled", &st->nr_throttled) && thr)
		st->bandwidth = true;
	return st->bandwidth || st->have_usage ? 0 : -EINVAL;
}

static int parse_u64(const char *s, const char **end, uint64_t *v)
{
	char *e;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &e, 10);
	if (errno)
		return -EINVAL;
	*v = x;
	*end = e;
	return 0;
}

static bool at_end(const char *s)
{
	return !*s || (*s == '\n' && !s[1]);
}

int bp_cg_parse_cpu_max(const char *text, int64_t *quota_us, uint64_t *period_us)
{
	const char *p = text;
	uint64_t q;

	if (!strncmp(p, "max", 3)) {
		*quota_us = -1;
		p += 3;
	} else {
		if (parse_u64(p, &p, &q) || q > INT64_MAX)
			return -EINVAL;
		*quota_us = (int64_t)q;
	}
	if (*p != ' ' || parse_u64(p + 1, &p, period_us) || !at_end(p) || !*period_us)
		return -EINVAL;
	return 0;
}

int bp_cg_parse_int(const char *text, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(text, &end, 10);
	if (errno || end == text || !at_end(end))
		return -EINVAL;
	*v = x;
	return 0;
}

int bp_cg_parse_mem_limit(const char *text, uint64_t *v)
{
	const char *p = text;

	if (!strncmp(p, "max", 3) && at_end(p + 3)) {
		*v = UINT64_MAX;
		return 0;
	}
	if (parse_u64(p, &p, v) || !at_end(p))
		return -EINVAL;
	return 0;
}

/* the total= of the line starting with kind */
static int psi_total(const char *text, const char *kind, uint64_t *v)
{
	size_t k = strlen(kind);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, kind, k) && p[k] == ' ') {
			const char *nl = strchr(p, '\n'), *t = strstr(p, " total=");

			if (!t || (nl && t > nl))
				return -EINVAL;
			if (parse_u64(t + 7, &t, v) || (*t && *t != '\n'))
				return -EINVAL;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int bp_cg_parse_psi(const char *text, struct bp_psi_line *l)
{
	int e1, e2;

	memset(l, 0, sizeof(*l));
	e1 = psi_total(text, "some", &l->some_us);
	e2 = psi_total(text, "full", &l->full_us);
	l->some_valid = !e1;
	/* cpu has a full line since 890d550d7dbac (v5.13), all zeros outside a cgroup */
	l->full_valid = !e2;
	if (e1 == -EINVAL || e2 == -EINVAL || e1)
		return -EINVAL;
	return 0;
}

int bp_cg_parse_mem_events(const char *text, struct bp_cg_mem_events *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (bp_cg_key_value(text, "max", &ev->max) || bp_cg_key_value(text, "oom", &ev->oom))
		return -EINVAL;
	bp_cg_key_value(text, "low", &ev->low);
	bp_cg_key_value(text, "high", &ev->high);
	bp_cg_key_value(text, "oom_kill", &ev->oom_kill);
	return 0;
}

/* --------------------------------------------------------------- reading */

int bp_cg_root_open(const struct bp_cg_mounts *m, enum bp_cg_tree tree, struct bp_cg_root *r)
{
	const struct bp_cg_mount *mt = bp_cg_mount_of(m, tree);

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	r->tree = tree;
	if (!mt)
		return -ENOENT;
	r->fd = open(mt->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	snprintf(r->prefix, sizeof(r->prefix), "%s", is_root(mt->root) ? "" : mt->root);
	return 0;
}

void bp_cg_root_close(struct bp_cg_root *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/* path as /proc shows it, to a path inside the mount; -EINVAL outside it or with ".." */
static int rel_path(const struct bp_cg_root *r, const char *path, char *out, size_t len)
{
	size_t pl = strlen(r->prefix);
	const char *p;

	if (path[0] != '/')
		return -EINVAL;
	if (pl) {
		if (strncmp(path, r->prefix, pl) || (path[pl] && path[pl] != '/'))
			return -EINVAL;
		path += pl;
	}
	for (p = path; *p; p += strcspn(p, "/")) {
		p += strspn(p, "/");
		if (!strncmp(p, "..", 2) && (!p[2] || p[2] == '/'))
			return -EINVAL;
	}
	if ((size_t)snprintf(out, len, ".%s", path) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int bp_cg_ino(const struct bp_cg_root *r, const char *path, uint64_t *ino)
{
	char rel[BP_CG_PATH_LEN + 64];
	struct stat st;
	int err;

	if (r->fd < 0)
		return -ENOENT;
	err = rel_path(r, path, rel, sizeof(rel));
	if (err)
		return err;
	if (fstatat(r->fd, rel, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*ino = st.st_ino;
	return 0;
}

/*
 * kernfs's file handle (FILEID_KERNFS in the kernel's exportfs.h, not a uapi
 * header): the node's 64-bit id, which is the cgroup id.
 */
#define CG_FILEID_KERNFS	0xfe

/* where an open fd is, as the kernel names it from our root */
static int fd_path(int fd, char *out, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

int bp_cg_id_path(const struct bp_cg_root *r, uint64_t id, char *out, size_t len)
{
	static const char gone[] = " (deleted)";
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	char top[BP_CG_MOUNT_LEN], at[BP_CG_MOUNT_LEN + BP_CG_PATH_LEN];
	const char *rel;
	size_t tl, al;
	int mfd, fd, err;

	if (r->fd < 0 || !id)
		return -ENOENT;
	/* a handle is opened relative to an open directory of the mount, not an O_PATH one */
	mfd = openat(r->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	h.fh.handle_bytes = sizeof(h.id);
	h.fh.handle_type = CG_FILEID_KERNFS;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mfd, &h.fh, O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = fd < 0 ? (errno == ESTALE ? -ENOENT : -errno) : 0;
	if (!err)
		err = fd_path(r->fd, top, sizeof(top)) ?: fd_path(fd, at, sizeof(at));
	if (fd >= 0)
		close(fd);
	close(mfd);
	if (err)
		return err;
	tl = strlen(top);
	al = strlen(at);
	/* removed since the handle was opened */
	if (al >= sizeof(gone) - 1 && !strcmp(at + al - (sizeof(gone) - 1), gone))
		return -ENOENT;
	/* the mount's own path, then the cgroup's below it */
	if (strncmp(at, top, tl) || (at[tl] && at[tl] != '/'))
		return -ENOENT;
	rel = at[tl] ? at + tl : r->prefix[0] ? "" : "/";
	if ((size_t)snprintf(out, len, "%s%s", r->prefix, rel) >= len)
		return -ENAMETOOLONG;
	return 0;
}

ssize_t bp_cg_read(const struct bp_cg_root *r, const char *path, const char *file, char *buf,
		   size_t len)
{
	struct bp_open_opts o = { .max_size = CG_FILE_MAX };
	char rel[BP_CG_PATH_LEN + 64], full[BP_CG_PATH_LEN + 128];
	ssize_t n, total = 0;
	int fd, err;

	if (r->fd < 0)
		return -ENOENT;
	err = rel_path(r, path, rel, sizeof(rel));
	if (err)
		return err;
	if ((size_t)snprintf(full, sizeof(full), "%s/%s", rel, file) >= sizeof(full))
		return -ENAMETOOLONG;
	fd = bp_open_untrusted(r->fd, full, &o, NULL);
	if (fd < 0)
		return fd;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/* the parent of a cgroup path, in place; false at the root */
static bool up(char *path)
{
	char *s = strrchr(path, '/');

	if (!s || (s == path && !path[1]))
		return false;
	if (s == path)
		s[1] = '\0';
	else
		*s = '\0';
	return true;
}

/* the quota set on one cgroup: 1 found, 0 none, -errno unreadable */
static int quota_at(const struct bp_cg_root *r, const char *path, int64_t *quota,
		    uint64_t *period)
{
	char buf[256];
	int64_t p;

	if (r->tree == BP_CGT_V2) {
		/* the root has no cpu.max: nothing limits it */
		if (bp_cg_read(r, path, "cpu.max", buf, sizeof(buf)) < 0)
			return is_root(path) ? 0 : -ENOENT;
		if (bp_cg_parse_cpu_max(buf, quota, period))
			return -EINVAL;
		return *quota >= 0;
	}
	if (bp_cg_read(r, path, "cpu.cfs_quota_us", buf, sizeof(buf)) < 0 ||
	    bp_cg_parse_int(buf, quota))
		return -ENOENT;
	if (*quota < 0)
		return 0;
	if (bp_cg_read(r, path, "cpu.cfs_period_us", buf, sizeof(buf)) < 0 ||
	    bp_cg_parse_int(buf, &p) || p <= 0)
		return -ENOENT;
	*period = (uint64_t)p;
	return 1;
}

int bp_cg_cpu_limit_read(const struct bp_cg_root *r, const char *path,
			 struct bp_cg_cpu_limit *l)
{
	char cur[BP_CG_PATH_LEN], buf[CG_FILE_MAX];
	int depth, found;

	memset(l, 0, sizeof(*l));
	l->quota_us = -1;
	if (strlen(path) >= sizeof(cur))
		return -ENAMETOOLONG;
	strcpy(cur, path);
	for (depth = 0; depth < CG_MAX_DEPTH; depth++) {
		found = quota_at(r, cur, &l->quota_us, &l->period_us);
		if (found < 0)
			return depth ? 0 : found;
		l->valid = true;
		if (found) {
			strcpy(l->at, cur);
			break;
		}
		if (!up(cur))
			break;
	}
	/* the throttling of the cgroup whose quota applies, else of the path's own */
	if (bp_cg_read(r, l->at[0] ? l->at : path, "cpu.stat", buf, sizeof(buf)) >= 0)
		bp_cg_parse_cpu_stat(buf, &l->stat);
	return 0;
}

/* a v1 limit this high is none: PAGE_COUNTER_MAX pages */
#define V1_NO_LIMIT	(1ULL << 62)

static int mem_at(const struct bp_cg_root *r, const char *path, uint64_t *max, uint64_t *high)
{
	char buf[256];
	int64_t v;

	*max = *high = UINT64_MAX;
	if (r->tree == BP_CGT_V2) {
		if (bp_cg_read(r, path, "memory.max", buf, sizeof(buf)) < 0)
			return is_root(path) ? 0 : -ENOENT;
		if (bp_cg_parse_mem_limit(buf, max))
			return -EINVAL;
		if (bp_cg_read(r, path, "memory.high", buf, sizeof(buf)) >= 0)
			bp_cg_parse_mem_limit(buf, high);
		return *max != UINT64_MAX || *high != UINT64_MAX;
	}
	if (bp_cg_read(r, path, "memory.limit_in_bytes", buf, sizeof(buf)) < 0 ||
	    bp_cg_parse_int(buf, &v))
		return -ENOENT;
	if (v > 0 && (uint64_t)v < V1_NO_LIMIT)
		*max = (uint64_t)v;
	return *max != UINT64_MAX;
}

int bp_cg_mem_limit_read(const struct bp_cg_root *r, const char *path,
			 struct bp_cg_mem_limit *l)
{
	char cur[BP_CG_PATH_LEN], buf[CG_FILE_MAX];
	const char *at;
	int depth, found;

	memset(l, 0, sizeof(*l));
	l->max = l->high = UINT64_MAX;
	if (strlen(path) >= sizeof(cur))
		return -ENAMETOOLONG;
	strcpy(cur, path);
	for (depth = 0; depth < CG_MAX_DEPTH; depth++) {
		found = mem_at(r, cur, &l->max, &l->high);
		if (found < 0)
			return depth ? 0 : found;
		l->valid = true;
		if (found) {
			strcpy(l->at, cur);
			break;
		}
		if (!up(cur))
			break;
	}
	at = l->at[0] ? l->at : path;
	if (r->tree == BP_CGT_V2) {
		if (bp_cg_read(r, at, "memory.events", buf, sizeof(buf)) >= 0)
			bp_cg_parse_mem_events(buf, &l->ev);
	} else {
		int64_t v;

		/* hitting the limit: the closest v1 has to memory.events' max */
		if (bp_cg_read(r, at, "memory.failcnt", buf, sizeof(buf)) >= 0 &&
		    !bp_cg_parse_int(buf, &v) && v > 0)
			l->ev.max = (uint64_t)v;
		if (bp_cg_read(r, at, "memory.oom_control", buf, sizeof(buf)) >= 0)
			bp_cg_key_value(buf, "oom_kill", &l->ev.oom_kill);
	}
	return 0;
}

int bp_cg_psi_read(const struct bp_cg_root *r, const char *path, const char *proc_root,
		   struct bp_psi_line out[BP_PSI__MAX])
{
	char buf[512], file[160];
	int k, ok = 0;

	for (k = 0; k < BP_PSI__MAX; k++) {
		ssize_t n;

		memset(&out[k], 0, sizeof(out[k]));
		if (r) {
			snprintf(file, sizeof(file), "%s.pressure", psi_names[k]);
			n = bp_cg_read(r, path, file, buf, sizeof(buf));
		} else {
			snprintf(file, sizeof(file), "%s/pressure/%s",
				 proc_root ? proc_root : "/proc", psi_names[k]);
			n = bp_read_small(file, buf, sizeof(buf));
		}
		if (n >= 0 && !bp_cg_parse_psi(buf, &out[k]))
			ok++;
	}
	return ok ? 0 : -ENOENT;
}

/* ------------------------------------------------------------ a process */

static int dup_to(char **dst, const char *s)
{
	free(*dst);
	*dst = NULL;
	if (!s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

void bp_proc_ids_free(struct bp_proc_ids *ids)
{
	int c;

	free(ids->user);
	free(ids->cgroup);
	free(ids->cg_v2);
	free(ids->unit);
	for (c = 0; c < BP_CGC__MAX; c++)
		free(ids->cg_ctrl[c]);
	memset(ids, 0, sizeof(*ids));
}

int bp_proc_ids_copy(struct bp_proc_ids *dst, const struct bp_proc_ids *src)
{
	int c;

	memset(dst, 0, sizeof(*dst));
	dst->have_uid = src->have_uid;
	dst->uid = src->uid;
	if (dup_to(&dst->user, src->user) || dup_to(&dst->cgroup, src->cgroup) ||
	    dup_to(&dst->cg_v2, src->cg_v2) || dup_to(&dst->unit, src->unit))
		goto nomem;
	for (c = 0; c < BP_CGC__MAX; c++) {
		if (dup_to(&dst->cg_ctrl[c], src->cg_ctrl[c]))
			goto nomem;
		dst->ctrl_tree[c] = src->ctrl_tree[c];
	}
	return 0;
nomem:
	bp_proc_ids_free(dst);
	return -ENOMEM;
}

int bp_proc_ids_set_groups(const struct bp_cg_mounts *m, const struct bp_cg_paths *cp,
			   struct bp_proc_ids *ids)
{
	char unit[BP_CG_PATH_LEN];
	const char *g;
	int c;

	g = bp_cg_group_path(m, cp);
	if (dup_to(&ids->cgroup, g) || dup_to(&ids->cg_v2, cp->v2))
		return -ENOMEM;
	for (c = 0; c < BP_CGC__MAX; c++) {
		enum bp_cg_tree t = BP_CGT_V2;
		const char *cpath = bp_cg_ctrl_path(m, cp, c, &t);

		if (dup_to(&ids->cg_ctrl[c], cpath))
			return -ENOMEM;
		ids->ctrl_tree[c] = t;
	}
	if (g && !bp_cg_unit(g, unit, sizeof(unit)) && dup_to(&ids->unit, unit))
		return -ENOMEM;
	return 0;
}

int bp_proc_ids_read_groups(const char *proc_root, pid_t pid, const struct bp_cg_mounts *m,
			    struct bp_proc_ids *ids)
{
	struct bp_cg_paths cp;
	char path[128];
	ssize_t n;
	char *buf;
	int err;

	/* a dozen hierarchies of paths up to BP_CG_PATH_LEN */
	buf = malloc(16384);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root ? proc_root : "/proc", pid);
	n = bp_read_small(path, buf, 16384);
	if (n < 0 || bp_cg_parse_proc(buf, &cp)) {
		free(buf);
		return n == -ENOENT ? -ESRCH : 0;
	}
	err = bp_proc_ids_set_groups(m, &cp, ids);
	free(buf);
	return err;
}

int bp_proc_ids_read(const char *proc_root, pid_t pid, const struct bp_cg_mounts *m,
		     struct bp_users *users, struct bp_proc_ids *ids)
{
	pid_t nspid;
	uid_t uid;
	int err;

	memset(ids, 0, sizeof(*ids));
	err = bp_procinfo_read_ids(proc_root, pid, &uid, &nspid);
	if (err == -ESRCH)
		return err;
	if (!err) {
		ids->have_uid = true;
		ids->uid = uid;
		if (users && dup_to(&ids->user, bp_users__name(users, uid)))
			goto nomem;
	}
	if (!m)
		return 0;
	err = bp_proc_ids_read_groups(proc_root, pid, m, ids);
	if (err == -ENOMEM)
		goto nomem;
	return err;
nomem:
	bp_proc_ids_free(ids);
	return -ENOMEM;
}

/* --------------------------------------------------------------- resolving */

static int target_at(const struct bp_cg_mounts *m, enum bp_cg_tree tree, const char *path,
		     struct bp_cg_target *t)
{
	struct bp_cg_root r;
	char rel[BP_CG_PATH_LEN + 8];
	const char *p;
	struct stat st;
	int fd, err;

	if (bp_cg_root_open(m, tree, &r))
		return -ENOENT;
	err = rel_path(&r, path, rel, sizeof(rel));
	if (!err) {
		fd = openat(r.fd, rel, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			err = -ENOENT;
		if (fd >= 0)
			close(fd);
	}
	bp_cg_root_close(&r);
	if (err)
		return err;
	memset(t, 0, sizeof(*t));
	t->tree = tree;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->id = st.st_ino;
	for (p = path; *p; p += strcspn(p, "/")) {
		p += strspn(p, "/");
		if (*p)
			t->level++;
	}
	return 0;
}

/* the trees a path may be in, most useful first: v2, then the v1 controllers */
static const enum bp_cg_tree filter_trees[] = { BP_CGT_V2, BP_CGT_V1_CPU, BP_CGT_V1_MEMORY };
#define NR_FILTER_TREES (sizeof(filter_trees) / sizeof(filter_trees[0]))

struct unit_hit {
	enum bp_cg_tree tree;
	char path[BP_CG_PATH_LEN];
};

/* processes whose cgroup carries the unit: the distinct cgroups, at most max */
static int unit_from_procs(const struct bp_cg_mounts *m, const char *proc_root, const char *name,
			   struct unit_hit *hits, int max)
{
	char dirp[128], path[128 + 256 + 16], unit[BP_CG_PATH_LEN];
	struct dirent *de;
	int n = 0, scanned = 0;
	char *buf;
	DIR *d;

	snprintf(dirp, sizeof(dirp), "%s", proc_root ? proc_root : "/proc");
	d = opendir(dirp);
	buf = malloc(16384);
	if (!d || !buf) {
		if (d)
			closedir(d);
		free(buf);
		return 0;
	}
	/* a pid_max's worth of processes at most */
	while ((de = readdir(d)) && scanned < 4194304) {
		struct bp_cg_paths cp;
		size_t k;
		int i, j;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		scanned++;
		snprintf(path, sizeof(path), "%s/%s/cgroup", dirp, de->d_name);
		if (bp_read_small(path, buf, 16384) < 0 || bp_cg_parse_proc(buf, &cp))
			continue;
		for (i = 0; i < (int)NR_FILTER_TREES; i++) {
			enum bp_cg_tree tr = filter_trees[i];
			const char *cpath = tr == BP_CGT_V2 ? cp.v2 : tr == BP_CGT_V1_CPU ?
					    cp.v1[BP_CGC_CPU] : cp.v1[BP_CGC_MEMORY];

			if (!cpath || !bp_cg_mount_of(m, tr) ||
			    bp_cg_unit_at(cpath, unit, sizeof(unit), &k) || strcmp(unit, name))
				continue;
			for (j = 0; j < n; j++)
				if (hits[j].tree == tr && strlen(hits[j].path) == k &&
				    !strncmp(hits[j].path, cpath, k))
					break;
			if (j == n && n < max) {
				hits[n].tree = tr;
				snprintf(hits[n].path, sizeof(hits[n].path), "%.*s", (int)k, cpath);
				n++;
			}
		}
	}
	closedir(d);
	free(buf);
	return n;
}

/* a directory of the v2 tree named name: breadth first, bounded */
static int unit_from_tree(const struct bp_cg_mounts *m, const char *name, struct unit_hit *hits,
			  int max)
{
	const struct bp_cg_mount *mt = bp_cg_mount_of(m, BP_CGT_V2);
	/* directories still to look into: paths relative to the mount */
	char **queue;
	int head = 0, tail = 0, cap = 20000, n = 0;

	if (!mt)
		return 0;
	queue = calloc(cap, sizeof(*queue));
	if (!queue)
		return 0;
	queue[tail++] = strdup("");
	while (head < tail && queue[head]) {
		char *rel = queue[head++], dir[BP_CG_MOUNT_LEN + BP_CG_PATH_LEN + 2];
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s%s", mt->dir, rel);
		d = opendir(dir);
		while (d && (de = readdir(d))) {
			char sub[BP_CG_PATH_LEN];

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name) >=
			    sizeof(sub))
				continue;
			if (!strcmp(de->d_name, name) && n < max &&
			    (size_t)snprintf(hits[n].path, sizeof(hits[n].path), "%s%s",
					     is_root(mt->root) ? "" : mt->root, sub) <
				    sizeof(hits[n].path))
				hits[n++].tree = BP_CGT_V2;
			if (tail < cap)
				queue[tail++] = strdup(sub);
		}
		if (d)
			closedir(d);
	}
	while (tail > 0)
		free(queue[--tail]);
	free(queue);
	return n;
}

int bp_cg_resolve(const struct bp_cg_mounts *m, const char *proc_root, const char *arg,
		  struct bp_cg_target *t, char *errmsg, size_t errlen)
{
	struct unit_hit hits[4];
	size_t i;
	int n;

	errmsg[0] = '\0';
	if (!arg[0] || strlen(arg) >= BP_CG_PATH_LEN) {
		snprintf(errmsg, errlen, "not a cgroup path or unit name");
		return -EINVAL;
	}
	/* a directory under a mount */
	for (i = 0; i < NR_FILTER_TREES + 1; i++) {
		enum bp_cg_tree tr = i < NR_FILTER_TREES ? filter_trees[i] : BP_CGT_V1_SYSTEMD;
		const struct bp_cg_mount *mt = bp_cg_mount_of(m, tr);
		size_t dl = mt ? strlen(mt->dir) : 0;
		char path[BP_CG_PATH_LEN];

		if (!mt || strncmp(arg, mt->dir, dl) || (arg[dl] && arg[dl] != '/'))
			continue;
		if (tr == BP_CGT_V1_SYSTEMD) {
			snprintf(errmsg, errlen, "the name=systemd hierarchy has no controller to "
				 "filter by: give the cgroup's path in the v2 tree or a v1 cpu or "
				 "memory tree");
			return -ENOTSUP;
		}
		if ((size_t)snprintf(path, sizeof(path), "%s%s", is_root(mt->root) ? "" : mt->root,
				     arg[dl] ? arg + dl : "/") >= sizeof(path) ||
		    target_at(m, tr, path, t)) {
			snprintf(errmsg, errlen, "no such cgroup");
			return -ENOENT;
		}
		return 0;
	}
	if (arg[0] == '/') {
		for (i = 0; i < NR_FILTER_TREES; i++)
			if (!target_at(m, filter_trees[i], arg, t))
				return 0;
		snprintf(errmsg, errlen, "no such cgroup in the v2 tree or the v1 cpu and memory trees");
		return -ENOENT;
	}
	n = unit_from_procs(m, proc_root, arg, hits, 4);
	if (!n)
		n = unit_from_tree(m, arg, hits, 4);
	/* a unit in both the v2 and a v1 tree (hybrid systemd): v2, listed first */
	for (i = 1; i < (size_t)n; i++)
		if (hits[i].tree == hits[0].tree && strcmp(hits[i].path, hits[0].path)) {
			snprintf(errmsg, errlen, "several cgroups are %s (%s, %s%s): give a path",
				 arg, hits[0].path, hits[i].path, n > 2 ? ", ..." : "");
			return -EEXIST;
		}
	for (i = 0; i < (size_t)n; i++)
		if (hits[i].tree == BP_CGT_V2 && !target_at(m, BP_CGT_V2, hits[i].path, t))
			return 0;
	for (i = 0; i < (size_t)n; i++)
		if (!target_at(m, hits[i].tree, hits[i].path, t))
			return 0;
	snprintf(errmsg, errlen, "no running process's cgroup is that unit, and no cgroup has "
		 "that name");
	return -ENOENT;
}
