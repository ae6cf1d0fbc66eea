/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profiled COMMAND as a child process: forked and held before exec until
 * profiling is live, then let go, reaped with its resource use, and timed
 * from its release to its exit (the exit time is taken in the SIGCHLD
 * handler, so that a poll loop's period does not blur it). record and scale
 * run it, scale and record -r several times in a row.
 */
#ifndef BP_CLI_CHILD_H
#define BP_CLI_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct cli_child {
	pid_t pid;
	int go_fd;		/* write a byte to let the child exec */
	int err_fd;		/* the child reports a failed exec here (CLOEXEC: EOF = ok) */
	int status;		/* wait status, once reaped */
	bool reaped;
	uint64_t start_ns;	/* released (CLOCK_MONOTONIC) */
	uint64_t end_ns;	/* exited */
	struct rusage ru;	/* of it and its waited-for children */
};

#define CLI_CHILD_INIT { .pid = -1, .go_fd = -1, .err_fd = -1 }

/*
 * find cmd the way execvp would: 0, -ENOENT, or why it cannot run; where it
 * was found in found_path (PATH_MAX bytes) unless NULL
 */
int cli_check_command(const char *cmd, char *found_path);

/* time exits from now on (a SIGCHLD handler); call once before the first spawn */
void cli_child_timing(void);

/* fork argv[0] held before exec; env: "NAME=VALUE" set in it (NULL-terminated, or NULL) */
int cli_child_spawn(char **argv, char *const *env, struct cli_child *c);

/* let it exec: 0, or the exec's -errno (it then exits 127, still to be reaped) */
int cli_child_release(struct cli_child *c);

/* reap it if it has exited (or wait, with block): true once reaped */
bool cli_child_reap(struct cli_child *c, bool block);

/* its wall time and CPU time (user + system), once reaped */
double cli_child_wall_s(const struct cli_child *c);
double cli_child_cpu_s(const struct cli_child *c);

/* the exit status a shell would give: the code, or 128 + the signal */
int cli_exit_code(int status);

/* never leave it orphaned: kill and reap it unless reaped; close what is open */
void cli_child_abandon(struct cli_child *c);

#endif /* BP_CLI_CHILD_H */
