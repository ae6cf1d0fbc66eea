// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof scale: run a command at several worker counts, each point
 * repeated and profiled as `record` profiles a command, and say how it
 * scales, why it bends and what to ask for. The measuring is here (one
 * recording session, a profile per point); the curve is analyze/scale.c,
 * its renderings export/scale.c.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "analyze/runs.h"
#include "analyze/scale.h"
#include "analyze/verdict.h"
#include "child.h"
#include "cli.h"
#include "collect/session.h"
#include "export/scale.h"
#include "model/profile.h"
#include "options.h"
#include "output.h"
#include "proc/procinfo.h"
#include "render.h"
#include "util/buf.h"

#define MAX_OUTPUTS	8
#define MAX_ARGS	4096

/* the variables the usual runtimes size their thread pools by */
static const char *const knobs[] = {
	"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
	"RAYON_NUM_THREADS", "BOUNDPROF_WORKERS",
};
#define NR_KNOBS	(sizeof(knobs) / sizeof(knobs[0]))

struct scale_opts {
	long workers[BP_SCALE_MAX_POINTS];
	int nr_workers;
	long repeat;
	bool weak;
	int hz;
	struct output outputs[MAX_OUTPUTS];
	int nr_outputs;
	bool json;
	bool no_offcpu;
	char **cmd;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
	signal(sig, SIG_DFL);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof scale -j N[,N...] [-r REPEATS] [--weak] [-o FILE]... [--json]\n"
		"                       [-F HZ] [--no-offcpu] [-v] -- COMMAND [ARG...]\n"
		"\n"
		"Run COMMAND at each worker count, {} in its arguments replaced by the count and\n"
		"OMP_NUM_THREADS, MKL_NUM_THREADS, OPENBLAS_NUM_THREADS, NUMBA_NUM_THREADS,\n"
		"RAYON_NUM_THREADS and BOUNDPROF_WORKERS set to it; profile each run. Prints the\n"
		"speedup, efficiency and Karp-Flatt serial fraction of each point, its verdict,\n"
		"where the curve stops paying and what to ask for.\n"
		"  -j, --workers LIST  worker counts, e.g. 1,2,4,8 (1 to %d, at most %d)\n"
		"  -r, --repeat N      runs per point (default 3; the median counts)\n"
		"      --weak          weak scaling: the problem grows with the workers, so the\n"
		"                      ideal is a constant time (efficiency T1/Tn)\n"
		"  -o, --output FILE   .json (the curve), .html (plot, table, tooltips) or .svg\n"
		"                      (the plot); may repeat\n"
		"      --json          print the JSON instead of the table\n"
		"  -F, --freq HZ       on-CPU sampling frequency (default 99)\n"
		"      --no-offcpu     on-CPU sampling only (the verdicts lose the wait classes)\n"
		"  -v, --verbose       more detail on stderr\n",
		BP_SCALE_MAX_WORKERS, BP_SCALE_MAX_POINTS);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

static int parse_args(int argc, char **argv, struct scale_opts *o)
{
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, 'j' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "weak", no_argument, NULL, 'W' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "freq", required_argument, NULL, 'F' },
		{ "no-offcpu", no_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, i;

	o->repeat = 3;
	o->hz = 99;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:j:r:o:F:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (cli_opt_counts("-j", optarg, 1, BP_SCALE_MAX_WORKERS, "workers",
					   o->workers, BP_SCALE_MAX_POINTS, &o->nr_workers))
				return -EINVAL;
			break;
		case 'r':
			if (cli_opt_count("-r", optarg, 1, BP_SCALE_MAX_REPEATS, "runs", &o->repeat))
				return -EINVAL;
			break;
		case 'W':
			o->weak = true;
			break;
		case 'o':
			if (cli_add_output(o->outputs, &o->nr_outputs, MAX_OUTPUTS, optarg))
				return -EINVAL;
			if (o->outputs[o->nr_outputs - 1].fmt != OUT_JSON &&
			    o->outputs[o->nr_outputs - 1].fmt != OUT_HTML &&
			    o->outputs[o->nr_outputs - 1].fmt != OUT_SVG) {
				cli_error("scale writes .json, .html or .svg, not %s", optarg);
				return -EINVAL;
			}
			break;
		case 'J':
			o->json = true;
			break;
		case 'F':
			if (cli_opt_freq("-F", optarg, &o->hz))
				return -EINVAL;
			break;
		case 'N':
			o->no_offcpu = true;
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			cli_bad_option("scale", c, argv);
			return -EINVAL;
		}
	}
	if (!o->nr_workers) {
		cli_error("scale needs the worker counts: -j 1,2,4,8");
		return -EINVAL;
	}
	qsort(o->workers, o->nr_workers, sizeof(o->workers[0]), cmp_long);
	for (i = 1; i < o->nr_workers; i++) {
		if (o->workers[i] == o->workers[i - 1]) {
			cli_error("-j lists %ld workers twice", o->workers[i]);
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		cli_error("scale needs a command: boundprof scale -j 1,2,4 -- COMMAND [ARG...]");
		return -EINVAL;
	}
	if (argc - optind >= MAX_ARGS) {
		cli_error("COMMAND has more than %d arguments", MAX_ARGS - 1);
		return -EINVAL;
	}
	o->cmd = argv + optind;
	return 0;
}

/* arg with each {} replaced by n (malloc()ed) */
static char *substitute(const char *arg, long n)
{
	struct bp_buf b = BP_BUF_INIT;
	const char *p;

	for (p = arg; *p; p++) {
		if (p[0] == '{' && p[1] == '}') {
			bp_buf_printf(&b, "%ld", n);
			p++;
		} else {
			bp_buf_putc(&b, *p);
		}
	}
	if (b.err || !b.data) {
		bp_buf_free(&b);
		return strdup(arg);
	}
	return b.data;
}

struct point_cmd {
	char *argv[MAX_ARGS];
	char env[NR_KNOBS][48];
	char *envp[NR_KNOBS + 1];
};

static int point_cmd(char **cmd, long n, struct point_cmd *pc)
{
	size_t i;

	memset(pc, 0, sizeof(*pc));
	for (i = 0; cmd[i]; i++) {
		pc->argv[i] = substitute(cmd[i], n);
		if (!pc->argv[i])
			return -ENOMEM;
	}
	for (i = 0; i < NR_KNOBS; i++) {
		snprintf(pc->env[i], sizeof(pc->env[i]), "%s=%ld", knobs[i], n);
		pc->envp[i] = pc->env[i];
	}
	return 0;
}

static void point_cmd_free(struct point_cmd *pc)
{
	size_t i;

	for (i = 0; pc->argv[i]; i++)
		free(pc->argv[i]);
}

/* the CPUs the command may run on: our affinity, which it inherits */
static uint32_t usable_cpus(int online)
{
	cpu_set_t set;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return online > 0 ? online : 1;
	n = CPU_COUNT(&set);
	if (online > 0 && online < n)
		n = online;
	return n > 0 ? n : 1;
}

static void progress(bool tty, long workers, long run, long runs, const struct cli_child *c)
{
	if (!tty)
		return;
	fprintf(stderr, "\r\033[Kboundprof: scale: %ld worker%s, run %ld of %ld, %.1f s", workers,
		workers == 1 ? "" : "s", run, runs,
		c ? (bp_now_ns() - c->start_ns) / 1e9 : 0.0);
}

/* one run under the session into its profile; 0, or EXIT_* (printed) */
static int run_once(struct bp_session *s, struct point_cmd *pc, long workers, long run,
		    long runs, bool tty)
{
	struct cli_child c = CLI_CHILD_INIT;
	uint64_t last = 0;
	struct bp_run r;
	int err, ret = 0;

	err = cli_child_spawn(pc->argv, pc->envp, &c);
	if (err) {
		cli_error("cannot start '%s': %s", pc->argv[0], strerror(-err));
		return EXIT_RUNTIME;
	}
	if (bp_session__add_target(s, c.pid)) {
		cli_child_abandon(&c);
		return EXIT_RUNTIME;
	}
	err = cli_child_release(&c);
	if (err) {
		cli_error("cannot run '%s': %s", pc->argv[0], strerror(-err));
		cli_child_abandon(&c);
		return EXIT_USAGE;
	}
	while (!cli_child_reap(&c, false)) {
		if (stop_signal) {
			kill(c.pid, stop_signal);
			cli_child_reap(&c, true);
			return EXIT_RUNTIME;
		}
		if (bp_session__poll(s, 100)) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (tty && bp_now_ns() - last > 250000000ULL) {
			progress(tty, workers, run, runs, &c);
			last = bp_now_ns();
		}
	}
	if (ret) {
		cli_child_abandon(&c);
		return ret;
	}
	if (c.status) {
		if (tty)
			fputs("\r\033[K", stderr);
		cli_error("'%s' failed (exit status %d) at %ld worker%s, run %ld: a scaling curve "
			  "needs a command that succeeds", pc->argv[0], cli_exit_code(c.status),
			  workers, workers == 1 ? "" : "s", run);
		return EXIT_RUNTIME;
	}
	r = (struct bp_run){
		.pid = c.pid,
		.status = c.status,
		.wall_s = cli_child_wall_s(&c),
		.cpu_s = cli_child_cpu_s(&c),
	};
	if (bp_profile__add_run(s->prof, &r)) {
		cli_error("out of memory recording a run");
		return EXIT_RUNTIME;
	}
	return 0;
}

/* the point's profile closed, summarized and judged into pt; 0 or EXIT_RUNTIME */
static int close_point(struct bp_session *s, struct bp_scale_point *pt)
{
	struct bp_summary sum = {};
	struct bp_profile *p = NULL;
	int ret = 0;

	if (bp_session__rotate(s, &p)) {
		cli_error("cannot close the profile of the point at %u workers", pt->workers);
		return EXIT_RUNTIME;
	}
	bp_session__evidence(s, p);
	bp_runs_attribute(p);
	if (render_summarize(p, &sum))
		ret = EXIT_RUNTIME;
	else
		bp_scale_point_measure(pt, p, &sum);
	if (cli_env.verbose && !ret)
		fprintf(stderr, "%s: %u workers: %s (%s), %s\n", cli_env.prog, pt->workers,
			bp_class_name(pt->cls), bp_confidence_name(pt->conf), pt->evidence);
	bp_summary_free(&sum);
	bp_profile__free(p);
	return ret;
}

static char *command_line(char **cmd)
{
	struct bp_buf b = BP_BUF_INIT;
	size_t i;

	for (i = 0; cmd[i]; i++)
		bp_buf_printf(&b, "%s%s", i ? " " : "", cmd[i]);
	return b.err ? NULL : b.data;
}

static int write_outputs(struct scale_opts *o, const struct bp_scale *sc, const char *cmdline)
{
	struct bp_buf b = BP_BUF_INIT;
	int i, err, ret = 0;

	for (i = 0; i < o->nr_outputs; i++) {
		bp_buf_reset(&b);
		switch (o->outputs[i].fmt) {
		case OUT_HTML:
			err = bp_scale_html(sc, cmdline, &b);
			break;
		case OUT_SVG:
			err = bp_scale_svg(sc, cmdline, &b);
			break;
		default:
			err = bp_scale_json(sc, cmdline, &b);
			break;
		}
		if (err) {
			cli_error("cannot write %s: %s", o->outputs[i].path, strerror(-err));
			ret = EXIT_RUNTIME;
		} else if (output_commit(&o->outputs[i], b.data, b.len)) {
			ret = EXIT_RUNTIME;
		}
	}
	bp_buf_reset(&b);
	err = o->json ? bp_scale_json(sc, cmdline, &b) : bp_scale_text(sc, cmdline, &b);
	if (err || fwrite(b.data, 1, b.len, stdout) != b.len) {
		cli_error("cannot print the curve: %s", strerror(err ? -err : EIO));
		ret = EXIT_RUNTIME;
	}
	fflush(stdout);
	bp_buf_free(&b);
	return ret;
}

int cmd_scale(int argc, char **argv)
{
	struct scale_opts o = {};
	struct bp_session_opts so = {};
	struct bp_session *s = NULL;
	struct bp_scale sc = {};
	struct point_cmd *pc = NULL;
	bool tty = isatty(STDERR_FILENO);
	char *cmdline = NULL;
	int i, err, ret = 0;
	long r;

	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	err = cli_check_command(o.cmd[0], NULL);
	if (err) {
		cli_error("cannot run '%s': %s", o.cmd[0],
			  err == -ENOENT && !strchr(o.cmd[0], '/') ? "command not found"
								    : strerror(-err));
		return EXIT_USAGE;
	}
	for (i = 0; i < o.nr_outputs; i++)
		if (output_prepare(&o.outputs[i])) {
			ret = EXIT_USAGE;
			goto out;
		}
	if (cli_check_environment()) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	cmdline = command_line(o.cmd);
	sc.pts = calloc(o.nr_workers, sizeof(*sc.pts));
	pc = malloc(sizeof(*pc));
	if (!cmdline || !sc.pts || !pc) {
		cli_error("out of memory");
		ret = EXIT_RUNTIME;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	cli_child_timing();

	so.hz = o.hz;
	so.filter = true;
	so.drain_interval_s = 1.0;
	so.verbose_libbpf = cli_env.verbose >= 3;
	so.offcpu = !o.no_offcpu;
	so.offcpu_ustacks = 2;
	if (bp_session__open(&s, &so) || bp_session__start(s)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	/* kernel symbols now, so that parsing them does not compete with the first run */
	if (bp_session__poll(s, 0)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	sc.weak = o.weak;
	sc.repeats = o.repeat;
	sc.ncpus = usable_cpus(s->prof->ncpus);
	for (i = 0; i < o.nr_workers && !ret; i++) {
		sc.pts[i].workers = o.workers[i];
		if (point_cmd(o.cmd, o.workers[i], pc)) {
			cli_error("out of memory");
			ret = EXIT_RUNTIME;
		}
		for (r = 1; r <= o.repeat && !ret; r++)
			ret = run_once(s, pc, o.workers[i], r, o.repeat, tty);
		point_cmd_free(pc);
		if (!ret)
			ret = close_point(s, &sc.pts[i]);
		if (!ret)
			sc.nr_points++;
	}
	if (tty)
		fputs("\r\033[K", stderr);
	if (stop_signal) {
		cli_error("interrupted at %ld workers%s", o.workers[i - 1],
			  sc.nr_points ? ": the points measured so far follow" : "");
		ret = EXIT_RUNTIME;
	}
	bp_session__stop(s);
	if (!sc.nr_points)
		goto out;
	err = bp_scale_compute(&sc);
	if (err) {
		cli_error("cannot compute the curve: %s", strerror(-err));
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (write_outputs(&o, &sc, cmdline) && !ret)
		ret = EXIT_RUNTIME;
out:
	for (i = 0; i < o.nr_outputs; i++)
		output_abort(&o.outputs[i]);
	bp_session__free(s);
	free(sc.pts);
	free(pc);
	free(cmdline);
	return ret;
}
