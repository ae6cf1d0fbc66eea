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

/* the whole profile as .pb.gz bytes; 0 or -errno */
int bp_pprof_write(const struct bp_profile *p, struct bp_buf *out);

/*
 * Read .pb.gz (or uncompressed) bytes back into a new profile. A pprof file
 * written by another tool loads too (its samples, without boundprof's extra
 * state). NULL and errno (EINVAL: not a profile; errmsg says why, in one
 * line) on failure.
 */
struct bp_profile *bp_pprof_read(const void *data, size_t len, char *errmsg, size_t errlen);

#endif /* BP_PPROF_H */
