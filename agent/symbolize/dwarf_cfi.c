// SPDX-License-Identifier: GPL-2.0
/*
 * CFI to unwind rows. libdw evaluates the CFA program at each address
 * (dwarf_cfi_addrframe), which is the reference; this file only steps
 * through every row of every FDE and recognises the rules the BPF walker
 * knows (bpf/boundprof.h enum bp_uw_kind). The FDEs themselves are listed
 * with dwarf_next_cfi, decoding their initial location by the CIE's
 * pointer encoding.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/dwarf_cfi.h"
#include "util/log.h"

#define REG_BP		6
#define REG_SP		7
#define REG_RA		16
/* how many CIEs one file may have before the rest are ignored */
#define CIES_MAX	4096
/* function alignment padding, at most */
#define PAD_MAX		16

/* --- sections ------------------------------------------------------------- */

static bool section_fits(const GElf_Shdr *sh, uint64_t fsize, uint64_t cap)
{
	return sh->sh_type != SHT_NOBITS && sh->sh_size <= cap && sh->sh_offset <= fsize &&
	       sh->sh_size <= fsize - sh->sh_offset;
}

static const char *section_name(Elf *elf, uint64_t fsize, size_t shstrndx, const GElf_Shdr *sh)
{
	Elf_Scn *str = elf_getscn(elf, shstrndx);
	GElf_Shdr ssh;

	if (!str || !gelf_getshdr(str, &ssh) || ssh.sh_type != SHT_STRTAB ||
	    !section_fits(&ssh, fsize, 1024 * 1024))
		return NULL;
	return elf_strptr(elf, shstrndx, sh->sh_name);
}

/* the section called name, which must be PROGBITS within the caps; NULL if none */
static Elf_Scn *find_cfi_section(Elf *elf, uint64_t fsize, const char *name, GElf_Shdr *out,
				 int *err)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*err = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, out))
			continue;
		n = section_name(elf, fsize, shstrndx, out);
		if (!n || strcmp(n, name))
			continue;
		if (out->sh_type != SHT_PROGBITS || !out->sh_size)
			return NULL;
		if (!section_fits(out, fsize, BP_CFI_SECTION_MAX)) {
			*err = -EFBIG;
			return NULL;
		}
		return scn;
	}
	return NULL;
}

int bp_dwarf__check_sections(Elf *elf, uint64_t fsize, uint64_t max, uint64_t total,
			     uint64_t *inflated)
{
	Elf_Scn *scn = NULL;
	uint64_t sum = 0, packed = 0;
	size_t shstrndx;
	bool any = false;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		uint64_t size;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		n = section_name(elf, fsize, shstrndx, &sh);
		if (!n)
			return -ENOEXEC;
		if (strncmp(n, ".debug_", 7) && strncmp(n, ".zdebug_", 8))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (!section_fits(&sh, fsize, max))
			return -EFBIG;
		size = sh.sh_size;
		/* libdw inflates compressed sections to what their header claims */
		if (sh.sh_flags & SHF_COMPRESSED) {
			Elf_Data *d = elf_rawdata(scn, NULL);
			GElf_Chdr ch;

			if (!d || !gelf_getchdr(scn, &ch))
				return -ENOEXEC;
			size = ch.ch_size;
		} else if (!strncmp(n, ".zdebug_", 8)) {
			/* the old GNU format: "ZLIB" and a big-endian 64-bit size */
			Elf_Data *d = elf_rawdata(scn, NULL);
			const unsigned char *b;
			int i;

			if (!d || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4))
				return -ENOEXEC;
			b = (const unsigned char *)d->d_buf + 4;
			for (size = 0, i = 0; i < 8; i++)
				size = size << 8 | b[i];
		}
		if (size > max)
			return -EFBIG;
		if ((sh.sh_flags & SHF_COMPRESSED) || !strncmp(n, ".zdebug_", 8))
			packed += size;
		sum += size;
		if (sum > total)
			return -EFBIG;
		if (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info") ||
		    !strcmp(n, ".debug_frame") || !strcmp(n, ".zdebug_frame"))
			any = true;
	}
	if (inflated)
		*inflated = packed;
	return any ? 0 : -ENOENT;
}

/* --- listing the FDEs ----------------------------------------------------- */

struct cie_enc {
	Dwarf_Off off;
	uint8_t enc;		/* FDE pointer encoding; DW_EH_PE_omit: unusable */
};

static int read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	int shift = 0;

	while (p < end && shift < 64) {
		v |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
		if (!(*p++ & 0x80)) {
			*pp = p;
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}

static int read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	int shift = 0;
	uint8_t b;

	do {
		if (p >= end || shift >= 64)
			return -EINVAL;
		b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	*pp = p;
	*out = (int64_t)v;
	return 0;
}

static int read_fixed(const uint8_t **pp, const uint8_t *end, size_t n, bool sign, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if ((size_t)(end - *pp) < n)
		return -EINVAL;
	/* little-endian: the only byte order the symbolizer opens */
	for (i = 0; i < n; i++)
		v |= (uint64_t)(*pp)[i] << (8 * i);
	if (sign && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ULL << (8 * n);
	*pp += n;
	*out = v;
	return 0;
}

/* the value of an encoded pointer's format (the low four bits) */
static int read_format(uint8_t enc, const uint8_t **pp, const uint8_t *end, size_t addr_size,
		       uint64_t *out)
{
	int64_t s = 0;
	int err;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return read_fixed(pp, end, addr_size, false, out);
	case DW_EH_PE_uleb128:
		return read_uleb(pp, end, out);
	case DW_EH_PE_udata2:
		return read_fixed(pp, end, 2, false, out);
	case DW_EH_PE_udata4:
		return read_fixed(pp, end, 4, false, out);
	case DW_EH_PE_udata8:
		return read_fixed(pp, end, 8, false, out);
	case DW_EH_PE_sleb128:
		err = read_sleb(pp, end, &s);
		*out = (uint64_t)s;
		return err;
	case DW_EH_PE_sdata2:
		return read_fixed(pp, end, 2, true, out);
	case DW_EH_PE_sdata4:
		return read_fixed(pp, end, 4, true, out);
	case DW_EH_PE_sdata8:
		return read_fixed(pp, end, 8, true, out);
	default:
		return -ENOTSUP;
	}
}

/*
 * An FDE's initial location: absolute, or relative to where it is stored
 * (pcrel, what every linker emits). Text- and data-relative bases are not
 * known here, and an indirect pointer would need the process's memory.
 */
static int read_location(uint8_t enc, const uint8_t **pp, const uint8_t *end, size_t addr_size,
			 uint64_t field_vaddr, uint64_t *out)
{
	int err;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return -ENOTSUP;
	err = read_format(enc, pp, end, addr_size, out);
	if (err)
		return err;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		return 0;
	case DW_EH_PE_pcrel:
		*out += field_vaddr;
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* the FDE pointer encoding a CIE's augmentation gives ('R'), or absptr */
static uint8_t cie_encoding(const Dwarf_CIE *cie, size_t addr_size)
{
	const uint8_t *d = cie->augmentation_data;
	const uint8_t *end = d ? d + cie->augmentation_data_size : NULL;
	const char *a = cie->augmentation;
	uint64_t skip;

	if (!a || !a[0])
		return DW_EH_PE_absptr;
	if (a[0] != 'z' || !d)
		return DW_EH_PE_omit;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			return d < end ? *d : DW_EH_PE_omit;
		case 'L':
			if (d >= end)
				return DW_EH_PE_omit;
			d++;
			break;
		case 'P': {
			uint8_t penc;

			if (d >= end)
				return DW_EH_PE_omit;
			penc = *d++;
			if (read_format(penc, &d, end, addr_size, &skip))
				return DW_EH_PE_omit;
			break;
		}
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return DW_EH_PE_omit;
		}
	}
	return DW_EH_PE_absptr;
}

static int cmp_range(const void *a, const void *b)
{
	const struct bp_cfi_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? 1 : x->end > y->end ? -1 : 0;
}

static int cmp_cie(const void *a, const void *b)
{
	const struct cie_enc *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static const struct cie_enc *find_cie(const struct cie_enc *cies, size_t n, Dwarf_Off off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && cies[lo].off == off ? &cies[lo] : NULL;
}

/* every FDE in one CFI section (sh_addr: where it is loaded, for pcrel) */
static int list_fdes(Elf *elf, Elf_Data *d, bool eh, uint64_t sh_addr,
		     struct bp_cfi_range **out, size_t *nr)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	size_t addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	struct cie_enc *cies = NULL;
	struct bp_cfi_range *r = NULL;
	size_t nr_cies = 0, cap_cies = 0, n = 0, cap = 0, i, j;
	Dwarf_Off off, next;
	int pass, err = 0;

	if (!ident)
		return -ENOEXEC;
	/* CIEs first: an FDE may come before the CIE it names */
	for (pass = 0; pass < 2; pass++) {
		for (off = 0; off < d->d_size; off = next) {
			Dwarf_CFI_Entry e;
			const struct cie_enc *c;
			const uint8_t *p, *end;
			uint64_t start, len;
			int ret = dwarf_next_cfi(ident, d, eh, off, &next, &e);

			if (ret != 0 || next <= off)
				break;
			if (e.CIE_id == DW_CIE_ID_64) {
				if (pass || nr_cies >= CIES_MAX)
					continue;
				if (nr_cies == cap_cies) {
					size_t ncap = cap_cies ? 2 * cap_cies : 16;
					void *np = reallocarray(cies, ncap, sizeof(*cies));

					if (!np) {
						err = -ENOMEM;
						goto out;
					}
					cies = np;
					cap_cies = ncap;
				}
				cies[nr_cies].off = off;
				cies[nr_cies].enc = cie_encoding(&e.cie, addr_size);
				nr_cies++;
				continue;
			}
			if (!pass)
				continue;
			c = find_cie(cies, nr_cies, e.fde.CIE_pointer);
			if (!c)
				continue;
			p = e.fde.start;
			end = e.fde.end;
			if (read_location(c->enc, &p, end, addr_size,
					  sh_addr + (uint64_t)(e.fde.start - (const uint8_t *)d->d_buf),
					  &start) ||
			    read_format(c->enc, &p, end, addr_size, &len))
				continue;
			/* a zero-length FDE, or one a linker discarded (start 0) */
			if (!len || !start || start + len < start)
				continue;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				void *np;

				if (ncap > BP_CFI_FDES_MAX) {
					err = -EFBIG;
					goto out;
				}
				np = reallocarray(r, ncap, sizeof(*r));
				if (!np) {
					err = -ENOMEM;
					goto out;
				}
				r = np;
				cap = ncap;
			}
			r[n].start = start;
			r[n].end = start + len;
			n++;
		}
		/* no CIE at all: qsort must not be handed NULL (found by fuzz_elf) */
		if (!pass && nr_cies)
			qsort(cies, nr_cies, sizeof(*cies), cmp_cie);
	}
	if (!n) {
		err = -ENOENT;
		goto out;
	}
	qsort(r, n, sizeof(*r), cmp_range);
	/* nested or overlapping FDEs (hand-written assembly): the first one wins */
	for (i = 1, j = 1; i < n; i++) {
		if (r[i].start < r[j - 1].end)
			continue;
		r[j++] = r[i];
	}
	*out = r;
	*nr = j;
	r = NULL;
out:
	free(r);
	free(cies);
	return err;
}

/* --- the CFI source ------------------------------------------------------- */

struct cfi_src {
	Dwarf_CFI *cfi;
	Dwarf *dw;		/* for .debug_frame: owns cfi */
	Elf_Data *data;		/* the section the FDEs are listed from */
	bool eh;
	uint64_t sh_addr;
};

/* CFI limits for libdw: sections of the DWARF libdw reads with .debug_frame */
#define DEBUG_SECTION_MAX	(256ULL * 1024 * 1024)
#define DEBUG_TOTAL_MAX		(1024ULL * 1024 * 1024)

static int open_cfi(Elf *elf, uint64_t fsize, bool want_cfi, struct cfi_src *src)
{
	GElf_Shdr sh, hsh;
	Elf_Scn *scn;
	int err, herr;

	memset(src, 0, sizeof(*src));
	scn = find_cfi_section(elf, fsize, ".eh_frame", &sh, &err);
	if (err)
		return err;
	if (scn) {
		/* libdw reads the binary-search table too */
		find_cfi_section(elf, fsize, ".eh_frame_hdr", &hsh, &herr);
		if (herr)
			return herr;
		src->data = elf_rawdata(scn, NULL);
		if (!src->data || !src->data->d_buf)
			return -ENOEXEC;
		src->eh = true;
		src->sh_addr = sh.sh_addr;
		if (want_cfi) {
			src->cfi = dwarf_getcfi_elf(elf);
			if (!src->cfi)
				return -ENOEXEC;
		}
		return 0;
	}
	scn = find_cfi_section(elf, fsize, ".debug_frame", &sh, &err);
	if (err)
		return err;
	if (!scn)
		return -ENOENT;
	src->data = elf_rawdata(scn, NULL);
	if (!src->data || !src->data->d_buf || (sh.sh_flags & SHF_COMPRESSED))
		return -ENOEXEC;
	src->sh_addr = sh.sh_addr;
	if (want_cfi) {
		/* dwarf_begin_elf() reads every debug section: bound them all first */
		err = bp_dwarf__check_sections(elf, fsize, DEBUG_SECTION_MAX, DEBUG_TOTAL_MAX, NULL);
		if (err)
			return err;
		src->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (!src->dw)
			return -ENOEXEC;
		src->cfi = dwarf_getcfi(src->dw);
		if (!src->cfi) {
			dwarf_end(src->dw);
			src->dw = NULL;
			return -ENOEXEC;
		}
	}
	return 0;
}

static void close_cfi(struct cfi_src *src)
{
	if (src->dw)
		dwarf_end(src->dw);
	else if (src->cfi)
		dwarf_cfi_end(src->cfi);
	memset(src, 0, sizeof(*src));
}

int bp_cfi__ranges(Elf *elf, uint64_t fsize, struct bp_cfi_range **out, size_t *nr)
{
	struct cfi_src src;
	int err;

	*out = NULL;
	*nr = 0;
	err = open_cfi(elf, fsize, false, &src);
	if (!err)
		err = list_fdes(elf, src.data, src.eh, src.sh_addr, out, nr);
	close_cfi(&src);
	return err;
}

/* --- rows ----------------------------------------------------------------- */

static bool is_op(const Dwarf_Op *op, uint8_t atom, int64_t number)
{
	return op->atom == atom && (int64_t)op->number == number;
}

/* where the register is saved: CFA + *off. false for any other rule */
static bool at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * The CFA of a PLT entry, as GNU ld writes it for .plt: rsp + 8, and 8 more
 * once the entry's push has run, which is at byte 11 (or 10) of the 16:
 * breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus.
 */
static int plt_threshold(const Dwarf_Op *ops, size_t nops)
{
	if (nops != 9 || !is_op(&ops[0], DW_OP_breg7, 8) || !is_op(&ops[1], DW_OP_breg16, 0) ||
	    ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and || ops[5].atom != DW_OP_ge ||
	    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return -1;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit31)
		return -1;
	return ops[4].atom - DW_OP_lit0;
}

/* a CFA offset in 8-byte slots (every x86-64 compiler keeps them so) */
static bool cfa_slots(int64_t off, int16_t *out)
{
	if (off % 8 || off / 8 < INT16_MIN || off / 8 > INT16_MAX)
		return false;
	*out = (int16_t)(off / 8);
	return true;
}

static void classify(Dwarf_Frame *f, int ra, bool signal, struct bp_uw_row *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;
	int plt;

	r->kind = BP_UW_INVALID;
	r->bp = BP_UW_BP_SAME;
	r->cfa = 0;
	if (signal) {
		r->kind = BP_UW_SIGNAL;
		return;
	}
	/* the return address: undefined ends the stack, else it must be at CFA-8 */
	if (ra != REG_RA || dwarf_frame_register(f, ra, mem, &ops, &nops))
		return;
	if (!nops) {
		if (ops == mem)
			r->kind = BP_UW_STOP;
		return;
	}
	if (!at_cfa(ops, nops, &off) || off != -8)
		return;

	if (dwarf_frame_cfa(f, &ops, &nops))
		return;
	if (nops == 1 && ops[0].atom == DW_OP_bregx &&
	    (ops[0].number == REG_SP || ops[0].number == REG_BP)) {
		off = (int64_t)ops[0].number2;
		if (!cfa_slots(off, &r->cfa))
			return;
		r->kind = ops[0].number == REG_SP ? BP_UW_CFA_SP : BP_UW_CFA_BP;
	} else if (nops == 2 && ops[0].atom == DW_OP_breg6 && ops[1].atom == DW_OP_deref) {
		if (!cfa_slots((int64_t)ops[0].number, &r->cfa))
			return;
		r->kind = BP_UW_CFA_DEREF_BP;
	} else if ((plt = plt_threshold(ops, nops)) >= 0) {
		r->kind = BP_UW_PLT;
		r->cfa = (int16_t)plt;
		return;		/* a PLT stub leaves rbp alone */
	} else {
		return;
	}

	if (dwarf_frame_register(f, REG_BP, mem, &ops, &nops)) {
		r->kind = BP_UW_INVALID;
		return;
	}
	/* same value, or undefined (it no longer matters to this frame's callers) */
	if (!nops)
		return;
	if (at_cfa(ops, nops, &off) && off && off % 8 == 0 && off / 8 > INT8_MIN &&
	    off / 8 <= INT8_MAX) {
		r->bp = (int8_t)(off / 8);
		return;
	}
	if (nops == 1 && is_op(&ops[0], DW_OP_breg6, 0)) {
		r->bp = BP_UW_BP_AT_BP;
		return;
	}
	r->kind = BP_UW_INVALID;
}

struct row_buf {
	struct bp_uw_row *v;
	uint32_t n, cap;
	uint64_t base;
};

static bool same_rule(const struct bp_uw_row *a, const struct bp_uw_row *b)
{
	return a->kind == b->kind && a->bp == b->bp && a->cfa == b->cfa;
}

static int row_add(struct row_buf *b, uint64_t pc, const struct bp_uw_row *rule)
{
	struct bp_uw_row *last = b->n ? &b->v[b->n - 1] : NULL;

	if (pc < b->base || pc - b->base > UINT32_MAX)
		return -ERANGE;
	if (last && same_rule(last, rule))
		return 0;
	/* a row at the same pc replaces the previous one (an empty range) */
	if (last && last->pc == (uint32_t)(pc - b->base)) {
		*last = *rule;
		last->pc = (uint32_t)(pc - b->base);
		if (b->n > 1 && same_rule(&b->v[b->n - 2], last))
			b->n--;
		return 0;
	}
	if (b->n == b->cap) {
		uint32_t ncap = b->cap ? 2 * b->cap : 1024;
		void *np;

		if (b->cap >= BP_CFI_ROWS_MAX)
			return -EFBIG;
		if (ncap > BP_CFI_ROWS_MAX)
			ncap = BP_CFI_ROWS_MAX;
		np = reallocarray(b->v, ncap, sizeof(*b->v));
		if (!np)
			return -ENOMEM;
		b->v = np;
		b->cap = ncap;
	}
	b->v[b->n] = *rule;
	b->v[b->n].pc = (uint32_t)(pc - b->base);
	b->n++;
	return 0;
}

/* the rows of one FDE's range, evaluated by libdw at each row's start */
static int fde_rows(Dwarf_CFI *cfi, const struct bp_cfi_range *fde, struct row_buf *b,
		    struct bp_cfi_stats *st)
{
	static const struct bp_uw_row invalid = { .kind = BP_UW_INVALID };
	uint64_t pc = fde->start;
	int err;

	while (pc < fde->end) {
		struct bp_uw_row r;
		Dwarf_Frame *f = NULL;
		Dwarf_Addr s, e;
		bool signal = false;
		int ra;

		if (dwarf_cfi_addrframe(cfi, pc, &f) || !f)
			return row_add(b, pc, &invalid);
		ra = dwarf_frame_info(f, &s, &e, &signal);
		if (e <= pc) {
			free(f);
			return row_add(b, pc, &invalid);
		}
		classify(f, ra, signal, &r);
		free(f);
		switch (r.kind) {
		case BP_UW_INVALID:
			st->rows_invalid++;
			break;
		case BP_UW_SIGNAL:
			st->rows_signal++;
			break;
		case BP_UW_PLT:
			st->rows_plt++;
			break;
		case BP_UW_STOP:
			st->rows_stop++;
			break;
		}
		err = row_add(b, pc, &r);
		if (err)
			return err;
		pc = e < fde->end ? e : fde->end;
	}
	return 0;
}

int bp_cfi__build(Elf *elf, uint64_t fsize, struct bp_cfi_table *out)
{
	static const struct bp_uw_row fp = { .kind = BP_UW_FP };
	struct bp_cfi_range *fdes = NULL;
	struct row_buf b = {};
	struct cfi_src src;
	size_t nr = 0, i;
	int err;

	memset(out, 0, sizeof(*out));
	err = open_cfi(elf, fsize, true, &src);
	if (!err)
		err = list_fdes(elf, src.data, src.eh, src.sh_addr, &fdes, &nr);
	if (err)
		goto out;
	b.base = fdes[0].start;
	for (i = 0; i < nr; i++) {
		/* out of the 32-bit pc range: the rest are frame-pointer code */
		if (fdes[i].end - b.base > UINT32_MAX)
			break;
		/*
		 * A gap between functions has no CFI. Alignment padding (less
		 * than 16 bytes of nops) never runs: the previous row can cover it.
		 */
		if (i && fdes[i].start >= fdes[i - 1].end + PAD_MAX) {
			err = row_add(&b, fdes[i - 1].end, &fp);
			if (err)
				goto out;
		}
		err = fde_rows(src.cfi, &fdes[i], &b, &out->st);
		if (err)
			goto out;
	}
	err = row_add(&b, fdes[i - 1].end, &fp);
	if (err)
		goto out;
	out->base = b.base;
	out->rows = b.v;
	out->nr_rows = b.n;
	out->st.fdes = (uint32_t)i;
	out->st.source = src.eh ? "eh_frame" : "debug_frame";
	b.v = NULL;
out:
	if (err == -ERANGE)
		err = -EFBIG;
	free(b.v);
	free(fdes);
	close_cfi(&src);
	return err;
}

void bp_cfi__free(struct bp_cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
