// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counters on real processes (root): a compute-bound fixture must
 * show a higher IPC and a lower MPKI than a memory-streaming one. A CPU
 * without a PMU (a guest without a virtual PMU) skips that test loudly. The
 * counting machinery itself (threads of a running process, inheritance from
 * a command held before exec) is checked everywhere with software events.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "proc/pmu.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static struct bp_pmu *pmu;
/* a command started by spawn_held() that the harness does not track */
static pid_t held = -1;

static int teardown(void **state)
{
	if (held > 0) {
		kill(held, SIGKILL);
		waitpid(held, NULL, 0);
		held = -1;
	}
	bp_pmu__free(pmu);
	pmu = NULL;
	h_cleanup();
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void banner_line(const char *fmt, ...)
{
	char line[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "* %-64s *\n", line);
}

static void no_pmu_banner(int err)
{
	const char *name = strerrorname_np(err);

	fprintf(stderr,
		"\n"
		"********************************************************************\n");
	banner_line("SKIPPED: the PMU test. This CPU has no hardware PMU:");
	banner_line("perf_event_open(PERF_TYPE_HARDWARE, cycles) failed with");
	banner_line("%s (%s).", name ? name : "?", strerror(err));
	banner_line("IPC, MPKI and the DRAM estimate are NOT tested here;");
	banner_line("run on bare metal or in a guest with a virtual PMU.");
	fprintf(stderr,
		"********************************************************************\n\n");
}

/*
 * Fork argv held before exec: returns once the child waits on *go_fd;
 * writing a byte there lets it exec. This is how a COMMAND is profiled:
 * counters added to the held child cover the whole tree by inheritance.
 */
static pid_t spawn_held(char *const argv[], int *go_fd, int *out_fd)
{
	int go[2], o[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(o, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);
		char c;

		setpgid(0, 0);
		dup2(devnull, 0);
		dup2(o[1], 1);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	close(o[1]);
	*go_fd = go[1];
	*out_fd = o[0];
	held = pid;
	return pid;
}

/* let the held command exec */
static void release(int go_fd)
{
	assert_int_equal(write(go_fd, "x", 1), 1);
	close(go_fd);
}

/* wait for the held command; its resource usage in *ru */
static void wait_held(pid_t pid, int out_fd, char *out, size_t len, struct rusage *ru)
{
	int status;
	ssize_t n, got = 0;

	while (got + 1 < (ssize_t)len && (n = read(out_fd, out + got, len - got - 1)) > 0)
		got += n;
	out[got] = '\0';
	close(out_fd);
	assert_int_equal(wait4(pid, &status, 0, ru), pid);
	held = -1;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void print_counts(const char *what, const struct bp_pmu_counts *c,
			 const struct bp_pmu_metrics *x)
{
	fprintf(stderr,
		"%s: cycles %llu instructions %llu misses %llu enabled %.2f s running %.2f s\n"
		"  -> IPC %.2f MPKI %.2f DRAM >= %.2f GB/s running %.0f%%%s%s\n",
		what, (unsigned long long)c->cycles, (unsigned long long)c->instructions,
		(unsigned long long)c->cache_misses, c->enabled_ns / 1e9, c->running_ns / 1e9,
		x->ipc, x->mpki, x->dram_gbs, 100 * x->running_frac,
		x->scaled ? " (scaled)" : "", x->misses_unknown ? " (misses unknown)" : "");
}

/* spin (compute) against triad (memory streaming): IPC up, MPKI down */
static void test_spin_vs_triad(void **state)
{
	struct bp_pmu_counts cs, ct;
	struct bp_pmu_metrics xs, xt;
	struct rusage ru;
	char line[64], out[512];
	struct run r;
	double t0, spin_s, triad_s;
	int fd, go;
	pid_t p;

	pmu = bp_pmu__new();
	if (!pmu) {
		no_pmu_banner(errno);
		skip();
	}

	/* -p style: spin is running, its threads are opened one by one */
	p = h_spawn(ARGV((char *)h_fixture("spin"), "2"), &fd);
	assert_true(p > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 10), 0);
	t0 = now();
	assert_int_equal(bp_pmu__add(pmu, p), 0);
	assert_int_equal(h_wait(p, fd, -1, 30, &r), 0);
	spin_s = now() - t0;
	assert_int_equal(r.exit_code, 0);
	h_run_free(&r);
	assert_int_equal(bp_pmu__read(pmu, p, &cs), 0);
	bp_pmu_metrics(&cs, spin_s, &xs);
	print_counts("spin 2", &cs, &xs);

	/* COMMAND style: triad held before exec, its threads inherit */
	p = spawn_held(ARGV((char *)h_fixture("triad"), "2"), &go, &fd);
	assert_true(p > 0);
	assert_int_equal(bp_pmu__add(pmu, p), 0);
	t0 = now();
	release(go);
	wait_held(p, fd, out, sizeof(out), &ru);
	triad_s = now() - t0;
	fprintf(stderr, "%s", out);
	assert_int_equal(bp_pmu__read(pmu, p, &ct), 0);
	bp_pmu_metrics(&ct, triad_s, &xt);
	print_counts("triad 2", &ct, &xt);

	assert_true(cs.valid && ct.valid);
	assert_true(cs.cycles > 0 && cs.instructions > 0);
	assert_true(ct.cycles > 0 && ct.instructions > 0);
	assert_true(xs.ipc > xt.ipc);
	if (xs.misses_unknown || xt.misses_unknown) {
		fprintf(stderr, "PMU: no cache-misses event on this CPU: MPKI not compared\n");
		return;
	}
	assert_true(xs.mpki < xt.mpki);
}

/* CPU seconds (user + system) a running process has used so far */
/* the kernel's count of the first n threads of pid (schedstat, s), by thread id */
static void threads_cpu_s(pid_t pid, double *cpu, int n)
{
	char dir[64], path[600];
	struct dirent **ents;
	int i, k = 0, m;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	m = scandir(dir, &ents, NULL, versionsort);
	assert_true(m > 0);
	for (i = 0; i < m; i++) {
		unsigned long long on;
		FILE *f;

		if (ents[i]->d_name[0] != '.' && k < n) {
			snprintf(path, sizeof(path), "%s/%s/schedstat", dir, ents[i]->d_name);
			f = fopen(path, "r");
			assert_non_null(f);
			assert_int_equal(fscanf(f, "%llu", &on), 1);
			fclose(f);
			cpu[k++] = on / 1e9;
		}
		free(ents[i]);
	}
	free(ents);
	assert_int_equal(k, n);
}

static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	/* fields after the comm: state is field 3, utime 14, stime 15 */
	p = strrchr(buf, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &st), 2);
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

static const uint64_t soft_events[3] = {
	PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_PAGE_FAULTS,
};

/*
 * The same flows with software events, which every kernel has: the counted
 * task-clock must match the CPU time the kernel accounts to the process.
 */
static void test_soft_events_cover_threads_and_tree(void **state)
{
	struct bp_pmu_counts c;
	struct rusage ru;
	struct run r;
	char line[64], out[512];
	double before, after, counted, used, t0[2], t1[2];
	int fd, go;
	pid_t p;

	pmu = bp_pmu__new_events(PERF_TYPE_SOFTWARE, soft_events);
	assert_non_null(pmu);

	/* a running process with two threads: both are opened */
	p = h_spawn(ARGV((char *)h_fixture("spin"), "60", "2"), &fd);
	assert_true(p > 0);
	assert_int_equal(h_read_line(fd, line, sizeof(line), 10), 0);
	threads_cpu_s(p, t0, 2);
	before = proc_cpu_s(p);
	assert_int_equal(bp_pmu__add(pmu, p), 0);
	h_sleep(1.5);
	assert_int_equal(bp_pmu__read(pmu, p, &c), 0);
	after = proc_cpu_s(p);
	threads_cpu_s(p, t1, 2);
	counted = c.cycles / 1e9;
	used = after - before;
	fprintf(stderr, "spin 60 2: task-clock %.2f s, kernel accounted %.2f s (threads %.2f s, "
		"%.2f s)\n", counted, used, t1[0] - t0[0], t1[1] - t0[1]);
	/*
	 * as much as the kernel saw. How much CPU the two threads got is the
	 * machine's business; that each got enough that counting one alone
	 * would miss the mark is checked, so the case means what it says
	 */
	assert_true(fmin(t1[0] - t0[0], t1[1] - t0[1]) > 0.1 * used + 0.05);
	assert_true(counted > 0.9 * used - 0.05 && counted < 1.1 * used + 0.05);
	/* stop it: the next part wants both CPUs */
	kill(p, SIGKILL);
	assert_int_equal(h_wait(p, fd, -1, 10, &r), 0);
	h_run_free(&r);

	/* a command held before exec: its threads are counted by inheritance */
	p = spawn_held(ARGV((char *)h_fixture("triad"), "1", "16", "2"), &go, &fd);
	assert_true(p > 0);
	assert_int_equal(bp_pmu__add(pmu, p), 0);
	release(go);
	wait_held(p, fd, out, sizeof(out), &ru);
	fprintf(stderr, "%s", out);
	assert_int_equal(bp_pmu__read(pmu, p, &c), 0);
	counted = c.cycles / 1e9;
	used = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
	fprintf(stderr,
		"triad 1 16 2: task-clock %.2f s, rusage %.2f s; page faults %llu, rusage %ld\n",
		counted, used, (unsigned long long)c.cache_misses, ru.ru_minflt + ru.ru_majflt);
	/* the main thread only waits for the two that stream: theirs is nearly all of it */
	assert_true(used > 0);
	assert_true(counted > 0.9 * used - 0.05 && counted < 1.1 * used + 0.05);
	assert_true(c.cache_misses >= 0.9 * (ru.ru_minflt + ru.ru_majflt));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_spin_vs_triad, teardown),
		cmocka_unit_test_teardown(test_soft_events_cover_threads_and_tree, teardown),
	};

	if (!h_need_root())
		return 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	return cmocka_run_group_tests_name("pmu", tests, NULL, NULL);
}
