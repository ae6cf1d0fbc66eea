/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A profile cut down to some processes: what the agent hands a user who
 * asked over its local socket. Everything about the other processes is
 * left out (samples, their stacks and frames, names, command lines, IO
 * rows, who woke whom, network peers, cgroups); what the machine did as a
 * whole (CPU busy share, pressure, block devices, loss counters) stays, as
 * aggregates. See docs/agent.md, "Profiling without root".
 */
#ifndef BP_RESTRICT_H
#define BP_RESTRICT_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"

/* whether pid's data may go into the profile */
typedef bool (*bp_keep_pid_fn)(uint32_t pid, void *ctx);

/*
 * Add into dst what src holds about the processes keep() takes: like
 * bp_profile__merge(), but frames and stacks only of their samples, wake
 * rows only where waker and woken are both kept, and cgroups only where a
 * kept process runs. keep is asked once per process of src. 0 or -ENOMEM.
 */
int bp_profile__merge_only(struct bp_profile *dst, const struct bp_profile *src,
			   bp_keep_pid_fn keep, void *ctx);

/* roughly the heap p holds, in bytes: for per-user memory limits */
uint64_t bp_profile__bytes(const struct bp_profile *p);

#endif /* BP_RESTRICT_H */
