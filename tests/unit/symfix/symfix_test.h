/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the symbolizer unit tests: start a symfix program and read the
 * functions it reports, make temporary directories, and undo all of it in a
 * cmocka teardown (which runs also when an assertion failed).
 *
 * Include after <cmocka.h>.
 */
#ifndef SYMFIX_TEST_H
#define SYMFIX_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SF_MAX_SYMS	16
#define SF_MAX_CHILDREN	8
#define SF_MAX_TMPDIRS	8

struct sf_sym {
	char name[64];
	uint64_t addr;		/* at run time */
	uint64_t vaddr;		/* in the ELF file, per the dynamic loader */
};

struct sf_child {
	pid_t pid;		/* kept after sf_kill(): tests resolve with it */
	bool reaped;
	int to_child;		/* its stdin: closing it ends the child */
	int nr;
	struct sf_sym syms[SF_MAX_SYMS];
};

static pid_t sf_pids[SF_MAX_CHILDREN];
static int sf_fds[SF_MAX_CHILDREN];
static char sf_tmpdirs[SF_MAX_TMPDIRS][PATH_MAX];

static inline const char *sf_data_dir(void)
{
	const char *d = getenv("BP_TEST_DATA");

	return d ? d : ".output/tests/data";
}

static inline void sf_data_path(char *buf, size_t sz, const char *name)
{
	snprintf(buf, sz, "%s/%s", sf_data_dir(), name);
}

static inline void sf_track(pid_t pid, int fd)
{
	int i;

	for (i = 0; i < SF_MAX_CHILDREN; i++) {
		if (!sf_pids[i]) {
			sf_pids[i] = pid;
			sf_fds[i] = fd;
			return;
		}
	}
	/* no slot: do not leave it running */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	fail_msg("too many children");
}

/* kill and reap; the child is gone when this returns */
static inline void sf_kill(struct sf_child *c)
{
	int i;

	if (c->pid <= 0 || c->reaped)
		return;
	for (i = 0; i < SF_MAX_CHILDREN; i++) {
		if (sf_pids[i] == c->pid) {
			sf_pids[i] = 0;
			sf_fds[i] = -1;
		}
	}
	kill(c->pid, SIGKILL);
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (c->to_child >= 0)
		close(c->to_child);
	c->to_child = -1;
	c->reaped = true;
}

static inline int sf_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* teardown: every child killed and reaped, every temp dir removed */
static inline int sf_cleanup(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < SF_MAX_CHILDREN; i++) {
		if (sf_pids[i] > 0) {
			kill(sf_pids[i], SIGKILL);
			waitpid(sf_pids[i], NULL, 0);
			close(sf_fds[i]);
			sf_pids[i] = 0;
		}
	}
	for (i = 0; i < SF_MAX_TMPDIRS; i++) {
		if (sf_tmpdirs[i][0]) {
			nftw(sf_tmpdirs[i], sf_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
			sf_tmpdirs[i][0] = '\0';
		}
	}
	return 0;
}

/* a fresh directory under /tmp, removed by sf_cleanup() */
static inline const char *sf_tmpdir(void)
{
	int i;

	for (i = 0; i < SF_MAX_TMPDIRS; i++) {
		if (sf_tmpdirs[i][0])
			continue;
		strcpy(sf_tmpdirs[i], "/tmp/bp-symtest-XXXXXX");
		if (!mkdtemp(sf_tmpdirs[i])) {
			sf_tmpdirs[i][0] = '\0';
			fail_msg("mkdtemp: %s", strerror(errno));
		}
		return sf_tmpdirs[i];
	}
	fail_msg("too many temp dirs");
	return NULL;
}

static inline void sf_write_file(const char *path, const char *text, const char *mode)
{
	FILE *f = fopen(path, mode);

	if (!f)
		fail_msg("fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static inline void sf_copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		fail_msg("open %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		close(in);
		fail_msg("open %s: %s", to, strerror(errno));
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n)
			break;
	}
	close(in);
	close(out);
}

/* read "NAME ADDR VADDR" lines up to "end" (10 s at most) */
static inline void sf_read_report(struct sf_child *c, int fd)
{
	char buf[4096], *line, *nl;
	size_t len = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 10000) <= 0)
			fail_msg("child %d reported nothing", c->pid);
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			fail_msg("child %d closed its output", c->pid);
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "end\n"))
			break;
		if (len == sizeof(buf) - 1)
			fail_msg("child %d: report too long", c->pid);
	}
	for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
		struct sf_sym *s;
		unsigned long a, v;

		*nl = '\0';
		if (!strcmp(line, "end") || c->nr == SF_MAX_SYMS)
			break;
		s = &c->syms[c->nr];
		if (sscanf(line, "%63s %lx %lx", s->name, &a, &v) != 3)
			fail_msg("bad report line '%s'", line);
		s->addr = a;
		s->vaddr = v;
		c->nr++;
	}
}

/* start a program (killed by sf_cleanup) and read its report */
static inline void sf_spawn(struct sf_child *c, const char *path)
{
	int in[2], out[2];
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->to_child = -1;
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		fail_msg("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		fail_msg("fork: %s", strerror(errno));
	if (!pid) {
		char *argv[] = { (char *)path, NULL };

		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(path, argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->pid = pid;
	c->to_child = in[1];
	sf_track(pid, in[1]);
	sf_read_report(c, out[0]);
	close(out[0]);
}

static inline const struct sf_sym *sf_sym(const struct sf_child *c, const char *name)
{
	int i;

	for (i = 0; i < c->nr; i++)
		if (!strcmp(c->syms[i].name, name))
			return &c->syms[i];
	fail_msg("child did not report %s", name);
	return NULL;
}

#endif /* SYMFIX_TEST_H */
