/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's local Unix socket: users without root or capabilities
 * profile their own processes through it (`record`, `top`, `dump`).
 * Who asks comes from SO_PEERCRED, never from the request; who may ask is
 * the administrator's choice (everyone, one group, nobody), enforced by the
 * socket's mode and owner and checked again at each connection. Each
 * session gets, slice by slice, only what ptrace would let its user read
 * (proc/access.h, model/restrict.h), under per-user limits on sessions,
 * length, frequency and memory. Protocol: serve/ipc.h. Single-threaded,
 * non-blocking, in the daemon's event loop like serve/httpd.h.
 * See docs/agent.md, "Profiling without root".
 */
#ifndef BP_LOCAL_H
#define BP_LOCAL_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"
#include "util/buf.h"

enum bp_local_access {
	BP_LOCAL_EVERYONE,	/* socket 0666 */
	BP_LOCAL_GROUP,		/* socket 0660, group gid; its members and root */
	BP_LOCAL_NOBODY,	/* no socket */
};

/* append only: the per-user limits, the `limit` label of their counter */
enum bp_local_limit {
	BP_LIMIT_SESSIONS,	/* sessions of one user at once */
	BP_LIMIT_SECONDS,	/* length of one session */
	BP_LIMIT_FREQ,		/* sampling frequency asked for */
	BP_LIMIT_MEMORY,	/* memory held for one user's sessions */
	BP_LIMIT_DUMPS,		/* dumps of one user a second */
	BP_LIMIT__MAX,
};

#define BP_LOCAL_MAX_CONNS	64	/* connections at once, all users */
/*
 * A dump is served at once, in the event loop, and loads its own BPF
 * programs (about 0.1 s of the agent's time): one a second per user but
 * root, so that no user can keep the agent from the others.
 */
#define BP_LOCAL_DUMP_GAP_MS	1000
#define BP_LOCAL_DUMP_USERS	32	/* users whose last dump is remembered */
#define BP_LOCAL_MAX_PER_USER	8	/* ... of one user but root: idle ones cannot fill it */
#define BP_LOCAL_REQ_TIMEOUT_MS	5000	/* the request line must arrive by then */
#define BP_LOCAL_WRITE_TIMEOUT_MS 10000	/* longest time without write progress */
#define BP_LOCAL_MAX_QUEUED	(16u << 20)	/* answer bytes waiting for a slow reader */

struct bp_local_opts {
	const char *path;		/* the socket; NULL: none */
	enum bp_local_access access;
	uint32_t gid;			/* BP_LOCAL_GROUP */
	const char *group;		/* its name, for messages */
	uint32_t max_sessions;		/* per user, at once */
	uint32_t max_seconds;		/* per session */
	uint32_t max_hz;		/* per session; never above the agent's own */
	uint64_t max_bytes;		/* per user, all sessions */
};

struct bp_local_stats {
	uint64_t requests;		/* requests parsed */
	uint64_t bad;			/* malformed, partial, oversized or timed out */
	uint64_t denied;		/* not allowed: not in the group, not their process */
	uint64_t answered;		/* profiles sent */
	uint64_t limit_hits[BP_LIMIT__MAX];
	uint32_t sessions;		/* running now */
	uint32_t conns;			/* open now */
};

struct bp_local;

/* the defaults: everyone, 4 sessions, 1 hour, 99 Hz, 64 MiB */
void bp_local_opts_default(struct bp_local_opts *o);

/*
 * Listen on o->path (a stale socket there is replaced; anything else there
 * is refused), mode and group as o->access says. agent_hz: the rate the
 * agent samples at. NULL and errno on failure (logged).
 */
struct bp_local *bp_local__new(const struct bp_local_opts *o, int agent_hz);
/* closes every connection and removes the socket; NULL is fine */
void bp_local__free(struct bp_local *l);

/* readable when bp_local__process() has work */
int bp_local__fd(const struct bp_local *l);
/* accept, read, answer, time out, without blocking; 0 or -errno when broken */
int bp_local__process(struct bp_local *l);

/* a slice is over: into every session, cut to what its user may see; 0 or -ENOMEM */
int bp_local__slice(struct bp_local *l, const struct bp_profile *slice);

/* stopping: every record gets what it has, and a moment to leave */
void bp_local__finish(struct bp_local *l);

const struct bp_local_stats *bp_local__stats(const struct bp_local *l);

/*
 * fn fills a recording's evidence (memory probes, counters) right before
 * it is answered, as the daemon does for a window; NULL: none
 */
typedef void (*bp_local_evidence_fn)(void *ctx, struct bp_profile *p);
void bp_local__set_evidence(struct bp_local *l, bp_local_evidence_fn fn, void *ctx);

/*
 * fn takes a dump of pid (collect/dump.h) and appends what `boundprof dump`
 * prints, as JSON when json, to out; 0 or -errno. NULL (the default): dump
 * requests are refused with one line.
 */
typedef int (*bp_local_dump_fn)(void *ctx, uint32_t pid, bool json, struct bp_buf *out);
void bp_local__set_dump(struct bp_local *l, bp_local_dump_fn fn, void *ctx);

/* the families for /metrics (aggregates only: no user, pid or name), appended to b */
int bp_local_metrics(struct bp_buf *b, const struct bp_local_stats *st);

/* "sessions", "seconds", "freq", "memory" */
const char *bp_local_limit_name(unsigned int limit);

#endif /* BP_LOCAL_H */
