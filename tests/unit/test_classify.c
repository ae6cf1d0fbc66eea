// SPDX-License-Identifier: GPL-2.0
/*
 * The verdict's decision table on synthetic evidence: one case per class
 * and per confidence rule, plus the Amdahl arithmetic.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/classify.h"
#include "analyze/interp.h"
#include "analyze/owned.h"
#include "analyze/syscalls.h"

#define MIB (1024ULL * 1024)

#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.6g, expected %.6g", #a, a_, b_);              \
	} while (0)

/* a single-threaded process, wall seconds long, all of it on-CPU */
static struct bp_evidence busy_cpu(double wall)
{
	struct bp_evidence e = {
		.who = "x",
		.wall_s = wall,
		.have_timeline = true,
		.on_s = wall,
		.threads = 1,
		.ncpus = 2,
		.machine_busy = 0.5,
		.samples = (uint64_t)(wall * 99),
		.llc_bytes = 32 * MIB,
		.llc_source = "test",
	};

	e.tl_s[BP_TS_RUNNING] = wall;
	return e;
}

/* every verdict a test decides is released when the group ends */
static char *texts[256];
static int nr_texts;

static void decide(const struct bp_evidence *e, const struct bp_thresholds *t,
		   struct bp_verdict *v)
{
	bp_classify(e, t, v);
	assert_true(nr_texts < 256);
	assert_non_null(v->text);
	texts[nr_texts++] = v->text;
}

static int release(void **state)
{
	while (nr_texts)
		free(texts[--nr_texts]);
	return 0;
}

static bool has_line(const struct bp_verdict *v, bool lever, const char *needle)
{
	uint32_t i, n = lever ? v->nr_levers : v->nr_evidence;

	for (i = 0; i < n; i++)
		if (strstr(lever ? v->levers[i] : v->evidence[i], needle))
			return true;
	return false;
}

static void dump(const struct bp_verdict *v)
{
	uint32_t i;

	fprintf(stderr, "  %s (%s)\n", bp_class_name(v->cls), bp_confidence_name(v->conf));
	for (i = 0; i < v->nr_evidence; i++)
		fprintf(stderr, "    - %s\n", v->evidence[i]);
	for (i = 0; i < v->nr_levers; i++)
		fprintf(stderr, "    => %s\n", v->levers[i]);
}

static void names__match_the_contract(void **state)
{
	assert_string_equal(bp_class_name(BP_CLASS_CPU), "cpu-bound");
	assert_string_equal(bp_class_name(BP_CLASS_MEMBW), "memory-bandwidth-bound");
	assert_string_equal(bp_class_name(BP_CLASS_IO), "io-bound");
	assert_string_equal(bp_class_name(BP_CLASS_LOCK), "lock-bound");
	assert_string_equal(bp_class_name(BP_CLASS_STARVED), "cpu-starved");
	assert_string_equal(bp_class_name(BP_CLASS_IDLE), "idle");
	assert_string_equal(bp_class_name(BP_CLASS_MIXED), "mixed");
	assert_string_equal(bp_class_name(BP_CLASS_UNKNOWN), "unknown");
	assert_string_equal(bp_class_name(BP_CLASS_PEER), "blocked-on-peer");
	assert_string_equal(bp_mem_judgement_name(BP_MEM_BANDWIDTH), "bandwidth");
	assert_string_equal(bp_mem_judgement_name(BP_MEM_UNMEASURED), "unmeasured");
	assert_string_equal(bp_class_name(BP_CLASS_THROTTLED), "cpu-throttled");
	assert_string_equal(bp_confidence_name(BP_CONF_HIGH), "high");
	assert_string_equal(bp_class_name(BP_CLASS_GIL), "gil-bound");
	assert_string_equal(bp_class_name(BP_CLASS_SYSCALL), "syscall-bound");
}

/* every verdict class has a name and a colour of its own, and is found by its name */
static void classes__every_class_through_every_accessor(void **state)
{
	int c, d;

	for (c = 0; c < BP_CLASS__MAX; c++) {
		const char *name = bp_class_name(c), *colour = bp_class_colour(c);

		assert_non_null(name);
		assert_true(name[0]);
		assert_int_equal(bp_class_find(name), c);
		assert_non_null(colour);
		assert_int_equal(strlen(colour), 7);
		assert_int_equal(strspn(colour + 1, "0123456789abcdef"), 6);
		for (d = 0; d < c; d++) {
			assert_string_not_equal(bp_class_name(d), name);
			assert_string_not_equal(bp_class_colour(d), colour);
		}
	}
	assert_string_equal(bp_class_name(BP_CLASS__MAX), "unknown");
	assert_string_equal(bp_class_colour(BP_CLASS__MAX), bp_class_colour(BP_CLASS_UNKNOWN));
	assert_true(bp_class_find("no-such-class") < 0);
}

/* the docs that list the verdict classes by name name every one */
static void docs__every_verdict_class_named(void **state)
{
	static const char *const docs[] = { "README.md", "docs/classification.md",
					    "docs/formats.md", "docs/agent.md", "docs/boundprof.1" };
	const char *src = getenv("BP_SRC") ? getenv("BP_SRC") : ".";
	char path[4096], *doc;
	uint32_t i;
	FILE *f;
	long n;
	int c;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", src, docs[i]);
		f = fopen(path, "r");
		if (!f)
			fail_msg("cannot read %s (BP_SRC is the source root)", path);
		assert_int_equal(fseek(f, 0, SEEK_END), 0);
		n = ftell(f);
		rewind(f);
		doc = calloc(1, n + 1);
		assert_non_null(doc);
		assert_int_equal(fread(doc, 1, n, f), n);
		fclose(f);
		for (c = 0; c < BP_CLASS__MAX; c++)
			if (!strstr(doc, bp_class_name(c)))
				fail_msg("%s does not name the verdict class %s", docs[i],
					 bp_class_name(c));
		free(doc);
	}
}

static void amdahl__arithmetic(void **state)
{
	assert_near(bp_amdahl(0.74, 4), 1 / (1 - 0.74 + 0.74 / 4), 1e-12);
	assert_near(bp_amdahl(0.71, 0), 1 / 0.29, 1e-12);
	assert_near(bp_amdahl(0, 4), 1.0, 0);
	assert_true(isinf(bp_amdahl(1.0, 0)));
	assert_near(bp_amdahl(1.5, 2), 2.0, 1e-12);
}

static void cpu__fits_cache__high(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.mem_valid = true;
	e.wss_probes = 2;
	e.wss_max = 2 * MIB;
	e.rss = 8 * MIB;
	e.hot_name = "alpha";
	e.hot_frac = 0.74;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_true(has_line(&v, false, "100% of wall time on-CPU across 1 thread"));
	assert_true(has_line(&v, false, "alpha is 74% of wall time: making it 4x faster gives at "
				       "most 2.25x"));
	assert_true(has_line(&v, true, "algorithm"));
	assert_true(has_line(&v, true, "vectorize"));
	assert_true(has_line(&v, true, "parallelize"));
	assert_near(v.hot_4x, bp_amdahl(0.74, 4), 1e-9);
}

/* stolen time is said whatever the class, with what it costs, and not below a tenth */
static void steal__said_with_what_it_costs(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.steal_s = 1.5;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "30% of its on-CPU time (1.50 of 5.00 s) the hypervisor "
				       "ran something else"));
	assert_true(has_line(&v, true, "takes 3.50 s on-CPU instead of 5.00 s"));

	e.steal_s = 0.45;
	decide(&e, NULL, &v);
	assert_false(has_line(&v, false, "hypervisor"));
	assert_false(has_line(&v, true, "hypervisor"));
}

static void cpu__memory_unmeasured__medium(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);
	assert_true(has_line(&v, false, "memory effects unmeasured"));
}

static void cpu__few_samples__one_level_down(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.mem_valid = true;
	e.wss_probes = 1;
	e.wss_max = MIB;
	e.rss = 4 * MIB;
	e.samples = 150;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);
}

/* the 2-thread triad over 384 MiB, as measured here: traffic per CPU and this machine's bandwidth */
static struct bp_evidence triad(uint64_t llc)
{
	struct bp_evidence e = busy_cpu(5);

	e.threads = 3;
	e.on_s = 9.6;
	e.tl_s[BP_TS_RUNNING] = 5;
	e.samples = 960;
	e.mem_valid = true;
	e.wss_probes = 1;
	e.wss_max = 385 * MIB;
	e.rss = 386 * MIB;
	e.llc_bytes = llc;
	e.traffic_valid = true;
	e.traffic_per_s = 9.5e9;
	e.traffic_per_cpu_s = 9.0e9;
	e.traffic_cpus = 1.05;
	e.membw_valid = true;
	e.membw_1_gbs = 25.4;
	e.membw_n_gbs = 28.0;
	e.membw_threads = 2;
	e.membw_source = "measured 2026-12-01 on AMD EPYC, 2 threads, 3 x 85 MiB";
	return e;
}

static void membw__traffic_against_this_machine__any_llc(void **state)
{
	const uint64_t llcs[] = { 32 * MIB, 260 * MIB };
	struct bp_verdict v;
	size_t i;

	/* the same program is the same verdict whatever cache the machine reports */
	for (i = 0; i < sizeof(llcs) / sizeof(llcs[0]); i++) {
		struct bp_evidence e = triad(llcs[i]);

		decide(&e, NULL, &v);
		dump(&v);
		assert_int_equal(v.cls, BP_CLASS_MEMBW);
		assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
		/* no counters: never high */
		assert_int_equal(v.conf, BP_CONF_MEDIUM);
		assert_true(v.mem_ratio > 0.3 && v.mem_ratio < 0.4);
		assert_true(has_line(&v, false, "9.0 GB/s per CPU"));
		assert_true(has_line(&v, false, "measured 2026-12-01"));
		assert_true(has_line(&v, true, "fewer passes"));
		assert_true(has_line(&v, true, "More cores help only until"));
	}
}

static void membw__little_traffic__cpu(void **state)
{
	struct bp_evidence e = triad(32 * MIB);
	struct bp_verdict v;

	/* a big heap barely used: its pages are re-referenced slowly */
	e.traffic_per_cpu_s = 0.4e9;
	e.traffic_per_s = 0.4e9;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_int_equal(v.mem_judgement, BP_MEM_CPU);
	assert_true(has_line(&v, false, "memory does not set its speed"));
	/* the threshold is on the ratio, one table */
	{
		struct bp_thresholds t = bp_default_thresholds;

		t.membw_traffic = 0.01;
		decide(&e, &t, &v);
		assert_int_equal(v.cls, BP_CLASS_MEMBW);
	}
}

/*
 * A window calibrated blind (this guest: a 38 GB/s stream read as 0.03):
 * whatever traffic it read is no evidence, so neither "cpu" from a low
 * reading nor "bandwidth" from a high one; undecided, said, low confidence,
 * and the lever that can tell. A window that saw a third of its stream
 * still judges.
 */
static void membw__blind_window__undecided_not_cpu(void **state)
{
	const double readings[] = { 0.3e9, 9.0e9 };
	struct bp_evidence e;
	struct bp_verdict v;
	size_t i;

	for (i = 0; i < 2; i++) {
		e = triad(32 * MIB);
		e.traffic_per_cpu_s = readings[i];
		e.window_cal = true;
		e.window_stream_gbs = 38.0;
		e.window_seen_gbs = 0.03;
		e.window_visible = 0.03 / 38.0;
		decide(&e, NULL, &v);
		dump(&v);
		assert_int_equal(v.mem_judgement, BP_MEM_UNMEASURED);
		assert_int_equal(v.cls, BP_CLASS_CPU);
		assert_int_equal(v.conf, BP_CONF_LOW);
		assert_true(has_line(&v, false, "cannot be measured here"));
		assert_true(has_line(&v, false, "0.1% of a stream's"));
		assert_true(has_line(&v, true, "boundprof scale"));
	}
	e.window_visible = 0.34;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
	assert_false(has_line(&v, true, "boundprof scale"));
	/* a window that saw the stream's whole set sees, whatever the ratio of the floor */
	e.window_visible = 0.1;
	e.window_floor = true;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
	/*
	 * Blind, a resident set below the cache this machine was measured to
	 * stream from fits; below only the cache it reports (a guest's is the
	 * host socket's), nothing is known.
	 */
	e = triad(512 * MIB);
	e.window_cal = true;
	e.window_visible = 0.001;
	e.membw_cache_bytes = 512 * MIB;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
	assert_true(has_line(&v, false, "its whole resident memory (386 MiB) fits in"));
	e.membw_cache_bytes = 0;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.mem_judgement, BP_MEM_UNMEASURED);
	assert_false(has_line(&v, false, "fits in"));
	assert_true(has_line(&v, false, "resident memory (386 MiB) fits the 512 MiB "
			     "last-level cache it reports is unknown"));
	/*
	 * The working set a blind window saw is a floor, never a fit: 120 MiB
	 * resident, 6 MiB seen, 24 of a reported 256 MiB measured usable.
	 */
	e = triad(256 * MIB);
	e.window_cal = true;
	e.window_visible = 0.028;
	e.rss = 120 * MIB;
	e.wss_max = 6 * MIB;
	e.membw_cache_bytes = 24 * MIB;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.mem_judgement, BP_MEM_UNMEASURED);
	assert_false(has_line(&v, false, "fits in"));
	assert_true(has_line(&v, false, "its resident memory (120 MiB) is more than the 24 MiB "
			     "last-level cache it can use, but its memory traffic cannot be measured"));
	/* seen (and moving little), the same working set fits */
	e.window_cal = false;
	e.traffic_per_cpu_s = 0.3e9;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
}

static void membw__starved_process__judged_per_cpu_second(void **state)
{
	struct bp_evidence e = triad(32 * MIB);
	struct bp_verdict v;

	/* the machine gives it a third of a CPU: less per wall second, as much per CPU second */
	e.traffic_per_s = 3.0e9;
	e.traffic_cpus = 0.33;
	e.on_s = 1.65;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
	assert_true(v.mem_ratio > 0.3);
}

static void membw__missing_evidence__said_not_guessed(void **state)
{
	struct bp_evidence e = triad(32 * MIB);
	struct bp_verdict v;

	/* no traffic measured: a working set past the cache is no verdict on its own */
	e.traffic_valid = false;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_int_equal(v.mem_judgement, BP_MEM_UNMEASURED);
	assert_true(has_line(&v, false, "its memory traffic was not measured"));
	/* traffic but no bandwidth for this machine */
	e = triad(32 * MIB);
	e.membw_valid = false;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_UNMEASURED);
	assert_true(has_line(&v, false, "this machine's memory bandwidth is unknown"));
	/* a working set that fits in the cache needs no traffic to say so */
	e = triad(512 * MIB);
	e.traffic_valid = false;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	/* ... nor a traffic that is only a floor (the window saw the whole set) */
	e = triad(512 * MIB);
	e.traffic_floor = true;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
}

/*
 * The reported cache can be a whole host socket's, shared with other
 * tenants: a rate of traffic at a good share of the machine's bandwidth
 * outranks it (a 192 MiB triad under a reported 260 MiB L3 streams from
 * memory), and the evidence says why the size did not decide.
 */
static void membw__measured_traffic_outranks_reported_cache(void **state)
{
	struct bp_evidence e = triad(260 * MIB);
	struct bp_verdict v;

	e.wss_max = 192 * MIB;
	e.rss = 193 * MIB;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
	assert_int_equal(v.cls, BP_CLASS_MEMBW);
	assert_true(has_line(&v, false, "streams from memory although its working set 192 MiB "
			     "is smaller than the 260 MiB last-level cache"));
	assert_false(has_line(&v, false, "fits in"));
	/* a small traffic agrees with the size: it fits */
	e.traffic_per_s = 0.1e9;
	e.traffic_per_cpu_s = 0.1e9;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
	assert_int_equal(v.cls, BP_CLASS_CPU);
}

/*
 * A rate of page references within a set this machine was measured to
 * stream from cache is cache traffic: R's interpreter recycling a 44 MiB
 * heap read 0.27x of a CPU's memory stream where 96 MiB sets streamed
 * faster than memory, and was called memory-bandwidth-bound. A set past
 * that measured cache is still judged by its rate.
 */
static void membw__rate_within_measured_cache__fits(void **state)
{
	struct bp_evidence e = triad(260 * MIB);
	struct bp_verdict v;

	e.wss_max = 44 * MIB;
	e.rss = 60 * MIB;
	e.membw_cache_bytes = 96 * MIB;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "fits in the 96 MiB last-level cache it can use"));
	assert_false(has_line(&v, false, "streams from memory"));
	/* the same rate over 120 MiB, past the 96 measured: bandwidth */
	e.wss_max = 120 * MIB;
	e.rss = 121 * MIB;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
	assert_true(has_line(&v, false, "only sets up to 96 MiB streamed faster than memory"));
	/* unmeasured, the reported size alone does not outrank the rate */
	e.wss_max = 44 * MIB;
	e.rss = 60 * MIB;
	e.membw_cache_bytes = 0;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
}

/*
 * A window that saw the whole set gives only a floor, and a floor cannot
 * say the set is not in the cache the CPU reports. The cache this machine
 * streamed from when it was measured can: 192 MiB of it is far beyond 12 MiB,
 * so the floor's traffic decides (the CI run that read "fits-cache" for a
 * 192 MiB triad under a reported 256 MiB).
 */
static void membw__floor_beyond_the_cache_it_can_use__bandwidth(void **state)
{
	struct bp_evidence e = triad(256 * MIB);
	struct bp_verdict v;

	e.wss_max = 192 * MIB;
	e.rss = 193 * MIB;
	e.traffic_floor = true;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
	e.membw_cache_bytes = 12 * MIB;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.mem_judgement, BP_MEM_BANDWIDTH);
	assert_int_equal(v.cls, BP_CLASS_MEMBW);
	assert_true(has_line(&v, false, "smaller than the 256 MiB last-level cache the CPU "
			     "reports"));
	assert_true(has_line(&v, false, "only sets up to 12 MiB streamed faster than memory"));
	/* a set within the cache it uses still fits, and says which cache */
	e.wss_max = 8 * MIB;
	e.rss = 9 * MIB;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
	assert_true(has_line(&v, false, "fits in the 12 MiB last-level cache it can use"));
	/* a cache larger than the one reported changes nothing */
	e.wss_max = 192 * MIB;
	e.rss = 193 * MIB;
	e.membw_cache_bytes = 512 * MIB;
	decide(&e, NULL, &v);
	assert_int_equal(v.mem_judgement, BP_MEM_FITS);
	assert_true(has_line(&v, false, "fits in the 256 MiB last-level cache"));
}

/* the problem report's example: 100 fetches of 20 ms, one after another */
static struct bp_evidence client(void)
{
	struct bp_evidence e = busy_cpu(2.27);

	e.on_s = 0.11;
	e.rq_s = 0.13;
	e.net_s = 2.03;
	e.tl_s[BP_TS_RUNNING] = 0.11;
	e.tl_s[BP_TS_RUNQUEUE] = 0.13;
	e.tl_s[BP_TS_NET] = 2.03;
	e.samples = 11;
	e.net_peer = "127.0.0.1:8080";
	e.net_peers = 1;
	e.net_waits = 100;
	e.net_wait_s = 2.03;
	e.net_p50_ms = 20.4;
	e.net_p99_ms = 24.6;
	e.net_rx = 110000;
	e.net_tx = 12800;
	return e;
}

static void net__client_round_trips__io_bound_naming_the_network(void **state)
{
	struct bp_evidence e = client();
	struct bp_verdict v;

	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_IO);
	assert_true(v.wait_net);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_true(has_line(&v, false, "89% of wall time waiting on the network: 127.0.0.1:8080, "
				       "100 round trips, p50 20.4 ms"));
	assert_true(has_line(&v, false, "received 107.4 KiB and sent 12.5 KiB"));
	assert_true(has_line(&v, true, "threads, asyncio, a connection pool"));
	assert_true(has_line(&v, true, "Batch requests"));
	assert_true(has_line(&v, true, "Cache"));
	/* overlapping the waits: the Amdahl cap from the network's share of wall time */
	assert_near(v.wait_share, 2.03 / 2.27, 1e-9);
	assert_near(v.wait_cap, 1 / (1 - 2.03 / 2.27), 1e-6);
	assert_true(has_line(&v, true, "at most 9.46x"));
}

static void net__server_waiting_for_requests__idle(void **state)
{
	struct bp_evidence e = client();
	struct bp_verdict v;

	/* the same waits on the other end: accepting and reading the next request */
	e.net_idle_s = e.net_s;
	e.net_s = 0;
	e.net_waits = 0;
	e.net_peer = NULL;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_IDLE);
	assert_true(has_line(&v, false, "waiting for connections or requests"));
}

static void peer__mostly_waiting_on_a_neighbour__blocked_on_peer(void **state)
{
	struct bp_evidence e = busy_cpu(4);
	struct bp_verdict v;

	/* wc -l at the end of a pipeline: 96% waiting for its input from uniq */
	e.on_s = 0.06;
	e.rq_s = 0.1;
	e.pipe_s = 3.84;
	e.tl_s[BP_TS_RUNNING] = 0.06;
	e.tl_s[BP_TS_RUNQUEUE] = 0.1;
	e.tl_s[BP_TS_PIPE] = 3.84;
	e.peer_pid = 4242;
	e.peer_comm = "uniq";
	e.peer_dir = BP_DIR_IN;
	e.pipeline = "gzip -dc big.gz → sort → uniq -c → wc -l";
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_PEER);
	assert_string_equal(bp_class_name(v.cls), "blocked-on-peer");
	assert_int_equal(v.peer_pid, 4242);
	assert_string_equal(v.peer_comm, "uniq");
	assert_int_equal(v.peer_dir, BP_DIR_IN);
	assert_near(v.peer_share, 0.96, 1e-9);
	assert_true(has_line(&v, false, "96% of wall time waiting on uniq (pid 4242)"));
	assert_true(has_line(&v, false, "a stage of gzip -dc big.gz"));
	assert_true(has_line(&v, true, "Make uniq faster first"));
	/* the head of a pipeline waits for room for its output */
	e.peer_dir = BP_DIR_OUT;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_PEER);
	assert_true(has_line(&v, false, "for room for its output"));
	/* a stage that waits on its neighbour a third of the time has a verdict of its own */
	e = busy_cpu(4);
	e.on_s = 2.6;
	e.pipe_s = 1.4;
	e.tl_s[BP_TS_RUNNING] = 2.6;
	e.tl_s[BP_TS_PIPE] = 1.4;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
}

static void lead__a_copy_with_its_own_lines(void **state)
{
	struct bp_evidence e = client();
	struct bp_verdict v, c;

	decide(&e, NULL, &v);
	assert_int_equal(bp_verdict_lead(&v, "cat → gzip -9 → wc -c: bound by gzip -9", &c), 0);
	assert_int_equal(c.cls, v.cls);
	assert_int_equal(c.nr_evidence, v.nr_evidence + 1);
	assert_string_equal(c.evidence[0], "cat → gzip -9 → wc -c: bound by gzip -9");
	assert_string_equal(c.evidence[1], v.evidence[0]);
	assert_string_equal(c.levers[0], v.levers[0]);
	assert_true(c.text != v.text);
	assert_near(c.wait_cap, v.wait_cap, 0);
	bp_verdict_free(&c);
	assert_int_equal(c.nr_evidence, 0);
}

static void membw__page_faults(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.frac_fault = 0.45;
	e.frac_kernel = 0.05;
	e.minflt_per_s = 250000;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_MEMBW);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);
	assert_true(has_line(&v, false, "page faults"));
	assert_true(has_line(&v, true, "Reuse buffers"));
}

static void pmu__ipc_and_mpki_decide(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.pmu_valid = true;
	e.pmu_running = 1;
	e.ipc = 2.4;
	e.mpki = 0.125;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_int_equal(v.conf, BP_CONF_HIGH);

	e.ipc = 0.4;
	e.mpki = 93.75;
	e.dram_gbs = 9.6;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_MEMBW);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_true(has_line(&v, false, "IPC 0.40"));

	/* between the rules: medium */
	e.ipc = 0.8;
	e.mpki = 5;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);

	/* counters multiplexed most of the time: one level down */
	e.ipc = 0.4;
	e.mpki = 93.75;
	e.pmu_running = 0.3;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_MEMBW);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);
}

static void io__latency_bound_one_request_at_a_time(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.on_s = 1.0;
	e.frac_io_path = 0.6;	/* submitting IO in the kernel counts as IO */
	e.io_s = 3.8;
	e.sleep_s = 0.2;
	e.tl_s[BP_TS_RUNNING] = 1.0;
	e.tl_s[BP_TS_IO] = 3.8;
	e.tl_s[BP_TS_SLEEP] = 0.2;
	e.io_valid = true;
	e.io_dev = "vda";
	e.io_ops = 40000;
	e.io_req_kib = 4;
	e.io_reads = true;
	e.io_p50_ms = 0.09;
	e.io_p99_ms = 0.4;
	e.dev_busy = 0.8;
	e.dev_inflight = 0.8;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_IO);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_near(v.share_io, (3.8 + 0.6) / 4.8, 1e-9);
	assert_true(has_line(&v, false, "76% of wall time waiting on block IO (vda: 4 KiB reads, "
				       "p50 0.09 ms, p99 0.40 ms)"));
	assert_true(has_line(&v, true, "Overlap the waits"));
	assert_true(has_line(&v, true, "about one at a time"));
	assert_true(has_line(&v, true, "Batch small requests"));
	assert_near(v.wait_cap, 1 / (1 - 0.76), 1e-9);
}

static void io__device_saturated(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.on_s = 0.5;
	e.io_s = 4.5;
	e.tl_s[BP_TS_RUNNING] = 0.5;
	e.tl_s[BP_TS_IO] = 4.5;
	e.io_valid = true;
	e.io_dev = "nvme0n1";
	e.io_ops = 90000;
	e.io_req_kib = 128;
	e.dev_busy = 0.99;
	e.dev_inflight = 31;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_IO);
	assert_true(has_line(&v, true, "saturated"));
	assert_false(has_line(&v, true, "Overlap the waits"));
}

static void lock__threads_wait_on_one_mutex(void **state)
{
	struct bp_evidence e = busy_cpu(3);
	struct bp_verdict v;

	e.threads = 8;
	e.on_s = 3.0;
	e.lock_s = 18.5;
	e.rq_s = 2.4;
	e.sleep_s = 0.1;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_LOCK);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	/* the timeline alone says "running": the thread sums tell the truth */
	assert_true(has_line(&v, false, "8 threads spent 18.50 s waiting on locks"));
	assert_true(has_line(&v, true, "critical section"));
	assert_true(has_line(&v, true, "More threads make it worse"));
}

static void starved__pinned_spinners(void **state)
{
	struct bp_evidence e = busy_cpu(3);
	struct bp_verdict v;

	e.on_s = 1.5;
	e.rq_s = 1.5;
	e.tl_s[BP_TS_RUNNING] = 1.5;
	e.tl_s[BP_TS_RUNQUEUE] = 1.5;
	e.machine_busy = 0.55;	/* one CPU saturated, the other idle */
	e.others_cpu_s = 1.5;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_STARVED);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);
	assert_true(has_line(&v, false, "50% of busy thread-time waiting for a CPU"));

	e.machine_busy = 1.0;
	decide(&e, NULL, &v);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_true(has_line(&v, true, "oversubscribed"));

	/* its own threads outnumber the CPUs and nobody else competes */
	e.threads = 8;
	e.others_cpu_s = 0.1;
	decide(&e, NULL, &v);
	assert_true(has_line(&v, true, "use at most 2 worker threads"));
}

/* a spinner under a 20% quota on a busy machine: 3 s wall, 0.6 s running */
static struct bp_evidence throttled_spinner(void)
{
	struct bp_evidence e = busy_cpu(3);

	e.on_s = 0.6;
	e.rq_s = 2.4;
	e.tl_s[BP_TS_RUNNING] = 0.6;
	e.tl_s[BP_TS_RUNQUEUE] = 2.4;
	e.machine_busy = 1.0;
	e.others_cpu_s = 5.0;
	e.throttled_rq_s = 2.1;
	e.quota_valid = true;
	e.quota_at = "/bp-quota";
	e.quota_us = 20000;
	e.period_us = 100000;
	e.throttled_s = 2.1;
	e.throttle_window_s = 3.0;
	e.nr_periods = 30;
	e.nr_throttled = 29;
	e.hot_name = "spin_hot";
	e.hot_frac = 0.98;
	return e;
}

static void throttled__quota_explains_the_wait(void **state)
{
	struct bp_evidence e = throttled_spinner();
	struct bp_verdict v;

	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_THROTTLED);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_near(v.share_throttled, 2.1 / 3.0, 1e-9);
	assert_near(v.share_rq, 0.3 / 3.0, 1e-9);
	assert_true(has_line(&v, false, "70% of busy thread-time waiting out its CPU quota"));
	assert_true(has_line(&v, false, "quota of cgroup /bp-quota: 0.20 CPUs (cpu.max 20000 per "
				       "100000 us); throttled 2.10 s of 3.00 s (70% of the time), "
				       "in 29 of 30 periods"));
	assert_true(has_line(&v, false, "0.30 s, is contention"));
	assert_true(has_line(&v, true, "Raise the quota: it gets 0.20 CPUs"));
	assert_true(has_line(&v, true, "cut the work"));
	assert_true(has_line(&v, true, "More threads make it worse"));
	assert_int_equal(v.wait_class, BP_CLASS_THROTTLED);

	/* the same in a v1 tree names its file */
	e.quota_v1 = true;
	decide(&e, NULL, &v);
	assert_true(has_line(&v, false, "(cpu.cfs_quota_us 20000 per 100000 us)"));
}

/*
 * A database backend in a one-client ping-pong (issue 26, shape 2): 23% of
 * its time waiting for a CPU after thousands of wakeups while the CPUs were
 * 27% busy. That is wake-up latency, not contention: never cpu-starved, and
 * said with the handoffs; the same waits on busy CPUs are contention.
 */
static void starved__wakeup_latency_on_idle_cpus_is_handoff(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.on_s = 2.5;
	e.rq_s = 1.15;
	e.io_s = 0.6;
	e.sleep_s = 0.75;
	e.tl_s[BP_TS_RUNNING] = 2.5;
	e.tl_s[BP_TS_RUNQUEUE] = 1.15;
	e.tl_s[BP_TS_IO] = 0.6;
	e.tl_s[BP_TS_SLEEP] = 0.75;
	e.machine_busy = 0.27;
	e.wakeups = 20000;
	e.wake_lat_s = 1.1;	/* all but 0.05 s of its run-queue time came after wakeups */
	e.wake_p50_ms = 0.05;
	e.wake_max_ms = 4.0;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_not_equal(v.cls, BP_CLASS_STARVED);
	assert_near(v.handoff_s, 1.1, 1e-9);
	assert_int_equal(v.handoffs, 20000);
	assert_near(v.share_rq, 0.05 / (2.5 + 1.15 + 0.6 - 1.1), 1e-9);
	assert_true(has_line(&v, false, "is wake-up latency after 20000 handoffs (p50 0.05 ms, "
				       "max 4.00 ms) while CPUs were 27% busy: not contention"));
	assert_true(has_line(&v, true, "Fewer handoffs"));

	/* busy CPUs: the same waits are contention */
	e.machine_busy = 0.85;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_STARVED);
	assert_near(v.handoff_s, 0, 0);
	assert_false(has_line(&v, false, "not contention"));

	/* the host taking a tenth of the wall time makes the CPUs busy too */
	e.machine_busy = 0.27;
	e.steal_s = 0.6;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_STARVED);

	/* waits after preemptions are contention on idle CPUs as well */
	e.steal_s = 0;
	e.wake_lat_s = 0.1;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_STARVED);
	assert_near(v.handoff_s, 0.1, 1e-9);
}

static void throttled__contention_dominates_starved(void **state)
{
	struct bp_evidence e = throttled_spinner();
	struct bp_verdict v;

	/* a little throttling in much contention: starved, with the quota said */
	e.throttled_rq_s = 0.3;
	e.throttled_s = 0.3;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_STARVED);
	assert_true(has_line(&v, false, "80% of busy thread-time waiting for a CPU"));
	assert_true(has_line(&v, false, "besides, 0.30 s waiting out the CPU quota of cgroup "
				       "/bp-quota"));
	assert_int_equal(v.second, BP_CLASS_CPU);

	/* no quota at all: the run queue is all contention, as before */
	e = throttled_spinner();
	e.throttled_rq_s = 0;
	e.quota_valid = false;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_STARVED);
	assert_near(v.share_throttled, 0, 0);
	assert_near(v.share_rq, 0.8, 1e-9);
}

static void io__memory_limit_named(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.on_s = 0.8;
	e.io_s = 4.0;
	e.tl_s[BP_TS_RUNNING] = 0.8;
	e.tl_s[BP_TS_IO] = 4.0;
	e.majflt_per_s = 900;
	e.mem_valid = true;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_IO);
	assert_false(has_line(&v, false, "memory limit"));

	e.mem_limit_valid = true;
	e.mem_at = "/jobs/etl";
	e.mem_max = 64 * MIB;
	e.mem_high = UINT64_MAX;
	e.mem_events = 1500;
	e.psi_valid = true;
	e.psi_some[1] = 0.42;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_IO);
	assert_true(has_line(&v, false, "the memory limit of cgroup /jobs/etl (memory.max 64 MiB) "
				       "drives it: 1500 times at the limit, memory pressure 42% "
				       "of the time"));
	assert_true(has_line(&v, true, "Raise the cgroup's memory limit"));

	/* a limit never reached and no pressure: not named */
	e.mem_events = 0;
	e.psi_some[1] = 0.01;
	decide(&e, NULL, &v);
	assert_false(has_line(&v, false, "memory limit"));
}

static void idle__sleeps(void **state)
{
	struct bp_evidence e = busy_cpu(3);
	struct bp_verdict v;

	e.on_s = 0.002;
	e.sleep_s = 2.998;
	e.tl_s[BP_TS_RUNNING] = 0.002;
	e.tl_s[BP_TS_SLEEP] = 2.998;
	e.samples = 0;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_IDLE);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_true(has_line(&v, false, "slept or waited for events 100%"));
}

/*
 * `sh -c "sleep 3 | cat"` as one recording: the shell and sleep asleep, cat
 * waiting on sleep through the pipe. Nobody worked: idle, not the verdict
 * of 10 ms of start-up. A pipeline whose one busy stage keeps the rest
 * waiting is not idle, however many stages wait.
 */
static void idle__a_pipeline_of_sleepers(void **state)
{
	struct bp_evidence e = busy_cpu(3);
	struct bp_verdict v;

	e.on_s = 0.005;
	e.rq_s = 0.005;
	e.sleep_s = 6;
	e.pipe_s = 3;
	e.tl_s[BP_TS_RUNNING] = 0.005;
	e.tl_s[BP_TS_RUNQUEUE] = 0.005;
	e.tl_s[BP_TS_SLEEP] = 6;
	e.tl_s[BP_TS_PIPE] = 3;
	e.tl_wall_s = 9.01;	/* three processes' timelines, each over 3 s */
	e.samples = 0;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_IDLE);
	assert_true(has_line(&v, false, "slept or waited for events 67%"));
	assert_true(has_line(&v, false, "33% waiting through pipes on processes that did next "
				       "to nothing themselves (0.010 s busy in all)"));
	/* one stage computing all along, five waiting on it, the shell asleep */
	e.on_s = 3;
	e.rq_s = 0;
	e.sleep_s = 3;
	e.pipe_s = 15;
	e.tl_s[BP_TS_RUNNING] = 3;
	e.tl_s[BP_TS_RUNQUEUE] = 0;
	e.tl_s[BP_TS_SLEEP] = 3;
	e.tl_s[BP_TS_PIPE] = 15;
	e.tl_wall_s = 21;
	e.samples = 297;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_not_equal(v.cls, BP_CLASS_IDLE);
}

static void unknown__too_short(void **state)
{
	struct bp_evidence e = busy_cpu(0.05);
	struct bp_verdict v;

	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_UNKNOWN);
	assert_int_equal(v.conf, BP_CONF_LOW);
	assert_true(has_line(&v, true, "Record for longer"));
}

static void mixed__no_single_limit(void **state)
{
	struct bp_evidence e = busy_cpu(4);
	struct bp_verdict v;

	e.on_s = 1.6;
	e.io_s = 1.2;
	e.lock_s = 0.6;
	e.rq_s = 0.4;
	e.other_s = 0.2;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_MIXED);
	assert_int_equal(v.second, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "no single limit"));
}

static void confidence__borderline_and_short_runs_drop(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	/* lock share 0.32: within 0.05 of the 0.3 threshold */
	e.threads = 4;
	e.on_s = 3.4;
	e.lock_s = 1.6;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_LOCK);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);

	/* under a second of busy time: one level down */
	e = busy_cpu(0.5);
	e.on_s = 0.1;
	e.io_s = 0.4;
	e.tl_s[BP_TS_RUNNING] = 0.1;
	e.tl_s[BP_TS_IO] = 0.4;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_IO);
	assert_int_equal(v.conf, BP_CONF_MEDIUM);
}

static void thresholds__one_table_drives_the_decision(void **state)
{
	struct bp_thresholds t = bp_default_thresholds;
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.on_s = 3.0;
	e.io_s = 2.0;	/* 40% IO: not io-bound by default */
	decide(&e, &t, &v);
	assert_int_not_equal(v.cls, BP_CLASS_IO);
	t.io = 0.35;
	decide(&e, &t, &v);
	assert_int_equal(v.cls, BP_CLASS_IO);
}

/* a loop of the user's that spends 97% of its time in libc's memset */
static struct bp_evidence memset_loop(void)
{
	struct bp_evidence e = busy_cpu(5);

	e.mem_valid = true;
	e.rss = 8 * MIB;
	e.hot_name = "main";
	e.hot_frac = 0.98;
	e.hot_own = true;
	e.own_beneath = 0.97;
	e.own_callee = "memset";
	e.own_callee_module = "libc.so.6";
	e.own_callee_frac = 0.97;
	return e;
}

static void own__names_the_caller_with_the_library_as_reason(void **state)
{
	struct bp_evidence e = memset_loop();
	struct bp_verdict v;

	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "main spends 97% of its time in memset (libc.so.6)"));
	assert_true(has_line(&v, false, "main is 98% of wall time with what it calls"));
	assert_true(has_line(&v, true, "Tune main first: 97% of its time is in memset (libc.so.6), "
				      "an already-optimized building block: call it less, or on "
				      "more data per call"));
	assert_true(has_line(&v, true, "set fewer bytes or reuse the buffer"));
	assert_false(has_line(&v, true, "vectorize"));
	assert_near(v.hot_4x, bp_amdahl(0.98, 4), 1e-9);
}

static void own__hints_follow_the_building_block(void **state)
{
	static const struct {
		const char *callee, *module;
		bool kernel;
		const char *hint;
	} cases[] = {
		{ "memcpy", "libc.so.6", false, "copy fewer bytes" },
		{ "malloc", "libc.so.6", false, "allocate less" },
		{ "pow", "libm.so.6", false, "compute it fewer times" },
		{ "cblas_dgemm", "libopenblas.so.0", false, "bigger blocks" },
		{ "deflate", "libz.so.1", false, "compress less" },
		{ "do_syscall_64", "[kernel]", true, "make fewer system calls" },
		{ "frobnicate", "libthing.so", false, "call it less, or on more data per call" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bp_evidence e = memset_loop();
		struct bp_verdict v;

		e.own_callee = cases[i].callee;
		e.own_callee_module = cases[i].module;
		e.own_callee_kernel = cases[i].kernel;
		decide(&e, NULL, &v);
		if (!has_line(&v, true, cases[i].hint)) {
			dump(&v);
			fail_msg("%s: no lever says '%s'", cases[i].callee, cases[i].hint);
		}
		assert_false(has_line(&v, true, "vectorize"));
	}
}

static void own__its_own_loop_keeps_the_compute_levers(void **state)
{
	struct bp_evidence e = memset_loop();
	struct bp_verdict v;

	/* most of main's time is its own: the loop itself is the hot code */
	e.own_beneath = 0.2;
	e.own_callee_frac = 0.2;
	decide(&e, NULL, &v);
	assert_true(has_line(&v, true, "a better algorithm or data structure in main"));
	assert_true(has_line(&v, true, "vectorize"));
}

static void own__library_without_a_caller_is_a_building_block(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.hot_name = "__memset_avx2_unaligned_erms";
	e.hot_frac = 0.9;
	e.hot_foreign = true;
	e.hot_module = "libc.so.6";
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, true, "__memset_avx2_unaligned_erms (libc.so.6) is an "
				      "already-optimized building block: call it less, or on more "
				      "data per call"));
	assert_true(has_line(&v, false, "code the program calls but does not own"));
	assert_false(has_line(&v, true, "vectorize"));
}

/* no phrase of a lever or evidence line said twice in it */
static void assert_no_repeats(const struct bp_verdict *v)
{
	uint32_t i, n;

	for (i = 0; i < v->nr_evidence + v->nr_levers; i++) {
		const char *l = i < v->nr_evidence ? v->evidence[i] : v->levers[i - v->nr_evidence];
		size_t len = strlen(l), k;

		/* any 24 characters found again later in the same line */
		for (k = 0; k + 24 <= len; k++) {
			char frag[25];

			memcpy(frag, l + k, 24);
			frag[24] = 0;
			n = strstr(l + k + 1, frag) ? 1 : 0;
			if (n)
				fail_msg("said twice: '%s' in '%s'", frag, l);
		}
	}
}

/* the generic hint is the lever's own words: it is not said a second time */
static void own__plain_building_block__lever_says_it_once(void **state)
{
	struct bp_evidence e = memset_loop();
	struct bp_verdict v;

	e.own_callee = "frobnicate";
	e.own_callee_module = "libthing.so";
	decide(&e, NULL, &v);
	dump(&v);
	assert_true(has_line(&v, true, "call it less, or on more data per call (4x faster"));
	assert_no_repeats(&v);
}

/* JIT code without a perf map: unnamed, with why and how, never a building block */
static void own__unnamed_callee__named_as_unnamed_with_how(void **state)
{
	struct bp_evidence e = memset_loop();
	struct bp_verdict v;

	e.own_callee = "unnamed code in [anon]";
	e.own_callee_module = "[anon]";
	e.own_callee_unnamed = "[anon]";
	e.own_callee_frac = 1.0;
	e.own_beneath = 1.0;
	e.hot_frac = 0.9999;
	decide(&e, NULL, &v);
	dump(&v);
	assert_true(has_line(&v, true, "Tune main first: 100% of its time is in unnamed code in "
				      "[anon], which boundprof cannot name"));
	assert_true(has_line(&v, true, "perf map"));
	assert_true(has_line(&v, true, "--perf-basic-prof"));
	assert_false(has_line(&v, true, "building block"));
	assert_false(has_line(&v, false, "building block"));
	/* a cap past 100x is no number to act on */
	assert_true(has_line(&v, false, "removing it more than 100x"));
	assert_no_repeats(&v);
}

/* the hot code itself unnamed: an address of a stripped file, how to name it */
static void own__unnamed_hot_code__asks_for_names(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.hot_name = "unnamed code in libruby-3.1.so.3.1";
	e.hot_frac = 0.6;
	e.hot_unnamed = "libruby-3.1.so.3.1";
	decide(&e, NULL, &v);
	dump(&v);
	assert_true(has_line(&v, true, "Get names for the hot code first"));
	assert_true(has_line(&v, true, "debug symbols"));
	assert_true(has_line(&v, false, "the hot code has no name: libruby-3.1.so.3.1 has no "
				       "symbols"));
	assert_false(has_line(&v, true, "a better algorithm or data structure in unnamed"));
	assert_false(has_line(&v, true, "building block"));
	assert_no_repeats(&v);
}

/* the interpreters boundprof does not walk, by file name; the script from the command line */
static void interp__modules_and_scripts(void **state)
{
	static const struct {
		const char *module, *lang;
	} cases[] = {
		{ "perl", "Perl" }, { "/usr/bin/perl5.36.0", "Perl" }, { "libperl.so.5.36", "Perl" },
		{ "ruby3.1", "Ruby" }, { "libruby-3.1.so.3.1", "Ruby" }, { "node", "JavaScript" },
		{ "libjvm.so", "Java" }, { "libR.so", "R" }, { "bash", "shell" }, { "dash", "shell" },
		{ "lua5.4", "Lua" }, { "php8.2", "PHP" },
		/* Python is walked; a program that merely starts like one is not an interpreter */
		{ "python3.11", NULL }, { "libpython3.11.so.1.0", NULL }, { "shred", NULL },
		{ "rubocop-wrapper", NULL }, { "nodejs-helper", NULL }, { "Rtool", NULL },
	};
	char buf[64];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bp_interp *in = bp_interp_of_module(cases[i].module);

		if (!cases[i].lang && in)
			fail_msg("%s is no interpreter, not %s", cases[i].module, in->lang);
		if (cases[i].lang && (!in || strcmp(in->lang, cases[i].lang)))
			fail_msg("%s: want %s", cases[i].module, cases[i].lang);
	}
	assert_true(bp_interp_script("perl work.pl", buf, sizeof(buf)));
	assert_string_equal(buf, "work.pl");
	assert_true(bp_interp_script("node --perf-basic-prof /srv/app/main.js 3", buf,
				     sizeof(buf)));
	assert_string_equal(buf, "main.js");
	assert_false(bp_interp_script("perl -e print 1", buf, sizeof(buf)));
	assert_false(bp_interp_script("ruby", buf, sizeof(buf)));
	assert_false(bp_interp_script(NULL, buf, sizeof(buf)));
	/* an interpreter's own code is no user's: a building block */
	assert_true(bp_module_foreign("libruby-3.1.so.3.1"));
}

/* the interpreter verdict: whose the time is, how to see more, no internals */
static void interp__verdict_names_no_internals(void **state)
{
	struct bp_evidence e = busy_cpu(5);
	struct bp_verdict v;

	e.interp = bp_interp_of_module("perl");
	snprintf(e.interp_script, sizeof(e.interp_script), "work.pl");
	snprintf(e.interp_calls, sizeof(e.interp_calls), "sin() and sqrt()");
	e.interp_calls_n = 2;
	e.interp_calls_frac = 0.63;
	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	assert_true(has_line(&v, false, "the time is in the perl interpreter running work.pl"));
	assert_true(has_line(&v, false, "cannot see the script's own subs"));
	assert_true(has_line(&v, false, "63% of the on-CPU time is sin() and sqrt(), called from "
				       "work.pl"));
	assert_true(has_line(&v, true, "perl -d:NYTProf work.pl"));
	assert_true(has_line(&v, true, "Meanwhile, sin() and sqrt() are 63%"));
	assert_false(has_line(&v, true, "Perl_"));
	assert_false(has_line(&v, true, "building block"));
	assert_false(has_line(&v, true, "Tune the hot code first"));
	assert_no_repeats(&v);

	/* node reads a perf map: the flag, and that boundprof reads it */
	e.interp = bp_interp_of_module("node");
	snprintf(e.interp_script, sizeof(e.interp_script), "work.js");
	decide(&e, NULL, &v);
	dump(&v);
	assert_true(has_line(&v, true, "node --perf-basic-prof work.js"));
	assert_true(has_line(&v, true, "which boundprof reads"));
}

static void own__the_table_and_own(void **state)
{
	struct bp_frame f = { .name = "main", .module = "app" };
	char buf[64];

	assert_true(bp_frame_owned(&f));
	f.module = "libc.so.6";
	assert_false(bp_frame_owned(&f));
	f.module = "/usr/lib/x86_64-linux-gnu/libm.so.6";
	assert_false(bp_frame_owned(&f));
	f.module = "libopenblas.so.0";
	assert_false(bp_frame_owned(&f));
	f.module = "python3.11";
	assert_false(bp_frame_owned(&f));
	f.module = "libpython3.12.so.1.0";
	assert_false(bp_frame_owned(&f));
	/* an extension from the interpreter's own library tree is its code */
	f.module = "encdb.so";
	f.path = "/usr/lib/x86_64-linux-gnu/ruby/3.1.0/enc/encdb.so";
	assert_false(bp_frame_owned(&f));
	assert_true(bp_frame_foreign(&f));
	f.module = "POSIX.so";
	f.path = "/usr/lib/x86_64-linux-gnu/perl/5.36/auto/POSIX/POSIX.so";
	assert_false(bp_frame_owned(&f));
	f.path = "/usr/lib/x86_64-linux-gnu/perl-base/auto/POSIX/POSIX.so";
	assert_false(bp_frame_owned(&f));
	/* ... not a directory of the user's that only shares a name */
	f.module = "fast.so";
	f.path = "/home/u/ruby/2fast/fast.so";
	assert_true(bp_frame_owned(&f));
	f.path = "/home/u/perl/work/fast.so";
	assert_true(bp_frame_owned(&f));
	f.path = NULL;
	f.module = "[kernel]";
	f.kernel = true;
	assert_false(bp_frame_owned(&f));
	assert_true(bp_frame_foreign(&f));
	f.kernel = false;
	f.module = "[unknown]";
	assert_false(bp_frame_owned(&f));
	assert_false(bp_frame_foreign(&f));
	/* an address of a stripped binary is still its owner's code, and no building block */
	f.name = NULL;
	f.module = "stress-ng";
	assert_true(bp_frame_owned(&f));
	assert_false(bp_frame_foreign(&f));
	f.module = "libc.so.6";
	assert_false(bp_frame_owned(&f));
	assert_true(bp_frame_foreign(&f));
	f.name = "main";
	/* a Python function is its author's, whatever runs it */
	f.module = "python3.11";
	f.python = true;
	assert_true(bp_frame_owned(&f));
	f.python = false;
	/* --own moves a library off the list: by name, and a versioned name */
	f.module = "libopenblas.so.0";
	assert_int_equal(bp_own_add("libopenblas.so"), 0);
	assert_true(bp_frame_owned(&f));
	assert_false(bp_frame_foreign(&f));
	f.module = "libopenblas64.so.0";
	assert_false(bp_frame_owned(&f));
	assert_int_equal(bp_own_add("a/b"), -EINVAL);
	assert_int_equal(bp_own_add(""), -EINVAL);
	bp_own_reset();
	f.module = "libopenblas.so.0";
	assert_false(bp_frame_owned(&f));
	/* the names readers know the building blocks by */
	assert_string_equal(bp_short_name("v8::base::ieee754::sin", "node", buf, sizeof(buf)),
			    "Math.sin");
	assert_string_equal(bp_short_name("v8::base::ieee754::(anonymous namespace)::x", "node",
					  buf, sizeof(buf)),
			    "v8::base::ieee754::(anonymous namespace)::x");
	assert_string_equal(bp_short_name("__memset_avx512_unaligned_erms", "libc.so.6", buf,
					  sizeof(buf)), "memset");
	assert_string_equal(bp_short_name("__ieee754_pow_fma", "libm.so.6", buf, sizeof(buf)),
			    "pow");
	assert_string_equal(bp_short_name("__log1p_fma", "libm.so.6", buf, sizeof(buf)), "log1p");
	assert_string_equal(bp_short_name("__libc_start_main", "libc.so.6", buf, sizeof(buf)),
			    "__libc_start_main");
	assert_string_equal(bp_short_name("_avx_thing", "app", buf, sizeof(buf)), "_avx_thing");
}

/* dd bs=1: most of its CPU time is the kernel serving one-byte reads and writes */
static struct bp_evidence one_byte_calls(void)
{
	struct bp_evidence e = busy_cpu(2);

	e.samples = 400;
	e.frac_kernel = 0.8;
	e.frac_syscall = 0.8;
	e.sys_valid = true;
	e.sys_reads = 4000000;
	e.sys_writes = 4000000;
	e.sys_rbytes = 4000000;
	e.sys_wbytes = 4000000;
	e.sys_top[0] = 0;
	e.sys_top_frac[0] = 0.45;
	e.sys_top[1] = 1;
	e.sys_top_frac[1] = 0.35;
	e.hot_name = "copy_bytes";
	e.hot_frac = 1.0;
	e.hot_own = true;
	e.own_beneath = 0.97;
	e.own_kernel = 0.8;
	e.own_callee = "read";
	e.own_callee_module = "libc.so.6";
	e.own_callee_frac = 0.55;
	return e;
}

static void syscall__one_byte_calls(void **state)
{
	struct bp_evidence e = one_byte_calls();
	struct bp_verdict v;
	char cap[64];

	decide(&e, NULL, &v);
	dump(&v);
	assert_int_equal(v.cls, BP_CLASS_SYSCALL);
	assert_int_equal(v.conf, BP_CONF_HIGH);
	assert_true(has_line(&v, false, "80% of its on-CPU time is the kernel serving its system "
				       "calls: read 45%, write 35%"));
	assert_true(has_line(&v, false, "4000000 read and 4000000 write calls in 2.00 s (4000000 "
				       "per second), 1 B per read and 1 B per write"));
	assert_true(has_line(&v, false, "copy_bytes spends 55% of its time in read (libc.so.6), "
				       "largely the kernel working for it"));
	/* all on-CPU: the kernel's 80% of wall time caps the gain at 5x */
	snprintf(cap, sizeof(cap), "none at all %.2fx", bp_amdahl(0.8, 0));
	assert_true(has_line(&v, false, cap));
	assert_true(has_line(&v, true, "Make fewer, larger calls: it moves 1 B per read"));
	assert_true(has_line(&v, true, "writev"));
	assert_true(has_line(&v, true, "io_uring"));
	assert_true(has_line(&v, true, "Cache what is asked again"));
	assert_true(has_line(&v, true, "Start in copy_bytes"));
	assert_false(has_line(&v, true, "vectorize"));
}

static void syscall__below_threshold_or_faults_is_compute(void **state)
{
	struct bp_thresholds t = bp_default_thresholds;
	struct bp_evidence e = one_byte_calls();
	struct bp_verdict v;
	char name[32];

	/* a compute loop that reads its input now and then */
	e.frac_syscall = 0.3;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_CPU);
	/* the threshold is the table's */
	t.syscall = 0.25;
	decide(&e, &t, &v);
	assert_int_equal(v.cls, BP_CLASS_SYSCALL);
	/* page faults are memory's, whatever system call took them */
	e = one_byte_calls();
	e.frac_fault = 0.4;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_MEMBW);
	/* no io accounting: the sampled calls still say which */
	e = one_byte_calls();
	e.sys_valid = false;
	decide(&e, NULL, &v);
	assert_int_equal(v.cls, BP_CLASS_SYSCALL);
	assert_true(has_line(&v, true, "Make fewer system calls"));
	assert_false(has_line(&v, false, "write calls in"));
	/* big calls: the bytes are not the problem, the count is */
	e = one_byte_calls();
	e.sys_rbytes = e.sys_wbytes = 4000000ULL * 1024 * 1024;
	decide(&e, NULL, &v);
	assert_false(has_line(&v, true, "Make fewer, larger calls"));
	assert_string_equal(bp_syscall_label(0, name, sizeof(name)), "read");
	assert_string_equal(bp_syscall_label(262, name, sizeof(name)), "newfstatat");
	assert_string_equal(bp_syscall_label(999, name, sizeof(name)), "syscall 999");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names__match_the_contract),
		cmocka_unit_test(classes__every_class_through_every_accessor),
		cmocka_unit_test(docs__every_verdict_class_named),
		cmocka_unit_test(amdahl__arithmetic),
		cmocka_unit_test(cpu__fits_cache__high),
		cmocka_unit_test(cpu__memory_unmeasured__medium),
		cmocka_unit_test(steal__said_with_what_it_costs),
		cmocka_unit_test(cpu__few_samples__one_level_down),
		cmocka_unit_test(membw__traffic_against_this_machine__any_llc),
		cmocka_unit_test(membw__little_traffic__cpu),
		cmocka_unit_test(membw__starved_process__judged_per_cpu_second),
		cmocka_unit_test(membw__blind_window__undecided_not_cpu),
		cmocka_unit_test(membw__missing_evidence__said_not_guessed),
		cmocka_unit_test(membw__measured_traffic_outranks_reported_cache),
		cmocka_unit_test(membw__rate_within_measured_cache__fits),
		cmocka_unit_test(membw__floor_beyond_the_cache_it_can_use__bandwidth),
		cmocka_unit_test(net__client_round_trips__io_bound_naming_the_network),
		cmocka_unit_test(net__server_waiting_for_requests__idle),
		cmocka_unit_test(peer__mostly_waiting_on_a_neighbour__blocked_on_peer),
		cmocka_unit_test(lead__a_copy_with_its_own_lines),
		cmocka_unit_test(membw__page_faults),
		cmocka_unit_test(pmu__ipc_and_mpki_decide),
		cmocka_unit_test(io__latency_bound_one_request_at_a_time),
		cmocka_unit_test(io__device_saturated),
		cmocka_unit_test(lock__threads_wait_on_one_mutex),
		cmocka_unit_test(starved__pinned_spinners),
		cmocka_unit_test(starved__wakeup_latency_on_idle_cpus_is_handoff),
		cmocka_unit_test(throttled__quota_explains_the_wait),
		cmocka_unit_test(throttled__contention_dominates_starved),
		cmocka_unit_test(io__memory_limit_named),
		cmocka_unit_test(idle__sleeps),
		cmocka_unit_test(idle__a_pipeline_of_sleepers),
		cmocka_unit_test(unknown__too_short),
		cmocka_unit_test(mixed__no_single_limit),
		cmocka_unit_test(confidence__borderline_and_short_runs_drop),
		cmocka_unit_test(thresholds__one_table_drives_the_decision),
		cmocka_unit_test(own__names_the_caller_with_the_library_as_reason),
		cmocka_unit_test(own__hints_follow_the_building_block),
		cmocka_unit_test(own__its_own_loop_keeps_the_compute_levers),
		cmocka_unit_test(own__library_without_a_caller_is_a_building_block),
		cmocka_unit_test(own__plain_building_block__lever_says_it_once),
		cmocka_unit_test(own__unnamed_callee__named_as_unnamed_with_how),
		cmocka_unit_test(own__unnamed_hot_code__asks_for_names),
		cmocka_unit_test(interp__modules_and_scripts),
		cmocka_unit_test(interp__verdict_names_no_internals),
		cmocka_unit_test(own__the_table_and_own),
		cmocka_unit_test(syscall__one_byte_calls),
		cmocka_unit_test(syscall__below_threshold_or_faults_is_compute),
	};

	return cmocka_run_group_tests_name("classify", tests, NULL, release);
}
