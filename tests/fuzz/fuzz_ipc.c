// SPDX-License-Identifier: GPL-2.0
/*
 * What an unprivileged user can send the root agent over its local socket
 * (agent/serve/ipc.h, agent/serve/local.c). Two halves, one input:
 *
 * - the parsers alone: a request or answer line is taken or refused with
 *   a reason, never read past; a request that parses prints back (format)
 *   to a line that parses to the same request; the line reader never
 *   reports a line it was not given.
 * - the server: the input, split at points drawn from it, is sent on a
 *   real connection to a real bp_local on a socket in the scratch
 *   directory, partial, oversized and all; whatever comes back starts with
 *   "ok ", "note " or "error " and is one line each; then the connection
 *   closes, and a second client's good request is still answered: a bad
 *   one costs its own connection only.
 */
#include "fuzz.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "serve/ipc.h"
#include "serve/local.h"

static struct bp_local *srv;
static char sock_path[128];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct bp_local_opts o;

	fuzz_init();
	bp_local_opts_default(&o);
	snprintf(sock_path, sizeof(sock_path), "%s", fuzz_path("ipc.sock"));
	o.path = sock_path;
	o.max_sessions = 2;
	srv = bp_local__new(&o, 99);
	if (!srv)
		abort();
	return 0;
}

static void same_req(const struct bp_ipc_req *a, const struct bp_ipc_req *b)
{
	if (a->verb != b->verb || a->nr_pids != b->nr_pids || a->tree != b->tree ||
	    a->have_cgroup != b->have_cgroup || a->seconds != b->seconds || a->hz != b->hz ||
	    memcmp(a->pids, b->pids, a->nr_pids * sizeof(a->pids[0])) ||
	    (a->have_cgroup && strcmp(a->cgroup, b->cgroup)))
		abort();
}

static void parsers(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct bp_ipc_req r, r2;
	struct bp_ipc_reply rep;
	char why[256], line[BP_IPC_MAX_LINE + 1];
	long n = bp_ipc_line(s, size);
	int len;

	if (n > 0 && (n > (long)size || s[n - 1] != '\n' || memchr(s, '\n', n - 1)))
		abort();
	if (n == 0 && (size >= BP_IPC_MAX_LINE || memchr(s, '\n', size)))
		abort();
	if (size > BP_IPC_MAX_LINE + 8)
		size = BP_IPC_MAX_LINE + 8;
	if (!bp_ipc_parse_request(s, size, &r, why, sizeof(why))) {
		if (r.nr_pids > BP_IPC_MAX_PIDS)
			abort();
		len = bp_ipc_format_request(&r, line, sizeof(line));
		/* a request that parsed may still not print back under the limit (encoding) */
		if (len > 0) {
			if (bp_ipc_parse_request(line, len, &r2, why, sizeof(why)))
				abort();
			same_req(&r, &r2);
		}
	} else if (!why[0] || strlen(why) >= sizeof(why)) {
		abort();
	}
	if (!bp_ipc_parse_reply(s, size, &rep)) {
		if ((rep.kind == BP_IPC_R_PROFILE || rep.kind == BP_IPC_R_SLICE) &&
		    rep.len > BP_IPC_MAX_BLOB)
			abort();
		if (rep.kind == BP_IPC_R_ERROR && rep.status != 1 && rep.status != 2)
			abort();
		if (strlen(rep.text) >= sizeof(rep.text))
			abort();
	}
	len = bp_ipc_format_error(line, sizeof(line), 2, why);
	if (len <= 0 || bp_ipc_parse_reply(line, len, &rep) || rep.kind != BP_IPC_R_ERROR)
		abort();
}

static int client(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	strcpy(sa.sun_path, sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	return fd;
}

/* every answer line is one the client understands; blobs skipped */
static void check_answers(const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		struct bp_ipc_reply rep;
		long n = bp_ipc_line(buf + off, len - off);

		if (n <= 0)
			abort();
		if (bp_ipc_parse_reply(buf + off, n, &rep))
			abort();
		off += n;
		if (rep.kind == BP_IPC_R_PROFILE || rep.kind == BP_IPC_R_SLICE ||
		    rep.kind == BP_IPC_R_DUMP)
			off += rep.len;
	}
}

/* read what the server says until it hangs up or goes quiet */
static size_t drain(int fd, char *buf, size_t cap, bool until_eof)
{
	size_t len = 0;
	int rounds;

	for (rounds = 0; rounds < 200; rounds++) {
		ssize_t n;

		if (bp_local__process(srv))
			abort();
		n = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0) {
			len += n;
			if (len == cap)
				break;
			continue;
		}
		if (!until_eof && rounds > 4)
			break;
		poll(NULL, 0, 1);
	}
	return len;
}

static void server(const uint8_t *data, size_t size)
{
	static const char good[] = "boundprof/1 dump pids=1\n";
	static char buf[1 << 16];
	uint64_t seed = fuzz_seed(data, size);
	size_t off = 0, len;
	int fd = client(), fd2;

	/* the input in a few pieces, the server turning between them: partial requests */
	while (off < size) {
		size_t piece = 1 + fuzz_rand(&seed) % (size - off);
		ssize_t n = send(fd, data + off, piece, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0)
			break;
		off += n;
		bp_local__process(srv);
	}
	len = drain(fd, buf, sizeof(buf), false);
	check_answers(buf, len);
	close(fd);
	bp_local__process(srv);
	/* someone else is still served, and gets the answer a good request gets */
	fd2 = client();
	if (send(fd2, good, sizeof(good) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(good) - 1)
		abort();
	len = drain(fd2, buf, sizeof(buf), true);
	check_answers(buf, len);
	if (len < 8 || memcmp(buf, "error 1 ", 8))
		abort();
	close(fd2);
	/* and both connections are gone: nothing is kept for a client that left */
	for (int i = 0; i < 100 && bp_local__stats(srv)->conns; i++) {
		bp_local__process(srv);
		poll(NULL, 0, 1);
	}
	if (bp_local__stats(srv)->conns || bp_local__stats(srv)->sessions)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parsers(data, size);
	server(data, size);
	return 0;
}
