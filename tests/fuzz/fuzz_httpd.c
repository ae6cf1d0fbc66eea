// SPDX-License-Identifier: GPL-2.0
/*
 * The HTTP server's request parser, through the server itself: the input
 * is sent on a real loopback connection in pieces cut at points drawn from
 * it, the server runs after each piece, and whatever it answers is read.
 * The handler answers some paths at once, holds others and answers them
 * after the next piece, and decodes query values as the agent's do.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include "fuzz.h"

#include "serve/httpd.h"

static struct bp_httpd *srv;
static uint64_t held;		/* a connection the handler keeps, 0: none */

static int handler(void *ctx, struct bp_httpd *h, const struct bp_httpd_req *req)
{
	char val[64];
	int err;

	if (strchr(req->path, '\0') != req->path + strlen(req->path) || req->path[0] != '/')
		abort();
	err = bp_httpd_query_get(req->query, "seconds", val, sizeof(val));
	if (err && err != -ENOENT && err != -EINVAL && err != -ERANGE)
		abort();
	if (!strncmp(req->path, "/hold", 5) && !held) {
		held = req->id;
		return BP_HTTPD_HELD;
	}
	if (!strcmp(req->path, "/fail"))
		return -EIO;
	return bp_httpd__respond_text(h, req->id, err ? 400 : 200, err ? "bad\n" : val);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct bp_httpd_opts o = { .timeout_ms = 2000, .max_conns = 4 };

	fuzz_init();
	signal(SIGPIPE, SIG_IGN);
	srv = bp_httpd__new("127.0.0.1:0", handler, NULL, &o);
	if (!srv)
		abort();
	return 0;
}

/* what the server sent so far, read and dropped; false once it closed */
static bool drain(int fd)
{
	char buf[4096];
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
	}
}

static void run_server(void)
{
	if (bp_httpd__process(srv))
		abort();
	if (held && bp_httpd__pending(srv, held))
		bp_httpd__respond(srv, held, 200, "text/plain", "late\n", 5, NULL);
	held = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(bp_httpd__port(srv)),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint64_t seed = fuzz_seed(data, size);
	size_t off = 0, n;
	bool open = true;
	int fd, i;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	run_server();
	while (off < size && open) {
		/* mostly small pieces, now and then the rest at once */
		n = fuzz_rand(&seed) % 8 ? 1 + fuzz_rand(&seed) % 16 : size - off;
		if (n > size - off)
			n = size - off;
		if (send(fd, data + off, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			break;
		off += n;
		run_server();
		open = drain(fd);
	}
	/* the client is done: its FIN, then the server finishes and closes */
	shutdown(fd, SHUT_WR);
	for (i = 0; i < 1000 && bp_httpd__conns(srv); i++) {
		struct pollfd pfd = { .fd = bp_httpd__fd(srv), .events = POLLIN };

		run_server();
		if (!drain(fd))
			break;
		poll(&pfd, 1, 1);
	}
	close(fd);
	for (i = 0; i < 1000 && bp_httpd__conns(srv); i++) {
		struct pollfd pfd = { .fd = bp_httpd__fd(srv), .events = POLLIN };

		run_server();
		poll(&pfd, 1, 1);
	}
	/* every connection ends with its client: none may be left over */
	if (bp_httpd__conns(srv))
		abort();
	return 0;
}
