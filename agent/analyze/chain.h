/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Request/response chains: a client and a server on this host that hand
 * work back and forth over a pipe, a Unix socket or loopback TCP (a
 * benchmark client and its database). The chain is judged as one: its
 * round trips, and the time of each split into the client's work, the
 * server's work, the server's flushes (fsync, fdatasync: their CPU, run
 * queue and IO time together) and other waits, and the handoffs between
 * the two. Also which local processes `record -- COMMAND` added because the
 * command waited on them (bpf/offcpu.bpf.c, follow_peer()), and why.
 * docs/classification.md ("Client and server") has the method.
 */
#ifndef BP_CHAIN_H
#define BP_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "model/profile.h"

/* a process the recording of a command added because the command waited on it */
struct bp_added_peer {
	uint32_t pid;
	char comm[BP_COMM_LEN];
	uint32_t by_pid;		/* the command's process that waited on it most */
	char by_comm[BP_COMM_LEN];
	double wait_s;			/* the command's waits it ended */
	uint64_t wakeups;
	bool judged;			/* enough to matter: >= 5% of the run or >= 50 ms */
};

struct bp_chain {
	uint32_t client, server;	/* indices in bp_summary.procs */
	bool added;			/* the server joined the recording as a peer */
	uint64_t round_trips;		/* at least: the larger of the two counts below */
	uint64_t client_waits;		/* the client's waits the server ended */
	uint64_t server_wakeups;	/* the server's waits the client ended (while tracked) */
	double rate;			/* round trips per second of the client's wall time */
	double wall_s;			/* the client's wall time */
	double wait_s;			/* the client's waits the server ended */
	double cover;			/* of the client's wall time: waits on the server */
	/* seconds, each side over the time it was recorded */
	double client_cpu_s, server_cpu_s, flush_s, flush_cpu_s, server_io_s, server_other_s;
	double client_handoff_s, server_handoff_s;
	uint64_t flushes;		/* the server's cache flushes at the device, when seen */
	/* per round trip, ms: the split of the client's wall time per round trip */
	double rt_ms, client_ms, server_ms, flush_ms, server_io_ms, handoff_ms, other_ms;
	struct bp_verdict verdict;	/* the chain judged as one */
};

struct bp_chains {
	struct bp_chain *c;		/* by round trips, most first */
	uint32_t nr;
	struct bp_added_peer *added;	/* by wait, most first */
	uint32_t nr_added;
};

/*
 * A process of a COMMAND's recording that is not the command's nor one of
 * its children's: a peer boundprof added. false in other recordings.
 */
bool bp_proc_is_peer(const struct bp_profile *p, const struct bp_summary *s,
		     const struct bp_proc *proc);

/*
 * Find the chains and the added peers, judge each chain, and give a
 * client whose time the chain covers its verdict (after bp_verdicts() set
 * the processes' own). s->chains is set; 0 or -ENOMEM.
 */
int bp_chains_judge(const struct bp_profile *p, struct bp_summary *s);

void bp_chains_free(struct bp_chains *c);

/* the chain whose client is summary process i; NULL: none */
const struct bp_chain *bp_chain_of_client(const struct bp_summary *s, uint32_t i);

#endif /* BP_CHAIN_H */
