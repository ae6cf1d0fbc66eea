// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "symbolize/kallsyms.h"
#include "util/log.h"
#include "symbolize/symbols.h"
#include "unit/symfix/symfix_test.h"

static int nr_warnings;

static void count_log(enum bp_log_level level, const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
	if (level <= BP_LOG_WARN)
		nr_warnings++;
}

/* unsorted, with aliases, data symbols, a module and junk */
static const char fake_kallsyms[] =
	"ffffffff81000100 T do_work\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000200 t helper_local\n"
	"ffffffff81000200 T __helper_global\n"
	"ffffffff81000300 t static_only\n"
	"ffffffff81000300 W weak_one\n"
	"ffffffff81000400 T _etext\n"
	"ffffffff81800000 D some_data\n"
	"ffffffff81900000 b some_bss\n"
	"0000000000000000 A fixed_percpu_data\n"
	"this is junk\n"
	"ffffffff81000080 x bad_type\n"
	"ffffffffc0002000 t ext4_read\t[ext4]\n"
	"ffffffffc0001000 T ext4_mount\t[ext4]\n"
	"ffffffffc0010000 t xfs_thing\t[xfs]\n"
	"ffffffffc0003000 t broken_mod\t[ext4\n"
	"ffffffffc0000800 t mod_x\t[]\n";

static const char *write_kallsyms(const char *text)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/kallsyms", sf_tmpdir());
	sf_write_file(path, text, "w");
	return path;
}

static void load__fake__sorted_and_merged(void **state)
{
	struct bp_kallsyms *k;
	struct bp_ksym ks;

	assert_int_equal(bp_kallsyms__load(write_kallsyms(fake_kallsyms), &k), 0);
	/* 0x..000 (3 aliases), 0x100, 0x200 (2), 0x300 (2), _etext, 3 module syms */
	assert_int_equal(bp_kallsyms__count(k), 8);

	/* aliases: no leading underscores beats _text/_stext */
	assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000000ULL, &ks), 0);
	assert_string_equal(ks.name, "startup_64");
	assert_null(ks.module);
	assert_int_equal(ks.base, 0xffffffff81000000ULL);

	assert_int_equal(bp_kallsyms__find(k, 0xffffffff810001ffULL, &ks), 0);
	assert_string_equal(ks.name, "do_work");
	assert_int_equal(ks.addr, 0xffffffff81000100ULL);

	/* global beats local, even with more underscores */
	assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000210ULL, &ks), 0);
	assert_string_equal(ks.name, "__helper_global");
	/* weak beats local */
	assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000300ULL, &ks), 0);
	assert_string_equal(ks.name, "weak_one");

	/* past _etext is not text: not named after the last function */
	assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000400ULL, &ks), -ENOENT);
	assert_int_equal(bp_kallsyms__find(k, 0xffffffff81800010ULL, &ks), -ENOENT);
	/* below everything */
	assert_int_equal(bp_kallsyms__find(k, 0x1000, &ks), -ENOENT);

	/* modules: name and base (lowest symbol of the module) */
	assert_int_equal(bp_kallsyms__find(k, 0xffffffffc0002010ULL, &ks), 0);
	assert_string_equal(ks.name, "ext4_read");
	assert_string_equal(ks.module, "ext4");
	assert_int_equal(ks.base, 0xffffffffc0001000ULL);
	assert_int_equal(bp_kallsyms__find(k, 0xffffffffc0001004ULL, &ks), 0);
	assert_string_equal(ks.name, "ext4_mount");

	/* the last symbol of a module does not run on forever */
	assert_int_equal(bp_kallsyms__find(k, 0xffffffffc0010010ULL, &ks), 0);
	assert_string_equal(ks.module, "xfs");
	assert_int_equal(bp_kallsyms__find(k, 0xffffffffc0010000ULL + 0x100000, &ks),
			 -ENOENT);
	bp_kallsyms__free(k);
}

/*
 * Function padding (CONFIG_CALL_PADDING): "__pfx_f" 16 bytes before every
 * f, adjacent as the kernel lists them or not, in a module too, and one
 * whose function is missing. Folded into the function's entry, with every
 * answer unchanged: the padding is "__pfx_f", f starts at f, and the
 * function before ends where the padding begins.
 */
static const char pfx_kallsyms[] =
	"ffffffff81000000 T _text\n"
	"ffffffff810000f0 T __pfx_first\n"
	"ffffffff81000100 T first\n"
	"ffffffff810001f0 t __pfx_second\n"
	"ffffffff81000200 t second\n"
	"ffffffff810002f0 T __pfx_orphan\n"
	"ffffffff81000400 T third\n"
	"ffffffff810003f0 T __pfx_third\n"
	"ffffffff81000500 T _etext\n"
	"ffffffffc0000ff0 t __pfx_mod_fn\t[m]\n"
	"ffffffffc0001000 t mod_fn\t[m]\n";

struct range_seen {
	uint64_t start[4], end[4];
	int n;
};

static void on_range(void *ctx, size_t which, uint64_t start, uint64_t end)
{
	struct range_seen *r = ctx;

	(void)which;
	if (r->n < 4) {
		r->start[r->n] = start;
		r->end[r->n] = end;
	}
	r->n++;
}

static void load__function_padding__folded_same_answers(void **state)
{
	static const struct {
		uint64_t addr, start;
		const char *name;
	} want[] = {
		{ 0xffffffff810000f0ULL, 0xffffffff810000f0ULL, "__pfx_first" },
		{ 0xffffffff810000ffULL, 0xffffffff810000f0ULL, "__pfx_first" },
		{ 0xffffffff81000100ULL, 0xffffffff81000100ULL, "first" },
		{ 0xffffffff810001efULL, 0xffffffff81000100ULL, "first" },
		{ 0xffffffff810001f0ULL, 0xffffffff810001f0ULL, "__pfx_second" },
		{ 0xffffffff81000208ULL, 0xffffffff81000200ULL, "second" },
		/* a padding whose function is not listed stays a symbol of its own */
		{ 0xffffffff81000300ULL, 0xffffffff810002f0ULL, "__pfx_orphan" },
		{ 0xffffffff810003f4ULL, 0xffffffff810003f0ULL, "__pfx_third" },
		{ 0xffffffff81000400ULL, 0xffffffff81000400ULL, "third" },
		{ 0xffffffffc0000ff8ULL, 0xffffffffc0000ff0ULL, "__pfx_mod_fn" },
		{ 0xffffffffc0001001ULL, 0xffffffffc0001000ULL, "mod_fn" },
	};
	const char *const names[] = { "first", "third" };
	struct range_seen r = {};
	struct bp_kallsyms *k;
	struct bp_ksym ks;
	uint64_t s, e;
	size_t i;

	assert_int_equal(bp_kallsyms__load(write_kallsyms(pfx_kallsyms), &k), 0);
	/* _text, first, second, __pfx_orphan, third, _etext, mod_fn */
	assert_int_equal(bp_kallsyms__count(k), 7);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(bp_kallsyms__find(k, want[i].addr, &ks), 0);
		assert_string_equal(ks.name, want[i].name);
		assert_int_equal(ks.addr, want[i].start);
	}
	assert_string_equal(ks.module, "m");
	assert_int_equal(ks.base, 0xffffffffc0000ff0ULL);
	/* a range ends where the next function's padding begins, as it did */
	assert_int_equal(bp_kallsyms__ranges(k, "first", &s, &e, 1), 1);
	assert_int_equal(s, 0xffffffff81000100ULL);
	assert_int_equal(e, 0xffffffff810001f0ULL);
	bp_kallsyms__ranges_each(k, names, 2, on_range, &r);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.end[0], 0xffffffff810001f0ULL);
	assert_int_equal(r.end[1], 0xffffffff81000500ULL);
	/* no "__pfx_" name is a range of its own */
	assert_int_equal(bp_kallsyms__ranges(k, "__pfx_first", &s, &e, 1), 0);
	bp_kallsyms__free(k);
}

static uint64_t real_addr(const char *want);

/*
 * The real table, against the file itself: every "__pfx_" symbol of the
 * core kernel is still found at its address and at its last byte, by its
 * own name or an alias the file lists at that address (a global symbol
 * there outranks it, as before), and its function at the function's.
 */
struct fsym {
	unsigned long long addr;
	char *name;
};

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool listed_at(const struct fsym *v, size_t n, unsigned long long addr, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && v[lo].addr == addr; lo++)
		if (!strcmp(v[lo].name, name))
			return true;
	return false;
}

static void load__real_kallsyms__every_padding_found(void **state)
{
	char line[512], name[256], prev[256] = "";
	unsigned long long addr, prev_addr = 0;
	struct fsym *v = NULL, *t;
	size_t n = 0, cap = 0, i;
	struct bp_kallsyms *k;
	struct bp_ksym ks;
	int checked = 0;
	char type;
	FILE *f;

	if (!real_addr("schedule"))
		skip();		/* kptr_restrict, or no procfs */
	f = fopen("/proc/kallsyms", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || strchr(line, '[') ||
		    !strchr("TtWw", type))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			t = realloc(v, cap * sizeof(*v));
			assert_non_null(t);
			v = t;
		}
		v[n].addr = addr;
		v[n].name = strdup(name);
		assert_non_null(v[n++].name);
	}
	fclose(f);
	/* the file's order is kept for the pairs; a sorted copy answers "listed at" */
	t = malloc(n * sizeof(*t) + 1);
	assert_non_null(t);
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), fsym_cmp);
	assert_int_equal(bp_kallsyms__load("/proc/kallsyms", &k), 0);
	for (i = 0; i < n; i++) {
		addr = v[i].addr;
		snprintf(name, sizeof(name), "%s", v[i].name);
		if (!strncmp(prev, "__pfx_", 6) && !strcmp(prev + 6, name) && addr > prev_addr &&
		    addr - prev_addr <= 255) {
			assert_int_equal(bp_kallsyms__find(k, addr, &ks), 0);
			assert_int_equal(ks.addr, addr);
			if (!listed_at(t, n, addr, ks.name))
				fail_msg("%llx: %s is not listed there", addr, ks.name);
			assert_int_equal(bp_kallsyms__find(k, prev_addr, &ks), 0);
			assert_int_equal(ks.addr, prev_addr);
			if (!listed_at(t, n, prev_addr, ks.name))
				fail_msg("%llx: %s is not listed there", prev_addr, ks.name);
			assert_int_equal(bp_kallsyms__find(k, addr - 1, &ks), 0);
			assert_int_equal(ks.addr, prev_addr);
			checked++;
		}
		snprintf(prev, sizeof(prev), "%s", name);
		prev_addr = addr;
	}
	fprintf(stderr, "  %d function paddings checked; %zu symbols kept of %zu text lines\n",
		checked, bp_kallsyms__count(k), n);
	bp_kallsyms__free(k);
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	free(t);
}

static void load__all_zero__eperm_warns_once(void **state)
{
	struct bp_kallsyms *k = (void *)1;
	const char *path = write_kallsyms("0000000000000000 T schedule\n"
					  "0000000000000000 t foo\t[mod]\n");

	nr_warnings = 0;
	bp_log_set(count_log);
	assert_int_equal(bp_kallsyms__load(path, &k), -EPERM);
	assert_null(k);
	assert_int_equal(bp_kallsyms__load(path, &k), -EPERM);
	bp_log_set(NULL);
	assert_int_equal(nr_warnings, 1);
}

static void load__no_text__enoent(void **state)
{
	struct bp_kallsyms *k;

	assert_int_equal(bp_kallsyms__load(write_kallsyms(""), &k), -ENOENT);
	assert_int_equal(bp_kallsyms__load(write_kallsyms("ffffffff81000000 D x\n"), &k),
			 -ENOENT);
	assert_int_equal(bp_kallsyms__load("/nonexistent/kallsyms", &k), -ENOENT);
}

/* the address of a symbol, read straight from the file */
static uint64_t real_addr(const char *want)
{
	char line[512], name[256], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, want) && (type == 'T' || type == 't')) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

static void load__real_kallsyms__schedule(void **state)
{
	uint64_t sched = real_addr("schedule"), text = real_addr("_text");
	struct bp_kallsyms *k;
	struct bp_ksym ks;

	if (!sched)
		skip();		/* kptr_restrict, or no procfs */
	assert_int_equal(bp_kallsyms__load("/proc/kallsyms", &k), 0);
	assert_true(bp_kallsyms__count(k) > 1000);
	assert_int_equal(bp_kallsyms__find(k, sched, &ks), 0);
	assert_string_equal(ks.name, "schedule");
	assert_null(ks.module);
	assert_int_equal(bp_kallsyms__find(k, sched + 4, &ks), 0);
	assert_string_equal(ks.name, "schedule");
	assert_int_equal(ks.addr, sched);
	if (text)
		assert_int_equal(ks.base, text);
	bp_kallsyms__free(k);
}

static void resolve_kernel__via_symbolizer(void **state)
{
	uint64_t sched = real_addr("schedule"), text = real_addr("_text");
	struct bp_frame_info fi;
	struct bp_syms *s;

	s = bp_syms__new(NULL);
	assert_non_null(s);
	/* not loaded yet: still a frame, but not the address (KASLR's secret) */
	assert_int_equal(bp_syms__resolve_kernel(s, 0xffffffff81000010ULL, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "[kernel]");
	assert_int_equal(fi.offset, 0);
	assert_true(fi.kernel);

	if (!sched) {
		bp_syms__free(s);
		skip();
	}
	assert_int_equal(bp_syms__load_kernel(s), 0);
	assert_int_equal(bp_syms__resolve_kernel(s, sched + 2, &fi), 0);
	assert_string_equal(fi.name, "schedule");
	assert_string_equal(fi.module, "[kernel]");
	assert_int_equal(fi.sym_offset, 2);
	assert_true(fi.kernel);
	if (text)
		assert_int_equal(fi.offset, sched + 2 - text);

	/* an address in no symbol, outside the kernel's image */
	assert_int_equal(bp_syms__resolve_kernel(s, 0x10, &fi), -ENOENT);
	assert_null(fi.name);
	assert_string_equal(fi.module, "[kernel]");
	assert_int_equal(fi.offset, 0);

	/* a reload keeps names handed out before valid */
	assert_int_equal(bp_syms__resolve_kernel(s, sched, &fi), 0);
	assert_int_equal(bp_syms__load_kernel(s), 0);
	assert_string_equal(fi.name, "schedule");
	bp_syms__free(s);
}

static void resolve_kernel__fake_module(void **state)
{
	struct bp_syms_opts o = { .kallsyms_path = write_kallsyms(fake_kallsyms) };
	struct bp_frame_info fi;
	struct bp_syms *s = bp_syms__new(&o);

	assert_non_null(s);
	assert_int_equal(bp_syms__load_kernel(s), 0);
	assert_int_equal(bp_syms__resolve_kernel(s, 0xffffffffc0002010ULL, &fi), 0);
	assert_string_equal(fi.name, "ext4_read");
	assert_string_equal(fi.module, "ext4");
	assert_int_equal(fi.offset, 0x1010);
	assert_int_equal(fi.sym_offset, 0x10);
	assert_null(fi.build_id);
	bp_syms__free(s);
}

/*
 * Unnamed kernel addresses: inside the core image, an offset from _text;
 * elsewhere (modules' space, BPF code, garbage) no offset at all.
 */
static void resolve_kernel__unnamed__no_absolute_address(void **state)
{
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000100 T f\n"
		"ffffffff81000200 T _etext\n"
		"ffffffff81000400 T _sinittext\n"
		"ffffffff81000500 T _einittext\n"
		"ffffffffc0001000 t m\t[mod]\n";
	struct bp_syms_opts o = { .kallsyms_path = write_kallsyms(text) };
	struct bp_frame_info fi;
	struct bp_syms *s = bp_syms__new(&o);

	assert_non_null(s);
	assert_int_equal(bp_syms__load_kernel(s), 0);
	assert_int_equal(bp_syms__resolve_kernel(s, 0xffffffff81000300ULL, &fi), -ENOENT);
	assert_string_equal(fi.module, "[kernel]");
	assert_int_equal(fi.offset, 0x300);
	assert_int_equal(bp_syms__resolve_kernel(s, 0xffffffffd0000000ULL, &fi), -ENOENT);
	assert_int_equal(fi.offset, 0);
	assert_int_equal(bp_syms__resolve_kernel(s, 0xffffffff80000000ULL, &fi), -ENOENT);
	assert_int_equal(fi.offset, 0);
	bp_syms__free(s);
}

/* lines past the length bound are skipped, not buffered */
static void load__long_line__skipped(void **state)
{
	char *text = malloc(8192);
	struct bp_kallsyms *k;
	struct bp_ksym ks;
	size_t n;

	assert_non_null(text);
	n = (size_t)snprintf(text, 8192, "ffffffff81000000 T _text\nffffffff81000100 T ");
	memset(text + n, 'x', 4000);
	n += 4000;
	snprintf(text + n, 8192 - n, "\nffffffff81000200 T after\n");
	assert_int_equal(bp_kallsyms__load(write_kallsyms(text), &k), 0);
	free(text);
	assert_int_equal(bp_kallsyms__count(k), 2);
	assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000210ULL, &ks), 0);
	assert_string_equal(ks.name, "after");
	bp_kallsyms__free(k);
}

/*
 * In address order, as the kernel lists its own symbols, the sort is
 * skipped: the answers are the unsorted file's. Aliases at one address
 * listed with the preferred one last still sort it first.
 */
static void load__address_order__same_answers(void **state)
{
	static const char *const texts[] = {
		"ffffffff81000000 T startup_64\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 T do_work\n"
		"ffffffff81000200 T __helper_global\n"
		"ffffffff81000200 t helper_local\n"
		"ffffffff81000400 T _etext\n"
		"ffffffffc0001000 T ext4_mount\t[ext4]\n"
		"ffffffffc0002000 t ext4_read\t[ext4]\n",
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T startup_64\n"
		"ffffffff81000100 T do_work\n"
		"ffffffff81000200 t helper_local\n"
		"ffffffff81000200 T __helper_global\n"
		"ffffffff81000400 T _etext\n"
		"ffffffffc0001000 T ext4_mount\t[ext4]\n"
		"ffffffffc0002000 t ext4_read\t[ext4]\n",
	};
	struct bp_kallsyms *k;
	struct bp_ksym ks;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(bp_kallsyms__load(write_kallsyms(texts[i]), &k), 0);
		assert_int_equal(bp_kallsyms__count(k), 6);
		assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000010ULL, &ks), 0);
		assert_string_equal(ks.name, "startup_64");
		assert_int_equal(bp_kallsyms__find(k, 0xffffffff810001ffULL, &ks), 0);
		assert_string_equal(ks.name, "do_work");
		assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000210ULL, &ks), 0);
		assert_string_equal(ks.name, "__helper_global");
		assert_int_equal(bp_kallsyms__find(k, 0xffffffff81000400ULL, &ks), -ENOENT);
		assert_int_equal(bp_kallsyms__find(k, 0xffffffffc0002010ULL, &ks), 0);
		assert_string_equal(ks.name, "ext4_read");
		assert_string_equal(ks.module, "ext4");
		assert_int_equal(ks.base, 0xffffffffc0001000ULL);
		bp_kallsyms__free(k);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(load__fake__sorted_and_merged, sf_cleanup),
		cmocka_unit_test_teardown(load__all_zero__eperm_warns_once, sf_cleanup),
		cmocka_unit_test_teardown(load__no_text__enoent, sf_cleanup),
		cmocka_unit_test(load__real_kallsyms__schedule),
		cmocka_unit_test_teardown(load__function_padding__folded_same_answers, sf_cleanup),
		cmocka_unit_test(load__real_kallsyms__every_padding_found),
		cmocka_unit_test(resolve_kernel__via_symbolizer),
		cmocka_unit_test_teardown(resolve_kernel__fake_module, sf_cleanup),
		cmocka_unit_test_teardown(resolve_kernel__unnamed__no_absolute_address, sf_cleanup),
		cmocka_unit_test_teardown(load__long_line__skipped, sf_cleanup),
		cmocka_unit_test_teardown(load__address_order__same_answers, sf_cleanup),
	};

	return cmocka_run_group_tests_name("kallsyms", tests, NULL, sf_cleanup);
}
