// SPDX-License-Identifier: GPL-2.0
/*
 * Profiles cut down to some processes (restrict.h). The cut is a shallow
 * copy of the source whose arrays hold only what is kept, frames and
 * stacks renumbered, handed to bp_profile__merge(): one merge to keep
 * correct, not two.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/merge.h"
#include "model/restrict.h"
#include "model/waits.h"

struct kept {
	uint32_t *pids;		/* sorted */
	uint32_t n;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool has(const struct kept *k, uint32_t pid)
{
	return k->n && bsearch(&pid, k->pids, k->n, sizeof(pid), cmp_u32);
}

static bool same_str(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static bool cgroup_used(const struct bp_profile *src, const struct kept *k,
			const struct bp_cgroup *c)
{
	uint32_t i;

	for (i = 0; i < src->nr_procs; i++) {
		const struct bp_proc *p = src->procs[i];

		if (!has(k, p->pid))
			continue;
		if (same_str(c->path, p->cgroup) || same_str(c->path, p->cg_v2) ||
		    same_str(c->path, p->cg_cpu) || same_str(c->path, p->cg_memory))
			return true;
	}
	return false;
}

int bp_profile__merge_only(struct bp_profile *dst, const struct bp_profile *src,
			   bp_keep_pid_fn keep, void *ctx)
{
	struct bp_profile t = *src;
	struct kept k = {};
	uint32_t *smap = NULL, *fmap = NULL, i, j, nr;
	int err = -ENOMEM;

	/* everything replaced below starts empty; the machine's aggregates stay src's */
	t.nr_frames = t.nr_stacks = t.nr_samples = t.nr_procs = 0;
	t.pool_len = 0;
	t.nr_io_rows = t.nr_wake_rows = t.nr_net_rows = t.nr_cgroups = t.nr_runs = 0;
	k.pids = malloc((src->nr_procs + 1) * sizeof(*k.pids));
	t.procs = malloc((src->nr_procs + 1) * sizeof(*t.procs));
	smap = malloc((src->nr_stacks + 1) * sizeof(*smap));
	fmap = malloc((src->nr_frames + 1) * sizeof(*fmap));
	t.samples = malloc((src->nr_samples + 1) * sizeof(*t.samples));
	t.stack_off = malloc((src->nr_stacks + 1) * sizeof(*t.stack_off));
	t.stack_len = malloc((src->nr_stacks + 1) * sizeof(*t.stack_len));
	t.frames = malloc((src->nr_frames + 1) * sizeof(*t.frames));
	t.stack_pool = malloc((src->pool_len + 1) * sizeof(*t.stack_pool));
	t.io_rows = malloc((src->nr_io_rows + 1) * sizeof(*t.io_rows));
	t.wake_rows = malloc((src->nr_wake_rows + 1) * sizeof(*t.wake_rows));
	t.net_rows = malloc((src->nr_net_rows + 1) * sizeof(*t.net_rows));
	t.cgroups = malloc((src->nr_cgroups + 1) * sizeof(*t.cgroups));
	if (!k.pids || !t.procs || !smap || !fmap || !t.samples || !t.stack_off ||
	    !t.stack_len || !t.frames || !t.stack_pool || !t.io_rows || !t.wake_rows ||
	    !t.net_rows || !t.cgroups)
		goto out;
	for (i = 0; i < src->nr_procs; i++)
		if (keep(src->procs[i]->pid, ctx)) {
			k.pids[k.n++] = src->procs[i]->pid;
			t.procs[t.nr_procs++] = src->procs[i];
		}
	qsort(k.pids, k.n, sizeof(*k.pids), cmp_u32);

	/* only the stacks and frames the kept samples stand on */
	memset(smap, 0xff, (src->nr_stacks + 1) * sizeof(*smap));
	memset(fmap, 0xff, (src->nr_frames + 1) * sizeof(*fmap));
	for (i = 0; i < src->nr_samples; i++) {
		struct bp_sample s = src->samples[i];

		if (!has(&k, s.pid) || s.stack >= src->nr_stacks)
			continue;
		if (smap[s.stack] == UINT32_MAX) {
			const uint32_t *fr = bp_profile__stack_frames(src, s.stack, &nr);

			smap[s.stack] = t.nr_stacks;
			t.stack_off[t.nr_stacks] = t.pool_len;
			t.stack_len[t.nr_stacks] = nr;
			for (j = 0; j < nr; j++) {
				uint32_t f = fr[j];

				if (fmap[f] == UINT32_MAX) {
					fmap[f] = t.nr_frames;
					t.frames[t.nr_frames++] = src->frames[f];
				}
				t.stack_pool[t.pool_len++] = fmap[f];
			}
			t.nr_stacks++;
		}
		s.stack = smap[s.stack];
		t.samples[t.nr_samples++] = s;
	}
	for (i = 0; i < src->nr_io_rows; i++)
		if (src->io_rows[i].pid && has(&k, src->io_rows[i].pid))
			t.io_rows[t.nr_io_rows++] = src->io_rows[i];
	/* a waker of someone else's is someone else's process: its name stays out */
	for (i = 0; i < src->nr_wake_rows; i++)
		if (has(&k, src->wake_rows[i].pid) && has(&k, src->wake_rows[i].waker_pid))
			t.wake_rows[t.nr_wake_rows++] = src->wake_rows[i];
	for (i = 0; i < src->nr_net_rows; i++)
		if (has(&k, src->net_rows[i].pid))
			t.net_rows[t.nr_net_rows++] = src->net_rows[i];
	for (i = 0; i < src->nr_cgroups; i++)
		if (cgroup_used(src, &k, &src->cgroups[i]))
			t.cgroups[t.nr_cgroups++] = src->cgroups[i];
	err = bp_profile__merge(dst, &t);
out:
	free(k.pids);
	free(t.procs);
	free(smap);
	free(fmap);
	free(t.samples);
	free(t.stack_off);
	free(t.stack_len);
	free(t.frames);
	free(t.stack_pool);
	free(t.io_rows);
	free(t.wake_rows);
	free(t.net_rows);
	free(t.cgroups);
	return err;
}

uint64_t bp_profile__bytes(const struct bp_profile *p)
{
	uint64_t b = sizeof(*p);
	uint32_t i;

	b += (uint64_t)p->cap_frames * sizeof(*p->frames);
	b += p->pool_cap * sizeof(*p->stack_pool);
	b += (uint64_t)p->cap_stacks * (sizeof(*p->stack_off) + sizeof(*p->stack_len) + 16);
	b += (uint64_t)p->cap_samples * (sizeof(*p->samples) + 16);
	b += (uint64_t)p->cap_io_rows * sizeof(*p->io_rows);
	b += (uint64_t)p->cap_wake_rows * sizeof(struct bp_wake_row);
	b += (uint64_t)p->cap_net_rows * sizeof(struct bp_net_row);
	b += (uint64_t)p->cap_cgroups * sizeof(*p->cgroups);
	for (i = 0; i < p->nr_procs; i++)
		b += sizeof(*p->procs[i]) +
		     (uint64_t)p->procs[i]->cap_threads * sizeof(*p->procs[i]->threads);
	for (i = 0; i < p->nr_strs; i++)
		b += strlen(p->strs[i]) + 1 + sizeof(char *) + 16;
	return b;
}
