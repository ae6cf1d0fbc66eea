// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>

#include "util/pb.h"

size_t bp_pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int bp_pb_put_varint(struct bp_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	return bp_buf_append(b, tmp, n);
}

int bp_pb_put_tag(struct bp_buf *b, uint32_t field, enum bp_pb_wire wire)
{
	if (!field || field > BP_PB_MAX_FIELD) {
		if (!b->err)
			b->err = -EINVAL;
		return b->err;
	}
	return bp_pb_put_varint(b, (uint64_t)field << 3 | wire);
}

int bp_pb_put_uint64(struct bp_buf *b, uint32_t field, uint64_t v)
{
	bp_pb_put_tag(b, field, BP_PB_VARINT);
	return bp_pb_put_varint(b, v);
}

int bp_pb_put_int64(struct bp_buf *b, uint32_t field, int64_t v)
{
	return bp_pb_put_uint64(b, field, (uint64_t)v);
}

int bp_pb_put_bytes(struct bp_buf *b, uint32_t field, const void *data, size_t len)
{
	bp_pb_put_tag(b, field, BP_PB_LEN);
	bp_pb_put_varint(b, len);
	return bp_buf_append(b, data, len);
}

int bp_pb_put_string(struct bp_buf *b, uint32_t field, const char *s)
{
	return bp_pb_put_bytes(b, field, s ? s : "", s ? strlen(s) : 0);
}

int bp_pb_put_packed(struct bp_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return b->err;
	for (i = 0; i < n; i++)
		len += bp_pb_varint_len(v[i]);
	bp_pb_put_tag(b, field, BP_PB_LEN);
	bp_pb_put_varint(b, len);
	if (bp_buf_reserve(b, len))
		return b->err;
	for (i = 0; i < n; i++)
		bp_pb_put_varint(b, v[i]);
	return b->err;
}

int bp_pb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p;
	uint64_t r = 0;
	int shift;

	for (shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (q >= end)
			return -EINVAL;
		c = *q++;
		/* the tenth byte holds bit 63 only: anything more overflows */
		if (shift == 63 && c > 1)
			return -EINVAL;
		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*p = q;
			*v = r;
			return 0;
		}
	}
	return -EINVAL;
}

void bp_pb_reader_init(struct bp_pb_reader *r, const void *data, size_t len)
{
	r->p = data;
	r->end = r->p + (data ? len : 0);
}

static int get_fixed(struct bp_pb_reader *r, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if ((size_t)(r->end - r->p) < n)
		return -EINVAL;
	/* little-endian on the wire whatever the host */
	for (i = 0; i < n; i++)
		x |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	*v = x;
	return 0;
}

int bp_pb_next(struct bp_pb_reader *r, struct bp_pb_field *f)
{
	uint64_t key, len;

	if (r->p >= r->end)
		return 0;
	if (bp_pb_get_varint(&r->p, r->end, &key))
		return -EINVAL;
	if (!(key >> 3) || (key >> 3) > BP_PB_MAX_FIELD)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->num = key >> 3;
	f->wire = key & 7;
	switch (f->wire) {
	case BP_PB_VARINT:
		return bp_pb_get_varint(&r->p, r->end, &f->u64) ? -EINVAL : 1;
	case BP_PB_I64:
		return get_fixed(r, 8, &f->u64) ? -EINVAL : 1;
	case BP_PB_I32:
		return get_fixed(r, 4, &f->u64) ? -EINVAL : 1;
	case BP_PB_LEN:
		if (bp_pb_get_varint(&r->p, r->end, &len) || len > (uint64_t)(r->end - r->p))
			return -EINVAL;
		f->data = r->p;
		f->len = len;
		r->p += len;
		return 1;
	default:
		/* groups were deprecated before profile.proto existed */
		return -EINVAL;
	}
}

void bp_pb_iter_init(struct bp_pb_iter *it, const struct bp_pb_field *f)
{
	memset(it, 0, sizeof(*it));
	if (f->wire == BP_PB_LEN) {
		it->p = f->data;
		it->end = f->data + f->len;
	} else if (f->wire == BP_PB_VARINT) {
		it->single = f->u64;
		it->state = 1;
	} else {
		it->state = -EINVAL;
	}
}

int bp_pb_iter_next(struct bp_pb_iter *it, uint64_t *v)
{
	switch (it->state) {
	case 0:
		if (it->p >= it->end)
			return 0;
		return bp_pb_get_varint(&it->p, it->end, v) ? -EINVAL : 1;
	case 1:
		*v = it->single;
		it->state = 2;
		return 1;
	case 2:
		return 0;
	default:
		return -EINVAL;
	}
}
