// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/classify.h"
#include "analyze/syscalls.h"
#include "analyze/turns.h"
#include "model/wait_class.h"
#include "proc/probecal.h"

/* see docs/classification.md for where each number comes from */
const struct bp_thresholds bp_default_thresholds = {
	.min_wall_s = 0.2,
	.min_busy_s = 1.0,
	.min_samples = 200,
	.idle_sleep = 0.8,
	.idle_max_cpu = 0.05,
	.io = 0.5,
	.lock = 0.3,
	.gil = 0.3,
	.runqueue = 0.2,
	.compute = 0.6,
	.fault = 0.3,
	.wss_llc = 4.0,
	.wss_llc_medium = 8.0,
	.wss_rss = 0.5,
	.fits_llc = 1.0,
	.membw_traffic = 0.2,
	/* working windows see 0.5-0.7 of a stream, a blind one 0-0.02 */
	.window_visible = BP_PROBECAL_VISIBLE_MIN,
	.peer = 0.5,
	.ipc_cpu = 1.0,
	.mpki_cpu = 1.0,
	.ipc_mem = 0.7,
	.mpki_mem = 10.0,
	.busy_machine = 0.9,
	.borderline = 0.05,
	.io_saturated_busy = 0.9,
	.io_saturated_inflight = 4.0,
	.throttled = 0.2,
	.mem_pressure = 0.1,
	.syscall = 0.5,
	.starved_busy = 0.8,
	.starved_steal = 0.1,
	.turn_share = 0.6,
	.turn_share_medium = 0.4,
	.turn_parallelism = 1.5,
	.turn_demand = 1.8,
	.turn_sibling = 0.8,
};

#define CLASS_NAME(id, name, ...)	[BP_CLASS_##id] = name,
static const char *const class_names[BP_CLASS__MAX] = { BP_VERDICT_CLASSES(CLASS_NAME) };
#define CLASS_COLOUR(id, name, colour, ...)	[BP_CLASS_##id] = colour,
static const char *const class_colours[BP_CLASS__MAX] = { BP_VERDICT_CLASSES(CLASS_COLOUR) };

const char *bp_class_name(enum bp_class c)
{
	return c < BP_CLASS__MAX ? class_names[c] : "unknown";
}

const char *bp_class_colour(enum bp_class c)
{
	return class_colours[c < BP_CLASS__MAX ? c : BP_CLASS_UNKNOWN];
}

int bp_class_find(const char *name)
{
	int c;

	for (c = 0; c < BP_CLASS__MAX; c++)
		if (!strcmp(name, class_names[c]))
			return c;
	return -ENOENT;
}

const char *bp_confidence_name(enum bp_confidence c)
{
	return c == BP_CONF_HIGH ? "high" : c == BP_CONF_MEDIUM ? "medium" : "low";
}

double bp_amdahl(double w, double k)
{
	double rest;

	if (w <= 0)
		return 1.0;
	if (w > 1)
		w = 1;
	rest = 1 - w + (k > 0 ? w / k : 0);
	return rest > 1e-9 ? 1 / rest : INFINITY;
}

/*
 * At least this share of the user's function's time beneath it, in code it
 * does not own: the lever is that code's use, not the function's own loop.
 */
#define OWN_BENEATH		0.5

/* a verdict being decided: its lines at full size until it is packed */
struct build {
	struct bp_verdict v;
	char ev[BP_VERDICT_LINES][BP_VERDICT_LEN];
	char lv[BP_VERDICT_LINES][BP_VERDICT_LEN];
};

#define BUILD(vp) ((struct build *)((char *)(vp) - offsetof(struct build, v)))

static void add_line(char (*lines)[BP_VERDICT_LEN], uint32_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_line(char (*lines)[BP_VERDICT_LEN], uint32_t *n, const char *fmt, ...)
{
	va_list ap;

	if (*n >= BP_VERDICT_LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(lines[*n], BP_VERDICT_LEN, fmt, ap);
	va_end(ap);
	(*n)++;
}

/* only ever used on the v of a struct build (see decide()) */
#define EVIDENCE(...) add_line(BUILD(v)->ev, &v->nr_evidence, __VA_ARGS__)
#define LEVER(...) add_line(BUILD(v)->lv, &v->nr_levers, __VA_ARGS__)

static double pct(double f)
{
	return f * 100;
}

/* what the timeline's seconds are shares of: the summed processes' wall time, or the wall */
static double tlw(const struct bp_evidence *e)
{
	return e->tl_wall_s > 0 ? e->tl_wall_s : e->wall_s;
}

static void mib(char *buf, size_t len, double bytes)
{
	if (bytes >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
	else
		snprintf(buf, len, "%.0f MiB", bytes / (1024.0 * 1024));
}

/* past 100x the digits mean nothing: the rest of the run is noise */
static void speedup(char *buf, size_t len, double s)
{
	if (isinf(s) || s > 100)
		snprintf(buf, len, "more than 100x");
	else
		snprintf(buf, len, "%.2fx", s);
}

/*
 * Why code has no name, and how to get one, by where it is: JIT code
 * without a perf map, an address outside any file, a file without symbols.
 */
static const char *unnamed_why(const char *module, char *buf, size_t len)
{
	if (!strncmp(module, "[anon", 5) || !strncmp(module, "memfd:", 6) ||
	    !strncmp(module, "//anon", 6))
		return "code generated at run time (a JIT) without a perf map: run the runtime "
		       "with its perf map on (node --perf-basic-prof; java "
		       "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, or perf-map-agent) "
		       "and boundprof reads the names from /tmp/perf-PID.map";
	if (module[0] == '[')
		return "an address outside any file: code generated at run time (a perf map "
		       "names it) or a stack walk gone astray (build with -fno-omit-frame-pointer "
		       "or keep unwind tables)";
	snprintf(buf, len, "%s has no symbols for it: install its debug symbols (the -dbgsym "
		 "or -debuginfo package), or build it with -g and without -s",
		 strrchr(module, '/') ? strrchr(module, '/') + 1 : module);
	return buf;
}

static enum bp_confidence drop(enum bp_confidence c)
{
	return c == BP_CONF_HIGH ? BP_CONF_MEDIUM : BP_CONF_LOW;
}

/* the sentence for how the wall time went, from the merged timeline */
static void timeline_evidence(const struct bp_evidence *e, struct bp_verdict *v)
{
	int best = 0, i;

	if (!e->have_timeline || e->wall_s <= 0)
		return;
	for (i = 1; i < BP_TS__MAX; i++)
		if (e->tl_s[i] > e->tl_s[best])
			best = i;
	if (best == BP_TS_RUNNING)
		EVIDENCE("%.0f%% of wall time on-CPU across %u thread%s (%.2f of %u CPUs used)",
			 pct(e->tl_s[best] / tlw(e)), e->threads, e->threads == 1 ? "" : "s",
			 v->parallelism, e->ncpus);
	else if (best == BP_TS_RUNQUEUE && v->handoff_s > 0)
		EVIDENCE("%.0f%% of wall time waiting for a CPU, mostly right after wakeups while "
			 "CPUs sat idle", pct(e->tl_s[best] / tlw(e)));
	else
		EVIDENCE("%.0f%% of wall time %s", pct(e->tl_s[best] / tlw(e)),
			 bp_wclass_of_state(best)->verdict);
}

/* the timeline sentence, unless the verdict says the same thing in more detail */
static void timeline_unless(const struct bp_evidence *e, struct bp_verdict *v, int state)
{
	int best = 0, i;

	if (!e->have_timeline || e->wall_s <= 0)
		return;
	for (i = 1; i < BP_TS__MAX; i++)
		if (e->tl_s[i] > e->tl_s[best])
			best = i;
	if (best != state)
		timeline_evidence(e, v);
}

static void io_detail(const struct bp_evidence *e, char *buf, size_t len)
{
	if (!e->io_valid || !e->io_ops) {
		buf[0] = '\0';
		return;
	}
	snprintf(buf, len, " (%s: %.0f KiB %s, p50 %.2f ms, p99 %.2f ms)", e->io_dev,
		 e->io_req_kib, e->io_reads ? "reads" : "writes", e->io_p50_ms, e->io_p99_ms);
}

/*
 * The cgroup's memory limit, when its events or the pressure say it drives
 * the faults: reclaim evicts pages the work needs, and they come back as
 * page-fault IO. True when it said so.
 */
static bool mem_limit_lines(const struct bp_evidence *e, const struct bp_thresholds *t,
			    struct bp_verdict *v)
{
	double some = e->psi_valid ? e->psi_some[1] : 0;
	char lim[64], what[96];

	if (!e->mem_limit_valid || !e->mem_at || (!e->mem_events && some < t->mem_pressure))
		return false;
	mib(lim, sizeof(lim), (double)(e->mem_max != UINT64_MAX ? e->mem_max : e->mem_high));
	snprintf(what, sizeof(what), "%s %s", e->mem_v1 ? "memory.limit_in_bytes" :
		 e->mem_max != UINT64_MAX ? "memory.max" : "memory.high", lim);
	EVIDENCE("the memory limit of cgroup %s (%s) drives it: %" PRIu64 " times at the limit%s, "
		 "memory pressure %.0f%% of the time; reclaim evicts pages it still needs and they "
		 "come back as page-fault IO", e->mem_at, what, e->mem_events,
		 e->mem_oom_kill ? ", processes OOM-killed" : "", pct(some));
	LEVER("Raise the cgroup's memory limit above the working set (%s; systemd MemoryMax= or "
	      "MemoryHigh=, docker --memory, kubernetes limits.memory), or shrink the working "
	      "set: the IO re-reads what the limit evicted", what);
	return true;
}

static void classify_throttled(const struct bp_evidence *e, const struct bp_thresholds *t,
			       struct bp_verdict *v)
{
	double share = e->throttle_window_s > 0 ? e->throttled_s / e->throttle_window_s : 0;
	double cpus = e->quota_valid && e->period_us ? (double)e->quota_us / e->period_us : 0;
	char cap[32];

	(void)t;
	v->cls = BP_CLASS_THROTTLED;
	v->conf = e->quota_valid && e->throttled_s > 0 ? BP_CONF_HIGH : BP_CONF_MEDIUM;
	EVIDENCE("%.0f%% of busy thread-time waiting out its CPU quota: %.2f s throttled in the "
		 "run queue, %.2f s running", pct(v->share_throttled), e->throttled_rq_s, e->on_s);
	if (e->quota_valid)
		EVIDENCE("quota of cgroup %s: %.2f CPUs (%s %" PRId64 " per %" PRIu64 " us); "
			 "throttled %.2f s of %.2f s (%.0f%% of the time), in %" PRIu64 " of %"
			 PRIu64 " periods", e->quota_at ? e->quota_at : "?", cpus,
			 e->quota_v1 ? "cpu.cfs_quota_us" : "cpu.max", e->quota_us, e->period_us,
			 e->throttled_s, e->throttle_window_s, pct(share), e->nr_throttled,
			 e->nr_periods);
	if (e->rq_s - e->throttled_rq_s >= 0.005)
		EVIDENCE("the rest of its run-queue time, %.2f s, is contention for the CPUs",
			 e->rq_s - e->throttled_rq_s);
	v->wait_class = BP_CLASS_THROTTLED;
	v->wait_share = v->share_throttled;
	v->wait_cap = bp_amdahl(v->wait_share, 0);
	speedup(cap, sizeof(cap), v->wait_cap);
	if (e->quota_valid)
		LEVER("Raise the quota: it gets %.2f CPUs and used %.2f, waiting the rest of each "
		      "period (cpu.max, systemd CPUQuota=, docker --cpus, kubernetes limits.cpu); "
		      "no throttling at all gives at most %s", cpus, v->parallelism, cap);
	else
		LEVER("Raise the CPU quota of its cgroup (cpu.max, systemd CPUQuota=, docker "
		      "--cpus, kubernetes limits.cpu): no throttling at all gives at most %s", cap);
	if (e->hot_name && e->hot_frac > 0)
		LEVER("Or cut the work: every CPU-second saved is a throttled wait saved; start "
		      "with %s", e->hot_name);
	else
		LEVER("Or cut the work: every CPU-second saved is a throttled wait saved");
	LEVER("More threads make it worse: they share the one quota, use it up sooner in each "
	      "period and then all wait");
}

static void classify_io(const struct bp_evidence *e, const struct bp_thresholds *t,
			struct bp_verdict *v)
{
	bool saturated = e->io_valid && e->dev_busy >= t->io_saturated_busy &&
			 e->dev_inflight >= t->io_saturated_inflight;
	double wall_io = e->have_timeline && e->wall_s > 0 ? e->tl_s[BP_TS_IO] / tlw(e) : 0;
	char detail[160], cap[32];

	v->cls = BP_CLASS_IO;
	v->conf = BP_CONF_HIGH;
	io_detail(e, detail, sizeof(detail));
	if (wall_io > 0)
		EVIDENCE("%.0f%% of wall time waiting on block IO%s", pct(wall_io), detail);
	EVIDENCE("%.0f%% of busy thread-time is IO: %.2f s waiting, %.2f s on-CPU submitting it",
		 pct(v->share_io), e->io_s, e->on_s * e->frac_io_path);
	if (e->io_valid)
		EVIDENCE("device %s busy %.0f%% of the time, %.1f requests in flight on average",
			 e->io_dev, pct(e->dev_busy), e->dev_inflight);
	v->wait_class = BP_CLASS_IO;
	v->wait_share = wall_io > 0 ? wall_io : v->share_io;
	v->wait_cap = bp_amdahl(v->wait_share, 0);
	speedup(cap, sizeof(cap), v->wait_cap);
	mem_limit_lines(e, t, v);
	if (saturated) {
		LEVER("The device is saturated (busy %.0f%%, %.1f requests in flight): issue less IO "
		      "(cache what is re-read, compress, read only what is needed) or use faster "
		      "storage; more concurrency will not help", pct(e->dev_busy), e->dev_inflight);
	} else {
		LEVER("Overlap the waits: keep several requests in flight (threads, async IO, "
		      "io_uring, prefetch/read-ahead)%s; overlapping all IO waits gives at most %s",
		      e->io_valid && e->dev_inflight < 1.5 ? " — it had about one at a time" : "",
		      cap);
		if (e->io_valid && !e->io_reads && e->io_flushes * 4 >= e->io_ops)
			LEVER("Sync less often: %" PRIu64 " cache flushes for %" PRIu64 " requests mean "
			      "an fsync after nearly every write; batch writes per fsync (group commit) "
			      "and sync only where durability needs it", e->io_flushes, e->io_ops);
		if (e->io_valid && e->io_req_kib > 0 && e->io_req_kib < 64)
			LEVER("Batch small requests into larger ones: they average %.0f KiB; "
			      "fewer, bigger requests amortize the per-request latency",
			      e->io_req_kib);
		LEVER("A faster CPU will not help: the time goes to waiting");
	}
}

static void bytes(char *buf, size_t len, double b)
{
	if (b >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.1f GiB", b / (1024.0 * 1024 * 1024));
	else if (b >= 1024.0 * 1024)
		snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
	else if (b >= 1024)
		snprintf(buf, len, "%.1f KiB", b / 1024);
	else
		snprintf(buf, len, "%.0f B", b);
}

/* the client side's share of the timeline's network time */
static double net_work_frac(const struct bp_evidence *e)
{
	double all = e->net_s + e->net_idle_s;

	return all > 0 ? e->net_s / all : 1;
}

/* io-bound on the network: round trips to a remote dependency */
static void classify_net(const struct bp_evidence *e, struct bp_verdict *v)
{
	double wall_net = e->have_timeline && e->wall_s > 0 ?
				  e->tl_s[BP_TS_NET] * net_work_frac(e) / tlw(e) : 0;
	char cap[32], peers[160] = "", rtt[96] = "", rx[32], tx[32];

	v->cls = BP_CLASS_IO;
	v->conf = BP_CONF_HIGH;
	if (e->net_peer)
		snprintf(peers, sizeof(peers), ": %s%s", e->net_peer,
			 e->net_peers > 1 ? " and others" : "");
	if (e->net_waits)
		snprintf(rtt, sizeof(rtt), ", %" PRIu64 " round trip%s, p50 %.1f ms", e->net_waits,
			 e->net_waits == 1 ? "" : "s", e->net_p50_ms);
	if (wall_net > 0)
		EVIDENCE("%.0f%% of wall time waiting on the network%s%s", pct(wall_net), peers, rtt);
	else
		EVIDENCE("%.0f%% of busy thread-time waiting on the network%s%s", pct(v->share_net),
			 peers, rtt);
	if (e->net_waits)
		EVIDENCE("%.2f s over %" PRIu64 " waits on its peers (p50 %.1f ms, p99 %.1f ms per "
			 "wait); %u peer%s", e->net_wait_s, e->net_waits, e->net_p50_ms,
			 e->net_p99_ms, e->net_peers, e->net_peers == 1 ? "" : "s");
	if (e->net_rx || e->net_tx) {
		bytes(rx, sizeof(rx), e->net_rx);
		bytes(tx, sizeof(tx), e->net_tx);
		EVIDENCE("received %s and sent %s over TCP%s", rx, tx,
			 e->net_waits ? "" : " (no round trip seen)");
	}
	v->wait_class = BP_CLASS_IO;
	v->wait_net = true;
	v->wait_share = wall_net > 0 ? wall_net : v->share_net;
	v->wait_cap = bp_amdahl(v->wait_share, 0);
	speedup(cap, sizeof(cap), v->wait_cap);
	LEVER("Overlap the round trips: issue requests concurrently (threads, asyncio, a "
	      "connection pool); overlapping all network waits gives at most %s", cap);
	if (e->net_waits > 1)
		LEVER("Batch requests: fewer, larger ones (a bulk API, pipelining) pay the %.1f ms "
		      "round trip fewer than %" PRIu64 " times", e->net_p50_ms, e->net_waits);
	else
		LEVER("Batch requests: fewer, larger ones pay the round trip fewer times");
	LEVER("Cache what is fetched again, close to where it is used");
	LEVER("A faster CPU will not help: the time goes to waiting on %s",
	      e->net_peer ? e->net_peer : "the network");
}

/* most of its time waiting on a neighbour through a pipe */
static void classify_peer(const struct bp_evidence *e, struct bp_verdict *v, double share)
{
	const char *who = e->peer_comm && *e->peer_comm ? e->peer_comm : "its neighbour";
	bool in = e->peer_dir != BP_DIR_OUT;

	v->cls = BP_CLASS_PEER;
	v->conf = e->peer_pid ? BP_CONF_HIGH : BP_CONF_MEDIUM;
	v->peer_pid = e->peer_pid;
	v->peer_dir = e->peer_dir;
	v->peer_share = share;
	snprintf(v->peer_comm, sizeof(v->peer_comm), "%s", e->peer_comm ? e->peer_comm : "");
	if (e->peer_pid)
		EVIDENCE("%.0f%% of wall time waiting on %s (pid %u) through a pipe: %s", pct(share),
			 who, e->peer_pid, in ? "for its input" : "for room for its output");
	else
		EVIDENCE("%.0f%% of wall time waiting on another process through a pipe: %s",
			 pct(share), in ? "for its input" : "for room for its output");
	if (e->pipeline)
		EVIDENCE("a stage of %s", e->pipeline);
	v->wait_class = BP_CLASS_PEER;
	v->wait_share = share;
	LEVER("Nothing to speed up inside it: it runs at the pace of %s. Make %s faster first "
	      "(its own verdict says how)", who, who);
	if (in)
		LEVER("Or run several copies of the slower side on parts of the input "
		      "(split, xargs -P, GNU parallel), if the work can be split");
}

static void classify_lock(const struct bp_evidence *e, struct bp_verdict *v)
{
	v->cls = BP_CLASS_LOCK;
	v->conf = BP_CONF_HIGH;
	EVIDENCE("%u threads spent %.2f s waiting on locks against %.2f s on-CPU "
		 "(%.0f%% of busy thread-time)", e->threads, e->lock_s, e->on_s,
		 pct(v->share_lock));
	EVIDENCE("achieved parallelism %.2f of %u CPUs with %u threads", v->parallelism,
		 e->ncpus, e->threads);
	v->wait_class = BP_CLASS_LOCK;
	v->wait_share = v->share_lock;
	LEVER("Shrink the critical section: hold the lock only around the shared update, "
	      "do the work outside it");
	LEVER("Shard the contended state: per-thread or per-key locks, or thread-local results "
	      "merged at the end");
	LEVER("More threads make it worse: they add waiting, not throughput (%.2f CPUs used "
	      "by %u threads)", v->parallelism, e->threads);
}

/*
 * Threads taking turns on one lock (analyze/turns.h): lock-bound whatever
 * each thread's lock share, which an unfair mutex swings between runs.
 */
static void classify_turns(const struct bp_evidence *e, const struct bp_thresholds *t,
			   struct bp_verdict *v, int conf, double share)
{
	uint32_t n = e->turn_threads;
	char where[200] = "";

	v->cls = BP_CLASS_LOCK;
	v->conf = conf;
	v->turn_share = share;
	v->serial_share = e->wall_s > 0 ? e->turn_s / e->wall_s : 0;
	if (e->lock_site[0])
		snprintf(where, sizeof(where), " (taken in %s)", e->lock_site);
	EVIDENCE("%u threads take turns on one lock%s: %.0f%% of the time two or more wanted to "
		 "run, one ran while the others waited for the lock (%.2f of %.2f s)", n, where,
		 pct(share), e->turn_s, e->want_s);
	EVIDENCE("achieved parallelism %.2f of %u CPUs: %.2f s on-CPU, %.2f s waiting on the "
		 "lock, %.2f s woken and waiting for a CPU", v->parallelism, e->ncpus, e->on_s,
		 e->lock_s, e->rq_s);
	if (e->sibling_wake >= 0)
		EVIDENCE("%.0f%% of the lock-wait time ended when one of its own threads released "
			 "the lock", pct(e->sibling_wake));
	if (v->share_rq >= t->runqueue && e->machine_busy >= t->busy_machine)
		EVIDENCE("the CPUs were %.0f%% busy too (other processes used %.2f CPU-seconds): "
			 "with free CPUs the lock would still let one thread run at a time",
			 pct(e->machine_busy), e->others_cpu_s);
	v->wait_class = BP_CLASS_LOCK;
	v->wait_share = v->share_lock;
	LEVER("%u threads take turns on one lock%s: %.2f of %u CPUs used. Shorten the critical "
	      "section (move work outside the lock), or split the lock or the data (shard, or "
	      "accumulate per thread and merge at the end). More threads will not help.", n, where,
	      v->parallelism, e->ncpus);
}

/*
 * The GIL's share of the threads' busy time, leaving out their waits for a
 * CPU: on a busy machine the holder waits for a CPU and everyone queues
 * longer, but one thread at a time still runs Python. That limit is the
 * program's own; the queueing is the machine's, and said as well.
 */
static double gil_share(const struct bp_evidence *e)
{
	double busy = e->on_s + e->io_s + e->lock_s + e->other_s;

	return busy > 0 ? e->gil_s / busy : 0;
}

static void classify_gil(const struct bp_evidence *e, const struct bp_thresholds *t,
			 struct bp_verdict *v)
{
	char hot[BP_VERDICT_LEN];

	v->cls = BP_CLASS_GIL;
	v->conf = BP_CONF_HIGH;
	EVIDENCE("%u threads of Python %s waited %.2f s for the GIL against %.2f s on-CPU "
		 "(%.0f%% of busy thread-time)", e->threads, e->python ? e->python : "?", e->gil_s,
		 e->on_s, pct(v->share_gil));
	if (e->gil_threads[0])
		EVIDENCE("waiting for the GIL, of each thread's time: %s", e->gil_threads);
	EVIDENCE("achieved parallelism %.2f of %u CPUs with %u threads: the GIL lets one thread "
		 "run Python at a time", v->parallelism, e->ncpus, e->threads);
	if (v->share_rq >= t->runqueue)
		EVIDENCE("it also waited %.2f s for a CPU (%.0f%% of busy thread-time): the machine "
			 "is busy too", e->rq_s, pct(v->share_rq));
	v->wait_class = BP_CLASS_GIL;
	v->wait_share = v->share_gil;
	hot[0] = '\0';
	if (e->hot_name && e->py_hot)
		snprintf(hot, sizeof(hot), " (%s)", e->hot_name);
	LEVER("Run the Python work in processes, not threads: multiprocessing.Pool, "
	      "concurrent.futures.ProcessPoolExecutor or joblib give each its own interpreter "
	      "and GIL, up to %ux on %u CPUs", e->ncpus, e->ncpus);
	LEVER("Or move the hot loop%s into code that releases the GIL: NumPy on whole arrays, "
	      "Numba @njit(nogil=True), Cython with nogil, Rust via PyO3 (allow_threads)", hot);
	LEVER("More threads will not help: they only wait longer for the GIL (%.2f CPUs used "
	      "by %u threads)", v->parallelism, e->threads);
	if (e->python && !strncmp(e->python, "3.1", 3) && atoi(e->python + 2) >= 13)
		LEVER("Python 3.%d also comes as a free-threaded build (python3.%dt) without a GIL, "
		      "where these threads can run in parallel", atoi(e->python + 2),
		      atoi(e->python + 2));
}

static void classify_starved(const struct bp_evidence *e, const struct bp_thresholds *t,
			     struct bp_verdict *v)
{
	v->cls = BP_CLASS_STARVED;
	v->conf = e->machine_busy >= t->busy_machine ? BP_CONF_HIGH : BP_CONF_MEDIUM;
	EVIDENCE("%.0f%% of busy thread-time waiting for a CPU (%.2f s runnable, %.2f s running)",
		 pct(v->share_rq + v->share_throttled), e->rq_s, e->on_s);
	EVIDENCE("CPUs %.0f%% busy; other processes used %.2f CPU-seconds meanwhile",
		 pct(e->machine_busy), e->others_cpu_s);
	if (e->throttled_rq_s >= 0.005)
		EVIDENCE("besides, %.2f s waiting out the CPU quota of cgroup %s", e->throttled_rq_s,
			 e->quota_at ? e->quota_at : "?");
	v->wait_class = BP_CLASS_STARVED;
	v->wait_share = v->share_rq + v->share_throttled;
	if (e->threads > e->ncpus && e->others_cpu_s < e->on_s) {
		LEVER("It keeps %u threads runnable on %u CPUs: use at most %u worker threads; the "
		      "extra ones only queue", e->threads, e->ncpus, e->ncpus);
	} else {
		LEVER("The machine is oversubscribed, not the code slow: run it where CPUs are "
		      "free, or lower the priority of the competing work (nice, cgroup CPU limits)");
		LEVER("Pinning several busy threads or processes to the same CPU makes them take "
		      "turns: spread them over the CPUs");
	}
}

static double idle_share(const struct bp_evidence *e)
{
	if (!e->have_timeline || e->wall_s <= 0)
		return 0;
	return (e->tl_s[BP_TS_SLEEP] + e->tl_s[BP_TS_NET] * (1 - net_work_frac(e))) / tlw(e);
}

static void classify_idle(const struct bp_evidence *e, struct bp_verdict *v, double peer)
{
	double sleep = e->have_timeline && e->wall_s > 0 ? idle_share(e) : 1 - v->parallelism;

	v->cls = BP_CLASS_IDLE;
	v->conf = BP_CONF_HIGH;
	EVIDENCE("slept or waited for events %.0f%% of its %.2f s wall time, %.3f s on-CPU",
		 pct(sleep), e->wall_s, e->on_s);
	if (peer >= 0.01)
		EVIDENCE("%.0f%% waiting through pipes on processes that did next to nothing "
			 "themselves (%.3f s busy in all)", pct(peer), v->busy_s);
	if (e->net_idle_s > 0.01 && e->net_idle_s >= 0.1 * e->sleep_s)
		EVIDENCE("%.2f s of it waiting for connections or requests on the network, as a "
			 "server does", e->net_idle_s);
	LEVER("Nothing to speed up inside it: it waits for timers, input or work. If the "
	      "program is slow, look at what it waits for (the [sleep] stacks in "
	      "-o NAME.offcpu.folded) and at who should have woken it");
}

static bool has(const char *s, const char *what)
{
	return s && strstr(s, what);
}

/*
 * What to do about time inside a building block, by what it is: it is
 * already tuned, so the lever is always to use it less or better. NULL:
 * nothing more to say than to call it less.
 */
static const char *callee_hint(const struct bp_evidence *e)
{
	const char *n = e->own_callee, *m = e->own_callee_module;

	if (e->own_callee_kernel || e->own_kernel >= 0.5)
		return "make fewer system calls and page faults: buffer and batch into fewer, "
		       "larger calls, reuse memory instead of mapping fresh";
	if (has(n, "memset") || has(n, "bzero"))
		return "set fewer bytes or reuse the buffer";
	if (has(n, "memcpy") || has(n, "memmove") || has(n, "mempcpy"))
		return "copy fewer bytes: pass pointers or views, reuse the buffer";
	if (has(n, "malloc") || has(n, "free") || has(n, "calloc") || has(n, "realloc") ||
	    has(n, "_int_") || has(n, "_Znw") || has(n, "_Zdl") || has(n, "operator new") ||
	    has(n, "operator delete"))
		return "allocate less: reuse buffers, pool or arena-allocate the objects";
	if (n && !strncmp(n, "str", 3))
		return "scan fewer strings: keep their lengths, hash or intern them";
	if (m && (!strncmp(m, "libm.", 5) || !strncmp(m, "libm-", 5) || has(m, "libmvec")))
		return "compute it fewer times: hoist it out of the loop, tabulate it, or use a "
		       "cheaper formula";
	if (m && (has(m, "blas") || has(m, "lapack") || has(m, "libmkl")))
		return "call it on bigger blocks: batch small products into large ones";
	if (m && has(m, "libz"))
		return "compress less: a faster level, or compress once and reuse the result";
	return NULL;
}

/* the interpreter's how-to with the script in place of SCRIPT; returns buf */
static const char *interp_how(const struct bp_evidence *e, char *buf, size_t len)
{
	const char *how = e->interp->how, *at = strstr(how, "SCRIPT");
	const char *script = e->interp_script[0] ? e->interp_script : "-e CODE";

	if (!at)
		snprintf(buf, len, "%s", how);
	else
		snprintf(buf, len, "%.*s%s%s", (int)(at - how), how, script, at + 6);
	return buf;
}

/* whose the time is, and what can be seen of the script meanwhile */
static void interp_lines(const struct bp_evidence *e, struct bp_verdict *v)
{
	const struct bp_interp *in = e->interp;
	const char *script = e->interp_script[0] ? e->interp_script : "code from its command line";

	if (in->perf_map)
		EVIDENCE("the time is in the %s runtime running %s and the code it compiled, "
			 "which has no perf map: boundprof cannot see its %s %s", in->binary,
			 script, in->lang, in->units);
	else
		EVIDENCE("the time is in the %s interpreter running %s: boundprof does not walk "
			 "%s stacks, so it cannot see the script's own %s", in->binary, script,
			 in->lang, in->units);
	if (e->interp_calls[0])
		EVIDENCE("what it can see meanwhile: %.0f%% of the on-CPU time is %s, called "
			 "from %s", pct(e->interp_calls_frac), e->interp_calls, script);
}

/* how to see the script's functions, then what to do with what can be seen */
static void interp_levers(const struct bp_evidence *e, struct bp_verdict *v)
{
	const struct bp_interp *in = e->interp;
	char how[400];

	if (in->perf_map)
		LEVER("See the %s %s first, then tune the hottest: run it with %s", in->lang,
		      in->units, interp_how(e, how, sizeof(how)));
	else
		LEVER("Find the hot %s in %s first, then tune them: boundprof cannot see them; "
		      "use %s", in->units, e->interp_script[0] ? e->interp_script :
		      "the code on its command line", interp_how(e, how, sizeof(how)));
	if (e->interp_calls[0] && e->interp_calls_frac >= 0.2)
		LEVER("Meanwhile, %s %s %.0f%% of the on-CPU time: call %s fewer times from "
		      "the script (hoist %s out of loops, cache or tabulate %s results)",
		      e->interp_calls, e->interp_calls_n > 1 ? "are" : "is",
		      pct(e->interp_calls_frac), e->interp_calls_n > 1 ? "them" : "it",
		      e->interp_calls_n > 1 ? "them" : "it", e->interp_calls_n > 1 ? "their" : "its");
}

static void hot_lines(const struct bp_evidence *e, struct bp_verdict *v)
{
	char s4[32], smax[32], why[320];

	if (e->interp) {
		interp_lines(e, v);
		return;
	}

	if (!e->hot_name || e->hot_frac <= 0)
		return;
	speedup(s4, sizeof(s4), v->hot_4x);
	speedup(smax, sizeof(smax), bp_amdahl(v->hot_wall, 0));
	if (e->hot_own && e->own_callee && e->own_beneath > 0)
		EVIDENCE("%s spends %.0f%% of its time in %s%s%s%s%s", e->hot_name,
			 pct(e->own_callee_frac), e->own_callee,
			 e->own_callee_unnamed ? "" : " (",
			 e->own_callee_unnamed ? "" : e->own_callee_module,
			 e->own_callee_unnamed ? "" : ")",
			 e->own_kernel >= 0.05 && !e->own_callee_kernel ?
			 ", largely the kernel working for it" : "");
	EVIDENCE("%s is %.0f%% of wall time%s: making it 4x faster gives at most %s, removing it %s",
		 e->hot_name, pct(v->hot_wall), e->hot_own ? " with what it calls" : "", s4, smax);
	if (e->hot_unnamed)
		EVIDENCE("the hot code has no name: %s", unnamed_why(e->hot_unnamed, why,
								       sizeof(why)));
	else if (e->hot_foreign && e->hot_module)
		EVIDENCE("%s is in %s, code the program calls but does not own (--own %s "
			 "if it does)", e->hot_name, e->hot_module, e->hot_module);
	if ((e->python || e->r_version) && e->py_hot && e->py_native > 0 && e->py_native_name[0])
		EVIDENCE("%.0f%% of its time is compiled code it calls, mostly %s",
			 pct(e->py_native), e->py_native_name);
	if (e->r_version && e->r_nosrc)
		EVIDENCE("R %s kept no source references, so its frames have no lines: run the "
			 "script with source(\"FILE.R\", keep.source = TRUE), or set "
			 "options(keep.source = TRUE) before it is parsed (Rscript FILE.R keeps none)",
			 e->r_version);
}

/* at least this share of a Python function's time inside compiled code: already compiled */
#define PY_NATIVE_SHARE		0.5

/*
 * The seeds' ladder for a Python hotspot: its time in the interpreter loop
 * wants the loop out of the interpreter (NumPy/Polars, then Numba, then an
 * extension in Rust or C); time already inside compiled code wants less
 * work, a better layout, or processes.
 */
static void python_levers(const struct bp_evidence *e, struct bp_verdict *v)
{
	bool compiled = e->py_native >= PY_NATIVE_SHARE && e->py_native_name[0];
	bool threads = e->threads > 1;

	if (!compiled) {
		LEVER("Take the hot loop out of the interpreter: %s runs as Python bytecode "
		      "(%.0f%% of its time in the interpreter loop). Vectorize it with NumPy or "
		      "Polars (whole-array operations instead of a Python loop); 4x faster there "
		      "gives %.2fx overall", e->hot_name, pct(1 - e->py_native), v->hot_4x);
		LEVER("If it does not vectorize, compile the function: Numba's @njit, or Cython");
		LEVER("For the proven hotspot, an extension in Rust (PyO3) or C");
	} else {
		LEVER("%s already spends %.0f%% of its time inside compiled code (%s): faster "
		      "Python will not help. Look at the algorithm: call it less often, on less "
		      "data, or a cheaper variant", e->hot_name, pct(e->py_native),
		      e->py_native_name);
		LEVER("Then the memory layout: contiguous arrays of a narrow dtype, no copies "
		      "between calls");
	}
	if (e->ncpus > 1)
		LEVER("Then parallelize with processes (multiprocessing, joblib): %s", threads ?
		      "Python threads share one GIL" : "one interpreter per CPU, and threads "
		      "would share one GIL");
}

/*
 * R's ladder for a hotspot in the interpreter: vectorize (whole-vector
 * operations instead of the loop), then data.table or matrix algebra
 * (BLAS), then Rcpp for the proven hotspot, then processes: R evaluates
 * on one thread. Time already in compiled code it calls (BLAS, a package's
 * C) is a building block: use it less or better, never "vectorize".
 */
static void r_levers(const struct bp_evidence *e, struct bp_verdict *v)
{
	bool compiled = e->py_native >= PY_NATIVE_SHARE && e->py_native_name[0];

	if (!compiled) {
		LEVER("Vectorize %s: %.0f%% of its time is in R's interpreter (libR), not in "
		      "compiled code it calls. Where it loops element by element, use whole-vector "
		      "operations (arithmetic on vectors, cumsum, rowSums, ifelse, vapply); 4x "
		      "faster there gives %.2fx overall", e->hot_name, pct(1 - e->py_native),
		      v->hot_4x);
		LEVER("If it does not vectorize: data.table for grouped work, or matrix algebra "
		      "(%%*%%, crossprod: BLAS) for numeric work");
		LEVER("For the proven hotspot, compiled code with Rcpp");
	} else if (e->r_native_block) {
		LEVER("%s spends %.0f%% of its time in %s, a building block tuned already: "
		      "vectorizing R will not help. Call it less often, on less data%s",
		      e->hot_name, pct(e->py_native), e->py_native_name,
		      strstr(e->py_native_name, "blas") || strstr(e->py_native_name, "lapack") ?
		      "; or on bigger blocks, through a tuned multi-threaded BLAS (OpenBLAS, "
		      "MKL) if R uses the reference one" : "");
	} else {
		LEVER("%s already spends %.0f%% of its time inside compiled code (%s): faster R "
		      "will not help. Look at the algorithm: call it less often, on less data, or "
		      "a cheaper variant", e->hot_name, pct(e->py_native), e->py_native_name);
	}
	if (e->ncpus > 1)
		LEVER("Then run it in parallel in processes: parallel::mclapply or the future "
		      "package (R evaluates on one thread)");
}

/* what this machine streams with p CPUs busy (GB/s), between the one- and n-thread runs */
static double machine_bw(const struct bp_evidence *e, double p)
{
	double n = e->membw_threads > 1 ? e->membw_threads : 1, bw;

	if (p <= 1 || n <= 1 || e->membw_n_gbs <= 0)
		return e->membw_1_gbs;
	if (p >= n)
		bw = e->membw_n_gbs;
	else
		bw = e->membw_1_gbs + (e->membw_n_gbs - e->membw_1_gbs) * (p - 1) / (n - 1);
	/* more threads never stream less: a lower n-thread figure met a busy machine */
	return bw > e->membw_1_gbs ? bw : e->membw_1_gbs;
}

/*
 * What memory does to its speed, from the best evidence there is (pure, and
 * kept in the verdict whatever the class): page faults, then hardware
 * counters, then a working set that fits the cache, then its traffic
 * against this machine's measured bandwidth; else unmeasured.
 */
/*
 * The cache a working set must fit to "fit": the reported one, or less when
 * larger sets streamed at memory speed when this machine was measured (a
 * guest is told of the host socket's whole L3, shared with other tenants).
 */
static uint64_t usable_llc(const struct bp_evidence *e)
{
	if (e->membw_valid && e->membw_cache_bytes && e->membw_cache_bytes < e->llc_bytes)
		return e->membw_cache_bytes;
	return e->llc_bytes;
}

/*
 * Whether the traffic window can see traffic here: a hypervisor can hand
 * the accessed bits back at a rate of its own (docs/memprobe.md), and a
 * stream of ours measured it. Uncalibrated (an older state file) counts as
 * seeing, as before the calibration existed.
 */
static bool window_blind(const struct bp_evidence *e, const struct bp_thresholds *t)
{
	return e->window_cal &&
	       bp_probecal_blind(e->window_visible, e->window_floor, t->window_visible);
}

/*
 * Whether its working set fits the cache it can use. A blind window sees
 * fewer of the pages touched than were (its working set is then only a
 * floor), and a guest is told of a whole host socket's cache: blind, only
 * the resident set (a ceiling) against the cache this machine was measured
 * to stream from can say "fits".
 */
static bool fits_cache(const struct bp_evidence *e, const struct bp_thresholds *t, bool blind)
{
	uint64_t llc = usable_llc(e);

	if (!e->mem_valid || !llc)
		return false;
	if (blind)
		return e->membw_valid && e->membw_cache_bytes && e->rss && e->rss < llc;
	if (e->wss_probes)
		return (double)e->wss_max < t->fits_llc * llc;
	return e->rss && e->rss < llc;
}

/*
 * Whether its working set is no larger than a set this machine was measured
 * to stream clearly faster than memory (membw.h, cache_bytes): a rate of
 * page references there is cache traffic. R's interpreter, recycling a 44
 * MiB heap at 0.27x of a memory stream's rate where 96 MiB sets streamed
 * from cache, was called memory-bandwidth-bound by its rate alone.
 */
static bool fits_measured_cache(const struct bp_evidence *e, bool blind)
{
	return !blind && e->mem_valid && e->membw_valid && e->membw_cache_bytes &&
	       e->wss_probes && e->wss_max && e->wss_max <= e->membw_cache_bytes &&
	       (!e->llc_bytes || e->wss_max < e->llc_bytes);
}

static void judge_memory(const struct bp_evidence *e, const struct bp_thresholds *t,
			 struct bp_verdict *v)
{
	bool blind = window_blind(e, t);

	v->mem_judgement = BP_MEM_UNMEASURED;
	/*
	 * Per second of CPU: what each CPU it ran on moved, against what one
	 * CPU streams here when as many stream together. A process starved
	 * of CPUs moves less per second of wall time, not per second it runs.
	 */
	if (e->traffic_valid && e->membw_valid && e->membw_1_gbs > 0 && e->traffic_per_cpu_s > 0) {
		double p = e->traffic_cpus > 1 ? e->traffic_cpus : 1;

		v->mem_traffic_gbs = e->traffic_per_cpu_s * (e->traffic_cpus > 0 ?
							     e->traffic_cpus : 1) / 1e9;
		v->mem_machine_gbs = machine_bw(e, p) * (e->traffic_cpus > 0 && e->traffic_cpus < 1 ?
							 e->traffic_cpus : 1);
		v->mem_ratio = e->traffic_per_cpu_s / 1e9 / (machine_bw(e, p) / p);
		v->mem_traffic_per_cpu_gbs = e->traffic_per_cpu_s / 1e9;
	}
	if (e->frac_fault >= t->fault) {
		v->mem_judgement = BP_MEM_FAULTS;
	} else if (e->pmu_valid) {
		bool mem = e->ipc < t->ipc_mem && e->mpki >= t->mpki_mem;

		if (!mem && !(e->ipc >= t->ipc_cpu && e->mpki < t->mpki_cpu))
			mem = e->ipc < t->ipc_mem;
		v->mem_judgement = mem ? BP_MEM_COUNTERS_MEM : BP_MEM_COUNTERS_CPU;
	} else if (!blind && v->mem_machine_gbs > 0 && !e->traffic_floor &&
		   v->mem_ratio >= t->membw_traffic && !fits_measured_cache(e, blind)) {
		/*
		 * Traffic measured as a rate (the window saw less than the whole
		 * set) outranks the cache size the CPU reports: it can be a
		 * whole host socket's, shared with other tenants. Not the one
		 * measured to stream from here.
		 */
		v->mem_judgement = BP_MEM_BANDWIDTH;
	} else if (fits_cache(e, t, blind)) {
		v->mem_judgement = BP_MEM_FITS;
	} else if (!blind && v->mem_machine_gbs > 0) {
		v->mem_judgement = v->mem_ratio >= t->membw_traffic ? BP_MEM_BANDWIDTH : BP_MEM_CPU;
	}
}

const char *bp_mem_judgement_name(uint32_t j)
{
	static const char *const names[] = {
		[BP_MEM_UNMEASURED] = "unmeasured", [BP_MEM_FITS] = "fits-cache",
		[BP_MEM_CPU] = "cpu", [BP_MEM_BANDWIDTH] = "bandwidth",
		[BP_MEM_FAULTS] = "page-faults", [BP_MEM_COUNTERS_CPU] = "cpu",
		[BP_MEM_COUNTERS_MEM] = "memory",
	};

	return j < sizeof(names) / sizeof(names[0]) ? names[j] : "unmeasured";
}

static void classify_compute(const struct bp_evidence *e, const struct bp_thresholds *t,
			     struct bp_verdict *v)
{
	char wss[32], llc[32], rss[32], why[320], usable[96] = "";
	const char *hint;
	bool mem = false, undecided = false;

	v->conf = BP_CONF_HIGH;
	hot_lines(e, v);
	mib(wss, sizeof(wss), e->wss_max);
	mib(llc, sizeof(llc), e->llc_bytes);
	mib(rss, sizeof(rss), e->rss);
	if (usable_llc(e) < e->llc_bytes) {
		char u[32];

		mib(u, sizeof(u), usable_llc(e));
		snprintf(usable, sizeof(usable), " (here only sets up to %s streamed faster than "
			 "memory)", u);
	}
	switch (v->mem_judgement) {
	case BP_MEM_FAULTS:
		mem = true;
		v->conf = BP_CONF_MEDIUM;
		EVIDENCE("%.0f%% of its on-CPU time is the kernel handling page faults "
			 "(%.0f minor faults/s): memory being mapped in, not computation",
			 pct(e->frac_fault), e->minflt_per_s);
		break;
	case BP_MEM_COUNTERS_MEM:
	case BP_MEM_COUNTERS_CPU:
		mem = v->mem_judgement == BP_MEM_COUNTERS_MEM;
		EVIDENCE("hardware counters: IPC %.2f, %.1f cache misses per 1000 instructions, "
			 ">= %.1f GB/s from memory", e->ipc, e->mpki, e->dram_gbs);
		/* between the two rules it leaned on IPC: say so */
		if (!(e->ipc < t->ipc_mem && e->mpki >= t->mpki_mem) &&
		    !(e->ipc >= t->ipc_cpu && e->mpki < t->mpki_cpu))
			v->conf = BP_CONF_MEDIUM;
		if (e->pmu_running < 0.5)
			v->conf = drop(v->conf);
		break;
	case BP_MEM_FITS:
		if (*usable)
			mib(llc, sizeof(llc), usable_llc(e));
		if (e->wss_probes && !window_blind(e, t))
			EVIDENCE("its working set (%s per second) fits in the %s last-level cache%s",
				 wss, llc, *usable ? " it can use" : "");
		else
			EVIDENCE("its whole resident memory (%s) fits in the %s last-level cache%s",
				 rss, llc, *usable ? " it can use" : "");
		break;
	case BP_MEM_BANDWIDTH:
	case BP_MEM_CPU:
		mem = v->mem_judgement == BP_MEM_BANDWIDTH;
		v->conf = BP_CONF_MEDIUM;
		if (mem)
			EVIDENCE("it moves %s%.1f GB/s per CPU through memory (re-referencing its %s "
				 "working set), %.2fx what a CPU of this machine streams (%.1f GB/s)",
				 e->traffic_floor ? "at least " : "", e->traffic_per_cpu_s / 1e9, wss,
				 v->mem_ratio, e->traffic_per_cpu_s / 1e9 / v->mem_ratio);
		if (mem && e->llc_bytes && ((e->wss_probes && e->wss_max < e->llc_bytes) ||
					    (!e->wss_probes && e->rss && e->rss < e->llc_bytes)))
			EVIDENCE("so it streams from memory although its %s %s is smaller than the "
				 "%s last-level cache the CPU reports: that cache is shared (on a "
				 "virtual machine, with the host's other tenants) or smaller than "
				 "said%s", e->wss_probes ? "working set" : "resident memory",
				 e->wss_probes ? wss : rss, llc, usable);
		else
			EVIDENCE("its memory traffic, %s%.2f GB/s per CPU, is %.2fx what a CPU of this "
				 "machine streams: memory does not set its speed", e->traffic_floor ?
				 "at least " : "", e->traffic_per_cpu_s / 1e9, v->mem_ratio);
		EVIDENCE("no hardware counters here: traffic from how fast it re-references its "
			 "pages, against a bandwidth measured on this machine (%s)",
			 e->membw_source ? e->membw_source : "?");
		break;
	default:
		v->conf = BP_CONF_MEDIUM;
		if (*usable)
			mib(llc, sizeof(llc), usable_llc(e));
		if (e->mem_valid && e->wss_probes && e->llc_bytes && window_blind(e, t)) {
			/* as likely streaming from memory as computing: say we cannot tell */
			v->conf = BP_CONF_LOW;
			undecided = true;
			/*
			 * What the blind window saw is a floor: only past the
			 * cache does it say anything; else the resident set
			 * is the size there is, against a cache never measured
			 * here when no set streamed faster than memory.
			 */
			if (e->wss_max >= usable_llc(e))
				snprintf(why, sizeof(why), "it touches %s per second, more than the "
					 "%s last-level cache%s", wss, llc,
					 *usable ? " it can use" : "");
			else if (e->membw_valid && e->membw_cache_bytes)
				snprintf(why, sizeof(why), "its resident memory (%s) is more than "
					 "the %s last-level cache%s", rss, llc,
					 *usable ? " it can use" : "");
			else
				snprintf(why, sizeof(why), "whether its resident memory (%s) fits "
					 "the %s last-level cache it reports is unknown (no cache here "
					 "was measured streaming faster than memory)", rss, llc);
			EVIDENCE("%s, but its memory traffic cannot be measured here: this machine's "
				 "accessed bits showed %.1f%% of a stream's (a %.1f GB/s stream of "
				 "ours read as %.2f GB/s), so CPU-bound and memory-bandwidth-bound "
				 "look alike", why, 100 * e->window_visible, e->window_stream_gbs,
				 e->window_seen_gbs);
		} else if (e->mem_valid && e->wss_probes && e->llc_bytes) {
			EVIDENCE("it touches %s per second, more than the %s last-level cache%s, but "
				 "%s: memory effects unmeasured", wss, llc,
				 *usable ? " it can use" : "", !e->traffic_valid ?
				 "its memory traffic was not measured" :
				 "this machine's memory bandwidth is unknown");
		} else
			EVIDENCE("memory effects unmeasured: no hardware counters and no working-set "
				 "probe");
	}
	if (e->samples < t->min_samples)
		v->conf = drop(v->conf);

	if (mem) {
		v->cls = BP_CLASS_MEMBW;
		if (v->mem_judgement == BP_MEM_FAULTS && mem_limit_lines(e, t, v)) {
			/* the limit's lever says it */
		} else if (v->mem_judgement == BP_MEM_FAULTS) {
			LEVER("Reuse buffers instead of allocating fresh memory: first touches of new "
			      "pages cost a page fault each");
			LEVER("Map memory up front (MAP_POPULATE, pre-touch) or use huge pages so fewer "
			      "faults map more");
		} else {
			LEVER("Make fewer passes over memory: fuse loops that stream the same arrays");
			LEVER("Use a denser layout (smaller types, structure of arrays) so each cache "
			      "line carries only what the loop uses");
			LEVER("Block or tile the computation so its working set fits in cache");
			LEVER("More cores help only until the memory bus saturates: measure before "
			      "adding threads");
		}
		return;
	}
	v->cls = BP_CLASS_CPU;
	if (undecided)
		LEVER("Before tuning it as computation, tell computation from memory bandwidth "
		      "by its scaling (boundprof scale -j 1,2,4 -- COMMAND): a loop bound by "
		      "memory stops gaining from workers long before it runs out of CPUs");
	if (e->python && e->py_hot && e->hot_frac > 0) {
		python_levers(e, v);
		return;
	}
	if (e->r_version && e->py_hot && e->hot_frac > 0) {
		r_levers(e, v);
		return;
	}
	if (e->interp) {
		interp_levers(e, v);
	} else if (e->hot_name && e->hot_frac > 0 && e->hot_unnamed) {
		LEVER("Get names for the hot code first, then tune it: %s",
		      unnamed_why(e->hot_unnamed, why, sizeof(why)));
	} else if (e->hot_name && e->hot_frac > 0 && e->hot_own && e->own_callee &&
		   e->own_beneath >= OWN_BENEATH && e->own_callee_unnamed) {
		LEVER("Tune %s first: %.0f%% of its time is in %s, which boundprof cannot name: "
		      "%s (4x faster there gives %.2fx overall)",
		      e->hot_name, pct(e->own_callee_frac), e->own_callee,
		      unnamed_why(e->own_callee_unnamed, why, sizeof(why)), v->hot_4x);
	} else if (e->hot_name && e->hot_frac > 0 && e->hot_own && e->own_callee &&
		   e->own_beneath >= OWN_BENEATH) {
		hint = callee_hint(e);
		LEVER("Tune %s first: %.0f%% of its time is in %s (%s), an already-optimized "
		      "building block: call it less, or on more data per call%s%s (4x faster "
		      "there gives %.2fx overall)", e->hot_name, pct(e->own_callee_frac),
		      e->own_callee, e->own_callee_module, hint ? " — " : "", hint ? hint : "",
		      v->hot_4x);
	} else if (e->hot_name && e->hot_frac > 0 && e->hot_foreign) {
		LEVER("%s (%s) is an already-optimized building block: call it less, or on more "
		      "data per call (4x less time in it gives %.2fx overall)", e->hot_name,
		      e->hot_module ? e->hot_module : "a library", v->hot_4x);
	} else {
		if (e->hot_name && e->hot_frac > 0)
			LEVER("Tune the hot code first: a better algorithm or data structure in %s "
			      "(4x faster there gives %.2fx overall)", e->hot_name, v->hot_4x);
		else
			LEVER("Tune the hot code first: a better algorithm or data structure");
		LEVER("Then make the hot loop cheaper per element: vectorize it, or compile it "
		      "(numpy/numba/Cython for Python; -O3 -march=native for C)");
	}
	if (e->threads <= 1 && e->ncpus > 1)
		LEVER("Then parallelize: it runs on one thread while %u CPUs exist; split the work "
		      "across them for up to %ux", e->ncpus, e->ncpus);
	else
		LEVER("Then parallelize further: it used %.2f of %u CPUs with %u threads",
		      v->parallelism, e->ncpus, e->threads);
}

/*
 * Most of its CPU time is the kernel doing what it asked: the cost is per
 * call, so the lever is fewer calls that each do more.
 */
static void classify_syscall(const struct bp_evidence *e, const struct bp_thresholds *t,
			     struct bp_verdict *v, double on_cpu_wall)
{
	double sys_wall = e->frac_syscall * on_cpu_wall, secs = e->wall_s > 0 ? e->wall_s : 1;
	char calls[160] = "", name[32], rb[32], wb[32], s4[32], smax[32];
	uint64_t n = e->sys_reads + e->sys_writes;
	size_t off = 0;
	int i;

	v->cls = BP_CLASS_SYSCALL;
	v->conf = e->samples >= t->min_samples ? BP_CONF_HIGH : BP_CONF_MEDIUM;
	for (i = 0; i < 3 && e->sys_top_frac[i] > 0 && off < sizeof(calls); i++)
		off += snprintf(calls + off, sizeof(calls) - off, "%s%s %.0f%%", i ? ", " : ": ",
				bp_syscall_label(e->sys_top[i], name, sizeof(name)),
				pct(e->sys_top_frac[i]));
	EVIDENCE("%.0f%% of its on-CPU time is the kernel serving its system calls%s",
		 pct(e->frac_syscall), calls);
	bytes(rb, sizeof(rb), e->sys_reads ? (double)e->sys_rbytes / e->sys_reads : 0);
	bytes(wb, sizeof(wb), e->sys_writes ? (double)e->sys_wbytes / e->sys_writes : 0);
	if (e->sys_valid)
		EVIDENCE("%" PRIu64 " read and %" PRIu64 " write calls in %.2f s (%.0f per second), "
			 "%s per read and %s per write", e->sys_reads, e->sys_writes, e->wall_s,
			 n / secs, rb, wb);
	hot_lines(e, v);
	speedup(s4, sizeof(s4), bp_amdahl(sys_wall, 4));
	speedup(smax, sizeof(smax), bp_amdahl(sys_wall, 0));
	EVIDENCE("system calls are %.0f%% of wall time: making them 4x cheaper gives at most %s, "
		 "none at all %s", pct(sys_wall), s4, smax);
	if (e->sys_valid && n && (double)(e->sys_rbytes + e->sys_wbytes) / n < 64 * 1024)
		LEVER("Make fewer, larger calls: it moves %s per read and %s per write. Buffer in "
		      "user space (stdio, a 64 KiB or larger buffer, BufReader/BufWriter, "
		      "io.BufferedReader) so each call carries a block, not a few bytes; the kernel "
		      "share caps the gain at %s", rb, wb, smax);
	else
		LEVER("Make fewer system calls: buffer and batch so each call does more work; the "
		      "kernel share caps the gain at %s", smax);
	LEVER("Batch what cannot grow: readv/writev for scattered buffers, sendmmsg/recvmmsg "
	      "for datagrams, io_uring to submit many calls at once");
	LEVER("Cache what is asked again (file contents, stat results, the time) instead of "
	      "asking the kernel each time");
	if (e->hot_own && e->hot_name)
		LEVER("Start in %s: it makes the calls", e->hot_name);
}

/* the biggest share other than the winner */
static enum bp_class runner_up(const struct bp_verdict *v, enum bp_class winner)
{
	const struct {
		enum bp_class c;
		double s;
	} s[] = {
		{ BP_CLASS_CPU, v->share_cpu }, { BP_CLASS_MEMBW, v->share_mem },
		{ BP_CLASS_IO, v->share_io + v->share_net }, { BP_CLASS_LOCK, v->share_lock },
		{ BP_CLASS_STARVED, v->share_rq }, { BP_CLASS_THROTTLED, v->share_throttled },
	};
	enum bp_class best = BP_CLASS_UNKNOWN;
	double bs = 0;
	unsigned int i;

	bool compute = winner == BP_CLASS_CPU || winner == BP_CLASS_MEMBW ||
		       winner == BP_CLASS_SYSCALL;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (s[i].c != winner && !(compute && (s[i].c == BP_CLASS_CPU || s[i].c == BP_CLASS_MEMBW)) &&
		    s[i].s > bs) {
			bs = s[i].s;
			best = s[i].c;
		}
	return best;
}

static bool near(double share, double threshold, const struct bp_thresholds *t)
{
	return share < threshold + t->borderline;
}

/*
 * Steal: the guest counted the thread as running while the host ran
 * something else on its virtual CPU. Not a class of its own (the thread
 * did want the CPU); said whatever the class, since no change to the code
 * gets that time back.
 */
static void steal_lines(const struct bp_evidence *e, struct bp_verdict *v)
{
	if (e->on_s <= 0 || e->steal_s < 0.05 || e->steal_s < 0.1 * e->on_s)
		return;
	EVIDENCE("%.0f%% of its on-CPU time (%.2f of %.2f s) the hypervisor ran something else "
		 "on its virtual CPU (steal time)", pct(e->steal_s / e->on_s), e->steal_s, e->on_s);
	LEVER("The stolen time is the host's, not the code's: on a less loaded host or a "
	      "dedicated instance the same work takes %.2f s on-CPU instead of %.2f s",
	      e->on_s - e->steal_s, e->on_s);
}

/*
 * The CPUs were busy: most of the machine's CPU time used, or the host
 * taking a good part of it. Only then is a wait after a wakeup contention:
 * on idle CPUs it is an idle CPU waking up, or the thread waiting for the
 * partner that woke it to step aside (docs/classification.md).
 */
static bool cpus_busy(const struct bp_evidence *e, const struct bp_thresholds *t)
{
	return e->machine_busy >= t->starved_busy ||
	       (e->wall_s > 0 && e->steal_s >= t->starved_steal * e->wall_s);
}

/*
 * The run-queue time that is wake-up latency: its wait after wakeups,
 * while the CPUs were not busy. A wait after a preemption is contention
 * whatever the machine did (another task took its CPU), and so is the
 * quota's part.
 */
static double handoff_time(const struct bp_evidence *e, const struct bp_thresholds *t)
{
	double thr = e->throttled_rq_s < e->rq_s ? e->throttled_rq_s : e->rq_s;
	double free = e->rq_s - (thr > 0 ? thr : 0);

	if (cpus_busy(e, t) || e->wake_lat_s <= 0 || free <= 0)
		return 0;
	return e->wake_lat_s < free ? e->wake_lat_s : free;
}

/* wake-up latency, said with the handoffs that caused it, whatever the class */
static void handoff_lines(const struct bp_evidence *e, struct bp_verdict *v)
{
	double wall = e->wall_s > 0 ? e->wall_s : 1, mean;

	if (v->handoff_s < 0.01 || v->handoff_s < 0.05 * wall || !v->handoffs)
		return;
	mean = v->handoff_s / v->handoffs * 1e3;
	EVIDENCE("%.0f%% of its time (%.2f s) is wake-up latency after %" PRIu64 " handoffs "
		 "(p50 %.2f ms, max %.2f ms) while CPUs were %.0f%% busy: not contention",
		 pct(v->handoff_s / wall > 1 ? 1 : v->handoff_s / wall), v->handoff_s, v->handoffs,
		 v->handoff_p50_ms, v->handoff_max_ms, pct(e->machine_busy));
	LEVER("Fewer handoffs: each wakeup costs it %.3f ms on average here. Pass more work per "
	      "wakeup (batch requests, fewer round trips between processes); keeping both "
	      "partners on one CPU (taskset) trades CPU time for wake-up latency", mean);
}

static void decide(const struct bp_evidence *e, const struct bp_thresholds *t,
		   struct bp_verdict *v)
{
	const double off[BP_KIND__MAX] = {
		[BP_KIND_RUNQUEUE] = e->rq_s, [BP_KIND_IO] = e->io_s, [BP_KIND_LOCK] = e->lock_s,
		[BP_KIND_SLEEP] = e->sleep_s, [BP_KIND_OTHER] = e->other_s,
		[BP_KIND_NET] = e->net_s + e->net_idle_s, [BP_KIND_PIPE] = e->pipe_s,
	};
	double busy, on_cpu_wall, peer, asleep, turns;
	int turn_conf;

	if (!t)
		t = &bp_default_thresholds;
	memset(v, 0, sizeof(*v));
	/* a pipe wait waits on another process's work (rule 2 judges it), a server's on work */
	busy = bp_busy_s(e->on_s, off, e->net_s, false);
	/* wake-up latency on idle CPUs is the handoffs' cost, not the code's: judged apart */
	v->handoff_s = handoff_time(e, t);
	if (v->handoff_s > 0) {
		v->share_handoff = busy > 0 ? v->handoff_s / busy : 0;
		v->handoffs = e->wakeups;
		v->handoff_p50_ms = e->wake_p50_ms;
		v->handoff_max_ms = e->wake_max_ms;
		busy -= v->handoff_s;
	}
	v->busy_s = busy;
	v->parallelism = e->wall_s > 0 ? e->on_s / e->wall_s : 0;
	if (busy > 0) {
		double io_cpu = e->on_s * e->frac_io_path, fault_cpu = e->on_s * e->frac_fault;

		v->share_io = (e->io_s + io_cpu) / busy;
		v->share_mem = fault_cpu / busy;
		v->share_cpu = (e->on_s - io_cpu - fault_cpu) / busy;
		double thr = e->throttled_rq_s < e->rq_s ? e->throttled_rq_s : e->rq_s;

		v->share_lock = e->lock_s / busy;
		v->share_throttled = thr > 0 ? thr / busy : 0;
		v->share_rq = (e->rq_s - (thr > 0 ? thr : 0) - v->handoff_s) / busy;
		if (v->share_rq < 0)
			v->share_rq = 0;
		v->share_other = e->other_s / busy;
		v->share_net = e->net_s / busy;
		v->share_gil = e->gil_s / busy;
	}
	v->share_syscall = e->frac_syscall;
	on_cpu_wall = e->have_timeline && e->wall_s > 0 ? e->tl_s[BP_TS_RUNNING] / tlw(e) :
							   (v->parallelism > 1 ? 1 : v->parallelism);
	v->hot_wall = e->hot_frac * on_cpu_wall;
	v->hot_4x = bp_amdahl(v->hot_wall, 4);
	judge_memory(e, t, v);

	if (e->wall_s < t->min_wall_s) {
		v->cls = BP_CLASS_UNKNOWN;
		v->conf = BP_CONF_LOW;
		EVIDENCE("only %.3f s of wall time recorded", e->wall_s);
		LEVER("Record for longer (at least a second of the work) for a verdict");
		return;
	}
	/* waiting on a neighbour through a pipe most of the time: its pace is the neighbour's */
	peer = e->wall_s <= 0 ? 0 : e->have_timeline ? e->tl_s[BP_TS_PIPE] / tlw(e) :
							e->pipe_s / e->wall_s;
	if (peer >= t->peer) {
		classify_peer(e, v, peer > 1 ? 1 : peer);
		if (near(peer, t->peer, t))
			v->conf = drop(v->conf);
		return;
	}
	/*
	 * idle: asleep nearly all the wall time. With a timeline that means no
	 * thread did anything else; without one, next to no CPU or waiting.
	 * A server waiting for connections or requests waits for work too.
	 * Several processes that wait on each other through pipes while none
	 * of them works (`sleep 1 | cat`) are idle together: their pipe waits
	 * count as sleep when what they did in all is next to nothing.
	 */
	asleep = idle_share(e);
	if (e->wall_s > 0 &&
	    ((e->have_timeline && asleep >= t->idle_sleep) ||
	     (e->have_timeline && asleep + peer >= t->idle_sleep &&
	      busy < (1 - t->idle_sleep) * e->wall_s) ||
	     (!e->have_timeline && v->parallelism < t->idle_max_cpu &&
	      busy < (1 - t->idle_sleep) * e->wall_s))) {
		classify_idle(e, v, asleep >= t->idle_sleep ? 0 : peer);
		return;
	}
	if (busy <= 0) {
		v->cls = BP_CLASS_UNKNOWN;
		v->conf = BP_CONF_LOW;
		EVIDENCE("no busy time measured");
		return;
	}

	if (v->share_io + v->share_net >= t->io) {
		if (v->share_net > v->share_io) {
			timeline_unless(e, v, BP_TS_NET);
			classify_net(e, v);
		} else {
			timeline_unless(e, v, BP_TS_IO);
			classify_io(e, t, v);
		}
		if (near(v->share_io + v->share_net, t->io, t))
			v->conf = drop(v->conf);
	} else if (gil_share(e) >= t->gil && e->threads > 1 && !e->python_free_threaded) {
		timeline_unless(e, v, BP_TS_LOCK);
		classify_gil(e, t, v);
		if (near(gil_share(e), t->gil, t))
			v->conf = drop(v->conf);
	} else if ((turn_conf = bp_turns_judge(e, t, &turns)) >= 0) {
		classify_turns(e, t, v, turn_conf, turns);
	} else if (v->share_lock >= t->lock) {
		timeline_evidence(e, v);
		classify_lock(e, v);
		if (near(v->share_lock, t->lock, t))
			v->conf = drop(v->conf);
	} else if (v->share_throttled >= t->throttled && v->share_throttled >= v->share_rq) {
		timeline_evidence(e, v);
		classify_throttled(e, t, v);
		if (near(v->share_throttled, t->throttled, t))
			v->conf = drop(v->conf);
	} else if (v->share_rq + v->share_throttled >= t->runqueue) {
		timeline_evidence(e, v);
		classify_starved(e, t, v);
		if (near(v->share_rq + v->share_throttled, t->runqueue, t))
			v->conf = drop(v->conf);
	} else if (v->share_cpu + v->share_mem >= t->compute) {
		timeline_evidence(e, v);
		/* page faults are memory's, whatever entered the kernel for them */
		if (e->frac_syscall >= t->syscall && v->mem_judgement != BP_MEM_FAULTS) {
			classify_syscall(e, t, v, on_cpu_wall);
			if (near(e->frac_syscall, t->syscall, t))
				v->conf = drop(v->conf);
		} else {
			classify_compute(e, t, v);
		}
		if (near(v->share_cpu + v->share_mem, t->compute, t))
			v->conf = drop(v->conf);
	} else {
		timeline_evidence(e, v);
		v->cls = BP_CLASS_MIXED;
		v->conf = BP_CONF_MEDIUM;
		v->second = runner_up(v, BP_CLASS_UNKNOWN);
		EVIDENCE("no single limit: CPU %.0f%%, IO %.0f%%, network %.0f%%, locks %.0f%%, run "
			 "queue %.0f%%, other waits %.0f%% of busy thread-time",
			 pct(v->share_cpu + v->share_mem), pct(v->share_io), pct(v->share_net),
			 pct(v->share_lock), pct(v->share_rq + v->share_throttled),
			 pct(v->share_other));
		hot_lines(e, v);
		LEVER("Work on the largest share first (%s), then re-measure: the limit moves",
		      bp_class_name(v->second));
	}
	if (v->cls != BP_CLASS_MIXED)
		v->second = runner_up(v, v->cls);
	if (busy < t->min_busy_s && v->cls != BP_CLASS_IDLE)
		v->conf = drop(v->conf);
	steal_lines(e, v);
	handoff_lines(e, v);
	if (e->python && e->python_free_threaded)
		EVIDENCE("Python %s is a free-threaded build: no GIL, its threads run Python in "
			 "parallel", e->python);
}

void bp_classify(const struct bp_evidence *e, const struct bp_thresholds *t, struct bp_verdict *v)
{
	struct build b;
	size_t len = 0;
	uint32_t i;
	char *p;

	decide(e, t ? t : &bp_default_thresholds, &b.v);
	*v = b.v;
	for (i = 0; i < v->nr_evidence; i++)
		len += strlen(b.ev[i]) + 1;
	for (i = 0; i < v->nr_levers; i++)
		len += strlen(b.lv[i]) + 1;
	v->text = p = malloc(len ? len : 1);
	if (!p) {
		v->nr_evidence = v->nr_levers = 0;
		return;
	}
	for (i = 0; i < v->nr_evidence; i++) {
		v->evidence[i] = p;
		p = stpcpy(p, b.ev[i]) + 1;
	}
	for (i = 0; i < v->nr_levers; i++) {
		v->levers[i] = p;
		p = stpcpy(p, b.lv[i]) + 1;
	}
}

int bp_verdict_lead(const struct bp_verdict *src, const char *lead, struct bp_verdict *dst)
{
	const char *ev[BP_VERDICT_LINES];
	uint32_t i, n = 0;
	size_t len = 0;
	char *p;

	*dst = *src;
	dst->text = NULL;
	if (lead)
		ev[n++] = lead;
	for (i = 0; i < src->nr_evidence && n < BP_VERDICT_LINES; i++)
		ev[n++] = src->evidence[i];
	for (i = 0; i < n; i++)
		len += strlen(ev[i]) + 1;
	for (i = 0; i < src->nr_levers; i++)
		len += strlen(src->levers[i]) + 1;
	dst->text = p = malloc(len ? len : 1);
	if (!p) {
		dst->nr_evidence = dst->nr_levers = 0;
		return -ENOMEM;
	}
	dst->nr_evidence = n;
	for (i = 0; i < n; i++) {
		const char *line = ev[i];

		dst->evidence[i] = p;
		p = stpcpy(p, line) + 1;
	}
	for (i = 0; i < src->nr_levers; i++) {
		dst->levers[i] = p;
		p = stpcpy(p, src->levers[i]) + 1;
	}
	return 0;
}

void bp_verdict_free(struct bp_verdict *v)
{
	if (!v)
		return;
	free(v->text);
	v->text = NULL;
	v->nr_evidence = v->nr_levers = 0;
}
