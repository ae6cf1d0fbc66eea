/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cgroups of a recording: which mounts the machine has, the users and
 * cgroups of the processes (read once per process with its other facts),
 * and the accounting of each cgroup a recorded process runs in: CPU
 * throttling, pressure, memory limit events, read when a cgroup is first
 * seen and again at the end of each profile, so that every profile gets
 * the differences over its own window (docs/groups.md).
 */
#ifndef BP_CGROUPS_H
#define BP_CGROUPS_H

#include <stdint.h>
#include <sys/types.h>

#include "model/profile.h"
#include "proc/cgroup.h"

struct bp_cgwatch;

/* NULL only on -ENOMEM; a machine without cgroup mounts gives users only */
struct bp_cgwatch *bp_cgwatch__new(void);
void bp_cgwatch__free(struct bp_cgwatch *w);

/* a process's user and cgroups from /proc (bp_proc_ids_read() with our mounts and users) */
int bp_cgwatch__read_ids(struct bp_cgwatch *w, pid_t pid, struct bp_proc_ids *ids);

/*
 * The user and cgroups of a process from its exec event (bpf/boundprof.h
 * struct bp_exec_event): the user from the event, the cgroup paths from a
 * cache keyed by the event's cgroup ids, which reads /proc/PID/cgroup only
 * for the first process of each set of cgroups (and keeps the paths only
 * when their directories' inodes are those ids). A process gone before its
 * cgroups could be read has its user only. 0 or -ENOMEM.
 */
int bp_cgwatch__exec_ids(struct bp_cgwatch *w, pid_t pid, const __u64 cg[BP_EXCG__MAX],
			 uint32_t euid, struct bp_proc_ids *ids);

/* a process of these ids is in the profile now: watch its cgroups (read a baseline when new) */
void bp_cgwatch__use(struct bp_cgwatch *w, const struct bp_proc_ids *ids, uint64_t now);

/* the ids onto a process of p (strings interned); 0 or -ENOMEM */
int bp_cgwatch__fill(struct bp_profile *p, struct bp_proc *proc, const struct bp_proc_ids *ids);

/*
 * The recording starts: the system's pressure counts from now, and every
 * cgroup's counters are read (at most a few thousand), so that a cgroup
 * first seen later in the first profile counts from the start too, and one
 * made since from zero.
 */
void bp_cgwatch__begin(struct bp_cgwatch *w, uint64_t now);

/*
 * What each cgroup used since p started counted since the last update (or
 * its baseline), added into p's rows, and the system's pressure; then the
 * baselines move to now. Cgroups unused for a minute are forgotten. 0 or
 * -ENOMEM.
 */
int bp_cgwatch__update(struct bp_cgwatch *w, struct bp_profile *p, uint64_t now);

#endif /* BP_CGROUPS_H */
