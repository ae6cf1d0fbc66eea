/* SPDX-License-Identifier: GPL-2.0 */
/* Bit tricks for BPF programs: log2 and the latency histogram slot (boundprof.h). */
#ifndef BP_BITS_BPF_H
#define BP_BITS_BPF_H

#include "boundprof.h"

/* floor(log2(v)), 0 for v == 0; branch-free, so no loop for the verifier */
static __always_inline __u32 bp_log2(__u64 v)
{
	__u32 r, shift;

	r = (v > 0xffffffffULL) << 5;
	v >>= r;
	shift = (v > 0xffff) << 4;
	v >>= shift;
	r |= shift;
	shift = (v > 0xff) << 3;
	v >>= shift;
	r |= shift;
	shift = (v > 0xf) << 2;
	v >>= shift;
	r |= shift;
	shift = (v > 0x3) << 1;
	v >>= shift;
	r |= shift;
	r |= (v >> 1);
	return r;
}

/*
 * Histogram slot of a latency in ns: slot 0 = [0, 2) us, slot k =
 * [2^k, 2^(k+1)) us, capped at BP_HIST_SLOTS - 1 (agent/hist.c is the
 * userspace twin).
 */
static __always_inline __u32 bp_hist_slot_ns(__u64 ns)
{
	__u32 slot = bp_log2(ns / 1000);

	return slot < BP_HIST_SLOTS ? slot : BP_HIST_SLOTS - 1;
}

/* the fine histogram slot of a latency in ns (BP_FHIST_SLOTS; agent/model/hist.c) */
static __always_inline __u32 bp_fhist_slot_ns(__u64 ns)
{
	__u64 us = ns / 1000;
	__u32 e, slot;

	if (us < 8)
		return us;
	e = bp_log2(us);
	slot = 8 * (e - 2) + ((us >> (e - 3)) & 7);
	return slot < BP_FHIST_SLOTS ? slot : BP_FHIST_SLOTS - 1;
}

#endif /* BP_BITS_BPF_H */
