// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe: /proc parsing and the probe state machine on a fake /proc with
 * an injected clock, LLC size from a fake sysfs and from CPUID register
 * values, and one real probe of a child touching 64 MiB.
 */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/memprobe.h"

/* Debian 12's cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

#define KiB	1024ULL
#define MiB	(1024ULL * KiB)
#define LLC	(32 * MiB)
/* the injected clock: milliseconds after an arbitrary, non-zero origin */
#define T(ms)	(1000000000000ULL + (uint64_t)(ms) * 1000000ULL)

/* ------------------------------------------------------------ temp trees */

static char root[64];
/* the probe under test, freed by the teardown even when an assertion fails */
static struct bp_memprobe *cur;

static void put_file(const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put_file(const char *rel, const char *fmt, ...)
{
	char path[512], dir[512];
	va_list ap;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	for (char *s = dir + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dir, 0755);
		*s = '/';
	}
	mkdir(dir, 0755);
	f = fopen(path, "w");
	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int tree_setup(void **state)
{
	strcpy(root, "/tmp/bp-memprobe-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int tree_teardown(void **state)
{
	bp_memprobe__free(cur);
	cur = NULL;
	if (root[0])
		nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	root[0] = '\0';
	return 0;
}

/* ------------------------------------------------------------ fake /proc */

/* a /proc/PID/stat line; the comm tries to fool parsers that stop at the first ')' */
static void put_stat(pid_t pid, uint64_t minflt, uint64_t majflt, uint64_t start,
		     uint64_t rss_bytes)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/stat", pid);
	put_file(rel, "%d (a) R 9 (b c) S 1 1 1 0 -1 4194304 %llu 7 %llu 3 11 12 0 0 20 0 2 0 "
		      "%llu 3133440 %llu 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1\n",
		 pid, (unsigned long long)minflt, (unsigned long long)majflt,
		 (unsigned long long)start,
		 (unsigned long long)(rss_bytes / sysconf(_SC_PAGESIZE)));
}

static void put_rollup(pid_t pid, uint64_t rss_kb, uint64_t ref_kb)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/smaps_rollup", pid);
	put_file(rel, "56287604a000-7ffcd504f000 ---p 00000000 00:00 0                          "
		      "[rollup]\nRss:            %6llu kB\nPss:                 513 kB\n"
		      "Referenced:     %6llu kB\nAnonymous:           116 kB\n",
		 (unsigned long long)rss_kb, (unsigned long long)ref_kb);
}

/* a fake process: stat, smaps_rollup and an empty clear_refs */
static void put_proc(pid_t pid, uint64_t start, uint64_t rss_bytes)
{
	char rel[64];

	put_stat(pid, 100, 5, start, rss_bytes);
	put_rollup(pid, rss_bytes / KiB, 0);
	snprintf(rel, sizeof(rel), "%d/clear_refs", pid);
	put_file(rel, "%s", "");
}

/* was clear_refs written since the last look? (empties it again) */
static bool took_clear(pid_t pid)
{
	char path[512], buf[8] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%d/clear_refs", root, pid);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (!n)
		return false;
	assert_string_equal(buf, "1");
	assert_int_equal(truncate(path, 0), 0);
	return true;
}

static struct bp_memprobe *fake_probe(void)
{
	struct bp_memprobe_opts o = {
		.proc_root = root,
		.llc_bytes = LLC,
	};
	cur = bp_memprobe__new(&o);
	assert_non_null(cur);
	return cur;
}

static struct bp_mem_evidence evidence(struct bp_memprobe *m, pid_t pid, uint64_t now)
{
	struct bp_mem_evidence ev;

	assert_int_equal(bp_memprobe__evidence(m, pid, now, &ev), 0);
	return ev;
}

/* ------------------------------------------------------------ parsing */

static void parse_stat__weird_comm__fields_after_last_paren(void **state)
{
	const char *text = "4242 (x) 1 2 3 4 5 6 7 8 9 (y)) S 1 2 3 4 5 6 777 8 99 10 11 12 13 "
			   "14 15 16 17 18 123456 20 2048 22 23\n";
	struct bp_pid_stat st;

	assert_int_equal(bp_memprobe_parse_stat(text, &st), 0);
	assert_int_equal(st.minflt, 777);
	assert_int_equal(st.majflt, 99);
	assert_int_equal(st.start_ticks, 123456);
	assert_int_equal(st.rss_pages, 2048);
	assert_int_equal(st.cpu, -1);		/* the line ends before field 39 */
}

static void parse_stat__real_self__has_start_and_rss(void **state)
{
	char buf[1024];
	struct bp_pid_stat st;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_int_equal(bp_memprobe_parse_stat(buf, &st), 0);
	assert_true(st.start_ticks > 0);
	assert_true(st.rss_pages > 0);
	assert_true(st.minflt > 0);
	assert_true(st.cpu >= 0);
}

static void parse_stat__truncated_or_no_comm__einval(void **state)
{
	struct bp_pid_stat st;

	assert_int_equal(bp_memprobe_parse_stat("12 (a) R 1 2 3 4 5 6 7 8\n", &st), -EINVAL);
	assert_int_equal(bp_memprobe_parse_stat("12 a R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
						"17 18 19 20 21 22", &st), -EINVAL);
	assert_int_equal(bp_memprobe_parse_stat("", &st), -EINVAL);
}

static void parse_rollup__rss_and_referenced__bytes(void **state)
{
	const char *text = "5628-7ffc ---p 00000000 00:00 0   [rollup]\n"
			   "Rss:              196712 kB\nPss:                 513 kB\n"
			   "Referenced:        188416 kB\nAnonymous:           116 kB\n";
	uint64_t rss = 0, ref = 0;

	assert_int_equal(bp_memprobe_parse_rollup(text, &rss, &ref), 0);
	assert_int_equal(rss, 196712 * KiB);
	assert_int_equal(ref, 188416 * KiB);
	assert_int_equal(bp_memprobe_parse_rollup("Rss: 12 kB\nPss: 3 kB\n", &rss, &ref), -EINVAL);
	assert_int_equal(bp_memprobe_parse_rollup("", &rss, &ref), -EINVAL);
}

/* ------------------------------------------------------------ LLC: sysfs */

static void put_cache(unsigned int idx, const char *level, const char *type, const char *size,
		      const char *cpus)
{
	char rel[128];

#define PUT(name, val)                                                                 \
	do {                                                                           \
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu0/cache/index%u/" name, \
			 idx);                                                         \
		put_file(rel, "%s\n", val);                                            \
	} while (0)
	PUT("level", level);
	PUT("type", type);
	PUT("size", size);
	PUT("shared_cpu_list", cpus);
#undef PUT
}

static void cache_size_parse__suffixes(void **state)
{
	assert_int_equal(bp_cache_size_parse("32768K\n"), 32 * MiB);
	assert_int_equal(bp_cache_size_parse("48K"), 48 * KiB);
	assert_int_equal(bp_cache_size_parse("2M"), 2 * MiB);
	assert_int_equal(bp_cache_size_parse("4096"), 4096);
	assert_int_equal(bp_cache_size_parse("big"), 0);
	assert_int_equal(bp_cache_size_parse(""), 0);
}

static void llc_sysfs__four_indexes__picks_l3(void **state)
{
	char sys[128], source[128] = "";

	put_cache(0, "1", "Data", "48K", "0-1");
	put_cache(1, "1", "Instruction", "32K", "0-1");
	put_cache(2, "2", "Unified", "1024K", "0-1");
	put_cache(3, "3", "Unified", "32768K", "0-15");
	snprintf(sys, sizeof(sys), "%s/sys", root);
	assert_int_equal(bp_llc_from_sysfs(sys, source, sizeof(source)), 32 * MiB);
	assert_string_equal(source, "sysfs cpu0 L3 32 MiB (cpus 0-15)");
	/* the public entry takes sysfs first */
	assert_int_equal(bp_llc_bytes(sys, source, sizeof(source)), 32 * MiB);
	assert_string_equal(source, "sysfs cpu0 L3 32 MiB (cpus 0-15)");
}

static void llc_sysfs__instruction_cache_highest__ignored(void **state)
{
	char sys[128], source[128] = "";

	put_cache(0, "1", "Data", "32K", "0");
	put_cache(1, "2", "Unified", "2048K", "0-3");
	put_cache(2, "3", "Instruction", "65536K", "0-7");
	snprintf(sys, sizeof(sys), "%s/sys", root);
	assert_int_equal(bp_llc_from_sysfs(sys, source, sizeof(source)), 2 * MiB);
	assert_string_equal(source, "sysfs cpu0 L2 2 MiB (cpus 0-3)");
}

static void llc_sysfs__no_cache_dir__zero(void **state)
{
	char sys[128], source[64] = "untouched";

	snprintf(sys, sizeof(sys), "%s/nothing", root);
	assert_int_equal(bp_llc_from_sysfs(sys, source, sizeof(source)), 0);
	assert_string_equal(source, "untouched");
}

/* ------------------------------------------------------------ LLC: CPUID */

struct fake_leaf {
	uint32_t leaf, sub;
	struct bp_cpuid_regs r;
};

struct fake_cpu {
	const struct fake_leaf *leaves;
	size_t n;
};

/* like the instruction: beyond the maximum leaf false, unlisted leaves read as zeros */
static bool fake_cpuid(void *ctx, uint32_t leaf, uint32_t sub, struct bp_cpuid_regs *r)
{
	const struct fake_cpu *c = ctx;
	uint32_t max = 0, base = leaf & 0x80000000;
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->leaves[i].leaf == base)
			max = c->leaves[i].r.eax;
	if (leaf > max)
		return false;
	memset(r, 0, sizeof(*r));
	for (i = 0; i < c->n; i++)
		if (c->leaves[i].leaf == leaf && c->leaves[i].sub == sub)
			*r = c->leaves[i].r;
	return true;
}

/* this guest: AMD EPYC (Zen 5, family 1Ah) under Firecracker/PVM */
static const struct fake_leaf zen5_guest[] = {
	{ 0x0, 0, { 0x0000000d, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x1, 0, { 0x00b00f21, 0xc4fe0800, 0xfed83203, 0x178bfbff } },
	{ 0x4, 0, { 0, 0, 0, 0 } },
	{ 0x80000000, 0, { 0x80000021, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000001, 0, { 0x00b00f21, 0x40000000, 0x440001f1, 0x25d3fbff } },
	{ 0x80000005, 0, { 0xff60ff40, 0xff60ff40, 0x300c0140, 0x20080140 } },
	{ 0x80000006, 0, { 0x40802040, 0x60804040, 0x04006140, 0x0fe09140 } },
	{ 0x8000001d, 0, { 0, 0, 0, 0 } },
};

/* Alder Lake-S (an E-core's view), leaf 4 as printed by cpuid(1) */
static const struct fake_leaf intel_adl[] = {
	{ 0x0, 0, { 0x00000020, 0x756e6547, 0x6c65746e, 0x49656e69 } },
	{ 0x1, 0, { 0x00090672, 0, 0, 0 } },
	{ 0x4, 0, { 0xfc004121, 0x01c0003f, 0x0000003f, 0x00000000 } },
	{ 0x4, 1, { 0xfc004122, 0x01c0003f, 0x0000007f, 0x00000000 } },
	{ 0x4, 2, { 0xfc01c143, 0x03c0003f, 0x000007ff, 0x00000000 } },
	{ 0x4, 3, { 0xfc1fc163, 0x0240003f, 0x00009fff, 0x00000004 } },
	{ 0x80000000, 0, { 0x80000008, 0, 0, 0 } },
	{ 0x80000006, 0, { 0, 0, 0x08007040, 0 } },
};

/* Zen 3 bare metal: 0x8000001D describes the CCX's own L3 (16 ways x 32768 sets x 64 B) */
static const struct fake_leaf zen3_metal[] = {
	{ 0x0, 0, { 0x00000010, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x1, 0, { 0x00a00f11, 0, 0, 0 } },
	{ 0x80000000, 0, { 0x80000023, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000006, 0, { 0, 0, 0x02006140, 0x10009140 } },
	{ 0x8000001d, 0, { 0x00004121, 0x01c0003f, 0x0000003f, 0 } },
	{ 0x8000001d, 1, { 0x00004122, 0x01c0003f, 0x0000003f, 0 } },
	{ 0x8000001d, 2, { 0x00004143, 0x01c0003f, 0x000003ff, 0x00000002 } },
	{ 0x8000001d, 3, { 0x0003c163, 0x03c0003f, 0x00007fff, 0x00000001 } },
};

/* a Zen 2 (family 17h model 31h) guest with a 256 MiB socket L3 and no 0x8000001D */
static const struct fake_leaf zen2_guest[] = {
	{ 0x0, 0, { 0x00000010, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x1, 0, { 0x00830f10, 0, 0, 0 } },
	{ 0x80000000, 0, { 0x8000001f, 0x68747541, 0x444d4163, 0x69746e65 } },
	{ 0x80000006, 0, { 0, 0, 0x02006140, 512u << 18 | 0x9140 } },
};

#define FAKE_CPU(t)	{ t, sizeof(t) / sizeof(t[0]) }

static void cpuid_cache_desc__intel_leaf4__sizes(void **state)
{
	unsigned int level, type;
	uint64_t bytes;

	assert_int_equal(bp_cpuid_cache_desc(&intel_adl[2].r, &level, &type, &bytes), 0);
	assert_int_equal(level, 1);
	assert_int_equal(type, 1);
	assert_int_equal(bytes, 32 * KiB);
	assert_int_equal(bp_cpuid_cache_desc(&intel_adl[3].r, &level, &type, &bytes), 0);
	assert_int_equal(type, 2);
	assert_int_equal(bytes, 64 * KiB);
	assert_int_equal(bp_cpuid_cache_desc(&intel_adl[4].r, &level, &type, &bytes), 0);
	assert_int_equal(level, 2);
	assert_int_equal(type, 3);
	assert_int_equal(bytes, 2 * MiB);
	/* 10 ways x 1 partition x 64 B x 40960 sets */
	assert_int_equal(bp_cpuid_cache_desc(&intel_adl[5].r, &level, &type, &bytes), 0);
	assert_int_equal(level, 3);
	assert_int_equal(type, 3);
	assert_int_equal(bytes, 25 * MiB);
}

static void cpuid_cache_desc__this_guest__type0_enoent(void **state)
{
	unsigned int level, type;
	uint64_t bytes;

	assert_int_equal(bp_cpuid_cache_desc(&zen5_guest[2].r, &level, &type, &bytes), -ENOENT);
	assert_int_equal(bp_cpuid_cache_desc(&zen5_guest[7].r, &level, &type, &bytes), -ENOENT);
}

static void cpuid_l2_l3__this_guest__socket_l3(void **state)
{
	uint64_t l2, l3;

	bp_cpuid_l2_l3(&zen5_guest[6].r, &l2, &l3);
	assert_int_equal(l2, 1 * MiB);
	assert_int_equal(l3, 1016 * 512 * KiB);
	assert_int_equal(l3, 508 * MiB);
}

static void cpuid_family_model__decoded(void **state)
{
	unsigned int family, model;

	bp_cpuid_family_model(0x00b00f21, &family, &model);	/* this guest: Zen 5 */
	assert_int_equal(family, 0x1a);
	assert_int_equal(model, 0x02);
	bp_cpuid_family_model(0x00830f10, &family, &model);	/* Zen 2 Rome */
	assert_int_equal(family, 0x17);
	assert_int_equal(model, 0x31);
	bp_cpuid_family_model(0x00090672, &family, &model);	/* Alder Lake-S */
	assert_int_equal(family, 6);
	assert_int_equal(model, 0x97);
}

static void amd_ccx_l3__caps_by_family(void **state)
{
	assert_int_equal(bp_amd_ccx_l3(0x1a, 0x02), 32 * MiB);
	assert_int_equal(bp_amd_ccx_l3(0x19, 0x01), 32 * MiB);
	assert_int_equal(bp_amd_ccx_l3(0x17, 0x31), 16 * MiB);
	assert_int_equal(bp_amd_ccx_l3(0x17, 0x01), 8 * MiB);
	assert_int_equal(bp_amd_ccx_l3(0x15, 0x02), 0);
}

static void llc_from_cpuid__this_guest__one_ccx(void **state)
{
	struct fake_cpu c = FAKE_CPU(zen5_guest);
	char source[128] = "";

	assert_int_equal(bp_llc_from_cpuid(fake_cpuid, &c, source, sizeof(source)), 32 * MiB);
	assert_string_equal(source, "cpuid 0x80000006 (socket L3 508 MiB, one CCX: 32 MiB)");
}

static void llc_from_cpuid__zen2__16mib_ccx(void **state)
{
	struct fake_cpu c = FAKE_CPU(zen2_guest);
	char source[128] = "";

	assert_int_equal(bp_llc_from_cpuid(fake_cpuid, &c, source, sizeof(source)), 16 * MiB);
	assert_string_equal(source, "cpuid 0x80000006 (socket L3 256 MiB, one CCX: 16 MiB)");
}

static void llc_from_cpuid__intel__leaf4_l3(void **state)
{
	struct fake_cpu c = FAKE_CPU(intel_adl);
	char source[128] = "";

	assert_int_equal(bp_llc_from_cpuid(fake_cpuid, &c, source, sizeof(source)), 25 * MiB);
	assert_string_equal(source, "cpuid 4 (L3 25 MiB)");
}

static void llc_from_cpuid__amd_8000001d__ccx_l3(void **state)
{
	struct fake_cpu c = FAKE_CPU(zen3_metal);
	char source[128] = "";

	assert_int_equal(bp_llc_from_cpuid(fake_cpuid, &c, source, sizeof(source)), 32 * MiB);
	assert_string_equal(source, "cpuid 0x8000001d (L3 32 MiB)");
}

static void llc_from_cpuid__intel_without_leaf4__l2(void **state)
{
	static const struct fake_leaf old[] = {
		{ 0x0, 0, { 0x00000002, 0x756e6547, 0x6c65746e, 0x49656e69 } },
		{ 0x80000000, 0, { 0x80000008, 0, 0, 0 } },
		{ 0x80000006, 0, { 0, 0, 0x01006040, 0 } },
	};
	struct fake_cpu c = FAKE_CPU(old);
	char source[128] = "";

	assert_int_equal(bp_llc_from_cpuid(fake_cpuid, &c, source, sizeof(source)), 256 * KiB);
	assert_string_equal(source, "cpuid 0x80000006 (L2 256 KiB, no L3)");
}

static void llc_bytes__this_machine__reported(void **state)
{
	char source[128] = "";
	uint64_t bytes = bp_llc_bytes(NULL, source, sizeof(source));

	print_message("bp_llc_bytes(NULL) = %llu: %s\n", (unsigned long long)bytes, source);
	assert_true(source[0] != '\0');
#if defined(__x86_64__) || defined(__i386__)
	assert_true(bytes > 0);
#endif
}

/* ------------------------------------------------------------ state machine */

#define BIG	(64 * MiB)

static void probe__window_and_every__clear_then_read_on_time(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	int ms;

	put_proc(100, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 100, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(100));
	assert_int_equal(evidence(m, 100, T(0)).probes, 0);

	/* not read before the window is over */
	put_rollup(100, BIG / KiB, 2000);
	bp_memprobe__tick(m, T(500));
	bp_memprobe__tick(m, T(900));
	assert_false(took_clear(100));
	assert_int_equal(evidence(m, 100, T(900)).probes, 0);

	put_rollup(100, 65600, 50000);
	bp_memprobe__tick(m, T(1000));
	ev = evidence(m, 100, T(1000));
	assert_int_equal(ev.probes, 1);
	assert_int_equal(ev.wss_max, 50000 * KiB);
	assert_near(ev.wss_max_per_s, 50000.0 * KiB, 1);
	/* smaps_rollup's Rss at the read, then stat's at the next look */
	assert_int_equal(ev.rss, BIG);

	/* then idle until 5 s after the clear, while staying busy */
	for (ms = 1100; ms < 5000; ms += 100) {
		if (ms % 1000 == 0)
			bp_memprobe__seen(m, 100, 1.0, T(ms));
		bp_memprobe__tick(m, T(ms));
		assert_false(took_clear(100));
	}
	bp_memprobe__tick(m, T(5000));
	assert_true(took_clear(100));
	/* a read that overshoots the window by a tick counts the real window */
	put_rollup(100, BIG / KiB, 100);
	bp_memprobe__tick(m, T(6100));
	ev = evidence(m, 100, T(6100));
	assert_int_equal(ev.probes, 2);
	assert_int_equal(ev.wss_max, 50000 * KiB);
}

static void probe__low_cpu_small_rss_or_stale__never_cleared(void **state)
{
	struct bp_memprobe *m;
	int ms;

	put_proc(101, 5000, BIG);		/* low CPU */
	put_proc(102, 5000, 16 * MiB);		/* fits in the LLC */
	put_proc(103, 5000, BIG);		/* busy once, then not seen */
	m = fake_probe();
	bp_memprobe__seen(m, 103, 2.0, T(0));
	for (ms = 4000; ms <= 20000; ms += 100) {
		if (ms % 1000 == 0) {
			bp_memprobe__seen(m, 101, 0.3, T(ms));
			bp_memprobe__seen(m, 102, 2.0, T(ms));
		}
		bp_memprobe__tick(m, T(ms));
	}
	assert_false(took_clear(101));
	assert_false(took_clear(102));
	assert_false(took_clear(103));
	/* all three still have fault evidence */
	assert_true(evidence(m, 101, T(20000)).valid);
	assert_true(evidence(m, 102, T(20000)).valid);
	assert_true(evidence(m, 103, T(20000)).valid);
}

static void probe__rss_grows_past_llc__becomes_candidate(void **state)
{
	struct bp_memprobe *m;

	put_proc(104, 5000, 16 * MiB);
	m = fake_probe();
	bp_memprobe__seen(m, 104, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_false(took_clear(104));
	put_stat(104, 100, 5, 5000, BIG);
	bp_memprobe__seen(m, 104, 1.0, T(1000));
	bp_memprobe__tick(m, T(1000));
	assert_true(took_clear(104));
}

static void faults__counted_since_first_sight(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;

	put_proc(110, 5000, 16 * MiB);
	put_stat(110, 1000, 20, 5000, 16 * MiB);
	m = fake_probe();
	bp_memprobe__seen(m, 110, 0.1, T(0));
	ev = evidence(m, 110, T(0));
	assert_true(ev.valid);
	assert_int_equal(ev.minflt, 0);
	assert_int_equal(ev.majflt, 0);
	assert_int_equal(ev.rss, 16 * MiB);

	put_stat(110, 1750, 23, 5000, 20 * MiB);
	ev = evidence(m, 110, T(2500));
	assert_int_equal(ev.minflt, 750);
	assert_int_equal(ev.majflt, 3);
	assert_near(ev.fault_window_s, 2.5, 1e-9);
	assert_int_equal(ev.rss, 20 * MiB);
	assert_int_equal(ev.probes, 0);
}

static void exited__last_values_stand__no_more_proc_access(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	int ms;

	put_proc(120, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 120, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(120));
	put_stat(120, 150, 5, 5000, BIG);
	bp_memprobe__exited(m, 120);
	/* the probe in flight is dropped, and the pid left alone */
	put_stat(120, 400, 9, 5000, BIG);
	for (ms = 100; ms <= 12000; ms += 100) {
		if (ms % 1000 == 0)
			bp_memprobe__seen(m, 120, 1.0, T(ms));
		bp_memprobe__tick(m, T(ms));
	}
	assert_false(took_clear(120));
	ev = evidence(m, 120, T(12000));
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 0);
	assert_int_equal(ev.minflt, 0);	/* read at first sight only, before the exit */
	assert_near(ev.fault_window_s, 0, 1e-9);
	bp_memprobe__exited(m, 999);		/* unknown pid: nothing */
}

static void vanished__marked_gone__evidence_kept(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	char path[512];

	put_proc(121, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 121, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(121));
	put_stat(121, 130, 6, 5000, BIG);
	assert_int_equal(evidence(m, 121, T(500)).minflt, 30);
	snprintf(path, sizeof(path), "%s/121", root);
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	bp_memprobe__tick(m, T(1000));	/* the read finds nothing */
	ev = evidence(m, 121, T(1000));
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 0);
	assert_int_equal(ev.minflt, 30);
	assert_int_equal(ev.majflt, 1);
	assert_near(ev.fault_window_s, 0.5, 1e-9);
}

static void pid_reuse__not_probed_as_old__new_one_starts_over(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;

	put_proc(130, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 130, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(130));
	put_rollup(130, BIG / KiB, 40000);
	bp_memprobe__tick(m, T(1000));
	assert_int_equal(evidence(m, 130, T(1000)).probes, 1);

	/* the process exits unnoticed and another one gets pid 130 */
	put_stat(130, 7, 0, 9000, BIG);
	bp_memprobe__seen(m, 130, 1.0, T(4000));	/* that seen is the new one's */
	ev = evidence(m, 130, T(4000));
	assert_int_equal(ev.probes, 0);
	assert_int_equal(ev.minflt, 0);
	assert_true(ev.valid);
	bp_memprobe__tick(m, T(4000));
	assert_true(took_clear(130));
}

static void pid_reuse__found_at_clear__no_clear(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;

	put_proc(131, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 131, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(131));
	put_rollup(131, BIG / KiB, 40000);
	bp_memprobe__tick(m, T(1000));
	bp_memprobe__seen(m, 131, 1.0, T(4000));

	put_stat(131, 7, 0, 9000, BIG);
	bp_memprobe__tick(m, T(5000));
	assert_false(took_clear(131));
	ev = evidence(m, 131, T(5000));
	assert_int_equal(ev.probes, 1);
	assert_int_equal(ev.wss_max, 40000 * KiB);
	assert_int_equal(ev.minflt, 0);

	/* after exited(), only a seen() proves the new process */
	bp_memprobe__exited(m, 131);
	bp_memprobe__tick(m, T(6000));
	assert_false(took_clear(131));
	bp_memprobe__seen(m, 131, 1.0, T(7000));
	bp_memprobe__tick(m, T(7000));
	assert_true(took_clear(131));
}

static void tick__two_due__one_clear_per_tick(void **state)
{
	struct bp_memprobe *m;
	bool a, b;

	put_proc(140, 5000, BIG);
	put_proc(141, 5001, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 140, 1.0, T(0));
	bp_memprobe__seen(m, 141, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	a = took_clear(140);
	b = took_clear(141);
	assert_true(a != b);
	bp_memprobe__tick(m, T(100));
	assert_true(took_clear(a ? 141 : 140));
	assert_false(took_clear(a ? 140 : 141));
}

static void probe__proc_files_missing__quiet_partial(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	char path[512];

	put_proc(150, 5000, BIG);
	snprintf(path, sizeof(path), "%s/150/smaps_rollup", root);
	assert_int_equal(unlink(path), 0);
	m = fake_probe();
	bp_memprobe__seen(m, 150, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(150));
	bp_memprobe__tick(m, T(1000));
	ev = evidence(m, 150, T(1000));
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 0);

	/* never seen: -ENOENT; seen but no stat: present, not valid */
	assert_int_equal(bp_memprobe__evidence(m, 151, T(0), &ev), -ENOENT);
	bp_memprobe__seen(m, 152, 1.0, T(0));
	bp_memprobe__tick(m, T(100));
	ev = evidence(m, 152, T(100));
	assert_false(ev.valid);
}

static void table__over_cap__least_recently_seen_dropped(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	pid_t pid;

	/* no /proc at all: entries without evidence, which is enough here */
	m = fake_probe();
	for (pid = 1; pid <= BP_MEMPROBE_MAX_PROCS; pid++)
		bp_memprobe__seen(m, pid, 0.1, T(0));
	bp_memprobe__seen(m, 1, 0.1, T(1000));
	bp_memprobe__seen(m, BP_MEMPROBE_MAX_PROCS + 1, 0.1, T(1000));
	assert_int_equal(bp_memprobe__evidence(m, 1, T(1000), &ev), 0);
	assert_int_equal(bp_memprobe__evidence(m, 2, T(1000), &ev), -ENOENT);
	assert_int_equal(bp_memprobe__evidence(m, 3, T(1000), &ev), 0);
	assert_int_equal(bp_memprobe__evidence(m, BP_MEMPROBE_MAX_PROCS + 1, T(1000), &ev), 0);
	bp_memprobe__tick(m, T(1100));
}

static void new__defaults__llc_detected(void **state)
{
	struct bp_memprobe *m = bp_memprobe__new(NULL);

	assert_non_null(m);
	assert_true(bp_memprobe__llc_bytes(m) > 0);
	bp_memprobe__free(m);
	bp_memprobe__free(NULL);
}

/* ------------------------------------------------------------ a real process */

#define CHILD_BYTES	(64 * MiB)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void __attribute__((noreturn)) toucher(int ready_fd, pid_t parent)
{
	volatile unsigned char *buf;
	size_t i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	buf = mmap(NULL, CHILD_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(1);
	for (i = 0; i < CHILD_BYTES; i += 64)
		buf[i] = 1;
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	for (;;)
		for (i = 0; i < CHILD_BYTES; i += 64)
			buf[i]++;
}

/* probe the child for real; no assertions here, so that the caller always reaps it */
static int probe_child(pid_t pid, int ready_fd, struct bp_mem_evidence *ev)
{
	struct bp_memprobe_opts o = {
		.llc_bytes = 32 * MiB,
		.window_s = 0.3,
	};
	struct pollfd pfd = { .fd = ready_fd, .events = POLLIN };
	uint64_t start, now, last_seen = 0;
	struct bp_memprobe *m;
	char c;
	int err = -ETIMEDOUT;

	if (poll(&pfd, 1, 10000) != 1 || read(ready_fd, &c, 1) != 1)
		return -EIO;
	m = bp_memprobe__new(&o);
	if (!m)
		return -ENOMEM;
	start = mono_ns();
	for (now = start; now - start < 10000000000ULL; now = mono_ns()) {
		/* the session reports CPU use after each drain, about every second */
		if (!last_seen || now - last_seen >= 1000000000ULL) {
			bp_memprobe__seen(m, pid, 1.0, now);
			last_seen = now;
		}
		bp_memprobe__tick(m, now);
		if (bp_memprobe__evidence(m, pid, now, ev) == 0 && ev->probes >= 1) {
			err = 0;
			break;
		}
		usleep(50000);
	}
	bp_memprobe__free(m);
	return err;
}

static void real_child__touching_64mib__wss_and_rss(void **state)
{
	struct bp_mem_evidence ev = {};
	pid_t parent = getpid(), pid;
	int fds[2], err;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		toucher(fds[1], parent);
	}
	close(fds[1]);
	err = probe_child(pid, fds[0], &ev);
	close(fds[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	print_message("child: wss_max %.1f MiB (%.1f MiB/s), rss %.1f MiB, minflt %llu\n",
		      (double)ev.wss_max / MiB, ev.wss_max_per_s / MiB, (double)ev.rss / MiB,
		      (unsigned long long)ev.minflt);
	assert_int_equal(err, 0);
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 1);
	assert_true(ev.wss_max >= 32 * MiB);
	assert_true(ev.rss >= 64 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_stat__weird_comm__fields_after_last_paren),
		cmocka_unit_test(parse_stat__real_self__has_start_and_rss),
		cmocka_unit_test(parse_stat__truncated_or_no_comm__einval),
		cmocka_unit_test(parse_rollup__rss_and_referenced__bytes),
		cmocka_unit_test(cache_size_parse__suffixes),
		cmocka_unit_test_setup_teardown(llc_sysfs__four_indexes__picks_l3, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(llc_sysfs__instruction_cache_highest__ignored,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(llc_sysfs__no_cache_dir__zero, tree_setup,
						tree_teardown),
		cmocka_unit_test(cpuid_cache_desc__intel_leaf4__sizes),
		cmocka_unit_test(cpuid_cache_desc__this_guest__type0_enoent),
		cmocka_unit_test(cpuid_l2_l3__this_guest__socket_l3),
		cmocka_unit_test(cpuid_family_model__decoded),
		cmocka_unit_test(amd_ccx_l3__caps_by_family),
		cmocka_unit_test(llc_from_cpuid__this_guest__one_ccx),
		cmocka_unit_test(llc_from_cpuid__zen2__16mib_ccx),
		cmocka_unit_test(llc_from_cpuid__intel__leaf4_l3),
		cmocka_unit_test(llc_from_cpuid__amd_8000001d__ccx_l3),
		cmocka_unit_test(llc_from_cpuid__intel_without_leaf4__l2),
		cmocka_unit_test(llc_bytes__this_machine__reported),
		cmocka_unit_test_setup_teardown(probe__window_and_every__clear_then_read_on_time,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(probe__low_cpu_small_rss_or_stale__never_cleared,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(probe__rss_grows_past_llc__becomes_candidate,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(faults__counted_since_first_sight, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(exited__last_values_stand__no_more_proc_access,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(vanished__marked_gone__evidence_kept, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(pid_reuse__not_probed_as_old__new_one_starts_over,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(pid_reuse__found_at_clear__no_clear, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(tick__two_due__one_clear_per_tick, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(probe__proc_files_missing__quiet_partial,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(table__over_cap__least_recently_seen_dropped,
						tree_setup, tree_teardown),
		cmocka_unit_test(new__defaults__llc_detected),
		cmocka_unit_test(real_child__touching_64mib__wss_and_rss),
	};

	return cmocka_run_group_tests_name("memprobe", tests, NULL, NULL);
}
