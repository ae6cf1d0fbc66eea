// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof record: profile the whole system, some processes, or a command
 * and its process tree, then report.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/runs.h"
#include "serve/ipc.h"
#include "analyze/groups.h"
#include "util/buf.h"
#include "child.h"
#include "cli.h"
#include "collect/loader.h"
#include "options.h"
#include "output.h"
#include "proc/cgroup.h"
#include "proc/procinfo.h"
#include "model/profile.h"
#include "render.h"
#include "collect/session.h"
#include "util/log.h"
#include "viaagent.h"

#define MAX_OUTPUTS	16
#define MAX_DURATION_S	(30 * 24 * 3600.0)
#define MAX_REPEAT	1000

struct record_opts {
	bool all;
	pid_t *pids;
	int nr_pids;
	double duration_s;
	int hz;
	struct output outputs[MAX_OUTPUTS];
	int nr_outputs;
	bool json;
	bool no_offcpu;
	long repeat;		/* runs of COMMAND */
	enum bp_group_by group_by;	/* -g: a table of groups in the report */
	bool have_cgroup;		/* -G: only this cgroup */
	struct bp_cg_target cgroup;
	bool no_unwind;
	uint64_t unwind_mem;
	bool native;
	bool no_python;
	bool no_r;
	char **cmd;
	char cmd_path[PATH_MAX];	/* where execvp will find cmd[0] */
};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t forward_signal;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	stop_signal = sig;
	/*
	 * A terminal's Ctrl-C already reaches the command (same process
	 * group); a signal sent to us alone (kill, systemd) is passed on.
	 */
	if (si->si_code == SI_USER || si->si_code == SI_QUEUE)
		forward_signal = sig;
	/* a second Ctrl-C kills us the ordinary way */
	signal(sig, SIG_DFL);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof record [-a | -p PID[,PID...] | -G CGROUP] [-d SECONDS] [-F HZ]\n"
		"                        [-o FILE]... [-g user|cgroup|unit] [--json] [--no-offcpu]\n"
		"                        [--unwind-mem SIZE] [--native] [--no-python] [--no-r] [-v] [-r N]\n"
		"                        [--own MODULE]... [--lines] [-- COMMAND [ARG...]]\n"
		"\n"
		"  -a, --all-cpus     whole system (the default without -p, -G or COMMAND)\n"
		"  -p, --pid PID,...  only these processes, with all their threads\n"
		"  -G, --cgroup CGROUP  only the processes of this cgroup and the ones below it:\n"
		"                     its directory, its path as /proc/PID/cgroup shows it, or a\n"
		"                     unit name (nginx.service, docker:ID)\n"
		"  -g, --group-by BY  also report per user, cgroup or unit (BY), each group as\n"
		"                     one workload; folded outputs start with the group\n"
		"  -d, --duration S   stop after S seconds (default: when COMMAND exits,\n"
		"                     else at Ctrl-C, SIGTERM or SIGHUP)\n"
		"  -F, --freq HZ      on-CPU sampling frequency (default 99)\n"
		"  -o, --output FILE  write the profile; the format follows the extension\n"
		"                     (%s); may repeat\n"
		"      --json         print the JSON report on stdout instead of the human report\n"
		"      --no-offcpu    on-CPU sampling only: no context-switch tracing (off-CPU,\n"
		"                     wall-clock and wakeup accounting)\n"
		"  -r, --repeat N     run COMMAND N times in a row into one profile, with the\n"
		"                     median and spread of its wall time (default 1)\n"
		"      --unwind-mem SIZE  the most kernel memory for the tables that unwind code\n"
		"                     without frame pointers, taken as they are built\n"
		"                     (default 16M; 0: frame pointers only)\n"
		"      --native       Python and R processes: every native frame, with the\n"
		"                     Python or R frames beside the interpreter frames that\n"
		"                     ran them (default: Python or R frames and the native\n"
		"                     code they call)\n"
		"      --no-python    no Python frames: the native stacks alone\n"
		"      --no-r         no R frames: the native stacks alone\n"
		"      --own MODULE   advice may name code in MODULE (libfoo.so.1), a library\n"
		"                     it would otherwise treat as a building block; may repeat\n"
		"      --lines        folded stacks and flame graphs: a frame per source line\n"
		"                     (default: a frame per function)\n"
		"  -v, --verbose      more detail on stderr (repeat for more)\n"
		"\n"
		"With -- COMMAND, boundprof runs COMMAND, profiles it and every process it\n"
		"starts, and exits with COMMAND's exit status (with -r, of the last run; a\n"
		"run that fails ends the repeats).\n",
		output_extensions());
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "freq", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "no-offcpu", no_argument, NULL, 'N' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "group-by", required_argument, NULL, 'g' },
		{ "unwind-mem", required_argument, NULL, 'U' },
		{ "native", no_argument, NULL, 'n' },
		{ "no-python", no_argument, NULL, 'P' },
		{ "no-r", no_argument, NULL, 'R' },
		{ "own", required_argument, NULL, 'O' },
		{ "lines", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->hz = 99;
	o->repeat = 1;
	/*
	 * '+': stop at the first non-option, so COMMAND's own flags stay its
	 * own; ':': report a missing value as ':' so we print one line of our own.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ap:d:F:o:r:G:g:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->all = true;
			break;
		case 'p':
			if (cli_opt_pids("-p", optarg, &o->pids, &o->nr_pids))
				return -EINVAL;
			break;
		case 'd':
			if (cli_opt_seconds("duration", "-d", optarg, 0, MAX_DURATION_S,
					    &o->duration_s))
				return -EINVAL;
			break;
		case 'F':
			if (cli_opt_freq("-F", optarg, &o->hz))
				return -EINVAL;
			break;
		case 'o':
			if (cli_add_output(o->outputs, &o->nr_outputs, MAX_OUTPUTS, optarg))
				return -EINVAL;
			break;
		case 'J':
			o->json = true;
			break;
		case 'N':
			o->no_offcpu = true;
			break;
		case 'r':
			if (cli_opt_count("-r", optarg, 1, MAX_REPEAT, "runs", &o->repeat))
				return -EINVAL;
			break;
		case 'G':
			if (cli_opt_cgroup("-G", optarg, &o->cgroup))
				return -EINVAL;
			o->have_cgroup = true;
			break;
		case 'g':
			if (cli_opt_group_by("-g", optarg, &o->group_by))
				return -EINVAL;
			break;
		case 'U':
			if (cli_opt_unwind_mem("--unwind-mem", optarg, &o->no_unwind, &o->unwind_mem))
				return -EINVAL;
			break;
		case 'n':
			o->native = true;
			break;
		case 'O':
			if (cli_opt_own("--own", optarg))
				return -EINVAL;
			break;
		case 'P':
			o->no_python = true;
			break;
		case 'R':
			o->no_r = true;
			break;
		case 'L':
			render_lines(true);
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			cli_bad_option("record", c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (o->all && (o->nr_pids || o->cmd)) {
		cli_error("-a profiles the whole system: it cannot be combined with -p or a COMMAND");
		return -EINVAL;
	}
	if (o->nr_pids && o->cmd) {
		cli_error("give either -p PID or a COMMAND, not both");
		return -EINVAL;
	}
	if (o->repeat > 1 && !o->cmd) {
		cli_error("-r repeats a COMMAND: give one after --");
		return -EINVAL;
	}
	if (o->have_cgroup && (o->all || o->nr_pids || o->cmd)) {
		cli_error("-G profiles one cgroup: it cannot be combined with -a, -p or a COMMAND");
		return -EINVAL;
	}
	return 0;
}

static int check_inputs(struct record_opts *o)
{
	int i, err;

	for (i = 0; i < o->nr_pids; i++) {
		if (kill(o->pids[i], 0) && errno == ESRCH) {
			cli_error("no process with pid %d", o->pids[i]);
			return -ESRCH;
		}
	}
	if (o->cmd) {
		err = cli_check_command(o->cmd[0], o->cmd_path);
		if (err) {
			cli_error("cannot run '%s': %s", o->cmd[0],
				  err == -ENOENT && !strchr(o->cmd[0], '/') ? "command not found"
									    : strerror(-err));
			return err;
		}
	}
	for (i = 0; i < o->nr_outputs; i++) {
		err = output_prepare(&o->outputs[i]);
		if (err)
			return err;
	}
	return 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	/* the symbolizer holds every mapped binary open until the end */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void progress(struct bp_session *s, bool tty, bool final)
{
	if (!tty)
		return;
	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	fprintf(stderr, "\r\033[Kboundprof: recording %.1f s, %llu samples",
		(bp_now_ns() - s->prof->start_ns) / 1e9,
		(unsigned long long)bp_session__samples(s));
}

static bool deadline_passed(struct bp_session *s, double duration_s)
{
	return duration_s > 0 && bp_now_ns() - s->prof->start_ns >= duration_s * 1e9;
}

/*
 * How long the loop may sleep. Events, Ctrl-C and a child's exit (its
 * SIGCHLD) end the sleep anyway; what only a timeout notices is a -p
 * target gone without an event, a child's exit just before the sleep
 * began, the deadline, and the progress line: those keep 100 ms (or the
 * line's 250). A system-wide recording of nothing else sleeps until its
 * next drain (the session's cap): waking ten times a second was a third
 * of its CPU while sampling (0.76% of one CPU beside a CPU-bound job).
 */
static int poll_ms(struct bp_session *s, const struct record_opts *o, bool tty)
{
	int ms = o->cmd || o->nr_pids ? 100 : tty ? 250 : 1000;
	double left_ms;

	/* a memory probe or an interpreter's loader in progress is looked at often */
	if (bp_session__wants_ticks(s) && ms > 100)
		ms = 100;
	if (o->duration_s > 0) {
		left_ms = o->duration_s * 1e3 - (bp_now_ns() - s->prof->start_ns) / 1e6;
		if (left_ms < ms)
			ms = left_ms > 0 ? (int)left_ms + 1 : 0;
	}
	return ms;
}

/* a finished run of COMMAND into the profile */
static int add_run(struct bp_profile *p, const struct cli_child *c)
{
	struct bp_run r = {
		.pid = c->pid,
		.status = c->status,
		.wall_s = cli_child_wall_s(c),
		.cpu_s = cli_child_cpu_s(c),
	};

	if (bp_profile__add_run(p, &r)) {
		cli_error("out of memory recording a run");
		return -ENOMEM;
	}
	return 0;
}

/* the next run of COMMAND, profiled like the first; 0 or -errno (printed) */
static int next_run(struct bp_session *s, char **cmd, struct cli_child *c)
{
	int err = cli_child_spawn(cmd, NULL, c);

	if (err) {
		cli_error("cannot start '%s': %s", cmd[0], strerror(-err));
		return err;
	}
	err = bp_session__add_target(s, c->pid);
	if (err)
		return err;
	err = cli_child_release(c);
	if (err)
		cli_error("cannot run '%s': %s", cmd[0], strerror(-err));
	return err;
}

/* the whole recording when the agent records for us (no root, no capabilities) */
static int record_via_agent(struct record_opts *o)
{
	struct bp_ipc_req r = { .verb = BP_IPC_RECORD, .hz = o->hz };
	struct via_agent va = { .fd = -1 };
	struct cli_child child = CLI_CHILD_INIT;
	struct bp_profile *p = NULL, *view = NULL;
	struct bp_summary sum = {};
	struct sigaction sa = {};
	uint64_t t0;
	int i, err, ret = 0;

	if (o->repeat > 1 || o->unwind_mem || o->no_unwind) {
		cli_error("%s needs root or CAP_BPF and CAP_PERFMON: the agent records without it",
			  o->repeat > 1 ? "-r" : "--unwind-mem");
		return EXIT_USAGE;
	}
	if (o->nr_pids > BP_IPC_MAX_PIDS) {
		cli_error("at most %d pids through the agent", BP_IPC_MAX_PIDS);
		return EXIT_USAGE;
	}
	for (i = 0; i < o->nr_pids; i++)
		r.pids[r.nr_pids++] = o->pids[i];
	if (o->have_cgroup) {
		if (strlen(o->cgroup.path) >= sizeof(r.cgroup)) {
			cli_error("-G: cgroup path too long for the agent");
			return EXIT_USAGE;
		}
		r.have_cgroup = true;
		memcpy(r.cgroup, o->cgroup.path, strlen(o->cgroup.path) + 1);
	}
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (o->cmd) {
		cli_child_timing();
		err = cli_child_spawn(o->cmd, NULL, &child);
		if (err) {
			cli_error("cannot start '%s': %s", o->cmd[0], strerror(-err));
			return EXIT_RUNTIME;
		}
		/* it runs as us, never as the agent: the agent only watches its tree */
		r.tree = child.pid;
	}
	ret = via_agent_start(&va, &r);
	if (ret)
		goto out;
	if (o->cmd) {
		err = cli_child_release(&child);
		if (err) {
			cli_error("cannot run '%s': %s", o->cmd[0], strerror(-err));
			ret = EXIT_USAGE;
			goto out;
		}
	}
	t0 = bp_now_ns();
	while (!stop_signal) {
		if (o->cmd && cli_child_reap(&child, false))
			break;
		if (o->nr_pids) {
			for (i = 0; i < o->nr_pids; i++)
				if (!kill(o->pids[i], 0) || errno != ESRCH)
					break;
			if (i == o->nr_pids)
				break;
		}
		if (o->duration_s > 0 && bp_now_ns() - t0 >= o->duration_s * 1e9)
			break;
		/* the agent ended it early (a limit): its answer is waiting */
		if (via_agent_ready(&va))
			break;
		usleep(100000);
	}
	if (forward_signal && o->cmd && !child.reaped)
		kill(child.pid, forward_signal);
	via_agent_stop(&va);
	do
		err = via_agent_next(&va, &p, -1);
	while (err == -EINTR);
	if (err) {
		ret = err > 0 ? err : EXIT_RUNTIME;
		goto out;
	}
	if (o->cmd && child.reaped && add_run(p, &child)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	bp_runs_attribute(p);
	render_group_by(o->group_by);
	if (render_view(p, o->native, &view) || render_summarize(view, &sum)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	/* the JSON says where it came from: "via": "agent" */
	p->via_agent = view->via_agent = true;
	if (render_outputs_saved(o->outputs, o->nr_outputs, p, view, &sum))
		ret = EXIT_RUNTIME;
	if (render_report(view, &sum, o->json))
		ret = EXIT_RUNTIME;
	if (o->json)
		fprintf(stderr, "%s: recorded through the boundprof agent on %s: your own"
			" processes only\n", cli_env.prog, va.path);
	else
		via_agent_say(&va);
	if (o->cmd && !child.reaped)
		cli_child_reap(&child, true);
	if (o->cmd && child.reaped && !ret)
		ret = cli_exit_code(child.status);
out:
	via_agent_close(&va);
	cli_child_abandon(&child);
	bp_summary_free(&sum);
	if (view && view != p)
		bp_profile__free(view);
	bp_profile__free(p);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct bp_session_opts so = {};
	struct bp_session *s = NULL;
	struct cli_child child = CLI_CHILD_INIT;
	struct bp_summary sum = {};
	struct bp_profile *view = NULL;
	struct sigaction sa = {};
	bool tty = isatty(STDERR_FILENO);
	uint64_t last_progress = 0;
	long runs = 0;
	int i, err, ret = 0;

	if (parse_args(argc, argv, &o)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (check_inputs(&o)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (via_agent_needed()) {
		ret = record_via_agent(&o);
		goto out;
	}
	if (cli_check_environment()) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	raise_nofile();

	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a closed terminal or a hang-up sent to us: end the recording as SIGTERM does */
	sigaction(SIGHUP, &sa, NULL);

	if (o.cmd) {
		cli_child_timing();
		err = cli_child_spawn(o.cmd, NULL, &child);
		if (err) {
			cli_error("cannot start '%s': %s", o.cmd[0], strerror(-err));
			ret = EXIT_RUNTIME;
			goto out;
		}
	}

	so.hz = o.hz;
	so.filter = o.nr_pids || o.cmd;
	/* the servers a command talks to on this host join it (docs/chains.md) */
	so.follow_peers = o.cmd != NULL;
	so.drain_interval_s = 1.0;
	so.verbose_libbpf = cli_env.verbose >= 3;
	so.offcpu = !o.no_offcpu;
	so.offcpu_ustacks = 2;
	so.membw = true;
	so.cgroup = o.have_cgroup ? &o.cgroup : NULL;
	so.no_unwind = o.no_unwind;
	so.unwind_mem = o.unwind_mem;
	so.no_python = o.no_python;
	so.no_r = o.no_r;
	if (bp_session__open(&s, &so)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < o.nr_pids; i++)
		if (bp_session__add_target(s, o.pids[i])) {
			ret = EXIT_RUNTIME;
			goto out;
		}
	if (o.cmd && bp_session__add_target(s, child.pid)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	for (i = 0; i < o.nr_pids; i++)
		bp_profile__proc(s->prof, o.pids[i], true);
	/* with -v, what the sampling program cost: the kernel counts while we ask it to */
	if (cli_env.verbose && bp_loader__count_run_time(s->loader))
		bp_info("BPF run times not counted (kernel.bpf_stats)");
	if (bp_session__start(s)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (o.cmd) {
		/* its unwind table before it runs: its first samples need it */
		bp_session__expect_exec(s, o.cmd_path);
		err = cli_child_release(&child);
		if (err) {
			cli_error("cannot run '%s': %s", o.cmd[0], strerror(-err));
			cli_child_reap(&child, true);
			ret = EXIT_USAGE;
			goto out;
		}
	}

	while (!stop_signal) {
		if (o.cmd && cli_child_reap(&child, false)) {
			if (add_run(s->prof, &child)) {
				ret = EXIT_RUNTIME;
				break;
			}
			/* a failed run ends the repeats: its status is the answer */
			if (++runs >= o.repeat || child.status || deadline_passed(s, o.duration_s))
				break;
			if (next_run(s, o.cmd, &child)) {
				ret = EXIT_RUNTIME;
				break;
			}
			continue;
		}
		if (o.nr_pids) {
			/* with -p, stop once every target has gone */
			for (i = 0; i < o.nr_pids; i++) {
				struct bp_proc *pr = bp_profile__proc(s->prof, o.pids[i], false);

				/* a zombie still answers kill(0): trust the exit event */
				if (!(pr && pr->exited) && (!kill(o.pids[i], 0) || errno != ESRCH))
					break;
			}
			if (i == o.nr_pids)
				break;
		}
		if (deadline_passed(s, o.duration_s))
			break;
		err = bp_session__poll(s, poll_ms(s, &o, tty));
		if (err) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (tty && bp_now_ns() - last_progress > 250000000ULL) {
			progress(s, tty, false);
			last_progress = bp_now_ns();
		}
	}
	if (forward_signal && o.cmd && !child.reaped)
		kill(child.pid, forward_signal);
	progress(s, tty, true);

	if (bp_session__stop(s))
		ret = EXIT_RUNTIME;
	bp_runs_attribute(s->prof);
	render_group_by(o.group_by);
	if (cli_env.verbose) {
		uint64_t ns, nruns;

		if (!bp_loader__prog_run(s->loader, "bp_oncpu", &ns, &nruns))
			bp_info("BPF bp_oncpu: %llu samples, %.2f us each", (unsigned long long)nruns,
				ns / 1e3 / nruns);
	}
	if (render_view(s->prof, o.native, &view) || render_summarize(view, &sum)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (render_outputs_saved(o.outputs, o.nr_outputs, s->prof, view, &sum))
		ret = EXIT_RUNTIME;
	if (render_report(view, &sum, o.json))
		ret = EXIT_RUNTIME;

	/* the recording is written; now wait for the command as a shell would */
	if (o.cmd && !child.reaped)
		cli_child_reap(&child, true);
	if (o.cmd && child.reaped && !ret)
		ret = cli_exit_code(child.status);
out:
	for (i = 0; i < o.nr_outputs; i++)
		output_abort(&o.outputs[i]);
	/* never leave the command orphaned after a failure */
	cli_child_abandon(&child);
	bp_summary_free(&sum);
	if (view && s && view != s->prof)
		bp_profile__free(view);
	bp_session__free(s);
	free(o.pids);
	return ret;
}
