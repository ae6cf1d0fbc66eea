// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "collect/corebtf.h"
#include "collect/twinload.h"

int bp_twin_copy_config(struct bpf_object *dst, struct bpf_object *src)
{
	struct bpf_program *sp, *dp = NULL;
	struct bpf_map *sm, *dm = NULL;
	int err;

	bpf_object__for_each_map(sm, src) {
		const void *init;
		size_t sz;

		dm = bpf_object__next_map(dst, dm);
		if (!dm || strcmp(bpf_map__name(dm), bpf_map__name(sm)))
			return -EINVAL;	/* not the same ELF */
		err = bpf_map__set_max_entries(dm, bpf_map__max_entries(sm));
		if (!err)
			err = bpf_map__set_autocreate(dm, bpf_map__autocreate(sm));
		if (err)
			return err;
		/* .kconfig is filled in at load, from the kernel's own configuration */
		init = bpf_map__initial_value(sm, &sz);
		if (init && !strstr(bpf_map__name(sm), ".kconfig") &&
		    (err = bpf_map__set_initial_value(dm, init, sz)))
			return err;
	}
	bpf_object__for_each_program(sp, src) {
		dp = bpf_object__next_program(dst, dp);
		if (!dp || strcmp(bpf_program__name(dp), bpf_program__name(sp)))
			return -EINVAL;
		err = bpf_program__set_autoload(dp, bpf_program__autoload(sp));
		if (err)
			return err;
		bpf_program__set_autoattach(dp, bpf_program__autoattach(sp));
	}
	return 0;
}

int bp_twin_empty_btf(char *path, size_t len, int *fd)
{
	struct btf *btf = btf__new_empty();
	const void *raw;
	__u32 sz;
	int err;

	*fd = -1;
	if (!btf)
		return -errno;
	raw = btf__raw_data(btf, &sz);
	err = raw ? bp_btf_memfd(raw, sz, path, len, fd) : -ENOMEM;
	btf__free(btf);
	return err;
}

void bp_twin_heap_ready(size_t bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t lo, hi;
	char *p;

	/* a parse's 5 MB buffers from the arena, not each from a fresh mmap */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	p = malloc(bytes);
	if (!p || page <= 0) {
		free(p);
		return;
	}
	lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	hi = ((uintptr_t)p + bytes) & ~((uintptr_t)page - 1);
	/* MADV_POPULATE_WRITE (5.14): a kernel without it leaves the faults to the parse */
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	free(p);
}

void bp_twin_heap_done(size_t bytes)
{
	/*
	 * What glibc's own sliding thresholds would hold after the parse's
	 * buffers came from mmap and were freed: requests up to half of it
	 * from the heap, kept up to twice that (mallopt(3)).
	 */
	size_t m = bytes / 2;

	if (m > (32 << 20))
		m = 32 << 20;
	if (m < 128 * 1024)
		m = 128 * 1024;
	mallopt(M_MMAP_THRESHOLD, (int)m);
	mallopt(M_TRIM_THRESHOLD, (int)(2 * m));
	malloc_trim(0);
}

void bp_twin_maps_only(struct bpf_object *obj)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, false);
}

void bp_twin_keep(struct bpf_object *obj, const char *const *names, size_t n, bool in_list)
{
	struct bpf_program *p;
	size_t i;

	bpf_object__for_each_program(p, obj) {
		for (i = 0; i < n && strcmp(bpf_program__name(p), names[i]); i++)
			;
		if ((i < n) != in_list)
			bpf_program__set_autoload(p, false);
	}
}

int bp_twin_reuse_maps(struct bpf_object *dst, struct bpf_object *src)
{
	struct bpf_map *sm, *dm = NULL;
	int err;

	bpf_object__for_each_map(sm, src) {
		dm = bpf_object__next_map(dst, dm);
		if (!dm)
			return -EINVAL;
		/* a map src did not create (block IO on a kernel without it) stays absent */
		if (bpf_map__fd(sm) < 0)
			continue;
		err = bpf_map__reuse_fd(dm, bpf_map__fd(sm));
		if (err)
			return err;
	}
	return 0;
}
