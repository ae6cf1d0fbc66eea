/* SPDX-License-Identifier: GPL-2.0 */
/* Whole small files: /proc and /sys attributes. */
#ifndef BP_READFILE_H
#define BP_READFILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read path into buf (len > 0), NUL-terminated; what does not fit is left
 * unread. Bytes read, or -errno.
 */
ssize_t bp_read_small(const char *path, char *buf, size_t len);

#endif /* BP_READFILE_H */
