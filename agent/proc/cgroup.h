/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which group a process runs in, and what that group's own accounting says
 * (docs/groups.md):
 *
 * - the machine's cgroup mounts, whatever the layout: pure v2, hybrid (v1
 *   controllers plus a v2 tree, often without controllers), or v1 only;
 * - a process's cgroups from /proc/PID/cgroup, turned into one path to
 *   group by, the paths that carry the cpu and memory controllers, and a
 *   readable unit name (a systemd service, scope or slice, or a container);
 * - the cgroup files boundprof reads for evidence: CPU bandwidth (cpu.max,
 *   cpu.stat; v1 cpu.cfs_quota_us, cpu.cfs_period_us, cpu.stat), pressure
 *   stall information (cpu, memory and io .pressure, and /proc/pressure),
 *   memory limits and their events (memory.max, memory.high, memory.events;
 *   v1 memory.limit_in_bytes, memory.failcnt, memory.oom_control).
 *
 * The parsers take the files' text and are pure, for the unit tests. Paths
 * come from the kernel but name directories other users may create (a
 * delegated subtree), so every file under a cgroup mount is opened through
 * util/safeopen.h inside that mount, and a /proc/PID/cgroup that names one
 * hierarchy twice (a cgroup name with a newline in it) is refused.
 */
#ifndef BP_CGROUP_H
#define BP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* the controllers whose v1 hierarchy boundprof follows */
enum bp_cg_ctrl {
	BP_CGC_CPU = 0,
	BP_CGC_MEMORY,
	BP_CGC__MAX,
};

#define BP_CG_MOUNT_LEN	256
/* the longest cgroup path kept; a longer one reads as unknown */
#define BP_CG_PATH_LEN	1024

struct bp_cg_mount {
	char dir[BP_CG_MOUNT_LEN];	/* mount point, "" when absent */
	char root[BP_CG_PATH_LEN];	/* the cgroup the mount shows at its top ("/" usually) */
};

struct bp_cg_mounts {
	struct bp_cg_mount v2;			/* the cgroup2 hierarchy */
	bool v2_has[BP_CGC__MAX];		/* controllers enabled in v2 (cgroup.controllers) */
	struct bp_cg_mount v1[BP_CGC__MAX];	/* each controller's v1 hierarchy */
	struct bp_cg_mount v1_systemd;		/* the name=systemd hierarchy (hybrid, legacy) */
};

/* which tree a cgroup path is in */
enum bp_cg_tree {
	BP_CGT_V2 = 0,
	BP_CGT_V1_CPU,
	BP_CGT_V1_MEMORY,
	BP_CGT_V1_SYSTEMD,
	BP_CGT__MAX,
};

const char *bp_cg_tree_name(enum bp_cg_tree t);	/* "v2", "cpu", "memory", "systemd" */

/*
 * The cgroup mounts from the text of a mountinfo file (the first mount of
 * each hierarchy counts). Controllers of the v2 tree are not in it: see
 * bp_cg_mounts_read(). 0, or -ENOENT when there is no cgroup mount at all.
 */
int bp_cg_parse_mountinfo(char *text, struct bp_cg_mounts *m);

/* the controllers a v2 cgroup.controllers text lists */
void bp_cg_parse_controllers(const char *text, struct bp_cg_mounts *m);

/* the machine's mounts: /proc/self/mountinfo and the v2 root's cgroup.controllers */
int bp_cg_mounts_read(const char *proc_root, struct bp_cg_mounts *m);

/* the mount of a tree (NULL when the machine has none) */
const struct bp_cg_mount *bp_cg_mount_of(const struct bp_cg_mounts *m, enum bp_cg_tree t);

/* what /proc/PID/cgroup says, pointing into the text it was parsed from */
struct bp_cg_paths {
	const char *v2;			/* the "0::" line; NULL when absent */
	const char *v1[BP_CGC__MAX];	/* the v1 line that names the controller, NULL */
	const char *systemd;		/* the "name=systemd" line, NULL */
};

/*
 * Parse /proc/PID/cgroup text in place (paths are NUL-terminated where
 * their newline was). 0, or -EINVAL: a line that is not ID:CONTROLLERS:/PATH,
 * a hierarchy named twice, a path longer than BP_CG_PATH_LEN, or a last
 * line without its newline (the read was cut short).
 */
int bp_cg_parse_proc(char *text, struct bp_cg_paths *out);

/*
 * The path to group a process by: its v2 path, unless that is the root while
 * a v1 hierarchy puts it somewhere (a hybrid machine whose v2 tree is
 * unused): then the name=systemd path, or the cpu, or the memory one. NULL
 * when /proc said nothing.
 */
const char *bp_cg_group_path(const struct bp_cg_mounts *m, const struct bp_cg_paths *p);

/* the path that carries a controller, and its tree: v2 when v2 has it, else its v1 tree */
const char *bp_cg_ctrl_path(const struct bp_cg_mounts *m, const struct bp_cg_paths *p,
			    enum bp_cg_ctrl c, enum bp_cg_tree *tree);

/*
 * The readable unit in a cgroup path, innermost first: a container
 * ("docker:0123456789ab", "containerd:", "crio:", "podman:", "kubepods:",
 * "lxc:NAME"; ids cut to 12 hex digits) where a component shows one, else the
 * innermost systemd unit (NAME.service, NAME.scope, NAME.slice). 0 with the
 * name in out, -ENOENT when the path has none.
 */
int bp_cg_unit(const char *path, char *out, size_t len);

/* the same, and how long the prefix of path is that ends with the unit's component */
int bp_cg_unit_at(const char *path, char *out, size_t len, size_t *prefix_len);

/* ------------------------------------------------------ the cgroups' files */

/* cpu.stat, v1 or v2; times in ns */
struct bp_cg_cpu_stat {
	bool bandwidth;			/* nr_periods and a throttled time were there */
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_ns;		/* v2 throttled_usec, v1 throttled_time */
	bool have_usage;
	uint64_t usage_ns;		/* v2 usage_usec */
};

int bp_cg_parse_cpu_stat(const char *text, struct bp_cg_cpu_stat *st);

/* v2 cpu.max "QUOTA PERIOD" or "max PERIOD": *quota_us -1 for max; 0 or -EINVAL */
int bp_cg_parse_cpu_max(const char *text, int64_t *quota_us, uint64_t *period_us);

/* one number (v1 cpu.cfs_quota_us may be -1); 0 or -EINVAL */
int bp_cg_parse_int(const char *text, int64_t *v);

/* memory.max / memory.high: a number of bytes, or "max" (UINT64_MAX); 0 or -EINVAL */
int bp_cg_parse_mem_limit(const char *text, uint64_t *v);

enum bp_psi_res {
	BP_PSI_CPU = 0,
	BP_PSI_MEMORY,
	BP_PSI_IO,
	BP_PSI__MAX,
};

/* a pressure file: the total= of its "some" and "full" lines, in us */
struct bp_psi_line {
	bool some_valid, full_valid;
	uint64_t some_us, full_us;
};

int bp_cg_parse_psi(const char *text, struct bp_psi_line *l);

/* memory.events (v2) */
struct bp_cg_mem_events {
	uint64_t low, high, max, oom, oom_kill;
};

int bp_cg_parse_mem_events(const char *text, struct bp_cg_mem_events *ev);

/* "KEY VALUE" lines (memory.oom_control, cpu.stat): the value of key; 0 or -ENOENT */
int bp_cg_key_value(const char *text, const char *key, uint64_t *v);

/* ----------------------------------------------------------- reading them */

/*
 * A tree's mount, opened once: files under it are opened inside it
 * (RESOLVE_IN_ROOT), so no path from /proc can lead elsewhere.
 */
struct bp_cg_root {
	int fd;				/* O_PATH of the mount point, -1: none */
	enum bp_cg_tree tree;
	char prefix[BP_CG_PATH_LEN];	/* the mount's root cgroup, stripped from paths */
};

int bp_cg_root_open(const struct bp_cg_mounts *m, enum bp_cg_tree tree, struct bp_cg_root *r);
void bp_cg_root_close(struct bp_cg_root *r);

/* read FILE of cgroup PATH into buf (NUL-terminated); bytes or -errno */
/*
 * The inode of a cgroup's directory: the kernel's id of the cgroup (what
 * bpf_get_current_cgroup_id() and kernfs_node::id give). 0 or -errno.
 */
int bp_cg_ino(const struct bp_cg_root *r, const char *path, uint64_t *ino);

/*
 * The inverse: the path (as /proc shows it) of the cgroup with kernel id id
 * in r's tree, found through a file handle (open_by_handle_at(): root
 * only). 0, -ENOENT (no such cgroup now), -EPERM, -ENAMETOOLONG, -errno.
 */
int bp_cg_id_path(const struct bp_cg_root *r, uint64_t id, char *out, size_t len);

ssize_t bp_cg_read(const struct bp_cg_root *r, const char *path, const char *file, char *buf,
		   size_t len);

/* the CPU bandwidth a cgroup runs under: the nearest ancestor-or-self with a quota */
struct bp_cg_cpu_limit {
	bool valid;			/* the tree has the cpu controller at this path */
	char at[BP_CG_PATH_LEN];	/* the cgroup whose quota applies; "" none */
	int64_t quota_us;		/* -1: no quota anywhere above */
	uint64_t period_us;
	struct bp_cg_cpu_stat stat;	/* cpu.stat of that cgroup (or of path, without a quota) */
};

int bp_cg_cpu_limit_read(const struct bp_cg_root *r, const char *path,
			 struct bp_cg_cpu_limit *l);

/* the memory limit a cgroup runs under, and the events of the cgroup that sets it */
struct bp_cg_mem_limit {
	bool valid;
	char at[BP_CG_PATH_LEN];	/* the cgroup whose limit applies; "" none */
	uint64_t max, high;		/* bytes, UINT64_MAX: none */
	struct bp_cg_mem_events ev;	/* v1: max = memory.failcnt, oom_kill from memory.oom_control */
};

int bp_cg_mem_limit_read(const struct bp_cg_root *r, const char *path,
			 struct bp_cg_mem_limit *l);

/* the three pressure files of a v2 cgroup (or /proc/pressure with path NULL) */
int bp_cg_psi_read(const struct bp_cg_root *r, const char *path, const char *proc_root,
		   struct bp_psi_line out[BP_PSI__MAX]);

/* ------------------------------------------------------------ a process */

/* whose a process is and where it runs, read once and kept */
struct bp_proc_ids {
	bool have_uid;
	uint32_t uid;			/* effective */
	char *user;			/* its name (users.h), NULL unknown */
	char *cgroup;			/* the path to group by, NULL unknown */
	char *cg_v2;			/* the v2 path, NULL none */
	char *cg_ctrl[BP_CGC__MAX];	/* the path carrying the controller, NULL */
	uint8_t ctrl_tree[BP_CGC__MAX];	/* enum bp_cg_tree of that path */
	char *unit;			/* bp_cg_unit() of cgroup, NULL none */
};

/*
 * Read /proc/PID/status (uid) and /proc/PID/cgroup. 0 (what could be read
 * is filled in: a process in a cgroup path boundprof refuses has no
 * cgroup), -ESRCH when it is gone, -ENOMEM.
 */
struct bp_users;
int bp_proc_ids_read(const char *proc_root, pid_t pid, const struct bp_cg_mounts *m,
		     struct bp_users *users, struct bp_proc_ids *ids);
void bp_proc_ids_free(struct bp_proc_ids *ids);

/* the cgroup half of bp_proc_ids_read(), into ids as it is; 0, -ESRCH, -ENOMEM */
int bp_proc_ids_read_groups(const char *proc_root, pid_t pid, const struct bp_cg_mounts *m,
			    struct bp_proc_ids *ids);

/* the same from paths already parsed (or found by id); 0 or -ENOMEM */
int bp_proc_ids_set_groups(const struct bp_cg_mounts *m, const struct bp_cg_paths *cp,
			   struct bp_proc_ids *ids);

/* a deep copy; 0 or -ENOMEM (dst is then empty) */
int bp_proc_ids_copy(struct bp_proc_ids *dst, const struct bp_proc_ids *src);

/*
 * A cgroup named on the command line (-G): a directory under a cgroup mount
 * (/sys/fs/cgroup/unified/a/b), a path as /proc/PID/cgroup shows it (/a/b:
 * the v2 tree first, then the v1 ones), or a unit name (nginx.service,
 * docker:0123456789ab) that a running process's cgroup carries, or that
 * names a directory of the v2 tree.
 */
struct bp_cg_target {
	enum bp_cg_tree tree;
	char path[BP_CG_PATH_LEN];	/* as /proc/PID/cgroup would show it */
	uint64_t id;			/* the kernel's cgroup id: the directory's inode */
	uint32_t level;			/* 0 for the root */
};

/* 0; -ENOENT no such cgroup, -EEXIST a unit name that matches several, -ENOTSUP (errmsg says) */
int bp_cg_resolve(const struct bp_cg_mounts *m, const char *proc_root, const char *arg,
		  struct bp_cg_target *t, char *errmsg, size_t errlen);

#endif /* BP_CGROUP_H */
