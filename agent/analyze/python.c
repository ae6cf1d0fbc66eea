// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/python.h"
#include "model/merge.h"

bool bp_python_has_frames(const struct bp_profile *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_frames; i++)
		if (p->frames[i].python)
			return true;
	return false;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * The interpreter's own frames run a Python frame's bytecode (allocation,
 * integer arithmetic, dict lookups): their time is the Python frame's.
 */
static bool interp_frame(const struct bp_frame *f, const char *interp)
{
	return !strcmp(f->module, interp) || has_prefix(f->module, "libpython");
}

/*
 * The C runtime: under the interpreter it is the interpreter's work too;
 * under an extension it is the extension's (a memcpy of NumPy's).
 */
static bool runtime_frame(const struct bp_frame *f)
{
	const char *m = f->module;

	if (!f->name && (!strcmp(m, "[unknown]") || !strcmp(m, "[heap]") ||
			 !strcmp(m, "[stack]")))
		return true;
	return has_prefix(m, "libc.so") || has_prefix(m, "libc-2.") || has_prefix(m, "libm.so") ||
	       has_prefix(m, "libm-2.") || has_prefix(m, "libpthread") ||
	       has_prefix(m, "ld-linux") || !strcmp(m, "[vdso]");
}

/* markers the native walk leaves ([truncated], [no stack]): not code */
static bool marker(const struct bp_frame *f)
{
	return !f->kernel && !f->python && f->name && f->name[0] == '[' &&
	       !strcmp(f->module, "[unknown]");
}

uint32_t bp_python_view_stack(const struct bp_profile *p, const uint32_t *fr, uint32_t nr,
			      uint32_t *out)
{
	const char *interp = NULL;
	bool native = false;
	uint32_t i, n = 0, first = nr;

	for (i = 0; i < nr; i++) {
		if (p->frames[fr[i]].python) {
			first = i;
			interp = p->frames[fr[i]].module;
			break;
		}
	}
	if (first == nr) {
		memcpy(out, fr, nr * sizeof(*out));
		return nr;
	}
	/* above the first Python frame is the interpreter starting up: _start, main, Py_RunMain */
	for (i = first; i < nr; i++) {
		const struct bp_frame *f = &p->frames[fr[i]];

		if (f->python) {
			native = false;
		} else if (f->kernel) {
			/* what the kernel did for it says why it waited or faulted */
		} else if (marker(f) || interp_frame(f, interp)) {
			continue;
		} else if (!native) {
			if (runtime_frame(f))
				continue;
			/* the Python frame called into native code: that code from here on */
			native = true;
		}
		out[n++] = fr[i];
	}
	return n;
}

static int64_t python_stack(struct bp_profile *v, const uint32_t *fr, uint32_t nr,
			    uint32_t *out, void *ctx)
{
	(void)ctx;
	return bp_python_view_stack(v, fr, nr, out);
}

struct bp_profile *bp_python_view(const struct bp_profile *p)
{
	return bp_profile__view(p, python_stack, NULL);
}

/* the innermost Python frame of a stack (root first), or nr */
static uint32_t innermost_python(const struct bp_profile *p, const uint32_t *fr, uint32_t nr)
{
	uint32_t i;

	for (i = nr; i-- > 0;)
		if (p->frames[fr[i]].python)
			return i;
	return nr;
}

int bp_python_hot(const struct bp_profile *p, uint32_t pid, struct bp_python_hot *out)
{
	uint64_t *by_py = calloc(p->nr_frames + 1, sizeof(*by_py));
	uint64_t *native = calloc(p->nr_frames + 1, sizeof(*native));
	uint64_t *leaf = calloc(p->nr_frames + 1, sizeof(*leaf));
	uint32_t *func = calloc(p->nr_frames + 1, sizeof(*func));
	uint64_t total = 0, best = 0, best_leaf = 0;
	uint32_t i, nr, top = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	/* by function, all its lines together: advice names functions */
	if (!by_py || !native || !leaf || !func || bp_func_ids(p, func))
		goto out;
	for (i = 0; i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *fr;
		uint32_t k;

		if (s->pid != pid || s->kind != BP_KIND_ONCPU)
			continue;
		total += s->count;
		fr = bp_profile__stack_frames(p, s->stack, &nr);
		k = innermost_python(p, fr, nr);
		if (k == nr)
			continue;
		out->samples += s->count;
		by_py[func[fr[k]]] += s->count;
		/* below it a user frame that is not Python: compiled code it called */
		if (k + 1 < nr && !p->frames[fr[nr - 1]].python && !p->frames[fr[k + 1]].kernel)
			native[func[fr[k]]] += s->count;
	}
	err = -ENOENT;
	if (!out->samples)
		goto out;
	for (i = 0; i < p->nr_frames; i++) {
		if (by_py[i] > best) {
			best = by_py[i];
			top = i;
		}
	}
	out->frame = top;
	out->frac = total ? (double)best / total : 0;
	out->native = best ? (double)native[top] / best : 0;
	/* the compiled code under it: the hottest user leaf of those samples */
	for (i = 0; out->native > 0 && i < p->nr_samples; i++) {
		const struct bp_sample *s = &p->samples[i];
		const uint32_t *fr;
		uint32_t k, j;

		if (s->pid != pid || s->kind != BP_KIND_ONCPU)
			continue;
		fr = bp_profile__stack_frames(p, s->stack, &nr);
		k = innermost_python(p, fr, nr);
		if (k == nr || func[fr[k]] != top)
			continue;
		for (j = nr; j-- > k + 1 && p->frames[fr[j]].kernel;)
			;
		if (j > k)
			leaf[fr[j]] += s->count;
	}
	for (i = 0; i < p->nr_frames; i++) {
		if (leaf[i] > best_leaf) {
			best_leaf = leaf[i];
			out->native_frame = i;
		}
	}
	err = 0;
out:
	free(by_py);
	free(native);
	free(leaf);
	free(func);
	return err;
}
