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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define MAX_BG 32

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
