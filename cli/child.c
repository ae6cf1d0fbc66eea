// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "cli.h"

static volatile uint64_t chld_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* clock_gettime is async-signal-safe; the last SIGCHLD before the reap is the exit */
static void on_sigchld(int sig)
{
	int e = errno;

	chld_ns = now_ns();
	errno = e;
}

void cli_child_timing(void)
{
	struct sigaction sa = {};

	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
}

int cli_check_command(const char *cmd, char *found_path)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, full[PATH_MAX];
	struct stat st;
	int found = 0;

	if (strchr(cmd, '/')) {
		if (stat(cmd, &st))
			return -errno;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (found_path)
			snprintf(found_path, PATH_MAX, "%s", cmd);
		return access(cmd, X_OK) ? -errno : 0;
	}
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return -ENOMEM;
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(full, sizeof(full), "%s/%s", *dir ? dir : ".", cmd);
		if (!stat(full, &st) && S_ISREG(st.st_mode) && !access(full, X_OK)) {
			found = 1;
			if (found_path)
				snprintf(found_path, PATH_MAX, "%s", full);
		}
	}
	free(copy);
	return found ? 0 : -ENOENT;
}

int cli_child_spawn(char **argv, char *const *env, struct cli_child *c)
{
	int go[2], er[2];
	char b;

	*c = (struct cli_child)CLI_CHILD_INIT;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(er, O_CLOEXEC)) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		return e;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		close(er[0]);
		close(er[1]);
		return e;
	}
	if (c->pid == 0) {
		int e;

		close(go[1]);
		close(er[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		/* we are single-threaded: setenv is safe between fork and exec */
		for (; env && *env; env++) {
			const char *eq = strchr(*env, '=');
			char name[128];

			if (!eq || eq - *env >= (long)sizeof(name))
				continue;
			memcpy(name, *env, eq - *env);
			name[eq - *env] = '\0';
			setenv(name, eq + 1, 1);
		}
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	c->go_fd = go[1];
	c->err_fd = er[0];
	return 0;
}

int cli_child_release(struct cli_child *c)
{
	int e = 0;
	ssize_t n;

	chld_ns = 0;
	c->start_ns = now_ns();
	if (write(c->go_fd, "g", 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	c->err_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

bool cli_child_reap(struct cli_child *c, bool block)
{
	uint64_t t;
	pid_t r;

	if (c->reaped || c->pid <= 0)
		return c->reaped;
	do
		r = wait4(c->pid, &c->status, block ? 0 : WNOHANG, &c->ru);
	while (r < 0 && errno == EINTR);
	if (r != c->pid)
		return false;
	t = now_ns();
	c->reaped = true;
	c->end_ns = chld_ns >= c->start_ns && chld_ns && chld_ns <= t ? chld_ns : t;
	return true;
}

double cli_child_wall_s(const struct cli_child *c)
{
	return c->reaped && c->end_ns > c->start_ns ? (c->end_ns - c->start_ns) / 1e9 : 0;
}

double cli_child_cpu_s(const struct cli_child *c)
{
	return c->ru.ru_utime.tv_sec + c->ru.ru_utime.tv_usec / 1e6 + c->ru.ru_stime.tv_sec +
	       c->ru.ru_stime.tv_usec / 1e6;
}

int cli_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_RUNTIME;
}

void cli_child_abandon(struct cli_child *c)
{
	if (c->pid > 0 && !c->reaped) {
		if (c->go_fd >= 0)
			close(c->go_fd);
		c->go_fd = -1;
		kill(c->pid, SIGKILL);
		cli_child_reap(c, true);
	}
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = c->err_fd = -1;
}
