/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's local socket protocol (docs/agent.md, "Profiling without
 * root"): what an unprivileged `record`, `top` or `dump` sends the root
 * agent over its Unix socket, and what comes back. Pure parsing and
 * formatting, no I/O, so that it can be fuzzed alone (tests/fuzz/fuzz_ipc.c).
 *
 * A request is one line of at most BP_IPC_MAX_LINE bytes, "\n" included:
 *
 *     boundprof/1 VERB [KEY=VALUE]...
 *
 * VERB is record, top or dump; keys (each at most once): pids=1,2,3 (-p),
 * tree=PID (the root of a COMMAND the client started itself), cgroup=PATH
 * (-G, percent-encoded), seconds=N (0: until "stop"), hz=N, json=1 (dump:
 * the JSON of docs/dump.md rather than its text). Values are
 * visible ASCII. Nothing in a request says who asks: the agent takes that
 * from SO_PEERCRED. A running record ends with the line "stop".
 *
 * Answers are lines, some followed by bytes:
 *
 *     ok VERB hz=N                 accepted, recording (hz: the agent's rate)
 *     note TEXT                    something the user should know (a limit hit)
 *     error STATUS TEXT            refused or failed; STATUS is the exit status
 *                                  the client should use (1 or 2); then EOF
 *     profile LEN\n<LEN bytes>     the recording, a .pb.gz (export/pprof.h); then EOF
 *     slice LEN\n<LEN bytes>       top: one more slice, a .pb.gz
 *     dump LEN\n<LEN bytes>        dump: what `boundprof dump` prints; then EOF
 */
#ifndef BP_IPC_H
#define BP_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BP_IPC_MAGIC		"boundprof/1"
#define BP_IPC_MAX_LINE		2048	/* a request or answer line, "\n" included */
#define BP_IPC_MAX_PIDS		64	/* pids= of one request */
#define BP_IPC_MAX_PATH		512	/* cgroup= once decoded */
#define BP_IPC_MAX_SECONDS	(30u * 24 * 3600)
#define BP_IPC_MAX_HZ		100000
#define BP_IPC_MAX_BLOB		(256u << 20)	/* profile/slice bytes a client accepts */
#define BP_IPC_DEFAULT_SOCKET	"/run/boundprof/agent.sock"

/* append only: the verbs of the protocol */
enum bp_ipc_verb {
	BP_IPC_RECORD = 1,
	BP_IPC_TOP,
	BP_IPC_DUMP,		/* `boundprof dump -p PID`: one process, answered at once */
	BP_IPC_STOP,		/* ends a running record; a line of its own */
};

struct bp_ipc_req {
	enum bp_ipc_verb verb;
	uint32_t pids[BP_IPC_MAX_PIDS];
	uint32_t nr_pids;
	uint32_t tree;			/* 0: none */
	bool have_cgroup;
	char cgroup[BP_IPC_MAX_PATH];	/* decoded; starts with '/' */
	uint32_t seconds;		/* 0: until stop */
	uint32_t hz;			/* 0: the agent's */
	bool json;			/* dump: as JSON */
};

enum bp_ipc_reply_kind {
	BP_IPC_R_OK = 1,
	BP_IPC_R_NOTE,
	BP_IPC_R_ERROR,
	BP_IPC_R_PROFILE,
	BP_IPC_R_SLICE,
	BP_IPC_R_DUMP,
};

struct bp_ipc_reply {
	enum bp_ipc_reply_kind kind;
	int status;			/* error: 1 or 2 */
	uint32_t hz;			/* ok */
	uint64_t len;			/* profile, slice, dump: bytes that follow */
	char text[BP_IPC_MAX_LINE];	/* note, error: printable, no newline */
};

/*
 * The length of the first line in buf[0..len), "\n" included; 0 when no
 * newline came yet (and len is still below BP_IPC_MAX_LINE), -EMSGSIZE
 * when the line is too long.
 */
long bp_ipc_line(const char *buf, size_t len);

/*
 * Parse one request line (with or without its "\n"). 0, or -EINVAL with
 * why holding one line for the client ("unknown key 'x'").
 */
int bp_ipc_parse_request(const char *line, size_t len, struct bp_ipc_req *r, char *why,
			 size_t whylen);

/* the line for r, "\n" included; its length, or -ENAMETOOLONG / -EINVAL */
int bp_ipc_format_request(const struct bp_ipc_req *r, char *out, size_t size);

/* parse one answer line; 0 or -EINVAL */
int bp_ipc_parse_reply(const char *line, size_t len, struct bp_ipc_reply *rep);

/* an answer line: "error 2 TEXT\n" etc.; text made printable, cut to fit. Its length */
int bp_ipc_format_error(char *out, size_t size, int status, const char *text);

/* "record", "top", "dump", "stop", or "?" */
const char *bp_ipc_verb_name(enum bp_ipc_verb v);

#endif /* BP_IPC_H */
