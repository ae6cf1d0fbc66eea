// SPDX-License-Identifier: GPL-2.0
/*
 * Block IO accounting: picks the block tracepoints this kernel has, drains
 * the per-(device, process, direction) rows into the profile, and turns the
 * devices' cumulative busy counters into busy time inside the window. The
 * method is in docs/blockio.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/blockio.h"
#include "collect/kbtf.h"
#include "boundprof.skel.h"
#include "model/hist.h"
#include "util/log.h"
#include "collect/mapdrain.h"
#include "proc/procinfo.h"
#include "model/profile.h"

#define MIN_ROWS	1024

/* the tracepoints we use, as BTF names their typedefs */
enum io_tp {
	TP_IO_START,
	TP_IO_DONE,
	TP_RQ_ISSUE,
	TP_RQ_COMPLETE,
	TP_RQ_MERGE,
	TP_RQ_INSERT,
	TP__MAX,
};

static const char *const tp_btf_names[TP__MAX] = {
	[TP_IO_START] = "btf_trace_block_io_start",
	[TP_IO_DONE] = "btf_trace_block_io_done",
	[TP_RQ_ISSUE] = "btf_trace_block_rq_issue",
	[TP_RQ_COMPLETE] = "btf_trace_block_rq_complete",
	[TP_RQ_MERGE] = "btf_trace_block_rq_merge",
	[TP_RQ_INSERT] = "btf_trace_block_rq_insert",
};

/* a device's busy time at the start of the window */
struct dev_base {
	uint32_t dev;
	uint64_t busy_ns;
};

struct bp_blockio {
	char *sysfs_root;	/* NULL: /sys */
	int rows_fd[2];
	int devs_fd;
	int sweep_fd;		/* bp_io_sweep, -1 without it */
	struct bp_drain_buf dbuf;	/* the drain's batch buffers */
	volatile __u64 *unseen;	/* in the skeleton's .bss */
	volatile __u64 *swept;
	struct dev_base *base;
	uint32_t nr_base;
};

int bp_blockio__prepare(struct boundprof_bpf *skel, uint32_t io_entries,
			const struct bp_kbtf *kb)
{
	bool has[TP__MAX] = {};
	bool at_issue;
	int i, err;

	if (!kb) {
		bp_err("failed to read the kernel BTF: no block tracepoints to choose from");
		return -ENOENT;
	}
	/* a tracepoint exists exactly when its typedef does */
	for (i = 0; i < TP__MAX; i++)
		has[i] = bp_kbtf__find(kb, tp_btf_names[i], BTF_KIND_TYPEDEF) > 0;

	if (has[TP_IO_START] && has[TP_IO_DONE]) {
		at_issue = false;
		bpf_program__set_autoload(skel->progs.bp_io_start, true);
		bpf_program__set_autoload(skel->progs.bp_io_done, true);
		bpf_program__set_autoload(skel->progs.bp_io_issue, has[TP_RQ_ISSUE]);
	} else if (has[TP_RQ_ISSUE] && has[TP_RQ_COMPLETE]) {
		at_issue = true;
		bpf_program__set_autoload(skel->progs.bp_io_issue, true);
		bpf_program__set_autoload(skel->progs.bp_io_complete, true);
		bpf_program__set_autoload(skel->progs.bp_io_insert, has[TP_RQ_INSERT]);
		bp_info("no block_io_start tracepoint (kernel before 6.5): block IO is timed "
			"from insert or issue%s", has[TP_RQ_INSERT] ? "" :
			" and may be attributed to kblockd workers");
	} else {
		bp_warn("no block request tracepoints in this kernel: block IO is not traced");
		bpf_map__set_autocreate(skel->maps.io_rqs, false);
		bpf_map__set_autocreate(skel->maps.io0, false);
		bpf_map__set_autocreate(skel->maps.io1, false);
		bpf_map__set_autocreate(skel->maps.io_devs, false);
		return 0;
	}
	bpf_program__set_autoload(skel->progs.bp_io_merge, has[TP_RQ_MERGE]);
	/* run on demand, never attached */
	bpf_program__set_autoload(skel->progs.bp_io_sweep, true);
	bpf_program__set_autoattach(skel->progs.bp_io_sweep, false);
	skel->rodata->io_start_at_issue = at_issue;

	if (io_entries < MIN_ROWS)
		io_entries = MIN_ROWS;
	err = bpf_map__set_max_entries(skel->maps.io0, io_entries);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.io1, io_entries);
	if (err)
		bp_err("failed to size the block IO maps: %s", strerror(-err));
	return err;
}

static bool io_traced(struct boundprof_bpf *skel)
{
	return bpf_program__autoload(skel->progs.bp_io_done) ||
	       bpf_program__autoload(skel->progs.bp_io_complete);
}

/* busy time up to now: the finished busy periods plus the one still open */
static uint64_t busy_now(const struct bp_dev_val *v, uint64_t now)
{
	uint64_t busy = v->busy_ns;

	if (v->inflight > 0 && now > v->busy_start)
		busy += now - v->busy_start;
	return busy;
}

static int read_devs(int fd, int (*fn)(void *ctx, uint32_t dev, const struct bp_dev_val *v),
		     void *ctx)
{
	uint32_t key, next;
	struct bp_dev_val v;
	bool first = true;
	int err;

	/* the map is never deleted from, so a plain walk sees every device */
	for (;;) {
		err = bpf_map_get_next_key(fd, first ? NULL : &key, &next);
		if (err)
			return err == -ENOENT ? 0 : err;
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		err = fn(ctx, key, &v);
		if (err)
			return err;
	}
}

static int base_dev(void *ctx, uint32_t dev, const struct bp_dev_val *v)
{
	struct bp_blockio *b = ctx;
	struct dev_base *n;

	n = realloc(b->base, (b->nr_base + 1) * sizeof(*b->base));
	if (!n)
		return -ENOMEM;
	b->base = n;
	b->base[b->nr_base].dev = dev;
	b->base[b->nr_base].busy_ns = busy_now(v, bp_now_ns());
	b->nr_base++;
	return 0;
}

struct bp_blockio *bp_blockio__new(struct boundprof_bpf *skel, const char *sysfs_root)
{
	struct bp_blockio *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return NULL;
	b->rows_fd[0] = b->rows_fd[1] = b->devs_fd = b->sweep_fd = -1;
	if (sysfs_root) {
		b->sysfs_root = strdup(sysfs_root);
		if (!b->sysfs_root)
			goto nomem;
	}
	if (!skel || !io_traced(skel))
		return b;
	b->unseen = &skel->bss->io_unseen_done;
	b->swept = &skel->bss->io_unseen_swept;
	b->rows_fd[0] = bpf_map__fd(skel->maps.io0);
	b->rows_fd[1] = bpf_map__fd(skel->maps.io1);
	b->devs_fd = bpf_map__fd(skel->maps.io_devs);
	b->sweep_fd = bpf_program__fd(skel->progs.bp_io_sweep);
	err = read_devs(b->devs_fd, base_dev, b);
	if (err) {
		bp_blockio__free(b);
		errno = -err;
		return NULL;
	}
	return b;
nomem:
	bp_blockio__free(b);
	errno = ENOMEM;
	return NULL;
}

void bp_blockio__free(struct bp_blockio *b)
{
	if (!b)
		return;
	free(b->sysfs_root);
	free(b->base);
	bp_drain_buf_free(&b->dbuf);
	free(b);
}

int bp_blockio_dev_name(const char *sysfs_root, uint32_t dev, char *buf, size_t len)
{
	char path[512], line[256];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/uevent", sysfs_root ? sysfs_root : "/sys",
		 dev >> 20, dev & 0xfffff);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		if (strncmp(line, "DEVNAME=", 8))
			continue;
		n = strcspn(line + 8, "\n");
		if (!n) {
			err = -EINVAL;
		} else if (n >= len) {
			err = -ENAMETOOLONG;
		} else {
			memcpy(buf, line + 8, n);
			buf[n] = '\0';
			err = 0;
		}
		break;
	}
	fclose(f);
	return err;
}

/* the profile's device, named from sysfs when it is new (kept: devices come and go) */
static struct bp_io_dev *prof_dev(struct bp_blockio *b, struct bp_profile *p, uint32_t dev)
{
	struct bp_io_dev *d = bp_profile__io_dev(p, dev, false);
	char name[sizeof(d->name)];

	if (d)
		return d;
	d = bp_profile__io_dev(p, dev, true);
	if (d && !bp_blockio_dev_name(b->sysfs_root, dev, name, sizeof(name)))
		memcpy(d->name, name, sizeof(name));
	return d;
}

static void stats_add(struct bp_io_stats *s, const struct bp_io_val *v)
{
	int i;

	s->ops += v->ops;
	s->bytes += v->bytes;
	s->lat_ns += v->lat_ns;
	for (i = 0; i < BP_HIST_SLOTS; i++)
		s->hist[i] += v->hist[i];
}

static int add_row(struct bp_blockio *b, struct bp_profile *p, const struct bp_io_key *k,
		   const struct bp_io_val *v)
{
	char comm[BP_COMM_LEN];
	struct bp_io_dev *d;
	struct bp_io_row *r;

	if (k->op >= BP_IO_OP__MAX)
		return 0;
	memcpy(comm, k->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	d = prof_dev(b, p, k->dev);
	r = bp_profile__io_row(p, k->dev, k->kthread ? 0 : k->tgid, k->op, k->kthread, comm, true);
	if (!d || !r)
		return -ENOMEM;
	stats_add(&d->op[k->op], v);
	stats_add(&r->st, v);
	return 0;
}

struct drain_ctx {
	struct bp_blockio *b;
	struct bp_profile *p;
};

static int drain_row(void *ctx, const void *key, const void *val)
{
	struct drain_ctx *d = ctx;

	return add_row(d->b, d->p, key, val);
}

/* read and delete every row of one buffer (the caller flipped away from it) */
int bp_blockio__drain(struct bp_blockio *b, int idx, struct bp_profile *p)
{
	struct drain_ctx d = { b, p };

	if (b->devs_fd < 0)
		return 0;
	p->io_enabled = true;
	return bp_drain_map(b->rows_fd[idx & 1], sizeof(struct bp_io_key), sizeof(struct bp_io_val),
			    &b->dbuf, drain_row, &d);
}

static uint64_t base_busy(const struct bp_blockio *b, uint32_t dev)
{
	uint32_t i;

	for (i = 0; i < b->nr_base; i++)
		if (b->base[i].dev == dev)
			return b->base[i].busy_ns;
	return 0;
}

struct finish_ctx {
	struct bp_blockio *b;
	struct bp_profile *p;
	uint64_t now, window;
};

/*
 * Whether the kernel has no request of the device in flight (its own
 * count, <sysfs>/dev/block/M:m/inflight: reads and writes). A request whose
 * completion event never came stays in flight for us until its request
 * structure is reused; at the end of the window the kernel's count tells.
 */
static bool kernel_idle(const struct bp_blockio *b, uint32_t dev)
{
	char path[512];
	unsigned long r, w;
	bool idle = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/dev/block/%u:%u/inflight",
		 b->sysfs_root ? b->sysfs_root : "/sys", dev >> 20, dev & 0xfffff);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fscanf(f, "%lu %lu", &r, &w) == 2)
		idle = !r && !w;
	fclose(f);
	return idle;
}

static int finish_dev(void *ctx, uint32_t dev, const struct bp_dev_val *v)
{
	struct finish_ctx *f = ctx;
	struct bp_dev_val cur = *v;
	uint64_t end, start = base_busy(f->b, dev);
	struct bp_io_dev *d;
	uint64_t busy;

	if (cur.inflight > 0 && kernel_idle(f->b, dev))
		cur.inflight = 0;
	end = busy_now(&cur, f->now);
	busy = end > start ? end - start : 0;
	/* a device seen only before the window (no IO since) is left out */
	if (!busy && !bp_profile__io_dev(f->p, dev, false))
		return 0;
	d = prof_dev(f->b, f->p, dev);
	if (!d)
		return -ENOMEM;
	d->busy_ns = busy < f->window ? busy : f->window;
	d->max_inflight = v->max_inflight;
	return 0;
}

int bp_blockio__finish(struct bp_blockio *b, struct bp_profile *p)
{
	struct finish_ctx f = { .b = b, .p = p, .now = bp_now_ns() };
	uint64_t unseen = bp_blockio__unseen(b);

	if (b->devs_fd < 0)
		return 0;
	p->io_enabled = true;
	if (unseen)
		bp_info("block IO: %" PRIu64 " requests ended without a completion event (%" PRIu64
			" found at a window's end); counted without a latency", unseen,
			(uint64_t)*b->swept);
	f.window = p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
	return read_devs(b->devs_fd, finish_dev, &f);
}

int bp_blockio__sweep(struct bp_blockio *b)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (!b || b->sweep_fd < 0)
		return 0;
	return bpf_prog_test_run_opts(b->sweep_fd, &opts);
}

int bp_blockio__rebase(struct bp_blockio *b)
{
	if (!b || b->devs_fd < 0)
		return 0;
	/* the next window's busy time counts from here */
	b->nr_base = 0;
	return read_devs(b->devs_fd, base_dev, b);
}

uint64_t bp_blockio__unseen(const struct bp_blockio *b)
{
	return b && b->unseen ? *b->unseen : 0;
}
