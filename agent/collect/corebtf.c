// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's types our CO-RE relocations can reach: see corebtf.h.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "collect/corebtf.h"
#include "collect/kbtf.h"
#include "util/htab.h"

/* .BTF.ext's header and CO-RE records (libbpf's libbpf_internal.h, not exported) */
struct ext_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t func_info_off;
	uint32_t func_info_len;
	uint32_t line_info_off;
	uint32_t line_info_len;
	uint32_t core_relo_off;
	uint32_t core_relo_len;
};

struct core_relo {
	uint32_t insn_off;
	uint32_t type_id;
	uint32_t access_str_off;
	uint32_t kind;
};

/* enum bpf_core_relo_kind (linux/bpf.h) */
#define RELO_TYPE_ID_LOCAL	6
#define RELO_TYPE_ID_TARGET	7
#define RELO_TYPE_MATCHES	12

struct sect {
	const uint8_t *data;
	size_t size;
};

/* the object's .BTF and .BTF.ext */
static int find_sections(const void *elf, size_t elf_sz, struct sect *btf, struct sect *ext)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *e;
	int err = -EINVAL;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	/* libelf only reads an image opened with ELF_C_READ_MMAP's memory */
	e = elf_memory((char *)elf, elf_sz);
	if (!e)
		return -EINVAL;
	if (elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".BTF") && strcmp(name, ".BTF.ext")))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			goto out;
		if (!strcmp(name, ".BTF"))
			*btf = (struct sect){ d->d_buf, d->d_size };
		else
			*ext = (struct sect){ d->d_buf, d->d_size };
	}
	err = btf->data && ext->data ? 0 : -ENOENT;
out:
	elf_end(e);
	return err;
}

/* a name's length without its ___flavor, as libbpf compares names */
static size_t essential_len(const char *name)
{
	const char *f = strstr(name, "___");

	return f ? (size_t)(f - name) : strlen(name);
}

struct names {
	const char **s;		/* the local names, each essential_len() long */
	size_t *len;
	bool *found;
	uint32_t nr, cap;
	uint64_t lens;		/* bit n: a name n long (n < 64); bit 63: any longer */
	struct bp_htab h;
};

/* names of no length asked for are passed by without a hash: most of the kernel's */
static bool len_asked(const struct names *n, size_t len)
{
	return n->lens & (1ULL << (len < 63 ? len : 63));
}

struct name_key {
	const char *s;
	size_t len;
};

static bool name_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct names *n = ctx;
	const struct name_key *k = key;

	return n->len[idx] == k->len && !memcmp(n->s[idx], k->s, k->len);
}

static int name_find(const struct names *n, const char *s, size_t len, uint32_t *idx)
{
	struct name_key k = { s, len };

	return bp_htab_find(&n->h, bp_hash_bytes(s, len, 0), name_eq, n, &k, idx);
}

static int name_add(struct names *n, const char *s, size_t len)
{
	uint32_t idx;

	if (!name_find(n, s, len, &idx))
		return 0;
	if (n->nr == n->cap) {
		uint32_t cap = n->cap ? 2 * n->cap : 64;
		const char **ns = reallocarray(n->s, cap, sizeof(*ns));
		size_t *nl;
		bool *nf;

		if (!ns)
			return -ENOMEM;
		n->s = ns;
		nl = reallocarray(n->len, cap, sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		n->len = nl;
		nf = reallocarray(n->found, cap, sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		n->found = nf;
		n->cap = cap;
	}
	n->s[n->nr] = s;
	n->len[n->nr] = len;
	n->found[n->nr] = false;
	n->lens |= 1ULL << (len < 63 ? len : 63);
	if (bp_htab_insert(&n->h, bp_hash_bytes(s, len, 0), n->nr))
		return -ENOMEM;
	n->nr++;
	return 0;
}

static void names_free(struct names *n)
{
	free(n->s);
	free(n->len);
	free(n->found);
	bp_htab_free(&n->h);
}

/* the names the object's CO-RE records relocate */
static int relocated_names(const struct btf *local, const struct sect *ext, struct names *n,
			   uint32_t *relos)
{
	struct ext_hdr h = {};
	const uint8_t *p, *end;
	uint32_t rec_sz;

	if (ext->size < offsetof(struct ext_hdr, core_relo_off))
		return -EINVAL;
	memcpy(&h, ext->data, ext->size < sizeof(h) ? ext->size : sizeof(h));
	if (h.magic != BTF_MAGIC || h.hdr_len > ext->size)
		return -EINVAL;
	/* an object without CO-RE records has nothing to search for */
	if (h.hdr_len < sizeof(h) || !h.core_relo_len)
		return 0;
	if ((uint64_t)h.hdr_len + h.core_relo_off + h.core_relo_len > ext->size ||
	    h.core_relo_len < sizeof(uint32_t))
		return -EINVAL;
	p = ext->data + h.hdr_len + h.core_relo_off;
	end = p + h.core_relo_len;
	memcpy(&rec_sz, p, sizeof(rec_sz));
	p += sizeof(rec_sz);
	if (rec_sz < sizeof(struct core_relo))
		return -EINVAL;
	while (p < end) {
		uint32_t sec[2], i;

		if ((size_t)(end - p) < sizeof(sec))
			return -EINVAL;
		memcpy(sec, p, sizeof(sec));
		p += sizeof(sec);
		if (sec[1] > (size_t)(end - p) / rec_sz)
			return -EINVAL;
		for (i = 0; i < sec[1]; i++, p += rec_sz) {
			const struct btf_type *t;
			struct core_relo r;
			const char *name;
			int err;

			memcpy(&r, p, sizeof(r));
			(*relos)++;
			if (r.kind == RELO_TYPE_ID_LOCAL)
				continue;
			if (r.kind == RELO_TYPE_ID_TARGET || r.kind == RELO_TYPE_MATCHES)
				return -EOPNOTSUPP;
			t = btf__type_by_id(local, r.type_id);
			if (!t)
				return -EINVAL;
			name = btf__name_by_offset(local, t->name_off);
			/* libbpf relocates named types only */
			if (!name || !name[0])
				return -EOPNOTSUPP;
			err = name_add(n, name, essential_len(name));
			if (err)
				return err;
		}
	}
	return 0;
}

/* a type libbpf may take for a candidate: the kinds that carry names a relocation asks for */
static bool candidate_kind(int kind)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_FLOAT:
		return true;
	default:
		return false;
	}
}

struct subset {
	const struct bp_kbtf *k;
	uint32_t *new_id;	/* kernel id -> subset id; 0: not in it */
	uint32_t *stack;	/* kernel ids to visit */
	uint32_t sp, nr;
};

static int mark(struct subset *s, uint32_t id)
{
	if (!id || s->new_id[id])
		return 0;
	if (id >= bp_kbtf__count(s->k))
		return -EINVAL;
	s->new_id[id] = UINT32_MAX;	/* marked; numbered later */
	s->stack[s->sp++] = id;
	s->nr++;
	return 0;
}

/* what an access path can walk into from t: everything but a pointer's target */
static int reach(struct subset *s, const struct btf_type *t)
{
	uint16_t i, vlen = btf_vlen(t);
	int err = 0;

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_FLOAT:
	case BTF_KIND_FWD:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_PTR:
		return 0;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		return mark(s, t->type);
	case BTF_KIND_ARRAY:
		err = mark(s, btf_array(t)->type);
		return err ? err : mark(s, btf_array(t)->index_type);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (i = 0; i < vlen && !err; i++)
			err = mark(s, btf_members(t)[i].type);
		return err;
	case BTF_KIND_FUNC_PROTO:
		err = mark(s, t->type);
		for (i = 0; i < vlen && !err; i++)
			err = mark(s, btf_params(t)[i].type);
		return err;
	default:
		/* functions, variables, sections, declaration tags: no access path's */
		return -EOPNOTSUPP;
	}
}

/* the new BTF's string section, each kernel string copied once */
struct strs {
	char *buf;
	uint32_t len, cap;
	uint32_t *old_off;	/* entry -> kernel offset */
	uint32_t *new_off;	/* entry -> offset in buf */
	uint32_t nr, ecap;
	struct bp_htab h;
};

static bool off_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct strs *st = ctx;

	return st->old_off[idx] == *(const uint32_t *)key;
}

static int str_copy(struct strs *st, const struct bp_kbtf *k, uint32_t old, uint32_t *out)
{
	uint64_t hash = bp_hash_u64(old);
	const char *s;
	uint32_t idx;
	size_t len;

	if (!old) {
		*out = 0;
		return 0;
	}
	if (!bp_htab_find(&st->h, hash, off_eq, st, &old, &idx)) {
		*out = st->new_off[idx];
		return 0;
	}
	s = bp_kbtf__name(k, old);
	len = strlen(s) + 1;
	if (len > UINT32_MAX - st->len)
		return -E2BIG;
	while (st->len + len > st->cap) {
		uint32_t cap = st->cap ? 2 * st->cap : 4096;
		char *b = realloc(st->buf, cap);

		if (!b)
			return -ENOMEM;
		st->buf = b;
		st->cap = cap;
	}
	if (st->nr == st->ecap) {
		uint32_t cap = st->ecap ? 2 * st->ecap : 256;
		uint32_t *o = reallocarray(st->old_off, cap, sizeof(*o)), *n;

		if (!o)
			return -ENOMEM;
		st->old_off = o;
		n = reallocarray(st->new_off, cap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		st->new_off = n;
		st->ecap = cap;
	}
	memcpy(st->buf + st->len, s, len);
	st->old_off[st->nr] = old;
	st->new_off[st->nr] = st->len;
	if (bp_htab_insert(&st->h, hash, st->nr))
		return -ENOMEM;
	st->nr++;
	*out = st->len;
	st->len += (uint32_t)len;
	return 0;
}

/* id in the subset: a pointer to a type left out points to void */
static int renumber(const struct subset *s, uint32_t *id, bool ptr)
{
	uint32_t n;

	if (!*id)
		return 0;
	n = *id < bp_kbtf__count(s->k) ? s->new_id[*id] : 0;
	if (!n && !ptr)
		return -EINVAL;
	*id = n;
	return 0;
}

/* t's record, copied into out, with its ids and strings the subset's */
static int emit(const struct subset *s, struct strs *st, const struct btf_type *kt, uint8_t *out)
{
	long extra = bp_kbtf__extra_len(kt);
	struct btf_type *t = (struct btf_type *)out;
	uint16_t i, vlen = btf_vlen(kt);
	int err;

	memcpy(out, kt, sizeof(*kt) + (size_t)extra);
	err = str_copy(st, s->k, t->name_off, &t->name_off);
	if (err)
		return err;
	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
		return renumber(s, &t->type, true);
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		return renumber(s, &t->type, false);
	case BTF_KIND_ARRAY: {
		struct btf_array *a = btf_array(t);

		err = renumber(s, &a->type, false);
		return err ? err : renumber(s, &a->index_type, false);
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (i = 0; i < vlen && !err; i++) {
			struct btf_member *m = &btf_members(t)[i];

			err = str_copy(st, s->k, m->name_off, &m->name_off);
			if (!err)
				err = renumber(s, &m->type, false);
		}
		return err;
	case BTF_KIND_ENUM:
		for (i = 0; i < vlen && !err; i++)
			err = str_copy(st, s->k, btf_enum(t)[i].name_off, &btf_enum(t)[i].name_off);
		return err;
	case BTF_KIND_ENUM64:
		for (i = 0; i < vlen && !err; i++)
			err = str_copy(st, s->k, btf_enum64(t)[i].name_off,
				       &btf_enum64(t)[i].name_off);
		return err;
	case BTF_KIND_FUNC_PROTO:
		err = renumber(s, &t->type, false);
		for (i = 0; i < vlen && !err; i++) {
			struct btf_param *p = &btf_params(t)[i];

			err = str_copy(st, s->k, p->name_off, &p->name_off);
			if (!err)
				err = renumber(s, &p->type, false);
		}
		return err;
	default:
		return 0;
	}
}

/* the subset's types in kernel order, renumbered, as one raw BTF */
static int write_raw(struct subset *s, void **raw, uint32_t *raw_sz)
{
	uint32_t id, n = 0, count = bp_kbtf__count(s->k);
	struct strs st = {};
	struct btf_header h = {
		.magic = BTF_MAGIC,
		.version = BTF_VERSION,
		.hdr_len = sizeof(h),
	};
	uint64_t types_len = 0;
	uint8_t *buf = NULL, *p;
	int err = 0;

	for (id = 1; id < count; id++) {
		if (!s->new_id[id])
			continue;
		s->new_id[id] = ++n;
		types_len += sizeof(struct btf_type) +
			     (uint64_t)bp_kbtf__extra_len(bp_kbtf__type(s->k, id));
	}
	if (types_len > UINT32_MAX / 2)
		return -E2BIG;
	buf = malloc(sizeof(h) + types_len);
	if (!buf)
		return -ENOMEM;
	/* string 0 is "" */
	st.buf = malloc(4096);
	st.cap = st.buf ? 4096 : 0;
	if (!st.buf)
		err = -ENOMEM;
	else
		st.buf[st.len++] = '\0';
	p = buf + sizeof(h);
	for (id = 1; id < count && !err; id++) {
		const struct btf_type *kt;

		if (!s->new_id[id])
			continue;
		kt = bp_kbtf__type(s->k, id);
		err = emit(s, &st, kt, p);
		p += sizeof(*kt) + bp_kbtf__extra_len(kt);
	}
	if (!err) {
		uint8_t *all = realloc(buf, sizeof(h) + types_len + st.len);

		if (!all) {
			err = -ENOMEM;
		} else {
			buf = all;
			h.type_len = (uint32_t)types_len;
			h.str_off = (uint32_t)types_len;
			h.str_len = st.len;
			memcpy(buf, &h, sizeof(h));
			memcpy(buf + sizeof(h) + types_len, st.buf, st.len);
			*raw = buf;
			*raw_sz = (uint32_t)(sizeof(h) + types_len + st.len);
			buf = NULL;
		}
	}
	free(buf);
	free(st.buf);
	free(st.old_off);
	free(st.new_off);
	bp_htab_free(&st.h);
	return err;
}

int bp_corebtf__build(const struct bp_kbtf *k, const void *elf, size_t elf_sz, void **raw,
		      uint32_t *raw_sz, struct bp_corebtf_stats *stats)
{
	struct sect btf_sec = {}, ext_sec = {};
	uint32_t id, count = bp_kbtf__count(k), i;
	struct subset s = { .k = k };
	struct names n = {};
	struct btf *local;
	int err;

	*raw = NULL;
	*raw_sz = 0;
	memset(stats, 0, sizeof(*stats));
	err = find_sections(elf, elf_sz, &btf_sec, &ext_sec);
	if (err)
		return err;
	local = btf__new(btf_sec.data, (uint32_t)btf_sec.size);
	if (!local)
		return -EINVAL;
	err = relocated_names(local, &ext_sec, &n, &stats->relos);
	stats->names = n.nr;
	s.new_id = calloc(count, sizeof(*s.new_id));
	s.stack = malloc(count * sizeof(*s.stack));
	if (!err && (!s.new_id || !s.stack))
		err = -ENOMEM;
	/* every kernel type a name asks for: libbpf's candidates, all of them */
	for (id = 1; id < count && !err; id++) {
		const struct btf_type *t = bp_kbtf__type(k, id);
		const char *name;
		uint32_t idx;
		size_t len;

		if (!t->name_off || !candidate_kind(btf_kind(t)))
			continue;
		name = bp_kbtf__name(k, t->name_off);
		len = essential_len(name);
		if (!len_asked(&n, len) || name_find(&n, name, len, &idx))
			continue;
		n.found[idx] = true;
		err = mark(&s, id);
	}
	for (i = 0; i < n.nr && !err; i++)
		if (!n.found[i])
			err = -ENOENT;
	while (s.sp && !err) {
		id = s.stack[--s.sp];
		err = reach(&s, bp_kbtf__type(k, id));
	}
	stats->types = s.nr;
	if (!err)
		err = write_raw(&s, raw, raw_sz);
	/* what libbpf will be given, read back by libbpf */
	if (!err) {
		struct btf *check = btf__new(*raw, *raw_sz);

		if (!check) {
			err = -EINVAL;
			free(*raw);
			*raw = NULL;
			*raw_sz = 0;
		}
		btf__free(check);
	}
	free(s.new_id);
	free(s.stack);
	names_free(&n);
	btf__free(local);
	return err;
}

int bp_btf_memfd(const void *raw, uint32_t raw_sz, char *path, size_t len, int *fd)
{
	int err = 0;

	*fd = memfd_create("boundprof-btf", MFD_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (write(*fd, raw, raw_sz) != (ssize_t)raw_sz) {
		err = errno ? -errno : -EIO;
		close(*fd);
		*fd = -1;
		return err;
	}
	snprintf(path, len, "/proc/self/fd/%d", *fd);
	return 0;
}
