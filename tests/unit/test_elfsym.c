// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(exe__pie__symtab_and_load_bias, sf_cleanup),
		cmocka_unit_test_teardown(exe__nopie__symtab_and_load_bias, sf_cleanup),
		cmocka_unit_test_teardown(lib__aliases_and_zero_size, sf_cleanup),
		cmocka_unit_test_teardown(debug__debuglink_next_to_binary, sf_cleanup),
		cmocka_unit_test_teardown(debug__debuglink_in_dot_debug, sf_cleanup),
		cmocka_unit_test_teardown(debug__debuglink_under_debug_root, sf_cleanup),
		cmocka_unit_test_teardown(debug__build_id_tree, sf_cleanup),
		cmocka_unit_test_teardown(debug__mismatches__rejected, sf_cleanup),
		cmocka_unit_test_teardown(open__not_elf__enoexec, sf_cleanup),
		cmocka_unit_test_teardown(open_mem__same_as_file, sf_cleanup),
	};

	return cmocka_run_group_tests_name("elfsym", tests, NULL, sf_cleanup);
}
