// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof: where does the time go, what bounds it, what to change.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "collect/loader.h"
#include "util/log.h"

#ifndef BP_VERSION
#define BP_VERSION "0.1.0"
#endif

struct cli_env cli_env = { .prog = "boundprof" };

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd cmds[] = {
	{ "record", cmd_record, "profile the system, some processes, or a command" },
	{ "report", cmd_report, "re-render a saved profile (.pb.gz) into any output" },
	{ "diff", cmd_diff, "what changed between two saved profiles; a regression gate" },
	{ "scale", cmd_scale, "a scaling curve: a command at 1, 2, 4... workers, and why it bends" },
	{ "top", cmd_top, "live view: busy processes, their waits and verdicts, each second" },
	{ "agent", cmd_agent, "always on: windows to --dir, Prometheus /metrics and pprof over HTTP" },
	{ "dump", cmd_dump, "each thread of a process now: its stack and what it waits on" },
};

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_env.prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_bad_option(const char *command, int c, char **argv)
{
	if (c == ':')
		cli_error("option %s needs a value (see: boundprof %s --help)", argv[optind - 1],
			  command);
	else
		cli_error("unknown option '%s' (see: boundprof %s --help)", argv[optind - 1],
			  command);
}

int cli_check_environment(void)
{
	struct utsname u;

	if (uname(&u) == 0 &&
	    bp_kernel_at_least(u.release, BP_KERNEL_MIN_MAJOR, BP_KERNEL_MIN_MINOR) == 0) {
		cli_error("kernel %s is too old: boundprof needs Linux %d.%d or later, for hash"
			  " maps that grow as they fill in its sampling program (see docs/kernels.md)",
			  u.release,
			  BP_KERNEL_MIN_MAJOR, BP_KERNEL_MIN_MINOR);
		return -ENOTSUP;
	}
	if (bp_check_privileges()) {
		cli_error("permission denied: profiling needs root, or CAP_BPF and CAP_PERFMON"
			  " (try: sudo boundprof ...)");
		return -EPERM;
	}
	if (!bp_kernel_has_btf()) {
		cli_error("this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): boundprof"
			  " needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	return 0;
}

static void log_to_stderr(enum bp_log_level level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "", "warning: ", "", "debug: " };

	if ((int)level > BP_LOG_WARN + cli_env.verbose)
		return;
	fprintf(stderr, "%s: %s", cli_env.prog, prefix[level]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_setup_logging(void)
{
	bp_log_set(log_to_stderr);
}

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: boundprof COMMAND [OPTIONS]\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\nboundprof COMMAND --help shows the options of a command.\n"
		   "See also: man boundprof, docs/ in the source tree.\n");
}

int main(int argc, char **argv)
{
	unsigned int i;

	/*
	 * Large blocks from the heap, and the heap not trimmed on each free:
	 * a start parses the kernel's BTF twice (ours in the loader, then
	 * libbpf's), some 10 MB each, and blocks mapped on their own made the
	 * second parse fault every page in afresh (30-60 ms of each start, as
	 * `record -- /bin/true` measured). A one-shot command gives it all
	 * back at exit; the agent sets its own policy (cli/agent.c).
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	cli_setup_logging();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("boundprof %s\n", BP_VERSION);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	cli_error("unknown command '%s' (try: boundprof --help)", argv[1]);
	return EXIT_USAGE;
}
