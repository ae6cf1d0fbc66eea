// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include "symbolize/symbols.h"
#include "unit/symfix/symfix_test.h"

static struct bp_syms *syms;

static int teardown(void **state)
{
	bp_syms__free(syms);
	syms = NULL;
	return sf_cleanup(state);
}

static struct bp_syms *new_syms(const struct bp_syms_opts *o)
{
	syms = bp_syms__new(o);
	assert_non_null(syms);
	return syms;
}

static void data_realpath(char *buf, const char *name)
{
	char p[PATH_MAX];

	sf_data_path(p, sizeof(p), name);
	if (!realpath(p, buf))
		fail_msg("realpath %s: %s", p, strerror(errno));
}

static void expect_named(struct bp_syms *s, pid_t pid, uint64_t addr, const char *name,
			 const char *module, struct bp_frame_info *fi)
{
	int err = bp_syms__resolve_user(s, pid, addr, fi);

	if (err || !fi->name)
		fail_msg("0x%llx: unnamed (%s+0x%llx), wanted %s", (unsigned long long)addr,
			 fi->module, (unsigned long long)fi->offset, name);
	assert_string_equal(fi->name, name);
	assert_string_equal(fi->module, module);
	assert_false(fi->kernel);
}

/* snapshot, kill and reap, then resolve: only held fds can answer */
static void check_exit_survival(const char *bin, const char *fn, const char *module,
				const struct bp_syms_opts *o)
{
	struct bp_syms *s = new_syms(o);
	char path[PATH_MAX], real[PATH_MAX];
	const struct sf_sym *f, *zeta;
	struct bp_frame_info fi;
	struct sf_child c;

	sf_data_path(path, sizeof(path), bin);
	data_realpath(real, bin);
	sf_spawn(&c, path);
	f = sf_sym(&c, fn);
	zeta = sf_sym(&c, "symfix_local_zeta");
	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	sf_kill(&c);
	bp_syms__exited(s, c.pid);

	expect_named(s, c.pid, f->addr, fn, module, &fi);
	assert_string_equal(fi.path, real);
	assert_int_equal(fi.offset, f->vaddr);
	assert_int_equal(fi.sym_offset, 0);
	assert_non_null(fi.build_id);
	assert_int_equal(strlen(fi.build_id), 40);

	expect_named(s, c.pid, f->addr + 5, fn, module, &fi);
	assert_int_equal(fi.sym_offset, 5);
	assert_int_equal(fi.offset, f->vaddr + 5);
	expect_named(s, c.pid, zeta->addr + 1, "symfix_local_zeta", module, &fi);
}

/* lazy: the files are read after the process is gone, from the fds held */
static void user__pie__survives_exit(void **state)
{
	struct bp_syms_opts o = { .lazy = true };
	struct bp_syms_stats st;

	check_exit_survival("symfix_pie", "symfix_alpha", "symfix_pie", &o);
	bp_syms__stats(syms, &st);
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.snapshots, 1);
	assert_true(st.files_opened >= 1);
	/*
	 * Only the binary, where every frame fell, was read (after its
	 * process was gone, from the file held open since the snapshot);
	 * libc and the loader wait, open, for a frame of theirs.
	 */
	assert_int_equal(st.files_parsed, 1);
	assert_int_equal(st.files_parsed + st.files_pending, st.files_opened);
	assert_int_equal(st.resolved, 3);
	assert_int_equal(st.unresolved, 0);
}

/*
 * An image kept past its exec (here: its process killed after the keep)
 * names its addresses by image number only; the current image has no maps
 * until its next snapshot; one image kept at a time; drop lets it go.
 */
static void user__kept_image__names_its_addresses(void **state)
{
	struct bp_frame_info fi[4];
	char path[PATH_MAX];
	const struct sf_sym *f;
	struct bp_syms *s;
	struct sf_child c;
	int n;

	s = new_syms(NULL);
	sf_data_path(path, sizeof(path), "symfix_pie");
	sf_spawn(&c, path);
	f = sf_sym(&c, "symfix_alpha");
	assert_int_equal(bp_syms__keep_image(s, c.pid, 7), -ENOENT);
	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	assert_int_equal(bp_syms__keep_image(s, c.pid, 7), 0);
	assert_int_equal(bp_syms__keep_image(s, c.pid, 7), -ENOENT);
	assert_int_equal(bp_syms__snapshot_ns(s, c.pid), 0);
	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	assert_int_equal(bp_syms__keep_image(s, c.pid, 8), -EBUSY);
	sf_kill(&c);
	bp_syms__exited(s, c.pid);
	assert_true(bp_syms__kept_image(s, c.pid, 7));
	assert_false(bp_syms__kept_image(s, c.pid, 8));
	n = bp_syms__resolve_image_inline(s, c.pid, 7, f->addr + 1, fi, 4);
	assert_true(n >= 1);
	assert_non_null(fi[n - 1].name);
	assert_string_equal(fi[n - 1].name, "symfix_alpha");
	/* another image number: not this one's maps */
	n = bp_syms__resolve_image_inline(s, c.pid, 9, f->addr + 1, fi, 4);
	assert_null(fi[n - 1].name);
	bp_syms__drop_images(s);
	assert_false(bp_syms__kept_image(s, c.pid, 7));
	n = bp_syms__resolve_image_inline(s, c.pid, 7, f->addr + 1, fi, 4);
	assert_null(fi[n - 1].name);
}

/*
 * A child forked without an exec takes its parent's maps: its addresses are
 * named with no read of its own (its pid here is one no process has), as
 * of the time given, after the parent is gone too. Refused: a parent with
 * no maps, maps read before the parent's last exec, another owner, a pid
 * that holds maps already.
 */
static void user__forked_child__takes_parents_maps(void **state)
{
	const pid_t child = 0x3ffffff0;
	struct bp_syms_stats st;
	struct bp_frame_info fi;
	char path[PATH_MAX];
	const struct sf_sym *f;
	struct bp_syms *s;
	struct sf_child c;
	uint64_t snap;

	s = new_syms(NULL);
	sf_data_path(path, sizeof(path), "symfix_pie");
	sf_spawn(&c, path);
	f = sf_sym(&c, "symfix_alpha");
	assert_int_equal(bp_syms__clone(s, c.pid, child, geteuid(), 0, 0, 0, 5), -ENOENT);
	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	snap = bp_syms__snapshot_ns(s, c.pid);
	assert_int_equal(bp_syms__clone(s, c.pid, child, geteuid(), 0, 0, snap + 1, 5), -ESTALE);
	assert_int_equal(bp_syms__clone(s, c.pid, child, geteuid() + 1, 0, 0, snap, 5), -EPERM);
	assert_int_equal(bp_syms__clone(s, c.pid, child, geteuid(), 0, 0, snap, 5), 0);
	assert_int_equal(bp_syms__snapshot_ns(s, child), 5);
	assert_int_equal(bp_syms__clone(s, c.pid, child, geteuid(), 0, 0, snap, 6), -EEXIST);
	sf_kill(&c);
	bp_syms__exited(s, c.pid);
	expect_named(s, child, f->addr + 3, "symfix_alpha", "symfix_pie", &fi);
	assert_int_equal(fi.sym_offset, 3);
	bp_syms__stats(s, &st);
	assert_int_equal(st.clones, 1);
	assert_int_equal(st.snapshots, 1);
}

/* eager: every file is read at the snapshot */
static void user__nopie__survives_exit(void **state)
{
	struct bp_syms_stats st;

	check_exit_survival("symfix_nopie", "symfix_alpha", "symfix_nopie", NULL);
	bp_syms__stats(syms, &st);
	assert_true(st.files_opened >= 2);
	assert_int_equal(st.files_parsed, st.files_opened);
	assert_int_equal(st.files_pending, 0);
}

static void user__debug_file_via_build_id__survives_exit(void **state)
{
	char root[PATH_MAX];
	/* lazy: the debug file is found at the snapshot, read after the exit */
	struct bp_syms_opts o = { .debug_root = root, .lazy = true };
	struct bp_syms_stats st;

	sf_data_path(root, sizeof(root), "debugroot");
	check_exit_survival("symfix_buildid", "symfix_epsilon", "symfix_buildid", &o);
	bp_syms__stats(syms, &st);
	assert_int_equal(st.debug_files, 1);
}

static void user__debuglink__survives_exit(void **state)
{
	check_exit_survival("symfix_dbglink", "symfix_delta", "symfix_dbglink", NULL);
}

static void user__shared_library__survives_exit(void **state)
{
	struct bp_syms *s = new_syms(NULL);
	const struct sf_sym *gamma, *pub, *last;
	char path[PATH_MAX], real[PATH_MAX];
	struct bp_frame_info fi;
	struct sf_child c;

	sf_data_path(path, sizeof(path), "symfix_uselib");
	data_realpath(real, "libsymfix.so");
	sf_spawn(&c, path);
	gamma = sf_sym(&c, "symfix_lib_gamma");
	pub = sf_sym(&c, "symfix_lib_public");
	last = sf_sym(&c, "symfix_asm_last");
	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	sf_kill(&c);
	bp_syms__exited(s, c.pid);

	expect_named(s, c.pid, gamma->addr + 2, "symfix_lib_gamma", "libsymfix.so", &fi);
	assert_string_equal(fi.path, real);
	assert_int_equal(fi.offset, gamma->vaddr + 2);
	assert_int_equal(fi.sym_offset, 2);
	expect_named(s, c.pid, pub->addr, "symfix_lib_public", "libsymfix.so", &fi);
	expect_named(s, c.pid, sf_sym(&c, "symfix_lib_versioned")->addr, "symfix_lib_versioned",
		     "libsymfix.so", &fi);
	expect_named(s, c.pid, last->addr + 7, "symfix_asm_last", "libsymfix.so", &fi);
}

static void user__deleted_binary__resolves(void **state)
{
	struct bp_syms *s = new_syms(NULL);
	const char *dir = sf_tmpdir();
	char src[PATH_MAX], bin[PATH_MAX];
	const struct sf_sym *alpha;
	struct bp_frame_info fi;
	struct sf_child c;

	sf_data_path(src, sizeof(src), "symfix_pie");
	snprintf(bin, sizeof(bin), "%s/victim prog", dir);
	sf_copy_file(src, bin, 0755);
	sf_spawn(&c, bin);
	alpha = sf_sym(&c, "symfix_alpha");
	assert_int_equal(unlink(bin), 0);

	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	sf_kill(&c);
	bp_syms__exited(s, c.pid);
	expect_named(s, c.pid, alpha->addr, "symfix_alpha", "victim prog", &fi);
	assert_string_equal(fi.path, bin);
	assert_int_equal(fi.offset, alpha->vaddr);
}

/* our open fds */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the opendir's own */
}

/*
 * A lazy symbolizer: a process mapping many distinct files holds at most
 * BP_SYMS_PENDING_MAX of them open (two fds each at most: the file and its
 * debug file), and none that is not ELF: an fd per mapped file ran the agent out of them. Half of
 * the files here are copies of an ELF binary (distinct inodes), more of them
 * than the bound: those past it are parsed at the snapshot and closed.
 */
static void user__many_mapped_files__fds_bounded(void **state)
{
	enum { NR = 2 * (BP_SYMS_PENDING_MAX + 40) };
	struct bp_syms_opts o = { .lazy = true };
	char elf[PATH_MAX];
	struct bp_syms *s = new_syms(&o);
	const char *dir = sf_tmpdir();
	int go[2], fds_before, i;
	struct bp_syms_stats st;
	struct bp_frame_info fi;
	char path[PATH_MAX];
	uint64_t addr[NR];
	pid_t pid;

	sf_data_path(elf, sizeof(elf), "symfix_pie");
	for (i = 0; i < NR; i++) {
		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		if (i % 2)
			sf_write_file(path, "not an ELF file, mapped executable\n", "w");
		else
			sf_copy_file(elf, path, 0755);
	}
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	/* at fixed spots, so that the parent knows where */
	for (i = 0; i < NR; i++)
		addr[i] = 0x200000000000ULL + (uint64_t)i * 0x10000;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		char c;

		close(go[1]);
		for (i = 0; i < NR; i++) {
			int fd;

			snprintf(path, sizeof(path), "%s/f%d", dir, i);
			fd = open(path, O_RDONLY);
			if (fd < 0 || mmap((void *)addr[i], 4096, PROT_READ | PROT_EXEC,
					   MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0) == MAP_FAILED)
				_exit(1);
			close(fd);
		}
		while (read(go[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(go[0]);
	sf_track(pid, go[1]);
	/* wait until all are mapped: the child's maps list the last one */
	for (i = 0; i < 500; i++) {
		char maps[64], *text;
		FILE *f;
		size_t len = 0;
		ssize_t n;

		snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
		f = fopen(maps, "r");
		text = NULL;
		n = f ? getdelim(&text, &len, '\0', f) : -1;
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "%s/f%d", dir, NR - 1);
		if (n > 0 && strstr(text, path)) {
			free(text);
			break;
		}
		free(text);
		usleep(10000);
	}
	fds_before = count_fds();
	assert_int_equal(bp_syms__snapshot(s, pid), 0);
	bp_syms__stats(s, &st);
	assert_true(st.files_opened >= NR);
	assert_int_equal(st.files_pending, BP_SYMS_PENDING_MAX);
	/* the ELF copies past the bound, and the child's own binary and libraries */
	assert_true(st.files_parsed >= NR / 2 - BP_SYMS_PENDING_MAX);
	assert_true(count_fds() - fds_before <= 2 * BP_SYMS_PENDING_MAX);
	/* the files that are not ELF still resolve as module+offset */
	assert_int_equal(bp_syms__resolve_user(s, pid, addr[7] + 0x10, &fi), -ENOENT);
	assert_string_equal(fi.module, "f7");
	assert_int_equal(fi.offset, 0x10);
	/* a frame in a waiting file reads it and lets it go */
	bp_syms__resolve_user(s, pid, addr[0] + 0x10, &fi);
	assert_string_equal(fi.module, "f0");
	bp_syms__stats(s, &st);
	assert_int_equal(st.files_pending, BP_SYMS_PENDING_MAX - 1);
	bp_syms__free(s);
	syms = NULL;
	assert_int_equal(count_fds(), fds_before);
}

/*
 * A file rewritten in place keeps its inode: the cache must not take it for
 * the old contents (size, mtime, ctime and build-id tell).
 */
/* bin's contents replaced by the fixture name's, in the same inode */
static void rewrite_in_place(const char *bin, const char *name)
{
	char src[PATH_MAX], buf[65536];
	FILE *in, *out;
	size_t n;

	sf_data_path(src, sizeof(src), name);
	in = fopen(src, "r");
	out = fopen(bin, "r+");
	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fflush(out);
	assert_int_equal(ftruncate(fileno(out), ftell(out)), 0);
	fclose(out);
	fclose(in);
}

static void user__file_rewritten_in_place__reparsed(void **state)
{
	struct bp_syms *s = new_syms(NULL);
	const char *dir = sf_tmpdir();
	char src[PATH_MAX], bin[PATH_MAX];
	const struct sf_sym *a1, *a2;
	struct bp_syms_stats st1, st2;
	struct bp_frame_info fi;
	struct sf_child c1, c2;
	struct stat before, after;

	sf_data_path(src, sizeof(src), "symfix_pie");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sf_copy_file(src, bin, 0755);
	assert_int_equal(stat(bin, &before), 0);
	sf_spawn(&c1, bin);
	a1 = sf_sym(&c1, "symfix_alpha");
	assert_int_equal(bp_syms__snapshot(s, c1.pid), 0);
	expect_named(s, c1.pid, a1->addr, "symfix_alpha", "prog", &fi);
	assert_int_equal(fi.offset, a1->vaddr);
	bp_syms__stats(s, &st1);
	sf_kill(&c1);
	bp_syms__exited(s, c1.pid);

	/* same inode, other contents (a non-PIE build: other addresses) */
	rewrite_in_place(bin, "symfix_nopie");
	assert_int_equal(stat(bin, &after), 0);
	assert_int_equal(after.st_ino, before.st_ino);
	sf_spawn(&c2, bin);
	a2 = sf_sym(&c2, "symfix_alpha");
	assert_int_equal(bp_syms__snapshot(s, c2.pid), 0);
	expect_named(s, c2.pid, a2->addr, "symfix_alpha", "prog", &fi);
	assert_int_equal(fi.offset, a2->vaddr);
	bp_syms__stats(s, &st2);
	assert_int_equal(st2.files_opened, st1.files_opened + 1);
	/* the first process's frames still read the first version */
	expect_named(s, c1.pid, a1->addr, "symfix_alpha", "prog", &fi);
	assert_int_equal(fi.offset, a1->vaddr);
}

/* fds of ours that hold path, or its deleted inode */
static int fds_on(const char *path)
{
	char fd[300], target[PATH_MAX + 16];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;
	ssize_t len;

	assert_non_null(dir);
	while ((d = readdir(dir))) {
		snprintf(fd, sizeof(fd), "/proc/self/fd/%s", d->d_name);
		len = readlink(fd, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += !strncmp(target, path, strlen(path));
	}
	closedir(dir);
	return n;
}

/*
 * A file a second process maps is held by its inode, and a third process
 * is checked against it without a map_files lookup: still exact when the
 * file is rewritten in place (the held inode's own stat says so), and let
 * go once it is deleted.
 */
static void user__shared_file__held_inode_exact(void **state)
{
	struct bp_syms *s = new_syms(NULL);
	const char *dir = sf_tmpdir();
	char src[PATH_MAX], bin[PATH_MAX];
	struct bp_syms_stats st1, st2;
	struct sf_child c[4];
	struct bp_frame_info fi;
	const struct sf_sym *a;
	int i;

	sf_data_path(src, sizeof(src), "symfix_pie");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sf_copy_file(src, bin, 0755);
	for (i = 0; i < 3; i++) {
		sf_spawn(&c[i], bin);
		assert_int_equal(bp_syms__snapshot(s, c[i].pid), 0);
	}
	bp_syms__stats(s, &st1);
	/* the third was known by the inodes the second had us hold */
	assert_true(st1.inode_held >= 1);
	assert_int_equal(fds_on(bin), 1);
	a = sf_sym(&c[2], "symfix_alpha");
	expect_named(s, c[2].pid, a->addr, "symfix_alpha", "prog", &fi);
	for (i = 0; i < 3; i++) {
		sf_kill(&c[i]);
		bp_syms__exited(s, c[i].pid);
	}

	/* same inode, other contents (a non-PIE build: other addresses) */
	rewrite_in_place(bin, "symfix_nopie");
	sf_spawn(&c[3], bin);
	assert_int_equal(bp_syms__snapshot(s, c[3].pid), 0);
	bp_syms__stats(s, &st2);
	assert_true(st2.inode_held > st1.inode_held);
	/* the new version was opened, not taken for the old one */
	assert_int_equal(st2.files_opened, st1.files_opened + 1);
	a = sf_sym(&c[3], "symfix_alpha");
	expect_named(s, c[3].pid, a->addr, "symfix_alpha", "prog", &fi);
	assert_int_equal(fi.offset, a->vaddr);

	/* the old version's inode let go; a second process of the new one holds it again */
	assert_int_equal(fds_on(bin), 0);
	sf_spawn(&c[0], bin);
	assert_int_equal(bp_syms__snapshot(s, c[0].pid), 0);
	sf_kill(&c[0]);
	assert_int_equal(fds_on(bin), 1);
	/* deleted while mapped: let go at the next retire, the process still running */
	assert_int_equal(unlink(bin), 0);
	bp_syms__retire(s);
	assert_int_equal(fds_on(bin), 0);
	expect_named(s, c[3].pid, a->addr, "symfix_alpha", "prog", &fi);
	sf_kill(&c[3]);
}

static void user__two_processes__share_files(void **state)
{
	struct bp_syms_opts o = { .lazy = true };
	struct bp_syms *s = new_syms(&o);
	const struct sf_sym *a1, *a2;
	struct bp_syms_stats st1, st2;
	struct bp_frame_info fi;
	struct sf_child c1, c2;
	char path[PATH_MAX];
	const char *name, *module;

	sf_data_path(path, sizeof(path), "symfix_pie");
	sf_spawn(&c1, path);
	sf_spawn(&c2, path);
	a1 = sf_sym(&c1, "symfix_alpha");
	a2 = sf_sym(&c2, "symfix_alpha");

	assert_int_equal(bp_syms__snapshot(s, c1.pid), 0);
	bp_syms__stats(s, &st1);
	assert_int_equal(bp_syms__snapshot(s, c2.pid), 0);
	bp_syms__stats(s, &st2);
	/* same binary, same libc, same loader: nothing new to open */
	assert_int_equal(st2.files_opened, st1.files_opened);
	assert_int_equal(st2.processes, 2);
	/* a refresh of a live process reuses what it has */
	assert_int_equal(bp_syms__snapshot(s, c2.pid), 0);
	bp_syms__stats(s, &st2);
	assert_int_equal(st2.files_opened, st1.files_opened);
	assert_int_equal(st2.snapshots, 3);

	expect_named(s, c1.pid, a1->addr, "symfix_alpha", "symfix_pie", &fi);
	name = fi.name;
	module = fi.module;
	expect_named(s, c2.pid, a2->addr, "symfix_alpha", "symfix_pie", &fi);
	/* interned: one copy */
	assert_ptr_equal(fi.name, name);
	bp_syms__stats(s, &st2);
	/* the binary, once for both; libc and the loader wait for a frame */
	assert_int_equal(st2.files_parsed, 1);
	assert_int_equal(st2.files_pending, st1.files_opened - 1);

	sf_kill(&c1);
	bp_syms__exited(s, c1.pid);
	bp_syms__forget(s, c1.pid);
	expect_named(s, c2.pid, a2->addr, "symfix_alpha", "symfix_pie", &fi);
	sf_kill(&c2);
	bp_syms__exited(s, c2.pid);
	bp_syms__forget(s, c2.pid);
	bp_syms__stats(s, &st2);
	assert_int_equal(st2.processes, 0);

	/* strings outlive the processes (ASan would catch a dangling one) */
	assert_string_equal(name, "symfix_alpha");
	assert_string_equal(module, "symfix_pie");
}

static void user__gone_process__unknown_frame(void **state)
{
	struct bp_syms *s = new_syms(NULL);
	struct bp_syms_stats st;
	struct bp_frame_info fi;
	struct sf_child c;
	char path[PATH_MAX];

	sf_data_path(path, sizeof(path), "symfix_pie");
	sf_spawn(&c, path);
	sf_kill(&c);
	assert_int_equal(bp_syms__snapshot(s, c.pid), -ESRCH);
	assert_int_equal(bp_syms__resolve_user(s, c.pid, 0x401000, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "[unknown]");
	/* not the address: it would place another user's code */
	assert_int_equal(fi.offset, 0);
	assert_null(fi.path);
	assert_int_equal(bp_syms__resolve_user(s, c.pid, 0x401001, &fi), -ENOENT);
	bp_syms__stats(s, &st);
	/* remembered as gone: maps were not read again */
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.snapshots, 0);
	assert_int_equal(st.unresolved, 2);
}

#define FAKE_PID	4242
#define FAKE_JIT	0x100000000000ULL
#define FAKE_NOFILE	0x100000100000ULL
#define FAKE_BADINO	0x100000200000ULL

/*
 * A fake procfs: the maps of a real non-PIE process (no map_files, so files
 * are found by path and checked by inode) plus made-up mappings, a status
 * with another pid namespace, and a perf map inside the process's root.
 */
static void user__fake_proc__every_kind_of_frame(void **state)
{
	const char *root = sf_tmpdir();
	struct bp_syms_opts o = { .proc_root = root, .perfmap_dir = "/pmdir" };
	char path[PATH_MAX], src[PATH_MAX], real[PATH_MAX], *maps = NULL;
	uint64_t heap = 0, stack = 0;
	const struct sf_sym *alpha;
	struct bp_frame_info fi;
	struct bp_syms *s;
	struct sf_child c;
	size_t len = 0;
	char line[8192], gate[256] = "";
	FILE *in, *out;

	sf_data_path(src, sizeof(src), "symfix_nopie");
	data_realpath(real, "symfix_nopie");
	sf_spawn(&c, src);
	alpha = sf_sym(&c, "symfix_alpha");

	snprintf(path, sizeof(path), "%s/%d", root, FAKE_PID);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "/proc/%d/maps", c.pid);
	in = fopen(path, "r");
	assert_non_null(in);
	out = open_memstream(&maps, &len);
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		unsigned long long a;

		/* the kernel prints the gate area last: the fake lines go before it */
		if (strstr(line, "[vsyscall]")) {
			snprintf(gate, sizeof(gate), "%s", line);
			continue;
		}
		fputs(line, out);
		if (strstr(line, "[heap]") && sscanf(line, "%llx", &a) == 1)
			heap = a;
		if (strstr(line, "[stack]") && sscanf(line, "%llx", &a) == 1)
			stack = a;
	}
	fclose(in);
	sf_kill(&c);
	fprintf(out, "%llx-%llx r-xp 00000000 00:00 0 \n", FAKE_JIT, FAKE_JIT + 0x10000);
	fprintf(out, "%llx-%llx r-xp 00002000 08:01 77 /nonexistent/lib with space.so\n",
		FAKE_NOFILE, FAKE_NOFILE + 0x1000);
	fprintf(out, "%llx-%llx r-xp 00001000 08:01 1 %s\n", FAKE_BADINO,
		FAKE_BADINO + 0x1000, real);
	fprintf(out, "this line is garbage\n");
	fputs(gate, out);
	fclose(out);
	snprintf(path, sizeof(path), "%s/%d/maps", root, FAKE_PID);
	sf_write_file(path, maps, "w");
	free(maps);
	assert_true(heap && stack);

	snprintf(path, sizeof(path), "%s/%d/status", root, FAKE_PID);
	sf_write_file(path, "Name:\tjava\nUid:\t0\t0\t0\t0\nNSpid:\t4242\t7\nNSpgid:\t4242\t7\n",
		      "w");
	snprintf(path, sizeof(path), "%s/%d/root", root, FAKE_PID);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/root/pmdir", root, FAKE_PID);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/root/pmdir/perf-7.map", root, FAKE_PID);
	sf_write_file(path, "100000000100 80 Interpreter\n100000000200 40 jit::compiled foo\n",
		      "w");

	s = new_syms(&o);
	assert_int_equal(bp_syms__snapshot(s, FAKE_PID), 0);

	expect_named(s, FAKE_PID, alpha->addr + 1, "symfix_alpha", "symfix_nopie", &fi);
	assert_string_equal(fi.path, real);
	assert_int_equal(fi.offset, alpha->vaddr + 1);

	/* JIT code named by the perf map of the process's namespace (NSpid 7) */
	expect_named(s, FAKE_PID, FAKE_JIT + 0x210, "jit::compiled foo", "[anon]", &fi);
	assert_int_equal(fi.sym_offset, 0x10);
	assert_int_equal(fi.offset, 0x210);
	assert_null(fi.path);

	/* anonymous code the perf map does not cover */
	assert_int_equal(bp_syms__resolve_user(s, FAKE_PID, FAKE_JIT + 0x5000, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "[anon]");
	assert_int_equal(fi.offset, 0x5000);

	/* a file we cannot open: module and file offset */
	assert_int_equal(bp_syms__resolve_user(s, FAKE_PID, FAKE_NOFILE + 0x10, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "lib with space.so");
	assert_string_equal(fi.path, "/nonexistent/lib with space.so");
	assert_int_equal(fi.offset, 0x2010);

	/* the path now names a file with another inode: not trusted */
	assert_int_equal(bp_syms__resolve_user(s, FAKE_PID, FAKE_BADINO + 0x166, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "symfix_nopie");
	assert_int_equal(fi.offset, 0x1166);

	assert_int_equal(bp_syms__resolve_user(s, FAKE_PID, heap + 0x18, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "[heap]");
	assert_int_equal(fi.offset, 0x18);
	assert_int_equal(bp_syms__resolve_user(s, FAKE_PID, stack + 0x20, &fi), -ENOENT);
	assert_string_equal(fi.module, "[stack]");
	assert_int_equal(fi.offset, 0x20);

	/* in no mapping at all */
	assert_int_equal(bp_syms__resolve_user(s, FAKE_PID, 0x10, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "[unknown]");
	assert_int_equal(fi.offset, 0);

	/* gone: the host path has no perf map, what was read stays */
	bp_syms__exited(s, FAKE_PID);
	snprintf(path, sizeof(path), "%s/%d", root, FAKE_PID);
	nftw(path, sf_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	expect_named(s, FAKE_PID, FAKE_JIT + 0x17f, "Interpreter", "[anon]", &fi);
	expect_named(s, FAKE_PID, alpha->addr, "symfix_alpha", "symfix_nopie", &fi);
}

static void user__perf_map__grows_and_survives(void **state)
{
	const char *dir = sf_tmpdir();
	struct bp_syms_opts o = { .perfmap_dir = dir };
	struct bp_frame_info fi;
	struct bp_syms *s;
	struct sf_child c;
	char path[PATH_MAX], pm[PATH_MAX];

	sf_data_path(path, sizeof(path), "symfix_pie");
	sf_spawn(&c, path);
	snprintf(pm, sizeof(pm), "%s/perf-%d.map", dir, c.pid);
	sf_write_file(pm, "1000 100 jit_one\n", "w");

	s = new_syms(&o);
	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	expect_named(s, c.pid, 0x1050, "jit_one", "[unknown]", &fi);
	assert_int_equal(fi.sym_offset, 0x50);
	assert_int_equal(fi.offset, 0);

	/* the JIT wrote more; a snapshot (exec, dlopen, a miss) re-reads it */
	sf_write_file(pm, "2000 100 jit two\n", "a");
	assert_int_equal(bp_syms__snapshot(s, c.pid), 0);
	expect_named(s, c.pid, 0x20ff, "jit two", "[unknown]", &fi);

	sf_kill(&c);
	bp_syms__exited(s, c.pid);
	assert_int_equal(unlink(pm), 0);
	expect_named(s, c.pid, 0x1000, "jit_one", "[unknown]", &fi);
	expect_named(s, c.pid, 0x2000, "jit two", "[unknown]", &fi);
}

static __attribute__((noinline)) int symtest_own_function(int x)
{
	volatile int v = x;

	return v + 1;
}

static void user__own_process__function_vdso_stack(void **state)
{
	int (*clock_fn)(int, void *);
	struct bp_syms *s = new_syms(NULL);
	struct bp_frame_info fi;
	volatile int on_stack = 0;
	void *h;

	expect_named(s, getpid(), (uintptr_t)symtest_own_function + 1, "symtest_own_function",
		     "test_symbols", &fi);
	assert_int_equal(fi.sym_offset, 1);

	assert_int_equal(bp_syms__resolve_user(s, getpid(), (uintptr_t)&on_stack, &fi), -ENOENT);
	assert_string_equal(fi.module, "[stack]");

	/* the vdso, named from our own copy of the image */
	h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		skip();
	clock_fn = (int (*)(int, void *))dlsym(h, "__vdso_clock_gettime");
	dlclose(h);
	if (!clock_fn)
		skip();
	assert_int_equal(bp_syms__resolve_user(s, getpid(), (uintptr_t)clock_fn + 1, &fi), 0);
	assert_non_null(fi.name);
	if (!strstr(fi.name, "clock_gettime"))
		fail_msg("vdso address named %s", fi.name);
	assert_string_equal(fi.module, "[vdso]");
	assert_null(fi.path);
	assert_int_equal(fi.sym_offset, 1);
	(void)on_stack;
	(void)symtest_own_function(1);
}

/* --- retiring gone processes ---------------------------------------------- */

#define RETIRE_HEAP	0x55550000ULL

/* a fake /proc/PID with just enough in its maps for a snapshot */
static void fake_pid(const char *root, pid_t pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", root, pid);
	sf_write_file(path,
		      "55550000-55560000 rw-p 00000000 00:00 0                          [heap]\n"
		      "7ffd0000-7ffd1000 rw-p 00000000 00:00 0                          [stack]\n",
		      "w");
	snprintf(path, sizeof(path), "%s/%d/status", root, pid);
	sf_write_file(path, "Name:\tfake\nUid:\t0\t0\t0\t0\n", "w");
}

static void fake_pid_gone(const char *root, pid_t pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	assert_int_equal(nftw(path, sf_rm_cb, 16, FTW_DEPTH | FTW_PHYS), 0);
	assert_int_equal(access(path, F_OK), -1);
}

/* a symbolizer over a fake procfs with pids 101..103 snapshotted */
static struct bp_syms *retire_setup(const char **root)
{
	struct bp_syms_opts o = { .proc_root = sf_tmpdir() };
	struct bp_syms *s;
	pid_t pid;

	*root = o.proc_root;
	for (pid = 101; pid <= 103; pid++)
		fake_pid(*root, pid);
	s = new_syms(&o);
	for (pid = 101; pid <= 103; pid++)
		assert_int_equal(bp_syms__snapshot(s, pid), 0);
	return s;
}

static uint64_t sym_procs(const struct bp_syms *s)
{
	struct bp_syms_stats st;

	bp_syms__stats(s, &st);
	return st.processes;
}

static uint64_t sym_snapshots(const struct bp_syms *s)
{
	struct bp_syms_stats st;

	bp_syms__stats(s, &st);
	return st.snapshots;
}

/* known: resolved from the snapshot, no read of its maps */
static void expect_known(struct bp_syms *s, pid_t pid)
{
	uint64_t snaps = sym_snapshots(s);
	struct bp_frame_info fi;

	assert_int_equal(bp_syms__resolve_user(s, pid, RETIRE_HEAP + 0x10, &fi), -ENOENT);
	assert_string_equal(fi.module, "[heap]");
	assert_int_equal(sym_snapshots(s), snaps);
}

static void retire__exited__dropped_at_the_second_call(void **state)
{
	const char *root;
	struct bp_syms *s = retire_setup(&root);
	struct bp_frame_info fi;
	uint64_t snaps;

	assert_int_equal(sym_procs(s), 3);
	bp_syms__exited(s, 102);
	/* marked, still there: its last samples may still need it */
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(sym_procs(s), 3);
	expect_known(s, 102);
	assert_int_equal(bp_syms__retire(s), 1);
	assert_int_equal(sym_procs(s), 2);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(sym_procs(s), 2);

	/* the others are kept; 102 is forgotten: resolving it reads its maps again */
	expect_known(s, 101);
	expect_known(s, 103);
	snaps = sym_snapshots(s);
	bp_syms__exited(s, 102);	/* unknown pid: nothing to do */
	assert_int_equal(sym_procs(s), 2);
	expect_known(s, 101);
	assert_int_equal(bp_syms__resolve_user(s, 102, RETIRE_HEAP, &fi), -ENOENT);
	assert_string_equal(fi.module, "[heap]");
	assert_int_equal(sym_snapshots(s), snaps + 1);
	assert_int_equal(sym_procs(s), 3);
}

static void retire__proc_dir_removed__dropped_at_the_second_call(void **state)
{
	const char *root;
	struct bp_syms *s = retire_setup(&root);
	struct bp_frame_info fi;

	/* no exit event (lost), but /proc/103 is gone */
	fake_pid_gone(root, 103);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(sym_procs(s), 3);
	/* from now on it counts as exited: no attempt to read it again */
	expect_known(s, 103);
	assert_int_equal(bp_syms__retire(s), 1);
	assert_int_equal(sym_procs(s), 2);
	expect_known(s, 101);
	expect_known(s, 102);

	/* gone before ever seen: remembered as gone, then retired the same way */
	assert_int_equal(bp_syms__resolve_user(s, 104, RETIRE_HEAP, &fi), -ENOENT);
	assert_string_equal(fi.module, "[unknown]");
	assert_int_equal(sym_procs(s), 3);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(sym_procs(s), 3);
	assert_int_equal(bp_syms__retire(s), 1);
	assert_int_equal(sym_procs(s), 2);
}

static void retire__live__never_dropped(void **state)
{
	const char *root;
	struct bp_syms *s = retire_setup(&root);
	int i;

	for (i = 0; i < 5; i++) {
		assert_int_equal(bp_syms__retire(s), 0);
		assert_int_equal(sym_procs(s), 3);
	}
	expect_known(s, 101);
	expect_known(s, 102);
	expect_known(s, 103);
	/* nothing is dropped twice either: two gone, each counted once */
	bp_syms__exited(s, 101);
	fake_pid_gone(root, 102);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(bp_syms__retire(s), 2);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(sym_procs(s), 1);
	expect_known(s, 103);
}

static void retire__resnapshot_between_calls__kept(void **state)
{
	const char *root;
	struct bp_syms *s = retire_setup(&root);

	/* an exit, then the pid is alive again (reused, or the event was wrong) */
	bp_syms__exited(s, 101);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(bp_syms__snapshot(s, 101), 0);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(sym_procs(s), 3);

	/* /proc/102 vanished, and is back by the time of the snapshot */
	fake_pid_gone(root, 102);
	assert_int_equal(bp_syms__retire(s), 0);
	fake_pid(root, 102);
	assert_int_equal(bp_syms__snapshot(s, 102), 0);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(bp_syms__retire(s), 0);
	assert_int_equal(sym_procs(s), 3);
	expect_known(s, 101);
	expect_known(s, 102);

	/* a snapshot that fails (the process is gone) does not unmark it */
	bp_syms__exited(s, 103);
	assert_int_equal(bp_syms__retire(s), 0);
	fake_pid_gone(root, 103);
	assert_int_equal(bp_syms__snapshot(s, 103), -ESRCH);
	assert_int_equal(bp_syms__retire(s), 1);
	assert_int_equal(sym_procs(s), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(user__kept_image__names_its_addresses, teardown),
		cmocka_unit_test_teardown(user__forked_child__takes_parents_maps, teardown),
		cmocka_unit_test_teardown(user__pie__survives_exit, teardown),
		cmocka_unit_test_teardown(user__nopie__survives_exit, teardown),
		cmocka_unit_test_teardown(user__shared_library__survives_exit, teardown),
		cmocka_unit_test_teardown(user__debug_file_via_build_id__survives_exit, teardown),
		cmocka_unit_test_teardown(user__debuglink__survives_exit, teardown),
		cmocka_unit_test_teardown(user__deleted_binary__resolves, teardown),
		cmocka_unit_test_teardown(user__many_mapped_files__fds_bounded, teardown),
		cmocka_unit_test_teardown(user__file_rewritten_in_place__reparsed, teardown),
		cmocka_unit_test_teardown(user__two_processes__share_files, teardown),
		cmocka_unit_test_teardown(user__shared_file__held_inode_exact, teardown),
		cmocka_unit_test_teardown(user__gone_process__unknown_frame, teardown),
		cmocka_unit_test_teardown(user__fake_proc__every_kind_of_frame, teardown),
		cmocka_unit_test_teardown(user__perf_map__grows_and_survives, teardown),
		cmocka_unit_test_teardown(user__own_process__function_vdso_stack, teardown),
		cmocka_unit_test_teardown(retire__exited__dropped_at_the_second_call, teardown),
		cmocka_unit_test_teardown(retire__proc_dir_removed__dropped_at_the_second_call,
					  teardown),
		cmocka_unit_test_teardown(retire__live__never_dropped, teardown),
		cmocka_unit_test_teardown(retire__resnapshot_between_calls__kept, teardown),
	};

	return cmocka_run_group_tests_name("symbols", tests, NULL, sf_cleanup);
}
