// SPDX-License-Identifier: GPL-2.0
/*
 * Run a command, pass SIGINT/SIGTERM on to it, and when it ends write
 * "maxrss_kb user_s sys_s wall_s exit" to OUT. usage: runstat OUT CMD [ARG...]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t child;

static void pass_on(int sig)
{
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	int status;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: runstat OUT CMD [ARG...]\n");
		return 2;
	}
	signal(SIGINT, pass_on);
	signal(SIGTERM, pass_on);
	clock_gettime(CLOCK_MONOTONIC, &a);
	child = fork();
	if (child == 0) {
		execvp(argv[2], argv + 2);
		perror("exec");
		_exit(127);
	}
	while (wait4(child, &status, 0, &ru) < 0)
		;
	clock_gettime(CLOCK_MONOTONIC, &b);
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %.3f %.3f %.3f %d\n", ru.ru_maxrss,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
		(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fclose(f);
	return 0;
}
