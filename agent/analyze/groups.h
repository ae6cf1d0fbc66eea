/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Groups of processes: by user, by cgroup, or by unit (systemd service,
 * scope or slice; container), each with its time split, IO, its busiest
 * processes and a verdict for the group as one workload; and the share of
 * each process's run-queue wait that its cgroup's CPU quota explains
 * (docs/groups.md has the method).
 */
#ifndef BP_GROUPS_H
#define BP_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "analyze/classify.h"
#include "model/profile.h"

enum bp_group_by {
	BP_GROUP_NONE = 0,
	BP_GROUP_USER,
	BP_GROUP_CGROUP,
	BP_GROUP_UNIT,
};

/* "user", "cgroup", "unit" ("" for none) */
const char *bp_group_by_name(enum bp_group_by by);
/* the inverse; 0 or -EINVAL */
int bp_group_by_parse(const char *s, enum bp_group_by *by);

/*
 * The group of a process, as it is shown: the user name (its uid when it has
 * none), the cgroup path, the unit (the cgroup path when it has no unit);
 * "?" when its facts were never read. Returns buf.
 */
const char *bp_group_name(const struct bp_proc *proc, enum bp_group_by by, char *buf,
			  size_t len);

#define BP_GROUP_TOP_PROCS	3

struct bp_group {
	char *name;			/* bp_group_name(), malloc()ed */
	uint32_t nr_procs;		/* processes of the group in the summary */
	uint32_t threads;
	uint64_t samples;
	double on_cpu_s;
	double off_s[BP_KIND__MAX];	/* thread-seconds per wait class */
	double throttled_s;		/* of off_s[RUNQUEUE]: waiting out the CPU quota */
	double wall_s;			/* from the first member's start to the last's end */
	uint64_t io_ops, io_bytes;
	double activity;		/* on-CPU plus non-sleep waits: the order of the list */
	/* the busiest processes, by activity */
	const struct bp_proc_summary *top[BP_GROUP_TOP_PROCS];
	uint32_t nr_top;
	/* the cgroup accounting of its busiest cgroups (NULL: none known) */
	const struct bp_cgroup *cpu;	/* under the quota that throttled it most */
	const struct bp_cgroup *mem;	/* under the memory limit with the most events */
	const struct bp_cgroup *psi;	/* its busiest v2 cgroup */
	struct bp_verdict verdict;
	bool have_verdict;
};

struct bp_groups {
	enum bp_group_by by;
	struct bp_group *g;		/* most active first */
	uint32_t nr;
};

/*
 * Group the summary's processes (after bp_verdicts(): the per-process
 * throttling is in the summary then) and decide a verdict for each group.
 * 0 or -ENOMEM.
 */
int bp_groups_build(const struct bp_profile *p, const struct bp_summary *s, enum bp_group_by by,
		    struct bp_groups *out);
void bp_groups_free(struct bp_groups *g);

/*
 * Throttling against contention: for every cgroup whose CPU quota throttled,
 * the throttled time its cpu.stat counted over the window, set against the
 * run-queue time of the summary's processes under that quota, gives each
 * of them ps->throttled_s = its run-queue time x min(1, throttled /
 * run-queue time of all of them). Called by bp_verdicts().
 */
void bp_throttle_attribute(const struct bp_profile *p, struct bp_summary *s);

/* the cgroup rows of a process (NULL when unknown) */
const struct bp_cgroup *bp_proc_cpu_cgroup(const struct bp_profile *p, const struct bp_proc *proc);
const struct bp_cgroup *bp_proc_mem_cgroup(const struct bp_profile *p, const struct bp_proc *proc);
const struct bp_cgroup *bp_proc_psi_cgroup(const struct bp_profile *p, const struct bp_proc *proc);

/*
 * The limits' evidence for the classifier, from a process's (or group's)
 * cgroup rows; e->wall_s set before (the throttled share is of the shorter
 * of it and the time the cgroup was watched).
 */
void bp_cgroup_evidence(const struct bp_profile *p, const struct bp_cgroup *cpu,
			const struct bp_cgroup *mem, const struct bp_cgroup *psi,
			struct bp_evidence *e);

#endif /* BP_GROUPS_H */
