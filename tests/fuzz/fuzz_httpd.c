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

	if (req->path[0] != '/' || (req->authorization && strchr(req->authorization, '\n')))
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
	static const char *const priority[] = { "/metrics", "/healthz", NULL };
	struct bp_httpd_opts o = { .timeout_ms = 2000, .max_conns = 4, .max_per_peer = 4,
				   .reserved = 1, .priority_paths = priority };

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

/*
 * A connection to the server, from a source address of 127/8 that changes
 * every time: a run makes hundreds of thousands of connections, and from one
 * address the closed ones (TIME_WAIT) would use up the ephemeral ports.
 */
static int client(const struct sockaddr_in *to)
{
	static uint32_t next = 2;
	struct sockaddr_in from = { .sin_family = AF_INET };
	int fd, tries;

	for (tries = 0; tries < 16; tries++) {
		from.sin_addr.s_addr = htonl(0x7f000000 | (next++ & 0xffffff));
		if ((next & 0xffffff) < 2)
			next = 2;
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			break;
		if (!bind(fd, (struct sockaddr *)&from, sizeof(from)) &&
		    !connect(fd, (const struct sockaddr *)to, sizeof(*to)))
			return fd;
		close(fd);
	}
	fprintf(stderr, "cannot connect to the server: %s\n", strerror(errno));
	abort();
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

	fd = client(&sa);
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
	/*
	 * The client is done. Now and then a graceful end, its FIN, after which
	 * the server finishes and closes; mostly a reset, as a graceful close
	 * leaves the server's end in TIME_WAIT for a minute, and a run would
	 * pile up hundreds of thousands of them.
	 */
	if (fuzz_rand(&seed) % 16 == 0) {
		shutdown(fd, SHUT_WR);
		for (i = 0; i < 1000; i++) {
			struct pollfd pfd = { .fd = bp_httpd__fd(srv), .events = POLLIN };

			run_server();
			if (!drain(fd) || !bp_httpd__conns(srv))
				break;
			poll(&pfd, 1, 1);
		}
	} else {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		run_server();
		drain(fd);
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(fd);
	for (i = 0; i < 1000; i++) {
		struct pollfd pfd = { .fd = bp_httpd__fd(srv), .events = POLLIN };

		run_server();
		if (!bp_httpd__conns(srv))
			break;
		poll(&pfd, 1, 1);
	}
	/* every connection ends with its client: none may be left over */
	if (bp_httpd__conns(srv))
		abort();
	return 0;
}
