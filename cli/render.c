// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/buf.h"
#include "cli.h"
#include "export/flame.h"
#include "export/folded.h"
#include "export/report_json.h"
#include "export/pprof.h"
#include "render.h"
#include "export/report_text.h"
#include "analyze/python.h"
#include "analyze/verdict.h"
#include "model/funcview.h"

static enum bp_group_by group_by;
static bool show_lines;		/* --lines: a frame per source line, as recorded */

void render_group_by(enum bp_group_by by)
{
	group_by = by;
}

int render_summarize(const struct bp_profile *p, struct bp_summary *s)
{
	if (bp_summarize(p, 20, s) || bp_verdicts(p, s)) {
		cli_error("out of memory while summarizing the profile");
		bp_summary_free(s);
		return -ENOMEM;
	}
	return 0;
}

int render_view(const struct bp_profile *full, bool native, struct bp_profile **out)
{
	*out = (struct bp_profile *)full;
	if (native || !bp_python_has_frames(full))
		return 0;
	*out = bp_python_view(full);
	if (!*out) {
		cli_error("out of memory while making the Python view");
		return -ENOMEM;
	}
	return 0;
}

void render_lines(bool on)
{
	show_lines = on;
}

/* the formats that draw stacks: a frame per function unless --lines */
static bool draws_stacks(enum out_fmt fmt)
{
	return fmt == OUT_FOLDED || fmt == OUT_FOLDED_OFFCPU || fmt == OUT_FOLDED_WALL ||
	       fmt == OUT_SVG || fmt == OUT_HTML;
}

/* fp: p in the function view, for the formats that draw stacks */
static int render_one(const struct output *out, const struct bp_profile *full,
		      const struct bp_profile *p, const struct bp_profile *fp,
		      const struct bp_summary *s, const struct bp_groups *g, struct bp_buf *b)
{
	struct bp_flame_opts fo = { .initial_view = BP_VIEW_WALL };

	switch (out->fmt) {
	case OUT_FOLDED:
		return bp_export_folded_grouped(fp, BP_VIEW_ONCPU, group_by, b);
	case OUT_FOLDED_OFFCPU:
		return bp_export_folded_grouped(fp, BP_VIEW_OFFCPU, group_by, b);
	case OUT_FOLDED_WALL:
		return bp_export_folded_grouped(fp, BP_VIEW_WALL, group_by, b);
	case OUT_JSON:
		return bp_export_json_groups(p, s, g, true, b);
	case OUT_PPROF:
		/* the saved profile keeps every frame: report picks the view again */
		return bp_pprof_write(full, b);
	case OUT_SVG:
		fo.format = BP_FLAME_SVG;
		return bp_export_flame(fp, s, &fo, b);
	case OUT_HTML:
		fo.format = BP_FLAME_HTML;
		return bp_export_flame(fp, s, &fo, b);
	}
	return -ENOTSUP;
}

/* the groups the outputs show, or NULL; -ENOMEM printed */
static int groups(const struct bp_profile *p, const struct bp_summary *s, struct bp_groups *g,
		  const struct bp_groups **out)
{
	*out = NULL;
	if (group_by == BP_GROUP_NONE)
		return 0;
	if (bp_groups_build(p, s, group_by, g)) {
		cli_error("out of memory while grouping the processes");
		return -ENOMEM;
	}
	*out = g;
	return 0;
}

int render_outputs_saved(struct output *outs, int n, const struct bp_profile *full,
			 const struct bp_profile *p, const struct bp_summary *s)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_profile *fp = (struct bp_profile *)p;
	struct bp_groups gs = {};
	const struct bp_groups *g;
	int i, err, ret = 0;

	for (i = 0; !show_lines && fp == p && i < n; i++) {
		if (!draws_stacks(outs[i].fmt))
			continue;
		fp = bp_func_view(p);
		if (!fp) {
			cli_error("out of memory while making the function view");
			return -ENOMEM;
		}
	}
	if (groups(p, s, &gs, &g)) {
		if (fp != p)
			bp_profile__free(fp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		bp_buf_reset(&b);
		err = render_one(&outs[i], full, p, fp, s, g, &b);
		if (err) {
			cli_error("cannot write %s: %s", outs[i].path, strerror(-err));
			output_abort(&outs[i]);
		} else {
			err = output_commit(&outs[i], b.data, b.len);
		}
		if (err && !ret)
			ret = err;
	}
	bp_buf_free(&b);
	bp_groups_free(&gs);
	if (fp != p)
		bp_profile__free(fp);
	return ret;
}

int render_report(const struct bp_profile *p, const struct bp_summary *s, bool json)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_text_opts to = {};
	struct bp_groups gs = {};
	const struct bp_groups *g;
	int err;

	if (groups(p, s, &gs, &g))
		return -ENOMEM;
	to.groups = g;
	to.verbose = cli_env.verbose > 0;
	if (json)
		err = bp_export_json_groups(p, s, g, true, &b);
	else
		err = bp_report_text(p, s, &to, &b);
	bp_groups_free(&gs);
	if (!err && fwrite(b.data, 1, b.len, stdout) != b.len)
		err = -EIO;
	fflush(stdout);
	bp_buf_free(&b);
	if (err)
		cli_error("cannot print the report: %s", strerror(-err));
	return err;
}
