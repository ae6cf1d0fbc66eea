// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's BTF without libbpf's parser: see kbtf.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "collect/kbtf.h"

/* far above vmlinux's 5-6 MB: a bound on what is read, not a guess of it */
#define KBTF_MAX	(256u << 20)

struct bp_kbtf {
	uint8_t *data;		/* the whole file */
	size_t size;
	bool mapped;
	const uint8_t *types;
	uint32_t types_len;
	const char *strs;
	uint32_t strs_len;
	uint32_t *off;		/* id -> offset of its record in types; [0] unused */
	uint32_t nr;		/* ids below nr */
};

long bp_kbtf__extra_len(const struct btf_type *t)
{
	uint32_t vlen = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		return sizeof(uint32_t);
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return sizeof(struct btf_decl_tag);
	case BTF_KIND_ENUM64:
		return (long)vlen * sizeof(struct btf_enum64);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	default:
		return -1;
	}
}

static int read_all(int fd, size_t size, uint8_t **out)
{
	uint8_t *buf = malloc(size ? size : 1);
	size_t got = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	/* sysfs gives a page per read */
	while (got < size) {
		n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EIO;
		}
		got += (size_t)n;
	}
	*out = buf;
	return 0;
}

/* the header, the sections inside the file, the strings ending in NUL */
static int check(struct bp_kbtf *k)
{
	struct btf_header h;
	uint64_t body;

	if (k->size < sizeof(h))
		return -EINVAL;
	memcpy(&h, k->data, sizeof(h));
	if (h.magic != BTF_MAGIC || h.version != BTF_VERSION || h.hdr_len < sizeof(h) ||
	    h.hdr_len > k->size)
		return -EINVAL;
	body = k->size - h.hdr_len;
	if ((uint64_t)h.type_off + h.type_len > body || (uint64_t)h.str_off + h.str_len > body ||
	    !h.str_len || (h.type_off & 3))
		return -EINVAL;
	k->types = k->data + h.hdr_len + h.type_off;
	k->types_len = h.type_len;
	k->strs = (const char *)k->data + h.hdr_len + h.str_off;
	k->strs_len = h.str_len;
	if (k->strs[k->strs_len - 1] != '\0')
		return -EINVAL;
	return 0;
}

/* every record's offset by id, each record inside the type section */
static int index_types(struct bp_kbtf *k)
{
	uint32_t pos = 0, cap = 1024, n = 1;
	uint32_t *off = malloc(cap * sizeof(*off));

	if (!off)
		return -ENOMEM;
	off[0] = 0;
	while (pos < k->types_len) {
		const struct btf_type *t;
		long extra;

		if (k->types_len - pos < sizeof(*t))
			goto bad;
		t = (const struct btf_type *)(k->types + pos);
		extra = bp_kbtf__extra_len(t);
		if (extra < 0 || k->types_len - pos - sizeof(*t) < (uint64_t)extra)
			goto bad;
		if (n == cap) {
			uint32_t *p;

			if (cap > UINT32_MAX / 2)
				goto bad;
			p = reallocarray(off, cap * 2, sizeof(*off));
			if (!p) {
				free(off);
				return -ENOMEM;
			}
			off = p;
			cap *= 2;
		}
		off[n++] = pos;
		pos += sizeof(*t) + (uint32_t)extra;
	}
	k->off = off;
	k->nr = n;
	return 0;
bad:
	free(off);
	return -EINVAL;
}

int bp_kbtf__open(const char *path, struct bp_kbtf **out)
{
	struct bp_kbtf *k;
	struct stat st;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > KBTF_MAX) {
		close(fd);
		return -EINVAL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return -ENOMEM;
	}
	k->size = (size_t)st.st_size;
	/* a mapping of the kernel's own pages where it allows one (6.16) */
	k->data = mmap(NULL, k->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (k->data != MAP_FAILED) {
		k->mapped = true;
		err = 0;
	} else {
		k->data = NULL;
		err = read_all(fd, k->size, &k->data);
	}
	close(fd);
	if (!err)
		err = check(k);
	if (!err)
		err = index_types(k);
	if (err) {
		bp_kbtf__free(k);
		return err;
	}
	*out = k;
	return 0;
}

void bp_kbtf__free(struct bp_kbtf *k)
{
	if (!k)
		return;
	if (k->mapped)
		munmap(k->data, k->size);
	else
		free(k->data);
	free(k->off);
	free(k);
}

size_t bp_kbtf__size(const struct bp_kbtf *k)
{
	return k->size;
}

uint32_t bp_kbtf__count(const struct bp_kbtf *k)
{
	return k->nr;
}

const struct btf_type *bp_kbtf__type(const struct bp_kbtf *k, uint32_t id)
{
	if (!id || id >= k->nr)
		return NULL;
	return (const struct btf_type *)(k->types + k->off[id]);
}

const char *bp_kbtf__name(const struct bp_kbtf *k, uint32_t off)
{
	return off < k->strs_len ? k->strs + off : "";
}

int bp_kbtf__find(const struct bp_kbtf *k, const char *name, int kind)
{
	uint32_t id;

	for (id = 1; id < k->nr; id++) {
		const struct btf_type *t = (const struct btf_type *)(k->types + k->off[id]);

		if (btf_kind(t) == kind && !strcmp(bp_kbtf__name(k, t->name_off), name))
			return (int)id;
	}
	return -ENOENT;
}
