// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/turns.h"
#include "model/waits.h"

/*
 * C library and loader frames, and the unwinder's markers ([truncated]): the
 * lock's caller is the interesting frame
 */
static bool libc_frame(const struct bp_frame *f);

/* a user frame of the C library or the loader, by name: what a lock wait is reached through */
static bool libc_user_frame(const struct bp_frame *f)
{
	return !f->kernel && f->name && f->name[0] != '[' && libc_frame(f);
}

static bool libc_frame(const struct bp_frame *f)
{
	static const char *const libs[] = { "libc.so", "libc-", "libpthread", "ld-linux", "ld-" };
	size_t i;

	if (f->kernel || !f->name || f->name[0] == '[')
		return true;
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(f->module, libs[i], strlen(libs[i])))
			return true;
	return false;
}


/*
 * The C library's frames between the innermost own frame (at k) and the
 * kernel's: a lock's slow path is several (pthread_mutex_lock,
 * __lll_lock_wait, futex_wait), and a walk that shows one (the system
 * call's address) or none lost them and with them the caller: a frame
 * pointer walk through code built without frame pointers (before the C
 * library's unwind tables were loaded) returns into the caller's caller.
 */
static bool through_libc(const struct bp_profile *p, const uint32_t *fr, uint32_t nr,
			 uint32_t k)
{
	uint32_t n = 0;

	for (k++; k < nr && fr[k] < p->nr_frames && libc_user_frame(&p->frames[fr[k]]); k++)
		n++;
	return n >= 2;
}

/*
 * A futex wait is entered from the C library, so the innermost frame
 * outside it is the lock's caller, when the walk kept the library's
 * frames (through_libc()). Stacks that lost them name the site only when
 * no stack kept them.
 */
bool bp_lock_site(const struct bp_profile *p, uint32_t pid, char *label, size_t len,
		  double *share)
{
	uint64_t total[2] = { 0 }, best[2] = { 0 }, *ns;
	uint32_t i, k, nr, best_fr[2] = { 0 }, nf = p->nr_frames;
	int g;

	*share = 0;
	if (len)
		label[0] = '\0';
	ns = calloc(2 * ((size_t)nf + 1), sizeof(*ns));
	if (!ns)
		return false;
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *fr;

		if (s->kind != BP_KIND_LOCK || (pid && s->pid != pid))
			continue;
		fr = bp_profile__stack_frames(p, s->stack, &nr);
		for (k = nr; k-- > 0;) {
			uint64_t *at;

			if (fr[k] >= nf || libc_frame(&p->frames[fr[k]]))
				continue;
			/* reached through the C library: the frame is its caller */
			g = through_libc(p, fr, nr, k);
			at = &ns[g * ((size_t)nf + 1) + fr[k]];
			*at += s->ns;
			if (*at > best[g]) {
				best[g] = *at;
				best_fr[g] = fr[k];
			}
			break;
		}
		total[0] += s->ns;
		if (k < nr && through_libc(p, fr, nr, k))
			total[1] += s->ns;
	}
	free(ns);
	g = best[1] ? 1 : 0;
	if (!best[g] || !total[g])
		return false;
	bp_frame_label(&p->frames[best_fr[g]], false, label, len);
	*share = (double)best[g] / total[g];
	return true;
}

/* the threads that waited on a lock: those that took turns */
static uint32_t lock_threads(const struct bp_profile *p, uint32_t pid)
{
	uint32_t i, j, n = 0, cap = 64, *tids = malloc(cap * sizeof(*tids));

	if (!tids)
		return 0;
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];

		if (s->kind != BP_KIND_LOCK || !s->ns || (pid && s->pid != pid))
			continue;
		for (j = 0; j < n && tids[j] != s->tid; j++)
			;
		if (j < n)
			continue;
		if (n == cap) {
			uint32_t *t = realloc(tids, 2 * cap * sizeof(*tids));

			if (!t)
				break;
			tids = t;
			cap *= 2;
		}
		tids[n++] = s->tid;
	}
	free(tids);
	return n;
}

void bp_turns_evidence(const struct bp_profile *p, uint32_t pid, struct bp_evidence *e)
{
	uint64_t turn = 0, want = 0, sib = 0, woken = 0;
	uint32_t i;

	e->turns_valid = false;
	e->turn_s = e->want_s = 0;
	e->sibling_wake = -1;
	e->turn_threads = 0;
	e->lock_site[0] = '\0';
	e->lock_site_share = 0;
	for (i = 0; i < p->nr_procs; i++) {
		const struct bp_proc *pr = p->procs[i];

		if (!pr->have_timeline || (pid && pr->pid != pid))
			continue;
		e->turns_valid = true;
		/* a saved profile is untrusted: the part never exceeds the whole */
		turn += pr->turn_ns < pr->want_ns ? pr->turn_ns : pr->want_ns;
		want += pr->want_ns;
	}
	if (!e->turns_valid)
		return;
	e->turn_s = turn / 1e9;
	e->want_s = want / 1e9;
	/* who ended the lock waits: a sibling releasing the lock, or something else */
	for (i = 0; i < p->nr_wake_rows; i++) {
		const struct bp_wake_row *r = &p->wake_rows[i];

		if (r->state != BP_TS_LOCK || (pid && r->pid != pid))
			continue;
		woken += r->ns;
		if (r->ctx == BP_WCTX_TASK && r->waker_pid == r->pid)
			sib += r->ns;
	}
	if (woken)
		e->sibling_wake = (double)sib / woken;
	e->turn_threads = lock_threads(p, pid);
	bp_lock_site(p, pid, e->lock_site, sizeof(e->lock_site), &e->lock_site_share);
}

int bp_turns_judge(const struct bp_evidence *e, const struct bp_thresholds *t, double *share)
{
	double wall = e->wall_s, par, demand;
	int conf;

	*share = e->want_s > 0 ? e->turn_s / e->want_s : 0;
	if (!t)
		t = &bp_default_thresholds;
	if (!e->turns_valid || e->want_s <= 0 || wall <= 0 || e->ncpus < 2 ||
	    e->turn_threads < 2 || e->lock_s <= 0)
		return -1;
	/* turns on a Python GIL are the GIL's: its own rule says so, with its own levers */
	if (e->gil_s > 0 && e->gil_s >= 0.5 * e->lock_s)
		return -1;
	par = e->on_s / wall;
	demand = (e->on_s + e->rq_s + e->lock_s) / wall;
	/* several threads want to run, about one runs: the rest waits */
	if (par > t->turn_parallelism || demand < t->turn_demand)
		return -1;
	if (*share >= t->turn_share)
		conf = BP_CONF_HIGH;
	else if (*share >= t->turn_share_medium)
		conf = BP_CONF_MEDIUM;
	else
		return -1;
	/* waits mostly ended by something other than its own threads: not their lock */
	if (e->sibling_wake >= 0 && e->sibling_wake < t->turn_sibling) {
		if (conf != BP_CONF_HIGH)
			return -1;
		conf = BP_CONF_MEDIUM;
	}
	return conf;
}
