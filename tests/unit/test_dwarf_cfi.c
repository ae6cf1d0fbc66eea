// SPDX-License-Identifier: GPL-2.0
/*
 * bp_cfi__build() (our interpreter of the call frame instructions) against
 * bp_cfi__build_ref() (libdw evaluating every row): the whole table must
 * be the same for the machine's own binaries and libraries.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/dwarf_cfi.h"

/*
 * Files compared when the machine has more: evenly spread over the sorted
 * list (all 2,802 of the development machine compared equal; 800 keep the
 * sanitized case near 9 s in `make test`). BP_CFI_ORACLE_FILES=0 takes all.
 */
#define ORACLE_FILES	800
#define FILE_MAX	(512ULL * 1024 * 1024)

struct paths {
	char **v;
	size_t n, cap;
};

static struct paths found;

static void paths_add(struct paths *p, const char *path)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->v = realloc(p->v, p->cap * sizeof(*p->v));
		assert_non_null(p->v);
	}
	p->v[p->n] = strdup(path);
	assert_non_null(p->v[p->n]);
	p->n++;
}

/* an ET_EXEC/ET_DYN x86-64 ELF file, by its header */
static bool is_elf_file(const char *path, const struct stat *st)
{
	unsigned char h[18];
	bool ok;
	int fd;

	if (!S_ISREG(st->st_mode) || st->st_size < 64 || (uint64_t)st->st_size > FILE_MAX)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = read(fd, h, sizeof(h)) == sizeof(h) && !memcmp(h, "\177ELF", 4) &&
	     (h[16] == 2 || h[16] == 3) && h[17] == 0;
	close(fd);
	return ok;
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && is_elf_file(path, st))
		paths_add(&found, path);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 0: the same; else prints the first difference */
static int compare_file(const char *path, uint64_t *rows, double *t_new, double *t_ref)
{
	struct bp_cfi_table a, r;
	struct timespec t0, t1, t2;
	int fd, ea, er, diff = 0;
	struct stat st;
	uint32_t i;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ea = bp_cfi__build(elf, (uint64_t)st.st_size, &a);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	er = bp_cfi__build_ref(elf, (uint64_t)st.st_size, &r);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	*t_new += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	*t_ref += (double)(t2.tv_sec - t1.tv_sec) + (double)(t2.tv_nsec - t1.tv_nsec) / 1e9;
	if (ea != er) {
		print_message("%s: bp_cfi__build %d, the reference %d\n", path, ea, er);
		diff = 1;
		goto out;
	}
	if (ea)
		goto out;
	*rows += r.nr_rows;
	for (i = 0; i < a.nr_rows && i < r.nr_rows; i++) {
		const struct bp_uw_row *x = &a.rows[i], *y = &r.rows[i];

		if (x->pc != y->pc || x->kind != y->kind || x->bp != y->bp || x->cfa != y->cfa) {
			print_message("%s: row %u: pc %#x kind %u bp %d cfa %d, the reference "
				      "pc %#x kind %u bp %d cfa %d\n", path, i, x->pc, x->kind,
				      x->bp, x->cfa, y->pc, y->kind, y->bp, y->cfa);
			diff = 1;
			goto out;
		}
	}
	if (a.base != r.base || a.nr_rows != r.nr_rows || a.st.fdes != r.st.fdes ||
	    a.st.rows_invalid != r.st.rows_invalid || a.st.rows_signal != r.st.rows_signal ||
	    a.st.rows_plt != r.st.rows_plt || a.st.rows_stop != r.st.rows_stop ||
	    strcmp(a.st.source, r.st.source)) {
		print_message("%s: base %#llx rows %u fdes %u invalid %u signal %u plt %u stop %u %s,"
			      " the reference base %#llx rows %u fdes %u invalid %u signal %u plt %u"
			      " stop %u %s\n", path, (unsigned long long)a.base, a.nr_rows,
			      a.st.fdes, a.st.rows_invalid, a.st.rows_signal, a.st.rows_plt,
			      a.st.rows_stop, a.st.source, (unsigned long long)r.base, r.nr_rows,
			      r.st.fdes, r.st.rows_invalid, r.st.rows_signal, r.st.rows_plt,
			      r.st.rows_stop, r.st.source);
		diff = 1;
	}
out:
	bp_cfi__free(&a);
	bp_cfi__free(&r);
	elf_end(elf);
	close(fd);
	return diff;
}

static void build__system_files__same_as_libdw(void **state)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/bin", "/usr/sbin", "/usr/lib/debug",
	};
	/* always compared: our binary, and interpreters and Rust/Go binaries */
	static const char *const named[] = {
		"/usr/bin/python3.*", "/usr/lib/R/bin/exec/R", "/root/.cargo/bin/*",
		"/usr/lib/go-*/bin/*", "/usr/lib/go-*/pkg/tool/*/*", "/usr/bin/perl",
	};
	const char *src = getenv("BP_SRC") ? getenv("BP_SRC") : ".";
	const char *env = getenv("BP_CFI_ORACLE_FILES");
	size_t want = env ? strtoul(env, NULL, 10) : ORACLE_FILES, i, step, compared = 0;
	struct paths pick = {};
	double t_new = 0, t_ref = 0;
	uint64_t rows = 0;
	char self[4096];
	int fails = 0;

	(void)state;
	elf_version(EV_CURRENT);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		nftw(dirs[i], walk_one, 16, FTW_PHYS);
	/* every Debian system has ELF files there */
	assert_true(found.n > 0);
	qsort(found.v, found.n, sizeof(*found.v), cmp_str);
	step = want && found.n > want ? (found.n + want - 1) / want : 1;
	for (i = 0; i < found.n; i += step)
		paths_add(&pick, found.v[i]);
	snprintf(self, sizeof(self), "%s/boundprof", src);
	paths_add(&pick, self);
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		glob_t g;
		size_t k;

		if (glob(named[i], 0, NULL, &g))
			continue;
		for (k = 0; k < g.gl_pathc; k++) {
			struct stat st;

			if (!stat(g.gl_pathv[k], &st) && is_elf_file(g.gl_pathv[k], &st))
				paths_add(&pick, g.gl_pathv[k]);
		}
		globfree(&g);
	}
	for (i = 0; i < pick.n; i++) {
		compared++;
		if (compare_file(pick.v[i], &rows, &t_new, &t_ref))
			fails++;
		if (fails >= 5)
			break;
	}
	print_message("compared %zu of %zu ELF files (and the named ones), %llu rows: "
		      "%.2f s ours, %.2f s libdw's (sanitized build)\n", compared, found.n,
		      (unsigned long long)rows, t_new, t_ref);
	for (i = 0; i < pick.n; i++)
		free(pick.v[i]);
	free(pick.v);
	for (i = 0; i < found.n; i++)
		free(found.v[i]);
	free(found.v);
	memset(&found, 0, sizeof(found));
	if (fails)
		fail_msg("%d files differ from libdw's rows", fails);
}

/* the section's file range, by name; false if none */
static bool section_range(Elf *elf, const char *name, uint64_t *off, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name) && sh.sh_type == SHT_PROGBITS) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
			return true;
		}
	}
	return false;
}

/*
 * Malformed programs (unknown opcodes, truncated operands, a restore_state
 * with nothing remembered, odd expressions): a few bytes of .eh_frame
 * changed at random must still give libdw's rows, whether the interpreter
 * handles the FDE or leaves it to libdw.
 */
static void build__mutated_eh_frame__same_as_libdw(void **state)
{
	const char *src = getenv("BP_SRC") ? getenv("BP_SRC") : ".";
	char self[4096];
	const char *files[] = { "/usr/lib/x86_64-linux-gnu/libz.so.1", self };
	uint64_t off, size;
	unsigned int seed = 1;
	int f, it, fails = 0, runs = 0;

	(void)state;
	elf_version(EV_CURRENT);
	snprintf(self, sizeof(self), "%s/boundprof", src);
	for (f = 0; f < 2; f++) {
		unsigned char *img;
		struct stat st;
		Elf *elf;
		int fd;

		fd = open(files[f], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			continue;
		img = malloc(st.st_size);
		assert_non_null(img);
		assert_int_equal(pread(fd, img, st.st_size, 0), st.st_size);
		close(fd);
		elf = elf_memory((char *)img, st.st_size);
		assert_non_null(elf);
		if (!section_range(elf, ".eh_frame", &off, &size) || size < 64) {
			elf_end(elf);
			free(img);
			continue;
		}
		elf_end(elf);
		for (it = 0; it < 150; it++) {
			unsigned char *m = malloc(st.st_size);
			struct bp_cfi_table a, r;
			int k, n = 1 + rand_r(&seed) % 8, ea, er;

			assert_non_null(m);
			memcpy(m, img, st.st_size);
			for (k = 0; k < n; k++)
				m[off + rand_r(&seed) % size] = (unsigned char)rand_r(&seed);
			elf = elf_memory((char *)m, st.st_size);
			assert_non_null(elf);
			ea = bp_cfi__build(elf, st.st_size, &a);
			er = bp_cfi__build_ref(elf, st.st_size, &r);
			runs++;
			if (ea != er || (!ea && (a.nr_rows != r.nr_rows || a.base != r.base ||
						memcmp(&a.st, &r.st, sizeof(a.st)) ||
						memcmp(a.rows, r.rows, a.nr_rows * sizeof(*a.rows))))) {
				uint32_t i;

				for (i = 0; !ea && i < a.nr_rows && i < r.nr_rows; i++)
					if (memcmp(&a.rows[i], &r.rows[i], sizeof(a.rows[i])))
						break;
				print_message("%s, mutation %d: %d/%d rows %u/%u, first difference "
					      "at row %u\n", files[f], it, ea, er, a.nr_rows,
					      r.nr_rows, i);
				fails++;
			}
			bp_cfi__free(&a);
			bp_cfi__free(&r);
			elf_end(elf);
			free(m);
		}
		free(img);
	}
	print_message("%d mutated files compared\n", runs);
	if (fails)
		fail_msg("%d mutated files differ from libdw's rows", fails);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build__system_files__same_as_libdw),
		cmocka_unit_test(build__mutated_eh_frame__same_as_libdw),
	};

	return cmocka_run_group_tests_name("dwarf_cfi", tests, NULL, NULL);
}
