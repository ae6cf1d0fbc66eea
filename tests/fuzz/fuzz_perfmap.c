// SPDX-License-Identifier: GPL-2.0
/*
 * JIT perf maps (/tmp/perf-PID.map): each line through the line parser,
 * and the whole input as a file read twice, as a JIT writes it: a first
 * part, then the rest appended (read from where the last read stopped).
 * Lookups at addresses the lines name.
 */
#include "fuzz.h"

#include "symbolize/perfmap.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path("perf-1.map");
	uint64_t seed = fuzz_seed(data, size), addr, len;
	const struct bp_perfmap_sym *sym;
	struct bp_perfmap *pm;
	const uint8_t *p = data, *end = data + size, *nl;
	const char *name;
	char *line;
	size_t cut;
	int i;

	/* the line parser alone, on a NUL-terminated copy of each line */
	while (p < end) {
		nl = memchr(p, '\n', end - p);
		len = (nl ? nl + 1 : end) - p;
		line = malloc(len + 1);
		if (!line)
			abort();
		memcpy(line, p, len);
		line[len] = '\0';
		if (!bp_perfmap__parse_line(line, &addr, &len, &name))
			(void)strlen(name);
		free(line);
		p = nl ? nl + 1 : end;
	}

	pm = bp_perfmap__new();
	if (!pm)
		abort();
	cut = size ? fuzz_rand(&seed) % (size + 1) : 0;
	fuzz_write(path, data, cut, false);
	bp_perfmap__update(pm, path);
	fuzz_write(path, data + cut, size - cut, true);
	bp_perfmap__update(pm, path);
	for (i = 0; i < 16 && size >= 8; i++) {
		memcpy(&addr, data + fuzz_rand(&seed) % (size - 7), 8);
		sym = bp_perfmap__find(pm, addr);
		if (sym && (addr < sym->addr || !sym->name))
			abort();
		if (sym)
			(void)strlen(sym->name);
	}
	(void)bp_perfmap__count(pm);
	bp_perfmap__free(pm);
	return 0;
}
