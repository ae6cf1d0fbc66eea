/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT symbol maps, /tmp/perf-PID.map: one "START SIZE name" line per
 * function, START and SIZE in hex with or without 0x, the name being the rest
 * of the line (spaces allowed). JITs only append, so a file that grew is read
 * from where the last read stopped; a file that shrank or was replaced is
 * read again from the start. A later line wins over an earlier one that
 * covers the same address (code was regenerated there).
 *
 * The file sits where everyone may write (/tmp), so it is opened without
 * following any symlink, without blocking, regular files only, and is read
 * within bounds checked before the work: its size, each line's length, and
 * the memory its entries take.
 */
#ifndef BP_PERFMAP_H
#define BP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* the defaults of struct bp_perfmap_limits */
#define BP_PERFMAP_SIZE_MAX	(64ULL * 1024 * 1024)
#define BP_PERFMAP_LINE_MAX	4096
#define BP_PERFMAP_MEM_MAX	(64ULL * 1024 * 1024)

struct bp_perfmap;

struct bp_perfmap_sym {
	uint64_t addr;
	uint64_t size;
	const char *name;	/* valid until the next update or free */
	uint64_t seq;		/* line number since the last full read */
};

struct bp_perfmap_limits {
	uint64_t max_size;	/* a bigger file is refused unread (-EFBIG) */
	size_t max_line;	/* bytes; longer lines are skipped */
	uint64_t max_mem;	/* entries and names kept; further lines are dropped */
};

struct bp_perfmap_stats {
	uint64_t refused;	/* updates refused: a symlink, not a regular file,
				 * another owner, too big */
	uint64_t lines_skipped;	/* malformed or too long */
	uint64_t lines_dropped;	/* past max_mem */
};

struct bp_perfmap *bp_perfmap__new(void);
void bp_perfmap__free(struct bp_perfmap *pm);

/*
 * Read path if it is new or changed (size, mtime, inode) since the last read,
 * without following symlinks. 0 (also when unchanged) or -errno: -ELOOP for
 * a symlink, -EPERM for another kind of file or owner, -EFBIG; entries read
 * before are kept on error, so a map survives its process and its file.
 */
int bp_perfmap__update(struct bp_perfmap *pm, const char *path);

/* the same with path resolved inside the directory root_fd (a /proc/PID/root) */
int bp_perfmap__update_at(struct bp_perfmap *pm, int root_fd, const char *path);

/*
 * The process's owner (its effective uid): from then on a map file owned by
 * anyone else is refused with -EPERM; root's files too, unless uid is 0.
 * Non-regular files always are.
 */
void bp_perfmap__set_owner(struct bp_perfmap *pm, uid_t uid);

/* replace the BP_PERFMAP_*_MAX defaults (a 0 keeps that default) */
void bp_perfmap__set_limits(struct bp_perfmap *pm, const struct bp_perfmap_limits *l);

const struct bp_perfmap_sym *bp_perfmap__find(const struct bp_perfmap *pm, uint64_t addr);
size_t bp_perfmap__count(const struct bp_perfmap *pm);
/* bytes held for entries and names */
uint64_t bp_perfmap__mem(const struct bp_perfmap *pm);
void bp_perfmap__stats(const struct bp_perfmap *pm, struct bp_perfmap_stats *out);

/* parse one line in place (cuts the newline): 0 or -EINVAL */
int bp_perfmap__parse_line(char *line, uint64_t *addr, uint64_t *size, const char **name);

#endif /* BP_PERFMAP_H */
