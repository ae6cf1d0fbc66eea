/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opening files that other users name or control (perf maps in /tmp, debug
 * files next to their binaries, paths inside a container's root) so that
 * they cannot make us read what they could not, or hang:
 *
 * - resolved inside a root directory (a process's /proc/PID/root), so an
 *   absolute path or ".." cannot leave it;
 * - no symlink followed on the way or at the end, no /proc magic link;
 * - opened non-blocking (a FIFO cannot hang us), then regular files only;
 * - optionally owned by, or readable by, one user; optionally size-bounded.
 *
 * With openat2() this is RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS; where openat2() is missing (before Linux 5.6, or
 * filtered) the path is walked one component at a time with O_NOFOLLOW, and
 * ".." is refused.
 */
#ifndef BP_SAFEOPEN_H
#define BP_SAFEOPEN_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

enum {
	BP_OPEN_OWNER		= 1 << 0,	/* st_uid must be uid */
	BP_OPEN_READABLE	= 1 << 1,	/* owned by uid or readable by all
						 * (anything when uid is 0) */
	BP_OPEN_WALK		= 1 << 2,	/* walk components even if openat2
						 * exists (tests the fallback) */
};

struct bp_open_opts {
	unsigned int flags;
	uid_t uid;
	uint64_t max_size;	/* a bigger file is -EFBIG; 0: any size */
};

/*
 * Open path read-only under root_fd (a directory fd: absolute paths start
 * there), or from our own root and working directory when root_fd is
 * AT_FDCWD. o may be NULL. The fd (O_CLOEXEC, O_NONBLOCK), with *st filled
 * when st is not NULL, or -errno: -ELOOP for a symlink (-ENOTDIR for one on
 * the way, without openat2), -EXDEV for ".." without openat2, -EPERM for another kind of file or owner, -EFBIG.
 */
int bp_open_untrusted(int root_fd, const char *path, const struct bp_open_opts *o,
		      struct stat *st);

#endif /* BP_SAFEOPEN_H */
