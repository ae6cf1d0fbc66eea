// SPDX-License-Identifier: GPL-2.0
/* Recording through the agent's local socket (viaagent.h). */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"
#include "collect/loader.h"
#include "export/pprof.h"
#include "model/profile.h"
#include "util/log.h"
#include "viaagent.h"

bool via_agent_needed(void)
{
	return bp_check_privileges() != 0;
}

const char *via_agent_path(void)
{
	const char *p = getenv("BOUNDPROF_SOCKET");

	return p && *p ? p : BP_IPC_DEFAULT_SOCKET;
}

/* what an administrator must do, in one line */
static int no_agent(const char *path, int err)
{
	struct stat st;
	struct group *g;

	if (err == EACCES && !stat(path, &st) && (g = getgrgid(st.st_gid)) && st.st_gid) {
		cli_error("permission denied: profiling needs root, or CAP_BPF and CAP_PERFMON, or"
			  " the boundprof agent, whose socket %s is for group %s: ask an"
			  " administrator to add you to group %s", path, g->gr_name, g->gr_name);
		return EXIT_RUNTIME;
	}
	cli_error("permission denied: profiling needs root, or CAP_BPF and CAP_PERFMON, or the"
		  " boundprof agent, and none answers on %s (%s): ask an administrator to enable"
		  " boundprof-agent.service and to let you use it (its --socket-users: all, or a"
		  " group to add you to)", path, strerror(err));
	return EXIT_RUNTIME;
}

/* one line from the agent into line; 0, -EPROTO (too long), -ECONNRESET (gone), -ETIMEDOUT */
static int read_line(struct via_agent *va, char *line, int timeout_ms)
{
	for (;;) {
		long n = bp_ipc_line(va->in, va->len);
		struct pollfd pfd = { .fd = va->fd, .events = POLLIN };
		ssize_t r;

		if (n < 0)
			return -EPROTO;
		if (n > 0) {
			memcpy(line, va->in, n);
			line[n] = '\0';
			memmove(va->in, va->in + n, va->len - n);
			va->len -= n;
			return 0;
		}
		r = poll(&pfd, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			return -EINTR;
		if (r == 0)
			return -ETIMEDOUT;
		r = read(va->fd, va->in + va->len, sizeof(va->in) - va->len);
		if (r < 0 && errno == EINTR)
			return -EINTR;
		if (r <= 0)
			return -ECONNRESET;
		va->len += r;
	}
}

static int read_bytes(struct via_agent *va, char *buf, size_t len)
{
	size_t got = va->len < len ? va->len : len;

	memcpy(buf, va->in, got);
	memmove(va->in, va->in + got, va->len - got);
	va->len -= got;
	while (got < len) {
		ssize_t r = read(va->fd, buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ECONNRESET;
		got += r;
	}
	return 0;
}

static int gone(const struct via_agent *va)
{
	cli_error("the boundprof agent on %s hung up (was it stopped?)", va->path);
	return EXIT_RUNTIME;
}

/* connect and send r, then the first answer line into rep; 0 or the exit status (said) */
static int ask(struct via_agent *va, const struct bp_ipc_req *r, struct bp_ipc_reply *rep)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[BP_IPC_MAX_LINE + 1];
	int n, err;

	memset(va, 0, sizeof(*va));
	va->path = via_agent_path();
	va->fd = -1;
	if (strlen(va->path) >= sizeof(sa.sun_path)) {
		cli_error("BOUNDPROF_SOCKET is too long: %s", va->path);
		return EXIT_USAGE;
	}
	strcpy(sa.sun_path, va->path);
	va->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (va->fd < 0 || connect(va->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return no_agent(va->path, errno);
	n = bp_ipc_format_request(r, line, sizeof(line));
	if (n < 0) {
		cli_error("request too long for the agent (fewer pids, or a shorter cgroup path)");
		return EXIT_USAGE;
	}
	/* a send the agent cut short may still have its answer waiting: read it */
	if (send(va->fd, line, n, MSG_NOSIGNAL) != n)
		bp_dbg("sending the request: %s", strerror(errno));
	do
		err = read_line(va, line, -1);
	while (err == -EINTR);
	if (err || bp_ipc_parse_reply(line, strlen(line), rep))
		return gone(va);
	if (rep->kind == BP_IPC_R_ERROR) {
		cli_error("%s", rep->text);
		return rep->status;
	}
	return 0;
}

int via_agent_start(struct via_agent *va, const struct bp_ipc_req *r)
{
	struct bp_ipc_reply rep;
	int err = ask(va, r, &rep);

	if (err)
		return err;
	if (rep.kind != BP_IPC_R_OK) {
		cli_error("the boundprof agent on %s answered something unexpected", va->path);
		return EXIT_RUNTIME;
	}
	va->hz = rep.hz;
	return 0;
}

int via_agent_stop(struct via_agent *va)
{
	return send(va->fd, "stop\n", 5, MSG_NOSIGNAL) == 5 ? 0 : -errno;
}

bool via_agent_ready(struct via_agent *va)
{
	struct pollfd pfd = { .fd = va->fd, .events = POLLIN };

	return va->len || poll(&pfd, 1, 0) > 0;
}

int via_agent_next(struct via_agent *va, struct bp_profile **out, int timeout_ms)
{
	char line[BP_IPC_MAX_LINE + 1], errmsg[256];
	struct bp_ipc_reply rep;
	char *blob;
	int err;

	*out = NULL;
	for (;;) {
		err = read_line(va, line, timeout_ms);
		if (err == -ETIMEDOUT || err == -EINTR)
			return err;
		if (err || bp_ipc_parse_reply(line, strlen(line), &rep))
			return gone(va);
		if (rep.kind == BP_IPC_R_NOTE) {
			fprintf(stderr, "%s: warning: %s\n", cli_env.prog, rep.text);
			continue;
		}
		if (rep.kind == BP_IPC_R_ERROR) {
			cli_error("%s", rep.text);
			return rep.status;
		}
		if (rep.kind != BP_IPC_R_PROFILE && rep.kind != BP_IPC_R_SLICE)
			return gone(va);
		break;
	}
	blob = malloc(rep.len + 1);
	if (!blob) {
		cli_error("out of memory reading the agent's answer");
		return EXIT_RUNTIME;
	}
	if (read_bytes(va, blob, rep.len)) {
		free(blob);
		return gone(va);
	}
	*out = bp_pprof_read(blob, rep.len, errmsg, sizeof(errmsg));
	free(blob);
	if (!*out) {
		cli_error("the agent's answer is not a profile: %s", errmsg);
		return EXIT_RUNTIME;
	}
	return 0;
}

int via_agent_dump(const struct bp_ipc_req *r, bool json)
{
	struct via_agent va;
	struct bp_ipc_reply rep;
	char *text;
	int err;

	err = ask(&va, r, &rep);
	if (!err && rep.kind != BP_IPC_R_DUMP) {
		cli_error("the boundprof agent on %s answered something unexpected", va.path);
		err = EXIT_RUNTIME;
	}
	if (err) {
		via_agent_close(&va);
		return err;
	}
	text = malloc(rep.len + 1);
	if (!text || read_bytes(&va, text, rep.len)) {
		free(text);
		err = text ? gone(&va) : EXIT_RUNTIME;
		if (!text)
			cli_error("out of memory reading the agent's answer");
		via_agent_close(&va);
		return err;
	}
	fwrite(text, 1, rep.len, stdout);
	/* JSON stays one document: where it came from goes to stderr */
	if (json)
		fprintf(stderr, "%s: dumped through the boundprof agent on %s\n", cli_env.prog,
			va.path);
	else
		printf("\n(dumped through the boundprof agent on %s: your own processes only)\n",
		       va.path);
	free(text);
	via_agent_close(&va);
	return 0;
}

void via_agent_close(struct via_agent *va)
{
	if (va->fd >= 0)
		close(va->fd);
	va->fd = -1;
}

void via_agent_say(const struct via_agent *va)
{
	printf("(recorded through the boundprof agent on %s: your own processes only)\n",
	       va->path);
	fflush(stdout);
}
