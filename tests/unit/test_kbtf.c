// SPDX-License-Identifier: GPL-2.0
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

/* the record of id in its raw form: header and what follows it, by kind */
static size_t record_len(const struct btf_type *t)
{
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return sizeof(*t) + 4;
	case BTF_KIND_ARRAY:
		return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64:
		return sizeof(*t) + 12 * btf_vlen(t);
	case BTF_KIND_ENUM:
	case BTF_KIND_FUNC_PROTO:
		return sizeof(*t) + 8 * btf_vlen(t);
	default:
		return sizeof(*t);
	}
}

/* libbpf, which nobody here wrote, is the oracle: every type, byte for byte */
static void kernel_btf__every_type_as_libbpf_reads_it(void **state)
{
	static const struct {
		const char *name;
		int kind;
	} names[] = {
		{ "btf_trace_sched_switch", BTF_KIND_TYPEDEF },
		{ "btf_trace_block_rq_issue", BTF_KIND_TYPEDEF },
		{ ".data..percpu", BTF_KIND_DATASEC },
		{ "cgroup_subsys_id", BTF_KIND_ENUM },
		{ "task_struct", BTF_KIND_STRUCT },
		{ "no_such_type_in_any_kernel", BTF_KIND_STRUCT },
	};
	struct bp_kbtf *kb = NULL;
	struct btf *btf;
	uint32_t id, n;
	size_t i;

	if (!have_kernel_btf())
		skip();
	assert_int_equal(bp_kbtf__open(BP_KBTF_PATH, &kb), 0);
	btf = btf__load_vmlinux_btf();
	assert_non_null(btf);
	n = btf__type_cnt(btf);
	assert_int_equal(bp_kbtf__count(kb), n);
	assert_true(n > 1000);
	for (id = 1; id < n; id++) {
		const struct btf_type *a = bp_kbtf__type(kb, id), *b = btf__type_by_id(btf, id);

		assert_non_null(a);
		if (memcmp(a, b, record_len(b)))
			fail_msg("type %u (%s) differs from libbpf's", id,
				 btf__name_by_offset(btf, b->name_off));
		assert_string_equal(bp_kbtf__name(kb, a->name_off),
				    btf__name_by_offset(btf, b->name_off));
	}
	assert_null(bp_kbtf__type(kb, 0));
	assert_null(bp_kbtf__type(kb, n));
	assert_string_equal(bp_kbtf__name(kb, UINT32_MAX), "");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int want = btf__find_by_name_kind(btf, names[i].name, names[i].kind);

		assert_int_equal(bp_kbtf__find(kb, names[i].name, names[i].kind),
				 want > 0 ? want : -ENOENT);
	}
	btf__free(btf);
	bp_kbtf__free(kb);
}

/* the kernel's BTF copied into a file of ours, cut or damaged by edit */
static const char *copy_btf(const char *name, long cut_at, long poke_at, unsigned char poke)
{
	static char path[512];
	FILE *in = fopen(BP_KBTF_PATH, "rb"), *out;
	unsigned char buf[65536];
	long total = 0;
	size_t n;

	assert_non_null(in);
	snprintf(path, sizeof(path), "%s/%s", sf_tmpdir(), name);
	out = fopen(path, "wb");
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		if (cut_at >= 0 && total + (long)n > cut_at)
			n = cut_at - total;
		if (poke_at >= total && poke_at < total + (long)n)
			buf[poke_at - total] = poke;
		assert_int_equal(fwrite(buf, 1, n, out), n);
		total += n;
		if (cut_at >= 0 && total >= cut_at)
			break;
	}
	fclose(in);
	fclose(out);
	return path;
}

static void copy__whole__opens(void **state)
{
	struct bp_kbtf *kb = NULL;

	if (!have_kernel_btf())
		skip();
	assert_int_equal(bp_kbtf__open(copy_btf("whole", -1, -1, 0), &kb), 0);
	assert_true(bp_kbtf__find(kb, "task_struct", BTF_KIND_STRUCT) > 0);
	bp_kbtf__free(kb);
}

/* a file cut in its types or strings, or without the magic: -EINVAL, nothing read past it */
static void copy__cut_or_damaged__einval(void **state)
{
	struct btf_header h;
	struct bp_kbtf *kb = (void *)1;
	FILE *f;

	if (!have_kernel_btf())
		skip();
	f = fopen(BP_KBTF_PATH, "rb");
	assert_non_null(f);
	assert_int_equal(fread(&h, sizeof(h), 1, f), 1);
	fclose(f);
	assert_int_equal(bp_kbtf__open(copy_btf("types", h.hdr_len + h.type_off + h.type_len / 2,
						 -1, 0), &kb), -EINVAL);
	assert_null(kb);
	assert_int_equal(bp_kbtf__open(copy_btf("strs", h.hdr_len + h.str_off + h.str_len - 1,
						 -1, 0), &kb), -EINVAL);
	assert_int_equal(bp_kbtf__open(copy_btf("magic", -1, 0, 0x00), &kb), -EINVAL);
	assert_int_equal(bp_kbtf__open(copy_btf("header", 8, -1, 0), &kb), -EINVAL);
	/* a kind no kernel has, in the first type's info: the index stops there */
	assert_int_equal(bp_kbtf__open(copy_btf("kind", -1, h.hdr_len + h.type_off + 7, 0x7f),
				       &kb), -EINVAL);
	assert_int_equal(bp_kbtf__open("/nonexistent/btf", &kb), -ENOENT);
}

/*
 * The relocation subset (collect/corebtf.h) built from the real BPF object
 * and this kernel's BTF, read back by libbpf and compared with the
 * kernel's types as libbpf reads them from the whole. That the programs
 * relocate the same is tests/integration/test_corebtf.c's.
 */
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
		cmocka_unit_test(kernel_btf__every_type_as_libbpf_reads_it),
		cmocka_unit_test_teardown(copy__whole__opens, sf_cleanup),
		cmocka_unit_test_teardown(copy__cut_or_damaged__einval, sf_cleanup),
		cmocka_unit_test(subset__holds_the_relocated_types_whole),
		cmocka_unit_test_teardown(subset__kernel_lacks_a_name__enoent, sf_cleanup),
	};

	return cmocka_run_group_tests_name("kbtf", tests, NULL, sf_cleanup);
}
