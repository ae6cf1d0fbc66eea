// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "export/folded.h"

struct line {
	const char *group;	/* the prefix frame, NULL without */
	const char *comm;
	uint32_t stack;
	uint32_t kind;
	uint64_t value;
	size_t off, len;	/* text of the line in the scratch buffer */
};

struct folder {
	const struct bp_profile *p;
	struct line *lines;
	uint32_t n, cap;
	struct bp_htab h;
	struct bp_buf text;
};

struct line_key {
	const char *group;
	const char *comm;
	uint32_t stack;
	uint32_t kind;
};

static bool line_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct folder *f = ctx;
	const struct line_key *k = key;

	return f->lines[idx].stack == k->stack && f->lines[idx].kind == k->kind &&
	       f->lines[idx].group == k->group && strcmp(f->lines[idx].comm, k->comm) == 0;
}

/* what a sample is worth in a view: samples, or microseconds */
static uint64_t sample_value(const struct bp_profile *p, const struct bp_sample *s,
			     enum bp_folded_view view)
{
	if (view == BP_VIEW_ONCPU)
		return s->kind == BP_KIND_ONCPU ? s->count : 0;
	if (s->kind == BP_KIND_ONCPU) {
		if (view != BP_VIEW_WALL)
			return 0;
		/* cpu-clock periods are CPU ns; a cycles period is not time */
		if (!p->pmu && s->ns)
			return (s->ns + 500) / 1000;
		return p->hz ? s->count * 1000000ULL / p->hz : 0;
	}
	return (s->ns + 500) / 1000;
}

/* ';' separates frames and a newline ends the line: neither may appear in a name */
static void put_sanitized(struct bp_buf *b, const char *s)
{
	for (; *s; s++)
		bp_buf_putc(b, *s == ';' ? ':' : (*s == '\n' || *s == '\r') ? ' ' : *s);
}

static int cmp_lines(const void *a, const void *b, void *ctx)
{
	const struct line *x = a, *y = b;
	const char *text = ctx;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(text + x->off, text + y->off, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

int bp_export_folded(const struct bp_profile *p, struct bp_buf *out)
{
	return bp_export_folded_view(p, BP_VIEW_ONCPU, out);
}

/* each process's group frame, "BY:NAME", made once */
struct group_names {
	char **name;		/* by index in p->procs */
	struct bp_htab h;	/* pid -> index */
};

static bool gn_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct bp_profile *)ctx)->procs[idx]->pid == *(const uint32_t *)key;
}

static int group_names(const struct bp_profile *p, enum bp_group_by by, struct group_names *g)
{
	char name[1100], frame[1200];
	uint32_t i;

	memset(g, 0, sizeof(*g));
	g->name = calloc(p->nr_procs + 1, sizeof(*g->name));
	if (!g->name)
		return -ENOMEM;
	for (i = 0; i < p->nr_procs; i++) {
		snprintf(frame, sizeof(frame), "%s:%s", bp_group_by_name(by),
			 bp_group_name(p->procs[i], by, name, sizeof(name)));
		g->name[i] = strdup(frame);
		if (!g->name[i] || bp_htab_insert(&g->h, bp_hash_u64(p->procs[i]->pid), i))
			return -ENOMEM;
	}
	return 0;
}

static const char *group_of_pid(const struct bp_profile *p, const struct group_names *g,
				uint32_t pid)
{
	static const char unknown[] = "?";
	uint32_t idx;

	if (bp_htab_find(&g->h, bp_hash_u64(pid), gn_eq, p, &pid, &idx))
		return unknown;
	return g->name[idx];
}

static void group_names_free(const struct bp_profile *p, struct group_names *g)
{
	uint32_t i;

	for (i = 0; g->name && i < p->nr_procs; i++)
		free(g->name[i]);
	free(g->name);
	bp_htab_free(&g->h);
}

int bp_export_folded_view(const struct bp_profile *p, enum bp_folded_view view,
			  struct bp_buf *out)
{
	return bp_export_folded_grouped(p, view, BP_GROUP_NONE, out);
}

int bp_export_folded_grouped(const struct bp_profile *p, enum bp_folded_view view,
			     enum bp_group_by by, struct bp_buf *out)
{
	struct folder f = { .p = p };
	struct group_names gn = {};
	char label[512];
	uint32_t i, j, nr, idx;
	int err = 0;

	if (by != BP_GROUP_NONE && group_names(p, by, &gn)) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		struct bp_proc *proc;
		uint64_t v = sample_value(p, s, view);
		struct line_key k;
		uint64_t h;

		if (!v)
			continue;
		proc = bp_profile__proc((struct bp_profile *)p, s->pid, false);
		k.comm = proc && proc->comm[0] ? proc->comm : "[unknown]";
		k.group = by != BP_GROUP_NONE ? group_of_pid(p, &gn, s->pid) : NULL;
		k.stack = s->stack;
		/* the on-CPU view has no class frame: all its samples are one kind */
		k.kind = view == BP_VIEW_ONCPU ? BP_KIND_ONCPU : s->kind;
		h = bp_hash_bytes(k.comm, strlen(k.comm), (uint64_t)k.kind << 32 | s->stack);
		if (k.group)
			h = bp_hash_bytes(k.group, strlen(k.group), h);
		if (bp_htab_find(&f.h, h, line_eq, &f, &k, &idx) == 0) {
			f.lines[idx].value += v;
			continue;
		}
		if (f.n == f.cap) {
			uint32_t ncap = f.cap ? f.cap * 2 : 256;
			struct line *nl = realloc(f.lines, ncap * sizeof(*nl));

			if (!nl) {
				err = -ENOMEM;
				goto out;
			}
			f.lines = nl;
			f.cap = ncap;
		}
		if (bp_htab_insert(&f.h, h, f.n)) {
			err = -ENOMEM;
			goto out;
		}
		f.lines[f.n++] = (struct line){ .group = k.group, .comm = k.comm, .stack = s->stack,
						.kind = k.kind, .value = v };
	}

	/* render each stack once, then sort the rendered lines */
	for (i = 0; i < f.n; i++) {
		const uint32_t *fr = bp_profile__stack_frames(p, f.lines[i].stack, &nr);

		f.lines[i].off = f.text.len;
		if (f.lines[i].group) {
			put_sanitized(&f.text, f.lines[i].group);
			bp_buf_putc(&f.text, ';');
		}
		put_sanitized(&f.text, f.lines[i].comm);
		if (view != BP_VIEW_ONCPU) {
			bp_buf_putc(&f.text, ';');
			bp_buf_puts(&f.text, bp_wclass(f.lines[i].kind)->frame);
		}
		for (j = 0; j < nr; j++) {
			bp_buf_putc(&f.text, ';');
			put_sanitized(&f.text, bp_frame_label(&p->frames[fr[j]], true, label,
							      sizeof(label)));
		}
		f.lines[i].len = f.text.len - f.lines[i].off;
	}
	if (f.text.err) {
		err = f.text.err;
		goto out;
	}
	if (f.n)
		qsort_r(f.lines, f.n, sizeof(*f.lines), cmp_lines, f.text.data);
	for (i = 0; i < f.n; i = j) {
		uint64_t value = f.lines[i].value;

		/* distinct stacks can render alike (one name in two files): merge */
		for (j = i + 1; j < f.n && !cmp_lines(&f.lines[i], &f.lines[j], f.text.data); j++)
			value += f.lines[j].value;
		bp_buf_append(out, f.text.data + f.lines[i].off, f.lines[i].len);
		bp_buf_printf(out, " %" PRIu64 "\n", value);
	}
	err = out->err;
out:
	group_names_free(p, &gn);
	free(f.lines);
	bp_htab_free(&f.h);
	bp_buf_free(&f.text);
	return err;
}
