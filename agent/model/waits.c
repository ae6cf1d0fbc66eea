// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/waits.h"

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t sz)
{
	uint64_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX)
		return -ENOMEM;
	n = realloc(*arr, ncap * sz);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static uint64_t wake_hash(const struct bp_wake_row *k)
{
	return bp_hash_u64(((uint64_t)k->pid << 32 | k->waker_tid) ^
			   bp_hash_u64((uint64_t)k->waker_pid << 24 | (uint64_t)k->state << 16 |
				       k->dir << 8 | k->ctx));
}

static bool wake_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_wake_row *r = &((const struct bp_profile *)ctx)->wake_rows[idx], *k = key;

	return r->pid == k->pid && r->waker_pid == k->waker_pid && r->waker_tid == k->waker_tid &&
	       r->state == k->state && r->dir == k->dir && r->ctx == k->ctx;
}

struct bp_wake_row *bp_profile__wake_row(struct bp_profile *p, const struct bp_wake_row *key,
					 bool create)
{
	uint64_t h = wake_hash(key);
	struct bp_wake_row *r;
	uint32_t idx;

	if (!bp_htab_find(&p->wake_h, h, wake_eq, p, key, &idx))
		return &p->wake_rows[idx];
	if (!create ||
	    grow((void **)&p->wake_rows, &p->cap_wake_rows, p->nr_wake_rows + 1, sizeof(*r)) ||
	    bp_htab_insert(&p->wake_h, h, p->nr_wake_rows))
		return NULL;
	r = &p->wake_rows[p->nr_wake_rows++];
	memset(r, 0, sizeof(*r));
	r->pid = key->pid;
	r->waker_pid = key->waker_pid;
	r->waker_tid = key->waker_tid;
	r->state = key->state;
	r->dir = key->dir;
	r->ctx = key->ctx;
	memcpy(r->comm, key->comm, sizeof(r->comm));
	r->comm[sizeof(r->comm) - 1] = '\0';
	return r;
}

static uint64_t net_hash(const struct bp_net_row *k)
{
	return bp_hash_bytes(k->addr, sizeof(k->addr),
			     bp_hash_u64((uint64_t)k->pid << 32 | (uint64_t)k->port << 16 |
					 k->family) ^ ((uint64_t)k->proto << 8 | k->side));
}

static bool net_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_net_row *r = &((const struct bp_profile *)ctx)->net_rows[idx], *k = key;

	/* our own port tells nothing about the peer: one row for all connections to it */
	return r->pid == k->pid && r->family == k->family && r->port == k->port &&
	       r->proto == k->proto && r->side == k->side && !memcmp(r->addr, k->addr, 16);
}

struct bp_net_row *bp_profile__net_row(struct bp_profile *p, const struct bp_net_row *key,
				       bool create)
{
	uint64_t h = net_hash(key);
	struct bp_net_row *r;
	uint32_t idx;

	if (!bp_htab_find(&p->net_h, h, net_eq, p, key, &idx))
		return &p->net_rows[idx];
	if (!create ||
	    grow((void **)&p->net_rows, &p->cap_net_rows, p->nr_net_rows + 1, sizeof(*r)) ||
	    bp_htab_insert(&p->net_h, h, p->nr_net_rows))
		return NULL;
	r = &p->net_rows[p->nr_net_rows++];
	memset(r, 0, sizeof(*r));
	r->pid = key->pid;
	r->family = key->family;
	r->port = key->port;
	r->lport = key->lport;
	r->proto = key->proto;
	r->side = key->side;
	memcpy(r->addr, key->addr, sizeof(r->addr));
	return r;
}

int bp_waits_merge(struct bp_profile *dst, const struct bp_profile *src)
{
	uint32_t i, j;

	for (i = 0; i < src->nr_wake_rows; i++) {
		const struct bp_wake_row *s = &src->wake_rows[i];
		struct bp_wake_row *d = bp_profile__wake_row(dst, s, true);

		if (!d)
			return -ENOMEM;
		d->ns += s->ns;
		d->count += s->count;
	}
	for (i = 0; i < src->nr_net_rows; i++) {
		const struct bp_net_row *s = &src->net_rows[i];
		struct bp_net_row *d = bp_profile__net_row(dst, s, true);

		if (!d)
			return -ENOMEM;
		d->wait_ns += s->wait_ns;
		d->waits += s->waits;
		d->rx_bytes += s->rx_bytes;
		d->tx_bytes += s->tx_bytes;
		for (j = 0; j < BP_FHIST_SLOTS; j++)
			d->hist[j] += s->hist[j];
	}
	return 0;
}

const char *bp_net_peer(const struct bp_net_row *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (r->family == AF_INET6) {
		inet_ntop(AF_INET6, r->addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, r->port);
	} else {
		inet_ntop(AF_INET, r->addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, r->port);
	}
	return buf;
}

const char *bp_wctx_name(uint32_t ctx)
{
	switch (ctx) {
	case BP_WCTX_TASK:
		return "task";
	case BP_WCTX_SOFTIRQ:
		return "softirq";
	case BP_WCTX_HARDIRQ:
		return "hardirq";
	case BP_WCTX_IDLE:
		return "idle";
	}
	return "unknown";
}

const char *bp_dir_name(uint32_t dir)
{
	return dir == BP_DIR_IN ? "input" : dir == BP_DIR_OUT ? "output" : "";
}

const char *bp_side_name(uint32_t side)
{
	switch (side) {
	case BP_SIDE_CLIENT:
		return "client";
	case BP_SIDE_SERVER:
		return "server";
	case BP_SIDE_LISTEN:
		return "listen";
	}
	return "unknown";
}
