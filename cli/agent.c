// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof agent: the options, the signals and the exit status of the
 * always-on agent; the agent itself is serve/daemon.c. See docs/agent.md.
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "serve/daemon.h"
#include "serve/ipc.h"
#include "serve/privs.h"
#include "util/log.h"

#define DEFAULT_LISTEN	"127.0.0.1:9741"
#define DEFAULT_DIR	"/var/lib/boundprof"

/*
 * Open files the agent may need at once: the BPF objects and perf events
 * (a few per CPU), the HTTP connections, the symbolizer's files and /proc
 * reads. The hard limit caps it.
 */
#define NOFILE_BASE	4096
#define NOFILE_PER_CPU	16

/* the one daemon a signal handler may talk to */
static struct bp_daemon *running;

static void on_stop(int sig)
{
	if (running)
		bp_daemon__request_stop(running, sig);
}

static void on_hup(int sig)
{
	if (running)
		bp_daemon__request_reopen(running);
}

/* attached: from here on, only what the drains, /proc and the symbolizer need */
static int drop_privileges(void)
{
	bp_caps_t before = bp_privs_effective();
	char a[1024], b[1024];

	if (bp_privs_restrict(bp_privs_agent_keep()))
		return -EPERM;
	bp_dbg("agent: capabilities %s -> %s, no-new-privs set", bp_privs_names(before, a, sizeof(a)),
	       bp_privs_names(bp_privs_effective(), b, sizeof(b)));
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof agent [--interval SECONDS] [--dir DIR] [--keep N] [--keep-bytes SIZE]\n"
		"                       [--listen ADDR:PORT|off] [--token-file FILE] [--top N] [-F HZ]\n"
		"                       [--no-offcpu] [--unwind-mem SIZE] [--no-bpf-stats] [-v]\n"
		"                       [--socket PATH|off] [--socket-users all|GROUP|none]\n"
		"                       [--user-sessions N] [--user-seconds S] [--user-freq HZ]\n"
		"                       [--user-mem SIZE]\n"
		"\n"
		"  --interval S      close a window every S seconds (default 10)\n"
		"  --dir DIR         write each window's .pb.gz and .json here (default %s)\n"
		"  --keep N          keep the newest N windows (default 60)\n"
		"  --keep-bytes SIZE and at most SIZE bytes of them (K, M, G suffixes; default: no limit)\n"
		"  --listen A:P      serve HTTP here (default %s; \":P\" listens on all interfaces;\n"
		"                    \"off\" serves nothing): /metrics, /debug/pprof/profile?seconds=N,\n"
		"                    /report, /flamegraph, /healthz\n"
		"  --token-file FILE every endpoint but /healthz asks for \"Authorization: Bearer\n"
		"                    TOKEN\", TOKEN read from FILE (mode 0600, root's or ours)\n"
		"  --top N           processes with series of their own in /metrics (default 20)\n"
		"  -F, --freq HZ     on-CPU sampling frequency (default 99)\n"
		"  --no-offcpu       on-CPU sampling only\n"
		"  --unwind-mem SIZE the most kernel memory for the tables that unwind code\n"
		"                    without frame pointers, taken as they are built\n"
		"                    (default 16M; 0: frame pointers only)\n"
		"  -v, --verbose     debug detail in the log (-vv: libbpf's too)\n"
		"  --no-bpf-stats    do not have the kernel time our BPF programs\n"
		"                    (boundprof_agent_bpf_seconds_total is then absent)\n"
		"  --socket PATH     where users without root profile their own processes\n"
		"                    (default %s; \"off\": nowhere)\n"
		"  --socket-users W  who may: all (default), the members of group W, or none\n"
		"  --user-sessions N recordings one user may run at once (default 4)\n"
		"  --user-seconds S  longest recording of a user (default 3600)\n"
		"  --user-freq HZ    highest -F a user may ask for (default: the agent's -F)\n"
		"  --user-mem SIZE   memory one user's recordings may hold (default 64M)\n"
		"\n"
		"SIGTERM and SIGINT write the current partial window and exit; SIGHUP re-creates\n"
		"the output directory if it was removed and reads the token file again.\n",
		DEFAULT_DIR, DEFAULT_LISTEN, BP_IPC_DEFAULT_SOCKET);
}

/* --socket-users: all, none, or a group by name; the name must outlive the daemon */
static int parse_users(const char *arg, struct bp_local_opts *lo)
{
	struct group *g;

	if (!strcmp(arg, "all")) {
		lo->access = BP_LOCAL_EVERYONE;
		return 0;
	}
	if (!strcmp(arg, "none")) {
		lo->access = BP_LOCAL_NOBODY;
		return 0;
	}
	g = getgrnam(arg);
	if (!g) {
		cli_error("--socket-users: no group '%s' (give all, none, or a group: groupadd %s)",
			  arg, arg);
		return -EINVAL;
	}
	lo->access = BP_LOCAL_GROUP;
	lo->gid = g->gr_gid;
	lo->group = arg;
	return 0;
}

static int parse(int argc, char **argv, struct bp_daemon_opts *o)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "dir", required_argument, NULL, 'D' },
		{ "keep", required_argument, NULL, 'k' },
		{ "keep-bytes", required_argument, NULL, 'K' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "top", required_argument, NULL, 't' },
		{ "freq", required_argument, NULL, 'F' },
		{ "no-offcpu", no_argument, NULL, 'N' },
		{ "unwind-mem", required_argument, NULL, 'U' },
		{ "no-bpf-stats", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "socket", required_argument, NULL, 'X' },
		{ "socket-users", required_argument, NULL, 'W' },
		{ "user-sessions", required_argument, NULL, 'j' },
		{ "user-seconds", required_argument, NULL, 'J' },
		{ "user-freq", required_argument, NULL, 'f' },
		{ "user-mem", required_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	bool user_freq = false;
	double secs;
	int hz;
	long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":F:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (cli_opt_seconds("interval", "--interval", optarg, 1, 86400, &o->interval_s))
				return -EINVAL;
			break;
		case 'D':
			o->dir = optarg;
			break;
		case 'k':
			if (cli_opt_count("--keep", optarg, 1, 10000000, "windows", &v))
				return -EINVAL;
			o->keep = v;
			break;
		case 'K':
			if (cli_opt_size("--keep-bytes", optarg, &o->keep_bytes))
				return -EINVAL;
			break;
		case 'l':
			if (cli_opt_listen("--listen", optarg, &o->listen))
				return -EINVAL;
			break;
		case 'T':
			o->token_file = optarg;
			break;
		case 't':
			if (cli_opt_count("--top", optarg, 1, 10000, "processes", &v))
				return -EINVAL;
			o->top = v;
			break;
		case 'F':
			if (cli_opt_freq("-F", optarg, &o->session.hz))
				return -EINVAL;
			break;
		case 'N':
			o->session.offcpu = false;
			break;
		case 'S':
			o->bpf_stats = false;
			break;
		case 'U':
			if (cli_opt_unwind_mem("--unwind-mem", optarg, &o->session.no_unwind,
					       &o->session.unwind_mem))
				return -EINVAL;
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'X':
			o->local.path = strcmp(optarg, "off") ? optarg : NULL;
			break;
		case 'W':
			if (parse_users(optarg, &o->local))
				return -EINVAL;
			break;
		case 'j':
			if (cli_opt_count("--user-sessions", optarg, 1, 1000, "sessions", &v))
				return -EINVAL;
			o->local.max_sessions = v;
			break;
		case 'J':
			if (cli_opt_seconds("user-seconds", "--user-seconds", optarg, 1, BP_IPC_MAX_SECONDS,
					    &secs))
				return -EINVAL;
			o->local.max_seconds = (uint32_t)secs;
			break;
		case 'f':
			if (cli_opt_freq("--user-freq", optarg, &hz))
				return -EINVAL;
			o->local.max_hz = hz;
			user_freq = true;
			break;
		case 'M':
			if (cli_opt_size("--user-mem", optarg, &o->local.max_bytes))
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			cli_bad_option("agent", c, argv);
			return -EINVAL;
		}
	}
	if (!user_freq)
		o->local.max_hz = o->session.hz;
	if (optind < argc) {
		cli_error("agent takes no arguments: '%s' (see: boundprof agent --help)",
			  argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct bp_daemon_opts o;
	struct bp_daemon *d = NULL;
	struct sigaction sa = {};
	int err, ret = 0;

	bp_daemon_opts_default(&o);
	o.dir = DEFAULT_DIR;
	o.listen = DEFAULT_LISTEN;
	o.local.path = BP_IPC_DEFAULT_SOCKET;
	/* a daemon's log is read later: say when it starts, stops and writes */
	cli_env.verbose = 1;
	if (parse(argc, argv, &o))
		return EXIT_USAGE;
	o.session.verbose_libbpf = cli_env.verbose >= 3;	/* -vv */

	/* every option is checked before anything is created */
	if (bp_daemon_check(&o))
		return EXIT_USAGE;
	if (cli_check_environment())
		return EXIT_RUNTIME;
	/*
	 * One malloc arena: the kernel-symbol loader and the memory-bandwidth
	 * threads would each get an arena of their own, megabytes that stay
	 * resident (and untrimmed) after the threads are done.
	 *
	 * Blocks up to 2 MiB from the heap, and up to 8 MiB of it kept when
	 * freed: a window's arrays (the wait entries of every process, the
	 * deflate state, the JSON being written) come back each window, and
	 * given back to the system they were faulted in afresh the next time.
	 * A page fault costs 14 us on this kind of guest; under 20 new
	 * processes a second the agent took 87 of them a second with 128 KiB
	 * thresholds and 44 with these, for 0.4-0.8 MiB more at its peak.
	 * Larger blocks (the wait entries of thousands of processes) are
	 * still mapped on their own: the pages of a calloc that nothing
	 * writes stay untouched instead of cleared in the heap.
	 */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 2 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
	if (bp_daemon__new(&d, &o))
		return EXIT_USAGE;
	err = bp_privs_raise_nofile(NOFILE_BASE + NOFILE_PER_CPU * sysconf(_SC_NPROCESSORS_CONF));
	if (err)
		bp_warn("cannot raise the open file limit: %s", strerror(-err));
	running = d;
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (bp_daemon__start(d) || drop_privileges() || bp_daemon__run(d))
		ret = EXIT_RUNTIME;
	running = NULL;
	bp_daemon__free(d);
	return ret;
}
