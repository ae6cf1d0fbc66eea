// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof diff: what changed between two saved profiles: where the time
 * went (on-CPU and each wait class), and the functions whose share of
 * on-CPU time grew or shrank most; optionally a differential flame graph.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "cli.h"
#include "export/flame.h"
#include "export/folded.h"
#include "util/htab.h"
#include "util/json.h"
#include "output.h"
#include "model/profile.h"

#define MAX_OUTPUTS	8

/* one function's on-CPU self samples in each profile */
struct fn {
	char *key;		/* "k|module|label": identity across the two profiles */
	const char *label;	/* in whichever profile had it first */
	const char *module;
	bool kernel;
	uint64_t n[2];
};

struct fns {
	struct fn *v;
	uint32_t len, cap;
	struct bp_htab h;
	uint64_t total[2];
	double time_s[2][BP_KIND__MAX];
};

static bool fn_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const struct fns *)ctx)->v[idx].key, key);
}

static int add_profile(struct fns *f, const struct bp_profile *p, int side)
{
	char label[512], *key;
	uint32_t i, nr;

	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const struct bp_frame *fr;
		const uint32_t *frames;
		uint32_t idx;
		uint64_t h;

		if (s->kind < BP_KIND__MAX)
			f->time_s[side][s->kind] += s->kind == BP_KIND_ONCPU ?
				(!p->pmu && s->ns ? s->ns / 1e9 : p->hz ? (double)s->count / p->hz : 0) :
				s->ns / 1e9;
		if (s->kind != BP_KIND_ONCPU || !s->count)
			continue;
		frames = bp_profile__stack_frames(p, s->stack, &nr);
		if (!nr)
			continue;
		f->total[side] += s->count;
		fr = &p->frames[frames[nr - 1]];
		bp_frame_label(fr, false, label, sizeof(label));
		if (asprintf(&key, "%d|%s|%s", fr->kernel, fr->module, label) < 0)
			return -ENOMEM;
		h = bp_hash_bytes(key, strlen(key), 7);
		if (!bp_htab_find(&f->h, h, fn_eq, f, key, &idx)) {
			f->v[idx].n[side] += s->count;
			free(key);
			continue;
		}
		if (f->len == f->cap) {
			uint32_t ncap = f->cap ? f->cap * 2 : 256;
			struct fn *nv = realloc(f->v, ncap * sizeof(*nv));

			if (!nv) {
				free(key);
				return -ENOMEM;
			}
			f->v = nv;
			f->cap = ncap;
		}
		if (bp_htab_insert(&f->h, h, f->len)) {
			free(key);
			return -ENOMEM;
		}
		f->v[f->len] = (struct fn){ .key = key, .kernel = fr->kernel };
		f->v[f->len].label = strchr(strchr(key, '|') + 1, '|') + 1;
		f->v[f->len].module = fr->module;
		f->v[f->len].n[side] = s->count;
		f->len++;
	}
	return 0;
}

static double share(const struct fns *f, const struct fn *x, int side)
{
	return f->total[side] ? (double)x->n[side] / f->total[side] : 0;
}

static const struct fns *sort_ctx;

static int cmp_change(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	double dx = fabs(share(sort_ctx, x, 1) - share(sort_ctx, x, 0));
	double dy = fabs(share(sort_ctx, y, 1) - share(sort_ctx, y, 0));

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void free_fns(struct fns *f)
{
	uint32_t i;

	for (i = 0; i < f->len; i++)
		free(f->v[i].key);
	free(f->v);
	bp_htab_free(&f->h);
}

/* module names live in the profiles; the diff outlives nothing, so pointers are fine */
static void print_text(const struct fns *f, const char *a, const char *b, uint32_t top,
		       double biggest)
{
	static const char *const names[BP_KIND__MAX] = {
		"on-CPU", "runqueue", "io", "lock", "sleep", "other",
	};
	uint32_t i;
	int k;

	printf("boundprof diff: %s (%" PRIu64 " on-CPU samples) -> %s (%" PRIu64 " samples)\n\n",
	       a, f->total[0], b, f->total[1]);
	printf("time (thread-seconds)      before      after     change\n");
	for (k = 0; k < BP_KIND__MAX; k++) {
		double x = f->time_s[0][k], y = f->time_s[1][k];

		if (x < 0.0005 && y < 0.0005)
			continue;
		printf("  %-20s %10.3f %10.3f  %+8.3f s\n", names[k], x, y, y - x);
	}
	if (biggest < 0.0005) {
		printf("\nno change: every function has the same share of on-CPU time in both "
		       "(largest difference %.2f points)\n", biggest * 100);
		return;
	}
	printf("\non-CPU share by function (as the leaf), biggest changes first\n");
	printf("  %8s %8s %8s  %s\n", "change", "before", "after", "function (module)");
	for (i = 0; i < f->len && i < top; i++) {
		const struct fn *x = &f->v[i];
		double s0 = share(f, x, 0), s1 = share(f, x, 1);

		if (fabs(s1 - s0) < 0.0005)
			break;
		printf("  %+7.1f%% %7.1f%% %7.1f%%  %s%s (%s)\n", (s1 - s0) * 100, s0 * 100,
		       s1 * 100, x->label, x->kernel ? " [k]" : "", x->module);
	}
}

static int write_json(const struct fns *f, const char *a, const char *b, uint32_t top,
		      struct bp_buf *out)
{
	static const char *const names[BP_KIND__MAX] = {
		"on_cpu", "runqueue", "io", "lock", "sleep", "other",
	};
	struct bp_json_w w;
	uint32_t i;
	int k;

	bp_json_w_init(&w, out, true);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_string(&w, "before", a);
	bp_json_w_kv_string(&w, "after", b);
	bp_json_w_kv_uint64(&w, "before_samples", f->total[0]);
	bp_json_w_kv_uint64(&w, "after_samples", f->total[1]);
	bp_json_w_key(&w, "time_s");
	bp_json_w_begin_object(&w);
	for (k = 0; k < BP_KIND__MAX; k++) {
		bp_json_w_key(&w, names[k]);
		bp_json_w_begin_object(&w);
		bp_json_w_kv_double(&w, "before", f->time_s[0][k]);
		bp_json_w_kv_double(&w, "after", f->time_s[1][k]);
		bp_json_w_end_object(&w);
	}
	bp_json_w_end_object(&w);
	bp_json_w_key(&w, "functions");
	bp_json_w_begin_array(&w);
	for (i = 0; i < f->len && i < top; i++) {
		const struct fn *x = &f->v[i];

		bp_json_w_begin_object(&w);
		bp_json_w_kv_string(&w, "function", x->label);
		bp_json_w_kv_string(&w, "module", x->module);
		bp_json_w_kv_bool(&w, "kernel", x->kernel);
		bp_json_w_kv_double(&w, "before", share(f, x, 0));
		bp_json_w_kv_double(&w, "after", share(f, x, 1));
		bp_json_w_kv_double(&w, "change", share(f, x, 1) - share(f, x, 0));
		bp_json_w_end_object(&w);
	}
	bp_json_w_end_array(&w);
	bp_json_w_end_object(&w);
	return bp_json_w_finish(&w) ? -ENOMEM : bp_buf_putc(out, '\n');
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof diff BEFORE.pb.gz AFTER.pb.gz [-o FILE]... [--json] [-n N]\n"
		"\n"
		"What changed between two saved profiles: time per wait class, and the\n"
		"functions whose share of on-CPU time grew or shrank most.\n"
		"  -o, --output FILE  .svg / .html: a differential flame graph (red grew, blue\n"
		"                     shrank); .json: the table as JSON\n"
		"      --json         print the JSON instead of the table\n"
		"  -n, --top N        functions listed (default 20)\n");
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "top", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct output outs[MAX_OUTPUTS] = {};
	struct bp_profile *p[2] = {};
	struct bp_buf b = BP_BUF_INIT;
	struct fns f = {};
	bool json = false;
	long top = 20;
	double biggest = 0;
	char *end;
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
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (errno || *end || top < 1 || top > 100000) {
				cli_error("invalid -n %s: give how many functions to list", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'J':
			json = true;
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
	if (add_profile(&f, p[0], 0) || add_profile(&f, p[1], 1)) {
		cli_error("out of memory comparing the profiles");
		ret = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < (int)f.len; i++)
		biggest = fmax(biggest, fabs(share(&f, &f.v[i], 1) - share(&f, &f.v[i], 0)));
	sort_ctx = &f;
	if (f.len)
		qsort(f.v, f.len, sizeof(*f.v), cmp_change);

	for (i = 0; i < n; i++) {
		struct bp_flame_opts fo = {
			.format = outs[i].fmt == OUT_SVG ? BP_FLAME_SVG : BP_FLAME_HTML,
			.title = "boundprof diff",
			.initial_view = BP_VIEW_WALL,
		};

		bp_buf_reset(&b);
		err = outs[i].fmt == OUT_JSON ?
			write_json(&f, argv[optind], argv[optind + 1], top, &b) :
			bp_export_flame_diff(p[0], p[1], &fo, &b);
		if (err) {
			cli_error("cannot write %s: %s", outs[i].path, strerror(-err));
			ret = EXIT_RUNTIME;
		} else if (output_commit(&outs[i], b.data, b.len)) {
			ret = EXIT_RUNTIME;
		}
	}
	if (json) {
		bp_buf_reset(&b);
		if (write_json(&f, argv[optind], argv[optind + 1], top, &b) ||
		    fwrite(b.data, 1, b.len, stdout) != b.len)
			ret = EXIT_RUNTIME;
	} else {
		print_text(&f, argv[optind], argv[optind + 1], top, biggest);
	}
out:
	for (i = 0; i < n; i++)
		output_abort(&outs[i]);
	free_fns(&f);
	bp_buf_free(&b);
	bp_profile__free(p[0]);
	bp_profile__free(p[1]);
	return ret;
}
