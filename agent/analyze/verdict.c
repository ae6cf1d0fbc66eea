// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hist.h"
#include "proc/pmu.h"
#include "analyze/pipeline.h"
#include "analyze/chain.h"
#include "analyze/groups.h"
#include "analyze/interp.h"
#include "analyze/jobs.h"
#include "analyze/owned.h"
#include "analyze/python.h"
#include "analyze/turns.h"
#include "analyze/rlang.h"
#include "analyze/verdict.h"
#include "model/waits.h"

struct one_pid {
	uint32_t pid;
};

static bool is_pid(uint32_t pid, const void *ctx)
{
	return pid == ((const struct one_pid *)ctx)->pid;
}

/* the process's block IO and the device it used most (pid 0: everyone's) */
static void io_evidence(const struct bp_profile *p, uint32_t pid, struct bp_evidence *e)
{
	struct one_pid one = { pid };

	bp_io_evidence(p, pid ? is_pid : NULL, &one, e);
}

void bp_io_evidence(const struct bp_profile *p, bool (*in)(uint32_t pid, const void *ctx),
		    const void *ctx, struct bp_evidence *e)
{
	uint64_t hist[BP_HIST_SLOTS] = {}, ops = 0, reads = 0, rbytes = 0, writes = 0, wbytes = 0;
	uint32_t i, top_dev = 0;
	uint64_t top_ops = 0;
	double window = p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) : 0;

	for (i = 0; i < p->nr_io_rows; i++) {
		const struct bp_io_row *r = &p->io_rows[i];
		uint64_t dev_ops = 0;
		uint32_t j;

		if (r->kthread || (in && !in(r->pid, ctx)))
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
			    (!in || in(p->io_rows[j].pid, ctx)))
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
	bp_mem_evidence(p, proc, e);
}

void bp_mem_evidence(const struct bp_profile *p, const struct bp_proc *proc,
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
	if (proc->traffic_valid) {
		e->traffic_valid = true;
		e->traffic_floor = proc->traffic_floor;
		e->traffic_per_s = proc->traffic_per_s;
		e->traffic_per_cpu_s = proc->traffic_per_cpu_s;
		e->traffic_cpus = proc->traffic_cpus;
	}
	if (p->membw_valid) {
		e->membw_valid = true;
		e->membw_1_gbs = p->membw_1_gbs;
		e->membw_n_gbs = p->membw_n_gbs;
		e->membw_threads = p->membw_threads;
		e->membw_source = p->membw_source;
		e->membw_cache_bytes = p->membw_cache_bytes;
		/* a window that could not be opened measured no traffic either */
		e->window_cal = p->membw_window && !p->membw_window_err;
		e->window_stream_gbs = p->membw_window_stream_gbs;
		e->window_seen_gbs = p->membw_window_seen_gbs;
		e->window_visible = p->membw_window_visible;
		e->window_floor = p->membw_window_floor;
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

/* what a process waited on: its pipe neighbour, its network peers, its pipeline */
static void wait_evidence(const struct bp_summary *s, const struct bp_proc_summary *ps,
			  struct bp_evidence *e)
{
	const struct bp_pipelines *pl = s->waits;
	const struct bp_proc_waits *w;
	const struct bp_pipeline *pipe;
	uint32_t i, k = ps - s->procs, stage;

	e->net_s = ps->net_work_s;
	e->net_idle_s = ps->net_idle_s;
	e->pipe_s = ps->off_s[BP_KIND_PIPE];
	e->peer_dir = ps->pipe_out_s > ps->pipe_in_s ? BP_DIR_OUT : BP_DIR_IN;
	if (!pl || k >= pl->nr_waits)
		return;
	w = &pl->waits[k];
	e->peer_pid = w->pipe_peer[e->peer_dir];
	e->peer_comm = w->pipe_peer_comm[e->peer_dir];
	/* a poll on a Unix socket has no direction: the peer that ended it all the same */
	if (!e->peer_pid) {
		e->peer_pid = w->pipe_peer[BP_DIR_NONE];
		e->peer_comm = w->pipe_peer_comm[BP_DIR_NONE];
	}
	for (i = 0; i < w->nr_peers; i++) {
		if (w->peers[i].side != BP_SIDE_CLIENT && w->peers[i].side != BP_SIDE_UNKNOWN)
			continue;
		if (!e->net_peer)
			e->net_peer = w->peers[i].name;
		e->net_peers++;
	}
	e->net_waits = w->net_waits;
	e->net_wait_s = w->net_wait_s;
	e->net_p50_ms = w->net_p50_ms;
	e->net_p99_ms = w->net_p99_ms;
	e->net_rx = w->net_rx;
	e->net_tx = w->net_tx;
	pipe = bp_pipeline_of(pl, ps->proc->pid, &stage);
	if (pipe) {
		e->pipeline = pipe->name;
		e->bottleneck = stage == pipe->bottleneck;
		/* its neighbour in the pipeline, the way it waited more */
		if (e->peer_dir == BP_DIR_IN && stage > 0)
			i = pipe->stages[stage - 1].proc;
		else if (e->peer_dir == BP_DIR_OUT && stage + 1 < pipe->nr_stages)
			i = pipe->stages[stage + 1].proc;
		else
			i = s->nr_procs;
		if (i < s->nr_procs) {
			e->peer_pid = s->procs[i].proc->pid;
			e->peer_comm = s->procs[i].proc->comm;
		}
	}
}

/*
 * Advice names code its reader can change: when the hottest leaf is a
 * building block (libc, libm, the kernel), the user's innermost function
 * above it on most samples takes its place in the Amdahl lines, and the
 * building block becomes the reason. Self time stays with the leaf in the
 * hotspot list; only the advice moves.
 */
void bp_own_evidence(const struct bp_profile *p, const struct bp_proc_summary *ps,
		     struct bp_evidence *e, char *hot, size_t hot_len)
{
	const struct bp_frame *leaf, *callee;

	if (!ps->nr_funcs || !hot_len)
		return;
	leaf = &p->frames[ps->funcs[0].frame];
	if (!leaf->name)
		e->hot_unnamed = leaf->module;
	if (bp_frame_owned(leaf))
		return;
	if (!ps->have_own) {
		/* an address nobody can name is no building block either */
		e->hot_foreign = bp_frame_foreign(leaf);
		e->hot_module = leaf->module;
		return;
	}
	/* a function, all its lines together: no line to name */
	bp_func_label(&p->frames[ps->own_frame], hot, hot_len);
	e->hot_unnamed = p->frames[ps->own_frame].name ? NULL : p->frames[ps->own_frame].module;
	e->hot_name = hot;
	e->hot_frac = ps->own_frac;
	e->hot_own = true;
	e->own_beneath = ps->own_beneath;
	e->own_kernel = ps->own_kernel;
	if (ps->own_beneath > 0) {
		callee = &p->frames[ps->own_callee];
		if (callee->name)
			e->own_callee = bp_short_name(callee->name, callee->module, e->own_callee_buf,
						      sizeof(e->own_callee_buf));
		else
			e->own_callee = bp_func_label(callee, e->own_callee_buf,
						      sizeof(e->own_callee_buf));
		e->own_callee_unnamed = callee->name ? NULL : callee->module;
		e->own_callee_module = callee->module;
		e->own_callee_kernel = callee->kernel;
		e->own_callee_frac = ps->own_callee_frac;
	}
}

/*
 * The hot code is an interpreter's that boundprof does not walk (Perl_pp_sin,
 * vm_exec_core, node's unnamed JIT code): the verdict says whose it is and
 * how to see the script's functions, and names no interpreter internals.
 * What it can still say is what the script calls that has a name (libm's
 * sin, libc's memcpy). Python is walked; the user's own code that can be
 * named (a perf map's JavaScript, a native extension) keeps the advice.
 */
static void interp_evidence(const struct bp_profile *p, const struct bp_proc_summary *ps,
			    struct bp_evidence *e)
{
	const struct bp_frame *first = &p->frames[ps->funcs[0].frame];
	const struct bp_interp *in = NULL;
	char names[3][64];
	size_t n = 0;
	uint32_t i, named = 0;

	if (ps->proc->python || ps->proc->r_version || bp_frame_owned(first))
		return;
	if (e->hot_own && !e->hot_unnamed)
		return;
	for (i = 0; i < ps->nr_funcs && !in; i++)
		in = bp_interp_of_module(p->frames[ps->funcs[i].frame].module);
	if (!in)
		in = bp_interp_of_module(ps->proc->comm);
	if (!in)
		return;
	e->interp = in;
	e->hot_name = NULL;
	e->hot_frac = 0;
	e->hot_own = e->hot_foreign = false;
	e->hot_unnamed = NULL;
	e->own_callee = NULL;
	if (!bp_interp_script(ps->proc->cmdline, e->interp_script, sizeof(e->interp_script)))
		e->interp_script[0] = 0;
	/* the building blocks the script calls, by the names readers know them by */
	for (i = 0; i < ps->nr_funcs && named < 3; i++) {
		const struct bp_func_hot *h = &ps->funcs[i];
		const struct bp_frame *f = &p->frames[h->frame];

		if (!f->name || f->kernel || h->self_frac < 0.02)
			continue;
		bp_short_name(f->name, f->module, names[named], sizeof(names[0]));
		/* a building block, or a runtime's own maths (Math.sin) */
		if (strncmp(names[named], "Math.", 5) &&
		    (bp_interp_of_module(f->module) || bp_interp_of_path(f->path) ||
		     !bp_frame_foreign(f)))
			continue;
		e->interp_calls_frac += h->self_frac;
		e->interp_calls_n = ++named;
	}
	for (i = 0; i < named; i++) {
		int w = snprintf(e->interp_calls + n, sizeof(e->interp_calls) - n, "%s%s()",
				 !i ? "" : i + 1 == named ? " and " : ", ", names[i]);

		if (w < 0 || (size_t)w >= sizeof(e->interp_calls) - n)
			break;
		n += w;
	}
}

/*
 * Its system calls: the calls most kernel samples served, from the saved
 * registers at sample time, and the read and write calls and bytes the
 * kernel's own task accounting counted (all of them, not sampled).
 */
static void sys_evidence(const struct bp_proc_summary *ps, struct bp_evidence *e)
{
	const struct bp_proc *proc = ps->proc;
	int k, i, j;

	e->frac_syscall = ps->frac_syscall;
	e->sys_valid = ps->syscr || ps->syscw;
	e->sys_reads = ps->syscr;
	e->sys_writes = ps->syscw;
	e->sys_rbytes = ps->rchar;
	e->sys_wbytes = ps->wchar;
	memset(e->sys_top, 0, sizeof(e->sys_top));
	memset(e->sys_top_frac, 0, sizeof(e->sys_top_frac));
	for (k = 0; ps->samples && k < BP_SYS_TOP; k++) {
		double f = (double)proc->sys_samples[k] / ps->samples;

		if (!proc->sys_nr[k] || f <= 0)
			continue;
		for (i = 0; i < 3 && e->sys_top_frac[i] >= f; i++)
			;
		if (i == 3)
			continue;
		for (j = 2; j > i; j--) {
			e->sys_top[j] = e->sys_top[j - 1];
			e->sys_top_frac[j] = e->sys_top_frac[j - 1];
		}
		e->sys_top[i] = proc->sys_nr[k] - 1;
		e->sys_top_frac[i] = f;
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

	if (ps->proc->r_version) {
		bp_r_evidence(p, ps, e, hot, hot_len);
		return;
	}
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
	bp_func_label(&p->frames[h.frame], hot, hot_len);
	e->hot_name = hot;
	e->hot_frac = h.frac;
	e->py_hot = true;
	e->hot_own = e->hot_foreign = false;
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
	e->steal_s = ps->steal_s;
	e->samples = ps->samples;
	e->frac_io_path = ps->frac_io_path;
	e->frac_fault = ps->frac_fault;
	e->frac_kernel = ps->frac_kernel;
	sys_evidence(ps, e);
	mem_evidence(p, proc, e);
	io_evidence(p, proc->pid, e);
	wait_evidence(s, ps, e);
	e->throttled_rq_s = ps->throttled_s;
	e->wakeups = ps->wakeups;
	e->wake_lat_s = ps->wake_lat_s;
	e->wake_p50_ms = bp_hist_quantile(ps->wake_hist, 0.5) / 1e3;
	e->wake_max_ms = ps->wake_max_s * 1e3;
	bp_cgroup_evidence(p, bp_proc_cpu_cgroup(p, proc), bp_proc_mem_cgroup(p, proc),
			   bp_proc_psi_cgroup(p, proc), e);
	bp_turns_evidence(p, proc->pid, e);
	/* a function, all its lines together: algorithms live in functions */
	if (ps->nr_funcs && hot_len) {
		bp_func_label(&p->frames[ps->funcs[0].frame], hot, hot_len);
		e->hot_name = hot;
		e->hot_frac = ps->funcs[0].self_frac;
		bp_own_evidence(p, ps, e, hot, hot_len);
		interp_evidence(p, ps, e);
	}
	python_evidence(p, ps, e, hot, hot_len);
}

/* the whole recording as one workload */
static void overall_evidence(const struct bp_profile *p, const struct bp_summary *s,
			     struct bp_evidence *e, char *hot, size_t hot_len)
{
	const struct bp_proc_summary *top = NULL;
	uint64_t wake_hist[BP_HIST_SLOTS] = {};
	double io = 0, fault = 0, kern = 0;
	uint32_t i;
	int k;

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
		e->steal_s += ps->steal_s;
		e->rq_s += ps->off_s[BP_KIND_RUNQUEUE];
		e->io_s += ps->off_s[BP_KIND_IO];
		e->lock_s += ps->off_s[BP_KIND_LOCK];
		e->other_s += ps->off_s[BP_KIND_OTHER];
		e->sleep_s += ps->off_s[BP_KIND_SLEEP];
		e->net_s += ps->net_work_s;
		e->net_idle_s += ps->net_idle_s;
		e->pipe_s += ps->off_s[BP_KIND_PIPE];
		e->throttled_rq_s += ps->throttled_s;
		e->wakeups += ps->wakeups;
		e->wake_lat_s += ps->wake_lat_s;
		if (ps->wake_max_s * 1e3 > e->wake_max_ms)
			e->wake_max_ms = ps->wake_max_s * 1e3;
		bp_hist_merge(wake_hist, ps->wake_hist);
		e->threads += ps->threads;
		/*
		 * The processes' timelines summed: their shares are of the
		 * processes' wall time together, as each process's are of its
		 * own, so that a one-process recording says what its process
		 * says (the caps of overlapping waits included).
		 */
		if (ps->have_timeline) {
			e->have_timeline = true;
			for (k = 0; k < BP_TS__MAX; k++) {
				e->tl_s[k] += ps->tl_s[k];
				e->tl_wall_s += ps->tl_s[k];
			}
			e->tl_idle_s += ps->tl_idle_s;
			e->tl_wall_s += ps->tl_idle_s;
		}
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
	e->wake_p50_ms = bp_hist_quantile(wake_hist, 0.5) / 1e3;
	if (!e->threads)
		e->threads = 1;
	io_evidence(p, 0, e);
	bp_turns_evidence(p, 0, e);
	if (top) {
		mem_evidence(p, top->proc, e);
		/* the busiest process's calls, their share of all the samples */
		if (top->samples && e->samples) {
			double f = (double)top->samples / e->samples;

			sys_evidence(top, e);
			e->frac_syscall *= f;
			for (k = 0; k < 3; k++)
				e->sys_top_frac[k] *= f;
		}
		/* the limits of the busiest process's cgroups stand for the recording's */
		bp_cgroup_evidence(p, bp_proc_cpu_cgroup(p, top->proc), bp_proc_mem_cgroup(p, top->proc),
				   bp_proc_psi_cgroup(p, top->proc), e);
		/* a command's counters cover its whole tree and sit on its root */
		for (i = 0; !e->pmu_valid && i < s->nr_procs; i++)
			if (s->procs[i].proc && s->procs[i].proc->pmu_valid)
				mem_evidence(p, s->procs[i].proc, e);
		if (top->nr_funcs && hot_len && top->on_cpu_s > 0) {
			bp_func_label(&p->frames[top->funcs[0].frame], hot, hot_len);
			e->hot_name = hot;
			e->hot_frac = top->funcs[0].self_frac;
			bp_own_evidence(p, top, e, hot, hot_len);
			interp_evidence(p, top, e);
			/* its share of all the on-CPU time recorded */
			e->hot_frac *= top->on_cpu_s / (e->on_s > 0 ? e->on_s : 1);
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

/* what a process did or waited on for its work: not sleep, nor a server's wait for work */
/*
 * A command's verdict is that of what held it back: the last process of its
 * critical path, led by the path (and the pipeline that process bounds).
 */
static bool critical_verdict(const struct bp_profile *p, struct bp_summary *s)
{
	const struct bp_pipelines *pl = s->waits;
	const struct bp_proc_summary *last = &s->procs[pl->crit[pl->nr_crit - 1]];
	const struct bp_pipeline *pipe;
	char lead[BP_VERDICT_LEN], name[64];
	size_t off = 0;
	uint32_t i, stage;

	if (!last->verdict)
		return false;
	/*
	 * A path that ends in a process that mostly waited for nothing in
	 * particular (a parent in wait4 whose only work was reading its own
	 * binary from a cold cache) says nothing of the command: the whole
	 * recording's evidence does.
	 */
	if (last->wall_s > 0 && bp_proc_activity(last) < 0.2 * last->wall_s)
		return false;
	/*
	 * A path of the command alone, while another process did more: the
	 * path stopped short (a parent that read its binary from a congested
	 * disk for 2 s, then waited 4 s for a child that computed).
	 */
	for (i = 0; pl->nr_crit == 1 && i < s->nr_procs; i++)
		if (&s->procs[i] != last && s->procs[i].proc &&
		    bp_proc_activity(&s->procs[i]) > bp_proc_activity(last))
			return false;
	pipe = bp_pipeline_of(pl, last->proc->pid, &stage);
	if (pipe && stage == pipe->bottleneck) {
		bp_stage_name(last->proc, name, sizeof(name));
		off = snprintf(lead, sizeof(lead), "%s: bound by %s (pid %u)", pipe->name, name,
			       last->proc->pid);
	} else if (pl->nr_crit > 1) {
		off = snprintf(lead, sizeof(lead), "what held the command back:");
		for (i = 0; i < pl->nr_crit && off < sizeof(lead); i++)
			off += snprintf(lead + off, sizeof(lead) - off, "%s %s (pid %u)",
					i ? " →" : "", s->procs[pl->crit[i]].proc->comm,
					s->procs[pl->crit[i]].proc->pid);
	}
	(void)p;
	return bp_verdict_lead(last->verdict, off ? lead : NULL, &s->overall) == 0;
}

int bp_verdicts(const struct bp_profile *p, struct bp_summary *s)
{
	struct bp_evidence e;
	char hot[256];
	uint32_t i;

	memset(s->class_count, 0, sizeof(s->class_count));
	bp_throttle_attribute(p, s);
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
	/* short runs of one program, judged together; their waiting parent with them */
	if (bp_jobs_build(p, s))
		return -ENOMEM;
	if (s->have_overall)
		bp_verdict_free(&s->overall);
	s->have_overall = true;
	/* a client and server judged as one chain, before the path follows the client */
	if (bp_chains_judge(p, s))
		return -ENOMEM;
	if (s->waits && bp_critical_path(p, s, s->waits))
		return -ENOMEM;
	if (bp_jobs_overall(p, s))
		return 0;
	if (s->waits && s->waits->nr_crit && critical_verdict(p, s))
		return 0;
	overall_evidence(p, s, &e, hot, sizeof(hot));
	bp_classify(&e, NULL, &s->overall);
	return 0;
}
