// SPDX-License-Identifier: GPL-2.0
/*
 * Twin loading's configuration copy and program split, on the real BPF
 * object (opening it needs no privileges; loading is the integration
 * tests' and every root test's: all of them load through the twin).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "boundprof.skel.h"
#include "dump.skel.h"
#include "collect/twinload.h"

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l, (void)f, (void)ap;
	return 0;
}

/* sizes, creation, .rodata and autoload travel; the twin was opened with the defaults */
static void copy_config__twin_is_configured_like_its_source(void **state)
{
	struct boundprof_bpf *src = boundprof_bpf__open(), *dst = boundprof_bpf__open();
	const uint8_t *a, *b;
	size_t na, nb;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	assert_int_equal(bpf_map__set_max_entries(src->maps.oncpu0, 12345), 0);
	assert_int_equal(bpf_map__set_autocreate(src->maps.io0, false), 0);
	src->rodata->filter_targets = true;
	src->rodata->follow_skip_tgid = 4242;
	assert_int_equal(bpf_program__set_autoload(src->progs.bp_switch, true), 0);
	bpf_program__set_autoattach(src->progs.bp_io_sweep, false);
	assert_int_not_equal(bpf_map__max_entries(dst->maps.oncpu0), 12345);

	assert_int_equal(bp_twin_copy_config(dst->obj, src->obj), 0);
	assert_int_equal(bpf_map__max_entries(dst->maps.oncpu0), 12345);
	assert_false(bpf_map__autocreate(dst->maps.io0));
	assert_true(bpf_map__autocreate(dst->maps.oncpu1));
	assert_true(dst->rodata->filter_targets);
	assert_int_equal(dst->rodata->follow_skip_tgid, 4242);
	a = bpf_map__initial_value(src->maps.rodata, &na);
	b = bpf_map__initial_value(dst->maps.rodata, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na);
	assert_true(bpf_program__autoload(dst->progs.bp_switch));
	assert_false(bpf_program__autoattach(dst->progs.bp_io_sweep));
	assert_int_equal(bpf_program__autoload(dst->progs.bp_iter_tasks),
			 bpf_program__autoload(src->progs.bp_iter_tasks));
	boundprof_bpf__destroy(src);
	boundprof_bpf__destroy(dst);
}

/* the two shares are disjoint and together are what one load would load */
static void keep__shares_partition_the_programs(void **state)
{
	static const char *const twin[] = { "bp_switch", "bp_wakeup" };
	struct boundprof_bpf *one = boundprof_bpf__open(), *main = boundprof_bpf__open(),
			     *other = boundprof_bpf__open();
	struct bpf_program *p, *m = NULL, *o = NULL;
	int loaded = 0, in_twin = 0;

	(void)state;
	assert_non_null(one);
	assert_non_null(main);
	assert_non_null(other);
	bpf_object__for_each_program(p, one->obj)
		bpf_program__set_autoload(p, true);
	assert_int_equal(bp_twin_copy_config(main->obj, one->obj), 0);
	assert_int_equal(bp_twin_copy_config(other->obj, one->obj), 0);
	bp_twin_keep(main->obj, twin, 2, false);
	bp_twin_keep(other->obj, twin, 2, true);
	bpf_object__for_each_program(p, one->obj) {
		m = bpf_object__next_program(main->obj, m);
		o = bpf_object__next_program(other->obj, o);
		assert_non_null(m);
		assert_non_null(o);
		/* exactly one of the two loads it */
		assert_true(bpf_program__autoload(m) != bpf_program__autoload(o));
		loaded++;
		if (bpf_program__autoload(o)) {
			in_twin++;
			assert_true(!strcmp(bpf_program__name(o), "bp_switch") ||
				    !strcmp(bpf_program__name(o), "bp_wakeup"));
		}
	}
	assert_true(loaded > 2);
	assert_int_equal(in_twin, 2);
	bp_twin_maps_only(one->obj);
	bpf_object__for_each_program(p, one->obj)
		assert_false(bpf_program__autoload(p));
	boundprof_bpf__destroy(one);
	boundprof_bpf__destroy(main);
	boundprof_bpf__destroy(other);
}

/* another ELF's object is refused, never half-copied by position */
static void copy_config__refuses_another_object(void **state)
{
	struct boundprof_bpf *src = boundprof_bpf__open();
	struct dump_bpf *other = dump_bpf__open();

	(void)state;
	assert_non_null(src);
	assert_non_null(other);
	assert_int_equal(bp_twin_copy_config(other->obj, src->obj), -EINVAL);
	dump_bpf__destroy(other);
	boundprof_bpf__destroy(src);
}

/* the maps-only open's BTF: one libbpf parses, with no types (not the kernel's 126k) */
static void empty_btf__parses_with_no_types(void **state)
{
	struct btf *btf;
	char path[32];
	int fd;

	(void)state;
	assert_int_equal(bp_twin_empty_btf(path, sizeof(path), &fd), 0);
	assert_true(fd >= 0);
	btf = btf__parse(path, NULL);
	assert_int_equal(libbpf_get_error(btf), 0);
	assert_int_equal(btf__type_cnt(btf), 1);	/* type 0, void, only */
	btf__free(btf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copy_config__twin_is_configured_like_its_source),
		cmocka_unit_test(keep__shares_partition_the_programs),
		cmocka_unit_test(copy_config__refuses_another_object),
		cmocka_unit_test(empty_btf__parses_with_no_types),
	};

	libbpf_set_print(silent);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
