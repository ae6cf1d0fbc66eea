/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The paths of the files processes map, learnt from the maps read from
 * /proc and from exec events (the file exec'd, by its absolute path), so
 * that a process gone before its maps were read is still named: BPF walks
 * its mappings at its exit (struct bp_exit_event), and they are rendered
 * here as the maps lines /proc would have given, each file with the stat
 * BPF read from its inode, and held for the symbolizer (procmaps.h).
 *
 * A file is known by (device, inode, mount namespace): a path means
 * something in one namespace only. A mapping of a file whose path is not
 * known is left out (its frames stay unnamed, as they were when the
 * process was gone).
 */
#ifndef BP_MAPFILES_H
#define BP_MAPFILES_H

#include <stddef.h>
#include <stdint.h>

struct bp_exec_event;
struct bp_exit_event;
struct bp_mapfiles;

struct bp_mapfiles_stats {
	uint64_t learnt;	/* paths learnt (new files, or moved) */
	uint64_t resets;	/* times the table filled up and was emptied */
	uint64_t held;		/* exits whose walked maps were held */
	uint64_t unnamed;	/* files of those left out: path not known */
};

int bp_mapfiles__new(struct bp_mapfiles **out);
void bp_mapfiles__free(struct bp_mapfiles *m);

/* learn the paths in the maps held at maps_path (procmaps.h), of mount namespace mnt_ns */
void bp_mapfiles__learn_maps(struct bp_mapfiles *m, uint32_t mnt_ns, const char *maps_path);

/* learn the path of the file an exec event names (BP_EVF_EXEC_FILE) */
void bp_mapfiles__learn_exec(struct bp_mapfiles *m, const struct bp_exec_event *x);

/*
 * Hold the mappings walked at an exit (BP_EVF_MAPS) as the maps at
 * maps_path (bp_procmaps__hold_lines()), with their files' stats. 0, or
 * -ENOENT when no file of them is known (nothing held), -errno.
 */
int bp_mapfiles__hold(struct bp_mapfiles *m, const struct bp_exit_event *x,
		      const char *maps_path);

void bp_mapfiles__stats(const struct bp_mapfiles *m, struct bp_mapfiles_stats *out);

/* a file as BPF read it from its inode (struct bp_exe_id), as stat(2) would give it */
struct bp_exe_id;
struct stat;
void bp_exe_id_stat(const struct bp_exe_id *x, struct stat *st);

#endif /* BP_MAPFILES_H */
