/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collect: drain one buffer of the BPF aggregation maps into the profile,
 * symbolizing every stack while the processes' symbol snapshots are fresh,
 * and leave the buffer empty for its next turn.
 */
#ifndef BP_COLLECT_H
#define BP_COLLECT_H

#include <stdint.h>

#include "collect/drainpol.h"

struct bp_loader;
struct bp_syms;
struct bp_profile;
struct bp_proc;
struct bp_python;

struct bp_collect;

/* called for a process seen in a drain for the first time (fill in its metadata) */
typedef void (*bp_new_proc_fn)(void *ctx, struct bp_proc *proc);

struct bp_collect_stats {
	uint64_t drains;
	uint64_t light_drains;		/* of them: for an exec, without the task iterator */
	uint64_t rows;			/* aggregated rows read */
	uint64_t missing_stacks;	/* a row referred to a stack the map no longer held */
	uint64_t frames_resolved;
	uint64_t frames_unnamed;
	uint64_t user_stacks_cut;	/* user stacks ended at a non-code return address */
	uint64_t off_rows;		/* off-CPU rows read */
	/* the latest drain alone, for how full the maps got */
	uint64_t last_rows, last_off_rows, last_kstacks, last_ustacks;
	uint64_t thread_records;	/* thread totals received */
};

struct bp_collect *bp_collect__new(struct bp_loader *l, struct bp_syms *syms,
				   struct bp_profile *prof, bp_new_proc_fn fn, void *ctx);
void bp_collect__free(struct bp_collect *c);

/*
 * Start tracking every thread of the profiled processes (their current
 * state, for the wall-clock accounting). Call once, right after attaching.
 */
int bp_collect__track(struct bp_collect *c);

/* merge Python stacks into the samples' stacks, through py (NULL: none) */
void bp_collect__set_python(struct bp_collect *c, struct bp_python *py);
/* R stacks are merged into the user stacks from then on */
struct bp_rlang;
void bp_collect__set_rlang(struct bp_collect *c, struct bp_rlang *rl);

/* fill another profile from now on (the agent's slices) */
void bp_collect__set_profile(struct bp_collect *c, struct bp_profile *prof);

/*
 * Flip the buffers and drain the one the programs just left; 0 or -errno.
 * A full drain first has every thread's open interval closed into the
 * buffer (the task iterator, the costly part); a light one only takes the
 * samples and stacks already there, which is all an exec needs: its old
 * image's stacks named against the old maps.
 */
int bp_collect__drain(struct bp_collect *c, bool full);

/*
 * What the BPF side added since the last drain calls for now (drainpol.h);
 * forced: a window ends or a capture wants its second.
 */
enum bp_drain_need bp_collect__due(struct bp_collect *c, bool forced);
/* the drain policy, as bp_collect__due() last left it */
const struct bp_drainpol *bp_collect__policy(const struct bp_collect *c);

const struct bp_collect_stats *bp_collect__stats(const struct bp_collect *c);

/*
 * When the last full drain cut the maps (CLOCK_MONOTONIC ns, as bp_now_ns()):
 * what it read ends there, however long naming it took after. 0 before the
 * first.
 */
uint64_t bp_collect__cut_ns(const struct bp_collect *c);

#endif /* BP_COLLECT_H */
