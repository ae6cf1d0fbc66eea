// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic window calibrated against a stream that times itself
 * (probecal.h, docs/memprobe.md).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/memprobe.h"
#include "proc/probecal.h"
#include "proc/procinfo.h"
#include "util/log.h"

#define MiB		(1024ULL * 1024)
/*
 * Three arrays of 16 MiB: above memprobe's 32 MiB floor for a candidate
 * together, and cheap to set up (~0.1 s here). A working window sees the
 * whole set at any streaming rate (a floor, which says it sees); a blind
 * one reads ~1 GB/s at most, under a 48 MiB set in its ~15 ms.
 */
#define CAL_ARRAY	(16 * MiB)
#define CAL_N		(CAL_ARRAY / sizeof(double))
/* streaming before the window opens, and the longest wait for the child */
#define CAL_WARM_NS	30000000ULL
#define CAL_WAIT_NS	3000000000ULL
/*
 * Windows opened at most: a window the child spent off its CPU (a busy
 * host) reads little for want of CPU, not of sight, so the best of a few
 * counts, and one that saw enough ends the search.
 */
#define CAL_TRIES	3
/* a window in which the child had less CPU than this says nothing */
#define CAL_MIN_CPUS	0.25

/* shared with the child: it writes, we read after it stopped */
struct cal_shared {
	volatile int ready;	/* its arrays are in memory and it streams */
	volatile int stop;
	volatile uint64_t passes;
	volatile uint64_t cpu_ns;	/* its CPU time over those passes */
};

static void nap(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * The child: a triad until told to stop or the parent is gone. Only system
 * calls after the fork (the parent may have other threads holding locks).
 */
static void __attribute__((noreturn)) child(struct cal_shared *sh)
{
	double *a, *b, *c;
	uint64_t t0, passes = 0;
	size_t i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, "bp-probecal");
	a = mmap(NULL, 3 * CAL_ARRAY, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (a == MAP_FAILED)
		_exit(1);
	b = a + CAL_N;
	c = b + CAL_N;
	for (i = 0; i < CAL_N; i++) {
		a[i] = 0;
		b[i] = 1.0;
		c[i] = 2.0;
	}
	/* the first pass over fresh pages runs at a tenth of the speed here: not timed */
	for (i = 0; i < CAL_N; i++)
		a[i] = b[i] + 3.0 * c[i];
	sh->ready = 1;
	t0 = bp_thread_cpu_ns();
	while (!sh->stop) {
		for (i = 0; i < CAL_N; i++)
			a[i] = b[i] + 3.0 * c[i];
		passes++;
		sh->passes = passes;
		sh->cpu_ns = bp_thread_cpu_ns() - t0;
	}
	_exit(0);
}

static int wait_ready(const struct cal_shared *sh, pid_t pid)
{
	uint64_t end = bp_now_ns() + CAL_WAIT_NS;

	while (!sh->ready) {
		if (bp_now_ns() > end || waitpid(pid, NULL, WNOHANG) == pid)
			return -EAGAIN;
		nap(1000000);
	}
	return 0;
}

/* the traffic window on pid, as memprobe opens it on any target */
static int window(pid_t pid, struct bp_mem_evidence *ev)
{
	struct bp_memprobe_opts o = { .llc_bytes = 32 * MiB };
	struct bp_memprobe *m = bp_memprobe__new(&o);
	uint64_t now;
	int err;

	if (!m)
		return -ENOMEM;
	now = bp_now_ns();
	bp_memprobe__seen(m, pid, 1.0, now);
	bp_memprobe__tick(m, now);
	err = bp_memprobe__evidence(m, pid, bp_now_ns(), ev);
	bp_memprobe__free(m);
	if (!err && !ev->traffic_probes)
		err = -EPERM;
	return err;
}

int bp_probecal_measure(struct bp_probecal *out)
{
	struct bp_mem_evidence ev, best = {};
	struct cal_shared *sh;
	int err, status, try;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		munmap(sh, sizeof(*sh));
		return err;
	}
	if (!pid)
		child(sh);
	err = wait_ready(sh, pid);
	if (!err)
		nap(CAL_WARM_NS);
	for (try = 0; !err && try < CAL_TRIES; try++) {
		err = window(pid, &ev);
		if (err || ev.traffic_cpus < CAL_MIN_CPUS)
			continue;
		if (ev.traffic_per_cpu_s > best.traffic_per_cpu_s || !best.traffic_probes)
			best = ev;
		/* a floor is a lower bound already; either way the window sees */
		if (best.traffic_floor || (sh->cpu_ns && best.traffic_per_cpu_s >=
			BP_PROBECAL_VISIBLE_MIN * 24.0 * CAL_N * sh->passes / sh->cpu_ns * 1e9))
			break;
	}
	if (!err && !best.traffic_probes)
		err = -EAGAIN;
	sh->stop = 1;
	/* a pass over 192 MiB takes ms; a child that does not stop is killed */
	nap(20000000);
	if (waitpid(pid, &status, WNOHANG) != pid) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (!err && (!sh->passes || !sh->cpu_ns))
		err = -EAGAIN;
	if (!err) {
		out->stream_gbs = 24.0 * CAL_N * sh->passes / sh->cpu_ns;
		out->seen_gbs = best.traffic_per_cpu_s / 1e9;
		out->visible = out->seen_gbs / out->stream_gbs;
		out->floor = best.traffic_floor;
		bp_dbg("probecal: a %.1f GB/s stream read as %.2f GB/s%s: %.0f%% seen",
		       out->stream_gbs, out->seen_gbs, out->floor ? " (a floor)" : "",
		       100 * out->visible);
	}
	munmap(sh, sizeof(*sh));
	return err;
}
