// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/jobs.h"
#include "analyze/chain.h"
#include "analyze/owned.h"
#include "analyze/pipeline.h"

const char *bp_tstate_name(uint32_t s)
{
	return s < BP_TS__MAX ? bp_wclass_of_state(s)->state : "unknown";
}

double bp_oncpu_seconds(const struct bp_profile *p, uint64_t samples, uint64_t ns)
{
	/* cpu-clock periods are ns of CPU time; for cycles only the count is time-like */
	if (!p->pmu && ns)
		return ns / 1e9;
	return p->hz > 0 ? (double)samples / p->hz : 0;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_hot_self(const void *a, const void *b)
{
	const struct bp_hotspot *x = a, *y = b;

	if (x->self != y->self)
		return cmp_u64_desc(x->self, y->self);
	if (x->total != y->total)
		return cmp_u64_desc(x->total, y->total);
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int cmp_hot_total(const void *a, const void *b)
{
	const struct bp_hotspot *x = a, *y = b;

	if (x->total != y->total)
		return cmp_u64_desc(x->total, y->total);
	if (x->self != y->self)
		return cmp_u64_desc(x->self, y->self);
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/*
 * Time that says a process did something: everything but sleeping, and but
 * waiting for connections or requests (a server's network waits).
 */
double bp_proc_activity(const struct bp_proc_summary *ps)
{
	return bp_busy_s(ps->on_cpu_s, ps->off_s, ps->net_work_s, true);
}

#define activity bp_proc_activity

static int cmp_proc(const void *a, const void *b)
{
	const struct bp_proc_summary *x = a, *y = b;
	double ax = activity(x), ay = activity(y);

	if (x->samples != y->samples)
		return cmp_u64_desc(x->samples, y->samples);
	if (ax != ay)
		return ax < ay ? 1 : -1;
	return x->proc->pid < y->proc->pid ? -1 : x->proc->pid > y->proc->pid;
}

static int cmp_thr(const void *a, const void *b)
{
	const struct bp_thread_summary *x = a, *y = b;

	if (x->on_cpu_s != y->on_cpu_s)
		return x->on_cpu_s < y->on_cpu_s ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* sample indices grouped by process */
static int cmp_sample_idx(const void *a, const void *b, void *ctx)
{
	const struct bp_sample *s = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (s[x].pid != s[y].pid)
		return s[x].pid < s[y].pid ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* some sample is of pid; idx: the samples sorted by cmp_sample_idx() */
static bool has_samples(const struct bp_profile *p, const uint32_t *idx, uint32_t pid)
{
	uint32_t lo = 0, hi = p->nr_samples;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->samples[idx[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nr_samples && p->samples[idx[lo]].pid == pid;
}

/*
 * What the kernel was doing when a sample hit it, judged by the innermost
 * kernel frame with a known role: submitting block IO counts toward IO,
 * handling a page fault toward memory (docs/classification.md).
 */
enum frame_cat {
	CAT_NONE = 0,
	CAT_IO,
	CAT_FAULT,
};

static const char *const io_funcs[] = {
	"submit_bio", "blk_mq_", "__blk_mq_", "blk_", "__blk_", "blkdev_", "iomap_dio_",
	"__iomap_dio_", "virtio_queue_rq", "virtblk_", "nvme_", "scsi_", "dio_",
	"__blockdev_direct_IO", "ext4_io_submit", "ext4_writepages", "ext4_do_writepages",
	"mpage_", "filemap_write_and_wait_range", "file_write_and_wait_range",
	"__filemap_fdatawrite_range", "filemap_fdatawrite_wbc",
};

static const char *const fault_funcs[] = {
	"exc_page_fault", "asm_exc_page_fault", "do_user_addr_fault", "handle_mm_fault",
	"__handle_mm_fault", "do_anonymous_page", "do_huge_pmd_anonymous_page", "do_fault",
	"do_pte_missing", "clear_page",
};

static bool has_prefix(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strncmp(name, list[i], strlen(list[i])))
			return true;
	return false;
}

static uint8_t frame_category(const struct bp_frame *f)
{
	if (!f->kernel || !f->name)
		return CAT_NONE;
	if (has_prefix(f->name, fault_funcs, sizeof(fault_funcs) / sizeof(fault_funcs[0])))
		return CAT_FAULT;
	if (has_prefix(f->name, io_funcs, sizeof(io_funcs) / sizeof(io_funcs[0])))
		return CAT_IO;
	return CAT_NONE;
}

struct acc {
	uint8_t *cat;		/* per frame: enum frame_cat */
	uint64_t *self, *total;
	uint32_t *mark;		/* sample stamp: count a function once per stack */
	uint32_t *touched;
	uint32_t nr_touched;
	uint32_t stamp;
	uint64_t *thr_ns;	/* sampled on-CPU ns per thread summary */
	uint8_t *owned;		/* per frame: bp_frame_owned() */
	uint64_t *own, *callee;	/* per function: samples as the innermost own frame, as its callee */
	uint32_t *func;		/* per frame: the first frame of its function (all its lines) */
	uint64_t *ftotal;	/* per function: samples with it on the stack */
	uint32_t *fmark;	/* per function: sample stamp, so recursion counts once */
};

static int cmp_func(const void *a, const void *b, void *ctx)
{
	const struct bp_frame *f = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uintptr_t nx = (uintptr_t)f[x].name, ny = (uintptr_t)f[y].name;
	uintptr_t mx = (uintptr_t)f[x].module, my = (uintptr_t)f[y].module;

	if (nx != ny)
		return nx < ny ? -1 : 1;
	if (mx != my)
		return mx < my ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Frames are lines of functions; advice is about functions. Names and
 * modules are interned, so one function's frames share both pointers.
 * A module's frames without a name count as one function.
 */
int bp_func_ids(const struct bp_profile *p, uint32_t *func)
{
	uint32_t *ord = malloc((p->nr_frames + 1) * sizeof(*ord)), i;

	if (!ord)
		return -ENOMEM;
	for (i = 0; i < p->nr_frames; i++)
		ord[i] = i;
	qsort_r(ord, p->nr_frames, sizeof(*ord), cmp_func, p->frames);
	for (i = 0; i < p->nr_frames; i++) {
		const struct bp_frame *f = &p->frames[ord[i]];
		const struct bp_frame *prev = i ? &p->frames[ord[i - 1]] : NULL;

		/* a module's unnamed code is one function: an address is no advice */
		func[ord[i]] = prev && prev->name == f->name && prev->module == f->module &&
			       prev->kernel == f->kernel ? func[ord[i - 1]] : ord[i];
	}
	free(ord);
	return 0;
}

/* the index of the innermost own frame at or above leaf, or -1 */
static int innermost_owned(const struct bp_profile *p, const struct acc *a, const uint32_t *fr,
			   uint32_t leaf)
{
	uint32_t j;

	for (j = leaf; j-- > 0;)
		if (!p->frames[fr[j]].inlined && a->owned[fr[j]])
			return (int)j;
	return -1;
}

/* the innermost frame of a stack, inlined frames charged to where they were inlined */
static uint32_t leaf_of(const struct bp_profile *p, const uint32_t *fr, uint32_t nr)
{
	uint32_t leaf = nr;

	while (leaf > 1 && p->frames[fr[leaf - 1]].inlined)
		leaf--;
	return leaf;
}

/*
 * The user's own code the samples are under: the innermost own frame most
 * samples have, and what it calls that is not the user's (the reason its
 * time goes where it goes). Touched lists every frame of the samples.
 */
static void own_code(const struct bp_profile *p, const uint32_t *idx, uint32_t n, uint64_t samples,
		     struct acc *a, struct bp_proc_summary *ps)
{
	uint64_t best = 0, mine = 0, beneath = 0, kern = 0, top_callee = 0;
	uint32_t i, top = 0, callee = 0, nr;

	for (i = 0; i < a->nr_touched; i++) {
		uint32_t f = a->func[a->touched[i]];

		if (a->own[f] > best) {
			best = a->own[f];
			top = f;
		}
	}
	for (i = 0; best && i < n; i++) {
		const struct bp_sample *s = &p->samples[idx[i]];
		const uint32_t *fr;
		uint32_t leaf, j;
		int o;

		if (s->kind != BP_KIND_ONCPU || !s->count)
			continue;
		fr = bp_profile__stack_frames(p, s->stack, &nr);
		leaf = leaf_of(p, fr, nr);
		o = innermost_owned(p, a, fr, leaf);
		if (o < 0 || a->func[fr[o]] != top)
			continue;
		mine += s->count;
		if ((uint32_t)o + 1 >= leaf)
			continue;
		beneath += s->count;
		if (p->frames[fr[nr - 1]].kernel)
			kern += s->count;
		for (j = o + 1; j < leaf && p->frames[fr[j]].inlined; j++)
			;
		a->callee[a->func[fr[j]]] += s->count;
	}
	for (i = 0; i < a->nr_touched; i++) {
		uint32_t f = a->func[a->touched[i]];

		if (a->callee[f] > top_callee) {
			top_callee = a->callee[f];
			callee = f;
		}
		a->own[f] = a->callee[f] = 0;
	}
	if (!mine || !samples)
		return;
	ps->have_own = true;
	ps->own_frame = top;
	ps->own_frac = (double)mine / samples;
	ps->own_beneath = (double)beneath / mine;
	ps->own_kernel = (double)kern / mine;
	ps->own_callee = callee;
	ps->own_callee_frac = (double)top_callee / mine;
}

static uint64_t clip_wall(const struct bp_profile *p, uint64_t start, uint64_t end)
{
	if (start < p->start_ns)
		start = p->start_ns;
	if (!end || end > p->end_ns)
		end = p->end_ns;
	return end > start ? end - start : 0;
}

/* the summary slot of a thread, added if the process table does not know it */
static struct bp_thread_summary *thr_slot(struct bp_proc_summary *ps, uint32_t tid,
					  uint32_t *hint)
{
	uint32_t i;

	if (*hint < ps->nr_thr && ps->thr[*hint].tid == tid)
		return &ps->thr[*hint];
	for (i = 0; i < ps->nr_thr; i++) {
		if (ps->thr[i].tid == tid) {
			*hint = i;
			return &ps->thr[i];
		}
	}
	return NULL;
}

/* lines grouped by function, each function's by self desc */
static int cmp_line_func(const void *a, const void *b, void *ctx)
{
	const uint32_t *func = ctx;
	const struct bp_hotspot *x = a, *y = b;

	if (func[x->frame] != func[y->frame])
		return func[x->frame] < func[y->frame] ? -1 : 1;
	return cmp_hot_self(a, b);
}

static int cmp_func_self(const void *a, const void *b)
{
	const struct bp_func_hot *x = a, *y = b;

	if (x->self != y->self)
		return cmp_u64_desc(x->self, y->self);
	if (x->total != y->total)
		return cmp_u64_desc(x->total, y->total);
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static void bp_func_hots_free(struct bp_func_hot *fh, uint32_t n)
{
	uint32_t i;

	for (i = 0; fh && i < n; i++)
		free(fh[i].lines);
	free(fh);
}

/*
 * The functions of the lines in all (sorted here by function): a
 * function's self time is its lines' (a stack has one leaf), its total
 * what the sample pass counted once per stack.
 */
static int func_hotspots(struct acc *a, struct bp_hotspot *all, uint32_t n, uint64_t samples,
			 uint32_t max_hot, struct bp_proc_summary *ps)
{
	struct bp_func_hot *fh;
	uint32_t i, j, nr = 0, keep;

	fh = calloc(n ? n : 1, sizeof(*fh));
	if (!fh)
		return -ENOMEM;
	qsort_r(all, n, sizeof(*all), cmp_line_func, a->func);
	for (i = 0; i < n; i = j) {
		uint32_t fid = a->func[all[i].frame], lines = 0;
		struct bp_func_hot *h = &fh[nr++];

		for (j = i; j < n && a->func[all[j].frame] == fid; j++) {
			h->self += all[j].self;
			if (all[j].self)
				lines++;
		}
		h->frame = fid;
		h->total = a->ftotal[fid];
		a->ftotal[fid] = 0;
		h->self_frac = samples ? (double)h->self / samples : 0;
		h->total_frac = samples ? (double)h->total / samples : 0;
		if (lines > max_hot)
			lines = max_hot;
		h->lines = calloc(lines ? lines : 1, sizeof(*h->lines));
		if (!h->lines) {
			bp_func_hots_free(fh, nr);
			return -ENOMEM;
		}
		memcpy(h->lines, all + i, lines * sizeof(*all));
		h->nr_lines = lines;
	}
	qsort(fh, nr, sizeof(*fh), cmp_func_self);
	for (keep = 0; keep < nr && keep < max_hot && fh[keep].self; keep++)
		;
	for (i = keep; i < nr; i++)
		free(fh[i].lines);
	ps->funcs = fh;
	ps->nr_funcs = keep;
	return 0;
}

static int hotspots(const struct bp_profile *p, struct acc *a, uint64_t samples, uint32_t max_hot,
		    struct bp_proc_summary *ps)
{
	struct bp_hotspot *all;
	uint32_t i, nr;
	int err;

	all = calloc(a->nr_touched ? a->nr_touched : 1, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (i = 0; i < a->nr_touched; i++) {
		uint32_t f = a->touched[i];

		all[i].frame = f;
		all[i].self = a->self[f];
		all[i].total = a->total[f];
		all[i].self_frac = samples ? (double)a->self[f] / samples : 0;
		all[i].total_frac = samples ? (double)a->total[f] / samples : 0;
		a->self[f] = a->total[f] = 0;
	}
	nr = a->nr_touched < max_hot ? a->nr_touched : max_hot;
	ps->hot = calloc(nr ? nr : 1, sizeof(*ps->hot));
	ps->incl = calloc(nr ? nr : 1, sizeof(*ps->incl));
	if (!ps->hot || !ps->incl) {
		free(all);
		return -ENOMEM;
	}
	qsort(all, a->nr_touched, sizeof(*all), cmp_hot_self);
	for (i = 0; i < nr && all[i].self; i++)
		ps->hot[i] = all[i];
	ps->nr_hot = i;
	qsort(all, a->nr_touched, sizeof(*all), cmp_hot_total);
	memcpy(ps->incl, all, nr * sizeof(*all));
	ps->nr_incl = nr;
	err = func_hotspots(a, all, a->nr_touched, samples, max_hot, ps);
	free(all);
	return err;
}

static int summarize_proc(const struct bp_profile *p, const struct bp_proc *proc,
			  const uint32_t *idx, uint32_t n, uint32_t max_hot, struct acc *a,
			  struct bp_proc_summary *ps)
{
	uint64_t samples = 0, ns = 0, io_path = 0, fault = 0, kernel = 0;
	uint32_t i, j, nr, leaf, hint = 0;
	bool exact = p->offcpu_enabled;
	int k, err;

	ps->proc = proc;
	ps->thr = calloc(proc->nr_threads + 1, sizeof(*ps->thr));
	if (!ps->thr)
		return -ENOMEM;
	for (i = 0; i < proc->nr_threads; i++) {
		ps->thr[i].tid = proc->threads[i].tid;
		ps->thr[i].t = &proc->threads[i];
		a->thr_ns[i] = 0;
		if (!proc->threads[i].have_totals)
			exact = false;
	}
	ps->nr_thr = proc->nr_threads;

	a->nr_touched = 0;
	for (i = 0; i < n; i++) {
		const struct bp_sample *s = &p->samples[idx[i]];
		struct bp_thread_summary *ts = thr_slot(ps, s->tid, &hint);
		const uint32_t *fr;

		if (s->kind != BP_KIND_ONCPU) {
			if (s->kind < BP_KIND__MAX) {
				ps->off_s[s->kind] += s->ns / 1e9;
				ps->off_events[s->kind] += s->count;
				if (ts)
					ts->off_s[s->kind] += s->ns / 1e9;
			}
			continue;
		}
		samples += s->count;
		ns += s->ns;
		if (ts)
			a->thr_ns[ts - ps->thr] += s->ns;
		/*
		 * No count, no hotspot (a foreign profile's zeros and negative diffs):
		 * and a frame it left at 0 would be listed as touched once per sample.
		 */
		if (!s->count)
			continue;
		fr = bp_profile__stack_frames(p, s->stack, &nr);
		a->stamp++;
		/*
		 * Hotspots are functions at a line of their own code: a function
		 * inlined into one (an iterator's next) is charged to the line
		 * of the function it was inlined into, where the call is.
		 */
		leaf = leaf_of(p, fr, nr);
		for (j = 0; j < nr; j++) {
			uint32_t f = fr[j];

			if (p->frames[f].inlined)
				continue;
			if (!a->self[f] && !a->total[f])
				a->touched[a->nr_touched++] = f;
			if (a->mark[f] != a->stamp) {
				a->mark[f] = a->stamp;
				a->total[f] += s->count;
			}
			if (a->fmark[a->func[f]] != a->stamp) {
				a->fmark[a->func[f]] = a->stamp;
				a->ftotal[a->func[f]] += s->count;
			}
		}
		if (nr) {
			int o = innermost_owned(p, a, fr, leaf);

			a->self[fr[leaf - 1]] += s->count;
			if (o >= 0)
				a->own[a->func[fr[o]]] += s->count;
		}
		/* the innermost kernel frame with a role says what the CPU did */
		if (nr && p->frames[fr[nr - 1]].kernel) {
			uint8_t cat = CAT_NONE;

			for (j = nr; j-- > 0 && p->frames[fr[j]].kernel && !cat;)
				cat = a->cat[fr[j]];
			if (cat == CAT_FAULT)
				fault += s->count;
			else if (cat == CAT_IO)
				io_path += s->count;
			else
				kernel += s->count;
		}
	}
	ps->samples = samples;
	if (samples) {
		ps->frac_io_path = (double)io_path / samples;
		ps->frac_fault = (double)fault / samples;
		ps->frac_kernel = (double)kernel / samples;
	}
	ps->on_cpu_sampled_s = bp_oncpu_seconds(p, samples, ns);
	ps->wall_s = bp_profile__proc_wall_ns(p, proc) / 1e9;

	/* threads: exact on-CPU time when every thread was tracked */
	ps->on_cpu_s = exact ? 0 : ps->on_cpu_sampled_s;
	for (i = 0; i < ps->nr_thr; i++) {
		struct bp_thread_summary *ts = &ps->thr[i];
		const struct bp_thread *t = ts->t;

		if (exact) {
			ts->on_cpu_s = t->oncpu_ns / 1e9;
			ts->steal_s = t->steal_ns / 1e9;
			ps->on_cpu_s += ts->on_cpu_s;
			ps->steal_s += ts->steal_s;
		} else {
			ts->on_cpu_s = p->pmu ? 0 : a->thr_ns[i] / 1e9;
		}
		ts->wall_s = t->have_totals ? clip_wall(p, t->start_ns, t->end_ns) / 1e9 : ps->wall_s;
		ts->accounted_s = ts->on_cpu_s;
		for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++)
			ts->accounted_s += ts->off_s[k];
		ts->gil_s = t->gil_ns / 1e9;
		ps->gil_s += ts->gil_s;
		if (t->have_totals) {
			ps->wakeups += t->wakeups;
			ps->wake_lat_s += t->wake_lat_ns / 1e9;
			if (t->wake_lat_max / 1e9 > ps->wake_max_s)
				ps->wake_max_s = t->wake_lat_max / 1e9;
			for (j = 0; j < BP_HIST_SLOTS; j++)
				ps->wake_hist[j] += t->wake_hist[j];
		}
	}
	qsort(ps->thr, ps->nr_thr, sizeof(*ps->thr), cmp_thr);
	ps->threads = ps->nr_thr;

	/*
	 * Network waits by side: a client's waits are the work's cost, a
	 * server's (accepting, or reading the next request) wait for work.
	 * The rows by side are the off-CPU rows, but off_s[NET] is what of
	 * them fell in the process's lifetime and the window: the server's
	 * part is taken as a share of the rows, never more than off_s[NET]
	 * (a wait a few us past the window once zeroed a server's 3 s). A
	 * profile that lacks them (an older save) counts all as work.
	 */
	{
		double side = 0;

		for (k = 0; k < BP_SIDE__MAX; k++)
			side += proc->net_side_ns[k] / 1e9;
		ps->net_idle_s = side <= 0 ? 0 :
			ps->off_s[BP_KIND_NET] * ((proc->net_side_ns[BP_SIDE_SERVER] +
						  proc->net_side_ns[BP_SIDE_LISTEN]) / 1e9 / side);
		ps->net_work_s = ps->off_s[BP_KIND_NET] - ps->net_idle_s;
		ps->pipe_in_s = proc->pipe_dir_ns[BP_DIR_IN] / 1e9;
		ps->pipe_out_s = proc->pipe_dir_ns[BP_DIR_OUT] / 1e9;
	}
	for (i = 0; i < proc->nr_threads; i++) {
		ps->rchar += proc->threads[i].rchar;
		ps->wchar += proc->threads[i].wchar;
		ps->syscr += proc->threads[i].syscr;
		ps->syscw += proc->threads[i].syscw;
	}
	if (samples) {
		uint64_t sys = proc->sys_other;

		for (k = 0; k < BP_SYS_TOP; k++)
			sys += proc->sys_samples[k];
		ps->frac_syscall = (double)(sys < samples ? sys : samples) / samples;
	}

	ps->have_timeline = proc->have_timeline;
	for (k = 0; k < BP_TS__MAX; k++)
		ps->tl_s[k] = proc->tl_ns[k] / 1e9;
	ps->tl_idle_s = proc->tl_idle_ns / 1e9;

	ps->active = samples > 0 ||
		     activity(ps) - ps->on_cpu_s >= 0.01 * ((p->end_ns - p->start_ns) / 1e9);
	own_code(p, idx, n, samples, a, ps);
	err = hotspots(p, a, samples, max_hot, ps);
	return err;
}

int bp_summarize(const struct bp_profile *p, uint32_t max_hot, struct bp_summary *out)
{
	const struct bp_stats *st = &p->stats;
	uint32_t *idx = NULL, i, start, max_thr = 1;
	uint8_t *done = NULL;
	struct acc a = {};
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->duration_s = p->end_ns > p->start_ns ? (p->end_ns - p->start_ns) / 1e9 : 0;
	out->samples = st->v[BP_STAT_SAMPLES];
	out->idle = st->v[BP_STAT_IDLE];
	out->counted = st->v[BP_STAT_COUNTED];
	out->lost_samples = bp_counters_sum(BP_CNT_LOST_SAMPLE, st, p->ucounts);
	out->lost_stacks = bp_counters_sum(BP_CNT_LOST_STACK, st, p->ucounts);
	/*
	 * Idle CPUs may send no cpu-clock samples at all (tickless idle), so the
	 * machine's own accounting is the better measure when we have it.
	 */
	if (p->machine_busy >= 0)
		out->busy_frac = p->machine_busy;
	else
		out->busy_frac = out->samples ? 1.0 - (double)out->idle / out->samples : 0;

	for (i = 0; i < p->nr_procs; i++)
		if (p->procs[i]->nr_threads >= max_thr)
			max_thr = p->procs[i]->nr_threads + 1;
	idx = malloc((p->nr_samples ? p->nr_samples : 1) * sizeof(*idx));
	done = calloc(p->nr_procs + 1, 1);
	a.self = calloc(p->nr_frames + 1, sizeof(*a.self));
	a.total = calloc(p->nr_frames + 1, sizeof(*a.total));
	a.mark = calloc(p->nr_frames + 1, sizeof(*a.mark));
	a.touched = calloc(p->nr_frames + 1, sizeof(*a.touched));
	a.thr_ns = calloc(max_thr, sizeof(*a.thr_ns));
	a.cat = calloc(p->nr_frames + 1, sizeof(*a.cat));
	a.owned = calloc(p->nr_frames + 1, sizeof(*a.owned));
	a.own = calloc(p->nr_frames + 1, sizeof(*a.own));
	a.callee = calloc(p->nr_frames + 1, sizeof(*a.callee));
	a.func = calloc(p->nr_frames + 1, sizeof(*a.func));
	a.ftotal = calloc(p->nr_frames + 1, sizeof(*a.ftotal));
	a.fmark = calloc(p->nr_frames + 1, sizeof(*a.fmark));
	out->procs = calloc(p->nr_procs + 1, sizeof(*out->procs));
	if (!idx || !done || !a.self || !a.total || !a.mark || !a.touched || !a.thr_ns ||
	    !a.cat || !a.owned || !a.own || !a.callee || !a.func ||
	    !a.ftotal || !a.fmark ||
	    !out->procs || bp_func_ids(p, a.func))
		goto out;
	for (i = 0; i < p->nr_frames; i++) {
		a.cat[i] = frame_category(&p->frames[i]);
		a.owned[i] = bp_frame_owned(&p->frames[i]);
	}
	for (i = 0; i < p->nr_samples; i++)
		idx[i] = i;
	if (p->nr_samples)
		qsort_r(idx, p->nr_samples, sizeof(*idx), cmp_sample_idx, p->samples);

	/* processes with samples, one run of sample indices each */
	for (start = 0; start < p->nr_samples;) {
		uint32_t end = start, pid = p->samples[idx[start]].pid;
		const struct bp_proc *proc = bp_profile__proc((struct bp_profile *)p, pid, false);

		while (end < p->nr_samples && p->samples[idx[end]].pid == pid)
			end++;
		if (proc) {
			err = summarize_proc(p, proc, idx + start, end - start, max_hot, &a,
					     &out->procs[out->nr_procs]);
			out->nr_procs++;
			if (err)
				goto out;
		}
		start = end;
	}
	/*
	 * processes only known from their thread totals (asleep the whole time):
	 * those without a sample, found in the samples sorted by pid (a pass over
	 * all processes for each summarized one was quadratic)
	 */
	for (i = 0; i < p->nr_procs; i++)
		done[i] = has_samples(p, idx, p->procs[i]->pid);
	for (i = 0; i < p->nr_procs; i++) {
		if (done[i] || (!p->procs[i]->nr_threads && !p->procs[i]->have_timeline))
			continue;
		err = summarize_proc(p, p->procs[i], NULL, 0, max_hot, &a,
				     &out->procs[out->nr_procs]);
		out->nr_procs++;
		if (err)
			goto out;
	}
	qsort(out->procs, out->nr_procs, sizeof(*out->procs), cmp_proc);
	out->waits = calloc(1, sizeof(*out->waits));
	if (!out->waits)
		goto out;
	err = bp_pipelines_find(p, out, out->waits);
out:
	free(idx);
	free(done);
	free(a.self);
	free(a.total);
	free(a.mark);
	free(a.touched);
	free(a.thr_ns);
	free(a.cat);
	free(a.owned);
	free(a.own);
	free(a.callee);
	free(a.func);
	free(a.ftotal);
	free(a.fmark);
	if (err)
		bp_summary_free(out);
	return err;
}

void bp_summary_free(struct bp_summary *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_procs; i++) {
		free(s->procs[i].hot);
		free(s->procs[i].incl);
		bp_func_hots_free(s->procs[i].funcs, s->procs[i].nr_funcs);
		free(s->procs[i].thr);
		bp_verdict_free(s->procs[i].verdict);
		free(s->procs[i].verdict);
	}
	free(s->procs);
	bp_pipelines_free(s->waits);
	free(s->waits);
	bp_jobs_free(s->jobs);
	free(s->jobs);
	bp_chains_free(s->chains);
	free(s->chains);
	bp_verdict_free(&s->overall);
	memset(s, 0, sizeof(*s));
}
