/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every wait class, in one table: where a thread's time goes while it is
 * not running, and running itself. The BPF programs' enum bp_tstate and
 * timeline ranks (boundprof.h, rules.h), userspace's enum bp_kind, and
 * every name, frame, phrase, colour and busy-time rule of a class
 * (agent/model/wait_class.h) are made from it; tests/unit/test_wait_class.c
 * walks every row through every accessor. A wait class is added with one
 * row here, at the end, plus its rule in rules.h (docs: HACKING.md).
 *
 * WAIT(KIND, TS, VALUE, RANK, BUSY, NAME, STATE, LABEL, FRAME, TEXT, THREADS, WALL, VERDICT,
 *      USER, KERNEL)
 * KIND	 enum bp_kind BP_KIND_<KIND>: the rows' order, which is the order the
 *	 reports list classes in (JSON keys, /metrics series, diff rows).
 * TS	 enum bp_tstate BP_TS_<TS> = VALUE. The values are the ABI (bp_off_key
 *	 and saved profiles keep them, the timeline arrays are indexed by
 *	 them): take the next free one, never reuse or change one.
 * RANK	 its place in the timeline's order of productivity, 0 the most
 *	 productive: at each moment a process is in the best state any of its
 *	 threads is in (docs/offcpu.md). Every rank once.
 * BUSY	 whether its time is busy time (bp_busy_s()): YES; NO (waiting for
 *	 work); CLIENT (only a client's waits: a server waiting for requests
 *	 is idle); PEER (waiting on another process's work: busy, but left
 *	 out of a verdict's shares, which the peer rule judges).
 * NAME	 the contract: JSON keys, the pprof "wait" label, the /metrics class.
 * STATE the timeline's name for it (timeline_s keys).
 * LABEL the row of `boundprof diff`.
 * FRAME the class frame of the folded outputs and flame graphs.
 * TEXT	 the flame graph's legend.
 * THREADS, WALL, VERDICT
 *	 what a thread doing it is doing: in the text report's sums over
 *	 threads, in its wall-time line, in a verdict's timeline evidence.
 * USER, KERNEL
 *	 flame graph colours of user and kernel frames: (hue, hue spread,
 *	 saturation, lightness).
 *
 * The BPF side expands only KIND, TS, VALUE and RANK.
 */
#ifndef BP_WAIT_CLASSES_TABLE_H
#define BP_WAIT_CLASSES_TABLE_H

#define BP_WAIT_CLASSES(WAIT)									\
	WAIT(ONCPU, RUNNING, 0, 0, YES, "oncpu", "running", "on-CPU", "[on-cpu]", "on-CPU",	\
	     "on-CPU", "on-CPU", "on-CPU",							\
	     (0, 32, 82, 58), (46, 12, 85, 63))							\
	WAIT(RUNQUEUE, RUNQUEUE, 1, 1, YES, "runqueue", "runqueue", "runqueue", "[runqueue]",	\
	     "run queue", "waiting for a CPU", "waiting for a CPU", "waiting for a CPU",	\
	     (262, 14, 55, 68), (262, 14, 45, 81))						\
	WAIT(IO, IO, 2, 2, YES, "io", "io", "io", "[io]", "block IO", "waiting on block IO",	\
	     "waiting on block IO", "waiting on block IO",					\
	     (205, 14, 70, 62), (205, 14, 55, 78))						\
	WAIT(LOCK, LOCK, 3, 3, YES, "lock", "lock", "lock", "[lock]", "lock",			\
	     "waiting on locks", "waiting on locks", "waiting on locks",			\
	     (112, 16, 45, 54), (112, 16, 35, 73))						\
	WAIT(SLEEP, SLEEP, 5, 7, NO, "sleep", "sleep", "sleep", "[sleep]", "sleep", "sleeping",	\
	     "sleeping or waiting for events", "sleeping or waiting for events",		\
	     (210, 0, 9, 64), (210, 0, 7, 79))							\
	WAIT(OTHER, OTHER, 4, 6, YES, "other", "other", "other", "[other]", "other wait",	\
	     "in other waits", "in other kernel waits", "in other kernel waits",		\
	     (172, 10, 45, 50), (172, 10, 35, 71))						\
	WAIT(NET, NET, 6, 4, CLIENT, "net", "net", "net", "[net]", "network",			\
	     "waiting on the network", "waiting on the network", "waiting on the network",	\
	     (188, 14, 72, 55), (188, 14, 58, 74))						\
	WAIT(PIPE, PIPE, 7, 5, PEER, "pipe", "pipe", "pipe", "[pipe]", "pipe",			\
	     "waiting on pipes", "waiting on other processes through pipes",			\
	     "waiting on another process through a pipe",					\
	     (28, 12, 70, 60), (28, 12, 55, 76))

#endif /* BP_WAIT_CLASSES_TABLE_H */
