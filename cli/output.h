/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output files: the format follows the extension. Each file is created as a
 * hidden temporary next to its final name before recording starts (so an
 * unwritable path fails early) and renamed into place once complete (so a
 * reader never sees half a profile): util/atomicfile.h. This file adds the
 * formats and the messages.
 */
#ifndef BP_CLI_OUTPUT_H
#define BP_CLI_OUTPUT_H

#include <stddef.h>

#include "util/atomicfile.h"

enum out_fmt {
	OUT_FOLDED,
	OUT_FOLDED_OFFCPU,
	OUT_FOLDED_WALL,
	OUT_JSON,
	OUT_PPROF,
	OUT_SVG,
	OUT_HTML,
};

struct output {
	const char *path;
	enum out_fmt fmt;
	struct bp_afile file;
};

/* the format of a path; 0 or -EINVAL (unknown extension) */
int output_format(const char *path, enum out_fmt *fmt);
const char *output_extensions(void);

/* the output for a -o argument, its format checked; 0 or -EINVAL (message printed) */
int cli_parse_output(const char *path, struct output *o);

/* append the output for a -o argument to outs[*n] (room for max); 0 or -EINVAL (printed) */
int cli_add_output(struct output *outs, int *n, int max, const char *path);

/* create the temporary file; 0 or -errno (message printed) */
int output_prepare(struct output *o);
/* write everything and rename into place; 0 or -errno (message printed) */
int output_commit(struct output *o, const void *data, size_t len);
/* remove the temporary file, if any */
void output_abort(struct output *o);

#endif /* BP_CLI_OUTPUT_H */
