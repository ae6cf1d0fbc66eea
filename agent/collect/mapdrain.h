/* SPDX-License-Identifier: GPL-2.0 */
/* Draining a BPF hash map: read every entry and delete it, in batches. */
#ifndef BP_MAPDRAIN_H
#define BP_MAPDRAIN_H

#include <stddef.h>

/* called for every entry; a non-zero return is reported, the map is emptied anyway */
typedef int (*bp_row_fn)(void *ctx, const void *key, const void *val);

/*
 * Read and delete every entry of a hash map with key size ksz and value size
 * vsz. Programs must be writing elsewhere meanwhile (the double-buffered maps
 * are flipped first), so nothing is added behind our back. Falls back to
 * get_next_key + delete on kernels without batch operations. buf: buffers
 * to use and keep (NULL: this call's own). 0, the first error of fn, or
 * -errno.
 */
/* the batch buffers, kept from one drain to the next by their owner */
struct bp_drain_buf {
	void *keys, *vals;
	size_t kbytes, vbytes;
};

int bp_drain_map(int fd, size_t ksz, size_t vsz, struct bp_drain_buf *buf, bp_row_fn fn,
		 void *ctx);
void bp_drain_buf_free(struct bp_drain_buf *buf);

#endif /* BP_MAPDRAIN_H */
