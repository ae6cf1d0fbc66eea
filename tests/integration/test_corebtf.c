// SPDX-License-Identifier: GPL-2.0
/*
 * The relocation subset (agent/collect/corebtf.h) against the oracle it
 * replaces: libbpf relocating the same programs against the kernel's
 * whole BTF. Every program the loader loaded, in the skeleton and in its
 * twin, is loaded once more from a fresh open relocated against the
 * whole, and the two must be the same instructions (map file descriptors
 * aside: the second open holds its own).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "boundprof.skel.h"
#include "collect/loader.h"
#include "collect/twinload.h"

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l, (void)f, (void)ap;
	return 0;
}

/* a map's fd or value address in a 16-byte load: the open's own, not the relocation's */
static bool map_load(const struct bpf_insn *i)
{
	return i->code == (BPF_LD | BPF_IMM | BPF_DW) && i->src_reg;
}

/* loaded's share, relocated against the whole BTF: how many instructions compared */
static size_t compare_share(struct bpf_object *loaded)
{
	struct boundprof_bpf *whole = boundprof_bpf__open();
	struct bpf_program *p, *q;
	size_t compared = 0, i, n;

	assert_non_null(whole);
	assert_int_equal(bp_twin_copy_config(whole->obj, loaded), 0);
	assert_int_equal(bp_twin_reuse_maps(whole->obj, loaded), 0);
	assert_int_equal(boundprof_bpf__load(whole), 0);
	bpf_object__for_each_program(p, loaded) {
		const struct bpf_insn *a, *b;

		if (!bpf_program__autoload(p))
			continue;
		q = bpf_object__find_program_by_name(whole->obj, bpf_program__name(p));
		assert_non_null(q);
		n = bpf_program__insn_cnt(p);
		if (n != bpf_program__insn_cnt(q))
			fail_msg("%s: %zu instructions with the subset, %zu with the whole BTF",
				 bpf_program__name(p), n, bpf_program__insn_cnt(q));
		a = bpf_program__insns(p);
		b = bpf_program__insns(q);
		assert_non_null(a);
		assert_non_null(b);
		for (i = 0; i < n; i++) {
			bool skip_imm = map_load(&a[i]) || (i && map_load(&a[i - 1]));

			if (a[i].code != b[i].code || a[i].dst_reg != b[i].dst_reg ||
			    a[i].src_reg != b[i].src_reg || a[i].off != b[i].off ||
			    (!skip_imm && a[i].imm != b[i].imm))
				fail_msg("%s: instruction %zu differs: subset %02x %d %d %d %d, "
					 "whole %02x %d %d %d %d", bpf_program__name(p), i,
					 a[i].code, a[i].dst_reg, a[i].src_reg, a[i].off, a[i].imm,
					 b[i].code, b[i].dst_reg, b[i].src_reg, b[i].off, b[i].imm);
		}
		compared += n;
	}
	boundprof_bpf__destroy(whole);
	return compared;
}

static void check_mode(const struct bp_loader_opts *o)
{
	struct bp_loader *l;
	size_t n;

	assert_int_equal(bp_loader__open(&l, o), 0);
	/* this kernel's BTF is readable and holds every name: the subset was used */
	assert_true(l->core_btf_types > 0);
	n = compare_share(l->skel->obj);
	if (l->twin)
		n += compare_share(l->twin->obj);
	printf("  %u kernel types; %zu instructions the same as against the whole BTF\n",
	       l->core_btf_types, n);
	assert_true(n > 10000);
	bp_loader__free(l);
}

/* record -- COMMAND's programs: off-CPU with user stacks, peers followed, the twin */
static void subset__relocates_record_as_the_whole_btf(void **state)
{
	struct bp_loader_opts o = {
		.hz = 99, .drain_interval_s = 1, .filter = true, .offcpu = true,
		.offcpu_ustacks = 1, .unwind_rows = 4096, .follow_peers = true,
	};

	(void)state;
	check_mode(&o);
}

/* the agent's: system-wide, one serial load */
static void subset__relocates_agent_as_the_whole_btf(void **state)
{
	struct bp_loader_opts o = {
		.hz = 99, .drain_interval_s = 1, .offcpu = true, .unwind_rows = 4096,
		.serial_load = true,
	};

	(void)state;
	check_mode(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(subset__relocates_record_as_the_whole_btf),
		cmocka_unit_test(subset__relocates_agent_as_the_whole_btf),
	};

	libbpf_set_print(silent);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
