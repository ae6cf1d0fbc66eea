/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unwind tables for the BPF walker (bpf/unwind.bpf.h): one table per file,
 * built from its CFI (symbolize/dwarf_cfi.h) the first time a sampled
 * process maps it, shared by every process that maps the same file (by
 * build-id, else by device, inode, size and mtime), and loaded into the
 * unwind_rows array within a memory budget; plus, per process, the list of
 * its executable mappings with the table of each (unwind_procs).
 *
 * A table that does not fit evicts tables no process uses any more, oldest
 * first; if it still does not fit, that file is walked by its frame
 * pointers and counted (uw_tables_over_budget).
 */
#ifndef BP_COLLECT_UNWIND_H
#define BP_COLLECT_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bp_loader;
struct bp_syms;
struct bp_unwind;

/* the default budget: 2 Mi rows, a few dozen large programs' files */
#define BP_UNWIND_MEM_DEFAULT	(16ULL * 1024 * 1024)
/* what --unwind-mem takes: 0 (frame pointers only) or 64 KiB to 2 GiB */
#define BP_UNWIND_MEM_MIN	(64ULL * 1024)
#define BP_UNWIND_MEM_MAX	(2ULL * 1024 * 1024 * 1024)
/* processes with tables in the kernel at once */
#define BP_UNWIND_PROCS		4096
/* files BPF finds a table for by their inode (a list's bridge), at once */
#define BP_UNWIND_FILES		1024
/* mappings the bridge keeps, all processes (4 each at most); full: found again each walk */
#define BP_UNWIND_BRIDGES	4096

struct bp_unwind_stats {
	uint64_t budget_bytes;		/* the rows array, at most */
	uint64_t kernel_bytes;		/* ... its chunks added so far, as the kernel charges them */
	uint64_t used_bytes;		/* rows loaded */
	uint64_t used_peak_bytes;	/* ... at most, so far */
	uint64_t procs_bytes;		/* per-process mapping lists, as the kernel holds them */
	uint64_t procs_peak_bytes;	/* ... at most, so far */
	uint64_t rows;			/* rows loaded */
	uint64_t slots;			/* ... with their tables' indexes */
	uint64_t files;			/* files with a table loaded */
	uint64_t files_nocfi;		/* files without CFI (frame pointers) */
	uint64_t files_over_budget;	/* files whose table did not fit, now */
	uint64_t over_budget;		/* tables that did not fit, cumulative */
	uint64_t evicted;		/* tables dropped to make room */
	uint64_t procs;			/* processes with mappings loaded */
	uint64_t procs_peak;
	uint64_t procs_full;		/* processes refused: unwind_procs full */
	uint64_t updates;		/* mapping lists written */
	uint64_t build_ns;		/* time spent building tables */
};

/* l's unwind maps were sized for budget_bytes (bp_loader_opts.unwind_rows) */
int bp_unwind__new(struct bp_loader *l, struct bp_syms *syms, struct bp_unwind **out);
void bp_unwind__free(struct bp_unwind *u);

/*
 * The process's mappings changed, or are new (call while it lives): read
 * its maps, build the tables its files need, then write its list. A list the same as the one written last is written
 * again only with force: writing clears the BPF side's "missed" mark, and
 * with it the permission to report the next miss. 0 written, 1 the same
 * and not written, -ESRCH, or another -errno (logged once).
 */
int bp_unwind__update(struct bp_unwind *u, pid_t pid, bool force);

/*
 * The last bp_unwind__update() ran out of its time slice and listed some
 * files without their tables (walked by frame pointers meanwhile): update
 * the process again soon, after other events, to build the rest.
 */
bool bp_unwind__deferred(const struct bp_unwind *u);

/* the process exited or exec'd: its list goes, its files' tables may be evicted */
void bp_unwind__forget(struct bp_unwind *u, pid_t pid);

/* forget processes that are gone (an exit event can be lost); how many */
uint32_t bp_unwind__sweep(struct bp_unwind *u);
/* the same, with the pids alive read once by the caller (pidset.h) */
struct bp_pidset;
uint32_t bp_unwind__sweep_live(struct bp_unwind *u, const struct bp_pidset *live);

/*
 * Build the table of a file of ours, or of a command about to run, before
 * any process maps it (kept until evicted). 0 or -errno.
 */
int bp_unwind__preload(struct bp_unwind *u, const char *path);

void bp_unwind__stats(const struct bp_unwind *u, struct bp_unwind_stats *out);

#endif /* BP_COLLECT_UNWIND_H */
