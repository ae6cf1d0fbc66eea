/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An interpreter's first sample can come while the dynamic loader is still
 * mapping its libraries (libpython, libR.so, libc): such a process is
 * looked at again at every tick, for at most BP_LOADWAIT_NS: on a loaded
 * machine or a cold disk the loader can take seconds. Python's and R's
 * walkers share this state.
 */
#ifndef BP_LOADWAIT_H
#define BP_LOADWAIT_H

#include <stdbool.h>
#include <stdint.h>

/* how long a loader may take before the process is taken as not an interpreter */
#define BP_LOADWAIT_NS		(30ULL * 1000000000ULL)

struct bp_loadwait {
	uint64_t first_ns;	/* first looked at; 0: not yet */
	bool waiting;		/* to be looked at again at the next tick */
};

enum bp_loadwait_res {
	BP_LOADWAIT_GAVE_UP,	/* waited BP_LOADWAIT_NS in vain: stop looking */
	BP_LOADWAIT_AGAIN,	/* still waiting */
	BP_LOADWAIT_NEW,	/* waiting from now on */
};

/* what is not mapped yet at @now: wait on, or give up */
enum bp_loadwait_res bp_loadwait__still(struct bp_loadwait *w, uint64_t now);

static inline void bp_loadwait__done(struct bp_loadwait *w)
{
	w->waiting = false;
}

#endif /* BP_LOADWAIT_H */
