// SPDX-License-Identifier: GPL-2.0
/*
 * Lines and inlines with libdw: the compilation unit of an address
 * (.debug_aranges when there is one, else an index of every unit's address
 * ranges built on the first miss), its line table, and the chain of scopes
 * holding the address (dwarf_getscopes), whose inlined subroutines are the
 * inlined frames and whose DW_AT_call_file/call_line are where each was
 * inlined.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/dwarf_cfi.h"
#include "symbolize/dwarf_lines.h"
#include "util/log.h"

/* function ranges one file's index may hold, and DIEs visited to build it */
#define FUNCS_MAX	(1U << 22)
#define DIES_MAX	(1U << 24)
/* nesting followed: namespaces, types, functions, blocks */
#define DEPTH_MAX	64

struct func_range {
	uint64_t lo, hi;
	Dwarf_Off off;		/* of the subprogram's DIE */
};

struct bp_dwarf {
	Elf *elf;		/* over image */
	Dwarf *dw;
	char *image;		/* the file's size, mapped; only what was read is resident */
	uint64_t image_len;
	uint64_t bytes;
	bool failed;		/* libdw refused it */
	bool indexed;		/* funcs[] built */
	struct func_range *funcs;
	size_t nr_funcs;
	uint32_t dies;		/* visited building it */
};

static bool section_fits(const GElf_Shdr *sh, uint64_t fsize)
{
	return sh->sh_type != SHT_NOBITS && sh->sh_offset <= fsize &&
	       sh->sh_size <= fsize - sh->sh_offset;
}

bool bp_dwarf__has_info(Elf *elf, uint64_t fsize)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh, ssh;
	Elf_Scn *str;

	if (elf_getshdrstrndx(elf, &shstrndx) || !shstrndx)
		return false;
	str = elf_getscn(elf, shstrndx);
	if (!str || !gelf_getshdr(str, &ssh) || !section_fits(&ssh, fsize) ||
	    ssh.sh_size > 1024 * 1024)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !section_fits(&sh, fsize) || !sh.sh_size)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && (!strcmp(n, ".debug_info") || !strcmp(n, ".zdebug_info")))
			return true;
	}
	return false;
}

/* debug sections lines, inlines and ranges never read: left as zero pages */
static bool section_skipped(const char *n)
{
	static const char *const skip[] = { "loc", "loclists", "macro", "macinfo",
					     "pubnames", "pubtypes", "gnu_pubnames",
					     "gnu_pubtypes" };
	size_t i;

	if (!strncmp(n, ".zdebug_", 8))
		n += 8;
	else if (!strncmp(n, ".debug_", 7))
		n += 7;
	else
		return true;
	for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(n, skip[i]))
			return true;
	return false;
}

/* bytes [off, off + len) of the file into the image at off; *sum counts them */
static int read_range(int fd, char *image, uint64_t fsize, uint64_t off, uint64_t len,
		      uint64_t *sum)
{
	if (off > fsize || len > fsize - off)
		return -EFBIG;
	*sum += len;
	while (len) {
		ssize_t n = pread(fd, image + off, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;	/* shorter than it said */
		off += n;
		len -= n;
	}
	return 0;
}

/* the ELF header, program and section headers, section names and wanted debug sections */
static int read_image(Elf *elf, int fd, char *image, uint64_t fsize, uint64_t *sum)
{
	size_t shnum, phnum, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int err;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) ||
	    elf_getphdrnum(elf, &phnum) || elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	err = read_range(fd, image, fsize, 0, eh.e_ehsize, sum);
	if (!err && phnum)
		err = read_range(fd, image, fsize, eh.e_phoff, (uint64_t)phnum * eh.e_phentsize,
				 sum);
	if (!err && shnum)
		err = read_range(fd, image, fsize, eh.e_shoff, (uint64_t)shnum * eh.e_shentsize,
				 sum);
	while (!err && (scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if (elf_ndxscn(scn) != shstrndx) {
			n = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!n || section_skipped(n))
				continue;
		}
		err = read_range(fd, image, fsize, sh.sh_offset, sh.sh_size, sum);
	}
	return err;
}

int bp_dwarf__open(int fd, uint64_t fsize, struct bp_dwarf **out)
{
	uint64_t inflated = 0, loaded = 0;
	struct bp_dwarf *d;
	Elf *elf, *mem = NULL;
	char *image;
	int err;

	*out = NULL;
	if (fsize > BP_DWARF_FILE_MAX)
		return -EFBIG;
	if (fsize < sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	/* headers and names through libelf's reads; no section data yet */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	if (!bp_dwarf__has_info(elf, fsize)) {
		elf_end(elf);
		return -ENOENT;
	}
	image = mmap(NULL, fsize, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (image == MAP_FAILED) {
		elf_end(elf);
		return -ENOMEM;
	}
	err = read_image(elf, fd, image, fsize, &loaded);
	elf_end(elf);
	if (!err) {
		mem = elf_memory(image, fsize);
		err = mem ? 0 : -ENOEXEC;
	}
	if (!err)
		err = bp_dwarf__check_sections(mem, fsize, BP_DWARF_SECTION_MAX,
					       BP_DWARF_TOTAL_MAX, &inflated);
	d = err ? NULL : calloc(1, sizeof(*d));
	if (!d) {
		if (mem)
			elf_end(mem);
		munmap(image, fsize);
		return err ? err : -ENOMEM;
	}
	d->elf = mem;
	d->image = image;
	d->image_len = fsize;
	/* what was read, and what libdw inflates its compressed sections to */
	d->bytes = loaded + inflated;
	*out = d;
	return 0;
}

/*
 * libdw on the first lookup: it inflates compressed debug sections right
 * away (tens of ms for libc's), which would delay the snapshot, and with
 * it the unwind tables, of a process just started.
 */
static bool begin(struct bp_dwarf *d)
{
	if (!d->dw && !d->failed) {
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
		d->failed = !d->dw;
	}
	return d->dw != NULL;
}

void bp_dwarf__free(struct bp_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->image)
		munmap(d->image, d->image_len);
	free(d->funcs);
	free(d);
}

uint64_t bp_dwarf__bytes(const struct bp_dwarf *d)
{
	return d ? d->bytes : 0;
}

static int cmp_func(const void *a, const void *b)
{
	const struct func_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? 1 : x->hi > y->hi ? -1 : 0;
}

static void add_func(struct bp_dwarf *d, Dwarf_Die *die, size_t *cap)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t o = 0;

	while ((o = dwarf_ranges(die, o, &base, &lo, &hi)) > 0) {
		if (hi <= lo || !lo)
			continue;
		if (d->nr_funcs == *cap) {
			size_t ncap = *cap ? 2 * *cap : 1024;
			void *np;

			if (ncap > FUNCS_MAX)
				return;
			np = reallocarray(d->funcs, ncap, sizeof(*d->funcs));
			if (!np)
				return;
			d->funcs = np;
			*cap = ncap;
		}
		d->funcs[d->nr_funcs++] = (struct func_range){ lo, hi, dwarf_dieoffset(die) };
	}
}

/* the out-of-line functions among die's children, through namespaces and types */
static void index_children(struct bp_dwarf *d, Dwarf_Die *parent, int depth, size_t *cap)
{
	Dwarf_Die child;

	if (depth >= DEPTH_MAX || dwarf_child(parent, &child) != 0)
		return;
	do {
		if (++d->dies > DIES_MAX)
			return;
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			add_func(d, &child, cap);
			/* nested functions (GNU C, closures in some languages) */
			index_children(d, &child, depth + 1, cap);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_lexical_block:
			index_children(d, &child, depth + 1, cap);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * Every function's address ranges, built on the first lookup: the chain of
 * inlined calls at an address is then searched inside its function only.
 */
static void build_index(struct bp_dwarf *d)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	d->indexed = true;
	while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(d->dw, off + hsize, &cu))
			index_children(d, &cu, 0, &cap);
		if (d->dies > DIES_MAX) {
			bp_dbg("DWARF index cut at %u DIEs", DIES_MAX);
			break;
		}
		off = next;
	}
	qsort(d->funcs, d->nr_funcs, sizeof(*d->funcs), cmp_func);
}

/* the innermost out-of-line function whose ranges hold vaddr */
static bool find_func(struct bp_dwarf *d, uint64_t vaddr, Dwarf_Die *fn)
{
	size_t lo = 0, hi, i;

	if (!d->indexed)
		build_index(d);
	hi = d->nr_funcs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->funcs[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of nested functions sit inside their parent's: look back a little */
	for (i = lo; i > 0 && lo - i < 8; i--)
		if (vaddr < d->funcs[i - 1].hi)
			return dwarf_offdie(d->dw, d->funcs[i - 1].off, fn) != NULL;
	return false;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute mem, *a;
	const char *n;

	a = dwarf_attr_integrate(die, DW_AT_linkage_name, &mem);
	if (!a)
		a = dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &mem);
	if (!a)
		a = dwarf_attr_integrate(die, DW_AT_name, &mem);
	n = a ? dwarf_formstring(a) : NULL;
	return n && *n ? n : NULL;
}

/* the source file of index idx in the unit's file table */
static const char *unit_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/*
 * The inlined calls holding vaddr inside function fn, outermost first,
 * into chain (at most max).
 */
static int inline_chain(Dwarf_Die *fn, uint64_t vaddr, Dwarf_Die *chain, int max)
{
	Dwarf_Die cur = *fn, child;
	int n = 0, depth;

	for (depth = 0; depth < DEPTH_MAX; depth++) {
		bool found = false;

		if (dwarf_child(&cur, &child) != 0)
			break;
		do {
			int tag = dwarf_tag(&child);

			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
				continue;
			if (dwarf_haspc(&child, vaddr) <= 0)
				continue;
			if (tag == DW_TAG_inlined_subroutine) {
				if (n == max)
					return n;
				chain[n++] = child;
			}
			cur = child;
			found = true;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return n;
}

int bp_dwarf__frames(struct bp_dwarf *d, uint64_t vaddr, struct bp_dwarf_frame *out, int max)
{
	Dwarf_Die fn, cu, chain[BP_DWARF_INLINE_MAX];
	Dwarf_Attribute mem;
	Dwarf_Line *line = NULL;
	const char *file = NULL;
	int lineno = 0, nin, i, n = 0;
	bool have_fn;

	if (!d || max <= 0 || !begin(d))
		return -ENOENT;
	have_fn = find_func(d, vaddr, &fn);
	if (have_fn ? !dwarf_diecu(&fn, &cu, NULL, NULL) : !dwarf_addrdie(d->dw, vaddr, &cu))
		return -ENOENT;
	line = dwarf_getsrc_die(&cu, vaddr);
	if (line) {
		file = dwarf_linesrc(line, NULL, NULL);
		if (dwarf_lineno(line, &lineno) || lineno < 0)
			lineno = 0;
	}
	if (!have_fn) {
		/* no function DIE (assembly): the line alone */
		if (!line)
			return -ENOENT;
		out[0] = (struct bp_dwarf_frame){ .file = file, .line = (uint32_t)lineno };
		return 1;
	}
	nin = inline_chain(&fn, vaddr, chain, max - 1 < BP_DWARF_INLINE_MAX ?
						max - 1 : BP_DWARF_INLINE_MAX);
	/* innermost first: the last inlined call's function is at vaddr's line */
	for (i = nin; i-- > 0;) {
		Dwarf_Word w;

		out[n].name = die_name(&chain[i]);
		out[n].file = file;
		out[n].line = (uint32_t)lineno;
		out[n].inlined = true;
		n++;
		/* its caller is at the line of the call */
		file = NULL;
		lineno = 0;
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &mem), &w) == 0)
			file = unit_file(&cu, w);
		if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &mem), &w) == 0 &&
		    w <= INT32_MAX)
			lineno = (int)w;
	}
	out[n].name = die_name(&fn);
	out[n].file = file;
	out[n].line = (uint32_t)lineno;
	out[n].inlined = false;
	return n + 1;
}
