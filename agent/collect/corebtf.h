/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of the kernel's BTF that our CO-RE relocations can reach, for
 * libbpf to relocate against (its btf_custom_path) instead of the whole.
 *
 * libbpf looks for each relocated type's candidates by walking every type
 * of the BTF it is given: 125,000 for vmlinux, once per distinct local
 * type, in each object loaded (the skeleton and its twin). That search
 * was ~40 ms of every start. The subset holds, for each type named in the
 * object's relocations (.BTF.ext), every kernel type of that name, and
 * what is reachable from them without following a pointer: the members,
 * array elements and typedef targets a relocation's access path can walk.
 * A pointer to a type left out points to void; relocations compare
 * pointers by kind alone. Records are the kernel's, byte for byte, their
 * type ids and string offsets renumbered: every offset, size, bitfield
 * and enum value a relocation reads is the kernel's own.
 *
 * Where the subset could relocate differently from the whole, it is not
 * built (-EOPNOTSUPP or -ENOENT) and libbpf takes the kernel's BTF as
 * before: a relocation kind that reads the kernel's type ids or follows
 * pointers (TYPE_ID_TARGET, TYPE_MATCHES), or a name vmlinux lacks (libbpf
 * would then look in the modules' BTF, which the subset cannot stand for).
 */
#ifndef BP_COLLECT_COREBTF_H
#define BP_COLLECT_COREBTF_H

#include <stddef.h>
#include <stdint.h>

struct bp_kbtf;

struct bp_corebtf_stats {
	uint32_t relos;		/* CO-RE relocation records in the object */
	uint32_t names;		/* distinct type names they relocate */
	uint32_t types;		/* kernel types in the subset */
};

/*
 * The subset for the BPF object in elf (its .BTF and .BTF.ext) against
 * the kernel's BTF k, as a raw BTF in *raw (malloc'ed, *raw_sz bytes).
 * 0, -ENOENT (a name the kernel's BTF lacks), -EOPNOTSUPP (a relocation
 * or type kind the subset cannot serve), -EINVAL (malformed input) or
 * -ENOMEM.
 */
int bp_corebtf__build(const struct bp_kbtf *k, const void *elf, size_t elf_sz, void **raw,
		      uint32_t *raw_sz, struct bp_corebtf_stats *stats);

/*
 * A raw BTF as a file libbpf can be pointed at: a memfd, named in path as
 * /proc/self/fd/N. *fd is the memfd, to close once the objects loaded.
 * 0 or -errno.
 */
int bp_btf_memfd(const void *raw, uint32_t raw_sz, char *path, size_t len, int *fd);

#endif
