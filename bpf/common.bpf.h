/* SPDX-License-Identifier: GPL-2.0 */
/*
 * State shared by every BPF object of boundprof. The maps and globals are
 * defined once in proc.bpf.c and declared extern everywhere else; bpftool's
 * static linker resolves them into one object and one skeleton.
 */
#ifndef BP_COMMON_BPF_H
#define BP_COMMON_BPF_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "boundprof.h"

#ifndef BP_DEFINE
#define BP_EXTERN extern
#else
#define BP_EXTERN
#endif

#define ENOENT	2
#define EFAULT	14
#define EEXIST	17

/*
 * processes to profile when filter_targets is set: tgid -> BP_TARGET_CMD
 * (the command or -p, and their children), or BP_TARGET_PEER (a local
 * process the command waited on, added by bp_wakeup)
 */
#define BP_TARGET_CMD	1
#define BP_TARGET_PEER	2
/*
 * This map and seen are not preallocated: an element a process, allocated
 * when it is first seen. Preallocated, the two took 7 ms of every start to
 * create (49,152 elements) and held 3.8 MiB of kernel memory whatever the
 * load (bpftool's bytes_memlock; 0.8 MiB of buckets now).
 */
struct bp_targets_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
};
BP_EXTERN struct bp_targets_map targets SEC(".maps");

/*
 * tgids sampled at least once, so userspace hears about each only once per
 * image; an exec demotes a sampled process to BP_SEEN_EARLIER so its first
 * sample under the new image is reported again, and its exit still is.
 */
#define BP_SEEN_SAMPLED	1
#define BP_SEEN_EARLIER	2
struct bp_seen_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u8);
};
BP_EXTERN struct bp_seen_map seen SEC(".maps");

struct bp_stats_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_stats);
};
BP_EXTERN struct bp_stats_map stats SEC(".maps");

#define BP_EVENTS_RING	(256 * 1024)
struct bp_events_map {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, BP_EVENTS_RING);
};
BP_EXTERN struct bp_events_map events SEC(".maps");

/*
 * Aggregation maps are double-buffered: programs write into buffer buf_idx
 * while userspace drains and clears the other one, so a drain never races
 * with an update of the entry it is reading.
 */
BP_EXTERN volatile __u32 buf_idx;

/*
 * The exit program walks a sampled process's mappings (proc.bpf.c): 1 once
 * it has done so (the kernel's exit tracepoint comes before the memory is
 * let go, as on 6.18), 2 once it found a process's memory gone there (a
 * kernel that let it go first). Only at 1 may a first sample wait for
 * userspace's next tick: its process can be named after it is gone.
 */
BP_EXTERN volatile __u32 exit_walks;
#define BP_EXIT_WALKS_OK	1
#define BP_EXIT_WALKS_NONE	2

/*
 * Counted up by userspace after it adds a process to py_procs or r_procs:
 * what a program remembered of a process not being an interpreter holds
 * only while this has not moved.
 */
BP_EXTERN volatile __u32 interp_gen;
/*
 * Cumulative counts userspace reads from the mmapped .bss, without a system
 * call, to drain only when the buffer fills or a busy process needs looking
 * at (agent/collect/drainpol.h): rows added to the maps of either buffer,
 * by map (enum bp_pend_map), on-CPU samples taken.
 */
BP_EXTERN volatile __u64 pend_rows[BP_PEND__MAX];
BP_EXTERN volatile __u64 pend_samples;
BP_EXTERN const volatile __u8 filter_targets;
/*
 * A process never profiled, 0: none. The agent leaves itself out: its cost
 * is in its own metrics, and profiling itself had it build unwind tables
 * and line tables for its own ten files and walk its own switches.
 */
BP_EXTERN const volatile __u32 skip_tgid;
/*
 * -G: only tasks in one cgroup or below it. The cgroup is its kernfs id
 * (the directory's inode, as bpf_get_current_cgroup_id() gives it) at its
 * level; the tree is the v2 one (filter_cgroup_tree 0) or a v1 controller's,
 * whose subsystem id userspace takes from the kernel's BTF.
 */
BP_EXTERN const volatile __u64 filter_cgroup_id;
BP_EXTERN const volatile __u32 filter_cgroup_level;
BP_EXTERN const volatile __u32 filter_cgroup_tree;
BP_EXTERN const volatile __u32 filter_cgroup_ssid;

static __always_inline void pend_add(volatile __u64 *c)
{
	__sync_fetch_and_add(c, 1);
}

/*
 * Delete key from map if it is there; 0 when it was. A delete takes the
 * bucket's lock with interrupts off whether the key is there or not, a
 * lookup takes none: a process's exec and exit drop up to eight entries,
 * and a new process has none of them yet.
 */
static __always_inline long map_drop(void *map, const void *key)
{
	if (!bpf_map_lookup_elem(map, key))
		return -ENOENT;
	return bpf_map_delete_elem(map, key);
}

static __always_inline void stat_inc(enum bp_stat s)
{
	__u32 zero = 0;
	struct bp_stats *st = bpf_map_lookup_elem(&stats, &zero);

	if (st && s < BP_STAT__MAX)
		st->v[s]++;
}

static __always_inline bool is_target(__u32 tgid)
{
	if (skip_tgid && tgid == skip_tgid)
		return false;
	if (!filter_targets)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* cgroup trees nest a handful deep; a task this far below the filter's cgroup is not in it */
#define BP_CG_MAX_WALK	64
/* css_set::subsys[] has CGROUP_SUBSYS_COUNT entries, 12 or so */
#define BP_CG_MAX_SSID	16

/*
 * The inode's mtime: i_mtime until 6.6, __i_mtime from 12cd44023651
 * ("fs: rename i_atime and i_mtime fields", v6.7) and its seconds alone,
 * i_mtime_sec, from 3aa63a569c64 ("fs: switch timespec64 fields in inode
 * to discrete integers", v6.11).
 */
struct inode___mtime_ts {
	struct timespec64 i_mtime;
} __attribute__((preserve_access_index));

struct inode___mtime_priv {
	struct timespec64 __i_mtime;
} __attribute__((preserve_access_index));

static __always_inline __s64 bp_inode_mtime(struct inode *i)
{
	if (bpf_core_field_exists(i->i_mtime_sec))
		return BPF_CORE_READ(i, i_mtime_sec);
	if (bpf_core_field_exists(((struct inode___mtime_priv *)i)->__i_mtime))
		return BPF_CORE_READ((struct inode___mtime_priv *)i, __i_mtime.tv_sec);
	return BPF_CORE_READ((struct inode___mtime_ts *)i, i_mtime.tv_sec);
}

/* the change time: i_ctime until 6.5, __i_ctime from 6.6, i_ctime_sec from 6.11 */
struct inode___ctime_ts {
	struct timespec64 i_ctime;
} __attribute__((preserve_access_index));

struct inode___ctime_priv {
	struct timespec64 __i_ctime;
} __attribute__((preserve_access_index));

/* an inode as stat(2) gives it: into x */
static __always_inline void bp_inode_id(struct inode *i, struct bp_exe_id *x)
{
	x->ino = BPF_CORE_READ(i, i_ino);
	x->dev = BPF_CORE_READ(i, i_sb, s_dev);
	x->mode = BPF_CORE_READ(i, i_mode);
	x->nlink = BPF_CORE_READ(i, __i_nlink);
	x->size = BPF_CORE_READ(i, i_size);
	x->pad = 0;
	if (bpf_core_field_exists(i->i_mtime_sec)) {
		x->mtime_sec = BPF_CORE_READ(i, i_mtime_sec);
		x->mtime_nsec = BPF_CORE_READ(i, i_mtime_nsec);
	} else if (bpf_core_field_exists(((struct inode___mtime_priv *)i)->__i_mtime)) {
		x->mtime_sec = BPF_CORE_READ((struct inode___mtime_priv *)i, __i_mtime.tv_sec);
		x->mtime_nsec = BPF_CORE_READ((struct inode___mtime_priv *)i, __i_mtime.tv_nsec);
	} else {
		x->mtime_sec = BPF_CORE_READ((struct inode___mtime_ts *)i, i_mtime.tv_sec);
		x->mtime_nsec = BPF_CORE_READ((struct inode___mtime_ts *)i, i_mtime.tv_nsec);
	}
	if (bpf_core_field_exists(i->i_ctime_sec)) {
		x->ctime_sec = BPF_CORE_READ(i, i_ctime_sec);
		/* multigrain timestamps (6.13) keep a flag in its top bit: I_CTIME_QUERIED */
		x->ctime_nsec = BPF_CORE_READ(i, i_ctime_nsec) & ~(1U << 31);
	} else if (bpf_core_field_exists(((struct inode___ctime_priv *)i)->__i_ctime)) {
		x->ctime_sec = BPF_CORE_READ((struct inode___ctime_priv *)i, __i_ctime.tv_sec);
		x->ctime_nsec = BPF_CORE_READ((struct inode___ctime_priv *)i, __i_ctime.tv_nsec);
	} else {
		x->ctime_sec = BPF_CORE_READ((struct inode___ctime_ts *)i, i_ctime.tv_sec);
		x->ctime_nsec = BPF_CORE_READ((struct inode___ctime_ts *)i, i_ctime.tv_nsec);
	}
}

/* the task's executable, as stat(2) of /proc/PID/exe gives it; false: none */
static __always_inline bool bp_exe_id(struct task_struct *t, struct bp_exe_id *x)
{
	struct inode *i = BPF_CORE_READ(t, mm, exe_file, f_inode);

	if (!i)
		return false;
	bp_inode_id(i, x);
	return true;
}

/* the kernfs id of the cgroup t is in on a controller's tree; 0 without the controller */
static __always_inline __u64 ctrl_cgroup_id(struct task_struct *t, int ssid)
{
	struct cgroup_subsys_state *css;

	if (ssid < 0 || ssid >= BP_CG_MAX_SSID)
		return 0;
	css = BPF_CORE_READ(t, cgroups, subsys[ssid]);
	return css ? BPF_CORE_READ(css, cgroup, kn, id) : 0;
}

/* the current task's cgroups, as an exec event carries them (enum bp_exec_cg) */
/* inode of t's mount namespace, as /proc/PID/ns/mnt; 0: not known on this kernel */
static __always_inline __u32 bp_mnt_ns(struct task_struct *t)
{
	if (!bpf_core_field_exists(struct ns_common, inum))
		return 0;
	return BPF_CORE_READ(t, nsproxy, mnt_ns, ns.inum);
}

/*
 * Whose t's process is, as /proc/PID/status says it: the objective
 * effective uid (not an override_creds() in flight), the pid in its own
 * pid namespace (NSpid:'s last field) and its mount namespace.
 */
static __always_inline void bp_task_ids(struct task_struct *t, __u32 *euid, __u32 *nspid,
					__u32 *mnt_ns)
{
	struct pid *pid = BPF_CORE_READ(t, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);

	*euid = BPF_CORE_READ(t, real_cred, euid.val);
	*nspid = 0;
	/* 32 levels at most (MAX_PID_NS_LEVEL) */
	bpf_core_read(nspid, sizeof(*nspid), &pid->numbers[level & 31].nr);
	*mnt_ns = bp_mnt_ns(t);
}

static __always_inline void current_cg_ids(struct task_struct *t, __u64 cg[BP_EXCG__MAX])
{
	int cpu_id = -1, mem_id = -1;

	cg[BP_EXCG_V2] = bpf_get_current_cgroup_id();
	if (bpf_core_enum_value_exists(enum cgroup_subsys_id, cpu_cgrp_id))
		cpu_id = bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id);
	if (bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		mem_id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	cg[BP_EXCG_CPU] = ctrl_cgroup_id(t, cpu_id);
	cg[BP_EXCG_MEMORY] = ctrl_cgroup_id(t, mem_id);
}

/* the task's cgroup in the filter's tree */
static __always_inline struct cgroup *task_cgroup(struct task_struct *t)
{
	struct css_set *cs = t->cgroups;

	if (!filter_cgroup_tree)
		return cs->dfl_cgrp;
	if (filter_cgroup_ssid >= BP_CG_MAX_SSID)
		return NULL;
	return cs->subsys[filter_cgroup_ssid]->cgroup;
}

/*
 * Is t in the filter's cgroup or a descendant: the ancestor at the filter's
 * level, reached by walking up the parents (cgroup::ancestors[] replaced
 * ancestor_ids[] in v6.1; the walk needs neither), has the filter's id.
 */
static __always_inline bool in_cgroup(struct task_struct *t)
{
	struct cgroup *cg = task_cgroup(t);
	int steps, i;

	if (!cg)
		return false;
	steps = cg->level - (int)filter_cgroup_level;
	if (steps < 0 || steps > BP_CG_MAX_WALK)
		return false;
	for (i = 0; i < BP_CG_MAX_WALK && i < steps; i++)
		cg = cg->self.parent->cgroup;
	return cg && cg->kn->id == filter_cgroup_id;
}

/* is_target() for a task: the pid filter (-p, COMMAND) and the cgroup filter (-G) */
static __always_inline bool is_target_task(struct task_struct *t)
{
	if (filter_cgroup_id && !in_cgroup(t))
		return false;
	return is_target(t->tgid);
}

/*
 * Whether an event of @size bytes (just reserved) wakes the reader. A
 * system-wide reader polls every second anyway, and under process churn
 * it woke for every exec: a context switch each, for facts the event
 * carries whole. It is woken at once only for what it must do while the
 * process lives (its maps at its first sample or an unwind miss, the old
 * image's samples drained at a sampled exec, a python's loader), for
 * every event of a targeted run, and when the ring is an eighth full.
 * An urgent event behind unannounced ones forces the wake-up: by default
 * the kernel wakes only a reader caught up to this very record.
 */
static __always_inline __u64 event_wakeup(bool urgent, __u64 size)
{
	__u64 backlog = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	if (backlog > BP_EVENTS_RING / 8)
		return BPF_RB_FORCE_WAKEUP;
	if (!urgent && !filter_targets && !filter_cgroup_id)
		return BPF_RB_NO_WAKEUP;
	/* the record's own bytes: its 8-byte header, rounded up to 8 */
	return backlog > ((size + 8 + 7) & ~7ULL) ? BPF_RB_FORCE_WAKEUP : 0;
}

static __always_inline void emit_event(__u32 kind, __u32 tgid, __u32 ppid, __u32 flags)
{
	struct bp_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(BP_STAT_EVENT_DROP);
		return;
	}
	e->kind = kind;
	e->tgid = tgid;
	e->ppid = ppid;
	e->flags = flags;
	e->ts_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, event_wakeup(kind != BP_EV_EXIT, sizeof(*e)));
}

#endif /* BP_COMMON_BPF_H */
