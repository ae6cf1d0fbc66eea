// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define MAX_BG 32

static void append(char **buf, size_t *len, const char *data, size_t n);

static pid_t bg[MAX_BG];
static int nr_bg;
static char tmpdir[256];

static double now(void)
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
	double deadline = now() + timeout_s;
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
		int left = (int)((deadline - now()) * 1000);
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
	double deadline = now() + timeout_s;
	struct pollfd pfd[2];
	char chunk[4096];
	bool killed = false;
	int status;

	memset(r, 0, sizeof(*r));
	append(&r->out, &r->out_len, "", 0);
	append(&r->err, &r->err_len, "", 0);
	for (;;) {
		int n = 0, i, left = (int)((deadline - now()) * 1000);

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
	double deadline = now() + timeout_s;
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int left = (int)((deadline - now()) * 1000);

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
	free(text);
	return j;
}

struct bp_json *h_record_json(const char *name, char *const cmd[])
{
	char *argv[40] = { (char *)h_bin(), "record", "-o", NULL };
	struct run r;
	int i, n = 3;

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
