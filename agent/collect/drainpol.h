/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When the always-on agent drains its maps. Draining every second costs the
 * same on an idle machine as on a busy one: the task iterator over every
 * thread, a buffer flip, a batch read of every map, a new slice merged into
 * the window. Most of those seconds bring a handful of rows. The BPF side
 * counts what it adds (rows, on-CPU samples: cumulative counters in its
 * .bss, read without a system call), and the maps are drained only when
 *   - the window closes or a capture is under way (full: with the task
 *     iterator, as before);
 *   - a process may be busy enough for the memory probe, which wants a
 *     fresh CPU rate every few seconds (light, busy_every_s apart: the
 *     rates come from the samples, not the iterator), unless the session
 *     finds that processes too small to probe ran it all
 *     (bp_session__due(), from busy_samples and busy_s);
 *   - the rows added to one map (enum bp_pend_map) fill a quarter of it
 *     (light: flip and drain, no iterator).
 * A map keeps 3/4 of its room for the second until the next look: at
 * least three seconds of the on-CPU map's worst case (each sample a new
 * row; the map holds four seconds' worth or more: 15 s at 99 Hz on 2
 * CPUs), and each map more rows than the rule before left (an eighth of
 * the smallest map, counted over all maps); drops stay counted in
 * bpf/counters.h. Pure logic, unit-tested (tests/unit/test_drainpol.c).
 */
#ifndef BP_DRAINPOL_H
#define BP_DRAINPOL_H

#include <stdbool.h>
#include <stdint.h>

#include "boundprof.h"

/* the BPF side's cumulative counts */
struct bp_drain_pend {
	uint64_t rows[BP_PEND__MAX];	/* rows added to each double-buffered map */
	uint64_t samples;	/* on-CPU samples */
};

enum bp_drain_need {
	BP_DRAIN_NONE,
	BP_DRAIN_LIGHT,		/* flip and drain the maps */
	BP_DRAIN_FULL,		/* ... after the task iterator */
};

/* why the last decision drained (for /metrics and the log) */
enum bp_drain_why {
	BP_DRAIN_WHY_NONE,
	BP_DRAIN_WHY_FORCED,	/* window end, capture */
	BP_DRAIN_WHY_BUSY,
	BP_DRAIN_WHY_ROWS,
	BP_DRAIN_WHY__MAX,
};

struct bp_drainpol {
	uint32_t row_limit[BP_PEND__MAX];	/* rows in a map that make a drain due */
	int why_map;		/* the map that made a BP_DRAIN_WHY_ROWS decision */
	double busy_rate;	/* samples per second that may mean a busy process; 0: off */
	double busy_every_s;	/* at most this long between drains while busy */
	struct bp_drain_pend last;	/* at the last flip */
	struct bp_drain_pend last_busy;	/* at the last drain the memory probe heard of */
	uint64_t last_busy_ns;
	enum bp_drain_why why;
	/* a BP_DRAIN_WHY_BUSY decision's samples, over busy_s seconds */
	uint64_t busy_samples;
	double busy_s;
};

/*
 * entries: each double-buffered map's size (0: not created, never due);
 * busy_rate as above (hz * the memory probe's minimum CPU share).
 */
void bp_drainpol__init(struct bp_drainpol *p, const uint32_t entries[BP_PEND__MAX],
		       double busy_rate, double busy_every_s);

/* what is due now, given the counts now; forced: the window ends, a capture */
enum bp_drain_need bp_drainpol__decide(struct bp_drainpol *p, const struct bp_drain_pend *now,
				       uint64_t now_ns, bool forced);

/* a flip happened with these counts (full: after the iterator) */
void bp_drainpol__flipped(struct bp_drainpol *p, const struct bp_drain_pend *at, uint64_t now_ns,
			  bool full);

/* the name of a map of enum bp_pend_map, for the log */
const char *bp_drainpol__map_name(int map);

#endif /* BP_DRAINPOL_H */
