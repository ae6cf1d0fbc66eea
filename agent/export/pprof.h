/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pprof: boundprof's save format. A gzip-compressed profile.proto that any
 * pprof reader understands (go tool pprof, Pyroscope, Grafana, speedscope)
 * and that carries everything else the reports need, so that a saved profile
 * re-renders every output with the same numbers. See docs/formats.md.
 */
#ifndef BP_PPROF_H
#define BP_PPROF_H

#include "util/buf.h"
#include "model/profile.h"

/*
 * What bp_pprof_read() reads at most. Each bound is checked before the work
 * it bounds, so that a small file cannot ask for memory or time out of
 * proportion to its size (485 bytes once asked for 100 million frames); all
 * sit far above what a recording writes (docs/pprof.md, "Bounds").
 */
#define BP_PPROF_MAX_INFLATED	(128u << 20)	/* bytes of profile.proto, decompressed */
/* strings, samples, locations, functions, mappings, sample types, comments: each */
#define BP_PPROF_MAX_RECORDS	(1u << 22)
#define BP_PPROF_MAX_LINES	256		/* lines (frames) of one location */
#define BP_PPROF_MAX_ALL_LINES	(1u << 23)	/* lines of all locations */
#define BP_PPROF_MAX_DEPTH	4096		/* frames (and locations) of one stack */
#define BP_PPROF_MAX_FRAMES	(1u << 26)	/* frames of all samples (and of the state's stacks) */
#define BP_PPROF_MAX_STATE	(64u << 20)	/* bytes of boundprof's state document */
#define BP_PPROF_MAX_PROCS	(1u << 16)	/* processes */
#define BP_PPROF_MAX_THREADS	(1u << 18)	/* threads of all processes */
#define BP_PPROF_MAX_PROC_THREADS (1u << 15)	/* threads of one process */
#define BP_PPROF_MAX_IO_DEVS	(1u << 12)	/* block devices */
#define BP_PPROF_MAX_IO_ROWS	(1u << 18)	/* (device, process, direction) IO rows */
#define BP_PPROF_MAX_WAKE_ROWS	(1u << 20)	/* (woken process, waker, class) rows */
#define BP_PPROF_MAX_NET_ROWS	(1u << 18)	/* (process, network peer) rows */
#define BP_PPROF_MAX_RUNS	(1u << 16)	/* runs of a repeated COMMAND */
#define BP_PPROF_MAX_CGROUPS	(1u << 16)	/* cgroups with their accounting */

/* the whole profile as .pb.gz bytes; 0 or -errno */
int bp_pprof_write(const struct bp_profile *p, struct bp_buf *out);

/*
 * Read .pb.gz (or uncompressed) bytes back into a new profile. A pprof file
 * written by another tool loads too (its samples, without boundprof's extra
 * state). NULL and errno on failure: EINVAL, not a profile; E2BIG, past one
 * of the bounds above; ENOMEM. errmsg says why, in one line.
 */
struct bp_profile *bp_pprof_read(const void *data, size_t len, char *errmsg, size_t errlen);

#endif /* BP_PPROF_H */
