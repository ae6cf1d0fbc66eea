// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/funcview.h"
#include "model/merge.h"

struct funcs {
	uint32_t *fmap;		/* per frame of the copy: the same frame without its line */
	uint32_t nr;		/* frames fmap covers: the copy's before any was added */
};

static int64_t func_frame(struct bp_profile *v, struct funcs *fs, uint32_t id)
{
	/* a copy: interning a new frame may move v->frames */
	struct bp_frame f = v->frames[id];
	int64_t nid;

	if (fs->fmap[id] != UINT32_MAX)
		return fs->fmap[id];
	f.file = NULL;
	f.line = 0;
	nid = bp_profile__frame(v, &f);
	if (nid >= 0)
		fs->fmap[id] = (uint32_t)nid;
	return nid;
}

static int64_t func_stack(struct bp_profile *v, const uint32_t *fr, uint32_t nr, uint32_t *out,
			  void *ctx)
{
	struct funcs *fs = ctx;
	uint32_t i;

	if (!fs->fmap) {
		fs->nr = v->nr_frames;
		fs->fmap = malloc((fs->nr + 1) * sizeof(*fs->fmap));
		if (!fs->fmap)
			return -ENOMEM;
		for (i = 0; i < fs->nr; i++)
			fs->fmap[i] = UINT32_MAX;
	}
	/* fr points into the pool, which new frames do not move: copy as we go */
	for (i = 0; i < nr; i++) {
		int64_t id = fr[i] < fs->nr ? func_frame(v, fs, fr[i]) : fr[i];

		if (id < 0)
			return id;
		out[i] = (uint32_t)id;
	}
	return nr;
}

struct bp_profile *bp_func_view(const struct bp_profile *p)
{
	struct funcs fs = {};
	struct bp_profile *v = bp_profile__view(p, func_stack, &fs);

	free(fs.fmap);
	return v;
}
