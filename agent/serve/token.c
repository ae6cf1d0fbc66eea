// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/token.h"

int bp_token_load(const char *path, char **token, const char **why)
{
	char buf[BP_TOKEN_MAX + 64];
	size_t len = 0, i, start;
	struct stat st;
	ssize_t n;
	int fd, err = 0;

	*token = NULL;
	*why = NULL;
	/* O_NONBLOCK: a FIFO put under the name must not hang us before fstat refuses it */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		*why = err == -ELOOP ? "a symbolic link" : strerror(-err);
		return err == -ELOOP ? -EINVAL : err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		*why = strerror(-err);
	} else if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		*why = "not a regular file";
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		err = -EPERM;
		*why = "owned by another user (it must be root's or ours)";
	} else if (st.st_mode & 077) {
		err = -EPERM;
		*why = "group or other may access it (chmod 600 it)";
	} else if (st.st_size > (off_t)sizeof(buf) - 1) {
		err = -EFBIG;
		*why = "larger than a token can be";
	}
	while (!err && len < sizeof(buf) - 1) {
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			*why = strerror(-err);
		}
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (err)
		return err;
	for (start = 0; start < len && strchr(" \t\r\n", buf[start]); start++)
		;
	while (len > start && strchr(" \t\r\n", buf[len - 1]))
		len--;
	if (len - start < BP_TOKEN_MIN || len - start > BP_TOKEN_MAX) {
		*why = len - start < BP_TOKEN_MIN ? "shorter than 16 characters" :
						    "longer than 4096 characters";
		return -EINVAL;
	}
	for (i = start; i < len; i++) {
		/* what an Authorization header can carry: visible ASCII */
		if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f) {
			*why = "not all visible ASCII characters";
			return -EINVAL;
		}
	}
	*token = strndup(buf + start, len - start);
	explicit_bzero(buf, sizeof(buf));
	if (!*token) {
		*why = "out of memory";
		return -ENOMEM;
	}
	return 0;
}

bool bp_token_ok(const char *token, const char *authorization)
{
	size_t tlen = strlen(token), alen, i;
	const char *given;
	unsigned char diff;

	if (!authorization || strncasecmp(authorization, "Bearer ", 7))
		return false;
	given = authorization + 7;
	while (*given == ' ')
		given++;
	alen = strlen(given);
	/* every byte of the token is compared, whatever matched before */
	diff = alen != tlen;
	for (i = 0; i < tlen; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < alen ? given[i] : 0);
	return !diff;
}
