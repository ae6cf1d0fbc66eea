// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/elfsym.h"
#include "symbolize/python_elf.h"

/* files searched for the version string: libpython is ~20 MiB */
#define SEARCH_MAX	(256ULL * 1024 * 1024)
#define CHUNK		(1024 * 1024)

struct load {
	uint64_t off, vaddr, filesz, memsz;
};

struct bp_pyelf {
	int fd;
	Elf *elf;
	uint64_t size;
	struct load *loads;
	size_t nr_loads;
};

static bool fits(uint64_t off, uint64_t len, uint64_t size, uint64_t cap)
{
	return len <= cap && off <= size && len <= size - off;
}

/* the header's counts against the file, before libelf allocates by them */
static int check_header(int fd, uint64_t size)
{
	Elf64_Ehdr eh;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -ENOEXEC;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	if (eh.e_shnum > BP_ELF_SHNUM_MAX || eh.e_phnum > BP_ELF_PHNUM_MAX ||
	    (!eh.e_shnum && eh.e_shoff) || eh.e_phnum == PN_XNUM)
		return -EFBIG;
	if (eh.e_shnum && (eh.e_shentsize != sizeof(Elf64_Shdr) ||
			   !fits(eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr), size, size)))
		return -ENOEXEC;
	if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
			   !fits(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size, size)))
		return -ENOEXEC;
	return 0;
}

int bp_pyelf__open(int fd, struct bp_pyelf **out)
{
	struct bp_pyelf *e;
	struct stat st;
	size_t i, nr;
	GElf_Phdr ph;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -ENOTSUP;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	e->fd = fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto fail;
	}
	e->size = st.st_size;
	err = check_header(fd, e->size);
	if (err)
		goto fail;
	/* read with pread as needed, no mmap: a file truncated under us cannot SIGBUS */
	e->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || elf_getphdrnum(e->elf, &nr)) {
		err = -ENOEXEC;
		goto fail;
	}
	e->loads = calloc(nr ? nr : 1, sizeof(*e->loads));
	if (!e->loads) {
		err = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->loads[e->nr_loads++] = (struct load){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
							 ph.p_memsz };
	}
	*out = e;
	return 0;
fail:
	bp_pyelf__free(e);
	return err;
}

void bp_pyelf__free(struct bp_pyelf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->loads);
	free(e);
}

static int find_in(struct bp_pyelf *e, Elf64_Word type, const char *name, uint64_t *addr,
		   uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr strsh;
		Elf_Scn *strscn;
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		strscn = elf_getscn(e->elf, sh.sh_link);
		if (!fits(sh.sh_offset, sh.sh_size, e->size, BP_ELF_SYMTAB_MAX) || !strscn ||
		    !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB ||
		    !fits(strsh.sh_offset, strsh.sh_size, e->size, BP_ELF_STRTAB_MAX))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		n = d->d_size / sizeof(Elf64_Sym);
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *nm;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_name || s.st_shndx == SHN_UNDEF)
				continue;
			nm = elf_strptr(e->elf, sh.sh_link, s.st_name);
			if (nm && !strcmp(nm, name)) {
				*addr = s.st_value;
				*size = s.st_size;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int bp_pyelf__sym(struct bp_pyelf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	if (!find_in(e, SHT_DYNSYM, name, addr, size))
		return 0;
	return find_in(e, SHT_SYMTAB, name, addr, size);
}

int bp_pyelf__dynsym(struct bp_pyelf *e, const char *name, uint64_t *addr, uint64_t *size)
{
	return find_in(e, SHT_DYNSYM, name, addr, size);
}

size_t bp_pyelf__loads(const struct bp_pyelf *e, uint64_t *off, uint64_t *vaddr,
		       uint64_t *filesz, size_t max)
{
	size_t i;

	for (i = 0; i < e->nr_loads && i < max; i++) {
		off[i] = e->loads[i].off;
		vaddr[i] = e->loads[i].vaddr;
		filesz[i] = e->loads[i].filesz;
	}
	return i;
}

int bp_pyelf__read(struct bp_pyelf *e, uint64_t vaddr, void *buf, size_t len)
{
	size_t i;

	for (i = 0; i < e->nr_loads; i++) {
		const struct load *l = &e->loads[i];
		uint64_t rel, infile;
		ssize_t n;

		if (vaddr < l->vaddr || vaddr - l->vaddr > l->memsz ||
		    len > l->memsz - (vaddr - l->vaddr))
			continue;
		rel = vaddr - l->vaddr;
		infile = rel < l->filesz ? l->filesz - rel : 0;
		if (infile > len)
			infile = len;
		memset(buf, 0, len);
		if (!infile)
			return 0;
		if (!fits(l->off + rel, infile, e->size, e->size))
			return -ENOENT;
		n = pread(e->fd, buf, infile, (off_t)(l->off + rel));
		return n == (ssize_t)infile ? 0 : -EIO;
	}
	return -ENOENT;
}

/*
 * glibc x86-64 __pthread_getspecific, for keys below 32:
 *   cmp $0x1f,%edi; ...; add $A,%rax; shl $S,%rax; add %fs:0x10,%rax;
 *   mov D(%rax),%reg
 * so a key's value is at thread pointer + (A << S) + D + key * (1 << S).
 * Anything else is a libc we do not know (glibc 2.36 gives 0x318 and 16).
 */
int bp_pyelf__glibc_tsd(struct bp_pyelf *e, uint32_t *off, uint32_t *size)
{
	static const uint8_t fs10[] = { 0x64, 0x48, 0x03, 0x04, 0x25, 0x10, 0, 0, 0 };
	uint8_t code[48];
	uint64_t a, sz;
	size_t i;

	if ((bp_pyelf__sym(e, "__pthread_getspecific", &a, &sz) &&
	     bp_pyelf__sym(e, "pthread_getspecific", &a, &sz)) ||
	    bp_pyelf__read(e, a, code, sizeof(code)))
		return -ENOENT;
	if (code[0] != 0x83 || code[1] != 0xff || code[2] != 0x1f)
		return -ENOENT;
	for (i = 3; i + 8 + sizeof(fs10) + 4 <= sizeof(code); i++) {
		const uint8_t *c = code + i;
		uint32_t add, shift, disp;

		if (c[0] != 0x48 || c[1] != 0x83 || c[2] != 0xc0 || c[4] != 0x48 || c[5] != 0xc1 ||
		    c[6] != 0xe0 || memcmp(c + 8, fs10, sizeof(fs10)))
			continue;
		add = c[3];
		shift = c[7];
		c += 8 + sizeof(fs10);
		/* mov disp8(%rax), %reg */
		if (c[0] != 0x48 || c[1] != 0x8b || (c[2] & 0xc7) != 0x40)
			return -ENOENT;
		disp = c[3];
		if (shift > 6 || add > 0x7f)
			return -ENOENT;
		*off = (add << shift) + disp;
		*size = 1U << shift;
		return 0;
	}
	return -ENOENT;
}

/*
 * "3.MINOR.PATCH" at i, ending in a NUL, and not the tail of a longer
 * number. PY_VERSION is not always a string in .rodata: gcc may store it
 * with immediate moves into Py_GetVersion()'s buffer, so the whole file
 * is searched (the source directory's name, "Python-3.10.13", also says it).
 */
static size_t version_at(const char *buf, size_t len, size_t i, const char *prefix, size_t plen)
{
	size_t j = i + plen, digits = 0;

	if (i && ((buf[i - 1] >= '0' && buf[i - 1] <= '9') || buf[i - 1] == '.'))
		return 0;
	if (len - i < plen || memcmp(buf + i, prefix, plen))
		return 0;
	while (j < len && buf[j] >= '0' && buf[j] <= '9' && digits < 3) {
		j++;
		digits++;
	}
	if (!digits)
		return 0;
	/* a pre-release: 3.13.0rc1, 3.12.0b4, or a distribution's "+" */
	while (j < len && j - i < 16 && (buf[j] == '+' || (buf[j] >= 'a' && buf[j] <= 'z') ||
					 (buf[j] >= '0' && buf[j] <= '9')))
		j++;
	return j < len && !buf[j] ? j - i : 0;
}

int bp_pyelf__version_string(struct bp_pyelf *e, unsigned int minor, char *out, size_t len)
{
	char prefix[16], *buf;
	size_t plen;
	int err = -ENOENT;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "3.%u.", minor);
	if (e->size > SEARCH_MAX)
		return -ENOENT;
	buf = malloc(CHUNK + 64);
	if (!buf)
		return -ENOMEM;
	/* chunks overlap by 64 bytes, so a string across a boundary is seen whole */
	for (uint64_t at = 0; at < e->size && err; at += CHUNK) {
		size_t want = e->size - at < CHUNK + 64 ? e->size - at : CHUNK + 64;
		ssize_t got = pread(e->fd, buf, want, (off_t)at);
		size_t i, vl;

		if (got <= 0)
			break;
		for (i = 0; i + plen < (size_t)got && i < CHUNK; i++) {
			if (buf[i] != '3')
				continue;
			vl = version_at(buf, (size_t)got, i, prefix, plen);
			if (vl && vl < len) {
				memcpy(out, buf + i, vl);
				out[vl] = '\0';
				err = 0;
				break;
			}
		}
	}
	free(buf);
	return err;
}
