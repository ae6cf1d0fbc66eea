// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/classify.h"
#include "analyze/groups.h"
#include "model/hist.h"
#include "serve/metrics.h"
#include "serve/prom.h"

int bp_dev_totals_add(struct bp_dev_totals **devs, uint32_t *nr, const struct bp_profile *win)
{
	uint32_t i, j;
	int k;

	for (i = 0; i < win->nr_io_devs; i++) {
		const struct bp_io_dev *d = &win->io_devs[i];
		struct bp_dev_totals *t = NULL;

		for (j = 0; j < *nr; j++)
			if ((*devs)[j].dev == d->dev)
				t = &(*devs)[j];
		if (!t) {
			struct bp_dev_totals *n = realloc(*devs, (*nr + 1) * sizeof(*n));

			if (!n)
				return -ENOMEM;
			*devs = n;
			t = &n[(*nr)++];
			memset(t, 0, sizeof(*t));
			t->dev = d->dev;
		}
		memcpy(t->name, d->name, sizeof(t->name));
		for (k = 0; k < BP_IO_OP__MAX; k++) {
			t->ops[k] += d->op[k].ops;
			t->bytes[k] += d->op[k].bytes;
			t->lat_ns += d->op[k].lat_ns;
			for (j = 0; j < BP_HIST_SLOTS; j++)
				t->hist[j] += d->op[k].hist[j];
		}
		t->busy_ns += d->busy_ns;
	}
	return 0;
}

static const char *const op_names[BP_IO_OP__MAX] = { "read", "write", "other" };

/* io bytes and ops of a process in the window */
static void proc_io(const struct bp_profile *p, uint32_t pid, uint64_t *ops, uint64_t *bytes)
{
	uint32_t i;

	*ops = *bytes = 0;
	for (i = 0; i < p->nr_io_rows; i++) {
		if (p->io_rows[i].kthread || p->io_rows[i].pid != pid)
			continue;
		*ops += p->io_rows[i].st.ops;
		*bytes += p->io_rows[i].st.bytes;
	}
}

/* a family with one unlabelled sample */
static void scalar(struct bp_prom *m, const char *name, enum bp_prom_type type, const char *help,
		   double v)
{
	bp_prom_family(m, name, type, help);
	bp_prom_sample(m, NULL, 0, v);
}

static void scalar_u64(struct bp_prom *m, const char *name, enum bp_prom_type type,
		       const char *help, uint64_t v)
{
	bp_prom_family(m, name, type, help);
	bp_prom_sample_u64(m, NULL, 0, v);
}

/*
 * How much a process did in the window: on-CPU time plus the waits that
 * held it back (run queue, IO, locks, other). Sleep is left out: a pool
 * of idle threads waiting for work is not activity.
 */
static double activity(const struct bp_proc_summary *ps)
{
	/* and a client's network waits, and pipe waits; not a server's waits for requests */
	return bp_proc_activity(ps);
}

static int by_activity(const void *a, const void *b)
{
	const struct bp_proc_summary *x = *(const struct bp_proc_summary *const *)a;
	const struct bp_proc_summary *y = *(const struct bp_proc_summary *const *)b;
	double ax = activity(x), ay = activity(y);

	if (ax != ay)
		return ax > ay ? -1 : 1;
	return x->proc->pid < y->proc->pid ? -1 : x->proc->pid > y->proc->pid;
}

static void sample_proc(struct bp_prom *m, const struct bp_proc_summary *ps, const char *cls,
			double v)
{
	char pid[16];
	struct bp_prom_label l[3] = { { "pid", pid }, { "comm", ps ? ps->proc->comm : "other" },
				      { "class", cls } };

	if (ps)
		snprintf(pid, sizeof(pid), "%u", ps->proc->pid);
	else
		pid[0] = '\0';
	bp_prom_sample(m, l, cls ? 3 : 2, v);
}

/*
 * The `top` most active processes get series of their own, the same ones
 * in every family; the rest are summed into one pid="" comm="other" series
 * so that cardinality stays bounded however many processes come and go.
 */
static int processes(struct bp_prom *m, const struct bp_profile *p, const struct bp_summary *s,
		     uint32_t top)
{
	const struct bp_proc_summary **act;
	uint32_t i, n = 0, own;
	double rest;
	int k;

	act = calloc(s->nr_procs ? s->nr_procs : 1, sizeof(*act));
	if (!act)
		return -ENOMEM;
	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].proc && s->procs[i].active)
			act[n++] = &s->procs[i];
	qsort(act, n, sizeof(*act), by_activity);
	own = n < top ? n : top;

	bp_prom_family(m, "boundprof_process_cpu_seconds", BP_PROM_GAUGE,
		       "On-CPU seconds of the process in the last window (pid=\"\": the rest, folded)");
	for (i = 0, rest = 0; i < n; i++) {
		if (i < own)
			sample_proc(m, act[i], NULL, act[i]->on_cpu_s);
		else
			rest += act[i]->on_cpu_s;
	}
	if (n > own)
		sample_proc(m, NULL, NULL, rest);

	bp_prom_family(m, "boundprof_process_offcpu_seconds", BP_PROM_GAUGE,
		       "Thread-seconds the process spent off-CPU in the last window, by wait class");
	for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++) {
		for (i = 0, rest = 0; i < n; i++) {
			if (i < own)
				sample_proc(m, act[i], bp_kind_name(k), act[i]->off_s[k]);
			else
				rest += act[i]->off_s[k];
		}
		if (n > own)
			sample_proc(m, NULL, bp_kind_name(k), rest);
	}

	for (k = 0; k < 2; k++) {
		uint64_t ops, bytes, rest_v = 0;

		if (k == 0)
			bp_prom_family(m, "boundprof_process_io_bytes", BP_PROM_GAUGE,
				       "Block IO bytes the process submitted in the last window");
		else
			bp_prom_family(m, "boundprof_process_io_ops", BP_PROM_GAUGE,
				       "Block IO requests the process submitted in the last window");
		for (i = 0; i < n; i++) {
			proc_io(p, act[i]->proc->pid, &ops, &bytes);
			if (i < own)
				sample_proc(m, act[i], NULL, (double)(k ? ops : bytes));
			else
				rest_v += k ? ops : bytes;
		}
		if (n > own)
			sample_proc(m, NULL, NULL, (double)rest_v);
	}

	bp_prom_family(m, "boundprof_process_verdict", BP_PROM_GAUGE,
		       "1 for the verdict of the process in the last window");
	for (i = 0; i < own; i++) {
		const struct bp_proc_summary *ps = act[i];
		char pid[16];

		if (!ps->verdict)
			continue;
		snprintf(pid, sizeof(pid), "%u", ps->proc->pid);
		bp_prom_sample(m, (struct bp_prom_label[]){
				       { "pid", pid }, { "comm", ps->proc->comm },
				       { "class", bp_class_name(ps->verdict->cls) },
				       { "confidence", bp_confidence_name(ps->verdict->conf) } },
			       4, 1);
	}
	scalar(m, "boundprof_processes_folded", BP_PROM_GAUGE,
	       "Active processes of the last window folded into the pid=\"\" series", n - own);

	/* who and where, once per process with series of its own: join on pid */
	bp_prom_family(m, "boundprof_process_info", BP_PROM_GAUGE,
		       "1 for each process with series of its own: its user, cgroup and unit");
	for (i = 0; i < own; i++) {
		const struct bp_proc *proc = act[i]->proc;
		char pid[16], uid[16], user[32];

		snprintf(pid, sizeof(pid), "%u", proc->pid);
		if (proc->have_ids)
			snprintf(uid, sizeof(uid), "%u", proc->uid);
		else
			uid[0] = '\0';
		snprintf(user, sizeof(user), "%s", proc->user ? proc->user : uid);
		bp_prom_sample(m, (struct bp_prom_label[]){
				       { "pid", pid }, { "comm", proc->comm }, { "uid", uid },
				       { "user", user }, { "cgroup", proc->cgroup ? proc->cgroup : "" },
				       { "unit", proc->unit ? proc->unit : "" } },
			       6, 1);
	}
	free(act);
	return 0;
}

static void sample_group(struct bp_prom *m, const char *by, const struct bp_group *g,
			 const char *cls, double v)
{
	struct bp_prom_label l[3] = { { "by", by }, { "group", g ? g->name : "" },
				      { "class", cls } };

	bp_prom_sample(m, l, cls ? 3 : 2, v);
}

/*
 * Per user, cgroup and unit: the `top` most active groups of each grouping
 * get series of their own, the rest are summed into group="", as for
 * processes, so that the series stay bounded however many users, services
 * or containers come and go.
 */
static int groups(struct bp_prom *m, const struct bp_profile *p, const struct bp_summary *s,
		  uint32_t top)
{
	static const enum bp_group_by bys[] = { BP_GROUP_USER, BP_GROUP_CGROUP, BP_GROUP_UNIT };
	struct bp_groups gs[3] = {};
	uint32_t own[3], i, b, folded;
	double rest;
	int k, err = 0;

	for (b = 0; b < 3; b++) {
		if (bp_groups_build(p, s, bys[b], &gs[b])) {
			err = -ENOMEM;
			goto out;
		}
		own[b] = gs[b].nr < top ? gs[b].nr : top;
	}
#define EACH(fam, type, help, value)								\
	do {											\
		bp_prom_family(m, fam, type, help);						\
		for (b = 0; b < 3; b++) {							\
			const char *by = bp_group_by_name(bys[b]);				\
			for (i = 0, rest = 0; i < gs[b].nr; i++) {				\
				const struct bp_group *g = &gs[b].g[i];				\
				if (i < own[b])							\
					sample_group(m, by, g, NULL, (value));			\
				else								\
					rest += (value);					\
			}									\
			if (gs[b].nr > own[b])							\
				sample_group(m, by, NULL, NULL, rest);				\
		}										\
	} while (0)

	EACH("boundprof_group_cpu_seconds", BP_PROM_GAUGE,
	     "On-CPU seconds of the group's processes in the last window, by user, cgroup or unit "
	     "(by=); only the --top most active groups of each have series, group=\"\" sums the "
	     "rest", g->on_cpu_s);
	EACH("boundprof_group_processes", BP_PROM_GAUGE,
	     "Processes of the group in the last window", (double)g->nr_procs);
	EACH("boundprof_group_throttled_seconds", BP_PROM_GAUGE,
	     "Run-queue thread-seconds of the group spent waiting out its cgroup's CPU quota in "
	     "the last window", g->throttled_s);
	EACH("boundprof_group_io_bytes", BP_PROM_GAUGE,
	     "Block IO bytes the group's processes submitted in the last window",
	     (double)g->io_bytes);
#undef EACH
	bp_prom_family(m, "boundprof_group_offcpu_seconds", BP_PROM_GAUGE,
		       "Thread-seconds the group's processes spent off-CPU in the last window, by "
		       "wait class");
	for (b = 0; b < 3; b++) {
		const char *by = bp_group_by_name(bys[b]);

		for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++) {
			for (i = 0, rest = 0; i < gs[b].nr; i++) {
				if (i < own[b])
					sample_group(m, by, &gs[b].g[i], bp_kind_name(k),
						     gs[b].g[i].off_s[k]);
				else
					rest += gs[b].g[i].off_s[k];
			}
			if (gs[b].nr > own[b])
				sample_group(m, by, NULL, bp_kind_name(k), rest);
		}
	}
	bp_prom_family(m, "boundprof_group_verdict", BP_PROM_GAUGE,
		       "1 for the verdict of the group as one workload in the last window");
	for (b = 0; b < 3; b++)
		for (i = 0; i < own[b]; i++) {
			const struct bp_group *g = &gs[b].g[i];

			if (!g->have_verdict)
				continue;
			bp_prom_sample(m, (struct bp_prom_label[]){
					       { "by", bp_group_by_name(bys[b]) }, { "group", g->name },
					       { "class", bp_class_name(g->verdict.cls) },
					       { "confidence", bp_confidence_name(g->verdict.conf) } },
				       4, 1);
		}
	bp_prom_family(m, "boundprof_group_cpu_quota_cpus", BP_PROM_GAUGE,
		       "The CPU quota the group's cgroup runs under, in CPUs (quota / period); "
		       "groups with series of their own and a quota only");
	for (b = 0; b < 3; b++)
		for (i = 0; i < own[b]; i++) {
			const struct bp_cgroup *c = gs[b].g[i].cpu;

			if (c && c->cpu_valid && c->quota_us >= 0 && c->period_us)
				sample_group(m, bp_group_by_name(bys[b]), &gs[b].g[i], NULL,
					     (double)c->quota_us / c->period_us);
		}
	bp_prom_family(m, "boundprof_group_pressure_ratio", BP_PROM_GAUGE,
		       "Share of the last window some task of the group's cgroup stalled on the "
		       "resource (cgroup v2 pressure stall information, \"some\")");
	for (b = 0; b < 3; b++)
		for (i = 0; i < own[b]; i++) {
			const struct bp_cgroup *c = gs[b].g[i].psi;
			static const char *const res[BP_PSI_RES] = { "cpu", "memory", "io" };

			if (!c || !c->psi_valid || !c->watched_ns)
				continue;
			for (k = 0; k < BP_PSI_RES; k++)
				bp_prom_sample(m, (struct bp_prom_label[]){
						       { "by", bp_group_by_name(bys[b]) },
						       { "group", gs[b].g[i].name },
						       { "resource", res[k] } },
					       3, c->psi_some_us[k] * 1e3 / c->watched_ns);
		}
	bp_prom_family(m, "boundprof_groups_folded", BP_PROM_GAUGE,
		       "Groups of the last window summed into the group=\"\" series, by grouping: "
		       "only the --top most active groups of each grouping have series of their own");
	for (b = 0; b < 3; b++) {
		folded = gs[b].nr - own[b];
		bp_prom_sample(m, (struct bp_prom_label[]){ { "by", bp_group_by_name(bys[b]) } }, 1,
			       folded);
	}
out:
	for (b = 0; b < 3; b++)
		bp_groups_free(&gs[b]);
	return err;
}

/* /proc/pressure over the window: the share of it some (or all) tasks stalled */
static void pressure(struct bp_prom *m, const struct bp_profile *p)
{
	static const char *const res[BP_PSI_RES] = { "cpu", "memory", "io" };
	double w = p->end_ns > p->start_ns ? (p->end_ns - p->start_ns) / 1e3 : 0;
	int k;

	bp_prom_family(m, "boundprof_pressure_ratio", BP_PROM_GAUGE,
		       "Share of the last window some (kind=some) or all (kind=full) non-idle tasks "
		       "of the machine stalled on the resource (/proc/pressure)");
	if (!p->psi_valid || w <= 0)
		return;
	for (k = 0; k < BP_PSI_RES; k++) {
		bp_prom_sample(m, (struct bp_prom_label[]){ { "resource", res[k] },
							     { "kind", "some" } },
			       2, p->psi_some_us[k] / w);
		bp_prom_sample(m, (struct bp_prom_label[]){ { "resource", res[k] },
							     { "kind", "full" } },
			       2, p->psi_full_us[k] / w);
	}
}

static void devices(struct bp_prom *m, const struct bp_dev_totals *d, uint32_t n)
{
	double bounds[BP_HIST_SLOTS - 1];
	uint32_t i;
	int k;

	bp_prom_family(m, "boundprof_device_io_ops_total", BP_PROM_COUNTER,
		       "Block IO requests completed by the device since the agent started");
	for (i = 0; i < n; i++)
		for (k = 0; k < BP_IO_OP__MAX; k++)
			bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "device", d[i].name },
									 { "op", op_names[k] } },
					   2, d[i].ops[k]);
	bp_prom_family(m, "boundprof_device_io_bytes_total", BP_PROM_COUNTER,
		       "Bytes transferred by the device since the agent started");
	for (i = 0; i < n; i++)
		for (k = 0; k < BP_IO_OP__MAX; k++)
			bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "device", d[i].name },
									 { "op", op_names[k] } },
					   2, d[i].bytes[k]);
	bp_prom_family(m, "boundprof_device_busy_seconds_total", BP_PROM_COUNTER,
		       "Time the device had at least one request in flight");
	for (i = 0; i < n; i++)
		bp_prom_sample(m, (struct bp_prom_label[]){ { "device", d[i].name } }, 1,
			       d[i].busy_ns / 1e9);

	/* the log2 buckets in seconds: slot k ends at 2^(k+1) us */
	for (k = 0; k < BP_HIST_SLOTS - 1; k++)
		bounds[k] = (double)(2ULL << k) / 1e6;
	bp_prom_family(m, "boundprof_device_io_latency_seconds", BP_PROM_HISTOGRAM,
		       "Block IO request latency, start to completion, since the agent started");
	for (i = 0; i < n; i++)
		bp_prom_histogram(m, (struct bp_prom_label[]){ { "device", d[i].name } }, 1, bounds,
				  d[i].hist, BP_HIST_SLOTS - 1, d[i].lat_ns / 1e9);
}

static void self_metrics(struct bp_prom *m, const struct bp_agent_self *a)
{
	static const char *const maps[4] = { "oncpu", "offcpu", "kernel_stacks", "user_stacks" };
	static const char *const rejects[BP_HTTP_REJECT__MAX] = {
		"busy", "peer", "slots", "unauthorized", "forbidden",
	};
	static const char *const phases[BP_HTTP_TIMEOUT__MAX] = { "head", "write", "held" };
	unsigned int i;

	scalar_u64(m, "boundprof_agent_samples_total", BP_PROM_COUNTER,
	       "On-CPU samples taken (all CPUs; none of an idle CPU)", a->bpf.v[BP_STAT_SAMPLES]);
	scalar_u64(m, "boundprof_agent_switches_total", BP_PROM_COUNTER,
	       "Context switches of tracked threads seen", a->bpf.v[BP_STAT_SWITCHES]);
	scalar_u64(m, "boundprof_agent_stacks_cached_total", BP_PROM_COUNTER,
	       "Switches whose stacks came from the thread's cache, without a walk",
	       a->bpf.v[BP_STAT_STACKS_CACHED]);
	bp_prom_family(m, "boundprof_agent_lost_total", BP_PROM_COUNTER,
		       "Samples, intervals, stacks or events lost, by reason");
	/* the reasons are the JSON report's drops_detail names (model/counters.h) */
	for (i = 0; i < bp_nr_counters; i++) {
		const struct bp_counter *c = &bp_counters[i];

		if (bp_counter_is_loss(c))
			bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "reason", c->name } }, 1,
					   bp_counter_value(c, &a->bpf, a->ucounts));
	}
	bp_prom_family(m, "boundprof_agent_noted_total", BP_PROM_COUNTER,
		       "Not losses: what explains missing data, or repaired it, by reason");
	for (i = 0; i < bp_nr_counters; i++) {
		const struct bp_counter *c = &bp_counters[i];

		if (bp_counter_is_note(c))
			bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "reason", c->name } }, 1,
					   bp_counter_value(c, &a->bpf, a->ucounts));
	}
	/* older than noted_total, which has it too: kept, as series are never removed */
	scalar_u64(m, "boundprof_agent_user_stacks_cut_total", BP_PROM_COUNTER,
	       "User stacks ended where frame pointers ran out (not a loss)", a->user_stacks_cut);
	bp_prom_family(m, "boundprof_agent_map_fill_ratio", BP_PROM_GAUGE,
		       "Peak share of a BPF map used between two drains in the last window");
	for (i = 0; i < 4; i++)
		bp_prom_sample(m, (struct bp_prom_label[]){ { "map", maps[i] } }, 1, a->map_fill[i]);
	scalar(m, "boundprof_agent_cpu_seconds_total", BP_PROM_COUNTER,
	       "CPU time of the agent process (user + system)", a->cpu_s);
	if (a->bpf_run_s >= 0) {
		bp_prom_family(m, "boundprof_agent_bpf_seconds_total", BP_PROM_COUNTER,
			       "Run time of the agent's BPF programs (kernel.bpf_stats_enabled)");
		bp_prom_sample(m, NULL, 0, a->bpf_run_s);
	}
	/* which programs the cost is in: the switches', the samples', the IO's */
	if (a->bpf_run_s >= 0 && a->nr_progs) {
		bp_prom_family(m, "boundprof_agent_bpf_program_seconds_total", BP_PROM_COUNTER,
			       "Run time of each of the agent's BPF programs");
		for (i = 0; i < a->nr_progs; i++)
			bp_prom_sample(m, (struct bp_prom_label[]){ { "program", a->progs[i].name } },
				       1, a->progs[i].ns / 1e9);
		bp_prom_family(m, "boundprof_agent_bpf_program_runs_total", BP_PROM_COUNTER,
			       "Runs of each of the agent's BPF programs");
		for (i = 0; i < a->nr_progs; i++)
			bp_prom_sample_u64(m,
					   (struct bp_prom_label[]){ { "program", a->progs[i].name } },
					   1, a->progs[i].runs);
	}
	scalar_u64(m, "boundprof_agent_resident_bytes", BP_PROM_GAUGE,
	       "Resident memory of the agent process", a->rss_bytes);
	scalar_u64(m, "boundprof_agent_windows_total", BP_PROM_COUNTER,
	       "Windows closed", a->windows);
	scalar_u64(m, "boundprof_agent_write_errors_total", BP_PROM_COUNTER,
	       "Windows that could not be written to --dir", a->write_errors);
	scalar_u64(m, "boundprof_agent_processes_known", BP_PROM_GAUGE,
	       "Processes whose facts the agent keeps", a->processes_known);
	scalar_u64(m, "boundprof_agent_processes_exited", BP_PROM_GAUGE,
	       "Processes that exited whose facts the agent still keeps, for their last window",
	       a->processes_exited);
	scalar_u64(m, "boundprof_agent_processes_forgotten_total", BP_PROM_COUNTER,
	       "Processes whose facts the agent dropped after they exited", a->processes_forgotten);
	scalar_u64(m, "boundprof_agent_process_exits_total", BP_PROM_COUNTER,
	       "Exits the agent noticed of processes whose facts it kept", a->process_exits);
	bp_prom_family(m, "boundprof_agent_process_facts_total", BP_PROM_COUNTER,
		       "Processes whose facts (name, start, command line, user, cgroups) the agent "
		       "took, by source: the exec event, /proc files, the parent's, or the first "
		       "sample's event of a process gone before the agent looked");
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "source", "exec" } }, 1, a->facts_exec);
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "source", "proc" } }, 1, a->facts_proc);
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "source", "fork" } }, 1, a->facts_fork);
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "source", "gone" } }, 1, a->facts_gone);
	bp_prom_family(m, "boundprof_agent_process_maps_total", BP_PROM_COUNTER,
		       "New processes whose memory maps the agent took, by source: /proc while "
		       "they lived, or the mappings BPF walked at their exit when they were gone");
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "source", "proc" } }, 1, a->maps_proc);
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "source", "exit" } }, 1, a->maps_exit);
	scalar_u64(m, "boundprof_agent_symbolizer_processes", BP_PROM_GAUGE,
	       "Processes whose memory maps the symbolizer holds", a->sym_processes);
	scalar_u64(m, "boundprof_agent_symbolizer_files", BP_PROM_GAUGE,
	       "ELF files the symbolizer holds (in use, or idle and capped)", a->sym_files);
	scalar_u64(m, "boundprof_agent_symbolizer_name_bytes", BP_PROM_GAUGE,
	       "Memory of the symbolizer's interned function names", a->sym_string_bytes);
	bp_prom_family(m, "boundprof_agent_files_without_lines_total", BP_PROM_COUNTER,
		       "ELF files named without source lines or inlined frames, by reason: their "
		       "DWARF did not fit the budget, or is a distribution's debug package's");
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "reason", "budget" } }, 1,
			   a->sym_lines_budget);
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "reason", "distribution_debug" } }, 1,
			   a->sym_lines_distro);
	scalar_u64(m, "boundprof_agent_bpf_map_bytes", BP_PROM_GAUGE,
	       "Kernel memory of the agent's BPF maps: the kernel's charge for them (memlock), "
	       "and the threads' storage elements that charge leaves out", a->map_bytes);
	scalar_u64(m, "boundprof_agent_bpf_thread_storage_bytes", BP_PROM_GAUGE,
		   "Of boundprof_agent_bpf_map_bytes: one storage element for every thread "
		   "followed, as the last task walk counted them, times its slab object",
		   a->tls_bytes);
	if (a->unwind) {
		bp_prom_family(m, "boundprof_agent_unwind_bytes", BP_PROM_GAUGE,
			       "Kernel memory of the native unwind tables, by part");
		bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "part", "budget" } }, 1,
				   a->unwind_budget);
		bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "part", "allocated" } }, 1,
				   a->unwind_kernel);
		bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "part", "used" } }, 1,
				   a->unwind_used);
		bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "part", "processes" } }, 1,
				   a->unwind_procs);
		scalar_u64(m, "boundprof_agent_unwind_files", BP_PROM_GAUGE,
			   "Files whose unwind table is loaded", a->unwind_files);
	}
	bp_prom_family(m, "boundprof_agent_drains_total", BP_PROM_COUNTER,
		       "Drains of the BPF maps: when they fill, a process is busy or a window "
		       "ends (interval), and early when a sampled Python or R execs (exec)");
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "reason", "interval" } }, 1,
			   a->drains - a->exec_drains);
	bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "reason", "exec" } }, 1, a->exec_drains);
	scalar_u64(m, "boundprof_agent_busy_drains_skipped_total", BP_PROM_COUNTER,
		   "Drains a busy process would have made for the memory probe, skipped: "
		   "every busy process was too small to probe", a->busy_explained);
	scalar_u64(m, "boundprof_agent_exec_images_kept_total", BP_PROM_COUNTER,
		   "Execs of sampled processes whose old image's maps were kept to name its "
		   "samples at the next drain, instead of a drain at the exec", a->exec_images_kept);
	scalar_u64(m, "boundprof_agent_http_requests_total", BP_PROM_COUNTER,
	       "HTTP requests answered", a->http_requests);
	scalar_u64(m, "boundprof_agent_http_errors_total", BP_PROM_COUNTER,
	       "HTTP requests answered with an error status", a->http_errors);
	scalar_u64(m, "boundprof_agent_http_connections", BP_PROM_GAUGE,
	       "Open HTTP connections", a->http_connections);
	bp_prom_family(m, "boundprof_agent_http_rejected_total", BP_PROM_COUNTER,
		       "HTTP connections or requests refused, by reason");
	for (i = 0; i < BP_HTTP_REJECT__MAX; i++)
		bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "reason", rejects[i] } }, 1,
				   a->http_rejected[i]);
	scalar_u64(m, "boundprof_agent_http_evicted_total", BP_PROM_COUNTER,
	       "Idle HTTP connections closed to make room for a new one", a->http_evicted);
	bp_prom_family(m, "boundprof_agent_http_timeouts_total", BP_PROM_COUNTER,
		       "HTTP connections closed or answered at a deadline, by phase");
	for (i = 0; i < BP_HTTP_TIMEOUT__MAX; i++)
		bp_prom_sample_u64(m, (struct bp_prom_label[]){ { "phase", phases[i] } }, 1,
				   a->http_timeouts[i]);
}

int bp_metrics_write(struct bp_buf *out, const struct bp_profile *win, const struct bp_summary *s,
		     uint32_t top, const struct bp_dev_totals *devs, uint32_t nr_devs,
		     const struct bp_agent_self *self)
{
	struct bp_prom m;

	bp_prom_init(&m, out);
	if (win && s) {
		bp_prom_family(&m, "boundprof_window_seconds", BP_PROM_GAUGE,
			       "Length of the last closed window");
		bp_prom_sample(&m, NULL, 0, (win->end_ns - win->start_ns) / 1e9);
		bp_prom_family(&m, "boundprof_window_end_timestamp_seconds", BP_PROM_GAUGE,
			       "When the last closed window ended (Unix time)");
		bp_prom_sample(&m, NULL, 0,
			       (win->start_unix_ns + (int64_t)(win->end_ns - win->start_ns)) / 1e9);
		bp_prom_family(&m, "boundprof_cpu_busy_ratio", BP_PROM_GAUGE,
			       "Share of all CPU time busy in the last window");
		bp_prom_sample(&m, NULL, 0, s->busy_frac);
		if (processes(&m, win, s, top) || groups(&m, win, s, top))
			return -ENOMEM;
		pressure(&m, win);
	}
	devices(&m, devs, nr_devs);
	self_metrics(&m, self);
	return bp_prom_finish(&m);
}
