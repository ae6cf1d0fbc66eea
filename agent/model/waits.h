/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who ended each wait, and the network waits of each process by peer: the
 * rows the off-CPU programs keep beside the samples (docs/offcpu.md), in
 * the profile so that merging, saving and reports see them.
 */
#ifndef BP_WAITS_H
#define BP_WAITS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"

/* one (woken process, waker thread, class, direction, context) */
struct bp_wake_row {
	uint32_t pid;			/* the process whose thread was woken */
	uint32_t waker_pid;		/* 0: an interrupt on an idle CPU */
	uint32_t waker_tid;
	uint8_t state;			/* enum bp_tstate of the wait that ended */
	uint8_t dir;			/* enum bp_dir */
	uint8_t ctx;			/* enum bp_wctx */
	char comm[BP_COMM_LEN];		/* the waker's */
	uint64_t ns;			/* blocked time of the waits it ended */
	uint64_t count;
};

/* one (process, peer, side) */
struct bp_net_row {
	uint32_t pid;
	uint16_t family;		/* AF_INET, AF_INET6 */
	uint16_t port;			/* the peer's; ours for a listening socket */
	uint16_t lport;
	uint8_t proto;			/* IPPROTO_TCP, IPPROTO_UDP */
	uint8_t side;			/* enum bp_side */
	uint8_t addr[16];
	uint64_t wait_ns;		/* blocked, in waits that ended */
	uint64_t waits;			/* wait episodes: round trips for a client */
	uint64_t rx_bytes, tx_bytes;	/* TCP payload */
	uint64_t hist[BP_FHIST_SLOTS];	/* blocked time per wait, fine slots (hist.h) */
};

/* the row with this key (comm and the counts ignored), made zeroed when create; NULL: -ENOMEM */
struct bp_wake_row *bp_profile__wake_row(struct bp_profile *p, const struct bp_wake_row *key,
					 bool create);
struct bp_net_row *bp_profile__net_row(struct bp_profile *p, const struct bp_net_row *key,
				       bool create);

/* add src's rows into dst; 0 or -ENOMEM */
int bp_waits_merge(struct bp_profile *dst, const struct bp_profile *src);

/* "127.0.0.1:8080", "[::1]:443" */
const char *bp_net_peer(const struct bp_net_row *r, char *buf, size_t len);

/* "task", "softirq", "hardirq", "idle" (the contract of woken_by[].context) */
const char *bp_wctx_name(uint32_t ctx);
/* "input", "output", or "" */
const char *bp_dir_name(uint32_t dir);
/* "client", "server", "listen", "unknown" */
const char *bp_side_name(uint32_t side);

#endif /* BP_WAITS_H */
