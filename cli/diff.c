// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof diff: what changed between two saved profiles: where the time
 * went (on-CPU and each wait class), and the functions whose share of
 * on-CPU time grew or shrank most; optionally a differential flame graph.
 * The comparison is analyze/diff.c; this file parses options and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
#include "cli.h"
#include "export/flame.h"
#include "export/folded.h"
#include "model/funcview.h"
#include "model/profile.h"
#include "options.h"
#include "output.h"
#include "util/buf.h"

#define MAX_OUTPUTS	8

static void print_text(const struct bp_diff *f, const char *a, const char *b, uint32_t top)
{
	uint32_t i;
	int k;

	printf("boundprof diff: %s (%" PRIu64 " on-CPU samples) -> %s (%" PRIu64 " samples)\n\n",
	       a, f->total[0], b, f->total[1]);
	printf("time (thread-seconds)      before      after     change\n");
	for (k = 0; k < BP_KIND__MAX; k++) {
		double x = f->time_s[0][k], y = f->time_s[1][k];

		if (x < 0.0005 && y < 0.0005)
			continue;
		printf("  %-20s %10.3f %10.3f  %+8.3f s\n", bp_diff_kind_label(k), x, y, y - x);
	}
	if (f->biggest < 0.0005) {
		printf("\nno change: every function has the same share of on-CPU time in both "
		       "(largest difference %.2f points)\n", f->biggest * 100);
		return;
	}
	printf("\non-CPU share by function (as the leaf), biggest changes first\n");
	printf("  %8s %8s %8s  %s\n", "change", "before", "after", "function (module)");
	for (i = 0; i < f->nr_fns && i < top; i++) {
		const struct bp_diff_fn *x = &f->fns[i];
		double s0 = bp_diff_share(f, x, 0), s1 = bp_diff_share(f, x, 1);

		if (fabs(s1 - s0) < 0.0005)
			break;
		printf("  %+7.1f%% %7.1f%% %7.1f%%  %s%s (%s)\n", (s1 - s0) * 100, s0 * 100,
		       s1 * 100, x->label, x->kernel ? " [k]" : "", x->module);
	}
}

static void print_gate(const struct bp_gate *g)
{
	static const char *const what[2] = { "before", "after" };
	char pct[32];
	uint32_t i;
	int k;

	snprintf(pct, sizeof(pct), "%.10g%%", g->limit * 100);
	printf("\ngate: %s\n", g->failed ? "FAILED: slower by more than the limit" :
	       "passed: not slower by more than the limit");
	printf("  limit %s; medians of %u and %u run%s (0: the whole recording)\n", pct,
	       g->side[0].runs, g->side[1].runs, g->side[1].runs == 1 ? "" : "s");
	printf("  %-30s %10.3f s %10.3f s  %+7.1f%%\n", "wall time", g->side[0].wall_s,
	       g->side[1].wall_s, g->wall_change * 100);
	printf("  %-30s %10.3f s %10.3f s  %+7.1f%%%s\n", "wall time less its CPU waits",
	       g->side[0].ready_s, g->side[1].ready_s, g->ready_change * 100,
	       g->wall_slower ? "  > limit" : "");
	printf("  %-30s %10.3f s %10.3f s  %+7.1f%%%s\n", "CPU time", g->side[0].cpu_s,
	       g->side[1].cpu_s, g->cpu_change * 100, g->cpu_slower ? "  > limit" : "");
	if (g->wall_change > g->limit && !g->wall_slower)
		printf("  the wall time grew past the limit only by waiting for a CPU while other "
		       "processes ran: machine load, not counted\n");
	for (k = 0; k < 2; k++)
		if (g->side[k].noisy)
			printf("  warning: the runs %s differ by %.1f%% of their median: the gate "
			       "is only as good as its medians (record -r more)\n", what[k],
			       g->side[k].wall_spread * 100);
	if (g->nr_fns || g->nr_kinds)
		printf("  grew most, per run:\n");
	for (i = 0; i < g->nr_fns; i++)
		printf("    %-40s %+8.3f s on-CPU (%.3f -> %.3f s)\n", g->fns[i].fn->label,
		       g->fns[i].after_s - g->fns[i].before_s, g->fns[i].before_s,
		       g->fns[i].after_s);
	for (i = 0; i < g->nr_kinds; i++)
		printf("    %-40s %+8.3f s thread-time (%.3f -> %.3f s)\n",
		       g->kinds[i].kind == BP_KIND_ONCPU ? "on-CPU, all functions" :
		       bp_diff_kind_label(g->kinds[i].kind), g->kinds[i].after_s -
		       g->kinds[i].before_s, g->kinds[i].before_s, g->kinds[i].after_s);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof diff BEFORE.pb.gz AFTER.pb.gz [-o FILE]... [--json] [-n N]\n"
		"                      [--fail-above PCT] [-v]\n"
		"\n"
		"What changed between two saved profiles: time per wait class, and the\n"
		"functions whose share of on-CPU time grew or shrank most.\n"
		"  -o, --output FILE  .svg / .html: a differential flame graph (red grew, blue\n"
		"                     shrank); .json: the table as JSON\n"
		"      --json         print the JSON instead of the table\n"
		"  -n, --top N        functions listed (default 20)\n"
		"      --fail-above PCT\n"
		"                     a regression gate: exit 3 when AFTER is slower than BEFORE\n"
		"                     by more than PCT percent, in wall time (less its waits for\n"
		"                     a CPU) or in CPU time, medians of the runs (record -r N)\n"
		"  -v, --verbose      more detail on stderr\n");
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "top", required_argument, NULL, 'n' },
		{ "fail-above", required_argument, NULL, 'G' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct output outs[MAX_OUTPUTS] = {};
	struct bp_profile *p[2] = {}, *fv[2] = {};
	struct bp_buf b = BP_BUF_INIT;
	struct bp_diff f = {};
	struct bp_gate gate;
	double fail_above = -1;
	bool json = false;
	long top = 20;
	int c, i, n = 0, ret = 0, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:n:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (cli_add_output(outs, &n, MAX_OUTPUTS, optarg))
				return EXIT_USAGE;
			if (outs[n - 1].fmt != OUT_SVG && outs[n - 1].fmt != OUT_HTML &&
			    outs[n - 1].fmt != OUT_JSON) {
				cli_error("diff writes .svg, .html or .json, not %s", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (cli_opt_count("-n", optarg, 1, 100000, "functions", &top))
				return EXIT_USAGE;
			break;
		case 'J':
			json = true;
			break;
		case 'G':
			if (cli_opt_percent("--fail-above", optarg, 100000, &fail_above))
				return EXIT_USAGE;
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			cli_bad_option("diff", c, argv);
			return EXIT_USAGE;
		}
	}
	if (optind + 2 != argc) {
		cli_error("diff needs two saved profiles: boundprof diff BEFORE.pb.gz AFTER.pb.gz");
		return EXIT_USAGE;
	}
	for (i = 0; i < 2; i++)
		if (cli_load_profile(argv[optind + i], &p[i])) {
			ret = EXIT_USAGE;
			goto out;
		}
	for (i = 0; i < n; i++)
		if (output_prepare(&outs[i])) {
			ret = EXIT_USAGE;
			goto out;
		}
	if (bp_diff(p[0], p[1], &f) ||
	    (fail_above >= 0 && bp_diff_gate(p[0], p[1], &f, fail_above / 100, &gate))) {
		cli_error("out of memory comparing the profiles");
		ret = EXIT_RUNTIME;
		goto out;
	}

	/* a box per function: lines move between the two versions compared */
	for (i = 0; i < n && !fv[0]; i++) {
		if (outs[i].fmt == OUT_JSON)
			continue;
		fv[0] = bp_func_view(p[0]);
		fv[1] = fv[0] ? bp_func_view(p[1]) : NULL;
		if (!fv[1]) {
			cli_error("out of memory while making the function view");
			ret = EXIT_RUNTIME;
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		struct bp_flame_opts fo = {
			.format = outs[i].fmt == OUT_SVG ? BP_FLAME_SVG : BP_FLAME_HTML,
			.title = "boundprof diff",
			.initial_view = BP_VIEW_WALL,
		};

		bp_buf_reset(&b);
		err = outs[i].fmt == OUT_JSON ?
			bp_diff_json_gate(&f, fail_above >= 0 ? &gate : NULL, argv[optind],
					  argv[optind + 1], top, &b) :
			bp_export_flame_diff(fv[0], fv[1], &fo, &b);
		if (err) {
			cli_error("cannot write %s: %s", outs[i].path, strerror(-err));
			ret = EXIT_RUNTIME;
		} else if (output_commit(&outs[i], b.data, b.len)) {
			ret = EXIT_RUNTIME;
		}
	}
	if (json) {
		bp_buf_reset(&b);
		if (bp_diff_json_gate(&f, fail_above >= 0 ? &gate : NULL, argv[optind],
				      argv[optind + 1], top, &b) ||
		    fwrite(b.data, 1, b.len, stdout) != b.len)
			ret = EXIT_RUNTIME;
	} else {
		print_text(&f, argv[optind], argv[optind + 1], top);
		if (fail_above >= 0)
			print_gate(&gate);
	}
	fflush(stdout);
	if (!ret && fail_above >= 0 && gate.failed)
		ret = EXIT_GATE;
out:
	for (i = 0; i < n; i++)
		output_abort(&outs[i]);
	bp_diff_free(&f);
	bp_buf_free(&b);
	bp_profile__free(p[0]);
	bp_profile__free(p[1]);
	bp_profile__free(fv[0]);
	bp_profile__free(fv[1]);
	return ret;
}
