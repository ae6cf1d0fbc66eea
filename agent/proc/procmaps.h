/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/PID/maps parsing. One line:
 *
 *   START-END PERMS OFFSET MAJ:MIN INODE [PATH]
 *
 * PATH is the rest of the line (it may contain spaces), possibly followed by
 * " (deleted)". Malformed lines are skipped, never fatal: maps of a process
 * that is exiting can be cut short.
 */
#ifndef BP_PROCMAPS_H
#define BP_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct bp_maps_line {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	bool read, write, exec, shared;
	bool deleted;		/* " (deleted)" was stripped from path */
	const char *path;	/* points into the parsed line; "" if anonymous */
	size_t path_len;
};

/*
 * Parse one line in place: the trailing newline and " (deleted)" are cut off
 * the line buffer. 0 or -EINVAL.
 */
int bp_procmaps__parse_line(char *line, struct bp_maps_line *out);

/* return nonzero to stop the walk; that value is returned by the reader */
typedef int (*bp_procmaps_cb)(const struct bp_maps_line *l, void *ctx);

/*
 * Bounds on what one maps file may cost, checked as it is read: a line is a
 * path (at most PATH_MAX) and its header; the line count is four times the
 * kernel's default vm.max_map_count.
 */
#define BP_MAPS_LINE_MAX	(4096 + 256)
#define BP_MAPS_LINES_MAX	(256 * 1024)

/*
 * Call cb for every well-formed line of a maps file, reading it through a
 * fixed buffer; *nr_bad (may be NULL) counts skipped lines: malformed, too
 * long, and one more when the file was cut at BP_MAPS_LINES_MAX lines.
 * 0, -errno from opening/reading, or cb's value.
 */
int bp_procmaps__read(const char *path, bp_procmaps_cb cb, void *ctx, size_t *nr_bad);

/*
 * Several readers of one process's maps in a row (its symbols, unwind
 * tables, the Python and R walkers, at its first sample): the file is read
 * and parsed once, and bp_procmaps__read() of the same path in this thread
 * walks those lines until bp_procmaps__unhold(), with the same bounds and
 * the same count of bad lines. The kernel formats every mapping and its
 * path again for each read: four of them were ~9% of the agent's CPU under
 * 20 new processes a second. (A copy in a memfd cost a memfd, and a read
 * and a parse for each reader.) 0, or -errno and nothing held (the readers
 * then read the file themselves).
 */
int bp_procmaps__hold(const char *path);
void bp_procmaps__unhold(void);

/*
 * The same, of lines already parsed (their paths are copied), with the
 * stat of each file they name when known (nr_stats may be 0): maps BPF
 * walked where the process ran (collect/mapfiles.h). A line as the file's
 * reader takes it: an empty range is a bad line, a path ending in
 * " (deleted)" loses it and is marked deleted, the gate area's line is the
 * last. 0 or -errno.
 */
int bp_procmaps__hold_lines(const char *path, const struct bp_maps_line *lines, size_t nr,
			    const struct stat *stats, size_t nr_stats);

/* the stat held with the maps at maps_path of the file line l names: true when there is one */
bool bp_procmaps__held_stat(const char *maps_path, const struct bp_maps_line *l, struct stat *st);

/* lines in the held file: 0 for a zombie or an exiting process, which maps nothing */
size_t bp_procmaps__held_lines(void);

/* whether the maps at path are the ones held */
bool bp_procmaps__holds(const char *path);

/*
 * The stat of the executable of the process whose maps are at maps_path
 * (".../PID/maps": stat of ".../PID/exe"), which the Python and R walkers
 * look for among its mappings, and by whose identity a file they examined
 * already is known without opening it again. While those maps are held,
 * the first answer is kept for the other readers. 0 or -errno.
 */
int bp_procmaps__exe_stat(const char *maps_path, struct stat *st);

/*
 * The answer bp_procmaps__exe_stat() gives for the maps held, known
 * already (BPF read it from the executable's inode at the process's first
 * sample): no stat is made. Nothing when no maps are held.
 */
void bp_procmaps__hold_exe(const struct stat *st);

/* how many stat(2) calls bp_procmaps__exe_stat() has made (this thread) */
uint64_t bp_procmaps__exe_stats(void);

#endif /* BP_PROCMAPS_H */
