/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's BTF, read for the few facts the loader decides on before
 * load (the tracepoints there are, a tracepoint's arguments, per-CPU
 * variable offsets, an enum's values), without libbpf's parser: libbpf
 * parses it once more at load anyway, and our own parse with it took
 * 60-75 ms of every start (a 5 MB file copied and indexed into fresh
 * pages). The file is mapped where the kernel allows it (6.16 and later)
 * and read otherwise; the types are indexed by id, nothing more.
 *
 * The type records are the kernel's (linux/btf.h): libbpf's inline
 * accessors (btf_vlen(), btf_members(), ...) work on them.
 */
#ifndef BP_KBTF_H
#define BP_KBTF_H

#include <stddef.h>
#include <stdint.h>

struct btf_type;
struct bp_kbtf;

#define BP_KBTF_PATH	"/sys/kernel/btf/vmlinux"

/* path's BTF (a raw BTF file, as the kernel exports it): 0 or -errno */
int bp_kbtf__open(const char *path, struct bp_kbtf **out);
void bp_kbtf__free(struct bp_kbtf *k);

/* the file's size in bytes */
size_t bp_kbtf__size(const struct bp_kbtf *k);
/* ids are 1 .. count - 1 (0 is void), as btf__type_cnt() counts */
uint32_t bp_kbtf__count(const struct bp_kbtf *k);
/* the type of that id, or NULL */
const struct btf_type *bp_kbtf__type(const struct bp_kbtf *k, uint32_t id);
/* the string at off, or "" when off is outside the strings */
const char *bp_kbtf__name(const struct bp_kbtf *k, uint32_t off);
/* bytes after struct btf_type for t's kind, or -1 for a kind we do not know */
long bp_kbtf__extra_len(const struct btf_type *t);
/* the first type of that kind and name: its id, or -ENOENT */
int bp_kbtf__find(const struct bp_kbtf *k, const char *name, int kind);

#endif /* BP_KBTF_H */
