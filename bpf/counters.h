/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every counter boundprof keeps, in one table: the BPF programs' per-CPU
 * counters (enum bp_stat in boundprof.h is made from it) and the ones
 * userspace keeps in the profile. The JSON report's drops_detail, the
 * reason labels of boundprof_agent_lost_total and boundprof_agent_noted_total
 * on /metrics, the losses and notes of the text report and the counter
 * table in docs/architecture.md are all made from, or checked against, this
 * table: a counter is added with one row here (plus the row the docs test
 * asks for).
 *
 * BPF(ID, VALUE, NAME, KIND, WHAT)
 *	enum bp_stat BP_STAT_<ID> = VALUE. The values are the ABI (saved
 *	profiles keep the array by position): take the next free one, never
 *	reuse or change one, and stay below BP_STAT__MAX.
 * USER(FIELD, NAME, KIND, WHAT)
 *	a uint64_t FIELD in struct bp_profile (and in the agent's totals),
 *	kept by userspace.
 * NAME	the key in drops_detail and the reason label: a contract, never
 *	renamed.
 * KIND	SEEN         counted, not lost; not in drops_detail
 *	LOST_SAMPLE  a loss, summed in the report's drops.samples
 *	LOST_STACK   a loss, summed in drops.stacks
 *	LOST         any other loss
 *	NOTE         not a loss, but it explains missing data
 *	REPAIR       not a loss: data the kernel did not give, made up from
 *	             another source
 *	Losses are the reasons of boundprof_agent_lost_total, notes and
 *	repairs those of boundprof_agent_noted_total; drops_detail has both
 *	(it is older than the split: the kind is in docs/architecture.md).
 * WHAT	one line: the text report prints "N WHAT", the docs show it.
 *
 * Rows are in report order. The BPF side expands only the BPF rows' IDs
 * and values; the rest is for userspace.
 */
#ifndef BP_COUNTERS_TABLE_H
#define BP_COUNTERS_TABLE_H

#define BP_COUNTERS(BPF, USER)									\
	BPF(SAMPLES, 0, "samples", SEEN, "on-CPU samples the program ran for (idle included)")	\
	BPF(IDLE, 1, "idle", SEEN, "on-CPU samples of an idle CPU")				\
	BPF(FILTERED, 2, "filtered", SEEN, "on-CPU samples of a process not profiled")		\
	BPF(COUNTED, 3, "counted", SEEN, "on-CPU samples aggregated")				\
	BPF(MAP_FULL, 4, "samples_map_full", LOST_SAMPLE, "samples lost: aggregation map full")	\
	BPF(ONCPU_SLOTS_FULL, 41, "sample_slots_full", SEEN,					\
	    "on-CPU samples made into kernel rows: their CPU's sample slots were full")			\
	BPF(KSTACK_ERR, 5, "kernel_stack_errors", LOST_STACK, "kernel stacks lost: unwind error") \
	BPF(USTACK_ERR, 6, "user_stack_errors", LOST_STACK, "user stacks lost: unwind error")	\
	BPF(STACK_FULL, 7, "stack_map_full", LOST_STACK, "stacks lost: stack map full")		\
	BPF(USTACK_TRUNC, 8, "user_stacks_truncated", LOST, "user stacks truncated at 127 frames") \
	BPF(EVENT_DROP, 9, "events_lost", LOST, "process events lost: ring buffer full")	\
	BPF(SEEN_FULL, 10, "seen_map_full", LOST,						\
	    "first-sample notices lost: tracking map full")					\
	BPF(TARGET_FULL, 11, "target_map_full", LOST, "children not followed: target map full")	\
	BPF(SWITCHES, 12, "switches", SEEN, "context switches of tracked threads")		\
	BPF(OFF_MAP_FULL, 13, "offcpu_map_full", LOST_SAMPLE,					\
	    "off-CPU intervals lost: off-CPU map full")						\
	BPF(TSTORE_FAIL, 14, "thread_state_failures", LOST,					\
	    "thread states lost: task storage full, or the event ring for its exit record") \
	BPF(PSTATE_FULL, 15, "process_state_failures", LOST,					\
	    "process timelines lost: task storage full, or the event ring for its exit record") \
	BPF(STACKS_CACHED, 16, "stacks_cached", SEEN,						\
	    "off-CPU stacks reused from the thread's cache")					\
	BPF(KSITE_STALE, 37, "kthread_stacks_stale", LOST,					\
	    "kernel threads' off-CPU stacks reused for a different path (found by a check walk)") \
	BPF(IO_RQ_FULL, 17, "io_requests_untracked", LOST,					\
	    "block requests not tracked: request map full")					\
	BPF(IO_MAP_FULL, 18, "io_map_full", LOST, "block IO completions lost: IO map full")	\
	BPF(IO_NO_START, 19, "io_completions_unmatched", LOST,					\
	    "block IO completions whose start was missed (started before recording)")		\
	BPF(WAKE_MAP_FULL, 20, "wakers_map_full", LOST, "wakers lost: waker map full")		\
	BPF(NET_MAP_FULL, 21, "net_map_full", LOST, "network waits lost: peer map full")	\
	BPF(UW_STACKS, 22, "user_stacks_unwound", SEEN,						\
	    "user stacks walked with unwind tables")						\
	BPF(UW_REMISS, 35, "unwind_new_code", SEEN,						\
	    "unwind lists asked for again after a miss: new executable code mapped")	\
	BPF(UW_BY_FILE, 36, "unwind_by_file", SEEN,						\
	    "frames unwound by their file's table before the process's unwind list had them") \
	BPF(UW_ROW_KEPT, 40, "unwind_rows_kept", SEEN,						\
	    "frames whose unwind row the CPU had found for an earlier walk")			\
	BPF(UW_NO_TABLE, 23, "unwind_no_table", LOST,						\
	    "user stacks cut: code without unwind tables whose frame pointers ended")	\
	BPF(UW_BUDGET, 24, "unwind_over_budget", LOST,						\
	    "user stacks cut: code whose unwind table is over the memory budget")		\
	BPF(UW_BAD_READ, 25, "unwind_bad_read", LOST,						\
	    "user stacks cut: a stack read failed (page not resident)")			\
	BPF(UW_INVALID, 26, "unwind_invalid_row", LOST,						\
	    "user stacks cut: an unwind rule the walker cannot apply")			\
	BPF(PY_TSTATE_ERR, 27, "python_thread_state_errors", LOST,			\
	    "Python stacks lost: thread state unreadable, or not the sampled thread's")	\
	BPF(PY_FRAME_ERR, 28, "python_frames_unreadable", LOST,					\
	    "Python stacks cut at a frame that could not be read")				\
	BPF(PY_TRUNC, 29, "python_stacks_truncated", LOST, "Python stacks truncated at 127 frames") \
	BPF(PY_CODE_LOST, 30, "python_code_events_lost", LOST,					\
	    "Python code objects not copied: event ring full (tried again later)")		\
	BPF(SWITCH_UNSEEN, 31, "switches_unseen", REPAIR,						\
	    "switch-ins the kernel did not trace: their run time taken from its own count")	\
	BPF(R_CTX_ERR, 32, "r_contexts_unreadable", LOST,					\
	    "R stacks cut at a context or name that could not be read")			\
	BPF(R_TRUNC, 33, "r_stacks_truncated", LOST, "R stacks truncated at 63 frames")	\
	BPF(R_NAME_LOST, 34, "r_names_lost", LOST,						\
	    "R function names or source files not sent: event ring full (tried again later)") \
	BPF(EXIT_MAPS, 38, "exit_maps_walked", SEEN,						\
	    "sampled processes whose mappings BPF walked at their exit")			\
	BPF(EXIT_MAPS_UNWALKED, 39, "exit_maps_unwalked", SEEN,					\
	    "sampled processes whose mappings BPF could not walk at their exit")		\
	USER(user_stacks_cut, "user_stacks_cut", NOTE,						\
	     "user stacks end at [truncated]: the unwind stopped early")			\
	USER(io_done_unseen, "io_completions_unseen", LOST,					\
	     "block IO completions the kernel never reported (no latency)")			\
	USER(uw_tables_over_budget, "unwind_tables_over_budget", LOST,				\
	     "files without unwind tables in the kernel: over the unwind memory budget")	\
	USER(py_code_unread, "python_code_unread", LOST,					\
	     "Python frames unnamed: their code object could not be read")

#endif /* BP_COUNTERS_TABLE_H */
