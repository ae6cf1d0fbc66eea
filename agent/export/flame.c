// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs. C builds one tree, the wall-clock one (root -> "comm [pid]"
 * -> wait class -> frames, root first), with two values per node: on-CPU
 * samples and microseconds. Every view derives from it in the page: on-CPU
 * hoists the [on-cpu] subtrees and counts samples, off-CPU drops them, wall
 * keeps all; so each stack is written once however many views show it.
 *
 * The data is one JSON document inside the file. The tree goes out in
 * preorder as columns (name, child count, self values), each a string of
 * variable-length base-32 numbers: names repeat thousands of times, most
 * nodes have one child and a zero self value, so a node costs 3-4 bytes
 * instead of an object (100k distinct stacks: docs/flamegraph.md). The
 * renderer (flame.js, flame.css, embedded through flame_assets.c) reads it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/flame.h"
#include "analyze/pipeline.h"
#include "export/folded.h"
#include "export/flame_assets.h"
#include "util/json.h"

#define FLAME_DATA_VERSION	1

/* one character per name in the "types" string; flame.js reads the same digits */
enum name_type {
	NT_FRAME = 0,
	NT_KERNEL,
	NT_PROC,
	NT_CLASS,
	NT_ROOT,
};

struct names {
	struct bp_buf text;	/* the strings, each NUL-terminated */
	uint64_t *off;		/* name i starts at text.data + off[i] */
	uint8_t *type;
	uint32_t *module;	/* index into the module names, or MODULE_NONE/SEVERAL */
	uint32_t nr, cap;
	struct bp_htab h;
};

#define MODULE_NONE	UINT32_MAX
#define MODULE_SEVERAL	(UINT32_MAX - 1)

struct name_key {
	const char *s;
	uint8_t type;
};

struct tnode {
	uint32_t name;
	uint32_t parent;
	uint32_t child;		/* first child; 0: none (the root is never a child) */
	uint32_t next;		/* next sibling; 0: none */
	uint64_t count;		/* on-CPU samples with this node as the leaf */
	uint64_t us;		/* wall-clock microseconds with this node as the leaf */
};

struct tree {
	struct tnode *n;
	uint32_t nr, cap;
	struct bp_htab h;	/* (parent, name) -> node */
};

struct flame {
	struct names names;
	struct names modules;	/* module of each frame name, for tooltips */
	uint32_t class_name[BP_KIND__MAX];
	struct tree t[2];	/* the profile, or AFTER and BEFORE for a diff */
	uint32_t *order;	/* preorder of t[0], children by name */
	uint32_t *nchild;	/* children per node of t[0] */
	uint64_t *before;	/* diff: BEFORE's inclusive us on each node's path */
	uint32_t *uses;		/* nodes of t[0] per name */
	uint32_t *rank;		/* name -> its index in the output */
	uint32_t *ranked;	/* the names t[0] uses, in output order */
	uint32_t nr_ranked;
	bool diff;		/* processes by name alone */
};

static const char *const view_name[] = {
	[BP_VIEW_ONCPU] = "on",
	[BP_VIEW_OFFCPU] = "off",
	[BP_VIEW_WALL] = "wall",
};

/* ------------------------------------------------------------------ names */

static const char *name_str(const struct names *nm, uint32_t i)
{
	return nm->text.data + nm->off[i];
}

static bool name_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct names *nm = ctx;
	const struct name_key *k = key;

	return nm->type[idx] == k->type && strcmp(name_str(nm, idx), k->s) == 0;
}

/* the index of (s, type), added when new; <0: -ENOMEM */
static int64_t name_id(struct names *nm, const char *s, uint8_t type)
{
	struct name_key k = { .s = s, .type = type };
	size_t len = strlen(s);
	uint64_t h = bp_hash_bytes(s, len, type);
	uint32_t idx;

	if (bp_htab_find(&nm->h, h, name_eq, nm, &k, &idx) == 0)
		return idx;
	if (nm->nr == nm->cap) {
		uint32_t ncap = nm->cap ? nm->cap * 2 : 256;
		uint64_t *noff = realloc(nm->off, ncap * sizeof(*noff));
		uint8_t *ntype;
		uint32_t *nmod;

		if (!noff)
			return -ENOMEM;
		nm->off = noff;
		ntype = realloc(nm->type, ncap * sizeof(*ntype));
		if (!ntype)
			return -ENOMEM;
		nm->type = ntype;
		nmod = realloc(nm->module, ncap * sizeof(*nmod));
		if (!nmod)
			return -ENOMEM;
		nm->module = nmod;
		nm->cap = ncap;
	}
	nm->off[nm->nr] = nm->text.len;
	bp_buf_append(&nm->text, s, len + 1);
	if (nm->text.err)
		return nm->text.err;
	if (bp_htab_insert(&nm->h, h, nm->nr))
		return -ENOMEM;
	nm->type[nm->nr] = type;
	nm->module[nm->nr] = MODULE_NONE;
	return nm->nr++;
}

static void names_free(struct names *nm)
{
	bp_buf_free(&nm->text);
	free(nm->off);
	free(nm->type);
	free(nm->module);
	bp_htab_free(&nm->h);
}

/* ------------------------------------------------------------------ trees */

struct child_key {
	uint32_t parent;
	uint32_t name;
};

static bool child_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct tree *t = ctx;
	const struct child_key *k = key;

	return t->n[idx].parent == k->parent && t->n[idx].name == k->name;
}

static uint64_t child_hash(uint32_t parent, uint32_t name)
{
	return bp_hash_u64((uint64_t)parent << 32 | name);
}

/* the child of parent with this name, or UINT32_MAX */
static uint32_t tree_find(const struct tree *t, uint32_t parent, uint32_t name)
{
	struct child_key k = { parent, name };
	uint32_t idx;

	if (bp_htab_find(&t->h, child_hash(parent, name), child_eq, t, &k, &idx))
		return UINT32_MAX;
	return idx;
}

/* the child of parent with this name, added when new; <0: -ENOMEM */
static int64_t tree_child(struct tree *t, uint32_t parent, uint32_t name)
{
	uint32_t idx = tree_find(t, parent, name);
	struct tnode *n;

	if (idx != UINT32_MAX)
		return idx;
	if (t->nr == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 1024;
		struct tnode *nn;

		if (ncap <= t->cap)
			return -ENOMEM;
		nn = realloc(t->n, (size_t)ncap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		t->n = nn;
		t->cap = ncap;
	}
	if (bp_htab_insert(&t->h, child_hash(parent, name), t->nr))
		return -ENOMEM;
	n = &t->n[t->nr];
	*n = (struct tnode){ .name = name, .parent = parent, .next = t->n[parent].child };
	t->n[parent].child = t->nr;
	return t->nr++;
}

static void tree_free(struct tree *t)
{
	free(t->n);
	bp_htab_free(&t->h);
}

/* what a sample adds to the wall and off-CPU views: us, as the folded views count it */
static uint64_t sample_us(const struct bp_profile *p, const struct bp_sample *s)
{
	if (s->kind == BP_KIND_ONCPU) {
		/* cpu-clock periods are CPU ns; a cycles period is not time */
		if (!p->pmu && s->ns)
			return (s->ns + 500) / 1000;
		return p->hz > 0 ? s->count * 1000000ULL / p->hz : 0;
	}
	return (s->ns + 500) / 1000;
}

static int frame_name(struct flame *fl, const struct bp_frame *f)
{
	char label[512];
	char full[520];
	int64_t id, mod;

	bp_frame_label(f, false, label, sizeof(label));
	/* " [k]" rather than folded's "_[k]": it reads as a mark, not part of the name */
	snprintf(full, sizeof(full), "%s%s", label, f->kernel ? " [k]" : "");
	id = name_id(&fl->names, full, f->kernel ? NT_KERNEL : NT_FRAME);
	if (id < 0)
		return id;
	/* unnamed frames carry their module in the label already */
	if (!f->name || !f->module || fl->names.module[id] == MODULE_SEVERAL)
		return id;
	mod = name_id(&fl->modules, f->module, NT_FRAME);
	if (mod < 0)
		return mod;
	/* one label from two modules ("main" of two programs): name neither */
	if (fl->names.module[id] == MODULE_NONE)
		fl->names.module[id] = mod;
	else if (fl->names.module[id] != mod)
		fl->names.module[id] = MODULE_SEVERAL;
	return id;
}

/*
 * "comm [pid]"; in a diff just "comm": two recordings never share pids, and
 * the processes of a program must line up to be compared.
 */
static int proc_name(struct flame *fl, const struct bp_profile *p, uint32_t pid)
{
	const struct bp_proc *proc = bp_profile__proc((struct bp_profile *)p, pid, false);
	const char *comm = proc && proc->comm[0] ? proc->comm : "[unknown]";
	char label[64];

	if (fl->diff)
		snprintf(label, sizeof(label), "%s", comm);
	else
		snprintf(label, sizeof(label), "%s [%" PRIu32 "]", comm, pid);
	return name_id(&fl->names, label, NT_PROC);
}

/* every sample of p into t: root -> process -> class -> frames */
static int tree_add_profile(struct flame *fl, struct tree *t, const struct bp_profile *p)
{
	uint32_t *fname = NULL, i, j, nr, last_pid = 0, pname = 0;
	bool have_pname = false;
	int64_t node;
	int err = 0;

	if (p->nr_frames) {
		fname = malloc(p->nr_frames * sizeof(*fname));
		if (!fname)
			return -ENOMEM;
		/* label each frame once: samples share frames by the thousand */
		for (i = 0; i < p->nr_frames; i++) {
			int id = frame_name(fl, &p->frames[i]);

			if (id < 0) {
				err = id;
				goto out;
			}
			fname[i] = id;
		}
	}
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		uint64_t us = sample_us(p, s), count = s->kind == BP_KIND_ONCPU ? s->count : 0;
		const uint32_t *fr;
		int id;

		if (!us && !count)
			continue;
		if (!have_pname || s->pid != last_pid) {
			id = proc_name(fl, p, s->pid);
			if (id < 0) {
				err = id;
				goto out;
			}
			pname = id;
			last_pid = s->pid;
			have_pname = true;
		}
		node = tree_child(t, 0, pname);
		if (node >= 0)
			node = tree_child(t, node, fl->class_name[s->kind < BP_KIND__MAX ?
								  s->kind : BP_KIND_OTHER]);
		fr = bp_profile__stack_frames(p, s->stack, &nr);
		for (j = 0; j < nr && node >= 0; j++)
			node = tree_child(t, node, fname[fr[j]]);
		if (node < 0) {
			err = node;
			goto out;
		}
		t->n[node].count += count;
		t->n[node].us += us;
	}
out:
	free(fname);
	return err;
}

static int tree_init(struct flame *fl, struct tree *t)
{
	int64_t root = name_id(&fl->names, "all", NT_ROOT);

	if (root < 0)
		return root;
	t->n = calloc(1024, sizeof(*t->n));
	if (!t->n)
		return -ENOMEM;
	t->cap = 1024;
	t->nr = 1;
	t->n[0].name = root;
	return 0;
}

static int flame_init(struct flame *fl, int ntrees)
{
	int i, err;

	memset(fl, 0, sizeof(*fl));
	for (i = 0; i < BP_KIND__MAX; i++) {
		int64_t id = name_id(&fl->names, bp_wait_classes[i].frame, NT_CLASS);

		if (id < 0)
			return id;
		fl->class_name[i] = id;
	}
	for (i = 0; i < ntrees; i++) {
		err = tree_init(fl, &fl->t[i]);
		if (err)
			return err;
	}
	return 0;
}

static void flame_free(struct flame *fl)
{
	names_free(&fl->names);
	names_free(&fl->modules);
	tree_free(&fl->t[0]);
	tree_free(&fl->t[1]);
	free(fl->order);
	free(fl->nchild);
	free(fl->before);
	free(fl->uses);
	free(fl->rank);
	free(fl->ranked);
}

static int cmp_children(const void *a, const void *b, void *ctx)
{
	const struct flame *fl = ctx;
	const struct tnode *n = fl->t[0].n;
	uint32_t x = n[*(const uint32_t *)a].name, y = n[*(const uint32_t *)b].name;
	int c = strcmp(name_str(&fl->names, x), name_str(&fl->names, y));

	/* a kernel and a user frame may share a label; keep the order stable */
	if (c)
		return c;
	return fl->names.type[x] - fl->names.type[y];
}

/*
 * Preorder of t[0] with siblings sorted by name, as flamegraph.pl sorts them,
 * so equal profiles give equal files and a diff lines up.
 */
static int tree_order(struct flame *fl)
{
	const struct tree *t = &fl->t[0];
	uint32_t *stack, *kids = NULL, sp = 0, n = 0, i, c, nk;
	int err = 0;

	fl->order = malloc(t->nr * sizeof(*fl->order));
	fl->nchild = calloc(t->nr, sizeof(*fl->nchild));
	stack = malloc(t->nr * sizeof(*stack));
	if (!fl->order || !fl->nchild || !stack) {
		err = -ENOMEM;
		goto out;
	}
	stack[sp++] = 0;
	while (sp) {
		i = stack[--sp];
		fl->order[n++] = i;
		nk = 0;
		for (c = t->n[i].child; c; c = t->n[c].next)
			nk++;
		fl->nchild[i] = nk;
		if (!nk)
			continue;
		/* the children go onto the stack, which has room: each node is pushed once */
		kids = stack + sp;
		nk = 0;
		for (c = t->n[i].child; c; c = t->n[c].next)
			kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), cmp_children, fl);
		/* reversed, so the first by name is popped first */
		for (c = 0; c < nk / 2; c++) {
			uint32_t tmp = kids[c];

			kids[c] = kids[nk - 1 - c];
			kids[nk - 1 - c] = tmp;
		}
		sp += nk;
	}
out:
	free(stack);
	return err;
}

/* diff: BEFORE's inclusive us for each AFTER node, matched by the path of names */
static int tree_match_before(struct flame *fl)
{
	const struct tree *a = &fl->t[0], *b = &fl->t[1];
	uint64_t *tot = calloc(b->nr, sizeof(*tot));
	uint32_t *match = malloc(a->nr * sizeof(*match));
	uint32_t i;
	int err = 0;

	fl->before = calloc(a->nr, sizeof(*fl->before));
	if (!tot || !match || !fl->before) {
		err = -ENOMEM;
		goto out;
	}
	/* a child always has a higher index than its parent */
	for (i = b->nr; i-- > 0;) {
		tot[i] += b->n[i].us;
		if (i)
			tot[b->n[i].parent] += tot[i];
	}
	match[0] = 0;
	for (i = 0; i < a->nr; i++) {
		if (i) {
			uint32_t pm = match[a->n[i].parent];

			match[i] = pm == UINT32_MAX ? UINT32_MAX : tree_find(b, pm, a->n[i].name);
		}
		fl->before[i] = match[i] == UINT32_MAX ? 0 : tot[match[i]];
	}
out:
	free(tot);
	free(match);
	return err;
}

/* ------------------------------------------------------------------ output */

static void put_lines(struct bp_json_w *w, const char *key, const char *const *lines,
		      uint32_t n)
{
	uint32_t i;

	bp_json_w_key(w, key);
	bp_json_w_begin_array(w);
	for (i = 0; i < n && i < BP_VERDICT_LINES; i++)
		bp_json_w_string(w, lines[i]);
	bp_json_w_end_array(w);
}

static void put_verdict(struct bp_json_w *w, const struct bp_verdict *v)
{
	bp_json_w_kv_string(w, "class", bp_class_name(v->cls));
	bp_json_w_kv_string(w, "confidence", bp_confidence_name(v->conf));
	if (v->second != BP_CLASS_UNKNOWN && v->second != v->cls)
		bp_json_w_kv_string(w, "second", bp_class_name(v->second));
	put_lines(w, "evidence", v->evidence, v->nr_evidence);
	put_lines(w, "levers", v->levers, v->nr_levers);
}

static void put_hsl(struct bp_json_w *w, const char *key, const uint16_t *hsl)
{
	int i;

	bp_json_w_key(w, key);
	bp_json_w_begin_array(w);
	for (i = 0; i < 4; i++)
		bp_json_w_uint64(w, hsl[i]);
	bp_json_w_end_array(w);
}

/* the wait classes, by enum bp_kind: flame.js has no list of its own */
static void put_classes(struct bp_json_w *w)
{
	int k;

	bp_json_w_key(w, "classes");
	bp_json_w_begin_array(w);
	for (k = 0; k < BP_KIND__MAX; k++) {
		const struct bp_wait_class *c = &bp_wait_classes[k];

		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "frame", c->frame);
		bp_json_w_kv_string(w, "text", c->text);
		put_hsl(w, "user", c->user);
		put_hsl(w, "kernel", c->kernel);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

static void put_header(struct bp_json_w *w, const struct bp_profile *p,
		       const struct bp_summary *s)
{
	uint64_t samples = 0, ns = 0;
	uint32_t i;
	char label[64];

	for (i = 0; i < p->nr_samples; i++) {
		if (p->samples[i].kind != BP_KIND_ONCPU)
			continue;
		samples += p->samples[i].count;
		ns += p->samples[i].ns;
	}
	bp_json_w_key(w, "meta");
	bp_json_w_begin_object(w);
	bp_json_w_kv_double(w, "duration_s", s ? s->duration_s :
				p->end_ns > p->start_ns ? (p->end_ns - p->start_ns) / 1e9 : 0);
	bp_json_w_kv_int64(w, "hz", p->hz);
	bp_json_w_kv_string(w, "event", p->event ? p->event : "cpu-clock");
	bp_json_w_kv_int64(w, "ncpus", p->ncpus);
	bp_json_w_kv_bool(w, "system_wide", p->system_wide);
	bp_json_w_kv_bool(w, "offcpu", p->offcpu_enabled);
	bp_json_w_kv_uint64(w, "samples", samples);
	/* what one sample stands for, so the on-CPU view can say "about N s" */
	bp_json_w_kv_double(w, "s_per_sample", samples ? bp_oncpu_seconds(p, samples, ns) / samples
							: 0);
	bp_json_w_end_object(w);
	put_classes(w);

	if (!s)
		return;
	if (s->have_overall) {
		bp_json_w_key(w, "verdict");
		bp_json_w_begin_object(w);
		put_verdict(w, &s->overall);
		bp_json_w_end_object(w);
	}
	/* the header leads with the pipelines: "cat → gzip -9 → wc -c: bound by gzip (cpu-bound)" */
	bp_json_w_key(w, "pipelines");
	bp_json_w_begin_array(w);
	for (i = 0; s->waits && i < s->waits->nr; i++) {
		char line[BP_VERDICT_LEN];

		bp_pipeline_lead(s, &s->waits->pl[i], line, sizeof(line));
		bp_json_w_string(w, line);
	}
	bp_json_w_end_array(w);
	bp_json_w_key(w, "procs");
	bp_json_w_begin_array(w);
	for (i = 0; i < s->nr_procs; i++) {
		const struct bp_proc_summary *ps = &s->procs[i];

		if (!ps->verdict || !ps->proc)
			continue;
		/* the same label as the process frame, which is how the page finds it */
		snprintf(label, sizeof(label), "%s [%" PRIu32 "]",
			 ps->proc->comm[0] ? ps->proc->comm : "[unknown]", ps->proc->pid);
		bp_json_w_begin_object(w);
		bp_json_w_kv_string(w, "name", label);
		put_verdict(w, ps->verdict);
		bp_json_w_end_object(w);
	}
	bp_json_w_end_array(w);
}

static int put_names(struct bp_json_w *w, const struct flame *fl)
{
	const struct names *nm = &fl->names;
	struct bp_buf types = BP_BUF_INIT;
	uint32_t *mod_out, nr_mod = 0, i, m;
	int err;

	bp_json_w_key(w, "names");
	bp_json_w_begin_array(w);
	for (i = 0; i < fl->nr_ranked; i++)
		bp_json_w_string(w, name_str(nm, fl->ranked[i]));
	bp_json_w_end_array(w);
	for (i = 0; i < fl->nr_ranked; i++)
		bp_buf_putc(&types, '0' + nm->type[fl->ranked[i]]);
	bp_json_w_kv_string(w, "types", bp_buf_str(&types));
	err = types.err;
	bp_buf_free(&types);
	if (err)
		return err;

	/* modules numbered in the order the ranked names first use them: stable output */
	mod_out = malloc((fl->modules.nr + 1) * sizeof(*mod_out));
	if (!mod_out)
		return -ENOMEM;
	for (i = 0; i < fl->modules.nr; i++)
		mod_out[i] = MODULE_NONE;
	bp_json_w_key(w, "modules");
	bp_json_w_begin_array(w);
	for (i = 0; i < fl->nr_ranked; i++) {
		m = nm->module[fl->ranked[i]];
		if (m >= fl->modules.nr || mod_out[m] != MODULE_NONE)
			continue;
		mod_out[m] = nr_mod++;
		bp_json_w_string(w, name_str(&fl->modules, m));
	}
	bp_json_w_end_array(w);
	/* per name: its module's index, -1 for none (or several) */
	bp_json_w_key(w, "module");
	bp_json_w_begin_array(w);
	for (i = 0; i < fl->nr_ranked; i++) {
		m = nm->module[fl->ranked[i]];
		bp_json_w_int64(w, m < fl->modules.nr ? (int64_t)mod_out[m] : -1);
	}
	bp_json_w_end_array(w);
	free(mod_out);
	return 0;
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
	const struct flame *fl = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c;

	if (fl->uses[x] != fl->uses[y])
		return fl->uses[x] < fl->uses[y] ? 1 : -1;
	c = strcmp(name_str(&fl->names, x), name_str(&fl->names, y));
	return c ? c : fl->names.type[x] - fl->names.type[y];
}

/*
 * The names t[0] uses, most used first: the tree refers to them by rank, and
 * in the variable-length code below small numbers are short.
 */
static int names_rank(struct flame *fl)
{
	uint32_t nr = fl->names.nr, i;

	fl->uses = calloc(nr, sizeof(*fl->uses));
	fl->rank = malloc(nr * sizeof(*fl->rank));
	fl->ranked = malloc(nr * sizeof(*fl->ranked));
	if (!fl->uses || !fl->rank || !fl->ranked)
		return -ENOMEM;
	for (i = 0; i < fl->t[0].nr; i++)
		fl->uses[fl->t[0].n[i].name]++;
	for (i = 0; i < nr; i++)
		if (fl->uses[i])
			fl->ranked[fl->nr_ranked++] = i;
	qsort_r(fl->ranked, fl->nr_ranked, sizeof(*fl->ranked), cmp_rank, fl);
	for (i = 0; i < fl->nr_ranked; i++)
		fl->rank[fl->ranked[i]] = i;
	return 0;
}

/*
 * Numbers in a string, base 32, most significant digit first, one character
 * per 5 bits: the last digit of a number from the first half of the
 * alphabet, the others from the second half. "a,b,c" in JSON costs a comma
 * and every decimal digit; this costs about half and decodes in one pass.
 * None of these characters needs escaping in JSON, HTML or XML.
 */
static const char code_alphabet[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_";

static void put_code(struct bp_buf *b, uint64_t v)
{
	char tmp[16];
	int n = sizeof(tmp);

	tmp[--n] = code_alphabet[v & 31];
	for (v >>= 5; v; v >>= 5)
		tmp[--n] = code_alphabet[32 + (v & 31)];
	bp_buf_append(b, tmp + n, sizeof(tmp) - n);
}

enum tree_col { COL_NAME, COL_CHILDREN, COL_COUNT, COL_US, COL_BEFORE };

static uint64_t col_value(const struct flame *fl, uint32_t k, enum tree_col col)
{
	const struct tnode *n = &fl->t[0].n[k];

	switch (col) {
	case COL_NAME:
		return fl->rank[n->name];
	case COL_CHILDREN:
		return fl->nchild[k];
	case COL_COUNT:
		return n->count;
	case COL_US:
		return n->us;
	default:
		return fl->before[k];
	}
}

/*
 * One column in preorder. sparse: only the nodes where it is not zero, as
 * (distance from the previous such node, value) pairs: self values are zero
 * on all but the leaves and a few callers.
 */
static int put_column(struct bp_json_w *w, const struct flame *fl, struct bp_buf *tmp,
		      const char *key, enum tree_col col, bool sparse)
{
	uint32_t i, last = 0;
	uint64_t v;

	bp_buf_reset(tmp);
	for (i = 0; i < fl->t[0].nr; i++) {
		v = col_value(fl, fl->order[i], col);
		if (!sparse) {
			put_code(tmp, v);
		} else if (v) {
			put_code(tmp, i - last);
			put_code(tmp, v);
			last = i;
		}
	}
	if (tmp->err)
		return tmp->err;
	bp_json_w_key(w, key);
	return bp_json_w_string_n(w, bp_buf_str(tmp), tmp->len);
}

/*
 * The tree in preorder, each column a coded string (see put_code): n = name
 * (index into names), c = number of children; s = on-CPU samples and w =
 * wall-clock us ending at the node, sparse (self values: totals are sums
 * over subtrees); a diff has w and b = BEFORE's total us on the same path.
 */
static int put_tree(struct bp_json_w *w, const struct flame *fl, bool diff)
{
	struct bp_buf tmp = BP_BUF_INIT;
	int err;

	bp_json_w_key(w, "tree");
	bp_json_w_begin_object(w);
	bp_json_w_kv_uint64(w, "nodes", fl->t[0].nr);
	err = put_column(w, fl, &tmp, "n", COL_NAME, false);
	if (!err)
		err = put_column(w, fl, &tmp, "c", COL_CHILDREN, false);
	if (!err && !diff)
		err = put_column(w, fl, &tmp, "s", COL_COUNT, true);
	if (!err)
		err = put_column(w, fl, &tmp, "w", COL_US, true);
	if (!err && diff)
		err = put_column(w, fl, &tmp, "b", COL_BEFORE, false);
	bp_json_w_end_object(w);
	bp_buf_free(&tmp);
	return err;
}

/*
 * JSON with '<', '>' and '&' as \u escapes: then no "</script>" can end the
 * HTML data block early, and the text needs no CDATA in the SVG (XML) one.
 * Those bytes only ever occur inside strings, where the escape means the same.
 */
static void put_script_safe(struct bp_buf *out, const struct bp_buf *js)
{
	size_t i, start = 0;

	for (i = 0; i < js->len; i++) {
		const char *esc;

		switch (js->data[i]) {
		case '<':
			esc = "\\u003c";
			break;
		case '>':
			esc = "\\u003e";
			break;
		case '&':
			esc = "\\u0026";
			break;
		default:
			continue;
		}
		bp_buf_append(out, js->data + start, i - start);
		bp_buf_puts(out, esc);
		start = i + 1;
	}
	bp_buf_append(out, js->data + start, js->len - start);
}


/* the fixed parts of the two documents, around the title, style, data and script */
static const char svg_head[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"bp-svg\" "
	"width=\"1200\" height=\"120\" viewBox=\"0 0 1200 120\">\n<title>";
static const char svg_style[] = "</title>\n<style><![CDATA[\n";
/* what an image viewer shows: the script removes it */
static const char svg_data[] =
	"]]></style>\n"
	"<text id=\"bp-noscript\" x=\"10\" y=\"30\">This flame graph is drawn by its "
	"script: open the file in a web browser (image viewers and &lt;img&gt; tags "
	"do not run scripts).</text>\n"
	"<script type=\"application/json\" id=\"bp-data\">";
static const char svg_script[] = "</script>\n<script type=\"text/javascript\"><![CDATA[\n";
static const char svg_tail[] = "]]></script>\n</svg>\n";

static const char html_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<meta name=\"generator\" content=\"boundprof\">\n<title>";
static const char html_style[] = "</title>\n<style>\n";
static const char html_data[] =
	"</style>\n</head>\n<body>\n<noscript>This flame graph is drawn by JavaScript: "
	"open it in a web browser with scripts enabled.</noscript>\n"
	"<div id=\"bp-app\"></div>\n"
	"<script type=\"application/json\" id=\"bp-data\">";
static const char html_script[] = "</script>\n<script>\n";
static const char html_tail[] = "</script>\n</body>\n</html>\n";

/*
 * The document around the data: the same renderer for both; the .svg carries
 * its script like flamegraph.pl's, the .html adds a CSP so that nothing can
 * reach the network even by accident.
 */
static void put_document(struct bp_buf *out, enum bp_flame_format fmt, const char *title,
			 const struct bp_buf *data)
{
	bool svg = fmt == BP_FLAME_SVG;

	bp_buf_puts(out, svg ? svg_head : html_head);
	bp_buf_put_xml(out, title);
	bp_buf_puts(out, svg ? svg_style : html_style);
	bp_buf_puts(out, bp_flame_css);
	bp_buf_puts(out, svg ? svg_data : html_data);
	put_script_safe(out, data);
	bp_buf_puts(out, svg ? svg_script : html_script);
	bp_buf_puts(out, bp_flame_js);
	bp_buf_puts(out, svg ? svg_tail : html_tail);
}

static int check_opts(const struct bp_flame_opts *o, enum bp_flame_format *fmt, int *view,
		      const char **title)
{
	*fmt = o ? o->format : BP_FLAME_HTML;
	*view = o ? o->initial_view : BP_VIEW_WALL;
	*title = o && o->title ? o->title : "boundprof";
	if (*fmt != BP_FLAME_HTML && *fmt != BP_FLAME_SVG)
		return -EINVAL;
	if (*view < BP_VIEW_ONCPU || *view > BP_VIEW_WALL)
		return -EINVAL;
	return 0;
}

static int finish(struct bp_json_w *w, struct bp_buf *data, struct bp_buf *out,
		  enum bp_flame_format fmt, const char *title)
{
	int err = bp_json_w_finish(w);

	if (err)
		return err;
	put_document(out, fmt, title, data);
	return out->err;
}

/* the page's data document opens the same way for a profile and a diff */
static void begin_data(struct bp_json_w *w, struct bp_buf *data, const char *kind,
		       const char *title, const char *initial)
{
	bp_json_w_init(w, data, false);
	bp_json_w_begin_object(w);
	bp_json_w_kv_int64(w, "version", FLAME_DATA_VERSION);
	bp_json_w_kv_string(w, "kind", kind);
	bp_json_w_kv_string(w, "title", title);
	bp_json_w_kv_string(w, "initial", initial);
}

int bp_export_flame(const struct bp_profile *p, const struct bp_summary *s,
		    const struct bp_flame_opts *o, struct bp_buf *out)
{
	struct bp_buf data = BP_BUF_INIT;
	enum bp_flame_format fmt;
	struct bp_json_w w;
	struct flame fl;
	const char *title;
	int view, err;

	if (!p || !out)
		return -EINVAL;
	err = check_opts(o, &fmt, &view, &title);
	if (err)
		return err;
	err = flame_init(&fl, 1);
	if (!err)
		err = tree_add_profile(&fl, &fl.t[0], p);
	if (!err)
		err = tree_order(&fl);
	if (!err)
		err = names_rank(&fl);
	if (err)
		goto out;

	begin_data(&w, &data, "profile", title, view_name[view]);
	put_header(&w, p, s);
	err = put_names(&w, &fl);
	if (!err)
		err = put_tree(&w, &fl, false);
	bp_json_w_end_object(&w);
	if (!err)
		err = finish(&w, &data, out, fmt, title);
out:
	flame_free(&fl);
	bp_buf_free(&data);
	return err;
}

int bp_export_flame_diff(const struct bp_profile *before, const struct bp_profile *after,
			 const struct bp_flame_opts *o, struct bp_buf *out)
{
	struct bp_buf data = BP_BUF_INIT;
	enum bp_flame_format fmt;
	struct bp_json_w w;
	struct flame fl;
	const char *title;
	int view, err;

	if (!before || !after || !out)
		return -EINVAL;
	err = check_opts(o, &fmt, &view, &title);
	if (err)
		return err;
	err = flame_init(&fl, 2);
	fl.diff = true;
	if (!err)
		err = tree_add_profile(&fl, &fl.t[0], after);
	if (!err)
		err = tree_add_profile(&fl, &fl.t[1], before);
	if (!err)
		err = tree_order(&fl);
	if (!err)
		err = tree_match_before(&fl);
	if (!err)
		err = names_rank(&fl);
	if (err)
		goto out;

	begin_data(&w, &data, "diff", title, "wall");
	bp_json_w_key(&w, "before");
	bp_json_w_begin_object(&w);
	bp_json_w_kv_double(&w, "duration_s", before->end_ns > before->start_ns ?
					      (before->end_ns - before->start_ns) / 1e9 : 0);
	bp_json_w_kv_uint64(&w, "total_us", fl.before[0]);
	bp_json_w_end_object(&w);
	put_header(&w, after, NULL);
	err = put_names(&w, &fl);
	if (!err)
		err = put_tree(&w, &fl, true);
	bp_json_w_end_object(&w);
	if (!err)
		err = finish(&w, &data, out, fmt, title);
out:
	flame_free(&fl);
	bp_buf_free(&data);
	return err;
}
