// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "proc/pidset.h"

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int bp_pidset__read(struct bp_pidset *ps, const char *proc_root)
{
	struct dirent *de;
	DIR *d;
	int err = 0;

	ps->n = 0;
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		const char *c = de->d_name;
		long pid = 0;

		/* the processes are the directories named by a number; threads are not listed */
		for (; *c >= '0' && *c <= '9' && pid < 1L << 30; c++)
			pid = pid * 10 + (*c - '0');
		if (*c || !pid || pid >= 1L << 30)
			continue;
		if (ps->n == ps->cap) {
			size_t ncap = ps->cap ? 2 * ps->cap : 512;
			pid_t *nv = reallocarray(ps->v, ncap, sizeof(*nv));

			if (!nv) {
				err = -ENOMEM;
				break;
			}
			ps->v = nv;
			ps->cap = ncap;
		}
		ps->v[ps->n++] = (pid_t)pid;
	}
	closedir(d);
	if (err) {
		ps->n = 0;
		return err;
	}
	qsort(ps->v, ps->n, sizeof(*ps->v), cmp_pid);
	return 0;
}

bool bp_pidset__has(const struct bp_pidset *ps, pid_t pid)
{
	return ps->n && bsearch(&pid, ps->v, ps->n, sizeof(*ps->v), cmp_pid);
}

void bp_pidset__free(struct bp_pidset *ps)
{
	free(ps->v);
	ps->v = NULL;
	ps->n = ps->cap = 0;
}
