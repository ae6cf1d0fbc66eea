// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"

static const struct {
	const char *ext;
	enum out_fmt fmt;
} formats[] = {
	/* longest suffix first: .offcpu.folded is not plain .folded */
	{ ".offcpu.folded", OUT_FOLDED_OFFCPU },
	{ ".wall.folded", OUT_FOLDED_WALL },
	{ ".folded", OUT_FOLDED },
	{ ".json", OUT_JSON },
	{ ".pb.gz", OUT_PPROF },
	{ ".svg", OUT_SVG },
	{ ".html", OUT_HTML },
};

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

const char *output_extensions(void)
{
	return ".folded, .offcpu.folded, .wall.folded, .json, .pb.gz, .svg, .html";
}

int output_format(const char *path, enum out_fmt *fmt)
{
	unsigned int i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!ends_with(path, formats[i].ext))
			continue;
		*fmt = formats[i].fmt;
		return 0;
	}
	return -EINVAL;
}

int output_prepare(struct output *o)
{
	/*
	 * 0600 whatever the umask, as perf makes perf.data: a profile names
	 * every process recorded, its command line and its functions
	 */
	int err = bp_afile_open(&o->file, AT_FDCWD, o->path, 0600);

	if (err == -EISDIR)
		cli_error("cannot write %s: it is a directory", o->path);
	else if (err)
		cli_error("cannot write %s: %s", o->path, strerror(-err));
	return err;
}

int output_commit(struct output *o, const void *data, size_t len)
{
	int err = bp_afile_commit(&o->file, data, len);

	if (err)
		cli_error("cannot write %s: %s", o->path, strerror(-err));
	return err;
}

void output_abort(struct output *o)
{
	bp_afile_abort(&o->file);
}

int cli_parse_output(const char *path, struct output *o)
{
	int err = output_format(path, &o->fmt);

	if (err) {
		cli_error("output %s: unknown format; the extension picks it: %s", path,
			  output_extensions());
		return -EINVAL;
	}
	o->path = path;
	o->file = (struct bp_afile)BP_AFILE_INIT;
	return 0;
}

int cli_add_output(struct output *outs, int *n, int max, const char *path)
{
	if (*n == max) {
		cli_error("too many -o outputs (at most %d)", max);
		return -EINVAL;
	}
	if (cli_parse_output(path, &outs[*n]))
		return -EINVAL;
	(*n)++;
	return 0;
}
