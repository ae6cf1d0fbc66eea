/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small HTTP/1.1 server for the agent's read-only endpoints, made to live
 * in a single-threaded epoll loop: no threads, nothing blocks. The caller
 * adds bp_httpd__fd() to its own epoll set and calls bp_httpd__process()
 * whenever that fd is readable; the server keeps its own timers.
 *
 * Only GET and HEAD, no request bodies, one request per connection
 * ("Connection: close"). A handler may answer at once or hold the connection
 * and answer later by its id, so that a request can wait for data that is
 * still being collected while other requests keep being served.
 * Limits and status codes: docs/http.md.
 */
#ifndef BP_HTTPD_H
#define BP_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BP_HTTPD_MAX_HEAD	8192	/* request line + headers, CRLFs included */
#define BP_HTTPD_MAX_URI	2048	/* request target, raw */
#define BP_HTTPD_MAX_CONNS	64	/* default: open connections, all states */
#define BP_HTTPD_MAX_PER_PEER	16	/* default: open connections of one peer */
#define BP_HTTPD_RESERVED	8	/* default: slots only priority paths may use */
#define BP_HTTPD_HEAD_TIMEOUT_MS 5000	/* default: the request head must arrive by then */
#define BP_HTTPD_TIMEOUT_MS	10000	/* default: longest time without write progress */

/* what a handler returns when it keeps the connection to answer later */
#define BP_HTTPD_HELD		1

struct bp_httpd;

/* valid only during the handler call; copy what must outlive it */
struct bp_httpd_req {
	uint64_t id;		/* the connection; ids are never reused */
	const char *method;	/* "GET" or "HEAD" */
	const char *path;	/* percent-decoded, starts with '/', never holds a NUL */
	const char *query;	/* raw, without the '?'; "" when absent; encoding checked */
	const char *authorization;	/* the Authorization header's value, or NULL */
	bool head;		/* HEAD: a response's body is measured, not sent */
	/* a loopback client's user, from the kernel's socket table; BP_HTTPD_NO_UID: remote or unknown */
	uint32_t peer_uid;
};

#define BP_HTTPD_NO_UID	UINT32_MAX

/*
 * Called once per complete, valid request. Return 0 after answering with
 * bp_httpd__respond*(); BP_HTTPD_HELD to answer later by req->id; or a
 * -errno, which (like returning 0 without an answer) gets a 500. A handler
 * may answer other held connections too, but must not free the server.
 */
typedef int (*bp_httpd_handler_fn)(void *ctx, struct bp_httpd *h,
				   const struct bp_httpd_req *req);

struct bp_httpd_opts {
	unsigned int timeout_ms;	/* write progress; default BP_HTTPD_TIMEOUT_MS */
	unsigned int head_timeout_ms;	/* default BP_HTTPD_HEAD_TIMEOUT_MS */
	unsigned int max_conns;		/* default BP_HTTPD_MAX_CONNS */
	unsigned int max_per_peer;	/* default BP_HTTPD_MAX_PER_PEER */
	unsigned int reserved;		/* default BP_HTTPD_RESERVED; less than max_conns */
	/*
	 * NULL-terminated paths that are cheap to answer and must stay
	 * reachable ("/metrics", "/healthz"): they may use the reserved slots.
	 * Other requests are answered 503 once max_conns - reserved of them
	 * are being worked on (held or being written).
	 */
	const char *const *priority_paths;
};

/*
 * Listen on "127.0.0.1:9464", "[::1]:9464", or ":9464" for every interface
 * (IPv6 and IPv4 when the host has IPv6); numeric addresses only, port 0
 * picks a free port. opts may be NULL. NULL and errno on failure: EINVAL
 * (malformed address), EADDRINUSE, EACCES, EADDRNOTAVAIL, ENOMEM, ...
 */
struct bp_httpd *bp_httpd__new(const char *listen, bp_httpd_handler_fn handler, void *ctx,
			       const struct bp_httpd_opts *opts);
/* 0 when bp_httpd__new() would accept listen's form, or -EINVAL; binds nothing */
int bp_httpd_check_listen(const char *listen);
/* closes every connection, held ones included; NULL is fine */
void bp_httpd__free(struct bp_httpd *h);

/* readable (EPOLLIN) when bp_httpd__process() has work; never changes */
int bp_httpd__fd(const struct bp_httpd *h);
/* the bound port, in host order */
int bp_httpd__port(const struct bp_httpd *h);
struct bp_httpd_stats {
	uint64_t responses;	/* answers built, errors included */
	uint64_t client_errors;	/* 4xx */
	uint64_t server_errors;	/* 5xx */
	uint64_t rejected_busy;	/* refused at accept: too many connections, none idle */
	uint64_t rejected_peer;	/* refused at accept: its peer has max_per_peer, none idle */
	uint64_t rejected_slots;	/* answered 503: only reserved slots left, not a priority path */
	uint64_t evicted;	/* idle connections closed to make room for a new one */
	uint64_t head_timeouts;	/* request head not complete in time */
	uint64_t write_timeouts;	/* client stopped reading its answer */
	uint64_t held_timeouts;	/* held past the deadline given to bp_httpd__hold() */
};

const struct bp_httpd_stats *bp_httpd__stats(const struct bp_httpd *h);

/* open connections, held and lingering ones included */
unsigned int bp_httpd__conns(const struct bp_httpd *h);

/*
 * Do the accept/read/write/timeout work that is ready, without blocking,
 * calling the handler for each request completed. 0, or -errno when the
 * server itself broke (its epoll or timer failed).
 */
int bp_httpd__process(struct bp_httpd *h);

/*
 * Answer connection id: status 200..599 except 204 and 304 (they carry no
 * body); content_type NULL for none; body copied, so it may be freed at
 * once; headers NULL or a NULL-terminated list of extra "Name: value" lines
 * ("Content-Encoding: gzip"). Content-Length, Connection and Date are the
 * server's own. 0, also when id no longer waits (the client left, or it
 * was answered already): nothing is done then. -EINVAL for a bad status or
 * header, -ENOMEM: nothing is sent and the connection keeps waiting.
 */
int bp_httpd__respond(struct bp_httpd *h, uint64_t id, int status, const char *content_type,
		      const void *body, size_t len, const char *const *headers);
/* a text/plain answer, for errors: "bad seconds\n" */
int bp_httpd__respond_text(struct bp_httpd *h, uint64_t id, int status, const char *text);

/* true while id waits for its answer; false once answered or gone */
bool bp_httpd__pending(const struct bp_httpd *h, uint64_t id);

/*
 * A deadline for a held connection: ms from now it is answered 503 and
 * counted in held_timeouts, unless answered before. 0, or -ENOENT when id
 * no longer waits.
 */
int bp_httpd__hold(struct bp_httpd *h, uint64_t id, unsigned int ms);

/*
 * The value of key in a raw query ("seconds=3&debug=1"), percent-decoded
 * ('+' is a space) into out, NUL-terminated; "" for a bare "debug". Keys are
 * compared decoded; the first match wins. 0, -ENOENT (absent), -EINVAL (bad
 * encoding, or a NUL in the value), -ERANGE (does not fit in size bytes).
 */
int bp_httpd_query_get(const char *query, const char *key, char *out, size_t size);

#endif /* BP_HTTPD_H */
