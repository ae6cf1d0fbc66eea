// SPDX-License-Identifier: GPL-2.0
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "symbolize/elfsym.h"
#include "util/log.h"

#define BUILD_ID_MAX	64	/* bytes; sha1 is 20, nothing real exceeds 64 */

/* how far back a lookup walks to find a symbol that encloses nested ones */
#define ENCLOSING_WALK	8

struct elf_load {
	uint64_t off;
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t memsz;
};

struct bp_elf {
	int fd;
	Elf *elf;
	void *image;			/* our copy for elf_memory() */
	struct elf_load *loads;
	size_t nr_loads;
	char build_id[BUILD_ID_MAX * 2 + 1];
	char *debuglink;
	uint32_t debuglink_crc;
	char *path;
	char *root;
	char *debug_root;

	bool loaded;
	int load_err;
	const char *source;
	struct bp_elf_sym *syms;
	size_t nr_syms;
	char *vnames;			/* names with their @VERSION cut off */
	Elf *dbg_elf;
	char *dbg_path;
};

static int elf_init(void)
{
	static int state;	/* 0: not yet, 1: ok, -1: libelf too old */

	if (!state)
		state = elf_version(EV_CURRENT) == EV_NONE ? -1 : 1;
	return state > 0 ? 0 : -ENOTSUP;
}

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (name && elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		if (!name)
			return scn;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static bool note_build_id(Elf_Data *d, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t off = 0, next, name_off, desc_off, i;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;

		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4))
			continue;
		if (!nh.n_descsz || nh.n_descsz > BUILD_ID_MAX)
			continue;
		for (i = 0; i < nh.n_descsz; i++) {
			out[2 * i] = hex[desc[i] >> 4];
			out[2 * i + 1] = hex[desc[i] & 0xf];
		}
		out[2 * i] = '\0';
		return true;
	}
	return false;
}

/* sections first: debug files keep the note section, not a valid PT_NOTE */
static void read_build_id(Elf *elf, char *out)
{
	Elf_Scn *scn = NULL;
	size_t i, nr;
	GElf_Shdr sh;
	GElf_Phdr ph;

	out[0] = '\0';
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && note_build_id(d, out))
			return;
	}
	if (elf_getphdrnum(elf, &nr))
		return;
	for (i = 0; i < nr; i++) {
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (d && d->d_buf && note_build_id(d, out))
			return;
	}
}

static void read_debuglink(struct bp_elf *e)
{
	Elf_Scn *scn = find_section(e->elf, SHT_PROGBITS, ".gnu_debuglink");
	const char *ident;
	size_t len, crc_off;
	uint32_t crc;
	Elf_Data *d;

	if (!scn)
		return;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return;
	len = strnlen(d->d_buf, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (!len || len == d->d_size || crc_off + 4 > d->d_size)
		return;
	memcpy(&crc, (const char *)d->d_buf + crc_off, 4);
	ident = elf_getident(e->elf, NULL);
	if (ident && ident[EI_DATA] == ELFDATA2MSB)
		crc = be32toh(crc);
	else
		crc = le32toh(crc);
	e->debuglink = strndup(d->d_buf, len);
	e->debuglink_crc = crc;
}

static int read_headers(struct bp_elf *e)
{
	size_t i, nr;
	GElf_Ehdr eh;
	GElf_Phdr ph;

	if (elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &eh))
		return -ENOEXEC;
	if (elf_getphdrnum(e->elf, &nr))
		return -ENOEXEC;
	e->loads = calloc(nr ? nr : 1, sizeof(*e->loads));
	if (!e->loads)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->loads[e->nr_loads++] = (struct elf_load){
			.off = ph.p_offset,
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
		};
	}
	read_build_id(e->elf, e->build_id);
	read_debuglink(e);
	return 0;
}

int bp_elf__open_fd(int fd, const struct bp_elf_opts *opts, struct bp_elf **out)
{
	struct bp_elf *e;
	int err;

	*out = NULL;
	err = elf_init();
	if (err) {
		close(fd);
		return err;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		close(fd);
		return -ENOMEM;
	}
	e->fd = fd;
	if (opts) {
		e->path = xstrdup(opts->path);
		e->root = xstrdup(opts->root);
		e->debug_root = xstrdup(opts->debug_root);
		if ((opts->path && !e->path) || (opts->root && !e->root) ||
		    (opts->debug_root && !e->debug_root)) {
			err = -ENOMEM;
			goto err_out;
		}
	}
	/* ELF_C_READ reads sections on demand with pread, no mmap: a file
	 * truncated under us cannot SIGBUS the profiler */
	e->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!e->elf) {
		err = -ENOEXEC;
		goto err_out;
	}
	err = read_headers(e);
	if (err)
		goto err_out;
	*out = e;
	return 0;
err_out:
	bp_elf__free(e);
	return err;
}

int bp_elf__open_mem(const void *image, size_t size, struct bp_elf **out)
{
	struct bp_elf *e;
	int err;

	*out = NULL;
	err = elf_init();
	if (err)
		return err;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->fd = -1;
	e->image = malloc(size ? size : 1);
	if (!e->image) {
		err = -ENOMEM;
		goto err_out;
	}
	memcpy(e->image, image, size);
	e->elf = elf_memory(e->image, size);
	if (!e->elf) {
		err = -ENOEXEC;
		goto err_out;
	}
	err = read_headers(e);
	if (err)
		goto err_out;
	*out = e;
	return 0;
err_out:
	bp_elf__free(e);
	return err;
}

void bp_elf__free(struct bp_elf *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->vnames);
	if (e->dbg_elf)
		elf_end(e->dbg_elf);
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->image);
	free(e->loads);
	free(e->debuglink);
	free(e->path);
	free(e->root);
	free(e->debug_root);
	free(e->dbg_path);
	free(e);
}

const char *bp_elf__build_id(const struct bp_elf *e)
{
	return e->build_id[0] ? e->build_id : NULL;
}

const char *bp_elf__debuglink(const struct bp_elf *e, uint32_t *crc)
{
	if (crc)
		*crc = e->debuglink_crc;
	return e->debuglink;
}

int bp_elf__file_to_vaddr(const struct bp_elf *e, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < e->nr_loads; i++) {
		const struct elf_load *l = &e->loads[i];

		if (off >= l->off && off - l->off < l->filesz) {
			*vaddr = off - l->off + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* --- symbols ----------------------------------------------------------- */

struct raw_sym {
	uint64_t addr;
	uint64_t size;
	const char *name;
	uint32_t shndx;
	uint8_t rank;
};

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* by address; among aliases the preferred name sorts first */
static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	ux = strspn(x->name, "_");
	uy = strspn(y->name, "_");
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The .symtab of a versioned library (libc's debug file) says
 * "memcpy@@GLIBC_2.14": the version is noise in a profile, and two versions
 * of one function would otherwise be two functions.
 */
static int strip_versions(struct bp_elf *e, struct raw_sym *raw, size_t n)
{
	size_t i, need = 0, used = 0;

	for (i = 0; i < n; i++) {
		const char *at = strchr(raw[i].name, '@');

		if (at && at != raw[i].name)
			need += (size_t)(at - raw[i].name) + 1;
	}
	free(e->vnames);
	e->vnames = NULL;
	if (!need)
		return 0;
	e->vnames = malloc(need);
	if (!e->vnames)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *at = strchr(raw[i].name, '@');
		size_t len;

		if (!at || at == raw[i].name)
			continue;
		len = (size_t)(at - raw[i].name);
		memcpy(e->vnames + used, raw[i].name, len);
		e->vnames[used + len] = '\0';
		raw[i].name = e->vnames + used;
		used += len + 1;
	}
	return 0;
}

/* end of each allocated section, for zero-size symbols; 0 when unknown */
static uint64_t *section_ends(Elf *elf, size_t *nr)
{
	Elf_Scn *scn = NULL;
	uint64_t *ends;
	GElf_Shdr sh;
	size_t n;

	if (elf_getshdrnum(elf, &n) || !n)
		return NULL;
	ends = calloc(n, sizeof(*ends));
	if (!ends)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t idx = elf_ndxscn(scn);

		if (idx < n && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC))
			ends[idx] = sh.sh_addr + sh.sh_size;
	}
	*nr = n;
	return ends;
}

static int read_syms(struct bp_elf *e, Elf *elf, Elf_Scn *scn)
{
	struct raw_sym *raw = NULL;
	uint64_t *ends = NULL;
	size_t i, j, n, nr_raw = 0, nr_ends = 0;
	GElf_Shdr sh;
	Elf_Data *d;
	int err = 0;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return -ENOEXEC;
	d = elf_getdata(scn, NULL);
	if (!d)
		return -ENOEXEC;
	n = sh.sh_size / sh.sh_entsize;
	if (!n)
		return -ENOENT;
	raw = calloc(n, sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	ends = section_ends(elf, &nr_ends);

	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		raw[nr_raw++] = (struct raw_sym){
			.addr = sym.st_value,
			.size = sym.st_size,
			.name = name,
			.shndx = sym.st_shndx,
			.rank = (uint8_t)bind_rank(GELF_ST_BIND(sym.st_info)),
		};
	}
	if (!nr_raw) {
		err = -ENOENT;
		goto out;
	}
	err = strip_versions(e, raw, nr_raw);
	if (err)
		goto out;
	qsort(raw, nr_raw, sizeof(*raw), cmp_raw);

	/* one entry per address: the preferred name, the largest size */
	for (i = 0, j = 0; i < nr_raw; i++) {
		if (j && raw[j - 1].addr == raw[i].addr) {
			if (raw[i].size > raw[j - 1].size)
				raw[j - 1].size = raw[i].size;
			continue;
		}
		raw[j++] = raw[i];
	}
	nr_raw = j;

	e->syms = calloc(nr_raw, sizeof(*e->syms));
	if (!e->syms) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr_raw; i++) {
		struct bp_elf_sym *s = &e->syms[i];
		const struct raw_sym *r = &raw[i];
		uint64_t end;

		s->addr = r->addr;
		s->name = r->name;
		if (r->size) {
			s->end = r->addr + r->size;
			continue;
		}
		/* zero-size (assembly): up to the next symbol, within the section */
		end = i + 1 < nr_raw ? raw[i + 1].addr : UINT64_MAX;
		if (ends && r->shndx < nr_ends && ends[r->shndx] > r->addr &&
		    ends[r->shndx] < end)
			end = ends[r->shndx];
		s->end = end == UINT64_MAX ? r->addr + 1 : end;
	}
	e->nr_syms = nr_raw;
out:
	free(ends);
	free(raw);
	return err;
}

static int file_crc(int fd, uint32_t *out)
{
	unsigned char buf[64 * 1024];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	if (n < 0)
		return -errno;
	*out = (uint32_t)crc;
	return 0;
}

/*
 * A candidate debug file: another file than the binary, matching it (CRC for
 * a debuglink, build-id for the build-id tree), with a .symtab.
 */
static Elf *open_debug(struct bp_elf *e, const char *path, bool by_build_id, int *fdp)
{
	char bid[BUILD_ID_MAX * 2 + 1];
	struct stat st, self;
	Elf *elf = NULL;
	uint32_t crc;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	if (e->fd >= 0 && !fstat(e->fd, &self) && self.st_dev == st.st_dev &&
	    self.st_ino == st.st_ino)
		goto fail;
	if (!by_build_id && (file_crc(fd, &crc) || crc != e->debuglink_crc)) {
		bp_dbg("%s: debuglink crc mismatch, ignored", path);
		goto fail;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto fail;
	if (by_build_id) {
		read_build_id(elf, bid);
		if (strcmp(bid, e->build_id)) {
			bp_dbg("%s: build-id mismatch, ignored", path);
			goto fail;
		}
	}
	if (!find_section(elf, SHT_SYMTAB, NULL))
		goto fail;
	*fdp = fd;
	return elf;
fail:
	if (elf)
		elf_end(elf);
	close(fd);
	return NULL;
}

/* dirname of e->path, without the trailing slash ("" for "/x") */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) : 0;
}

static Elf *find_debug(struct bp_elf *e, char *path, size_t sz, int *fdp)
{
	const char *root = e->root ? e->root : "";
	const char *link = e->debuglink;
	Elf *elf;
	int dl;

	if (e->debug_root && e->build_id[0] && strlen(e->build_id) > 2) {
		snprintf(path, sz, "%s/.build-id/%.2s/%s.debug", e->debug_root,
			 e->build_id, e->build_id + 2);
		elf = open_debug(e, path, true, fdp);
		if (elf)
			return elf;
	}
	if (!link || !e->path || e->path[0] != '/')
		return NULL;
	/* gdb's order: next to the binary, in .debug/ there, under debug_root */
	dl = (int)dir_len(e->path);
	snprintf(path, sz, "%s%.*s/%s", root, dl, e->path, link);
	elf = open_debug(e, path, false, fdp);
	if (elf)
		return elf;
	snprintf(path, sz, "%s%.*s/.debug/%s", root, dl, e->path, link);
	elf = open_debug(e, path, false, fdp);
	if (elf)
		return elf;
	if (e->debug_root) {
		snprintf(path, sz, "%s%.*s/%s", e->debug_root, dl, e->path, link);
		elf = open_debug(e, path, false, fdp);
		if (elf)
			return elf;
	}
	return NULL;
}

static int load_syms(struct bp_elf *e)
{
	char path[4096];
	Elf_Scn *scn;
	Elf *dbg;
	int err, fd = -1;

	scn = find_section(e->elf, SHT_SYMTAB, NULL);
	if (scn) {
		e->source = "symtab";
		return read_syms(e, e->elf, scn);
	}
	dbg = find_debug(e, path, sizeof(path), &fd);
	if (dbg) {
		err = read_syms(e, dbg, find_section(dbg, SHT_SYMTAB, NULL));
		if (!err) {
			/* names point into data libelf has read; the fd can go */
			elf_cntl(dbg, ELF_C_FDDONE);
			close(fd);
			e->dbg_elf = dbg;
			e->dbg_path = strdup(path);
			e->source = "debug";
			bp_dbg("symbols of %s from %s", e->path ? e->path : "?", path);
			return 0;
		}
		elf_end(dbg);
		close(fd);
	}
	scn = find_section(e->elf, SHT_DYNSYM, NULL);
	if (scn) {
		e->source = "dynsym";
		return read_syms(e, e->elf, scn);
	}
	return -ENOENT;
}

int bp_elf__load_syms(struct bp_elf *e)
{
	if (!e->loaded) {
		e->loaded = true;
		e->source = "none";
		e->load_err = load_syms(e);
		if (e->load_err)
			e->source = "none";
	}
	return e->load_err;
}

bool bp_elf__syms_loaded(const struct bp_elf *e)
{
	return e->loaded;
}

struct bp_elf_sym *bp_elf__find(struct bp_elf *e, uint64_t vaddr)
{
	size_t lo = 0, hi, i, walked;

	if (!e->loaded)
		bp_elf__load_syms(e);
	hi = e->nr_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* a miss may sit inside a larger symbol that starts earlier */
	for (i = lo, walked = 0; i > 0 && walked < ENCLOSING_WALK; i--, walked++)
		if (vaddr < e->syms[i - 1].end)
			return &e->syms[i - 1];
	return NULL;
}

size_t bp_elf__nr_syms(const struct bp_elf *e)
{
	return e->nr_syms;
}

const char *bp_elf__debug_path(const struct bp_elf *e)
{
	return e->dbg_path;
}

const char *bp_elf__sym_source(const struct bp_elf *e)
{
	return e->source ? e->source : "none";
}
