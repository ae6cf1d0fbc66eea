/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What processes wait on each other for: per process, who ended its waits
 * (woken_by) and its network waits by peer; processes connected by pipes as
 * pipelines, with their bottleneck; and for a command, the chain of
 * processes that held it back (its critical path). docs/classification.md
 * has the method.
 */
#ifndef BP_PIPELINE_H
#define BP_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "model/profile.h"

#define BP_MAX_WAKERS	8	/* woken_by entries kept per process */
#define BP_MAX_PEERS	8	/* network peers kept per process */

/* one who ended waits of a process */
struct bp_waker {
	uint32_t pid, tid;		/* 0: an interrupt on an idle CPU */
	char comm[BP_COMM_LEN];
	uint8_t ctx;			/* enum bp_wctx */
	uint8_t state;			/* enum bp_tstate of the waits */
	uint8_t dir;			/* enum bp_dir */
	double s;			/* blocked time of the waits it ended */
	uint64_t count;
	uint32_t threads;		/* its threads that did */
	double top_s;			/* of them, tid's */
};

/* one peer a process waited on */
struct bp_peer {
	char name[64];			/* "127.0.0.1:8080" */
	uint8_t side;			/* enum bp_side */
	uint8_t proto;
	double wait_s;
	uint64_t waits;
	double p50_ms, p99_ms;		/* blocked time per wait */
	uint64_t rx_bytes, tx_bytes;
};

/* a process's waits: on whom, and on which peers */
struct bp_proc_waits {
	uint32_t pid;		/* 0: the process had no wakers nor peers (all else is 0 too) */
	struct bp_waker wakers[BP_MAX_WAKERS];	/* by seconds, most first */
	uint32_t nr_wakers;
	struct bp_peer peers[BP_MAX_PEERS];	/* by wait, most first */
	uint32_t nr_peers, peers_total;
	/* every client-side (work) wait on the network, all peers together */
	uint64_t net_waits;
	double net_wait_s;
	double net_p50_ms, net_p99_ms;
	uint64_t net_rx, net_tx;
	/* the process it waited on most through pipes, each way (0: none seen) */
	uint32_t pipe_peer[BP_DIR__MAX];
	char pipe_peer_comm[BP_DIR__MAX][BP_COMM_LEN];
};

/* one stage of a pipeline */
struct bp_stage {
	uint32_t pid;
	uint32_t proc;			/* index in bp_summary.procs */
	double in_wait_s;		/* thread-s waiting for input (from the upstream stage) */
	double out_wait_s;		/* thread-s waiting for room for output (downstream) */
	uint64_t rbytes, wbytes;	/* through read and write system calls */
};

struct bp_pipeline {
	struct bp_stage *stages;	/* in data-flow order */
	uint32_t nr_stages;
	uint32_t bottleneck;		/* index in stages */
	char name[256];			/* "cat → gzip -9 → wc -c" */
};

struct bp_pipelines {
	struct bp_proc_waits *waits;	/* parallel to bp_summary.procs */
	uint32_t nr_waits;
	struct bp_pipeline *pl;
	uint32_t nr;
	/* a command's critical path, root first (targeted runs with one root) */
	uint32_t *crit;			/* indices in bp_summary.procs */
	uint32_t nr_crit;
};

/*
 * Wakers and peers of every summarized process, and the pipelines among
 * them. Needs the summary (bp_summarize), not the verdicts. 0 or -ENOMEM.
 */
int bp_pipelines_find(const struct bp_profile *p, const struct bp_summary *s,
		      struct bp_pipelines *out);

/*
 * The critical path of a command (after bp_verdicts() set the verdicts it
 * follows): from the root process, to the peer a process was blocked on,
 * or from a process that only waited to the child it waited for. 0 or
 * -ENOMEM; nr_crit 0 when there is no single root.
 */
int bp_critical_path(const struct bp_profile *p, const struct bp_summary *s,
		     struct bp_pipelines *pl);

void bp_pipelines_free(struct bp_pipelines *pl);

/* the pipeline a process is a stage of, and its index there; NULL: none */
const struct bp_pipeline *bp_pipeline_of(const struct bp_pipelines *pl, uint32_t pid,
					 uint32_t *stage);

/* "cat → gzip -9 → wc -c: bound by gzip -9 (pid 42, cpu-bound)", after the verdicts */
void bp_pipeline_lead(const struct bp_summary *s, const struct bp_pipeline *pl, char *buf,
		      size_t len);

/* "gzip -9" from a process's command line, else its comm */
const char *bp_stage_name(const struct bp_proc *proc, char *buf, size_t len);

#endif /* BP_PIPELINE_H */
