// SPDX-License-Identifier: GPL-2.0
/*
 * CFI to unwind rows: every row of every FDE, and the rules the BPF walker
 * knows in them (bpf/boundprof.h enum bp_uw_kind). The FDEs are listed
 * with dwarf_next_cfi, decoding their initial location by the CIE's
 * pointer encoding. Our interpreter runs each FDE's program once
 * (run_program); libdw's evaluation at each address (dwarf_cfi_addrframe)
 * is the reference it must match row for row (bp_cfi__build_ref, the
 * oracle test), and does the FDEs the interpreter leaves to it.
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

/* a CIE our FDEs use: what listing them and interpreting them needs */
struct cie_info {
	Dwarf_Off off;
	uint8_t enc;		/* FDE pointer encoding; DW_EH_PE_omit: unusable */
	bool sized;		/* 'z': FDEs carry an augmentation length */
	bool signal;		/* 'S' */
	uint8_t init;		/* INIT_*: the initial state below, once computed */
	uint64_t caf;		/* code alignment factor */
	int64_t daf;		/* data alignment factor */
	uint64_t ra;		/* return address column */
	const uint8_t *insns, *insns_end;
	struct cfa_frame *state;	/* after the ABI's and the CIE's instructions */
};

/* an FDE of the listing: its range, and where its program is */
struct fde_ent {
	uint64_t start, end;
	uint64_t off;		/* in the section */
	const uint8_t *insns, *insns_end;	/* NULL: not decodable here */
	uint32_t cie;		/* index into the CIEs */
	bool shared;		/* another FDE covers part of the range */
	bool hidden;		/* not listed (start 0), only counted for overlaps */
};

struct fde_list {
	struct fde_ent *v;
	size_t n;
	struct cie_info *cies;
	size_t nr_cies;
};

static void fde_list_free(struct fde_list *l)
{
	size_t i;

	for (i = 0; i < l->nr_cies; i++)
		free(l->cies[i].state);
	free(l->cies);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* LEB128, strictly: one that runs past end or 64 bits is malformed */
static int read_leb(const uint8_t **pp, const uint8_t *end, bool sign, uint64_t *out)
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
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	*pp = p;
	*out = v;
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
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return read_fixed(pp, end, addr_size, false, out);
	case DW_EH_PE_uleb128:
		return read_leb(pp, end, false, out);
	case DW_EH_PE_udata2:
		return read_fixed(pp, end, 2, false, out);
	case DW_EH_PE_udata4:
		return read_fixed(pp, end, 4, false, out);
	case DW_EH_PE_udata8:
		return read_fixed(pp, end, 8, false, out);
	case DW_EH_PE_sleb128:
		return read_leb(pp, end, true, out);
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

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? 1 : x->end > y->end ? -1 : 0;
}

static int cmp_cie(const void *a, const void *b)
{
	const struct cie_info *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static struct cie_info *find_cie(struct cie_info *cies, size_t n, Dwarf_Off off)
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

static void cie_info_init(struct cie_info *c, Dwarf_Off off, const Dwarf_CIE *cie,
			  size_t addr_size)
{
	const char *a = cie->augmentation ? cie->augmentation : "";

	memset(c, 0, sizeof(*c));
	c->off = off;
	c->enc = cie_encoding(cie, addr_size);
	/* as libdw reads the string: past 'z' it skips what it does not know */
	c->sized = a[0] == 'z';
	c->signal = c->sized && strchr(a, 'S');
	c->caf = cie->code_alignment_factor;
	c->daf = cie->data_alignment_factor;
	c->ra = cie->return_address_register;
	c->insns = cie->initial_instructions;
	c->insns_end = cie->initial_instructions_end;
}

/* where an FDE's program starts: past its augmentation data (libdw's intern_fde) */
static const uint8_t *fde_program(const struct cie_info *c, const uint8_t *p, const uint8_t *end)
{
	uint64_t len;

	if (!c->sized)
		return p;
	/* libdw reads the length even at the end; leave such FDEs to it */
	if (p >= end || read_leb(&p, end, false, &len) || len > (uint64_t)(end - p))
		return NULL;
	return p + len;
}

/*
 * Every FDE in one CFI section (sh_addr: where it is loaded, for pcrel),
 * sorted by start, overlaps removed: the first one wins. An FDE that
 * shares any address with another one is marked: which of them libdw
 * finds for an address there depends on the order it met them in.
 */
static int list_fdes(Elf *elf, Elf_Data *d, bool eh, uint64_t sh_addr, struct fde_list *l)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	size_t addr_size = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
	struct fde_ent *r = NULL;
	size_t cap_cies = 0, n = 0, cap = 0, i, j, last, counts[2] = {};
	uint64_t max_end = 0;
	Dwarf_Off off, next;
	int pass, err = 0;

	memset(l, 0, sizeof(*l));
	if (!ident)
		return -ENOEXEC;
	/* CIEs first: an FDE may come before the CIE it names */
	for (pass = 0; pass < 2; pass++) {
		for (off = 0; off < d->d_size; off = next) {
			Dwarf_CFI_Entry e;
			const struct cie_info *c;
			const uint8_t *p, *end;
			uint64_t start, len;
			int ret = dwarf_next_cfi(ident, d, eh, off, &next, &e);

			if (ret != 0 || next <= off)
				break;
			if (e.CIE_id == DW_CIE_ID_64) {
				if (pass || l->nr_cies >= CIES_MAX)
					continue;
				if (l->nr_cies == cap_cies) {
					size_t ncap = cap_cies ? 2 * cap_cies : 16;
					void *np = reallocarray(l->cies, ncap, sizeof(*l->cies));

					if (!np) {
						err = -ENOMEM;
						goto out;
					}
					l->cies = np;
					cap_cies = ncap;
				}
				cie_info_init(&l->cies[l->nr_cies++], off, &e.cie, addr_size);
				continue;
			}
			if (!pass)
				continue;
			c = find_cie(l->cies, l->nr_cies, e.fde.CIE_pointer);
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
			if (!len || start + len < start)
				continue;
			if (++counts[!start] > BP_CFI_FDES_MAX) {
				err = -EFBIG;
				goto out;
			}
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				void *np;

				np = reallocarray(r, ncap, sizeof(*r));
				if (!np) {
					err = -ENOMEM;
					goto out;
				}
				r = np;
				cap = ncap;
			}
			r[n] = (struct fde_ent){
				.start = start,
				.end = start + len,
				.off = off,
				.insns = fde_program(c, p, end),
				.insns_end = end,
				.cie = (uint32_t)(c - l->cies),
				.hidden = !start,
			};
			n++;
		}
		/* no CIE at all: qsort must not be handed NULL (found by fuzz_elf) */
		if (!pass && l->nr_cies)
			qsort(l->cies, l->nr_cies, sizeof(*l->cies), cmp_cie);
	}
	if (!n) {
		err = -ENOENT;
		goto out;
	}
	qsort(r, n, sizeof(*r), cmp_fde);
	/*
	 * Nested or overlapping FDEs (hand-written assembly): the first one
	 * wins. Discarded ones (start 0) are not listed but may still cover
	 * a listed range as libdw sees it.
	 */
	for (i = 0, j = 0, last = SIZE_MAX; i < n; i++) {
		bool over = i && r[i].start < max_end;

		if (r[i].end > max_end)
			max_end = r[i].end;
		if (over && last != SIZE_MAX && r[last].end > r[i].start)
			r[last].shared = true;
		if (r[i].hidden || (last != SIZE_MAX && r[i].start < r[last].end))
			continue;
		r[i].shared = over;
		last = j;
		r[j++] = r[i];
	}
	if (!j) {
		err = -ENOENT;
		goto out;
	}
	l->v = r;
	l->n = j;
	return 0;
out:
	free(r);
	fde_list_free(l);
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
	struct fde_list l;
	struct cfi_src src;
	size_t i;
	int err;

	*out = NULL;
	*nr = 0;
	err = open_cfi(elf, fsize, false, &src);
	if (!err)
		err = list_fdes(elf, src.data, src.eh, src.sh_addr, &l);
	close_cfi(&src);
	if (err)
		return err;
	*out = calloc(l.n, sizeof(**out));
	if (!*out) {
		fde_list_free(&l);
		return -ENOMEM;
	}
	for (i = 0; i < l.n; i++) {
		(*out)[i].start = l.v[i].start;
		(*out)[i].end = l.v[i].end;
	}
	*nr = l.n;
	fde_list_free(&l);
	return 0;
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

/* --- rows, by our own interpreter ----------------------------------------- */

/*
 * One pass over each FDE's program instead of libdw's evaluation at every
 * row (which replays the program from the FDE's start each time and
 * mallocs a frame per row). It keeps what classify() looks at: the CFA
 * rule, and the rules of rbp and of the return address column, and
 * reproduces libdw 0.188's answers for them, quirks included (the
 * interpretation in execute_cfi, the Dwarf_Op lists dwarf_frame_register
 * and dwarf_frame_cfa hand out). Where libdw's answer depends on bytes
 * past the end of a program or an expression (it reads a LEB128 there),
 * or on state we do not keep (DW_CFA_set_loc, a very deep state stack),
 * the FDE is left to libdw: the oracle test checks every row against it.
 */

/* libdw's struct dwarf_frame_register: a 3-bit rule, a 61-bit signed value */
enum reg_rule_kind {
	RULE_UNSPEC, RULE_UNDEF, RULE_SAME, RULE_OFFSET, RULE_VAL_OFFSET, RULE_REGISTER,
	RULE_EXPR, RULE_VAL_EXPR,
};

enum cfa_rule_kind { CFA_UNDEF, CFA_OFFSET, CFA_EXPR, CFA_INVALID };

struct reg_rule {
	uint8_t rule;
	int64_t value;
	const uint8_t *expr;	/* RULE_*EXPR: the block */
	uint64_t len;
};

struct cfa_frame {
	uint8_t cfa;
	uint64_t cfa_reg, cfa_off;
	const uint8_t *cfa_expr;
	uint64_t cfa_len;
	struct reg_rule bp, ra;
};

/* libdw refuses register numbers from here on (enough_registers) */
#define REG_NUM_MAX	(INT32_MAX / 8)
/* remember_state nesting kept here; deeper: libdw does that FDE */
#define STATE_STACK_MAX	16
/* more Dwarf_Ops than any shape classify() recognises */
#define OPS_MAX		12

enum { RUN_OK, RUN_INVALID, RUN_UNSURE };
enum { INIT_NONE, INIT_OK, INIT_INVALID, INIT_UNSURE };

struct interp {
	const struct cie_info *cie;
	struct cfa_frame fs, stack[STATE_STACK_MAX];
	unsigned int depth;
	/* FDE only */
	uint64_t loc, cur, end;
	struct row_buf *b;
	struct bp_cfi_stats *st;
	int err;		/* row_add's */
};

/*
 * LEB128 as libdw reads it when it starts inside [*pp, end): false if not.
 * At most 10 bytes unsigned, 9 signed plus a tenth that gives only the
 * sign; past them, or past end, the largest value.
 */
static bool leb(const uint8_t **pp, const uint8_t *end, bool sign, uint64_t *out)
{
	const uint8_t *p = *pp;
	size_t lim = sign ? 9 : 10, max = (size_t)(end - p) < lim ? (size_t)(end - p) : lim, i;
	uint64_t v = 0;

	if (p >= end)
		return false;
	for (i = 0; i < max; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			if (sign && (p[i] & 0x40))
				v |= -((uint64_t)1 << (7 * (i + 1)));
			*pp = p + i + 1;
			*out = v;
			return true;
		}
	}
	p += max;
	*out = sign ? INT64_MAX : UINT64_MAX;
	if (sign && p < end) {
		if (!(*p & 0x80))
			*out = v | (uint64_t)*p << 63;
		p++;
	}
	*pp = p;
	return true;
}

enum { OPS_OK, OPS_OTHER, OPS_UNSURE };

/*
 * A DWARF expression as __libdw_intern_expression lists it, for the ops
 * classify()'s shapes are made of. OPS_OTHER: libdw fails on it, or lists
 * an op (or more ops) no shape has, so no shape matches either way.
 */
static int decode_ops(const uint8_t *p, uint64_t len, Dwarf_Op *ops, size_t max, size_t *n)
{
	const uint8_t *end = p + len;

	*n = 0;
	while (p < end) {
		Dwarf_Op *o;

		if (*n == max)
			return OPS_OTHER;
		o = &ops[(*n)++];
		o->number = o->number2 = 0;
		o->atom = *p++;
		switch (o->atom) {
		case DW_OP_deref:
		case DW_OP_and:
		case DW_OP_ge:
		case DW_OP_shl:
		case DW_OP_plus:
		case DW_OP_lit0 ... DW_OP_lit31:
		case DW_OP_call_frame_cfa:
		case DW_OP_stack_value:
			break;
		case DW_OP_plus_uconst:
			if (!leb(&p, end, false, &o->number))
				return OPS_UNSURE;
			break;
		case DW_OP_breg0 ... DW_OP_breg31:
			if (!leb(&p, end, true, &o->number))
				return OPS_UNSURE;
			break;
		case DW_OP_bregx:
			if (!leb(&p, end, false, &o->number))
				return OPS_UNSURE;
			if (p >= end || !leb(&p, end, true, &o->number2))
				return OPS_OTHER;
			break;
		default:
			return OPS_OTHER;
		}
	}
	return OPS_OK;
}

/*
 * dwarf_frame_register()'s answer for rbp or the return address:
 * *nops ops in ops (ops_mem: false when libdw hands out NULL);
 * -1: it fails (or the ops match no shape), 1: unsure.
 */
static int frame_register(const struct reg_rule *r, Dwarf_Op *ops, size_t *nops, bool *mem)
{
	size_t n;
	int ret;

	*mem = true;
	*nops = 0;
	switch (r->rule) {
	case RULE_UNSPEC:
	case RULE_UNDEF:
		return 0;
	case RULE_SAME:
		*mem = false;
		return 0;
	case RULE_OFFSET:
	case RULE_VAL_OFFSET:
		ops[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_call_frame_cfa };
		if (r->value)
			ops[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_plus_uconst,
						      .number = (uint64_t)r->value };
		if (r->rule == RULE_VAL_OFFSET)
			ops[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_stack_value };
		return 0;
	case RULE_REGISTER:
		ops[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_regx, .number = (uint64_t)r->value };
		return 0;
	default:
		/* an empty block: no ops at all, not even the CFA push */
		if (!r->len)
			return 0;
		ops[0] = (Dwarf_Op){ .atom = DW_OP_call_frame_cfa };
		ret = decode_ops(r->expr, r->len, ops + 1, OPS_MAX - 2, &n);
		if (ret == OPS_UNSURE)
			return 1;
		if (ret != OPS_OK)
			return -1;
		*nops = n + 1;
		if (r->rule == RULE_VAL_EXPR)
			ops[(*nops)++] = (Dwarf_Op){ .atom = DW_OP_stack_value };
		return 0;
	}
}

/* classify() on our state: 0, or 1 when only libdw knows */
static int classify_state(const struct cie_info *cie, const struct cfa_frame *f,
			  struct bp_uw_row *r)
{
	Dwarf_Op mem[OPS_MAX];
	size_t nops;
	int64_t off;
	bool is_mem;
	int plt, ret;

	r->kind = BP_UW_INVALID;
	r->bp = BP_UW_BP_SAME;
	r->cfa = 0;
	if (cie->signal) {
		r->kind = BP_UW_SIGNAL;
		return 0;
	}
	if ((int)cie->ra != REG_RA)
		return 0;
	ret = frame_register(&f->ra, mem, &nops, &is_mem);
	if (ret)
		return ret > 0;
	if (!nops) {
		if (is_mem)
			r->kind = BP_UW_STOP;
		return 0;
	}
	if (!at_cfa(mem, nops, &off) || off != -8)
		return 0;

	switch (f->cfa) {
	case CFA_OFFSET:
		mem[0] = (Dwarf_Op){ .atom = DW_OP_bregx, .number = f->cfa_reg,
				      .number2 = f->cfa_off };
		nops = 1;
		break;
	case CFA_EXPR:
		if (!f->cfa_len)
			return 0;
		ret = decode_ops(f->cfa_expr, f->cfa_len, mem, OPS_MAX, &nops);
		if (ret == OPS_UNSURE)
			return 1;
		if (ret != OPS_OK)
			return 0;
		break;
	default:
		return 0;
	}
	if (nops == 1 && mem[0].atom == DW_OP_bregx &&
	    (mem[0].number == REG_SP || mem[0].number == REG_BP)) {
		if (!cfa_slots((int64_t)mem[0].number2, &r->cfa))
			return 0;
		r->kind = mem[0].number == REG_SP ? BP_UW_CFA_SP : BP_UW_CFA_BP;
	} else if (nops == 2 && mem[0].atom == DW_OP_breg6 && mem[1].atom == DW_OP_deref) {
		if (!cfa_slots((int64_t)mem[0].number, &r->cfa))
			return 0;
		r->kind = BP_UW_CFA_DEREF_BP;
	} else if ((plt = plt_threshold(mem, nops)) >= 0) {
		r->kind = BP_UW_PLT;
		r->cfa = (int16_t)plt;
		return 0;
	} else {
		return 0;
	}

	ret = frame_register(&f->bp, mem, &nops, &is_mem);
	if (ret) {
		r->kind = BP_UW_INVALID;
		return ret > 0;
	}
	if (!nops)
		return 0;
	if (at_cfa(mem, nops, &off) && off && off % 8 == 0 && off / 8 > INT8_MIN &&
	    off / 8 <= INT8_MAX) {
		r->bp = (int8_t)(off / 8);
		return 0;
	}
	/* never true with libdw's lists (an expression starts with the CFA push) */
	if (nops == 1 && is_op(&mem[0], DW_OP_breg6, 0)) {
		r->bp = BP_UW_BP_AT_BP;
		return 0;
	}
	r->kind = BP_UW_INVALID;
	return 0;
}

static void count_row(struct bp_cfi_stats *st, const struct bp_uw_row *r)
{
	switch (r->kind) {
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
}

/* the row at ip->cur, as fde_rows() would add it: RUN_OK or RUN_UNSURE */
static int emit_row(struct interp *ip)
{
	struct bp_uw_row r;

	if (classify_state(ip->cie, &ip->fs, &r))
		return RUN_UNSURE;
	count_row(ip->st, &r);
	ip->err = row_add(ip->b, ip->cur, &r);
	return RUN_OK;
}

static int set_rule(struct interp *ip, uint64_t reg, uint8_t rule, uint64_t value,
		    const uint8_t *expr, uint64_t len)
{
	struct reg_rule *r;

	if (reg >= REG_NUM_MAX)
		return RUN_INVALID;
	if (reg == REG_BP)
		r = &ip->fs.bp;
	else if (reg == REG_RA)
		r = &ip->fs.ra;
	else
		return RUN_OK;
	r->rule = rule;
	/* the 61-bit field keeps the low bits, sign-extended */
	r->value = (int64_t)(value << 3) >> 3;
	r->expr = expr;
	r->len = len;
	return RUN_OK;
}

/*
 * One program, as execute_cfi() runs it: the CIE's initial instructions
 * (ip->b NULL), or an FDE's, adding a row each time the location passes
 * the current row's start. RUN_OK at the end, RUN_INVALID where libdw
 * fails (the caller adds the invalid row), RUN_UNSURE: leave it to libdw.
 */
static int run_program(struct interp *ip, const uint8_t *p, const uint8_t *end)
{
	const struct cie_info *cie = ip->cie;
	bool in_cie = !ip->b;

	while (p < end) {
		uint8_t opcode = *p++;
		uint64_t reg, off, delta = opcode & 0x3f, len;
		const uint8_t *blk;
		int ret = RUN_OK;

		switch (opcode) {
		case DW_CFA_advance_loc1:
			if (p >= end)
				return RUN_UNSURE;
			delta = *p++;
			goto advance;
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
		case DW_CFA_MIPS_advance_loc8:
			len = opcode == DW_CFA_advance_loc2 ? 2 : opcode == DW_CFA_advance_loc4 ? 4 : 8;
			if ((uint64_t)(end - p) < len)
				return RUN_INVALID;
			for (delta = 0, off = 0; off < len; off++)
				delta |= (uint64_t)p[off] << (8 * off);
			p += len;
			goto advance;
		case DW_CFA_advance_loc ... DW_CFA_advance_loc + 0x3f:
advance:
			if (in_cie)
				return RUN_INVALID;
			ip->loc += delta * cie->caf;
			if (ip->loc <= ip->cur)
				continue;
			ret = emit_row(ip);
			if (ret || ip->err)
				return ret;
			ip->cur = ip->loc < ip->end ? ip->loc : ip->end;
			if (ip->cur >= ip->end)
				return RUN_OK;
			continue;
		case DW_CFA_set_loc:
			return RUN_UNSURE;

		case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf:
			if (!leb(&p, end, false, &reg))
				return RUN_UNSURE;
			if (p >= end)
				return RUN_INVALID;
			if (opcode == DW_CFA_def_cfa) {
				if (!leb(&p, end, false, &off))
					return RUN_UNSURE;
			} else {
				if (!leb(&p, end, true, &off))
					return RUN_UNSURE;
				off *= (uint64_t)cie->daf;
			}
			ip->fs.cfa = CFA_OFFSET;
			ip->fs.cfa_reg = reg;
			ip->fs.cfa_off = off;
			continue;
		case DW_CFA_def_cfa_register:
			if (!leb(&p, end, false, &reg))
				return RUN_UNSURE;
			if (ip->fs.cfa != CFA_OFFSET)
				ip->fs.cfa = CFA_INVALID;
			ip->fs.cfa_reg = reg;
			continue;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_def_cfa_offset_sf:
			if (opcode == DW_CFA_def_cfa_offset) {
				if (!leb(&p, end, false, &off))
					return RUN_UNSURE;
			} else {
				if (!leb(&p, end, true, &off))
					return RUN_UNSURE;
				off *= (uint64_t)cie->daf;
			}
			if (ip->fs.cfa != CFA_OFFSET)
				ip->fs.cfa = CFA_INVALID;
			ip->fs.cfa_off = off;
			continue;
		case DW_CFA_def_cfa_expression:
			if (!leb(&p, end, false, &len))
				return RUN_UNSURE;
			if (len > (uint64_t)(end - p))
				return RUN_INVALID;
			ip->fs.cfa = CFA_EXPR;
			ip->fs.cfa_expr = p;
			ip->fs.cfa_len = len;
			p += len;
			continue;

		case DW_CFA_undefined:
		case DW_CFA_same_value:
			if (!leb(&p, end, false, &reg))
				return RUN_UNSURE;
			ret = set_rule(ip, reg, opcode == DW_CFA_undefined ? RULE_UNDEF : RULE_SAME,
				       0, NULL, 0);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_val_offset:
			if (!leb(&p, end, false, &delta))
				return RUN_UNSURE;
			if (p >= end)
				return RUN_INVALID;
			/* fall through */
		case DW_CFA_offset ... DW_CFA_offset + 0x3f:
			if (!leb(&p, end, false, &off))
				return RUN_UNSURE;
			ret = set_rule(ip, delta,
				       opcode == DW_CFA_val_offset ? RULE_VAL_OFFSET : RULE_OFFSET,
				       off * (uint64_t)cie->daf, NULL, 0);
			break;
		case DW_CFA_offset_extended_sf:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			if (!leb(&p, end, false, &reg))
				return RUN_UNSURE;
			if (opcode != DW_CFA_offset_extended_sf && p >= end)
				return RUN_INVALID;
			if (opcode == DW_CFA_GNU_negative_offset_extended) {
				if (!leb(&p, end, false, &off))
					return RUN_UNSURE;
				off = -off;
			} else if (!leb(&p, end, true, &off)) {
				return RUN_UNSURE;
			}
			ret = set_rule(ip, reg,
				       opcode == DW_CFA_val_offset_sf ? RULE_VAL_OFFSET : RULE_OFFSET,
				       off * (uint64_t)cie->daf, NULL, 0);
			break;
		case DW_CFA_register:
			if (!leb(&p, end, false, &reg))
				return RUN_UNSURE;
			if (p >= end)
				return RUN_INVALID;
			if (!leb(&p, end, false, &off))
				return RUN_UNSURE;
			ret = set_rule(ip, reg, RULE_REGISTER, off, NULL, 0);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!leb(&p, end, false, &reg))
				return RUN_UNSURE;
			if (opcode == DW_CFA_expression && p >= end)
				return RUN_INVALID;
			if (!leb(&p, end, false, &len))
				return RUN_UNSURE;
			if (len > (uint64_t)(end - p))
				return RUN_INVALID;
			blk = p;
			p += len;
			ret = set_rule(ip, reg,
				       opcode == DW_CFA_expression ? RULE_EXPR : RULE_VAL_EXPR,
				       0, blk, len);
			break;

		case DW_CFA_restore_extended:
			if (!leb(&p, end, false, &delta))
				return RUN_UNSURE;
			/* fall through */
		case DW_CFA_restore ... DW_CFA_restore + 0x3f:
			/* the CIE's initial rule, which its own program cannot ask for */
			if (in_cie || delta >= REG_NUM_MAX)
				return RUN_INVALID;
			if (delta == REG_BP)
				ip->fs.bp = cie->state->bp;
			else if (delta == REG_RA)
				ip->fs.ra = cie->state->ra;
			continue;
		case DW_CFA_remember_state:
			if (ip->depth == STATE_STACK_MAX)
				return RUN_UNSURE;
			ip->stack[ip->depth++] = ip->fs;
			continue;
		case DW_CFA_restore_state:
			if (!ip->depth)
				return RUN_INVALID;
			ip->fs = ip->stack[--ip->depth];
			continue;
		case DW_CFA_nop:
			continue;
		case DW_CFA_GNU_window_save:
			/* SPARC's shorthand, which libdw applies on any machine */
			ret = set_rule(ip, REG_RA, RULE_OFFSET, 0, NULL, 0);
			break;
		case DW_CFA_GNU_args_size:
			if (!leb(&p, end, false, &off))
				return RUN_UNSURE;
			continue;
		default:
			return RUN_INVALID;
		}
		if (ret)
			return ret;
	}
	if (in_cie)
		return RUN_OK;
	/* the last row runs to the FDE's end */
	return emit_row(ip);
}

/* the ABI's initial rules (libebl's x86_64_abi_cfi), then the CIE's program */
static void cie_init(struct cie_info *c)
{
	struct interp ip = {
		.cie = c,
		.fs = {
			.cfa = CFA_UNDEF,
			.bp = { .rule = RULE_SAME },
			.ra = { .rule = RULE_SAME },
		},
	};
	int ret;

	c->state = malloc(sizeof(*c->state));
	if (!c->state) {
		c->init = INIT_UNSURE;
		return;
	}
	ret = run_program(&ip, c->insns, c->insns_end);
	*c->state = ip.fs;
	c->init = ret == RUN_OK ? INIT_OK : ret == RUN_INVALID ? INIT_INVALID : INIT_UNSURE;
}

/*
 * The rows of one FDE by our interpreter: 0, -errno, or 1 when libdw must
 * do this FDE (nothing added then).
 */
static int fde_rows_interp(struct cie_info *cie, const struct fde_ent *f, struct row_buf *b,
			   struct bp_cfi_stats *st)
{
	static const struct bp_uw_row invalid = { .kind = BP_UW_INVALID };
	struct bp_cfi_stats st0 = *st;
	uint32_t n0 = b->n;
	struct interp ip;
	int ret;

	if (f->shared || !f->insns)
		return 1;
	if (cie->init == INIT_NONE)
		cie_init(cie);
	if (cie->init == INIT_UNSURE)
		return 1;
	if (cie->init == INIT_INVALID)
		return row_add(b, f->start, &invalid);
	ip.cie = cie;
	ip.fs = *cie->state;
	ip.depth = 0;
	ip.loc = ip.cur = f->start;
	ip.end = f->end;
	ip.b = b;
	ip.st = st;
	ip.err = 0;
	ret = run_program(&ip, f->insns, f->insns_end);
	if (ip.err)
		return ip.err;
	if (ret == RUN_INVALID)
		return row_add(b, ip.cur, &invalid);
	if (ret == RUN_UNSURE) {
		/*
		 * Rows added so far start at or after this FDE's start, after
		 * every earlier row: none of those was replaced or merged.
		 */
		b->n = n0;
		*st = st0;
		return 1;
	}
	return 0;
}

static uint64_t le32s(const uint8_t *p)
{
	return (uint64_t)(int64_t)(int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
					    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/*
 * libdw finds the FDE for an address through .eh_frame_hdr's table when
 * the file has one before .eh_frame (dwarf_getcfi_elf): an FDE the table
 * does not lead to exactly (a table out of step with .eh_frame) is left to
 * libdw, and the whole file when the table is in a form not followed here.
 * Linkers write version 1, pcrel|sdata4, udata4, datarel|sdata4, sorted.
 */
static void check_hdr_table(Elf *elf, uint64_t fsize, uint64_t eh_addr, struct fde_list *l)
{
	Elf_Scn *scn = NULL, *hdr = NULL;
	const uint8_t *h, *t;
	uint64_t hdr_addr = 0, count, i, k;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Data *d;

	if (elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = section_name(elf, fsize, shstrndx, &sh);
		if (!n)
			continue;
		if (!strcmp(n, ".eh_frame_hdr")) {
			hdr = scn;
			hdr_addr = sh.sh_addr;
		} else if (!strcmp(n, ".eh_frame")) {
			break;
		}
	}
	if (!hdr)
		return;
	d = elf_rawdata(hdr, NULL);
	if (!d || !d->d_buf || d->d_size < 12)
		return;
	h = d->d_buf;
	if (h[0] != 1 || h[1] == DW_EH_PE_omit || h[2] == DW_EH_PE_omit)
		return;
	if (h[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) || h[2] != DW_EH_PE_udata4)
		goto all;
	count = le32s(h + 8) & UINT32_MAX;
	if (!count || h[3] == DW_EH_PE_omit || (h[3] & ~DW_EH_PE_signed) == DW_EH_PE_uleb128)
		return;
	if (h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		goto all;
	if (count > (d->d_size - 12) / 8 || hdr_addr + 4 + le32s(h + 4) != eh_addr)
		return;
	t = h + 12;
	for (i = 1; i < count; i++)
		if (le32s(t + 8 * i) <= le32s(t + 8 * (i - 1)))
			goto all;
	for (k = 0; k < l->n; k++) {
		struct fde_ent *f = &l->v[k];
		size_t lo = 0, hi = count;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (hdr_addr + le32s(t + 8 * mid) <= f->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || hdr_addr + le32s(t + 8 * (lo - 1)) != f->start ||
		    hdr_addr + le32s(t + 8 * (lo - 1) + 4) - eh_addr != f->off ||
		    (lo < count && hdr_addr + le32s(t + 8 * lo) < f->end))
			f->shared = true;
	}
	return;
all:
	for (k = 0; k < l->n; k++)
		l->v[k].shared = true;
}

/*
 * ref: every row from libdw (the reference, for the tests); else our
 * interpreter, with libdw for the FDEs it leaves (fde_rows_interp).
 */
static int build(Elf *elf, uint64_t fsize, struct bp_cfi_table *out, bool ref)
{
	static const struct bp_uw_row fp = { .kind = BP_UW_FP };
	struct fde_list l = {};
	struct row_buf b = {};
	struct cfi_src src;
	GElf_Ehdr eh;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	err = open_cfi(elf, fsize, true, &src);
	if (!err)
		err = list_fdes(elf, src.data, src.eh, src.sh_addr, &l);
	if (err)
		goto out;
	if (src.eh && !ref)
		check_hdr_table(elf, fsize, src.sh_addr, &l);
	/* the initial rules are x86-64's (cie_init): others go to libdw */
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    gelf_getclass(elf) != ELFCLASS64)
		ref = true;
	b.base = l.v[0].start;
	for (i = 0; i < l.n; i++) {
		const struct fde_ent *f = &l.v[i];
		struct bp_cfi_range r = { .start = f->start, .end = f->end };

		/* out of the 32-bit pc range: the rest are frame-pointer code */
		if (f->end - b.base > UINT32_MAX)
			break;
		/*
		 * A gap between functions has no CFI. Alignment padding (less
		 * than 16 bytes of nops) never runs: the previous row can cover it.
		 */
		if (i && f->start >= l.v[i - 1].end + PAD_MAX) {
			err = row_add(&b, l.v[i - 1].end, &fp);
			if (err)
				goto out;
		}
		err = ref ? 1 : fde_rows_interp(&l.cies[f->cie], f, &b, &out->st);
		if (err == 1)
			err = fde_rows(src.cfi, &r, &b, &out->st);
		if (err)
			goto out;
	}
	/* the first FDE alone is over the 32-bit pc range (found by mutation) */
	if (!i) {
		err = -EFBIG;
		goto out;
	}
	err = row_add(&b, l.v[i - 1].end, &fp);
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
	fde_list_free(&l);
	close_cfi(&src);
	return err;
}

int bp_cfi__build(Elf *elf, uint64_t fsize, struct bp_cfi_table *out)
{
	return build(elf, fsize, out, false);
}

int bp_cfi__build_ref(Elf *elf, uint64_t fsize, struct bp_cfi_table *out)
{
	return build(elf, fsize, out, true);
}

void bp_cfi__free(struct bp_cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
