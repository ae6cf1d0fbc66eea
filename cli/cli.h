/* SPDX-License-Identifier: GPL-2.0 */
/* The boundprof command: a small table of subcommands, one file each. */
#ifndef BP_CLI_H
#define BP_CLI_H

#include <stdbool.h>

/* exit statuses: 0 success, 1 runtime failure, 2 bad usage or bad input */
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2
/* diff --fail-above: the workload got slower than allowed */
#define EXIT_GATE	3

struct cli_env {
	int verbose;		/* -v: info, -vv: debug, -vvv: libbpf debug */
	const char *prog;	/* "boundprof" */
};

extern struct cli_env cli_env;

/* print "boundprof: MESSAGE" on stderr; the one way the CLI reports errors */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* getopt_long returned ':' or '?' for COMMAND: say which option and how */
void cli_bad_option(const char *command, int c, char **argv);
/* install the agent's log callback (errors always, the rest by -v) */
void cli_setup_logging(void);

/* root (or CAP_BPF + CAP_PERFMON) and a kernel with BTF: 0, or prints why and -errno */
int cli_check_environment(void);

struct bp_profile;

/* load a saved profile (.pb.gz); 0, or prints why and returns -errno */
int cli_load_profile(const char *path, struct bp_profile **out);

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_scale(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_dump(int argc, char **argv);

#endif /* BP_CLI_H */
