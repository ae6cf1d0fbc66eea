// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
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
	int supported;
} formats[] = {
	/* longest suffix first: .offcpu.folded is not plain .folded */
	{ ".offcpu.folded", OUT_FOLDED_OFFCPU, 1 },
	{ ".wall.folded", OUT_FOLDED_WALL, 1 },
	{ ".folded", OUT_FOLDED, 1 },
	{ ".json", OUT_JSON, 1 },
	{ ".pb.gz", OUT_PPROF, 1 },
	{ ".svg", OUT_SVG, 1 },
	{ ".html", OUT_HTML, 1 },
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
		return formats[i].supported ? 0 : -ENOTSUP;
	}
	return -EINVAL;
}

int output_prepare(struct output *o)
{
	char *dcopy = strdup(o->path), *bcopy = strdup(o->path), *dir, *base;
	struct stat st;
	mode_t mask;
	int err = 0;

	o->fd = -1;
	o->tmp_path = NULL;
	if (!dcopy || !bcopy) {
		err = -ENOMEM;
		goto out;
	}
	if (stat(o->path, &st) == 0 && S_ISDIR(st.st_mode)) {
		cli_error("cannot write %s: it is a directory", o->path);
		err = -EISDIR;
		goto out;
	}
	dir = dirname(dcopy);
	base = basename(bcopy);
	if (asprintf(&o->tmp_path, "%s/.%s.XXXXXX", dir, base) < 0) {
		o->tmp_path = NULL;
		err = -ENOMEM;
		goto out;
	}
	o->fd = mkostemp(o->tmp_path, O_CLOEXEC);
	if (o->fd < 0) {
		err = -errno;
		cli_error("cannot write %s: %s", o->path, strerror(-err));
		free(o->tmp_path);
		o->tmp_path = NULL;
		goto out;
	}
	/* mkstemp makes 0600; a profile is an ordinary file */
	mask = umask(0);
	umask(mask);
	fchmod(o->fd, 0666 & ~mask);
out:
	free(dcopy);
	free(bcopy);
	return err;
}

int output_commit(struct output *o, const void *data, size_t len)
{
	const char *p = data;
	int err = 0;

	while (len) {
		ssize_t n = write(o->fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		p += n;
		len -= n;
	}
	if (!err && close(o->fd))
		err = -errno;
	else if (err)
		close(o->fd);
	o->fd = -1;
	if (!err && rename(o->tmp_path, o->path))
		err = -errno;
	if (err) {
		cli_error("cannot write %s: %s", o->path, strerror(-err));
		unlink(o->tmp_path);
	}
	free(o->tmp_path);
	o->tmp_path = NULL;
	return err;
}

void output_abort(struct output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp_path)
		unlink(o->tmp_path);
	free(o->tmp_path);
	o->tmp_path = NULL;
}

int cli_parse_output(const char *path, struct output *o)
{
	int err = output_format(path, &o->fmt);

	if (err == -ENOTSUP) {
		cli_error("output %s: this format is not available yet (use %s)", path,
			  output_extensions());
		return -EINVAL;
	}
	if (err) {
		cli_error("output %s: unknown format; the extension picks it: %s", path,
			  output_extensions());
		return -EINVAL;
	}
	o->path = path;
	o->fd = -1;
	o->tmp_path = NULL;
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
