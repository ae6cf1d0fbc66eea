/* SPDX-License-Identifier: GPL-2.0 */
/* What /proc says about a process: name, parent, start time, command line. */
#ifndef BP_PROCINFO_H
#define BP_PROCINFO_H

#include <stdint.h>
#include <sys/types.h>

#include "boundprof.h"

struct bp_procinfo {
	char comm[BP_COMM_LEN];
	uint32_t ppid;
	uint64_t start_ns;	/* CLOCK_MONOTONIC */
	char *cmdline;		/* malloc()ed, arguments joined by spaces; NULL if empty */
};

/* 0, -ESRCH when the process is gone, or another -errno */
int bp_procinfo_read(const char *proc_root, pid_t pid, struct bp_procinfo *out);
void bp_procinfo_free(struct bp_procinfo *pi);

/* parse the text of /proc/PID/stat; 0 or -EINVAL */
int bp_procinfo_parse_stat(const char *text, char *comm, size_t comm_len, uint32_t *ppid,
			   uint64_t *start_ticks);

/*
 * Whose a process is and what it calls itself, from /proc/PID/status: the
 * effective uid (the second field of Uid:, what the kernel checks for its
 * files) and the pid inside its innermost pid namespace (the last field of
 * NSpid:; pid itself on kernels without the line). 0, -ESRCH when the
 * process is gone, -EINVAL without a Uid: line, or another -errno.
 */
int bp_procinfo_read_ids(const char *proc_root, pid_t pid, uid_t *euid, pid_t *nspid);

/* the same from the text of a status file; *nspid is left alone without NSpid: */
int bp_procinfo_parse_status(const char *text, uid_t *euid, pid_t *nspid);

/* all CPUs' busy and total time from /proc/stat, in clock ticks; 0 or -errno */
int bp_cpu_times(const char *proc_root, uint64_t *busy, uint64_t *total);

/* CLOCK_MONOTONIC now, in ns */
uint64_t bp_now_ns(void);

/* the calling thread's CPU time so far, in ns (0 if the clock fails) */
uint64_t bp_thread_cpu_ns(void);

#endif /* BP_PROCINFO_H */
