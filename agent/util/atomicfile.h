/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files that appear whole or not at all: the data goes to a hidden
 * temporary beside the final name (".NAME.XXXXXX", same directory, so the
 * rename is atomic) and is renamed into place once complete. A reader never
 * sees half a profile; a crash leaves at most the temporary behind.
 * Opening early (before the work) makes an unwritable path fail early.
 */
#ifndef BP_ATOMICFILE_H
#define BP_ATOMICFILE_H

#include <stddef.h>
#include <sys/types.h>

struct bp_afile {
	int dirfd;		/* AT_FDCWD, or the directory path is relative to */
	char *path;		/* the final name */
	char *tmp;		/* the temporary, NULL when there is none */
	int fd;			/* -1 when closed */
};

/* an empty bp_afile: bp_afile_abort() on it is a no-op */
#define BP_AFILE_INIT { .dirfd = -1, .fd = -1 }

/*
 * Create the temporary for path (relative to dirfd, or AT_FDCWD) with
 * exactly mode, whatever the umask. Never follows a symlink at the
 * temporary's name. 0, -EISDIR (path is a directory), or -errno.
 */
int bp_afile_open(struct bp_afile *f, int dirfd, const char *path, mode_t mode);

/*
 * Write all of data to the temporary, for a file written in parts before
 * bp_afile_commit(). 0 or -errno (the caller aborts).
 */
int bp_afile_write(struct bp_afile *f, const void *data, size_t len);

/*
 * Write all of data, close and rename into place. 0 or -errno; on failure
 * the temporary is removed. Either way f is closed afterwards.
 */
int bp_afile_commit(struct bp_afile *f, const void *data, size_t len);

/* remove the temporary, if any; safe on a closed or never-opened f */
void bp_afile_abort(struct bp_afile *f);

#endif /* BP_ATOMICFILE_H */
