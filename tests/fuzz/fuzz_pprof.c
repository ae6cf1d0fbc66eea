// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof reader, through to what `boundprof report` renders: read ->
 * summarize -> verdicts -> JSON, text and folded reports. Whatever reads
 * must also save and read back to the same JSON report, which is the
 * promise of the save format (docs/pprof.md).
 */
#include "fuzz.h"

#include "analyze/analyze.h"
#include "analyze/verdict.h"
#include "export/folded.h"
#include "export/pprof.h"
#include "export/report_json.h"
#include "export/report_text.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

static int render(const struct bp_profile *p, struct bp_buf *json)
{
	struct bp_text_opts to = { .max_procs = 10, .max_hot = 5 };
	struct bp_summary sum = {};
	struct bp_buf b = BP_BUF_INIT;
	int err;

	err = bp_summarize(p, 20, &sum);
	if (!err)
		err = bp_verdicts(p, &sum);
	if (!err)
		err = bp_export_json(p, &sum, true, json);
	if (!err)
		err = bp_report_text(p, &sum, &to, &b);
	if (!err)
		err = bp_export_folded(p, &b);
	if (!err)
		err = bp_export_folded_view(p, BP_VIEW_OFFCPU, &b);
	if (!err)
		err = bp_export_folded_view(p, BP_VIEW_WALL, &b);
	bp_summary_free(&sum);
	bp_buf_free(&b);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_buf json = BP_BUF_INIT, again = BP_BUF_INIT, saved = BP_BUF_INIT;
	struct bp_profile *p, *q;
	char err[256];

	p = bp_pprof_read(data, size, err, sizeof(err));
	if (!p) {
		/* refused: always with a reason, in one line */
		if (!err[0] || strchr(err, '\n'))
			abort();
		return 0;
	}
	if (render(p, &json))
		abort();
	if (bp_pprof_write(p, &saved))
		abort();
	q = bp_pprof_read(saved.data, saved.len, err, sizeof(err));
	if (!q) {
		fprintf(stderr, "a profile read, saved again, does not read back: %s\n", err);
		abort();
	}
	if (render(q, &again))
		abort();
	if (json.len != again.len || memcmp(json.data, again.data, json.len)) {
		fprintf(stderr, "saved and read back, the report changed:\n%s\n---\n%s\n",
			bp_buf_str(&json), bp_buf_str(&again));
		abort();
	}
	bp_profile__free(q);
	bp_profile__free(p);
	bp_buf_free(&json);
	bp_buf_free(&again);
	bp_buf_free(&saved);
	return 0;
}
