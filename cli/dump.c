// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof dump -p PID: each thread's stack and wait right now, py-spy
 * dump for everything boundprof sees (docs/dump.md).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "collect/dump.h"
#include "export/dump_out.h"
#include "viaagent.h"
#include "util/buf.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof dump -p PID [--json] [-v]\n"
		"\n"
		"  -p, --pid PID      the process: each of its threads' stack (kernel, native\n"
		"                     and Python frames) and what it waits on right now\n"
		"      --json         print JSON (docs/dump.md) instead of text\n"
		"  -v, --verbose      more detail on stderr (repeat for more)\n"
		"\n"
		"The process is not stopped: each thread is read where it is, once.\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'J' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bp_buf out = { 0 };
	struct bp_dump *d = NULL;
	bool json = false;
	pid_t *pids = NULL;
	int c, nr = 0, err;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_opt_pids("-p", optarg, &pids, &nr)) {
				free(pids);
				return EXIT_USAGE;
			}
			break;
		case 'J':
			json = true;
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'h':
			usage(stdout);
			free(pids);
			return 0;
		default:
			cli_bad_option("dump", c, argv);
			free(pids);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("dump takes no arguments: '%s' (see: boundprof dump --help)", argv[optind]);
		free(pids);
		return EXIT_USAGE;
	}
	if (nr != 1) {
		cli_error("dump needs one process: -p PID (see: boundprof dump --help)");
		free(pids);
		return EXIT_USAGE;
	}
	/* no root or capabilities: the agent dumps it, if the process is ours */
	if (via_agent_needed()) {
		struct bp_ipc_req r = { .verb = BP_IPC_DUMP, .nr_pids = 1, .json = json };

		r.pids[0] = (uint32_t)pids[0];
		free(pids);
		return via_agent_dump(&r, json);
	}
	if (cli_check_environment()) {
		free(pids);
		return EXIT_RUNTIME;
	}
	err = bp_dump__take(pids[0], &d);
	free(pids);
	if (err)
		return err == -ESRCH || err == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
	err = bp_dump_write(d, json, &out);
	if (!err)
		fwrite(out.data, 1, out.len, stdout);
	bp_buf_free(&out);
	bp_dump__free(d);
	return err ? EXIT_RUNTIME : 0;
}
