// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/kallsyms.h"
#include "util/hex.h"
#include "util/log.h"
#include "util/readfile.h"

/*
 * kallsyms has no sizes: a symbol runs to the next one. The last symbol of a
 * module (or of the whole table) would otherwise swallow everything up to the
 * next module, so it is capped; the biggest kernel functions are a few KiB.
 */
#define KSYM_LAST_MAX	(64 * 1024)

/*
 * What one kallsyms may cost: a name is at most KSYM_NAME_LEN (512) bytes, a
 * module name 56; kernels have a few hundred thousand symbols.
 */
#define KSYM_LINE_MAX	1024u
#define KSYM_LINES_MAX	(8u * 1024 * 1024)

enum {
	KSYM_END	= 1,	/* marks the end of a text region, not a function */
};

/*
 * A kernel built with function padding (CONFIG_CALL_PADDING, x86 since 6.2)
 * names the 16 bytes before every function "__pfx_<function>": half of
 * all text symbols (57,348 of 121,342 here) and half of the names' bytes.
 * Such an entry is folded into its function's: the function's name is
 * the tail of the "__pfx_" string (the bytes are stored once) and the
 * padding's length rides on the function's entry, so an address in the
 * padding still finds "__pfx_<function>" and every range ends where it did.
 */
#define PFX		"__pfx_"
#define PFX_LEN		6

struct ksym_ent {
	uint64_t addr;
	uint32_t name;		/* offset into names */
	uint16_t mod;		/* 0: core kernel, else index into mods */
	/* loading: which alias to keep at one address; loaded: the "__pfx_" bytes before it */
	uint8_t aux;
	uint8_t flags;
};

struct kmod {
	uint32_t name;
	uint64_t base;
};

struct bp_kallsyms {
	struct ksym_ent *syms;
	size_t nr, cap;
	struct kmod *mods;
	size_t nr_mods, cap_mods;
	char *names;
	size_t names_len, names_cap;
	/* the last name stored, when it began with "__pfx_": its function's may share it */
	uint32_t pfx_name, pfx_name_len;
	bool pfx_last;
	uint64_t kernel_base;
	uint64_t core_end;	/* past the last core-kernel symbol */
};

static bool warned_zero;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = reallocarray(*p, ncap, elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

static int add_name(struct bp_kallsyms *k, const char *s, size_t len, uint32_t *off)
{
	int err;

	if (k->names_len + len + 1 > UINT32_MAX)
		return -E2BIG;
	err = grow((void **)&k->names, &k->names_cap, k->names_len + len + 1, 1);
	if (err)
		return err;
	memcpy(k->names + k->names_len, s, len);
	k->names[k->names_len + len] = '\0';
	*off = (uint32_t)k->names_len;
	k->names_len += len + 1;
	return 0;
}

/* module lines come in runs, so the last one found is checked first */
static int find_mod(struct bp_kallsyms *k, const char *s, size_t len, uint16_t *idx)
{
	static const size_t none = (size_t)-1;
	size_t i, hit = none;
	int err;

	if (k->nr_mods > 1) {
		i = k->nr_mods - 1;
		if (!strncmp(k->names + k->mods[i].name, s, len) &&
		    !k->names[k->mods[i].name + len])
			hit = i;
	}
	for (i = 1; hit == none && i < k->nr_mods; i++)
		if (!strncmp(k->names + k->mods[i].name, s, len) &&
		    !k->names[k->mods[i].name + len])
			hit = i;
	if (hit == none) {
		if (k->nr_mods >= UINT16_MAX)
			return -E2BIG;
		err = grow((void **)&k->mods, &k->cap_mods, k->nr_mods + 1, sizeof(*k->mods));
		if (err)
			return err;
		hit = k->nr_mods++;
		k->mods[hit].base = UINT64_MAX;
		err = add_name(k, s, len, &k->mods[hit].name);
		if (err)
			return err;
	}
	*idx = (uint16_t)hit;
	return 0;
}

static int type_rank(char t)
{
	switch (t) {
	case 'T': return 3;
	case 'W': case 'w': return 2;
	case 't': return 1;
	default: return -1;
	}
}

static bool is_end_marker(const char *name, size_t len)
{
	static const char *const ends[] = { "_etext", "_einittext", "_end" };
	size_t i;

	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (strlen(ends[i]) == len && !memcmp(ends[i], name, len))
			return true;
	return false;
}


/* 1: a text symbol was added, 0: line skipped, <0: -errno */
static int parse_line(struct bp_kallsyms *k, const char *p, uint64_t *text, uint64_t *stext)
{
	const char *name, *mod = NULL;
	size_t name_len, mod_len = 0;
	struct ksym_ent *e;
	uint64_t addr = 0;
	int rank, err;
	uint16_t mod_idx = 0;

	if (bp_parse_hex(&p, &addr) || p[0] != ' ' || !p[1] || p[2] != ' ')
		return 0;
	rank = type_rank(p[1]);
	if (rank < 0)
		return 0;
	name = p + 3;
	name_len = strcspn(name, " \t\n");
	if (!name_len)
		return 0;
	p = name + name_len;
	p += strspn(p, " \t");
	if (*p == '[') {
		mod = p + 1;
		mod_len = strcspn(mod, "]\n");
		if (mod[mod_len] != ']' || !mod_len)
			return 0;
	}

	if (mod) {
		err = find_mod(k, mod, mod_len, &mod_idx);
		if (err)
			return err;
	}
	err = grow((void **)&k->syms, &k->cap, k->nr + 1, sizeof(*k->syms));
	if (err)
		return err;
	e = &k->syms[k->nr];
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	e->mod = mod_idx;
	e->aux = (uint8_t)rank;
	if (!mod && is_end_marker(name, name_len)) {
		e->aux = 0;
		e->flags = KSYM_END;
	}
	if (k->pfx_last && k->pfx_name_len == name_len + PFX_LEN &&
	    !memcmp(k->names + k->pfx_name + PFX_LEN, name, name_len)) {
		/* "__pfx_foo" then "foo", as the kernel lists them: one copy */
		e->name = k->pfx_name + PFX_LEN;
		k->pfx_last = false;
	} else {
		err = add_name(k, name, name_len, &e->name);
		if (err)
			return err;
		k->pfx_last = name_len > PFX_LEN && !memcmp(name, PFX, PFX_LEN);
		k->pfx_name = e->name;
		k->pfx_name_len = (uint32_t)name_len;
	}
	k->nr++;

	if (!mod && name_len == 5 && !memcmp(name, "_text", 5))
		*text = addr;
	if (!mod && name_len == 6 && !memcmp(name, "_stext", 6))
		*stext = addr;
	return 1;
}

static size_t leading_underscores(const char *s)
{
	return strspn(s, "_");
}

/* by address; at one address the preferred alias sorts first */
static int cmp_ent(const void *a, const void *b, void *arg)
{
	const struct ksym_ent *x = a, *y = b;
	const char *names = arg;
	const char *nx = names + x->name, *ny = names + y->name;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->aux != y->aux)
		return x->aux > y->aux ? -1 : 1;
	ux = leading_underscores(nx);
	uy = leading_underscores(ny);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(nx);
	ly = strlen(ny);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(nx, ny);
}

/*
 * "__pfx_foo" right before "foo" in one module becomes foo's aux bytes, its
 * name foo's (see PFX). Sorted and deduplicated entries in, fewer out; the
 * arrays shrink to what is left.
 */
static void fold_pfx(struct bp_kallsyms *k)
{
	size_t i, j;
	void *p;

	for (i = 0; i < k->nr; i++)
		k->syms[i].aux = 0;
	for (i = 0, j = 0; i < k->nr; i++) {
		struct ksym_ent *e = &k->syms[i], *n = i + 1 < k->nr ? e + 1 : NULL;
		const char *name = k->names + e->name;

		if (n && !e->flags && !n->flags && n->mod == e->mod && n->addr > e->addr &&
		    n->addr - e->addr <= UINT8_MAX && !strncmp(name, PFX, PFX_LEN) &&
		    !strcmp(name + PFX_LEN, k->names + n->name)) {
			n->aux = (uint8_t)(n->addr - e->addr);
			n->name = e->name + PFX_LEN;
			continue;
		}
		k->syms[j++] = *e;
	}
	k->nr = j;
	p = realloc(k->syms, (k->nr ? k->nr : 1) * sizeof(*k->syms));
	if (p) {
		k->syms = p;
		k->cap = k->nr;
	}
	p = realloc(k->names, k->names_len ? k->names_len : 1);
	if (p) {
		k->names = p;
		k->names_cap = k->names_len;
	}
}

static void finish(struct bp_kallsyms *k, uint64_t text, uint64_t stext)
{
	uint64_t core_min = UINT64_MAX;
	size_t i, j;

	/* the kernel lists its own symbols in address order: sorted already, most often */
	for (i = 1; i < k->nr; i++)
		if (cmp_ent(&k->syms[i - 1], &k->syms[i], k->names) > 0)
			break;
	if (i < k->nr)
		qsort_r(k->syms, k->nr, sizeof(*k->syms), cmp_ent, k->names);
	for (i = 0, j = 0; i < k->nr; i++) {
		if (j && k->syms[j - 1].addr == k->syms[i].addr)
			continue;
		k->syms[j++] = k->syms[i];
	}
	k->nr = j;
	fold_pfx(k);

	for (i = 0; i < k->nr; i++) {
		const struct ksym_ent *e = &k->syms[i];

		if (!e->mod && (e->flags & KSYM_END) && e->addr >= k->core_end)
			k->core_end = e->addr + 1;
		if (e->flags & KSYM_END)
			continue;
		/* a folded "__pfx_" symbol starts where it did */
		if (!e->mod) {
			if (e->addr - e->aux < core_min)
				core_min = e->addr - e->aux;
			if (e->addr >= k->core_end)
				k->core_end = e->addr + 1;
		} else if (e->addr - e->aux < k->mods[e->mod].base) {
			k->mods[e->mod].base = e->addr - e->aux;
		}
	}
	if (text != UINT64_MAX)
		k->kernel_base = text;
	else if (stext != UINT64_MAX)
		k->kernel_base = stext;
	else
		k->kernel_base = core_min == UINT64_MAX ? 0 : core_min;
}

struct load_ctx {
	struct bp_kallsyms *k;
	uint64_t text, stext;
	bool nonzero;
};

static int load_line(char *line, size_t len, void *ctx)
{
	struct load_ctx *lc = ctx;
	int err = parse_line(lc->k, line, &lc->text, &lc->stext);

	if (err < 0)
		return err;
	if (err > 0 && lc->k->syms[lc->k->nr - 1].addr)
		lc->nonzero = true;
	return 0;
}

int bp_kallsyms__load(const char *path, struct bp_kallsyms **out)
{
	struct load_ctx lc = { .text = UINT64_MAX, .stext = UINT64_MAX };
	struct bp_lines lr = {
		.max_line = KSYM_LINE_MAX,
		.max_lines = KSYM_LINES_MAX,
	};
	struct bp_kallsyms *k;
	int fd, err = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		bp_warn("failed to open %s: %s", path, strerror(-err));
		return err;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return -ENOMEM;
	}
	lc.k = k;
	/* slot 0 of mods is the core kernel, so module indexes are never 0 */
	err = grow((void **)&k->mods, &k->cap_mods, 1, sizeof(*k->mods));
	if (err)
		goto out;
	k->nr_mods = 1;
	k->mods[0].base = 0;
	err = add_name(k, "", 0, &k->mods[0].name);
	if (err)
		goto out;

	err = bp_read_lines(fd, &lr, load_line, &lc);
	if (err) {
		bp_warn("failed to read %s: %s", path, strerror(-err));
		goto out;
	}
	if (lr.truncated)
		bp_warn("%s: more than %u lines, the rest is ignored", path, KSYM_LINES_MAX);
	if (lr.too_long)
		bp_dbg("%s: %llu lines longer than %u bytes skipped", path,
		       (unsigned long long)lr.too_long, KSYM_LINE_MAX);
	if (!k->nr) {
		err = -ENOENT;
		bp_warn("no text symbols in %s", path);
		goto out;
	}
	if (!lc.nonzero) {
		err = -EPERM;
		if (!warned_zero) {
			warned_zero = true;
			bp_warn("%s shows only zero addresses (kernel.kptr_restrict); "
				"kernel frames stay unnamed", path);
		}
		goto out;
	}
	finish(k, lc.text, lc.stext);
	bp_dbg("kallsyms: %zu symbols, %zu modules", k->nr, k->nr_mods - 1);
out:
	close(fd);
	if (err) {
		bp_kallsyms__free(k);
		return err;
	}
	*out = k;
	return 0;
}

void bp_kallsyms__free(struct bp_kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->mods);
	free(k->names);
	free(k);
}

int bp_kallsyms__find(const struct bp_kallsyms *k, uint64_t addr, struct bp_ksym *out)
{
	const struct ksym_ent *e;
	size_t lo = 0, hi = k->nr;

	/* last entry with e->addr <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the padding before the next function is that function's "__pfx_" symbol */
	if (lo < k->nr && k->syms[lo].aux && addr >= k->syms[lo].addr - k->syms[lo].aux) {
		e = &k->syms[lo];
		out->addr = e->addr - e->aux;
		out->name = k->names + e->name - PFX_LEN;
		goto found;
	}
	if (!lo)
		return -ENOENT;
	e = &k->syms[lo - 1];
	if (e->flags & KSYM_END)
		return -ENOENT;
	if ((lo == k->nr || k->syms[lo].mod != e->mod) && addr - e->addr >= KSYM_LAST_MAX)
		return -ENOENT;

	out->addr = e->addr;
	out->name = k->names + e->name;
found:
	if (e->mod) {
		out->module = k->names + k->mods[e->mod].name;
		out->base = k->mods[e->mod].base;
	} else {
		out->module = NULL;
		out->base = k->kernel_base;
	}
	return 0;
}

/* where symbol i ends: the next core symbol, or a bounded guess after the last */
static uint64_t sym_end(const struct bp_kallsyms *k, size_t i)
{
	uint64_t a = k->syms[i].addr;

	if (i + 1 < k->nr && !k->syms[i + 1].mod)
		return k->syms[i + 1].addr - k->syms[i + 1].aux;
	return a > UINT64_MAX - KSYM_LAST_MAX ? UINT64_MAX : a + KSYM_LAST_MAX;
}

size_t bp_kallsyms__ranges(const struct bp_kallsyms *k, const char *base, uint64_t *start,
			   uint64_t *end, size_t max)
{
	size_t i, n = 0, len = strlen(base);

	for (i = 0; i < k->nr; i++) {
		const struct ksym_ent *e = &k->syms[i];
		const char *name = k->names + e->name;

		if (e->mod || (e->flags & KSYM_END) || strncmp(name, base, len) ||
		    (name[len] && name[len] != '.'))
			continue;
		if (n < max) {
			start[n] = e->addr;
			end[n] = sym_end(k, i);
		}
		n++;
	}
	return n;
}

/* the first two bytes (the terminator for a one-letter string, none after it) */
static unsigned int two_chars(const char *s)
{
	return s[0] ? (uint8_t)s[0] | (unsigned int)(uint8_t)s[1] << 8 : 0;
}

void bp_kallsyms__ranges_each(const struct bp_kallsyms *k, const char *const *names, size_t n,
			      bp_ksym_range_fn fn, void *ctx)
{
	/* the first two bytes of every name: all but a few symbols stop there */
	uint8_t seen[65536 / 8] = { 0 };
	size_t i, j, lens[256];

	if (n > sizeof(lens) / sizeof(lens[0]))
		n = sizeof(lens) / sizeof(lens[0]);
	for (j = 0; j < n; j++) {
		unsigned int v = two_chars(names[j]);

		lens[j] = strlen(names[j]);
		seen[v >> 3] |= 1 << (v & 7);
		/* a one-letter name's clones ("x.isra.0") */
		if (names[j][0] && !names[j][1]) {
			v = (uint8_t)names[j][0] | '.' << 8;
			seen[v >> 3] |= 1 << (v & 7);
		}
	}
	for (i = 0; i < k->nr; i++) {
		const struct ksym_ent *e = &k->syms[i];
		const char *name = k->names + e->name;
		unsigned int v;
		size_t len;

		if (e->mod || (e->flags & KSYM_END) || !name[0])
			continue;
		v = two_chars(name);
		if (!(seen[v >> 3] & (1 << (v & 7))))
			continue;
		len = strcspn(name, ".");
		/* "__" starts a third of all symbols: the length sorts them first */
		for (j = 0; j < n; j++)
			if (lens[j] == len && !memcmp(names[j], name, len))
				fn(ctx, j, e->addr, sym_end(k, i));
	}
}

int bp_kallsyms__core_offset(const struct bp_kallsyms *k, uint64_t addr, uint64_t *off)
{
	if (!k->kernel_base || addr < k->kernel_base || addr >= k->core_end)
		return -ENOENT;
	*off = addr - k->kernel_base;
	return 0;
}

size_t bp_kallsyms__count(const struct bp_kallsyms *k)
{
	return k->nr;
}
