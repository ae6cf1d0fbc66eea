// SPDX-License-Identifier: GPL-2.0
/*
 * Scaling curves on hand-made points: medians, speedup, efficiency and
 * Karp-Flatt exactly as defined; the notes of what changed, oversubscription,
 * noise, the closing line and its request; the lock site of a profile; the
 * runs' spread and attribution, saved and read back; and the renderings:
 * JSON keys, a well-formed SVG without script, an HTML page that fetches
 * nothing, names escaped in both.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "analyze/runs.h"
#include "analyze/scale.h"
#include "export/pprof.h"
#include "export/scale.h"
#include "model/profile.h"
#include "unit/builders.h"
#include "unit/xml_check.h"
#include "util/json.h"

#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

#define assert_contains(hay, needle)                                                   \
	do {                                                                           \
		if (!strstr((hay), (needle)))                                          \
			fail_msg("\"%s\" not in:\n%s", (needle), (hay));               \
	} while (0)

/* a point with these run times, judged cls with some shares */
static void pt_set(struct bp_scale_point *pt, uint32_t workers, enum bp_class cls,
		   const double *walls, uint32_t n)
{
	uint32_t i;

	memset(pt, 0, sizeof(*pt));
	pt->workers = workers;
	pt->nr_runs = n;
	for (i = 0; i < n; i++) {
		pt->wall_s[i] = walls[i];
		pt->cpu_s[i] = walls[i] * workers;
	}
	pt->cls = cls;
	pt->conf = BP_CONF_HIGH;
	pt->duration_s = 3 * walls[0];
	pt->machine_busy = 0.5;
	pt->parallelism = workers;
}

#define PT(s, i, w, cls, ...)                                                          \
	pt_set(&(s)->pts[i], w, cls, (double[]){ __VA_ARGS__ },                         \
	       sizeof((double[]){ __VA_ARGS__ }) / sizeof(double))

static struct bp_scale *scale_new(uint32_t n, uint32_t ncpus)
{
	struct bp_scale *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->pts = calloc(n, sizeof(*s->pts));
	assert_non_null(s->pts);
	s->nr_points = n;
	s->ncpus = ncpus;
	s->repeats = 3;
	return s;
}

static void scale_free(struct bp_scale *s)
{
	free(s->pts);
	free(s);
}

static void spread__median_min_max_of_odd_and_even_counts(void **state)
{
	struct bp_spread sp;
	double v[] = { 3, 1, 2, 10 };

	assert_int_equal(bp_spread_of(v, 3, &sp), 0);
	assert_near(sp.median, 2, 0);
	assert_near(sp.min, 1, 0);
	assert_near(sp.max, 3, 0);
	assert_near(sp.spread, 1.0, 1e-15);
	assert_int_equal(bp_spread_of(v, 4, &sp), 0);
	assert_near(sp.median, 2.5, 0);
	assert_near(sp.max, 10, 0);
	/* the input stays as it was */
	assert_near(v[0], 3, 0);
	assert_near(v[3], 10, 0);
	assert_int_equal(bp_spread_of(v, 1, &sp), 0);
	assert_near(sp.spread, 0, 0);
	assert_int_equal(bp_spread_of(v, 0, &sp), 0);
	assert_int_equal(sp.n, 0);
}

/* T1 = 2.0, T2 = 1.0, T4 = 0.625: S 2, 3.2; e(4) = (1/3.2 - 1/4) / (3/4) */
static void scale__strong_speedup_efficiency_karp_flatt_exact(void **state)
{
	struct bp_scale *s = scale_new(3, 8);
	const struct bp_scale_point *p;

	PT(s, 0, 1, BP_CLASS_CPU, 2.1, 2.0, 1.9);
	PT(s, 1, 2, BP_CLASS_CPU, 1.0, 1.02, 0.99);
	PT(s, 2, 4, BP_CLASS_CPU, 0.625, 0.63, 0.62);
	assert_int_equal(bp_scale_compute(s), 0);
	p = s->pts;
	assert_near(p[0].wall.median, 2.0, 0);
	assert_near(p[0].wall.min, 1.9, 0);
	assert_near(p[0].wall.max, 2.1, 0);
	assert_near(p[0].speedup, 1, 0);
	assert_near(p[0].efficiency, 1, 0);
	assert_true(isnan(p[0].karp_flatt));
	assert_true(isnan(p[0].marginal));
	assert_near(p[1].speedup, 2.0 / 1.0, 0);
	assert_near(p[1].efficiency, p[1].speedup / 2, 0);
	assert_near(p[1].karp_flatt, (1 / p[1].speedup - 1.0 / 2) / (1 - 1.0 / 2), 0);
	assert_near(p[2].speedup, 2.0 / 0.625, 0);
	assert_near(p[2].efficiency, 0.8, 1e-15);
	assert_near(p[2].karp_flatt, (1 / 3.2 - 0.25) / 0.75, 1e-15);
	/* the whiskers: the slowest and the fastest run */
	assert_near(p[2].speedup_lo, 2.0 / 0.63, 0);
	assert_near(p[2].speedup_hi, 2.0 / 0.62, 0);
	/* 2 -> 4 gave 1.6x of an ideal 2x: 60% of the step's gain */
	assert_near(p[2].marginal, 0.6, 1e-12);
	assert_int_equal(s->stop, -1);
	assert_int_equal(s->best, 2);
	assert_false(p[2].oversubscribed);
	assert_contains(s->conclusion, "It still pays at 4 workers");
	scale_free(s);
}

/* weak: the work grows with the workers, the ideal is a constant time */
static void scale__weak_efficiency_is_t1_over_tn(void **state)
{
	struct bp_scale *s = scale_new(3, 8);

	s->weak = true;
	PT(s, 0, 1, BP_CLASS_CPU, 1.0);
	PT(s, 1, 2, BP_CLASS_CPU, 1.25);
	PT(s, 2, 4, BP_CLASS_CPU, 2.0);
	assert_int_equal(bp_scale_compute(s), 0);
	assert_near(s->pts[1].efficiency, 0.8, 1e-15);
	assert_near(s->pts[1].speedup, 1.6, 1e-15);
	assert_near(s->pts[2].efficiency, 0.5, 1e-15);
	assert_near(s->pts[2].speedup, 2.0, 1e-15);
	assert_near(s->pts[2].efficiency, s->pts[2].speedup / 4, 0);
	/* 2 -> 4: 1.25x of an ideal 2x */
	assert_int_equal(s->stop, 2);
	assert_int_equal(s->best, 1);
	scale_free(s);
}

/* a first point of 2 workers is taken as ideal: S = 2 T2 / Tn */
static void scale__first_point_above_one_is_the_base(void **state)
{
	struct bp_scale *s = scale_new(2, 16);

	PT(s, 0, 2, BP_CLASS_CPU, 1.0);
	PT(s, 1, 8, BP_CLASS_CPU, 0.5);
	assert_int_equal(bp_scale_compute(s), 0);
	assert_near(s->pts[0].speedup, 2, 0);
	assert_near(s->pts[0].efficiency, 1, 0);
	assert_true(isnan(s->pts[0].karp_flatt));
	assert_near(s->pts[1].speedup, 4, 0);
	assert_near(s->pts[1].efficiency, 0.5, 0);
	assert_true(isfinite(s->pts[1].karp_flatt));
	scale_free(s);
}

static void scale__rejects_points_it_cannot_compare(void **state)
{
	struct bp_scale *s = scale_new(2, 2);

	PT(s, 0, 2, BP_CLASS_CPU, 1.0);
	PT(s, 1, 1, BP_CLASS_CPU, 1.0);
	assert_int_equal(bp_scale_compute(s), -EINVAL);
	PT(s, 1, 2, BP_CLASS_CPU, 1.0);
	assert_int_equal(bp_scale_compute(s), -EINVAL);
	PT(s, 1, 4, BP_CLASS_CPU, 0.0);
	assert_int_equal(bp_scale_compute(s), -EINVAL);
	PT(s, 1, 4, BP_CLASS_CPU, 1.0);
	s->pts[1].nr_runs = 0;
	assert_int_equal(bp_scale_compute(s), -EINVAL);
	s->nr_points = 0;
	assert_int_equal(bp_scale_compute(s), -EINVAL);
	scale_free(s);
}

/* serialized on one mutex: lock-bound from 2 workers on, and no more CPUs */
static void scale__lock_bound_from_two_says_not_to_ask(void **state)
{
	struct bp_scale *s = scale_new(3, 8);

	PT(s, 0, 1, BP_CLASS_CPU, 1.0, 1.0, 1.01);
	PT(s, 1, 2, BP_CLASS_LOCK, 1.6, 1.62, 1.61);
	PT(s, 2, 4, BP_CLASS_LOCK, 2.0, 1.98, 2.01);
	s->pts[1].share_lock = 0.61;
	snprintf(s->pts[1].lock_site, sizeof(s->pts[1].lock_site), "worker_locked");
	s->pts[1].lock_site_share = 0.97;
	s->pts[2].share_lock = 0.74;
	assert_int_equal(bp_scale_compute(s), 0);
	assert_string_equal(s->pts[0].note, "from 1 worker on: cpu-bound, 1.00 of 8 CPUs used");
	assert_string_equal(s->pts[1].note,
			    "from 2 workers on: lock-bound, 61% of busy thread-time waiting on "
			    "locks, 97% of it under worker_locked");
	/* the same verdict again: nothing new to say */
	assert_string_equal(s->pts[2].note, "");
	assert_true(s->pts[1].efficiency <= 0.65);
	assert_int_equal(s->stop, 1);
	assert_int_equal(s->best, 0);
	assert_contains(s->conclusion, "The curve stops paying after 1 worker:");
	assert_contains(s->conclusion, "lock contention");
	assert_contains(s->conclusion, "Do not ask for more than 1 CPU:");
	scale_free(s);
}

/* threads taking turns on a lock: the time under it is the serial part, named */
static void scale__turns_name_the_lock_as_the_serial_part(void **state)
{
	struct bp_scale *s = scale_new(2, 2);

	PT(s, 0, 1, BP_CLASS_CPU, 0.46, 0.46, 0.47);
	PT(s, 1, 2, BP_CLASS_LOCK, 0.54, 0.54, 0.55);
	s->pts[1].share_lock = 0.29;
	s->pts[1].serial_share = 0.83;
	snprintf(s->pts[1].lock_site, sizeof(s->pts[1].lock_site), "turns_update (turns.c:65)");
	s->pts[1].lock_site_share = 1.0;
	assert_int_equal(bp_scale_compute(s), 0);
	assert_int_equal(s->stop, 1);
	assert_contains(s->conclusion, "at 2 workers one thread at a time ran under the lock "
			"taken in turns_update (turns.c:65) for 83% of the wall time");
	assert_contains(s->conclusion, "That is the serial part (Karp-Flatt");
	assert_contains(s->conclusion, "Do not ask for more than 1 CPU:");
	assert_true(!strstr(s->conclusion, "a serial part of about"));
	scale_free(s);
}

/* a point of each verdict class: said in its own words, drawn in its own colour */
static void scale__every_verdict_class__described_and_coloured(void **state)
{
	struct bp_scale *s = scale_new(BP_CLASS__MAX, 64);
	struct bp_buf svg = BP_BUF_INIT;
	char fill[32];
	uint32_t i;

	for (i = 0; i < BP_CLASS__MAX; i++) {
		/* a new class at every point, so that every point has a note; unknown last */
		PT(s, i, i + 1, (i + 1) % BP_CLASS__MAX, 1.0 / (1 + 0.5 * i));
		s->pts[i].share_peer = 0.71;
	}
	assert_int_equal(bp_scale_compute(s), 0);
	assert_int_equal(bp_scale_svg(s, "job", &svg), 0);
	for (i = 0; i < BP_CLASS__MAX; i++) {
		const struct bp_scale_point *pt = &s->pts[i];

		assert_contains(pt->note, bp_class_name(pt->cls));
		if (pt->cls != BP_CLASS_UNKNOWN) {
			if (strstr(pt->note, "too little recorded"))
				fail_msg("%s judged as unknown: %s", bp_class_name(pt->cls), pt->note);
			assert_string_not_equal(bp_class_colour(pt->cls),
						bp_class_colour(BP_CLASS_UNKNOWN));
		}
		snprintf(fill, sizeof(fill), "fill=\"%s\"", bp_class_colour(pt->cls));
		assert_contains(bp_buf_str(&svg), fill);
	}
	assert_contains(s->pts[BP_CLASS_PEER - 1].note, "71% of wall time waiting on another "
			"process through a pipe");
	bp_buf_free(&svg);
	scale_free(s);
}

/* 4 workers on 2 CPUs: the curve flattens because the CPUs ran out */
static void scale__oversubscribed_points_are_marked_and_explained(void **state)
{
	struct bp_scale *s = scale_new(3, 2);

	PT(s, 0, 1, BP_CLASS_CPU, 2.0, 2.01, 1.99);
	PT(s, 1, 2, BP_CLASS_CPU, 1.02, 1.03, 1.01);
	PT(s, 2, 4, BP_CLASS_STARVED, 1.03, 1.04, 1.02);
	s->pts[2].share_rq = 0.5;
	assert_int_equal(bp_scale_compute(s), 0);
	assert_false(s->pts[1].oversubscribed);
	assert_true(s->pts[2].oversubscribed);
	assert_string_equal(s->pts[2].note, "4 workers on 2 CPUs: cpu-starved, 50% of busy "
			    "thread-time waiting for a CPU");
	assert_int_equal(s->stop, 2);
	assert_int_equal(s->best, 1);
	assert_contains(s->conclusion, "The curve stops paying after 2 workers:");
	assert_contains(s->conclusion, "more workers than the 2 CPUs here");
	assert_contains(s->conclusion, "It scales to the 2 CPUs of this machine");
	/* Karp-Flatt at 2: (1/1.96 - 1/2) / (1/2); predicted for 4 CPUs */
	assert_contains(s->conclusion, "With the serial fraction measured at 2 workers");
	assert_contains(s->conclusion, "Ask for 2 CPUs here");
	scale_free(s);
}

/* a serial part that stays the same: Amdahl's cap, and a request for the knee */
static void scale__steady_serial_fraction_gives_its_cap(void **state)
{
	struct bp_scale *s = scale_new(4, 64);
	double e = 0.2, t1 = 1.0;
	uint32_t i, n[] = { 1, 2, 4, 8 };

	for (i = 0; i < 4; i++) {
		double t = t1 * (e + (1 - e) / n[i]);

		PT(s, i, n[i], BP_CLASS_CPU, t);
	}
	assert_int_equal(bp_scale_compute(s), 0);
	for (i = 1; i < 4; i++)
		assert_near(s->pts[i].karp_flatt, e, 1e-12);
	/* 4 -> 8: 2.5x to 3.33x, a third of the ideal step */
	assert_int_equal(s->stop, 3);
	assert_contains(s->conclusion, "a serial part of about 20% (Karp-Flatt 0.200 at 8)");
	assert_contains(s->conclusion, "no number of CPUs gives more than 5.0x");
	assert_contains(s->conclusion, "Ask for 4 CPUs, not more");
	assert_near(bp_scale_amdahl(e, 8), s->pts[3].speedup, 1e-12);
	scale_free(s);
}

/* Karp-Flatt rising with the workers: overhead, not a serial part */
static void scale__rising_karp_flatt_is_overhead(void **state)
{
	struct bp_scale *s = scale_new(4, 64);

	PT(s, 0, 1, BP_CLASS_CPU, 1.0);
	PT(s, 1, 2, BP_CLASS_CPU, 0.52);
	PT(s, 2, 4, BP_CLASS_CPU, 0.3);
	PT(s, 3, 8, BP_CLASS_CPU, 0.28);
	assert_int_equal(bp_scale_compute(s), 0);
	assert_int_equal(s->stop, 3);
	assert_contains(s->conclusion, "parallel overhead that grows with the workers");
	scale_free(s);
}

static void scale__noise_and_load_are_reported(void **state)
{
	struct bp_scale *s = scale_new(2, 2);

	PT(s, 0, 1, BP_CLASS_CPU, 1.0, 1.06, 1.0);
	PT(s, 1, 2, BP_CLASS_STARVED, 0.9, 0.91, 0.9);
	s->pts[1].others_cpu_s = 0.9 * 3;	/* one CPU's worth, the whole point long */
	s->pts[1].duration_s = 2.7;
	s->pts[1].machine_busy = 1.0;
	assert_int_equal(bp_scale_compute(s), 0);
	assert_true(s->pts[0].noisy);
	assert_false(s->pts[1].noisy);
	assert_true(s->pts[1].disturbed);
	assert_contains(s->pts[1].note, "other processes used 2.70 CPU-seconds");
	assert_contains(s->conclusion, "other processes took the CPUs");
	assert_contains(s->conclusion, "Noisy (runs more than 5% apart) at 1 worker:");
	assert_contains(s->conclusion, "Disturbed (other processes used more than 0.25 CPUs on "
			"average) at 2 workers");
	scale_free(s);
}

static struct bp_scale *sample_curve(void)
{
	struct bp_scale *s = scale_new(3, 2);

	PT(s, 0, 1, BP_CLASS_CPU, 2.0, 2.01, 1.99);
	PT(s, 1, 2, BP_CLASS_LOCK, 1.6, 1.7, 1.61);
	PT(s, 2, 4, BP_CLASS_STARVED, 1.5, 1.51, 1.52);
	s->pts[1].share_lock = 0.5;
	assert_int_equal(bp_scale_compute(s), 0);
	return s;
}

#define CMD "./job --threads={} \"<&>\" </script> ]]>"

static void export__json_has_the_contract_keys(void **state)
{
	static const char *const keys[] = { "workers", "wall_s", "wall_min_s", "wall_max_s",
					    "speedup", "efficiency", "karp_flatt", "verdict" };
	struct bp_scale *s = sample_curve();
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json *j;
	const struct bp_json *pts;
	uint32_t i, k;

	assert_int_equal(bp_scale_json(s, CMD, &b), 0);
	j = bp_json_parse(b.data, b.len, NULL, 0);
	assert_non_null(j);
	assert_string_equal(bp_json_str(bp_json_get(j, "command")), CMD);
	assert_string_equal(bp_json_str(bp_json_get(j, "mode")), "strong");
	assert_int_equal(bp_json_num(bp_json_get(j, "cpus")), 2);
	pts = bp_json_get(j, "points");
	assert_int_equal(bp_json_len(pts), 3);
	for (i = 0; i < 3; i++) {
		const struct bp_json *p = bp_json_at(pts, i);
		const struct bp_scale_point *sp = &s->pts[i];

		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!bp_json_get(p, keys[k]))
				fail_msg("point %u has no %s", i, keys[k]);
		/* bit for bit, as computed */
		assert_true(bp_json_num(bp_json_get(p, "wall_s")) == sp->wall.median);
		assert_true(bp_json_num(bp_json_get(p, "speedup")) == sp->speedup);
		assert_true(bp_json_num(bp_json_get(p, "efficiency")) == sp->efficiency);
		assert_string_equal(bp_json_str(bp_json_get(p, "verdict")), bp_class_name(sp->cls));
		assert_int_equal(bp_json_len(bp_json_get(p, "runs_s")), 3);
	}
	assert_int_equal(bp_json_type(bp_json_get(bp_json_at(pts, 0), "karp_flatt")),
			 BP_JSON_NULL);
	assert_true(bp_json_num(bp_json_get(bp_json_at(pts, 2), "karp_flatt")) ==
		    s->pts[2].karp_flatt);
	assert_int_equal(bp_json_num(bp_json_get(j, "stops_paying_at")), 2);
	assert_int_equal(bp_json_num(bp_json_get(j, "best_workers")), 1);
	assert_string_equal(bp_json_str(bp_json_get(j, "conclusion")), s->conclusion);
	assert_true(bp_json_get(bp_json_at(pts, 2), "oversubscribed") &&
		    bp_json_bool(bp_json_get(bp_json_at(pts, 2), "oversubscribed")) == 1);
	bp_json_free(j);
	bp_buf_free(&b);
	scale_free(s);
}

/* the data inside an element, \u003c and friends decoded by the JSON reader */
static struct bp_json *embedded(const char *doc, const char *open, const char *close)
{
	const char *a = strstr(doc, open), *e;

	assert_non_null(a);
	a += strlen(open);
	e = strstr(a, close);
	assert_non_null(e);
	return bp_json_parse(a, e - a, NULL, 0);
}

static void export__svg_is_well_formed_and_needs_no_script(void **state)
{
	struct bp_scale *s = sample_curve();
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json *j;
	const char *err, *p;
	int points = 0;

	assert_int_equal(bp_scale_svg(s, CMD, &b), 0);
	err = xml_error(b.data);
	if (err)
		fail_msg("not well-formed XML: %s", err);
	assert_int_equal(strncmp(b.data, "<?xml", 5), 0);
	assert_non_null(strstr(b.data, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	/* drawn without a script: it shows in image viewers and <img> */
	assert_null(strstr(b.data, "<script"));
	assert_null(strstr(b.data, "</script>"));
	assert_null(strstr(b.data, "]]>"));
	assert_null(strstr(b.data, "<image"));
	/* the only URL is the namespace */
	p = strstr(b.data, "http");
	assert_non_null(p);
	assert_null(strstr(p + 1, "http"));
	for (p = b.data; (p = strstr(p, "class=\"bp-point")); p++)
		points++;
	assert_int_equal(points, 2 * 3);
	assert_non_null(strstr(b.data, "class=\"bp-over\""));
	assert_non_null(strstr(b.data, "data-panel=\"speedup\""));
	assert_non_null(strstr(b.data, "data-panel=\"efficiency\""));
	j = embedded(b.data, "<metadata id=\"bp-scale-data\">", "</metadata>");
	assert_non_null(j);
	assert_string_equal(bp_json_str(bp_json_get(j, "command")), CMD);
	bp_json_free(j);
	bp_buf_free(&b);
	scale_free(s);
}

static void export__html_fetches_nothing_and_embeds_the_data(void **state)
{
	struct bp_scale *s = sample_curve();
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json *j;
	const char *p;
	int scripts = 0;

	assert_int_equal(bp_scale_html(s, CMD, &b), 0);
	assert_non_null(strstr(b.data, "Content-Security-Policy\" content=\"default-src 'none'"));
	/* the command cannot end an element or open one */
	assert_null(strstr(b.data, "\"<&>\""));
	assert_non_null(strstr(b.data, "&quot;&lt;&amp;&gt;&quot; &lt;/script&gt;"));
	for (p = b.data; (p = strstr(p, "</script>")); p++)
		scripts++;
	assert_int_equal(scripts, 2);
	assert_null(strstr(b.data, "src=\""));
	assert_null(strstr(b.data, "fetch("));
	assert_null(strstr(b.data, "XMLHttpRequest"));
	j = embedded(b.data, "<script type=\"application/json\" id=\"bp-scale-data\">",
		     "</script>");
	assert_non_null(j);
	assert_string_equal(bp_json_str(bp_json_get(j, "command")), CMD);
	assert_int_equal(bp_json_len(bp_json_get(j, "points")), 3);
	bp_json_free(j);
	bp_buf_free(&b);
	scale_free(s);
}

static void export__text_table_and_closing_line(void **state)
{
	struct bp_scale *s = sample_curve();
	struct bp_buf b = BP_BUF_INIT;

	assert_int_equal(bp_scale_text(s, "job {}", &b), 0);
	assert_contains(b.data, "boundprof scale: job {}\nstrong scaling, 2 CPUs, 3 runs per point");
	assert_contains(b.data, "      4 *  ");
	assert_contains(b.data, "* more workers than CPUs");
	assert_contains(b.data, "from 2 workers on: lock-bound, 50% of busy thread-time");
	assert_contains(b.data, "4 workers on 2 CPUs: cpu-starved");
	assert_contains(b.data, "\n=> The curve stops paying after 1 worker");
	bp_buf_free(&b);
	scale_free(s);
}

/* lock waits under worker_locked, reached through pthread_mutex_lock in libc */
static void lock_site__the_caller_of_the_c_library(void **state)
{
	struct bp_profile *p = bp_profile__new();
	uint32_t m, w, o, lk, lw, fx, k;
	char label[64];
	double share;

	assert_non_null(p);
	assert_false(bp_scale_lock_site(p, label, sizeof(label), &share));
	m = bld_frame(p, "main", "job", "/opt/job", NULL, 0x100, false);
	w = bld_frame(p, "worker_locked", "job", "/opt/job", NULL, 0x200, false);
	o = bld_frame(p, "other_locked", "job", "/opt/job", NULL, 0x300, false);
	lk = bld_frame(p, "pthread_mutex_lock", "libc.so.6", "/lib/libc.so.6", NULL, 0x10, false);
	lw = bld_frame(p, "__lll_lock_wait", "libc.so.6", "/lib/libc.so.6", NULL, 0x18, false);
	fx = bld_frame(p, "futex_wait", "[kernel]", NULL, NULL, 0x20, true);
	k = bld_frame(p, "schedule", "[kernel]", NULL, NULL, 0x30, true);
	bld_sample(p, 1, 2, BP_KIND_LOCK, BLD_STACK(p, m, w, lk, lw, fx, k), 10, 900000000);
	bld_sample(p, 1, 3, BP_KIND_LOCK, BLD_STACK(p, m, o, lk, lw, fx, k), 2, 100000000);
	/* on-CPU time and other waits do not count */
	bld_sample(p, 1, 3, BP_KIND_ONCPU, BLD_STACK(p, m, o), 50, 5000000000);
	bld_sample(p, 1, 3, BP_KIND_SLEEP, BLD_STACK(p, m, o, k), 1, 5000000000);
	assert_true(bp_scale_lock_site(p, label, sizeof(label), &share));
	assert_string_equal(label, "worker_locked");
	assert_near(share, 0.9, 1e-12);
	/*
	 * A walk that lost the library's frames (and the caller with them)
	 * returns into the caller's caller, with the system call's address
	 * in libc or nothing between it and the kernel: it names the site
	 * only when no stack reached the wait through the library.
	 */
	bld_sample(p, 1, 2, BP_KIND_LOCK, BLD_STACK(p, m, fx, k), 30, 3000000000);
	bld_sample(p, 1, 2, BP_KIND_LOCK, BLD_STACK(p, m, lw, fx, k), 30, 3000000000);
	assert_true(bp_scale_lock_site(p, label, sizeof(label), &share));
	assert_string_equal(label, "worker_locked");
	assert_near(share, 0.9, 1e-12);
	bp_profile__free(p);
	p = bp_profile__new();
	assert_non_null(p);
	m = bld_frame(p, "main", "job", "/opt/job", NULL, 0x100, false);
	fx = bld_frame(p, "futex_wait", "[kernel]", NULL, NULL, 0x20, true);
	bld_sample(p, 1, 2, BP_KIND_LOCK, BLD_STACK(p, m, fx), 30, 3000000000);
	assert_true(bp_scale_lock_site(p, label, sizeof(label), &share));
	assert_string_equal(label, "main");
	bp_profile__free(p);
}

/* runs: CPU waits from the timelines of each run's tree, saved and read back */
static void runs__attributed_by_tree_and_saved(void **state)
{
	struct bp_profile *p = bp_profile__new(), *q;
	struct bp_run r = { .pid = 100, .wall_s = 1.5, .cpu_s = 1.25 };
	struct bp_runs_summary rs;
	struct bp_proc *pr;
	struct bp_buf b = BP_BUF_INIT;
	char err[160];

	assert_non_null(p);
	p->start_ns = 1000;
	p->end_ns = 5000000000ULL;
	p->hz = 99;
	p->ncpus = 2;
	assert_int_equal(bp_runs_summarize(p, &rs), -ENOENT);
	assert_int_equal(bp_profile__add_run(p, &r), 0);
	r.pid = 200;
	r.wall_s = 1.25;
	r.status = 256;
	assert_int_equal(bp_profile__add_run(p, &r), 0);
	/* run 100: itself and a grandchild wait; run 200: a child, capped at its wall */
	pr = bld_proc(p, 100, 1, "sh", NULL);
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_RUNQUEUE] = 100000000;
	bld_proc(p, 101, 100, "job", NULL);
	pr = bld_proc(p, 102, 101, "job", NULL);
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_RUNQUEUE] = 150000000;
	pr = bld_proc(p, 201, 200, "job", NULL);
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_RUNQUEUE] = 2000000000ULL;
	/* not of any run */
	pr = bld_proc(p, 300, 1, "other", NULL);
	pr->have_timeline = true;
	pr->tl_ns[BP_TS_RUNQUEUE] = 7000000000ULL;
	bp_runs_attribute(p);
	assert_near(p->runs[0].runqueue_s, 0.25, 1e-12);
	assert_near(p->runs[1].runqueue_s, 1.25, 0);
	assert_int_equal(bp_runs_summarize(p, &rs), 0);
	assert_int_equal(rs.n, 2);
	assert_int_equal(rs.failed, 1);
	assert_near(rs.wall.median, 1.375, 1e-15);
	assert_near(rs.ready.median, (1.25 + 0) / 2, 1e-15);
	assert_true(rs.noisy);

	assert_int_equal(bp_pprof_write(p, &b), 0);
	q = bp_pprof_read(b.data, b.len, err, sizeof(err));
	if (!q)
		fail_msg("read back: %s", err);
	assert_int_equal(q->nr_runs, 2);
	assert_profile_eq(p, q);
	bp_profile__free(q);
	bp_buf_free(&b);
	bp_profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spread__median_min_max_of_odd_and_even_counts),
		cmocka_unit_test(scale__strong_speedup_efficiency_karp_flatt_exact),
		cmocka_unit_test(scale__weak_efficiency_is_t1_over_tn),
		cmocka_unit_test(scale__first_point_above_one_is_the_base),
		cmocka_unit_test(scale__rejects_points_it_cannot_compare),
		cmocka_unit_test(scale__lock_bound_from_two_says_not_to_ask),
		cmocka_unit_test(scale__oversubscribed_points_are_marked_and_explained),
		cmocka_unit_test(scale__steady_serial_fraction_gives_its_cap),
		cmocka_unit_test(scale__turns_name_the_lock_as_the_serial_part),
		cmocka_unit_test(scale__rising_karp_flatt_is_overhead),
		cmocka_unit_test(scale__noise_and_load_are_reported),
		cmocka_unit_test(export__json_has_the_contract_keys),
		cmocka_unit_test(export__svg_is_well_formed_and_needs_no_script),
		cmocka_unit_test(export__html_fetches_nothing_and_embeds_the_data),
		cmocka_unit_test(export__text_table_and_closing_line),
		cmocka_unit_test(scale__every_verdict_class__described_and_coloured),
		cmocka_unit_test(lock_site__the_caller_of_the_c_library),
		cmocka_unit_test(runs__attributed_by_tree_and_saved),
	};

	return cmocka_run_group_tests_name("scale", tests, NULL, NULL);
}
