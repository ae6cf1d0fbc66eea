/* SPDX-License-Identifier: GPL-2.0 */
/* Block IO in the reports: the JSON "devices" and per-process "io", and text lines. */
#ifndef BP_EXPORT_IO_H
#define BP_EXPORT_IO_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/json.h"
#include "model/profile.h"

/* top level: the "devices" array and the "io_unattributed" object (keys and values) */
void bp_export_json_devices(struct bp_json_w *w, const struct bp_profile *p);

/*
 * Per process: the value of its "io" key, an object with at least ops,
 * bytes and wait_s (the process's off-CPU IO wait, passed in).
 */
void bp_export_json_proc_io(struct bp_json_w *w, const struct bp_profile *p, uint32_t pid,
			    double wait_s);

/* text: the devices section of the human report (nothing when no IO) */
void bp_report_text_devices(struct bp_buf *out, const struct bp_profile *p);

/*
 * text: what a process's IO looked like, e.g. "vda: 4 KiB reads, p50 0.09 ms,
 * p99 0.4 ms", for the line that says how much of its wall time it waited on
 * IO. Returns the length written, 0 when the process did no IO.
 */
size_t bp_report_text_proc_io(char *buf, size_t len, const struct bp_profile *p, uint32_t pid);

#endif /* BP_EXPORT_IO_H */
