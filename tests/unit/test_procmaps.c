// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "proc/procmaps.h"
#include "unit/symfix/symfix_test.h"

static void parse(const char *text, struct bp_maps_line *l, char *buf, size_t sz, int want)
{
	snprintf(buf, sz, "%s", text);
	assert_int_equal(bp_procmaps__parse_line(buf, l), want);
}

static void parse_line__file__all_fields(void **state)
{
	struct bp_maps_line l;
	char buf[512];

	parse("7f1c2a000000-7f1c2a1b4000 r-xp 00028000 fe:01 1316237"
	      "                    /usr/lib/x86_64-linux-gnu/libc.so.6\n", &l, buf, sizeof(buf), 0);
	assert_int_equal(l.start, 0x7f1c2a000000ULL);
	assert_int_equal(l.end, 0x7f1c2a1b4000ULL);
	assert_int_equal(l.pgoff, 0x28000);
	assert_int_equal(l.dev_major, 0xfe);
	assert_int_equal(l.dev_minor, 1);
	assert_int_equal(l.inode, 1316237);
	assert_true(l.read);
	assert_false(l.write);
	assert_true(l.exec);
	assert_false(l.shared);
	assert_false(l.deleted);
	assert_string_equal(l.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(l.path_len, strlen(l.path));
}

static void parse_line__spaces_in_path__kept(void **state)
{
	struct bp_maps_line l;
	char buf[512];

	parse("400000-401000 r-xs 00000000 08:02 42 /opt/my app/lib  two.so\n", &l, buf,
	      sizeof(buf), 0);
	assert_string_equal(l.path, "/opt/my app/lib  two.so");
	assert_true(l.shared);
}

static void parse_line__deleted__suffix_stripped(void **state)
{
	struct bp_maps_line l;
	char buf[512];

	parse("400000-401000 r-xp 00001000 08:02 42   /tmp/x y (deleted)\n", &l, buf,
	      sizeof(buf), 0);
	assert_true(l.deleted);
	assert_string_equal(l.path, "/tmp/x y");
	assert_int_equal(l.path_len, 8);

	/* only a suffix counts */
	parse("400000-401000 r-xp 00001000 08:02 42 /tmp/a (deleted) b\n", &l, buf,
	      sizeof(buf), 0);
	assert_false(l.deleted);
	assert_string_equal(l.path, "/tmp/a (deleted) b");

	/* a file literally named " (deleted)" is not emptied */
	parse("400000-401000 r-xp 00001000 08:02 42  (deleted)\n", &l, buf, sizeof(buf), 0);
	assert_false(l.deleted);
}

static void parse_line__special_and_anon(void **state)
{
	struct bp_maps_line l;
	char buf[512];

	parse("7ffd1e5f2000-7ffd1e5f4000 r-xp 00000000 00:00 0                  [vdso]\n",
	      &l, buf, sizeof(buf), 0);
	assert_string_equal(l.path, "[vdso]");
	assert_true(l.exec);

	parse("55d0c0a7a000-55d0c0a9b000 rw-p 00000000 00:00 0          [heap]", &l, buf,
	      sizeof(buf), 0);
	assert_string_equal(l.path, "[heap]");

	parse("7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n", &l, buf, sizeof(buf), 0);
	assert_string_equal(l.path, "");
	assert_int_equal(l.path_len, 0);

	parse("7f0000000000-7f0000001000 ---p 00000000 00:00 0", &l, buf, sizeof(buf), 0);
	assert_string_equal(l.path, "");
	assert_false(l.read);
}

static void parse_line__garbage__einval(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"garbage",
		"7f-",
		"400000-401000 r-xp",
		"400000-401000 r-xp 00000000 08:02",
		"400000-401000 r-xp 00000000 08:02 ",
		"401000-400000 r-xp 00000000 08:02 1 /x",	/* end before start */
		"400000-400000 r-xp 00000000 08:02 1 /x",	/* empty */
		"400000-401000 rwzp 00000000 08:02 1 /x",
		"400000-401000 r-xq 00000000 08:02 1 /x",
		"0x400000-401000 r-xp 00000000 08:02 1 /x",
		"400000-401000 r-xp 0000g000 08:02 1 /x",
		"400000-401000 r-xp 00000000 0802 1 /x",
		"400000-401000 r-xp 00000000 08:02 1x /x",
		"11112222333344445-401000 r-xp 00000000 08:02 1 /x",	/* 65 bits */
		" 400000-401000 r-xp 00000000 08:02 1 /x",
	};
	struct bp_maps_line l;
	char buf[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i]);
		if (bp_procmaps__parse_line(buf, &l) != -EINVAL)
			fail_msg("accepted '%s'", bad[i]);
	}
}

struct collect {
	int n;
	int exec;
	int stop_at;
	char last[256];
	bool stack;
};

static int collect_cb(const struct bp_maps_line *l, void *ctx)
{
	struct collect *c = ctx;

	c->n++;
	c->exec += l->exec;
	snprintf(c->last, sizeof(c->last), "%s", l->path);
	if (!strcmp(l->path, "[stack]"))
		c->stack = true;
	return c->stop_at && c->n == c->stop_at ? 42 : 0;
}

static void read__mixed_file__skips_bad_lines(void **state)
{
	const char *dir = sf_tmpdir();
	struct collect c = { 0 };
	char path[PATH_MAX];
	size_t bad = 99;

	snprintf(path, sizeof(path), "%s/maps", dir);
	sf_write_file(path,
		      "400000-401000 r-xp 00001000 08:02 42 /bin/with space\n"
		      "this is not a maps line\n"
		      "\n"
		      "500000-501000 rw-p 00000000 00:00 0 [heap]\n"
		      "600000-601000 r-x",			/* cut short */
		      "w");
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, &bad), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.exec, 1);
	assert_int_equal(bad, 3);
	assert_string_equal(c.last, "[heap]");

	memset(&c, 0, sizeof(c));
	c.stop_at = 1;
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, NULL), 42);
	assert_int_equal(c.n, 1);
}

/* a line longer than a path can be is skipped, not buffered; the rest reads on */
static void read__long_line__skipped(void **state)
{
	const char *dir = sf_tmpdir();
	struct collect c = { 0 };
	char path[PATH_MAX], *junk;
	size_t bad = 0, n = BP_MAPS_LINE_MAX + 100;
	FILE *f;

	snprintf(path, sizeof(path), "%s/maps", dir);
	junk = malloc(n + 1);
	assert_non_null(junk);
	memset(junk, 'a', n);
	junk[n] = '\0';
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "400000-401000 r-xp 00001000 08:02 42 /bin/%s\n", junk);
	fprintf(f, "500000-501000 rw-p 00000000 00:00 0 [heap]\n");
	fprintf(f, "600000-601000 rw-p 00000000 00:00 0 /no/newline/%s", junk);
	fclose(f);
	free(junk);
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, &bad), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.last, "[heap]");
	assert_int_equal(bad, 2);
}

/* a file with more lines than any process can have mappings is cut there */
static void read__line_bound__cut_and_counted(void **state)
{
	const char *dir = sf_tmpdir();
	struct collect c = { 0 };
	char path[PATH_MAX];
	size_t bad = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/maps", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 0; i < BP_MAPS_LINES_MAX + 10; i++)
		fprintf(f, "%zx-%zx r--p 0 0:0 0\n", i * 0x1000 + 0x1000, i * 0x1000 + 0x2000);
	fclose(f);
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, &bad), 0);
	assert_int_equal(c.n, BP_MAPS_LINES_MAX);
	assert_int_equal(bad, 1);
}

static void read__missing_file__enoent(void **state)
{
	struct collect c = { 0 };

	assert_int_equal(bp_procmaps__read("/nonexistent/maps", collect_cb, &c, NULL), -ENOENT);
	assert_int_equal(c.n, 0);
}

static void read__own_maps__sane(void **state)
{
	struct collect c = { 0 };
	size_t bad = 99;

	assert_int_equal(bp_procmaps__read("/proc/self/maps", collect_cb, &c, &bad), 0);
	assert_int_equal(bad, 0);
	assert_true(c.n > 5);
	assert_true(c.exec > 1);
	assert_true(c.stack);
	/* the last line, where the read stopped */
	assert_string_equal(c.last, "[vsyscall]");
}

/*
 * The gate area's line ends a maps file (the kernel lists it after every
 * mapping): nothing is read past it, held or not. A FIFO whose writer
 * stays open stands for the file: a read() past the line finds no end
 * there (-EAGAIN), as a file without the line shows.
 */
static void read__vsyscall_line__no_read_past_it(void **state)
{
	static const char a[] = "400000-401000 r-xp 00001000 08:02 42 /bin/a\n";
	static const char gate[] = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
				   "                  [vsyscall]\n";
	struct collect c = { 0 };
	char path[PATH_MAX];
	size_t bad = 99;
	int fd;

	snprintf(path, sizeof(path), "%s/maps", sf_tmpdir());
	assert_int_equal(mkfifo(path, 0600), 0);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, a, strlen(a)), (ssize_t)strlen(a));
	assert_int_equal(write(fd, gate, strlen(gate)), (ssize_t)strlen(gate));
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, &bad), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(bad, 0);
	assert_string_equal(c.last, "[vsyscall]");

	assert_int_equal(write(fd, a, strlen(a)), (ssize_t)strlen(a));
	assert_int_equal(write(fd, gate, strlen(gate)), (ssize_t)strlen(gate));
	assert_int_equal(bp_procmaps__hold(path), 0);
	assert_int_equal(bp_procmaps__held_lines(), 2);
	bp_procmaps__unhold();

	/* without the line, the reader asks for more, and the FIFO has none yet */
	assert_int_equal(write(fd, a, strlen(a)), (ssize_t)strlen(a));
	memset(&c, 0, sizeof(c));
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, NULL), -EAGAIN);
	assert_int_equal(c.n, 1);
	close(fd);
}

/*
 * A held copy serves every read of its path, twice, whatever happens to the
 * file meanwhile; other paths read their own file; after unhold, the file.
 */
static void hold__one_read_serves_the_readers(void **state)
{
	const char *dir = sf_tmpdir();
	char path[PATH_MAX], other[PATH_MAX];
	struct collect c = { 0 };
	size_t bad = 99;

	snprintf(path, sizeof(path), "%s/maps", dir);
	snprintf(other, sizeof(other), "%s/maps2", dir);
	sf_write_file(path, "400000-401000 r-xp 00001000 08:02 42 /bin/a\n"
			    "500000-501000 rw-p 00000000 00:00 0 [heap]\n"
			    "600000-601000 r-x", "w");
	sf_write_file(other, "400000-401000 r-xp 00001000 08:02 42 /bin/other\n", "w");
	assert_int_equal(bp_procmaps__hold(path), 0);
	/* the process maps something new: the held copy is what was read */
	sf_write_file(path, "700000-701000 r-xp 00000000 08:02 43 /bin/new\n", "w");
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, &bad), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(bad, 1);
	assert_string_equal(c.last, "[heap]");
	memset(&c, 0, sizeof(c));
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, NULL), 0);
	assert_int_equal(c.n, 2);
	memset(&c, 0, sizeof(c));
	assert_int_equal(bp_procmaps__read(other, collect_cb, &c, NULL), 0);
	assert_string_equal(c.last, "/bin/other");
	bp_procmaps__unhold();
	memset(&c, 0, sizeof(c));
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, NULL), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.last, "/bin/new");
	/* nothing to hold: an error, and reads go to the file */
	assert_int_equal(bp_procmaps__hold("/nonexistent/maps"), -ENOENT);
	memset(&c, 0, sizeof(c));
	assert_int_equal(bp_procmaps__read(path, collect_cb, &c, NULL), 0);
	assert_string_equal(c.last, "/bin/new");
	bp_procmaps__unhold();
}

struct keep {
	struct bp_maps_line v[8];
	char paths[8][64];
	int n;
};

static int keep_cb(const struct bp_maps_line *l, void *ctx)
{
	struct keep *k = ctx;

	if (k->n == 8)
		return 1;
	k->v[k->n] = *l;
	snprintf(k->paths[k->n], sizeof(k->paths[0]), "%s", l->path);
	k->n++;
	return 0;
}

/*
 * Lines held as parsed lines read back field for field as the same lines
 * held from a maps file: the empty range a bad line, " (deleted)" cut from
 * its path and marked, nothing after the gate area's line, the stats kept.
 */
static void hold_lines__read_back_as_their_text(void **state)
{
	static const char text[] =
		"400000-401000 r-xp 00001000 08:02 42 /bin/a b\n"
		"401000-401000 r--p 00000000 08:02 42 /bin/a b\n"
		"500000-501000 rw-s 00000000 fd:01 7 /dev/shm/x (deleted)\n"
		"600000-601000 rw-p 00000000 00:00 0 [heap]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n"
		"700000-701000 r-xp 00000000 08:02 43 /bin/after\n";
	const struct bp_maps_line lines[] = {
		{ .start = 0x400000, .end = 0x401000, .pgoff = 0x1000, .inode = 42, .dev_major = 8,
		  .dev_minor = 2, .read = true, .exec = true, .path = "/bin/a b", .path_len = 8 },
		{ .start = 0x401000, .end = 0x401000, .inode = 42, .dev_major = 8, .dev_minor = 2,
		  .read = true, .path = "/bin/a b", .path_len = 8 },
		{ .start = 0x500000, .end = 0x501000, .inode = 7, .dev_major = 0xfd, .dev_minor = 1,
		  .read = true, .write = true, .shared = true, .path = "/dev/shm/x (deleted)",
		  .path_len = 20 },
		{ .start = 0x600000, .end = 0x601000, .read = true, .write = true, .path = "[heap]",
		  .path_len = 6 },
		{ .start = 0xffffffffff600000ULL, .end = 0xffffffffff601000ULL, .exec = true,
		  .path = "[vsyscall]", .path_len = 10 },
		{ .start = 0x700000, .end = 0x701000, .inode = 43, .dev_major = 8, .dev_minor = 2,
		  .read = true, .exec = true, .path = "/bin/after", .path_len = 10 },
	};
	struct keep *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct stat st = { .st_ino = 42, .st_dev = makedev(8, 2) }, got;
	size_t bad_a = 99, bad_b = 99;
	char path[PATH_MAX];
	int i;

	assert_non_null(a);
	assert_non_null(b);
	snprintf(path, sizeof(path), "%s/maps", sf_tmpdir());
	sf_write_file(path, text, "w");
	assert_int_equal(bp_procmaps__hold(path), 0);
	assert_int_equal(bp_procmaps__read(path, keep_cb, a, &bad_a), 0);
	bp_procmaps__unhold();
	assert_int_equal(bp_procmaps__hold_lines(path, lines, sizeof(lines) / sizeof(lines[0]),
						 &st, 1), 0);
	assert_int_equal(bp_procmaps__read(path, keep_cb, b, &bad_b), 0);
	assert_int_equal(a->n, 4);
	assert_int_equal(b->n, a->n);
	assert_int_equal(bad_a, 1);
	assert_int_equal(bad_b, bad_a);
	for (i = 0; i < a->n; i++) {
		assert_int_equal(a->v[i].start, b->v[i].start);
		assert_int_equal(a->v[i].end, b->v[i].end);
		assert_int_equal(a->v[i].pgoff, b->v[i].pgoff);
		assert_int_equal(a->v[i].inode, b->v[i].inode);
		assert_int_equal(a->v[i].dev_major, b->v[i].dev_major);
		assert_int_equal(a->v[i].dev_minor, b->v[i].dev_minor);
		assert_int_equal(a->v[i].read, b->v[i].read);
		assert_int_equal(a->v[i].write, b->v[i].write);
		assert_int_equal(a->v[i].exec, b->v[i].exec);
		assert_int_equal(a->v[i].shared, b->v[i].shared);
		assert_int_equal(a->v[i].deleted, b->v[i].deleted);
		assert_int_equal(a->v[i].path_len, b->v[i].path_len);
		assert_string_equal(a->paths[i], b->paths[i]);
	}
	assert_string_equal(b->paths[1], "/dev/shm/x");
	assert_true(b->v[1].deleted);
	assert_true(bp_procmaps__held_stat(path, &b->v[0], &got));
	assert_int_equal(got.st_ino, 42);
	bp_procmaps__unhold();
	free(a);
	free(b);
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/*
 * An executable known already (BPF read it at the first sample) is the
 * answer for the maps held: no stat is made, though there is no exe link
 * beside this maps file at all; without maps held it is not taken.
 */
static void exe_stat__identity_given__no_stat(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat given = { .st_dev = makedev(8, 2), .st_ino = 4242, .st_mode = S_IFREG | 0755,
			      .st_size = 1234 }, st;
	uint64_t made;

	snprintf(dir, sizeof(dir), "%s/77", sf_tmpdir());
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/maps", dir);
	sf_write_file(path, "400000-401000 r-xp 00001000 08:02 4242 /bin/a\n", "w");
	bp_procmaps__hold_exe(&given);
	assert_int_equal(bp_procmaps__exe_stat(path, &st), -ENOENT);
	assert_int_equal(bp_procmaps__hold(path), 0);
	bp_procmaps__hold_exe(&given);
	made = bp_procmaps__exe_stats();
	assert_int_equal(bp_procmaps__exe_stat(path, &st), 0);
	assert_int_equal(bp_procmaps__exe_stats(), made);
	assert_int_equal(st.st_ino, 4242);
	assert_int_equal(st.st_dev, makedev(8, 2));
	assert_int_equal(st.st_size, 1234);
	assert_true(S_ISREG(st.st_mode));
	bp_procmaps__unhold();
	assert_int_equal(bp_procmaps__exe_stat(path, &st), -ENOENT);
	assert_int_equal(bp_procmaps__exe_stats(), made + 1);
}

/*
 * The executable's stat beside held maps: asked once, the answer kept for
 * the other walkers while held (the file replaced meanwhile does not change
 * it), asked again after unhold. An empty held file (a zombie's) holds no
 * lines.
 */
static void exe_stat__held_answer_kept(void **state)
{
	const char *dir = sf_tmpdir();
	char maps[PATH_MAX], exe[PATH_MAX], next[PATH_MAX];
	struct stat st;
	uint64_t first;

	snprintf(maps, sizeof(maps), "%s/maps", dir);
	snprintf(exe, sizeof(exe), "%s/exe", dir);
	snprintf(next, sizeof(next), "%s/exe.next", dir);
	sf_write_file(maps, "400000-401000 r-xp 00001000 08:02 42 /bin/a\n", "w");
	sf_write_file(exe, "one", "w");
	sf_write_file(next, "two", "w");
	first = ino_of(exe);
	assert_false(bp_procmaps__holds(maps));
	assert_int_equal(bp_procmaps__hold(maps), 0);
	assert_true(bp_procmaps__holds(maps));
	assert_false(bp_procmaps__holds(exe));
	assert_int_equal(bp_procmaps__held_lines(), 1);
	assert_int_equal(bp_procmaps__exe_stat(maps, &st), 0);
	assert_true(st.st_ino == first);
	assert_int_equal(rename(next, exe), 0);
	assert_true(ino_of(exe) != first);
	assert_int_equal(bp_procmaps__exe_stat(maps, &st), 0);
	assert_true(st.st_ino == first);
	bp_procmaps__unhold();
	assert_false(bp_procmaps__holds(maps));
	assert_int_equal(bp_procmaps__held_lines(), 0);
	assert_int_equal(bp_procmaps__exe_stat(maps, &st), 0);
	assert_true(st.st_ino == ino_of(exe));
	assert_int_equal(st.st_size, 3);
	/* a gone process: the error, kept as well */
	assert_int_equal(unlink(exe), 0);
	assert_int_equal(bp_procmaps__hold(maps), 0);
	assert_int_equal(bp_procmaps__exe_stat(maps, &st), -ENOENT);
	sf_write_file(exe, "three", "w");
	assert_int_equal(bp_procmaps__exe_stat(maps, &st), -ENOENT);
	bp_procmaps__unhold();
	/* a zombie's maps read as nothing */
	sf_write_file(maps, "", "w");
	assert_int_equal(bp_procmaps__hold(maps), 0);
	assert_int_equal(bp_procmaps__held_lines(), 0);
	bp_procmaps__unhold();
	assert_int_equal(bp_procmaps__exe_stat("/proc/self/status", &st), -EINVAL);
	assert_int_equal(bp_procmaps__exe_stat("/proc/self/maps", &st), 0);
	assert_true(st.st_ino == ino_of("/proc/self/exe"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_line__file__all_fields),
		cmocka_unit_test(parse_line__spaces_in_path__kept),
		cmocka_unit_test(parse_line__deleted__suffix_stripped),
		cmocka_unit_test(parse_line__special_and_anon),
		cmocka_unit_test(parse_line__garbage__einval),
		cmocka_unit_test_teardown(read__mixed_file__skips_bad_lines, sf_cleanup),
		cmocka_unit_test_teardown(read__long_line__skipped, sf_cleanup),
		cmocka_unit_test_teardown(read__line_bound__cut_and_counted, sf_cleanup),
		cmocka_unit_test(read__missing_file__enoent),
		cmocka_unit_test(read__own_maps__sane),
		cmocka_unit_test_teardown(read__vsyscall_line__no_read_past_it, sf_cleanup),
		cmocka_unit_test_teardown(hold__one_read_serves_the_readers, sf_cleanup),
		cmocka_unit_test_teardown(hold_lines__read_back_as_their_text, sf_cleanup),
		cmocka_unit_test_teardown(exe_stat__held_answer_kept, sf_cleanup),
		cmocka_unit_test_teardown(exe_stat__identity_given__no_stat, sf_cleanup),
	};

	return cmocka_run_group_tests_name("procmaps", tests, NULL, sf_cleanup);
}
