// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/classify.h"

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
	.ipc_cpu = 1.0,
	.mpki_cpu = 1.0,
	.ipc_mem = 0.7,
	.mpki_mem = 10.0,
	.busy_machine = 0.9,
	.borderline = 0.05,
	.io_saturated_busy = 0.9,
	.io_saturated_inflight = 4.0,
};

static const char *const class_names[BP_CLASS__MAX] = {
	[BP_CLASS_UNKNOWN] = "unknown",
	[BP_CLASS_CPU] = "cpu-bound",
	[BP_CLASS_MEMBW] = "memory-bandwidth-bound",
	[BP_CLASS_IO] = "io-bound",
	[BP_CLASS_LOCK] = "lock-bound",
	[BP_CLASS_STARVED] = "cpu-starved",
	[BP_CLASS_IDLE] = "idle",
	[BP_CLASS_MIXED] = "mixed",
	[BP_CLASS_GIL] = "gil-bound",
};

const char *bp_class_name(enum bp_class c)
{
	return c < BP_CLASS__MAX ? class_names[c] : "unknown";
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

static void mib(char *buf, size_t len, double bytes)
{
	if (bytes >= 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
	else
		snprintf(buf, len, "%.0f MiB", bytes / (1024.0 * 1024));
}

static void speedup(char *buf, size_t len, double s)
{
	if (isinf(s) || s > 1000)
		snprintf(buf, len, "unbounded");
	else
		snprintf(buf, len, "%.2fx", s);
}

static enum bp_confidence drop(enum bp_confidence c)
{
	return c == BP_CONF_HIGH ? BP_CONF_MEDIUM : BP_CONF_LOW;
}

/* the sentence for how the wall time went, from the merged timeline */
static void timeline_evidence(const struct bp_evidence *e, struct bp_verdict *v)
{
	static const char *const what[BP_TS__MAX] = {
		[BP_TS_RUNNING] = "on-CPU",
		[BP_TS_RUNQUEUE] = "waiting for a CPU",
		[BP_TS_IO] = "waiting on block IO",
		[BP_TS_LOCK] = "waiting on locks",
		[BP_TS_OTHER] = "in other kernel waits",
		[BP_TS_SLEEP] = "sleeping or waiting for events",
	};
	int best = 0, i;

	if (!e->have_timeline || e->wall_s <= 0)
		return;
	for (i = 1; i < BP_TS__MAX; i++)
		if (e->tl_s[i] > e->tl_s[best])
			best = i;
	if (best == BP_TS_RUNNING)
		EVIDENCE("%.0f%% of wall time on-CPU across %u thread%s (%.2f of %u CPUs used)",
			 pct(e->tl_s[best] / e->wall_s), e->threads, e->threads == 1 ? "" : "s",
			 v->parallelism, e->ncpus);
	else
		EVIDENCE("%.0f%% of wall time %s", pct(e->tl_s[best] / e->wall_s), what[best]);
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

static void classify_io(const struct bp_evidence *e, const struct bp_thresholds *t,
			struct bp_verdict *v)
{
	bool saturated = e->io_valid && e->dev_busy >= t->io_saturated_busy &&
			 e->dev_inflight >= t->io_saturated_inflight;
	double wall_io = e->have_timeline && e->wall_s > 0 ? e->tl_s[BP_TS_IO] / e->wall_s : 0;
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
		 pct(v->share_rq), e->rq_s, e->on_s);
	EVIDENCE("CPUs %.0f%% busy; other processes used %.2f CPU-seconds meanwhile",
		 pct(e->machine_busy), e->others_cpu_s);
	v->wait_class = BP_CLASS_STARVED;
	v->wait_share = v->share_rq;
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

static void classify_idle(const struct bp_evidence *e, struct bp_verdict *v)
{
	double sleep = e->have_timeline && e->wall_s > 0 ? e->tl_s[BP_TS_SLEEP] / e->wall_s :
							     1 - v->parallelism;

	v->cls = BP_CLASS_IDLE;
	v->conf = BP_CONF_HIGH;
	EVIDENCE("slept or waited for events %.0f%% of its %.2f s wall time, %.3f s on-CPU",
		 pct(sleep), e->wall_s, e->on_s);
	LEVER("Nothing to speed up inside it: it waits for timers, input or work. If the "
	      "program is slow, look at what it waits for (the [sleep] stacks in "
	      "-o NAME.offcpu.folded) and at who should have woken it");
}

static void hot_lines(const struct bp_evidence *e, struct bp_verdict *v)
{
	char s4[32], smax[32];

	if (!e->hot_name || e->hot_frac <= 0)
		return;
	speedup(s4, sizeof(s4), v->hot_4x);
	speedup(smax, sizeof(smax), bp_amdahl(v->hot_wall, 0));
	EVIDENCE("%s is %.0f%% of wall time: making it 4x faster gives at most %s, removing it %s",
		 e->hot_name, pct(v->hot_wall), s4, smax);
	if (e->python && e->py_hot && e->py_native > 0 && e->py_native_name[0])
		EVIDENCE("%.0f%% of its time is compiled code it calls, mostly %s",
			 pct(e->py_native), e->py_native_name);
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

static void classify_compute(const struct bp_evidence *e, const struct bp_thresholds *t,
			     struct bp_verdict *v)
{
	double fault = e->frac_fault;
	char wss[32], llc[32], rss[32];
	bool mem = false;

	v->conf = BP_CONF_HIGH;
	hot_lines(e, v);
	if (fault >= t->fault) {
		mem = true;
		v->conf = BP_CONF_MEDIUM;
		EVIDENCE("%.0f%% of its on-CPU time is the kernel handling page faults "
			 "(%.0f minor faults/s): memory being mapped in, not computation",
			 pct(fault), e->minflt_per_s);
	} else if (e->pmu_valid) {
		EVIDENCE("hardware counters: IPC %.2f, %.1f cache misses per 1000 instructions, "
			 ">= %.1f GB/s from memory", e->ipc, e->mpki, e->dram_gbs);
		if (e->ipc < t->ipc_mem && e->mpki >= t->mpki_mem) {
			mem = true;
		} else if (!(e->ipc >= t->ipc_cpu && e->mpki < t->mpki_cpu)) {
			/* between the two rules: lean on IPC, say so */
			mem = e->ipc < t->ipc_mem;
			v->conf = BP_CONF_MEDIUM;
		}
		if (e->pmu_running < 0.5)
			v->conf = drop(v->conf);
	} else if (e->mem_valid && e->wss_probes && e->llc_bytes) {
		double ratio = (double)e->wss_max / e->llc_bytes;

		mib(wss, sizeof(wss), e->wss_max);
		mib(llc, sizeof(llc), e->llc_bytes);
		mib(rss, sizeof(rss), e->rss);
		if (ratio >= t->wss_llc && e->rss && e->wss_max >= t->wss_rss * e->rss) {
			mem = true;
			v->conf = ratio >= t->wss_llc_medium ? BP_CONF_MEDIUM : BP_CONF_LOW;
			EVIDENCE("it touches %s of its %s resident memory every second, %.1fx the %s "
				 "last-level cache a core uses (%s): the data cannot stay in cache",
				 wss, rss, ratio, llc, e->llc_source ? e->llc_source : "?");
			EVIDENCE("no hardware counters here: this rests on the working set, not on "
				 "measured cache misses");
		} else if ((double)e->wss_max < t->fits_llc * e->llc_bytes) {
			EVIDENCE("its working set (%s per second) fits in the %s last-level cache",
				 wss, llc);
		} else {
			v->conf = BP_CONF_MEDIUM;
			EVIDENCE("it touches %s per second (%.1fx the %s cache), too little or too "
				 "slowly to say memory sets its speed", wss, ratio, llc);
		}
	} else if (e->mem_valid && e->rss && e->llc_bytes && e->rss < e->llc_bytes) {
		mib(rss, sizeof(rss), e->rss);
		mib(llc, sizeof(llc), e->llc_bytes);
		EVIDENCE("its whole resident memory (%s) fits in the %s last-level cache", rss, llc);
	} else {
		v->conf = BP_CONF_MEDIUM;
		EVIDENCE("memory effects unmeasured: no hardware counters and no working-set probe");
	}
	if (e->samples < t->min_samples)
		v->conf = drop(v->conf);

	if (mem) {
		v->cls = BP_CLASS_MEMBW;
		if (fault >= t->fault) {
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
	if (e->python && e->py_hot && e->hot_frac > 0) {
		python_levers(e, v);
		return;
	}
	if (e->hot_name && e->hot_frac > 0)
		LEVER("Tune the hot code first: a better algorithm or data structure in %s "
		      "(4x faster there gives %.2fx overall)", e->hot_name, v->hot_4x);
	else
		LEVER("Tune the hot code first: a better algorithm or data structure");
	LEVER("Then make the hot loop cheaper per element: vectorize it, or compile it "
	      "(numpy/numba/Cython for Python; -O3 -march=native for C)");
	if (e->threads <= 1 && e->ncpus > 1)
		LEVER("Then parallelize: it runs on one thread while %u CPUs exist; split the work "
		      "across them for up to %ux", e->ncpus, e->ncpus);
	else
		LEVER("Then parallelize further: it used %.2f of %u CPUs with %u threads",
		      v->parallelism, e->ncpus, e->threads);
}

/* the biggest share other than the winner */
static enum bp_class runner_up(const struct bp_verdict *v, enum bp_class winner)
{
	const struct {
		enum bp_class c;
		double s;
	} s[] = {
		{ BP_CLASS_CPU, v->share_cpu }, { BP_CLASS_MEMBW, v->share_mem },
		{ BP_CLASS_IO, v->share_io }, { BP_CLASS_LOCK, v->share_lock },
		{ BP_CLASS_STARVED, v->share_rq },
	};
	enum bp_class best = BP_CLASS_UNKNOWN;
	double bs = 0;
	unsigned int i;

	bool compute = winner == BP_CLASS_CPU || winner == BP_CLASS_MEMBW;

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

static void decide(const struct bp_evidence *e, const struct bp_thresholds *t,
		   struct bp_verdict *v)
{
	double busy, on_cpu_wall;

	if (!t)
		t = &bp_default_thresholds;
	memset(v, 0, sizeof(*v));
	busy = e->on_s + e->rq_s + e->io_s + e->lock_s + e->other_s;
	v->busy_s = busy;
	v->parallelism = e->wall_s > 0 ? e->on_s / e->wall_s : 0;
	if (busy > 0) {
		double io_cpu = e->on_s * e->frac_io_path, fault_cpu = e->on_s * e->frac_fault;

		v->share_io = (e->io_s + io_cpu) / busy;
		v->share_mem = fault_cpu / busy;
		v->share_cpu = (e->on_s - io_cpu - fault_cpu) / busy;
		v->share_lock = e->lock_s / busy;
		v->share_rq = e->rq_s / busy;
		v->share_other = e->other_s / busy;
		v->share_gil = e->gil_s / busy;
	}
	on_cpu_wall = e->have_timeline && e->wall_s > 0 ? e->tl_s[BP_TS_RUNNING] / e->wall_s :
							   (v->parallelism > 1 ? 1 : v->parallelism);
	v->hot_wall = e->hot_frac * on_cpu_wall;
	v->hot_4x = bp_amdahl(v->hot_wall, 4);

	if (e->wall_s < t->min_wall_s) {
		v->cls = BP_CLASS_UNKNOWN;
		v->conf = BP_CONF_LOW;
		EVIDENCE("only %.3f s of wall time recorded", e->wall_s);
		LEVER("Record for longer (at least a second of the work) for a verdict");
		return;
	}
	/*
	 * idle: asleep nearly all the wall time. With a timeline that means no
	 * thread did anything else; without one, next to no CPU or waiting.
	 */
	if (e->wall_s > 0 &&
	    ((e->have_timeline && e->tl_s[BP_TS_SLEEP] / e->wall_s >= t->idle_sleep) ||
	     (!e->have_timeline && v->parallelism < t->idle_max_cpu &&
	      busy < (1 - t->idle_sleep) * e->wall_s))) {
		classify_idle(e, v);
		return;
	}
	if (busy <= 0) {
		v->cls = BP_CLASS_UNKNOWN;
		v->conf = BP_CONF_LOW;
		EVIDENCE("no busy time measured");
		return;
	}

	if (v->share_io >= t->io) {
		timeline_unless(e, v, BP_TS_IO);
		classify_io(e, t, v);
		if (near(v->share_io, t->io, t))
			v->conf = drop(v->conf);
	} else if (gil_share(e) >= t->gil && e->threads > 1 && !e->python_free_threaded) {
		timeline_unless(e, v, BP_TS_LOCK);
		classify_gil(e, t, v);
		if (near(gil_share(e), t->gil, t))
			v->conf = drop(v->conf);
	} else if (v->share_lock >= t->lock) {
		timeline_evidence(e, v);
		classify_lock(e, v);
		if (near(v->share_lock, t->lock, t))
			v->conf = drop(v->conf);
	} else if (v->share_rq >= t->runqueue) {
		timeline_evidence(e, v);
		classify_starved(e, t, v);
		if (near(v->share_rq, t->runqueue, t))
			v->conf = drop(v->conf);
	} else if (v->share_cpu + v->share_mem >= t->compute) {
		timeline_evidence(e, v);
		classify_compute(e, t, v);
		if (near(v->share_cpu + v->share_mem, t->compute, t))
			v->conf = drop(v->conf);
	} else {
		timeline_evidence(e, v);
		v->cls = BP_CLASS_MIXED;
		v->conf = BP_CONF_MEDIUM;
		v->second = runner_up(v, BP_CLASS_UNKNOWN);
		EVIDENCE("no single limit: CPU %.0f%%, IO %.0f%%, locks %.0f%%, run queue %.0f%%, "
			 "other waits %.0f%% of busy thread-time", pct(v->share_cpu + v->share_mem),
			 pct(v->share_io), pct(v->share_lock), pct(v->share_rq), pct(v->share_other));
		hot_lines(e, v);
		LEVER("Work on the largest share first (%s), then re-measure: the limit moves",
		      bp_class_name(v->second));
	}
	if (v->cls != BP_CLASS_MIXED)
		v->second = runner_up(v, v->cls);
	if (busy < t->min_busy_s && v->cls != BP_CLASS_IDLE)
		v->conf = drop(v->conf);
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

void bp_verdict_free(struct bp_verdict *v)
{
	if (!v)
		return;
	free(v->text);
	v->text = NULL;
	v->nr_evidence = v->nr_levers = 0;
}
