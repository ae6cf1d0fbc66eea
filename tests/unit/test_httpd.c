// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <cmocka.h>

/* every test takes cmocka's state argument; none uses it */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "util/buf.h"
#include "serve/httpd.h"

#define BIG_LEN		(10u << 20)
#define MAX_HELD	128

/* ------------------------------------------------------------------ server */

struct srv {
	struct bp_httpd *h;
	unsigned int calls;
	uint64_t held[MAX_HELD];
	unsigned int nheld;
	char method[8], path[256], query[256];
	char *big;
};

static int handler(void *ctx, struct bp_httpd *h, const struct bp_httpd_req *req)
{
	static const char *const gz[] = { "Content-Encoding: gzip", "X-Extra: 1", NULL };
	static const char *const bad[] = { "X-Evil: a\r\nSet-Cookie: b", NULL };
	static const char *const reserved[] = { "Content-Length: 5", NULL };
	struct srv *s = ctx;
	char v[8];
	int err;

	s->calls++;
	snprintf(s->method, sizeof(s->method), "%s", req->method);
	snprintf(s->path, sizeof(s->path), "%s", req->path);
	snprintf(s->query, sizeof(s->query), "%s", req->query);
	assert_true(bp_httpd__pending(h, req->id));

	if (!strcmp(req->path, "/hello"))
		return bp_httpd__respond_text(h, req->id, 200, "hello\n");
	if (!strcmp(req->path, "/hold")) {
		assert_true(s->nheld < MAX_HELD);
		s->held[s->nheld++] = req->id;
		return BP_HTTPD_HELD;
	}
	if (!strcmp(req->path, "/big"))
		return bp_httpd__respond(h, req->id, 200, "application/octet-stream", s->big,
					 BIG_LEN, NULL);
	if (!strcmp(req->path, "/gz"))
		return bp_httpd__respond(h, req->id, 200, "application/octet-stream", "\x1f\x8b", 2,
					 gz);
	if (!strcmp(req->path, "/query")) {
		err = bp_httpd_query_get(req->query, "seconds", v, sizeof(v));
		if (err)
			return bp_httpd__respond_text(h, req->id, 400, "bad seconds\n");
		return bp_httpd__respond_text(h, req->id, 200, v);
	}
	if (!strcmp(req->path, "/misuse")) {
		/* refused answers leave the request waiting for a good one */
		assert_int_equal(bp_httpd__respond(h, req->id, 200, NULL, "", 0, bad), -EINVAL);
		assert_int_equal(bp_httpd__respond(h, req->id, 200, NULL, "", 0, reserved), -EINVAL);
		assert_int_equal(bp_httpd__respond(h, req->id, 200, "text/plain\n", "", 0, NULL),
				 -EINVAL);
		assert_int_equal(bp_httpd__respond(h, req->id, 204, NULL, "", 0, NULL), -EINVAL);
		assert_int_equal(bp_httpd__respond(h, req->id, 99, NULL, "", 0, NULL), -EINVAL);
		assert_int_equal(bp_httpd__respond(h, req->id, 600, NULL, "", 0, NULL), -EINVAL);
		assert_true(bp_httpd__pending(h, req->id));
		assert_int_equal(bp_httpd__respond_text(h, req->id, 299, "ok\n"), 0);
		/* a second answer is a quiet no-op */
		assert_int_equal(bp_httpd__respond_text(h, req->id, 500, "again\n"), 0);
		return 0;
	}
	if (!strcmp(req->path, "/auth"))
		return bp_httpd__respond_text(h, req->id, 200,
					      req->authorization ? req->authorization : "(none)");
	if (!strcmp(req->path, "/deadline")) {
		assert_int_equal(bp_httpd__hold(h, req->id, 150), 0);
		assert_true(s->nheld < MAX_HELD);
		s->held[s->nheld++] = req->id;
		return BP_HTTPD_HELD;
	}
	if (!strcmp(req->path, "/noanswer"))
		return 0;
	if (!strcmp(req->path, "/fail"))
		return -EIO;
	return bp_httpd__respond_text(h, req->id, 404, "not found\n");
}

static void srv_start(struct srv *s, const struct bp_httpd_opts *opts)
{
	memset(s, 0, sizeof(*s));
	s->h = bp_httpd__new("127.0.0.1:0", handler, s, opts);
	assert_non_null(s->h);
	assert_true(bp_httpd__port(s->h) > 0);
}

static void srv_stop(struct srv *s)
{
	bp_httpd__free(s->h);
	free(s->big);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* let the server work for ms, as the agent's loop would */
static void pump(struct srv *s, int ms)
{
	uint64_t end = now_ms() + ms;
	struct pollfd pfd = { .fd = bp_httpd__fd(s->h), .events = POLLIN };

	do {
		poll(&pfd, 1, 5);
		assert_int_equal(bp_httpd__process(s->h), 0);
	} while (now_ms() < end);
}

/* ------------------------------------------------------------------ client */

struct client {
	int fd;
	const char *req;
	size_t req_len, sent;
	size_t wchunk;		/* bytes per send; 0: as many as fit */
	size_t rchunk;		/* bytes per recv; 0: 64 KiB */
	int wgap_ms;		/* at least this long between sends */
	int rgap_ms;		/* ... between recvs */
	double rpace;		/* or: read no more than this many bytes per ms since rstart */
	uint64_t rstart;
	bool no_read;		/* never read (a stalled client) */
	uint64_t last_w, last_r;
	struct bp_buf resp;
	bool done;
	int err;		/* errno of a failed recv */
};

static int connect_to(int port, int rcvbuf)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	if (rcvbuf)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	/* loopback connects complete in the kernel, before any accept */
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

static void client_open(struct client *c, struct srv *s, const char *req, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->fd = connect_to(bp_httpd__port(s->h), 0);
	c->req = req;
	c->req_len = len;
	bp_buf_init(&c->resp);
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	bp_buf_free(&c->resp);
}

static void client_step(struct client *c)
{
	char tmp[64 << 10];
	uint64_t now = now_ms();
	size_t n;
	ssize_t r;

	if (c->done)
		return;
	if (c->sent < c->req_len && now >= c->last_w + c->wgap_ms) {
		n = c->req_len - c->sent;
		if (c->wchunk && n > c->wchunk)
			n = c->wchunk;
		r = send(c->fd, c->req + c->sent, n, MSG_NOSIGNAL);
		if (r > 0) {
			c->sent += r;
			c->last_w = now;
		} else if (errno != EAGAIN) {
			/* the server may answer and close before we are through */
			c->sent = c->req_len;
		}
	}
	if (c->no_read || now < c->last_r + c->rgap_ms)
		return;
	n = c->rchunk ? c->rchunk : sizeof(tmp);
	if (c->rpace > 0) {
		double allowed = c->rpace * (now - c->rstart);

		if (c->resp.len >= allowed)
			return;
		if (n > allowed - c->resp.len)
			n = allowed - c->resp.len + 1;
	}
	r = recv(c->fd, tmp, n, 0);
	if (r > 0) {
		bp_buf_append(&c->resp, tmp, r);
		c->last_r = now;
	} else if (!r) {
		c->done = true;
	} else if (errno != EAGAIN) {
		c->err = errno;
		c->done = true;
	}
}

/* pump the server and the clients until every client saw the end, or ms pass */
static bool run(struct srv *s, struct client *cl, int n, int ms)
{
	uint64_t end = now_ms() + ms;
	struct pollfd pfd[MAX_HELD + 1];
	int i, k, left;

	assert_true(n <= MAX_HELD);
	do {
		pfd[0] = (struct pollfd){ .fd = bp_httpd__fd(s->h), .events = POLLIN };
		for (i = 0, k = 1; i < n; i++) {
			if (cl[i].done)
				continue;
			pfd[k].fd = cl[i].fd;
			pfd[k].events = (cl[i].no_read ? 0 : POLLIN) |
					(cl[i].sent < cl[i].req_len ? POLLOUT : 0);
			k++;
		}
		poll(pfd, k, 2);
		assert_int_equal(bp_httpd__process(s->h), 0);
		for (i = 0, left = 0; i < n; i++) {
			client_step(&cl[i]);
			left += !cl[i].done;
		}
	} while (left && now_ms() < end);
	return !left;
}

struct resp {
	int status;
	const char *head;	/* status line and headers, "\r\n\r\n" included */
	size_t head_len;
	const char *body;
	size_t body_len;
};

/* parse a complete answer; its Content-Length must match its body */
static struct resp parse_resp(const struct client *c, bool head_request)
{
	struct resp r = {};
	const char *end, *cl;

	assert_int_equal(c->err, 0);
	assert_true(c->resp.len > 12);
	assert_memory_equal(c->resp.data, "HTTP/1.1 ", 9);
	r.status = atoi(c->resp.data + 9);
	end = strstr(c->resp.data, "\r\n\r\n");
	assert_non_null(end);
	r.head = c->resp.data;
	r.head_len = end + 4 - r.head;
	r.body = end + 4;
	r.body_len = c->resp.len - r.head_len;
	assert_non_null(memmem(r.head, r.head_len, "\r\nConnection: close\r\n", 21));
	cl = memmem(r.head, r.head_len, "\r\nContent-Length: ", 18);
	assert_non_null(cl);
	if (head_request)
		assert_int_equal(r.body_len, 0);
	else
		assert_int_equal(strtoull(cl + 18, NULL, 10), r.body_len);
	return r;
}

static bool has_header(const struct resp *r, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "\r\n%s\r\n", line);
	return memmem(r->head, r->head_len, want, strlen(want));
}

/* one request over one connection; the answer's status, with the client kept for checks */
static int fetch(struct srv *s, struct client *c, const char *req)
{
	client_open(c, s, req, strlen(req));
	assert_true(run(s, c, 1, 5000));
	return parse_resp(c, !strncmp(req, "HEAD ", 5)).status;
}

static int fetch_status(struct srv *s, const char *req)
{
	struct client c;
	int status;

	status = fetch(s, &c, req);
	client_close(&c);
	return status;
}

/* ------------------------------------------------------------------- tests */

static void get__hello__200_with_length_and_close(void **state)
{
	struct srv s;
	struct client c;
	struct resp r;

	srv_start(&s, NULL);
	assert_int_equal(fetch(&s, &c, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	r = parse_resp(&c, false);
	assert_memory_equal(r.head, "HTTP/1.1 200 OK\r\n", 17);
	assert_non_null(memmem(r.head, r.head_len, "\r\nDate: ", 8));
	assert_true(has_header(&r, "Content-Type: text/plain; charset=utf-8"));
	assert_true(has_header(&r, "Content-Length: 6"));
	assert_int_equal(r.body_len, 6);
	assert_memory_equal(r.body, "hello\n", 6);
	assert_string_equal(s.method, "GET");
	assert_string_equal(s.query, "");
	client_close(&c);

	/* HTTP/1.0 needs no Host; a bare LF ends lines too; leading empty lines are skipped */
	assert_int_equal(fetch_status(&s, "\r\nGET /hello HTTP/1.0\n\n"), 200);
	pump(&s, 20);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	assert_int_equal(s.calls, 2);
	srv_stop(&s);
}

static void head__hello__headers_without_body(void **state)
{
	struct srv s;
	struct client c;
	struct resp r;

	srv_start(&s, NULL);
	assert_int_equal(fetch(&s, &c, "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	r = parse_resp(&c, true);
	assert_true(has_header(&r, "Content-Length: 6"));
	assert_int_equal(r.body_len, 0);
	assert_string_equal(s.method, "HEAD");
	client_close(&c);
	srv_stop(&s);
}

static void get__paths_and_queries__decoded(void **state)
{
	struct srv s;
	struct client c;
	struct resp r;

	srv_start(&s, NULL);
	assert_int_equal(fetch_status(&s, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"), 404);
	assert_int_equal(fetch_status(&s, "GET /he%6Clo HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	assert_string_equal(s.path, "/hello");

	assert_int_equal(fetch(&s, &c, "GET /query?debug=1&se%63onds=%33%30 HTTP/1.1\r\n"
				       "Host: x\r\n\r\n"), 200);
	r = parse_resp(&c, false);
	assert_memory_equal(r.body, "30", 2);
	assert_string_equal(s.query, "debug=1&se%63onds=%33%30");
	client_close(&c);
	assert_int_equal(fetch_status(&s, "GET /query?seconds=123456789 HTTP/1.1\r\nHost: x\r\n\r\n"),
			 400);

	assert_int_equal(fetch(&s, &c, "GET /gz HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	r = parse_resp(&c, false);
	assert_true(has_header(&r, "Content-Encoding: gzip"));
	assert_true(has_header(&r, "X-Extra: 1"));
	assert_int_equal(r.body_len, 2);
	client_close(&c);

	assert_int_equal(fetch(&s, &c, "GET /misuse HTTP/1.1\r\nHost: x\r\n\r\n"), 299);
	r = parse_resp(&c, false);
	assert_memory_equal(r.body, "ok\n", 3);
	assert_null(memmem(r.head, r.head_len, "Set-Cookie", 10));
	client_close(&c);
	srv_stop(&s);
}

static void handler__no_answer_or_error__500(void **state)
{
	struct srv s;

	srv_start(&s, NULL);
	assert_int_equal(fetch_status(&s, "GET /noanswer HTTP/1.1\r\nHost: x\r\n\r\n"), 500);
	assert_int_equal(fetch_status(&s, "GET /fail HTTP/1.1\r\nHost: x\r\n\r\n"), 500);
	srv_stop(&s);
}

static char *repeat(const char *pre, char ch, size_t n, const char *post)
{
	size_t lp = strlen(pre), lq = strlen(post);
	char *s = malloc(lp + n + lq + 1);

	assert_non_null(s);
	memcpy(s, pre, lp);
	memset(s + lp, ch, n);
	memcpy(s + lp + n, post, lq + 1);
	return s;
}

static void bad_requests__4xx__handler_never_called(void **state)
{
	static const struct {
		const char *req;
		int status;
	} cases[] = {
		{ "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405 },
		{ "DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n", 405 },
		{ "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 405 },
		{ "GET /hello HTTP/2.0\r\nHost: x\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1x\r\nHost: x\r\n\r\n", 400 },
		{ "GET /hello http/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /hello\r\n\r\n", 400 },
		{ "GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1 x\r\nHost: x\r\n\r\n", 400 },
		{ "GET\t/hello HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "garbage\r\n\r\n", 400 },
		{ "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400 },
		{ "GET http://x/hello HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /hello#frag HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /he\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /a%4 HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /a%00b HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /query?seconds=%g0 HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 413 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
		  413 },
		{ "GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		  400 },
	};
	struct srv s;
	struct client c;
	struct resp r;
	char *req;
	size_t i;

	srv_start(&s, NULL);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (fetch_status(&s, cases[i].req) != cases[i].status)
			fail_msg("case %zu: %s", i, cases[i].req);
	}
	assert_int_equal(s.calls, 0);

	/* 405 names what is allowed */
	fetch(&s, &c, "PUT /x HTTP/1.1\r\nHost: x\r\n\r\n");
	r = parse_resp(&c, false);
	assert_int_equal(r.status, 405);
	assert_true(has_header(&r, "Allow: GET, HEAD"));
	client_close(&c);

	/* a URI past 2 KiB, and a request line past the whole 8 KiB head */
	req = repeat("GET /", 'a', BP_HTTPD_MAX_URI, " HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_int_equal(fetch_status(&s, req), 414);
	free(req);
	req = repeat("GET /", 'a', BP_HTTPD_MAX_URI - 1, " HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_int_equal(fetch_status(&s, req), 404);
	free(req);
	s.calls = 0;
	req = repeat("GET /", 'a', 100 << 10, " HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_int_equal(fetch_status(&s, req), 414);
	free(req);

	/* headers past 8 KiB, even when sent well past the limit */
	req = repeat("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ", 'b', BP_HTTPD_MAX_HEAD, "\r\n\r\n");
	assert_int_equal(fetch_status(&s, req), 431);
	free(req);
	req = repeat("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ", 'b', 1 << 20, "\r\n\r\n");
	assert_int_equal(fetch_status(&s, req), 431);
	free(req);
	assert_int_equal(s.calls, 0);

	/* just under the limit is fine */
	req = repeat("GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: ", 'b',
		     BP_HTTPD_MAX_HEAD - 40 - 4, "\r\n\r\n");
	assert_true(strlen(req) <= BP_HTTPD_MAX_HEAD);
	assert_int_equal(fetch_status(&s, req), 200);
	free(req);

	pump(&s, 20);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	srv_stop(&s);
}

static void held__answered_later__others_served_meanwhile(void **state)
{
	static const char hold[] = "GET /hold?seconds=1 HTTP/1.1\r\nHost: x\r\n\r\n";
	struct srv s;
	struct client c;
	struct resp r;

	srv_start(&s, NULL);
	client_open(&c, &s, hold, strlen(hold));
	assert_false(run(&s, &c, 1, 100));
	assert_int_equal(s.nheld, 1);
	assert_int_equal(c.resp.len, 0);
	assert_true(bp_httpd__pending(s.h, s.held[0]));

	assert_int_equal(fetch_status(&s, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"), 200);

	/* answered from the caller's loop, outside process() */
	assert_int_equal(bp_httpd__respond(s.h, s.held[0], 200, "application/octet-stream",
					   "\x1f\x8b\x08", 3, NULL), 0);
	assert_false(bp_httpd__pending(s.h, s.held[0]));
	assert_true(run(&s, &c, 1, 5000));
	r = parse_resp(&c, false);
	assert_int_equal(r.status, 200);
	assert_memory_equal(r.body, "\x1f\x8b\x08", 3);
	client_close(&c);

	pump(&s, 20);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	/* a finished id is gone: answering it again does nothing */
	assert_int_equal(bp_httpd__respond_text(s.h, s.held[0], 200, "late\n"), 0);
	srv_stop(&s);
}

static void held__client_leaves__answer_is_a_noop(void **state)
{
	static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n";
	struct srv s;
	struct client c[2];

	srv_start(&s, NULL);
	client_open(&c[0], &s, hold, strlen(hold));
	client_open(&c[1], &s, hold, strlen(hold));
	assert_false(run(&s, c, 2, 100));
	assert_int_equal(s.nheld, 2);
	assert_int_equal(bp_httpd__conns(s.h), 2);

	/* one closes politely, the other with a reset */
	client_close(&c[0]);
	setsockopt(c[1].fd, SOL_SOCKET, SO_LINGER, &(struct linger){ 1, 0 },
		   sizeof(struct linger));
	client_close(&c[1]);
	pump(&s, 50);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	assert_false(bp_httpd__pending(s.h, s.held[0]));
	assert_false(bp_httpd__pending(s.h, s.held[1]));
	assert_int_equal(bp_httpd__respond_text(s.h, s.held[0], 200, "late\n"), 0);
	assert_int_equal(bp_httpd__respond_text(s.h, s.held[1], 200, "late\n"), 0);
	pump(&s, 20);
	srv_stop(&s);
}

static void held__freed_with_server__no_leak(void **state)
{
	static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n";
	struct srv s;
	struct client c;

	srv_start(&s, NULL);
	client_open(&c, &s, hold, strlen(hold));
	assert_false(run(&s, &c, 1, 100));
	assert_int_equal(s.nheld, 1);
	srv_stop(&s);
	/* the server's end is closed: the client sees EOF with no answer */
	assert_int_equal(poll(&(struct pollfd){ .fd = c.fd, .events = POLLIN }, 1, 2000), 1);
	client_step(&c);
	assert_true(c.done);
	assert_int_equal(c.err, 0);
	assert_int_equal(c.resp.len, 0);
	client_close(&c);
}

static void conns__65th_with_all_held__503_then_served_again(void **state)
{
	static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char hello[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
	/* one peer may hold every slot here, and /hold is as cheap as /hello */
	static const char *const prio[] = { "/hold", "/hello", NULL };
	struct bp_httpd_opts opts = { .max_per_peer = BP_HTTPD_MAX_CONNS, .priority_paths = prio };
	struct client c[BP_HTTPD_MAX_CONNS + 1];
	struct srv s;
	struct resp r;
	unsigned int i;

	srv_start(&s, &opts);
	for (i = 0; i < BP_HTTPD_MAX_CONNS; i++)
		client_open(&c[i], &s, hold, strlen(hold));
	assert_false(run(&s, c, BP_HTTPD_MAX_CONNS, 300));
	assert_int_equal(s.nheld, BP_HTTPD_MAX_CONNS);
	assert_int_equal(bp_httpd__conns(s.h), BP_HTTPD_MAX_CONNS);

	/*
	 * One that resets before it is accepted: draining it consumes the reset,
	 * so the 503 then meets EPIPE, which without MSG_NOSIGNAL is a SIGPIPE.
	 */
	client_open(&c[i], &s, hello, strlen(hello));
	assert_int_equal(send(c[i].fd, hello, strlen(hello), 0), (ssize_t)strlen(hello));
	setsockopt(c[i].fd, SOL_SOCKET, SO_LINGER, &(struct linger){ 1, 0 },
		   sizeof(struct linger));
	client_close(&c[i]);
	pump(&s, 20);

	client_open(&c[i], &s, hello, strlen(hello));
	assert_true(run(&s, &c[i], 1, 5000));
	r = parse_resp(&c[i], false);
	assert_int_equal(r.status, 503);
	assert_true(has_header(&r, "Retry-After: 1"));
	client_close(&c[i]);
	assert_int_equal(s.calls, BP_HTTPD_MAX_CONNS);

	/* every held one is still answered, and then there is room again */
	for (i = 0; i < s.nheld; i++)
		assert_int_equal(bp_httpd__respond_text(s.h, s.held[i], 200, "done\n"), 0);
	assert_true(run(&s, c, BP_HTTPD_MAX_CONNS, 5000));
	for (i = 0; i < BP_HTTPD_MAX_CONNS; i++) {
		assert_int_equal(parse_resp(&c[i], false).status, 200);
		client_close(&c[i]);
	}
	assert_int_equal(fetch_status(&s, hello), 200);
	pump(&s, 20);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	srv_stop(&s);
}

/* attack: every slot taken by connections that never send a request */
static void idle__65th_evicts_the_oldest_idle_and_is_served(void **state)
{
	static const char hello[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
	struct bp_httpd_opts opts = { .max_per_peer = BP_HTTPD_MAX_CONNS };
	struct client c[BP_HTTPD_MAX_CONNS + 1];
	const struct bp_httpd_stats *st;
	struct srv s;
	unsigned int i, closed = 0;

	srv_start(&s, &opts);
	for (i = 0; i < BP_HTTPD_MAX_CONNS; i++) {
		client_open(&c[i], &s, "", 0);
		pump(&s, 2);
	}
	assert_false(run(&s, c, BP_HTTPD_MAX_CONNS, 100));
	assert_int_equal(bp_httpd__conns(s.h), BP_HTTPD_MAX_CONNS);
	client_open(&c[i], &s, hello, strlen(hello));
	assert_true(run(&s, &c[i], 1, 5000));
	assert_int_equal(parse_resp(&c[i], false).status, 200);
	client_close(&c[i]);
	st = bp_httpd__stats(s.h);
	assert_int_equal(st->evicted, 1);
	assert_int_equal(st->rejected_busy, 0);
	/* the one dropped was the oldest, closed without a word */
	run(&s, c, BP_HTTPD_MAX_CONNS, 50);
	for (i = 0; i < BP_HTTPD_MAX_CONNS; i++)
		closed += c[i].done;
	assert_int_equal(closed, 1);
	assert_true(c[0].done);
	assert_int_equal(c[0].resp.len, 0);
	for (i = 0; i < BP_HTTPD_MAX_CONNS; i++)
		client_close(&c[i]);
	srv_stop(&s);
}

static void peer__at_its_limit__own_idle_evicted_then_503(void **state)
{
	static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char hello[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char *const prio[] = { "/hold", NULL };
	struct bp_httpd_opts opts = { .max_per_peer = 4, .priority_paths = prio };
	const struct bp_httpd_stats *st;
	struct client c[6];
	struct srv s;
	unsigned int i;

	srv_start(&s, &opts);
	/* three held and one idle: the peer's four */
	for (i = 0; i < 3; i++)
		client_open(&c[i], &s, hold, strlen(hold));
	client_open(&c[3], &s, "", 0);
	assert_false(run(&s, c, 4, 100));
	assert_int_equal(s.nheld, 3);
	/* a fifth: the idle one makes room */
	client_open(&c[4], &s, hello, strlen(hello));
	assert_true(run(&s, &c[4], 1, 5000));
	assert_int_equal(parse_resp(&c[4], false).status, 200);
	st = bp_httpd__stats(s.h);
	assert_int_equal(st->evicted, 1);
	assert_true(run(&s, &c[3], 1, 1000));
	assert_int_equal(c[3].resp.len, 0);
	client_close(&c[4]);
	pump(&s, 50);
	/* four held: held ones are never dropped, so a fifth is refused */
	client_open(&c[4], &s, hold, strlen(hold));
	assert_false(run(&s, &c[4], 1, 100));
	assert_int_equal(s.nheld, 4);
	client_open(&c[5], &s, hello, strlen(hello));
	assert_true(run(&s, &c[5], 1, 5000));
	assert_int_equal(parse_resp(&c[5], false).status, 503);
	assert_int_equal(st->rejected_peer, 1);
	assert_int_equal(st->evicted, 1);
	for (i = 0; i < 6; i++)
		client_close(&c[i]);
	srv_stop(&s);
}

/* the reserved slots stay for the priority paths */
static void reserved__priority_path_served_when_others_fill_the_rest(void **state)
{
	static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char hello[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char *const prio[] = { "/hello", NULL };
	struct bp_httpd_opts opts = { .max_conns = 8, .reserved = 2, .max_per_peer = 8,
				      .priority_paths = prio };
	struct client c[8];
	struct srv s;
	struct resp r;
	unsigned int i;

	srv_start(&s, &opts);
	for (i = 0; i < 6; i++)
		client_open(&c[i], &s, hold, strlen(hold));
	assert_false(run(&s, c, 6, 100));
	assert_int_equal(s.nheld, 6);
	/* a seventh of the same kind: 503, the handler never sees it */
	client_open(&c[6], &s, hold, strlen(hold));
	assert_true(run(&s, &c[6], 1, 5000));
	r = parse_resp(&c[6], false);
	assert_int_equal(r.status, 503);
	assert_true(has_header(&r, "Retry-After: 1"));
	assert_int_equal(s.nheld, 6);
	assert_int_equal(bp_httpd__stats(s.h)->rejected_slots, 1);
	client_close(&c[6]);
	/* the priority path gets through, twice at once */
	client_open(&c[6], &s, hello, strlen(hello));
	client_open(&c[7], &s, hello, strlen(hello));
	assert_true(run(&s, &c[6], 2, 5000));
	assert_int_equal(parse_resp(&c[6], false).status, 200);
	assert_int_equal(parse_resp(&c[7], false).status, 200);
	for (i = 0; i < 8; i++)
		client_close(&c[i]);
	srv_stop(&s);
}

static void held__past_its_deadline__503_and_counted(void **state)
{
	static const char req[] = "GET /deadline HTTP/1.1\r\nHost: x\r\n\r\n";
	struct client c;
	struct srv s;
	uint64_t t0 = now_ms();

	srv_start(&s, NULL);
	client_open(&c, &s, req, strlen(req));
	assert_true(run(&s, &c, 1, 5000));
	assert_true(now_ms() - t0 >= 140);
	assert_int_equal(parse_resp(&c, false).status, 503);
	assert_int_equal(bp_httpd__stats(s.h)->held_timeouts, 1);
	assert_false(bp_httpd__pending(s.h, s.held[0]));
	/* the late answer is a no-op; a gone id cannot be held */
	assert_int_equal(bp_httpd__respond_text(s.h, s.held[0], 200, "late\n"), 0);
	assert_int_equal(bp_httpd__hold(s.h, s.held[0], 10), -ENOENT);
	client_close(&c);
	srv_stop(&s);
}

static void head_timeout__apart_from_the_write_timeout(void **state)
{
	struct bp_httpd_opts opts = { .head_timeout_ms = 150, .timeout_ms = 10000 };
	struct client c;
	struct srv s;
	uint64_t t0 = now_ms();

	srv_start(&s, &opts);
	client_open(&c, &s, "GET /hello HTTP/1.1\r\n", 21);
	assert_true(run(&s, &c, 1, 5000));
	assert_true(now_ms() - t0 < 5000);
	assert_int_equal(parse_resp(&c, false).status, 408);
	assert_int_equal(bp_httpd__stats(s.h)->head_timeouts, 1);
	client_close(&c);
	srv_stop(&s);
}

static void authorization__passed_trimmed_and_repeats_refused(void **state)
{
	struct srv s;
	struct client c;
	struct resp r;

	srv_start(&s, NULL);
	assert_int_equal(fetch(&s, &c, "GET /auth HTTP/1.1\r\nHost: x\r\n"
				   "authorization:  Bearer abc.def \t\r\n\r\n"), 200);
	r = parse_resp(&c, false);
	assert_int_equal(r.body_len, 14);
	assert_memory_equal(r.body, "Bearer abc.def", 14);
	client_close(&c);
	assert_int_equal(fetch(&s, &c, "GET /auth HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	r = parse_resp(&c, false);
	assert_memory_equal(r.body, "(none)", 6);
	client_close(&c);
	assert_int_equal(fetch_status(&s, "GET /auth HTTP/1.1\r\nHost: x\r\nAuthorization: a\r\n"
					  "Authorization: b\r\n\r\n"), 400);
	srv_stop(&s);
}

/* local users are peers of their own: another user's connections do not count as ours */
static void peer__loopback_users_told_apart(void **state)
{
	static const char hello[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
	struct bp_httpd_opts opts = { .max_per_peer = 2 };
	struct client c[2];
	struct srv s;
	int status, port;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIPPED: %s needs root to connect as another user\n", __func__);
		skip();
	}
	srv_start(&s, &opts);
	port = bp_httpd__port(s.h);
	client_open(&c[0], &s, "", 0);
	client_open(&c[1], &s, "", 0);
	assert_false(run(&s, c, 2, 50));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[64] = "";
		int fd;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		fd = connect_to(port, 0);
		fcntl(fd, F_SETFL, 0);
		if (send(fd, hello, strlen(hello), 0) != (ssize_t)strlen(hello) ||
		    recv(fd, buf, sizeof(buf) - 1, MSG_WAITALL) < 12)
			_exit(3);
		_exit(strncmp(buf, "HTTP/1.1 200", 12) ? 4 : 0);
	}
	while (waitpid(pid, &status, WNOHANG) == 0)
		pump(&s, 5);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* root's two idle connections were left alone */
	assert_int_equal(bp_httpd__stats(s.h)->evicted, 0);
	assert_false(run(&s, c, 2, 20));
	client_close(&c[0]);
	client_close(&c[1]);
	srv_stop(&s);
}

static void slow_client__byte_at_a_time__served(void **state)
{
	static const char req[] = "GET /query?seconds=7 HTTP/1.1\r\nHost: x\r\nUser-Agent: slow\r\n\r\n";
	struct srv s;
	struct client c;
	struct resp r;

	srv_start(&s, NULL);
	client_open(&c, &s, req, strlen(req));
	c.wchunk = 1;
	c.wgap_ms = 2;
	assert_true(run(&s, &c, 1, 5000));
	r = parse_resp(&c, false);
	assert_int_equal(r.status, 200);
	assert_memory_equal(r.body, "7", 1);
	client_close(&c);
	srv_stop(&s);
}

/*
 * A reader slower than the timeout in total but steady is served: the
 * deadline runs from the last write progress, not from the request. The
 * reader keeps to a schedule (the body over twice the timeout, catching up
 * when the machine held it back) rather than to a gap between reads, which
 * a busy machine would stretch until the kernel's send buffer, full, took
 * longer than the timeout to drain. Fails when the deadline counts from the
 * start (the answer is cut off at the timeout) or progress is lost.
 */
static void big_body__slow_reader__delivered_whole(void **state)
{
	static const char req[] = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
	struct bp_httpd_opts opts = { .timeout_ms = 500 };
	struct srv s;
	struct client c;
	struct resp r;
	uint64_t t0;
	size_t i;

	srv_start(&s, &opts);
	s.big = malloc(BIG_LEN);
	assert_non_null(s.big);
	for (i = 0; i < BIG_LEN; i++)
		s.big[i] = (char)(i * 7 + (i >> 13));

	memset(&c, 0, sizeof(c));
	c.fd = connect_to(bp_httpd__port(s.h), 16 << 10);
	c.req = req;
	c.req_len = strlen(req);
	c.rchunk = 16 << 10;
	c.rpace = (double)BIG_LEN / (2 * opts.timeout_ms);
	t0 = c.rstart = now_ms();
	assert_true(run(&s, &c, 1, 60000));
	r = parse_resp(&c, false);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, BIG_LEN);
	assert_memory_equal(r.body, s.big, BIG_LEN);
	/* it did take longer than the timeout: the schedule allows no less */
	assert_true(now_ms() - t0 > opts.timeout_ms);
	client_close(&c);
	pump(&s, 20);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	srv_stop(&s);
}

static void big_body__client_resets_midway__no_sigpipe(void **state)
{
	static const char req[] = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
	struct srv s;
	struct client c;

	srv_start(&s, NULL);
	s.big = calloc(1, BIG_LEN);
	assert_non_null(s.big);
	client_open(&c, &s, req, strlen(req));
	c.rchunk = 4096;
	while (c.resp.len < 100000 && !c.done)
		run(&s, &c, 1, 10);
	assert_false(c.done);
	/* closing with unread data resets; the next send must not raise SIGPIPE */
	client_close(&c);
	pump(&s, 100);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	srv_stop(&s);
}

static void timeouts__idle_partial_and_stalled__closed(void **state)
{
	static const char big[] = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char part[] = "GET /hello HTTP/1.1\r\nHo";
	struct bp_httpd_opts opts = { .timeout_ms = 200, .head_timeout_ms = 200 };
	struct client c[3];
	struct srv s;
	uint64_t t0;

	srv_start(&s, &opts);
	s.big = calloc(1, BIG_LEN);
	assert_non_null(s.big);
	client_open(&c[0], &s, "", 0);
	client_open(&c[1], &s, part, strlen(part));
	client_open(&c[2], &s, big, strlen(big));
	c[2].no_read = true;
	t0 = now_ms();
	assert_false(run(&s, c, 3, 100));
	assert_int_equal(bp_httpd__conns(s.h), 3);
	assert_true(run(&s, c, 2, 5000));
	assert_true(now_ms() - t0 >= 190);

	/* idle: closed without a word; partial request: told why */
	assert_int_equal(c[0].err, 0);
	assert_int_equal(c[0].resp.len, 0);
	assert_int_equal(parse_resp(&c[1], false).status, 408);

	/* the reader that never reads is dropped too */
	pump(&s, 400);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	assert_int_equal(s.calls, 1);
	client_close(&c[0]);
	client_close(&c[1]);
	client_close(&c[2]);
	srv_stop(&s);
}

static bool is_cloexec(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	return flags >= 0 && (flags & FD_CLOEXEC);
}

static void fds__all_cloexec(void **state)
{
	static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n";
	struct srv s;
	struct client c;
	struct dirent *de;
	char link[64], target[256];
	unsigned int checked = 0;
	ssize_t n;
	DIR *d;
	int fd;

	srv_start(&s, NULL);
	client_open(&c, &s, hold, strlen(hold));
	assert_false(run(&s, &c, 1, 100));
	assert_int_equal(bp_httpd__conns(s.h), 1);
	assert_true(is_cloexec(bp_httpd__fd(s.h)));

	/* the listener, the timer, the accepted socket: every socket and anon fd */
	d = opendir("/proc/self/fd");
	assert_non_null(d);
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, "socket:", 7) && strncmp(target, "anon_inode:", 11))
			continue;
		if (!is_cloexec(fd))
			fail_msg("fd %d (%s) lacks FD_CLOEXEC", fd, target);
		checked++;
	}
	closedir(d);
	assert_true(checked >= 5);
	client_close(&c);
	srv_stop(&s);
}

static void new__bad_addresses__einval_and_eaddrinuse(void **state)
{
	static const char *const bad[] = {
		"", "9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
		"127.0.0.1:80x", "localhost:9464", "::1:9464", "[::1]9464", "[127.0.0.1]:9464",
		"[::1:9464", "1.2.3:9464", "127.0.0.1:000009464",
	};
	struct bp_httpd *h, *h2;
	struct srv s;
	char addr[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		h = bp_httpd__new(bad[i], handler, NULL, NULL);
		if (h || errno != EINVAL)
			fail_msg("'%s' accepted (errno %d)", bad[i], errno);
	}
	errno = 0;
	assert_null(bp_httpd__new(NULL, handler, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(bp_httpd__new("127.0.0.1:0", NULL, NULL, NULL));
	assert_int_equal(errno, EINVAL);

	srv_start(&s, NULL);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", bp_httpd__port(s.h));
	errno = 0;
	assert_null(bp_httpd__new(addr, handler, NULL, NULL));
	assert_int_equal(errno, EADDRINUSE);
	srv_stop(&s);

	/* every interface, when asked for */
	h = bp_httpd__new(":0", handler, NULL, NULL);
	assert_non_null(h);
	assert_true(bp_httpd__port(h) > 0);
	/* [::1] where the host has IPv6 */
	h2 = bp_httpd__new("[::1]:0", handler, NULL, NULL);
	if (!h2)
		assert_true(errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT);
	bp_httpd__free(h2);
	bp_httpd__free(h);
	bp_httpd__free(NULL);
}

static void expect_stats(const struct srv *s, uint64_t responses, uint64_t client_errors,
			 uint64_t server_errors, uint64_t rejected_busy)
{
	const struct bp_httpd_stats *st = bp_httpd__stats(s->h);

	assert_non_null(st);
	assert_int_equal(st->responses, responses);
	assert_int_equal(st->client_errors, client_errors);
	assert_int_equal(st->server_errors, server_errors);
	assert_int_equal(st->rejected_busy, rejected_busy);
}

static void stats__handler_answers__counted_by_class(void **state)
{
	struct srv s;

	srv_start(&s, NULL);
	expect_stats(&s, 0, 0, 0, 0);
	assert_int_equal(fetch_status(&s, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	expect_stats(&s, 1, 0, 0, 0);
	assert_int_equal(fetch_status(&s, "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n"), 200);
	expect_stats(&s, 2, 0, 0, 0);
	/* the handler's own 4xx */
	assert_int_equal(fetch_status(&s, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"), 404);
	expect_stats(&s, 3, 1, 0, 0);
	assert_int_equal(fetch_status(&s, "GET /query?seconds=123456789 HTTP/1.1\r\n"
					  "Host: x\r\n\r\n"), 400);
	expect_stats(&s, 4, 2, 0, 0);
	/* a handler that fails, or does not answer: the server's 500 */
	assert_int_equal(fetch_status(&s, "GET /fail HTTP/1.1\r\nHost: x\r\n\r\n"), 500);
	expect_stats(&s, 5, 2, 1, 0);
	assert_int_equal(fetch_status(&s, "GET /noanswer HTTP/1.1\r\nHost: x\r\n\r\n"), 500);
	expect_stats(&s, 6, 2, 2, 0);
	/* refused answers count for nothing, a second answer neither: one 299 */
	assert_int_equal(fetch_status(&s, "GET /misuse HTTP/1.1\r\nHost: x\r\n\r\n"), 299);
	expect_stats(&s, 7, 2, 2, 0);
	assert_int_equal(s.calls, 7);
	srv_stop(&s);
}

static void stats__protocol_errors__counted_as_client_errors(void **state)
{
	struct bp_httpd_opts opts = { .timeout_ms = 200, .head_timeout_ms = 200 };
	static const char part[] = "GET /hello HTTP/1.1\r\nHo";
	struct srv s;
	struct client c;
	char *req;

	srv_start(&s, &opts);
	assert_int_equal(fetch_status(&s, "GET /hello HTTP/2.0\r\nHost: x\r\n\r\n"), 400);
	expect_stats(&s, 1, 1, 0, 0);
	assert_int_equal(fetch_status(&s, "PUT /hello HTTP/1.1\r\nHost: x\r\n\r\n"), 405);
	expect_stats(&s, 2, 2, 0, 0);
	req = repeat("GET /", 'a', BP_HTTPD_MAX_URI, " HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_int_equal(fetch_status(&s, req), 414);
	free(req);
	expect_stats(&s, 3, 3, 0, 0);
	/* a request that never ends: 408 when the timer fires */
	client_open(&c, &s, part, strlen(part));
	assert_true(run(&s, &c, 1, 5000));
	assert_int_equal(parse_resp(&c, false).status, 408);
	client_close(&c);
	expect_stats(&s, 4, 4, 0, 0);
	/* an idle connection is closed without a word: nothing answered */
	client_open(&c, &s, "", 0);
	assert_true(run(&s, &c, 1, 5000));
	assert_int_equal(c.resp.len, 0);
	client_close(&c);
	expect_stats(&s, 4, 4, 0, 0);
	assert_int_equal(s.calls, 0);
	srv_stop(&s);
}

static void stats__over_max_conns__rejected_busy(void **state)
{
	static const char hold[] = "GET /hold HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char hello[] = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char *const prio[] = { "/hold", NULL };
	struct bp_httpd_opts opts = { .max_conns = 2, .priority_paths = prio };
	struct client c[3];
	struct srv s;
	struct resp r;
	unsigned int i;
	uint64_t t0;

	srv_start(&s, &opts);
	for (i = 0; i < 2; i++)
		client_open(&c[i], &s, hold, strlen(hold));
	assert_false(run(&s, c, 2, 100));
	assert_int_equal(s.nheld, 2);
	expect_stats(&s, 0, 0, 0, 0);

	/* the third is answered 503 at accept, outside the handler and the answer count */
	client_open(&c[2], &s, hello, strlen(hello));
	assert_true(run(&s, &c[2], 1, 5000));
	r = parse_resp(&c[2], false);
	assert_int_equal(r.status, 503);
	client_close(&c[2]);
	expect_stats(&s, 0, 0, 0, 1);
	client_open(&c[2], &s, hello, strlen(hello));
	assert_true(run(&s, &c[2], 1, 5000));
	assert_int_equal(parse_resp(&c[2], false).status, 503);
	client_close(&c[2]);
	expect_stats(&s, 0, 0, 0, 2);
	assert_int_equal(s.calls, 2);

	/* one held answer given, the other client gone first: one response */
	assert_int_equal(bp_httpd__respond_text(s.h, s.held[0], 200, "done\n"), 0);
	assert_true(run(&s, c, 1, 5000));
	assert_int_equal(parse_resp(&c[0], false).status, 200);
	client_close(&c[0]);
	client_close(&c[1]);
	t0 = now_ms();
	while (bp_httpd__conns(s.h) && now_ms() - t0 < 5000)
		pump(&s, 10);
	assert_int_equal(bp_httpd__conns(s.h), 0);
	assert_false(bp_httpd__pending(s.h, s.held[1]));
	assert_int_equal(bp_httpd__respond_text(s.h, s.held[1], 503, "late\n"), 0);
	expect_stats(&s, 1, 0, 0, 2);

	/* room again: served, not rejected */
	assert_int_equal(fetch_status(&s, hello), 200);
	expect_stats(&s, 2, 0, 0, 2);
	srv_stop(&s);
}

static void query_get__cases(void **state)
{
	char v[8];

	assert_int_equal(bp_httpd_query_get("seconds=3&debug=1", "seconds", v, sizeof(v)), 0);
	assert_string_equal(v, "3");
	assert_int_equal(bp_httpd_query_get("seconds=3&debug=1", "debug", v, sizeof(v)), 0);
	assert_string_equal(v, "1");
	assert_int_equal(bp_httpd_query_get("a&debug&b=2", "debug", v, sizeof(v)), 0);
	assert_string_equal(v, "");
	assert_int_equal(bp_httpd_query_get("x=1&x=2", "x", v, sizeof(v)), 0);
	assert_string_equal(v, "1");
	assert_int_equal(bp_httpd_query_get("q=a+b%2Bc%20", "q", v, sizeof(v)), 0);
	assert_string_equal(v, "a b+c ");
	assert_int_equal(bp_httpd_query_get("a%3Db=1", "a=b", v, sizeof(v)), 0);
	assert_string_equal(v, "1");
	assert_int_equal(bp_httpd_query_get("k==", "k", v, sizeof(v)), 0);
	assert_string_equal(v, "=");
	assert_int_equal(bp_httpd_query_get("&&k=1&", "k", v, sizeof(v)), 0);
	assert_string_equal(v, "1");

	assert_int_equal(bp_httpd_query_get("secondsx=1&xseconds=2&second=3", "seconds", v,
					    sizeof(v)), -ENOENT);
	assert_int_equal(bp_httpd_query_get("", "k", v, sizeof(v)), -ENOENT);
	assert_int_equal(bp_httpd_query_get(NULL, "k", v, sizeof(v)), -ENOENT);
	assert_int_equal(bp_httpd_query_get("k=1234567", "k", v, sizeof(v)), 0);
	assert_int_equal(bp_httpd_query_get("k=12345678", "k", v, sizeof(v)), -ERANGE);
	assert_int_equal(bp_httpd_query_get("k=%00", "k", v, sizeof(v)), -EINVAL);
	assert_int_equal(bp_httpd_query_get("k=%4", "k", v, sizeof(v)), -EINVAL);
	assert_int_equal(bp_httpd_query_get("k=%xy", "k", v, sizeof(v)), -EINVAL);
	assert_int_equal(bp_httpd_query_get("k=1", "k", v, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(get__hello__200_with_length_and_close),
		cmocka_unit_test(head__hello__headers_without_body),
		cmocka_unit_test(get__paths_and_queries__decoded),
		cmocka_unit_test(handler__no_answer_or_error__500),
		cmocka_unit_test(bad_requests__4xx__handler_never_called),
		cmocka_unit_test(held__answered_later__others_served_meanwhile),
		cmocka_unit_test(held__client_leaves__answer_is_a_noop),
		cmocka_unit_test(held__freed_with_server__no_leak),
		cmocka_unit_test(conns__65th_with_all_held__503_then_served_again),
		cmocka_unit_test(idle__65th_evicts_the_oldest_idle_and_is_served),
		cmocka_unit_test(peer__at_its_limit__own_idle_evicted_then_503),
		cmocka_unit_test(reserved__priority_path_served_when_others_fill_the_rest),
		cmocka_unit_test(held__past_its_deadline__503_and_counted),
		cmocka_unit_test(head_timeout__apart_from_the_write_timeout),
		cmocka_unit_test(authorization__passed_trimmed_and_repeats_refused),
		cmocka_unit_test(peer__loopback_users_told_apart),
		cmocka_unit_test(slow_client__byte_at_a_time__served),
		cmocka_unit_test(big_body__slow_reader__delivered_whole),
		cmocka_unit_test(big_body__client_resets_midway__no_sigpipe),
		cmocka_unit_test(timeouts__idle_partial_and_stalled__closed),
		cmocka_unit_test(fds__all_cloexec),
		cmocka_unit_test(new__bad_addresses__einval_and_eaddrinuse),
		cmocka_unit_test(query_get__cases),
		cmocka_unit_test(stats__handler_answers__counted_by_class),
		cmocka_unit_test(stats__protocol_errors__counted_as_client_errors),
		cmocka_unit_test(stats__over_max_conns__rejected_busy),
	};

	/* the server must survive clients that vanish without SIGPIPE being ignored */
	signal(SIGPIPE, SIG_DFL);
	return cmocka_run_group_tests_name("httpd", tests, NULL, NULL);
}
