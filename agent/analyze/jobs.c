// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/groups.h"
#include "analyze/jobs.h"
#include "analyze/pipeline.h"
#include "analyze/verdict.h"
#include "model/hist.h"
#include "model/waits.h"

/* the program a process runs: argv[0]'s base name, else its comm */
static void prog_name(const struct bp_proc *proc, char *buf, size_t len)
{
	const char *c = proc->cmdline, *end, *base, *w;

	if (!c || !*c) {
		snprintf(buf, len, "%s", proc->comm[0] ? proc->comm : "?");
		return;
	}
	end = strchr(c, ' ');
	if (!end)
		end = c + strlen(c);
	for (base = w = c; w < end; w++)
		if (*w == '/')
			base = w + 1;
	/*
	 * A command line read between fork and exec is the parent's ("sh -c
	 * for i in ..." for a run of curl) and the exec's comm is right: seen
	 * on a cold cache, one run of 60 left out of its job. The comm holds
	 * the first 15 bytes of the executable's name.
	 */
	if (proc->comm[0] && strncmp(base, proc->comm, strnlen(proc->comm, sizeof(proc->comm)))) {
		snprintf(buf, len, "%s", proc->comm);
		return;
	}
	snprintf(buf, len, "%.*s", (int)(end - base), base);
}

struct cand {
	uint32_t idx;		/* summary index */
	uint32_t ppid;
	char name[64];
	uint64_t start;
	double wall;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int c;

	if (x->ppid != y->ppid)
		return x->ppid < y->ppid ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_job(const void *a, const void *b)
{
	const struct bp_job *x = a, *y = b;

	if (x->total_s != y->total_s)
		return x->total_s < y->total_s ? 1 : -1;
	return x->ppid < y->ppid ? -1 : x->ppid > y->ppid;
}

/* the wall time a process's timeline covers (what its shares are of), else its wall */
static double run_wall(const struct bp_proc_summary *ps)
{
	double tl = ps->tl_idle_s;
	int k;

	if (!ps->have_timeline)
		return ps->wall_s;
	for (k = 0; k < BP_TS__MAX; k++)
		tl += ps->tl_s[k];
	return tl > 0 ? tl : ps->wall_s;
}

/* pid -> job, sorted by pid */
struct pidjob {
	uint32_t pid;
	int32_t job;
};

static int cmp_pidjob(const void *a, const void *b)
{
	const struct pidjob *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int32_t pidjob_find(const struct pidjob *m, uint32_t n, uint32_t pid)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && m[lo].pid == pid ? m[lo].job : -1;
}

static bool in_job(uint32_t pid, const void *ctx)
{
	const struct pidjob *const *m = ctx;

	return pidjob_find(m[0], (uint32_t)(uintptr_t)m[1], pid) >= 0;
}

/*
 * Kernel functions that start or end a process. The dynamic loader is
 * found by its module (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1,
 * ld-musl-*.so.1), with whatever the kernel does beneath it (the page
 * faults and mmap calls of loading the libraries).
 */
static const char *const exec_funcs[] = {
	"bprm_execve", "do_execveat_common", "load_elf_binary", "begin_new_exec", "exec_binprm",
	"__x64_sys_execve", "__x64_sys_execveat", "exec_mmap", "setup_arg_pages",
};
static const char *const exit_funcs[] = {
	"do_exit", "do_group_exit", "__x64_sys_exit_group", "exit_mmap", "mmput",
};
static const char *const fork_funcs[] = {
	"kernel_clone", "copy_process", "dup_mm", "copy_page_range", "__x64_sys_clone",
	"__x64_sys_clone3", "__x64_sys_vfork", "__x64_sys_fork",
};

/* by precedence: a stack with frames of several counts as the first */
enum su_cat { SU_NONE = 0, SU_EXEC, SU_EXIT, SU_LOADER, SU_FORK };

static bool named(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (!strcmp(name, list[i]))
			return true;
	return false;
}

#define NAMED(f, list) named((f)->name, list, sizeof(list) / sizeof(list[0]))

static bool loader_module(const char *m)
{
	const char *b = m ? strrchr(m, '/') : NULL;

	b = b ? b + 1 : m;
	return b && !strncmp(b, "ld-", 3) && strstr(b, ".so");
}

/* the C library's teardown after main returns: exit handlers, destructors */
static const char *const exit_user_funcs[] = {
	"__run_exit_handlers", "_dl_fini", "__libc_atexit", "_IO_cleanup",
};

static uint8_t frame_cat(const struct bp_frame *f)
{
	/* ld.so's _dl_fini runs the destructors at exit: exit's, not loading's */
	if (!f->kernel && NAMED(f, exit_user_funcs))
		return SU_EXIT;
	if (!f->kernel)
		return loader_module(f->module) ? SU_LOADER : SU_NONE;
	if (NAMED(f, exec_funcs))
		return SU_EXEC;
	if (NAMED(f, exit_funcs))
		return SU_EXIT;
	if (NAMED(f, fork_funcs))
		return SU_FORK;
	return SU_NONE;
}

/* a stack's start-up category: exec first, then exit, the loader, fork */
static uint8_t stack_cat(const struct bp_profile *p, const uint8_t *cat, uint32_t stack)
{
	uint32_t nr, j;
	const uint32_t *fr = bp_profile__stack_frames(p, stack, &nr);
	uint8_t best = SU_NONE;

	for (j = 0; j < nr; j++) {
		uint8_t c = cat[fr[j]];

		if (c != SU_NONE && (best == SU_NONE || c < best))
			best = c;
	}
	return best;
}

static int startup(const struct bp_profile *p, const struct bp_summary *s, struct bp_jobs *js,
		   const struct pidjob *mem, uint32_t nmem, const struct pidjob *par, uint32_t npar)
{
	uint8_t *cat = calloc(p->nr_frames + 1, 1);
	uint32_t i;

	if (!cat)
		return -ENOMEM;
	for (i = 0; i < p->nr_frames; i++)
		cat[i] = frame_cat(&p->frames[i]);
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *sm = &p->samples[i];
		int32_t j;
		uint8_t c;

		if (sm->kind != BP_KIND_ONCPU || !sm->count)
			continue;
		j = pidjob_find(mem, nmem, sm->pid);
		if (j >= 0) {
			js->j[j].st.samples += sm->count;
			c = stack_cat(p, cat, sm->stack);
			if (c == SU_LOADER)
				js->j[j].st.loader += sm->count;
			else if (c == SU_EXEC)
				js->j[j].st.exec += sm->count;
			else if (c == SU_EXIT)
				js->j[j].st.exit += sm->count;
			continue;
		}
		j = pidjob_find(par, npar, sm->pid);
		if (j >= 0 && stack_cat(p, cat, sm->stack) == SU_FORK)
			js->j[j].st.fork += sm->count;
	}
	free(cat);
	for (i = 0; i < js->nr; i++) {
		struct bp_job *jb = &js->j[i];
		struct bp_job_startup *st = &jb->st;
		uint64_t su = st->loader + st->exec + st->exit;
		double f = st->samples ? (double)su / st->samples : 0;

		if (jb->parent >= 0) {
			const struct bp_proc_summary *pp = &s->procs[jb->parent];

			st->fork_s = pp->samples ? pp->on_cpu_s * st->fork / pp->samples : 0;
		}
		st->loader_s = st->samples ? jb->on_cpu_s * st->loader / st->samples : 0;
		st->cpu_s = f * jb->on_cpu_s + st->fork_s;
		/*
		 * A run waits for a CPU in proportion to the CPU it asks for:
		 * its start-up's part of the run-queue time is its part of the
		 * CPU time.
		 */
		st->s = f * (jb->on_cpu_s + jb->off_s[BP_KIND_RUNQUEUE]) + st->fork_s;
		st->share = jb->total_s > 0 ? st->s / jb->total_s : 0;
	}
	return 0;
}

/*
 * The runs' own code (analyze/owned.h), one function summed over them: the
 * runs' innermost frame of theirs, weighted by the samples it is on. The
 * callee of the run that had most of it stands for all.
 */
#define JOB_OWN_MAX	8

struct job_own {
	uint32_t frame;
	double w, beneath, kernel, best;
	uint32_t callee;
	double callee_frac;
};

static void own_add(const struct bp_profile *p, struct job_own *o, uint32_t *n,
		    const struct bp_proc_summary *ps)
{
	double w = ps->own_frac * ps->samples;
	const struct bp_frame *f, *g;
	uint32_t i;

	if (!ps->have_own || w <= 0)
		return;
	f = &p->frames[ps->own_frame];
	for (i = 0; i < *n; i++) {
		g = &p->frames[o[i].frame];
		/* names are interned: a function is its name in its module */
		if (o[i].frame == ps->own_frame || (f->name && f->name == g->name &&
						    f->module == g->module))
			break;
	}
	if (i == *n) {
		if (*n == JOB_OWN_MAX)
			return;
		memset(&o[i], 0, sizeof(o[i]));
		o[i].frame = ps->own_frame;
		(*n)++;
	}
	o[i].w += w;
	o[i].beneath += ps->own_beneath * w;
	o[i].kernel += ps->own_kernel * w;
	if (w > o[i].best) {
		o[i].best = w;
		o[i].callee = ps->own_callee;
		o[i].callee_frac = ps->own_beneath > 0 ? ps->own_callee_frac : 0;
	}
}

/*
 * The hot code the job's advice names: the runs' hottest function when it
 * is their own, else their own code above it (bp_own_evidence()), as for
 * one process: the kernel's work at every exec and exit, the hottest leaf
 * of a loop of short runs, is no code its user can tune.
 */
static void job_hot(const struct bp_profile *p, struct bp_evidence *e, uint32_t top,
		    uint64_t best, const struct job_own *o, uint32_t n, char *hot,
		    size_t hot_len)
{
	struct bp_func_hot leaf = { .frame = top };
	struct bp_proc_summary agg = { .funcs = &leaf, .nr_funcs = 1 };
	uint32_t i, k = 0;

	bp_func_label(&p->frames[top], hot, hot_len);
	e->hot_name = hot;
	e->hot_frac = (double)best / e->samples;
	for (i = 1; i < n; i++)
		if (o[i].w > o[k].w)
			k = i;
	if (n && o[k].w > 0) {
		agg.have_own = true;
		agg.own_frame = o[k].frame;
		agg.own_frac = o[k].w / e->samples;
		agg.own_beneath = o[k].beneath / o[k].w;
		agg.own_kernel = o[k].kernel / o[k].w;
		agg.own_callee = o[k].callee;
		agg.own_callee_frac = o[k].callee_frac;
		if (agg.own_beneath > 0 && !o[k].callee_frac)
			agg.own_beneath = 0;	/* no run named what it calls */
	}
	bp_own_evidence(p, &agg, e, hot, hot_len);
}

/* the runs' evidence, summed as bp_proc_evidence() gives it for one process */
static void job_evidence(const struct bp_profile *p, const struct bp_summary *s,
			 const struct bp_job *jb, const struct pidjob *const *in,
			 struct bp_evidence *e, char *hot, size_t hot_len, uint64_t *fself)
{
	double io = 0, fault = 0, kern = 0, sys = 0, dur = s->duration_s;
	struct job_own own[JOB_OWN_MAX];
	uint64_t best = 0;
	uint32_t i, k, top = 0, nown = 0;

	memset(e, 0, sizeof(*e));
	e->who = jb->name;
	e->ncpus = p->ncpus;
	e->machine_busy = s->busy_frac;
	e->threads = 1;
	for (i = 0; i < jb->nr; i++) {
		const struct bp_proc_summary *ps = &s->procs[jb->members[i]];
		const struct bp_proc_waits *w = s->waits && jb->members[i] < s->waits->nr_waits ?
						&s->waits->waits[jb->members[i]] : NULL;
		double wall = run_wall(ps);

		e->wall_s += wall;
		if (ps->have_timeline) {
			e->have_timeline = true;
			for (k = 0; k < BP_TS__MAX; k++)
				e->tl_s[k] += ps->tl_s[k];
			e->tl_idle_s += ps->tl_idle_s;
		}
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
		if (ps->threads > e->threads)
			e->threads = ps->threads;
		e->samples += ps->samples;
		io += ps->frac_io_path * ps->samples;
		fault += ps->frac_fault * ps->samples;
		kern += ps->frac_kernel * ps->samples;
		sys += ps->frac_syscall * ps->samples;
		e->sys_reads += ps->syscr;
		e->sys_writes += ps->syscw;
		e->sys_rbytes += ps->rchar;
		e->sys_wbytes += ps->wchar;
		if (w) {
			e->net_waits += w->net_waits;
			e->net_wait_s += w->net_wait_s;
			e->net_rx += w->net_rx;
			e->net_tx += w->net_tx;
			for (k = 0; k < w->nr_peers; k++) {
				if (w->peers[k].side != BP_SIDE_CLIENT &&
				    w->peers[k].side != BP_SIDE_UNKNOWN)
					continue;
				if (!e->net_peer)
					e->net_peer = w->peers[k].name;
				else if (strcmp(e->net_peer, w->peers[k].name))
					e->net_peers = 2;
			}
		}
		own_add(p, own, &nown, ps);
		/* the functions of every run together: frame ids are the profile's */
		for (k = 0; fself && k < ps->nr_funcs; k++) {
			fself[ps->funcs[k].frame] += ps->funcs[k].self;
			if (fself[ps->funcs[k].frame] > best) {
				best = fself[ps->funcs[k].frame];
				top = ps->funcs[k].frame;
			}
		}
	}
	if (e->net_peer && !e->net_peers)
		e->net_peers = 1;
	/* the summed timelines are shares of the runs' summed wall time */
	e->tl_wall_s = e->have_timeline ? e->wall_s : 0;
	e->net_p50_ms = jb->net_p50_ms;
	e->net_p99_ms = jb->net_p99_ms;
	e->sys_valid = e->sys_reads || e->sys_writes;
	if (e->samples) {
		e->frac_io_path = io / e->samples;
		e->frac_fault = fault / e->samples;
		e->frac_kernel = kern / e->samples;
		e->frac_syscall = sys / e->samples;
	}
	e->others_cpu_s = s->busy_frac * p->ncpus * dur - e->on_s;
	if (e->others_cpu_s < 0)
		e->others_cpu_s = 0;
	bp_io_evidence(p, in_job, in, e);
	if (jb->nr) {
		const struct bp_proc *proc = s->procs[jb->members[0]].proc;

		bp_cgroup_evidence(p, bp_proc_cpu_cgroup(p, proc), bp_proc_mem_cgroup(p, proc),
				   bp_proc_psi_cgroup(p, proc), e);
	}
	if (best && e->samples && hot_len)
		job_hot(p, e, top, best, own, nown, hot, hot_len);
	if (fself)
		for (i = 0; i < jb->nr; i++) {
			const struct bp_proc_summary *ps = &s->procs[jb->members[i]];

			for (k = 0; k < ps->nr_funcs; k++)
				fself[ps->funcs[k].frame] = 0;
		}
}

/* the client-side network waits of the runs: one histogram for their quantiles */
static int job_net(const struct bp_profile *p, struct bp_jobs *js, const struct pidjob *mem,
		   uint32_t nmem)
{
	uint64_t (*h)[BP_FHIST_SLOTS] = calloc(js->nr + 1, sizeof(*h));
	double *top = calloc(js->nr + 1, sizeof(*top));
	uint32_t i, k;
	int err = -ENOMEM;

	if (!h || !top)
		goto out;
	for (i = 0; i < p->nr_net_rows; i++) {
		const struct bp_net_row *r = &p->net_rows[i];
		int32_t j = pidjob_find(mem, nmem, r->pid);

		if (j < 0 || (r->side != BP_SIDE_CLIENT && r->side != BP_SIDE_UNKNOWN))
			continue;
		for (k = 0; k < BP_FHIST_SLOTS; k++)
			h[j][k] += r->hist[k];
		js->j[j].net_waits += r->waits;
		/* the runs' own ports differ from run to run, the peer's address and port do not */
		if (r->wait_ns / 1e9 > top[j]) {
			top[j] = r->wait_ns / 1e9;
			bp_net_peer(r, js->j[j].net_peer, sizeof(js->j[j].net_peer));
		}
	}
	for (i = 0; i < js->nr; i++) {
		js->j[i].net_p50_ms = bp_fhist_quantile(h[i], 0.5) / 1e3;
		js->j[i].net_p99_ms = bp_fhist_quantile(h[i], 0.99) / 1e3;
	}
	err = 0;
out:
	free(h);
	free(top);
	return err;
}

/* the parent's waits that the runs ended (a shell's wait4 ends at each child's exit) */
static void parent_waits(const struct bp_profile *p, const struct bp_summary *s,
			 struct bp_jobs *js, const struct pidjob *mem, uint32_t nmem)
{
	uint32_t i;

	for (i = 0; i < p->nr_wake_rows; i++) {
		const struct bp_wake_row *r = &p->wake_rows[i];
		int32_t j;

		if (r->ctx != BP_WCTX_TASK || r->state == BP_TS_RUNQUEUE || !r->waker_pid)
			continue;
		j = pidjob_find(mem, nmem, r->waker_pid);
		if (j < 0 || js->j[j].ppid != r->pid)
			continue;
		js->j[j].parent_wait_s += r->ns / 1e9;
	}
	for (i = 0; i < js->nr; i++) {
		struct bp_job *jb = &js->j[i];
		double wall;

		if (jb->parent < 0)
			continue;
		wall = run_wall(&s->procs[jb->parent]);
		jb->parent_waits = wall > 0 && jb->parent_wait_s >= BP_JOB_PARENT_WAIT * wall;
	}
}

static void ms(char *buf, size_t len, double s)
{
	if (s < 1)
		snprintf(buf, len, "%.0f ms", s * 1e3);
	else
		snprintf(buf, len, "%.2f s", s);
}

const char *bp_job_title(const struct bp_summary *s, const struct bp_job *j, char *buf,
			 size_t len)
{
	char med[32], p90[32];

	ms(med, sizeof(med), j->median_s);
	ms(p90, sizeof(p90), j->p90_s);
	if (j->parent >= 0)
		snprintf(buf, len, "%u runs of %s (children of %s, pid %u): %s each (median; "
			 "p90 %s), %.2f s in all", j->nr, j->name, s->procs[j->parent].proc->comm,
			 j->ppid, med, p90, j->total_s);
	else
		snprintf(buf, len, "%u runs of %s (children of pid %u): %s each (median; p90 %s), "
			 "%.2f s in all", j->nr, j->name, j->ppid, med, p90, j->total_s);
	return buf;
}

/*
 * A verdict made of lines: src's, with lead lines first and levers of its
 * own before src's, as many as fit. 0 or -ENOMEM.
 */
static int compose(const struct bp_verdict *src, const char *const *lead, uint32_t nlead,
		   uint32_t after, const char *const *levers, uint32_t nlev, uint32_t skip,
		   struct bp_verdict *dst)
{
	const char *ev[BP_VERDICT_LINES], *lv[BP_VERDICT_LINES];
	uint32_t i, ne = 0, nl = 0;
	size_t len = 0;
	char *t;

	/* src's first `after` lines, the lead lines, the rest of src's */
	for (i = 0; i < after && i < src->nr_evidence && ne < BP_VERDICT_LINES; i++)
		ev[ne++] = src->evidence[i];
	for (i = 0; i < nlead && ne < BP_VERDICT_LINES; i++)
		ev[ne++] = lead[i];
	for (i = after; i < src->nr_evidence && ne < BP_VERDICT_LINES; i++)
		ev[ne++] = src->evidence[i];
	/* the levers, then src's but its first `skip` (which the levers replace) */
	for (i = 0; i < nlev && nl < BP_VERDICT_LINES; i++)
		lv[nl++] = levers[i];
	for (i = skip; i < src->nr_levers && nl < BP_VERDICT_LINES; i++)
		lv[nl++] = src->levers[i];
	for (i = 0; i < ne; i++)
		len += strlen(ev[i]) + 1;
	for (i = 0; i < nl; i++)
		len += strlen(lv[i]) + 1;
	*dst = *src;
	dst->text = t = malloc(len ? len : 1);
	if (!t) {
		dst->nr_evidence = dst->nr_levers = 0;
		return -ENOMEM;
	}
	for (i = 0; i < ne; i++) {
		dst->evidence[i] = t;
		t = stpcpy(t, ev[i]) + 1;
	}
	for (i = 0; i < nl; i++) {
		dst->levers[i] = t;
		t = stpcpy(t, lv[i]) + 1;
	}
	dst->nr_evidence = ne;
	dst->nr_levers = nl;
	return 0;
}

static double pct(double f)
{
	return f * 100;
}

/* the job's own verdict: the summed runs', with the start-up and the levers of many runs */
static int judge(const struct bp_profile *p, const struct bp_summary *s, struct bp_job *jb,
		 const struct pidjob *const *in, uint64_t *fself)
{
	char lead[3][BP_VERDICT_LEN], lev[2][BP_VERDICT_LEN], hot[256], per[32];
	const char *l[3], *v[2];
	const struct bp_job_startup *st = &jb->st;
	struct bp_verdict raw;
	struct bp_evidence e;
	uint32_t nl = 0, nv = 0;
	bool concurrent = false;
	double wait, cpus;
	int err;

	job_evidence(p, s, jb, in, &e, hot, sizeof(hot), fself);
	bp_classify(&e, NULL, &raw);
	/* the runs' time ends in a wait the summed evidence named first (the network, IO) */
	wait = raw.wait_class != BP_CLASS_UNKNOWN ? raw.wait_share : 0;
	/* a share of a handful of samples says nothing */
	if (st->samples >= BP_JOB_MIN_SAMPLES) {
		ms(per, sizeof(per), st->s / (jb->nr ? jb->nr : 1));
		snprintf(lead[nl], BP_VERDICT_LEN, "process start-up and exit %.0f%% of the runs' "
			 "time, about %s a run: %" PRIu64 " of their %" PRIu64 " on-CPU samples in "
			 "the dynamic loader (%" PRIu64 "), exec (%" PRIu64 ") and exit (%" PRIu64
			 ")%s", pct(st->share), per, st->loader + st->exec + st->exit,
			 st->samples, st->loader, st->exec, st->exit,
			 st->fork_s >= 0.0005 ? ", and the parent's forks" : "");
		l[nl] = lead[nl];
		nl++;
	}
	/* the network wait, when the class is another: the loop still waits on its peer */
	if (!raw.wait_net && jb->total_s > 0 && jb->net_wait_s >= 0.1 * jb->total_s) {
		snprintf(lead[nl], BP_VERDICT_LEN, "%.0f%% of the runs' time waiting on the "
			 "network%s%s",
			 pct(jb->net_wait_s / jb->total_s), jb->net_peer[0] ? ": " : "",
			 jb->net_peer);
		l[nl] = lead[nl];
		nl++;
	}
	if (raw.wait_class == BP_CLASS_IO && wait >= 0.2 && e.ncpus > 0) {
		/* run side by side, the runs take at least their CPU time spread over the CPUs */
		const char *on = !raw.wait_net ? "block IO" :
				 jb->net_peer[0] ? jb->net_peer : "the network";

		/* ... and no more at once than there are runs */
		cpus = (e.on_s + st->fork_s) / e.ncpus;
		if (cpus < jb->total_s / jb->nr)
			cpus = jb->total_s / jb->nr;
		snprintf(lev[nv], BP_VERDICT_LEN, "Run them concurrently: each run waits %.0f%% of "
			 "its time on %s, one after another; xargs -P 8 or GNU parallel -j 8 "
			 "overlap the waits (the runs' %.2f s of CPU on %u CPUs allow at most "
			 "%.1fx)", pct(wait), on, e.on_s, e.ncpus,
			 cpus > 0 ? jb->total_s / cpus : 0);
		v[nv] = lev[nv];
		nv++;
		concurrent = true;
	}
	if (st->samples >= BP_JOB_MIN_SAMPLES && st->share >= BP_JOB_STARTUP) {
		snprintf(lev[nv], BP_VERDICT_LEN, "Start fewer processes: %.0f%% of the runs' time "
			 "is starting and ending %u of them; pass many inputs to one run (xargs "
			 "-n 100 %s, or a list of inputs), or keep one process alive for all of "
			 "them",
			 pct(st->share), jb->nr, jb->name);
		v[nv] = lev[nv];
		nv++;
	}
	/*
	 * The class's own line first, then the start-up; the concurrency
	 * lever replaces the wait's first lever (classify.c: "Overlap the
	 * round trips" / "Overlap the waits"), which speaks of one process.
	 */
	err = compose(&raw, l, nl, 1, v, nv, concurrent && raw.nr_levers &&
		      !strncmp(raw.levers[0], "Overlap ", 8), &jb->verdict);
	bp_verdict_free(&raw);
	return err;
}

/*
 * Runs that were idle themselves (shells of `make` waiting for their own
 * compilers) or too little to judge are no answer for who waited on them:
 * the time is further down.
 */
static bool says_something(const struct bp_job *jb)
{
	return jb->verdict.cls != BP_CLASS_IDLE && jb->verdict.cls != BP_CLASS_UNKNOWN;
}

/*
 * Give a process a job's verdict, led by why. System-wide only the active
 * processes have verdicts (each is a /metrics series): a quiet run stays
 * without one.
 */
static int lend(const struct bp_profile *p, struct bp_proc_summary *ps, const struct bp_job *jb,
		const char *why)
{
	const char *l[1] = { why };
	struct bp_verdict v;

	if (!ps->verdict && p->system_wide)
		return 0;
	if (!ps->verdict) {
		ps->verdict = calloc(1, sizeof(*ps->verdict));
		if (!ps->verdict)
			return -ENOMEM;
	}
	if (compose(&jb->verdict, l, 1, 0, NULL, 0, 0, &v))
		return -ENOMEM;
	bp_verdict_free(ps->verdict);
	*ps->verdict = v;
	return 0;
}

/* the summary's processes by pid: index (as job) for pidjob_find() */
static struct pidjob *by_pid(const struct bp_summary *s, uint32_t *n)
{
	struct pidjob *m = calloc(s->nr_procs + 1, sizeof(*m));
	uint32_t i;

	*n = 0;
	if (!m)
		return NULL;
	for (i = 0; i < s->nr_procs; i++) {
		if (!s->procs[i].proc)
			continue;
		m[*n].pid = s->procs[i].proc->pid;
		m[(*n)++].job = i;
	}
	qsort(m, *n, sizeof(*m), cmp_pidjob);
	return m;
}

int bp_jobs_build(const struct bp_profile *p, struct bp_summary *s)
{
	struct cand *c = calloc(s->nr_procs + 1, sizeof(*c));
	struct pidjob *mem = NULL, *par = NULL, *all;
	const struct pidjob *in[2];
	struct bp_jobs *js = NULL;
	uint64_t *fself = NULL;
	double *walls = NULL;
	uint32_t i, j, n = 0, nmem = 0, npar = 0, nall;
	char why[BP_VERDICT_LEN], title[240];
	int err = -ENOMEM;

	bp_jobs_free(s->jobs);
	free(s->jobs);
	s->jobs = NULL;
	all = by_pid(s, &nall);
	if (!c || !all) {
		free(c);
		free(all);
		return -ENOMEM;
	}
	/*
	 * Runs: processes started inside the window, keyed by (parent,
	 * program). For a command, inside its tree: the runs of `record -r N`
	 * are boundprof's children, each a command of its own.
	 */
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc *proc = s->procs[i].proc;

		if (!proc || !proc->start_ns || !proc->ppid)
			continue;
		if (!p->system_wide && pidjob_find(all, nall, proc->ppid) < 0)
			continue;
		c[n].idx = i;
		c[n].ppid = proc->ppid;
		c[n].start = proc->start_ns;
		c[n].wall = run_wall(&s->procs[i]);
		prog_name(proc, c[n].name, sizeof(c[n].name));
		n++;
	}
	qsort(c, n, sizeof(*c), cmp_cand);
	js = calloc(1, sizeof(*js));
	walls = calloc(n + 1, sizeof(*walls));
	mem = calloc(n + 1, sizeof(*mem));
	par = calloc(n + 1, sizeof(*par));
	if (!js || !walls || !mem || !par)
		goto out;
	js->of = malloc((s->nr_procs + 1) * sizeof(*js->of));
	if (!js->of)
		goto out;
	js->nr_of = s->nr_procs;
	for (i = 0; i < s->nr_procs; i++)
		js->of[i] = -1;
	for (i = 0; i < n; i = j) {
		struct bp_job *jb, *nj;
		uint32_t k, m;

		for (j = i; j < n && c[j].ppid == c[i].ppid && !strcmp(c[j].name, c[i].name); j++)
			walls[j - i] = c[j].wall;
		m = j - i;
		if (m < BP_JOB_MIN_RUNS)
			continue;
		qsort(walls, m, sizeof(*walls), cmp_double);
		if ((m % 2 ? walls[m / 2] : (walls[m / 2 - 1] + walls[m / 2]) / 2) >=
		    BP_JOB_MAX_MEDIAN_S)
			continue;
		nj = realloc(js->j, (js->nr + 1) * sizeof(*js->j));
		if (!nj)
			goto out;
		js->j = nj;
		jb = &js->j[js->nr];
		memset(jb, 0, sizeof(*jb));
		jb->members = calloc(m, sizeof(*jb->members));
		if (!jb->members)
			goto out;
		js->nr++;
		snprintf(jb->name, sizeof(jb->name), "%s", c[i].name);
		jb->ppid = c[i].ppid;
		jb->parent = pidjob_find(all, nall, jb->ppid);
		jb->nr = m;
		jb->median_s = m % 2 ? walls[m / 2] : (walls[m / 2 - 1] + walls[m / 2]) / 2;
		jb->p90_s = walls[(uint32_t)(0.9 * (m - 1) + 0.5)];
		jb->min_s = walls[0];
		jb->max_s = walls[m - 1];
		for (k = 0; k < m; k++) {
			const struct bp_proc_summary *ps = &s->procs[c[i + k].idx];
			int w;

			jb->members[k] = c[i + k].idx;
			jb->total_s += walls[k];
			jb->on_cpu_s += ps->on_cpu_s;
			for (w = 0; w < BP_KIND__MAX; w++)
				jb->off_s[w] += ps->off_s[w];
			jb->net_wait_s += ps->net_work_s;
		}
	}
	if (!js->nr) {
		err = 0;
		goto out;
	}
	qsort(js->j, js->nr, sizeof(*js->j), cmp_job);
	for (i = 0; i < js->nr; i++) {
		for (j = 0; j < js->j[i].nr; j++) {
			js->of[js->j[i].members[j]] = i;
			mem[nmem].pid = s->procs[js->j[i].members[j]].proc->pid;
			mem[nmem++].job = i;
		}
		/* a parent's forks go to its biggest job (the first: most wall) */
		for (j = 0; j < npar && par[j].pid != js->j[i].ppid; j++)
			;
		if (j == npar) {
			par[npar].pid = js->j[i].ppid;
			par[npar++].job = i;
		}
	}
	qsort(mem, nmem, sizeof(*mem), cmp_pidjob);
	qsort(par, npar, sizeof(*par), cmp_pidjob);
	in[0] = mem;
	in[1] = (const struct pidjob *)(uintptr_t)nmem;
	if (startup(p, s, js, mem, nmem, par, npar))
		goto out;
	if (job_net(p, js, mem, nmem))
		goto out;
	parent_waits(p, s, js, mem, nmem);
	fself = calloc(p->nr_frames + 1, sizeof(*fself));
	if (!fself)
		goto out;
	for (i = 0; i < js->nr; i++) {
		if (judge(p, s, &js->j[i], in, fself))
			goto out;
	}
	/* the runs, and a parent that mostly waited for them, say the job's verdict */
	for (i = 0; i < js->nr; i++) {
		struct bp_job *jb = &js->j[i];

		bp_job_title(s, jb, title, sizeof(title));
		snprintf(why, sizeof(why), "one of %s, judged together", title);
		for (j = 0; j < jb->nr; j++)
			if (lend(p, &s->procs[jb->members[j]], jb, why))
				goto out;
		if (jb->parent >= 0 && jb->parent_waits && js->of[jb->parent] < 0 &&
		    says_something(jb)) {
			double wall = run_wall(&s->procs[jb->parent]);

			snprintf(why, sizeof(why), "%.0f%% of its wall time waiting for its "
				 "children, %u runs of %s one after another: its time is theirs",
				 pct(wall > 0 ? jb->parent_wait_s / wall : 0), jb->nr, jb->name);
			if (lend(p, &s->procs[jb->parent], jb, why))
				goto out;
		}
	}
	memset(s->class_count, 0, sizeof(s->class_count));
	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].verdict)
			s->class_count[s->procs[i].verdict->cls]++;
	s->jobs = js;
	js = NULL;
	err = 0;
out:
	free(c);
	free(all);
	free(walls);
	free(mem);
	free(par);
	free(fself);
	if (js) {
		bp_jobs_free(js);
		free(js);
	}
	return err;
}

bool bp_jobs_overall(const struct bp_profile *p, struct bp_summary *s)
{
	const struct bp_pipelines *pl = s->waits;
	const struct bp_jobs *js = s->jobs;
	const struct bp_job *jb = NULL;
	char lead[BP_VERDICT_LEN];
	uint32_t i, k, via = 0;

	if (!js || !js->nr || !pl || !pl->nr_crit || p->system_wide)
		return false;
	/* the path reaches a run, or a process on it mostly waited for the runs */
	for (i = 0; i < pl->nr_crit && !jb; i++) {
		uint32_t c = pl->crit[i];

		if (c < js->nr_of && js->of[c] >= 0 && says_something(&js->j[js->of[c]])) {
			jb = &js->j[js->of[c]];
			via = i ? pl->crit[i - 1] : c;
			break;
		}
		for (k = 0; k < js->nr; k++)
			if (js->j[k].parent == (int32_t)c && js->j[k].parent_waits &&
			    says_something(&js->j[k])) {
				jb = &js->j[k];
				via = c;
				break;
			}
	}
	if (!jb)
		return false;
	((struct bp_job *)jb)->critical = true;
	snprintf(lead, sizeof(lead), "what held the command back: %s (pid %u) waiting for %u runs "
		 "of %s, one after another", s->procs[via].proc->comm, s->procs[via].proc->pid,
		 jb->nr, jb->name);
	if (s->have_overall)
		bp_verdict_free(&s->overall);
	s->have_overall = true;
	return bp_verdict_lead(&jb->verdict, lead, &s->overall) == 0;
}

const struct bp_job *bp_job_of(const struct bp_summary *s, uint32_t proc)
{
	const struct bp_jobs *js = s->jobs;

	if (!js || proc >= js->nr_of || js->of[proc] < 0)
		return NULL;
	return &js->j[js->of[proc]];
}

void bp_jobs_free(struct bp_jobs *js)
{
	uint32_t i;

	if (!js)
		return;
	for (i = 0; i < js->nr; i++) {
		free(js->j[i].members);
		bp_verdict_free(&js->j[i].verdict);
	}
	free(js->j);
	free(js->of);
	memset(js, 0, sizeof(*js));
}
