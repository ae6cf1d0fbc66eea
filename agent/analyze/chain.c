// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/chain.h"
#include "analyze/verdict.h"
#include "model/waits.h"

/* a pair alternates at least this often before it is a chain (docs/classification.md) */
#define CHAIN_MIN_ROUND_TRIPS	100
/*
 * the chain's verdict stands for the client's when its waits cover this
 * much of its time: half, since pgbench over loopback TCP waited 69-75% of
 * its time on postgres from run to run, across 0.7
 */
#define CHAIN_COVER		0.5
/*
 * One request at a time: the server's own time serving a round trip (its
 * CPU, block IO and sleeps) fits in the client's wait for it. Past this
 * many times the client's waits, requests overlapped (a client with
 * several in flight: an event loop, a pool), and a chain of round trips
 * would split each one wrongly (docs/classification.md).
 */
#define CHAIN_OVERLAP		1.5
/* an added peer is judged when the command waited on it this long: of the run, or at all */
#define PEER_SHARE		0.05
#define PEER_MIN_S		0.05

/* kernel functions every fsync, fdatasync and O_SYNC/O_DSYNC write passes through */
static const char *const flush_funcs[] = { "vfs_fsync_range", "do_fsync" };

static int proc_index(const struct bp_summary *s, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < s->nr_procs; i++)
		if (s->procs[i].proc && s->procs[i].proc->pid == pid)
			return i;
	return -1;
}

bool bp_proc_is_peer(const struct bp_profile *p, const struct bp_summary *s,
		     const struct bp_proc *proc)
{
	uint32_t pid = proc->pid, steps, k;
	int i;

	if (p->system_wide || !p->nr_runs)
		return false;
	for (steps = 0; steps < 64 && pid; steps++) {
		for (k = 0; k < p->nr_runs; k++)
			if (p->runs[k].pid == pid)
				return false;
		i = proc_index(s, pid);
		if (i < 0 || s->procs[i].proc->ppid == pid)
			break;
		pid = s->procs[i].proc->ppid;
	}
	return true;
}

/*
 * A wait one process of a chain ended for the other: on a pipe, a Unix
 * socket or TCP, for input (or a poll's, which has no direction). In a
 * request/response chain both sides wait for what the other sends; a
 * pipeline's writer waits for room for its output instead, and is no chain.
 */
static bool handoff_row(const struct bp_wake_row *r)
{
	if (!r->waker_pid || r->waker_pid == r->pid || r->dir == BP_DIR_OUT)
		return false;
	if (r->state == BP_TS_PIPE)
		return r->ctx == BP_WCTX_TASK;
	if (r->state == BP_TS_NET)
		return r->ctx == BP_WCTX_TASK || r->ctx == BP_WCTX_SOFTIRQ;
	return false;
}

/* the handoff rows summed by (waited, waker), sorted: what ended_by() looks in */
struct handoffs {
	struct handoff {
		uint32_t pid, waker;
		uint64_t ns, count;
	} *v;
	uint32_t nr;
};

static int cmp_handoff(const void *a, const void *b)
{
	const struct handoff *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->waker < y->waker ? -1 : x->waker > y->waker;
}

/*
 * Every pair looked up among every row was procs^2 x rows: with 20 new
 * processes a second, a window close spent 16% of the agent's CPU here.
 */
static int handoffs_build(const struct bp_profile *p, struct handoffs *h)
{
	uint32_t i, n = 0;

	h->nr = 0;
	h->v = calloc(p->nr_wake_rows + 1, sizeof(*h->v));
	if (!h->v)
		return -ENOMEM;
	for (i = 0; i < p->nr_wake_rows; i++) {
		const struct bp_wake_row *r = &p->wake_rows[i];

		if (handoff_row(r))
			h->v[n++] = (struct handoff){ r->pid, r->waker_pid, r->ns, r->count };
	}
	qsort(h->v, n, sizeof(*h->v), cmp_handoff);
	for (i = 0; i < n; i++) {
		struct handoff *last = h->nr ? &h->v[h->nr - 1] : NULL;

		if (last && last->pid == h->v[i].pid && last->waker == h->v[i].waker) {
			last->ns += h->v[i].ns;
			last->count += h->v[i].count;
		} else {
			h->v[h->nr++] = h->v[i];
		}
	}
	return 0;
}

/* the first pair of pid at or after waker's place; h->nr when none */
static uint32_t handoff_at(const struct handoffs *h, uint32_t pid, uint32_t waker)
{
	struct handoff k = { pid, waker, 0, 0 };
	uint32_t lo = 0, hi = h->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cmp_handoff(&h->v[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* pid had waits some other process ended */
static bool handoffs_of(const struct handoffs *h, uint32_t pid)
{
	uint32_t at = handoff_at(h, pid, 0);

	return at < h->nr && h->v[at].pid == pid;
}

/* the waits of pid that waker ended: their time and count */
static void ended_by(const struct handoffs *h, uint32_t pid, uint32_t waker, double *s,
		     uint64_t *n)
{
	uint32_t at = handoff_at(h, pid, waker);

	*s = 0;
	*n = 0;
	if (at < h->nr && h->v[at].pid == pid && h->v[at].waker == waker) {
		*s = h->v[at].ns / 1e9;
		*n = h->v[at].count;
	}
}

static bool in_flush(const struct bp_profile *p, uint32_t stack)
{
	uint64_t off;
	uint32_t len, i, j;

	if (stack >= p->nr_stacks)
		return false;
	off = p->stack_off[stack];
	len = p->stack_len[stack];
	for (i = 0; i < len; i++) {
		const struct bp_frame *f = &p->frames[p->stack_pool[off + i]];

		if (!f->kernel || !f->name)
			continue;
		for (j = 0; j < sizeof(flush_funcs) / sizeof(flush_funcs[0]); j++)
			if (!strcmp(f->name, flush_funcs[j]))
				return true;
	}
	return false;
}

/*
 * The server's time inside flushes: on-CPU samples and off-CPU time (block
 * IO, the run queue, other waits) under a flush's kernel stack.
 */
static void flush_time(const struct bp_profile *p, uint32_t pid, struct bp_chain *c,
		       double *flush_io, double *flush_rq)
{
	uint64_t on_n = 0, on_ns = 0;
	double off = 0;
	uint32_t i;

	*flush_io = *flush_rq = 0;
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *sm = &p->samples[i];

		if (sm->pid != pid || !in_flush(p, sm->stack))
			continue;
		if (sm->kind == BP_KIND_ONCPU) {
			on_n += sm->count;
			on_ns += sm->ns;
			continue;
		}
		if (sm->kind == BP_KIND_SLEEP || sm->kind == BP_KIND_PIPE || sm->kind == BP_KIND_NET)
			continue;
		off += sm->ns / 1e9;
		if (sm->kind == BP_KIND_IO)
			*flush_io += sm->ns / 1e9;
		else if (sm->kind == BP_KIND_RUNQUEUE)
			*flush_rq += sm->ns / 1e9;
	}
	c->flush_cpu_s = bp_oncpu_seconds(p, on_n, on_ns);
	c->flush_s = off + c->flush_cpu_s;
	for (i = 0; i < p->nr_io_rows; i++)
		if (p->io_rows[i].pid == pid && p->io_rows[i].op == BP_IO_OTHER &&
		    !p->io_rows[i].kthread)
			c->flushes += p->io_rows[i].st.ops;
}

static double handoff_part(const struct bp_proc_summary *ps, uint64_t n)
{
	double f;

	if (!ps->wakeups)
		return 0;
	f = (double)n / ps->wakeups;
	return ps->wake_lat_s * (f < 1 ? f : 1);
}

static double nonneg(double x)
{
	return x > 0 ? x : 0;
}

static void split(const struct bp_profile *p, const struct bp_summary *s, struct bp_chain *c)
{
	const struct bp_proc_summary *cl = &s->procs[c->client], *sv = &s->procs[c->server];
	double flush_io, flush_rq, n = c->round_trips, ns;

	flush_time(p, sv->proc->pid, c, &flush_io, &flush_rq);
	c->client_cpu_s = cl->on_cpu_s;
	c->client_handoff_s = handoff_part(cl, c->client_waits);
	/*
	 * The server's waits for a CPU after its flushes' IO completed are
	 * the flushes' (booked there), not handoffs from the client
	 */
	c->server_handoff_s = handoff_part(sv, c->server_wakeups);
	if (c->server_handoff_s > sv->wake_lat_s - flush_rq)
		c->server_handoff_s = nonneg(sv->wake_lat_s - flush_rq);
	c->server_cpu_s = nonneg(sv->on_cpu_s - c->flush_cpu_s);
	c->server_io_s = nonneg(sv->off_s[BP_KIND_IO] - flush_io);
	c->server_other_s = sv->off_s[BP_KIND_LOCK] + sv->off_s[BP_KIND_OTHER] +
			    nonneg(sv->off_s[BP_KIND_RUNQUEUE] - c->server_handoff_s - flush_rq);
	/*
	 * The server's parts per round trip it served while recorded (from its
	 * first answer on, when it was added), the client's per its own
	 */
	ns = n * (sv->wall_s < cl->wall_s && cl->wall_s > 0 ? sv->wall_s / cl->wall_s : 1);
	if (ns < 1)
		ns = 1;
	c->rt_ms = c->wall_s / n * 1e3;
	c->client_ms = c->client_cpu_s / n * 1e3;
	c->server_ms = c->server_cpu_s / ns * 1e3;
	c->flush_ms = c->flush_s / ns * 1e3;
	c->server_io_ms = c->server_io_s / ns * 1e3;
	c->handoff_ms = c->client_handoff_s / n * 1e3 + c->server_handoff_s / ns * 1e3;
	c->other_ms = nonneg(c->rt_ms - c->client_ms - c->server_ms - c->flush_ms -
			     c->server_io_ms - c->handoff_ms);
}

/*
 * The server served more than the client waited for it: requests were in
 * flight together. An epoll client with 8 in flight against a server that
 * sleeps 20 ms per request: 8 s of the server's sleeps in 1.2 s of the
 * client's waits, judged as 349 round trips of 3.7 ms once CPU contention
 * spread the answers over more than 100 of the client's wakeups.
 */
static bool overlapped(const struct bp_proc_summary *sv, double client_wait_s)
{
	double serving = sv->on_cpu_s + sv->off_s[BP_KIND_IO] + sv->off_s[BP_KIND_SLEEP];

	return serving > CHAIN_OVERLAP * client_wait_s;
}

static double pct(double f)
{
	return f * 100;
}

#define LINES	8

/* the chain judged as one: its round trips, what each costs, and the levers */
static void judge(const struct bp_summary *s, struct bp_chain *c)
{
	const struct bp_proc *cl = s->procs[c->client].proc, *sv = s->procs[c->server].proc;
	char ev[LINES][BP_VERDICT_LEN], lv[LINES][BP_VERDICT_LEN], fl[64] = "";
	struct bp_verdict v = {};
	double cpu = c->client_ms + c->server_ms, io = c->flush_ms + c->server_io_ms, big;
	double idle = 1 - s->busy_frac, used = 0;
	const char *what;
	uint32_t ne = 0, nl = 0, i;

	for (i = 0; i < s->nr_procs; i++)
		if (i == c->client || i == c->server)
			used += s->procs[i].on_cpu_s;
	used /= c->wall_s > 0 ? c->wall_s : 1;
	big = cpu;
	what = "the two sides' work";
	v.cls = BP_CLASS_CPU;
	if (io > big) {
		big = io;
		what = "the server's flushes and block IO";
		v.cls = BP_CLASS_IO;
	}
	if (c->handoff_ms > big) {
		big = c->handoff_ms;
		/* on busy CPUs the wait after each wakeup is contention (classify.c) */
		if (s->busy_frac >= bp_default_thresholds.starved_busy) {
			what = "waiting for a CPU after each handoff, behind other work";
			v.cls = BP_CLASS_STARVED;
		} else {
			what = "the handoffs (wake-up latency)";
			v.cls = BP_CLASS_MIXED;
		}
	}
	if (c->other_ms > big) {
		big = c->other_ms;
		what = "the server's other waits";
		v.cls = BP_CLASS_MIXED;
	}
	v.conf = c->cover >= CHAIN_COVER && big >= 0.5 * c->rt_ms ? BP_CONF_HIGH : BP_CONF_MEDIUM;
	v.second = BP_CLASS_UNKNOWN;
	v.wait_class = BP_CLASS_UNKNOWN;
	v.parallelism = used;
	if (c->flushes)
		snprintf(fl, sizeof(fl), ", %" PRIu64 " cache flushes", c->flushes);
	snprintf(ev[ne++], BP_VERDICT_LEN, "a chain of %" PRIu64 " round trips with %s (pid %u), "
		 "%.0f per second, %.3f ms each: %.0f%% of %s's time waiting on it",
		 c->round_trips, sv->comm, sv->pid, c->rate, c->rt_ms, pct(c->cover), cl->comm);
	snprintf(ev[ne++], BP_VERDICT_LEN, "per round trip: %s's work %.3f ms, %s's work %.3f ms, "
		 "its flushes %.3f ms (CPU, run queue and IO inside fsync/fdatasync%s), other block "
		 "IO %.3f ms, handoffs %.3f ms, other waits %.3f ms", cl->comm, c->client_ms,
		 sv->comm, c->server_ms, c->flush_ms, fl, c->server_io_ms, c->handoff_ms,
		 c->other_ms);
	snprintf(ev[ne++], BP_VERDICT_LEN, "the largest part is %s: %.0f%% of each round trip",
		 what, pct(c->rt_ms > 0 ? big / c->rt_ms : 0));
	if (c->handoff_ms > 0 && s->busy_frac < bp_default_thresholds.starved_busy)
		snprintf(ev[ne++], BP_VERDICT_LEN, "handoffs are wake-up latency, not contention: "
			 "%.2f s in all (%s %.2f s, %s %.2f s) while CPUs were %.0f%% busy",
			 c->client_handoff_s + c->server_handoff_s, cl->comm, c->client_handoff_s,
			 sv->comm, c->server_handoff_s, pct(s->busy_frac));
	else if (c->handoff_ms > 0)
		snprintf(ev[ne++], BP_VERDICT_LEN, "handoffs are waits for a CPU after each wakeup, "
			 "%.2f s in all (%s %.2f s, %s %.2f s), while CPUs were %.0f%% busy: contention "
			 "with other work", c->client_handoff_s + c->server_handoff_s, cl->comm,
			 c->client_handoff_s, sv->comm, c->server_handoff_s, pct(s->busy_frac));
	snprintf(lv[nl++], BP_VERDICT_LEN, "Fewer round trips: each costs %.3f ms, of which %.3f ms "
		 "are handoffs and %s's work. Batch statements (multi-row writes, bulk commands), "
		 "pipeline them (send without waiting for each answer), or make each transaction "
		 "one server-side call (a stored procedure)", c->rt_ms, c->handoff_ms + c->client_ms,
		 cl->comm);
	snprintf(lv[nl++], BP_VERDICT_LEN, "Prepared statements or cached plans cut %s's work per "
		 "request (%.3f ms), not the round trips", sv->comm, c->server_ms);
	/* a quarter of the machine idle: room for another client on 2 CPUs and up */
	if (idle >= 0.25)
		snprintf(lv[nl++], BP_VERDICT_LEN, "More concurrency: one client kept the two sides "
			 "busy %.2f CPUs while CPUs were %.0f%% idle; run more clients or "
			 "connections to overlap the round trips", used, pct(idle));
	if (v.cls == BP_CLASS_STARVED)
		snprintf(lv[nl++], BP_VERDICT_LEN, "The CPUs were %.0f%% busy with other work: on a "
			 "machine with free CPUs each handoff costs a wake-up, not a wait behind "
			 "others", pct(s->busy_frac));
	if (c->flush_ms >= 0.2 * c->rt_ms)
		snprintf(lv[nl++], BP_VERDICT_LEN, "The flushes are on every round trip's path: "
			 "concurrent clients share them (group commit); an asynchronous commit "
			 "returns before the flush but can lose the latest writes in a crash");
	for (i = 0; i < ne; i++)
		v.evidence[i] = ev[i];
	v.nr_evidence = ne;
	for (i = 0; i < nl; i++)
		v.levers[i] = lv[i];
	v.nr_levers = nl;
	v.wait_share = c->cover;
	if (bp_verdict_lead(&v, NULL, &c->verdict))
		c->verdict.nr_evidence = c->verdict.nr_levers = 0;
}

static int cmp_chain(const void *a, const void *b)
{
	const struct bp_chain *x = a, *y = b;

	return x->round_trips < y->round_trips ? 1 : x->round_trips > y->round_trips ? -1 : 0;
}

static int cmp_added(const void *a, const void *b)
{
	const struct bp_added_peer *x = a, *y = b;

	return x->wait_s < y->wait_s ? 1 : x->wait_s > y->wait_s ? -1 : 0;
}

/* the peers the recording added, with what the command waited on each */
static int find_added(const struct handoffs *h, const struct bp_summary *s, bool *peer,
		      struct bp_chains *out)
{
	uint32_t i, j;

	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc *proc = s->procs[i].proc;
		struct bp_added_peer *a, *n;
		double best = -1;

		if (!peer[i])
			continue;
		n = realloc(out->added, (out->nr_added + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		out->added = n;
		a = &out->added[out->nr_added++];
		memset(a, 0, sizeof(*a));
		a->pid = proc->pid;
		memcpy(a->comm, proc->comm, sizeof(a->comm));
		for (j = 0; j < s->nr_procs; j++) {
			double w;
			uint64_t c;

			if (peer[j] || !s->procs[j].proc)
				continue;
			ended_by(h, s->procs[j].proc->pid, proc->pid, &w, &c);
			a->wait_s += w;
			a->wakeups += c;
			if (c && w > best) {
				best = w;
				a->by_pid = s->procs[j].proc->pid;
				memcpy(a->by_comm, s->procs[j].proc->comm, sizeof(a->by_comm));
			}
		}
		a->judged = a->wait_s >= PEER_MIN_S || a->wait_s >= PEER_SHARE * s->duration_s;
	}
	if (out->nr_added)
		qsort(out->added, out->nr_added, sizeof(*out->added), cmp_added);
	return 0;
}

/* the client's verdict becomes the chain's when the chain is most of its time */
static int give_client(struct bp_summary *s, struct bp_chain *c)
{
	struct bp_proc_summary *ps = &s->procs[c->client];
	struct bp_verdict nv;
	char lead[BP_VERDICT_LEN];

	if (!ps->verdict || !c->verdict.nr_evidence)
		return 0;
	/*
	 * Nearly all of each round trip is the server waiting on something else (a
	 * timer, a service behind it): the client's own verdict, latency-bound
	 * on the network or blocked on its peer, says that with its levers;
	 * the chain's lines stay in the report.
	 */
	if (c->rt_ms > 0 && c->other_ms >= 0.8 * c->rt_ms)
		return 0;
	/* blocked on this server: the chain says what that wait is made of */
	if (c->cover < CHAIN_COVER && !(ps->verdict->cls == BP_CLASS_PEER &&
					 ps->verdict->peer_pid == s->procs[c->server].proc->pid))
		return 0;
	snprintf(lead, sizeof(lead), "judged with %s (pid %u) as one chain of round trips",
		 s->procs[c->server].proc->comm, s->procs[c->server].proc->pid);
	if (bp_verdict_lead(&c->verdict, lead, &nv))
		return -ENOMEM;
	if (ps->verdict->cls < BP_CLASS__MAX && s->class_count[ps->verdict->cls])
		s->class_count[ps->verdict->cls]--;
	bp_verdict_free(ps->verdict);
	*ps->verdict = nv;
	s->class_count[nv.cls]++;
	return 0;
}

int bp_chains_judge(const struct bp_profile *p, struct bp_summary *s)
{
	struct handoffs h = {};
	struct bp_chains *out;
	bool *peer = NULL;
	uint32_t i, j;
	int err = -ENOMEM;

	if (s->chains) {
		bp_chains_free(s->chains);
		free(s->chains);
	}
	s->chains = out = calloc(1, sizeof(*out));
	peer = calloc(s->nr_procs + 1, sizeof(*peer));
	if (!out || !peer || handoffs_build(p, &h))
		goto done;
	for (i = 0; i < s->nr_procs; i++)
		peer[i] = s->procs[i].proc && bp_proc_is_peer(p, s, s->procs[i].proc);
	if (find_added(&h, s, peer, out))
		goto done;
	/* pairs that hand work back and forth, the client the one that waits more of its time */
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *a = &s->procs[i];

		if (!a->proc || a->wall_s <= 0 || peer[i] || !handoffs_of(&h, a->proc->pid))
			continue;
		for (j = 0; j < s->nr_procs; j++) {
			const struct bp_proc_summary *b = &s->procs[j];
			struct bp_chain *c, *n;
			double wa, wb;
			uint64_t na, nb;

			if (i == j || !b->proc || b->wall_s <= 0)
				continue;
			ended_by(&h, a->proc->pid, b->proc->pid, &wa, &na);
			if (na < CHAIN_MIN_ROUND_TRIPS)
				continue;
			ended_by(&h, b->proc->pid, a->proc->pid, &wb, &nb);
			/* each pair once: from the side whose time the other's answers fill more */
			if (nb >= CHAIN_MIN_ROUND_TRIPS && !peer[j] &&
			    (wb / b->wall_s > wa / a->wall_s ||
			     (wb / b->wall_s == wa / a->wall_s && j < i)))
				continue;
			/* the server answers the client's requests: a system-wide server must too */
			if (!peer[j] && nb < CHAIN_MIN_ROUND_TRIPS)
				continue;
			if (overlapped(b, wa))
				continue;
			n = realloc(out->c, (out->nr + 1) * sizeof(*n));
			if (!n)
				goto done;
			out->c = n;
			c = &out->c[out->nr++];
			memset(c, 0, sizeof(*c));
			c->client = i;
			c->server = j;
			c->added = peer[j];
			/*
			 * A round trip whose answer (or request) was there before
			 * its side waited ends no wait: each side's count falls
			 * short, the larger one least
			 */
			c->round_trips = na > nb ? na : nb;
			c->client_waits = na;
			c->server_wakeups = nb;
			c->wait_s = wa;
			c->wall_s = a->wall_s;
			c->cover = wa / a->wall_s > 1 ? 1 : wa / a->wall_s;
			c->rate = c->round_trips / a->wall_s;
			split(p, s, c);
		}
	}
	if (out->nr)
		qsort(out->c, out->nr, sizeof(*out->c), cmp_chain);
	for (i = 0; i < out->nr; i++) {
		judge(s, &out->c[i]);
		if (give_client(s, &out->c[i]))
			goto done;
	}
	err = 0;
done:
	free(h.v);
	free(peer);
	return err;
}

void bp_chains_free(struct bp_chains *c)
{
	uint32_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr; i++)
		bp_verdict_free(&c->c[i].verdict);
	free(c->c);
	free(c->added);
	memset(c, 0, sizeof(*c));
}

const struct bp_chain *bp_chain_of_client(const struct bp_summary *s, uint32_t i)
{
	uint32_t k;

	for (k = 0; s->chains && k < s->chains->nr; k++)
		if (s->chains->c[k].client == i)
			return &s->chains->c[k];
	return NULL;
}
