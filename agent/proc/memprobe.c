// SPDX-License-Identifier: GPL-2.0
/*
 * Working-set probes and page-fault counts from /proc. docs/memprobe.md has
 * the method and its measured cost.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/llc.h"
#include "proc/memprobe.h"
#include "util/htab.h"
#include "util/log.h"
#include "util/readfile.h"

#define KiB		1024ULL
#define MiB		(1024ULL * KiB)
#define NSEC_PER_SEC	1000000000ULL

/*
 * Tracked processes are capped (see memprobe.h) so that a fork-heavy host
 * cannot grow the table without bound: past the cap the least recently seen
 * process is dropped, evidence and all. ~150 bytes each, ~0.6 MiB at most.
 */
#define MP_MAX_PROCS	BP_MEMPROBE_MAX_PROCS
/* threads whose CPU is looked up after a clear, see switch_target_cpus() */
#define MP_MAX_TASKS	1024

enum mp_state {
	MP_IDLE,
	MP_CLEARED,		/* clear_refs written at clear_ns; read after the window */
};

struct mp_proc {
	pid_t pid;
	int32_t newer, older;	/* LRU list by last seen(), -1 ends it */
	uint8_t state;
	bool have_id;		/* stat read once: identity and fault baseline taken */
	bool gone;		/* exited or pid reused: never touch /proc/PID again */
	bool no_probe;		/* clear_refs or smaps_rollup missing or refused */
	uint64_t start_ticks;
	double cpus;
	uint64_t seen_ns;
	uint64_t first_ns;	/* fault baseline taken */
	uint64_t fault_ns;	/* fault counts last read */
	uint64_t clear_ns;
	uint64_t next_ns;	/* no clear before this */
	uint64_t minflt0, majflt0, minflt, majflt;
	uint64_t rss;
	uint64_t cpu_ticks;	/* utime + stime at the last stat read */
	uint32_t probes;
	uint64_t wss_max;
	double wss_max_per_s;
	uint32_t traffic_probes;
	double traffic_per_s, traffic_per_cpu_s, traffic_cpus;
	bool traffic_floor;
	uint64_t short_ref;	/* Referenced in the short window of the current probe */
};

struct bp_memprobe {
	char *proc_root;
	uint64_t llc_bytes;
	uint64_t window_ns, every_ns, stale_ns, short_ns;
	double min_cpu;
	bool switch_cpus;	/* see switch_target_cpus() */
	long page_size;
	struct mp_proc *procs;
	uint32_t nr, alloc;
	uint32_t rr;		/* where the next tick starts looking for a clear */
	int32_t newest, oldest;
	struct bp_htab index;	/* pid -> procs[] */
};

/* ------------------------------------------------------------ parsing */

int bp_memprobe_parse_stat(const char *text, struct bp_pid_stat *out)
{
	/* comm may contain spaces and parentheses: it ends at the last ')' */
	const char *p = strrchr(text, ')');
	unsigned long long v;
	char *end;
	int field;

	if (!p)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->cpu = -1;
	p++;
	/* field 3 (state) follows comm; we need 10, 12, 14, 15, 22, 24 and 39 */
	for (field = 3; field <= 39; field++) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			return field > 24 ? 0 : -EINVAL;
		if (field == 10 || field == 12 || field == 14 || field == 15 || field == 22 ||
		    field == 24 || field == 39) {
			v = strtoull(p, &end, 10);
			if (end == p)
				return -EINVAL;
			if (field == 10)
				out->minflt = v;
			else if (field == 12)
				out->majflt = v;
			else if (field == 14 || field == 15)
				out->cpu_ticks += v;
			else if (field == 22)
				out->start_ticks = v;
			else if (field == 24)
				out->rss_pages = v;
			else
				out->cpu = v < 1U << 20 ? (int)v : -1;
		}
		p += strcspn(p, " \n");
	}
	return 0;
}

/* "Name:   1234 kB" at the start of a line; true and bytes when it matches */
static bool rollup_field(const char *line, const char *name, uint64_t *bytes)
{
	size_t n = strlen(name);
	unsigned long long v;
	char *end;

	if (strncmp(line, name, n))
		return false;
	v = strtoull(line + n, &end, 10);
	if (end == line + n)
		return false;
	*bytes = v * KiB;
	return true;
}

int bp_memprobe_parse_rollup(const char *text, uint64_t *rss, uint64_t *referenced)
{
	bool got_rss = false, got_ref = false;
	const char *line = text;

	while (line) {
		if (!got_rss)
			got_rss = rollup_field(line, "Rss:", rss);
		if (!got_ref)
			got_ref = rollup_field(line, "Referenced:", referenced);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return got_rss && got_ref ? 0 : -EINVAL;
}

/* CPUID.1:ECX[31], set by hypervisors for their guests */
static bool under_hypervisor(void)
{
	struct bp_cpuid_regs r;

	return bp_cpuid_native(NULL, 1, 0, &r) && (r.ecx & (1U << 31));
}

/* ------------------------------------------------------------ the table */

static uint64_t pid_hash(pid_t pid)
{
	return bp_hash_u64((uint32_t)pid);
}

static bool pid_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct bp_memprobe *m = ctx;

	return m->procs[idx].pid == *(const pid_t *)key;
}

static struct mp_proc *find(struct bp_memprobe *m, pid_t pid)
{
	uint32_t i;

	if (bp_htab_find(&m->index, pid_hash(pid), pid_eq, m, &pid, &i))
		return NULL;
	return &m->procs[i];
}

static void lru_unlink(struct bp_memprobe *m, int32_t i)
{
	struct mp_proc *p = &m->procs[i];

	if (p->newer >= 0)
		m->procs[p->newer].older = p->older;
	else
		m->newest = p->older;
	if (p->older >= 0)
		m->procs[p->older].newer = p->newer;
	else
		m->oldest = p->newer;
}

static void lru_push(struct bp_memprobe *m, int32_t i)
{
	struct mp_proc *p = &m->procs[i];

	p->newer = -1;
	p->older = m->newest;
	if (m->newest >= 0)
		m->procs[m->newest].newer = i;
	m->newest = i;
	if (m->oldest < 0)
		m->oldest = i;
}

static struct mp_proc *add(struct bp_memprobe *m, pid_t pid)
{
	struct mp_proc *procs;
	uint32_t n;
	int32_t i;

	if (m->nr == m->alloc && m->nr < MP_MAX_PROCS) {
		n = m->alloc ? m->alloc * 2 : 64;
		if (n > MP_MAX_PROCS)
			n = MP_MAX_PROCS;
		procs = realloc(m->procs, n * sizeof(*procs));
		if (!procs)
			return NULL;
		m->procs = procs;
		m->alloc = n;
	}
	if (m->nr < m->alloc) {
		if (bp_htab_insert(&m->index, pid_hash(pid), m->nr))
			return NULL;
		i = m->nr++;
	} else {
		/* the index keeps its size: a removal then an insertion cannot fail */
		i = m->oldest;
		bp_dbg("memprobe: tracking %d processes, dropping pid %d", MP_MAX_PROCS,
		       m->procs[i].pid);
		bp_htab_remove(&m->index, pid_hash(m->procs[i].pid), i);
		lru_unlink(m, i);
		bp_htab_insert(&m->index, pid_hash(pid), i);
	}
	memset(&m->procs[i], 0, sizeof(m->procs[i]));
	m->procs[i].pid = pid;
	lru_push(m, i);
	return &m->procs[i];
}

/* ------------------------------------------------------------ /proc */

static void proc_path(const struct bp_memprobe *m, char *buf, size_t len, pid_t pid,
		      const char *name)
{
	snprintf(buf, len, "%s/%d/%s", m->proc_root, pid, name);
}

static bool is_gone_err(int err)
{
	return err == -ENOENT || err == -ESRCH;
}

static void take_baseline(struct bp_memprobe *m, struct mp_proc *p,
			  const struct bp_pid_stat *st, uint64_t now)
{
	p->have_id = true;
	p->start_ticks = st->start_ticks;
	p->first_ns = p->fault_ns = now;
	p->minflt0 = p->minflt = st->minflt;
	p->majflt0 = p->majflt = st->majflt;
	p->rss = st->rss_pages * m->page_size;
	p->cpu_ticks = st->cpu_ticks;
}

/* forget the old process behind this pid; keeps the table links */
static void restart(struct mp_proc *p)
{
	struct mp_proc keep = *p;

	memset(p, 0, sizeof(*p));
	p->pid = keep.pid;
	p->newer = keep.newer;
	p->older = keep.older;
	p->cpus = keep.cpus;
	p->seen_ns = keep.seen_ns;
}

/*
 * Read /proc/PID/stat for a process whose identity we hold: refresh its
 * faults and resident size. 0; -ESRCH when it is gone or the pid now
 * belongs to another process (the entry is then marked gone and its last
 * values stand); another -errno when stat could not be read.
 */
static int refresh(struct bp_memprobe *m, struct mp_proc *p, uint64_t now,
		   struct bp_pid_stat *st)
{
	char path[256], buf[1024];
	ssize_t n;

	proc_path(m, path, sizeof(path), p->pid, "stat");
	n = bp_read_small(path, buf, sizeof(buf));
	if (n < 0 || bp_memprobe_parse_stat(buf, st)) {
		if (n < 0 && is_gone_err((int)n)) {
			p->gone = true;
			p->state = MP_IDLE;
			return -ESRCH;
		}
		return n < 0 ? (int)n : -EINVAL;
	}
	if (st->start_ticks != p->start_ticks) {
		bp_dbg("memprobe: pid %d was reused", p->pid);
		p->gone = true;
		p->state = MP_IDLE;
		return -ESRCH;
	}
	p->fault_ns = now;
	p->minflt = st->minflt;
	p->majflt = st->majflt;
	p->rss = st->rss_pages * m->page_size;
	p->cpu_ticks = st->cpu_ticks;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static int write_clear_refs(struct bp_memprobe *m, pid_t pid)
{
	char path[256];
	ssize_t n;
	int fd, err = 0;

	proc_path(m, path, sizeof(path), pid, "clear_refs");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* "1": clear the accessed bits of every page the process maps */
	n = write(fd, "1", 1);
	if (n < 0)
		err = -errno;
	else if (n != 1)
		err = -EIO;
	close(fd);
	return err;
}

/*
 * In a guest whose memory is shadow-paged (this Firecracker/PVM one), a vCPU
 * that keeps running the target does not see the accessed bits clear_refs
 * just cleared: its shadow translations keep them set until that vCPU
 * switches to another address space, so a busy target that never blocks
 * reads ~0 Referenced window after window (measured: 64 MiB touched, 0-12
 * kB read). Running this thread for a moment on each CPU the target's
 * threads last ran on takes them off it and forces the switch. Threads
 * migrating elsewhere meanwhile switch address space on arrival anyway.
 * The wait for a turn on a busy CPU (~8 ms each here) is pointless where
 * the hardware sets the guest's accessed bits (bare metal, EPT/NPT guests),
 * but shadow paging cannot be told from those, so any guest pays it.
 */
static void switch_target_cpus(const struct bp_memprobe *m, pid_t pid)
{
	char path[512], buf[1024];
	cpu_set_t want, old, one;
	struct bp_pid_stat st;
	struct dirent *de;
	int cpu, tasks = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/task", m->proc_root, pid);
	dir = opendir(path);
	if (!dir)
		return;
	CPU_ZERO(&want);
	while ((de = readdir(dir)) && tasks < MP_MAX_TASKS) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		tasks++;
		snprintf(path, sizeof(path), "%s/%d/task/%s/stat", m->proc_root, pid, de->d_name);
		if (bp_read_small(path, buf, sizeof(buf)) <= 0 || bp_memprobe_parse_stat(buf, &st) ||
		    st.cpu < 0 || st.cpu >= CPU_SETSIZE)
			continue;
		CPU_SET(st.cpu, &want);
	}
	closedir(dir);
	if (!CPU_COUNT(&want) || sched_getaffinity(0, sizeof(old), &old))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &want))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		/* returns once this thread runs there; a CPU our cpuset lacks fails: skip it */
		sched_setaffinity(0, sizeof(one), &one);
	}
	if (sched_setaffinity(0, sizeof(old), &old))
		bp_warn("memprobe: cannot restore CPU affinity: %s", strerror(errno));
}

/* CPU ns the process's threads (the first MP_MAX_TASKS) have run, from their schedstat */
static uint64_t cpu_ns(const struct bp_memprobe *m, pid_t pid)
{
	char path[512], buf[128];
	struct dirent *de;
	uint64_t sum = 0;
	int tasks = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/task", m->proc_root, pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir)) && tasks < MP_MAX_TASKS) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		tasks++;
		snprintf(path, sizeof(path), "%s/%d/task/%s/schedstat", m->proc_root, pid,
			 de->d_name);
		if (bp_read_small(path, buf, sizeof(buf)) > 0)
			sum += strtoull(buf, NULL, 10);
	}
	closedir(dir);
	return sum;
}

/*
 * A process is probed when its resident set is larger than the reported
 * last-level cache or than MP_PROBE_RSS_MIN, whichever is smaller: the
 * reported size can be a whole host socket's cache, shared with every
 * other tenant (a guest told of 260 MiB streamed 192 MiB from memory), so
 * only the traffic can tell whether a working set fits (docs/memprobe.md).
 * Below MP_PROBE_RSS_MIN the traffic window sees the whole set at any
 * streaming rate of this kind of machine, a floor that cannot disagree.
 */
#define MP_PROBE_RSS_MIN	(32 * MiB)

static uint64_t probe_rss_min(const struct bp_memprobe *m)
{
	return m->llc_bytes < MP_PROBE_RSS_MIN ? m->llc_bytes : MP_PROBE_RSS_MIN;
}

static bool candidate(const struct bp_memprobe *m, const struct mp_proc *p, uint64_t now)
{
	return p->cpus >= m->min_cpu && now - p->seen_ns <= m->stale_ns && p->rss > probe_rss_min(m);
}

bool bp_memprobe__explains(struct bp_memprobe *m, double cpu_s, double since_s,
			   uint64_t now_ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct bp_pid_stat st;
	double ran = 0;
	uint64_t was;
	uint32_t i;

	if (!m || hz <= 0 || since_s <= 0)
		return false;
	for (i = 0; i < m->nr; i++) {
		struct mp_proc *p = &m->procs[i];

		if (p->gone || !p->have_id || p->cpus < m->min_cpu || p->rss > probe_rss_min(m))
			continue;
		was = p->cpu_ticks;
		/* gone since: what it ran is not known, and stays unexplained */
		if (refresh(m, p, now_ns, &st))
			continue;
		/* grown past the probe's floor: a drain tells the probe */
		if (p->rss > probe_rss_min(m))
			return false;
		if (st.cpu_ticks > was)
			ran += (double)(st.cpu_ticks - was) / hz;
	}
	return cpu_s - ran < m->min_cpu * since_s;
}

/*
 * clear_refs or smaps_rollup failed right after stat was read. ENOENT means
 * the file is missing (before 4.14 there is no smaps_rollup; without
 * CONFIG_PROC_PAGE_MONITOR neither exists) and EACCES/EPERM that we may not
 * look: either way this process gets no more probes but keeps its fault
 * counts. A process that just exited is found by the next stat read.
 */
static void probe_failed(struct mp_proc *p, const char *what, int err)
{
	bp_dbg("memprobe: pid %d: %s: %s", p->pid, what, strerror(-err));
	p->state = MP_IDLE;
	if (err == -ESRCH)
		p->gone = true;
	else if (err == -ENOENT || err == -EACCES || err == -EPERM)
		p->no_probe = true;
}

/*
 * Memory traffic: what the process references again within a few ms of the
 * clear, per second. The clear itself takes ms for a large working set,
 * during which the pages cleared first are touched again, so the window is
 * counted from the middle of the clear. Referenced counts pages, not bytes:
 * a streaming loop moves the whole page, random access far less
 * (docs/memprobe.md). The caller's thread waits the window out. Returns true
 * when the window saw nearly the whole resident set, so that its rate is
 * only a floor.
 */
static bool short_window(struct bp_memprobe *m, struct mp_proc *p, uint64_t start,
			 uint64_t cpu0, uint64_t window_ns)
{
	struct timespec ts = { 0, (long)window_ns };
	char path[256], buf[4096];
	uint64_t rss, ref, t, cpu, ta, tb, cpua, cpub;
	double rate, per_cpu;
	bool floor;
	ssize_t n;

	while (nanosleep(&ts, &ts))
		;
	/*
	 * The rollup walks every page for ms while the target runs on: the
	 * clock and its CPU are both taken at the middle of the walk, or a
	 * 2-CPU process reads as running on 6 (seen on a busy host).
	 */
	proc_path(m, path, sizeof(path), p->pid, "smaps_rollup");
	cpua = cpu_ns(m, p->pid);
	ta = mono_ns();
	n = bp_read_small(path, buf, sizeof(buf));
	tb = mono_ns();
	cpub = cpu_ns(m, p->pid);
	t = ta + (tb - ta) / 2;
	cpu = cpua + (cpub > cpua ? (cpub - cpua) / 2 : 0);
	if (n < 0 || bp_memprobe_parse_rollup(buf, &rss, &ref) || t <= start)
		return false;
	p->short_ref = ref;
	rate = ref / ((double)(t - start) / NSEC_PER_SEC);
	/*
	 * Per second of the CPU it had meanwhile: a process the machine
	 * starves of CPUs moves less per second of wall time, not per
	 * second it runs.
	 */
	per_cpu = cpu > cpu0 ? ref / ((double)(cpu - cpu0) / NSEC_PER_SEC) : 0;
	/* nearly all of it seen: the real rate may be higher */
	floor = rss && ref >= rss * 9 / 10;
	p->traffic_probes++;
	bp_dbg("memprobe: pid %d: %llu kB of %llu referenced %.1f ms after the clear (the "
	       "rollup took %.1f ms), %.1f ms of CPU: %.2f GB/s, %.2f GB/s per CPU%s", p->pid,
	       (unsigned long long)(ref >> 10), (unsigned long long)(rss >> 10),
	       (t - start) / 1e6, (tb - ta) / 1e6, (cpu - cpu0) / 1e6,
	       rate / 1e9, per_cpu / 1e9, floor ? " (a floor)" : "");
	/* a rate outranks a floor; of two of a kind, the higher */
	if (p->traffic_probes == 1 || (p->traffic_floor && !floor) ||
	    (p->traffic_floor == floor && per_cpu > p->traffic_per_cpu_s)) {
		p->traffic_per_s = rate;
		p->traffic_per_cpu_s = per_cpu;
		p->traffic_cpus = (double)(cpu - cpu0) / (t - start);
		p->traffic_floor = floor;
	}
	return floor;
}

/* 1 when clear_refs was written (or tried), 0 when there was nothing to do */
static int start_probe(struct bp_memprobe *m, struct mp_proc *p, uint64_t now)
{
	uint64_t t0, t1, t2, cpu0, cpu2, start, cpu_start;
	uint64_t window_ns = m->short_ns;
	struct bp_pid_stat st;
	int err, try;

	/* whatever happens next, not again before every_s */
	p->next_ns = now + m->every_ns;
	/* the pid's owner must still be the process we saw, see refresh() */
	if (refresh(m, p, now, &st) || !candidate(m, p, now))
		return 0;
	/*
	 * A window that saw the whole set measured only the set's size: once
	 * more at a quarter of it (a 192 MiB triad passes its set in ~14 ms,
	 * and a busy host can stretch 5 ms past that).
	 */
	for (try = 0; try < 2; try++, window_ns /= 4) {
		cpu0 = m->short_ns ? cpu_ns(m, p->pid) : 0;
		t0 = mono_ns();
		err = write_clear_refs(m, p->pid);
		t1 = mono_ns();
		if (err) {
			probe_failed(p, "clear_refs", err);
			return 1;
		}
		if (m->switch_cpus)
			switch_target_cpus(m, p->pid);
		p->state = MP_CLEARED;
		p->clear_ns = now;
		p->short_ref = 0;
		if (!m->short_ns)
			break;
		t2 = mono_ns();
		cpu2 = cpu_ns(m, p->pid);
		bp_dbg("memprobe: pid %d: clear took %.1f ms, then %.1f ms to switch its CPUs",
		       p->pid, (t1 - t0) / 1e6, (t2 - t1) / 1e6);
		/*
		 * Where the window starts is not sharp: the clear walks the
		 * pages for ms, and in a shadow-paged guest the target's
		 * touches count only once its CPU switched address space,
		 * by the switch above at the latest. The middle of the two,
		 * and the CPU it had used by then.
		 */
		start = ((t0 + t1) / 2 + t2) / 2;
		cpu_start = cpu0 + (cpu2 > cpu0 && t2 > t0 ?
				    (uint64_t)((double)(cpu2 - cpu0) * (start - t0) / (t2 - t0)) : 0);
		if (!short_window(m, p, start, cpu_start, window_ns))
			break;
	}
	return 1;
}

static void finish_probe(struct bp_memprobe *m, struct mp_proc *p, uint64_t now)
{
	char path[256], buf[4096];
	struct bp_pid_stat st;
	uint64_t rss, ref;
	double window;
	ssize_t n;

	p->state = MP_IDLE;
	if (refresh(m, p, now, &st))
		return;
	proc_path(m, path, sizeof(path), p->pid, "smaps_rollup");
	n = bp_read_small(path, buf, sizeof(buf));
	if (n < 0) {
		probe_failed(p, "smaps_rollup", (int)n);
		return;
	}
	if (bp_memprobe_parse_rollup(buf, &rss, &ref)) {
		bp_dbg("memprobe: pid %d: smaps_rollup has no Rss/Referenced", p->pid);
		return;
	}
	p->rss = rss;
	p->probes++;
	window = (double)(now - p->clear_ns) / NSEC_PER_SEC;
	if (ref > p->wss_max || p->probes == 1) {
		p->wss_max = ref;
		p->wss_max_per_s = window > 0 ? ref / window : 0;
	}
}

/* ------------------------------------------------------------ API */

struct bp_memprobe *bp_memprobe__new(const struct bp_memprobe_opts *opts)
{
	struct bp_memprobe_opts o = {};
	struct bp_memprobe *m;
	char source[128];

	if (opts)
		o = *opts;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->proc_root = strdup(o.proc_root ? o.proc_root : "/proc");
	if (!m->proc_root) {
		free(m);
		return NULL;
	}
	m->llc_bytes = o.llc_bytes;
	if (!m->llc_bytes) {
		m->llc_bytes = bp_llc_bytes(NULL, source, sizeof(source));
		if (!m->llc_bytes) {
			/* unknown: a typical LLC slice keeps small processes out */
			m->llc_bytes = 32 * MiB;
			snprintf(source, sizeof(source), "unknown, assumed 32 MiB");
		}
		bp_dbg("memprobe: last-level cache %llu bytes: %s",
		       (unsigned long long)m->llc_bytes, source);
	}
	m->window_ns = (uint64_t)((o.window_s > 0 ? o.window_s : 1.0) * NSEC_PER_SEC);
	m->every_ns = (uint64_t)((o.every_s > 0 ? o.every_s : 5.0) * NSEC_PER_SEC);
	m->stale_ns = (uint64_t)((o.stale_s > 0 ? o.stale_s : 3.0) * NSEC_PER_SEC);
	m->short_ns = o.short_s < 0 ? 0 : (uint64_t)((o.short_s > 0 ? o.short_s : 0.005) *
						     NSEC_PER_SEC);
	if (m->short_ns >= m->window_ns || m->short_ns >= NSEC_PER_SEC)
		m->short_ns = 0;
	/* a probe must end before the next can start */
	if (m->every_ns < m->window_ns)
		m->every_ns = m->window_ns;
	m->min_cpu = o.min_cpu > 0 ? o.min_cpu : 0.25;
	m->switch_cpus = under_hypervisor();
	m->page_size = sysconf(_SC_PAGESIZE);
	if (m->page_size <= 0)
		m->page_size = 4096;
	m->newest = m->oldest = -1;
	return m;
}

void bp_memprobe__free(struct bp_memprobe *m)
{
	if (!m)
		return;
	bp_htab_free(&m->index);
	free(m->procs);
	free(m->proc_root);
	free(m);
}

uint64_t bp_memprobe__llc_bytes(const struct bp_memprobe *m)
{
	return m->llc_bytes;
}

void bp_memprobe__seen(struct bp_memprobe *m, pid_t pid, double cpus, uint64_t now_ns)
{
	char path[256], buf[1024];
	struct bp_pid_stat st;
	struct mp_proc *p;
	ssize_t n;

	p = find(m, pid);
	if (p) {
		int32_t i = p - m->procs;

		lru_unlink(m, i);
		lru_push(m, i);
	} else {
		p = add(m, pid);
		if (!p) {
			bp_dbg("memprobe: no memory for pid %d", pid);
			return;
		}
	}
	p->cpus = cpus;
	p->seen_ns = now_ns;

	if (p->have_id && !p->gone) {
		/* -ESRCH here may be a reused pid: fall through to look */
		if (refresh(m, p, now_ns, &st) != -ESRCH)
			return;
	} else if (p->gone && !p->have_id) {
		/* exited before we knew it: a live stat could still be its zombie */
		return;
	}
	proc_path(m, path, sizeof(path), pid, "stat");
	n = bp_read_small(path, buf, sizeof(buf));
	if (n < 0 || bp_memprobe_parse_stat(buf, &st))
		return;
	if (p->have_id) {
		/* a gone entry comes back only as another process: a new start time */
		if (st.start_ticks == p->start_ticks)
			return;
		restart(p);
		p->cpus = cpus;
		p->seen_ns = now_ns;
	}
	take_baseline(m, p, &st, now_ns);
}

void bp_memprobe__tick(struct bp_memprobe *m, uint64_t now_ns)
{
	bool cleared = false;
	struct mp_proc *p;
	uint32_t k, i;

	for (k = 0; k < m->nr; k++) {
		i = (m->rr + k) % m->nr;
		p = &m->procs[i];
		if (p->gone || !p->have_id)
			continue;
		if (p->state == MP_CLEARED) {
			if (now_ns - p->clear_ns >= m->window_ns)
				finish_probe(m, p, now_ns);
			continue;
		}
		/*
		 * One clear per tick: each costs the caller's thread ~5-20 ms
		 * (clearing a few hundred MiB, then waiting for a turn on the
		 * target's CPUs), so several due at once are spread over
		 * ticks, starting where the last one left off.
		 */
		if (cleared || p->no_probe || now_ns < p->next_ns || !candidate(m, p, now_ns))
			continue;
		if (start_probe(m, p, now_ns)) {
			cleared = true;
			m->rr = i + 1;
		}
	}
}

bool bp_memprobe__busy(const struct bp_memprobe *m, uint64_t now_ns)
{
	const struct mp_proc *p;
	uint32_t i;

	for (i = 0; i < m->nr; i++) {
		p = &m->procs[i];
		if (p->gone || !p->have_id)
			continue;
		if (p->state == MP_CLEARED ||
		    (!p->no_probe && now_ns >= p->next_ns && candidate(m, p, now_ns)))
			return true;
	}
	return false;
}

void bp_memprobe__exited(struct bp_memprobe *m, pid_t pid)
{
	struct mp_proc *p = find(m, pid);

	if (!p)
		return;
	p->gone = true;
	p->state = MP_IDLE;
}

int bp_memprobe__evidence(struct bp_memprobe *m, pid_t pid, uint64_t now_ns,
			  struct bp_mem_evidence *out)
{
	struct bp_pid_stat st;
	struct mp_proc *p = find(m, pid);

	memset(out, 0, sizeof(*out));
	if (!p)
		return -ENOENT;
	if (p->have_id && !p->gone)
		refresh(m, p, now_ns, &st);
	out->probes = p->probes;
	out->wss_max = p->wss_max;
	out->wss_max_per_s = p->wss_max_per_s;
	out->rss = p->rss;
	out->valid = p->have_id;
	out->traffic_probes = p->traffic_probes;
	out->traffic_per_s = p->traffic_per_s;
	out->traffic_per_cpu_s = p->traffic_per_cpu_s;
	out->traffic_cpus = p->traffic_cpus;
	out->traffic_floor = p->traffic_floor;
	if (p->have_id) {
		out->minflt = p->minflt - p->minflt0;
		out->majflt = p->majflt - p->majflt0;
		out->fault_window_s = (double)(p->fault_ns - p->first_ns) / NSEC_PER_SEC;
	}
	return 0;
}
