// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/atomicfile.h"

#define TMP_TRIES	100

/* six characters from mkstemp's alphabet, from the kernel's entropy when it has some */
static void random_suffix(char *out)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char r[6];
	int i;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		static unsigned int n;
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		n += (unsigned int)ts.tv_nsec ^ (unsigned int)getpid();
		for (i = 0; i < 6; i++)
			r[i] = (unsigned char)(n >> (i * 5)) ^ (unsigned char)(ts.tv_nsec >> i);
	}
	for (i = 0; i < 6; i++)
		out[i] = set[r[i] % (sizeof(set) - 1)];
	out[6] = '\0';
}

int bp_afile_open(struct bp_afile *f, int dirfd, const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	struct stat st;
	int i, err;

	f->dirfd = dirfd;
	f->fd = -1;
	f->tmp = NULL;
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	if (!fstatat(dirfd, path, &st, 0) && S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto err_out;
	}
	/* "dir/" + "." + base + ".XXXXXX" */
	f->tmp = malloc(strlen(path) + 9);
	if (!f->tmp) {
		err = -ENOMEM;
		goto err_out;
	}
	for (i = 0; i < TMP_TRIES; i++) {
		int n = sprintf(f->tmp, "%.*s.%s.", (int)dlen, path, path + dlen);

		random_suffix(f->tmp + n);
		/* 0600 first: nobody may open it before it has its final mode */
		f->fd = openat(dirfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       0600);
		if (f->fd >= 0 || errno != EEXIST)
			break;
	}
	if (f->fd < 0) {
		err = -errno;
		goto err_out;
	}
	/* the umask only ever takes bits away: set the mode asked for exactly */
	if (fchmod(f->fd, mode)) {
		err = -errno;
		goto err_out;
	}
	return 0;

err_out:
	bp_afile_abort(f);
	return err;
}

int bp_afile_write(struct bp_afile *f, const void *data, size_t len)
{
	const char *p = data;

	if (f->fd < 0)
		return -EBADF;
	while (len) {
		ssize_t n = write(f->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int bp_afile_commit(struct bp_afile *f, const void *data, size_t len)
{
	int err = bp_afile_write(f, data, len);

	if (close(f->fd) && !err)
		err = -errno;
	f->fd = -1;
	if (!err && renameat(f->dirfd, f->tmp, f->dirfd, f->path))
		err = -errno;
	if (err)
		unlinkat(f->dirfd, f->tmp, 0);
	free(f->tmp);
	f->tmp = NULL;
	free(f->path);
	f->path = NULL;
	return err;
}

void bp_afile_abort(struct bp_afile *f)
{
	/* an open fd means the temporary is ours: it was created O_EXCL */
	if (f->fd >= 0) {
		close(f->fd);
		unlinkat(f->dirfd, f->tmp, 0);
	}
	f->fd = -1;
	free(f->tmp);
	f->tmp = NULL;
	free(f->path);
	f->path = NULL;
}
