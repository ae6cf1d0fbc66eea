/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes alive at one moment, from one read of /proc's directory: a
 * retire pass asks whether each of a few hundred known processes is gone,
 * and an access(2) of /proc/PID for each was most of the agent's system
 * calls on an idle machine (one a process per window, 23 a second with
 * 235 processes and 10-s windows); a directory read is a few getdents64.
 */
#ifndef BP_PIDSET_H
#define BP_PIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bp_pidset {
	pid_t *v;		/* sorted */
	size_t n, cap;
};

/* the pids under proc_root ("/proc"); 0 or -errno (then nothing is held) */
int bp_pidset__read(struct bp_pidset *ps, const char *proc_root);
bool bp_pidset__has(const struct bp_pidset *ps, pid_t pid);
void bp_pidset__free(struct bp_pidset *ps);

#endif /* BP_PIDSET_H */
