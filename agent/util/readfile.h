/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading files whose size we do not decide: whole small files (/proc and
 * /sys attributes), and lines through a fixed buffer, so that an input
 * without newlines, or an endless one, costs bounded memory and work.
 */
#ifndef BP_READFILE_H
#define BP_READFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Read path into buf (len > 0), NUL-terminated; what does not fit is left
 * unread. Bytes read, or -errno.
 */
ssize_t bp_read_small(const char *path, char *buf, size_t len);

struct bp_lines {
	/* bounds, set by the caller */
	size_t max_line;	/* bytes without the newline; longer lines are skipped */
	uint64_t max_lines;	/* stop after this many lines; 0: no bound */
	uint64_t max_bytes;	/* read at most this much; 0: no bound */
	bool take_partial;	/* hand over a last line that has no newline */
	/* in and out: the read stopped inside a too-long line; the next read
	 * from where this one stopped goes on skipping it */
	bool skipping;
	/* results */
	uint64_t lines;		/* lines handed to the callback */
	uint64_t too_long;	/* lines skipped for their length */
	uint64_t consumed;	/* bytes read up to the end of the last line handed
				 * over or skipped: where a later read resumes */
	bool truncated;		/* stopped at max_lines or max_bytes */
	bool partial;		/* the input ended inside a line not handed over */
};

/*
 * line is NUL-terminated in place of its newline; len excludes both. A
 * nonzero return stops the read and is returned by bp_read_lines().
 */
typedef int (*bp_line_fn)(char *line, size_t len, void *ctx);

/*
 * Read fd from its current position to its end (or a bound), handing each
 * line to fn. Memory is one buffer of about max_line bytes, whatever the
 * input. 0, -errno from read(), or fn's value.
 */
int bp_read_lines(int fd, struct bp_lines *lr, bp_line_fn fn, void *ctx);

#endif /* BP_READFILE_H */
