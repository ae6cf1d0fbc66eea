// SPDX-License-Identifier: GPL-2.0
/*
 * The relocation subset (agent/collect/corebtf.h) built from the real BPF
 * object and this kernel's BTF, read back by libbpf and compared with the
 * kernel's types as libbpf reads them from the whole. That the programs
 * relocate the same is tests/integration/test_corebtf.c's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "boundprof.skel.h"
#include "collect/corebtf.h"
#include "collect/kbtf.h"
#include "unit/symfix/symfix_test.h"

/* the kernel's BTF, or a loud skip: boundprof refuses to run without it */
static bool have_kernel_btf(void)
{
	if (access(BP_KBTF_PATH, R_OK) == 0)
		return true;
	fprintf(stderr, "SKIPPED: %s unreadable: this kernel has no BTF (or we are not root)\n",
		BP_KBTF_PATH);
	return false;
}

/* name's struct in sub is the kernel's: size, members, their names, offsets and bitfields */
static void same_struct(const struct btf *sub, const struct btf *kern, const char *name)
{
	int a = btf__find_by_name_kind(sub, name, BTF_KIND_STRUCT);
	int b = btf__find_by_name_kind(kern, name, BTF_KIND_STRUCT);
	const struct btf_type *ta, *tb;
	int i;

	assert_true(a > 0);
	assert_true(b > 0);
	ta = btf__type_by_id(sub, a);
	tb = btf__type_by_id(kern, b);
	assert_int_equal(ta->size, tb->size);
	assert_int_equal(btf_vlen(ta), btf_vlen(tb));
	for (i = 0; i < btf_vlen(ta); i++) {
		const struct btf_member *ma = &btf_members(ta)[i], *mb = &btf_members(tb)[i];
		const struct btf_type *fa = btf__type_by_id(sub, ma->type);
		const struct btf_type *fb = btf__type_by_id(kern, mb->type);

		assert_string_equal(btf__name_by_offset(sub, ma->name_off),
				    btf__name_by_offset(kern, mb->name_off));
		assert_int_equal(ma->offset, mb->offset);
		assert_int_equal(btf_kind(fa), btf_kind(fb));
		/* what is not behind a pointer is all there, of the kernel's size */
		if (btf_kind(fb) != BTF_KIND_PTR)
			assert_int_equal(btf__resolve_size(sub, ma->type),
					 btf__resolve_size(kern, mb->type));
	}
}

static void subset__holds_the_relocated_types_whole(void **state)
{
	struct bp_corebtf_stats st;
	struct btf *sub, *kern;
	struct bp_kbtf *kb;
	size_t elf_sz;
	const void *elf = boundprof_bpf__elf_bytes(&elf_sz);
	uint32_t raw_sz, id;
	void *raw;

	(void)state;
	if (!have_kernel_btf())
		skip();
	assert_int_equal(bp_kbtf__open(BP_KBTF_PATH, &kb), 0);
	assert_int_equal(bp_corebtf__build(kb, elf, elf_sz, &raw, &raw_sz, &st), 0);
	sub = btf__new(raw, raw_sz);
	assert_non_null(sub);
	kern = btf__load_vmlinux_btf();
	assert_non_null(kern);
	assert_true(st.relos > st.names);
	assert_true(st.names > 10);
	assert_int_equal(btf__type_cnt(sub), st.types + 1);
	/* a few hundred types, not the kernel's 100,000 and more */
	assert_true(st.types * 20 < btf__type_cnt(kern));
	same_struct(sub, kern, "task_struct");
	same_struct(sub, kern, "ns_common");
	same_struct(sub, kern, "vm_area_struct");
	/* a pointer points into the subset, or to void */
	for (id = 1; id < btf__type_cnt(sub); id++) {
		const struct btf_type *t = btf__type_by_id(sub, id);

		if (btf_kind(t) == BTF_KIND_PTR)
			assert_true(t->type < btf__type_cnt(sub));
	}
	btf__free(kern);
	btf__free(sub);
	free(raw);
	bp_kbtf__free(kb);
}

/* a kernel BTF without the names relocated: not built, libbpf takes the whole */
static void subset__kernel_lacks_a_name__enoent(void **state)
{
	struct btf *fake = btf__new_empty();
	struct bp_corebtf_stats st;
	struct bp_kbtf *kb;
	char path[512];
	size_t elf_sz;
	const void *elf = boundprof_bpf__elf_bytes(&elf_sz);
	const void *data;
	uint32_t raw_sz, sz;
	void *raw = (void *)1;
	int i;
	FILE *f;

	(void)state;
	assert_non_null(fake);
	i = btf__add_int(fake, "int", 4, BTF_INT_SIGNED);
	assert_true(i > 0);
	assert_true(btf__add_struct(fake, "task_struct", 4) > 0);
	assert_int_equal(btf__add_field(fake, "pid", i, 0, 0), 0);
	data = btf__raw_data(fake, &sz);
	snprintf(path, sizeof(path), "%s/btf", sf_tmpdir());
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, sz, f), sz);
	fclose(f);
	assert_int_equal(bp_kbtf__open(path, &kb), 0);
	assert_int_equal(bp_corebtf__build(kb, elf, elf_sz, &raw, &raw_sz, &st), -ENOENT);
	assert_null(raw);
	/* and bytes that are no BPF object */
	assert_int_equal(bp_corebtf__build(kb, "not an ELF file", 15, &raw, &raw_sz, &st),
			 -EINVAL);
	assert_null(raw);
	bp_kbtf__free(kb);
	btf__free(fake);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(subset__holds_the_relocated_types_whole),
		cmocka_unit_test_teardown(subset__kernel_lacks_a_name__enoent, sf_cleanup),
	};

	return cmocka_run_group_tests_name("corebtf", tests, NULL, sf_cleanup);
}
