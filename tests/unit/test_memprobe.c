// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe: /proc parsing and the probe state machine on a fake /proc with
 * an injected clock, and one real probe of a child touching 64 MiB.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc/memprobe.h"
#include "unit/builders.h"

/* Debian 12's cmocka 1.1 has no assert_double_equal */
#define assert_near(a, b, eps)                                                         \
	do {                                                                           \
		double a_ = (a), b_ = (b);                                             \
		if (!(fabs(a_ - b_) <= (eps)))                                         \
			fail_msg("%s = %.17g, expected %.17g", #a, a_, b_);            \
	} while (0)

#define KiB	1024ULL
#define MiB	(1024ULL * KiB)
#define LLC	(32 * MiB)
/* the injected clock: milliseconds after an arbitrary, non-zero origin */
#define T(ms)	(1000000000000ULL + (uint64_t)(ms) * 1000000ULL)

/* ------------------------------------------------------------ temp trees */

static char root[64];
/* the probe under test, freed by the teardown even when an assertion fails */
static struct bp_memprobe *cur;

static int tree_setup(void **state)
{
	bld_tree_make(root, sizeof(root), "memprobe");
	return 0;
}

static int tree_teardown(void **state)
{
	bp_memprobe__free(cur);
	cur = NULL;
	bld_tree_remove(root);
	return 0;
}

/* ------------------------------------------------------------ fake /proc */

/* utime of the next stat lines written (stime is 12) */
static uint64_t fake_utime = 11;

/* a /proc/PID/stat line; the comm tries to fool parsers that stop at the first ')' */
static void put_stat(pid_t pid, uint64_t minflt, uint64_t majflt, uint64_t start,
		     uint64_t rss_bytes)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/stat", pid);
	bld_tree_put(root, rel, "%d (a) R 9 (b c) S 1 1 1 0 -1 4194304 %llu 7 %llu 3 %llu 12 0 0 20 0 2 0 "
		      "%llu 3133440 %llu 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 1\n",
		 pid, (unsigned long long)minflt, (unsigned long long)majflt,
		 (unsigned long long)fake_utime, (unsigned long long)start,
		 (unsigned long long)(rss_bytes / sysconf(_SC_PAGESIZE)));
}

static void put_rollup(pid_t pid, uint64_t rss_kb, uint64_t ref_kb)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/smaps_rollup", pid);
	bld_tree_put(root, rel, "56287604a000-7ffcd504f000 ---p 00000000 00:00 0                          "
		      "[rollup]\nRss:            %6llu kB\nPss:                 513 kB\n"
		      "Referenced:     %6llu kB\nAnonymous:           116 kB\n",
		 (unsigned long long)rss_kb, (unsigned long long)ref_kb);
}

/* a fake process: stat, smaps_rollup and an empty clear_refs */
static void put_proc(pid_t pid, uint64_t start, uint64_t rss_bytes)
{
	char rel[64];

	put_stat(pid, 100, 5, start, rss_bytes);
	put_rollup(pid, rss_bytes / KiB, 0);
	snprintf(rel, sizeof(rel), "%d/clear_refs", pid);
	bld_tree_put(root, rel, "%s", "");
}

/* was clear_refs written since the last look? (empties it again) */
static bool took_clear(pid_t pid)
{
	char path[512], buf[8] = "";
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%d/clear_refs", root, pid);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	if (!n)
		return false;
	assert_string_equal(buf, "1");
	assert_int_equal(truncate(path, 0), 0);
	return true;
}

static struct bp_memprobe *fake_probe(void)
{
	struct bp_memprobe_opts o = {
		.proc_root = root,
		.llc_bytes = LLC,
	};
	cur = bp_memprobe__new(&o);
	assert_non_null(cur);
	return cur;
}

static struct bp_mem_evidence evidence(struct bp_memprobe *m, pid_t pid, uint64_t now)
{
	struct bp_mem_evidence ev;

	assert_int_equal(bp_memprobe__evidence(m, pid, now, &ev), 0);
	return ev;
}

/* ------------------------------------------------------------ parsing */

static void parse_stat__weird_comm__fields_after_last_paren(void **state)
{
	const char *text = "4242 (x) 1 2 3 4 5 6 7 8 9 (y)) S 1 2 3 4 5 6 777 8 99 10 11 12 13 "
			   "14 15 16 17 18 123456 20 2048 22 23\n";
	struct bp_pid_stat st;

	assert_int_equal(bp_memprobe_parse_stat(text, &st), 0);
	assert_int_equal(st.minflt, 777);
	assert_int_equal(st.majflt, 99);
	assert_int_equal(st.start_ticks, 123456);
	assert_int_equal(st.rss_pages, 2048);
	assert_int_equal(st.cpu, -1);		/* the line ends before field 39 */
}

static void parse_stat__real_self__has_start_and_rss(void **state)
{
	char buf[1024];
	struct bp_pid_stat st;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_int_equal(bp_memprobe_parse_stat(buf, &st), 0);
	assert_true(st.start_ticks > 0);
	assert_true(st.rss_pages > 0);
	assert_true(st.minflt > 0);
	assert_true(st.cpu >= 0);
}

static void parse_stat__truncated_or_no_comm__einval(void **state)
{
	struct bp_pid_stat st;

	assert_int_equal(bp_memprobe_parse_stat("12 (a) R 1 2 3 4 5 6 7 8\n", &st), -EINVAL);
	assert_int_equal(bp_memprobe_parse_stat("12 a R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
						"17 18 19 20 21 22", &st), -EINVAL);
	assert_int_equal(bp_memprobe_parse_stat("", &st), -EINVAL);
}

static void parse_rollup__rss_and_referenced__bytes(void **state)
{
	const char *text = "5628-7ffc ---p 00000000 00:00 0   [rollup]\n"
			   "Rss:              196712 kB\nPss:                 513 kB\n"
			   "Referenced:        188416 kB\nAnonymous:           116 kB\n";
	uint64_t rss = 0, ref = 0;

	assert_int_equal(bp_memprobe_parse_rollup(text, &rss, &ref), 0);
	assert_int_equal(rss, 196712 * KiB);
	assert_int_equal(ref, 188416 * KiB);
	assert_int_equal(bp_memprobe_parse_rollup("Rss: 12 kB\nPss: 3 kB\n", &rss, &ref), -EINVAL);
	assert_int_equal(bp_memprobe_parse_rollup("", &rss, &ref), -EINVAL);
}

/* ------------------------------------------------------------ state machine */

#define BIG	(64 * MiB)

static void probe__window_and_every__clear_then_read_on_time(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	int ms;

	put_proc(100, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 100, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(100));
	assert_int_equal(evidence(m, 100, T(0)).probes, 0);

	/* not read before the window is over */
	put_rollup(100, BIG / KiB, 2000);
	bp_memprobe__tick(m, T(500));
	bp_memprobe__tick(m, T(900));
	assert_false(took_clear(100));
	assert_int_equal(evidence(m, 100, T(900)).probes, 0);

	put_rollup(100, 65600, 50000);
	bp_memprobe__tick(m, T(1000));
	ev = evidence(m, 100, T(1000));
	assert_int_equal(ev.probes, 1);
	assert_int_equal(ev.wss_max, 50000 * KiB);
	assert_near(ev.wss_max_per_s, 50000.0 * KiB, 1);
	/* smaps_rollup's Rss at the read, then stat's at the next look */
	assert_int_equal(ev.rss, BIG);

	/* then idle until 5 s after the clear, while staying busy */
	for (ms = 1100; ms < 5000; ms += 100) {
		if (ms % 1000 == 0)
			bp_memprobe__seen(m, 100, 1.0, T(ms));
		bp_memprobe__tick(m, T(ms));
		assert_false(took_clear(100));
	}
	bp_memprobe__tick(m, T(5000));
	assert_true(took_clear(100));
	/* a read that overshoots the window by a tick counts the real window */
	put_rollup(100, BIG / KiB, 100);
	bp_memprobe__tick(m, T(6100));
	ev = evidence(m, 100, T(6100));
	assert_int_equal(ev.probes, 2);
	assert_int_equal(ev.wss_max, 50000 * KiB);
}

static void probe__low_cpu_small_rss_or_stale__never_cleared(void **state)
{
	struct bp_memprobe *m;
	int ms;

	put_proc(101, 5000, BIG);		/* low CPU */
	put_proc(102, 5000, 16 * MiB);		/* fits in the LLC */
	put_proc(103, 5000, BIG);		/* busy once, then not seen */
	m = fake_probe();
	bp_memprobe__seen(m, 103, 2.0, T(0));
	for (ms = 4000; ms <= 20000; ms += 100) {
		if (ms % 1000 == 0) {
			bp_memprobe__seen(m, 101, 0.2, T(ms));
			bp_memprobe__seen(m, 102, 2.0, T(ms));
		}
		bp_memprobe__tick(m, T(ms));
	}
	assert_false(took_clear(101));
	assert_false(took_clear(102));
	assert_false(took_clear(103));
	/* all three still have fault evidence */
	assert_true(evidence(m, 101, T(20000)).valid);
	assert_true(evidence(m, 102, T(20000)).valid);
	assert_true(evidence(m, 103, T(20000)).valid);
}

static void probe__rss_grows_past_llc__becomes_candidate(void **state)
{
	struct bp_memprobe *m;

	put_proc(104, 5000, 16 * MiB);
	m = fake_probe();
	bp_memprobe__seen(m, 104, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_false(took_clear(104));
	put_stat(104, 100, 5, 5000, BIG);
	bp_memprobe__seen(m, 104, 1.0, T(1000));
	bp_memprobe__tick(m, T(1000));
	assert_true(took_clear(104));
}

/*
 * A busy drain is skipped only when processes too small to probe ran all
 * the sampled CPU: their CPU time from stat against what the samples say.
 */
static void explains__small_busy_ran_it__not_a_new_one_or_grown(void **state)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct bp_memprobe *m;

	fake_utime = 11;
	put_proc(201, 5000, 16 * MiB);		/* busy, fits in the LLC */
	put_proc(202, 5000, 16 * MiB);		/* small and light */
	m = fake_probe();
	/* no process known busy: nothing is explained */
	assert_false(bp_memprobe__explains(m, 1.0, 2.0, T(0)));
	bp_memprobe__seen(m, 201, 1.0, T(0));
	bp_memprobe__seen(m, 202, 0.1, T(0));
	/* 2 s later: it ran 1.9 s of the 2.0 sampled */
	fake_utime = 11 + 19 * hz / 10;
	put_stat(201, 100, 5, 5000, 16 * MiB);
	assert_true(bp_memprobe__explains(m, 2.0, 2.0, T(2000)));
	/* 2 s more: it ran 1.0 of 2.0 sampled, and 1.0 CPU is someone else's */
	fake_utime += hz;
	put_stat(201, 100, 5, 5000, 16 * MiB);
	assert_false(bp_memprobe__explains(m, 2.0, 2.0, T(4000)));
	/* it ran it all, but grew past what can be probed: a drain tells the probe */
	fake_utime += 2 * hz;
	put_stat(201, 100, 5, 5000, BIG);
	assert_false(bp_memprobe__explains(m, 2.0, 2.0, T(6000)));
	/* too small a remainder to be a candidate: 0.4 of 2 s is under 0.25 CPU */
	fake_utime += 2 * hz;
	put_stat(201, 100, 5, 5000, 16 * MiB);
	bp_memprobe__seen(m, 201, 1.0, T(6000));
	fake_utime += 2 * hz;
	put_stat(201, 100, 5, 5000, 16 * MiB);
	assert_true(bp_memprobe__explains(m, 2.4, 2.0, T(8000)));
	fake_utime = 11;
}

static void faults__counted_since_first_sight(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;

	put_proc(110, 5000, 16 * MiB);
	put_stat(110, 1000, 20, 5000, 16 * MiB);
	m = fake_probe();
	bp_memprobe__seen(m, 110, 0.1, T(0));
	ev = evidence(m, 110, T(0));
	assert_true(ev.valid);
	assert_int_equal(ev.minflt, 0);
	assert_int_equal(ev.majflt, 0);
	assert_int_equal(ev.rss, 16 * MiB);

	put_stat(110, 1750, 23, 5000, 20 * MiB);
	ev = evidence(m, 110, T(2500));
	assert_int_equal(ev.minflt, 750);
	assert_int_equal(ev.majflt, 3);
	assert_near(ev.fault_window_s, 2.5, 1e-9);
	assert_int_equal(ev.rss, 20 * MiB);
	assert_int_equal(ev.probes, 0);
}

static void exited__last_values_stand__no_more_proc_access(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	int ms;

	put_proc(120, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 120, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(120));
	put_stat(120, 150, 5, 5000, BIG);
	bp_memprobe__exited(m, 120);
	/* the probe in flight is dropped, and the pid left alone */
	put_stat(120, 400, 9, 5000, BIG);
	for (ms = 100; ms <= 12000; ms += 100) {
		if (ms % 1000 == 0)
			bp_memprobe__seen(m, 120, 1.0, T(ms));
		bp_memprobe__tick(m, T(ms));
	}
	assert_false(took_clear(120));
	ev = evidence(m, 120, T(12000));
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 0);
	assert_int_equal(ev.minflt, 0);	/* read at first sight only, before the exit */
	assert_near(ev.fault_window_s, 0, 1e-9);
	bp_memprobe__exited(m, 999);		/* unknown pid: nothing */
}

static void vanished__marked_gone__evidence_kept(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	char path[512];

	put_proc(121, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 121, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(121));
	put_stat(121, 130, 6, 5000, BIG);
	assert_int_equal(evidence(m, 121, T(500)).minflt, 30);
	snprintf(path, sizeof(path), "%s/121", root);
	bld_tree_remove(path);
	bp_memprobe__tick(m, T(1000));	/* the read finds nothing */
	ev = evidence(m, 121, T(1000));
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 0);
	assert_int_equal(ev.minflt, 30);
	assert_int_equal(ev.majflt, 1);
	assert_near(ev.fault_window_s, 0.5, 1e-9);
}

static void pid_reuse__not_probed_as_old__new_one_starts_over(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;

	put_proc(130, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 130, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(130));
	put_rollup(130, BIG / KiB, 40000);
	bp_memprobe__tick(m, T(1000));
	assert_int_equal(evidence(m, 130, T(1000)).probes, 1);

	/* the process exits unnoticed and another one gets pid 130 */
	put_stat(130, 7, 0, 9000, BIG);
	bp_memprobe__seen(m, 130, 1.0, T(4000));	/* that seen is the new one's */
	ev = evidence(m, 130, T(4000));
	assert_int_equal(ev.probes, 0);
	assert_int_equal(ev.minflt, 0);
	assert_true(ev.valid);
	bp_memprobe__tick(m, T(4000));
	assert_true(took_clear(130));
}

static void pid_reuse__found_at_clear__no_clear(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;

	put_proc(131, 5000, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 131, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(131));
	put_rollup(131, BIG / KiB, 40000);
	bp_memprobe__tick(m, T(1000));
	bp_memprobe__seen(m, 131, 1.0, T(4000));

	put_stat(131, 7, 0, 9000, BIG);
	bp_memprobe__tick(m, T(5000));
	assert_false(took_clear(131));
	ev = evidence(m, 131, T(5000));
	assert_int_equal(ev.probes, 1);
	assert_int_equal(ev.wss_max, 40000 * KiB);
	assert_int_equal(ev.minflt, 0);

	/* after exited(), only a seen() proves the new process */
	bp_memprobe__exited(m, 131);
	bp_memprobe__tick(m, T(6000));
	assert_false(took_clear(131));
	bp_memprobe__seen(m, 131, 1.0, T(7000));
	bp_memprobe__tick(m, T(7000));
	assert_true(took_clear(131));
}

static void tick__two_due__one_clear_per_tick(void **state)
{
	struct bp_memprobe *m;
	bool a, b;

	put_proc(140, 5000, BIG);
	put_proc(141, 5001, BIG);
	m = fake_probe();
	bp_memprobe__seen(m, 140, 1.0, T(0));
	bp_memprobe__seen(m, 141, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	a = took_clear(140);
	b = took_clear(141);
	assert_true(a != b);
	bp_memprobe__tick(m, T(100));
	assert_true(took_clear(a ? 141 : 140));
	assert_false(took_clear(a ? 140 : 141));
}

static void probe__proc_files_missing__quiet_partial(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	char path[512];

	put_proc(150, 5000, BIG);
	snprintf(path, sizeof(path), "%s/150/smaps_rollup", root);
	assert_int_equal(unlink(path), 0);
	m = fake_probe();
	bp_memprobe__seen(m, 150, 1.0, T(0));
	bp_memprobe__tick(m, T(0));
	assert_true(took_clear(150));
	bp_memprobe__tick(m, T(1000));
	ev = evidence(m, 150, T(1000));
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 0);

	/* never seen: -ENOENT; seen but no stat: present, not valid */
	assert_int_equal(bp_memprobe__evidence(m, 151, T(0), &ev), -ENOENT);
	bp_memprobe__seen(m, 152, 1.0, T(0));
	bp_memprobe__tick(m, T(100));
	ev = evidence(m, 152, T(100));
	assert_false(ev.valid);
}

static void table__over_cap__least_recently_seen_dropped(void **state)
{
	struct bp_memprobe *m;
	struct bp_mem_evidence ev;
	pid_t pid;

	/* no /proc at all: entries without evidence, which is enough here */
	m = fake_probe();
	for (pid = 1; pid <= BP_MEMPROBE_MAX_PROCS; pid++)
		bp_memprobe__seen(m, pid, 0.1, T(0));
	bp_memprobe__seen(m, 1, 0.1, T(1000));
	bp_memprobe__seen(m, BP_MEMPROBE_MAX_PROCS + 1, 0.1, T(1000));
	assert_int_equal(bp_memprobe__evidence(m, 1, T(1000), &ev), 0);
	assert_int_equal(bp_memprobe__evidence(m, 2, T(1000), &ev), -ENOENT);
	assert_int_equal(bp_memprobe__evidence(m, 3, T(1000), &ev), 0);
	assert_int_equal(bp_memprobe__evidence(m, BP_MEMPROBE_MAX_PROCS + 1, T(1000), &ev), 0);
	bp_memprobe__tick(m, T(1100));
}

static void new__defaults__llc_detected(void **state)
{
	struct bp_memprobe *m = bp_memprobe__new(NULL);

	assert_non_null(m);
	assert_true(bp_memprobe__llc_bytes(m) > 0);
	bp_memprobe__free(m);
	bp_memprobe__free(NULL);
}

/* ------------------------------------------------------------ a real process */

#define CHILD_BYTES	(64 * MiB)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void __attribute__((noreturn)) toucher(int ready_fd, pid_t parent)
{
	volatile unsigned char *buf;
	size_t i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	buf = mmap(NULL, CHILD_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(1);
	for (i = 0; i < CHILD_BYTES; i += 64)
		buf[i] = 1;
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	for (;;)
		for (i = 0; i < CHILD_BYTES; i += 64)
			buf[i]++;
}

/* probe the child for real; no assertions here, so that the caller always reaps it */
static int probe_child(pid_t pid, int ready_fd, struct bp_mem_evidence *ev)
{
	struct bp_memprobe_opts o = {
		.llc_bytes = 32 * MiB,
		.window_s = 0.3,
	};
	struct pollfd pfd = { .fd = ready_fd, .events = POLLIN };
	uint64_t start, now, last_seen = 0;
	struct bp_memprobe *m;
	char c;
	int err = -ETIMEDOUT;

	if (poll(&pfd, 1, 10000) != 1 || read(ready_fd, &c, 1) != 1)
		return -EIO;
	m = bp_memprobe__new(&o);
	if (!m)
		return -ENOMEM;
	start = mono_ns();
	for (now = start; now - start < 10000000000ULL; now = mono_ns()) {
		/* the session reports CPU use after each drain, about every second */
		if (!last_seen || now - last_seen >= 1000000000ULL) {
			bp_memprobe__seen(m, pid, 1.0, now);
			last_seen = now;
		}
		bp_memprobe__tick(m, now);
		if (bp_memprobe__evidence(m, pid, now, ev) == 0 && ev->probes >= 1) {
			err = 0;
			break;
		}
		usleep(50000);
	}
	bp_memprobe__free(m);
	return err;
}

static void real_child__touching_64mib__wss_and_rss(void **state)
{
	struct bp_mem_evidence ev = {};
	pid_t parent = getpid(), pid;
	int fds[2], err;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		toucher(fds[1], parent);
	}
	close(fds[1]);
	err = probe_child(pid, fds[0], &ev);
	close(fds[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	print_message("child: wss_max %.1f MiB (%.1f MiB/s), rss %.1f MiB, minflt %llu\n",
		      (double)ev.wss_max / MiB, ev.wss_max_per_s / MiB, (double)ev.rss / MiB,
		      (unsigned long long)ev.minflt);
	assert_int_equal(err, 0);
	assert_true(ev.valid);
	assert_int_equal(ev.probes, 1);
	assert_true(ev.wss_max >= 32 * MiB);
	assert_true(ev.rss >= 64 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_stat__weird_comm__fields_after_last_paren),
		cmocka_unit_test(parse_stat__real_self__has_start_and_rss),
		cmocka_unit_test(parse_stat__truncated_or_no_comm__einval),
		cmocka_unit_test(parse_rollup__rss_and_referenced__bytes),
		cmocka_unit_test_setup_teardown(probe__window_and_every__clear_then_read_on_time,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(probe__low_cpu_small_rss_or_stale__never_cleared,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(probe__rss_grows_past_llc__becomes_candidate,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(faults__counted_since_first_sight, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(exited__last_values_stand__no_more_proc_access,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(vanished__marked_gone__evidence_kept, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(pid_reuse__not_probed_as_old__new_one_starts_over,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(pid_reuse__found_at_clear__no_clear, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(tick__two_due__one_clear_per_tick, tree_setup,
						tree_teardown),
		cmocka_unit_test_setup_teardown(probe__proc_files_missing__quiet_partial,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(table__over_cap__least_recently_seen_dropped,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(explains__small_busy_ran_it__not_a_new_one_or_grown,
						tree_setup, tree_teardown),
		cmocka_unit_test(new__defaults__llc_detected),
		cmocka_unit_test(real_child__touching_64mib__wss_and_rss),
	};

	return cmocka_run_group_tests_name("memprobe", tests, NULL, NULL);
}
