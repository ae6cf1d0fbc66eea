// SPDX-License-Identifier: GPL-2.0
/*
 * The local socket server (local.h). Every byte a client sends is
 * untrusted: requests are parsed by serve/ipc.c, bounded in size and time,
 * and a bad one costs its own connection only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "export/pprof.h"
#include "model/merge.h"
#include "model/restrict.h"
#include "proc/access.h"
#include "proc/procinfo.h"
#include "serve/ipc.h"
#include "serve/local.h"
#include "serve/prom.h"
#include "util/log.h"

#define MS	1000000ULL

enum conn_state {
	C_REQ,		/* reading the request line */
	C_RUN,		/* a session: slices go in, "stop" may come */
	C_DONE,		/* answered: writing, then closing */
};

struct conn {
	int fd;
	enum conn_state state;
	uint32_t uid, gid, pid;
	char in[BP_IPC_MAX_LINE];
	size_t in_len;
	struct bp_buf out;
	size_t out_off;
	uint64_t deadline_ns;		/* request: by then; writing: progress by then */
	/* the session */
	struct bp_ipc_req req;
	bool stopping;			/* "stop" came: answer at the next slice */
	uint32_t slices;
	uint32_t want_slices;		/* 0: until stop */
	uint32_t *tree;			/* record -- COMMAND: its processes so far */
	uint32_t nr_tree, cap_tree;
	struct bp_profile *p;
	uint64_t bytes;			/* bp_profile__bytes(p), at the last slice */
};

struct bp_local {
	struct bp_local_opts o;
	int agent_hz;
	int lfd, ep;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	/* the socket's directory when the agent made it: removed with the socket */
	char made_dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct conn *conns[BP_LOCAL_MAX_CONNS];
	struct bp_local_stats st;
	struct {
		uint32_t uid;
		uint64_t ns;		/* 0: free */
	} dumps[BP_LOCAL_DUMP_USERS];	/* each user's last dump */
	bp_local_evidence_fn evidence;
	void *evidence_ctx;
	bp_local_dump_fn dump;
	void *dump_ctx;
};

void bp_local__set_evidence(struct bp_local *l, bp_local_evidence_fn fn, void *ctx)
{
	l->evidence = fn;
	l->evidence_ctx = ctx;
}

void bp_local__set_dump(struct bp_local *l, bp_local_dump_fn fn, void *ctx)
{
	l->dump = fn;
	l->dump_ctx = ctx;
}

static const char *const limit_names[] = {
	[BP_LIMIT_SESSIONS] = "sessions",
	[BP_LIMIT_SECONDS] = "seconds",
	[BP_LIMIT_FREQ] = "freq",
	[BP_LIMIT_MEMORY] = "memory",
	[BP_LIMIT_DUMPS] = "dumps",
};

const char *bp_local_limit_name(unsigned int limit)
{
	return limit < BP_LIMIT__MAX ? limit_names[limit] : "?";
}

void bp_local_opts_default(struct bp_local_opts *o)
{
	*o = (struct bp_local_opts){
		.path = BP_IPC_DEFAULT_SOCKET,
		.access = BP_LOCAL_EVERYONE,
		.max_sessions = 4,
		.max_seconds = 3600,
		.max_hz = 99,
		.max_bytes = 64ULL << 20,
	};
}

const struct bp_local_stats *bp_local__stats(const struct bp_local *l)
{
	return &l->st;
}

int bp_local__fd(const struct bp_local *l)
{
	return l->ep;
}

/* ------------------------------------------------------------ sockets */

static int listen_at(struct bp_local *l)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t mode = l->o.access == BP_LOCAL_GROUP ? 0660 : 0666;
	int fd, err;

	if (strlen(l->o.path) >= sizeof(sa.sun_path)) {
		bp_err("socket path too long: %s", l->o.path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, l->o.path);
	/* a socket left by an agent that died is ours to replace; nothing else is */
	if (!lstat(l->o.path, &st)) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			bp_err("%s exists and is not a socket of ours: not touching it", l->o.path);
			return -EEXIST;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			/* another agent answers there: its socket stays its own */
			close(fd);
			return -EADDRINUSE;
		}
		if (fd >= 0)
			close(fd);
		unlink(l->o.path);
	}
	/* its directory (/run/boundprof), searchable by all: the socket's mode decides */
	{
		char dir[sizeof(sa.sun_path)], *slash;

		strcpy(dir, l->o.path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			/*
			 * Made here, it goes when the agent stops (a unit's
			 * RuntimeDirectory= is the service manager's to remove):
			 * an agent run by hand leaves the machine as it was.
			 */
			if (!mkdir(dir, 0755))
				strcpy(l->made_dir, dir);
			else if (errno != EEXIST)
				bp_warn("cannot create %s: %s", dir, strerror(errno));
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* bound with no access for anyone; opened up only once mode and group are right */
	if (fchmod(fd, 0600) && errno != EINVAL)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	if (l->o.access == BP_LOCAL_GROUP && chown(l->o.path, geteuid(), l->o.gid))
		goto fail_bound;
	if (chmod(l->o.path, mode))
		goto fail_bound;
	if (listen(fd, 64))
		goto fail_bound;
	l->lfd = fd;
	strcpy(l->path, l->o.path);
	return 0;

fail_bound:
	err = -errno;
	unlink(l->o.path);
	close(fd);
	bp_err("cannot set up the socket %s: %s", l->o.path, strerror(-err));
	return err;
fail:
	err = -errno;
	if (fd >= 0)
		close(fd);
	bp_err("cannot listen on %s: %s", l->o.path, strerror(-err));
	return err;
}

struct bp_local *bp_local__new(const struct bp_local_opts *o, int agent_hz)
{
	struct bp_local *l = calloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l->o = *o;
	l->agent_hz = agent_hz;
	l->lfd = -1;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->ep < 0) {
		err = -errno;
		goto fail;
	}
	if (o->access == BP_LOCAL_NOBODY || !o->path)
		return l;
	err = listen_at(l);
	if (err)
		goto fail;
	bp_info("agent: users profile their own processes through %s (%s%s)", o->path,
		o->access == BP_LOCAL_GROUP ? "group " : "everyone",
		o->access == BP_LOCAL_GROUP && o->group ? o->group : "");
	ev.data.ptr = NULL;
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, l->lfd, &ev)) {
		err = -errno;
		goto fail;
	}
	return l;
fail:
	bp_local__free(l);
	errno = -err;
	return NULL;
}

static void conn_free(struct bp_local *l, struct conn *c)
{
	uint32_t i;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++)
		if (l->conns[i] == c)
			l->conns[i] = NULL;
	if (c->state == C_RUN && l->st.sessions)
		l->st.sessions--;
	l->st.conns--;
	close(c->fd);
	bp_buf_free(&c->out);
	bp_profile__free(c->p);
	free(c->tree);
	free(c);
}

void bp_local__free(struct bp_local *l)
{
	uint32_t i;

	if (!l)
		return;
	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++)
		if (l->conns[i])
			conn_free(l, l->conns[i]);
	if (l->lfd >= 0) {
		close(l->lfd);
		unlink(l->path);
	}
	/* only if empty: whatever else is there is not ours */
	if (l->made_dir[0])
		rmdir(l->made_dir);
	if (l->ep >= 0)
		close(l->ep);
	free(l);
}

/* ------------------------------------------------------------ answers */

static bool alive(const struct bp_local *l, const struct conn *c)
{
	uint32_t i;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++)
		if (l->conns[i] == c)
			return true;
	return false;
}

static void want_out(struct bp_local *l, struct conn *c, bool out)
{
	/* an answered connection reads nothing more: its EOF would wake the loop for ever */
	struct epoll_event ev = { .events = (c->state == C_DONE ? 0 : EPOLLIN) |
					    (out ? EPOLLOUT : 0),
				  .data.ptr = c };

	epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* write what is queued; false when the connection is gone */
static bool flush(struct bp_local *l, struct conn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			want_out(l, c, true);
			return true;
		}
		if (n <= 0) {
			conn_free(l, c);
			return false;
		}
		c->out_off += n;
		c->deadline_ns = bp_now_ns() + BP_LOCAL_WRITE_TIMEOUT_MS * MS;
	}
	bp_buf_reset(&c->out);
	c->out_off = 0;
	want_out(l, c, false);
	if (c->state == C_DONE) {
		conn_free(l, c);
		return false;
	}
	return true;
}

static bool send_line(struct bp_local *l, struct conn *c, const char *line)
{
	if (c->out.len - c->out_off > BP_LOCAL_MAX_QUEUED) {
		bp_dbg("local: uid %u does not read its answers: closing", c->uid);
		conn_free(l, c);
		return false;
	}
	if (bp_buf_puts(&c->out, line))
		return false;
	c->deadline_ns = bp_now_ns() + BP_LOCAL_WRITE_TIMEOUT_MS * MS;
	return flush(l, c);
}

/* one line, then the connection ends; false when it is gone already */
static bool refuse(struct bp_local *l, struct conn *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool refuse(struct bp_local *l, struct conn *c, int status, const char *fmt, ...)
{
	char text[512], line[BP_IPC_MAX_LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	bp_ipc_format_error(line, sizeof(line), status, text);
	if (c->state == C_RUN && l->st.sessions)
		l->st.sessions--;
	c->state = C_DONE;
	shutdown(c->fd, SHUT_RD);
	return send_line(l, c, line);
}

static void note(struct bp_local *l, struct conn *c, const char *text)
{
	char line[BP_IPC_MAX_LINE];

	snprintf(line, sizeof(line), "note %s\n", text);
	bp_buf_puts(&c->out, line);
}

/* a profile as "KIND LEN\n" and its bytes */
static int put_blob(struct conn *c, const char *kind, const struct bp_profile *p)
{
	struct bp_buf b = BP_BUF_INIT;
	int err = bp_pprof_write(p, &b);

	if (!err)
		err = bp_buf_printf(&c->out, "%s %zu\n", kind, b.len) ?:
		      bp_buf_append(&c->out, b.data, b.len);
	bp_buf_free(&b);
	return err;
}

/* the recording is over: the profile, then the end */
static void answer(struct bp_local *l, struct conn *c)
{
	if (!c->p)
		c->p = bp_profile__new();
	if (c->p && l->evidence)
		l->evidence(l->evidence_ctx, c->p);
	if (!c->p || put_blob(c, "profile", c->p)) {
		bp_buf_reset(&c->out);
		refuse(l, c, 1, "the agent could not encode the profile (out of memory)");
		return;
	}
	l->st.answered++;
	bp_dbg("local: uid %u: %u slices answered, %u processes, %llu bytes held%s", c->uid,
	       c->slices, c->p->nr_procs, (unsigned long long)c->bytes,
	       c->p->system_wide ? ", system-wide" : "");
	if (l->st.sessions)
		l->st.sessions--;
	c->state = C_DONE;
	shutdown(c->fd, SHUT_RD);
	flush(l, c);
}

/* ------------------------------------------------------------ who sees what */

static bool in_tree(const struct conn *c, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < c->nr_tree; i++)
		if (c->tree[i] == pid)
			return true;
	return false;
}

static int tree_add(struct conn *c, uint32_t pid)
{
	if (c->nr_tree == c->cap_tree) {
		uint32_t cap = c->cap_tree ? 2 * c->cap_tree : 16;
		uint32_t *n = realloc(c->tree, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->tree = n;
		c->cap_tree = cap;
	}
	c->tree[c->nr_tree++] = pid;
	return 0;
}

/* the cgroup path of pid as /proc/PID/cgroup shows it (v2's, else the first) */
static int cgroup_of(uint32_t pid, char *out, size_t size)
{
	char path[64], buf[4096], *line, *save = NULL;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	out[0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strchr(line, ':');

		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		if (!out[0] || !strncmp(line, "0::", 3))
			snprintf(out, size, "%s", p + 1);
	}
	return out[0] ? 0 : -ENOENT;
}

static bool under(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (!path)
		return false;
	if (n == 1)
		return path[0] == '/';
	return !strncmp(path, top, n) && (path[n] == '\0' || path[n] == '/');
}

/*
 * -G: a cgroup is the caller's when it holds processes and each of them is
 * one the caller may trace. 0, or -EPERM / -ENOENT.
 */
static int cgroup_is_theirs(const struct conn *c, const char *cg, uint32_t *found)
{
	char path[BP_IPC_MAX_PATH];
	struct dirent *de;
	DIR *d;
	int err = 0;

	*found = 0;
	if (c->uid == 0)
		return 0;
	d = opendir("/proc");
	if (!d)
		return -EIO;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || cgroup_of(pid, path, sizeof(path)) || !under(path, cg))
			continue;
		if (bp_may_trace(NULL, pid, c->uid, c->gid) == -EPERM) {
			err = -EPERM;
			*found = pid;
			break;
		}
		(*found)++;
	}
	closedir(d);
	if (!err && !*found)
		err = -ENOENT;
	return err;
}

struct keep_ctx {
	const struct bp_profile *sl;
	const struct conn *c;
	uint32_t *pids;			/* sorted: what the session may take */
	uint32_t n;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool keep_pid(uint32_t pid, void *ctx)
{
	const struct keep_ctx *k = ctx;

	return k->n && bsearch(&pid, k->pids, k->n, sizeof(pid), cmp_u32);
}

/* may the caller see this process of the slice? ptrace's rule, or its facts once gone */
static bool visible(const struct conn *c, const struct bp_proc *p)
{
	int r;

	if (c->uid == 0)
		return true;
	r = bp_may_trace(NULL, p->pid, c->uid, c->gid);
	if (r == -ESRCH)
		/* gone: what the agent read while it ran (effective uid) must be the caller's */
		return p->have_ids && p->uid == c->uid;
	return r == 0;
}

static bool wanted(struct conn *c, const struct bp_proc *p)
{
	uint32_t i;

	if (c->req.nr_pids) {
		for (i = 0; i < c->req.nr_pids; i++)
			if (c->req.pids[i] == p->pid)
				return true;
		return false;
	}
	if (c->req.tree)
		return in_tree(c, p->pid);
	if (c->req.have_cgroup) {
		char now[BP_IPC_MAX_PATH];

		/* where it is now: a process moved since its facts were read has moved */
		if (!cgroup_of(p->pid, now, sizeof(now)))
			return under(now, c->req.cgroup);
		return under(p->cgroup, c->req.cgroup) || under(p->cg_v2, c->req.cgroup);
	}
	return true;		/* everything of theirs */
}

/* the pids of sl this session may take, sorted into k */
static int choose(struct conn *c, const struct bp_profile *sl, struct keep_ctx *k)
{
	uint32_t i;
	bool grew = true;

	k->pids = malloc((sl->nr_procs + 1) * sizeof(*k->pids));
	if (!k->pids)
		return -ENOMEM;
	/* a COMMAND's tree: children of its processes, in any order within the slice */
	while (c->req.tree && grew) {
		grew = false;
		for (i = 0; i < sl->nr_procs; i++) {
			const struct bp_proc *p = sl->procs[i];

			if (!in_tree(c, p->pid) && p->ppid && in_tree(c, p->ppid)) {
				if (tree_add(c, p->pid))
					return -ENOMEM;
				grew = true;
			}
		}
	}
	for (i = 0; i < sl->nr_procs; i++) {
		const struct bp_proc *p = sl->procs[i];

		if (wanted(c, p) && visible(c, p))
			k->pids[k->n++] = p->pid;
	}
	qsort(k->pids, k->n, sizeof(*k->pids), cmp_u32);
	return 0;
}

/* the slice, cut to what c may see, into out (made like sl) */
static int cut(struct conn *c, const struct bp_profile *sl, struct bp_profile **out)
{
	struct keep_ctx k = { .sl = sl, .c = c };
	int err = choose(c, sl, &k);

	if (!err && !*out) {
		*out = bp_profile__new_like(sl, sl->start_ns);
		if (!*out)
			err = -ENOMEM;
		/* targeted as root's record would be: every process it asked for is reported */
		else
			(*out)->system_wide = !c->req.nr_pids && !c->req.tree && !c->req.have_cgroup;
	}
	if (!err)
		err = bp_profile__merge_only(*out, sl, keep_pid, &k);
	free(k.pids);
	return err;
}

/* ------------------------------------------------------------ requests */

static uint32_t sessions_of(const struct bp_local *l, uint32_t uid)
{
	uint32_t i, n = 0;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++)
		n += l->conns[i] && l->conns[i]->state == C_RUN && l->conns[i]->uid == uid;
	return n;
}

static uint64_t bytes_of(const struct bp_local *l, uint32_t uid)
{
	uint64_t b = 0;
	uint32_t i;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++)
		if (l->conns[i] && l->conns[i]->state == C_RUN && l->conns[i]->uid == uid)
			b += l->conns[i]->bytes;
	return b;
}

/* may uid dump now? Counts the dump when it may */
static bool dump_due(struct bp_local *l, uint32_t uid, uint64_t now)
{
	uint32_t i, oldest = 0;

	for (i = 0; i < BP_LOCAL_DUMP_USERS; i++) {
		if (l->dumps[i].ns && l->dumps[i].uid == uid) {
			if (now - l->dumps[i].ns < BP_LOCAL_DUMP_GAP_MS * MS)
				return false;
			l->dumps[i].ns = now;
			return true;
		}
		if (l->dumps[i].ns < l->dumps[oldest].ns)
			oldest = i;
	}
	l->dumps[oldest].uid = uid;
	l->dumps[oldest].ns = now;
	return true;
}

/* the process pid is, by its start (clock ticks): another process reusing pid is not it */
static uint64_t started(uint32_t pid)
{
	char path[32], text[1024], comm[BP_COMM_LEN];
	uint64_t ticks = 0;
	uint32_t ppid;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	if (bp_procinfo_parse_stat(text, comm, sizeof(comm), &ppid, &ticks))
		return 0;
	return ticks + 1;	/* a process started at boot's tick 0 is still one */
}

/*
 * dump -p PID for a user: of a process they could trace, as for record;
 * taken at once and answered with what `boundprof dump` prints. The
 * process is checked again after the dump: had it exited and its pid gone
 * to another's process, what was read is thrown away.
 */
static void serve_dump(struct bp_local *l, struct conn *c)
{
	const struct bp_ipc_req *r = &c->req;
	struct bp_buf b = BP_BUF_INIT;
	uint32_t pid = r->pids[0];
	uint64_t t0;
	int err;

	if (!l->dump) {
		refuse(l, c, 1, "this agent does not serve dump");
		return;
	}
	if (r->nr_pids != 1 || r->tree || r->have_cgroup || r->seconds || r->hz) {
		refuse(l, c, 2, "dump takes one pid (-p PID) and nothing else");
		return;
	}
	err = bp_may_trace(NULL, pid, c->uid, c->gid);
	t0 = started(pid);
	if (err == -ESRCH || (!err && !t0)) {
		refuse(l, c, 2, "no process with pid %u", pid);
		return;
	}
	if (err) {
		l->st.denied++;
		refuse(l, c, 2, "pid %u is not yours to dump: through the agent you may dump only"
		       " processes you could trace (your own, not setuid)", pid);
		return;
	}
	if (c->uid && !dump_due(l, c->uid, bp_now_ns())) {
		l->st.limit_hits[BP_LIMIT_DUMPS]++;
		refuse(l, c, 1, "one dump a second through the agent: try again in a second");
		return;
	}
	err = l->dump(l->dump_ctx, pid, r->json, &b);
	if (!err && (started(pid) != t0 || bp_may_trace(NULL, pid, c->uid, c->gid)))
		err = -ESRCH;
	if (!err)
		err = bp_buf_printf(&c->out, "dump %zu\n", b.len) ?:
		      bp_buf_append(&c->out, b.data, b.len);
	bp_buf_free(&b);
	if (err) {
		bp_buf_reset(&c->out);
		if (err == -ESRCH)
			refuse(l, c, 1, "pid %u exited during the dump", pid);
		else
			refuse(l, c, 1, "the agent could not dump pid %u: %s", pid, strerror(-err));
		return;
	}
	l->st.answered++;
	bp_dbg("local: uid %u pid %u: dump of pid %u", c->uid, c->pid, pid);
	c->state = C_DONE;
	shutdown(c->fd, SHUT_RD);
	flush(l, c);
}

static void start(struct bp_local *l, struct conn *c)
{
	struct bp_ipc_req *r = &c->req;
	uint32_t i, found, max_hz;
	char line[128];
	int err;

	if (r->verb == BP_IPC_DUMP) {
		serve_dump(l, c);
		return;
	}
	if (r->verb == BP_IPC_STOP) {
		refuse(l, c, 2, "stop without a recording");
		return;
	}
	if (r->verb == BP_IPC_TOP && (r->nr_pids || r->tree || r->seconds)) {
		refuse(l, c, 2, "top takes only cgroup=");
		return;
	}
	max_hz = l->o.max_hz < (uint32_t)l->agent_hz ? l->o.max_hz : (uint32_t)l->agent_hz;
	if (c->uid == 0)
		max_hz = l->agent_hz;
	if (r->hz > max_hz) {
		l->st.limit_hits[BP_LIMIT_FREQ]++;
		refuse(l, c, 2, "-F %u is above what the agent allows you (%u Hz): ask for -F %u"
		       " or less", r->hz, max_hz, max_hz);
		return;
	}
	for (i = 0; i < r->nr_pids; i++) {
		err = bp_may_trace(NULL, r->pids[i], c->uid, c->gid);
		if (err == -ESRCH) {
			refuse(l, c, 2, "no process with pid %u", r->pids[i]);
			return;
		}
		if (err) {
			l->st.denied++;
			refuse(l, c, 2, "pid %u is not yours to profile: through the agent you may"
			       " profile only processes you could trace (your own, not setuid)",
			       r->pids[i]);
			return;
		}
	}
	if (r->tree) {
		err = bp_may_trace(NULL, r->tree, c->uid, c->gid);
		if (err) {
			l->st.denied += err == -EPERM;
			refuse(l, c, 2, err == -ESRCH ? "no process with pid %u" :
			       "pid %u is not yours to profile", r->tree);
			return;
		}
		if (tree_add(c, r->tree)) {
			refuse(l, c, 1, "the agent is out of memory");
			return;
		}
	}
	if (r->have_cgroup) {
		err = cgroup_is_theirs(c, r->cgroup, &found);
		if (err == -EPERM) {
			l->st.denied++;
			refuse(l, c, 2, "cgroup %s is not yours to profile: it holds processes you"
			       " may not trace", r->cgroup);
			return;
		}
		if (err) {
			refuse(l, c, 2, "cgroup %s holds no process of yours", r->cgroup);
			return;
		}
	}
	if (c->uid && sessions_of(l, c->uid) >= l->o.max_sessions) {
		l->st.limit_hits[BP_LIMIT_SESSIONS]++;
		refuse(l, c, 1, "you have %u recordings through the agent already, the most it"
		       " allows one user at once", l->o.max_sessions);
		return;
	}
	c->want_slices = r->seconds;
	c->state = C_RUN;
	l->st.sessions++;
	snprintf(line, sizeof(line), "ok %s hz=%d\n", bp_ipc_verb_name(r->verb), l->agent_hz);
	bp_dbg("local: uid %u pid %u: %s", c->uid, c->pid, bp_ipc_verb_name(r->verb));
	send_line(l, c, line);
}

static void got_line(struct bp_local *l, struct conn *c, const char *line, size_t len)
{
	struct bp_ipc_req r;
	char why[256];

	if (bp_ipc_parse_request(line, len, &r, why, sizeof(why))) {
		l->st.bad++;
		refuse(l, c, 2, "bad request: %s", why);
		return;
	}
	if (c->state == C_RUN) {
		if (r.verb != BP_IPC_STOP || c->req.verb != BP_IPC_RECORD) {
			l->st.bad++;
			refuse(l, c, 2, "bad request: only \"stop\" may follow a record");
			return;
		}
		c->stopping = true;
		return;
	}
	l->st.requests++;
	c->req = r;
	start(l, c);
}

/* read what came; false when the connection is gone */
static bool on_read(struct bp_local *l, struct conn *c)
{
	for (;;) {
		ssize_t n;
		long ll;

		if (c->state == C_DONE)
			return true;
		n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0) {
			/* a client that leaves before its answer wants none */
			if (c->state == C_REQ && c->in_len)
				l->st.bad++;
			conn_free(l, c);
			return false;
		}
		c->in_len += n;
		while (c->state != C_DONE && (ll = bp_ipc_line(c->in, c->in_len)) != 0) {
			if (ll < 0) {
				l->st.bad++;
				return refuse(l, c, 2, "bad request: longer than %d bytes",
					      BP_IPC_MAX_LINE - 1);
			}
			got_line(l, c, c->in, ll);
			/* got_line may have closed c */
			if (!alive(l, c))
				return false;
			memmove(c->in, c->in + ll, c->in_len - ll);
			c->in_len -= ll;
		}
	}
}

static uint32_t conns_of(const struct bp_local *l, uint32_t uid)
{
	uint32_t i, n = 0;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++)
		n += l->conns[i] && l->conns[i]->uid == uid;
	return n;
}

static bool in_group(int fd, uint32_t gid, uint32_t pgid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);
	size_t i;

	if (pgid == gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

static void on_accept(struct bp_local *l)
{
	for (;;) {
		struct epoll_event ev = { .events = EPOLLIN };
		struct ucred cr;
		socklen_t len = sizeof(cr);
		struct conn *c;
		uint32_t i;
		int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		for (i = 0; i < BP_LOCAL_MAX_CONNS && l->conns[i]; i++)
			;
		/* the kernel says who it is; the request never does */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || i == BP_LOCAL_MAX_CONNS) {
			static const char busy[] = "error 1 the agent is busy: try again\n";

			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				bp_dbg("local: busy, and the client is gone");
			close(fd);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = cr.uid;
		c->gid = cr.gid;
		c->pid = cr.pid;
		bp_buf_init(&c->out);
		c->deadline_ns = bp_now_ns() + BP_LOCAL_REQ_TIMEOUT_MS * MS;
		l->conns[i] = c;
		l->st.conns++;
		ev.data.ptr = c;
		if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev)) {
			conn_free(l, c);
			continue;
		}
		if (cr.uid != 0 && conns_of(l, cr.uid) > BP_LOCAL_MAX_PER_USER) {
			l->st.limit_hits[BP_LIMIT_SESSIONS]++;
			refuse(l, c, 1, "you have %d connections to the agent open already, the most it"
			       " allows one user", BP_LOCAL_MAX_PER_USER);
			continue;
		}
		/* the socket's mode already says this; checked again all the same */
		if (cr.uid != 0 && (l->o.access == BP_LOCAL_NOBODY ||
				    (l->o.access == BP_LOCAL_GROUP &&
				     !in_group(fd, l->o.gid, cr.gid)))) {
			l->st.denied++;
			if (l->o.access == BP_LOCAL_GROUP)
				refuse(l, c, 1, "the agent serves members of group %s only: ask an"
				       " administrator to add you to it", l->o.group);
			else
				refuse(l, c, 1, "the agent serves no user but root");
		}
	}
}

static void timeouts(struct bp_local *l)
{
	uint64_t now = bp_now_ns();
	uint32_t i;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++) {
		struct conn *c = l->conns[i];

		if (!c)
			continue;
		if (c->state == C_REQ && now > c->deadline_ns) {
			l->st.bad++;
			refuse(l, c, 2, "bad request: none came within %d s",
			       BP_LOCAL_REQ_TIMEOUT_MS / 1000);
		} else if (c->out_off < c->out.len && now > c->deadline_ns) {
			bp_dbg("local: uid %u stopped reading its answer: closing", c->uid);
			conn_free(l, c);
		}
	}
}

int bp_local__process(struct bp_local *l)
{
	struct epoll_event evs[16];
	int i, n;

	n = epoll_wait(l->ep, evs, 16, 0);
	if (n < 0 && errno != EINTR)
		return -errno;
	for (i = 0; i < n; i++) {
		struct conn *c = evs[i].data.ptr;

		if (!c) {
			on_accept(l);
			continue;
		}
		/* an earlier event of this round may have closed it */
		if (!alive(l, c))
			continue;
		/* the client left before its answer was out: nothing to finish */
		if (c->state == C_DONE && (evs[i].events & (EPOLLHUP | EPOLLERR))) {
			conn_free(l, c);
			continue;
		}
		if ((evs[i].events & EPOLLOUT) && !flush(l, c))
			continue;
		if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			on_read(l, c);
	}
	timeouts(l);
	return 0;
}

/* ------------------------------------------------------------ slices */

static void session_slice(struct bp_local *l, struct conn *c, const struct bp_profile *sl)
{
	struct bp_profile *one = NULL;
	char text[256];

	if (c->req.verb == BP_IPC_TOP) {
		if (cut(c, sl, &one) || put_blob(c, "slice", one)) {
			bp_profile__free(one);
			refuse(l, c, 1, "the agent is out of memory");
			return;
		}
		c->bytes = bp_profile__bytes(one);
		bp_profile__free(one);
		if (c->uid && c->bytes > l->o.max_bytes) {
			l->st.limit_hits[BP_LIMIT_MEMORY]++;
			bp_buf_reset(&c->out);
			refuse(l, c, 1, "your processes' profile is larger than the %llu bytes the"
			       " agent gives one user", (unsigned long long)l->o.max_bytes);
			return;
		}
		c->deadline_ns = bp_now_ns() + BP_LOCAL_WRITE_TIMEOUT_MS * MS;
		flush(l, c);
		return;
	}
	if (cut(c, sl, &c->p)) {
		refuse(l, c, 1, "the agent is out of memory");
		return;
	}
	c->slices++;
	c->bytes = bp_profile__bytes(c->p);
	if (c->uid && bytes_of(l, c->uid) > l->o.max_bytes) {
		l->st.limit_hits[BP_LIMIT_MEMORY]++;
		snprintf(text, sizeof(text), "the recording ended early: your recordings hold more"
			 " than the %llu bytes the agent gives one user",
			 (unsigned long long)l->o.max_bytes);
		note(l, c, text);
		answer(l, c);
		return;
	}
	if (c->uid && c->slices >= l->o.max_seconds) {
		l->st.limit_hits[BP_LIMIT_SECONDS]++;
		snprintf(text, sizeof(text), "the recording ended after %u s, the longest the agent"
			 " allows", l->o.max_seconds);
		note(l, c, text);
		answer(l, c);
		return;
	}
	if (c->stopping || (c->want_slices && c->slices >= c->want_slices))
		answer(l, c);
}

int bp_local__slice(struct bp_local *l, const struct bp_profile *sl)
{
	uint32_t i;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++) {
		struct conn *c = l->conns[i];

		if (c && c->state == C_RUN)
			session_slice(l, c, sl);
	}
	return 0;
}

void bp_local__finish(struct bp_local *l)
{
	uint32_t i, k;

	for (i = 0; i < BP_LOCAL_MAX_CONNS; i++) {
		struct conn *c = l->conns[i];

		if (c && c->state == C_RUN && c->req.verb == BP_IPC_RECORD) {
			note(l, c, "the agent is stopping: the recording ends here");
			answer(l, c);
		}
	}
	/* the answers get a moment to leave; then whatever is left is closed */
	for (k = 0; k < 20; k++) {
		bool left = false;

		for (i = 0; i < BP_LOCAL_MAX_CONNS; i++)
			left = left || (l->conns[i] && l->conns[i]->out.len);
		if (!left)
			break;
		usleep(50000);
		bp_local__process(l);
	}
}

/* ------------------------------------------------------------ metrics */

int bp_local_metrics(struct bp_buf *b, const struct bp_local_stats *st)
{
	struct bp_prom m;
	unsigned int i;

	bp_prom_init(&m, b);
	bp_prom_family(&m, "boundprof_agent_local_requests_total", BP_PROM_COUNTER,
		       "Requests over the local socket, by result");
	bp_prom_sample_u64(&m, (struct bp_prom_label[]){ { "result", "received" } }, 1,
			   st->requests);
	bp_prom_sample_u64(&m, (struct bp_prom_label[]){ { "result", "bad" } }, 1, st->bad);
	bp_prom_sample_u64(&m, (struct bp_prom_label[]){ { "result", "denied" } }, 1, st->denied);
	bp_prom_sample_u64(&m, (struct bp_prom_label[]){ { "result", "answered" } }, 1,
			   st->answered);
	bp_prom_family(&m, "boundprof_agent_local_limit_hits_total", BP_PROM_COUNTER,
		       "Per-user limits hit over the local socket, by limit");
	for (i = 0; i < BP_LIMIT__MAX; i++)
		bp_prom_sample_u64(&m, (struct bp_prom_label[]){ { "limit", limit_names[i] } }, 1,
				   st->limit_hits[i]);
	bp_prom_family(&m, "boundprof_agent_local_sessions", BP_PROM_GAUGE,
		       "Recordings running for users over the local socket");
	bp_prom_sample_u64(&m, NULL, 0, st->sessions);
	bp_prom_family(&m, "boundprof_agent_local_connections", BP_PROM_GAUGE,
		       "Open connections on the local socket");
	bp_prom_sample_u64(&m, NULL, 0, st->conns);
	return bp_prom_finish(&m);
}
