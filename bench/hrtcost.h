/* SPDX-License-Identifier: GPL-2.0 */
/* What bench/hrtcost.bpf.c keeps per CPU and bench/hrtcost.c reads. */
#ifndef BP_BENCH_HRTCOST_H
#define BP_BENCH_HRTCOST_H

struct hrt_acc {
	__u64 start;	/* the callback began at; 0: not ours */
	__u64 ns;
	__u64 n;
};

#endif /* BP_BENCH_HRTCOST_H */
