// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/readfile.h"

/* big enough that a /proc seq_file is read in a few calls */
#define LINES_BUF_MIN	(64 * 1024)

ssize_t bp_read_small(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	/* /proc hands out a seq_file a page at a time: read until EOF */
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

/* hand over or skip the complete lines in buf[*start, len); 0 or fn's value */
static int take_lines(struct bp_lines *lr, char *buf, size_t *start, size_t len,
		      bp_line_fn fn, void *ctx)
{
	while (*start < len) {
		char *line = buf + *start;
		char *nl = memchr(line, '\n', len - *start);
		size_t n;
		int err;

		if (lr->skipping) {
			if (!nl) {
				lr->consumed += len - *start;
				*start = len;
				return 0;
			}
			lr->skipping = false;
			lr->consumed += (size_t)(nl - line) + 1;
			*start += (size_t)(nl - line) + 1;
			continue;
		}
		if (!nl) {
			/* already too long: skip it without waiting for its end */
			if (len - *start > lr->max_line) {
				lr->too_long++;
				lr->skipping = true;
				continue;
			}
			return 0;
		}
		n = (size_t)(nl - line);
		*start += n + 1;
		lr->consumed += n + 1;
		if (n > lr->max_line) {
			lr->too_long++;
			continue;
		}
		*nl = '\0';
		lr->lines++;
		err = fn(line, n, ctx);
		if (err)
			return err;
		if (lr->max_lines && lr->lines >= lr->max_lines) {
			lr->truncated = true;
			return 0;
		}
	}
	return 0;
}

int bp_read_lines(int fd, struct bp_lines *lr, bp_line_fn fn, void *ctx)
{
	size_t cap = lr->max_line + 1 > LINES_BUF_MIN ? lr->max_line + 1 : LINES_BUF_MIN;
	size_t len = 0, start;
	uint64_t total = 0;
	char *buf;
	int err = 0;

	lr->lines = lr->too_long = lr->consumed = 0;
	lr->truncated = lr->partial = false;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		size_t want = cap - len;
		ssize_t n;

		if (lr->max_bytes && lr->max_bytes - total < want)
			want = (size_t)(lr->max_bytes - total);
		if (!want) {
			lr->truncated = true;
			break;
		}
		n = read(fd, buf + len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		total += (uint64_t)n;
		len += (size_t)n;
		start = 0;
		err = take_lines(lr, buf, &start, len, fn, ctx);
		if (err || lr->truncated)
			break;
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	if (!err && !lr->truncated && len && !lr->skipping) {
		if (lr->take_partial) {
			buf[len] = '\0';
			lr->lines++;
			lr->consumed += len;
			err = fn(buf, len, ctx);
		} else {
			lr->partial = true;
		}
	}
	free(buf);
	return err;
}
