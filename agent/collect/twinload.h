/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Twin loading: the kernel verifies a program in the thread that loads
 * it, and libbpf loads an object's programs one after another, so a
 * start spent most of its time verifying on one CPU while the others
 * idled (docs/kernels.md). Three opens of one BPF object split the work:
 * the first creates every map and loads no program; two more reuse its
 * maps and each load their share of the programs, in two threads.
 *
 * These helpers work on bpf_objects; the loader owns the skeletons.
 */
#ifndef BP_COLLECT_TWINLOAD_H
#define BP_COLLECT_TWINLOAD_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;

/*
 * Give dst, a fresh open of the same ELF as src, src's configuration:
 * each map's size, creation and initial value (the .rodata that steers
 * verification), each program's autoload and autoattach. 0 or -errno.
 */
int bp_twin_copy_config(struct bpf_object *dst, struct bpf_object *src);

/*
 * A path to an empty BTF for the maps-only open (its btf_custom_path):
 * without one, libbpf parses the kernel's whole BTF (5 MB, 10 to 15 ms)
 * for CO-RE relocations even when no program is loaded. *fd is the memfd
 * behind the path, to close after the load. 0 or -errno.
 */
int bp_twin_empty_btf(char *path, size_t len, int *fd);

/* no program of obj is loaded: it only creates the maps */
void bp_twin_maps_only(struct bpf_object *obj);

/*
 * Keep loading only the programs named in names (in_list) or only the
 * others (!in_list); the rest are left out of obj's load.
 */
void bp_twin_keep(struct bpf_object *obj, const char *const *names, size_t n, bool in_list);

/*
 * Pages for a load's parse of the kernel's BTF, mapped ahead in one call,
 * in the calling thread's own malloc arena: each libbpf open parses the
 * kernel's BTF into fresh heap (the file read, a copy of it, an index),
 * and in a guest every first touch of a page is a fault that leaves the
 * guest. bytes is what the parse will take. Large allocations stay in
 * the heap and freed memory is kept until bp_twin_heap_done().
 */
void bp_twin_heap_ready(size_t bytes);
/*
 * After the loads (bytes as given to bp_twin_heap_ready()): malloc's
 * thresholds where its own would have moved for such a parse, and the
 * kept memory given back to the kernel
 */
void bp_twin_heap_done(size_t bytes);

/* dst's maps are the maps src created (same ELF, src loaded). 0 or -errno. */
int bp_twin_reuse_maps(struct bpf_object *dst, struct bpf_object *src);

#endif
