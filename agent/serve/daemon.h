/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent: always on, system-wide. It records in one-second slices and
 * folds them into windows; each closed window is written to a directory as
 * pprof + JSON (atomically, the newest N kept) and served over HTTP with
 * Prometheus metrics, pprof captures, the report and a flame graph.
 * See docs/agent.md.
 *
 * Like the rest of the library it never prints, exits or handles a signal:
 * it logs through bp_log and returns 0 / -errno. The program running it
 * catches the signals and asks it to stop or to reopen its directory.
 *
 * The parts that need no BPF (windows, files, retention, captures, HTTP
 * routing) are reachable without a session: bp_daemon__new() then
 * bp_daemon__add_slice() / bp_daemon__close_window() with profiles made by
 * hand, and HTTP served by bp_daemon__process_http().
 */
#ifndef BP_DAEMON_H
#define BP_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "collect/session.h"
#include "model/profile.h"
#include "serve/local.h"

#define BP_DAEMON_MAX_CAPTURES	8	/* pprof captures held at once; the next gets 503 */
#define BP_DAEMON_MAX_SECONDS	300	/* largest ?seconds= of a capture */
#define BP_DAEMON_CAPTURE_MARGIN_MS 10000	/* a capture is answered 503 this long after its seconds */
#define BP_DAEMON_FILE_PREFIX	"boundprof-"
#define BP_DAEMON_DWARF_BUDGET	(8ULL * 1024 * 1024)	/* DWARF images held for source lines */
/*
 * A process sampled younger than this gets its unwind tables when it is
 * this old: building them for a process gone in 40 ms (a curl with 35
 * libraries: ~100 ms of the agent's CPU) bought none of its samples.
 */
#define BP_DAEMON_UNWIND_MIN_AGE_NS	(200ULL * 1000 * 1000)
#define BP_DAEMON_RUN_LEN	8	/* hex digits of the per-run id in window names */

struct bp_daemon_opts {
	double interval_s;		/* window length, 1..86400 */
	const char *dir;		/* where windows go; NULL: nowhere */
	uint32_t keep;			/* newest windows kept, 1 or more */
	uint64_t keep_bytes;		/* and at most these bytes of them; 0: no limit */
	const char *listen;		/* HTTP address (serve/httpd.h); NULL: no HTTP */
	uint32_t top;			/* processes with series of their own in /metrics */
	bool bpf_stats;			/* have the kernel time our BPF programs */
	const char *token_file;		/* bearer token for HTTP (serve/token.h); NULL: none */
	uint32_t capture_margin_ms;	/* a capture's answer waits this past its seconds
					 * (BP_DAEMON_CAPTURE_MARGIN_MS) */
	struct bp_session_opts session;
	struct bp_local_opts local;	/* the local socket for users (serve/local.h) */
};

struct bp_daemon;

/* the defaults of every option: 10-s windows, 60 kept, 20 processes, 99 Hz, ... */
void bp_daemon_opts_default(struct bp_daemon_opts *o);

/*
 * The options that name things outside the process, checked without
 * creating anything: the directory must be one, or be creatable, and be
 * writable; the token file must be usable (serve/token.h). 0, or -errno
 * with one line logged.
 */
int bp_daemon_check(const struct bp_daemon_opts *o);

/*
 * A daemon and its directory (created with its parents, mode 0700, ready
 * to write); nothing listens and nothing is recorded yet. The strings in o
 * must outlive the daemon. 0, or -errno (logged once).
 */
int bp_daemon__new(struct bp_daemon **out, const struct bp_daemon_opts *o);

/* open the HTTP listener, if the options ask for one (start() does it too); 0 or -errno */
int bp_daemon__listen(struct bp_daemon *d);

/* listen, then open and attach the BPF session: profiling starts now. 0 or -errno (logged) */
int bp_daemon__start(struct bp_daemon *d);

/*
 * The event loop, until bp_daemon__request_stop(); then the partial window
 * is closed and written and captures in progress are answered with what
 * they have. 0 after a requested stop, -errno when something broke (logged).
 */
int bp_daemon__run(struct bp_daemon *d);

/* async-signal-safe: ask the loop to stop; sig (if any) is named in the log */
void bp_daemon__request_stop(struct bp_daemon *d, int sig);
/* async-signal-safe: re-create the directory if it was removed, re-read the token (SIGHUP) */
void bp_daemon__request_reopen(struct bp_daemon *d);

/* closes everything: the listener, held connections, the session; NULL is fine */
void bp_daemon__free(struct bp_daemon *d);

/*
 * A slice is over: add it into the window and into each capture in
 * progress; captures that have their slices are answered. The slice stays
 * the caller's. The first slice of a daemon without a session starts its
 * window. 0 or -ENOMEM.
 */
int bp_daemon__add_slice(struct bp_daemon *d, const struct bp_profile *slice);

/* close the window: summarize, write its files, apply retention, start the next. 0 or -ENOMEM */
int bp_daemon__close_window(struct bp_daemon *d);

/* serve whatever HTTP work is ready, without blocking; 0 or -errno */
int bp_daemon__process_http(struct bp_daemon *d);
/* the HTTP port (for ":0"), -1 without HTTP */
int bp_daemon__http_port(const struct bp_daemon *d);
/* the fd to poll for HTTP work, -1 without HTTP */
int bp_daemon__http_fd(const struct bp_daemon *d);

/* captures in progress; windows closed; the stem of the last window written ("" none) */
uint32_t bp_daemon__captures(const struct bp_daemon *d);
uint64_t bp_daemon__windows(const struct bp_daemon *d);
const char *bp_daemon__last_stem(const struct bp_daemon *d);
/* this run's id, BP_DAEMON_RUN_LEN hex digits, in each window's name */
const char *bp_daemon__run_id(const struct bp_daemon *d);

/*
 * The stem of window seq of run ending at end_unix_s:
 * "boundprof-YYYYmmddTHHMMSSZ-RUN-SEQ" (UTC, SEQ eight digits or more).
 * 0, or -ENAMETOOLONG when size is too small, -EINVAL for a bad run id.
 */
int bp_window_stem(char *out, size_t size, int64_t end_unix_s, const char *run, uint64_t seq);

/* a window file's name, parsed */
struct bp_window_name {
	char when[17];			/* "YYYYmmddTHHMMSSZ" */
	char run[BP_DAEMON_RUN_LEN + 1];
	uint64_t seq;
	size_t stem_len;		/* the name without ".pb.gz" / ".json" */
	bool json;			/* .json, else .pb.gz */
};

/* 0 when name is exactly a window file's name (stem + ".pb.gz" or ".json"), else -EINVAL */
int bp_window_name_parse(const char *name, struct bp_window_name *w);

/*
 * Retention in the directory dirfd: keep the newest keep windows and at
 * most keep_bytes of them (0: no limit), a window's .pb.gz and .json
 * together; the newest is kept whatever its size. Only files this agent
 * could have written are counted or removed: exact window names, regular
 * files (never followed links), owned by our user, with one link. Run
 * run's windows are the newest, by sequence; earlier runs' come before
 * them, by time. Returns the windows removed, or -errno.
 */
int bp_retain(int dirfd, const char *run, uint32_t keep, uint64_t keep_bytes);

#endif /* BP_DAEMON_H */
