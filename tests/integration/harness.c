// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

#define MAX_BG 32

static void append(char **buf, size_t *len, const char *data, size_t n);

static pid_t bg[MAX_BG];
static int nr_bg;
static char tmpdir[256];

double h_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void h_sleep(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* whether nobody can run path (every directory above it searchable) */
static bool nobody_can_run(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(access(path, X_OK) ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static char public_dir[64];
static pid_t public_owner;

static int rm_public(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void public_remove(void)
{
	/* not from a forked child that exits */
	if (public_dir[0] && getpid() == public_owner)
		nftw(public_dir, rm_public, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Tests run boundprof and fixtures as nobody. A checkout nobody can reach
 * (a clone in a mktemp -d directory, mode 0700) would fail them all for a
 * reason of its own: then the binary and the fixtures are copied once into
 * a directory everyone can search, removed at exit.
 */
static void public_copies(void)
{
	const char *bin = getenv("BP_BIN"), *fix = getenv("BP_FIXTURES");
	char cmd[2048], path[600];

	if (!bin || !fix || geteuid() != 0 || nobody_can_run(bin))
		return;
	strcpy(public_dir, "/tmp/bp-public-XXXXXX");
	if (!mkdtemp(public_dir) || chmod(public_dir, 0755)) {
		public_dir[0] = '\0';
		return;
	}
	public_owner = getpid();
	atexit(public_remove);
	snprintf(cmd, sizeof(cmd), "cp -p '%s' '%s/boundprof' && cp -rp '%s' '%s/fixtures'", bin,
		 public_dir, fix, public_dir);
	if (system(cmd))
		return;
	fprintf(stderr, "harness: %s is out of nobody's reach: running copies in %s\n", bin,
		public_dir);
	snprintf(path, sizeof(path), "%s/boundprof", public_dir);
	setenv("BP_BIN", path, 1);
	snprintf(path, sizeof(path), "%s/fixtures", public_dir);
	setenv("BP_FIXTURES", path, 1);
}

/* before any test, in the test process itself (its children may be nobody) */
__attribute__((constructor)) static void harness_init(void)
{
	public_copies();
}

const char *h_bin(void)
{
	const char *b = getenv("BP_BIN");

	return b ? b : "./boundprof";
}

const char *h_fixture(const char *name)
{
	static char buf[4][512];
	static int i;
	const char *d = getenv("BP_FIXTURES");

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", d ? d : ".output/tests/fixtures", name);
	return buf[i];
}

const char *h_tmpdir(void)
{
	if (!tmpdir[0]) {
		strcpy(tmpdir, "/tmp/bp-integ-XXXXXX");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			abort();
		}
	}
	return tmpdir;
}

const char *h_path(const char *name)
{
	static char buf[8][512];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", h_tmpdir(), name);
	return buf[i];
}

static void track(pid_t pid)
{
	if (nr_bg < MAX_BG)
		bg[nr_bg++] = pid;
}

static void untrack(pid_t pid)
{
	int i;

	for (i = 0; i < nr_bg; i++)
		if (bg[i] == pid)
			bg[i] = bg[--nr_bg];
}

/* --- what a failing case prints of boundprof (bp_test_failure_facts) ------ */

static struct {
	pid_t pid;		/* the last boundprof started */
	char cmd[768];
	char *err;		/* its stderr, when it ended */
	char json[512];		/* the last report read */
	char *json_text;
} last;

static void remember_cmd(char *const argv[], pid_t pid)
{
	size_t n = 0;
	int i;

	if (strcmp(argv[0], h_bin()))
		return;
	last.pid = pid;
	free(last.err);
	last.err = NULL;
	for (i = 0; argv[i] && n + 1 < sizeof(last.cmd); i++)
		n += (size_t)snprintf(last.cmd + n, sizeof(last.cmd) - n, "%s%s", i ? " " : "",
				      argv[i]);
}

static void remember_err(pid_t pid, const char *err)
{
	if (pid != last.pid || !err)
		return;
	free(last.err);
	last.err = strdup(err);
}

static void remember_json(const char *path, const char *text, size_t len)
{
	snprintf(last.json, sizeof(last.json), "%s", path);
	free(last.json_text);
	last.json_text = strndup(text, len);
}

/* the losses a report counted: every non-zero drops_detail entry */
static void print_losses(const struct bp_json *rep)
{
	const struct bp_json *d = bp_json_get(rep, "drops_detail");
	size_t i, shown = 0;

	fprintf(stderr, "  its losses: drops.samples %.0f, drops.stacks %.0f;",
		bp_json_num(bp_json_path(rep, "drops.samples")),
		bp_json_num(bp_json_path(rep, "drops.stacks")));
	for (i = 0; i < bp_json_len(d); i++) {
		double v = bp_json_num(bp_json_at(d, i));

		if (v != 0) {
			fprintf(stderr, " %s %.0f", bp_json_key_at(d, i), v);
			shown++;
		}
	}
	fprintf(stderr, "%s\n", shown ? "" : " nothing in drops_detail");
}

/* the cmocka runner's hook (tests/filter.c), when a case fails */
void bp_test_failure_facts(void);
void bp_test_failure_facts(void)
{
	char err[128];

	if (last.cmd[0]) {
		const char *e = last.err, *tail;
		int lines = 0;

		fprintf(stderr, "  last boundprof run: %s\n", last.cmd);
		if (e && *e) {
			/* its last 12 lines */
			for (tail = e + strlen(e); tail > e; tail--)
				if (tail[-1] == '\n' && tail[0] && ++lines > 12)
					break;
			fprintf(stderr, "  its stderr%s:\n%s%s", tail > e ? " (last lines)" : "",
				tail, tail[strlen(tail) - 1] == '\n' ? "" : "\n");
		} else {
			fprintf(stderr, "  its stderr: %s\n", e ? "empty" : "not read (still running?)");
		}
	}
	if (last.json_text) {
		struct bp_json *rep = bp_json_parse(last.json_text, strlen(last.json_text), err,
						    sizeof(err));

		fprintf(stderr, "  last report read: %s (%.0f samples, %.2f s)\n", last.json,
			bp_json_num(bp_json_path(rep, "system.samples")),
			bp_json_num(bp_json_get(rep, "duration_s")));
		if (rep)
			print_losses(rep);
		bp_json_free(rep);
	}
}

static pid_t spawn_fds(char *const argv[], int *out_fd, int *err_fd)
{
	int o[2] = { -1, -1 }, e[2] = { -1, -1 };
	pid_t pid;

	if ((out_fd && pipe2(o, O_CLOEXEC)) || (err_fd && pipe2(e, O_CLOEXEC)))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		/* own process group: a test's signals reach only what it means */
		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(out_fd ? o[1] : devnull, 1);
		dup2(err_fd ? e[1] : devnull, 2);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (out_fd) {
		close(o[1]);
		*out_fd = o[0];
	}
	if (err_fd) {
		close(e[1]);
		*err_fd = e[0];
	}
	track(pid);
	remember_cmd(argv, pid);
	return pid;
}

pid_t h_spawn(char *const argv[], int *out_fd)
{
	return spawn_fds(argv, out_fd, NULL);
}

pid_t h_spawn2(char *const argv[], int *out_fd, int *err_fd)
{
	return spawn_fds(argv, out_fd, err_fd);
}

bool h_have(const char *cmd)
{
	const char *path = getenv("PATH"), *s, *e;
	char exe[4200];

	for (s = path ? path : "/usr/bin:/bin"; *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, ':');
		snprintf(exe, sizeof(exe), "%.*s/%s", (int)(e - s), e > s ? s : ".", cmd);
		if (!access(exe, X_OK))
			return true;
	}
	return false;
}

/*
 * Rows of `go tool pprof -top`, after its header line:
 *       flat  flat%   sum%        cum   cum%
 *    1.50s 74.26% 74.26%      1.50s 74.26%  alpha
 * Everything before the header (file, comments, totals) is skipped.
 */
int h_pprof_top(const char *out, struct h_top_row *rows, int max)
{
	const char *line = strstr(out, "flat%");
	int n = 0;

	if (!line)
		return 0;
	line = strchr(line, '\n');
	while (line && *++line && n < max) {
		char flat[32], fpct[32], spct[32], cum[32], cpct[32];
		int used = 0;

		if (sscanf(line, "%31s %31s %31s %31s %31s %n", flat, fpct, spct, cum, cpct,
			   &used) == 5 && used) {
			const char *name = line + used, *end = strchr(name, '\n');

			if (!end)
				end = name + strlen(name);
			snprintf(rows[n].name, sizeof(rows[n].name), "%.*s", (int)(end - name), name);
			rows[n].flat_pct = atof(fpct);
			n++;
		}
		line = strchr(line, '\n');
	}
	return n;
}

int h_http(int port, const char *request, size_t req_len, double timeout_s, int *status,
	   char **body, size_t *body_len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	double deadline = h_now() + timeout_s;
	char *resp = NULL, chunk[65536], *hdr_end;
	size_t len = 0, sent = 0;
	int fd, err = 0;

	*status = -1;
	if (body)
		*body = NULL;
	if (body_len)
		*body_len = 0;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	while (sent < req_len) {
		ssize_t n = send(fd, request + sent, req_len - sent, MSG_NOSIGNAL);

		if (n < 0) {
			/* the server may answer (414, 400) before reading it all */
			break;
		}
		sent += n;
	}
	append(&resp, &len, "", 0);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)((deadline - h_now()) * 1000);
		ssize_t n;

		if (left <= 0) {
			err = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, left) <= 0)
			continue;
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* closed (or reset after the answer) */
		append(&resp, &len, chunk, n);
	}
	close(fd);
	if (sscanf(resp, "HTTP/1.%*d %d", status) != 1)
		*status = -1;
	hdr_end = strstr(resp, "\r\n\r\n");
	if (hdr_end && body) {
		size_t off = hdr_end + 4 - resp;

		*body = malloc(len - off + 1);
		memcpy(*body, resp + off, len - off);
		(*body)[len - off] = '\0';
		if (body_len)
			*body_len = len - off;
	}
	free(resp);
	return err;
}

int h_http_get(int port, const char *path, double timeout_s, int *status, char **body,
	       size_t *body_len)
{
	char *req;
	int n, err;

	n = asprintf(&req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
		     path);
	if (n < 0)
		return -ENOMEM;
	err = h_http(port, req, n, timeout_s, status, body, body_len);
	free(req);
	return err;
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
	*buf = realloc(*buf, *len + n + 1);
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

int h_wait(pid_t pid, int out_fd, int err_fd, double timeout_s, struct run *r)
{
	double deadline = h_now() + timeout_s;
	struct pollfd pfd[2];
	char chunk[4096];
	bool killed = false;
	int status;

	memset(r, 0, sizeof(*r));
	append(&r->out, &r->out_len, "", 0);
	append(&r->err, &r->err_len, "", 0);
	for (;;) {
		int n = 0, i, left = (int)((deadline - h_now()) * 1000);

		if (out_fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = out_fd, .events = POLLIN };
		if (err_fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = err_fd, .events = POLLIN };
		if (!n)
			break;
		if (left <= 0 && !killed) {
			fprintf(stderr, "harness: pid %d timed out after %.0f s, killing\n", pid,
				timeout_s);
			kill(pid, SIGKILL);
			killed = true;
			left = 5000;
		}
		if (poll(pfd, n, left > 0 ? left : 0) < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			ssize_t got;

			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(pfd[i].fd, chunk, sizeof(chunk));
			if (got > 0) {
				if (pfd[i].fd == out_fd)
					append(&r->out, &r->out_len, chunk, got);
				else
					append(&r->err, &r->err_len, chunk, got);
			} else {
				close(pfd[i].fd);
				if (pfd[i].fd == out_fd)
					out_fd = -1;
				else
					err_fd = -1;
			}
		}
		if (killed && left <= 0)
			break;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			untrack(pid);
			return -errno;
		}
	}
	untrack(pid);
	remember_err(pid, r->err);
	r->status = status;
	r->signaled = WIFSIGNALED(status);
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return killed ? -ETIMEDOUT : 0;
}

int h_run(char *const argv[], double timeout_s, struct run *r)
{
	int out_fd, err_fd;
	pid_t pid = spawn_fds(argv, &out_fd, &err_fd);

	if (pid < 0)
		return -errno;
	return h_wait(pid, out_fd, err_fd, timeout_s, r);
}

void h_run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

int h_read_line(int fd, char *buf, size_t len, double timeout_s)
{
	double deadline = h_now() + timeout_s;
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)((deadline - h_now()) * 1000);

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return -ETIMEDOUT;
		if (read(fd, buf + n, 1) != 1)
			return -EIO;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

void h_adopt(pid_t pid)
{
	track(pid);
}

void h_cleanup(void)
{
	int i;

	for (i = 0; i < nr_bg; i++) {
		kill(-bg[i], SIGKILL);
		kill(bg[i], SIGKILL);
		waitpid(bg[i], NULL, 0);
	}
	nr_bg = 0;
	if (tmpdir[0]) {
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		tmpdir[0] = '\0';
	}
}

char *h_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0;
	char chunk[65536];
	size_t got;

	if (!f)
		return NULL;
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		append(&buf, &n, chunk, got);
	fclose(f);
	if (!buf)
		append(&buf, &n, "", 0);
	if (len)
		*len = n;
	return buf;
}

struct bp_json *h_json_file(const char *path)
{
	char err[256];
	size_t len;
	char *text = h_slurp(path, &len);
	struct bp_json *j;

	if (!text) {
		fprintf(stderr, "harness: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	j = bp_json_parse(text, len, err, sizeof(err));
	if (!j)
		fprintf(stderr, "harness: %s: invalid JSON: %s\n", path, err);
	else
		remember_json(path, text, len);
	free(text);
	return j;
}

struct bp_json *h_record_json(const char *name, char *const cmd[])
{
	return h_record_json_opts(name, NULL, cmd);
}

struct bp_json *h_record_json_opts(const char *name, char *const opts[], char *const cmd[])
{
	char *argv[40] = { (char *)h_bin(), "record", NULL };
	struct run r;
	int i, n = 2;

	for (i = 0; opts && opts[i] && n < 30; i++)
		argv[n++] = opts[i];
	argv[n++] = "-o";
	argv[n++] = (char *)h_path(name);
	argv[n++] = "--";
	for (i = 0; cmd[i] && n < 39; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	if (h_run(argv, 120, &r)) {
		fprintf(stderr, "harness: cannot run %s\n", h_bin());
		return NULL;
	}
	if (r.exit_code) {
		fprintf(stderr, "--- exit %d\n%s\n%s\n", r.exit_code, r.out, r.err);
		h_run_free(&r);
		return NULL;
	}
	h_run_free(&r);
	return h_json_file(h_path(name));
}

const struct bp_json *h_find_proc(const struct bp_json *report, const char *comm)
{
	const struct bp_json *procs = bp_json_get(report, "processes");
	size_t i;

	for (i = 0; i < bp_json_len(procs); i++) {
		const struct bp_json *p = bp_json_at(procs, i);
		const char *c = bp_json_str(bp_json_get(p, "comm"));

		if (c && !strcmp(c, comm))
			return p;
	}
	return NULL;
}

bool h_evidence_has(const struct bp_json *proc, const char *needle)
{
	const struct bp_json *ev = bp_json_path(proc, "verdict.evidence");
	size_t i;

	for (i = 0; i < bp_json_len(ev); i++)
		if (strstr(bp_json_str(bp_json_at(ev, i)), needle))
			return true;
	return false;
}

void h_show_verdict(const char *what, const struct bp_json *proc)
{
	const struct bp_json *v = bp_json_get(proc, "verdict");
	const struct bp_json *ev = bp_json_get(v, "evidence"), *lv = bp_json_get(v, "levers");
	size_t i;

	fprintf(stderr, "%s: pid %.0f %s -> %s (%s)\n", what,
		bp_json_num(bp_json_get(proc, "pid")), bp_json_str(bp_json_get(proc, "comm")),
		bp_json_str(bp_json_get(v, "class")), bp_json_str(bp_json_get(v, "confidence")));
	for (i = 0; i < bp_json_len(ev); i++)
		fprintf(stderr, "    %s\n", bp_json_str(bp_json_at(ev, i)));
	for (i = 0; i < bp_json_len(lv); i++)
		fprintf(stderr, "    => %s\n", bp_json_str(bp_json_at(lv, i)));
	fprintf(stderr, "    (boundprof's shares of %.3f s busy: cpu %.3f, memory %.3f, IO %.3f, "
		"locks %.3f, run queue %.3f, other %.3f)\n",
		bp_json_num(bp_json_get(v, "busy_s")), bp_json_num(bp_json_path(v, "shares.cpu")),
		bp_json_num(bp_json_path(v, "shares.memory")),
		bp_json_num(bp_json_path(v, "shares.io")),
		bp_json_num(bp_json_path(v, "shares.lock")),
		bp_json_num(bp_json_path(v, "shares.runqueue")),
		bp_json_num(bp_json_path(v, "shares.other")));
	/* what a wrong verdict is made of: counted against sampled on-CPU time */
	fprintf(stderr, "    (boundprof's counts: %.3f s wall, %.3f s on-CPU counted, %.3f s "
		"sampled in %.0f samples, %.3f s run queue, %.0f thread%s)\n",
		bp_json_num(bp_json_get(proc, "wall_s")), bp_json_num(bp_json_get(proc, "on_cpu_s")),
		bp_json_num(bp_json_get(proc, "on_cpu_sampled_s")),
		bp_json_num(bp_json_get(proc, "samples")),
		bp_json_num(bp_json_path(proc, "off_cpu_s.runqueue")),
		bp_json_num(bp_json_get(proc, "threads")),
		bp_json_num(bp_json_get(proc, "threads")) == 1 ? "" : "s");
}

double h_hotspot_self(const struct bp_json *proc, const char *function)
{
	const struct bp_json *hs = bp_json_get(proc, "hotspots");
	size_t i;

	for (i = 0; i < bp_json_len(hs); i++) {
		const struct bp_json *h = bp_json_at(hs, i);
		const char *f = bp_json_str(bp_json_get(h, "function"));

		if (f && !strcmp(f, function))
			return bp_json_num(bp_json_get(h, "self"));
	}
	return -1;
}

int h_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

bool h_need_root(void)
{
	if (geteuid() == 0)
		return true;
	fprintf(stderr,
		"\n"
		"********************************************************************\n"
		"* SKIPPED: integration tests load real BPF programs and need root. *\n"
		"* Run: sudo make test                                              *\n"
		"********************************************************************\n\n");
	return false;
}

static double realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* how many of pid's open files are perf events; -1 once it is gone */
static int perf_event_fds(pid_t pid)
{
	char dir[64], path[600], link[128];
	struct dirent *de;
	ssize_t n;
	int count = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		count += !strcmp(link, "anon_inode:[perf_event]");
	}
	closedir(d);
	return count;
}

int h_wait_recording(pid_t pid, double timeout_s)
{
	double deadline = h_now() + timeout_s;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n;

	do {
		n = perf_event_fds(pid);
		if (n < 0)
			break;
		if (n >= cpus)
			return 0;
		h_sleep(0.01);
	} while (h_now() < deadline);
	fprintf(stderr, "harness: pid %d never sampled the %ld CPUs (%d perf events)\n", pid,
		cpus, n);
	return -ETIMEDOUT;
}

bool h_have_schedstat(void)
{
	if (!access("/proc/self/schedstat", R_OK))
		return true;
	fprintf(stderr,
		"\n"
		"********************************************************************\n"
		"* SKIPPED: this kernel keeps no schedstat (CONFIG_SCHED_INFO): the  *\n"
		"* test has no count of its own to check boundprof against.         *\n"
		"********************************************************************\n\n");
	return false;
}

void h_sched_arm(void)
{
	const char *path = h_path("fixture-sched.txt");

	unlink(path);
	setenv("BP_FIXTURE_SCHED", path, 1);
}

int h_sched_read(const char *comm, struct h_sched *out, int max)
{
	char *text = h_slurp(h_path("fixture-sched.txt"), NULL), *line, *save = NULL;
	int n = 0;

	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		struct h_sched k = {};

		if (sscanf(line, "sched pid=%d comm=%31s threads=%d wall=%lf on=%lf rq=%lf "
				 "runs=%lf pre_on=%lf pre_rq=%lf steal=%lf", &k.pid, k.comm, &k.threads,
			   &k.wall, &k.on, &k.rq, &k.runs, &k.pre_on, &k.pre_rq, &k.steal) != 10) {
			fprintf(stderr, "harness: bad fixture line: %s\n", line);
			continue;
		}
		if (comm && strcmp(k.comm, comm))
			continue;
		fprintf(stderr, "  kernel: %s pid %d, %d thread%s: %.3f s wall, %.3f s on-CPU, "
			"%.3f s runnable, %.3f s blocked, %.0f runs (before: %.3f s on-CPU, %.3f s "
			"runnable), machine steal %.2f s\n", k.comm, k.pid, k.threads,
			k.threads == 1 ? "" : "s", k.wall, k.on, k.rq, k.wall - k.on - k.rq, k.runs,
			k.pre_on, k.pre_rq, k.steal);
		out[n++] = k;
	}
	free(text);
	return n;
}

struct h_busy h_busy_of(const struct h_sched *k, const char *blocked)
{
	struct h_busy b = { .on = k->on + k->pre_on, .rq = k->rq + k->pre_rq,
			    .rq_extra = k->runs * H_WAKEUP_S };
	double wait = k->wall - k->on - k->rq;

	if (wait < 0)
		wait = 0;
	if (blocked && !strcmp(blocked, "io")) {
		b.io = wait;
		/* the kernel cannot say how much of the CPU time was spent submitting it */
		b.io_cpu_hi = 1;
	} else if (blocked && !strcmp(blocked, "lock")) {
		b.lock = wait;
	}
	return b;
}

/* docs/classification.md, "The decision" and its thresholds table */
#define DOC_IO		0.5
#define DOC_LOCK	0.3
#define DOC_RUNQUEUE	0.2
#define DOC_COMPUTE	0.6

static void allow(const char **classes, int *n, int max, const char *c)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(classes[i], c))
			return;
	if (*n < max)
		classes[(*n)++] = c;
}

/* the rules in their order, on shares that are exact */
static const char *decide(double io, double lock, double rq, double compute, const char *cls)
{
	if (io >= DOC_IO)
		return "io-bound";
	if (lock >= DOC_LOCK)
		return "lock-bound";
	if (rq >= DOC_RUNQUEUE)
		return "cpu-starved";
	if (compute >= DOC_COMPUTE)
		return cls;
	return "mixed";
}

int h_verdict_classes(const struct h_busy *b, const char *compute, const char **classes,
		      int max)
{
	const double d[3] = { -H_SHARE_MARGIN, 0, H_SHARE_MARGIN };
	double busy = b->on + b->rq + b->io + b->lock;
	double extra = b->rq_extra < b->on ? b->rq_extra : b->on;
	int n = 0, e, f, i, j, k, l;

	if (busy <= 0)
		return 0;
	fprintf(stderr, "  kernel's shares of %.3f s busy: on-CPU %.3f (of it IO submission "
		"%.0f-%.0f%%), run queue %.3f (up to %.3f), IO %.3f, locks %.3f\n", busy,
		b->on / busy, b->io_cpu_lo * 100, b->io_cpu_hi * 100, b->rq / busy,
		(b->rq + extra) / busy, b->io / busy, b->lock / busy);
	/*
	 * the IO-submission fraction in steps of 1%, and the part of the
	 * on-CPU time that may be wakeup latency in steps of a tenth: the
	 * shares move with them together
	 */
	for (e = 0; e <= 10; e++) {
		double on = b->on - extra * e / 10, rq = b->rq + extra * e / 10;

		for (f = 0; f <= 100; f++) {
			double frac = b->io_cpu_lo + (b->io_cpu_hi - b->io_cpu_lo) * f / 100;
			double io = (b->io + frac * on) / busy, cpu = (1 - frac) * on / busy;
			/*
			 * schedstat's run delay does not tell a wait after a
			 * wakeup on idle CPUs (wake-up latency, left out of the
			 * shares) from contention: the class without it is
			 * allowed too (docs/classification.md)
			 */
			double rest = busy - rq;

			if (rq > 0 && rest > 0)
				allow(classes, &n, max,
				      decide((b->io + frac * on) / rest, b->lock / rest, 0,
					     (1 - frac) * on / rest, compute));

			for (i = 0; i < 3; i++)
				for (j = 0; j < 3; j++)
					for (k = 0; k < 3; k++)
						for (l = 0; l < 3; l++)
							allow(classes, &n, max,
							      decide(io + d[i],
								     b->lock / busy + d[j],
								     rq / busy + d[k],
								     cpu + d[l], compute));
		}
	}
	return n;
}

void h_expect_class(const char *what, const char *got, const struct h_busy *b,
		    const char *compute)
{
	const char *classes[8];
	int n = h_verdict_classes(b, compute, classes, 8), i;

	fprintf(stderr, "  %s: boundprof says %s; the kernel's shares allow", what,
		got ? got : "(none)");
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", classes[i]);
	fprintf(stderr, "\n");
	for (i = 0; i < n; i++)
		if (got && !strcmp(got, classes[i]))
			return;
	fail_msg("%s: %s is not what the kernel's own count of its time allows", what,
		 got ? got : "(no verdict)");
}

bool h_near_kernel(const char *what, double got, double kernel, double less, double more)
{
	double lo = kernel * 0.95 - 0.01 - less, hi = kernel * 1.05 + 0.01 + more;

	fprintf(stderr, "  %s: boundprof %.4f s, the kernel %.4f s (%+.2f%%; room %.4f-%.4f)\n",
		what, got, kernel, kernel > 0 ? (got / kernel - 1) * 100 : 0, lo, hi);
	return got >= lo && got <= hi;
}

int h_sample_proc(pid_t pid, struct h_psample *s)
{
	char dir[64], path[600];
	struct timespec ts;
	struct dirent *de;
	clockid_t clk;
	DIR *d;

	memset(s, 0, sizeof(*s));
	if (clock_getcpuclockid(pid, &clk))
		return -ESRCH;
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	s->t_lo = realtime();
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long on, rq;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/schedstat", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu %llu", &on, &rq) == 2) {
			s->rq += rq / 1e9;
			s->threads++;
		}
		fclose(f);
	}
	closedir(d);
	if (clock_gettime(clk, &ts)) {
		s->t_hi = realtime();
		return -ESRCH;
	}
	s->t_hi = realtime();
	s->cpu = ts.tv_sec + ts.tv_nsec / 1e9;
	return s->threads ? 0 : -ESRCH;
}

void h_cpu_between(const struct h_psample *s, int n, double t0, double t1, double *lo,
		   double *hi)
{
	int a0 = -1, b0 = -1, a1 = -1, b1 = -1, i;

	/* a: the last sample surely before the moment, b: the first surely after */
	for (i = 0; i < n; i++) {
		if (s[i].t_hi <= t0)
			a0 = i;
		if (b0 < 0 && s[i].t_lo >= t0)
			b0 = i;
		if (s[i].t_hi <= t1)
			a1 = i;
		if (b1 < 0 && s[i].t_lo >= t1)
			b1 = i;
	}
	*lo = *hi = NAN;
	if (a0 < 0 || b1 < 0)
		return;
	*hi = s[b1].cpu - s[a0].cpu;
	*lo = b0 >= 0 && a1 >= b0 ? s[a1].cpu - s[b0].cpu : 0;
}

bool h_io_rq_split(const char *who, const struct h_sched *k, const struct bp_json *proc)
{
	double io = bp_json_num(bp_json_path(proc, "off_cpu_s.io"));
	double rq = bp_json_num(bp_json_path(proc, "off_cpu_s.runqueue"));
	double on = bp_json_num(bp_json_get(proc, "on_cpu_s"));
	double steal = bp_json_num(bp_json_get(proc, "steal_s"));
	double room = k->runs * H_WAKEUP_S, blocked;
	char what[64];
	bool ok;

	fprintf(stderr, "  %s: boundprof %.4f s on-CPU, of it %.4f s stolen (the machine's "
		"steal: %.2f s)\n", who, on, steal, k->steal);
	if (!(steal >= 0 && steal <= k->steal + 0.01)) {
		fprintf(stderr, "  %s: more steal than the machine had\n", who);
		return false;
	}
	snprintf(what, sizeof(what), "%s on-CPU less steal", who);
	if (!h_near_kernel(what, on - steal, k->on + k->pre_on, room, room))
		return false;
	blocked = k->wall - k->on - k->rq - steal;

	snprintf(what, sizeof(what), "%s IO + run queue", who);
	ok = h_near_kernel(what, io + rq, blocked + k->rq + k->pre_rq, room, room);
	snprintf(what, sizeof(what), "%s IO wait", who);
	ok = h_near_kernel(what, io, blocked, blocked, room) && ok;
	snprintf(what, sizeof(what), "%s run queue", who);
	ok = h_near_kernel(what, rq, k->rq + k->pre_rq, 0, blocked + room) && ok;
	return ok && io >= 0.5 * blocked;
}

static void sysfs_put(const char *dir, const char *name, const char *text)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

const char *h_fake_sysfs(const char *name, unsigned int mib)
{
	static char root[600];
	const char *parts[] = { "devices", "system", "cpu", "cpu0", "cache" };
	const struct {
		const char *level, *type, *size;
	} idx[] = {
		{ "1\n", "Data\n", "48K\n" }, { "1\n", "Instruction\n", "32K\n" },
		{ "2\n", "Unified\n", "1024K\n" }, { "3\n", "Unified\n", NULL },
	};
	char dir[700], sub[760], size[32];
	size_t i;

	snprintf(root, sizeof(root), "%s", h_path(name));
	snprintf(dir, sizeof(dir), "%s", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		strcat(dir, "/");
		strcat(dir, parts[i]);
		assert_int_equal(mkdir(dir, 0755), 0);
	}
	snprintf(size, sizeof(size), "%uK\n", mib * 1024);
	/* index numbers are dense from 0, as the kernel makes them */
	for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
		snprintf(sub, sizeof(sub), "%s/index%zu", dir, i);
		assert_int_equal(mkdir(sub, 0755), 0);
		sysfs_put(sub, "level", idx[i].level);
		sysfs_put(sub, "type", idx[i].type);
		sysfs_put(sub, "size", idx[i].size ? idx[i].size : size);
		sysfs_put(sub, "shared_cpu_list", i < 2 ? "0\n" : "0-1\n");
	}
	return root;
}
