/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One ELF file: its function symbols, its PT_LOAD layout (to turn a file
 * offset seen in /proc/PID/maps into an ELF virtual address), its GNU
 * build-id and .gnu_debuglink.
 *
 * Opening reads only the headers; symbols load on the first lookup, from
 * .symtab, else from a separate debug file (build-id tree, then debuglink),
 * else from .dynsym. A debug file is used with the binary's own PT_LOADs:
 * objcopy --only-keep-debug keeps the virtual addresses, not the offsets.
 */
#ifndef BP_ELFSYM_H
#define BP_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bp_elf;

struct bp_elf_sym {
	uint64_t addr;		/* ELF virtual address */
	uint64_t end;		/* exclusive; from st_size, else the next symbol */
	const char *name;	/* valid while the bp_elf lives */
	const void *udata;	/* free for the caller (symbols.c caches its copy) */
};

struct bp_elf_opts {
	/* the file's path as its process sees it (for debuglink); may be NULL */
	const char *path;
	/* prefix reaching that path from here: "" or "/proc/PID/root"; may be NULL */
	const char *root;
	/* root of separate debug files, e.g. "/usr/lib/debug"; NULL: don't look */
	const char *debug_root;
};

/*
 * Open from an fd, which the bp_elf owns from then on (closed by
 * bp_elf__free(), and on failure). opts may be NULL. 0 or -errno; -ENOEXEC
 * when it is not an ELF file.
 */
int bp_elf__open_fd(int fd, const struct bp_elf_opts *opts, struct bp_elf **out);

/* open an in-memory image (the vdso); the image is copied. 0 or -errno */
int bp_elf__open_mem(const void *image, size_t size, struct bp_elf **out);

void bp_elf__free(struct bp_elf *e);

/* lowercase hex GNU build-id, or NULL */
const char *bp_elf__build_id(const struct bp_elf *e);

/* the .gnu_debuglink file name (and its CRC32), or NULL */
const char *bp_elf__debuglink(const struct bp_elf *e, uint32_t *crc);

/*
 * File offset -> ELF virtual address through the PT_LOAD holding the offset:
 * vaddr = off - p_offset + p_vaddr. 0 or -ENOENT.
 */
int bp_elf__file_to_vaddr(const struct bp_elf *e, uint64_t off, uint64_t *vaddr);

/* load the symbols now (idempotent): 0, or -errno / -ENOENT when there are none */
int bp_elf__load_syms(struct bp_elf *e);
bool bp_elf__syms_loaded(const struct bp_elf *e);

/* the function at vaddr (loading symbols on first use), or NULL */
struct bp_elf_sym *bp_elf__find(struct bp_elf *e, uint64_t vaddr);

size_t bp_elf__nr_syms(const struct bp_elf *e);

/* the separate debug file the symbols came from, or NULL */
const char *bp_elf__debug_path(const struct bp_elf *e);

/* "symtab", "dynsym", "debug" or "none"; valid once symbols are loaded */
const char *bp_elf__sym_source(const struct bp_elf *e);

#endif /* BP_ELFSYM_H */
