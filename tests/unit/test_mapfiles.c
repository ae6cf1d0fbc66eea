// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "boundprof.h"
#include "collect/mapfiles.h"
#include "proc/procmaps.h"
#include "unit/symfix/symfix_test.h"

/* this process's mount namespace, as BPF reads it (ns.inum) */
static uint32_t self_mnt_ns(void)
{
	struct stat st;

	assert_int_equal(stat("/proc/self/ns/mnt", &st), 0);
	return (uint32_t)st.st_ino;
}

static void id_of(const struct stat *st, struct bp_exe_id *x)
{
	memset(x, 0, sizeof(*x));
	x->ino = st->st_ino;
	x->dev = major(st->st_dev) << 20 | minor(st->st_dev);
	x->mode = st->st_mode;
	x->nlink = st->st_nlink;
	x->size = st->st_size;
	x->mtime_sec = st->st_mtim.tv_sec;
	x->mtime_nsec = st->st_mtim.tv_nsec;
	x->ctime_sec = st->st_ctim.tv_sec;
	x->ctime_nsec = st->st_ctim.tv_nsec;
}

/* the kernel's lines of our own maps: those with a file, as BPF's walk takes them */
struct lines {
	struct bp_maps_line v[256];
	char paths[256][PATH_MAX];
	size_t n;
	uint32_t files;
};

static int keep_file_line(const struct bp_maps_line *l, void *ctx)
{
	struct lines *ls = ctx;

	if (!l->path_len || l->path[0] != '/' || !l->inode || l->deleted ||
	    ls->n == BP_WALK_MAPS || ls->n == 256)
		return 0;
	/* as many files as a walk holds */
	if (!ls->n || ls->v[ls->n - 1].inode != l->inode) {
		if (ls->files == BP_WALK_FILES)
			return 0;
		ls->files++;
	}
	ls->v[ls->n] = *l;
	snprintf(ls->paths[ls->n], PATH_MAX, "%.*s", (int)l->path_len, l->path);
	ls->v[ls->n].path = ls->paths[ls->n];
	ls->n++;
	return 0;
}

static int keep_all(const struct bp_maps_line *l, void *ctx)
{
	struct lines *ls = ctx;

	if (ls->n == 256)
		return 0;
	ls->v[ls->n] = *l;
	snprintf(ls->paths[ls->n], PATH_MAX, "%.*s", (int)l->path_len, l->path);
	ls->v[ls->n].path = ls->paths[ls->n];
	ls->n++;
	return 0;
}

/*
 * What the exit program would send of this process: its file mappings,
 * each file's identity from stat(2) of its path; skip: a file left out of
 * what is learnt (its index, or -1).
 */
static struct bp_exit_event *walk_of(const struct lines *ls)
{
	struct bp_exit_event *x = calloc(1, sizeof(*x));
	size_t i;

	assert_non_null(x);
	x->ev.kind = BP_EV_EXIT;
	x->ev.tgid = 4242;
	x->ev.flags = BP_EVF_MAPS;
	x->mnt_ns = self_mnt_ns();
	for (i = 0; i < ls->n; i++) {
		struct bp_walk_map *m = &x->w.maps[x->w.nr_maps++];
		const struct bp_maps_line *l = &ls->v[i];
		uint32_t f = x->w.nr_files;
		struct stat st;

		if (!f || x->w.files[f - 1].ino != l->inode) {
			assert_true(f < BP_WALK_FILES);
			assert_int_equal(stat(ls->paths[i], &st), 0);
			id_of(&st, &x->w.files[f]);
			x->w.nr_files = ++f;
		}
		m->start = l->start;
		m->end = l->end;
		m->off = l->pgoff;
		m->file = f - 1;
		m->prot = (l->read ? BP_WM_R : 0) | (l->write ? BP_WM_W : 0) |
			  (l->exec ? BP_WM_X : 0) | (l->shared ? BP_WM_SHARED : 0);
	}
	x->w.whole = 1;
	return x;
}

/*
 * The walk rendered with the paths learnt from /proc/self/maps reads back,
 * line for line, as the kernel's own lines (addresses, permissions, offset,
 * device, inode, path), each with its file's stat; a file not learnt is
 * left out and counted; nothing learnt, nothing held.
 */
static void hold__walk_reads_as_the_kernels_lines(void **state)
{
	struct lines *self = calloc(1, sizeof(*self)), *back = calloc(1, sizeof(*back));
	const char *fake = "/proc/4242/maps";
	struct bp_mapfiles_stats st;
	struct bp_exit_event *x;
	struct bp_mapfiles *m;
	struct stat fst;
	size_t i;

	assert_non_null(self);
	assert_non_null(back);
	assert_int_equal(bp_mapfiles__new(&m), 0);
	assert_int_equal(bp_procmaps__read("/proc/self/maps", keep_file_line, self, NULL), 0);
	assert_true(self->n >= 2);
	x = walk_of(self);

	/* nothing learnt yet */
	assert_int_equal(bp_mapfiles__hold(m, x, fake), -ENOENT);

	assert_int_equal(bp_procmaps__hold("/proc/self/maps"), 0);
	bp_mapfiles__learn_maps(m, x->mnt_ns, "/proc/self/maps");
	bp_procmaps__unhold();
	assert_int_equal(bp_mapfiles__hold(m, x, fake), 0);
	assert_int_equal(bp_procmaps__read(fake, keep_all, back, NULL), 0);
	assert_int_equal(back->n, self->n);
	for (i = 0; i < self->n; i++) {
		const struct bp_maps_line *a = &self->v[i], *b = &back->v[i];

		assert_int_equal(a->start, b->start);
		assert_int_equal(a->end, b->end);
		assert_int_equal(a->pgoff, b->pgoff);
		assert_int_equal(a->inode, b->inode);
		assert_int_equal(a->dev_major, b->dev_major);
		assert_int_equal(a->dev_minor, b->dev_minor);
		assert_int_equal(a->read, b->read);
		assert_int_equal(a->write, b->write);
		assert_int_equal(a->exec, b->exec);
		assert_int_equal(a->shared, b->shared);
		assert_string_equal(self->paths[i], back->paths[i]);
		assert_true(bp_procmaps__held_stat(fake, b, &fst));
		assert_int_equal(fst.st_ino, a->inode);
		assert_int_equal(major(fst.st_dev), a->dev_major);
	}
	bp_procmaps__unhold();

	/* a file of another mount namespace is not this one's */
	x->mnt_ns ^= 1;
	assert_int_equal(bp_mapfiles__hold(m, x, fake), -ENOENT);
	x->mnt_ns ^= 1;

	/* a file never learnt: its lines left out, the others held */
	x->w.files[0].ino ^= 0x40000000;
	assert_int_equal(bp_mapfiles__hold(m, x, fake), 0);
	memset(back, 0, sizeof(*back));
	assert_int_equal(bp_procmaps__read(fake, keep_all, back, NULL), 0);
	assert_true(back->n < self->n);
	for (i = 0; i < back->n; i++)
		assert_int_not_equal(back->v[i].inode, self->v[0].inode);
	bp_procmaps__unhold();
	bp_mapfiles__stats(m, &st);
	assert_true(st.learnt >= x->w.nr_files);
	assert_int_equal(st.held, 2);
	assert_true(st.unnamed >= 2);

	bp_mapfiles__free(m);
	free(x);
	free(self);
	free(back);
}

/*
 * An exec by a path relative to the process's directory is learnt through
 * its parent's directory (here: ours), as the absolute path; one that names
 * another file than the one exec'd is not.
 */
static void learn_exec__relative_path__by_the_parents_directory(void **state)
{
	const char *dir = sf_tmpdir();
	struct bp_exec_event *e = calloc(1, sizeof(*e));
	struct lines *back = calloc(1, sizeof(*back));
	char old[PATH_MAX], prog[PATH_MAX], want[PATH_MAX];
	struct bp_exit_event *x = calloc(1, sizeof(*x));
	struct bp_mapfiles *m;
	struct stat st;

	assert_non_null(e);
	assert_non_null(x);
	assert_non_null(back);
	assert_non_null(getcwd(old, sizeof(old)));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	sf_write_file(prog, "not an ELF: only its identity counts here\n", "w");
	assert_int_equal(stat(prog, &st), 0);
	assert_non_null(realpath(prog, want));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(bp_mapfiles__new(&m), 0);

	e->ev.kind = BP_EV_EXEC;
	e->ev.tgid = 4243;
	e->ev.ppid = getpid();
	e->ev.flags = BP_EVF_EXEC_FILE;
	e->mnt_ns = self_mnt_ns();
	id_of(&st, &e->file);
	/* another file's identity under that name: not learnt */
	e->file.ino ^= 1;
	snprintf(e->path, sizeof(e->path), "./prog");
	bp_mapfiles__learn_exec(m, e);
	e->file.ino ^= 1;

	x->ev.flags = BP_EVF_MAPS;
	x->ev.tgid = 4243;
	x->mnt_ns = e->mnt_ns;
	x->w.nr_files = 1;
	x->w.files[0] = e->file;
	x->w.nr_maps = 1;
	x->w.maps[0] = (struct bp_walk_map){ .start = 0x400000, .end = 0x401000,
					     .prot = BP_WM_R | BP_WM_X };
	assert_int_equal(bp_mapfiles__hold(m, x, "/proc/4243/maps"), -ENOENT);

	bp_mapfiles__learn_exec(m, e);
	assert_int_equal(chdir(old), 0);
	assert_int_equal(bp_mapfiles__hold(m, x, "/proc/4243/maps"), 0);
	assert_int_equal(bp_procmaps__read("/proc/4243/maps", keep_all, back, NULL), 0);
	assert_int_equal(back->n, 1);
	assert_string_equal(back->paths[0], want);
	assert_int_equal(back->v[0].inode, st.st_ino);
	assert_true(back->v[0].exec);
	bp_procmaps__unhold();

	bp_mapfiles__free(m);
	free(e);
	free(x);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hold__walk_reads_as_the_kernels_lines),
		cmocka_unit_test_teardown(learn_exec__relative_path__by_the_parents_directory,
					  sf_cleanup),
	};

	return cmocka_run_group_tests_name("mapfiles", tests, NULL, NULL);
}
