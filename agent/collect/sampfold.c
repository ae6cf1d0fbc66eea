// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/sampfold.h"

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_sampfold *f = ctx;

	return !memcmp(&f->v[idx].key, key, sizeof(struct bp_oncpu_key));
}

static int grow(struct bp_sampfold *f)
{
	uint32_t cap = f->cap ? 2 * f->cap : 256;
	struct bp_sampfold_row *v;

	if (cap < f->cap)
		return -ENOMEM;
	v = realloc(f->v, (size_t)cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	f->v = v;
	f->cap = cap;
	return 0;
}

int bp_sampfold__add(struct bp_sampfold *f, const struct bp_oncpu_rec *r)
{
	struct bp_sampfold_row *row;
	uint32_t idx, nr;
	uint64_t h;
	int err;

	nr = r->nr;
	if (nr > BP_SHORT_STACK_DEPTH)
		return -EINVAL;
	h = bp_hash_bytes(&r->key, sizeof(r->key), 0);
	if (!bp_htab_find(&f->h, h, key_eq, f, &r->key, &idx)) {
		row = &f->v[idx];
		row->val.samples++;
		row->val.ns += r->ns;
		f->samples++;
		return 0;
	}
	if (f->n == f->cap) {
		err = grow(f);
		if (err)
			return err;
	}
	err = bp_htab_insert(&f->h, h, f->n);
	if (err)
		return err;
	row = &f->v[f->n++];
	row->key = r->key;
	row->val.samples = 1;
	row->val.ns = r->ns;
	memcpy(row->val.comm, r->comm, sizeof(row->val.comm));
	row->val.ustk.nr = nr;
	row->val.ustk.flags = r->flags;
	memcpy(row->val.ustk.ips, r->ips, nr * sizeof(r->ips[0]));
	f->samples++;
	return 0;
}

void bp_sampfold__reset(struct bp_sampfold *f)
{
	f->n = 0;
	bp_htab_clear(&f->h);
}

void bp_sampfold__free(struct bp_sampfold *f)
{
	free(f->v);
	bp_htab_free(&f->h);
	memset(f, 0, sizeof(*f));
}
