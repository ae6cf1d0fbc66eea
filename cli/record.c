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
#include "util/buf.h"
#include "cli.h"
#include "collect/loader.h"
#include "options.h"
#include "output.h"
#include "proc/procinfo.h"
#include "model/profile.h"
#include "render.h"
#include "collect/session.h"
#include "util/log.h"

#define MAX_OUTPUTS	16
#define MAX_DURATION_S	(30 * 24 * 3600.0)

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
	bool native;
	bool no_python;
	char **cmd;
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
		"usage: boundprof record [-a | -p PID[,PID...]] [-d SECONDS] [-F HZ] [-o FILE]...\n"
		"                        [--json] [--native] [--no-python] [-v]\n"
		"                        [-- COMMAND [ARG...]]\n"
		"\n"
		"  -a, --all-cpus     whole system (the default without -p or COMMAND)\n"
		"  -p, --pid PID,...  only these processes, with all their threads\n"
		"  -d, --duration S   stop after S seconds (default: when COMMAND exits,\n"
		"                     else at Ctrl-C, SIGTERM or SIGHUP)\n"
		"  -F, --freq HZ      on-CPU sampling frequency (default 99)\n"
		"  -o, --output FILE  write the profile; the format follows the extension\n"
		"                     (%s); may repeat\n"
		"      --json         print the JSON report on stdout instead of the human report\n"
		"      --no-offcpu    on-CPU sampling only: no context-switch tracing (off-CPU,\n"
		"                     wall-clock and wakeup accounting)\n"
		"      --native       Python processes: every native frame, with the Python\n"
		"                     frames in place of the interpreter frames that ran them\n"
		"                     (default: Python frames and the native code they call)\n"
		"      --no-python    no Python frames: the native stacks alone\n"
		"  -v, --verbose      more detail on stderr (repeat for more)\n"
		"\n"
		"With -- COMMAND, boundprof runs COMMAND, profiles it and every process it\n"
		"starts, and exits with COMMAND's exit status.\n",
		output_extensions());
}

/* find COMMAND the way execvp would, so "no such command" fails before we load anything */
static int check_command(const char *cmd)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, full[PATH_MAX];
	struct stat st;
	int found = 0;

	if (strchr(cmd, '/')) {
		if (stat(cmd, &st))
			return -errno;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		return access(cmd, X_OK) ? -errno : 0;
	}
	copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	if (!copy)
		return -ENOMEM;
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(full, sizeof(full), "%s/%s", *dir ? dir : ".", cmd);
		if (!stat(full, &st) && S_ISREG(st.st_mode) && !access(full, X_OK))
			found = 1;
	}
	free(copy);
	return found ? 0 : -ENOENT;
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
		{ "native", no_argument, NULL, 'n' },
		{ "no-python", no_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->hz = 99;
	/*
	 * '+': stop at the first non-option, so COMMAND's own flags stay its
	 * own; ':': report a missing value as ':' so we print one line of our own.
	 */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ap:d:F:o:vh", longopts, NULL)) != -1) {
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
		case 'n':
			o->native = true;
			break;
		case 'P':
			o->no_python = true;
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
		err = check_command(o->cmd[0]);
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

struct child {
	pid_t pid;
	int go_fd;	/* write a byte to let the child exec */
	int err_fd;	/* the child reports a failed exec here (CLOEXEC: EOF = ok) */
	int status;
	bool reaped;
};

/* fork the command, held before exec until profiling is live */
static int spawn(char **cmd, struct child *c)
{
	int go[2], er[2];
	char b;

	if (pipe2(go, O_CLOEXEC) || pipe2(er, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		int e;

		close(go[1]);
		close(er[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	c->go_fd = go[1];
	c->err_fd = er[0];
	return 0;
}

static int release(struct child *c)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	n = read(c->err_fd, &e, sizeof(e));
	close(c->err_fd);
	c->err_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_RUNTIME;
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

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct bp_session_opts so = {};
	struct bp_session *s = NULL;
	struct child child = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct bp_summary sum = {};
	struct bp_profile *view = NULL;
	struct sigaction sa = {};
	bool tty = isatty(STDERR_FILENO);
	uint64_t last_progress = 0;
	int i, err, ret = 0;

	if (parse_args(argc, argv, &o)) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (check_inputs(&o)) {
		ret = EXIT_USAGE;
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
		err = spawn(o.cmd, &child);
		if (err) {
			cli_error("cannot start '%s': %s", o.cmd[0], strerror(-err));
			ret = EXIT_RUNTIME;
			goto out;
		}
	}

	so.hz = o.hz;
	so.filter = o.nr_pids || o.cmd;
	so.drain_interval_s = 1.0;
	so.verbose_libbpf = cli_env.verbose >= 3;
	so.offcpu = !o.no_offcpu;
	so.offcpu_ustacks = 2;
	so.no_python = o.no_python;
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
		err = release(&child);
		if (err) {
			cli_error("cannot run '%s': %s", o.cmd[0], strerror(-err));
			waitpid(child.pid, NULL, 0);
			child.reaped = true;
			ret = EXIT_USAGE;
			goto out;
		}
	}

	while (!stop_signal) {
		int status;

		if (o.cmd && !child.reaped && waitpid(child.pid, &status, WNOHANG) == child.pid) {
			child.reaped = true;
			child.status = status;
			break;
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
		err = bp_session__poll(s, 100);
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
	if (cli_env.verbose) {
		uint64_t ns, runs;

		if (!bp_loader__prog_run(s->loader, "bp_oncpu", &ns, &runs))
			bp_info("BPF bp_oncpu: %llu samples, %.2f us each", (unsigned long long)runs,
				ns / 1e3 / runs);
	}
	if (render_view(s->prof, o.native, &view) || render_summarize(view, &sum)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (render_outputs_saved(o.outputs, o.nr_outputs, s->prof, view, &sum))
		ret = EXIT_RUNTIME;
	if (render_report(view, &sum, o.json))
		ret = EXIT_RUNTIME;

	if (o.cmd && !child.reaped) {
		int status;

		/* the recording is written; now wait for the command as a shell would */
		if (waitpid(child.pid, &status, 0) == child.pid) {
			child.reaped = true;
			child.status = status;
		}
	}
	if (o.cmd && child.reaped && !ret)
		ret = exit_code(child.status);
out:
	for (i = 0; i < o.nr_outputs; i++)
		output_abort(&o.outputs[i]);
	if (child.pid > 0 && !child.reaped) {
		/* never leave the command orphaned after a failure */
		if (child.go_fd >= 0)
			close(child.go_fd);
		kill(child.pid, SIGKILL);
		waitpid(child.pid, NULL, 0);
	}
	if (child.err_fd >= 0)
		close(child.err_fd);
	bp_summary_free(&sum);
	if (view && s && view != s->prof)
		bp_profile__free(view);
	bp_session__free(s);
	free(o.pids);
	return ret;
}
