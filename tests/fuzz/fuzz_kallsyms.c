// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kallsyms as the input: loaded, then searched at addresses and by
 * names taken from the input itself.
 */
#include "fuzz.h"

#include "symbolize/kallsyms.h"
#include "util/hex.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_init();
	return 0;
}

/* the hex number at p, as a kallsyms line starts */
static uint64_t hex_at(const uint8_t *p, const uint8_t *end)
{
	uint64_t v = 0;
	int d;

	for (; p < end && (d = bp_hexval(*p)) >= 0; p++)
		v = v << 4 | d;
	return v;
}

struct each {
	uint64_t start[4], stop[4];
	size_t n, other;
};

/* names[1]'s ranges; names[0] is "", which no symbol is */
static void each_range(void *ctx, size_t which, uint64_t start, uint64_t stop)
{
	struct each *e = ctx;

	if (which != 1) {
		e->other++;
		return;
	}
	if (e->n < 4) {
		e->start[e->n] = start;
		e->stop[e->n] = stop;
	}
	e->n++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_path("kallsyms");
	uint64_t seed = fuzz_seed(data, size), start[4], stop[4], addr;
	const uint8_t *end = data + size;
	struct bp_kallsyms *k;
	struct bp_ksym sym;
	char name[64];
	size_t i, at, n;

	fuzz_write(path, data, size, false);
	if (bp_kallsyms__load(path, &k))
		return 0;
	for (i = 0; i < 16 && size; i++) {
		at = fuzz_rand(&seed) % size;
		addr = hex_at(data + at, end) + (i & 3);
		if (!bp_kallsyms__find(k, addr, &sym)) {
			if (!sym.name || sym.addr > addr)
				abort();
			(void)strlen(sym.name);
			if (sym.module)
				(void)strlen(sym.module);
			n = strlen(sym.name);
			if (n >= sizeof(name))
				n = sizeof(name) - 1;
			memcpy(name, sym.name, n);
			name[n] = '\0';
			/* cut at a '.' sometimes: the base of a .constprop clone */
			if ((i & 1) && strchr(name, '.'))
				*strchr(name, '.') = '\0';
			n = bp_kallsyms__ranges(k, name, start, stop, 4);
			for (at = 0; at < n && at < 4; at++)
				if (start[at] > stop[at])
					abort();
			/* the one-pass lookup finds the same, for a base name */
			if (name[0] && !strchr(name, '.')) {
				const char *names[2] = { "", name };
				struct each e = { .n = 0 };

				bp_kallsyms__ranges_each(k, names, 2, each_range, &e);
				if (e.n != n || e.other)
					abort();
				for (at = 0; at < n && at < 4; at++)
					if (e.start[at] != start[at] || e.stop[at] != stop[at])
						abort();
			}
		}
	}
	(void)bp_kallsyms__count(k);
	bp_kallsyms__free(k);
	return 0;
}
