/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every verdict class, in one table: enum bp_class, the names
 * (bp_class_name(), the contract of the JSON report and /metrics), the
 * colours and the words of `boundprof scale` are made from it;
 * tests/unit/test_classify.c walks every row through every accessor. A
 * class is added with one row here, at the end, plus its rule in
 * classify.c (docs: HACKING.md).
 *
 * VERDICT(ID, NAME, COLOUR, FIGURE, SCALE)
 * ID	  enum bp_class BP_CLASS_<ID>, in the order the reports count classes.
 * NAME	  "cpu-bound": a contract, never renamed.
 * COLOUR its colour in the scale plot and table.
 * FIGURE the number a scale point's SCALE wording shows (analyze/scale.c):
 *	  SHARE(field), a share of struct bp_scale_point as a percentage;
 *	  CPUS, the CPUs used of those there are; SECONDS, the recording;
 *	  MIX, the four shares of a mixed verdict.
 * SCALE  what a scale point with this verdict says, in a few words.
 */
#ifndef BP_VERDICT_CLASSES_TABLE_H
#define BP_VERDICT_CLASSES_TABLE_H

#define BP_VERDICT_CLASSES(VERDICT)								\
	VERDICT(UNKNOWN, "unknown", "#555555", SECONDS,						\
		"too little recorded to judge (%.2f s)")					\
	VERDICT(CPU, "cpu-bound", "#e4572e", CPUS, "%.2f of %u CPUs used")			\
	VERDICT(MEMBW, "memory-bandwidth-bound", "#b0589a", CPUS,				\
		"%.2f of %u CPUs used, its speed set by memory traffic")			\
	VERDICT(IO, "io-bound", "#3d7cc9", SHARE(share_io),					\
		"%.0f%% of busy thread-time on block IO")					\
	VERDICT(LOCK, "lock-bound", "#2e9e4f", SHARE(share_lock),				\
		"%.0f%% of busy thread-time waiting on locks")					\
	VERDICT(STARVED, "cpu-starved", "#8b5fc7", SHARE(share_rq),				\
		"%.0f%% of busy thread-time waiting for a CPU")					\
	VERDICT(IDLE, "idle", "#9a9a9a", CPUS, "mostly asleep, %.2f of %u CPUs used")		\
	VERDICT(MIXED, "mixed", "#c9a227", MIX,							\
		"CPU %.0f%%, locks %.0f%%, run queue %.0f%%, IO %.0f%% of busy thread-time")	\
	VERDICT(PEER, "blocked-on-peer", "#1a9e9e", SHARE(share_peer),				\
		"%.0f%% of wall time waiting on another process through a pipe")		\
	VERDICT(THROTTLED, "cpu-throttled", "#5a3d8a", SHARE(share_throttled),			\
		"%.0f%% of busy thread-time waiting out a CPU quota")				\
	VERDICT(GIL, "gil-bound", "#7a9e2e", SHARE(share_gil),					\
		"%.0f%% of busy thread-time waiting for a Python GIL")				\
	VERDICT(SYSCALL, "syscall-bound", "#a0522d", SHARE(share_syscall),			\
		"%.0f%% of on-CPU time in the kernel serving system calls")

#endif /* BP_VERDICT_CLASSES_TABLE_H */
