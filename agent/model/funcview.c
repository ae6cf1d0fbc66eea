// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>

#include "model/funcview.h"
#include "model/merge.h"

/* per frame of v: the id of the same frame without its line */
static int line_free_frames(struct bp_profile *v, uint32_t *fmap, uint32_t nr_frames)
{
	uint32_t i;

	for (i = 0; i < nr_frames; i++) {
		/* a copy: interning a new frame may move v->frames */
		struct bp_frame f = v->frames[i];
		int64_t id;

		if (!f.file && !f.line) {
			fmap[i] = i;
			continue;
		}
		f.file = NULL;
		f.line = 0;
		id = bp_profile__frame(v, &f);
		if (id < 0)
			return (int)id;
		fmap[i] = (uint32_t)id;
	}
	return 0;
}

struct bp_profile *bp_func_view(const struct bp_profile *p)
{
	struct bp_profile *v = bp_profile__new_like(p, p->start_ns);
	uint32_t *fmap = NULL, *map = NULL, *buf = NULL, i, j, nr, nframes, nstacks, cap = 0;
	int err = -ENOMEM;

	if (!v)
		return NULL;
	if (bp_profile__merge(v, p))
		goto out;
	v->end_ns = p->end_ns;
	nframes = v->nr_frames;
	nstacks = v->nr_stacks;
	fmap = malloc((nframes + 1) * sizeof(*fmap));
	map = malloc((nstacks + 1) * sizeof(*map));
	if (!fmap || !map)
		goto out;
	err = line_free_frames(v, fmap, nframes);
	if (err)
		goto out;
	err = -ENOMEM;
	for (i = 0; i < nstacks; i++) {
		const uint32_t *fr = bp_profile__stack_frames(v, i, &nr);
		int64_t id;

		if (nr > cap) {
			uint32_t *nb = realloc(buf, nr * sizeof(*nb));

			if (!nb)
				goto out;
			buf = nb;
			cap = nr;
		}
		/* fr points into the pool, which new stacks may move: copy first */
		for (j = 0; j < nr; j++)
			buf[j] = fmap[fr[j]];
		id = nr ? bp_profile__stack(v, buf, nr) : (int64_t)i;
		if (id < 0)
			goto out;
		map[i] = (uint32_t)id;
	}
	err = bp_profile__restack(v, map);
out:
	free(fmap);
	free(map);
	free(buf);
	if (err) {
		bp_profile__free(v);
		errno = -err;
		return NULL;
	}
	return v;
}
