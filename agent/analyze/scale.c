// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/scale.h"
#include "analyze/turns.h"

/* append to a fixed buffer, cutting what does not fit */
static void __attribute__((format(printf, 3, 4))) cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strnlen(buf, len);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static const char *plural(uint32_t n)
{
	return n == 1 ? "" : "s";
}

bool bp_scale_lock_site(const struct bp_profile *p, char *label, size_t len, double *share)
{
	return bp_lock_site(p, 0, label, len, share);
}

void bp_scale_point_measure(struct bp_scale_point *pt, const struct bp_profile *p,
			    const struct bp_summary *sum)
{
	const struct bp_verdict *v = &sum->overall;
	double mine = 0;
	uint32_t i, n = p->nr_runs < BP_SCALE_MAX_REPEATS ? p->nr_runs : BP_SCALE_MAX_REPEATS;

	pt->nr_runs = n;
	for (i = 0; i < n; i++) {
		pt->wall_s[i] = p->runs[i].wall_s;
		pt->cpu_s[i] = p->runs[i].cpu_s;
	}
	pt->cls = sum->have_overall ? v->cls : BP_CLASS_UNKNOWN;
	pt->conf = sum->have_overall ? v->conf : BP_CONF_LOW;
	pt->share_cpu = v->share_cpu;
	pt->share_mem = v->share_mem;
	pt->share_io = v->share_io;
	pt->share_lock = v->share_lock;
	pt->share_rq = v->share_rq;
	pt->share_other = v->share_other;
	pt->share_peer = v->peer_share;
	pt->share_throttled = v->share_throttled;
	pt->share_gil = v->share_gil;
	pt->share_syscall = v->share_syscall;
	pt->parallelism = v->parallelism;
	pt->serial_share = v->serial_share;
	pt->busy_s = v->busy_s;
	pt->duration_s = sum->duration_s;
	pt->machine_busy = p->machine_busy;
	for (i = 0; i < sum->nr_procs; i++)
		mine += sum->procs[i].on_cpu_s;
	/* the machine's busy CPU time (/proc/stat) less what the command used */
	pt->others_cpu_s = p->machine_busy >= 0 ?
		fmax(0, p->machine_busy * p->ncpus * sum->duration_s - mine) : 0;
	snprintf(pt->evidence, sizeof(pt->evidence), "%s",
		 sum->have_overall && v->nr_evidence ? v->evidence[0] : "");
	bp_scale_lock_site(p, pt->lock_site, sizeof(pt->lock_site), &pt->lock_site_share);
}

double bp_scale_amdahl(double e, double n)
{
	return 1 / (e + (1 - e) / n);
}

/* the SCALE words of each verdict class and the figure they show (verdict_classes.h) */
enum figure { FIG_SECONDS, FIG_CPUS, FIG_SHARE, FIG_MIX };

struct wording {
	enum figure fig;
	size_t share;			/* FIG_SHARE: offset of the share in the point */
	const char *fmt;
};

#define SECONDS			.fig = FIG_SECONDS
#define CPUS			.fig = FIG_CPUS
#define MIX			.fig = FIG_MIX
#define SHARE(field)		.fig = FIG_SHARE, .share = offsetof(struct bp_scale_point, field)
#define WORDING(id, name, colour, figure, scale)	[BP_CLASS_##id] = { figure, .fmt = scale },
static const struct wording wordings[BP_CLASS__MAX] = { BP_VERDICT_CLASSES(WORDING) };
#undef SECONDS
#undef CPUS
#undef MIX
#undef SHARE

/* what the verdict of a point says in a few words */
static void detail(const struct bp_scale *s, const struct bp_scale_point *pt, char *buf,
		   size_t len)
{
	const struct wording *w = &wordings[pt->cls < BP_CLASS__MAX ? pt->cls : BP_CLASS_UNKNOWN];

	buf[0] = '\0';
	/* the format is the table's, one of the four shapes below */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	switch (w->fig) {
	case FIG_SECONDS:
		cat(buf, len, w->fmt, pt->duration_s);
		break;
	case FIG_CPUS:
		cat(buf, len, w->fmt, pt->parallelism, s->ncpus);
		break;
	case FIG_SHARE:
		cat(buf, len, w->fmt, *(const double *)((const char *)pt + w->share) * 100);
		break;
	case FIG_MIX:
		cat(buf, len, w->fmt, (pt->share_cpu + pt->share_mem) * 100, pt->share_lock * 100,
		    pt->share_rq * 100, pt->share_io * 100);
		break;
	}
#pragma GCC diagnostic pop
	if (pt->cls == BP_CLASS_LOCK && pt->lock_site[0] && pt->lock_site_share >= 0.5)
		cat(buf, len, ", %.0f%% of it under %s", pt->lock_site_share * 100, pt->lock_site);
	if (pt->cls == BP_CLASS_STARVED && !pt->oversubscribed)
		cat(buf, len, ", other processes used %.2f CPU-seconds", pt->others_cpu_s);
}

static void note(const struct bp_scale *s, uint32_t i)
{
	struct bp_scale_point *pt = &s->pts[i];
	const struct bp_scale_point *prev = i ? &s->pts[i - 1] : NULL;
	bool changed = !prev || prev->cls != pt->cls;
	char d[300];

	pt->note[0] = '\0';
	detail(s, pt, d, sizeof(d));
	if (pt->oversubscribed && (changed || !prev->oversubscribed))
		cat(pt->note, sizeof(pt->note), "%u workers on %u CPU%s: %s, %s", pt->workers,
		    s->ncpus, plural(s->ncpus), bp_class_name(pt->cls), d);
	else if (changed)
		cat(pt->note, sizeof(pt->note), "from %u worker%s on: %s, %s", pt->workers,
		    plural(pt->workers), bp_class_name(pt->cls), d);
}

/* the Karp-Flatt fraction to predict with: the last measured one up to point i */
static double kf_at(const struct bp_scale *s, int i, uint32_t *at)
{
	for (; i >= 1; i--) {
		if (isfinite(s->pts[i].karp_flatt) && !s->pts[i].oversubscribed) {
			*at = s->pts[i].workers;
			return s->pts[i].karp_flatt;
		}
	}
	return NAN;
}

/* why the step to point i did not pay, and what to ask for */
static void why_and_request(struct bp_scale *s, char *c, size_t len)
{
	const struct bp_scale_point *stop = &s->pts[s->stop], *best = &s->pts[s->best];
	uint32_t at = 0, target;
	double e;

	if (stop->oversubscribed && best->workers <= s->ncpus) {
		cat(c, len, "more workers than the %u CPU%s here (%s at %u). ", s->ncpus,
		    plural(s->ncpus), bp_class_name(stop->cls), stop->workers);
		if (best->workers < s->ncpus) {
			cat(c, len, "Measure a point at %u workers, the CPUs there are, before "
			    "asking for more than %u.", s->ncpus, best->workers);
			return;
		}
		cat(c, len, "It scales to the %u CPU%s of this machine (efficiency %.2f at %u "
		    "workers); this machine cannot say whether more CPUs would pay. ", s->ncpus,
		    plural(s->ncpus), best->efficiency, best->workers);
		e = kf_at(s, s->best, &at);
		target = s->pts[s->nr_points - 1].workers > s->ncpus ?
			 s->pts[s->nr_points - 1].workers : 2 * s->ncpus;
		if (isfinite(e) && e > 0.001)
			cat(c, len, "With the serial fraction measured at %u workers (Karp-Flatt "
			    "%.3f), %u CPUs would give at most %.1fx. ", at, e, target,
			    bp_scale_amdahl(e, target));
		else if (isfinite(e))
			cat(c, len, "No serial fraction shows at %u workers (Karp-Flatt %.3f). ",
			    at, e);
		cat(c, len, "Ask for %u CPUs here; measure on a machine with more before asking "
		    "for more.", s->ncpus);
		return;
	}
	switch (stop->cls) {
	case BP_CLASS_LOCK: {
		char d[300];

		detail(s, stop, d, sizeof(d));
		/* threads taking turns: the time under the lock is the serial part */
		if (stop->serial_share > 0) {
			char site[200] = "a lock";

			if (stop->lock_site[0])
				snprintf(site, sizeof(site), "the lock taken in %s", stop->lock_site);
			cat(c, len, "the lock its threads take turns on: at %u workers one thread at "
			    "a time ran under %s for %.0f%% of the wall time while the others waited "
			    "for it. That is the serial part (Karp-Flatt %.3f). Do not ask for more "
			    "than %u CPU%s: more workers only wait longer for the lock. Shrink or "
			    "shard the critical section first, then measure again.", stop->workers,
			    site, stop->serial_share * 100, stop->karp_flatt, best->workers,
			    plural(best->workers));
			return;
		}
		cat(c, len, "lock contention (%s at %u workers). Do not ask for more than %u "
		    "CPU%s: more workers only wait longer for the lock. Shrink or shard the "
		    "critical section first, then measure again.", d, stop->workers,
		    best->workers, plural(best->workers));
		return;
	}
	case BP_CLASS_STARVED:
		if (!stop->oversubscribed) {
			cat(c, len, "other processes took the CPUs (%.0f%% busy, others used %.2f "
			    "CPU-seconds at %u workers). This curve measures the machine's load "
			    "more than the code: run it again when the CPUs are free before "
			    "asking for anything.", fmax(0, stop->machine_busy) * 100,
			    stop->others_cpu_s, stop->workers);
			return;
		}
		cat(c, len, "more workers than CPUs: %.0f%% of busy thread-time waiting for one "
		    "at %u workers. Ask for no more than %u workers on %u CPUs.",
		    stop->share_rq * 100, stop->workers, best->workers, s->ncpus);
		return;
	case BP_CLASS_MEMBW:
		cat(c, len, "memory traffic sets the speed at %u workers. More CPUs will not help "
		    "past %u: reduce the traffic (tile for the cache, denser data) first.",
		    stop->workers, best->workers);
		return;
	case BP_CLASS_IO:
		cat(c, len, "block IO (%.0f%% of busy thread-time at %u workers). Ask for faster "
		    "storage or more requests in flight, not for CPUs.", stop->share_io * 100,
		    stop->workers);
		return;
	default:
		break;
	}
	e = stop->karp_flatt;
	{
		uint32_t first_at = 0;
		double first = NAN;
		uint32_t i;

		for (i = 1; i < (uint32_t)s->stop; i++) {
			if (isfinite(s->pts[i].karp_flatt)) {
				first = s->pts[i].karp_flatt;
				first_at = s->pts[i].workers;
				break;
			}
		}
		if (isfinite(first) && e > 1.5 * first + 0.01)
			cat(c, len, "parallel overhead that grows with the workers (Karp-Flatt "
			    "rises from %.3f at %u to %.3f at %u): synchronization, imbalance or "
			    "communication, not a fixed serial part. ", first, first_at, e,
			    stop->workers);
		else if (e > 0)
			cat(c, len, "a serial part of about %.0f%% (Karp-Flatt %.3f at %u): no "
			    "number of CPUs gives more than %.1fx. ", e * 100, e, stop->workers,
			    1 / e);
		else
			cat(c, len, "%s at %u workers. ", bp_class_name(stop->cls), stop->workers);
	}
	cat(c, len, "Ask for %u CPU%s, not more: past %u each added worker gives less than "
	    "half its worth.", best->workers, plural(best->workers), best->workers);
}

static void conclude(struct bp_scale *s)
{
	char *c = s->conclusion;
	size_t len = sizeof(s->conclusion);
	const struct bp_scale_point *last = &s->pts[s->nr_points - 1];
	uint32_t i, nn = 0, nd = 0;
	char noisy[128] = "", disturbed[128] = "";

	c[0] = '\0';
	if (s->nr_points == 1) {
		cat(c, len, "One point: nothing to compare it with. Give several worker counts "
		    "(-j 1,2,4,8).");
	} else if (s->stop < 0 && !last->oversubscribed) {
		cat(c, len, "It still pays at %u workers (speedup %.2f, efficiency %.2f): the "
		    "curve has not bent yet. Asking for %u CPUs is backed by this curve; "
		    "measure further before asking for more.", last->workers, last->speedup,
		    last->efficiency, last->workers);
	} else if (s->stop < 0) {
		cat(c, len, "It still pays at %u workers on %u CPU%s (speedup %.2f): its workers "
		    "wait more than they compute (%s at %u), so more of them overlap the waits. "
		    "Ask for more workers, not more CPUs.", last->workers, s->ncpus,
		    plural(s->ncpus), last->speedup, bp_class_name(last->cls), last->workers);
	} else {
		const struct bp_scale_point *stop = &s->pts[s->stop], *best = &s->pts[s->best];

		cat(c, len, "The curve stops paying after %u worker%s: %u give %.2fx (efficiency "
		    "%.2f) against %.2fx at %u; the limit is ", best->workers,
		    plural(best->workers), stop->workers, stop->speedup, stop->efficiency,
		    best->speedup, best->workers);
		why_and_request(s, c, len);
	}
	for (i = 0; i < s->nr_points; i++) {
		if (s->pts[i].noisy)
			cat(noisy, sizeof(noisy), "%s%u", nn++ ? ", " : "", s->pts[i].workers);
		if (s->pts[i].disturbed)
			cat(disturbed, sizeof(disturbed), "%s%u", nd++ ? ", " : "",
			    s->pts[i].workers);
	}
	if (nn)
		cat(c, len, " Noisy (runs more than %.0f%% apart) at %s worker%s: repeat more (-r) "
		    "before relying on %s.", BP_RUNS_NOISY * 100, noisy, nn == 1 &&
		    !strcmp(noisy, "1") ? "" : "s", nn == 1 ? "it" : "them");
	if (nd)
		cat(c, len, " Disturbed (other processes used more than %.2f CPUs on average) at "
		    "%s worker%s: the curve is unreliable there.", BP_SCALE_DISTURBED, disturbed,
		    nd == 1 && !strcmp(disturbed, "1") ? "" : "s");
}

int bp_scale_compute(struct bp_scale *s)
{
	double t0, n0;
	uint32_t i;

	if (!s->nr_points || !s->pts)
		return -EINVAL;
	for (i = 0; i < s->nr_points; i++) {
		struct bp_scale_point *pt = &s->pts[i];

		if (!pt->workers || !pt->nr_runs || pt->nr_runs > BP_SCALE_MAX_REPEATS ||
		    (i && pt->workers <= s->pts[i - 1].workers))
			return -EINVAL;
		if (bp_spread_of(pt->wall_s, pt->nr_runs, &pt->wall) ||
		    bp_spread_of(pt->cpu_s, pt->nr_runs, &pt->cpu))
			return -ENOMEM;
		if (!(pt->wall.median > 0) || !(pt->wall.min > 0))
			return -EINVAL;
	}
	t0 = s->pts[0].wall.median;
	n0 = s->pts[0].workers;
	s->stop = -1;
	for (i = 0; i < s->nr_points; i++) {
		struct bp_scale_point *pt = &s->pts[i];
		double n = pt->workers, k = s->weak ? n : n0;

		/* weak: the ideal time stays T0 while the work grows n-fold */
		pt->speedup = k * t0 / pt->wall.median;
		pt->speedup_lo = k * t0 / pt->wall.max;
		pt->speedup_hi = k * t0 / pt->wall.min;
		pt->efficiency = pt->speedup / n;
		pt->karp_flatt = i == 0 || n == 1 ? NAN :
				 (1 / pt->speedup - 1 / n) / (1 - 1 / n);
		pt->marginal = i == 0 ? NAN :
			       (pt->speedup / s->pts[i - 1].speedup - 1) /
			       (n / s->pts[i - 1].workers - 1);
		pt->noisy = pt->wall.spread > BP_RUNS_NOISY;
		pt->oversubscribed = s->ncpus && pt->workers > s->ncpus;
		pt->disturbed = pt->duration_s > 0 &&
				pt->others_cpu_s / pt->duration_s > BP_SCALE_DISTURBED;
		if (i && s->stop < 0 && pt->marginal < BP_SCALE_PAYS)
			s->stop = i;
		note(s, i);
	}
	s->best = s->stop < 0 ? (int)s->nr_points - 1 : s->stop - 1;
	conclude(s);
	return 0;
}
