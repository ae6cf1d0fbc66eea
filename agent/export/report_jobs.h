/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Jobs in the reports (analyze/jobs.h): a paragraph per job in the human
 * report, in place of a paragraph per run, and the jobs[] of the JSON
 * report, where every run keeps its own object under processes[].
 */
#ifndef BP_REPORT_JOBS_H
#define BP_REPORT_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "model/profile.h"
#include "util/buf.h"
#include "util/json.h"

/* the jobs' paragraphs; how many runs they fold (none: nothing written) */
uint32_t bp_report_text_jobs(struct bp_buf *out, const struct bp_profile *p,
			     const struct bp_summary *s);

/*
 * The verdict lines of a parent that took a job's verdict: the line that
 * says so, the job's paragraph having the rest. False: not such a parent
 * (nothing written).
 */
bool bp_report_text_job_parent(struct bp_buf *out, const struct bp_summary *s, uint32_t proc);

/* a process whose paragraph a job's takes (a run of it) */
bool bp_report_text_folded(const struct bp_summary *s, uint32_t proc);

/* "jobs": [...], each verdict written by write_verdict (the report's own) */
void bp_export_json_jobs(struct bp_json_w *w, const struct bp_summary *s,
			 void (*write_verdict)(struct bp_json_w *w, const struct bp_verdict *v));

#endif /* BP_REPORT_JOBS_H */
