/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Block IO: per-device and per-process request counts, bytes, latency
 * histograms and device busy time, from the block tracepoints (see
 * docs/blockio.md), drained into the profile with the other maps.
 */
#ifndef BP_BLOCKIO_H
#define BP_BLOCKIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct boundprof_bpf;
struct bp_profile;
struct bp_blockio;
struct bp_kbtf;

/*
 * Before load: enable the programs this kernel supports (block_io_start/done,
 * else block_rq_issue/complete), as its BTF kb tells, and size the maps.
 * 0 or -errno.
 */
int bp_blockio__prepare(struct boundprof_bpf *skel, uint32_t io_entries,
			const struct bp_kbtf *kb);

/* after attach: remember where the devices' counters start; NULL and errno */
struct bp_blockio *bp_blockio__new(struct boundprof_bpf *skel, const char *sysfs_root);

/* drain buffer idx (the loader has flipped away from it) into the profile */
int bp_blockio__drain(struct bp_blockio *b, int idx, struct bp_profile *p);

/*
 * Before the last drain of a window: end the tracked requests whose request
 * structure no longer holds them (they ended, unheard of), so that they
 * count in this window. 0 or -errno; 0 when the kernel cannot run it.
 */
int bp_blockio__sweep(struct bp_blockio *b);

/* end of the window: device busy time and peaks since bp_blockio__new() */
int bp_blockio__finish(struct bp_blockio *b, struct bp_profile *p);

/* start measuring busy time afresh: call after finishing one window, for the next */
int bp_blockio__rebase(struct bp_blockio *b);

void bp_blockio__free(struct bp_blockio *b);

/*
 * Requests that ended without a completion event reaching the programs
 * (found when their request structure was reused or freed): counted in ops and
 * bytes, not in latencies. 0 when IO is not traced.
 */
uint64_t bp_blockio__unseen(const struct bp_blockio *b);

/*
 * Name of a block device from its kernel dev_t (major << 20 | minor):
 * DEVNAME in <sysfs_root>/dev/block/MAJOR:MINOR/uevent. 0 or -errno.
 */
int bp_blockio_dev_name(const char *sysfs_root, uint32_t dev, char *buf, size_t len);

#endif /* BP_BLOCKIO_H */
