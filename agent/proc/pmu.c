// SPDX-License-Identifier: GPL-2.0
/*
 * Per-task hardware counters: one group (cycles leader, instructions,
 * cache-misses) per thread of a profiled process, inherited by every thread
 * and child created afterwards. See docs/pmu.md.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"
#include "proc/pmu.h"

enum { EV_CYCLES, EV_INSNS, EV_MISSES, NR_EV };

/*
 * At most this many threads are opened per pid: 3 fds each, so a process
 * with thousands of threads cannot exhaust our fd table (the default soft
 * RLIMIT_NOFILE is 1024). Threads beyond the cap are not counted; the
 * ratios (IPC, MPKI) stay representative, absolute counts are a lower bound.
 */
#define BP_PMU_MAX_THREADS 1024

static const char *const ev_name[NR_EV] = { "cycles", "instructions", "cache-misses" };

struct pmu_group {
	pid_t tid;
	int fd[NR_EV];			/* -1: not open */
};

struct pmu_target {
	pid_t pid;
	bool misses_unknown;
	int nr_groups;
	struct pmu_group *groups;
};

struct bp_pmu {
	uint32_t type;
	uint64_t config[NR_EV];
	int nr_targets;
	struct pmu_target *targets;
};

static int perf_open(uint32_t type, uint64_t config, pid_t tid, int group_fd, bool disabled)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = type,
		.config = config,
		/*
		 * Each event is read on its own: PERF_FORMAT_GROUP reads
		 * are refused with inherit on kernels before 6.10.
		 */
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
		.disabled = disabled,
		.inherit = 1,
	};
	int fd;

	fd = syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* open config[0] on ourselves and close it: 0 or -errno */
static int probe(uint32_t type, uint64_t config)
{
	int fd = perf_open(type, config, 0, -1, true);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

bool bp_pmu_available(void)
{
	return probe(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES) == 0;
}

struct bp_pmu *bp_pmu__new_events(uint32_t type, const uint64_t config[3])
{
	struct bp_pmu *m;
	int err, i;

	err = probe(type, config[EV_CYCLES]);
	if (err) {
		bp_dbg("pmu: cannot open %s (type %u config %llu): %s", ev_name[EV_CYCLES], type,
		       (unsigned long long)config[EV_CYCLES], strerror(-err));
		errno = -err;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->type = type;
	for (i = 0; i < NR_EV; i++)
		m->config[i] = config[i];
	return m;
}

struct bp_pmu *bp_pmu__new(void)
{
	static const uint64_t hw[NR_EV] = {
		[EV_CYCLES] = PERF_COUNT_HW_CPU_CYCLES,
		[EV_INSNS] = PERF_COUNT_HW_INSTRUCTIONS,
		[EV_MISSES] = PERF_COUNT_HW_CACHE_MISSES,
	};

	return bp_pmu__new_events(PERF_TYPE_HARDWARE, hw);
}

static void group_close(struct pmu_group *g)
{
	int i;

	for (i = 0; i < NR_EV; i++) {
		if (g->fd[i] >= 0)
			close(g->fd[i]);
		g->fd[i] = -1;
	}
}

static void target_close(struct pmu_target *t)
{
	int i;

	for (i = 0; i < t->nr_groups; i++)
		group_close(&t->groups[i]);
	free(t->groups);
	t->groups = NULL;
	t->nr_groups = 0;
}

void bp_pmu__free(struct bp_pmu *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < m->nr_targets; i++)
		target_close(&m->targets[i]);
	free(m->targets);
	free(m);
}

static struct pmu_target *find_target(struct bp_pmu *m, pid_t pid)
{
	int i;

	for (i = 0; i < m->nr_targets; i++)
		if (m->targets[i].pid == pid)
			return &m->targets[i];
	return NULL;
}

/*
 * The pid's threads as they are now, at most max. All of them are listed
 * before any counter opens: a thread created after its creator's counter
 * opened is counted by inheritance, and must not be opened a second time.
 * Returns the number listed (more may exist: *more) or -errno.
 */
static int list_threads(pid_t pid, pid_t *tids, int max, bool *more)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	*more = false;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (n == max) {
			*more = true;
			break;
		}
		tids[n++] = (pid_t)tid;
	}
	closedir(d);
	return n;
}

/* open one group on tid: 0, -ESRCH (the thread is gone) or -errno */
static int group_open(struct bp_pmu *m, pid_t tid, struct pmu_group *g, bool *misses_ok)
{
	int err, i;

	g->tid = tid;
	for (i = 0; i < NR_EV; i++)
		g->fd[i] = -1;
	/* the leader starts disabled so that all members count the same interval */
	err = perf_open(m->type, m->config[EV_CYCLES], tid, -1, true);
	if (err < 0)
		return err;
	g->fd[EV_CYCLES] = err;
	err = perf_open(m->type, m->config[EV_INSNS], tid, g->fd[EV_CYCLES], false);
	if (err < 0)
		goto fail;
	g->fd[EV_INSNS] = err;
	err = perf_open(m->type, m->config[EV_MISSES], tid, g->fd[EV_CYCLES], false);
	if (err >= 0) {
		g->fd[EV_MISSES] = err;
		*misses_ok = true;
	} else if (err == -ESRCH || err == -EMFILE || err == -ENFILE) {
		goto fail;
	} else {
		bp_dbg("pmu: %s on tid %d: %s", ev_name[EV_MISSES], (int)tid, strerror(-err));
		*misses_ok = false;
	}
	if (ioctl(g->fd[EV_CYCLES], PERF_EVENT_IOC_ENABLE, 0)) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	if (err != -ESRCH)
		bp_dbg("pmu: opening counters on tid %d: %s", (int)tid, strerror(-err));
	group_close(g);
	return err;
}

int bp_pmu__add(struct bp_pmu *m, pid_t pid)
{
	struct pmu_target *t, *targets;
	bool more, misses_ok, all_misses = true;
	pid_t *tids;
	int n, i, err = 0;

	if (pid <= 0)
		return -EINVAL;
	if (find_target(m, pid))
		return -EEXIST;
	tids = calloc(BP_PMU_MAX_THREADS, sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	n = list_threads(pid, tids, BP_PMU_MAX_THREADS, &more);
	if (n < 0) {
		err = n;
		goto out;
	}
	if (more)
		bp_warn("pmu: pid %d has more than %d threads; counting only the first %d",
			(int)pid, BP_PMU_MAX_THREADS, BP_PMU_MAX_THREADS);
	targets = realloc(m->targets, (m->nr_targets + 1) * sizeof(*targets));
	if (!targets) {
		err = -ENOMEM;
		goto out;
	}
	m->targets = targets;
	t = &targets[m->nr_targets];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->groups = calloc(n ? n : 1, sizeof(*t->groups));
	if (!t->groups) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		err = group_open(m, tids[i], &t->groups[t->nr_groups], &misses_ok);
		if (err == -ESRCH) {
			/* the thread exited since it was listed */
			err = 0;
			continue;
		}
		if (err == -EMFILE || err == -ENFILE) {
			if (!t->nr_groups)
				break;
			bp_warn("pmu: out of file descriptors after %d of %d threads of pid %d; counting those",
				t->nr_groups, n, (int)pid);
			err = 0;
			break;
		}
		if (err)
			break;
		all_misses &= misses_ok;
		t->nr_groups++;
	}
	if (!err && !t->nr_groups)
		err = -ESRCH;	/* every thread exited before it could be opened */
	if (err) {
		if (err != -ESRCH)
			bp_err("pmu: cannot count pid %d: %s", (int)pid, strerror(-err));
		target_close(t);
		goto out;
	}
	t->misses_unknown = !all_misses;
	if (t->misses_unknown)
		bp_warn("pmu: the %s event is unavailable; misses of pid %d are unknown",
			ev_name[EV_MISSES], (int)pid);
	m->nr_targets++;
out:
	free(tids);
	return err;
}

uint64_t bp_pmu_scale(uint64_t value, uint64_t enabled, uint64_t running)
{
	unsigned __int128 v;

	if (!running)
		return 0;
	if (running >= enabled)
		return value;
	v = (unsigned __int128)value * enabled / running;
	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int bp_pmu__read(struct bp_pmu *m, pid_t pid, struct bp_pmu_counts *out)
{
	struct pmu_target *t = find_target(m, pid);
	uint64_t *sum[NR_EV] = { &out->cycles, &out->instructions, &out->cache_misses };
	int i, e;

	memset(out, 0, sizeof(*out));
	if (!t)
		return -ENOENT;
	for (i = 0; i < t->nr_groups; i++) {
		const struct pmu_group *g = &t->groups[i];

		for (e = 0; e < NR_EV; e++) {
			/* value, time enabled, time running (the read_format order) */
			uint64_t v[3];
			ssize_t got;

			if (g->fd[e] < 0)
				continue;
			got = read(g->fd[e], v, sizeof(v));
			if (got != (ssize_t)sizeof(v)) {
				int err = got < 0 ? -errno : -EIO;

				bp_err("pmu: reading %s of tid %d: %s", ev_name[e], (int)g->tid,
				       strerror(-err));
				memset(out, 0, sizeof(*out));
				return err;
			}
			*sum[e] = sat_add(*sum[e], bp_pmu_scale(v[0], v[1], v[2]));
			if (v[2] < v[1])
				out->scaled = true;
			if (e == EV_CYCLES) {
				if (v[1] > out->enabled_ns)
					out->enabled_ns = v[1];
				if (v[2] > out->running_ns)
					out->running_ns = v[2];
			}
		}
	}
	out->misses_unknown = t->misses_unknown;
	out->valid = true;
	return 0;
}

/* a / b, or 0 when b is not positive or the result is not a finite number */
static double ratio(double a, double b)
{
	double r;

	if (!(b > 0))
		return 0;
	r = a / b;
	return isfinite(r) ? r : 0;
}

void bp_pmu_metrics(const struct bp_pmu_counts *c, double seconds, struct bp_pmu_metrics *out)
{
	double cyc = (double)c->cycles, insns = (double)c->instructions;
	double misses = (double)c->cache_misses;

	memset(out, 0, sizeof(*out));
	out->misses_unknown = c->misses_unknown;
	if (!c->valid)
		return;
	out->scaled = c->scaled || c->running_ns < c->enabled_ns;
	out->running_frac = ratio((double)c->running_ns, (double)c->enabled_ns);
	out->ipc = ratio(insns, cyc);
	if (c->misses_unknown)
		return;
	out->mpki = ratio(misses * 1000.0, insns);
	/*
	 * One 64-byte line per miss: a lower bound of DRAM traffic, since
	 * prefetches and writebacks are not counted. On AMD the generic
	 * cache-misses event counts L2 misses (many served by L3), so there it
	 * over-states DRAM traffic instead.
	 */
	out->dram_gbs = ratio(64.0 * misses, seconds) / 1e9;
}
