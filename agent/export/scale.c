// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "export/scale.h"
#include "util/json.h"

static const char *mode_name(const struct bp_scale *s)
{
	return s->weak ? "weak" : "strong";
}

/* ================================================================== text */

int bp_scale_text(const struct bp_scale *s, const char *command, struct bp_buf *out)
{
	bool any_over = false, any_noisy = false;
	uint32_t i;

	bp_buf_printf(out, "boundprof scale: %s\n%s scaling%s, %u CPU%s, %u run%s per point\n\n",
		      command, s->weak ? "weak" : "strong",
		      s->weak ? " (the problem grows with the workers)" : "", s->ncpus,
		      s->ncpus == 1 ? "" : "s", s->repeats, s->repeats == 1 ? "" : "s");
	bp_buf_printf(out, "%9s  %-24s %7s %8s %10s %10s  %s\n", "workers", "wall s (min-max)",
		      "spread", "speedup", "efficiency", "Karp-Flatt", "verdict");
	for (i = 0; i < s->nr_points; i++) {
		const struct bp_scale_point *pt = &s->pts[i];
		char wall[64], kf[32];

		snprintf(wall, sizeof(wall), "%.3f (%.3f-%.3f)", pt->wall.median, pt->wall.min,
			 pt->wall.max);
		if (isfinite(pt->karp_flatt))
			snprintf(kf, sizeof(kf), "%.3f", pt->karp_flatt);
		else
			snprintf(kf, sizeof(kf), "-");
		bp_buf_printf(out, "%7u %c  %-24s %c%5.1f%% %8.2f %10.2f %10s  %s\n", pt->workers,
			      pt->oversubscribed ? '*' : ' ', wall, pt->noisy ? '!' : ' ',
			      pt->wall.spread * 100, pt->speedup, pt->efficiency, kf,
			      bp_class_name(pt->cls));
		any_over |= pt->oversubscribed;
		any_noisy |= pt->noisy;
	}
	if (any_over || any_noisy)
		bp_buf_printf(out, "%s%s%s\n", any_over ? "  * more workers than CPUs" : "",
			      any_over && any_noisy ? "   " : any_noisy ? "  " : "",
			      any_noisy ? "! runs more than 5% apart" : "");
	bp_buf_putc(out, '\n');
	for (i = 0; i < s->nr_points; i++)
		if (s->pts[i].note[0])
			bp_buf_printf(out, "%s\n", s->pts[i].note);
	for (i = 0; i < s->nr_points; i++) {
		const struct bp_scale_point *pt = &s->pts[i];

		if (pt->noisy)
			bp_buf_printf(out, "warning: the %u runs at %u worker%s differ by %.1f%% "
				      "of their median (more than %.0f%%)\n", pt->nr_runs,
				      pt->workers, pt->workers == 1 ? "" : "s",
				      pt->wall.spread * 100, BP_RUNS_NOISY * 100);
		if (pt->disturbed)
			bp_buf_printf(out, "warning: other processes used %.2f CPUs on average "
				      "during the point at %u worker%s\n",
				      pt->others_cpu_s / pt->duration_s, pt->workers,
				      pt->workers == 1 ? "" : "s");
	}
	bp_buf_printf(out, "\n=> %s\n", s->conclusion);
	return out->err;
}

/* ================================================================== JSON */

static void kv_num_or_null(struct bp_json_w *w, const char *key, double v)
{
	bp_json_w_key(w, key);
	if (isfinite(v))
		bp_json_w_double_val(w, v);
	else
		bp_json_w_null_val(w);
}

static void write_json(struct bp_json_w *w, const struct bp_scale *s, const char *command)
{
	uint32_t i, k;

	bp_json_w_begin_object(w);
	bp_json_w_kv_int64(w, "version", 1);
	bp_json_w_kv_string(w, "kind", "scale");
	bp_json_w_kv_string(w, "command", command);
	bp_json_w_kv_string(w, "mode", mode_name(s));
	bp_json_w_kv_uint64(w, "cpus", s->ncpus);
	bp_json_w_kv_uint64(w, "repeats", s->repeats);
	bp_json_w_key(w, "points");
	bp_json_w_begin_array(w);
	for (i = 0; i < s->nr_points; i++) {
		const struct bp_scale_point *pt = &s->pts[i];

		bp_json_w_begin_object(w);
		bp_json_w_kv_uint64(w, "workers", pt->workers);
		bp_json_w_kv_double(w, "wall_s", pt->wall.median);
		bp_json_w_kv_double(w, "wall_min_s", pt->wall.min);
		bp_json_w_kv_double(w, "wall_max_s", pt->wall.max);
		bp_json_w_kv_double(w, "speedup", pt->speedup);
		bp_json_w_kv_double(w, "efficiency", pt->efficiency);
		kv_num_or_null(w, "karp_flatt", pt->karp_flatt);
		bp_json_w_kv_string(w, "verdict", bp_class_name(pt->cls));
		bp_json_w_kv_string(w, "confidence", bp_confidence_name(pt->conf));
		bp_json_w_key(w, "runs_s");
		bp_json_w_begin_array(w);
		for (k = 0; k < pt->nr_runs; k++)
			bp_json_w_double_val(w, pt->wall_s[k]);
		bp_json_w_end_array(w);
		bp_json_w_key(w, "cpu_s");
		bp_json_w_begin_array(w);
		for (k = 0; k < pt->nr_runs; k++)
			bp_json_w_double_val(w, pt->cpu_s[k]);
		bp_json_w_end_array(w);
		bp_json_w_kv_double(w, "spread", pt->wall.spread);
		bp_json_w_kv_bool(w, "noisy", pt->noisy);
		bp_json_w_kv_bool(w, "oversubscribed", pt->oversubscribed);
		bp_json_w_kv_bool(w, "disturbed", pt->disturbed);
		bp_json_w_kv_double(w, "speedup_min", pt->speedup_lo);
		bp_json_w_kv_double(w, "speedup_max", pt->speedup_hi);
		kv_num_or_null(w, "marginal", pt->marginal);
		bp_json_w_kv_double(w, "parallelism", pt->parallelism);
		bp_json_w_kv_double(w, "busy_s", pt->busy_s);
		bp_json_w_key(w, "shares");
		bp_json_w_begin_object(w);
		bp_json_w_kv_double(w, "cpu", pt->share_cpu);
		bp_json_w_kv_double(w, "memory", pt->share_mem);
		bp_json_w_kv_double(w, "io", pt->share_io);
		bp_json_w_kv_double(w, "lock", pt->share_lock);
		bp_json_w_kv_double(w, "runqueue", pt->share_rq);
		bp_json_w_kv_double(w, "other", pt->share_other);
		bp_json_w_end_object(w);
		bp_json_w_key(w, "lock_site");
		if (pt->lock_site[0]) {
			bp_json_w_begin_object(w);
			bp_json_w_kv_string(w, "function", pt->lock_site);
			bp_json_w_kv_double(w, "share", pt->lock_site_share);
			bp_json_w_end_object(w);
		} else {
			bp_json_w_null_val(w);
		}
		/* threads took turns on the lock: the wall-time share it serialized */
		if (pt->serial_share > 0)
			bp_json_w_kv_double(w, "lock_serial_share", pt->serial_share);
		bp_json_w_kv_double(w, "duration_s", pt->duration_s);
		bp_json_w_kv_double(w, "machine_busy", pt->machine_busy);
		bp_json_w_kv_double(w, "others_cpu_s", pt->others_cpu_s);
		bp_json_w_kv_string(w, "evidence", pt->evidence);
		bp_json_w_kv_string(w, "note", pt->note);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
	bp_json_w_key(w, "stops_paying_at");
	if (s->stop >= 0)
		bp_json_w_uint64(w, s->pts[s->stop].workers);
	else
		bp_json_w_null_val(w);
	bp_json_w_kv_uint64(w, "best_workers", s->pts[s->best].workers);
	bp_json_w_kv_string(w, "conclusion", s->conclusion);
	bp_json_w_end_object(w);
}

int bp_scale_json(const struct bp_scale *s, const char *command, struct bp_buf *out)
{
	struct bp_json_w w;
	int err;

	if (!s->nr_points)
		return -EINVAL;
	bp_json_w_init(&w, out, true);
	write_json(&w, s, command);
	err = bp_json_w_finish(&w);
	return err ? err : bp_buf_putc(out, '\n');
}

/* =================================================================== plot */


/* JSON inside an element: no '<', '>' or '&' that could end it or read as markup */
static void put_json_safe(struct bp_buf *out, const struct bp_buf *json)
{
	size_t i;

	for (i = 0; i < json->len; i++) {
		char c = json->data[i];

		if (c == '<')
			bp_buf_puts(out, "\\u003c");
		else if (c == '>')
			bp_buf_puts(out, "\\u003e");
		else if (c == '&')
			bp_buf_puts(out, "\\u0026");
		else
			bp_buf_putc(out, c);
	}
}

#define PLOT_W		960
#define PLOT_H		392
#define PANEL_W		480
#define AREA_L		62	/* inside a panel */
#define AREA_R		22
#define AREA_T		84
#define AREA_B		318

struct axis {
	double lo, hi;		/* values at the two ends */
	bool log2;
	double p0, p1;		/* pixels of lo and hi */
};

static double ax(const struct axis *a, double v)
{
	double t;

	if (a->log2)
		t = (log2(v) - log2(a->lo)) / (log2(a->hi) - log2(a->lo));
	else
		t = (v - a->lo) / (a->hi - a->lo);
	return a->p0 + t * (a->p1 - a->p0);
}

/* a value for an attribute: exact enough to read back, no locale */
static void put_num(struct bp_buf *out, double v)
{
	bp_buf_printf(out, "%.10g", v);
}

static void point_title(struct bp_buf *out, const struct bp_scale_point *pt)
{
	char b[512];

	snprintf(b, sizeof(b), "%u worker%s%s: %.3f s median (%.3f-%.3f, spread %.1f%%), "
		 "speedup %.2f, efficiency %.2f", pt->workers, pt->workers == 1 ? "" : "s",
		 pt->oversubscribed ? " (more than the CPUs)" : "", pt->wall.median, pt->wall.min,
		 pt->wall.max, pt->wall.spread * 100, pt->speedup, pt->efficiency);
	bp_buf_puts(out, "<title>");
	bp_buf_put_xml(out, b);
	if (isfinite(pt->karp_flatt))
		bp_buf_printf(out, ", Karp-Flatt %.3f", pt->karp_flatt);
	bp_buf_printf(out, ", %s</title>", bp_class_name(pt->cls));
}

static void panel(struct bp_buf *out, const struct bp_scale *s, int which)
{
	const double off = which * PANEL_W;
	const uint32_t n = s->nr_points;
	const char *name = which ? "efficiency" : "speedup";
	struct axis x = { .log2 = true, .p0 = off + AREA_L, .p1 = off + PANEL_W - AREA_R };
	struct axis y = { .log2 = !which, .p0 = AREA_B, .p1 = AREA_T };
	double lo = INFINITY, hi = 0, v, nlo = s->pts[0].workers, nhi = s->pts[n - 1].workers;
	uint32_t i;

	x.lo = nlo / pow(2, 0.3);
	x.hi = nhi * pow(2, 0.3);
	for (i = 0; i < n; i++) {
		const struct bp_scale_point *pt = &s->pts[i];
		double a = which ? pt->speedup_lo / pt->workers : pt->speedup_lo;
		double b = which ? pt->speedup_hi / pt->workers : pt->speedup_hi;

		lo = fmin(lo, a);
		hi = fmax(hi, b);
	}
	if (which) {
		y.lo = 0;
		y.hi = fmax(1.1, hi * 1.05);
	} else {
		/* the ideal line spans the workers, and every whisker fits */
		y.lo = fmin(fmin(1, nlo), lo) / pow(2, 0.3);
		y.hi = fmax(nhi, hi) * pow(2, 0.3);
	}

	bp_buf_printf(out, "<g class=\"bp-panel\" data-panel=\"%s\" data-xscale=\"log2\" "
		      "data-yscale=\"%s\">\n", name, y.log2 ? "log2" : "linear");
	bp_buf_printf(out, "<rect class=\"bp-area\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
		      "height=\"%d\"/>\n", x.p0, AREA_T, x.p1 - x.p0, AREA_B - AREA_T);
	bp_buf_printf(out, "<text class=\"bp-ptitle\" x=\"%.1f\" y=\"%d\">%s</text>\n", x.p0,
		      AREA_T - 8, which ? (s->weak ? "efficiency (T1 / Tn)" :
					   "efficiency (speedup / workers)") :
		      (s->weak ? "scaled speedup (n T1 / Tn)" : "speedup (T1 / Tn)"));

	/* more workers than CPUs: shaded from the CPU count on */
	if (s->ncpus && nhi > s->ncpus) {
		double from = s->ncpus >= x.lo ? ax(&x, s->ncpus) : x.p0;

		bp_buf_printf(out, "<rect class=\"bp-over\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
			      "height=\"%d\"><title>more workers than the %u CPUs</title></rect>\n",
			      from, AREA_T, x.p1 - from, AREA_B - AREA_T, s->ncpus);
		bp_buf_printf(out, "<text class=\"bp-overlabel\" x=\"%.1f\" y=\"%d\">more workers "
			      "than %u CPU%s</text>\n", x.p1 - 4, AREA_B - 6, s->ncpus,
			      s->ncpus == 1 ? "" : "s");
	}

	/* y grid and ticks */
	if (y.log2) {
		for (v = pow(2, ceil(log2(y.lo))); v <= y.hi; v *= 2) {
			double py = ax(&y, v);

			bp_buf_printf(out, "<line class=\"bp-grid bp-ygrid\" data-v=\"%g\" x1=\"%.1f\" "
				      "y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\"/>\n", v, x.p0, py, x.p1, py);
			bp_buf_printf(out, "<text class=\"bp-ytick\" data-v=\"%g\" x=\"%.1f\" "
				      "y=\"%.2f\">%g</text>\n", v, x.p0 - 6, py + 4, v);
		}
	} else {
		for (v = 0; v <= y.hi + 1e-9; v += 0.25) {
			double py = ax(&y, v);

			bp_buf_printf(out, "<line class=\"bp-grid bp-ygrid%s\" data-v=\"%g\" "
				      "x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\"/>\n",
				      v == 1 ? " bp-one" : "", v, x.p0, py, x.p1, py);
			bp_buf_printf(out, "<text class=\"bp-ytick\" data-v=\"%g\" x=\"%.1f\" "
				      "y=\"%.2f\">%.2f</text>\n", v, x.p0 - 6, py + 4, v);
		}
	}
	/* x ticks: the worker counts measured */
	for (i = 0; i < n; i++) {
		double px = ax(&x, s->pts[i].workers);

		bp_buf_printf(out, "<line class=\"bp-grid bp-xgrid\" data-v=\"%u\" x1=\"%.2f\" "
			      "y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>\n", s->pts[i].workers, px, AREA_T,
			      px, AREA_B);
		bp_buf_printf(out, "<text class=\"bp-xtick\" data-v=\"%u\" x=\"%.2f\" y=\"%d\">%u"
			      "</text>\n", s->pts[i].workers, px, AREA_B + 16, s->pts[i].workers);
		if (which && n <= 12)
			bp_buf_printf(out, "<text class=\"bp-vlabel\" x=\"%.2f\" y=\"%d\" "
				      "fill=\"%s\">%s</text>\n", px, AREA_B + 50,
				      bp_class_colour(s->pts[i].cls),
				      bp_class_name(s->pts[i].cls));
	}
	bp_buf_printf(out, "<text class=\"bp-xtitle\" x=\"%.1f\" y=\"%d\">workers</text>\n",
		      (x.p0 + x.p1) / 2, AREA_B + 33);

	/* the ideal: speedup n (the first point taken as ideal), efficiency 1 */
	bp_buf_puts(out, "<polyline class=\"bp-ideal\" points=\"");
	if (which) {
		bp_buf_printf(out, "%.2f,%.2f %.2f,%.2f", x.p0, ax(&y, 1), x.p1, ax(&y, 1));
	} else {
		double a = fmax(x.lo, y.lo), b = fmin(x.hi, y.hi);

		bp_buf_printf(out, "%.2f,%.2f %.2f,%.2f", ax(&x, a), ax(&y, a), ax(&x, b),
			      ax(&y, b));
	}
	bp_buf_puts(out, "\"/>\n");

	/* measured: the line through the medians, whiskers to the slowest and fastest run */
	bp_buf_puts(out, "<polyline class=\"bp-measured\" points=\"");
	for (i = 0; i < n; i++) {
		const struct bp_scale_point *pt = &s->pts[i];

		bp_buf_printf(out, "%s%.2f,%.2f", i ? " " : "", ax(&x, pt->workers),
			      ax(&y, which ? pt->efficiency : pt->speedup));
	}
	bp_buf_puts(out, "\"/>\n");
	for (i = 0; i < n; i++) {
		const struct bp_scale_point *pt = &s->pts[i];
		double px = ax(&x, pt->workers), d = which ? pt->workers : 1;
		double y0 = ax(&y, pt->speedup_lo / d), y1 = ax(&y, pt->speedup_hi / d);
		double val = which ? pt->efficiency : pt->speedup;

		if (y0 - y1 >= 1)
			bp_buf_printf(out, "<path class=\"bp-whisker\" d=\"M%.2f %.2fV%.2fM%.2f "
				      "%.2fH%.2fM%.2f %.2fH%.2f\"/>\n", px, y0, y1, px - 4, y0,
				      px + 4, px - 4, y1, px + 4);
		bp_buf_printf(out, "<circle class=\"bp-point%s\" data-i=\"%u\" data-workers=\"%u\" "
			      "data-value=\"", pt->noisy ? " bp-noisy" : "", i, pt->workers);
		put_num(out, val);
		bp_buf_printf(out, "\" cx=\"%.2f\" cy=\"%.2f\" r=\"5.5\" fill=\"%s\">", px,
			      ax(&y, val), bp_class_colour(pt->cls));
		point_title(out, pt);
		bp_buf_puts(out, "</circle>\n");
	}
	bp_buf_puts(out, "</g>\n");
}

static const char plot_css[] =
	".bp-scale{font-family:sans-serif;font-size:12px;fill:#222}"
	".bp-scale .bp-title{font-size:15px;font-weight:bold}"
	".bp-scale .bp-sub{fill:#555}"
	".bp-scale .bp-area{fill:#fff;stroke:#999}"
	".bp-scale .bp-over{fill:#ece6f5}"
	".bp-scale .bp-overlabel{text-anchor:end;fill:#6a4f96;font-size:11px}"
	".bp-scale .bp-grid{stroke:#e3e3e3}"
	".bp-scale .bp-one{stroke:#bbb}"
	".bp-scale .bp-ytick{text-anchor:end;font-size:11px}"
	".bp-scale .bp-xtick,.bp-scale .bp-xtitle{text-anchor:middle;font-size:11px}"
	".bp-scale .bp-vlabel{text-anchor:middle;font-size:10px}"
	".bp-scale .bp-ptitle{font-weight:bold}"
	".bp-scale .bp-ideal{fill:none;stroke:#888;stroke-width:1.5;stroke-dasharray:6 4}"
	".bp-scale .bp-measured{fill:none;stroke:#1f4e79;stroke-width:2}"
	".bp-scale .bp-whisker{fill:none;stroke:#1f4e79;stroke-width:1}"
	".bp-scale .bp-point{stroke:#222;stroke-width:1}"
	".bp-scale .bp-noisy{stroke-dasharray:2 1.5;stroke-width:1.5}"
	".bp-scale .bp-legend{font-size:11px}";

/* the chart as an <svg> element, left open for what the caller adds; styled inside when standalone */
static void put_plot(struct bp_buf *out, const struct bp_scale *s, const char *command,
		     bool standalone)
{
	bool seen[BP_CLASS__MAX] = {};
	double lx = 10;
	uint32_t i;
	int c;

	bp_buf_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bp-scale\" "
		      "id=\"bp-plot\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		      PLOT_W, PLOT_H, PLOT_W, PLOT_H);
	if (standalone) {
		bp_buf_puts(out, "<title>boundprof scale: ");
		bp_buf_put_xml(out, command);
		bp_buf_printf(out, "</title>\n<style>%s</style>\n", plot_css);
	}
	bp_buf_printf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fafafa\"/>\n",
		      PLOT_W, PLOT_H);
	bp_buf_puts(out, "<text class=\"bp-title\" x=\"10\" y=\"22\">boundprof scale: ");
	bp_buf_put_xml(out, command);
	bp_buf_printf(out, "</text>\n<text class=\"bp-sub\" x=\"10\" y=\"40\">%s scaling, %u "
		      "CPU%s, %u run%s per point; whiskers: slowest and fastest run</text>\n",
		      s->weak ? "weak" : "strong", s->ncpus, s->ncpus == 1 ? "" : "s",
		      s->repeats, s->repeats == 1 ? "" : "s");
	/* legend: the lines, then each verdict drawn */
	bp_buf_printf(out, "<g class=\"bp-legend\"><line x1=\"%.0f\" y1=\"56\" x2=\"%.0f\" "
		      "y2=\"56\" class=\"bp-measured\"/><text x=\"%.0f\" y=\"60\">measured "
		      "(median)</text>", lx, lx + 22, lx + 27);
	lx += 135;
	bp_buf_printf(out, "<line x1=\"%.0f\" y1=\"56\" x2=\"%.0f\" y2=\"56\" class=\"bp-ideal\"/>"
		      "<text x=\"%.0f\" y=\"60\">ideal</text>", lx, lx + 22, lx + 27);
	lx += 70;
	for (i = 0; i < s->nr_points; i++)
		seen[s->pts[i].cls] = true;
	for (c = 0; c < BP_CLASS__MAX; c++) {
		if (!seen[c])
			continue;
		bp_buf_printf(out, "<circle cx=\"%.0f\" cy=\"56\" r=\"5\" class=\"bp-swatch\" "
			      "fill=\"%s\" stroke=\"#222\"/><text x=\"%.0f\" y=\"60\">%s</text>",
			      lx, bp_class_colour(c), lx + 9, bp_class_name(c));
		lx += 20 + 7 * strlen(bp_class_name(c));
	}
	bp_buf_puts(out, "</g>\n");
	panel(out, s, 0);
	panel(out, s, 1);
}

int bp_scale_svg(const struct bp_scale *s, const char *command, struct bp_buf *out)
{
	struct bp_buf json = BP_BUF_INIT;
	int err;

	if (!s->nr_points)
		return -EINVAL;
	err = bp_scale_json(s, command, &json);
	if (err) {
		bp_buf_free(&json);
		return err;
	}
	bp_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	put_plot(out, s, command, true);
	/* the numbers, for whoever wants them back */
	bp_buf_puts(out, "<metadata id=\"bp-scale-data\">");
	put_json_safe(out, &json);
	bp_buf_puts(out, "</metadata>\n</svg>\n");
	bp_buf_free(&json);
	return out->err;
}

/* ================================================================== HTML */

static const char html_css[] =
	"body{font-family:sans-serif;margin:16px;color:#222;background:#fafafa}"
	"h1{font-size:18px;margin:0 0 4px}"
	".bp-subtitle{color:#555;margin:0 0 10px}"
	".bp-conclusion{font-weight:bold;max-width:960px;margin:12px 0}"
	".bp-notes,.bp-warnings{max-width:960px;margin:6px 0;padding-left:20px}"
	".bp-warnings{color:#8a4b00}"
	"table.bp-table{border-collapse:collapse;margin:10px 0;font-size:13px}"
	".bp-table th,.bp-table td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
	".bp-table td.bp-v,.bp-table th.bp-v{text-align:left}"
	".bp-table tr.bp-over td{background:#ece6f5}"
	".bp-tip{position:fixed;pointer-events:none;background:#fffbe6;border:1px solid #999;"
	"padding:4px 6px;font-size:12px;max-width:420px;box-shadow:1px 1px 3px #0003}"
	".bp-swatch{display:inline-block;width:10px;height:10px;border-radius:5px;"
	"margin-right:4px;border:1px solid #222}";

/* hover tooltips from the data; window.bpScale says the page is ready */
static const char html_js[] =
	"(function(){\n"
	"'use strict';\n"
	"var data=JSON.parse(document.getElementById('bp-scale-data').textContent);\n"
	"var tip=document.createElement('div');tip.className='bp-tip';tip.hidden=true;\n"
	"document.body.appendChild(tip);\n"
	"function f(v,d){return v===null?'-':v.toFixed(d);}\n"
	"function text(p){\n"
	" var s=p.workers+' worker'+(p.workers===1?'':'s')+(p.oversubscribed?' (more than the '+"
	"data.cpus+' CPUs)':'')+': '+p.wall_s.toFixed(3)+' s median ('+p.wall_min_s.toFixed(3)+"
	"'\\u2013'+p.wall_max_s.toFixed(3)+' s, spread '+(100*p.spread).toFixed(1)+'%)';\n"
	" s+='\\nspeedup '+f(p.speedup,2)+', efficiency '+f(p.efficiency,2)+', Karp\\u2013Flatt '+"
	"f(p.karp_flatt,3);\n"
	" s+='\\n'+p.verdict+' ('+p.confidence+' confidence)';\n"
	" if(p.note)s+='\\n'+p.note;\n"
	" if(p.noisy)s+='\\nnoisy: the runs differ by more than 5%';\n"
	" return s;\n"
	"}\n"
	"var pts=document.querySelectorAll('.bp-point');\n"
	"pts.forEach(function(c){\n"
	" var t=c.querySelector('title');if(t)t.remove();\n"
	" c.addEventListener('mouseenter',function(){\n"
	"  var p=data.points[+c.getAttribute('data-i')];\n"
	"  tip.textContent='';\n"
	"  text(p).split('\\n').forEach(function(l,i){if(i)tip.appendChild("
	"document.createElement('br'));tip.appendChild(document.createTextNode(l));});\n"
	"  var r=c.getBoundingClientRect();\n"
	"  tip.style.left=Math.min(r.right+8,window.innerWidth-430)+'px';\n"
	"  tip.style.top=(r.bottom+8)+'px';tip.hidden=false;\n"
	" });\n"
	" c.addEventListener('mouseleave',function(){tip.hidden=true;});\n"
	"});\n"
	"window.bpScale={ready:true,data:data,tip:tip};\n"
	"})();\n";

static void html_table(struct bp_buf *out, const struct bp_scale *s)
{
	uint32_t i;

	bp_buf_puts(out, "<table class=\"bp-table\">\n<tr><th>workers</th><th>wall s "
		    "(median)</th><th>min</th><th>max</th><th>spread</th><th>speedup</th>"
		    "<th>efficiency</th><th>Karp&#8211;Flatt</th><th class=\"bp-v\">verdict</th>"
		    "</tr>\n");
	for (i = 0; i < s->nr_points; i++) {
		const struct bp_scale_point *pt = &s->pts[i];

		bp_buf_printf(out, "<tr class=\"bp-row%s\" data-i=\"%u\"><td>%u%s</td><td>%.3f</td>"
			      "<td>%.3f</td><td>%.3f</td><td>%.1f%%%s</td><td>%.2f</td><td>%.2f</td>",
			      pt->oversubscribed ? " bp-over" : "", i, pt->workers,
			      pt->oversubscribed ? " *" : "", pt->wall.median, pt->wall.min,
			      pt->wall.max, pt->wall.spread * 100, pt->noisy ? " !" : "",
			      pt->speedup, pt->efficiency);
		if (isfinite(pt->karp_flatt))
			bp_buf_printf(out, "<td>%.3f</td>", pt->karp_flatt);
		else
			bp_buf_puts(out, "<td>-</td>");
		bp_buf_printf(out, "<td class=\"bp-v\"><span class=\"bp-swatch\" style=\"background:"
			      "%s\"></span>%s (%s)</td></tr>\n", bp_class_colour(pt->cls),
			      bp_class_name(pt->cls), bp_confidence_name(pt->conf));
	}
	bp_buf_puts(out, "</table>\n");
}

int bp_scale_html(const struct bp_scale *s, const char *command, struct bp_buf *out)
{
	struct bp_buf json = BP_BUF_INIT;
	bool any = false;
	uint32_t i;
	int err;

	if (!s->nr_points)
		return -EINVAL;
	err = bp_scale_json(s, command, &json);
	if (err) {
		bp_buf_free(&json);
		return err;
	}
	bp_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		    "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
		    "<meta name=\"generator\" content=\"boundprof\">\n<title>boundprof scale: ");
	bp_buf_put_xml(out, command);
	/* the plot carries the title and the mode */
	bp_buf_printf(out, "</title>\n<style>%s%s</style>\n</head>\n<body>\n", html_css, plot_css);
	put_plot(out, s, command, false);
	bp_buf_puts(out, "</svg>\n<p class=\"bp-conclusion\">");
	bp_buf_put_xml(out, s->conclusion);
	bp_buf_puts(out, "</p>\n<ul class=\"bp-notes\">\n");
	for (i = 0; i < s->nr_points; i++) {
		if (!s->pts[i].note[0])
			continue;
		bp_buf_puts(out, "<li>");
		bp_buf_put_xml(out, s->pts[i].note);
		bp_buf_puts(out, "</li>\n");
	}
	bp_buf_puts(out, "</ul>\n");
	html_table(out, s);
	for (i = 0; i < s->nr_points; i++) {
		const struct bp_scale_point *pt = &s->pts[i];

		if (!pt->noisy && !pt->disturbed)
			continue;
		if (!any)
			bp_buf_puts(out, "<ul class=\"bp-warnings\">\n");
		any = true;
		if (pt->noisy)
			bp_buf_printf(out, "<li>the %u runs at %u worker%s differ by %.1f%% of their "
				      "median (more than %.0f%%)</li>\n", pt->nr_runs, pt->workers,
				      pt->workers == 1 ? "" : "s", pt->wall.spread * 100,
				      BP_RUNS_NOISY * 100);
		if (pt->disturbed)
			bp_buf_printf(out, "<li>other processes used %.2f CPUs on average during the "
				      "point at %u worker%s</li>\n",
				      pt->others_cpu_s / pt->duration_s, pt->workers,
				      pt->workers == 1 ? "" : "s");
	}
	if (any)
		bp_buf_puts(out, "</ul>\n");
	bp_buf_puts(out, "<p class=\"bp-subtitle\">* more workers than CPUs; ! runs more than 5% "
		    "apart. The numbers: the JSON in this page's bp-scale-data element.</p>\n");
	bp_buf_puts(out, "<script type=\"application/json\" id=\"bp-scale-data\">");
	put_json_safe(out, &json);
	bp_buf_printf(out, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", html_js);
	bp_buf_free(&json);
	return out->err;
}
