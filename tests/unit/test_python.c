// SPDX-License-Identifier: GPL-2.0
/*
 * The Python pieces that need no BPF: the layout table against every
 * installed interpreter's headers, line tables decoded as each interpreter
 * decodes them, names as UTF-8, the interpreter's files (version, debug
 * offsets, glibc's thread-specific data), merging Python runs into native
 * stacks, the Python view, and the Python verdicts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/classify.h"
#include "analyze/python.h"
#include "builders.h"
#include "model/profile.h"
#include "symbolize/python_code.h"
#include "symbolize/python_elf.h"
#include "symbolize/python_layout.h"

#define MAX_PY	32

static const char *data_dir(void)
{
	const char *d = getenv("BP_TEST_DATA");

	return d ? d : ".output/tests/data";
}

static const char *pyenv_root(void)
{
	const char *r = getenv("PYENV_ROOT");

	return r && *r ? r : "/root/.pyenv";
}

/* every installed CPython 3: "path minor" pairs */
static int interpreters(char paths[][512], int *minors)
{
	char dir[512];
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (access("/usr/bin/python3.11", X_OK) == 0) {
		snprintf(paths[n], 512, "/usr/bin/python3.11");
		minors[n++] = 11;
	}
	snprintf(dir, sizeof(dir), "%s/versions", pyenv_root());
	d = opendir(dir);
	while (d && (de = readdir(d)) && n < MAX_PY) {
		unsigned int maj, min, pat;

		if (sscanf(de->d_name, "%u.%u.%u", &maj, &min, &pat) != 3 || maj != 3)
			continue;
		snprintf(paths[n], 512, "%.400s/%.40s/bin/python3.%u", dir, de->d_name, min);
		if (access(paths[n], X_OK))
			continue;
		minors[n++] = min;
	}
	if (d)
		closedir(d);
	return n;
}

/* the layout table's row of each installed version, against that version's headers */
static void layout__every_installed_version_matches_its_headers(void **state)
{
	char dir[1024], path[2048];
	bool have[BP_PY_MINOR_MAX + 1] = {};
	struct dirent *de;
	int checked = 0, m;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/pylayout", data_dir());
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		unsigned int maj, min;
		int st;

		if (sscanf(de->d_name, "check-%u.%u", &maj, &min) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		st = system(path);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
		if (min <= BP_PY_MINOR_MAX)
			have[min] = true;
		checked++;
	}
	if (d)
		closedir(d);
	/* loudly: a version without headers here is a version whose row is unchecked */
	for (m = BP_PY_MINOR_MIN; m <= BP_PY_MINOR_MAX; m++)
		if (!have[m])
			fprintf(stderr, "SKIPPED: no Python 3.%d headers: its layout row is "
				"unchecked\n", m);
	if (!checked)
		fprintf(stderr, "SKIPPED: no CPython headers on this machine\n");
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* one line of linetables.py: every instruction's line, checked; how many differ */
static int check_line(char *line, int *codes, int *instrs)
{
	char *save = NULL, *tok;
	unsigned int minor;
	int first, bad = 0;
	uint8_t *table;
	size_t len, i;

	tok = strtok_r(line, " \n", &save);
	if (!tok || sscanf(tok, "%u", &minor) != 1)
		return 0;
	tok = strtok_r(NULL, " \n", &save);
	assert_non_null(tok);
	first = atoi(tok);
	tok = strtok_r(NULL, " \n", &save);
	assert_non_null(tok);
	len = strcmp(tok, "-") ? strlen(tok) / 2 : 0;
	table = malloc(len + 1);
	assert_non_null(table);
	for (i = 0; i < len; i++)
		table[i] = (uint8_t)(hexval(tok[2 * i]) << 4 | hexval(tok[2 * i + 1]));
	(*codes)++;
	while ((tok = strtok_r(NULL, " \n", &save))) {
		unsigned int idx, want, got;

		assert_int_equal(sscanf(tok, "%u:%u", &idx, &want), 2);
		got = bp_py_line(minor, table, len, first, idx, NULL);
		if (got != want) {
			if (bad < 5)
				fprintf(stderr, "3.%u: code at line %d, instruction %u: line %u, "
					"the interpreter says %u\n", minor, first, idx, got, want);
			bad++;
		}
		(*instrs)++;
	}
	free(table);
	return bad;
}

/* line tables as each installed interpreter decodes them itself (co_lines, findlinestarts) */
static void linetable__decoded_as_the_interpreter_does(void **state)
{
	char paths[MAX_PY][512], cmd[2048], line[1 << 17];
	const char *src = getenv("BP_SRC");
	int minors[MAX_PY], n = interpreters(paths, minors), i;

	if (!n) {
		fprintf(stderr, "SKIPPED: no CPython 3 on this machine\n");
		return;
	}
	for (i = 0; i < n; i++) {
		int codes = 0, instrs = 0, bad = 0;
		FILE *f;

		snprintf(cmd, sizeof(cmd), "%s %s/tests/unit/pylayout/linetables.py", paths[i],
			 src ? src : ".");
		f = popen(cmd, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			bad += check_line(line, &codes, &instrs);
		assert_int_equal(pclose(f), 0);
		fprintf(stderr, "%s: %d code objects, %d instructions, %d lines differ\n",
			paths[i], codes, instrs, bad);
		assert_true(codes >= 10);
		assert_int_equal(bad, 0);
	}
}

/* a table that ends before the instruction says so, and gives no made-up line */
static void linetable__cut_short_says_so(void **state)
{
	/* 3.11 short form: one entry of 8 code units, line +0; then nothing */
	const uint8_t loc[] = { 0x80 | (10 << 3) | 7, 0, 0 };
	/* 3.6 lnotab: (8 bytes, +1 line) */
	const uint8_t lno[] = { 8, 1 };
	bool cut;

	assert_int_equal(bp_py_line(11, loc, sizeof(loc), 40, 3, &cut), 40);
	assert_false(cut);
	assert_int_equal(bp_py_line(11, loc, sizeof(loc), 40, 9, &cut), 0);
	assert_true(cut);
	assert_int_equal(bp_py_line(6, lno, sizeof(lno), 7, 2, &cut), 7);
	assert_false(cut);
	assert_int_equal(bp_py_line(6, lno, sizeof(lno), 7, 5, &cut), 8);
	assert_true(cut);
	/* not a location table at all (no entry start bit): no line */
	assert_int_equal(bp_py_line(12, lno, sizeof(lno), 7, 0, &cut), 0);
	/* a varint that runs off the end */
	assert_int_equal(bp_py_line(13, (const uint8_t[]){ 0x80 | (13 << 3), 0x41 }, 2, 5, 0, &cut),
			 0);
	assert_true(cut);
}

/* names in every kind Python stores them, bounded, never raw control bytes */
static void text__kinds_and_bounds(void **state)
{
	struct bp_py_str s = { .kind = 1, .flags = BP_PY_STR_ASCII };
	char out[64];
	uint8_t raw[64];
	uint16_t u2[] = { 'f', 0x00e9, 0x4e2d };
	uint32_t u4[] = { 'g', 0x1f600 };

	memcpy(raw, "Model.fit", 9);
	s.len = s.copied = 9;
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), 9);
	assert_string_equal(out, "Model.fit");
	/* latin-1 in a 1-byte string that is not ASCII */
	s.flags = 0;
	raw[0] = 0xe9;
	s.len = s.copied = 1;
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), 2);
	assert_string_equal(out, "\xc3\xa9");
	/* an "ASCII" string with a high byte is not what it says */
	s.flags = BP_PY_STR_ASCII;
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), -EINVAL);
	/* 2- and 4-byte kinds */
	s = (struct bp_py_str){ .kind = 2, .len = 3, .copied = 6 };
	assert_int_equal(bp_py_text(&s, (const uint8_t *)u2, 6, out, sizeof(out)), 6);
	assert_string_equal(out, "f\xc3\xa9\xe4\xb8\xad");
	s = (struct bp_py_str){ .kind = 4, .len = 2, .copied = 8 };
	assert_int_equal(bp_py_text(&s, (const uint8_t *)u4, 8, out, sizeof(out)), 5);
	assert_string_equal(out, "g\xf0\x9f\x98\x80");
	/* a newline in a name would break the folded format */
	s = (struct bp_py_str){ .kind = 1, .flags = BP_PY_STR_ASCII, .len = 3, .copied = 3 };
	memcpy(raw, "a\nb", 3);
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), 3);
	assert_string_equal(out, "a?b");
	/* more stored than copied: the part there, and -E2BIG */
	s.len = 1000;
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), -E2BIG);
	assert_string_equal(out, "a?b");
	/* inconsistent records */
	s = (struct bp_py_str){ .kind = 3, .len = 1, .copied = 3 };
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), -EINVAL);
	s = (struct bp_py_str){ .kind = 2, .len = 1, .copied = 3 };
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), -EINVAL);
	s = (struct bp_py_str){ .kind = 1, .len = 100, .copied = 100 };
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), -EINVAL);
	s = (struct bp_py_str){ .kind = 1, .flags = BP_PY_STR_ERR };
	assert_int_equal(bp_py_text(&s, raw, sizeof(raw), out, sizeof(out)), -EINVAL);
	/* an output buffer smaller than the text: cut at a character, still terminated */
	s = (struct bp_py_str){ .kind = 2, .len = 3, .copied = 6 };
	assert_int_equal(bp_py_text(&s, (const uint8_t *)u2, 6, out, 4), -E2BIG);
	assert_string_equal(out, "f\xc3\xa9");
}

static struct bp_pyelf *open_elf(const char *path)
{
	struct bp_pyelf *e = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	assert_int_equal(bp_pyelf__open(fd, &e), 0);
	return e;
}

/* each pyenv libpython tells its version: Py_Version (3.11+) or the string in the file */
static void elf__versions_of_the_installed_interpreters(void **state)
{
	char dir[512], lib[1024], ver[24];
	struct dirent *de;
	int seen = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/versions", pyenv_root());
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		unsigned int maj, min, pat;
		struct bp_pyelf *e;
		uint64_t a, sz, hex = 0;

		if (sscanf(de->d_name, "%u.%u.%u", &maj, &min, &pat) != 3 || maj != 3)
			continue;
		snprintf(lib, sizeof(lib), "%.400s/%.40s/lib/libpython3.%u%s.so.1.0", dir,
			 de->d_name, min, min < 8 ? "m" : "");
		e = open_elf(lib);
		if (!e)
			continue;
		assert_int_equal(bp_pyelf__version_string(e, min, ver, sizeof(ver)), 0);
		assert_string_equal(ver, de->d_name);
		assert_int_equal(bp_pyelf__sym(e, "_PyEval_EvalFrameDefault", &a, &sz), 0);
		if (min >= 11) {
			assert_int_equal(bp_pyelf__sym(e, "Py_Version", &a, &sz), 0);
			assert_int_equal(bp_pyelf__read(e, a, &hex, 8), 0);
			assert_int_equal(hex >> 8, 3 << 16 | min << 8 | pat);
		}
		bp_pyelf__free(e);
		seen++;
	}
	if (d)
		closedir(d);
	if (!seen)
		fprintf(stderr, "SKIPPED: no pyenv CPython to read\n");
}

/* 3.13's offsets from its own _Py_DebugOffsets, as its headers say; anything else refused */
static void elf__debug_offsets_of_3_13(void **state)
{
	const struct bp_py_layout *row = bp_py_layout(13);
	char lib[1024];
	struct bp_py_layout l = *row;
	struct bp_pyelf *e;
	uint8_t dbg[BP_PY_DBG_SIZE];
	uint64_t a, sz, hex = 0;
	bool ft = true;

	snprintf(lib, sizeof(lib), "%s/versions/3.13.0/lib/libpython3.13.so.1.0", pyenv_root());
	e = open_elf(lib);
	if (!e) {
		fprintf(stderr, "SKIPPED: no pyenv 3.13.0 to read _Py_DebugOffsets from\n");
		return;
	}
	assert_int_equal(bp_pyelf__sym(e, "_PyRuntime", &a, &sz), 0);
	assert_int_equal(bp_pyelf__read(e, a, dbg, sizeof(dbg)), 0);
	assert_int_equal(bp_pyelf__sym(e, "Py_Version", &a, &sz), 0);
	assert_int_equal(bp_pyelf__read(e, a, &hex, 8), 0);
	bp_pyelf__free(e);
	memset(&l.ts_frame, 0xff, sizeof(l.ts_frame));
	assert_int_equal(bp_py_layout_from_debug(dbg, sizeof(dbg), (uint32_t)hex, &l, &ft), 0);
	assert_false(ft);
	/* the row is checked against the headers, the file's values against the row */
	assert_int_equal(l.ts_frame, row->ts_frame);
	assert_int_equal(l.ts_tid, row->ts_tid);
	assert_int_equal(l.f_back, row->f_back);
	assert_int_equal(l.f_code, row->f_code);
	assert_int_equal(l.f_lasti, row->f_lasti);
	assert_int_equal(l.f_entry, row->f_entry);
	assert_int_equal(l.co_filename, row->co_filename);
	assert_int_equal(l.co_name, row->co_name);
	assert_int_equal(l.co_linetable, row->co_linetable);
	assert_int_equal(l.co_firstlineno, row->co_firstlineno);
	assert_int_equal(l.code_basicsize, row->code_basicsize);
	assert_int_equal(l.str_ascii, row->str_ascii);
	assert_int_equal(l.str_compact, row->str_compact);
	/* another minor version's struct, a broken cookie, an offset past what BPF reads */
	assert_int_equal(bp_py_layout_from_debug(dbg, sizeof(dbg), 0x030c01f0, &l, &ft), -EINVAL);
	assert_int_equal(bp_py_layout_from_debug(dbg, sizeof(dbg) - 1, (uint32_t)hex, &l, &ft),
			 -EINVAL);
	dbg[BP_PY_DBG_TS_CURRENT_FRAME + 1] = 0x10;
	assert_int_equal(bp_py_layout_from_debug(dbg, sizeof(dbg), (uint32_t)hex, &l, &ft), -EINVAL);
	dbg[0] = 'y';
	assert_int_equal(bp_py_layout_from_debug(dbg, sizeof(dbg), (uint32_t)hex, &l, &ft), -EINVAL);
}

/* glibc's pthread_getspecific read from its code: 0x310 + 8 and 16 in Debian 12's 2.36 */
static void elf__glibc_thread_specific_data(void **state)
{
	struct bp_pyelf *e = open_elf("/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t off = 0, size = 0;

	if (!e) {
		fprintf(stderr, "SKIPPED: no /lib/x86_64-linux-gnu/libc.so.6\n");
		return;
	}
	assert_int_equal(bp_pyelf__glibc_tsd(e, &off, &size), 0);
	bp_pyelf__free(e);
	fprintf(stderr, "glibc: a key's value at thread pointer + %#x + key * %u\n", off, size);
	assert_int_equal(off, 0x318);
	assert_int_equal(size, 16);
	/* a file that is not glibc has no such function */
	e = open_elf("/proc/self/exe");
	assert_non_null(e);
	assert_int_equal(bp_pyelf__glibc_tsd(e, &off, &size), -ENOENT);
	bp_pyelf__free(e);
}

/* frames of a little interpreter: native main and loop frames, Python functions */
struct fx {
	struct bp_profile *p;
	uint32_t main_, eval, add, memcpy_, deflate, py[4], kern;
};

static void fx_init(struct fx *f)
{
	struct bp_frame fr = { .module = "python3.11", .python = true };
	const char *names[4] = { "<module>", "main", "work", "cb" };
	int i;

	f->p = bp_profile__new();
	assert_non_null(f->p);
	f->main_ = bld_frame(f->p, "main", "python3.11", NULL, NULL, 0, false);
	f->eval = bld_frame(f->p, "_PyEval_EvalFrameDefault", "python3.11", NULL, NULL, 0, false);
	f->add = bld_frame(f->p, "x_add", "python3.11", NULL, NULL, 0, false);
	f->memcpy_ = bld_frame(f->p, "__memmove_avx_unaligned", "libc.so.6", NULL, NULL, 0, false);
	f->deflate = bld_frame(f->p, "deflate_slow", "libz.so.1", NULL, NULL, 0, false);
	f->kern = bld_frame(f->p, "clear_page", "[kernel]", NULL, NULL, 0, true);
	for (i = 0; i < 4; i++) {
		fr.name = names[i];
		fr.file = "x.py";
		fr.line = 10 + i;
		f->py[i] = (uint32_t)bp_profile__frame(f->p, &fr);
	}
}

static void assert_ids(const uint32_t *got, uint32_t n, const uint32_t *want, uint32_t wn)
{
	uint32_t i;

	assert_int_equal(n, wn);
	for (i = 0; i < n; i++)
		assert_int_equal(got[i], want[i]);
}

#define WANT(...) (uint32_t[]){ __VA_ARGS__ }, sizeof((uint32_t[]){ __VA_ARGS__ }) / 4

/* each run of Python frames takes the place of the loop frame that ran it */
static void merge__runs_replace_loop_frames(void **state)
{
	struct fx f;
	uint32_t out[64], n;
	/* innermost first: work, main | <module> (two runs: 3.11 is_entry) */
	uint32_t ids[3];
	bool ends[3] = { false, true, true };

	fx_init(&f);
	ids[0] = f.py[2];
	ids[1] = f.py[1];
	ids[2] = f.py[0];
	/* two loop frames, two runs */
	n = bp_py_merge(f.p, "python3.11",
			(uint32_t[]){ f.main_, f.eval, f.memcpy_, f.eval, f.add }, 5, ids, ends, 3,
			out, 64);
	assert_ids(out, n, WANT(f.main_, f.py[0], f.memcpy_, f.py[1], f.py[2], f.add));
	/* the native walk stopped early (no frame pointers): the outer run at the root */
	n = bp_py_merge(f.p, "python3.11", (uint32_t[]){ f.eval, f.add }, 2, ids, ends, 3, out,
			64);
	assert_ids(out, n, WANT(f.py[0], f.py[1], f.py[2], f.add));
	/* no loop frame at all: every run at the root */
	n = bp_py_merge(f.p, "python3.11", (uint32_t[]){ f.add }, 1, ids, ends, 3, out, 64);
	assert_ids(out, n, WANT(f.py[0], f.py[1], f.py[2], f.add));
	/* more loop frames than runs: the outer ones stay native */
	n = bp_py_merge(f.p, "python3.11", (uint32_t[]){ f.main_, f.eval, f.eval, f.eval }, 4, ids,
			ends, 3, out, 64);
	assert_ids(out, n, WANT(f.main_, f.eval, f.py[0], f.py[1], f.py[2]));
	/* a loop frame of another module is not this interpreter's */
	n = bp_py_merge(f.p, "libpython3.12.so.1.0", (uint32_t[]){ f.eval, f.add }, 2, ids, ends,
			3, out, 64);
	assert_ids(out, n, WANT(f.py[0], f.py[1], f.py[2], f.eval, f.add));
	/* bounded by the room given */
	n = bp_py_merge(f.p, "python3.11", (uint32_t[]){ f.main_, f.eval, f.add }, 3, ids, ends, 3,
			out, 2);
	assert_int_equal(n, 2);
	bp_profile__free(f.p);
}

/* the Python view: Python frames, the native code they call, the kernel; nothing of the interpreter */
static void view__python_frames_and_called_native_code(void **state)
{
	struct fx f;
	uint32_t out[64], n, trunc;

	fx_init(&f);
	trunc = bld_frame(f.p, "[truncated]", "[unknown]", NULL, NULL, 0, false);
	/* pure Python: the interpreter's own frames below go, the kernel stays */
	n = bp_python_view_stack(f.p, (uint32_t[]){ f.main_, f.py[0], f.py[2], f.add, f.memcpy_,
						   f.kern }, 6, out);
	assert_ids(out, n, WANT(f.py[0], f.py[2], f.kern));
	/* a call into zlib: kept from its first frame down, libc under it included */
	n = bp_python_view_stack(f.p, (uint32_t[]){ f.py[0], f.py[2], f.eval, f.deflate, f.memcpy_ },
				 5, out);
	assert_ids(out, n, WANT(f.py[0], f.py[2], f.deflate, f.memcpy_));
	/* a callback into Python from native code: both */
	n = bp_python_view_stack(f.p, (uint32_t[]){ f.py[0], f.deflate, f.eval, f.py[3], f.add }, 5,
				 out);
	assert_ids(out, n, WANT(f.py[0], f.deflate, f.py[3]));
	/* markers of the native walk go */
	n = bp_python_view_stack(f.p, (uint32_t[]){ f.py[0], trunc, f.add }, 3, out);
	assert_ids(out, n, WANT(f.py[0]));
	/* no Python frame: as it was */
	n = bp_python_view_stack(f.p, (uint32_t[]){ f.main_, f.add }, 2, out);
	assert_ids(out, n, WANT(f.main_, f.add));
	bp_profile__free(f.p);
}

/* the view of a whole profile: samples that meet on one stack add up; a copy, p untouched */
static void view__profile_copy(void **state)
{
	struct bp_profile *v;
	struct fx f;
	uint32_t s1, s2, s3, i, nr;
	uint64_t total = 0;

	fx_init(&f);
	s1 = BLD_STACK(f.p, f.main_, f.py[0], f.py[2], f.add);
	s2 = BLD_STACK(f.p, f.main_, f.py[0], f.py[2], f.memcpy_);
	s3 = BLD_STACK(f.p, f.main_, f.add);
	bld_sample(f.p, 1, 1, BP_KIND_ONCPU, s1, 3, 30);
	bld_sample(f.p, 1, 1, BP_KIND_ONCPU, s2, 4, 40);
	bld_sample(f.p, 1, 1, BP_KIND_ONCPU, s3, 5, 50);
	assert_true(bp_python_has_frames(f.p));
	v = bp_python_view(f.p);
	assert_non_null(v);
	assert_int_equal(f.p->nr_samples, 3);
	assert_int_equal(v->nr_samples, 2);
	for (i = 0; i < v->nr_samples; i++) {
		const uint32_t *fr = bp_profile__stack_frames(v, v->samples[i].stack, &nr);

		total += v->samples[i].count;
		if (v->samples[i].count == 7) {
			assert_int_equal(nr, 2);
			assert_string_equal(v->frames[fr[1]].name, "work");
			assert_int_equal(v->samples[i].ns, 70);
		} else {
			assert_int_equal(v->samples[i].count, 5);
			assert_int_equal(nr, 2);
		}
	}
	assert_int_equal(total, 12);
	bp_profile__free(v);
	bp_profile__free(f.p);
}

static struct bp_evidence python_threads(void)
{
	struct bp_evidence e = {
		.who = "python3",
		.wall_s = 2,
		.have_timeline = true,
		.on_s = 1.9,
		.lock_s = 5.0,
		.sleep_s = 2.0,
		.gil_s = 5.0,
		.threads = 5,
		.ncpus = 2,
		.machine_busy = 0.5,
		.samples = 400,
		.python = "3.11.2",
		.hot_name = "spin (pygil.py:15)",
		.hot_frac = 0.9,
		.py_hot = true,
	};

	e.tl_s[BP_TS_RUNNING] = 1.9;
	e.tl_s[BP_TS_SLEEP] = 0.1;
	return e;
}

static bool has_line(const struct bp_verdict *v, bool lever, const char *needle)
{
	uint32_t i, n = lever ? v->nr_levers : v->nr_evidence;

	for (i = 0; i < n; i++)
		if (strstr(lever ? v->levers[i] : v->evidence[i], needle))
			return true;
	return false;
}

/* threads of one interpreter waiting for its GIL: gil-bound, processes, never more threads */
static void classify__gil_bound(void **state)
{
	struct bp_evidence e = python_threads();
	struct bp_verdict v;

	bp_classify(&e, NULL, &v);
	assert_string_equal(bp_class_name(v.cls), "gil-bound");
	assert_true(has_line(&v, false, "waited 5.00 s for the GIL"));
	assert_true(has_line(&v, true, "processes, not threads"));
	assert_true(has_line(&v, true, "spin (pygil.py:15)"));
	assert_true(has_line(&v, true, "More threads will not help"));
	assert_false(has_line(&v, true, "parallelize further"));
	bp_verdict_free(&v);
	/* a busy machine on top: still the GIL, and the queueing said */
	e.rq_s = 9;
	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_GIL);
	assert_true(has_line(&v, false, "the machine is busy too"));
	bp_verdict_free(&v);
	/* one thread cannot wait for the GIL on another */
	e = python_threads();
	e.threads = 1;
	bp_classify(&e, NULL, &v);
	assert_int_not_equal(v.cls, BP_CLASS_GIL);
	bp_verdict_free(&v);
	/* a free-threaded build has no GIL: never gil-bound, and said */
	e = python_threads();
	e.python = "3.13.0";
	e.python_free_threaded = true;
	bp_classify(&e, NULL, &v);
	assert_int_not_equal(v.cls, BP_CLASS_GIL);
	assert_true(has_line(&v, false, "free-threaded build: no GIL"));
	bp_verdict_free(&v);
	/* 3.13 with its GIL: the free-threaded build is a lever */
	e = python_threads();
	e.python = "3.13.0";
	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_GIL);
	assert_true(has_line(&v, true, "python3.13t"));
	bp_verdict_free(&v);
}

static struct bp_evidence python_loop(double native)
{
	struct bp_evidence e = {
		.who = "python3",
		.wall_s = 5,
		.have_timeline = true,
		.on_s = 5,
		.threads = 1,
		.ncpus = 2,
		.machine_busy = 0.5,
		.samples = 500,
		.mem_valid = true,
		.rss = 8 << 20,
		.llc_bytes = 32 << 20,
		.python = "3.12.1",
		.hot_name = "distance_matrix (dm.py:3)",
		.hot_frac = 0.68,
		.py_hot = true,
		.py_native = native,
	};

	e.tl_s[BP_TS_RUNNING] = 5;
	if (native > 0)
		snprintf(e.py_native_name, sizeof(e.py_native_name), "deflate_slow in libz.so.1");
	return e;
}

/* the lever follows where the hot Python function's time goes */
static void classify__python_levers(void **state)
{
	struct bp_evidence e = python_loop(0);
	struct bp_verdict v;

	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "distance_matrix (dm.py:3) is 68% of wall time"));
	assert_true(has_line(&v, true, "NumPy or Polars"));
	assert_true(has_line(&v, true, "Numba"));
	assert_true(has_line(&v, true, "PyO3"));
	assert_true(has_line(&v, true, "processes"));
	bp_verdict_free(&v);
	/* inside compiled code already: the algorithm, the layout, processes; not Numba */
	e = python_loop(0.85);
	bp_classify(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "85% of its time is compiled code"));
	assert_true(has_line(&v, true, "inside compiled code (deflate_slow in libz.so.1)"));
	assert_true(has_line(&v, true, "algorithm"));
	assert_true(has_line(&v, true, "memory layout"));
	assert_false(has_line(&v, true, "Numba"));
	bp_verdict_free(&v);
	assert_string_equal(bp_class_name(BP_CLASS_GIL), "gil-bound");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layout__every_installed_version_matches_its_headers),
		cmocka_unit_test(linetable__decoded_as_the_interpreter_does),
		cmocka_unit_test(linetable__cut_short_says_so),
		cmocka_unit_test(text__kinds_and_bounds),
		cmocka_unit_test(elf__versions_of_the_installed_interpreters),
		cmocka_unit_test(elf__debug_offsets_of_3_13),
		cmocka_unit_test(elf__glibc_thread_specific_data),
		cmocka_unit_test(merge__runs_replace_loop_frames),
		cmocka_unit_test(view__python_frames_and_called_native_code),
		cmocka_unit_test(view__profile_copy),
		cmocka_unit_test(classify__gil_bound),
		cmocka_unit_test(classify__python_levers),
	};

	return cmocka_run_group_tests_name("python", tests, NULL, NULL);
}
