// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof top: a live view of the whole system, one row per busy process
 * (or, with -g, per user, cgroup or unit): CPU use, where its off-CPU time
 * goes, its verdict so far and its hottest function (or its busiest
 * processes). On a terminal it redraws each interval and `q` quits;
 * otherwise it prints one snapshot per interval.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/groups.h"
#include "analyze/python.h"
#include "cli.h"
#include "options.h"
#include "collect/loader.h"
#include "proc/cgroup.h"
#include "proc/procinfo.h"
#include "model/profile.h"
#include "collect/session.h"
#include "analyze/verdict.h"
#include "model/merge.h"
#include "viaagent.h"

#define MAX_ROWS 64

struct prev {
	uint32_t pid;
	double on_s;
	double off_s[BP_KIND__MAX];
	double net_work_s;
	double thr_s;
};

struct top_state {
	uint64_t busy0, total0;		/* /proc/stat at the previous snapshot */
	struct prev *prev;
	uint32_t nr_prev;
	double last_t;
	bool tty;
	int rows;
	enum bp_group_by by;		/* -g: one row per group */
};

struct row {
	const struct bp_proc_summary *ps;
	double cpu;			/* CPUs used over the interval */
	double off[BP_KIND__MAX];	/* thread-seconds per second, per class */
	double net_work;		/* of off[NET]: a client's waits */
	double thr;			/* of off[RUNQUEUE]: throttled by a CPU quota */
	uint32_t group;			/* -g: index in the groups */
};

/* a group's rates over the interval, summed over its processes */
struct grow {
	const struct bp_group *g;
	double cpu, off[BP_KIND__MAX], net_work, thr;
	const struct row *busiest[BP_GROUP_TOP_PROCS];
	uint32_t nr_busiest;
};

static volatile sig_atomic_t top_stop;
static struct termios saved_tio;
static bool tio_saved;

static void on_top_signal(int sig)
{
	top_stop = sig;
}

static void restore_terminal(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tio_saved = false;
	/* back from the alternate screen, cursor visible */
	fputs("\033[?1049l\033[?25h", stdout);
	fflush(stdout);
}

/* keys without Enter, no echo, for `q`; the rest of the terminal stays as it was */
static void raw_keys(void)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio))
		return;
	t = saved_tio;
	t.c_lflag &= ~(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (!tcsetattr(STDIN_FILENO, TCSANOW, &t))
		tio_saved = true;
}

static bool quit_pressed(void)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	char c;

	if (!tio_saved || poll(&pfd, 1, 0) <= 0)
		return false;
	while (read(STDIN_FILENO, &c, 1) == 1)
		if (c == 'q' || c == 'Q')
			return true;
	return false;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof top [-i SECONDS] [-n COUNT] [-F HZ] [-g user|cgroup|unit]\n"
		"                     [-G CGROUP] [--no-offcpu] [--unwind-mem SIZE] [-v]\n"
		"\n"
		"  -i, --interval S   refresh every S seconds (default 1)\n"
		"  -g, --group-by BY  one row per user, cgroup or unit (BY), with its busiest\n"
		"                     processes and a verdict for the group\n"
		"  -G, --cgroup CGROUP  only the processes of this cgroup and the ones below it:\n"
		"                     its directory, its path as /proc/PID/cgroup shows it, or a\n"
		"                     unit name\n"
		"  -n, --count N      stop after N refreshes (default: until q, Ctrl-C or SIGTERM)\n"
		"  -F, --freq HZ      on-CPU sampling frequency (default 99)\n"
		"      --no-offcpu    on-CPU sampling only (no wait classes or verdicts from them)\n"
		"      --unwind-mem SIZE  kernel memory for the tables that unwind code without\n"
		"                     frame pointers (default 16M; 0: frame pointers only)\n"
		"  -v, --verbose      more detail on stderr (repeat for more)\n"
		"\n"
		"On a terminal the view redraws in place and q quits; otherwise one snapshot\n"
		"per interval is printed.\n");
}

static struct prev *find_prev(struct top_state *st, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < st->nr_prev; i++)
		if (st->prev[i].pid == pid)
			return &st->prev[i];
	return NULL;
}

/* busy CPUs over the interval: on-CPU plus the busy waits, as everywhere (bp_busy_s) */
static double busy(double cpu, const double *off, double net_work)
{
	return bp_busy_s(cpu, off, net_work, true);
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double wx = busy(x->cpu, x->off, x->net_work), wy = busy(y->cpu, y->off, y->net_work);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	return x->ps->proc->pid < y->ps->proc->pid ? -1 : 1;
}

static int cmp_grows(const void *a, const void *b)
{
	const struct grow *x = a, *y = b;
	double wx = busy(x->cpu, x->off, x->net_work), wy = busy(y->cpu, y->off, y->net_work);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	return strcmp(x->g->name, y->g->name);
}

static bool quiet(const struct row *r)
{
	return busy(r->cpu, r->off, r->net_work) < 0.005;
}

static void header(struct top_state *st, const struct bp_profile *p, const struct bp_summary *s,
		   double dt)
{
	char wall[32];
	time_t now = time(NULL);

	strftime(wall, sizeof(wall), "%H:%M:%S", localtime(&now));
	if (st->tty)
		fputs("\033[H\033[2J", stdout);
	printf("boundprof top  %s  every %.1f s  %d CPUs %.0f%% busy  overall: %s (%s)%s%s%s\n",
	       wall, dt, p->ncpus, s->busy_frac * 100,
	       s->have_overall ? bp_class_name(s->overall.cls) : "-",
	       s->have_overall ? bp_confidence_name(s->overall.conf) : "-",
	       st->by ? "  by " : "", st->by ? bp_group_by_name(st->by) : "",
	       st->tty ? "   q quits" : "");
}

static void verdict_text(const struct bp_verdict *v, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", v ? bp_class_name(v->cls) : "-", v ? "/" : "",
		 v ? bp_confidence_name(v->conf) : "");
}

static void render_procs(struct top_state *st, const struct bp_profile *p, struct row *rows,
			 uint32_t n)
{
	char hot[64], verdict[40], user[16], unit[64];
	uint32_t i, shown = 0;

	printf("%7s %-8s %-15s %6s %6s %6s %6s %6s %6s %6s %6s  %-26s %-20s %s\n", "PID", "USER",
	       "COMM", "CPU%", "RUNQ%", "THROT%", "IO%", "NET%", "PIPE%", "LOCK%", "SLEEP%",
	       "VERDICT SO FAR", "UNIT", "TOP FUNCTION");
	for (i = 0; i < n && (int)shown < st->rows; i++) {
		const struct bp_proc_summary *ps = rows[i].ps;
		const struct bp_proc *proc = ps->proc;

		if (quiet(&rows[i]))
			continue;
		shown++;
		if (ps->nr_funcs)
			bp_func_label(&p->frames[ps->funcs[0].frame], hot, sizeof(hot));
		else
			snprintf(hot, sizeof(hot), "-");
		verdict_text(ps->verdict, verdict, sizeof(verdict));
		bp_group_name(proc, BP_GROUP_USER, user, sizeof(user));
		snprintf(unit, sizeof(unit), "%s", proc->unit ? proc->unit :
			 proc->cgroup ? proc->cgroup : "-");
		printf("%7u %-8.8s %-15.15s %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f  %-26.26s "
		       "%-20.20s %.40s\n", proc->pid, user, proc->comm, rows[i].cpu * 100,
		       (rows[i].off[BP_KIND_RUNQUEUE] - rows[i].thr) * 100, rows[i].thr * 100,
		       rows[i].off[BP_KIND_IO] * 100, rows[i].off[BP_KIND_NET] * 100,
		       rows[i].off[BP_KIND_PIPE] * 100, rows[i].off[BP_KIND_LOCK] * 100,
		       rows[i].off[BP_KIND_SLEEP] * 100, verdict, unit, hot);
	}
	if (!shown)
		printf("%7s (no busy process in this interval)\n", "");
}

static void render_groups(struct top_state *st, const struct bp_groups *gs, struct row *rows,
			  uint32_t n)
{
	struct grow *g = calloc(gs->nr + 1, sizeof(*g));
	char verdict[40], busiest[96];
	uint32_t i, j, shown = 0;
	int k;

	if (!g)
		return;
	for (i = 0; i < gs->nr; i++)
		g[i].g = &gs->g[i];
	/* rows come busiest first: the first members met are a group's busiest */
	for (i = 0; i < n; i++) {
		struct grow *gr = &g[rows[i].group];

		if (rows[i].group >= gs->nr)
			continue;
		gr->cpu += rows[i].cpu;
		gr->thr += rows[i].thr;
		for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++)
			gr->off[k] += rows[i].off[k];
		gr->net_work += rows[i].net_work;
		if (gr->nr_busiest < BP_GROUP_TOP_PROCS && !quiet(&rows[i]))
			gr->busiest[gr->nr_busiest++] = &rows[i];
	}
	qsort(g, gs->nr, sizeof(*g), cmp_grows);
	printf("%-28s %5s %6s %6s %6s %6s %6s %6s %6s %6s  %-26s %s\n",
	       st->by == BP_GROUP_USER ? "USER" : st->by == BP_GROUP_UNIT ? "UNIT" : "CGROUP",
	       "PROCS", "CPU%", "RUNQ%", "THROT%", "IO%", "NET%", "PIPE%", "LOCK%", "SLEEP%",
	       "VERDICT SO FAR", "BUSIEST (PID COMM CPU%)");
	for (i = 0; i < gs->nr && (int)shown < st->rows; i++) {
		size_t used = 0;

		if (busy(g[i].cpu, g[i].off, g[i].net_work) < 0.005)
			continue;
		shown++;
		busiest[0] = '\0';
		for (j = 0; j < g[i].nr_busiest; j++) {
			const struct row *r = g[i].busiest[j];

			used += snprintf(busiest + used,
					 used < sizeof(busiest) ? sizeof(busiest) - used : 0,
					 "%s%u %.15s %.0f", j ? ", " : "", r->ps->proc->pid,
					 r->ps->proc->comm, r->cpu * 100);
			if (used >= sizeof(busiest))
				break;
		}
		verdict_text(g[i].g->have_verdict ? &g[i].g->verdict : NULL, verdict,
			     sizeof(verdict));
		printf("%-28.28s %5u %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f %6.1f  %-26.26s %s\n",
		       g[i].g->name, g[i].g->nr_procs, g[i].cpu * 100,
		       (g[i].off[BP_KIND_RUNQUEUE] - g[i].thr) * 100, g[i].thr * 100,
		       g[i].off[BP_KIND_IO] * 100, g[i].off[BP_KIND_NET] * 100,
		       g[i].off[BP_KIND_PIPE] * 100, g[i].off[BP_KIND_LOCK] * 100,
		       g[i].off[BP_KIND_SLEEP] * 100, verdict, busiest[0] ? busiest : "-");
	}
	if (!shown)
		printf("%28s (no busy group in this interval)\n", "");
	free(g);
}

/* the group of each row: the index of its name among the groups */
static void assign_groups(const struct bp_groups *gs, struct row *rows, uint32_t n,
			  enum bp_group_by by)
{
	char name[1100];
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		bp_group_name(rows[i].ps->proc, by, name, sizeof(name));
		rows[i].group = UINT32_MAX;
		for (j = 0; j < gs->nr; j++)
			if (!strcmp(gs->g[j].name, name)) {
				rows[i].group = j;
				break;
			}
	}
}

static void render(struct top_state *st, const struct bp_profile *p, const struct bp_summary *s,
		   double dt)
{
	struct row *rows = calloc(s->nr_procs + 1, sizeof(*rows));
	struct bp_groups gs = {};
	struct prev *np;
	uint32_t i, n = 0;
	int k;

	np = calloc(s->nr_procs + 1, sizeof(*np));
	for (i = 0; rows && i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];
		struct prev *pv;
		struct row r = { .ps = ps };

		/* our own drains and redraws are not the user's workload */
		if (!ps->proc || ps->proc->pid == (uint32_t)getpid())
			continue;
		if (np) {
			np[i].pid = ps->proc->pid;
			np[i].on_s = ps->on_cpu_s;
			np[i].thr_s = ps->throttled_s;
			memcpy(np[i].off_s, ps->off_s, sizeof(np[i].off_s));
			np[i].net_work_s = ps->net_work_s;
		}
		pv = find_prev(st, ps->proc->pid);
		r.cpu = (ps->on_cpu_s - (pv ? pv->on_s : 0)) / dt;
		r.thr = (ps->throttled_s - (pv ? pv->thr_s : 0)) / dt;
		for (k = BP_KIND_RUNQUEUE; k < BP_KIND__MAX; k++)
			r.off[k] = (ps->off_s[k] - (pv ? pv->off_s[k] : 0)) / dt;
		r.net_work = (ps->net_work_s - (pv ? pv->net_work_s : 0)) / dt;
		if (r.thr < 0)
			r.thr = 0;
		if (r.thr > r.off[BP_KIND_RUNQUEUE])
			r.thr = r.off[BP_KIND_RUNQUEUE];
		rows[n++] = r;
	}
	free(st->prev);
	st->prev = np;
	st->nr_prev = np ? s->nr_procs : 0;
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_rows);

	header(st, p, s, dt);
	if (st->by && rows && !bp_groups_build(p, s, st->by, &gs)) {
		assign_groups(&gs, rows, n, st->by);
		render_groups(st, &gs, rows, n);
		bp_groups_free(&gs);
	} else if (rows) {
		render_procs(st, p, rows, n);
	}
	if (!st->tty)
		putchar('\n');
	fflush(stdout);
	free(rows);
}

/* visible rows: what the terminal has room for */
static int term_rows(void)
{
	const char *l = getenv("LINES");
	int n = l ? atoi(l) : 0;

	return n > 4 ? n - 3 : 20;
}

/* one refresh of the profile so far */
static int snapshot_of(struct bp_profile *p, struct top_state *st, double dt)
{
	struct bp_profile *view = NULL;
	struct bp_summary sum;
	uint64_t busy, total;
	int err;

	/* the header's busy share is this interval's, from the kernel's accounting */
	if (!bp_cpu_times(NULL, &busy, &total)) {
		if (st->total0 && total > st->total0)
			p->machine_busy = (double)(busy - st->busy0) / (total - st->total0);
		st->busy0 = busy;
		st->total0 = total;
	}
	/* Python and R processes by their own functions, as record and report show them */
	if (bp_python_has_frames(p)) {
		view = bp_python_view(p);
		if (!view) {
			cli_error("out of memory while summarizing");
			return -ENOMEM;
		}
	}
	err = bp_summarize(view ? view : p, 1, &sum);
	if (!err)
		err = bp_verdicts(view ? view : p, &sum);
	if (err) {
		cli_error("out of memory while summarizing");
		bp_summary_free(&sum);
		bp_profile__free(view);
		return err;
	}
	render(st, view ? view : p, &sum, dt);
	bp_summary_free(&sum);
	bp_profile__free(view);
	return 0;
}

static int snapshot(struct bp_session *s, struct top_state *st, double dt)
{
	/* the profile covers the time so far; the window ends now for the verdicts */
	s->prof->end_ns = bp_now_ns();
	/* the cgroups' throttling and pressure up to now */
	if (bp_session__cgroups(s)) {
		cli_error("out of memory while reading the cgroups");
		return -ENOMEM;
	}
	return snapshot_of(s->prof, st, dt);
}

static void screen_on(struct top_state *st)
{
	st->tty = isatty(STDOUT_FILENO);
	st->rows = st->tty ? term_rows() : MAX_ROWS;
	if (st->tty) {
		raw_keys();
		atexit(restore_terminal);
		/* the alternate screen: the shell's scrollback is left alone */
		fputs("\033[?1049h\033[?25l", stdout);
	}
}

/* top through the agent (no root, no capabilities): the slices it sends, added up */
static int top_via_agent(struct top_state *st, const struct bp_cg_target *cg, int hz,
			 double interval, long count)
{
	struct bp_ipc_req r = { .verb = BP_IPC_TOP, .hz = hz };
	struct bp_profile *acc = NULL, *sl;
	struct via_agent va;
	long done = 0;
	double last;
	int err, ret;

	if (cg) {
		if (strlen(cg->path) >= sizeof(r.cgroup)) {
			cli_error("-G: cgroup path too long for the agent");
			return EXIT_USAGE;
		}
		r.have_cgroup = true;
		memcpy(r.cgroup, cg->path, strlen(cg->path) + 1);
	}
	ret = via_agent_start(&va, &r);
	if (ret) {
		via_agent_close(&va);
		return ret;
	}
	signal(SIGINT, on_top_signal);
	signal(SIGTERM, on_top_signal);
	screen_on(st);
	bp_cpu_times(NULL, &st->busy0, &st->total0);
	last = bp_now_ns() / 1e9;
	while (!top_stop && !quit_pressed()) {
		err = via_agent_next(&va, &sl, 100);
		if (err == -ETIMEDOUT || err == -EINTR)
			continue;
		if (err) {
			ret = err > 0 ? err : EXIT_RUNTIME;
			break;
		}
		if (!acc) {
			acc = sl;
		} else {
			err = bp_profile__merge(acc, sl);
			bp_profile__free(sl);
			if (err) {
				cli_error("out of memory adding up the agent's slices");
				ret = EXIT_RUNTIME;
				break;
			}
		}
		if (bp_now_ns() / 1e9 - last < interval)
			continue;
		if (snapshot_of(acc, st, bp_now_ns() / 1e9 - last)) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (!st->tty)
			printf("(through the boundprof agent on %s: your own processes only)\n\n",
			       va.path);
		fflush(stdout);
		last = bp_now_ns() / 1e9;
		if (count && ++done >= count)
			break;
	}
	if (st->tty)
		restore_terminal();
	via_agent_close(&va);
	bp_profile__free(acc);
	free(st->prev);
	return ret;
}

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "freq", required_argument, NULL, 'F' },
		{ "no-offcpu", no_argument, NULL, 'N' },
		{ "group-by", required_argument, NULL, 'g' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "unwind-mem", required_argument, NULL, 'U' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bp_session_opts so = { .hz = 99, .offcpu = true, .offcpu_ustacks = 2,
				      .membw = true };
	struct top_state st = {};
	struct bp_cg_target cg;
	struct bp_session *s = NULL;
	double interval = 1.0, last;
	long count = 0, done = 0;
	int c, err, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:n:F:g:G:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (cli_opt_seconds("interval", "-i", optarg, 0.2, 3600, &interval))
				return EXIT_USAGE;
			break;
		case 'n':
			if (cli_opt_count("-n", optarg, 1, INT_MAX, "refreshes", &count))
				return EXIT_USAGE;
			break;
		case 'F':
			if (cli_opt_freq("-F", optarg, &so.hz))
				return EXIT_USAGE;
			break;
		case 'N':
			so.offcpu = false;
			break;
		case 'g':
			if (cli_opt_group_by("-g", optarg, &st.by))
				return EXIT_USAGE;
			break;
		case 'G':
			if (cli_opt_cgroup("-G", optarg, &cg))
				return EXIT_USAGE;
			so.cgroup = &cg;
			break;
		case 'U':
			if (cli_opt_unwind_mem("--unwind-mem", optarg, &so.no_unwind, &so.unwind_mem))
				return EXIT_USAGE;
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			cli_bad_option("top", c, argv);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("top takes no arguments: '%s' (see: boundprof top --help)", argv[optind]);
		return EXIT_USAGE;
	}
	if (via_agent_needed())
		return top_via_agent(&st, so.cgroup, so.hz, interval, count);
	if (cli_check_environment())
		return EXIT_RUNTIME;

	signal(SIGINT, on_top_signal);
	signal(SIGTERM, on_top_signal);
	so.drain_interval_s = interval;
	so.verbose_libbpf = cli_env.verbose >= 3;
	if (bp_session__open(&s, &so) || bp_session__start(s)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	screen_on(&st);
	bp_cpu_times(NULL, &st.busy0, &st.total0);
	last = bp_now_ns() / 1e9;
	while (!top_stop) {
		err = bp_session__poll(s, 100);
		if (err) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (quit_pressed())
			break;
		if (bp_now_ns() / 1e9 - last < interval)
			continue;
		if (snapshot(s, &st, bp_now_ns() / 1e9 - last)) {
			ret = EXIT_RUNTIME;
			break;
		}
		last = bp_now_ns() / 1e9;
		if (count && ++done >= count)
			break;
	}
out:
	if (st.tty)
		restore_terminal();
	bp_session__stop(s);
	bp_session__free(s);
	free(st.prev);
	return ret;
}
