/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call frame information of one ELF file, read with libdw: the unwind rows
 * the BPF walker applies (struct bp_uw_row, bpf/boundprof.h), and the
 * function ranges the FDEs describe (which group the samples of a stripped
 * binary by function).
 *
 * .eh_frame is what the process itself unwinds with, so it is preferred;
 * .debug_frame is read only when there is no .eh_frame. The file may be
 * anyone's: only section-header-described CFI is read (never the
 * "everything after PT_GNU_EH_FRAME" guess), and every section libdw will
 * read is checked against the file and a cap first.
 */
#ifndef BP_DWARF_CFI_H
#define BP_DWARF_CFI_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "boundprof.h"

#define BP_CFI_SECTION_MAX	(64ULL * 1024 * 1024)	/* .eh_frame, .eh_frame_hdr, .debug_frame */
#define BP_CFI_ROWS_MAX		(8U * 1024 * 1024)	/* rows of one file */
#define BP_CFI_FDES_MAX		(4U * 1024 * 1024)	/* FDEs of one file */

/* an FDE's address range, ELF virtual addresses */
struct bp_cfi_range {
	uint64_t start, end;
};

struct bp_cfi_stats {
	uint32_t fdes;
	uint32_t rows_invalid;	/* rows the walker cannot apply */
	uint32_t rows_signal;
	uint32_t rows_plt;
	uint32_t rows_stop;
	const char *source;	/* "eh_frame", "debug_frame" */
};

struct bp_cfi_table {
	uint64_t base;		/* ELF vaddr that row pcs count from */
	struct bp_uw_row *rows;	/* sorted by pc; the last is a BP_UW_FP end marker */
	uint32_t nr_rows;
	struct bp_cfi_stats st;
};

/*
 * The FDE ranges, sorted by start, overlaps removed (malloc()ed).
 * 0, -ENOENT without CFI, -EFBIG over the caps, or -errno.
 */
int bp_cfi__ranges(Elf *elf, uint64_t fsize, struct bp_cfi_range **out, size_t *nr);

/* the rows for the whole file: 0, -ENOENT without CFI, -EFBIG, -errno */
int bp_cfi__build(Elf *elf, uint64_t fsize, struct bp_cfi_table *out);
void bp_cfi__free(struct bp_cfi_table *t);

/*
 * The same rows, every one evaluated by libdw (dwarf_cfi_addrframe), which
 * bp_cfi__build() must match exactly: the reference for the tests. Much
 * slower: libdw replays the FDE's program for each row.
 */
int bp_cfi__build_ref(Elf *elf, uint64_t fsize, struct bp_cfi_table *out);

/*
 * Whether libdw may be handed this file's DWARF: every .debug_* / .zdebug_*
 * section inside the file, each at most max bytes (uncompressed, from its
 * compression header) and all of them at most total bytes. 0 or -EFBIG /
 * -ENOEXEC / -ENOENT (no .debug_info and no .debug_frame).
 * *inflated (unless NULL): the bytes libdw will inflate compressed ones to.
 */
int bp_dwarf__check_sections(Elf *elf, uint64_t fsize, uint64_t max, uint64_t total,
			     uint64_t *inflated);

#endif /* BP_DWARF_CFI_H */
