/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's /metrics: what the last window said about the busiest
 * processes (a bounded number of series: the rest are folded into one),
 * block devices since the agent started, and the agent's own costs and
 * losses. See docs/agent.md for every family.
 */
#ifndef BP_METRICS_H
#define BP_METRICS_H

#include <stdint.h>

#include "analyze/analyze.h"
#include "collect/loader.h"
#include "util/buf.h"
#include "model/profile.h"

/* a block device's totals since the agent started (counters must not go back) */
struct bp_dev_totals {
	uint32_t dev;
	char name[32];
	uint64_t ops[BP_IO_OP__MAX];
	uint64_t bytes[BP_IO_OP__MAX];
	uint64_t busy_ns;
	uint64_t lat_ns;
	uint64_t hist[BP_HIST_SLOTS];
};

/* why the agent refused an HTTP connection or request (label reason=) */
enum bp_http_reject {
	BP_HTTP_REJECT_BUSY,		/* every connection slot taken, none idle */
	BP_HTTP_REJECT_PEER,		/* the peer at its connection limit, none idle */
	BP_HTTP_REJECT_SLOTS,		/* only reserved slots left, not /metrics or /healthz */
	BP_HTTP_REJECT_UNAUTHORIZED,	/* no token, or a wrong one */
	BP_HTTP_REJECT_FORBIDDEN,	/* no token configured, and not root: aggregates only */
	BP_HTTP_REJECT__MAX,
};

/* which deadline an HTTP connection missed (label phase=) */
enum bp_http_timeout {
	BP_HTTP_TIMEOUT_HEAD,		/* the request head did not arrive in time */
	BP_HTTP_TIMEOUT_WRITE,		/* the client stopped reading its answer */
	BP_HTTP_TIMEOUT_HELD,		/* a capture ran past its seconds and the margin */
	BP_HTTP_TIMEOUT__MAX,
};

/* what the agent knows about itself */
struct bp_agent_self {
	uint64_t windows;		/* windows closed */
	uint64_t write_errors;		/* windows not written to --dir */
	uint64_t slices;		/* one-second slices drained */
	double cpu_s;			/* user + system CPU of the agent process */
	uint64_t rss_bytes;
	double bpf_run_s;		/* BPF programs' run time (kernel.bpf_stats_enabled), -1 unknown */
	/* ... each program's (bpf_run_s is their sum), when known */
	struct bp_prog_run progs[BP_PROG_RUNS_MAX];
	unsigned int nr_progs;
	struct bp_stats bpf;		/* BPF counters since the start */
	BP_UCOUNTER_FIELDS;		/* userspace counters since the start */
	uint64_t processes_known;	/* process facts kept */
	uint64_t sym_processes;		/* processes in the symbolizer */
	uint64_t sym_files;		/* ELF files it holds */
	uint64_t sym_string_bytes;	/* its interned names */
	uint64_t sym_lines_budget;	/* files named without lines: DWARF over the budget */
	uint64_t sym_lines_distro;	/* ... DWARF only in a distribution's debug file */
	uint64_t map_bytes;		/* kernel memory of the BPF maps */
	uint64_t tls_bytes;		/* ... of it, the threads' storage elements */
	bool unwind;			/* unwind tables loaded (not --unwind-mem 0) */
	uint64_t unwind_budget;		/* their array, at most */
	uint64_t unwind_kernel;		/* ... its chunks added so far */
	uint64_t unwind_used;		/* rows loaded */
	uint64_t unwind_procs;		/* per-process mapping lists */
	uint64_t unwind_files;		/* files with a table loaded */
	uint64_t drains;		/* BPF map drains ... */
	uint64_t exec_drains;		/* ... of them forced by an exec */
	uint64_t exec_images_kept;	/* execs whose old image was kept instead */
	uint64_t busy_explained;	/* busy drains skipped (bp_session__due()) */
	double map_fill[4];		/* peak use of: on-CPU rows, off-CPU rows, kernel stacks, user stacks */
	uint64_t processes_exited;	/* ... of them, processes that exited (kept for their last window) */
	uint64_t processes_forgotten;	/* facts dropped after an exit, since the start */
	uint64_t process_exits;		/* exits noticed of processes with facts kept */
	uint64_t facts_exec;		/* processes whose facts came whole with the exec event */
	uint64_t facts_proc;		/* ... and those read from /proc */
	uint64_t facts_fork;		/* ... and those of a child not exec'd yet: its parent's */
	uint64_t facts_gone;		/* ... and those of one gone before the agent looked */
	uint64_t maps_proc;		/* new processes' maps read from /proc */
	uint64_t maps_exit;		/* ... and of those gone first, from BPF's walk at their exit */
	uint64_t http_requests;
	uint64_t http_errors;		/* answered 4xx / 5xx */
	uint64_t http_connections;	/* open now */
	uint64_t http_rejected[BP_HTTP_REJECT__MAX];
	uint64_t http_evicted;		/* idle connections closed for a new one */
	uint64_t http_timeouts[BP_HTTP_TIMEOUT__MAX];
};

/* fold a window's devices into the running totals; 0 or -ENOMEM */
int bp_dev_totals_add(struct bp_dev_totals **devs, uint32_t *nr, const struct bp_profile *win);

/*
 * The exposition. win/s: the last closed window (may be NULL before the
 * first); top: processes with series of their own. 0 or -errno.
 */
int bp_metrics_write(struct bp_buf *out, const struct bp_profile *win, const struct bp_summary *s,
		     uint32_t top, const struct bp_dev_totals *devs, uint32_t nr_devs,
		     const struct bp_agent_self *self);

#endif /* BP_METRICS_H */
