/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small pprof profiles that cost much to read: built here, never committed,
 * for the unit test of the reader's bounds, the integration test that runs
 * `boundprof report` on them, and the fuzzer's seeds.
 */
#ifndef BP_PPROF_GEN_H
#define BP_PPROF_GEN_H

#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "util/buf.h"
#include "util/pb.h"

/*
 * A raw Profile: one function, one location holding `lines` lines of it
 * (inlined frames), and `samples` samples, each naming that location
 * `refs` times. lines = 100000, refs = 1000, samples = 1 is the bomb that
 * once took `boundprof report` to 767 MiB from under 500 bytes of gzip.
 * 0 or the buffer's -ENOMEM.
 */
static inline int pprof_gen_stacks(struct bp_buf *out, uint32_t lines, uint32_t refs,
				   uint32_t samples)
{
	struct bp_buf m = BP_BUF_INIT, s = BP_BUF_INIT, line = BP_BUF_INIT;
	uint32_t i;
	int err;

	bp_pb_put_string(out, 6, "");
	bp_pb_put_string(out, 6, "f");
	bp_pb_put_string(out, 6, "samples");
	bp_pb_put_string(out, 6, "count");
	bp_pb_put_uint64(&m, 1, 2);			/* sample_type samples/count */
	bp_pb_put_uint64(&m, 2, 3);
	bp_pb_put_bytes(out, 1, m.data, m.len);
	bp_buf_reset(&m);
	bp_pb_put_uint64(&m, 1, 1);			/* function 1, "f" */
	bp_pb_put_uint64(&m, 2, 1);
	bp_pb_put_bytes(out, 5, m.data, m.len);
	bp_buf_reset(&m);
	bp_pb_put_uint64(&line, 1, 1);			/* Line.function_id */
	bp_pb_put_uint64(&m, 1, 1);			/* location 1 */
	for (i = 0; i < lines; i++)
		bp_pb_put_bytes(&m, 4, line.data, line.len);
	bp_pb_put_bytes(out, 4, m.data, m.len);
	bp_pb_put_tag(&s, 1, BP_PB_LEN);		/* location_id, packed: refs x 1 */
	bp_pb_put_varint(&s, refs);
	for (i = 0; i < refs; i++)
		bp_buf_putc(&s, 1);
	bp_pb_put_uint64(&s, 2, 1);			/* value 1, unpacked */
	for (i = 0; i < samples; i++)
		bp_pb_put_bytes(out, 2, s.data, s.len);
	err = m.err ? m.err : s.err ? s.err : line.err ? line.err : out->err;
	bp_buf_free(&m);
	bp_buf_free(&s);
	bp_buf_free(&line);
	return err;
}

/*
 * A raw Profile of `procs` samples, each of its own process (a "pid" label
 * 1..procs) in one function: what a system-wide profile of many short-lived
 * processes looks like, at a few bytes a process. 0 or -ENOMEM.
 */
static inline int pprof_gen_procs(struct bp_buf *out, uint32_t procs)
{
	struct bp_buf m = BP_BUF_INIT, s = BP_BUF_INIT, lab = BP_BUF_INIT;
	uint32_t i;
	int err;

	bp_pb_put_string(out, 6, "");
	bp_pb_put_string(out, 6, "f");
	bp_pb_put_string(out, 6, "samples");
	bp_pb_put_string(out, 6, "count");
	bp_pb_put_string(out, 6, "pid");
	bp_pb_put_uint64(&m, 1, 2);
	bp_pb_put_uint64(&m, 2, 3);
	bp_pb_put_bytes(out, 1, m.data, m.len);
	bp_buf_reset(&m);
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_uint64(&m, 2, 1);
	bp_pb_put_bytes(out, 5, m.data, m.len);
	bp_buf_reset(&m);
	bp_pb_put_uint64(&lab, 1, 1);
	bp_pb_put_uint64(&m, 1, 1);
	bp_pb_put_bytes(&m, 4, lab.data, lab.len);
	bp_pb_put_bytes(out, 4, m.data, m.len);
	for (i = 1; i <= procs; i++) {
		bp_buf_reset(&s);
		bp_buf_reset(&lab);
		bp_pb_put_uint64(&s, 1, 1);
		bp_pb_put_uint64(&s, 2, 1);
		bp_pb_put_uint64(&lab, 1, 4);
		bp_pb_put_uint64(&lab, 3, i);
		bp_pb_put_bytes(&s, 3, lab.data, lab.len);
		bp_pb_put_bytes(out, 2, s.data, s.len);
	}
	err = m.err ? m.err : s.err ? s.err : lab.err ? lab.err : out->err;
	bp_buf_free(&m);
	bp_buf_free(&s);
	bp_buf_free(&lab);
	return err;
}

/* gzip (level 1..9) of len bytes appended to out; 0 or -1 */
static inline int pprof_gen_gzip(const void *data, size_t len, int level, struct bp_buf *out)
{
	unsigned char chunk[65536];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)data;
	z.avail_in = len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		bp_buf_append(out, chunk, sizeof(chunk) - z.avail_out);
	} while (ret == Z_OK);
	deflateEnd(&z);
	return ret == Z_STREAM_END && !out->err ? 0 : -1;
}

#endif /* BP_PPROF_GEN_H */
