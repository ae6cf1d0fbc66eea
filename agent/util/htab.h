/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An open-addressing index from a hash to positions in the caller's own
 * array: the caller keeps the entries (dense, iterable, stable indices) and
 * answers "is entry i equal to this key"; the table only stores indices.
 */
#ifndef BP_HTAB_H
#define BP_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bp_htab_slot {
	uint32_t idx1;		/* entry index + 1; 0 = empty */
	uint32_t hash;
};

struct bp_htab {
	struct bp_htab_slot *slots;
	size_t cap;		/* power of two */
	size_t len;
};

typedef bool (*bp_htab_eq_fn)(const void *ctx, uint32_t idx, const void *key);

/* 0 and *idx when found, -ENOENT otherwise */
int bp_htab_find(const struct bp_htab *h, uint64_t hash, bp_htab_eq_fn eq,
		 const void *ctx, const void *key, uint32_t *idx);
/* record that entry idx has this hash (the caller checked it is absent); 0 or -ENOMEM */
int bp_htab_insert(struct bp_htab *h, uint64_t hash, uint32_t idx);
/*
 * forget that entry idx has this hash, for callers that reuse or drop
 * entries; 0, or -ENOENT when it was not recorded
 */
int bp_htab_remove(struct bp_htab *h, uint64_t hash, uint32_t idx);
void bp_htab_clear(struct bp_htab *h);
void bp_htab_free(struct bp_htab *h);

uint64_t bp_hash_bytes(const void *data, size_t len, uint64_t seed);
uint64_t bp_hash_u64(uint64_t v);

#endif /* BP_HTAB_H */
