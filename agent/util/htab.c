// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/htab.h"

uint64_t bp_hash_u64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t bp_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	uint64_t w;

	while (len >= 8) {
		memcpy(&w, p, 8);
		h = (h ^ bp_hash_u64(w)) * 0x9e3779b97f4a7c15ULL;
		p += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, p, len);
	h ^= bp_hash_u64(w ^ len);
	return bp_hash_u64(h);
}

int bp_htab_find(const struct bp_htab *h, uint64_t hash, bp_htab_eq_fn eq,
		 const void *ctx, const void *key, uint32_t *idx)
{
	uint32_t hv = (uint32_t)hash;
	size_t mask, i;

	if (!h->cap)
		return -ENOENT;
	mask = h->cap - 1;
	for (i = hv & mask;; i = (i + 1) & mask) {
		const struct bp_htab_slot *s = &h->slots[i];

		if (!s->idx1)
			return -ENOENT;
		if (s->hash == hv && eq(ctx, s->idx1 - 1, key)) {
			*idx = s->idx1 - 1;
			return 0;
		}
	}
}

static void place(struct bp_htab_slot *slots, size_t cap, uint32_t hv, uint32_t idx1)
{
	size_t i, mask = cap - 1;

	for (i = hv & mask; slots[i].idx1; i = (i + 1) & mask)
		;
	slots[i].idx1 = idx1;
	slots[i].hash = hv;
}

int bp_htab_insert(struct bp_htab *h, uint64_t hash, uint32_t idx)
{
	/* keep the load factor at or under 1/2 so probe chains stay short */
	if ((h->len + 1) * 2 > h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 64, i;
		struct bp_htab_slot *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (i = 0; i < h->cap; i++)
			if (h->slots[i].idx1)
				place(ns, ncap, h->slots[i].hash, h->slots[i].idx1);
		free(h->slots);
		h->slots = ns;
		h->cap = ncap;
	}
	place(h->slots, h->cap, (uint32_t)hash, idx + 1);
	h->len++;
	return 0;
}

int bp_htab_remove(struct bp_htab *h, uint64_t hash, uint32_t idx)
{
	uint32_t hv = (uint32_t)hash;
	size_t mask, i, j;

	if (!h->cap)
		return -ENOENT;
	mask = h->cap - 1;
	for (i = hv & mask; h->slots[i].idx1 != idx + 1; i = (i + 1) & mask)
		if (!h->slots[i].idx1)
			return -ENOENT;
	/*
	 * No tombstones: close the gap by moving back each later entry of the
	 * run whose probe path crosses it, so find() can still stop at the
	 * first empty slot.
	 */
	for (j = (i + 1) & mask; h->slots[j].idx1; j = (j + 1) & mask) {
		size_t home = h->slots[j].hash & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			h->slots[i] = h->slots[j];
			i = j;
		}
	}
	h->slots[i].idx1 = 0;
	h->slots[i].hash = 0;
	h->len--;
	return 0;
}

void bp_htab_clear(struct bp_htab *h)
{
	if (h->slots)
		memset(h->slots, 0, h->cap * sizeof(*h->slots));
	h->len = 0;
}

void bp_htab_free(struct bp_htab *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}
