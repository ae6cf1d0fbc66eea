/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client side of the agent's local socket (agent/serve/ipc.h): a user
 * without root or CAP_BPF + CAP_PERFMON records through the root agent,
 * with the same commands and outputs. BOUNDPROF_SOCKET names another
 * socket than /run/boundprof/agent.sock. See docs/agent.md, "Profiling
 * without root".
 */
#ifndef BP_CLI_VIAAGENT_H
#define BP_CLI_VIAAGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "serve/ipc.h"

struct bp_profile;

struct via_agent {
	int fd;
	char in[BP_IPC_MAX_LINE];
	size_t len;
	unsigned int hz;		/* the agent's sampling rate */
	const char *path;
};

/* true when this process cannot load BPF itself (no root, no CAP_BPF + CAP_PERFMON) */
bool via_agent_needed(void);

/* the socket's path: $BOUNDPROF_SOCKET or the default */
const char *via_agent_path(void);

/*
 * Connect and send r; wait for "ok". 0, or prints one line (what to ask an
 * administrator for, or the agent's refusal) and returns the exit status.
 */
int via_agent_start(struct via_agent *va, const struct bp_ipc_req *r);

/*
 * dump through the agent (r: verb dump, one pid, json): prints what it
 * answers. 0, or prints one line and returns the exit status.
 */
int via_agent_dump(const struct bp_ipc_req *r, bool json);

/* ask a running record to end; 0 or -errno */
int via_agent_stop(struct via_agent *va);

/*
 * The next profile (record) or slice (top), notes printed as warnings on
 * the way; timeout_ms < 0 waits for ever. 0 and *out; -ETIMEDOUT; or prints
 * one line and returns the exit status.
 */
int via_agent_next(struct via_agent *va, struct bp_profile **out, int timeout_ms);

/* true when the agent has something for us (an answer, or it hung up) */
bool via_agent_ready(struct via_agent *va);

void via_agent_close(struct via_agent *va);

/* the report's last line: where this came from and what it holds */
void via_agent_say(const struct via_agent *va);

#endif /* BP_CLI_VIAAGENT_H */
