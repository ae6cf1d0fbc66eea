// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hist.h"
#include "proc/pmu.h"
#include "analyze/python.h"
#include "analyze/verdict.h"

/* the process's block IO and the device it used most */
static void io_evidence(const struct bp_profile *p, uint32_t pid, struct bp_evidence *e)
{
	uint64_t hist[BP_HIST_SLOTS] = {}, ops = 0, reads = 0, rbytes = 0, writes = 0, wbytes = 0;
	uint32_t i, top_dev = 0;
	uint64_t top_ops = 0;
	double window = p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) : 0;

	for (i = 0; i < p->nr_io_rows; i++) {
		const struct bp_io_row *r = &p->io_rows[i];
		uint64_t dev_ops = 0;
		uint32_t j;

		if (r->kthread || (pid && r->pid != pid))
			continue;
		ops += r->st.ops;
		if (r->op == BP_IO_READ) {
			reads += r->st.ops;
			rbytes += r->st.bytes;
		} else if (r->op == BP_IO_WRITE) {
			writes += r->st.ops;
			wbytes += r->st.bytes;
		} else {
			e->io_flushes += r->st.ops;
		}
		bp_hist_merge(hist, r->st.hist);
		for (j = 0; j < p->nr_io_rows; j++)
			if (p->io_rows[j].dev == r->dev && !p->io_rows[j].kthread &&
			    (!pid || p->io_rows[j].pid == pid))
				dev_ops += p->io_rows[j].st.ops;
		if (dev_ops > top_ops) {
			top_ops = dev_ops;
			top_dev = r->dev;
		}
	}
	if (!ops)
		return;
	e->io_valid = true;
	e->io_ops = ops;
	/* the typical request of the dominant direction, as the IO report says it */
	e->io_reads = reads >= writes;
	if (e->io_reads && reads)
		e->io_req_kib = rbytes / 1024.0 / reads;
	else if (writes)
		e->io_req_kib = wbytes / 1024.0 / writes;
	e->io_p50_ms = bp_hist_quantile(hist, 0.5) / 1e3;
	e->io_p99_ms = bp_hist_quantile(hist, 0.99) / 1e3;
	for (i = 0; i < p->nr_io_devs; i++) {
		const struct bp_io_dev *d = &p->io_devs[i];
		uint64_t lat = 0;
		int k;

		if (d->dev != top_dev)
			continue;
		for (k = 0; k < BP_IO_OP__MAX; k++)
			lat += d->op[k].lat_ns;
		e->io_dev = d->name;
		e->dev_busy = window > 0 ? d->busy_ns / window : 0;
		e->dev_inflight = window > 0 ? lat / window : 0;
	}
	if (!e->io_dev)
		e->io_valid = false;
}

static void mem_evidence(const struct bp_profile *p, const struct bp_proc *proc,
			 struct bp_evidence *e)
{
	e->llc_bytes = p->llc_bytes;
	e->llc_source = p->llc_source;
	if (proc->mem_valid) {
		e->mem_valid = true;
		e->wss_probes = proc->wss_probes;
		e->wss_max = proc->wss_max;
		e->wss_per_s = proc->wss_per_s;
		e->rss = proc->rss;
		if (proc->fault_window_s > 0) {
			e->minflt_per_s = proc->minflt / proc->fault_window_s;
			e->majflt_per_s = proc->majflt / proc->fault_window_s;
		}
	}
	if (proc->pmu_valid) {
		struct bp_pmu_counts c = {
			.cycles = proc->cycles,
			.instructions = proc->instructions,
			.cache_misses = proc->cache_misses,
			.valid = true,
		};
		struct bp_pmu_metrics m;

		bp_pmu_metrics(&c, proc->pmu_seconds, &m);
		e->pmu_valid = true;
		e->ipc = m.ipc;
		e->mpki = m.mpki;
		e->dram_gbs = m.dram_gbs;
		e->pmu_running = proc->pmu_running;
	}
}

/* CPU seconds the machine spent on anything but mine (busy samples, all CPUs) */
static double others_cpu(const struct bp_profile *p, const struct bp_summary *s, double mine)
{
	double busy = s->busy_frac * p->ncpus * s->duration_s - mine;

	return busy > 0 ? busy : 0;
}

/*
 * A Python process: the hot spot is the Python function (and line) its time
 * is under, with the compiled code it calls; the GIL waits of its threads.
 */
static void python_evidence(const struct bp_profile *p, const struct bp_proc_summary *ps,
			    struct bp_evidence *e, char *hot, size_t hot_len)
{
	const struct bp_thread_summary *top[3];
	struct bp_python_hot h;
	char lbl[160];
	size_t n = 0;
	uint32_t i, shown = 0;

	if (!ps->proc->python)
		return;
	e->python = ps->proc->python;
	e->python_free_threaded = ps->proc->python_free_threaded;
	e->gil_s = ps->gil_s;
	/* the threads that waited most, by their share (ps->thr is by on-CPU time) */
	for (i = 0; i < ps->nr_thr; i++) {
		const struct bp_thread_summary *t = &ps->thr[i];
		uint32_t j;

		if (t->gil_s <= 0 || t->wall_s <= 0)
			continue;
		for (j = shown < 3 ? shown++ : 3; j > 0 && top[j - 1]->gil_s / top[j - 1]->wall_s <
							    t->gil_s / t->wall_s; j--)
			if (j < 3)
				top[j] = top[j - 1];
		if (j < 3)
			top[j] = t;
	}
	for (i = 0; i < shown; i++) {
		int w = snprintf(e->gil_threads + n, sizeof(e->gil_threads) - n, "%stid %u %.0f%%",
				 n ? ", " : "", top[i]->tid, 100 * top[i]->gil_s / top[i]->wall_s);

		if (w < 0 || (size_t)w >= sizeof(e->gil_threads) - n)
			break;
		n += w;
	}
	if (bp_python_hot(p, ps->proc->pid, &h) || !hot_len)
		return;
	bp_frame_label(&p->frames[h.frame], false, hot, hot_len);
	e->hot_name = hot;
	e->hot_frac = h.frac;
	e->py_hot = true;
	e->py_native = h.native;
	if (h.native > 0) {
		const struct bp_frame *f = &p->frames[h.native_frame];

		bp_frame_label(f, false, lbl, sizeof(lbl));
		snprintf(e->py_native_name, sizeof(e->py_native_name), "%s in %s", lbl, f->module);
	}
}

void bp_proc_evidence(const struct bp_profile *p, const struct bp_summary *s,
		      const struct bp_proc_summary *ps, struct bp_evidence *e, char *hot,
		      size_t hot_len)
{
	const struct bp_proc *proc = ps->proc;
	double tl = ps->tl_idle_s;
	int k;

	memset(e, 0, sizeof(*e));
	e->who = proc->comm;
	e->have_timeline = ps->have_timeline;
	for (k = 0; k < BP_TS__MAX; k++) {
		e->tl_s[k] = ps->tl_s[k];
		tl += ps->tl_s[k];
	}
	e->tl_idle_s = ps->tl_idle_s;
	/* the timeline covers exactly the time the process was tracked */
	e->wall_s = ps->have_timeline && tl > 0 ? tl : ps->wall_s;
	e->on_s = ps->on_cpu_s;
	e->rq_s = ps->off_s[BP_KIND_RUNQUEUE];
	e->io_s = ps->off_s[BP_KIND_IO];
	e->lock_s = ps->off_s[BP_KIND_LOCK];
	e->other_s = ps->off_s[BP_KIND_OTHER];
	e->sleep_s = ps->off_s[BP_KIND_SLEEP];
	e->threads = ps->threads ? ps->threads : 1;
	e->ncpus = p->ncpus;
	e->machine_busy = s->busy_frac;
	e->others_cpu_s = others_cpu(p, s, ps->on_cpu_s);
	e->samples = ps->samples;
	e->frac_io_path = ps->frac_io_path;
	e->frac_fault = ps->frac_fault;
	e->frac_kernel = ps->frac_kernel;
	mem_evidence(p, proc, e);
	io_evidence(p, proc->pid, e);
	if (ps->nr_hot && hot_len) {
		bp_frame_label(&p->frames[ps->hot[0].frame], false, hot, hot_len);
		e->hot_name = hot;
		e->hot_frac = ps->hot[0].self_frac;
	}
	python_evidence(p, ps, e, hot, hot_len);
}

/* the whole recording as one workload */
static void overall_evidence(const struct bp_profile *p, const struct bp_summary *s,
			     struct bp_evidence *e, char *hot, size_t hot_len)
{
	const struct bp_proc_summary *top = NULL;
	double io = 0, fault = 0, kern = 0;
	uint32_t i;

	memset(e, 0, sizeof(*e));
	e->who = "the recording";
	e->wall_s = s->duration_s;
	e->ncpus = p->ncpus;
	e->machine_busy = s->busy_frac;
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];

		if (p->system_wide && !ps->active)
			continue;
		e->on_s += ps->on_cpu_s;
		e->rq_s += ps->off_s[BP_KIND_RUNQUEUE];
		e->io_s += ps->off_s[BP_KIND_IO];
		e->lock_s += ps->off_s[BP_KIND_LOCK];
		e->other_s += ps->off_s[BP_KIND_OTHER];
		e->sleep_s += ps->off_s[BP_KIND_SLEEP];
		e->threads += ps->threads;
		e->samples += ps->samples;
		e->gil_s += ps->gil_s;
		io += ps->frac_io_path * ps->samples;
		fault += ps->frac_fault * ps->samples;
		kern += ps->frac_kernel * ps->samples;
		if (!top || ps->on_cpu_s > top->on_cpu_s)
			top = ps;
	}
	if (e->samples) {
		e->frac_io_path = io / e->samples;
		e->frac_fault = fault / e->samples;
		e->frac_kernel = kern / e->samples;
	}
	e->others_cpu_s = others_cpu(p, s, e->on_s);
	if (!e->threads)
		e->threads = 1;
	io_evidence(p, 0, e);
	if (top) {
		mem_evidence(p, top->proc, e);
		/* a command's counters cover its whole tree and sit on its root */
		for (i = 0; !e->pmu_valid && i < s->nr_procs; i++)
			if (s->procs[i].proc && s->procs[i].proc->pmu_valid)
				mem_evidence(p, s->procs[i].proc, e);
		if (top->nr_hot && hot_len && top->on_cpu_s > 0) {
			bp_frame_label(&p->frames[top->hot[0].frame], false, hot, hot_len);
			e->hot_name = hot;
			/* its share of all the on-CPU time recorded */
			e->hot_frac = top->hot[0].self_frac * top->on_cpu_s / (e->on_s > 0 ? e->on_s : 1);
		}
		/* the busiest process's Python, when it is one; the GIL waits of all */
		if (top->proc->python) {
			double gil = e->gil_s;

			python_evidence(p, top, e, hot, hot_len);
			e->gil_s = gil;
			e->gil_threads[0] = '\0';
			if (e->py_hot && top->on_cpu_s > 0)
				e->hot_frac *= top->on_cpu_s / (e->on_s > 0 ? e->on_s : 1);
		}
	}
}

int bp_verdicts(const struct bp_profile *p, struct bp_summary *s)
{
	struct bp_evidence e;
	char hot[256];
	uint32_t i;

	memset(s->class_count, 0, sizeof(s->class_count));
	for (i = 0; i < s->nr_procs; i++) {
		struct bp_proc_summary *ps = &s->procs[i];

		if (!ps->proc || (p->system_wide && !ps->active))
			continue;
		if (!ps->verdict) {
			ps->verdict = calloc(1, sizeof(*ps->verdict));
			if (!ps->verdict)
				return -ENOMEM;
		}
		bp_proc_evidence(p, s, ps, &e, hot, sizeof(hot));
		bp_verdict_free(ps->verdict);
		bp_classify(&e, NULL, ps->verdict);
		s->class_count[ps->verdict->cls]++;
	}
	overall_evidence(p, s, &e, hot, sizeof(hot));
	if (s->have_overall)
		bp_verdict_free(&s->overall);
	bp_classify(&e, NULL, &s->overall);
	s->have_overall = true;
	return 0;
}
