/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protocol buffers wire format, just enough for profile.proto: varints
 * (64-bit), length-delimited fields, packed repeated varints, and a reader
 * that walks fields one by one so that a caller skips the ones it does not
 * know. No schema, no reflection, no zigzag (profile.proto has no sint).
 *
 * The writer appends to a bp_buf, whose errors are sticky: encode a whole
 * message and check once. A nested message is encoded into its own bp_buf
 * and appended with bp_pb_put_bytes().
 *
 * The reader never reads outside [data, data + len): truncated or malformed
 * input is -EINVAL, never a crash.
 */
#ifndef BP_PB_H
#define BP_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

enum bp_pb_wire {
	BP_PB_VARINT = 0,
	BP_PB_I64 = 1,
	BP_PB_LEN = 2,
	BP_PB_SGROUP = 3,	/* deprecated groups: rejected when read */
	BP_PB_EGROUP = 4,
	BP_PB_I32 = 5,
};

/* the largest field number protobuf allows */
#define BP_PB_MAX_FIELD	((1u << 29) - 1)

/* ------------------------------------------------------------------ writer */

/* each returns 0 or the buffer's sticky error */
int bp_pb_put_varint(struct bp_buf *b, uint64_t v);
int bp_pb_put_tag(struct bp_buf *b, uint32_t field, enum bp_pb_wire wire);
/* uint64, int64 (two's complement: negatives take 10 bytes) and bool fields */
int bp_pb_put_uint64(struct bp_buf *b, uint32_t field, uint64_t v);
int bp_pb_put_int64(struct bp_buf *b, uint32_t field, int64_t v);
/* a length-delimited field: bytes, string or an encoded message */
int bp_pb_put_bytes(struct bp_buf *b, uint32_t field, const void *data, size_t len);
int bp_pb_put_string(struct bp_buf *b, uint32_t field, const char *s);
/* a packed repeated varint field; nothing at all when n == 0 */
int bp_pb_put_packed(struct bp_buf *b, uint32_t field, const uint64_t *v, size_t n);

/* bytes a varint takes: 1..10 */
size_t bp_pb_varint_len(uint64_t v);

/* ------------------------------------------------------------------ reader */

struct bp_pb_reader {
	const uint8_t *p;
	const uint8_t *end;
};

/* one field as read: varints and fixed-width values in u64, LEN in data/len */
struct bp_pb_field {
	uint32_t num;
	enum bp_pb_wire wire;
	uint64_t u64;
	const uint8_t *data;
	size_t len;
};

void bp_pb_reader_init(struct bp_pb_reader *r, const void *data, size_t len);

/*
 * The next field: 1 and *f, 0 at the end of the message, -EINVAL when the
 * input is malformed (truncated, an over-long varint, field number 0, a
 * group or an unknown wire type). Stop at the first error: the reader's
 * position is then meaningless.
 */
int bp_pb_next(struct bp_pb_reader *r, struct bp_pb_field *f);

/* decode one varint at *p (< end), advancing *p; 0 or -EINVAL */
int bp_pb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

/*
 * The values of one occurrence of a repeated varint field, packed (LEN) or
 * not (VARINT): a proto3 writer packs, older ones may not, and a reader must
 * accept both.
 */
struct bp_pb_iter {
	const uint8_t *p;
	const uint8_t *end;
	uint64_t single;
	int state;		/* 0 packed, 1 one value left, 2 done, -EINVAL bad wire type */
};

void bp_pb_iter_init(struct bp_pb_iter *it, const struct bp_pb_field *f);
/* 1 and *v, 0 when done, -EINVAL when malformed */
int bp_pb_iter_next(struct bp_pb_iter *it, uint64_t *v);

#endif /* BP_PB_H */
