// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/pipeline.h"
#include "analyze/chain.h"
#include "model/hist.h"
#include "model/waits.h"

/* the summary index of each row's pid (procs are few next to rows: one pass over them) */
struct pidmap {
	uint32_t *pid, *idx;
	uint32_t n;
};

static int cmp_u32pair(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int pidmap_build(const struct bp_summary *s, struct pidmap *m)
{
	uint32_t *pairs = malloc((s->nr_procs + 1) * 2 * sizeof(*pairs)), i, n = 0;

	if (!pairs)
		return -ENOMEM;
	for (i = 0; i < s->nr_procs; i++) {
		if (!s->procs[i].proc)
			continue;
		pairs[2 * n] = s->procs[i].proc->pid;
		pairs[2 * n + 1] = i;
		n++;
	}
	qsort(pairs, n, 2 * sizeof(*pairs), cmp_u32pair);
	m->pid = pairs;
	m->n = n;
	return 0;
}

static int pidmap_find(const struct pidmap *m, uint32_t pid)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->pid[2 * mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->pid[2 * lo] == pid ? (int)m->pid[2 * lo + 1] : -1;
}

/*
 * Wakers by process: the threads of one waker (a server's connection
 * threads) together, per class, direction and context; tid is the thread
 * that ended the most, threads how many did.
 */
static int add_waker(struct bp_proc_waits *w, struct bp_waker **all, uint32_t *nr,
		     uint32_t *cap, const struct bp_wake_row *r)
{
	struct bp_waker *k;
	uint32_t i;

	(void)w;
	for (i = 0; i < *nr; i++) {
		k = &(*all)[i];
		if (k->pid == r->waker_pid && k->ctx == r->ctx && k->state == r->state &&
		    k->dir == r->dir && (r->waker_pid || k->tid == r->waker_tid))
			break;
	}
	if (i == *nr) {
		if (*nr == *cap) {
			uint32_t nc = *cap ? *cap * 2 : 16;
			struct bp_waker *n = realloc(*all, nc * sizeof(*n));

			if (!n)
				return -ENOMEM;
			*all = n;
			*cap = nc;
		}
		k = &(*all)[(*nr)++];
		memset(k, 0, sizeof(*k));
		k->pid = r->waker_pid;
		k->ctx = r->ctx;
		k->state = r->state;
		k->dir = r->dir;
		k->tid = r->waker_tid;
		memcpy(k->comm, r->comm, sizeof(k->comm));
		k->top_s = r->ns / 1e9;
	} else if (r->ns / 1e9 > k->top_s) {
		k->tid = r->waker_tid;
		k->top_s = r->ns / 1e9;
	}
	k->s += r->ns / 1e9;
	k->count += r->count;
	k->threads++;
	return 0;
}

static int cmp_waker(const void *a, const void *b)
{
	const struct bp_waker *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void add_peer(struct bp_proc_waits *w, const struct bp_net_row *r)
{
	double s = r->wait_ns / 1e9;
	struct bp_peer *pe;
	uint32_t i, j;

	w->peers_total++;
	for (i = 0; i < w->nr_peers; i++)
		if (s > w->peers[i].wait_s)
			break;
	if (i >= BP_MAX_PEERS)
		return;
	j = w->nr_peers < BP_MAX_PEERS ? w->nr_peers++ : BP_MAX_PEERS - 1;
	memmove(&w->peers[i + 1], &w->peers[i], (j - i) * sizeof(w->peers[0]));
	pe = &w->peers[i];
	memset(pe, 0, sizeof(*pe));
	bp_net_peer(r, pe->name, sizeof(pe->name));
	pe->side = r->side;
	pe->proto = r->proto;
	pe->wait_s = s;
	pe->waits = r->waits;
	pe->p50_ms = bp_fhist_quantile(r->hist, 0.5) / 1e3;
	pe->p99_ms = bp_fhist_quantile(r->hist, 0.99) / 1e3;
	pe->rx_bytes = r->rx_bytes;
	pe->tx_bytes = r->tx_bytes;
}

static bool work_side(uint8_t side)
{
	return side == BP_SIDE_CLIENT || side == BP_SIDE_UNKNOWN;
}

static int cmp_row_pid(const void *a, const void *b, void *ctx)
{
	const struct bp_wake_row *r = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (r[x].pid != r[y].pid)
		return r[x].pid < r[y].pid ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------ pipelines */

struct edge {
	uint32_t from, to;	/* summary indices: data flows from -> to */
	double s;		/* the waits it explains */
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? 1 : -1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

const char *bp_stage_name(const struct bp_proc *proc, char *buf, size_t len)
{
	const char *c = proc->cmdline, *base, *end, *w;
	size_t n;

	if (!c || !*c) {
		snprintf(buf, len, "%s", proc->comm[0] ? proc->comm : "?");
		return buf;
	}
	/* the program's base name, then its arguments while they are short */
	end = strchr(c, ' ');
	if (!end)
		end = c + strlen(c);
	for (base = w = c; w < end; w++)
		if (*w == '/')
			base = w + 1;
	n = end - base;
	while (*end == ' ') {
		const char *next = strchr(end + 1, ' ');

		if (!next)
			next = end + strlen(end);
		if ((size_t)(next - base) > 20)
			break;
		n = next - base;
		end = next;
	}
	snprintf(buf, len, "%.*s%s", (int)(n < 48 ? n : 48), base, *end ? " ..." : "");
	return buf;
}

void bp_pipeline_lead(const struct bp_summary *s, const struct bp_pipeline *pl, char *buf,
		      size_t len)
{
	const struct bp_proc_summary *ps = &s->procs[pl->stages[pl->bottleneck].proc];
	char name[64];

	bp_stage_name(ps->proc, name, sizeof(name));
	snprintf(buf, len, "%s: bound by %s (pid %u, %s)", pl->name, name, ps->proc->pid,
		 ps->verdict ? bp_class_name(ps->verdict->cls) : "no verdict");
}

static void pipeline_name(const struct bp_summary *s, struct bp_pipeline *pl)
{
	char stage[64];
	size_t off = 0;
	uint32_t i;

	pl->name[0] = '\0';
	for (i = 0; i < pl->nr_stages && off < sizeof(pl->name); i++) {
		bp_stage_name(s->procs[pl->stages[i].proc].proc, stage, sizeof(stage));
		off += snprintf(pl->name + off, sizeof(pl->name) - off, "%s%s", i ? " → " : "",
				stage);
	}
}

/*
 * The bottleneck is the stage that waited least on its neighbours: of the
 * time it lived, the most not spent in pipe waits. Upstream of it stages
 * wait for room for their output, downstream for their input; a stage that
 * finished early (a fast producer) has little time either way.
 */
static uint32_t bottleneck(const struct bp_summary *s, const struct bp_pipeline *pl)
{
	uint32_t i, best = 0;
	double bv = -1;

	for (i = 0; i < pl->nr_stages; i++) {
		const struct bp_proc_summary *ps = &s->procs[pl->stages[i].proc];
		double wall = ps->have_timeline ? ps->tl_idle_s : ps->wall_s, v;
		int k;

		if (ps->have_timeline)
			for (k = 0; k < BP_TS__MAX; k++)
				wall += ps->tl_s[k];
		v = wall - (ps->have_timeline ? ps->tl_s[BP_TS_PIPE] :
						 ps->pipe_in_s + ps->pipe_out_s);
		if (v > bv + 1e-9 || (v > bv - 1e-9 && ps->on_cpu_s > s->procs[pl->stages[best].proc].on_cpu_s)) {
			bv = v;
			best = i;
		}
	}
	return best;
}

/*
 * A pipeline joins siblings that run at the same time. A child writing into
 * a pipe its own parent drains before it waits for the child (a command
 * substitution, `$(seq 60)`; popen()) feeds its parent, and is no stage.
 */
static bool parent_child(const struct bp_proc_summary *a, const struct bp_proc_summary *b)
{
	return a->proc->ppid == b->proc->pid || b->proc->ppid == a->proc->pid;
}

static int find_pipelines(const struct bp_profile *p, const struct bp_summary *s,
			  const struct pidmap *m, struct bp_pipelines *out)
{
	struct edge *e = NULL;
	int32_t *down = NULL, *up = NULL;
	uint32_t ne = 0, i, j, n = s->nr_procs;
	int err = -ENOMEM;

	e = calloc(p->nr_wake_rows + 1, sizeof(*e));
	down = malloc((n + 1) * sizeof(*down));
	up = malloc((n + 1) * sizeof(*up));
	if (!e || !down || !up)
		goto out;
	/* a pipe wait for input ended by W: data flows W -> it; for output: it -> W */
	for (i = 0; i < p->nr_wake_rows; i++) {
		const struct bp_wake_row *r = &p->wake_rows[i];
		int a, b;

		if (r->state != BP_TS_PIPE || r->ctx != BP_WCTX_TASK || r->dir == BP_DIR_NONE ||
		    !r->waker_pid || r->waker_pid == r->pid)
			continue;
		a = pidmap_find(m, r->pid);
		b = pidmap_find(m, r->waker_pid);
		if (a < 0 || b < 0 || parent_child(&s->procs[a], &s->procs[b]))
			continue;
		e[ne].from = r->dir == BP_DIR_IN ? b : a;
		e[ne].to = r->dir == BP_DIR_IN ? a : b;
		e[ne].s = r->ns / 1e9;
		ne++;
	}
	/* one edge per pair, both kinds of evidence together */
	qsort(e, ne, sizeof(*e), cmp_edge);
	for (i = 0; i < ne; i++) {
		for (j = i + 1; j < ne; j++) {
			if (e[j].from == e[i].from && e[j].to == e[i].to && e[j].s >= 0) {
				e[i].s += e[j].s;
				e[j].s = -1;
			}
		}
	}
	qsort(e, ne, sizeof(*e), cmp_edge);
	for (i = 0; i < n; i++)
		down[i] = up[i] = -1;
	/* the strongest edges first, each stage one upstream and one downstream, no cycles */
	for (i = 0; i < ne && e[i].s >= 0; i++) {
		uint32_t a = e[i].from, b = e[i].to, k;
		bool cycle = false;

		if (down[a] >= 0 || up[b] >= 0)
			continue;
		for (k = b, j = 0; down[k] >= 0 && j <= n; k = down[k], j++)
			if ((uint32_t)down[k] == a)
				cycle = true;
		if (cycle || k == a)
			continue;
		down[a] = b;
		up[b] = a;
	}
	for (i = 0; i < n; i++) {
		struct bp_pipeline *pl, *npl;
		uint32_t k, len = 0;

		if (up[i] >= 0 || down[i] < 0)
			continue;
		for (k = i; (int32_t)k >= 0 && len <= n; k = down[k])
			len++;
		npl = realloc(out->pl, (out->nr + 1) * sizeof(*out->pl));
		if (!npl)
			goto out;
		out->pl = npl;
		pl = &out->pl[out->nr];
		memset(pl, 0, sizeof(*pl));
		pl->stages = calloc(len, sizeof(*pl->stages));
		if (!pl->stages)
			goto out;
		out->nr++;
		for (k = i; (int32_t)k >= 0 && pl->nr_stages < len; k = down[k]) {
			const struct bp_proc_summary *ps = &s->procs[k];
			struct bp_stage *st = &pl->stages[pl->nr_stages++];

			st->pid = ps->proc->pid;
			st->proc = k;
			st->in_wait_s = ps->pipe_in_s;
			st->out_wait_s = ps->pipe_out_s;
			st->rbytes = ps->rchar;
			st->wbytes = ps->wchar;
		}
		pl->bottleneck = bottleneck(s, pl);
		pipeline_name(s, pl);
	}
	err = 0;
out:
	free(e);
	free(down);
	free(up);
	return err;
}

int bp_pipelines_find(const struct bp_profile *p, const struct bp_summary *s,
		      struct bp_pipelines *out)
{
	uint64_t (*hist)[BP_FHIST_SLOTS] = NULL;
	double (*pipe_s)[BP_DIR__MAX] = NULL;
	struct bp_waker *all = NULL;
	uint32_t i, *order = NULL, nr_all = 0, cap_all = 0;
	struct pidmap m = {};
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->waits = calloc(s->nr_procs + 1, sizeof(*out->waits));
	hist = calloc(s->nr_procs + 1, sizeof(*hist));
	pipe_s = calloc(s->nr_procs + 1, sizeof(*pipe_s));
	if (!out->waits || !hist || !pipe_s || pidmap_build(s, &m))
		goto out;
	/*
	 * Under process churn most of the thousands of processes a window
	 * names had no wakers nor peers: their entries (1.6 KiB each) stay
	 * calloc's untouched zero pages, pid included, and cost no memory.
	 */
	out->nr_waits = s->nr_procs;
	/* rows grouped by woken process: one pass each, its wakers gathered, the top kept */
	order = malloc((p->nr_wake_rows + 1) * sizeof(*order));
	if (!order)
		goto out;
	for (i = 0; i < p->nr_wake_rows; i++)
		order[i] = i;
	qsort_r(order, p->nr_wake_rows, sizeof(*order), cmp_row_pid, p->wake_rows);
	for (i = 0; i < p->nr_wake_rows;) {
		uint32_t pid = p->wake_rows[order[i]].pid, j = i;
		int k = pidmap_find(&m, pid);
		struct bp_proc_waits *w = k >= 0 ? &out->waits[k] : NULL;

		if (w)
			w->pid = pid;
		nr_all = 0;
		for (; j < p->nr_wake_rows && p->wake_rows[order[j]].pid == pid; j++) {
			const struct bp_wake_row *r = &p->wake_rows[order[j]];

			if (!w)
				continue;
			if (add_waker(w, &all, &nr_all, &cap_all, r))
				goto out;
			/* the process it waited on through pipes, each way */
			if (r->state == BP_TS_PIPE && r->ctx == BP_WCTX_TASK && r->waker_pid &&
			    r->waker_pid != r->pid && r->dir < BP_DIR__MAX &&
			    r->ns / 1e9 > pipe_s[k][r->dir]) {
				pipe_s[k][r->dir] = r->ns / 1e9;
				w->pipe_peer[r->dir] = r->waker_pid;
				memcpy(w->pipe_peer_comm[r->dir], r->comm, BP_COMM_LEN);
			}
		}
		if (w && nr_all) {
			qsort(all, nr_all, sizeof(*all), cmp_waker);
			w->nr_wakers = nr_all < BP_MAX_WAKERS ? nr_all : BP_MAX_WAKERS;
			memcpy(w->wakers, all, w->nr_wakers * sizeof(*all));
		}
		i = j;
	}
	for (i = 0; i < p->nr_net_rows; i++) {
		const struct bp_net_row *r = &p->net_rows[i];
		int k = pidmap_find(&m, r->pid), j;
		struct bp_proc_waits *w;

		if (k < 0)
			continue;
		w = &out->waits[k];
		w->pid = r->pid;
		add_peer(w, r);
		if (!work_side(r->side))
			continue;
		w->net_waits += r->waits;
		w->net_wait_s += r->wait_ns / 1e9;
		w->net_rx += r->rx_bytes;
		w->net_tx += r->tx_bytes;
		for (j = 0; j < BP_FHIST_SLOTS; j++)
			hist[k][j] += r->hist[j];
	}
	for (i = 0; i < s->nr_procs; i++) {
		if (!out->waits[i].pid)
			continue;
		out->waits[i].net_p50_ms = bp_fhist_quantile(hist[i], 0.5) / 1e3;
		out->waits[i].net_p99_ms = bp_fhist_quantile(hist[i], 0.99) / 1e3;
	}
	err = find_pipelines(p, s, &m, out);
out:
	free(m.pid);
	free(all);
	free(order);
	free(hist);
	free(pipe_s);
	if (err)
		bp_pipelines_free(out);
	return err;
}

const struct bp_pipeline *bp_pipeline_of(const struct bp_pipelines *pl, uint32_t pid,
					 uint32_t *stage)
{
	uint32_t i, j;

	for (i = 0; pl && i < pl->nr; i++)
		for (j = 0; j < pl->pl[i].nr_stages; j++)
			if (pl->pl[i].stages[j].pid == pid) {
				if (stage)
					*stage = j;
				return &pl->pl[i];
			}
	return NULL;
}

/* ------------------------------------------------------------ critical path */

/* whether a is b or one of its descendants in the recording */
static bool descends(const struct bp_summary *s, const struct pidmap *m, uint32_t a, uint32_t b)
{
	uint32_t steps;
	int k;

	for (steps = 0; steps < 64; steps++) {
		if (a == b)
			return true;
		k = pidmap_find(m, a);
		if (k < 0 || !s->procs[k].proc->ppid || s->procs[k].proc->ppid == a)
			return false;
		a = s->procs[k].proc->ppid;
	}
	return false;
}

/*
 * From a process that only waited, the child it waited for: the child
 * whose subtree ended most of its waits (a shell's wait4 ends at each
 * child's exit), else the child subtree that did the most.
 */
static int waited_child(const struct bp_profile *p, const struct bp_summary *s,
			const struct pidmap *m, uint32_t cur)
{
	uint32_t pid = s->procs[cur].proc->pid, i;
	double best_s = 0, best_a = 0;
	int best = -1, busiest = -1;

	for (i = 0; i < p->nr_wake_rows; i++) {
		const struct bp_wake_row *r = &p->wake_rows[i];
		int k;

		if (r->pid != pid || !r->waker_pid || r->waker_pid == pid ||
		    r->ctx != BP_WCTX_TASK || r->ns / 1e9 <= best_s)
			continue;
		k = pidmap_find(m, r->waker_pid);
		if (k < 0 || !descends(s, m, r->waker_pid, pid))
			continue;
		best_s = r->ns / 1e9;
		best = k;
	}
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];
		double a = bp_proc_activity(ps);

		if (!ps->proc || ps->proc->pid == pid || !descends(s, m, ps->proc->pid, pid))
			continue;
		if (a > best_a) {
			best_a = a;
			busiest = i;
		}
	}
	if (best < 0)
		return busiest;
	/* the waker may be a grandchild: step down to it through its ancestors */
	return best;
}

int bp_critical_path(const struct bp_profile *p, const struct bp_summary *s,
		     struct bp_pipelines *pl)
{
	struct pidmap m = {};
	int root = -1, cur;
	uint32_t i, steps;

	free(pl->crit);
	pl->crit = NULL;
	pl->nr_crit = 0;
	if (p->system_wide || !s->nr_procs)
		return 0;
	if (pidmap_build(s, &m))
		return -ENOMEM;
	/* one root: the command (or the one process of -p) */
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc *proc = s->procs[i].proc;

		/* the servers a command's recording added are no root of it (chain.h) */
		if (!proc || (proc->ppid && pidmap_find(&m, proc->ppid) >= 0) ||
		    bp_proc_is_peer(p, s, proc))
			continue;
		if (root >= 0) {
			root = -1;
			goto out;
		}
		root = i;
	}
	if (root < 0)
		goto out;
	pl->crit = calloc(s->nr_procs + 1, sizeof(*pl->crit));
	if (!pl->crit) {
		free(m.pid);
		return -ENOMEM;
	}
	for (cur = root, steps = 0; cur >= 0 && steps <= s->nr_procs; steps++) {
		const struct bp_proc_summary *ps = &s->procs[cur];
		const struct bp_verdict *v = ps->verdict;
		int next = -1;

		for (i = 0; i < pl->nr_crit; i++)
			if (pl->crit[i] == (uint32_t)cur)
				goto out;
		pl->crit[pl->nr_crit++] = cur;
		if (!v)
			break;
		if (v->cls == BP_CLASS_PEER && v->peer_pid)
			next = pidmap_find(&m, v->peer_pid);
		else if (v->cls == BP_CLASS_IDLE || v->cls == BP_CLASS_UNKNOWN)
			next = waited_child(p, s, &m, cur);
		cur = next;
	}
out:
	free(m.pid);
	return 0;
}

void bp_pipelines_free(struct bp_pipelines *pl)
{
	uint32_t i;

	if (!pl)
		return;
	for (i = 0; i < pl->nr; i++)
		free(pl->pl[i].stages);
	free(pl->pl);
	free(pl->waits);
	free(pl->crit);
	memset(pl, 0, sizeof(*pl));
}
