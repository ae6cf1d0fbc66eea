/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Threads that take turns on a lock: one runs while the others wait for
 * the lock it holds. Judged from overlap, not from each thread's share of
 * lock wait: the kernel side counts, per process, the time at least one
 * thread ran while another wanted to (runnable or waiting on a lock), and
 * the part of it with exactly one running while another waited on a lock
 * or, woken from one, had not run yet (bp_turns_advance() in bpf/rules.h).
 * Their ratio, the turn share, stays near 1 whether the mutex hands over
 * (fair) or the holder takes it back before the woken waiter runs
 * (glibc's default), where each thread's lock share swings between runs.
 * The lock is named by where its waiters waited: the innermost frame
 * outside the C library on their stacks, pthread_mutex_lock's caller.
 * Method and thresholds: docs/classification.md ("Threads taking turns").
 */
#ifndef BP_ANALYZE_TURNS_H
#define BP_ANALYZE_TURNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/classify.h"
#include "model/profile.h"

/*
 * Where lock waits were, as the innermost named frame outside the C
 * library and the loader (pthread_mutex_lock's caller), for one process
 * (pid 0: all): its label and its share of that lock wait time. false when
 * no lock wait had such a frame.
 */
bool bp_lock_site(const struct bp_profile *p, uint32_t pid, char *label, size_t len,
		  double *share);

/*
 * The turn-taking evidence of one process (pid 0: every process of the
 * profile, summed) into e: turn_s, want_s, turn_threads, sibling_wake and
 * the lock's site. Leaves e->turns_valid false without a timeline.
 */
void bp_turns_evidence(const struct bp_profile *p, uint32_t pid, struct bp_evidence *e);

/*
 * Whether the evidence shows threads taking turns on a lock, and how sure
 * that is: BP_CONF_HIGH or BP_CONF_MEDIUM, or -1 when it does not.
 * *share: the turn share (turn_s / want_s), also when it does not.
 */
int bp_turns_judge(const struct bp_evidence *e, const struct bp_thresholds *t, double *share);

#endif /* BP_ANALYZE_TURNS_H */
