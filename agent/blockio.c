// SPDX-License-Identifier: GPL-2.0
/* Block IO accounting: being written (issue 3); nothing is collected yet. */
#include <errno.h>
#include <stdlib.h>

#include "blockio.h"

struct bp_blockio {
	int unused;
};

int bp_blockio__prepare(struct boundprof_bpf *skel, uint32_t io_entries)
{
	return 0;
}

struct bp_blockio *bp_blockio__new(struct boundprof_bpf *skel, const char *sysfs_root)
{
	return calloc(1, sizeof(struct bp_blockio));
}

int bp_blockio__drain(struct bp_blockio *b, int idx, struct bp_profile *p)
{
	return 0;
}

int bp_blockio__finish(struct bp_blockio *b, struct bp_profile *p)
{
	return 0;
}

void bp_blockio__free(struct bp_blockio *b)
{
	free(b);
}

int bp_blockio_dev_name(const char *sysfs_root, uint32_t dev, char *buf, size_t len)
{
	return -ENOSYS;
}
