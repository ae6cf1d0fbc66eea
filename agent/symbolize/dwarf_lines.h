/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source lines and inlined functions of one file, from its DWARF (or its
 * debug file's), with libdw.
 *
 * What libdw reads is copied into memory while the file is open, and then
 * the file is closed: no fd is held, and no mapping that its owner could
 * truncate under us (SIGBUS). Only the headers and the debug sections that
 * lines and inlines need are read, each at its offset in an anonymous image
 * of the file's size; the rest (code, data, location lists) stays
 * untouched zero pages that cost no memory. What libdw may read is bounded
 * first: the file's size, every debug section (uncompressed, by its header)
 * and their sum.
 */
#ifndef BP_DWARF_LINES_H
#define BP_DWARF_LINES_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#define BP_DWARF_FILE_MAX	(256ULL * 1024 * 1024)	/* a file read for its DWARF */
#define BP_DWARF_SECTION_MAX	(256ULL * 1024 * 1024)	/* one debug section, inflated */
#define BP_DWARF_TOTAL_MAX	(512ULL * 1024 * 1024)	/* all of them */
#define BP_DWARF_INLINE_MAX	8			/* frames for one address */

struct bp_dwarf;

/* one frame at an address: a function, inlined or not, at a line */
struct bp_dwarf_frame {
	const char *name;	/* linkage name (mangled) when there is one, else
				 * DW_AT_name; valid while the bp_dwarf lives; may be NULL */
	const char *file;	/* source file as recorded, or NULL */
	uint32_t line;		/* 0: unknown */
	bool inlined;		/* inlined into the next frame */
};

/*
 * Take the DWARF of the ELF file open on fd (fsize bytes): read what libdw
 * needs into memory. The caller keeps fd, and may close it after. 0,
 * -ENOENT (no .debug_info), -EFBIG (over the bounds), or -errno.
 */
int bp_dwarf__open(int fd, uint64_t fsize, struct bp_dwarf **out);
void bp_dwarf__free(struct bp_dwarf *d);

/* whether the file has a .debug_info section at all (before reading it) */
bool bp_dwarf__has_info(Elf *elf, uint64_t fsize);

/*
 * The frames at ELF virtual address vaddr, innermost first: out[0] is the
 * function whose code it is (inlined or not) at vaddr's line; each next one
 * is the function it was inlined into, at the line of that call; the last
 * is the function the symbol table names. Returns how many (>= 1), or
 * -ENOENT when the DWARF does not cover vaddr.
 */
int bp_dwarf__frames(struct bp_dwarf *d, uint64_t vaddr, struct bp_dwarf_frame *out, int max);

/* bytes held for this file: the image read, and its compressed sections inflated */
uint64_t bp_dwarf__bytes(const struct bp_dwarf *d);

#endif /* BP_DWARF_LINES_H */
