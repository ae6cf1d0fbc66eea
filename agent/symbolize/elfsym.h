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
 * Once the symbols are loaded (names copied out), the file and libelf's
 * copy of it are let go: a loaded bp_elf holds no fd.
 *
 * The file may be anyone's: the header counts and every section read
 * (notes, .gnu_debuglink, the symbol tables and their strings) are checked
 * against the file's size and a cap before libelf reads them. Debug files
 * are found by build-id or by the debuglink's basename only, in the
 * documented directories, resolved inside the process's root without
 * following symlinks (util/safeopen.h).
 */
#ifndef BP_ELFSYM_H
#define BP_ELFSYM_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bp_elf;

struct bp_elf_sym {
	uint64_t addr;		/* ELF virtual address */
	uint64_t end;		/* exclusive; from st_size, else the next symbol */
	const char *name;	/* valid while the bp_elf lives */
	const void *udata;	/* free for the caller (symbols.c caches its copy) */
};

/* what one file may make us read, checked before the reading */
#define BP_ELF_SHNUM_MAX	16384			/* section headers */
#define BP_ELF_PHNUM_MAX	4096			/* program headers */
#define BP_ELF_SHSTRTAB_MAX	(1024 * 1024)		/* section names */
#define BP_ELF_NOTES_MAX	(256 * 1024)		/* notes read for the build-id */
#define BP_ELF_DEBUGLINK_MAX	4096			/* .gnu_debuglink */
#define BP_ELF_SYMTAB_MAX	(64ULL * 1024 * 1024)	/* .symtab, .dynsym */
#define BP_ELF_STRTAB_MAX	(128ULL * 1024 * 1024)	/* their strings */
#define BP_ELF_CRC_MAX		(256ULL * 1024 * 1024)	/* a debug file checked by CRC */
#define BP_ELF_DEBUGDATA_MAX	(16ULL * 1024 * 1024)	/* .gnu_debugdata, compressed */
#define BP_ELF_DEBUGDATA_OUT_MAX (64ULL * 1024 * 1024)	/* ... and inflated */

struct bp_elf_opts {
	/* the file's path as its process sees it (for debuglink); may be NULL */
	const char *path;
	/* the directory that is "/" for that path: "/proc/PID/root"; NULL or "": ours */
	const char *root;
	/* root of separate debug files, e.g. "/usr/lib/debug", looked up in
	 * root too; NULL: don't look */
	const char *debug_root;
	/* with uid_known, a debug file is used only if uid could read it: it
	 * is uid's, or readable by everyone (util/safeopen.h BP_OPEN_READABLE) */
	bool uid_known;
	uid_t uid;
	/* read the DWARF (the file's or its debug file's) for lines and inlines */
	bool want_dwarf;
	/* ... from a file of at most this many bytes; 0: no bound of ours */
	uint64_t dwarf_max;
	/*
	 * ... but not from a debug file under debug_root: a distribution's
	 * debug package (libc6-dbg), for code its user did not write
	 */
	bool dwarf_not_from_root;
};

/*
 * Open from an fd, which the bp_elf owns from then on (closed once the
 * symbols are loaded, by bp_elf__free(), and on failure). opts may be NULL.
 * 0 or -errno; -ENOEXEC when it is not an ELF file, -EFBIG when its headers
 * exceed the bounds above.
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

/* a PT_LOAD segment */
struct bp_elf_segment {
	uint64_t off, vaddr, filesz;
	bool exec;		/* PF_X */
};

/* its PT_LOAD segments, at most max of them; returns how many it has */
size_t bp_elf__segments(const struct bp_elf *e, struct bp_elf_segment *out, size_t max);

/* the open file (NULL once the symbols are loaded) and its size */
Elf *bp_elf__elf(const struct bp_elf *e);
uint64_t bp_elf__size(const struct bp_elf *e);

/*
 * Load the symbols now (idempotent), then close the file: 0, or -errno /
 * -ENOENT when there are none, -EFBIG when the tables exceed the bounds.
 */
int bp_elf__load_syms(struct bp_elf *e);
bool bp_elf__syms_loaded(const struct bp_elf *e);
/*
 * Instead of loading now: find the separate debug file while the caller's
 * root still leads to it, and keep it open with the file, for the load that
 * the first lookup does (not finding one is no error).
 */
void bp_elf__prepare(struct bp_elf *e);

/* the function at vaddr (loading symbols on first use), or NULL */
struct bp_elf_sym *bp_elf__find(struct bp_elf *e, uint64_t vaddr);

size_t bp_elf__nr_syms(struct bp_elf *e);

/* lines and inlines (valid once symbols are loaded), or NULL */
struct bp_dwarf *bp_elf__dwarf(const struct bp_elf *e);
/* free its DWARF: from now on its frames have no source lines */
void bp_elf__drop_dwarf(struct bp_elf *e);

/*
 * The function holding vaddr by the CFI's FDEs, for an address no symbol
 * covers (a stripped binary): 0 and its [start, end), or -ENOENT.
 */
int bp_elf__fde_func(const struct bp_elf *e, uint64_t vaddr, uint64_t *start, uint64_t *end);

/* the separate debug file the symbols came from, or NULL */
const char *bp_elf__debug_path(const struct bp_elf *e);

/* the DWARF was left unread: it is in a debug file under debug_root (dwarf_not_from_root) */
bool bp_elf__dwarf_in_root_skipped(const struct bp_elf *e);

/* "symtab", "dynsym", "debug", "minidebuginfo" or "none"; valid once symbols are loaded */
const char *bp_elf__sym_source(const struct bp_elf *e);

#endif /* BP_ELFSYM_H */
