// SPDX-License-Identifier: GPL-2.0
/*
 * Memory bandwidth calibration. docs/classification.md has why and how the
 * verdict uses it; the triad is the one of tests/fixtures/triad.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "proc/llc.h"
#include "proc/membw.h"
#include "proc/probecal.h"
#include "util/atomicfile.h"
#include "util/json.h"
#include "util/log.h"
#include "util/readfile.h"
#include "util/safeopen.h"

#define MiB		(1024ULL * 1024)
/* 2: cache_bytes, the cache this machine's threads stream from */
#define STATE_VERSION	2
/* a set streams "from the cache" at this many times the memory rate */
#define CACHE_SPEEDUP	1.5
/* the smallest set tried (three arrays of 2 MiB) */
#define CACHE_MIN	(6 * MiB)

const char *bp_state_dir(void)
{
	const char *d = getenv("BOUNDPROF_STATE_DIR");

	return d && *d ? d : "/var/lib/boundprof";
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *bp_cpu_model(const char *proc_root, char *buf, size_t len)
{
	char path[256], text[16384], *l, *v;
	struct bp_cpuid_regs r[3];
	ssize_t n;
	int i;

	snprintf(path, sizeof(path), "%s/cpuinfo", proc_root ? proc_root : "/proc");
	n = bp_read_small(path, text, sizeof(text));
	for (l = n > 0 ? text : NULL; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "model name", 10))
			continue;
		v = strchr(l, ':');
		if (!v)
			break;
		for (v++; *v == ' ' || *v == '\t'; v++)
			;
		snprintf(buf, len, "%.*s", (int)strcspn(v, "\n"), v);
		return buf;
	}
	/* CPUID 0x80000002-4: the brand string */
	for (i = 0; i < 3; i++)
		if (!bp_cpuid_native(NULL, 0x80000002 + i, 0, &r[i]))
			break;
	if (i == 3) {
		char brand[49];

		memcpy(brand, r, 48);
		brand[48] = '\0';
		for (v = brand; *v == ' '; v++)
			;
		snprintf(buf, len, "%s", v);
		return buf;
	}
	snprintf(buf, len, "unknown");
	return buf;
}

struct triad {
	double *a, *b, *c;
	size_t n;
	pthread_barrier_t go;
	double seconds;
	bool touched;		/* the arrays are in memory */
};

struct worker {
	struct triad *t;
	size_t lo, hi;
	uint64_t passes;
	pthread_t th;
};

static void pass(struct triad *t, size_t lo, size_t hi)
{
	size_t i;

	for (i = lo; i < hi; i++)
		t->a[i] = t->b[i] + 3.0 * t->c[i];
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct triad *t = w->t;
	double end;
	size_t i;

	/* first touch from the thread that streams the slice */
	for (i = w->lo; !t->touched && i < w->hi; i++) {
		t->a[i] = 0;
		t->b[i] = 1.0;
		t->c[i] = 2.0;
	}
	pthread_barrier_wait(&t->go);
	end = now_s() + t->seconds;
	do {
		pass(t, w->lo, w->hi);
		w->passes++;
	} while (now_s() < end);
	return NULL;
}

/* GB/s of a triad on n threads over the arrays (touched again by them first) */
static int stream(struct triad *t, uint32_t n, double *gbs)
{
	struct worker *w = calloc(n, sizeof(*w));
	double t0, el, bytes = 0;
	uint32_t i, started = 0;
	int err = 0;

	if (!w)
		return -ENOMEM;
	if (pthread_barrier_init(&t->go, NULL, n + 1)) {
		free(w);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		w[i] = (struct worker){ .t = t, .lo = t->n * i / n, .hi = t->n * (i + 1) / n };
		if (pthread_create(&w[i].th, NULL, run, &w[i])) {
			err = -EAGAIN;
			break;
		}
		started++;
	}
	/* a thread that could not start: the others must not wait for it */
	if (started < n) {
		for (i = started; i < n; i++)
			w[i].hi = w[i].lo;
		for (i = started; i < n; i++)
			pthread_barrier_wait(&t->go);
	}
	pthread_barrier_wait(&t->go);
	t0 = now_s();
	for (i = 0; i < started; i++)
		pthread_join(w[i].th, NULL);
	el = now_s() - t0;
	for (i = 0; i < started; i++)
		bytes += 24.0 * (w[i].hi - w[i].lo) * w[i].passes;
	pthread_barrier_destroy(&t->go);
	free(w);
	*gbs = el > 0 ? bytes / el / 1e9 : 0;
	t->touched = true;
	return err;
}

/*
 * The best of three short runs: other work on the machine can only take
 * bandwidth away, so the most we reach is the closest to what it has.
 */
static int best_of(struct triad *t, uint32_t n, double *gbs)
{
	double g;
	int i, err;

	*gbs = 0;
	for (i = 0; i < 3; i++) {
		err = stream(t, n, &g);
		if (err)
			return err;
		if (g > *gbs)
			*gbs = g;
	}
	return 0;
}

/* MemAvailable of /proc/meminfo in bytes; 0 unknown */
static uint64_t mem_available(void)
{
	char text[4096], *l;

	if (bp_read_small("/proc/meminfo", text, sizeof(text)) <= 0)
		return 0;
	l = strstr(text, "MemAvailable:");
	return l ? strtoull(l + 13, NULL, 10) * 1024 : 0;
}

/*
 * The largest set threads threads stream clearly faster than memory (their
 * memory rate, mem_gbs), trying
 * sets that double from CACHE_MIN up to the cache the CPU reports: a guest
 * is told of the host socket's whole L3, shared with its other tenants, and
 * a 192 MiB triad under a reported 256 MiB streamed at memory speed here.
 * The arrays' prefixes serve, already touched. Each run is 8 passes at
 * memory speed and 20 ms at least, so the first pass (from memory) weighs
 * little. One thread alone is a poor judge: in a guest here it streamed a
 * cached set only 1.4-1.7x faster than memory, two threads 2-3x. One slow
 * set can be a neighbour's burst, two in a row end the search. 0 when no
 * set streamed faster than memory: unknown.
 */
static int usable_cache(struct triad *t, uint32_t threads, uint64_t llc_bytes, double mem_gbs,
			uint64_t *out)
{
	size_t all = t->n;
	uint64_t set;
	int err = 0, slow = 0;
	double g;

	*out = 0;
	for (set = CACHE_MIN; set <= llc_bytes && set / 3 / sizeof(double) <= all && slow < 2;
	     set *= 2) {
		t->n = set / 3 / sizeof(double);
		t->seconds = 8.0 * set / (mem_gbs * 1e9);
		if (t->seconds < 0.02)
			t->seconds = 0.02;
		err = best_of(t, threads, &g);
		if (err)
			break;
		bp_dbg("membw: %u threads over 3 x %llu MiB: %.1f GB/s (memory %.1f)", threads,
		       (unsigned long long)(set / 3 / MiB), g, mem_gbs);
		if (g < CACHE_SPEEDUP * mem_gbs) {
			slow++;
			continue;
		}
		slow = 0;
		*out = set;
	}
	t->n = all;
	return err;
}

int bp_membw_measure(uint64_t llc_bytes, uint32_t threads, double seconds, struct bp_membw *out)
{
	uint64_t total = 4 * llc_bytes, avail = mem_available();
	struct triad t = { .seconds = seconds };
	size_t each;
	void *mem;
	int err;

	memset(out, 0, sizeof(*out));
	if (total < 256 * MiB)
		total = 256 * MiB;
	if (total > 1024 * MiB)
		total = 1024 * MiB;
	if (avail && total > avail / 4)
		total = avail / 4;
	if (total < 16 * MiB)
		return -ENOMEM;
	each = total / 3 / sizeof(double);
	/* populated by the kernel: a fault per page costs much more in a guest */
	mem = mmap(NULL, 3 * each * sizeof(double), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	t.a = mem;
	t.b = t.a + each;
	t.c = t.b + each;
	t.n = each;
	t.seconds = seconds / 3;
	if (threads < 1)
		threads = 1;
	err = best_of(&t, 1, &out->gbs_1);
	if (!err && threads > 1)
		err = best_of(&t, threads, &out->gbs_n);
	else
		out->gbs_n = out->gbs_1;
	if (!err && out->gbs_1 > 0)
		err = usable_cache(&t, threads, llc_bytes, out->gbs_n, &out->cache_bytes);
	munmap(mem, 3 * each * sizeof(double));
	if (err)
		return err;
	out->threads = threads;
	out->bytes = 3 * each * sizeof(double);
	out->when = time(NULL);
	bp_cpu_model(NULL, out->cpu, sizeof(out->cpu));
	return 0;
}

int bp_membw_format(const struct bp_membw *m, char *buf, size_t len)
{
	struct bp_buf b = BP_BUF_INIT;
	struct bp_json_w w;
	int err;

	bp_json_w_init(&w, &b, true);
	bp_json_w_begin_object(&w);
	bp_json_w_kv_int64(&w, "version", STATE_VERSION);
	bp_json_w_kv_string(&w, "cpu", m->cpu);
	bp_json_w_kv_int64(&w, "measured_unix_s", m->when);
	bp_json_w_kv_double(&w, "one_thread_gbs", m->gbs_1);
	bp_json_w_kv_double(&w, "gbs", m->gbs_n);
	bp_json_w_kv_uint64(&w, "threads", m->threads);
	bp_json_w_kv_uint64(&w, "bytes", m->bytes);
	bp_json_w_kv_uint64(&w, "cache_bytes", m->cache_bytes);
	if (m->probe_boot[0]) {
		bp_json_w_key(&w, "traffic_window");
		bp_json_w_begin_object(&w);
		bp_json_w_kv_string(&w, "boot_id", m->probe_boot);
		bp_json_w_kv_int64(&w, "error", m->probe_err);
		bp_json_w_kv_double(&w, "stream_gbs", m->probe_stream_gbs);
		bp_json_w_kv_double(&w, "seen_gbs", m->probe_seen_gbs);
		bp_json_w_kv_double(&w, "visible", m->probe_visible);
		bp_json_w_kv_bool(&w, "floor", m->probe_floor);
		bp_json_w_end_object(&w);
	}
	bp_json_w_end_object(&w);
	err = bp_json_w_finish(&w);
	if (!err && b.len + 2 > len)
		err = -ENOSPC;
	if (!err) {
		memcpy(buf, b.data, b.len);
		buf[b.len] = '\n';
		buf[b.len + 1] = '\0';
	}
	bp_buf_free(&b);
	return err;
}

/* a calibration that does not parse whole is none: it is redone */
static void parse_window(const struct bp_json *o, struct bp_membw *out)
{
	const char *boot = bp_json_str(bp_json_get(o, "boot_id"));
	double e = bp_json_num(bp_json_get(o, "error"));

	if (!boot || !*boot || strlen(boot) >= sizeof(out->probe_boot) || !(e <= 0 && e > -4096))
		return;
	out->probe_stream_gbs = bp_json_num(bp_json_get(o, "stream_gbs"));
	out->probe_seen_gbs = bp_json_num(bp_json_get(o, "seen_gbs"));
	out->probe_visible = bp_json_num(bp_json_get(o, "visible"));
	/* NaN fails these too */
	if (!e && !(out->probe_stream_gbs > 0 && out->probe_seen_gbs >= 0 &&
		    out->probe_visible >= 0 && out->probe_visible < 1e3))
		return;
	out->probe_err = (int)e;
	out->probe_floor = bp_json_bool(bp_json_get(o, "floor")) == 1;
	snprintf(out->probe_boot, sizeof(out->probe_boot), "%s", boot);
}

int bp_membw_parse(const char *text, size_t len, struct bp_membw *out)
{
	struct bp_json *j = bp_json_parse(text, len, NULL, 0);
	const char *cpu;
	uint64_t v, t, b, c;
	int err = -EINVAL;

	memset(out, 0, sizeof(*out));
	if (!j)
		return -EINVAL;
	cpu = bp_json_str(bp_json_get(j, "cpu"));
	if (bp_json_uint(bp_json_get(j, "version"), &v) || v != STATE_VERSION || !cpu ||
	    bp_json_uint(bp_json_get(j, "threads"), &t) || !t || t > 4096 ||
	    bp_json_uint(bp_json_get(j, "bytes"), &b) ||
	    bp_json_uint(bp_json_get(j, "cache_bytes"), &c) || c > (1ULL << 40))
		goto out;
	out->gbs_1 = bp_json_num(bp_json_get(j, "one_thread_gbs"));
	out->gbs_n = bp_json_num(bp_json_get(j, "gbs"));
	out->when = (int64_t)bp_json_num(bp_json_get(j, "measured_unix_s"));
	/* NaN fails both */
	if (!(out->gbs_1 > 0 && out->gbs_1 < 1e5) || !(out->gbs_n > 0 && out->gbs_n < 1e6))
		goto out;
	out->threads = t;
	out->bytes = b;
	out->cache_bytes = c;
	snprintf(out->cpu, sizeof(out->cpu), "%s", cpu);
	parse_window(bp_json_get(j, "traffic_window"), out);
	err = 0;
out:
	bp_json_free(j);
	return err;
}

static int load(const char *path, struct bp_membw *out)
{
	struct bp_open_opts o = { .flags = BP_OPEN_OWNER, .uid = geteuid(), .max_size = 65536 };
	char text[65537];
	ssize_t n;
	int fd;

	fd = bp_open_untrusted(AT_FDCWD, path, &o, NULL);
	if (fd < 0)
		return fd;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	return bp_membw_parse(text, n, out);
}

static int save(const char *dir, const char *path, const struct bp_membw *m)
{
	struct bp_afile f = BP_AFILE_INIT;
	char text[1024];
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	err = bp_membw_format(m, text, sizeof(text));
	if (!err)
		err = bp_afile_open(&f, AT_FDCWD, path, 0644);
	if (!err)
		err = bp_afile_commit(&f, text, strlen(text));
	return err;
}

/*
 * The measurement in a child of ours: its arrays (256 MiB to 1 GiB) would
 * otherwise stay in the caller's peak resident set for good, and an
 * always-on agent is judged by that peak (a first run on a new machine
 * showed 261 MiB). The result comes back through a shared page.
 */
static int measure_apart(uint64_t llc_bytes, uint32_t threads, double seconds,
			 struct bp_membw *out)
{
	struct shared {
		int err;
		struct bp_membw m;
	} *sh;
	int err, status;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	sh->err = -ECHILD;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		munmap(sh, sizeof(*sh));
		return err;
	}
	if (!pid) {
		/* the parent's other threads may hold stdio's locks: no logging here */
		bp_log_set(NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "bp-membw");
		sh->err = bp_membw_measure(llc_bytes, threads, seconds, &sh->m);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		kill(pid, SIGKILL);
		break;
	}
	err = sh->err;
	if (!err)
		*out = sh->m;
	munmap(sh, sizeof(*sh));
	return err;
}

/* this boot's id, "" when the kernel does not say */
static void boot_id(char *buf, size_t len)
{
	ssize_t n = bp_read_small("/proc/sys/kernel/random/boot_id", buf, len);

	if (n <= 0)
		n = 0;
	buf[strcspn(buf, "\n")] = '\0';
	if (!n)
		buf[0] = '\0';
}

/* the traffic window against a stream, for this boot (probecal.h) */
static void calibrate_window(struct bp_membw *m, const char *boot)
{
	struct bp_probecal c;
	int err = bp_probecal_measure(&c);

	if (err == -ENOMEM || err == -EAGAIN) {
		/* nothing learnt about the window: try again next time */
		m->probe_boot[0] = '\0';
		return;
	}
	snprintf(m->probe_boot, sizeof(m->probe_boot), "%s", boot);
	m->probe_err = err;
	m->probe_stream_gbs = err ? 0 : c.stream_gbs;
	m->probe_seen_gbs = err ? 0 : c.seen_gbs;
	m->probe_visible = err ? 0 : c.visible;
	m->probe_floor = !err && c.floor;
}

int bp_membw_get(const char *state_dir, uint64_t llc_bytes, uint32_t threads,
		 struct bp_membw *out, bool *measured)
{
	char path[4096], cpu[128], boot[64];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int err;

	*measured = false;
	if (!state_dir)
		state_dir = bp_state_dir();
	snprintf(path, sizeof(path), "%s/membw.json", state_dir);
	bp_cpu_model(NULL, cpu, sizeof(cpu));
	boot_id(boot, sizeof(boot));
	if (!load(path, out) && !strcmp(out->cpu, cpu)) {
		if (!boot[0] || !strcmp(out->probe_boot, boot))
			return 0;
		calibrate_window(out, boot);
		err = save(state_dir, path, out);
		if (err)
			bp_info("traffic window calibration not kept in %s: %s", path,
				strerror(-err));
		return 0;
	}
	if (!threads)
		threads = ncpu > 16 ? 16 : ncpu > 0 ? ncpu : 1;
	/* 0.15 s a run: with the arrays' first touch, a few hundred ms in all */
	err = measure_apart(llc_bytes, threads, 0.15, out);
	if (err) {
		bp_warn("cannot measure this machine's memory bandwidth: %s", strerror(-err));
		return err;
	}
	*measured = true;
	if (boot[0])
		calibrate_window(out, boot);
	err = save(state_dir, path, out);
	if (err)
		bp_info("memory bandwidth not kept in %s: %s", path, strerror(-err));
	return 0;
}

const char *bp_membw_source(const struct bp_membw *m, char *buf, size_t len)
{
	char day[32] = "?";
	time_t t = m->when;
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	snprintf(buf, len, "measured %s on %s, %u thread%s, 3 x %llu MiB", day, m->cpu,
		 m->threads, m->threads == 1 ? "" : "s",
		 (unsigned long long)(m->bytes / 3 / MiB));
	return buf;
}
