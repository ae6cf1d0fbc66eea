/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A scaling curve: the same command at several worker counts, each point
 * repeated and profiled. From the runs' wall times: the speedup, the
 * efficiency and the Karp-Flatt serial fraction of each point; from each
 * point's profile: its verdict, and what changed from the point before; and
 * a closing line on where the curve stops paying, why, and what to ask for.
 * Pure: the points come measured (cli/scale.c runs them), so the decisions
 * are unit-tested on synthetic points. The method is docs/scale.md.
 */
#ifndef BP_SCALE_H
#define BP_SCALE_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "analyze/classify.h"
#include "analyze/runs.h"
#include "model/profile.h"

#define BP_SCALE_MAX_POINTS	32
#define BP_SCALE_MAX_REPEATS	100
#define BP_SCALE_MAX_WORKERS	4096
/* a step pays when it gives at least this share of its ideal gain */
#define BP_SCALE_PAYS		0.5
/* other processes using more CPUs than this on average disturb a point */
#define BP_SCALE_DISTURBED	0.25

struct bp_scale_point {
	/* measured: bp_scale_point_measure(), or set by hand */
	uint32_t workers;
	uint32_t nr_runs;
	double wall_s[BP_SCALE_MAX_REPEATS];	/* each run */
	double cpu_s[BP_SCALE_MAX_REPEATS];
	enum bp_class cls;			/* the verdict on the point's profile */
	enum bp_confidence conf;
	double share_cpu, share_mem, share_io, share_lock, share_rq, share_other;
	double share_peer;			/* of wall time, waiting on a pipe neighbour */
	double share_throttled, share_gil;
	double share_syscall;			/* of on-CPU time */
	double parallelism;			/* CPUs used */
	double serial_share;			/* of wall time, one thread ran under a lock the
						 * others waited for (bp_verdict.serial_share) */
	double busy_s;				/* busy thread-seconds of all its runs */
	double duration_s;			/* the point's recording */
	double machine_busy;			/* share of all CPUs busy meanwhile (-1 unknown) */
	double others_cpu_s;			/* CPU seconds other processes used meanwhile */
	char lock_site[160];			/* where most lock waits were, "" unknown */
	double lock_site_share;			/* its share of the lock wait */
	char evidence[BP_VERDICT_LEN];		/* the verdict's first evidence line */

	/* derived: bp_scale_compute() */
	struct bp_spread wall, cpu;
	double speedup;			/* of the median run */
	double speedup_lo, speedup_hi;	/* of the slowest and the fastest run */
	double efficiency;		/* speedup / workers */
	double karp_flatt;		/* (1/S - 1/n) / (1 - 1/n); NAN at the base point */
	double marginal;		/* share of the step's ideal gain it gave; NAN first */
	bool noisy;			/* the runs differ by more than BP_RUNS_NOISY */
	bool oversubscribed;		/* more workers than CPUs */
	bool disturbed;			/* others used more than BP_SCALE_DISTURBED CPUs */
	char note[400];			/* what changed from the point before, "" nothing */
};

struct bp_scale {
	/* given */
	bool weak;			/* the problem grows with the workers */
	uint32_t ncpus;			/* CPUs the command may use */
	uint32_t repeats;
	uint32_t nr_points;		/* ascending, distinct worker counts */
	struct bp_scale_point *pts;
	/* derived */
	int stop;			/* the first point that did not pay; -1: all did */
	int best;			/* the last point before stop (or the last point) */
	char conclusion[1600];		/* where it stops paying and why, and what to ask for */
};

/*
 * A point from its profile: the runs (p->runs), the verdict on the whole
 * recording (sum->overall, after bp_verdicts()), the busiest lock-wait site,
 * the machine's load. pt->workers is the caller's.
 */
void bp_scale_point_measure(struct bp_scale_point *pt, const struct bp_profile *p,
			    const struct bp_summary *sum);

/*
 * Where lock waits were, as the innermost named user frame outside the C
 * library (pthread_mutex_lock's caller): label and its share of all lock
 * wait time. false when there was no lock wait with such a frame.
 */
bool bp_scale_lock_site(const struct bp_profile *p, char *label, size_t len, double *share);

/*
 * Everything derived, from the measured points: spreads, speedups
 * (strong: S = n0 T0 / Tn; weak: S = n T0 / Tn, with n0, T0 the first
 * point's workers and median), efficiency S / n, Karp-Flatt, the flags, the
 * notes and the conclusion. 0, or -EINVAL (no points, unsorted worker counts,
 * a point without runs or with a zero median).
 */
int bp_scale_compute(struct bp_scale *s);

/* Amdahl's speedup on n workers for a serial fraction e */
double bp_scale_amdahl(double e, double n);

#endif /* BP_SCALE_H */
