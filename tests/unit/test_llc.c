// SPDX-License-Identifier: GPL-2.0
/*
 * The last-level cache size (agent/proc/llc.c): from a fake sysfs tree, from
 * the CPUID registers of real CPUs (this guest among them), and from this
 * machine.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proc/llc.h"
#include "unit/builders.h"

#define KiB	1024ULL
#define MiB	(1024ULL * KiB)

static char root[64];

static int tree_setup(void **state)
{
	bld_tree_make(root, sizeof(root), "llc");
	return 0;
}

static int tree_teardown(void **state)
{
	bld_tree_remove(root);
	return 0;
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
		bld_tree_put(root, rel, "%s\n", val);                                            \
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

int main(void)
{
	const struct CMUnitTest tests[] = {
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
	};

	return cmocka_run_group_tests_name("llc", tests, NULL, NULL);
}
