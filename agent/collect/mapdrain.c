// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "collect/mapdrain.h"

#define BATCH 256

int bp_drain_map(int fd, size_t ksz, size_t vsz, bp_row_fn fn, void *ctx)
{
	char *keys, *vals, *prev = NULL, in[16], out[16];
	bool first = true, batch_ok = true;
	uint32_t count, i;
	int err = 0, ferr = 0, r;

	keys = malloc(BATCH * ksz);
	vals = malloc(BATCH * vsz);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (batch_ok) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);

		count = BATCH;
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
	free(keys);
	free(vals);
	/* a row we could not store is reported, but the map is emptied anyway */
	return err ? err : ferr;
}

