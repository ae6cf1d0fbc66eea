// SPDX-License-Identifier: GPL-2.0
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lzma.h>
#include <zlib.h>

#include "symbolize/dwarf_cfi.h"
#include "symbolize/dwarf_lines.h"
#include "symbolize/elfsym.h"
#include "util/hex.h"
#include "util/log.h"
#include "util/safeopen.h"

#define BUILD_ID_MAX	64	/* bytes; sha1 is 20, nothing real exceeds 64 */
/* one note section or segment; a build-id note is 36 bytes */
#define NOTE_MAX	(64 * 1024)

/* how far back a lookup walks to find a symbol that encloses nested ones */
#define ENCLOSING_WALK	8

struct elf_load {
	uint64_t off;
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t memsz;
	uint32_t flags;
};

/*
 * An FDE's range as offsets from the file's first: half the 16 bytes of a
 * bp_cfi_range, for the ranges every stripped file an agent meets keeps
 * (1.7 MiB of its heap under the mixed load).
 */
struct fde_range {
	uint32_t start, len;
};

/* a separate debug file, open */
struct debug_file {
	Elf *elf;
	int fd;
	uint64_t size;
	bool in_root;		/* found under debug_root, not beside the file */
};

struct bp_elf {
	int fd;
	Elf *elf;			/* NULL once the symbols are loaded */
	void *image;			/* our copy for elf_memory() */
	uint64_t size;			/* of the file (or image): what sections must fit in */
	dev_t dev;			/* of the file, to tell a debug file from it */
	ino_t ino;
	struct elf_load *loads;
	size_t nr_loads;
	char build_id[BUILD_ID_MAX * 2 + 1];
	char *debuglink;
	uint32_t debuglink_crc;
	char *path;
	char *root;
	char *debug_root;
	bool uid_known;
	uid_t uid;

	bool loaded;
	int load_err;
	const char *source;
	struct bp_elf_sym *syms;
	size_t nr_syms;
	char *names;			/* the kept names, @VERSION cut off */
	char *names_extra;		/* those of a second table (MiniDebugInfo's .dynsym) */
	bool want_dwarf;
	bool dwarf_not_from_root;
	bool dwarf_root_skipped;
	uint64_t dwarf_max;
	struct bp_dwarf *dwarf;		/* lines and inlines, or NULL */
	struct fde_range *fdes;		/* function ranges from the CFI, from fde_base */
	size_t nr_fdes;
	uint64_t fde_base;
	/* read at load, sorted on the first lookup: a file no sample hits
	 * costs no sort */
	struct raw_sym *raw;
	size_t nr_raw;
	char *dbg_path;
	/*
	 * The debug file, found while the process's root could still be
	 * entered (bp_elf__prepare()) and held open until the symbols are
	 * read: dbg_cand is its path, dbg_tried says it was looked for.
	 */
	struct debug_file dbg;
	char *dbg_cand;
	bool dbg_tried;
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

/*
 * The header counts, checked before elf_begin(): libelf allocates per
 * section header, and a crafted file can claim millions. Only the native
 * byte order is read (every file a process here maps has it).
 */
static int check_header(const void *hdr, size_t len, uint64_t fsize)
{
	const unsigned char *id = hdr;
	uint64_t shoff, phoff;
	unsigned int shnum, phnum, shentsize, phentsize, sh_want, ph_want;

	if (len < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG))
		return -ENOEXEC;
#if __BYTE_ORDER == __LITTLE_ENDIAN
	if (id[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
#else
	if (id[EI_DATA] != ELFDATA2MSB)
		return -ENOEXEC;
#endif
	if (id[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;

		if (len < sizeof(eh))
			return -ENOEXEC;
		memcpy(&eh, hdr, sizeof(eh));
		shoff = eh.e_shoff;
		phoff = eh.e_phoff;
		shnum = eh.e_shnum;
		phnum = eh.e_phnum;
		shentsize = eh.e_shentsize;
		phentsize = eh.e_phentsize;
		sh_want = sizeof(Elf64_Shdr);
		ph_want = sizeof(Elf64_Phdr);
	} else if (id[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;

		if (len < sizeof(eh))
			return -ENOEXEC;
		memcpy(&eh, hdr, sizeof(eh));
		shoff = eh.e_shoff;
		phoff = eh.e_phoff;
		shnum = eh.e_shnum;
		phnum = eh.e_phnum;
		shentsize = eh.e_shentsize;
		phentsize = eh.e_phentsize;
		sh_want = sizeof(Elf32_Shdr);
		ph_want = sizeof(Elf32_Phdr);
	} else {
		return -ENOEXEC;
	}
	/* extended numbering is for more than 65279 sections: none of ours */
	if ((!shnum && shoff) || phnum == PN_XNUM)
		return -EFBIG;
	if (shnum > BP_ELF_SHNUM_MAX || phnum > BP_ELF_PHNUM_MAX)
		return -EFBIG;
	if (shnum && (shentsize != sh_want || shoff > fsize ||
		      (uint64_t)shnum * shentsize > fsize - shoff))
		return -ENOEXEC;
	if (phnum && (phentsize != ph_want || phoff > fsize ||
		      (uint64_t)phnum * phentsize > fsize - phoff))
		return -ENOEXEC;
	return 0;
}

static int check_fd_header(int fd, uint64_t fsize)
{
	unsigned char hdr[sizeof(Elf64_Ehdr)];
	ssize_t n = pread(fd, hdr, sizeof(hdr), 0);

	if (n < 0)
		return -errno;
	return check_header(hdr, (size_t)n, fsize);
}

/* the section has data, all of it inside the file, and at most cap bytes */
static bool section_fits(const GElf_Shdr *sh, uint64_t fsize, uint64_t cap)
{
	return sh->sh_type != SHT_NOBITS && sh->sh_size <= cap && sh->sh_offset <= fsize &&
	       sh->sh_size <= fsize - sh->sh_offset;
}

static bool section_names_fit(Elf *elf, uint64_t fsize)
{
	size_t shstrndx;
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	scn = elf_getscn(elf, shstrndx);
	return scn && gelf_getshdr(scn, &sh) && sh.sh_type == SHT_STRTAB &&
	       section_fits(&sh, fsize, BP_ELF_SHSTRTAB_MAX);
}

static Elf_Scn *find_section(Elf *elf, uint64_t fsize, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (name && (elf_getshdrstrndx(elf, &shstrndx) || !section_names_fit(elf, fsize)))
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
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)d->d_buf + desc_off;

		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4))
			continue;
		if (!nh.n_descsz || nh.n_descsz > BUILD_ID_MAX)
			continue;
		bp_hex_encode(desc, nh.n_descsz, out);
		return true;
	}
	return false;
}

/* sections first: debug files keep the note section, not a valid PT_NOTE */
static void read_build_id(Elf *elf, uint64_t fsize, char *out)
{
	uint64_t budget = BP_ELF_NOTES_MAX;
	Elf_Scn *scn = NULL;
	size_t i, nr;
	GElf_Shdr sh;
	GElf_Phdr ph;

	out[0] = '\0';
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (!section_fits(&sh, fsize, NOTE_MAX) || sh.sh_size > budget)
			continue;
		budget -= sh.sh_size;
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
		if (ph.p_filesz > NOTE_MAX || ph.p_filesz > budget || ph.p_offset > fsize ||
		    ph.p_filesz > fsize - ph.p_offset)
			continue;
		budget -= ph.p_filesz;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (d && d->d_buf && note_build_id(d, out))
			return;
	}
}

/*
 * A debuglink is a file name, looked up in fixed directories: a "/" or a
 * ".." would let the binary's author point us anywhere.
 */
static bool debuglink_name_ok(const char *name, size_t len)
{
	return len && len <= NAME_MAX && !memchr(name, '/', len) &&
	       !(len == 1 && name[0] == '.') && !(len == 2 && !memcmp(name, "..", 2));
}

static void read_debuglink(struct bp_elf *e)
{
	Elf_Scn *scn = find_section(e->elf, e->size, SHT_PROGBITS, ".gnu_debuglink");
	const char *ident;
	size_t len, crc_off;
	uint32_t crc;
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || !section_fits(&sh, e->size, BP_ELF_DEBUGLINK_MAX))
		return;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return;
	len = strnlen(d->d_buf, d->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (!len || len == d->d_size || crc_off + 4 > d->d_size)
		return;
	if (!debuglink_name_ok(d->d_buf, len)) {
		bp_dbg("%s: debuglink is not a plain file name, ignored",
		       e->path ? e->path : "ELF image");
		return;
	}
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
			.flags = ph.p_flags,
		};
	}
	read_build_id(e->elf, e->size, e->build_id);
	read_debuglink(e);
	return 0;
}

int bp_elf__open_fd(int fd, const struct bp_elf_opts *opts, struct bp_elf **out)
{
	struct bp_elf *e;
	struct stat st;
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
	e->dbg.fd = -1;
	if (opts) {
		e->path = xstrdup(opts->path);
		e->root = xstrdup(opts->root);
		e->debug_root = xstrdup(opts->debug_root);
		e->uid_known = opts->uid_known;
		e->uid = opts->uid;
		e->want_dwarf = opts->want_dwarf;
		e->dwarf_max = opts->dwarf_max;
		e->dwarf_not_from_root = opts->dwarf_not_from_root;
		if ((opts->path && !e->path) || (opts->root && !e->root) ||
		    (opts->debug_root && !e->debug_root)) {
			err = -ENOMEM;
			goto err_out;
		}
	}
	if (fstat(fd, &st)) {
		err = -errno;
		goto err_out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto err_out;
	}
	e->size = (uint64_t)st.st_size;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	err = check_fd_header(fd, e->size);
	if (err)
		goto err_out;
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
	e->dbg.fd = -1;
	e->image = malloc(size ? size : 1);
	if (!e->image) {
		err = -ENOMEM;
		goto err_out;
	}
	memcpy(e->image, image, size);
	e->size = size;
	err = check_header(e->image, size, size);
	if (err)
		goto err_out;
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

static void debug_close(struct debug_file *dbg)
{
	if (dbg->elf)
		elf_end(dbg->elf);
	if (dbg->fd >= 0)
		close(dbg->fd);
	dbg->elf = NULL;
	dbg->fd = -1;
	dbg->in_root = false;
}

void bp_elf__free(struct bp_elf *e)
{
	if (!e)
		return;
	free(e->syms);
	free(e->raw);
	free(e->names);
	free(e->names_extra);
	bp_dwarf__free(e->dwarf);
	free(e->fdes);
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
	debug_close(&e->dbg);
	free(e->dbg_cand);
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

size_t bp_elf__segments(const struct bp_elf *e, struct bp_elf_segment *out, size_t max)
{
	size_t i;

	for (i = 0; i < e->nr_loads && i < max; i++)
		out[i] = (struct bp_elf_segment){
			.off = e->loads[i].off,
			.vaddr = e->loads[i].vaddr,
			.filesz = e->loads[i].filesz,
			.exec = e->loads[i].flags & PF_X,
		};
	return e->nr_loads;
}

Elf *bp_elf__elf(const struct bp_elf *e)
{
	return e->elf;
}

uint64_t bp_elf__size(const struct bp_elf *e)
{
	return e->size;
}

/* --- symbols ----------------------------------------------------------- */

struct raw_sym {
	uint64_t addr;
	uint64_t size;
	uint64_t sec_end;	/* end of its section, 0 if unknown */
	const char *name;	/* in e->names, NUL-terminated at len */
	uint32_t len;		/* without a @VERSION suffix */
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

static size_t underscores(const struct raw_sym *r)
{
	size_t n = 0;

	while (n < r->len && r->name[n] == '_')
		n++;
	return n;
}

/* by address; among aliases the preferred name sorts first */
static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;
	size_t ux, uy;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	ux = underscores(x);
	uy = underscores(y);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->name, y->name, x->len);
}

/*
 * The .symtab of a versioned library (libc's debug file) says
 * "memcpy@@GLIBC_2.14": the version is noise in a profile, and two versions
 * of one function would otherwise be two functions.
 */
static uint32_t name_len(const char *name)
{
	const char *at = strchr(name, '@');
	size_t len = at && at != name ? (size_t)(at - name) : strlen(name);

	return len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
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

static bool want_sym(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
	       sym->st_value && sym->st_name;
}

/*
 * The string table, as our own buffer (NUL-terminated past its end): read
 * from fd, or copied from an image in memory (fd < 0). Not through libelf,
 * which would keep a copy of its own beside the names until the file goes.
 */
static char *read_strtab(Elf_Scn *strscn, const GElf_Shdr *strsh, int fd)
{
	size_t len = (size_t)strsh->sh_size, got = 0;
	char *buf = malloc(len + 1);
	Elf_Data *d;
	ssize_t n;

	if (!buf)
		return NULL;
	if (fd < 0) {
		d = elf_getdata(strscn, NULL);
		if (!d || !d->d_buf || d->d_size != len)
			goto fail;
		memcpy(buf, d->d_buf, len);
	} else {
		for (; got < len; got += (size_t)n) {
			n = pread(fd, buf + got, len - got, (off_t)(strsh->sh_offset + got));
			if (n <= 0)
				goto fail;
		}
	}
	buf[len] = '\0';
	return buf;
fail:
	free(buf);
	return NULL;
}

/* raw symbols by where their names start in the string table (held in len) */
static int cmp_name_off(const void *a, const void *b, void *arg)
{
	const struct raw_sym *raw = arg;
	uint32_t x = raw[*(const uint32_t *)a].len, y = raw[*(const uint32_t *)b].len;

	return x < y ? -1 : x > y;
}

/*
 * The kept names moved to the front of the string table, in place, and the
 * rest given back: the table is read once, and no second block of names is
 * built beside it (libceph-common's 1.2 MB of names were held twice while
 * they were read). On entry each raw symbol's len holds where its name
 * starts; on return its name points into *buf, and len is its length.
 *
 * Taken in order of where they start, each name moves down (never past where
 * the next one starts). A name that starts inside the one before it (a
 * linker's shared tail, or the same name twice) is that one's suffix, and
 * points into where it went.
 */
static int compact_names(struct raw_sym *raw, size_t nr, char **buf)
{
	uint32_t *ord = malloc(nr * sizeof(*ord));
	size_t i, cur = 0, len;
	uint32_t src, psrc = 0, pend = 0, pdst = 0;
	char *np;

	if (!ord)
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, nr, sizeof(*ord), cmp_name_off, raw);
	for (i = 0; i < nr; i++) {
		struct raw_sym *r = &raw[ord[i]];

		src = r->len;
		if (i && src < pend) {
			r->len = pdst + (src - psrc);
			continue;
		}
		len = strlen(*buf + src);
		memmove(*buf + cur, *buf + src, len + 1);
		psrc = src;
		pend = (uint32_t)(src + len + 1);
		pdst = (uint32_t)cur;
		r->len = pdst;
		cur += len + 1;
	}
	free(ord);
	np = realloc(*buf, cur ? cur : 1);
	if (np)
		*buf = np;
	/* every length before any cut: a cut ends a shared tail for all who share it */
	for (i = 0; i < nr; i++)
		raw[i].name = *buf + raw[i].len;
	for (i = 0; i < nr; i++)
		raw[i].len = name_len(raw[i].name);
	for (i = 0; i < nr; i++)
		((char *)raw[i].name)[raw[i].len] = '\0';
	return 0;
}

/*
 * The table and its strings are checked against the file and the caps
 * before they are read; the names kept are moved into a block of their
 * own, so that the file and libelf's copy of the table can go once this
 * returns. Sorting waits for a lookup. fd: the file elf reads, or -1 for
 * an image in memory.
 */
static int read_syms(struct bp_elf *e, Elf *elf, int fd, uint64_t fsize, Elf_Scn *scn,
		     bool append)
{
	struct raw_sym *raw = NULL;
	uint64_t *ends = NULL;
	size_t i, n, nr_raw = 0, cap_raw = 0, nr_ends = 0;
	GElf_Shdr sh, strsh;
	Elf_Scn *strscn;
	char *names = NULL;
	Elf_Data *d;
	int err = 0;

	if (!scn || !gelf_getshdr(scn, &sh) ||
	    sh.sh_entsize != gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT))
		return -ENOEXEC;
	strscn = elf_getscn(elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return -ENOEXEC;
	if (!section_fits(&sh, fsize, BP_ELF_SYMTAB_MAX) ||
	    !section_fits(&strsh, fsize, BP_ELF_STRTAB_MAX)) {
		bp_dbg("%s: symbol table of %llu bytes (strings %llu) out of bounds, not read",
		       e->path ? e->path : "ELF image", (unsigned long long)sh.sh_size,
		       (unsigned long long)strsh.sh_size);
		return -EFBIG;
	}
	d = elf_getdata(scn, NULL);
	if (!d)
		return -ENOEXEC;
	n = sh.sh_size / sh.sh_entsize;
	if (!n)
		return -ENOENT;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		if (want_sym(&sym))
			cap_raw++;
	}
	if (!cap_raw)
		return -ENOENT;
	names = read_strtab(strscn, &strsh, fd);
	if (!names)
		return -ENOEXEC;
	raw = calloc(cap_raw, sizeof(*raw));
	if (!raw) {
		err = -ENOMEM;
		goto fail;
	}
	ends = section_ends(elf, &nr_ends);

	for (i = 1; i < n && nr_raw < cap_raw; i++) {
		GElf_Sym sym;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		if (!want_sym(&sym) || sym.st_name >= strsh.sh_size || !names[sym.st_name])
			continue;
		raw[nr_raw] = (struct raw_sym){
			.addr = sym.st_value,
			.size = sym.st_size,
			.sec_end = ends && sym.st_shndx < nr_ends ? ends[sym.st_shndx] : 0,
			.len = sym.st_name,	/* where the name starts, until compact_names() */
			.rank = (uint8_t)bind_rank(GELF_ST_BIND(sym.st_info)),
		};
		nr_raw++;
	}
	free(ends);
	ends = NULL;
	if (!nr_raw) {
		err = -ENOENT;
		goto fail;
	}
	err = compact_names(raw, nr_raw, &names);
	if (err)
		goto fail;
	if (append && e->raw) {
		/* a second table (.dynsym after MiniDebugInfo's): one list, two name blocks */
		struct raw_sym *all = reallocarray(e->raw, e->nr_raw + nr_raw, sizeof(*all));

		if (!all) {
			err = -ENOMEM;
			goto fail;
		}
		memcpy(all + e->nr_raw, raw, nr_raw * sizeof(*raw));
		free(raw);
		free(e->names_extra);
		e->names_extra = names;
		e->raw = all;
		e->nr_raw += nr_raw;
		return 0;
	}
	free(e->names);
	e->names = names;
	free(e->raw);
	e->raw = raw;
	e->nr_raw = nr_raw;
	return 0;
fail:
	free(ends);
	free(raw);
	free(names);
	return err;
}

/* the sort, the one entry per address, the ends: on the first lookup */
static int finish_syms(struct bp_elf *e)
{
	struct raw_sym *raw = e->raw;
	size_t i, j, nr_raw = e->nr_raw;

	if (!raw)
		return 0;
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
	if (!e->syms)
		return -ENOMEM;
	for (i = 0; i < nr_raw; i++) {
		struct bp_elf_sym *s = &e->syms[i];
		const struct raw_sym *r = &raw[i];
		uint64_t end;

		s->name = r->name;
		s->addr = r->addr;
		if (r->size) {
			s->end = r->addr + r->size;
			continue;
		}
		/* zero-size (assembly): up to the next symbol, within the section */
		end = i + 1 < nr_raw ? raw[i + 1].addr : UINT64_MAX;
		if (r->sec_end > r->addr && r->sec_end < end)
			end = r->sec_end;
		s->end = end == UINT64_MAX ? r->addr + 1 : end;
	}
	e->nr_syms = nr_raw;
	free(raw);
	e->raw = NULL;
	e->nr_raw = 0;
	return 0;
}

/* over the size fstat() saw, which the caller bounded */
static int file_crc(int fd, uint64_t size, uint32_t *out)
{
	unsigned char buf[64 * 1024];
	uLong crc = crc32(0L, Z_NULL, 0);
	uint64_t off = 0;
	ssize_t n = 0;

	while (off < size) {
		size_t want = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);

		n = pread(fd, buf, want, (off_t)off);
		if (n <= 0)
			break;
		crc = crc32(crc, buf, (uInt)n);
		off += (uint64_t)n;
	}
	if (n < 0)
		return -errno;
	*out = (uint32_t)crc;
	return 0;
}

/*
 * A candidate debug file: a regular file (opened the untrusted way: in the
 * process's root, no symlinks, no blocking, one that the process's owner
 * could read), another file than the binary, matching it, with a .symtab.
 * Matching is by build-id whenever the binary has one, checked before
 * anything else is read; only a binary without one falls back to the
 * debuglink's CRC, over a bounded size.
 */
static bool open_debug(struct bp_elf *e, int root_fd, const char *path,
		       struct debug_file *out)
{
	struct bp_open_opts o = {
		.flags = e->uid_known ? BP_OPEN_READABLE : 0,
		.uid = e->uid,
	};
	char bid[BUILD_ID_MAX * 2 + 1];
	Elf *elf = NULL;
	struct stat st;
	uint32_t crc;
	int fd;

	fd = bp_open_untrusted(root_fd, path, &o, &st);
	if (fd < 0) {
		if (fd != -ENOENT && fd != -ENOTDIR)
			bp_dbg("%s: debug file refused: %s", path, strerror(-fd));
		return false;
	}
	if (st.st_dev == e->dev && st.st_ino == e->ino)
		goto fail;
	if (check_fd_header(fd, (uint64_t)st.st_size))
		goto fail;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto fail;
	if (e->build_id[0]) {
		read_build_id(elf, (uint64_t)st.st_size, bid);
		if (strcmp(bid, e->build_id)) {
			bp_dbg("%s: build-id mismatch, ignored", path);
			goto fail;
		}
	} else if ((uint64_t)st.st_size > BP_ELF_CRC_MAX) {
		bp_dbg("%s: too big to check its CRC, ignored", path);
		goto fail;
	} else if (file_crc(fd, (uint64_t)st.st_size, &crc) || crc != e->debuglink_crc) {
		bp_dbg("%s: debuglink crc mismatch, ignored", path);
		goto fail;
	}
	if (!find_section(elf, (uint64_t)st.st_size, SHT_SYMTAB, NULL))
		goto fail;
	out->elf = elf;
	out->fd = fd;
	out->size = (uint64_t)st.st_size;
	return true;
fail:
	if (elf)
		elf_end(elf);
	close(fd);
	return false;
}

/* dirname of e->path, without the trailing slash ("" for "/x") */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) : 0;
}

static bool find_debug_in(struct bp_elf *e, int root_fd, char *path, size_t sz,
			  struct debug_file *out)
{
	const char *link = e->debuglink;
	int dl;

	/* build-id first: the binary has one, so the build-id tree is exact */
	if (e->debug_root && strlen(e->build_id) > 2) {
		snprintf(path, sz, "%s/.build-id/%.2s/%s.debug", e->debug_root, e->build_id,
			 e->build_id + 2);
		if (open_debug(e, root_fd, path, out)) {
			out->in_root = true;
			return true;
		}
	}
	if (!link || !e->path || e->path[0] != '/')
		return false;
	/* gdb's order: next to the binary, in .debug/ there, under debug_root */
	dl = (int)dir_len(e->path);
	snprintf(path, sz, "%.*s/%s", dl, e->path, link);
	if (open_debug(e, root_fd, path, out))
		return true;
	snprintf(path, sz, "%.*s/.debug/%s", dl, e->path, link);
	if (open_debug(e, root_fd, path, out))
		return true;
	if (e->debug_root) {
		snprintf(path, sz, "%s%.*s/%s", e->debug_root, dl, e->path, link);
		if (open_debug(e, root_fd, path, out)) {
			out->in_root = true;
			return true;
		}
	}
	return false;
}

static bool find_debug(struct bp_elf *e, char *path, size_t sz, struct debug_file *out)
{
	int root_fd = AT_FDCWD;
	bool found;

	if (!e->debug_root && !e->debuglink)
		return false;
	/* the process's root: /proc/PID/root is a link we mean to follow */
	if (e->root && e->root[0]) {
		root_fd = open(e->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root_fd < 0)
			return false;
	}
	found = find_debug_in(e, root_fd, path, sz, out);
	if (root_fd != AT_FDCWD)
		close(root_fd);
	return found;
}

static bool try_source(int err)
{
	return err && err != -ENOMEM;
}

/*
 * MiniDebugInfo (.gnu_debugdata, as Fedora ships it): an xz-compressed ELF
 * whose .symtab holds the functions .dynsym lacks. Both sizes are bounded
 * before and while it is inflated.
 */
static int load_minidebuginfo(struct bp_elf *e)
{
	lzma_stream z = LZMA_STREAM_INIT;
	unsigned char *out = NULL;
	size_t cap = 0, len = 0;
	Elf *mini = NULL;
	lzma_ret r;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	int err;

	scn = find_section(e->elf, e->size, SHT_PROGBITS, ".gnu_debugdata");
	if (!scn || !gelf_getshdr(scn, &sh))
		return -ENOENT;
	if (!section_fits(&sh, e->size, BP_ELF_DEBUGDATA_MAX))
		return -EFBIG;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -ENOEXEC;
	if (lzma_stream_decoder(&z, BP_ELF_DEBUGDATA_OUT_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	z.next_in = d->d_buf;
	z.avail_in = d->d_size;
	do {
		if (len == cap) {
			size_t ncap = cap ? 2 * cap : 1024 * 1024;
			void *np;

			if (cap >= BP_ELF_DEBUGDATA_OUT_MAX) {
				err = -EFBIG;
				goto out;
			}
			np = realloc(out, ncap);
			if (!np) {
				err = -ENOMEM;
				goto out;
			}
			out = np;
			cap = ncap;
		}
		z.next_out = out + len;
		z.avail_out = cap - len;
		r = lzma_code(&z, LZMA_FINISH);
		len = cap - z.avail_out;
	} while (r == LZMA_OK);
	if (r != LZMA_STREAM_END) {
		err = r == LZMA_MEM_ERROR || r == LZMA_MEMLIMIT_ERROR ? -EFBIG : -ENOEXEC;
		goto out;
	}
	err = check_header(out, len, len);
	if (err)
		goto out;
	mini = elf_memory((char *)out, len);
	if (!mini) {
		err = -ENOEXEC;
		goto out;
	}
	err = read_syms(e, mini, -1, len, find_section(mini, len, SHT_SYMTAB, NULL), false);
out:
	if (mini)
		elf_end(mini);
	lzma_end(&z);
	free(out);
	if (err)
		bp_dbg("%s: MiniDebugInfo not used: %s", e->path ? e->path : "ELF image",
		       strerror(-err));
	return err;
}

/*
 * The CFI's function ranges, kept as 32-bit offsets from the first; a
 * range that does not fit (no real file has 4 GiB of code) is left out.
 */
static int load_fdes(struct bp_elf *e)
{
	struct bp_cfi_range *r;
	size_t nr, i, n = 0;
	int err;

	err = bp_cfi__ranges(e->elf, e->size, &r, &nr);
	if (err)
		return err;
	e->fdes = nr ? malloc(nr * sizeof(*e->fdes)) : NULL;
	if (nr && !e->fdes) {
		free(r);
		return -ENOMEM;
	}
	e->fde_base = nr ? r[0].start : 0;
	for (i = 0; i < nr; i++) {
		uint64_t off = r[i].start - e->fde_base, len = r[i].end - r[i].start;

		if (off > UINT32_MAX || len > UINT32_MAX)
			continue;
		e->fdes[n++] = (struct fde_range){ (uint32_t)off, (uint32_t)len };
	}
	e->nr_fdes = n;
	free(r);
	return 0;
}

/*
 * The DWARF for lines and inlines: the binary's own, else its debug file's.
 */
static bool debug_of(struct bp_elf *e);

static void load_dwarf(struct bp_elf *e)
{
	struct debug_file *dbg = &e->dbg;
	int err;

	if (!e->want_dwarf || e->fd < 0)
		return;
	if (bp_dwarf__has_info(e->elf, e->size)) {
		if (e->dwarf_max && e->size > e->dwarf_max)
			return;
		err = bp_dwarf__open(e->fd, e->size, &e->dwarf);
	} else {
		if (!debug_of(e))
			return;
		if (dbg->in_root && e->dwarf_not_from_root) {
			e->dwarf_root_skipped = true;
			return;
		}
		if (!dbg->elf || dbg->fd < 0 || !bp_dwarf__has_info(dbg->elf, dbg->size) ||
		    (e->dwarf_max && dbg->size > e->dwarf_max))
			return;
		err = bp_dwarf__open(dbg->fd, dbg->size, &e->dwarf);
	}
	if (err && err != -ENOENT)
		bp_dbg("%s: no lines from its DWARF: %s", e->path ? e->path : "ELF image",
		       strerror(-err));
}

/* the debug file, looked for once: true when one is open in e->dbg */
static bool debug_of(struct bp_elf *e)
{
	char path[4096];

	if (!e->dbg_tried) {
		e->dbg_tried = true;
		if (find_debug(e, path, sizeof(path), &e->dbg)) {
			e->dbg_cand = strdup(path);
			if (!e->dbg_cand)
				debug_close(&e->dbg);
		}
	}
	return e->dbg.elf != NULL;
}

static int load_syms(struct bp_elf *e)
{
	Elf_Scn *scn;
	int err = -ENOENT;

	scn = find_section(e->elf, e->size, SHT_SYMTAB, NULL);
	if (scn) {
		e->source = "symtab";
		err = read_syms(e, e->elf, e->fd, e->size, scn, false);
		if (!try_source(err))
			goto out;
	}
	if (err) {
		if (debug_of(e)) {
			err = read_syms(e, e->dbg.elf, e->dbg.fd, e->dbg.size,
					find_section(e->dbg.elf, e->dbg.size, SHT_SYMTAB, NULL),
					false);
			if (!err) {
				e->dbg_path = e->dbg_cand;
				e->dbg_cand = NULL;
				e->source = "debug";
				bp_dbg("symbols of %s from %s", e->path ? e->path : "?",
				       e->dbg_path);
				goto out;
			}
			if (!try_source(err))
				goto out;
		}
	}
	if (err) {
		/* MiniDebugInfo holds what .dynsym lacks: both, as one table */
		bool mini = !load_minidebuginfo(e);

		scn = find_section(e->elf, e->size, SHT_DYNSYM, NULL);
		if (scn) {
			e->source = mini ? "minidebuginfo" : "dynsym";
			err = read_syms(e, e->elf, e->fd, e->size, scn, mini);
		}
		if (mini) {
			e->source = "minidebuginfo";
			err = err == -ENOMEM ? err : 0;
		}
	}
out:
	/* the functions the FDEs describe, for what no symbol covers */
	if (err != -ENOMEM && load_fdes(e) == -ENOMEM)
		err = -ENOMEM;
	if (err != -ENOMEM)
		load_dwarf(e);
	return err;
}

/* everything needed is copied out: the file and libelf's copy can go */
static void release_file(struct bp_elf *e)
{
	if (e->elf)
		elf_end(e->elf);
	e->elf = NULL;
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	free(e->image);
	e->image = NULL;
	debug_close(&e->dbg);
	free(e->dbg_cand);
	e->dbg_cand = NULL;
}

int bp_elf__load_syms(struct bp_elf *e)
{
	if (!e->loaded) {
		e->loaded = true;
		e->source = "none";
		e->load_err = load_syms(e);
		if (e->load_err)
			e->source = "none";
		release_file(e);
	}
	return e->load_err;
}

/*
 * What only the process can give, taken while it lives: its debug file is
 * looked for in its root (a container's /proc/PID/root is gone with it) and
 * held open with the file itself, so that the tables can be read on the
 * first lookup, from the very files, whenever that comes. A file no sample
 * ever hits (most of the libraries a process maps) then costs two open
 * files and its headers, not its symbol table, names and ranges.
 */
void bp_elf__prepare(struct bp_elf *e)
{
	if (e->loaded || !e->elf || e->fd < 0)
		return;
	if (!find_section(e->elf, e->size, SHT_SYMTAB, NULL) ||
	    (e->want_dwarf && !bp_dwarf__has_info(e->elf, e->size)))
		debug_of(e);
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
	if (e->raw && finish_syms(e))
		return NULL;
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

size_t bp_elf__nr_syms(struct bp_elf *e)
{
	if (e->raw)
		finish_syms(e);
	return e->nr_syms;
}

const char *bp_elf__debug_path(const struct bp_elf *e)
{
	return e->dbg_path;
}

bool bp_elf__dwarf_in_root_skipped(const struct bp_elf *e)
{
	return e->dwarf_root_skipped;
}

const char *bp_elf__sym_source(const struct bp_elf *e)
{
	return e->source ? e->source : "none";
}

struct bp_dwarf *bp_elf__dwarf(const struct bp_elf *e)
{
	return e->dwarf;
}

void bp_elf__drop_dwarf(struct bp_elf *e)
{
	bp_dwarf__free(e->dwarf);
	e->dwarf = NULL;
}

int bp_elf__fde_func(const struct bp_elf *e, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	size_t lo = 0, hi = e->nr_fdes;
	uint64_t off;

	if (vaddr < e->fde_base || vaddr - e->fde_base > UINT32_MAX)
		return -ENOENT;
	off = vaddr - e->fde_base;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->fdes[mid].start <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || off - e->fdes[lo - 1].start >= e->fdes[lo - 1].len)
		return -ENOENT;
	*start = e->fde_base + e->fdes[lo - 1].start;
	*end = *start + e->fdes[lo - 1].len;
	return 0;
}
