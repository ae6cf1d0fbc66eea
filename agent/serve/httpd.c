// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "serve/httpd.h"
#include "util/log.h"

/*
 * Epoll data is the connection id: (sequence << 16) | slot, so an event finds
 * its connection in O(1) and an event or an answer for a connection that has
 * since gone (its slot reused) finds nothing instead of the wrong client.
 * Sequence 0 is never given to a connection and tags the server's own fds.
 */
#define SLOT_BITS	16
#define SLOT_MASK	((1u << SLOT_BITS) - 1)
#define MAX_CONNS_CAP	SLOT_MASK
#define ID_LISTEN	((uint64_t)SLOT_MASK)
#define ID_TIMER	((uint64_t)SLOT_MASK - 1)

#define LISTEN_BACKLOG	128
#define EVENT_BATCH	64
#define ACCEPT_BATCH	64
/* after EMFILE and friends, stop accepting a while instead of spinning */
#define ACCEPT_PAUSE_MS	100
/* after the answer: how long to swallow what the client still sends */
#define LINGER_MS	2000
/* bytes a client may send after its request while it waits for the answer */
#define MAX_EXTRA	BP_HTTPD_MAX_HEAD
#define DRAIN_ROUNDS	4

enum conn_state {
	CONN_READ,	/* reading the request head */
	CONN_PENDING,	/* complete request, waiting for an answer */
	CONN_WRITE,	/* sending the answer */
	CONN_LINGER,	/* answer sent and write side shut: wait for the client's close */
	CONN_DEAD,	/* closed; freed when process() unwinds */
};

/*
 * Who is on the other end, for the per-peer limit: the address, and for a
 * loopback client the owner of its socket, so that local users are peers
 * of their own rather than all one "127.0.0.1".
 */
struct peer {
	uint8_t addr[16];		/* IPv6, IPv4 as ::ffff:a.b.c.d */
	uint32_t uid;			/* NO_UID: remote, or not found */
};

#define NO_UID		UINT32_MAX

struct conn {
	uint64_t id;
	int fd;
	enum conn_state state;
	uint32_t events;		/* as registered with epoll */
	uint64_t deadline;		/* CLOCK_MONOTONIC ms; 0: none */
	uint64_t accepted;		/* CLOCK_MONOTONIC ms */
	struct peer peer;
	bool priority;			/* its request is for a priority path */
	const char *auth;		/* the Authorization value, in in[]; NULL: none */
	bool head;			/* HEAD request: no body in the answer */
	bool http11;
	bool got_reqline;
	bool method_done;		/* the request line's first SP arrived */
	unsigned int hosts;		/* Host header lines seen */
	size_t extra;			/* bytes swallowed while pending */
	size_t in_len;			/* bytes in in[] */
	size_t scan;			/* in[] before this holds no unseen '\n' */
	size_t line_start;		/* start of the line being received */
	size_t method, target, version;	/* offsets of the request line's parts */
	size_t path_end;		/* path length once decoded in place */
	const char *query;
	char *out;			/* the whole answer, head and body */
	size_t out_len, out_off;
	struct conn *next_dead;
	char in[BP_HTTPD_MAX_HEAD + 1];	/* + room for a NUL */
};

struct bp_httpd {
	int lfd, epfd, tfd;
	int diag_fd;			/* NETLINK_SOCK_DIAG, for loopback peers' owners; -1 */
	int port;
	bp_httpd_handler_fn handler;
	void *ctx;
	unsigned int timeout_ms;
	unsigned int head_timeout_ms;
	unsigned int linger_ms;
	unsigned int max_conns;
	unsigned int max_per_peer;
	unsigned int reserved;
	const char *const *priority_paths;
	unsigned int nconns;
	struct conn **slots;
	uint64_t seq;
	uint64_t accept_resume;		/* ms; 0: accepting */
	unsigned int busy;		/* process() frames on the stack */
	bool accept_failing;		/* warned already; quiet until an accept works */
	struct conn *dead;		/* closed while busy, not yet freed */
	struct bp_httpd_stats stats;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- helpers */

/* RFC 9110 tchar: the characters of methods and header names */
static bool is_tchar(unsigned char c)
{
	if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return c && strchr("!#$%&'*+-.^_`|~", c);
}

/* field-value bytes: visible ASCII, SP, HTAB and obs-text; no CTLs or DEL */
static bool is_vchar(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Next decoded byte of [*p, end), advancing *p; -EINVAL for a '%' not
 * followed by two hex digits.
 */
static int pct_next(const char **p, const char *end, bool plus_is_space)
{
	const unsigned char *s = (const unsigned char *)*p;
	int hi, lo;

	if (*s == '+' && plus_is_space) {
		(*p)++;
		return ' ';
	}
	if (*s != '%') {
		(*p)++;
		return *s;
	}
	if (end - *p < 3)
		return -EINVAL;
	hi = hexval(s[1]);
	lo = hexval(s[2]);
	if (hi < 0 || lo < 0)
		return -EINVAL;
	*p += 3;
	return hi << 4 | lo;
}

int bp_httpd_query_get(const char *query, const char *key, char *out, size_t size)
{
	const char *p, *end, *kend, *q;
	size_t klen, n;
	bool same;
	int c;

	if (!key || !out || !size)
		return -EINVAL;
	if (!query)
		return -ENOENT;
	klen = strlen(key);
	for (p = query; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '&');
		kend = memchr(p, '=', end - p);
		if (!kend)
			kend = end;
		/* compare the decoded key with key */
		q = p;
		n = 0;
		same = true;
		while (same && q < kend) {
			c = pct_next(&q, kend, true);
			if (c < 0)
				return c;
			same = n < klen && (unsigned char)key[n] == c;
			n++;
		}
		if (!same || n != klen)
			continue;

		q = kend < end ? kend + 1 : end;
		n = 0;
		while (q < end) {
			c = pct_next(&q, end, true);
			if (c <= 0)
				return c ? c : -EINVAL;
			if (n + 1 >= size)
				return -ERANGE;
			out[n++] = c;
		}
		out[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 206: return "Partial Content";
	case 301: return "Moved Permanently";
	case 302: return "Found";
	case 307: return "Temporary Redirect";
	case 308: return "Permanent Redirect";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 416: return "Range Not Satisfiable";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "";	/* the reason phrase is optional (RFC 9112 4) */
	}
}

/* "Sun, 06 Nov 1994 08:49:37 GMT" without strftime, whose names follow the locale */
static void http_date(char *out, size_t size)
{
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t t = time(NULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		snprintf(out, size, "Thu, 01 Jan 1970 00:00:00 GMT");
		return;
	}
	snprintf(out, size, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday % 7],
		 tm.tm_mday, months[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
		 tm.tm_sec);
}

/* an extra response header "Name: value" the caller may set */
static bool header_ok(const char *hdr)
{
	static const char *const reserved[] = {
		"content-length", "connection", "date", "transfer-encoding", "content-type",
	};
	const char *colon = hdr;
	size_t i;

	while (is_tchar(*colon))
		colon++;
	if (colon == hdr || *colon != ':')
		return false;
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		if (strlen(reserved[i]) == (size_t)(colon - hdr) &&
		    !strncasecmp(hdr, reserved[i], colon - hdr))
			return false;
	}
	for (colon++; *colon; colon++) {
		if (!is_vchar(*colon))
			return false;
	}
	return true;
}

static bool value_ok(const char *v)
{
	for (; *v; v++) {
		if (!is_vchar(*v))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ connections */

static struct conn *conn_get(const struct bp_httpd *h, uint64_t id)
{
	uint64_t slot = id & SLOT_MASK;
	struct conn *c;

	if (!(id >> SLOT_BITS) || slot >= h->max_conns)
		return NULL;
	c = h->slots[slot];
	return c && c->id == id ? c : NULL;
}

static int conn_set_events(struct bp_httpd *h, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = c->id };

	if (c->events == events)
		return 0;
	if (epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &ev))
		return -errno;
	c->events = events;
	return 0;
}

static void conn_close(struct bp_httpd *h, struct conn *c, const char *why)
{
	if (c->state == CONN_DEAD)
		return;
	bp_dbg("http: conn %" PRIu64 ": closed (%s)", c->id, why);
	/* the fd is ours alone, so close() also removes it from the epoll set */
	close(c->fd);
	c->fd = -1;
	c->state = CONN_DEAD;
	free(c->out);
	c->out = NULL;
	h->slots[c->id & SLOT_MASK] = NULL;
	h->nconns--;
	/* an event or handler further up the stack may still hold c */
	if (h->busy) {
		c->next_dead = h->dead;
		h->dead = c;
	} else {
		free(c);
	}
}

/* answer sent: shut the write side, then swallow input until the client closes */
static void conn_linger(struct bp_httpd *h, struct conn *c)
{
	free(c->out);
	c->out = NULL;
	/*
	 * close() with unread input would reset the connection, and a reset can
	 * destroy the answer before the client read it; a FIN first, then
	 * waiting for the client's, delivers it.
	 */
	if (shutdown(c->fd, SHUT_WR)) {
		conn_close(h, c, "shutdown failed");
		return;
	}
	c->state = CONN_LINGER;
	c->deadline = now_ms() + h->linger_ms;
	if (conn_set_events(h, c, EPOLLIN | EPOLLRDHUP))
		conn_close(h, c, "epoll_ctl failed");
}

static void conn_write(struct bp_httpd *h, struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out_len) {
		/* MSG_NOSIGNAL: a client gone mid-answer must not SIGPIPE the agent */
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (conn_set_events(h, c, EPOLLOUT))
					conn_close(h, c, "epoll_ctl failed");
				return;
			}
			conn_close(h, c, "client gone while writing");
			return;
		}
		c->out_off += n;
		/* a slow reader that keeps reading is served; a stalled one times out */
		c->deadline = now_ms() + h->timeout_ms;
	}
	conn_linger(h, c);
}

/*
 * Queue the answer and start sending it. The connection must not have been
 * answered yet. 0, -EINVAL or -ENOMEM (nothing queued then).
 */
static int conn_respond(struct bp_httpd *h, struct conn *c, int status, const char *ctype,
			const void *body, size_t len, const char *const *headers)
{
	struct bp_buf b = BP_BUF_INIT;
	char date[64];
	size_t i;

	if (status < 200 || status > 599 || status == 204 || status == 304)
		return -EINVAL;
	if (ctype && !value_ok(ctype))
		return -EINVAL;
	for (i = 0; headers && headers[i]; i++) {
		if (!header_ok(headers[i]))
			return -EINVAL;
	}
	if (len && !body)
		return -EINVAL;

	http_date(date, sizeof(date));
	bp_buf_reserve(&b, 256 + (c->head ? 0 : len));
	bp_buf_printf(&b, "HTTP/1.1 %d %s\r\nDate: %s\r\n", status, reason(status), date);
	if (ctype)
		bp_buf_printf(&b, "Content-Type: %s\r\n", ctype);
	bp_buf_printf(&b, "Content-Length: %zu\r\nConnection: close\r\n", len);
	for (i = 0; headers && headers[i]; i++)
		bp_buf_printf(&b, "%s\r\n", headers[i]);
	bp_buf_puts(&b, "\r\n");
	if (!c->head)
		bp_buf_append(&b, body, len);
	if (b.err) {
		bp_buf_free(&b);
		return -ENOMEM;
	}
	bp_dbg("http: conn %" PRIu64 ": %d, %zu bytes", c->id, status, len);
	h->stats.responses++;
	if (status >= 400 && status < 500)
		h->stats.client_errors++;
	else if (status >= 500)
		h->stats.server_errors++;

	c->out = b.data;
	c->out_len = b.len;
	c->out_off = 0;
	c->state = CONN_WRITE;
	c->deadline = now_ms() + h->timeout_ms;
	conn_write(h, c);
	return 0;
}

/* the server's own error answers; when even that fails, just close */
static void conn_error(struct bp_httpd *h, struct conn *c, int status, const char *text)
{
	static const char *const allow[] = { "Allow: GET, HEAD", NULL };
	static const char *const retry[] = { "Retry-After: 1", NULL };

	bp_dbg("http: conn %" PRIu64 ": rejected: %s", c->id, text);
	if (conn_respond(h, c, status, "text/plain; charset=utf-8", text, strlen(text),
			 status == 405 ? allow : status == 503 ? retry : NULL))
		conn_close(h, c, "out of memory");
}

/* -------------------------------------------------------------- admission */

/*
 * The owner of the client socket of a loopback connection, from the
 * kernel's socket table (sock_diag, as ss(8) reads it): the client's end
 * is fd's remote end seen the other way round.
 */
static uint32_t loopback_uid(struct bp_httpd *h, int fd, const struct sockaddr_storage *remote)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u,
		       .id.idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } },
	};
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	union {
		struct nlmsghdr nlh;
		char buf[1024];
	} resp;
	const struct sockaddr_in6 *r6 = (const void *)remote, *l6 = (const void *)&local;
	const struct sockaddr_in *r4 = (const void *)remote, *l4 = (const void *)&local;
	const struct inet_diag_msg *msg;
	ssize_t n;

	if (h->diag_fd < 0 || getsockname(fd, (struct sockaddr *)&local, &llen))
		return NO_UID;
	if (remote->ss_family == AF_INET) {
		req.r.sdiag_family = AF_INET;
		req.r.id.idiag_sport = r4->sin_port;
		req.r.id.idiag_dport = l4->sin_port;
		memcpy(req.r.id.idiag_src, &r4->sin_addr, 4);
		memcpy(req.r.id.idiag_dst, &l4->sin_addr, 4);
	} else if (IN6_IS_ADDR_V4MAPPED(&r6->sin6_addr)) {
		/* a dual-stack listener: the client's socket is an IPv4 one */
		req.r.sdiag_family = AF_INET;
		req.r.id.idiag_sport = r6->sin6_port;
		req.r.id.idiag_dport = l6->sin6_port;
		memcpy(req.r.id.idiag_src, r6->sin6_addr.s6_addr + 12, 4);
		memcpy(req.r.id.idiag_dst, l6->sin6_addr.s6_addr + 12, 4);
	} else {
		req.r.sdiag_family = AF_INET6;
		req.r.id.idiag_sport = r6->sin6_port;
		req.r.id.idiag_dport = l6->sin6_port;
		memcpy(req.r.id.idiag_src, &r6->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &l6->sin6_addr, 16);
	}
	if (send(h->diag_fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return NO_UID;
	/* the kernel answers before send() returns: this never waits */
	n = recv(h->diag_fd, &resp, sizeof(resp), MSG_DONTWAIT);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(*msg)) || !NLMSG_OK(&resp.nlh, (size_t)n) ||
	    resp.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return NO_UID;
	msg = NLMSG_DATA(&resp.nlh);
	return msg->idiag_uid;
}

static void peer_of(struct bp_httpd *h, int fd, const struct sockaddr_storage *ss,
		    struct peer *p)
{
	const struct sockaddr_in6 *s6 = (const void *)ss;
	const struct sockaddr_in *s4 = (const void *)ss;
	bool loopback;

	memset(p, 0, sizeof(*p));
	p->uid = NO_UID;
	if (ss->ss_family == AF_INET) {
		p->addr[10] = p->addr[11] = 0xff;
		memcpy(p->addr + 12, &s4->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(p->addr, &s6->sin6_addr, 16);
	}
	loopback = (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)p->addr) && p->addr[12] == 127) ||
		   IN6_IS_ADDR_LOOPBACK((struct in6_addr *)p->addr);
	if (loopback)
		p->uid = loopback_uid(h, fd, ss);
}

static bool same_peer(const struct peer *a, const struct peer *b)
{
	return a->uid == b->uid && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static unsigned int peer_conns(const struct bp_httpd *h, const struct peer *p)
{
	unsigned int i, n = 0;

	for (i = 0; i < h->max_conns; i++)
		n += h->slots[i] && same_peer(&h->slots[i]->peer, p);
	return n;
}

/*
 * Who makes room for a newcomer: a connection that costs nothing to drop,
 * one still waiting for its request head or one whose answer is sent;
 * answered ones first, then the oldest. Of peer p only, when p is given.
 * Held and half-written answers are never dropped.
 */
static struct conn *victim(const struct bp_httpd *h, const struct peer *p)
{
	struct conn *best = NULL, *c;
	unsigned int i;

	for (i = 0; i < h->max_conns; i++) {
		c = h->slots[i];
		if (!c || (c->state != CONN_READ && c->state != CONN_LINGER) ||
		    (p && !same_peer(&c->peer, p)))
			continue;
		if (!best || (c->state == CONN_LINGER && best->state == CONN_READ) ||
		    (c->state == best->state && c->accepted < best->accepted))
			best = c;
	}
	return best;
}

static bool is_priority(const struct bp_httpd *h, const char *path)
{
	size_t i;

	for (i = 0; h->priority_paths && h->priority_paths[i]; i++) {
		if (!strcmp(h->priority_paths[i], path))
			return true;
	}
	return false;
}

/*
 * A complete request: priority paths always go on; others only while
 * fewer than max_conns - reserved others are being worked on, so that the
 * reserved slots stay for the priority paths.
 */
static bool admit(struct bp_httpd *h, struct conn *c, const char *path)
{
	unsigned int i, working = 0;

	c->priority = is_priority(h, path);
	if (c->priority)
		return true;
	for (i = 0; i < h->max_conns; i++) {
		const struct conn *o = h->slots[i];

		working += o && o != c && !o->priority &&
			   (o->state == CONN_PENDING || o->state == CONN_WRITE);
	}
	return working < h->max_conns - h->reserved;
}

/* ---------------------------------------------------------------- parsing */

/*
 * The request line, NUL-terminated in place at c->in + start; 0 or the
 * status to reject it with, *why saying why.
 */
static int parse_reqline(struct conn *c, size_t start, size_t len, const char **why)
{
	char *line = c->in + start, *sp1, *sp2, *t, *q, *end, *o;
	const char *p;
	size_t i, tlen;
	int ch;

	for (i = 0; i < len; i++) {
		if ((unsigned char)line[i] <= 0x20 && line[i] != ' ') {
			*why = "malformed request line\n";
			return 400;
		}
		if ((unsigned char)line[i] >= 0x7f) {
			*why = "non-ASCII byte in request line\n";
			return 400;
		}
	}
	sp1 = memchr(line, ' ', len);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', line + len - sp1 - 1) : NULL;
	if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1 || sp2 + 1 == line + len ||
	    memchr(sp2 + 1, ' ', line + len - sp2 - 1)) {
		*why = "malformed request line\n";
		return 400;
	}
	*sp1 = '\0';
	*sp2 = '\0';
	c->method = start;
	c->target = sp1 + 1 - c->in;
	c->version = sp2 + 1 - c->in;

	if (!strcmp(sp2 + 1, "HTTP/1.1")) {
		c->http11 = true;
	} else if (strcmp(sp2 + 1, "HTTP/1.0")) {
		*why = "unsupported HTTP version\n";
		return 400;
	}
	tlen = sp2 - (sp1 + 1);
	if (tlen > BP_HTTPD_MAX_URI) {
		*why = "request URI too long\n";
		return 414;
	}
	for (p = line; *p; p++) {
		if (!is_tchar(*p)) {
			*why = "malformed method\n";
			return 400;
		}
	}
	if (!strcmp(line, "HEAD")) {
		c->head = true;
	} else if (strcmp(line, "GET")) {
		*why = "only GET and HEAD are allowed\n";
		return 405;
	}

	/* origin-form only: "/path?query"; no fragment */
	t = sp1 + 1;
	if (t[0] != '/' || memchr(t, '#', tlen)) {
		*why = "malformed request target\n";
		return 400;
	}
	end = t + tlen;
	q = memchr(t, '?', tlen);
	if (q) {
		*q = '\0';
		c->query = q + 1;
		for (p = q + 1; p < end;) {
			if (pct_next(&p, end, false) < 0) {
				*why = "bad percent-encoding in query\n";
				return 400;
			}
		}
		end = q;
	} else {
		c->query = "";
	}
	/* decoding only shrinks, so the path is decoded in place */
	for (p = t, o = t; p < end;) {
		ch = pct_next(&p, end, false);
		if (ch <= 0) {
			*why = "bad percent-encoding in path\n";
			return 400;
		}
		*o++ = ch;
	}
	*o = '\0';
	return 0;
}

/* one header line, NUL-terminated in place; 0 or the status to reject it with */
static int parse_header(struct conn *c, char *line, size_t len, const char **why)
{
	char *colon = line, *v;
	size_t i, nlen;

	*why = "malformed header\n";
	/* obs-fold continuation lines are to be rejected (RFC 9112 5.2) */
	while (is_tchar(*colon))
		colon++;
	if (colon == line || *colon != ':')
		return 400;
	nlen = colon - line;
	for (i = nlen + 1; i < len; i++) {
		if (!is_vchar(line[i]))
			return 400;
	}
	v = colon + 1;
	while (*v == ' ' || *v == '\t')
		v++;

	if (nlen == 4 && !strncasecmp(line, "host", 4)) {
		c->hosts++;
	} else if (nlen == 13 && !strncasecmp(line, "authorization", 13)) {
		if (c->auth) {
			*why = "repeated Authorization header\n";
			return 400;
		}
		/* trailing whitespace is not part of the value (RFC 9110 5.5) */
		for (i = len; line + i > v && (line[i - 1] == ' ' || line[i - 1] == '\t'); i--)
			line[i - 1] = '\0';
		c->auth = v;
	} else if (nlen == 14 && !strncasecmp(line, "content-length", 14)) {
		/* any digits at all, however many zeros, or it is malformed */
		i = strspn(v, "0123456789");
		if (!i || (v[i] && strspn(v + i, " \t") != strlen(v + i)))
			return 400;
		if (strspn(v, "0") != i) {
			*why = "request bodies are not accepted\n";
			return 413;
		}
	} else if (nlen == 17 && !strncasecmp(line, "transfer-encoding", 17)) {
		*why = "request bodies are not accepted\n";
		return 400;
	}
	return 0;
}

static void conn_dispatch(struct bp_httpd *h, struct conn *c)
{
	struct bp_httpd_req req = {
		.id = c->id,
		.method = c->in + c->method,
		.path = c->in + c->target,
		.query = c->query,
		.authorization = c->auth,
		.head = c->head,
		.peer_uid = c->peer.uid,
	};
	int ret;

	/* a 1.1 request without exactly one Host is invalid (RFC 9112 3.2) */
	if ((c->http11 && c->hosts != 1) || c->hosts > 1) {
		conn_error(h, c, 400, "missing or repeated Host header\n");
		return;
	}
	if (!admit(h, c, req.path)) {
		h->stats.rejected_slots++;
		conn_error(h, c, 503, "busy: too many requests in progress\n");
		return;
	}
	bp_dbg("http: conn %" PRIu64 ": %s %s%s%s", c->id, req.method, req.path,
	       *req.query ? "?" : "", req.query);
	c->state = CONN_PENDING;
	c->deadline = 0;
	ret = h->handler(h->ctx, h, &req);

	/* the handler may have answered, and the client may be gone */
	c = conn_get(h, req.id);
	if (!c || c->state != CONN_PENDING)
		return;
	if (ret == BP_HTTPD_HELD)
		return;
	bp_dbg("http: conn %" PRIu64 ": handler gave no answer (%d)", req.id, ret);
	conn_error(h, c, 500, "internal error\n");
}

/* look at newly received bytes; dispatch or reject once the head is complete */
static void conn_parse(struct bp_httpd *h, struct conn *c)
{
	const char *why = NULL;
	size_t end, len;
	char *nl, *line;
	int status;

	while (c->state == CONN_READ && c->scan < c->in_len) {
		nl = memchr(c->in + c->scan, '\n', c->in_len - c->scan);
		if (!nl) {
			/* say no early to what cannot become a method: TLS, binary junk */
			for (; !c->got_reqline && !c->method_done && c->scan < c->in_len; c->scan++) {
				unsigned char ch = c->in[c->scan];

				if (ch == ' ') {
					c->method_done = true;
				} else if (!is_tchar(ch) && ch != '\r') {
					conn_error(h, c, 400, "malformed request line\n");
					return;
				}
			}
			c->scan = c->in_len;
			return;
		}
		end = nl - c->in;
		c->scan = end + 1;
		line = c->in + c->line_start;
		len = end - c->line_start;
		/* LF alone ends a line too (RFC 9112 2.2); CR anywhere else is bad */
		if (len && line[len - 1] == '\r')
			len--;
		line[len] = '\0';
		if (memchr(line, '\r', len) || memchr(line, '\0', len)) {
			conn_error(h, c, 400, "stray CR or NUL in request\n");
			return;
		}
		if (!c->got_reqline) {
			/* empty lines before a request are to be ignored (RFC 9112 2.2) */
			if (!len) {
				c->line_start = end + 1;
				continue;
			}
			status = parse_reqline(c, c->line_start, len, &why);
			c->got_reqline = true;
		} else if (!len) {
			conn_dispatch(h, c);
			return;
		} else {
			status = parse_header(c, line, len, &why);
		}
		if (status) {
			conn_error(h, c, status, why);
			return;
		}
		c->line_start = end + 1;
	}
}

static void conn_read(struct bp_httpd *h, struct conn *c)
{
	size_t room;
	ssize_t n;

	while (c->state == CONN_READ) {
		room = BP_HTTPD_MAX_HEAD - c->in_len;
		if (!room) {
			if (c->got_reqline)
				conn_error(h, c, 431, "request header fields too large\n");
			else
				conn_error(h, c, 414, "request line too long\n");
			return;
		}
		n = recv(c->fd, c->in + c->in_len, room, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_close(h, c, "recv failed");
			return;
		}
		if (!n) {
			conn_close(h, c, "client left before a complete request");
			return;
		}
		c->in_len += n;
		conn_parse(h, c);
	}
}

/* pending or lingering: nothing more is expected but the client's close */
static void conn_drain(struct bp_httpd *h, struct conn *c)
{
	char tmp[4096];
	ssize_t n;
	int i;

	for (i = 0; i < DRAIN_ROUNDS; i++) {
		n = recv(c->fd, tmp, sizeof(tmp), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_close(h, c, "recv failed");
			return;
		}
		if (!n) {
			/* a held request's client that hangs up no longer wants the answer */
			conn_close(h, c, c->state == CONN_PENDING ? "client left before the answer"
								  : "done");
			return;
		}
		if (c->state == CONN_PENDING) {
			c->extra += n;
			if (c->extra > MAX_EXTRA) {
				conn_close(h, c, "client sent too much after its request");
				return;
			}
		}
	}
}

static void conn_event(struct bp_httpd *h, struct conn *c, uint32_t events)
{
	if (events & EPOLLERR) {
		conn_close(h, c, "socket error");
		return;
	}
	switch (c->state) {
	case CONN_READ:
		conn_read(h, c);
		break;
	case CONN_PENDING:
	case CONN_LINGER:
		if ((events & EPOLLHUP) && !(events & EPOLLIN))
			conn_close(h, c, "hang-up");
		else
			conn_drain(h, c);
		break;
	case CONN_WRITE:
		if (events & EPOLLHUP)
			conn_close(h, c, "hang-up while writing");
		else
			conn_write(h, c);
		break;
	case CONN_DEAD:
		break;
	}
}

static void conn_timeout(struct bp_httpd *h, struct conn *c)
{
	switch (c->state) {
	case CONN_READ:
		h->stats.head_timeouts++;
		/* say why to a client that started a request; an idle one just goes */
		if (c->in_len)
			conn_error(h, c, 408, "request timeout\n");
		else
			conn_close(h, c, "idle");
		break;
	case CONN_PENDING:
		/* only a deadline given with bp_httpd__hold() gets here */
		h->stats.held_timeouts++;
		conn_error(h, c, 503, "the answer took too long\n");
		break;
	case CONN_WRITE:
		h->stats.write_timeouts++;
		conn_close(h, c, "client stopped reading");
		break;
	case CONN_LINGER:
		conn_close(h, c, "client did not close");
		break;
	case CONN_DEAD:
		break;
	}
}

/* ----------------------------------------------------------------- server */

/* an answer costs nothing to the connections being served: no state is kept */
static void reject_busy(int fd)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
				   "Content-Type: text/plain; charset=utf-8\r\n"
				   "Content-Length: 21\r\n"
				   "Connection: close\r\n"
				   "Retry-After: 1\r\n"
				   "\r\n"
				   "too many connections\n";
	char tmp[4096];
	int i;

	/* unread input makes close() send a reset; take what already arrived */
	for (i = 0; i < DRAIN_ROUNDS; i++) {
		if (recv(fd, tmp, sizeof(tmp), MSG_DONTWAIT) <= 0)
			break;
	}
	if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		bp_dbg("http: 503 not sent: %s", strerror(errno));
	shutdown(fd, SHUT_WR);
	close(fd);
}

static void conn_new(struct bp_httpd *h, int fd, const struct peer *peer)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct conn *c;
	unsigned int slot;

	for (slot = 0; slot < h->max_conns; slot++) {
		if (!h->slots[slot])
			break;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->id = (++h->seq << SLOT_BITS) | slot;
	c->fd = fd;
	c->state = CONN_READ;
	c->events = ev.events;
	c->peer = *peer;
	c->accepted = now_ms();
	/* whole-request deadline, not per byte: a byte every few seconds must not hold a slot */
	c->deadline = c->accepted + h->head_timeout_ms;
	ev.data.u64 = c->id;
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		bp_warn("http: failed to watch a connection: %s", strerror(errno));
		close(fd);
		free(c);
		return;
	}
	h->slots[slot] = c;
	h->nconns++;
	bp_dbg("http: conn %" PRIu64 ": accepted", c->id);
}

static int listen_watch(struct bp_httpd *h, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u64 = ID_LISTEN };

	if (epoll_ctl(h->epfd, EPOLL_CTL_MOD, h->lfd, &ev))
		return -errno;
	return 0;
}

static void do_accept(struct bp_httpd *h)
{
	struct sockaddr_storage ss;
	struct peer peer;
	struct conn *v;
	socklen_t sslen;
	int i, fd, err;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		sslen = sizeof(ss);
		fd = accept4(h->lfd, (struct sockaddr *)&ss, &sslen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			err = errno;
			if (err == EAGAIN || err == EWOULDBLOCK)
				return;
			if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
				/* level-triggered: without a pause this would spin */
				if (!h->accept_failing)
					bp_warn("http: accept failed, pausing: %s", strerror(err));
				h->accept_failing = true;
				h->accept_resume = now_ms() + ACCEPT_PAUSE_MS;
				listen_watch(h, 0);
				return;
			}
			/* errors of one aborted connection (accept(2)): try the next */
			bp_dbg("http: accept failed: %s", strerror(err));
			continue;
		}
		h->accept_failing = false;
		peer_of(h, fd, &ss, &peer);
		if (peer_conns(h, &peer) >= h->max_per_peer) {
			/* a peer at its limit makes room among its own, or is refused */
			v = victim(h, &peer);
			if (!v) {
				bp_dbg("http: peer at its connection limit, answering 503");
				reject_busy(fd);
				h->stats.rejected_peer++;
				continue;
			}
			h->stats.evicted++;
			conn_close(h, v, "evicted: its peer opened another");
		} else if (h->nconns >= h->max_conns) {
			v = victim(h, NULL);
			if (!v) {
				bp_dbg("http: connection limit reached, answering 503");
				reject_busy(fd);
				h->stats.rejected_busy++;
				continue;
			}
			h->stats.evicted++;
			conn_close(h, v, "evicted: room for a new connection");
		}
		conn_new(h, fd, &peer);
	}
}

static void sweep(struct bp_httpd *h)
{
	uint64_t now = now_ms();
	unsigned int i;

	if (h->accept_resume && now >= h->accept_resume) {
		h->accept_resume = 0;
		if (listen_watch(h, EPOLLIN))
			bp_warn("http: failed to resume accepting: %s", strerror(errno));
	}
	for (i = 0; i < h->max_conns; i++) {
		struct conn *c = h->slots[i];

		if (c && c->deadline && now >= c->deadline)
			conn_timeout(h, c);
	}
}

/* the timer fires at the earliest deadline so that the caller's loop wakes us */
static int arm_timer(struct bp_httpd *h)
{
	struct itimerspec its = {};
	uint64_t next = h->accept_resume;
	unsigned int i;

	for (i = 0; i < h->max_conns; i++) {
		struct conn *c = h->slots[i];

		if (c && c->deadline && (!next || c->deadline < next))
			next = c->deadline;
	}
	if (next) {
		its.it_value.tv_sec = next / 1000;
		its.it_value.tv_nsec = (next % 1000) * 1000000;
	}
	/* a set time also clears a past expiry, and with it our readiness */
	if (timerfd_settime(h->tfd, TFD_TIMER_ABSTIME, &its, NULL))
		return -errno;
	return 0;
}

static void free_dead(struct bp_httpd *h)
{
	struct conn *c;

	while (h->dead) {
		c = h->dead;
		h->dead = c->next_dead;
		free(c);
	}
}

int bp_httpd__process(struct bp_httpd *h)
{
	struct epoll_event ev[EVENT_BATCH];
	uint64_t ticks;
	int i, n, err = 0;
	struct conn *c;

	h->busy++;
	n = epoll_wait(h->epfd, ev, EVENT_BATCH, 0);
	if (n < 0) {
		n = 0;
		if (errno != EINTR) {
			err = -errno;
			bp_err("http: epoll_wait failed: %s", strerror(-err));
		}
	}
	for (i = 0; i < n; i++) {
		if (ev[i].data.u64 == ID_LISTEN) {
			do_accept(h);
		} else if (ev[i].data.u64 == ID_TIMER) {
			if (read(h->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
				bp_dbg("http: timerfd read failed: %s", strerror(errno));
		} else {
			c = conn_get(h, ev[i].data.u64);
			if (c)
				conn_event(h, c, ev[i].events);
		}
	}
	sweep(h);
	h->busy--;
	if (!h->busy)
		free_dead(h);
	i = arm_timer(h);
	if (i && !err) {
		err = i;
		bp_err("http: timerfd_settime failed: %s", strerror(-err));
	}
	return err;
}

int bp_httpd__respond(struct bp_httpd *h, uint64_t id, int status, const char *content_type,
		      const void *body, size_t len, const char *const *headers)
{
	struct conn *c = conn_get(h, id);
	int err;

	if (!c || c->state != CONN_PENDING)
		return 0;
	h->busy++;
	err = conn_respond(h, c, status, content_type, body, len, headers);
	h->busy--;
	if (!h->busy) {
		free_dead(h);
		/* called from the caller's loop: the write deadline needs the timer */
		if (arm_timer(h))
			bp_warn("http: timerfd_settime failed: %s", strerror(errno));
	}
	return err;
}

int bp_httpd__respond_text(struct bp_httpd *h, uint64_t id, int status, const char *text)
{
	return bp_httpd__respond(h, id, status, "text/plain; charset=utf-8", text, strlen(text),
				 NULL);
}

bool bp_httpd__pending(const struct bp_httpd *h, uint64_t id)
{
	struct conn *c = conn_get(h, id);

	return c && c->state == CONN_PENDING;
}

int bp_httpd__hold(struct bp_httpd *h, uint64_t id, unsigned int ms)
{
	struct conn *c = conn_get(h, id);

	if (!c || c->state != CONN_PENDING)
		return -ENOENT;
	c->deadline = now_ms() + ms;
	/* from a handler, process() arms the timer when it unwinds */
	if (!h->busy && arm_timer(h))
		bp_warn("http: timerfd_settime failed: %s", strerror(errno));
	return 0;
}

int bp_httpd__fd(const struct bp_httpd *h)
{
	return h->epfd;
}

int bp_httpd__port(const struct bp_httpd *h)
{
	return h->port;
}

const struct bp_httpd_stats *bp_httpd__stats(const struct bp_httpd *h)
{
	return &h->stats;
}

unsigned int bp_httpd__conns(const struct bp_httpd *h)
{
	return h->nconns;
}

/*
 * "127.0.0.1:9464", "[::1]:9464", ":9464" (*any: every interface). Numeric
 * only: resolving a name could block, and a name that resolves to several
 * addresses would make "which one" a guess.
 */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sslen, bool *any)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN];
	const char *colon, *end;
	bool bracket = s && s[0] == '[';
	unsigned long port;
	size_t hlen;

	memset(ss, 0, sizeof(*ss));
	*any = false;
	if (!s)
		return -EINVAL;
	if (bracket) {
		end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		hlen = end - s - 1;
		colon = end + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', colon - s))
			return -EINVAL;
		hlen = colon - s;
	}
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';

	if (!colon[1] || strlen(colon + 1) > 5 || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -EINVAL;
	port = strtoul(colon + 1, NULL, 10);
	if (port > 65535)
		return -EINVAL;

	if (!hlen && !bracket) {
		*any = true;
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		*sslen = sizeof(*s6);
	} else if (bracket && inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		*sslen = sizeof(*s6);
	} else if (!bracket && inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		*sslen = sizeof(*s4);
	} else {
		return -EINVAL;
	}
	return 0;
}

int bp_httpd_check_listen(const char *listen_addr)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	bool any;

	return parse_listen(listen_addr, &ss, &sslen, &any);
}

static int open_listener(const char *listen_addr, int *port)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int fd = -1, one = 1, zero = 0, err;
	bool any;

	err = parse_listen(listen_addr, &ss, &sslen, &any);
	if (err) {
		/* the caller says it once, in its own words (as for what follows) */
		bp_dbg("http: bad listen address '%s'", listen_addr ? listen_addr : "(null)");
		return err;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 && any && (errno == EAFNOSUPPORT || errno == EPROTONOSUPPORT)) {
		/* a host without IPv6: every interface means every IPv4 one */
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		uint16_t p = ((struct sockaddr_in6 *)&ss)->sin6_port;

		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = p;
		sslen = sizeof(*s4);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	}
	if (fd < 0) {
		err = -errno;
		bp_dbg("http: failed to create socket: %s", strerror(-err));
		return err;
	}
	/* a restarted agent must not wait for the old one's TIME_WAIT sockets */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)))
		bp_dbg("http: SO_REUSEADDR failed: %s", strerror(errno));
	if (ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, any ? &zero : &one, sizeof(int)))
		bp_dbg("http: IPV6_V6ONLY failed: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&ss, sslen)) {
		err = -errno;
		bp_dbg("http: failed to bind %s: %s", listen_addr, strerror(-err));
		goto err_out;
	}
	if (listen(fd, LISTEN_BACKLOG)) {
		err = -errno;
		bp_dbg("http: failed to listen on %s: %s", listen_addr, strerror(-err));
		goto err_out;
	}
	sslen = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen)) {
		err = -errno;
		bp_dbg("http: getsockname failed: %s", strerror(-err));
		goto err_out;
	}
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;

err_out:
	close(fd);
	return err;
}

struct bp_httpd *bp_httpd__new(const char *listen_addr, bp_httpd_handler_fn handler, void *ctx,
			       const struct bp_httpd_opts *opts)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct bp_httpd *h;
	int err;

	if (!handler || (opts && opts->max_conns > MAX_CONNS_CAP)) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->lfd = h->epfd = h->tfd = h->diag_fd = -1;
	h->handler = handler;
	h->ctx = ctx;
	h->timeout_ms = opts && opts->timeout_ms ? opts->timeout_ms : BP_HTTPD_TIMEOUT_MS;
	h->head_timeout_ms = opts && opts->head_timeout_ms ? opts->head_timeout_ms :
			     BP_HTTPD_HEAD_TIMEOUT_MS;
	h->linger_ms = h->timeout_ms < LINGER_MS ? h->timeout_ms : LINGER_MS;
	h->max_conns = opts && opts->max_conns ? opts->max_conns : BP_HTTPD_MAX_CONNS;
	h->max_per_peer = opts && opts->max_per_peer ? opts->max_per_peer : BP_HTTPD_MAX_PER_PEER;
	h->reserved = opts && opts->reserved ? opts->reserved : BP_HTTPD_RESERVED;
	if (h->reserved >= h->max_conns)
		h->reserved = h->max_conns - 1;
	h->priority_paths = opts ? opts->priority_paths : NULL;
	/* without it, local users are one peer: the limits still hold, less fairly */
	h->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (h->diag_fd < 0)
		bp_dbg("http: no sock_diag (%s): local peers are told apart by address only",
		       strerror(errno));
	h->slots = calloc(h->max_conns, sizeof(*h->slots));
	if (!h->slots) {
		err = -ENOMEM;
		goto err_out;
	}

	err = open_listener(listen_addr, &h->port);
	if (err < 0)
		goto err_out;
	h->lfd = err;

	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (h->epfd < 0) {
		err = -errno;
		bp_dbg("http: epoll_create1 failed: %s", strerror(-err));
		goto err_out;
	}
	h->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (h->tfd < 0) {
		err = -errno;
		bp_dbg("http: timerfd_create failed: %s", strerror(-err));
		goto err_out;
	}
	ev.data.u64 = ID_LISTEN;
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->lfd, &ev)) {
		err = -errno;
		bp_dbg("http: epoll_ctl failed: %s", strerror(-err));
		goto err_out;
	}
	ev.data.u64 = ID_TIMER;
	if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->tfd, &ev)) {
		err = -errno;
		bp_dbg("http: epoll_ctl failed: %s", strerror(-err));
		goto err_out;
	}
	bp_info("http: listening on %s (port %d)", listen_addr, h->port);
	return h;

err_out:
	bp_httpd__free(h);
	errno = -err;
	return NULL;
}

void bp_httpd__free(struct bp_httpd *h)
{
	unsigned int i;

	if (!h)
		return;
	for (i = 0; h->slots && i < h->max_conns; i++) {
		if (h->slots[i])
			conn_close(h, h->slots[i], "server shut down");
	}
	free_dead(h);
	if (h->diag_fd >= 0)
		close(h->diag_fd);
	if (h->tfd >= 0)
		close(h->tfd);
	if (h->epfd >= 0)
		close(h->epfd);
	if (h->lfd >= 0)
		close(h->lfd);
	free(h->slots);
	free(h);
}
