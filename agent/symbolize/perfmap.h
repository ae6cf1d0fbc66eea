/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT symbol maps, /tmp/perf-PID.map: one "START SIZE name" line per
 * function, START and SIZE in hex with or without 0x, the name being the rest
 * of the line (spaces allowed). JITs only append, so a file that grew is read
 * from where the last read stopped; a file that shrank or was replaced is
 * read again from the start. A later line wins over an earlier one that
 * covers the same address (code was regenerated there).
 */
#ifndef BP_PERFMAP_H
#define BP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bp_perfmap;

struct bp_perfmap_sym {
	uint64_t addr;
	uint64_t size;
	const char *name;	/* valid until the next update or free */
	uint64_t seq;		/* line number since the last full read */
};

struct bp_perfmap *bp_perfmap__new(void);
void bp_perfmap__free(struct bp_perfmap *pm);

/*
 * Read path if it is new or changed (size, mtime, inode) since the last read.
 * 0 (also when unchanged) or -errno; entries read before are kept on error,
 * so a map survives its process and its file.
 */
int bp_perfmap__update(struct bp_perfmap *pm, const char *path);

/*
 * The process's owner: from then on a map file owned by another user (not
 * root) is refused with -EPERM. Non-regular files always are.
 */
void bp_perfmap__set_owner(struct bp_perfmap *pm, uid_t uid);

const struct bp_perfmap_sym *bp_perfmap__find(const struct bp_perfmap *pm, uint64_t addr);
size_t bp_perfmap__count(const struct bp_perfmap *pm);

/* parse one line in place (cuts the newline): 0 or -EINVAL */
int bp_perfmap__parse_line(char *line, uint64_t *addr, uint64_t *size, const char **name);

#endif /* BP_PERFMAP_H */
