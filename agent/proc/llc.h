/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The size of the last-level cache one core works with, the yardstick for
 * "does this working set fit in cache" (docs/classification.md): from sysfs,
 * else from CPUID, and a line saying which, for the evidence.
 */
#ifndef BP_LLC_H
#define BP_LLC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Bytes of last-level cache one core uses; 0 when unknown. Tries sysfs
 * (<sysfs_root>/devices/system/cpu/cpu0/cache), then CPUID (leaf 4 on
 * Intel, 0x8000001D on AMD, then 0x80000006, whose AMD L3 figure is the
 * whole socket's and is capped at one CCX's). *source says which, for the
 * evidence line.
 */
uint64_t bp_llc_bytes(const char *sysfs_root, char *source, size_t len);

/*
 * The pieces below are pure and exported for the unit tests.
 */

/* a sysfs cache size such as "32768K"; 0 when unparsable */
uint64_t bp_cache_size_parse(const char *text);
/* the highest-level data or unified cache of cpu0 in sysfs; 0 when none */
uint64_t bp_llc_from_sysfs(const char *sysfs_root, char *source, size_t len);

struct bp_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

/* runs CPUID leaf/subleaf; false when the leaf is beyond the CPU's maximum */
typedef bool (*bp_cpuid_fn)(void *ctx, uint32_t leaf, uint32_t subleaf,
			    struct bp_cpuid_regs *r);

/*
 * One subleaf of leaf 4 (Intel) or 0x8000001D (AMD), which share a layout:
 * 0 with the cache's level, type (1 data, 2 instruction, 3 unified) and
 * size, or -ENOENT for type 0 (no more caches).
 */
int bp_cpuid_cache_desc(const struct bp_cpuid_regs *r, unsigned int *level,
			unsigned int *type, uint64_t *bytes);
/* leaf 0x80000006: L2 and L3 sizes in bytes (0 when not reported) */
void bp_cpuid_l2_l3(const struct bp_cpuid_regs *r, uint64_t *l2, uint64_t *l3);
/* leaf 1 EAX: display family and model */
void bp_cpuid_family_model(uint32_t eax, unsigned int *family, unsigned int *model);
/* the L3 one core of this AMD/Hygon family can use (one CCX); 0 when no cap is known */
uint64_t bp_amd_ccx_l3(unsigned int family, unsigned int model);
/* bp_llc_bytes()'s CPUID part, with the instruction supplied by the caller */
uint64_t bp_llc_from_cpuid(bp_cpuid_fn fn, void *ctx, char *source, size_t len);

/* the CPUID instruction as a bp_cpuid_fn (ctx unused); false on other architectures */
bool bp_cpuid_native(void *ctx, uint32_t leaf, uint32_t subleaf, struct bp_cpuid_regs *r);

#endif /* BP_LLC_H */
