/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a user may see a process: the rule ptrace applies to a reader
 * (PTRACE_MODE_READ_REALCREDS, what perf and /proc/PID/mem check), so
 * that what the agent shows a user over its local socket is exactly what
 * that user could read for themselves: the process's real, effective and
 * saved uids and gids are the user's, and it is dumpable (a process that
 * is not, a setuid program for one, has its /proc files owned by root).
 * Root may see everything. See docs/agent.md, "Profiling without root".
 */
#ifndef BP_ACCESS_H
#define BP_ACCESS_H

#include <stdint.h>

/*
 * 0 when uid/gid may trace pid; -EPERM when not (another user's, setuid,
 * not dumpable), -ESRCH when it is gone. proc_root NULL: "/proc".
 */
int bp_may_trace(const char *proc_root, uint32_t pid, uint32_t uid, uint32_t gid);

/*
 * The ids of a /proc/PID/status text: its "Uid:" and "Gid:" lines (real,
 * effective, saved, filesystem). 0, or -EINVAL when either is missing or
 * malformed.
 */
int bp_status_ids(const char *text, uint32_t uids[4], uint32_t gids[4]);

#endif /* BP_ACCESS_H */
