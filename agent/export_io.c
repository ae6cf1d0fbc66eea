// SPDX-License-Identifier: GPL-2.0
/* Block IO in the reports: being written (issue 3); zeros until then. */
#include "export_io.h"

void bp_export_json_devices(struct bp_json_w *w, const struct bp_profile *p)
{
	bp_json_w_key(w, "devices");
	bp_json_w_begin_array(w);
	bp_json_w_end_array(w);
}

void bp_export_json_proc_io(struct bp_json_w *w, const struct bp_profile *p, uint32_t pid,
			    double wait_s)
{
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "ops", 0);
	bp_json_w_kv_uint64(w, "bytes", 0);
	bp_json_w_kv_double(w, "wait_s", wait_s);
	bp_json_w_end_object(w);
}

void bp_report_text_devices(struct bp_buf *out, const struct bp_profile *p)
{
}

size_t bp_report_text_proc_io(char *buf, size_t len, const struct bp_profile *p, uint32_t pid)
{
	if (len)
		buf[0] = '\0';
	return 0;
}
