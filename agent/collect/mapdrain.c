// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "collect/mapdrain.h"

/*
 * Entries per batch: at most 256, and at most 64 KiB of values (a stack is
 * 1 KiB). Smaller than malloc's mmap threshold, and kept by the caller from
 * one drain to the next: a buffer mapped and unmapped at every drain cost
 * a TLB shootdown on every CPU and its pages faulted in again, a tenth of
 * the agent's CPU under process churn (an exec of a sampled process drains).
 */
#define BATCH_MAX	256
#define BATCH_BYTES	(64 * 1024)

static int buf_grow(void **p, size_t *have, size_t want)
{
	void *n;

	if (*have >= want)
		return 0;
	n = realloc(*p, want);
	if (!n)
		return -ENOMEM;
	*p = n;
	*have = want;
	return 0;
}

void bp_drain_buf_free(struct bp_drain_buf *b)
{
	free(b->keys);
	free(b->vals);
	memset(b, 0, sizeof(*b));
}

int bp_drain_map(int fd, size_t ksz, size_t vsz, struct bp_drain_buf *buf, bp_row_fn fn,
		 void *ctx)
{
	struct bp_drain_buf local = {};
	struct bp_drain_buf *b = buf ? buf : &local;
	size_t big = ksz > vsz ? ksz : vsz, batch = BATCH_BYTES / (big ? big : 1);
	char *keys, *vals, *prev = NULL, in[16], out[16];
	bool first = true, batch_ok = true;
	uint32_t count, i;
	int err = 0, ferr = 0, r;

	if (batch > BATCH_MAX)
		batch = BATCH_MAX;
	if (batch < 1)
		batch = 1;
	if (buf_grow(&b->keys, &b->kbytes, batch * ksz) ||
	    buf_grow(&b->vals, &b->vbytes, batch * vsz)) {
		err = -ENOMEM;
		goto out;
	}
	keys = b->keys;
	vals = b->vals;
	while (batch_ok) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		count = (uint32_t)batch;
		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : in, out, keys, vals,
						      &count, &opts);
		if (err && err != -ENOENT) {
			/* 524: the kernel's internal ENOTSUPP */
			if (first && (err == -EINVAL || err == -EOPNOTSUPP || err == -524)) {
				batch_ok = false;
				err = 0;
				break;
			}
			goto out;
		}
		for (i = 0; i < count; i++) {
			r = fn(ctx, keys + i * ksz, vals + i * vsz);
			if (r && !ferr)
				ferr = r;
		}
		if (err == -ENOENT) {
			err = 0;
			goto out;
		}
		memcpy(in, out, sizeof(in));
		first = false;
	}

	/* fallback: one key at a time */
	for (;;) {
		err = bpf_map_get_next_key(fd, prev, keys);
		if (err) {
			err = err == -ENOENT ? 0 : err;
			break;
		}
		if (bpf_map_lookup_elem(fd, keys, vals) == 0) {
			r = fn(ctx, keys, vals);
			if (r && !ferr)
				ferr = r;
		}
		bpf_map_delete_elem(fd, keys);
		/* deleted keys restart the walk from the first key */
		prev = NULL;
	}
out:
	if (!buf)
		bp_drain_buf_free(&local);
	/* a row we could not store is reported, but the map is emptied anyway */
	return err ? err : ferr;
}

