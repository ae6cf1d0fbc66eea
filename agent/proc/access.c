// SPDX-License-Identifier: GPL-2.0
/* The ptrace read rule, from /proc (see access.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/access.h"

static int ids_after(const char *text, const char *key, uint32_t out[4])
{
	const char *p = text;
	size_t kl = strlen(key);
	int i;

	for (;;) {
		if (!strncmp(p, key, kl))
			break;
		p = strchr(p, '\n');
		if (!p)
			return -EINVAL;
		p++;
	}
	p += kl;
	for (i = 0; i < 4; i++) {
		unsigned long v;
		char *end;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || v > UINT32_MAX)
			return -EINVAL;
		out[i] = (uint32_t)v;
		p = end;
	}
	return 0;
}

int bp_status_ids(const char *text, uint32_t uids[4], uint32_t gids[4])
{
	return ids_after(text, "Uid:", uids) ?: ids_after(text, "Gid:", gids);
}

int bp_may_trace(const char *proc_root, uint32_t pid, uint32_t uid, uint32_t gid)
{
	char path[64], buf[4096];
	uint32_t uids[4], gids[4];
	struct stat st;
	ssize_t n;
	int dfd, fd, i;

	if (!pid)
		return -EPERM;
	snprintf(path, sizeof(path), "%s/%u", proc_root ? proc_root : "/proc", pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return errno == ENOENT ? -ESRCH : -EPERM;
	if (uid == 0) {
		close(dfd);
		return 0;
	}
	/* not dumpable (setuid, prctl): the kernel gives its /proc files to root */
	if (fstat(dfd, &st) || st.st_uid != uid) {
		close(dfd);
		return -EPERM;
	}
	fd = openat(dfd, "status", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	close(dfd);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -EPERM;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 && errno == ESRCH ? -ESRCH : -EPERM;
	buf[n] = '\0';
	if (bp_status_ids(buf, uids, gids))
		return -EPERM;
	/* __ptrace_may_access(): the caller's ids against real, effective and saved */
	for (i = 0; i < 3; i++)
		if (uids[i] != uid || gids[i] != gid)
			return -EPERM;
	return 0;
}
