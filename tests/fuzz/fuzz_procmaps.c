// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/maps lines: each line through the line parser, and the whole
 * input as a maps file through the reader, whose callback checks what a
 * parsed line promises (the path lies inside the line, START <= END).
 */
#include "fuzz.h"

#include "proc/procmaps.h"

struct walk {
	size_t lines;
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

static void check(const struct bp_maps_line *l)
{
	if (!l->path || strlen(l->path) != l->path_len)
		abort();
}

static int each(const struct bp_maps_line *l, void *ctx)
{
	struct walk *w = ctx;

	check(l);
	w->lines++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path("maps");
	const uint8_t *p = data, *end = data + size, *nl;
	struct bp_maps_line l;
	struct walk w = {};
	size_t len, bad = 0;
	char *line;

	while (p < end) {
		nl = memchr(p, '\n', end - p);
		len = (nl ? nl + 1 : end) - p;
		line = malloc(len + 1);
		if (!line)
			abort();
		memcpy(line, p, len);
		line[len] = '\0';
		if (!bp_procmaps__parse_line(line, &l)) {
			check(&l);
			if (l.path < line || l.path + l.path_len > line + len)
				abort();
		}
		free(line);
		p = nl ? nl + 1 : end;
	}
	fuzz_write(path, data, size, false);
	bp_procmaps__read(path, each, &w, &bad);
	return 0;
}
