/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How much of a known memory stream memprobe's traffic window sees on this
 * machine. The window counts pages whose accessed bit was set again within
 * ms of a clear; under some hypervisors those bits come back at a fixed
 * rate of their own, whatever the process touches (one measured here: ~0.8
 * GB/s of pages per thread after a ~20 ms delay, for streams of 5 to 145
 * GB/s alike), and the window then measures the hypervisor, not the
 * process. A child process streams at a rate it times itself; the window
 * is opened on it exactly as on a target; seen / streamed is the answer.
 * See docs/memprobe.md.
 */
#ifndef BP_PROBECAL_H
#define BP_PROBECAL_H

#include <stdbool.h>

/*
 * Below this share of a stream seen, a traffic window's rate says nothing
 * about the process (docs/memprobe.md: windows that work see 0.5-0.7).
 */
#define BP_PROBECAL_VISIBLE_MIN	0.2

/*
 * The window is blind: it saw less than min of a stream, and not the
 * stream's whole set (a floor, which only a seeing window reads)
 */
static inline bool bp_probecal_blind(double visible, bool floor, double min)
{
	return !floor && visible < min;
}

struct bp_probecal {
	double stream_gbs;	/* what the child streamed per second of its CPU (STREAM counting) */
	double seen_gbs;	/* what the traffic window read per second of its CPU */
	double visible;		/* seen / streamed */
	bool floor;		/* the window saw the whole set: it sees, seen is a lower bound */
};

/*
 * Fork a child that streams a triad over 3 x 16 MiB, open up to three
 * traffic windows on it (the best counts: a window the child spent off
 * its CPU is not a blind one), and stop it. Costs ~0.2 s of wall time and
 * the child's memory while it lives. 0 or -errno (-EPERM, -ENOENT: the
 * kernel has no clear_refs for us; -EAGAIN: nothing measured).
 */
int bp_probecal_measure(struct bp_probecal *out);

#endif /* BP_PROBECAL_H */
