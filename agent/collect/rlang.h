/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GNU R processes: finding libR in a process (its exported globals, its
 * version, its context layout checked against its own code), telling the
 * BPF walker where they are, keeping the function names and source files
 * the walker sends, and turning a sampled R stack into frames merged with
 * the native ones (docs/r.md). The same life cycle as collect/python.h.
 */
#ifndef BP_COLLECT_RLANG_H
#define BP_COLLECT_RLANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "boundprof.h"

struct bp_loader;
struct bp_profile;
struct bp_rlang;

struct bp_rlang_stats {
	uint64_t attached;		/* R processes handed to the walker */
	uint64_t unsupported;		/* an R of a version or build we do not know */
	uint64_t names;			/* function names received */
	uint64_t files;			/* source files received */
	uint64_t frames_unnamed;	/* frames whose name never arrived */
	uint64_t loader_waits;		/* R executables looked at again: libR.so not mapped yet */
};

struct bp_rlang *bp_rlang__new(struct bp_loader *l, const char *proc_root);
void bp_rlang__free(struct bp_rlang *r);

/* look at a process (first sample, exec, the start); cheap once looked at */
int bp_rlang__attach(struct bp_rlang *r, pid_t pid);
void bp_rlang__exec(struct bp_rlang *r, pid_t pid);
/* a process's loader is still mapping R's libraries: tick soon (bp_rlang__tick()) */
bool bp_rlang__waiting(const struct bp_rlang *r);
/* pid runs an R whose frames are walked */
bool bp_rlang__walks(struct bp_rlang *r, pid_t pid);
void bp_rlang__exited(struct bp_rlang *r, pid_t pid);
void bp_rlang__retire(struct bp_rlang *r);
/* at each drain: an R still starting (its globals not yet made) is looked at again */
void bp_rlang__tick(struct bp_rlang *r);

/* true for a record of the interpreter ring that is R's (bpf/rlang.h) */
bool bp_rlang__is_event(const void *rec, size_t len);
void bp_rlang__on_event(void *ctx, const void *rec, size_t len);

void bp_rlang__set_profile(struct bp_rlang *r, struct bp_profile *prof);

/*
 * The user part of a stack, root first: the native frames nat[0..nn) with
 * the R stack rs (BP_STACK_R) after the innermost libR frame (at the root
 * when the native walk has none). Into out (room for max); the count, or -errno.
 */
int bp_rlang__merge(struct bp_rlang *r, uint32_t pid, const struct bp_stack *rs,
		    const uint32_t *nat, uint32_t nn, uint32_t *out, uint32_t max);

/* "4.2.2" for an attached process, NULL otherwise */
const char *bp_rlang__version(struct bp_rlang *r, pid_t pid);

const struct bp_rlang_stats *bp_rlang__stats(const struct bp_rlang *r);

#endif /* BP_COLLECT_RLANG_H */
