// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/safeopen.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define OPEN_FLAGS	(O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW)

/* 1: works, -1: missing (ENOSYS, or a seccomp filter's EPERM), 0: not known */
static int have_openat2;

static int open_resolved(int root_fd, const char *path)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (root_fd != AT_FDCWD)
		how.resolve |= RESOLVE_IN_ROOT;
	fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd < 0 && (errno == ENOSYS || (errno == EPERM && have_openat2 <= 0))) {
		have_openat2 = -1;
		return -ENOSYS;
	}
	have_openat2 = 1;
	return fd < 0 ? -errno : (int)fd;
}

/* one component at a time, none of them a symlink; ".." is refused */
static int open_walk(int root_fd, const char *path)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	int dir, fd;

	if (root_fd != AT_FDCWD)
		dir = fcntl(root_fd, F_DUPFD_CLOEXEC, 0);
	else
		dir = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	for (;;) {
		size_t n;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n) {
			close(dir);
			return -EISDIR;
		}
		if (n > NAME_MAX) {
			close(dir);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (!strcmp(comp, "..")) {
			close(dir);
			return -EXDEV;
		}
		if (!strcmp(comp, "."))
			continue;
		if (!p[strspn(p, "/")])
			break;
		/* O_PATH|O_NOFOLLOW opens a symlink itself: O_DIRECTORY refuses it */
		fd = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		if (fd < 0)
			return -errno;
		dir = fd;
	}
	fd = openat(dir, comp, OPEN_FLAGS);
	if (fd < 0)
		fd = -errno;
	close(dir);
	return fd;
}

int bp_open_untrusted(int root_fd, const char *path, const struct bp_open_opts *o,
		      struct stat *st)
{
	static const struct bp_open_opts none;
	struct stat sb;
	int fd, err;

	if (!o)
		o = &none;
	if (!path[0])
		return -ENOENT;
	fd = -ENOSYS;
	if (!(o->flags & BP_OPEN_WALK) && have_openat2 >= 0)
		fd = open_resolved(root_fd, path);
	if (fd == -ENOSYS)
		fd = open_walk(root_fd, path);
	if (fd < 0)
		return fd;
	if (!st)
		st = &sb;
	if (fstat(fd, st)) {
		err = -errno;
		goto fail;
	}
	err = -EPERM;
	if (!S_ISREG(st->st_mode))
		goto fail;
	if ((o->flags & BP_OPEN_OWNER) && st->st_uid != o->uid)
		goto fail;
	if ((o->flags & BP_OPEN_READABLE) && o->uid && st->st_uid != o->uid &&
	    !(st->st_mode & S_IROTH))
		goto fail;
	if (o->max_size && (uint64_t)st->st_size > o->max_size) {
		err = -EFBIG;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}
