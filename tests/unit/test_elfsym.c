// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <gelf.h>

#include "symbolize/dwarf_lines.h"
#include "symbolize/elfsym.h"
#include "proc/procmaps.h"
#include "unit/symfix/symfix_test.h"

static struct bp_elf *open_file(const char *path, const struct bp_elf_opts *opts)
{
	struct bp_elf *e = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	assert_int_equal(bp_elf__open_fd(fd, opts, &e), 0);
	return e;
}

static struct bp_elf *open_data(const char *name, const struct bp_elf_opts *opts)
{
	char path[PATH_MAX];

	sf_data_path(path, sizeof(path), name);
	return open_file(path, opts);
}

struct find_map {
	uint64_t addr;
	uint64_t off;
	bool found;
};

static int find_map_cb(const struct bp_maps_line *l, void *ctx)
{
	struct find_map *f = ctx;

	if (f->addr >= l->start && f->addr < l->end) {
		f->off = f->addr - l->start + l->pgoff;
		f->found = true;
		return 1;
	}
	return 0;
}

/* the file offset of a child's runtime address, per its maps */
static uint64_t file_offset(pid_t pid, uint64_t addr)
{
	struct find_map f = { .addr = addr };
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	bp_procmaps__read(path, find_map_cb, &f, NULL);
	if (!f.found)
		fail_msg("0x%llx not mapped in %d", (unsigned long long)addr, pid);
	return f.off;
}

static void expect_sym(struct bp_elf *e, uint64_t vaddr, const char *name)
{
	struct bp_elf_sym *s = bp_elf__find(e, vaddr);

	if (!s)
		fail_msg("nothing at 0x%llx, wanted %s", (unsigned long long)vaddr, name);
	assert_string_equal(s->name, name);
}

static void expect_not_sym(struct bp_elf *e, uint64_t vaddr, const char *name)
{
	struct bp_elf_sym *s = bp_elf__find(e, vaddr);

	if (s && !strcmp(s->name, name))
		fail_msg("0x%llx wrongly named %s", (unsigned long long)vaddr, name);
}

static void check_exe(const char *name, const char *fn)
{
	const struct sf_sym *alpha, *zeta;
	struct bp_elf_sym *s;
	struct sf_child c;
	struct bp_elf *e;
	const char *bid;
	uint64_t vaddr;
	char path[PATH_MAX];
	size_t i;

	sf_data_path(path, sizeof(path), name);
	sf_spawn(&c, path);
	alpha = sf_sym(&c, fn);
	zeta = sf_sym(&c, "symfix_local_zeta");

	e = open_data(name, NULL);
	assert_false(bp_elf__syms_loaded(e));

	/* load arithmetic: offset in the child's mapping -> vaddr */
	assert_int_equal(bp_elf__file_to_vaddr(e, file_offset(c.pid, alpha->addr), &vaddr), 0);
	assert_int_equal(vaddr, alpha->vaddr);
	assert_int_equal(bp_elf__file_to_vaddr(e, file_offset(c.pid, zeta->addr), &vaddr), 0);
	assert_int_equal(vaddr, zeta->vaddr);
	sf_kill(&c);

	s = bp_elf__find(e, alpha->vaddr + 3);
	assert_true(bp_elf__syms_loaded(e));
	assert_non_null(s);
	assert_string_equal(s->name, fn);
	assert_int_equal(s->addr, alpha->vaddr);
	assert_true(s->end > alpha->vaddr + 3);
	expect_sym(e, zeta->vaddr, "symfix_local_zeta");
	assert_string_equal(bp_elf__sym_source(e), "symtab");
	assert_null(bp_elf__debug_path(e));

	bid = bp_elf__build_id(e);
	assert_non_null(bid);
	assert_int_equal(strlen(bid), 40);
	for (i = 0; i < 40; i++)
		assert_non_null(strchr("0123456789abcdef", bid[i]));
	bp_elf__free(e);
}

static void exe__pie__symtab_and_load_bias(void **state)
{
	check_exe("symfix_pie", "symfix_alpha");
}

static void exe__nopie__symtab_and_load_bias(void **state)
{
	check_exe("symfix_nopie", "symfix_alpha");
}

static void lib__aliases_and_zero_size(void **state)
{
	const struct sf_sym *gamma, *pub, *ver, *zero, *next, *last;
	struct bp_elf_sym *s;
	struct sf_child c;
	struct bp_elf *e;
	char path[PATH_MAX];
	uint64_t vaddr;

	sf_data_path(path, sizeof(path), "symfix_uselib");
	sf_spawn(&c, path);
	gamma = sf_sym(&c, "symfix_lib_gamma");
	pub = sf_sym(&c, "symfix_lib_public");
	ver = sf_sym(&c, "symfix_lib_versioned");
	zero = sf_sym(&c, "symfix_asm_zero");
	next = sf_sym(&c, "symfix_asm_next");
	last = sf_sym(&c, "symfix_asm_last");

	e = open_data("libsymfix.so", NULL);
	assert_int_equal(bp_elf__file_to_vaddr(e, file_offset(c.pid, gamma->addr), &vaddr), 0);
	assert_int_equal(vaddr, gamma->vaddr);
	sf_kill(&c);

	expect_sym(e, gamma->vaddr + 1, "symfix_lib_gamma");
	/* local, weak and global at one address: the global name */
	expect_sym(e, pub->vaddr, "symfix_lib_public");
	/* .symtab says symfix_lib_versioned@@SYMFIX_1 */
	expect_sym(e, ver->vaddr + 1, "symfix_lib_versioned");

	/* no size: up to the next symbol */
	s = bp_elf__find(e, zero->vaddr + 2);
	assert_non_null(s);
	assert_string_equal(s->name, "symfix_asm_zero");
	assert_int_equal(s->end, next->vaddr);
	expect_sym(e, next->vaddr, "symfix_asm_next");

	/* no size, last in its section (8 bytes): not past the section end */
	expect_sym(e, last->vaddr + 7, "symfix_asm_last");
	expect_not_sym(e, last->vaddr + 8, "symfix_asm_last");
	bp_elf__free(e);

	/* stripped: .dynsym still has the exported names */
	e = open_data("libsymfix_nosym.so", NULL);
	expect_sym(e, gamma->vaddr + 1, "symfix_lib_gamma");
	expect_sym(e, pub->vaddr, "symfix_lib_public");
	expect_sym(e, ver->vaddr, "symfix_lib_versioned");
	assert_string_equal(bp_elf__sym_source(e), "dynsym");
	bp_elf__free(e);
}

/* a stripped program: its function named only through its debug file */
static uint64_t stripped_vaddr(const char *name, const char *fn)
{
	char path[PATH_MAX];
	struct sf_child c;
	uint64_t v;

	sf_data_path(path, sizeof(path), name);
	sf_spawn(&c, path);
	v = sf_sym(&c, fn)->vaddr;
	sf_kill(&c);
	return v;
}

static void check_debug(const char *name, const char *fn, const struct bp_elf_opts *o,
			const char *debug_suffix)
{
	uint64_t v = stripped_vaddr(name, fn);
	struct bp_elf *e = open_data(name, o);
	const char *dbg;

	expect_sym(e, v + 1, fn);
	assert_string_equal(bp_elf__sym_source(e), "debug");
	dbg = bp_elf__debug_path(e);
	assert_non_null(dbg);
	if (strlen(dbg) < strlen(debug_suffix) ||
	    strcmp(dbg + strlen(dbg) - strlen(debug_suffix), debug_suffix))
		fail_msg("debug file %s, wanted .../%s", dbg, debug_suffix);
	bp_elf__free(e);

	/* without the way to find it: .dynsym only, which lacks fn (and any
	 * function a program defines) */
	e = open_data(name, NULL);
	expect_not_sym(e, v + 1, fn);
	assert_string_equal(bp_elf__sym_source(e), "none");
	assert_null(bp_elf__debug_path(e));
	bp_elf__free(e);
}

static void debug__debuglink_next_to_binary(void **state)
{
	char path[PATH_MAX];
	struct bp_elf_opts o = { .path = path };
	struct bp_elf *e;
	uint32_t crc = 0;

	sf_data_path(path, sizeof(path), "symfix_dbglink");
	e = open_data("symfix_dbglink", NULL);
	assert_string_equal(bp_elf__debuglink(e, &crc), "symfix_dbglink.debug");
	assert_true(crc != 0);
	bp_elf__free(e);
	check_debug("symfix_dbglink", "symfix_delta", &o, "/symfix_dbglink.debug");
}

static void debug__debuglink_in_dot_debug(void **state)
{
	char path[PATH_MAX];
	struct bp_elf_opts o = { .path = path, .root = "" };

	sf_data_path(path, sizeof(path), "symfix_dotdebug");
	check_debug("symfix_dotdebug", "symfix_eta", &o, "/.debug/symfix_dotdebug.debug");
}

static void debug__debuglink_under_debug_root(void **state)
{
	char path[PATH_MAX], root[PATH_MAX];
	struct bp_elf_opts o = { .path = path, .debug_root = root };

	sf_data_path(path, sizeof(path), "symfix_rootlink");
	sf_data_path(root, sizeof(root), "debugroot");
	check_debug("symfix_rootlink", "symfix_theta", &o, "/symfix_rootlink.debug");
}

static void debug__build_id_tree(void **state)
{
	char root[PATH_MAX], want[128];
	struct bp_elf_opts o = { .debug_root = root };
	struct bp_elf *e;
	const char *bid;

	sf_data_path(root, sizeof(root), "debugroot");
	e = open_data("symfix_buildid", NULL);
	bid = bp_elf__build_id(e);
	assert_non_null(bid);
	assert_null(bp_elf__debuglink(e, NULL));
	snprintf(want, sizeof(want), "/.build-id/%.2s/%s.debug", bid, bid + 2);
	bp_elf__free(e);
	check_debug("symfix_buildid", "symfix_epsilon", &o, want);
}

/* the line of vaddr from e's DWARF: 0 when it has none there */
static uint32_t dwarf_line(struct bp_elf *e, uint64_t vaddr)
{
	struct bp_dwarf_frame f[BP_DWARF_INLINE_MAX];

	if (!bp_elf__dwarf(e) || bp_dwarf__frames(bp_elf__dwarf(e), vaddr, f,
						  BP_DWARF_INLINE_MAX) < 1)
		return 0;
	return f[0].line;
}

/*
 * The agent takes no lines from a distribution's debug package (a file
 * under the debug root), only names; a debug file beside the binary is
 * its builder's, and keeps its lines.
 */
static void debug__dwarf_not_from_root__named_without_lines(void **state)
{
	char root[PATH_MAX], path[PATH_MAX];
	struct bp_elf_opts o = { .debug_root = root, .want_dwarf = true };
	uint64_t v = stripped_vaddr("symfix_buildid", "symfix_epsilon");
	struct bp_elf *e;

	sf_data_path(root, sizeof(root), "debugroot");
	e = open_data("symfix_buildid", &o);
	expect_sym(e, v + 1, "symfix_epsilon");
	assert_true(dwarf_line(e, v + 1) > 0);
	assert_false(bp_elf__dwarf_in_root_skipped(e));
	bp_elf__free(e);

	o.dwarf_not_from_root = true;
	e = open_data("symfix_buildid", &o);
	expect_sym(e, v + 1, "symfix_epsilon");
	assert_string_equal(bp_elf__sym_source(e), "debug");
	assert_null(bp_elf__dwarf(e));
	assert_true(bp_elf__dwarf_in_root_skipped(e));
	bp_elf__free(e);

	sf_data_path(path, sizeof(path), "symfix_dbglink");
	o.path = path;
	v = stripped_vaddr("symfix_dbglink", "symfix_delta");
	e = open_data("symfix_dbglink", &o);
	expect_sym(e, v + 1, "symfix_delta");
	assert_true(dwarf_line(e, v + 1) > 0);
	assert_false(bp_elf__dwarf_in_root_skipped(e));
	bp_elf__free(e);
}

static void debug__mismatches__rejected(void **state)
{
	const char *dir = sf_tmpdir();
	char bin[PATH_MAX], dbg[PATH_MAX], src[PATH_MAX], bidpath[PATH_MAX];
	struct bp_elf_opts o = { .path = bin, .debug_root = dir };
	uint64_t v = stripped_vaddr("symfix_dbglink", "symfix_delta");
	struct bp_elf *e;
	const char *bid;

	/* right name, wrong contents: the CRC tells */
	snprintf(bin, sizeof(bin), "%s/symfix_dbglink", dir);
	snprintf(dbg, sizeof(dbg), "%s/symfix_dbglink.debug", dir);
	sf_data_path(src, sizeof(src), "symfix_dbglink");
	sf_copy_file(src, bin, 0755);
	sf_data_path(src, sizeof(src), ".debug/symfix_dotdebug.debug");
	sf_copy_file(src, dbg, 0644);

	/* right build-id path, another file's build-id inside */
	e = open_file(bin, NULL);
	bid = bp_elf__build_id(e);
	assert_non_null(bid);
	snprintf(bidpath, sizeof(bidpath), "%s/.build-id", dir);
	mkdir(bidpath, 0755);
	snprintf(bidpath, sizeof(bidpath), "%s/.build-id/%.2s", dir, bid);
	mkdir(bidpath, 0755);
	snprintf(bidpath, sizeof(bidpath), "%s/.build-id/%.2s/%s.debug", dir, bid, bid + 2);
	bp_elf__free(e);
	sf_copy_file(src, bidpath, 0644);

	e = open_file(bin, &o);
	expect_not_sym(e, v + 1, "symfix_delta");
	assert_string_equal(bp_elf__sym_source(e), "none");
	assert_null(bp_elf__debug_path(e));
	bp_elf__free(e);

	/* the right file under the right name is taken */
	sf_data_path(src, sizeof(src), "symfix_dbglink.debug");
	sf_copy_file(src, dbg, 0644);
	e = open_file(bin, &o);
	expect_sym(e, v + 1, "symfix_delta");
	bp_elf__free(e);
}

static void open__not_elf__enoexec(void **state)
{
	const char *dir = sf_tmpdir();
	struct bp_elf *e = (void *)1;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/text", dir);
	sf_write_file(path, "#!/bin/sh\necho not an ELF file\n", "w");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bp_elf__open_fd(fd, NULL, &e), -ENOEXEC);
	assert_null(e);
	/* the fd was taken over and closed */
	assert_int_equal(fcntl(fd, F_GETFD), -1);

	snprintf(path, sizeof(path), "%s/empty", dir);
	sf_write_file(path, "", "w");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(bp_elf__open_fd(fd, NULL, &e), -ENOEXEC);

	assert_int_equal(bp_elf__open_mem("garbage!", 8, &e), -ENOEXEC);
}

static void open_mem__same_as_file(void **state)
{
	uint64_t v = stripped_vaddr("symfix_pie", "symfix_alpha"), vaddr;
	char path[PATH_MAX];
	struct bp_elf *ef, *em;
	struct stat st;
	char *buf;
	int fd;

	sf_data_path(path, sizeof(path), "symfix_pie");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);

	assert_int_equal(bp_elf__open_mem(buf, (size_t)st.st_size, &em), 0);
	/* the image was copied */
	memset(buf, 0, (size_t)st.st_size);
	free(buf);
	ef = open_file(path, NULL);
	assert_string_equal(bp_elf__build_id(em), bp_elf__build_id(ef));
	expect_sym(em, v, "symfix_alpha");
	assert_int_equal(bp_elf__file_to_vaddr(em, v, &vaddr), 0);
	assert_int_equal(bp_elf__file_to_vaddr(em, UINT64_MAX - 1, &vaddr), -ENOENT);
	bp_elf__free(em);
	bp_elf__free(ef);
}

/* --- untrusted debug links and files ------------------------------------ */

/* bytes this process has read through read()/pread() so far */
static uint64_t rchar(void)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/io", "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "rchar:");
	assert_non_null(p);
	return strtoull(p + 6, NULL, 10);
}

static void run_ok(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fail_msg("%s: status %d", cmd, rc);
}

/* a copy of a stripped data binary whose .gnu_debuglink says name (CRC kept) */
static void relink(const char *src_name, const char *dst, const char *name)
{
	char src[PATH_MAX], blob[PATH_MAX], cmd[3 * PATH_MAX];
	unsigned char buf[512] = { 0 };
	struct bp_elf *e;
	uint32_t crc;
	size_t len = strlen(name), off;
	FILE *f;

	sf_data_path(src, sizeof(src), src_name);
	e = open_file(src, NULL);
	assert_non_null(bp_elf__debuglink(e, &crc));
	bp_elf__free(e);
	memcpy(buf, name, len);
	off = (len + 4) & ~(size_t)3;
	memcpy(buf + off, &crc, 4);
	snprintf(blob, sizeof(blob), "%s.link", dst);
	f = fopen(blob, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, off + 4, f), off + 4);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --remove-section=.gnu_debuglink --add-section .gnu_debuglink='%s' "
		 "'%s' '%s'", blob, src, dst);
	run_ok(cmd);
	unlink(blob);
}

/*
 * A debuglink is a name, not a path: "../" or "/" would take us where its
 * author wants. The debug file it would reach matches the binary (CRC and
 * build-id), so only the name check keeps it out.
 */
static void debug__debuglink_with_a_path__ignored(void **state)
{
	static const char *const names[] = { "../symfix_dbglink.debug", "/etc/passwd", "..", "." };
	const char *dir = sf_tmpdir();
	char sub[PATH_MAX], bin[PATH_MAX], src[PATH_MAX], dbg[PATH_MAX];
	struct bp_elf_opts o = { .path = bin };
	struct bp_elf *e;
	size_t i;

	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	sf_data_path(src, sizeof(src), "symfix_dbglink.debug");
	snprintf(dbg, sizeof(dbg), "%s/symfix_dbglink.debug", dir);
	sf_copy_file(src, dbg, 0644);
	snprintf(bin, sizeof(bin), "%s/sub/prog", dir);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		relink("symfix_dbglink", bin, names[i]);
		e = open_file(bin, &o);
		assert_null(bp_elf__debuglink(e, NULL));
		assert_int_equal(bp_elf__load_syms(e), -ENOENT);
		assert_null(bp_elf__debug_path(e));
		bp_elf__free(e);
	}
	/* the same file by its plain name is found: the check is the name */
	relink("symfix_dbglink", bin, "symfix_dbglink.debug");
	snprintf(dbg, sizeof(dbg), "%s/sub/symfix_dbglink.debug", dir);
	sf_copy_file(src, dbg, 0644);
	e = open_file(bin, &o);
	assert_int_equal(bp_elf__load_syms(e), 0);
	assert_string_equal(bp_elf__sym_source(e), "debug");
	bp_elf__free(e);
}

static void alarm_fail(int sig)
{
	(void)sig;
	/* a FIFO open blocked: the test has failed */
	_exit(3);
}

/* a FIFO under the debug file's name cannot block us */
static void debug__fifo__no_hang(void **state)
{
	const char *dir = sf_tmpdir();
	char bin[PATH_MAX], src[PATH_MAX], dbg[PATH_MAX];
	struct bp_elf_opts o = { .path = bin };
	struct bp_elf *e;

	sf_data_path(src, sizeof(src), "symfix_dbglink");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sf_copy_file(src, bin, 0755);
	snprintf(dbg, sizeof(dbg), "%s/symfix_dbglink.debug", dir);
	assert_int_equal(mkfifo(dbg, 0644), 0);
	signal(SIGALRM, alarm_fail);
	alarm(30);
	e = open_file(bin, &o);
	assert_int_equal(bp_elf__load_syms(e), -ENOENT);
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	assert_null(bp_elf__debug_path(e));
	bp_elf__free(e);
}

/* a symlink under the debug file's name (or on the way to it) is not followed */
static void debug__symlink__refused(void **state)
{
	const char *dir = sf_tmpdir();
	char bin[PATH_MAX], src[PATH_MAX], dbg[PATH_MAX];
	struct bp_elf_opts o = { .path = bin };
	struct bp_elf *e;

	sf_data_path(src, sizeof(src), "symfix_dbglink");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sf_copy_file(src, bin, 0755);
	sf_data_path(src, sizeof(src), "symfix_dbglink.debug");
	snprintf(dbg, sizeof(dbg), "%s/symfix_dbglink.debug", dir);
	if (!realpath(src, bin + strlen(bin) + 1))
		fail_msg("realpath %s", src);
	assert_int_equal(symlink(bin + strlen(bin) + 1, dbg), 0);
	e = open_file(bin, &o);
	assert_int_equal(bp_elf__load_syms(e), -ENOENT);
	assert_null(bp_elf__debug_path(e));
	bp_elf__free(e);
}

/*
 * A huge regular file under the debug file's name is not read for its CRC:
 * a binary with a build-id is matched by build-id first (a non-ELF file
 * fails at its first bytes), and a CRC is computed only up to a bound.
 */
static void debug__huge_file__not_read(void **state)
{
	const char *dir = sf_tmpdir();
	char bin[PATH_MAX], src[PATH_MAX], dbg[PATH_MAX];
	struct bp_elf_opts o = { .path = bin };
	struct bp_elf *e;
	uint64_t before;

	/* with a build-id */
	sf_data_path(src, sizeof(src), "symfix_dbglink");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sf_copy_file(src, bin, 0755);
	snprintf(dbg, sizeof(dbg), "%s/symfix_dbglink.debug", dir);
	sf_write_file(dbg, "", "w");
	assert_int_equal(truncate(dbg, 1LL << 30), 0);
	e = open_file(bin, &o);
	before = rchar();
	assert_int_equal(bp_elf__load_syms(e), -ENOENT);
	assert_true(rchar() - before < (1 << 20));
	bp_elf__free(e);

	/* without one: the CRC bound */
	sf_data_path(src, sizeof(src), "symfix_nobid");
	snprintf(bin, sizeof(bin), "%s/nobid", dir);
	sf_copy_file(src, bin, 0755);
	snprintf(dbg, sizeof(dbg), "%s/symfix_nobid.debug", dir);
	sf_write_file(dbg, "", "w");
	assert_int_equal(truncate(dbg, BP_ELF_CRC_MAX + 1), 0);
	e = open_file(bin, &o);
	assert_null(bp_elf__build_id(e));
	before = rchar();
	assert_int_equal(bp_elf__load_syms(e), -ENOENT);
	assert_true(rchar() - before < (1 << 20));
	bp_elf__free(e);
}

/* no build-id: the debuglink's CRC alone finds the debug file */
static void debug__no_build_id__crc(void **state)
{
	char path[PATH_MAX];
	struct bp_elf_opts o = { .path = path };

	sf_data_path(path, sizeof(path), "symfix_nobid");
	check_debug("symfix_nobid", "symfix_iota", &o, "/symfix_nobid.debug");
}

/* a debug file the process's owner could not read is not used for them */
static void debug__unreadable_for_owner__refused(void **state)
{
	const char *dir = sf_tmpdir();
	char bin[PATH_MAX], src[PATH_MAX], dbg[PATH_MAX];
	struct bp_elf_opts o = { .path = bin, .uid_known = true, .uid = 4243 };
	struct bp_elf *e;

	if (getuid() != 0)
		skip();
	sf_data_path(src, sizeof(src), "symfix_dbglink");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sf_copy_file(src, bin, 0755);
	sf_data_path(src, sizeof(src), "symfix_dbglink.debug");
	snprintf(dbg, sizeof(dbg), "%s/symfix_dbglink.debug", dir);
	sf_copy_file(src, dbg, 0600);
	assert_int_equal(chown(dbg, 4242, 4242), 0);
	e = open_file(bin, &o);
	assert_int_equal(bp_elf__load_syms(e), -ENOENT);
	bp_elf__free(e);
	/* its owner's file */
	o.uid = 4242;
	e = open_file(bin, &o);
	assert_int_equal(bp_elf__load_syms(e), 0);
	assert_string_equal(bp_elf__sym_source(e), "debug");
	bp_elf__free(e);
	/* anyone's file that everyone may read */
	o.uid = 4243;
	assert_int_equal(chmod(dbg, 0644), 0);
	e = open_file(bin, &o);
	assert_int_equal(bp_elf__load_syms(e), 0);
	bp_elf__free(e);
}

/* the binary's directory is looked up inside the process's root */
static void debug__in_process_root(void **state)
{
	const char *dir = sf_tmpdir();
	char root[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
	struct bp_elf_opts o = { .path = "/opt/app/prog", .root = root };
	struct bp_elf *e;

	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(dst, sizeof(dst), "%s/root/opt", dir);
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(mkdir(dst, 0755), 0);
	snprintf(dst, sizeof(dst), "%s/root/opt/app", dir);
	assert_int_equal(mkdir(dst, 0755), 0);
	sf_data_path(src, sizeof(src), "symfix_dbglink");
	snprintf(dst, sizeof(dst), "%s/root/opt/app/prog", dir);
	sf_copy_file(src, dst, 0755);
	sf_data_path(src, sizeof(src), "symfix_dbglink.debug");
	snprintf(dst, sizeof(dst), "%s/root/opt/app/symfix_dbglink.debug", dir);
	sf_copy_file(src, dst, 0644);
	snprintf(dst, sizeof(dst), "%s/root/opt/app/prog", dir);
	e = open_file(dst, &o);
	assert_int_equal(bp_elf__load_syms(e), 0);
	assert_string_equal(bp_elf__debug_path(e), "/opt/app/symfix_dbglink.debug");
	bp_elf__free(e);
}

/* --- bounds on what a file may make us read ------------------------------ */

static void patch(const char *path, off_t off, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

/* where the header of the section named name is in a copy of a data binary */
static off_t shdr_offset(const char *path, const char *name, Elf64_Shdr *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strs;
	char n[64];
	int i;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(pread(fd, &strs, sizeof(strs), eh.e_shoff +
			       (off_t)eh.e_shstrndx * eh.e_shentsize), sizeof(strs));
	for (i = 0; i < eh.e_shnum; i++) {
		off_t off = eh.e_shoff + (off_t)i * eh.e_shentsize;

		assert_int_equal(pread(fd, &sh, sizeof(sh), off), sizeof(sh));
		memset(n, 0, sizeof(n));
		assert_true(pread(fd, n, sizeof(n) - 1, strs.sh_offset + sh.sh_name) > 0);
		if (!strcmp(n, name)) {
			close(fd);
			*out = sh;
			return off;
		}
	}
	close(fd);
	fail_msg("%s: no section %s", path, name);
	return -1;
}

static void open__header_counts__bounded(void **state)
{
	const char *dir = sf_tmpdir();
	char src[PATH_MAX], bin[PATH_MAX];
	struct bp_elf *e = NULL;
	uint16_t v;
	int fd;

	sf_data_path(src, sizeof(src), "symfix_pie");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	sf_copy_file(src, bin, 0755);
	v = BP_ELF_SHNUM_MAX + 1;
	patch(bin, offsetof(Elf64_Ehdr, e_shnum), &v, sizeof(v));
	fd = open(bin, O_RDONLY | O_CLOEXEC);
	assert_int_equal(bp_elf__open_fd(fd, NULL, &e), -EFBIG);
	assert_null(e);

	sf_copy_file(src, bin, 0755);
	v = BP_ELF_PHNUM_MAX + 1;
	patch(bin, offsetof(Elf64_Ehdr, e_phnum), &v, sizeof(v));
	fd = open(bin, O_RDONLY | O_CLOEXEC);
	assert_int_equal(bp_elf__open_fd(fd, NULL, &e), -EFBIG);

	/* a count that fits the cap but not the file */
	sf_copy_file(src, bin, 0755);
	v = BP_ELF_SHNUM_MAX;
	patch(bin, offsetof(Elf64_Ehdr, e_shnum), &v, sizeof(v));
	fd = open(bin, O_RDONLY | O_CLOEXEC);
	assert_int_equal(bp_elf__open_fd(fd, NULL, &e), -ENOEXEC);
}

/*
 * A symbol table that claims more than the file holds, or more than the
 * cap, is not read (libelf would allocate all it claims); the next source
 * is tried.
 */
static void syms__section_sizes__bounded(void **state)
{
	static const char *const sections[] = { ".symtab", ".strtab" };
	const char *dir = sf_tmpdir();
	char src[PATH_MAX], bin[PATH_MAX];
	uint64_t v = stripped_vaddr("symfix_pie", "symfix_alpha"), before;
	Elf64_Shdr sh;
	struct bp_elf *e;
	off_t off;
	size_t i;

	sf_data_path(src, sizeof(src), "symfix_pie");
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	for (i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		/* sparse: the claim is inside the file, beyond the cap */
		sf_copy_file(src, bin, 0755);
		off = shdr_offset(bin, sections[i], &sh);
		sh.sh_size = (i ? BP_ELF_STRTAB_MAX : BP_ELF_SYMTAB_MAX) + 24;
		assert_int_equal(truncate(bin, (off_t)(sh.sh_offset + sh.sh_size)), 0);
		patch(bin, off, &sh, sizeof(sh));
		e = open_file(bin, NULL);
		before = rchar();
		expect_not_sym(e, v + 1, "symfix_alpha");
		assert_true(rchar() - before < (1 << 20));
		assert_string_not_equal(bp_elf__sym_source(e), "symtab");
		bp_elf__free(e);

		/* past the end of the file */
		sf_copy_file(src, bin, 0755);
		off = shdr_offset(bin, sections[i], &sh);
		sh.sh_size = 1 << 20;
		patch(bin, off, &sh, sizeof(sh));
		e = open_file(bin, NULL);
		expect_not_sym(e, v + 1, "symfix_alpha");
		bp_elf__free(e);
	}
}

/* a file through libelf, for what the tests check against; its fd in *fd */
static Elf *elf_of(const char *path, int *fd)
{
	Elf *elf;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(*fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	return elf;
}

static void elf_done(Elf *elf, int fd)
{
	elf_end(elf);
	close(fd);
}

typedef bool (*sym_fn)(void *ctx, const char *name, const GElf_Sym *sym);

/* each symbol of the file's .symtab to fn, until it returns true */
static void symtab_each(const char *path, sym_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;
	bool stop = false;
	int fd;
	Elf *elf = elf_of(path, &fd);

	while (!stop && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; !stop && d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			stop = fn(ctx, elf_strptr(elf, sh.sh_link, sym.st_name), &sym);
		}
	}
	elf_done(elf, fd);
}

struct func_find {
	const char *name;
	size_t seen;		/* entries walked, from entry 0 */
	size_t idx;		/* the function's entry in the table */
	GElf_Sym sym;
	bool found;
};

static bool find_cb(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct func_find *f = ctx;

	f->seen++;
	if (!name || strcmp(name, f->name))
		return false;
	f->idx = f->seen - 1;
	f->sym = *sym;
	f->found = true;
	return true;
}

/* a function's entry in a file's .symtab: its index and its values */
static void symtab_entry(const char *path, const char *name, struct func_find *out)
{
	*out = (struct func_find){ .name = name };
	symtab_each(path, find_cb, out);
	assert_true(out->found);
}

/* the value and size of a function in a file's .symtab */
static void symtab_func(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	struct func_find f;

	symtab_entry(path, name, &f);
	*addr = f.sym.st_value;
	*size = f.sym.st_size;
}

/*
 * Names that share bytes in the string table, as a linker's tail merging
 * makes them (and a name used twice): each symbol still gets its own. The
 * names are moved within the table as it is compacted, so a suffix must
 * follow the name it is the tail of.
 */
static void syms__shared_name_tails__each_named(void **state)
{
	const char *dir = sf_tmpdir();
	struct func_find alpha, zeta, mainf;
	char src[PATH_MAX], bin[PATH_MAX];
	Elf64_Shdr sh;
	struct bp_elf *e;
	uint32_t name;
	off_t tab;

	sf_data_path(src, sizeof(src), "symfix_pie");
	snprintf(bin, sizeof(bin), "%s/tails", dir);
	sf_copy_file(src, bin, 0755);
	symtab_entry(bin, "symfix_alpha", &alpha);
	symtab_entry(bin, "symfix_local_zeta", &zeta);
	symtab_entry(bin, "main", &mainf);
	shdr_offset(bin, ".symtab", &sh);
	tab = (off_t)sh.sh_offset;
	/* zeta is named by alpha's tail ("alpha"), main by alpha's very name */
	name = (uint32_t)alpha.sym.st_name + strlen("symfix_");
	patch(bin, tab + (off_t)(zeta.idx * sizeof(Elf64_Sym)), &name, sizeof(name));
	name = (uint32_t)alpha.sym.st_name;
	patch(bin, tab + (off_t)(mainf.idx * sizeof(Elf64_Sym)), &name, sizeof(name));

	e = open_file(bin, NULL);
	expect_sym(e, alpha.sym.st_value, "symfix_alpha");
	expect_sym(e, zeta.sym.st_value, "alpha");
	expect_sym(e, mainf.sym.st_value, "symfix_alpha");
	expect_sym(e, alpha.sym.st_value + 1, "symfix_alpha");
	/* and share their bytes, as in the file: a tail is not a copy */
	assert_ptr_equal(bp_elf__find(e, mainf.sym.st_value)->name,
			 bp_elf__find(e, alpha.sym.st_value)->name);
	assert_ptr_equal(bp_elf__find(e, zeta.sym.st_value)->name,
			 bp_elf__find(e, alpha.sym.st_value)->name + strlen("symfix_"));
	bp_elf__free(e);
}

/* binutils' addr2line -i -f at vaddr: names and lines, innermost first; how many */
static int addr2line(const char *path, uint64_t vaddr, char names[][64], int *lines, int max)
{
	char cmd[PATH_MAX + 64], fn[256], loc[PATH_MAX];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "addr2line -i -f -e '%s' %llx", path,
		 (unsigned long long)vaddr);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (n < max && fgets(fn, sizeof(fn), p) && fgets(loc, sizeof(loc), p)) {
		const char *colon = strrchr(loc, ':');

		fn[strcspn(fn, "\n")] = '\0';
		snprintf(names[n], 64, "%.63s", fn);
		lines[n++] = colon ? atoi(colon + 1) : 0;
	}
	assert_int_equal(pclose(p), 0);
	return n;
}

/*
 * Lines and inlines of every address of a function with another inlined
 * into it, as binutils' addr2line (no libdw) gives them: with
 * .debug_aranges (gcc's) and without (clang and rustc write none).
 */
static void check_inlines(const char *name)
{
	struct bp_elf_opts o = { .want_dwarf = true };
	struct bp_dwarf_frame f[BP_DWARF_INLINE_MAX];
	char path[PATH_MAX], want[BP_DWARF_INLINE_MAX][64];
	int wline[BP_DWARF_INLINE_MAX], n, k, i, inlined = 0;
	uint64_t addr, size, a;
	struct bp_elf *e;

	sf_data_path(path, sizeof(path), name);
	symtab_func(path, "inl_outer", &addr, &size);
	assert_true(size > 0);
	e = open_file(path, &o);
	assert_int_equal(bp_elf__load_syms(e), 0);
	assert_non_null(bp_elf__dwarf(e));
	for (a = addr; a < addr + size; a++) {
		n = bp_dwarf__frames(bp_elf__dwarf(e), a, f, BP_DWARF_INLINE_MAX);
		k = addr2line(path, a, want, wline, BP_DWARF_INLINE_MAX);
		assert_int_equal(n, k);
		for (i = 0; i < n; i++) {
			assert_non_null(f[i].name);
			assert_string_equal(f[i].name, want[i]);
			assert_int_equal(f[i].line, wline[i]);
			assert_int_equal(f[i].inlined, i < n - 1);
		}
		inlined += n > 1 && !strcmp(f[0].name, "inl_step");
	}
	fprintf(stderr, "%s: %d of %llu addresses of inl_outer in inlined inl_step\n", name,
		inlined, (unsigned long long)size);
	assert_true(inlined > 0);
	bp_elf__free(e);
}

static void dwarf__inlines_with_aranges__as_addr2line(void **state)
{
	check_inlines("symfix_inl");
}

/* whether the file has a section of this name */
static bool has_section(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;
	int fd;
	Elf *elf = elf_of(path, &fd);

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name)))
			found = !strcmp(n, name);
	}
	elf_done(elf, fd);
	return found;
}

static void dwarf__inlines_without_aranges__as_addr2line(void **state)
{
	char with[PATH_MAX], without[PATH_MAX];

	/* the two fixtures are what they say */
	sf_data_path(with, sizeof(with), "symfix_inl");
	sf_data_path(without, sizeof(without), "symfix_inl_noar");
	assert_true(has_section(with, ".debug_aranges"));
	assert_false(has_section(without, ".debug_aranges"));
	check_inlines("symfix_inl_noar");
}

struct fde_check {
	struct bp_elf *stripped;
	int checked;
};

static bool fde_cb(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct fde_check *c = ctx;
	uint64_t start, end;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_value || sym->st_size < 2 ||
	    sym->st_shndx == SHN_UNDEF)
		return false;
	assert_int_equal(bp_elf__fde_func(c->stripped, sym->st_value + sym->st_size / 2, &start,
					  &end), 0);
	assert_int_equal(start, sym->st_value);
	assert_int_equal(end, sym->st_value + sym->st_size);
	c->checked++;
	return false;
}

/*
 * A stripped library's functions through its CFI: each FDE's range is the
 * function's, as the unstripped build's .symtab has it (value and size).
 */
static void fde__stripped_library__ranges_as_symtab(void **state)
{
	struct fde_check c = { .stripped = open_data("libsymfix_nosym.so", NULL) };
	char full[PATH_MAX];
	uint64_t start, end;

	assert_int_equal(bp_elf__load_syms(c.stripped), 0);
	sf_data_path(full, sizeof(full), "libsymfix.so");
	symtab_each(full, fde_cb, &c);
	fprintf(stderr, "%d functions' FDE ranges as their symbols\n", c.checked);
	assert_true(c.checked >= 3);
	/* below the first and far past the last: no function */
	assert_int_equal(bp_elf__fde_func(c.stripped, 1, &start, &end), -ENOENT);
	assert_int_equal(bp_elf__fde_func(c.stripped, 1ULL << 40, &start, &end), -ENOENT);
	bp_elf__free(c.stripped);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(exe__pie__symtab_and_load_bias, sf_cleanup),
		cmocka_unit_test_teardown(exe__nopie__symtab_and_load_bias, sf_cleanup),
		cmocka_unit_test_teardown(lib__aliases_and_zero_size, sf_cleanup),
		cmocka_unit_test_teardown(debug__debuglink_next_to_binary, sf_cleanup),
		cmocka_unit_test_teardown(debug__debuglink_in_dot_debug, sf_cleanup),
		cmocka_unit_test_teardown(debug__debuglink_under_debug_root, sf_cleanup),
		cmocka_unit_test_teardown(debug__dwarf_not_from_root__named_without_lines,
					  sf_cleanup),
		cmocka_unit_test_teardown(debug__build_id_tree, sf_cleanup),
		cmocka_unit_test_teardown(debug__mismatches__rejected, sf_cleanup),
		cmocka_unit_test_teardown(debug__debuglink_with_a_path__ignored, sf_cleanup),
		cmocka_unit_test_teardown(debug__fifo__no_hang, sf_cleanup),
		cmocka_unit_test_teardown(debug__symlink__refused, sf_cleanup),
		cmocka_unit_test_teardown(debug__huge_file__not_read, sf_cleanup),
		cmocka_unit_test_teardown(debug__no_build_id__crc, sf_cleanup),
		cmocka_unit_test_teardown(debug__unreadable_for_owner__refused, sf_cleanup),
		cmocka_unit_test_teardown(debug__in_process_root, sf_cleanup),
		cmocka_unit_test_teardown(open__header_counts__bounded, sf_cleanup),
		cmocka_unit_test_teardown(syms__section_sizes__bounded, sf_cleanup),
		cmocka_unit_test_teardown(syms__shared_name_tails__each_named, sf_cleanup),
		cmocka_unit_test_teardown(open__not_elf__enoexec, sf_cleanup),
		cmocka_unit_test_teardown(open_mem__same_as_file, sf_cleanup),
		cmocka_unit_test_teardown(fde__stripped_library__ranges_as_symtab, sf_cleanup),
		cmocka_unit_test_teardown(dwarf__inlines_with_aranges__as_addr2line, sf_cleanup),
		cmocka_unit_test_teardown(dwarf__inlines_without_aranges__as_addr2line, sf_cleanup),
	};

	return cmocka_run_group_tests_name("elfsym", tests, NULL, sf_cleanup);
}
