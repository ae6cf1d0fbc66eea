// SPDX-License-Identifier: GPL-2.0
/*
 * The size of the last-level cache one core uses: sysfs first, then CPUID.
 * docs/memprobe.md has why it matters and what each source reports.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "proc/llc.h"
#include "util/readfile.h"

#define KiB		1024ULL
#define MiB		(1024ULL * KiB)

static void fmt_size(char *buf, size_t len, uint64_t bytes)
{
	if (bytes >= MiB && bytes % MiB == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes / MiB));
	else if (bytes % KiB == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(bytes / KiB));
	else
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
}

static void set_source(char *source, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_source(char *source, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!source || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(source, len, fmt, ap);
	va_end(ap);
}

uint64_t bp_cache_size_parse(const char *text)
{
	unsigned long long v;
	char *end;

	while (*text == ' ')
		text++;
	if (*text < '0' || *text > '9')
		return 0;
	v = strtoull(text, &end, 10);
	switch (*end) {
	case 'K':
	case 'k':
		return v * KiB;
	case 'M':
		return v * MiB;
	case 'G':
		return v * 1024 * MiB;
	case '\0':
	case '\n':
		return v;
	default:
		return 0;
	}
}

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

/* <root>/devices/system/cpu/cpu0/cache/index<idx>/<name>, newline cut; bytes or -errno */
static ssize_t cache_attr(const char *root, unsigned int idx, const char *name, char *buf,
			  size_t len)
{
	char path[512];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%u/%s", root, idx,
		 name);
	n = bp_read_small(path, buf, len);
	if (n >= 0)
		chomp(buf);
	return n;
}

uint64_t bp_llc_from_sysfs(const char *sysfs_root, char *source, size_t len)
{
	char buf[256], cpus[128] = "";
	unsigned int best_level = 0, level, idx;
	uint64_t best = 0, bytes;

	if (!sysfs_root)
		sysfs_root = "/sys";
	/* index numbers are dense from 0: the first missing one ends them */
	for (idx = 0; idx < 32; idx++) {
		if (cache_attr(sysfs_root, idx, "level", buf, sizeof(buf)) <= 0)
			break;
		level = (unsigned int)strtoul(buf, NULL, 10);
		if (cache_attr(sysfs_root, idx, "type", buf, sizeof(buf)) <= 0 ||
		    (strcmp(buf, "Data") && strcmp(buf, "Unified")))
			continue;
		if (cache_attr(sysfs_root, idx, "size", buf, sizeof(buf)) <= 0)
			continue;
		bytes = bp_cache_size_parse(buf);
		if (!bytes || level < best_level || (level == best_level && bytes <= best))
			continue;
		best = bytes;
		best_level = level;
		if (cache_attr(sysfs_root, idx, "shared_cpu_list", cpus, sizeof(cpus)) < 0)
			cpus[0] = '\0';
	}
	if (!best)
		return 0;
	fmt_size(buf, sizeof(buf), best);
	if (cpus[0])
		set_source(source, len, "sysfs cpu0 L%u %s (cpus %s)", best_level, buf, cpus);
	else
		set_source(source, len, "sysfs cpu0 L%u %s", best_level, buf);
	return best;
}

int bp_cpuid_cache_desc(const struct bp_cpuid_regs *r, unsigned int *level,
			unsigned int *type, uint64_t *bytes)
{
	uint64_t ways = (r->ebx >> 22) + 1;
	uint64_t parts = ((r->ebx >> 12) & 0x3ff) + 1;
	uint64_t line = (r->ebx & 0xfff) + 1;
	uint64_t sets = (uint64_t)r->ecx + 1;

	*type = r->eax & 0x1f;
	if (!*type)
		return -ENOENT;
	*level = (r->eax >> 5) & 0x7;
	*bytes = ways * parts * line * sets;
	return 0;
}

void bp_cpuid_l2_l3(const struct bp_cpuid_regs *r, uint64_t *l2, uint64_t *l3)
{
	*l2 = (uint64_t)(r->ecx >> 16) * KiB;
	*l3 = (uint64_t)(r->edx >> 18) * 512 * KiB;
}

void bp_cpuid_family_model(uint32_t eax, unsigned int *family, unsigned int *model)
{
	unsigned int base = (eax >> 8) & 0xf;

	*family = base;
	*model = (eax >> 4) & 0xf;
	if (base == 0xf)
		*family += (eax >> 20) & 0xff;
	if (base == 0xf || base == 0x6)
		*model |= ((eax >> 16) & 0xf) << 4;
}

/*
 * On AMD, 0x80000006 reports the L3 of the whole socket (every CCD), but a
 * core only allocates into its own CCX's slice. Zen 3, 4 and 5 (families
 * 19h and 1Ah) have 8-core CCXs with 32 MiB; Zen 2 (17h, models 30h and up)
 * 4-core CCXs with 16 MiB; Zen 1/Zen+ (17h below 30h) and Hygon (18h, a Zen
 * 1 derivative) 8 MiB. Smaller parts report less than the cap and keep
 * their own figure. V-Cache parts (96 MiB per CCX) are undercounted here,
 * but they are bare metal, where sysfs answers first.
 */
uint64_t bp_amd_ccx_l3(unsigned int family, unsigned int model)
{
	if (family == 0x17)
		return model >= 0x30 ? 16 * MiB : 8 * MiB;
	if (family == 0x18)
		return 8 * MiB;
	if (family >= 0x19)
		return 32 * MiB;
	return 0;
}

/* the highest-level data or unified cache a leaf-4-style leaf describes */
static uint64_t scan_cache_leaf(bp_cpuid_fn fn, void *ctx, uint32_t leaf, unsigned int *out_level)
{
	struct bp_cpuid_regs r;
	unsigned int sub, level, type, best_level = 0;
	uint64_t bytes, best = 0;

	for (sub = 0; sub < 16; sub++) {
		memset(&r, 0, sizeof(r));
		if (!fn(ctx, leaf, sub, &r))
			break;
		if (bp_cpuid_cache_desc(&r, &level, &type, &bytes))
			break;
		if (type != 1 && type != 3)
			continue;
		if (level > best_level || (level == best_level && bytes > best)) {
			best = bytes;
			best_level = level;
		}
	}
	*out_level = best_level;
	return best;
}

uint64_t bp_llc_from_cpuid(bp_cpuid_fn fn, void *ctx, char *source, size_t len)
{
	struct bp_cpuid_regs r = {};
	char vendor[13], a[32], b[32];
	unsigned int family = 0, model = 0, level;
	uint64_t bytes, l2, l3, cap;
	bool amd;

	if (!fn(ctx, 0, 0, &r))
		return 0;
	memcpy(vendor, &r.ebx, 4);
	memcpy(vendor + 4, &r.edx, 4);
	memcpy(vendor + 8, &r.ecx, 4);
	vendor[12] = '\0';
	amd = !strcmp(vendor, "AuthenticAMD") || !strcmp(vendor, "HygonGenuine");
	memset(&r, 0, sizeof(r));
	if (fn(ctx, 1, 0, &r))
		bp_cpuid_family_model(r.eax, &family, &model);

	/* leaf 4 is reserved on AMD; other vendors (Zhaoxin too) use Intel's layout */
	bytes = scan_cache_leaf(fn, ctx, amd ? 0x8000001d : 4, &level);
	if (bytes) {
		fmt_size(a, sizeof(a), bytes);
		set_source(source, len, "cpuid %s (L%u %s)", amd ? "0x8000001d" : "4", level, a);
		return bytes;
	}

	memset(&r, 0, sizeof(r));
	if (!fn(ctx, 0x80000006, 0, &r))
		return 0;
	bp_cpuid_l2_l3(&r, &l2, &l3);
	if (l3) {
		cap = amd ? bp_amd_ccx_l3(family, model) : 0;
		fmt_size(a, sizeof(a), l3);
		if (cap && l3 > cap) {
			fmt_size(b, sizeof(b), cap);
			set_source(source, len, "cpuid 0x80000006 (socket L3 %s, one CCX: %s)", a, b);
			return cap;
		}
		set_source(source, len, "cpuid 0x80000006 (L3 %s)", a);
		return l3;
	}
	if (l2) {
		fmt_size(a, sizeof(a), l2);
		set_source(source, len, "cpuid 0x80000006 (L2 %s, no L3)", a);
		return l2;
	}
	return 0;
}

bool bp_cpuid_native(void *ctx, uint32_t leaf, uint32_t subleaf, struct bp_cpuid_regs *r)
{
#if defined(__x86_64__) || defined(__i386__)
	/* __get_cpuid_count checks the basic or extended maximum leaf first */
	return __get_cpuid_count(leaf, subleaf, &r->eax, &r->ebx, &r->ecx, &r->edx);
#else
	return false;
#endif
}

uint64_t bp_llc_bytes(const char *sysfs_root, char *source, size_t len)
{
	uint64_t bytes;

	set_source(source, len, "unknown");
	bytes = bp_llc_from_sysfs(sysfs_root, source, len);
	if (bytes)
		return bytes;
	return bp_llc_from_cpuid(bp_cpuid_native, NULL, source, len);
}
