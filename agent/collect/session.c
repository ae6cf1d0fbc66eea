// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include "collect/blockio.h"
#include <bpf/libbpf.h>

#include "collect/cgroups.h"

#include "collect/collect.h"
#include "collect/cpus.h"
#include "collect/loader.h"
#include "collect/mapfiles.h"
#include "proc/pidset.h"
#include "collect/python.h"
#include "collect/rlang.h"
#include "util/log.h"
#include "proc/llc.h"
#include "proc/membw.h"
#include "proc/procmaps.h"
#include "proc/memprobe.h"
#include "model/merge.h"
#include "proc/pmu.h"
#include "proc/procinfo.h"
#include "model/profile.h"
#include "collect/session.h"
#include "collect/unwind.h"
#include "symbolize/symbols.h"

static bool meta_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct bp_session *)ctx)->meta[idx].pid == *(const uint32_t *)key;
}

static struct bp_meta *meta_find(struct bp_session *s, uint32_t pid)
{
	uint32_t idx;

	if (bp_htab_find(&s->meta_h, bp_hash_u64(pid), meta_eq, s, &pid, &idx))
		return NULL;
	return &s->meta[idx];
}

static struct bp_meta *meta_add(struct bp_session *s, uint32_t pid)
{
	struct bp_meta *m = meta_find(s, pid);

	if (m)
		return m;
	if (s->nr_meta == s->cap_meta) {
		uint32_t ncap = s->cap_meta ? s->cap_meta * 2 : 256;
		struct bp_meta *n = realloc(s->meta, ncap * sizeof(*n));

		if (!n)
			return NULL;
		s->meta = n;
		s->cap_meta = ncap;
	}
	if (bp_htab_insert(&s->meta_h, bp_hash_u64(pid), s->nr_meta))
		return NULL;
	m = &s->meta[s->nr_meta++];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	return m;
}

/* forgotten entries are compacted away once they are the majority */
static void meta_compact(struct bp_session *s)
{
	uint32_t i, n = 0;

	if (s->dead_meta < 256 || s->dead_meta * 2 < s->nr_meta)
		return;
	bp_htab_clear(&s->meta_h);
	for (i = 0; i < s->nr_meta; i++) {
		if (!s->meta[i].pid)
			continue;
		s->meta[n] = s->meta[i];
		bp_htab_insert(&s->meta_h, bp_hash_u64(s->meta[n].pid), n);
		n++;
	}
	s->nr_meta = n;
	s->dead_meta = 0;
}

static void ids_free(struct bp_meta *m)
{
	if (m->ids)
		bp_proc_ids_free(m->ids);
	free(m->ids);
	m->ids = NULL;
}

/* whose the process is and its cgroups, with the other facts */
static void meta_ids(struct bp_session *s, struct bp_meta *m)
{
	ids_free(m);
	if (!s->cgw)
		return;
	m->ids = calloc(1, sizeof(*m->ids));
	if (m->ids && bp_cgwatch__read_ids(s->cgw, m->pid, m->ids)) {
		free(m->ids);
		m->ids = NULL;
	}
}

/* the user and cgroups of m from the ids an event carries (cached by cgroup set) */
static void meta_event_ids(struct bp_session *s, struct bp_meta *m, const __u64 cg[BP_EXCG__MAX],
			   uint32_t euid)
{
	ids_free(m);
	if (!s->cgw)
		return;
	m->ids = calloc(1, sizeof(*m->ids));
	if (m->ids && bp_cgwatch__exec_ids(s->cgw, m->pid, cg, euid, m->ids)) {
		free(m->ids);
		m->ids = NULL;
	}
}

/*
 * The facts of a new image from its exec event, as /proc would give them
 * (bp_procinfo_read(), meta_ids()): no /proc file is read but a command
 * line longer than the event carries, and the cgroups of a set of cgroups
 * not seen before.
 */
static void meta_from_exec(struct bp_session *s, const struct bp_exec_event *x)
{
	struct bp_meta *m = meta_add(s, x->ev.tgid);
	bool whole = (x->flags & BP_EXF_ARGS) && !(x->flags & BP_EXF_ARGS_CUT);
	struct bp_procinfo pi;
	uint32_t i, n;

	if (!m)
		return;
	memcpy(m->comm, x->ev.comm, sizeof(m->comm));
	m->comm[sizeof(m->comm) - 1] = '\0';
	m->ppid = x->ev.ppid;
	m->start_ns = x->start_ns;
	/* a pid used again: the facts of the one before are gone with meta_add's answer */
	m->exited = false;
	m->retiring = false;
	m->end_ns = 0;
	free(m->cmdline);
	m->cmdline = NULL;
	n = x->args_len < BP_ARGS_LEN ? x->args_len : BP_ARGS_LEN;
	if (whole) {
		/* as /proc/PID/cmdline reads: arguments joined by spaces */
		while (n > 0 && !x->args[n - 1])
			n--;
		if (n) {
			m->cmdline = malloc(n + 1);
			if (m->cmdline) {
				for (i = 0; i < n; i++)
					m->cmdline[i] = x->args[i] ? x->args[i] : ' ';
				m->cmdline[n] = '\0';
			}
		}
	} else {
		s->meta_proc_reads++;
		if (!bp_procinfo_read(NULL, x->ev.tgid, &pi))
			m->cmdline = pi.cmdline;
	}
	meta_event_ids(s, m, x->cg, x->euid);
	if (whole)
		s->meta_from_exec++;
}

/* the facts about a process, read from /proc once and then kept */
static const struct bp_meta *meta_get(struct bp_session *s, uint32_t pid)
{
	struct bp_meta *m = meta_find(s, pid);
	struct bp_procinfo pi;
	int err;

	if (m && m->comm[0])
		return m;
	if (m && m->exited)
		return NULL;
	err = bp_procinfo_read(NULL, pid, &pi);
	if (err == -ESRCH) {
		/*
		 * Gone, and known gone until its entry retires: a process
		 * never sampled has rows in every drain while it is in the
		 * window (off-CPU, thread records), and each asked /proc
		 * again: 7,568 failed reads of /proc/PID/stat over 8 s of 300
		 * forks a second, 1,895 since (one per child).
		 * An exec or a first sample of a new process under the pid
		 * sets its entry anew.
		 */
		m = meta_add(s, pid);
		if (m) {
			m->exited = true;
			m->retiring = false;
		}
		return NULL;
	}
	if (err)
		return NULL;
	s->meta_proc_reads++;
	m = meta_add(s, pid);
	if (!m) {
		bp_procinfo_free(&pi);
		return NULL;
	}
	memcpy(m->comm, pi.comm, sizeof(m->comm));
	m->ppid = pi.ppid;
	m->start_ns = pi.start_ns;
	free(m->cmdline);
	m->cmdline = pi.cmdline;
	meta_ids(s, m);
	return m;
}

/* m as the event names its process: its comm, parent and start; cmdline is taken over */
static void meta_set(struct bp_meta *m, const struct bp_event *ev, uint64_t start_ns,
		     char *cmdline)
{
	memcpy(m->comm, ev->comm, sizeof(m->comm));
	m->comm[sizeof(m->comm) - 1] = '\0';
	m->ppid = ev->ppid;
	m->start_ns = start_ns;
	m->image_ns = 0;
	m->exited = false;
	m->retiring = false;
	m->end_ns = 0;
	free(m->cmdline);
	m->cmdline = cmdline;
}

/*
 * A child's entry, in its parent's image: the parent's command line (its
 * argv is the parent's, copied at the fork) and, with with_ids, its owner
 * and cgroups; its own comm and start. The parent's facts are read once if
 * they are not known yet (a shell whose children run loops is seldom
 * sampled itself). NULL when they cannot be: nothing is set then.
 */
static struct bp_meta *meta_child(struct bp_session *s, const struct bp_event *ev,
				  uint64_t start_ns, bool with_ids)
{
	const struct bp_meta *pm = meta_get(s, ev->ppid);
	struct bp_proc_ids *ids = NULL;
	char *cmdline = NULL;
	struct bp_meta *m;

	if (!pm || pm->exited)
		return NULL;
	if (pm->cmdline && !(cmdline = strdup(pm->cmdline)))
		return NULL;
	/* a failed copy frees what it had copied */
	if (with_ids && pm->ids &&
	    (!(ids = calloc(1, sizeof(*ids))) || bp_proc_ids_copy(ids, pm->ids))) {
		free(ids);
		free(cmdline);
		return NULL;
	}
	/* pm is not used past here: a new entry may move the table */
	m = meta_add(s, ev->tgid);
	if (!m) {
		if (ids)
			bp_proc_ids_free(ids);
		free(ids);
		free(cmdline);
		return NULL;
	}
	meta_set(m, ev, start_ns, cmdline);
	ids_free(m);
	m->ids = ids;
	return m;
}

/*
 * The facts of a child still in its parent's image at its first sample
 * (BP_EVF_FORK_IMAGE): its owner and cgroups from the event. When the
 * parent's cannot be read, the child's are read from /proc then.
 */
static void meta_from_fork(struct bp_session *s, const struct bp_first_event *f)
{
	struct bp_meta *m = meta_child(s, &f->ev, f->start_ns, false);

	if (!m)
		return;
	meta_event_ids(s, m, f->cg, f->euid);
	s->meta_from_fork++;
}

/*
 * A process whose first sample waited for our tick and which exited
 * before it (oncpu.bpf.c: the lazy first sample): what the event read in
 * its own context is all there is. Without it the process had no owner,
 * parent or cgroup: a user's recording through the agent lost it (a
 * fork-per-input job on a fast host: 250 of 266 sampled children, 87% of
 * its samples), and its job could not be told. A child in its parent's
 * image has its parent's command line; any other, its comm. Kept as
 * exited, with the end its exit event gave the process.
 */
static void meta_from_gone(struct bp_session *s, struct bp_proc *proc,
			   const struct bp_first_event *f, size_t size)
{
	const struct bp_meta *had = meta_find(s, proc->pid), *pm;
	char *cmdline = NULL;
	struct bp_meta *m;

	if (size < sizeof(*f) || !(f->ev.flags & BP_EVF_IDS) ||
	    (had && had->comm[0] && had->start_ns >= f->start_ns))
		return;
	/*
	 * A child in its parent's image: the parent's command line, even when
	 * the parent is gone too (its facts are kept for its last window),
	 * unless it exec'd since the fork.
	 */
	if ((f->ev.flags & BP_EVF_FORK_IMAGE) && f->ev.ppid && f->ev.ppid != f->ev.tgid) {
		pm = meta_get(s, f->ev.ppid);
		if (pm && pm->cmdline && pm->image_ns <= f->start_ns)
			cmdline = strdup(pm->cmdline);
	}
	/* no pointer into the table past here: a new entry may move it */
	m = meta_add(s, f->ev.tgid);
	if (!m) {
		free(cmdline);
		return;
	}
	meta_set(m, &f->ev, f->start_ns, cmdline);
	meta_event_ids(s, m, f->cg, f->euid);
	m->exited = true;
	m->end_ns = proc->end_ns;
	s->meta_from_gone++;
}

/*
 * A child forked in a targeted run: its parent's facts as the fork copied
 * them. A child that only waits may never be sampled, and by the report it
 * is gone: its facts would be /proc's of no one. Its first sample
 * (meta_from_fork()) or its exec sets them anew.
 */
static void meta_at_fork(struct bp_session *s, const struct bp_event *ev)
{
	const struct bp_meta *m = meta_find(s, ev->tgid);

	if (!m || !m->comm[0])
		meta_child(s, ev, ev->ts_ns, true);
}

/* a process changed image: its facts are read again */
static void meta_invalidate(struct bp_session *s, uint32_t pid)
{
	struct bp_meta *m = meta_find(s, pid);

	if (!m)
		return;
	m->comm[0] = '\0';
	free(m->cmdline);
	m->cmdline = NULL;
	ids_free(m);
}

static void fill_meta(struct bp_session *s, struct bp_proc *proc)
{
	const struct bp_meta *m;

	if (proc->have_meta)
		return;
	if (proc->exited) {
		/*
		 * Gone (its exit handled in this window, its exec in one
		 * before): the facts kept of it, never /proc's, which shows
		 * another process under its pid or none.
		 */
		m = meta_find(s, proc->pid);
		if (!m || !m->comm[0] || (proc->end_ns && m->start_ns > proc->end_ns))
			return;
	} else {
		m = meta_get(s, proc->pid);
		if (!m)
			return;
	}
	memcpy(proc->comm, m->comm, sizeof(proc->comm));
	proc->ppid = m->ppid;
	/*
	 * A fork seen in the window gives the exact start. /proc's is in
	 * clock ticks, rounded down: a run forked within a tick of the
	 * window's start would read as already running (one run of a shell
	 * loop left out of its job). A process already running when the
	 * profile started has no start in it.
	 */
	if (!proc->start_ns)
		proc->start_ns = m->start_ns > s->prof->start_ns ? m->start_ns : 0;
	proc->cmdline = bp_profile__intern(s->prof, m->cmdline);
	proc->have_meta = true;
	if (m->ids) {
		bp_cgwatch__use(s->cgw, m->ids, bp_now_ns());
		bp_cgwatch__fill(s->prof, proc, m->ids);
	}
}

static void meta_drop(struct bp_session *s, struct bp_meta *m)
{
	free(m->cmdline);
	m->cmdline = NULL;
	ids_free(m);
	m->pid = 0;
	s->dead_meta++;
}

/* live: the pids alive, read once for this pass; NULL when that read failed */
static bool pid_gone(const struct bp_pidset *live, uint32_t pid)
{
	char path[32];

	if (live)
		return !bp_pidset__has(live, (pid_t)pid);
	snprintf(path, sizeof(path), "/proc/%u", pid);
	return access(path, F_OK) && errno == ENOENT;
}

uint32_t bp_session__retire(struct bp_session *s)
{
	const struct bp_pidset *live = bp_pidset__read(&s->live, "/proc") ? NULL : &s->live;
	uint32_t i, dropped = 0;

	/*
	 * Two steps, a window apart: records of a process can still arrive
	 * in the drain after its exit, and must find its facts then.
	 */
	for (i = 0; i < s->nr_meta; i++) {
		struct bp_meta *m = &s->meta[i];

		if (!m->pid)
			continue;
		if (m->retiring) {
			meta_drop(s, m);
			dropped++;
		} else if (m->exited || pid_gone(live, m->pid)) {
			/* not every exit is reported (unsampled processes), and events can be lost */
			s->exits_noticed += !m->exited;
			m->exited = true;
			m->retiring = true;
		}
	}
	meta_compact(s);
	bp_syms__retire_live(s->syms, live);
	if (s->unwind)
		bp_unwind__sweep_live(s->unwind, live);
	bp_python__retire(s->python);
	bp_rlang__retire(s->rlang);
	return dropped;
}

/*
 * Kernel functions that say what a blocked thread waits in, by the innermost
 * of its first frames found here (docs/offcpu.md). Names of several kernel
 * versions: pipe_read became anon_pipe_read and fifo_pipe_read in 6.15.
 * Left out on purpose: functions both pipes and sockets call
 * (sock_alloc_send_pskb, __skb_wait_for_more_packets), so that the scan
 * goes on to the caller that tells them apart.
 */
#define SITE_FUNCS(X)						\
	X("__mutex_lock", BP_WS_LOCK)				\
	X("__mutex_lock_slowpath", BP_WS_LOCK)			\
	X("__mutex_lock_killable_slowpath", BP_WS_LOCK)		\
	X("__mutex_lock_interruptible_slowpath", BP_WS_LOCK)	\
	X("mutex_lock_io", BP_WS_LOCK)				\
	X("__ww_mutex_lock", BP_WS_LOCK)			\
	X("__ww_mutex_lock_slowpath", BP_WS_LOCK)		\
	X("__ww_mutex_lock_interruptible_slowpath", BP_WS_LOCK)	\
	X("rt_mutex_slowlock", BP_WS_LOCK)			\
	X("__rt_mutex_slowlock_locked", BP_WS_LOCK)		\
	X("rtlock_slowlock_locked", BP_WS_LOCK)			\
	X("rwsem_down_read_slowpath", BP_WS_LOCK)		\
	X("rwsem_down_write_slowpath", BP_WS_LOCK)		\
	X("__down_common", BP_WS_LOCK)				\
	X("__down", BP_WS_LOCK)					\
	X("__down_interruptible", BP_WS_LOCK)			\
	X("__down_killable", BP_WS_LOCK)			\
	X("__down_timeout", BP_WS_LOCK)				\
	X("percpu_rwsem_wait", BP_WS_LOCK)			\
	X("__percpu_down_read", BP_WS_LOCK)			\
	X("percpu_down_write", BP_WS_LOCK)			\
	X("pipe_read", BP_WS_PIPE_IN)				\
	X("anon_pipe_read", BP_WS_PIPE_IN)			\
	X("fifo_pipe_read", BP_WS_PIPE_IN)			\
	X("pipe_wait_readable", BP_WS_PIPE_IN)			\
	X("unix_stream_data_wait", BP_WS_PIPE_IN)		\
	X("unix_stream_read_generic", BP_WS_PIPE_IN)		\
	X("unix_dgram_recvmsg", BP_WS_PIPE_IN)			\
	X("unix_accept", BP_WS_PIPE_IN)				\
	X("pipe_write", BP_WS_PIPE_OUT)				\
	X("anon_pipe_write", BP_WS_PIPE_OUT)			\
	X("fifo_pipe_write", BP_WS_PIPE_OUT)			\
	X("pipe_wait_writable", BP_WS_PIPE_OUT)			\
	X("unix_stream_sendmsg", BP_WS_PIPE_OUT)		\
	X("unix_dgram_sendmsg", BP_WS_PIPE_OUT)			\
	X("unix_wait_for_peer", BP_WS_PIPE_OUT)			\
	X("unix_stream_connect", BP_WS_PIPE_OUT)		\
	X("sk_wait_data", BP_WS_NET_IN)				\
	X("tcp_recvmsg_locked", BP_WS_NET_IN)			\
	X("tcp_recvmsg", BP_WS_NET_IN)				\
	X("__skb_recv_udp", BP_WS_NET_IN)			\
	X("udp_recvmsg", BP_WS_NET_IN)				\
	X("udpv6_recvmsg", BP_WS_NET_IN)			\
	X("sk_stream_wait_memory", BP_WS_NET_OUT)		\
	X("tcp_sendmsg_locked", BP_WS_NET_OUT)			\
	X("tcp_sendmsg", BP_WS_NET_OUT)				\
	X("inet_csk_wait_for_connect", BP_WS_ACCEPT)		\
	X("inet_csk_accept", BP_WS_ACCEPT)			\
	X("inet_wait_for_connect", BP_WS_CONNECT)		\
	X("__inet_stream_connect", BP_WS_CONNECT)		\
	X("do_sys_poll", BP_WS_POLL)				\
	X("do_select", BP_WS_POLL)				\
	X("core_sys_select", BP_WS_POLL)			\
	X("do_epoll_wait", BP_WS_POLL)				\
	X("ep_poll", BP_WS_POLL)				\

#define SITE_NAME(name, site)	name,
#define SITE_KIND(name, site)	site,
/* static: the kallsyms thread looks for them while the session starts */
static const char *const site_names[] = { SITE_FUNCS(SITE_NAME) };
static const uint32_t site_kinds[] = { SITE_FUNCS(SITE_KIND) };

static int cmp_range(const void *a, const void *b)
{
	const struct bp_site_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

#define NR_SITE_FUNCS	(sizeof(site_names) / sizeof(site_names[0]))
#define SITE_PER_FUNC	8

struct site_found {
	uint64_t lo[NR_SITE_FUNCS][SITE_PER_FUNC], hi[NR_SITE_FUNCS][SITE_PER_FUNC];
	uint32_t n[NR_SITE_FUNCS];
};

static void site_found(void *ctx, size_t which, uint64_t lo, uint64_t hi)
{
	struct site_found *f = ctx;

	if (f->n[which] < SITE_PER_FUNC) {
		f->lo[which][f->n[which]] = lo;
		f->hi[which][f->n[which]] = hi;
		f->n[which]++;
	}
}

uint32_t bp_session_site_ranges(const struct bp_syms *syms, struct bp_site_range *out,
				uint32_t max, uint32_t *left_out)
{
	struct site_found *f = calloc(1, sizeof(*f));
	uint32_t n = 0, i, j, k;

	*left_out = 0;
	if (!f)
		return 0;
	bp_syms__kernel_ranges_each(syms, site_names, NR_SITE_FUNCS, site_found, f);
	/* in the table's order, so that what does not fit is its end */
	for (i = 0; i < NR_SITE_FUNCS; i++) {
		for (j = 0; j < f->n[i]; j++) {
			if (n == max) {
				(*left_out)++;
				continue;
			}
			out[n++] = (struct bp_site_range){ f->lo[i][j], f->hi[i][j], site_kinds[i] };
		}
	}
	free(f);
	qsort(out, n, sizeof(*out), cmp_range);
	/* a symbol listed twice (aliases) would overlap: keep the first */
	for (i = k = 0; i < n; i++) {
		if (k && out[i].lo < out[k - 1].hi)
			continue;
		out[k++] = out[i];
	}
	return k;
}

static void set_site_ranges(struct bp_session *s)
{
	struct bp_site_range r[BP_SITE_RANGES];
	uint32_t left, n = bp_session_site_ranges(s->syms, r, BP_SITE_RANGES, &left);

	if (left)
		bp_info("kernel wait sites: %u ranges do not fit in %u: %s", left, BP_SITE_RANGES,
			"their waits count as sleep");
	bp_dbg("kernel wait sites: %u ranges", n);
	bp_loader__set_site_ranges(s->loader, r, n);
}

/*
 * Kernel symbols name kernel frames at each drain and tell the off-CPU
 * programs where the kernel's lock slow paths are. Parsing kallsyms
 * (~120k lines) runs on a thread of its own while the BPF programs load
 * and verify, and is taken just before sampling goes live and a command is
 * let go: done later, on the thread that serves events, it delayed the
 * unwind tables a just-started command's samples wait for by as long as
 * the parse took.
 */
static void ensure_ksyms(struct bp_session *s)
{
	int err;

	if (s->ksyms_tried)
		return;
	s->ksyms_tried = true;
	err = bp_syms__load_kernel(s->syms);
	if (err) {
		bp_warn("kernel symbols unavailable (%s): kernel frames will be unnamed",
			strerror(-err));
		return;
	}
	if (s->opts.offcpu)
		set_site_ranges(s);
}

/* who was busy in the interval just drained: candidates for a memory probe */
static void feed_memprobe(struct bp_session *s, uint64_t now)
{
	double interval = s->last_drain_ns && now > s->last_drain_ns ?
				  (now - s->last_drain_ns) / 1e9 : s->opts.drain_interval_s;
	uint32_t i;

	s->last_drain_ns = now;
	if (!s->memprobe || interval <= 0 || s->opts.hz <= 0)
		return;
	for (i = 0; i < s->prof->nr_procs; i++) {
		struct bp_proc *proc = s->prof->procs[i];

		if (proc->exited || !proc->last_drain_samples)
			continue;
		bp_memprobe__seen(s->memprobe, proc->pid,
				  proc->last_drain_samples / (double)s->opts.hz / interval, now);
	}
}

static void unwind_later(struct bp_session *s, pid_t pid, uint64_t due_ns);

/* the process's unwind list written; tables left for a later slice come next */
static int unwind_update(struct bp_session *s, pid_t pid, bool force)
{
	int err = bp_unwind__update(s->unwind, pid, force);

	if (bp_unwind__deferred(s->unwind))
		unwind_later(s, pid, 0);
	return err;
}

/*
 * Read the process's maps now, while it lives, and give the unwinder the
 * tables of the files it maps. 0 when its unwind list was written, 1 when
 * it had not changed (and force was not set), <0 on failure.
 */
static int snapshot_force(struct bp_session *s, pid_t pid, bool force)
{
	int err = 0;

	/* the unwind list first: it is what the next samples wait for */
	if (s->unwind)
		err = unwind_update(s, pid, force);
	/* unchanged maps after a miss: nothing new to name either */
	if (err == 1)
		return 1;
	return bp_syms__snapshot(s->syms, pid);
}

static void snapshot(struct bp_session *s, pid_t pid)
{
	snapshot_force(s, pid, true);
}

/*
 * BPF met a user address outside the process's unwind list, and marked
 * the list so that it reports no other until the list is written again.
 * New code (the libraries ld.so maps right after exec, a dlopen) makes
 * the maps differ: the new list is written at once. Unchanged maps mean
 * garbage from a frame-pointer walk: the list (and the permission to
 * report) is rewritten after a second, so that such a process costs one
 * maps read per second at most. New code mapped while the list stays
 * marked (Python importing _json just after a garbage miss) is reported
 * again at once: BPF compares the process's executable pages with their
 * count at the last report (bp_uw_missed()). A recording of chosen
 * processes has few to pay for, and rechecks after 100 ms (ten maps reads
 * a second at most, ~2 ms of CPU for a Python process).
 */
#define UW_RECHECK_NS		(1000ULL * 1000 * 1000)
#define UW_RECHECK_TARGET_NS	(100ULL * 1000 * 1000)
/* how soon a process whose loader is still mapping its interpreter is looked at again */
#define PY_LOADER_POLL_MS	20

/* write the process's unwind list again at due_ns (the earlier of two dues stands) */
static void unwind_later(struct bp_session *s, pid_t pid, uint64_t due_ns)
{
	struct bp_uw_pending *n;
	uint32_t i;

	for (i = 0; i < s->nr_uw_pending; i++)
		if (s->uw_pending[i].pid == pid) {
			if (due_ns < s->uw_pending[i].due_ns)
				s->uw_pending[i].due_ns = due_ns;
			return;
		}
	if (s->nr_uw_pending == s->cap_uw_pending) {
		uint32_t ncap = s->cap_uw_pending ? 2 * s->cap_uw_pending : 16;

		n = reallocarray(s->uw_pending, ncap, sizeof(*n));
		if (!n)
			return;
		s->uw_pending = n;
		s->cap_uw_pending = ncap;
	}
	s->uw_pending[s->nr_uw_pending++] = (struct bp_uw_pending){ .pid = pid, .due_ns = due_ns };
}

/* a process gone: its list is not written again (its maps would read as nothing) */
static void unwind_cancel(struct bp_session *s, pid_t pid)
{
	uint32_t i;

	for (i = 0; i < s->nr_uw_pending; i++)
		if (s->uw_pending[i].pid == pid) {
			s->uw_pending[i] = s->uw_pending[--s->nr_uw_pending];
			s->uw_cancelled++;
			return;
		}
}

/*
 * The unwind tables of an image that began at born (0: unknown) and is not
 * unwind_min_age_ns old yet are left until it is: true when they were. A
 * curl scraping the agent's metrics maps 35 libraries (250,000 rows, ~100
 * ms to build) and is gone in 40 ms: its tables came too late anyway.
 */
static bool tables_later(struct bp_session *s, pid_t pid, uint64_t born)
{
	uint64_t due = born + s->opts.unwind_min_age_ns;

	if (!s->unwind || !s->opts.unwind_min_age_ns || !born || bp_now_ns() >= due)
		return false;
	unwind_later(s, pid, due);
	return true;
}

/* when the image of pid began, as far as its facts say; 0: unknown */
static uint64_t image_born(struct bp_session *s, pid_t pid)
{
	const struct bp_meta *m = meta_find(s, pid);

	if (!m)
		return 0;
	return m->image_ns > m->start_ns ? m->image_ns : m->start_ns;
}

static void unwind_miss(struct bp_session *s, pid_t pid)
{
	if (!s->unwind || snapshot_force(s, pid, false) != 1)
		return;
	unwind_later(s, pid,
		     bp_now_ns() + (s->opts.filter ? UW_RECHECK_TARGET_NS : UW_RECHECK_NS));
}

/* the pending rewrites that are due */
static void unwind_refresh_pending(struct bp_session *s)
{
	uint64_t now = bp_now_ns();
	uint32_t i, n = 0, nr = s->nr_uw_pending;
	pid_t due[64];
	uint32_t nd = 0;

	/* taken out first: a refresh may ask for another (tables left for a later slice) */
	for (i = 0; i < nr; i++) {
		if (now >= s->uw_pending[i].due_ns && nd < sizeof(due) / sizeof(due[0]))
			due[nd++] = s->uw_pending[i].pid;
		else
			s->uw_pending[n++] = s->uw_pending[i];
	}
	s->nr_uw_pending = n;
	for (i = 0; i < nd; i++)
		snapshot(s, due[i]);
}

/* how long until the next pending rewrite is due, in ms (capped at cap_ms) */
static int unwind_wait_ms(const struct bp_session *s, int cap_ms)
{
	uint64_t now = bp_now_ns(), first = UINT64_MAX, wait;
	uint32_t i;

	for (i = 0; i < s->nr_uw_pending; i++)
		if (s->uw_pending[i].due_ns < first)
			first = s->uw_pending[i].due_ns;
	if (first <= now)
		return 0;
	wait = first == UINT64_MAX ? (uint64_t)cap_ms : (first - now) / 1000000 + 1;
	return wait < (uint64_t)cap_ms ? (int)wait : cap_ms;
}

static int drain(struct bp_session *s, bool full)
{
	int err;

	ensure_ksyms(s);
	unwind_refresh_pending(s);
	bp_python__tick(s->python);
	bp_rlang__tick(s->rlang);
	err = bp_collect__drain(s->collect, full);
	if (!err && full)
		feed_memprobe(s, bp_now_ns());
	return err;
}

/*
 * The counters of the cgroups a process is in, kept from now as its
 * baseline (nothing when they are watched already). A targeted command may
 * move into a cgroup just before its exec, and a quota throttles it from
 * its first period on: read at the exec event, before the unwind tables
 * and the drain (tens of ms on a slow machine), not when its facts are
 * taken, so that none of its throttling is missed.
 */
static void cg_baseline(struct bp_session *s, pid_t pid)
{
	struct bp_proc_ids ids = {};

	if (!s->cgw || bp_cgwatch__read_ids(s->cgw, pid, &ids))
		return;
	bp_cgwatch__use(s->cgw, &ids, bp_now_ns());
	bp_proc_ids_free(&ids);
}

/* the interpreter ring carries Python's code objects and R's names */
static void on_interp_event(void *ctx, const void *rec, size_t len)
{
	struct bp_session *s = ctx;

	if (bp_rlang__is_event(rec, len))
		bp_rlang__on_event(s->rlang, rec, len);
	else
		bp_python__on_event(s->python, rec, len);
}

static void on_new_proc(void *ctx, struct bp_proc *proc)
{
	fill_meta(ctx, proc);
}

static void set_err(struct bp_session *s, int err)
{
	if (err && !s->err)
		s->err = err;
}

/*
 * The old image's maps kept for its samples still in the maps, named at
 * the next drain (symbols.h): no drain now. Not for a Python or an R whose
 * frames were walked: their names go with the image (bp_python__exec()).
 */
static bool keep_image(struct bp_session *s, const struct bp_event *ev, size_t size)
{
	const struct bp_exec_event *x = (const struct bp_exec_event *)ev;

	if (size < sizeof(*x) || bp_python__walks(s->python, ev->tgid) ||
	    bp_rlang__walks(s->rlang, ev->tgid))
		return false;
	return !bp_syms__keep_image(s->syms, ev->tgid, (uint16_t)(x->image - 1));
}

/*
 * The executable BPF found at the first sample, as the stat of
 * /proc/PID/exe would give it: one cold system call fewer a new process
 * (~25 us on a guest, right after the wake-up), for the Python and R
 * checks and the symbols. An exec between the sample and the maps read
 * leaves an identity no mapping has: each reader then finds its file as
 * before, by the line's own identity.
 */
static void hold_exe(const struct bp_first_event *f)
{
	struct stat st;

	bp_exe_id_stat(&f->exe, &st);
	bp_procmaps__hold_exe(&st);
}

/*
 * The first sample of a child that has not exec'd since its fork: a shell
 * loop's or a server's children, sampled between their fork and exec or
 * running on as workers. Its maps are its parent's, so are its command
 * line and interpreter: it takes them from what is held of the parent, and
 * /proc is not read (its maps, exe, stat, status and cgroup: the work of a
 * new process, done again for every child). False when the parent is not
 * known well enough (no maps held, read before the parent's last exec, a
 * walked Python or R, another owner): the child is read as any process.
 */
static bool first_in_parent_image(struct bp_session *s, struct bp_proc *proc,
				  const struct bp_event *ev, size_t size)
{
	const struct bp_first_event *f = (const void *)ev;
	const struct bp_meta *pm;
	uint64_t parent_image = 0;
	int err;

	if (size < sizeof(*f) || !(ev->flags & BP_EVF_FORK_IMAGE) ||
	    !(ev->flags & BP_EVF_IDS) || !ev->ppid || ev->ppid == ev->tgid)
		return false;
	if (bp_python__walks(s->python, ev->ppid) || bp_rlang__walks(s->rlang, ev->ppid))
		return false;
	pm = meta_find(s, ev->ppid);
	if (pm)
		parent_image = pm->image_ns;
	err = bp_syms__clone(s->syms, ev->ppid, ev->tgid, f->euid, f->nspid, f->mnt_ns,
			     parent_image, ev->ts_ns);
	/*
	 * A parent never sampled (a shell, a server's listener) is read once,
	 * now, for all its children: it is alive (it forked this one), and in
	 * the image it forked with unless it exec'd in the moment since the
	 * child's sample (its exec event, still queued, then drops the maps).
	 */
	if (err == -ENOENT && !bp_syms__snapshot(s->syms, ev->ppid))
		err = bp_syms__clone(s->syms, ev->ppid, ev->tgid, f->euid, f->nspid, f->mnt_ns,
				     parent_image, ev->ts_ns);
	if (err)
		return false;
	/* else its facts from /proc, its maps still from its parent */
	meta_from_fork(s, f);
	fill_meta(s, proc);
	/* its tables once it has lived a moment, as any young image's */
	if (s->unwind && !tables_later(s, ev->tgid, image_born(s, ev->tgid)))
		unwind_update(s, ev->tgid, true);
	return true;
}

/*
 * A sampled process exited before its maps were read (its first sample
 * waits for our tick: oncpu.bpf.c): named from the mappings BPF walked at
 * its exit, by the paths learnt of their files. Its samples, still in the
 * maps, are named at the next drain.
 */
static void exit_maps(struct bp_session *s, const struct bp_exit_event *x)
{
	uint64_t snap = bp_syms__snapshot_ns(s->syms, x->ev.tgid);
	char maps[64];

	/* read while it lived, in this image (not its parent's image, before its exec) */
	if (snap && snap >= image_born(s, x->ev.tgid))
		return;
	snprintf(maps, sizeof(maps), "/proc/%u/maps", x->ev.tgid);
	if (bp_mapfiles__hold(s->mapfiles, x, maps))
		return;
	bp_syms__hold_ids(s->syms, x->ev.tgid, x->euid, x->nspid, x->mnt_ns);
	if (!bp_syms__snapshot(s->syms, x->ev.tgid))
		s->maps_from_exit++;
	bp_syms__drop_ids(s->syms);
	bp_procmaps__unhold();
}

/*
 * A process's first sample (in this image): its maps read and held for
 * its readers (interpreters, symbols, unwind tables) while it lives. gone:
 * its exit came in the same batch of events (first_queue()), nothing of it
 * is left to read: its exit's walk named it (exit_maps()).
 */
static void first_sample(struct bp_session *s, struct bp_proc *proc, const struct bp_event *ev,
			 size_t size, bool gone)
{
	const struct bp_first_event *f = size >= sizeof(*f) ? (const void *)ev : NULL;
	char maps[64];
	int err;

	if (first_in_parent_image(s, proc, ev, size))
		return;
	if (gone) {
		s->first_gone++;
		s->first_gone_batch++;
		meta_from_gone(s, proc, f, size);
		fill_meta(s, proc);
		return;
	}
	/* four readers of its maps below, one read: procmaps.h */
	snprintf(maps, sizeof(maps), "/proc/%u/maps", ev->tgid);
	err = bp_procmaps__hold(maps);
	/* their paths, for when a process mapping them is gone before we look */
	if (!err && f && (ev->flags & BP_EVF_IDS) && bp_procmaps__held_lines()) {
		s->maps_from_proc++;
		bp_mapfiles__learn_maps(s->mapfiles, f->mnt_ns, maps);
	}
	/*
	 * Gone already, or a zombie (which maps nothing): its walkers,
	 * symbols and tables would each find /proc empty (under 20 new
	 * processes a second, half the agent's opens were of such
	 * processes). Its facts may still be read: a zombie's status names
	 * it.
	 */
	if (err == -ENOENT || err == -ESRCH || (!err && !bp_procmaps__held_lines())) {
		s->first_gone++;
		/* gone, not a zombie (whose status still names it): the event's facts */
		if (err)
			meta_from_gone(s, proc, f, size);
		fill_meta(s, proc);
		bp_procmaps__unhold();
		return;
	}
	if (err)
		bp_dbg("pid %u: maps not held: each reader reads them", ev->tgid);
	if (f && (ev->flags & BP_EVF_IDS))
		bp_syms__hold_ids(s->syms, ev->tgid, f->euid, f->nspid, f->mnt_ns);
	if (!err && f && (ev->flags & BP_EVF_EXE)) {
		hold_exe(f);
		s->exe_from_bpf++;
	}
	/*
	 * The interpreter first: a short-lived Python under process churn may
	 * be gone by the time its facts and symbols are read, and its maps are
	 * all the walker needs.
	 */
	set_err(s, bp_python__attach(s->python, ev->tgid));
	set_err(s, bp_rlang__attach(s->rlang, ev->tgid));
	fill_meta(s, proc);
	/* a young image: its names now, while it lives; its tables if it lives on */
	if (tables_later(s, ev->tgid, image_born(s, ev->tgid)))
		bp_syms__snapshot(s->syms, ev->tgid);
	else
		snapshot(s, ev->tgid);
	bp_syms__drop_ids(s->syms);
	bp_procmaps__unhold();
}

/*
 * First samples that woke no one (BP_EVF_LAZY) wait for the end of their
 * batch of events: a process whose exit is in the same batch is gone, and
 * /proc is not asked for it (under 20 new processes a second, 10 failed
 * opens a second). Another event of the same process (an exec) hands its
 * queued first sample over first, so each is handled in the ring's order.
 */
struct first_q {
	struct bp_first_event ev;
	bool gone;
};

static void first_queue(struct bp_session *s, const struct bp_event *ev, size_t size)
{
	struct first_q *q;

	if (s->nr_first_q == s->cap_first_q) {
		uint32_t ncap = s->cap_first_q ? 2 * s->cap_first_q : 64;
		void *nv = reallocarray(s->first_q, ncap, sizeof(*q));

		if (!nv) {
			set_err(s, -ENOMEM);
			return;
		}
		s->first_q = nv;
		s->cap_first_q = ncap;
	}
	q = &s->first_q[s->nr_first_q++];
	memset(q, 0, sizeof(*q));
	memcpy(&q->ev, ev, size < sizeof(q->ev) ? size : sizeof(q->ev));
}

static void first_handle(struct bp_session *s, struct first_q *q)
{
	struct bp_proc *proc = bp_profile__proc(s->prof, q->ev.ev.tgid, true);

	if (!proc) {
		set_err(s, -ENOMEM);
		return;
	}
	first_sample(s, proc, &q->ev.ev, sizeof(q->ev), q->gone);
}

/*
 * Another event of pid, of this kind: an exit marks its queued first
 * samples gone; anything else has them (and those queued before them)
 * handled first.
 */
static void first_before(struct bp_session *s, uint32_t pid, uint32_t kind)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->nr_first_q; i++) {
		if (s->first_q[i].ev.ev.tgid != pid)
			continue;
		if (kind == BP_EV_EXIT)
			s->first_q[i].gone = true;
		else
			n = i + 1;
	}
	for (i = 0; i < n; i++)
		first_handle(s, &s->first_q[i]);
	if (!n)
		return;
	memmove(s->first_q, s->first_q + n, (s->nr_first_q - n) * sizeof(*s->first_q));
	s->nr_first_q -= n;
}

static void first_flush(struct bp_session *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_first_q; i++)
		first_handle(s, &s->first_q[i]);
	s->nr_first_q = 0;
}

/* the process events waiting, then the first samples they held back */
static int poll_events(struct bp_session *s, int timeout_ms)
{
	int n = bp_loader__poll(s->loader, timeout_ms);

	first_flush(s);
	return n;
}

static void on_event(void *ctx, const struct bp_event *ev, size_t size)
{
	struct bp_session *s = ctx;
	struct bp_proc *proc;

	s->events++;
	if (s->nr_first_q)
		first_before(s, ev->tgid, ev->kind);
	if (ev->kind == BP_EV_FIRST_SAMPLE && (ev->flags & BP_EVF_LAZY)) {
		first_queue(s, ev, size);
		return;
	}
	if (ev->kind == BP_EV_UNWIND_MISS) {
		unwind_miss(s, ev->tgid);
		return;
	}
	/*
	 * BPF dropped the old image's unwind list at the exec: until the new
	 * one is in, its stacks are cut. It goes first, before the drain
	 * below (tens of ms), for a target or a process that was being
	 * sampled; any other waits for its first sample, like its symbols.
	 */
	if (ev->kind == BP_EV_EXEC && (s->opts.filter || s->opts.cgroup))
		cg_baseline(s, ev->tgid);
	if (ev->kind == BP_EV_EXEC && s->unwind) {
		bp_unwind__forget(s->unwind, ev->tgid);
		if ((s->opts.filter || (ev->flags & BP_EVF_WAS_SAMPLED)) &&
		    !tables_later(s, ev->tgid, ev->ts_ns)) {
			/*
			 * A target's list now. Any other process's exec did
			 * not wake us (proc.bpf.c), and it may be gone by now:
			 * its list is written after this batch of events,
			 * unless its exit is in the batch too (a maps read
			 * that could only fail).
			 */
			if (s->opts.filter)
				unwind_update(s, ev->tgid, true);
			else
				unwind_later(s, ev->tgid, 0);
		}
	}
	/*
	 * Samples of the old image must resolve against the old maps, so
	 * they are drained now, while we hold those maps. When the maps we
	 * hold were read after the exec (a forked child sampled inside
	 * execve, whose first-sample event was handled too late), they are
	 * the new image's already and a drain would buy nothing: under
	 * process churn that is nearly every exec. Drain before taking a
	 * process pointer: new processes move the table.
	 */
	if (ev->kind == BP_EV_EXEC && (ev->flags & BP_EVF_WAS_SAMPLED)) {
		uint64_t snap = bp_syms__snapshot_ns(s->syms, ev->tgid);

		if (!snap || snap >= ev->ts_ns)
			s->exec_drains_skipped++;
		else if (keep_image(s, ev, size))
			s->exec_images_kept++;
		else {
			s->exec_drains++;
			set_err(s, drain(s, false));
		}
	}
	proc = bp_profile__proc(s->prof, ev->tgid, true);
	if (!proc) {
		set_err(s, -ENOMEM);
		return;
	}
	switch (ev->kind) {
	case BP_EV_EXEC:
		meta_invalidate(s, ev->tgid);
		if (size >= sizeof(struct bp_exec_event)) {
			meta_from_exec(s, (const struct bp_exec_event *)ev);
			bp_mapfiles__learn_exec(s->mapfiles, (const struct bp_exec_event *)ev);
		}
		bp_python__exec(s->python, ev->tgid);
		bp_rlang__exec(s->rlang, ev->tgid);
		proc->have_meta = false;
		proc->exited = false;
		/* its fork may have gone unseen (forked before it was a target): jobs key on it */
		if (!proc->ppid)
			proc->ppid = ev->ppid;
		memcpy(proc->comm, ev->comm, sizeof(proc->comm));
		/*
		 * A python is looked at from its exec, not its first sample: a
		 * short-lived one behind a queue of other processes' events may
		 * be gone by then. Its loader has mapped nothing yet: it is
		 * looked at again until it has (bp_python__attach()).
		 */
		if (!strncmp(ev->comm, "python", 6))
			set_err(s, bp_python__attach(s->python, ev->tgid));
		fill_meta(s, proc);
		{
			struct bp_meta *m = meta_find(s, ev->tgid);

			if (m)
				m->image_ns = ev->ts_ns;
		}
		/* gone before /proc was read: its exec is the start we know */
		if (!proc->have_meta && !proc->start_ns)
			proc->start_ns = ev->ts_ns;
		/*
		 * In a targeted run, take the new image's maps now: a short
		 * command may be gone before its first sample reaches us.
		 */
		if (s->opts.filter)
			bp_syms__snapshot(s->syms, ev->tgid);
		break;
	case BP_EV_FORK:
		proc->start_ns = ev->ts_ns;
		proc->ppid = ev->ppid;
		memcpy(proc->comm, ev->comm, sizeof(proc->comm));
		meta_at_fork(s, ev);
		break;
	case BP_EV_FIRST_SAMPLE:
		first_sample(s, proc, ev, size, false);
		break;
	case BP_EV_EXIT: {
		struct bp_meta *m = meta_find(s, ev->tgid);

		if (size >= BP_EXIT_EVENT_SIZE(0) && (ev->flags & BP_EVF_MAPS) &&
		    size >= BP_EXIT_EVENT_SIZE(((const struct bp_exit_event *)ev)->w.nr_maps))
			exit_maps(s, (const struct bp_exit_event *)ev);

		if (m) {
			s->exits_noticed += !m->exited;
			m->exited = true;
			m->end_ns = ev->ts_ns;
		}
		proc->exited = true;
		proc->end_ns = ev->ts_ns;
		bp_syms__exited(s->syms, ev->tgid);
		if (s->unwind) {
			bp_unwind__forget(s->unwind, ev->tgid);
			unwind_cancel(s, ev->tgid);
		}
		bp_python__exited(s->python, ev->tgid);
		bp_rlang__exited(s->rlang, ev->tgid);
		if (s->memprobe)
			bp_memprobe__exited(s->memprobe, ev->tgid);
		break;
	}
	}
}

int bp_session__open(struct bp_session **out, const struct bp_session_opts *opts)
{
	struct bp_loader_opts lo = {};
	struct bp_session *s;
	int err;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	if (s->opts.drain_interval_s <= 0)
		s->opts.drain_interval_s = 1.0;

	s->prof = bp_profile__new();
	s->syms = bp_syms__new(&(struct bp_syms_opts){ .dwarf_budget = opts->dwarf_budget,
							.lazy = opts->lazy_symbols,
							.dwarf_not_from_root =
								opts->dwarf_not_from_root });
	if (!s->prof || !s->syms) {
		err = -ENOMEM;
		goto fail;
	}
	/*
	 * kallsyms beside the BPF load saves its ~80 ms of start, but their
	 * peaks add up: libbpf's copies of the kernel's BTF (11.8 MiB) and
	 * the table as it grows (4.2 MiB). A serial start reads it after.
	 */
	if (opts->serial_load)
		bp_dbg("kallsyms read after the BPF load, not beside it");
	else if (bp_syms__prefetch_kernel(s->syms, opts->offcpu ? site_names : NULL,
					  NR_SITE_FUNCS))
		bp_dbg("kallsyms read when sampling starts, not beside the BPF load");
	lo.hz = opts->hz;
	lo.filter = opts->filter;
	lo.drain_interval_s = s->opts.drain_interval_s;
	lo.verbose_libbpf = opts->verbose_libbpf;
	lo.offcpu = opts->offcpu;
	lo.offcpu_ustacks = opts->offcpu_ustacks;
	lo.no_preempt_stacks = opts->no_preempt_stacks;
	lo.skip_self = opts->skip_self;
	lo.no_idle_samples = opts->no_idle_samples;
	lo.follow_peers = opts->follow_peers;
	lo.cgroup = opts->cgroup;
	if (!opts->no_unwind)
		lo.unwind_rows = (opts->unwind_mem ? opts->unwind_mem : BP_UNWIND_MEM_DEFAULT) /
				 sizeof(struct bp_uw_row);
	lo.no_python = opts->no_python;
	lo.no_r = opts->no_r;
	lo.serial_load = opts->serial_load;
	err = bp_loader__open(&s->loader, &lo);
	if (err)
		goto fail;
	if (lo.unwind_rows) {
		err = bp_unwind__new(s->loader, s->syms, &s->unwind);
		if (err)
			goto fail;
	}
	/* only where BPF walks exiting processes' mappings: else nothing asks */
	if (s->loader->exit_walk) {
		err = bp_mapfiles__new(&s->mapfiles);
		if (err)
			goto fail;
	}
	s->collect = bp_collect__new(s->loader, s->syms, s->prof, on_new_proc, s);
	s->python = bp_python__new(s->loader, NULL);
	s->rlang = bp_rlang__new(s->loader, NULL);
	if (!s->collect || !s->python || !s->rlang) {
		err = -ENOMEM;
		goto fail;
	}
	s->loader->py_fn = on_interp_event;
	s->loader->py_ctx = s;
	bp_collect__set_python(s->collect, s->python);
	bp_collect__set_rlang(s->collect, s->rlang);
	s->prof->hz = opts->hz;
	s->prof->ncpus = bp_online_cpus_count();
	s->prof->pmu = s->loader->hw_cycles;
	s->prof->event = s->loader->hw_cycles ? "cycles" : "cpu-clock";
	s->prof->system_wide = !opts->filter && !opts->cgroup;
	s->cgw = bp_cgwatch__new();
	if (!s->cgw) {
		err = -ENOMEM;
		goto fail;
	}
	s->prof->offcpu_enabled = opts->offcpu;
	{
		struct bp_memprobe_opts mo = {};
		char src[200];
		struct bp_membw bw;
		bool measured;

		/* BOUNDPROF_SYSFS_ROOT: another machine's cache layout, for tests */
		s->prof->llc_bytes = bp_llc_bytes(getenv("BOUNDPROF_SYSFS_ROOT"), src, sizeof(src));
		s->prof->llc_source = bp_profile__intern(s->prof, src);
		mo.llc_bytes = s->prof->llc_bytes;
		s->memprobe = bp_memprobe__new(&mo);
		if (!s->memprobe)
			bp_warn("memory probing unavailable: %s", strerror(errno));
		/*
		 * This machine's memory bandwidth, before any target of ours
		 * runs: kept in the state directory, measured (a few hundred
		 * ms) the first time and when the CPU model changes.
		 */
		if (opts->membw && !bp_membw_get(opts->state_dir, s->prof->llc_bytes ?
						 s->prof->llc_bytes : 32 << 20, 0, &bw, &measured)) {
			s->prof->membw_valid = true;
			s->prof->membw_1_gbs = bw.gbs_1;
			s->prof->membw_n_gbs = bw.gbs_n;
			s->prof->membw_threads = bw.threads;
			s->prof->membw_cache_bytes = bw.cache_bytes;
			s->prof->membw_window = bw.probe_boot[0] != '\0';
			s->prof->membw_window_err = bw.probe_err;
			s->prof->membw_window_floor = bw.probe_floor;
			s->prof->membw_window_stream_gbs = bw.probe_stream_gbs;
			s->prof->membw_window_seen_gbs = bw.probe_seen_gbs;
			s->prof->membw_window_visible = bw.probe_visible;
			s->prof->membw_source = bp_profile__intern(s->prof,
						bp_membw_source(&bw, src, sizeof(src)));
			bp_dbg("memory bandwidth %.1f GB/s (1 thread), %.1f GB/s (%u), %llu MiB of "
			       "cache: %s%s", bw.gbs_1, bw.gbs_n, bw.threads,
			       (unsigned long long)(bw.cache_bytes >> 20), src,
			       measured ? ", just now" : "");
			if (bw.probe_boot[0] && !bw.probe_err)
				bp_dbg("traffic window: a %.1f GB/s stream read as %.2f GB/s (%.0f%% "
				       "seen)", bw.probe_stream_gbs, bw.probe_seen_gbs,
				       100 * bw.probe_visible);
		}
	}
	/* counters per target, where the CPU has a PMU (none in most guests) */
	if (opts->filter) {
		s->pmu = bp_pmu__new();
		if (!s->pmu)
			bp_dbg("no hardware counters: %s", strerror(errno));
	}
	*out = s;
	return 0;
fail:
	bp_session__free(s);
	return err;
}

int bp_session__add_target(struct bp_session *s, pid_t pid)
{
	int err = bp_loader__add_target(s->loader, pid);
	pid_t *n;

	if (err || !s->pmu)
		return err;
	if (bp_pmu__add(s->pmu, pid)) {
		bp_dbg("no hardware counters for pid %d", pid);
		return 0;
	}
	n = realloc(s->pmu_pids, (s->nr_pmu_pids + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->pmu_pids = n;
	s->pmu_pids[s->nr_pmu_pids++] = pid;
	return 0;
}

int bp_session__start(struct bp_session *s)
{
	struct timespec rt;
	uint32_t i;
	int err;

	/* the lock slow paths known before the first switch is seen */
	ensure_ksyms(s);
	err = bp_loader__attach(s->loader, on_event, s);
	if (err)
		return err;
	/* the window opens when sampling is live */
	s->live_ns = bp_now_ns();
	s->prof->start_ns = s->live_ns;
	clock_gettime(CLOCK_REALTIME, &rt);
	s->prof->start_unix_ns = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec;
	s->started = true;

	s->next_drain_ns = s->live_ns + (uint64_t)(s->opts.drain_interval_s * 1e9);
	/* targets that already run: take their maps before they can exit */
	for (i = 0; i < s->prof->nr_procs; i++) {
		fill_meta(s, s->prof->procs[i]);
		snapshot(s, s->prof->procs[i]->pid);
		bp_python__attach(s->python, s->prof->procs[i]->pid);
		bp_rlang__attach(s->rlang, s->prof->procs[i]->pid);
	}
	bp_cgwatch__begin(s->cgw, s->live_ns);
	/* an idle CPU sends no cpu-clock samples here: count busy time from /proc/stat */
	if (bp_cpu_times(NULL, &s->cpu_busy0, &s->cpu_total0))
		s->cpu_total0 = 0;
	/* every thread's state from now on, for the wall-clock accounting */
	return bp_collect__track(s->collect);
}

void bp_session__expect_exec(struct bp_session *s, const char *path)
{
	int err;

	if (!s->unwind || !path || !*path)
		return;
	err = bp_unwind__preload(s->unwind, path);
	if (err)
		bp_dbg("no unwind table prepared for %s: %s", path, strerror(-err));
}

int bp_session__poll(struct bp_session *s, int timeout_ms)
{
	bool waiting_python = bp_python__waiting(s->python);
	bool waiting_r = bp_rlang__waiting(s->rlang);
	uint64_t now;
	int n, err;

	now = bp_now_ns();
	if (now < s->next_drain_ns) {
		uint64_t left_ms = (s->next_drain_ns - now) / 1000000 + 1;

		if ((uint64_t)timeout_ms > left_ms)
			timeout_ms = left_ms;
		if (s->nr_uw_pending)
			timeout_ms = unwind_wait_ms(s, timeout_ms);
		/* an interpreter being loaded is looked at again soon, not a drain later */
		if ((waiting_python || waiting_r) && timeout_ms > PY_LOADER_POLL_MS)
			timeout_ms = PY_LOADER_POLL_MS;
		n = poll_events(s, timeout_ms);
		if (n < 0) {
			bp_err("failed to read process events: %s", strerror(-n));
			return n;
		}
		now = bp_now_ns();
	}
	if (s->nr_uw_pending)
		unwind_refresh_pending(s);
	if (waiting_python)
		bp_python__tick(s->python);
	if (waiting_r)
		bp_rlang__tick(s->rlang);
	if (s->memprobe)
		bp_memprobe__tick(s->memprobe, now);
	if (now >= s->next_drain_ns) {
		err = drain(s, true);
		if (err)
			return err;
		s->next_drain_ns = now + (uint64_t)(s->opts.drain_interval_s * 1e9);
	}
	err = s->err;
	s->err = 0;
	return err;
}

int bp_session__tick(struct bp_session *s)
{
	int n, err;

	n = poll_events(s, 0);
	if (n < 0) {
		bp_err("failed to read process events: %s", strerror(-n));
		return n;
	}
	ensure_ksyms(s);
	if (s->nr_uw_pending)
		unwind_refresh_pending(s);
	/* an interpreter whose loader is at work is looked at again at each tick */
	if (bp_python__waiting(s->python))
		bp_python__tick(s->python);
	if (bp_rlang__waiting(s->rlang))
		bp_rlang__tick(s->rlang);
	if (s->memprobe)
		bp_memprobe__tick(s->memprobe, bp_now_ns());
	err = s->err;
	s->err = 0;
	return err;
}

bool bp_session__wants_ticks(struct bp_session *s)
{
	return (s->memprobe && bp_memprobe__busy(s->memprobe, bp_now_ns())) ||
	       bp_python__waiting(s->python) || bp_rlang__waiting(s->rlang);
}

int bp_session__events_fd(struct bp_session *s)
{
	return ring_buffer__epoll_fd(s->loader->rb);
}

uint32_t bp_session__known(const struct bp_session *s)
{
	return s->nr_meta - s->dead_meta;
}

uint64_t bp_session__exits_noticed(const struct bp_session *s)
{
	return s->exits_noticed;
}

void bp_session__facts(const struct bp_session *s, uint64_t *from_exec, uint64_t *from_proc,
			uint64_t *from_fork, uint64_t *from_gone)
{
	*from_exec = s->meta_from_exec;
	*from_proc = s->meta_proc_reads;
	*from_fork = s->meta_from_fork;
	*from_gone = s->meta_from_gone;
}

void bp_session__maps_sources(const struct bp_session *s, uint64_t *from_proc,
			      uint64_t *from_exit)
{
	*from_proc = s->maps_from_proc;
	*from_exit = s->maps_from_exit;
}

uint32_t bp_session__known_exited(const struct bp_session *s)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->nr_meta; i++)
		n += s->meta[i].pid && s->meta[i].exited;
	return n;
}

uint64_t bp_session__samples(struct bp_session *s)
{
	struct bp_stats st;

	if (bp_loader__stats(s->loader, &st))
		return 0;
	return st.v[BP_STAT_COUNTED];
}

int bp_session__cgroups(struct bp_session *s)
{
	return bp_cgwatch__update(s->cgw, s->prof, bp_now_ns());
}

/* memory and counter evidence into the processes, for the verdicts */
void bp_session__evidence(struct bp_session *s, struct bp_profile *p)
{
	uint64_t now = bp_now_ns();
	uint32_t i;

	for (i = 0; s->memprobe && i < p->nr_procs; i++) {
		struct bp_proc *proc = p->procs[i];
		struct bp_mem_evidence me;

		if (bp_memprobe__evidence(s->memprobe, proc->pid, now, &me) || !me.valid)
			continue;
		proc->mem_valid = true;
		proc->wss_probes = me.probes;
		proc->wss_max = me.wss_max;
		proc->wss_per_s = me.wss_max_per_s;
		proc->rss = me.rss;
		proc->minflt = me.minflt;
		proc->majflt = me.majflt;
		proc->fault_window_s = me.fault_window_s;
		if (me.traffic_probes) {
			proc->traffic_valid = true;
			proc->traffic_per_s = me.traffic_per_s;
			proc->traffic_per_cpu_s = me.traffic_per_cpu_s;
			proc->traffic_cpus = me.traffic_cpus;
			proc->traffic_floor = me.traffic_floor;
		}
	}
	for (i = 0; i < s->nr_pmu_pids; i++) {
		struct bp_proc *proc = bp_profile__proc(p, s->pmu_pids[i], false);
		struct bp_pmu_counts c;

		if (!proc || bp_pmu__read(s->pmu, s->pmu_pids[i], &c) || !c.valid)
			continue;
		proc->pmu_valid = true;
		proc->cycles = c.cycles;
		proc->instructions = c.instructions;
		proc->cache_misses = c.cache_misses;
		proc->pmu_running = c.enabled_ns ? (double)c.running_ns / c.enabled_ns : 0;
		proc->pmu_seconds = (p->end_ns - p->start_ns) / 1e9;
	}
}

/*
 * The profile just drained ends now: its share of the machine's busy time,
 * of the BPF counters and of the devices' busy time; the next one counts
 * from here.
 */
static int finish_profile(struct bp_session *s, struct bp_profile *p)
{
	struct bp_stats cur;
	uint64_t busy, total, cut, unseen = 0;
	int i, err = 0;

	/*
	 * At the cut, not now: the drain before named what it read (a file's
	 * symbols are read on its first frame), and a profile that ended only
	 * then would claim that time without its samples (a 3-s window of a
	 * spinner said 2.91 s and held 3.00 s of CPU).
	 */
	p->end_ns = bp_collect__cut_ns(s->collect);
	if (p->end_ns < p->start_ns)
		p->end_ns = bp_now_ns();
	if (!bp_cpu_times(NULL, &busy, &total)) {
		if (s->cpu_total0 && total > s->cpu_total0)
			p->machine_busy = (double)(busy - s->cpu_busy0) / (total - s->cpu_total0);
		s->cpu_busy0 = busy;
		s->cpu_total0 = total;
	}
	if (s->loader->blockio) {
		err = bp_blockio__finish(s->loader->blockio, p);
		if (!err)
			err = bp_blockio__rebase(s->loader->blockio);
		unseen = bp_blockio__unseen(s->loader->blockio);
	}
	if (!err)
		err = bp_cgwatch__update(s->cgw, p, p->end_ns);
	p->io_done_unseen = unseen - s->unseen0;
	s->unseen0 = unseen;
	if (!bp_loader__stats(s->loader, &cur)) {
		for (i = 0; i < BP_STAT__MAX; i++)
			p->stats.v[i] = cur.v[i] - s->stats0.v[i];
		s->stats0 = cur;
	}
	cut = bp_collect__stats(s->collect)->user_stacks_cut;
	p->user_stacks_cut = cut - s->cut0;
	s->cut0 = cut;
	if (s->unwind) {
		struct bp_unwind_stats us;

		bp_unwind__stats(s->unwind, &us);
		p->uw_tables_over_budget = us.over_budget - s->uw_over0;
		s->uw_over0 = us.over_budget;
		p->unwind.enabled = true;
		p->unwind.budget_bytes = us.budget_bytes;
		p->unwind.used_bytes = us.used_peak_bytes;
		p->unwind.procs_bytes = us.procs_peak_bytes;
		p->unwind.files = us.files;
		p->unwind.rows = us.rows;
	}
	cut = bp_python__stats(s->python)->frames_unread;
	p->py_code_unread = cut - s->py_unread0;
	s->py_unread0 = cut;
	return err;
}

/*
 * Requests that ended unheard of count in the window that ends now. Not
 * fatal: without the sweep they count when their request structure is
 * reused, as before.
 */
static void sweep_io(struct bp_session *s)
{
	int err;

	if (!s->loader->blockio)
		return;
	err = bp_blockio__sweep(s->loader->blockio);
	if (err)
		bp_dbg("block IO sweep failed: %s", strerror(-err));
}

/*
 * After the last drain of a profile: the events of processes whose samples
 * that drain found, and their facts. A process that exec'd after the events
 * were last read and was sampled before the drain has its exec event in the
 * ring still; without it, a short-lived one is gone before /proc is read,
 * and would close the window without a command line, user or cgroup.
 */
static void settle_facts(struct bp_session *s)
{
	uint32_t i;

	poll_events(s, 0);
	for (i = 0; i < s->prof->nr_procs; i++)
		fill_meta(s, s->prof->procs[i]);
}

int bp_session__stop(struct bp_session *s)
{
	struct bp_mapfiles_stats mf;
	int err;

	if (!s->started || s->stopped)
		return 0;
	s->stopped = true;
	/* events first: exits that happened before the end belong to the window */
	poll_events(s, 0);
	sweep_io(s);
	err = drain(s, true);
	if (!err) {
		settle_facts(s);
		err = finish_profile(s, s->prof);
	}
	bp_session__evidence(s, s->prof);
	bp_loader__log_run_stats(s->loader);
	bp_mapfiles__stats(s->mapfiles, &mf);
	bp_dbg("process events: %" PRIu64 "; facts from exec %" PRIu64 ", from /proc %" PRIu64
	       ", from the parent %" PRIu64 ", from a gone process's first sample %" PRIu64
	       "; executables from BPF %" PRIu64 ", by stat %" PRIu64
	       "; maps from /proc %" PRIu64 ", from the exit's walk %" PRIu64
	       " (paths learnt %" PRIu64 ", files unnamed %" PRIu64 ")"
	       "; first samples of processes gone %" PRIu64 " (%" PRIu64 " with their exit in the"
	       " same batch)"
	       "; unwind rewrites dropped at exit %"
	       PRIu64 "; exec drains %" PRIu64 ", skipped %" PRIu64 ", images kept %" PRIu64,
	       s->events, s->meta_from_exec, s->meta_proc_reads, s->meta_from_fork,
	       s->meta_from_gone, s->exe_from_bpf, bp_procmaps__exe_stats(), s->maps_from_proc,
	       s->maps_from_exit,
	       mf.learnt, mf.unnamed, s->first_gone, s->first_gone_batch,
	       s->uw_cancelled,
	       s->exec_drains, s->exec_drains_skipped, s->exec_images_kept);
	return err;
}

/*
 * A drain because some process may be busy tells the memory probe; not
 * needed when the samples are all of processes known busy but too small
 * to probe (a CPU hog of a few MiB: a drain every 2 s for nothing,
 * ~1 ms each under the bench's mixed load).
 */
enum bp_drain_need bp_session__due(struct bp_session *s, bool forced)
{
	enum bp_drain_need need = bp_collect__due(s->collect, forced);
	const struct bp_drainpol *pol = bp_collect__policy(s->collect);

	if (need == BP_DRAIN_LIGHT && pol->why == BP_DRAIN_WHY_BUSY && s->opts.hz > 0 &&
	    bp_memprobe__explains(s->memprobe, pol->busy_samples / (double)s->opts.hz,
				  pol->busy_s, bp_now_ns())) {
		s->busy_explained++;
		return BP_DRAIN_NONE;
	}
	if (need == BP_DRAIN_LIGHT && pol->why == BP_DRAIN_WHY_ROWS)
		bp_dbg("drain: the %s maps hold a quarter of their rows",
		       bp_drainpol__map_name(pol->why_map));
	return need;
}

int bp_session__drain(struct bp_session *s, bool full)
{
	uint32_t i;
	int err;

	if (full)
		return drain(s, true);
	/* the memory probe hears of this drain's samples, as of a full one's */
	for (i = 0; i < s->prof->nr_procs; i++)
		s->prof->procs[i]->last_drain_samples = 0;
	err = drain(s, false);
	if (!err)
		feed_memprobe(s, bp_now_ns());
	return err;
}

int bp_session__rotate(struct bp_session *s, struct bp_profile **closed)
{
	struct bp_profile *next;
	int err;

	*closed = NULL;
	poll_events(s, 0);
	sweep_io(s);
	err = drain(s, true);
	if (!err) {
		settle_facts(s);
		err = finish_profile(s, s->prof);
	}
	if (err)
		return err;
	next = bp_profile__new_like(s->prof, s->prof->end_ns);
	if (!next)
		return -ENOMEM;
	*closed = s->prof;
	s->prof = next;
	bp_collect__set_profile(s->collect, next);
	meta_compact(s);
	/* the drain that just ran counts for the closed profile */
	s->next_drain_ns = bp_now_ns() + (uint64_t)(s->opts.drain_interval_s * 1e9);
	return 0;
}

void bp_session__free(struct bp_session *s)
{
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_meta; i++) {
		free(s->meta[i].cmdline);
		ids_free(&s->meta[i]);
	}
	free(s->meta);
	bp_cgwatch__free(s->cgw);
	bp_htab_free(&s->meta_h);
	bp_memprobe__free(s->memprobe);
	bp_pmu__free(s->pmu);
	free(s->pmu_pids);
	bp_collect__free(s->collect);
	bp_unwind__free(s->unwind);
	free(s->uw_pending);
	bp_loader__free(s->loader);
	bp_python__free(s->python);
	bp_rlang__free(s->rlang);
	bp_mapfiles__free(s->mapfiles);
	free(s->first_q);
	bp_pidset__free(&s->live);
	bp_syms__free(s->syms);
	bp_profile__free(s->prof);
	free(s);
}
