/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel text symbols from /proc/kallsyms (t/T/w/W), core kernel and modules,
 * sorted once and searched by address.
 */
#ifndef BP_KALLSYMS_H
#define BP_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct bp_kallsyms;

struct bp_ksym {
	uint64_t addr;		/* start of the symbol */
	uint64_t base;		/* start of its module, or _text for the core kernel */
	const char *name;
	const char *module;	/* "ext4"; NULL for the core kernel */
};

/*
 * 0 or -errno. -EPERM (with one warning per process) when every address
 * reads as zero (kptr_restrict), -ENOENT when the file has no text symbol.
 */
int bp_kallsyms__load(const char *path, struct bp_kallsyms **out);
void bp_kallsyms__free(struct bp_kallsyms *k);

/* the symbol covering addr: 0, or -ENOENT (out untouched) */
int bp_kallsyms__find(const struct bp_kallsyms *k, uint64_t addr, struct bp_ksym *out);

/*
 * The address ranges [start, end) of core-kernel functions named base or
 * base.SUFFIX (the compiler's .constprop.0, .isra.0 clones). Fills up to max
 * ranges; returns how many there are in all.
 */
size_t bp_kallsyms__ranges(const struct bp_kallsyms *k, const char *base, uint64_t *start,
			   uint64_t *end, size_t max);

typedef void (*bp_ksym_range_fn)(void *ctx, size_t which, uint64_t start, uint64_t end);

/*
 * bp_kallsyms__ranges() for many names in one pass over the symbols: fn
 * gets each range [start, end) of names[which], in address order; at most
 * 256 names. One pass instead of one per name: ~60 names took ~35 ms, at
 * start-up.
 */
void bp_kallsyms__ranges_each(const struct bp_kallsyms *k, const char *const *names, size_t n,
			      bp_ksym_range_fn fn, void *ctx);

/*
 * addr - _text for an address within the core kernel's image (from _text to
 * its last symbol, _end): an offset that does not reveal where KASLR put the
 * kernel. 0, or -ENOENT outside it.
 */
int bp_kallsyms__core_offset(const struct bp_kallsyms *k, uint64_t addr, uint64_t *off);

/* distinct symbol addresses kept after merging aliases */
size_t bp_kallsyms__count(const struct bp_kallsyms *k);

#endif /* BP_KALLSYMS_H */
