/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbolization: kernel and user addresses to function names.
 *
 * Kernel addresses resolve through /proc/kallsyms (with module names).
 * User addresses resolve through a per-process snapshot of /proc/PID/maps
 * taken while the process is alive, plus the ELF files it maps, each opened
 * once (through /proc/PID/map_files, so deleted binaries and files inside
 * other mount namespaces work) and shared by every process that maps it.
 * A process that exits keeps its snapshot, so its samples still resolve.
 */
#ifndef BP_SYMBOLS_H
#define BP_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/kallsyms.h"

struct bp_syms;

struct bp_syms_opts {
	/* where procfs is; tests point this at a fake tree (default "/proc") */
	const char *proc_root;
	/* kernel symbol table (default "/proc/kallsyms") */
	const char *kallsyms_path;
	/* root of separate debug files (default "/usr/lib/debug") */
	const char *debug_root;
	/* where perf-PID.map JIT maps live, seen from the process (default "/tmp") */
	const char *perfmap_dir;
	/*
	 * Bytes of DWARF (source lines, inlined functions) held at once, the
	 * files' images as read (libdw's own structures add about a third);
	 * files past it are named without lines. 0: BP_SYMS_DWARF_BUDGET.
	 */
	uint64_t dwarf_budget;
	/*
	 * A file's symbols read on the first lookup that falls in it, not
	 * when a process mapping it is first seen (BP_SYMS_PENDING_MAX): for
	 * a resident symbolizer, which meets many files no sample hits. A
	 * one-shot recording names everything at its end anyway, and reads
	 * at the snapshot what it would otherwise read during a drain, while
	 * the command it records starts.
	 */
	bool lazy;
	/*
	 * Source lines and inlined frames only from a file's own DWARF or a
	 * debug file beside it, never from one under debug_root: those are a
	 * distribution's debug packages (libc6-dbg), code the user did not
	 * write, and libc's and ld.so's DWARF held 5.7 MiB of the agent's
	 * ~21 MiB. Their functions are still named from the debug file's
	 * symbols. For a resident symbolizer.
	 */
	bool dwarf_not_from_root;
};

#define BP_SYMS_DWARF_BUDGET	(128ULL * 1024 * 1024)

/*
 * One resolved frame. Strings are owned by the symbolizer and stay valid until
 * bp_syms__free(), also after the process has been forgotten.
 */
struct bp_frame_info {
	const char *name;	/* function, or NULL when it cannot be named */
	const char *module;	/* never NULL: file basename, kernel module name,
				 * "[kernel]", "[vdso]", "[anon]", "[heap]", "[stack]",
				 * "[unknown]" */
	const char *path;	/* full path of the mapped file, or NULL */
	const char *build_id;	/* lowercase hex GNU build-id, or NULL */
	uint64_t offset;	/* address in module terms: the ELF virtual address
				 * for ELF files (what addr2line -e MODULE takes), the
				 * offset from the kernel/module base for the kernel,
				 * the offset into the mapping otherwise */
	uint64_t sym_offset;	/* address - start of the function (0 if unnamed) */
	bool kernel;
	bool code;		/* user: the address lies in executable memory (a
				 * mapping with 'x', or a JIT perf-map entry); an
				 * unwinder that reaches anything else has left the
				 * stack. Kernel: always true. */
	const char *file;	/* source file, from DWARF, or NULL */
	uint32_t line;		/* its line; 0: unknown */
	bool inlined;		/* inlined into the next frame (resolve_user_inline) */
};

/*
 * Files opened whose symbols wait for their first lookup, each holding its
 * fd (and its debug file's, if any): past this many, a file is parsed at
 * once, so that a machine mapping thousands of distinct files stays within
 * the open-file limit.
 */
#define BP_SYMS_PENDING_MAX	256

struct bp_syms_stats {
	uint64_t processes;		/* processes known (alive or exited) */
	uint64_t files;			/* ELF files held (in use or idle) */
	uint64_t string_bytes;		/* the interned names' arena */
	uint64_t snapshots;		/* /proc/PID/maps reads */
	uint64_t ids_held;		/* snapshots whose owner came from BPF, not /proc */
	uint64_t clones;		/* forked children given their parent's maps, no read */
	uint64_t exe_held;		/* executables known by the stat held with the maps */
	uint64_t inode_held;		/* files known by the fd their inode is held by */
	uint64_t files_opened;		/* distinct ELF files opened */
	uint64_t files_parsed;		/* distinct ELF files whose symbols were loaded */
	uint64_t files_pending;		/* held open, symbols not read: no frame in them yet */
	uint64_t debug_files;		/* separate debug files used */
	uint64_t resolved;		/* addresses named */
	uint64_t unresolved;		/* addresses printed as module+0xOFFSET */
	uint64_t perfmaps_refused;	/* perf map reads refused: a symlink, not a
					 * regular file, another owner, too big */
	uint64_t perfmap_lines_skipped;	/* malformed, too long, or past the memory bound */
	uint64_t maps_lines_skipped;	/* /proc/PID/maps lines malformed, too long,
					 * or past the line bound */
	uint64_t dwarf_bytes;		/* DWARF images held now */
	uint64_t dwarf_over_budget;	/* files whose DWARF did not fit: no lines */
	uint64_t dwarf_root_skipped;	/* files whose DWARF is a distribution's (dwarf_not_from_root) */
};

/* NULL and errno set on failure; opts may be NULL */
struct bp_syms *bp_syms__new(const struct bp_syms_opts *opts);
void bp_syms__free(struct bp_syms *s);

/*
 * Reads kallsyms; 0 or -errno. Without it kernel frames stay unnamed. After
 * bp_syms__prefetch_kernel() it takes that read's result (waiting for it).
 */
int bp_syms__load_kernel(struct bp_syms *s);

/*
 * Starts reading kallsyms (~80 ms of CPU) on a thread of its own, so that
 * it overlaps other start-up work instead of delaying the first events;
 * bp_syms__load_kernel() takes the result. names (n of them, NULL for
 * none; they must outlive the thread) are the functions whose ranges
 * bp_syms__kernel_ranges_each() will be asked for: that thread finds them
 * while the symbols it just read are in its cache (a pass over 121,000
 * names took 7 ms on the thread that waited for it). 0 or -errno (then
 * load it synchronously).
 */
int bp_syms__prefetch_kernel(struct bp_syms *s, const char *const *names, size_t n);

/*
 * Read /proc/PID/maps now and open the files it maps (not yet parsing them),
 * so that the process can exit without losing its symbols. Calling it again
 * for a live process refreshes the snapshot (new dlopen()s, JIT code).
 * 0, -ESRCH when the process is gone, or another -errno.
 */
int bp_syms__snapshot(struct bp_syms *s, pid_t pid);

/*
 * Whose pid is, as BPF read it at its first sample (euid, pid in its own
 * namespace, mount namespace inode; 0 for what it could not read): the
 * snapshots of pid until bp_syms__drop_ids() take these instead of reading
 * /proc/PID/status and /proc/PID/ns/mnt. One process at a time.
 */
void bp_syms__hold_ids(struct bp_syms *s, pid_t pid, uid_t euid, pid_t nspid, uint64_t mnt_ns);
void bp_syms__drop_ids(struct bp_syms *s);

/*
 * A child (to) that has not exec'd since its fork maps what its parent
 * (from) mapped, at the same addresses: it takes the parent's maps, held
 * as of as_of_ns (CLOCK_MONOTONIC: when the child was seen still in that
 * image), with no /proc read. Its owner, pid in its namespace and mount
 * namespace are the child's own (as bp_syms__hold_ids() takes them).
 * 0; -ENOENT when the parent holds no live maps, -ESTALE when they were
 * read before not_before_ns (the parent's own exec), -EPERM when the
 * child's owner is not the one its parent's files were opened as,
 * -EEXIST when the child's pid holds maps already: the caller reads
 * /proc instead. -ENOMEM.
 */
int bp_syms__clone(struct bp_syms *s, pid_t from, pid_t to, uid_t euid, pid_t nspid,
		   uint64_t mnt_ns, uint64_t not_before_ns, uint64_t as_of_ns);

/* when the maps held for pid were read (CLOCK_MONOTONIC ns), 0 if none are */
uint64_t bp_syms__snapshot_ns(struct bp_syms *s, pid_t pid);

/*
 * An exec replaced pid's image while samples of it wait in the maps: the
 * maps held for pid (read before the exec) are kept as the image numbered
 * image (the low 16 bits of task->self_exec_id, bpf/boundprof.h) for its
 * stacks to be named by, until bp_syms__drop_images(); pid holds none
 * until its next snapshot. 0, -ENOENT (no maps held), -EBUSY (an image of
 * pid is kept already: the caller drains instead).
 */
int bp_syms__keep_image(struct bp_syms *s, pid_t pid, uint16_t image);

/* whether image is pid's kept one */
bool bp_syms__kept_image(struct bp_syms *s, pid_t pid, uint16_t image);

/* every map a kept image served has been drained: they go */
void bp_syms__drop_images(struct bp_syms *s);

/* the process has exited: keep what we have, never read /proc/PID again */
void bp_syms__exited(struct bp_syms *s, pid_t pid);

/*
 * Bounded memory in continuous mode, called once a window: processes that
 * had exited (or are found gone) at the previous call are dropped, those
 * gone now are marked to be dropped at the next. Returns how many left.
 */
uint32_t bp_syms__retire(struct bp_syms *s);
/* the same, with the pids alive read once by the caller (pidset.h); NULL: each asked of /proc */
struct bp_pidset;
uint32_t bp_syms__retire_live(struct bp_syms *s, const struct bp_pidset *live);

/* drop everything about a process (bounded memory in continuous mode) */
void bp_syms__forget(struct bp_syms *s, pid_t pid);

/*
 * Resolve a kernel address, or a user address of process pid. A process not
 * yet snapshotted is snapshotted on the spot if still alive; an address that
 * falls outside the snapshot triggers one refresh if the process is alive.
 * Always fills *out (an unnamed frame has name == NULL and a module);
 * returns 0 when named, -ENOENT when not.
 */
int bp_syms__resolve_kernel(struct bp_syms *s, uint64_t addr, struct bp_frame_info *out);
int bp_syms__resolve_user(struct bp_syms *s, pid_t pid, uint64_t addr,
			  struct bp_frame_info *out);

/*
 * The frames at a user address, innermost first: the functions inlined
 * there (from the DWARF, each inlined into the next), then the function
 * itself, which is what bp_syms__resolve_user() gives. At most max (the
 * inlined ones nearest the function are kept); returns how many (>= 1),
 * each filled as bp_syms__resolve_user() fills its frame, or -EINVAL.
 */
int bp_syms__resolve_user_inline(struct bp_syms *s, pid_t pid, uint64_t addr,
				 struct bp_frame_info *out, int max);

/* the same, in pid's kept image image (bp_syms__keep_image()); never a refresh */
int bp_syms__resolve_image_inline(struct bp_syms *s, pid_t pid, uint16_t image, uint64_t addr,
				 struct bp_frame_info *out, int max);

void bp_syms__stats(const struct bp_syms *s, struct bp_syms_stats *out);

/* our vdso image, which is every 64-bit process's: NULL when unreadable */
const void *bp_syms__vdso_image(struct bp_syms *s, size_t *size);

/*
 * Address ranges of core-kernel functions named names[i] (or names[i].SUFFIX),
 * after bp_syms__load_kernel(), in one pass: fn(ctx, i, start, end) for each.
 * Nothing without kernel symbols.
 */
void bp_syms__kernel_ranges_each(const struct bp_syms *s, const char *const *names, size_t n,
				 bp_ksym_range_fn fn, void *ctx);

#endif /* BP_SYMBOLS_H */
