/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A dump as its reader gets it: the text `boundprof dump` prints, or the
 * JSON of docs/dump.md. One place renders both, for the command run as
 * root and for the agent serving a user's dump (serve/local.c).
 */
#ifndef BP_EXPORT_DUMP_OUT_H
#define BP_EXPORT_DUMP_OUT_H

#include <stdbool.h>

#include "util/buf.h"

struct bp_dump;

/* append the text to b: the owner's strings without control characters. 0 or -ENOMEM */
int bp_dump_text(const struct bp_dump *d, struct bp_buf *b);

/* append the JSON (pretty) to b. 0 or -errno */
int bp_dump_json(const struct bp_dump *d, struct bp_buf *b);

/* what `boundprof dump` prints: the text, or the JSON and a newline. 0 or -errno */
int bp_dump_write(const struct bp_dump *d, bool json, struct bp_buf *b);

#endif /* BP_EXPORT_DUMP_OUT_H */
