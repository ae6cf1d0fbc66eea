// SPDX-License-Identifier: GPL-2.0
/*
 * What every test binary does around cmocka: it is linked with
 * -Wl,--wrap=_cmocka_run_group_tests (and the assertions below), so that
 * this runs first.
 *
 * - One case: `make test T=BINARY:CASE` sets BP_TEST_CASE, handed to
 *   cmocka's filter (1.1 has the filter, but reads no environment variable
 *   for it). A pattern that matches no case of the binary exits 77, and
 *   `make test T=` fails when no binary had a case, so that a typo is not
 *   a pass.
 * - Each case's time and outcome: a line "[     TIME ] case: 1.2 s" after
 *   it, and, when BP_TEST_RESULTS names a file, a row "binary case status
 *   seconds" appended to it, from which `make test` prints one summary
 *   (tests/summary.sh).
 * - When a case fails, the machine it failed on: kernel, CPU, the steal,
 *   CPU load and disk latency over the case, memory, and whatever the test
 *   binary adds (bp_test_failure_facts(): the integration harness prints
 *   boundprof's losses). A failure on a machine nobody can log in to again
 *   must say enough to find its cause.
 *
 * cmocka reports a failure only inside the library, so the failing
 * assertions are seen where the tests call them: the entry points the
 * assert_* macros expand to are wrapped, and each wrapper notes a failure
 * before handing over to cmocka unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* the integration harness adds what only it knows (weak: unit tests have none) */
void bp_test_failure_facts(void) __attribute__((weak));

int __real__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown);
int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown);

static const char *pattern;
static size_t matched;
/* no case of this binary matches: `make test T=` fails only if no binary had one */
#define NO_CASE_EXIT	77

/* --- the machine, sampled at a case's start and at its failure ------------ */

struct machine {
	double t;			/* CLOCK_MONOTONIC, s */
	unsigned long long busy, idle, steal, iowait;	/* /proc/stat ticks, all CPUs */
	unsigned long long ios, io_ms;	/* /proc/diskstats, whole disks */
};

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* whole disks only: partitions would count their disk's IO twice */
static bool whole_disk(const char *name)
{
	char path[300];

	if (!strncmp(name, "loop", 4) || !strncmp(name, "ram", 3) || !strncmp(name, "zram", 4))
		return false;
	snprintf(path, sizeof(path), "/sys/block/%s", name);
	return access(path, F_OK) == 0;
}

static void machine_read(struct machine *m)
{
	unsigned long long v[10] = { 0 };
	char line[512], name[64];
	FILE *f;

	memset(m, 0, sizeof(*m));
	m->t = mono_s();
	f = fopen("/proc/stat", "re");
	if (f) {
		if (fgets(line, sizeof(line), f) &&
		    sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) >= 8) {
			m->busy = v[0] + v[1] + v[2] + v[5] + v[6];
			m->idle = v[3];
			m->iowait = v[4];
			m->steal = v[7];
		}
		fclose(f);
	}
	f = fopen("/proc/diskstats", "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long rd, rd_ms, wr, wr_ms;
		unsigned int maj, min;

		/* major minor name reads merged sectors ms writes merged sectors ms */
		if (sscanf(line, "%u %u %63s %llu %*u %*u %llu %llu %*u %*u %llu", &maj, &min, name,
			   &rd, &rd_ms, &wr, &wr_ms) == 7 &&
		    whole_disk(name)) {
			m->ios += rd + wr;
			m->io_ms += rd_ms + wr_ms;
		}
	}
	if (f)
		fclose(f);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The disk's latency now: 16 uncached 4-KiB reads of this test binary at
 * spread offsets (O_DIRECT: the page cache would answer in microseconds).
 * The median in ms, or -errno.
 */
static double disk_p50_ms(void)
{
	enum { N = 16, SZ = 4096 };
	double t[N];
	struct stat st;
	void *buf;
	off_t span;
	int fd, i;

	fd = open("/proc/self/exe", O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < 2 * SZ || posix_memalign(&buf, SZ, SZ)) {
		close(fd);
		return -EINVAL;
	}
	span = st.st_size / SZ - 1;
	for (i = 0; i < N; i++) {
		double t0 = mono_s();

		if (pread(fd, buf, SZ, (off_t)(((long long)i * 7919) % span) * SZ) != SZ) {
			int err = errno ? -errno : -EIO;

			free(buf);
			close(fd);
			return err;
		}
		t[i] = (mono_s() - t0) * 1e3;
	}
	free(buf);
	close(fd);
	qsort(t, N, sizeof(*t), cmp_double);
	return (t[N / 2 - 1] + t[N / 2]) / 2;
}

static void meminfo(long *avail_mb, long *cached_mb)
{
	char line[256];
	long kb;
	FILE *f = fopen("/proc/meminfo", "re");

	*avail_mb = *cached_mb = -1;
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			*avail_mb = kb / 1024;
		else if (sscanf(line, "Cached: %ld kB", &kb) == 1)
			*cached_mb = kb / 1024;
	}
	if (f)
		fclose(f);
}

static void cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	snprintf(buf, len, "?");
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && !strncmp(line, "model name", 10)) {
			snprintf(buf, len, "%s", colon + 2);
			buf[strcspn(buf, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
}

/* --- the case now running --------------------------------------------------- */

struct case_rec {
	const struct CMUnitTest *orig;
};

static struct case_rec *recs;
static const struct case_rec *cur;	/* started, not yet written */
static void *group_state;
static CMFixtureFunction orig_group_setup;
static struct machine at_start;
static bool cur_failed, cur_skipped, facts_said;

static void facts(void)
{
	unsigned long long ticks, busy;
	struct machine now;
	struct utsname u;
	long hz = sysconf(_SC_CLK_TCK), avail, cached;
	double load[3] = { 0 }, p50, wall;
	char cpu[128];

	if (facts_said)
		return;
	facts_said = true;
	machine_read(&now);
	wall = now.t - at_start.t;
	uname(&u);
	cpu_model(cpu, sizeof(cpu));
	getloadavg(load, 3);
	meminfo(&avail, &cached);
	ticks = (now.busy - at_start.busy) + (now.idle - at_start.idle) +
		(now.iowait - at_start.iowait) + (now.steal - at_start.steal);
	busy = now.busy - at_start.busy;
	p50 = disk_p50_ms();
	fprintf(stderr, "--- the machine this case failed on (%.1f s into it) ---\n", wall);
	fprintf(stderr, "  kernel %s %s, %ld CPUs: %s\n", u.release, u.machine,
		sysconf(_SC_NPROCESSORS_ONLN), cpu);
	fprintf(stderr, "  over the case: CPUs %.0f%% busy, steal %.2f s, iowait %.2f s "
		"(all CPUs); load average now %.2f %.2f %.2f\n",
		ticks ? 100.0 * busy / ticks : 0.0, (double)(now.steal - at_start.steal) / hz,
		(double)(now.iowait - at_start.iowait) / hz, load[0], load[1], load[2]);
	if (now.ios > at_start.ios)
		fprintf(stderr, "  disk over the case: %llu IOs, %.2f ms each on average",
			now.ios - at_start.ios,
			(double)(now.io_ms - at_start.io_ms) / (now.ios - at_start.ios));
	else
		fprintf(stderr, "  disk over the case: no IO");
	if (p50 >= 0)
		fprintf(stderr, "; uncached 4-KiB read now p50 %.2f ms\n", p50);
	else
		fprintf(stderr, "; uncached read probe failed: %s\n", strerror((int)-p50));
	fprintf(stderr, "  memory: %ld MiB available, %ld MiB page cache\n", avail, cached);
	if (bp_test_failure_facts)
		bp_test_failure_facts();
	fprintf(stderr, "---\n");
}

static void failed(void)
{
	cur_failed = true;
	facts();
}

static void write_result(const struct case_rec *r, const char *status, double secs)
{
	const char *path = getenv("BP_TEST_RESULTS");
	FILE *f;

	fprintf(stderr, "[     TIME ] %s: %.1f s\n", r->orig->name, secs);
	if (!path || !*path)
		return;
	f = fopen(path, "ae");
	if (!f)
		return;
	fprintf(f, "%s\t%s\t%s\t%.1f\n", program_invocation_short_name, r->orig->name, status,
		secs);
	fclose(f);
}

static void finish(void)
{
	if (!cur)
		return;
	write_result(cur, cur_failed ? "FAILED" : cur_skipped ? "skipped" : "ok",
		     mono_s() - at_start.t);
	cur = NULL;
}

/* a case whose setup failed has no teardown: it is written when the next starts */
static void begin(const struct case_rec *r)
{
	finish();
	cur = r;
	cur_failed = cur_skipped = facts_said = false;
	machine_read(&at_start);
}

static int group_setup_w(void **state)
{
	int rc = orig_group_setup(state);

	group_state = *state;
	return rc;
}

static int setup_w(void **state)
{
	const struct case_rec *r = *state;

	begin(r);
	*state = r->orig->initial_state ? r->orig->initial_state : group_state;
	return r->orig->setup_func ? r->orig->setup_func(state) : 0;
}

static void test_w(void **state)
{
	cur->orig->test_func(state);
}

static int teardown_w(void **state)
{
	int rc = cur && cur->orig->teardown_func ? cur->orig->teardown_func(state) : 0;

	finish();
	return rc;
}

static void none_matched(void)
{
	finish();
	if (pattern && !matched) {
		fprintf(stderr, "no test case matches BP_TEST_CASE=%s\n", pattern);
		_exit(NO_CASE_EXIT);
	}
}

int __wrap__cmocka_run_group_tests(const char *group_name, const struct CMUnitTest *const tests,
				   const size_t num_tests, CMFixtureFunction group_setup,
				   CMFixtureFunction group_teardown)
{
	static bool once;
	struct CMUnitTest *w;
	size_t i, n = 0;
	int rc;

	if (!once) {
		once = true;
		pattern = getenv("BP_TEST_CASE");
		if (pattern && !*pattern)
			pattern = NULL;
		atexit(none_matched);
	}
	if (pattern) {
		for (i = 0; i < num_tests; i++)
			n += fnmatch(pattern, tests[i].name, 0) == 0;
		/* a group without the case: not even its group setup runs */
		if (!n)
			return 0;
		matched += n;
		cmocka_set_test_filter(pattern);
	}
	/* each case through the wrappers above; its own state comes back in setup_w */
	w = calloc(num_tests ? num_tests : 1, sizeof(*w));
	recs = calloc(num_tests ? num_tests : 1, sizeof(*recs));
	if (!w || !recs)
		return __real__cmocka_run_group_tests(group_name, tests, num_tests, group_setup,
						      group_teardown);
	for (i = 0; i < num_tests; i++) {
		recs[i].orig = &tests[i];
		w[i] = tests[i];
		w[i].initial_state = &recs[i];
		w[i].setup_func = setup_w;
		w[i].test_func = test_w;
		w[i].teardown_func = teardown_w;
	}
	orig_group_setup = group_setup;
	group_state = NULL;
	rc = __real__cmocka_run_group_tests(group_name, w, num_tests,
					    group_setup ? group_setup_w : NULL, group_teardown);
	finish();
	free(w);
	free(recs);
	recs = NULL;
	return rc;
}

/* --- the assertions, seen failing before cmocka takes over --------------- */

void __real__assert_true(const LargestIntegralType result, const char *const expression,
			 const char *const file, const int line);
void __wrap__assert_true(const LargestIntegralType result, const char *const expression,
			 const char *const file, const int line);
void __real__assert_int_equal(const LargestIntegralType a, const LargestIntegralType b,
			      const char *const file, const int line);
void __wrap__assert_int_equal(const LargestIntegralType a, const LargestIntegralType b,
			      const char *const file, const int line);
void __real__assert_int_not_equal(const LargestIntegralType a, const LargestIntegralType b,
				  const char *const file, const int line);
void __wrap__assert_int_not_equal(const LargestIntegralType a, const LargestIntegralType b,
				  const char *const file, const int line);
void __real__assert_string_equal(const char *const a, const char *const b,
				 const char *const file, const int line);
void __wrap__assert_string_equal(const char *const a, const char *const b,
				 const char *const file, const int line);
void __real__assert_string_not_equal(const char *const a, const char *const b,
				     const char *const file, const int line);
void __wrap__assert_string_not_equal(const char *const a, const char *const b,
				     const char *const file, const int line);
void __real__assert_memory_equal(const void *const a, const void *const b, const size_t size,
				 const char *const file, const int line);
void __wrap__assert_memory_equal(const void *const a, const void *const b, const size_t size,
				 const char *const file, const int line);
void __real__fail(const char *const file, const int line);
void __wrap__fail(const char *const file, const int line);
void __real__skip(const char *const file, const int line);
void __wrap__skip(const char *const file, const int line);

static bool str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

void __wrap__assert_true(const LargestIntegralType result, const char *const expression,
			 const char *const file, const int line)
{
	if (!result)
		failed();
	__real__assert_true(result, expression, file, line);
}

void __wrap__assert_int_equal(const LargestIntegralType a, const LargestIntegralType b,
			      const char *const file, const int line)
{
	if (a != b)
		failed();
	__real__assert_int_equal(a, b, file, line);
}

void __wrap__assert_int_not_equal(const LargestIntegralType a, const LargestIntegralType b,
				  const char *const file, const int line)
{
	if (a == b)
		failed();
	__real__assert_int_not_equal(a, b, file, line);
}

void __wrap__assert_string_equal(const char *const a, const char *const b,
				 const char *const file, const int line)
{
	if (!str_same(a, b))
		failed();
	__real__assert_string_equal(a, b, file, line);
}

void __wrap__assert_string_not_equal(const char *const a, const char *const b,
				     const char *const file, const int line)
{
	if (str_same(a, b))
		failed();
	__real__assert_string_not_equal(a, b, file, line);
}

void __wrap__assert_memory_equal(const void *const a, const void *const b, const size_t size,
				 const char *const file, const int line)
{
	if (a != b && (!a || !b || memcmp(a, b, size)))
		failed();
	__real__assert_memory_equal(a, b, size, file, line);
}

void __wrap__fail(const char *const file, const int line)
{
	failed();
	__real__fail(file, line);
}

void __wrap__skip(const char *const file, const int line)
{
	cur_skipped = true;
	__real__skip(file, line);
}
