// SPDX-License-Identifier: GPL-2.0
/*
 * boundprof report: re-render a saved profile (.pb.gz) into any output, with
 * the numbers of the original recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "output.h"
#include "export/pprof.h"
#include "render.h"

#define MAX_OUTPUTS	16
#define MAX_PROFILE	(2ULL << 30)

int cli_load_profile(const char *path, struct bp_profile **out)
{
	char errmsg[256] = "";
	struct stat st;
	char *data;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		cli_error("cannot read %s: %s", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > MAX_PROFILE) {
		cli_error("cannot read %s: %s", path, S_ISREG(st.st_mode) ?
			  "larger than 2 GiB" : "not a regular file");
		close(fd);
		return -EINVAL;
	}
	data = malloc(st.st_size ? st.st_size : 1);
	if (!data) {
		close(fd);
		cli_error("out of memory reading %s", path);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, data + got, st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		got += n;
	}
	close(fd);
	if (err) {
		cli_error("cannot read %s: %s", path, strerror(-err));
		free(data);
		return err;
	}
	*out = bp_pprof_read(data, got, errmsg, sizeof(errmsg));
	free(data);
	if (!*out) {
		err = -errno;
		if (err == -ENOMEM)
			cli_error("out of memory loading %s", path);
		else
			cli_error("%s is not a profile boundprof can read: %s", path,
				  errmsg[0] ? errmsg : strerror(-err));
		return err ? err : -EINVAL;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: boundprof report FILE.pb.gz [-o FILE]... [-g user|cgroup|unit] [--json]\n"
		"                        [--native] [--own MODULE]... [--lines] [-v]\n"
		"\n"
		"Re-render a profile saved with `boundprof record -o FILE.pb.gz`.\n"
		"  -o, --output FILE  write it again; the format follows the extension:\n"
		"                     %s\n"
		"  -g, --group-by BY  also report per user, cgroup or unit (BY), as record -g does\n"
		"      --json         print the JSON report instead of the human report\n"
		"      --native       Python processes: every native frame, with the Python\n"
		"                     frames in place of the interpreter frames that ran them\n"
		"      --own MODULE   advice may name code in MODULE, as for record; may repeat\n"
		"      --lines        folded stacks and flame graphs: a frame per source line\n"
		"                     (default: a frame per function)\n"
		"  -v, --verbose      more detail on stderr\n",
		output_extensions());
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "group-by", required_argument, NULL, 'g' },
		{ "native", no_argument, NULL, 'n' },
		{ "own", required_argument, NULL, 'O' },
		{ "lines", no_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct output outs[MAX_OUTPUTS] = {};
	struct bp_profile *p = NULL, *view = NULL;
	struct bp_summary sum = {};
	enum bp_group_by by = BP_GROUP_NONE;
	bool json = false, native = false;
	int c, i, n = 0, ret = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:g:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (cli_add_output(outs, &n, MAX_OUTPUTS, optarg))
				return EXIT_USAGE;
			break;
		case 'J':
			json = true;
			break;
		case 'g':
			if (cli_opt_group_by("-g", optarg, &by))
				return EXIT_USAGE;
			break;
		case 'n':
			native = true;
			break;
		case 'O':
			if (cli_opt_own("--own", optarg))
				return EXIT_USAGE;
			break;
		case 'L':
			render_lines(true);
			break;
		case 'v':
			cli_env.verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			cli_bad_option("report", c, argv);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		cli_error(optind == argc ? "report needs a saved profile: boundprof report FILE.pb.gz"
					 : "report takes one profile (see: boundprof report --help)");
		return EXIT_USAGE;
	}
	if (cli_load_profile(argv[optind], &p))
		return EXIT_USAGE;
	for (i = 0; i < n; i++)
		if (output_prepare(&outs[i])) {
			ret = EXIT_USAGE;
			goto out;
		}
	render_group_by(by);
	if (render_view(p, native, &view) || render_summarize(view, &sum)) {
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (render_outputs_saved(outs, n, p, view, &sum) || render_report(view, &sum, json))
		ret = EXIT_RUNTIME;
out:
	for (i = 0; i < n; i++)
		output_abort(&outs[i]);
	bp_summary_free(&sum);
	if (view != p)
		bp_profile__free(view);
	bp_profile__free(p);
	return ret;
}
